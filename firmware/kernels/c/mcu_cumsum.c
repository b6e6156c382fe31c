/* Portable CUMSUM: TFLM's quantized CumSum (the accumulator starting at TFLM's value) and its
   float32 CumSum. */
#include "mcu_cumsum.h"

#include "mcuforge_fixedpoint.h"

void mcu_cumsum_s8(const mcu_cumsum_params *p, const int8_t *input, int8_t *output)
{
    const int32_t depth = p->depth, inner = p->inner;
    for (int32_t o = 0; o < p->outer; o++) {
        for (int32_t i = 0; i < inner; i++) {
            uint32_t acc = (uint32_t)p->init; /* int32 arithmetic, wrapping */
            for (int32_t k = 0; k < depth; k++) {
                const int32_t d = p->reverse ? depth - 1 - k : k;
                const int32_t at = (o * depth + d) * inner + i;
                const int32_t y = (p->input_offset + input[at]) * (1 << 20);
                const int32_t scaled = mcu_rdbpot(mcu_srdhm(y, p->input_multiplier), -p->input_shift);
                const uint32_t before = acc;
                acc += (uint32_t)scaled;
                const int32_t sum = (int32_t)(p->exclusive ? before : acc);
                int32_t out = mcu_rdbpot(mcu_srdhm(sum, p->output_multiplier), -p->output_shift) + p->output_offset;
                out = out < -128 ? -128 : out;
                out = out > 127 ? 127 : out;
                output[at] = (int8_t)out;
            }
        }
    }
}

void mcu_cumsum_f32(const mcu_cumsum_f32_params *p, const float *input, float *output)
{
    const int32_t depth = p->depth, inner = p->inner;
    for (int32_t o = 0; o < p->outer; o++) {
        for (int32_t i = 0; i < inner; i++) {
            float acc = 0.0f;
            for (int32_t k = 0; k < depth; k++) {
                const int32_t d = p->reverse ? depth - 1 - k : k;
                const int32_t at = (o * depth + d) * inner + i;
                if (p->exclusive) {
                    output[at] = acc;
                    acc += input[at];
                } else {
                    acc += input[at];
                    output[at] = acc;
                }
            }
        }
    }
}
