/*
 * Portable int8 PRELU (TFLM's prelu.cc, BroadcastPrelu4DSlow): x rescaled to the output where
 * x >= its zero point, x * alpha rescaled otherwise, alpha broadcasting against x.
 */
#ifndef MCU_PRELU_S8_H
#define MCU_PRELU_S8_H

#include <stdint.h>

#include "mcu_kernels_c_arith.h"

/** Parameters of mcu_prelu_s8: with a = x + input_offset,
        out = requantize(a, positive_multiplier, positive_shift)                         for a >= 0
        out = requantize(a * (alpha + alpha_offset), negative_multiplier, negative_shift) for a < 0
    plus output_offset, clamped to [-128, 127]. The broadcast walk's input 1 is x, input 2 alpha.
    Offsets in [-127, 128] (output_offset in [-128, 127]); multipliers Q0.31; positive_shift in
    [-31, 23], negative_shift in [-31, 15] (the shifted values fit in int32). */
typedef struct {
    mcu_broadcast_params shape;
    int32_t input_offset, alpha_offset, output_offset;
    int32_t positive_multiplier, positive_shift, negative_multiplier, negative_shift;
} mcu_prelu_params;

/** int8 PRELU with broadcasting. positive[x + 128]: the output of each x with a >= 0 (its
    requantization, offset and clamp, precomputed; entries of x below the zero point unused). */
void mcu_prelu_s8(const mcu_prelu_params *p, const int8_t *input, const int8_t *alpha, const int8_t *positive,
                  int8_t *output);

#endif /* MCU_PRELU_S8_H */
