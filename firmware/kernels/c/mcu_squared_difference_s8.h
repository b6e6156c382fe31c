/*
 * Portable int8 SQUARED_DIFFERENCE (TFLM's squared_difference.cc): both inputs moved onto a common
 * scale, the difference squared and rescaled to the output, with numpy broadcasting.
 */
#ifndef MCU_SQUARED_DIFFERENCE_S8_H
#define MCU_SQUARED_DIFFERENCE_S8_H

#include <stdint.h>

#include "mcu_kernels_c_arith.h"

/** Parameters of mcu_squared_difference_s8 (the fields of mcu_add_params):
        a = requantize((x1 + input1_offset) << left_shift, input1_multiplier, input1_shift)
        b = requantize((x2 + input2_offset) << left_shift, input2_multiplier, input2_shift)
        out = clamp(requantize((a - b)^2, output_multiplier, output_shift) + output_offset, act_min, act_max)
    left_shift is 7, so |a - b| < 2^15 and the square fits int32; input shifts in [-31, 0];
    output_shift in [-31, 1]; act_min, act_max are -128, 127. */
typedef mcu_add_params mcu_squared_difference_params;

/** int8 (x1 - x2)^2 with broadcasting. */
void mcu_squared_difference_s8(const mcu_squared_difference_params *p, const int8_t *input1, const int8_t *input2,
                               int8_t *output);

#endif /* MCU_SQUARED_DIFFERENCE_S8_H */
