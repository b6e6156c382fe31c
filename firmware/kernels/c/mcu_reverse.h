/*
 * Portable REVERSE_V2 (TFLM's reverse.cc, reference_ops::Reverse): reversing contiguous axes
 * reverses their flattened block, so the kernel copies whole rows of the inner axes, any element
 * type. The output must not overlap the input.
 */
#ifndef MCU_REVERSE_H
#define MCU_REVERSE_H

#include <stdint.h>

/** The tensor as outer blocks (the axes before the reversed ones) of count rows (the reversed axes
    flattened) of inner_bytes bytes (the axes after them, times the element size). All >= 0. */
typedef struct {
    int32_t outer;
    int32_t count;
    int32_t inner_bytes;
} mcu_reverse_params;

/** Row k of each output block is row count - 1 - k of the input block. */
void mcu_reverse(const mcu_reverse_params *p, const void *input, void *output);

#endif /* MCU_REVERSE_H */
