/*
 * Portable int8 LOG_SOFTMAX over the last axis (TFLM's log_softmax.cc, LogSoftmaxQuantized<int8_t>):
 * int8 output with scale 16/256 and zero point 127.
 */
#ifndef MCU_LOG_SOFTMAX_S8_H
#define MCU_LOG_SOFTMAX_S8_H

#include <stdint.h>

/** Parameters of mcu_log_softmax_s8 (TFLM's Prepare): `rows` rows of `depth` values (depth in
    [1, 4095]). A difference d = x - row max (in [-255, 0]) becomes the Q5.26 value
    requantize(d, input_multiplier, input_left_shift) (input_multiplier Q0.31 in [2^30, 2^31),
    input_left_shift >= 1); differences below diff_min (<= 0) leave the sum of exponentials out.
    reverse_scaling_divisor (Q0.31) and reverse_scaling_right_shift (>= 0) scale the log sum back
    onto the differences for the output cut-off. */
typedef struct {
    int32_t rows, depth;
    int32_t input_multiplier, input_left_shift;
    int32_t reverse_scaling_divisor, reverse_scaling_right_shift;
    int32_t diff_min;
} mcu_log_softmax_params;

/** log(softmax(x)) over the last axis, int8 in and out. */
void mcu_log_softmax_s8(const mcu_log_softmax_params *p, const int8_t *input, int8_t *output);

#endif /* MCU_LOG_SOFTMAX_S8_H */
