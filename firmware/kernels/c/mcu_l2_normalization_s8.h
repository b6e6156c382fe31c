/*
 * Portable L2_NORMALIZATION over the last axis (TFLM's l2norm.cc): int8
 * (reference_integer_ops::L2Normalization, output scale 1/128, zero point 0) and float32
 * (reference_ops::L2Normalization, epsilon 1e-6).
 */
#ifndef MCU_L2_NORMALIZATION_S8_H
#define MCU_L2_NORMALIZATION_S8_H

#include <stdint.h>

/** `rows` rows of `depth` values (depth in [1, 33025], so the sum of squares fits int32);
    input_offset is the negated input zero point, in [-127, 128] (0 and unused for float32). */
typedef struct {
    int32_t rows, depth, input_offset;
} mcu_l2_normalization_params;

/** Each row divided by its L2 norm, in units of 1/128, clamped to int8. */
void mcu_l2_normalization_s8(const mcu_l2_normalization_params *p, const int8_t *input, int8_t *output);

/** Each row divided by max(sqrt(sum of squares), 1e-6), in float32: the squares summed in order,
    each step rounded (the kernel is built without floating-point contraction, as TFLM's x86 build
    computes it). */
void mcu_l2_normalization_f32(const mcu_l2_normalization_params *p, const float *input, float *output);

#endif /* MCU_L2_NORMALIZATION_S8_H */
