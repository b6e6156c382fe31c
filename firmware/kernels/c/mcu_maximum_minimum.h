/*
 * Portable MAXIMUM and MINIMUM (TFLM's MaximumMinimumBroadcastSlow): out = a > b ? a : b
 * (a < b ? a : b), on the raw values of int8, int16, int32 or float32 tensors, with numpy
 * broadcasting described by a mcu_broadcast_params walk (mcu_kernels_c_arith.h).
 */
#ifndef MCU_MAXIMUM_MINIMUM_H
#define MCU_MAXIMUM_MINIMUM_H

#include <stdint.h>

#include "mcu_kernels_c_arith.h"

void mcu_maximum_s8(const mcu_broadcast_params *p, const int8_t *input1, const int8_t *input2, int8_t *output);
void mcu_minimum_s8(const mcu_broadcast_params *p, const int8_t *input1, const int8_t *input2, int8_t *output);
void mcu_maximum_s16(const mcu_broadcast_params *p, const int16_t *input1, const int16_t *input2, int16_t *output);
void mcu_minimum_s16(const mcu_broadcast_params *p, const int16_t *input1, const int16_t *input2, int16_t *output);
void mcu_maximum_s32(const mcu_broadcast_params *p, const int32_t *input1, const int32_t *input2, int32_t *output);
void mcu_minimum_s32(const mcu_broadcast_params *p, const int32_t *input1, const int32_t *input2, int32_t *output);
void mcu_maximum_f32(const mcu_broadcast_params *p, const float *input1, const float *input2, float *output);
void mcu_minimum_f32(const mcu_broadcast_params *p, const float *input1, const float *input2, float *output);

#endif /* MCU_MAXIMUM_MINIMUM_H */
