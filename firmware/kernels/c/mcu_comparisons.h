/*
 * Portable EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL (TFLM's comparisons.cc):
 * element-wise with numpy broadcasting (a mcu_broadcast_params walk, mcu_kernels_c_arith.h), writing
 * bool as one byte 0 or 1. int32 and float32 (and bool for EQUAL / NOT_EQUAL) compare raw values;
 * int8 compares both inputs moved onto a common scale (mcu_comparison_s8_params).
 */
#ifndef MCU_COMPARISONS_H
#define MCU_COMPARISONS_H

#include <stdint.h>

#include "mcu_kernels_c_arith.h"

/** Parameters of the int8 comparisons (TFLM's ComparisonWithScaling): each input becomes
        v = requantize((x + input_offset) << left_shift, input_multiplier, input_shift)
    and the two v are compared. Offsets are negated zero points in [-127, 128]; left_shift is 8;
    multipliers are Q0.31 in [2^30, 2^31) with shifts in [-31, 0] (the input scales are below 1). */
typedef struct {
    mcu_broadcast_params shape;
    int32_t left_shift;
    int32_t input1_offset, input1_multiplier, input1_shift;
    int32_t input2_offset, input2_multiplier, input2_shift;
} mcu_comparison_s8_params;

#define MCU_COMPARISON_DECLARE(op)                                                                         \
    void mcu_##op##_s8(const mcu_comparison_s8_params *p, const int8_t *input1, const int8_t *input2,      \
                       uint8_t *output);                                                                   \
    void mcu_##op##_s32(const mcu_broadcast_params *p, const int32_t *input1, const int32_t *input2,       \
                        uint8_t *output);                                                                  \
    void mcu_##op##_f32(const mcu_broadcast_params *p, const float *input1, const float *input2, uint8_t *output);

MCU_COMPARISON_DECLARE(equal)
MCU_COMPARISON_DECLARE(not_equal)
MCU_COMPARISON_DECLARE(less)
MCU_COMPARISON_DECLARE(less_equal)
MCU_COMPARISON_DECLARE(greater)
MCU_COMPARISON_DECLARE(greater_equal)

void mcu_equal_b8(const mcu_broadcast_params *p, const uint8_t *input1, const uint8_t *input2, uint8_t *output);
void mcu_not_equal_b8(const mcu_broadcast_params *p, const uint8_t *input1, const uint8_t *input2, uint8_t *output);

#endif /* MCU_COMPARISONS_H */
