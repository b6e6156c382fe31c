/*
 * int8 softmax over the last axis, TFLM's reference_ops::Softmax<int8_t, int8_t> step for step.
 *
 * Per row: d = x - max(row). Differences below diff_min give -128. The others are scaled into
 * Q5.26 (input_multiplier, input_left_shift), exponentiated with gemmlowp's
 * exp_on_negative_values (Q0.31 out) and summed in Q12.19; the output is exp * 1/sum, the
 * reciprocal from GetReciprocal, rounded into [0, 256) and offset by -128. A row whose sum reaches
 * 512 (where TFLM aborts: 512 or more elements near the maximum) gives -128 everywhere. A layer with
 * many elements comes with the table of the exponentials of every difference an int8 row can have
 * (planner/targets/cmsis_nn/softmax.py); without it the first SOFTMAX_KEPT exponentials of a row
 * are kept on the stack between the sum and the outputs (TFLM computes each twice; the values are
 * the same), the rest computed again.
 *
 * The gemmlowp fixed-point arithmetic is mcuforge_gemmlowp.h's (shared with the portable kernels;
 * ir/ops/_fixedpoint.py is its numpy model).
 */
#include "mcu_kernels_cmsis_nn.h"
#include "mcuforge_gemmlowp.h"

#include <stddef.h>

#define SCALED_DIFF_INTEGER_BITS 5
#define ACCUMULATION_INTEGER_BITS 12
/* 512 in Q12.19: TFLM aborts on a row whose sum of exponentials reaches it (its final rounding shift
   would exceed 31); such a row is -128 here. */
#define SUM_LIMIT ((int32_t)512 << (31 - ACCUMULATION_INTEGER_BITS))
/* exponentials kept per row (128 bytes of stack): a classifier head's whole row */
#define SOFTMAX_KEPT 32

/** exp(d * input scale) of a difference d >= diff_min from the row's maximum, Q0.31. */
static __attribute__((noinline)) int32_t softmax_exp(int32_t diff, int32_t mult, int left_shift)
{
    const int32_t scaled = mcu_requantize(diff, mult, left_shift); /* Q5.26 */
    return mcu_exp_on_negative_values(scaled, SCALED_DIFF_INTEGER_BITS);
}

/** The exponential of diff >= diff_min: from the table when there is one. */
static inline int32_t row_exp(const int32_t *table, int32_t diff, int32_t mult, int left_shift)
{
    return table != NULL ? table[-diff] : softmax_exp(diff, mult, left_shift);
}

void mcu_cmsis_softmax_s8(const mcu_cmsis_softmax_params *p, const int8_t *input, const int32_t *exp_table,
                          int8_t *output)
{
    const int32_t depth = p->depth;
    const int32_t mult = p->input_multiplier;
    const int left_shift = (int)p->input_left_shift;
    const int32_t diff_min = p->diff_min;
    for (int32_t r = 0; r < p->rows; r++) {
        const int8_t *x = input + r * depth;
        int8_t *out = output + r * depth;
        int32_t max = -128;
        for (int32_t i = 0; i < depth; i++) {
            max = x[i] > max ? x[i] : max;
        }
        int32_t kept[SOFTMAX_KEPT]; /* the first exponentials, 0 below diff_min */
        int32_t sum_of_exps = 0;    /* Q12.19; stops growing at SUM_LIMIT, so it never wraps */
        for (int32_t i = 0; i < depth && sum_of_exps < SUM_LIMIT; i++) {
            const int32_t diff = x[i] - max;
            const int32_t e = diff >= diff_min ? row_exp(exp_table, diff, mult, left_shift) : 0;
            sum_of_exps += mcu_rdbpot(e, ACCUMULATION_INTEGER_BITS);
            if (i < SOFTMAX_KEPT) {
                kept[i] = e;
            }
        }
        if (sum_of_exps >= SUM_LIMIT) { /* TFLM aborts on this row */
            for (int32_t i = 0; i < depth; i++) {
                out[i] = -128;
            }
            continue;
        }
        /* GetReciprocal: 1 / sum = shifted_scale * 2^-bits_over_unit (sum >= 1.0, so clz <= 12). */
        int bits_over_unit;
        const int32_t shifted_scale = mcu_get_reciprocal(sum_of_exps, ACCUMULATION_INTEGER_BITS, &bits_over_unit);
        for (int32_t i = 0; i < depth; i++) {
            const int32_t diff = x[i] - max;
            int32_t v = -128;
            if (diff >= diff_min) {
                const int32_t e = i < SOFTMAX_KEPT ? kept[i] : row_exp(exp_table, diff, mult, left_shift);
                v = mcu_rdbpot(mcu_srdhm(shifted_scale, e), bits_over_unit + 31 - 8) - 128;
                v = v > 127 ? 127 : v;
                v = v < -128 ? -128 : v;
            }
            out[i] = (int8_t)v;
        }
    }
}
