/*
 * Portable LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT and REDUCE_ALL (TFLM's logical.cc, elementwise.cc,
 * reduce.cc) on bool tensors: one byte per element, 0 or 1.
 */
#ifndef MCU_LOGICAL_H
#define MCU_LOGICAL_H

#include <stdint.h>

#include "mcu_kernels_c_arith.h"
#include "mcu_reduce_min_max.h" /* mcu_reduce_params */

/** The number of elements (>= 0). */
typedef struct {
    int32_t size;
} mcu_logical_not_params;

/** x1 && x2, x1 || x2 over the broadcast walk *p. */
void mcu_logical_and(const mcu_broadcast_params *p, const uint8_t *input1, const uint8_t *input2, uint8_t *output);
void mcu_logical_or(const mcu_broadcast_params *p, const uint8_t *input1, const uint8_t *input2, uint8_t *output);
/** !x; works in place. */
void mcu_logical_not(const mcu_logical_not_params *p, const uint8_t *input, uint8_t *output);
/** output[o] = 1 unless an input element mapping to o (mcu_reduce_params, as REDUCE_MAX) is 0. */
void mcu_reduce_all(const mcu_reduce_params *p, const uint8_t *input, uint8_t *output);

#endif /* MCU_LOGICAL_H */
