/*
 * Portable int8 DIV (TFLM's div.cc, DivElementwise / BroadcastDivSlow): the divisor's reciprocal
 * (GetReciprocal), the dividend normalised by its leading sign bits, both multiplied, rescaled to
 * the output, with numpy broadcasting and a fused activation.
 */
#ifndef MCU_DIV_S8_H
#define MCU_DIV_S8_H

#include <stdint.h>

#include "mcu_kernels_c_arith.h"

/** Parameters of mcu_div_s8 (the fields of mcu_mul_params): offsets are negated input zero points
    in [-127, 128] and the output zero point; output_multiplier is Q0.31 with output_shift in
    [-24, 20]; act_min <= act_max in [-128, 127]. */
typedef mcu_mul_params mcu_div_params;

/** int8 x1 / x2 with broadcasting and a fused activation. Where TFLM's final rounding shift
    reaches 32 or more (small quotients; a divisor equal to its zero point), the result is TFLM's
    on x86-64 (shift count modulo 32, all-ones rounding mask), as the numpy reference states. */
void mcu_div_s8(const mcu_div_params *p, const int8_t *input1, const int8_t *input2, int8_t *output);

#endif /* MCU_DIV_S8_H */
