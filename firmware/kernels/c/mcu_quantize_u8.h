/*
 * Portable QUANTIZE between uint8 and int8 (TFLM quantize.cc, reference_ops::Requantize): the
 * uint8 model inputs (camera pixels) and outputs of full-integer exports.
 */
#ifndef MCU_QUANTIZE_U8_H
#define MCU_QUANTIZE_U8_H

#include <stdint.h>

/** Parameters of the uint8 <-> int8 QUANTIZE kernels: the number of elements (>= 1). */
typedef struct {
    int32_t size;
} mcu_quantize_u8_params;

/** uint8 -> int8 through the 256-entry table the code generator computed: output[i] = table[input[i]]. */
void mcu_quantize_u8(const mcu_quantize_u8_params *p, const uint8_t *input, const int8_t *table, int8_t *output);

/** int8 -> uint8 through the 256-entry table: output[i] = table[input[i] + 128]. */
void mcu_quantize_s8_u8(const mcu_quantize_u8_params *p, const int8_t *input, const uint8_t *table,
                        uint8_t *output);

/** uint8 -> int8 with equal scales and zero points 128 apart: output[i] = input[i] ^ 0x80 (TFLM's
    fast path, equal to the general requantization for these parameters). */
void mcu_quantize_u8_xor(const mcu_quantize_u8_params *p, const uint8_t *input, int8_t *output);

/** int8 -> uint8 with equal scales and zero points 128 apart: output[i] = input[i] ^ 0x80. */
void mcu_quantize_s8_u8_xor(const mcu_quantize_u8_params *p, const int8_t *input, uint8_t *output);

#endif /* MCU_QUANTIZE_U8_H */
