/* Portable int8 mean: TFLM's integer mean (QuantizedMeanOrSum): an int32 sum over the reduced
   dimensions, the input zero point removed, one requantization with 1/count folded in.
   Four neighbouring inner elements (channels, for a spatial mean) are summed together, so each
   reduced row is walked once per four outputs with the sums in registers. */
#include "mcu_kernels_c.h"

static inline int8_t mean_out(const mcu_mean_params *p, int32_t sum)
{
    /* sum - input_zp * count, wrapping as TFLM's int32 arithmetic does */
    sum = (int32_t)((uint32_t)sum + (uint32_t)p->sum_offset);
    int32_t out = mcu_requantize_q31(sum, p->multiplier, p->shift) + p->output_offset;
    out = out < -128 ? -128 : out;
    return (int8_t)(out > 127 ? 127 : out);
}

void mcu_mean_s8(const mcu_mean_params *p, const int8_t *input, int8_t *output)
{
    const int32_t reduce_outer = p->reduce_outer, reduce_inner = p->reduce_inner;
    /* with one reduced run (reduce_inner 1: a spatial mean is [1, H * W, C, 1, 1]) middle and inner
       are one run of neighbours */
    const int32_t middle = reduce_inner == 1 ? 1 : p->middle;
    const int32_t inner = reduce_inner == 1 ? p->middle * p->inner : p->inner;
    const int32_t step0 = middle * reduce_inner * inner; /* from one reduce_outer row to the next */

    for (int32_t o = 0; o < p->outer; o++) {
        for (int32_t m = 0; m < middle; m++) {
            const int8_t *base = input + ((o * reduce_outer * middle + m) * reduce_inner) * inner;
            int32_t i = 0;
            for (; i + 4 <= inner; i += 4) {
                int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                const int8_t *row = base + i;
                for (int32_t r0 = 0; r0 < reduce_outer; r0++, row += step0) {
                    const int8_t *q = row;
                    for (int32_t r1 = 0; r1 < reduce_inner; r1++, q += inner) {
                        s0 += q[0];
                        s1 += q[1];
                        s2 += q[2];
                        s3 += q[3];
                    }
                }
                const int32_t sums[4] = {s0, s1, s2, s3};
                for (int32_t k = 0; k < 4; k++) {
                    *output++ = mean_out(p, sums[k]);
                }
            }
            for (; i < inner; i++) {
                int32_t sum = 0;
                const int8_t *row = base + i;
                for (int32_t r0 = 0; r0 < reduce_outer; r0++, row += step0) {
                    const int8_t *q = row;
                    for (int32_t r1 = 0; r1 < reduce_inner; r1++, q += inner) {
                        sum += *q;
                    }
                }
                *output++ = mean_out(p, sum);
            }
        }
    }
}
