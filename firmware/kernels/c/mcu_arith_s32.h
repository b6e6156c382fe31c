/*
 * Portable int32 element-wise arithmetic (TFLM's reference_ops on int32 tensors, no quantization):
 * ADD, SUB, MUL, DIV and SQUARED_DIFFERENCE with numpy broadcasting (a mcu_broadcast_params walk,
 * mcu_kernels_c_arith.h), clamped to [act_min, act_max]. Sums, differences and products wrap as
 * two's-complement int32 (computed in uint32, defined C) as TFLM's int32 arithmetic does on its
 * targets. DIV truncates toward zero; TFLM traps on a zero divisor and on INT32_MIN / -1, where
 * these kernels give 0 and INT32_MIN.
 */
#ifndef MCU_ARITH_S32_H
#define MCU_ARITH_S32_H

#include <stdint.h>

#include "mcu_kernels_c_arith.h"

/** The broadcast walk and the clamp (act_min <= act_max; the whole int32 range for no clamp). */
typedef struct {
    mcu_broadcast_params shape;
    int32_t act_min, act_max;
} mcu_arith_s32_params;

void mcu_add_s32(const mcu_arith_s32_params *p, const int32_t *input1, const int32_t *input2, int32_t *output);
void mcu_sub_s32(const mcu_arith_s32_params *p, const int32_t *input1, const int32_t *input2, int32_t *output);
void mcu_mul_s32(const mcu_arith_s32_params *p, const int32_t *input1, const int32_t *input2, int32_t *output);
void mcu_div_s32(const mcu_arith_s32_params *p, const int32_t *input1, const int32_t *input2, int32_t *output);
void mcu_squared_difference_s32(const mcu_arith_s32_params *p, const int32_t *input1, const int32_t *input2,
                                int32_t *output);

#endif /* MCU_ARITH_S32_H */
