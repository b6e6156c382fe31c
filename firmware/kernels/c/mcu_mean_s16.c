/* Portable int16 mean: TFLM's integer mean (QuantizedMeanOrSum) on int16: an int32 sum over the
   reduced dimensions (wrapping as TFLM's), the input zero point removed, one requantization with
   1/count folded in, clamped to int16. */
#include "mcu_kernels_c.h"

void mcu_mean_s16(const mcu_mean_params *p, const int16_t *input, int16_t *output)
{
    for (int32_t o = 0; o < p->outer; o++) {
        for (int32_t m = 0; m < p->middle; m++) {
            for (int32_t i = 0; i < p->inner; i++) {
                uint32_t sum = (uint32_t)p->sum_offset;
                for (int32_t r0 = 0; r0 < p->reduce_outer; r0++) {
                    const int16_t *row = input + (((o * p->reduce_outer + r0) * p->middle + m) * p->reduce_inner) * p->inner + i;
                    for (int32_t r1 = 0; r1 < p->reduce_inner; r1++) {
                        sum += (uint32_t)(int32_t)row[r1 * p->inner];
                    }
                }
                int32_t out = mcu_requantize((int32_t)sum, p->multiplier, p->shift) + p->output_offset;
                out = out < INT16_MIN ? INT16_MIN : out;
                output[(o * p->middle + m) * p->inner + i] = (int16_t)(out > INT16_MAX ? INT16_MAX : out);
            }
        }
    }
}
