/*
 * Portable int8 L2_NORMALIZATION over the last axis (TFLM's l2norm.cc,
 * reference_integer_ops::L2Normalization): output scale 1/128, zero point 0.
 */
#ifndef MCU_L2_NORMALIZATION_S8_H
#define MCU_L2_NORMALIZATION_S8_H

#include <stdint.h>

/** `rows` rows of `depth` values (depth in [1, 33025], so the sum of squares fits int32);
    input_offset is the negated input zero point, in [-127, 128]. */
typedef struct {
    int32_t rows, depth, input_offset;
} mcu_l2_normalization_params;

/** Each row divided by its L2 norm, in units of 1/128, clamped to int8. */
void mcu_l2_normalization_s8(const mcu_l2_normalization_params *p, const int8_t *input, int8_t *output);

#endif /* MCU_L2_NORMALIZATION_S8_H */
