/*
 * Portable CUMSUM (TFLM's CumSum): int8 with ArithmeticParams (every element rescaled to a
 * 2^20-shifted accumulator scale, summed along the axis in int32, wrapping, requantized), and float32
 * (sequential float sums).
 */
#ifndef MCU_CUMSUM_H
#define MCU_CUMSUM_H

#include <stdint.h>

/** Parameters of mcu_cumsum_s8: the input (and output) as [outer, depth, inner], summed along depth. */
typedef struct {
    int32_t outer, depth, inner;                 /**< >= 1 */
    int32_t exclusive;                           /**< 1: output the sum before the element */
    int32_t reverse;                             /**< 1: sum from the end of the axis */
    int32_t input_offset;                        /**< -input zero point, [-127, 128] */
    int32_t input_multiplier, input_shift;       /**< one half: Q0.31 multiplier, shift <= 0 */
    int32_t output_multiplier, output_shift;     /**< Q0.31 multiplier in [0, 2^31), shift <= 0 */
    int32_t output_offset;                       /**< output zero point, [-128, 127] */
    int32_t init;                                /**< the accumulator's start: input_offset rescaled, as TFLM */
} mcu_cumsum_params;

void mcu_cumsum_s8(const mcu_cumsum_params *p, const int8_t *input, int8_t *output);

/** Parameters of mcu_cumsum_f32: the input (and output) as [outer, depth, inner]. */
typedef struct {
    int32_t outer, depth, inner;  /**< >= 1 */
    int32_t exclusive;            /**< 1: output the sum before the element */
    int32_t reverse;              /**< 1: sum from the end of the axis */
} mcu_cumsum_f32_params;

/** float32 running sums from 0.0f, added in order along the axis (from its end when reversed). */
void mcu_cumsum_f32(const mcu_cumsum_f32_params *p, const float *input, float *output);

#endif /* MCU_CUMSUM_H */
