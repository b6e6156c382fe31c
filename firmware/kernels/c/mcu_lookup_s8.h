/*
 * Portable int8 element-wise ops through a 256-entry table the code generator computed with the
 * op's numpy reference on every int8 input (bit-exact by construction): ABS, RSQRT and ELU.
 */
#ifndef MCU_LOOKUP_S8_H
#define MCU_LOOKUP_S8_H

#include <stdint.h>

#include "mcu_kernels_c_arith.h"

/** output[i] = table[input[i] + 128] for p->size elements; works in place (output == input). */
void mcu_lookup_s8(const mcu_table_params *p, const int8_t *input, const int8_t *table, int8_t *output);

#endif /* MCU_LOOKUP_S8_H */
