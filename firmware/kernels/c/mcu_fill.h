/*
 * Portable FILL and ZEROS_LIKE (any element size): one element repeated over the output.
 */
#ifndef MCU_FILL_H
#define MCU_FILL_H

#include <stdint.h>

/** Parameters of mcu_fill. */
typedef struct {
    int32_t elem_size;  /**< element size in bytes: 1, 2, 4 or 8 */
    int32_t size;       /**< output elements, >= 1 */
} mcu_fill_params;

/** Every output element is a copy of the element at `value` (FILL: its value operand; ZEROS_LIKE:
    a constant 0). */
void mcu_fill(const mcu_fill_params *p, const void *value, void *output);

#endif /* MCU_FILL_H */
