/*
 * Portable DEQUANTIZE from uint8 (TFLM dequantize.cc): out = (float)((double)scale * (x - zero_point)).
 */
#ifndef MCU_DEQUANTIZE_U8_H
#define MCU_DEQUANTIZE_U8_H

#include "mcu_kernels_c.h" /* mcu_dequantize_params */

/** uint8 -> float32 DEQUANTIZE; zero_point in [0, 255]. */
void mcu_dequantize_u8(const mcu_dequantize_params *p, const uint8_t *input, float *output);

#endif /* MCU_DEQUANTIZE_U8_H */
