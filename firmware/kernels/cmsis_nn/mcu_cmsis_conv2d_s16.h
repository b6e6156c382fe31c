/*
 * 16x8 convolution on the cmsis-nn target (mcu_cmsis_conv2d_s16.c): im2col columns of two output
 * pixels against the weight rows of two output channels at a time (mcu_cmsis_s16.h's tiles).
 */
#ifndef MCU_CMSIS_CONV2D_S16_H
#define MCU_CMSIS_CONV2D_S16_H

#include <stdint.h>

/** Parameters of mcu_cmsis_conv2d_s16 (batch 1). depth8 = k_h * k_w * in_c rounded up to a multiple
    of 8; chunk (a multiple of 8) the depth values summed in int32 before int64 (>= depth8: one
    chunk); mode the output stage's kind (mcu_cmsis_s16.h: WIDE or HIGH for TFLM's int64
    requantization, NARROW for its int32 one); act_min <= act_max in [-32768, 32767]. */
typedef struct {
    int32_t in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    int32_t depth8, chunk, mode, act_min, act_max;
} mcu_cmsis_conv_s16_params;

/** Scratch bytes: the two-column tile and one natural-order column, int16. */
#define MCU_CMSIS_CONV2D_S16_SCRATCH_BYTES(depth8) (6 * (depth8))

/** weights: tiles of two output channels (mcu_cmsis_s16.h), ceil(out_c / 2) * 2 * depth8 bytes;
    rq: four int32 per output channel (the output stage records); scratch: see above, 4-byte
    aligned; output [out_h, out_w, out_c]. */
void mcu_cmsis_conv2d_s16(const mcu_cmsis_conv_s16_params *p, const int16_t *input, const int8_t *weights,
                          const int32_t *rq, int16_t *scratch, int16_t *output);

#endif /* MCU_CMSIS_CONV2D_S16_H */
