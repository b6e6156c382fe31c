/*
 * Portable FLOOR_DIV and FLOOR_MOD on float32 (TFLM's floor_div.cc, floor_mod.cc), broadcasting
 * (a mcu_broadcast_params walk, mcu_kernels_c_arith.h):
 *   FLOOR_DIV: (float)floor((double)x1 / (double)x2)
 *   FLOOR_MOD: t = fmodf(x1, x2); t + x2 when t != 0 and t and x2 differ in sign, else t.
 */
#ifndef MCU_FLOOR_DIV_MOD_H
#define MCU_FLOOR_DIV_MOD_H

#include <stdint.h>

#include "mcu_kernels_c_arith.h"

void mcu_floor_div_f32(const mcu_broadcast_params *p, const float *input1, const float *input2, float *output);
void mcu_floor_mod_f32(const mcu_broadcast_params *p, const float *input1, const float *input2, float *output);

#endif /* MCU_FLOOR_DIV_MOD_H */
