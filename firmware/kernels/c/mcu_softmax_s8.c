/* Portable int8 SOFTMAX over the last axis: TFLM's reference_ops::Softmax<int8_t, OutputT>, step
   for step, with gemmlowp's fixed-point exp and reciprocal (mcuforge_gemmlowp.h; ir/ops/_fixedpoint.py is
   their numpy model). Per row:
     1. the row maximum;
     2. each difference d = x - max >= diff_min, scaled onto Q5.26, through exp (Q0.31), summed
        in Q12.19;
     3. the reciprocal of the sum (Q0.31 scale and a power of two), and each exp times it, rounded
        onto the output's 8 or 16 bits. Differences below diff_min give the minimum output.
   With int8 output a row whose sum reaches 512 gives -128 everywhere (TFLM aborts on it).
   Plain additions wrap as int32 (done in uint32 to stay defined C). */
#include "mcu_kernels_c.h"
#include "mcuforge_gemmlowp.h"

#define SCALED_DIFF_INTEGER_BITS 5  /* exp input: Q5.26 */
#define ACCUMULATION_INTEGER_BITS 12 /* sum of exps: Q12.19 */
/* 512 in Q12.19: with int8 output TFLM aborts on a row whose sum reaches it (its final rounding
   shift would exceed 31); that row is -128 here. */
#define INT8_SUM_LIMIT ((uint64_t)512 << (31 - ACCUMULATION_INTEGER_BITS))

/** One row: writes out8[] (out_bits 8) or out16[] (out_bits 16). */
static void softmax_row(const mcu_softmax_params *p, const int8_t *in, int out_bits, int8_t *out8, int16_t *out16)
{
    const int32_t depth = p->depth;
    const int32_t multiplier = p->input_multiplier;
    const int left_shift = (int)p->input_left_shift;
    const int32_t diff_min = p->diff_min;
    const int32_t out_min = out_bits == 8 ? INT8_MIN : INT16_MIN;
    const int32_t out_max = out_bits == 8 ? INT8_MAX : INT16_MAX;

    int32_t max = in[0];
    for (int32_t c = 1; c < depth; c++) {
        max = in[c] > max ? in[c] : max;
    }

    uint64_t total = 0u; /* Q12.19, exact */
    for (int32_t c = 0; c < depth; c++) {
        const int32_t diff = (int32_t)in[c] - max;
        if (diff >= diff_min) {
            const int32_t scaled = mcu_srdhm((int32_t)((uint32_t)diff << left_shift), multiplier);
            const int32_t e = mcu_exp_on_negative_values(scaled, SCALED_DIFF_INTEGER_BITS);
            total += (uint32_t)mcu_rdbpot(e, ACCUMULATION_INTEGER_BITS);
        }
    }
    if (out_bits == 8 && total >= INT8_SUM_LIMIT) { /* TFLM aborts on this row: -128 everywhere */
        for (int32_t c = 0; c < depth; c++) {
            out8[c] = INT8_MIN;
        }
        return;
    }
    const uint32_t sum_of_exps = (uint32_t)total; /* TFLM's int32 sum, wrapping (rows of 4096+ only) */

    /* GetReciprocal: 1 / sum = shifted_scale * 2^-num_bits_over_unit */
    int num_bits_over_unit;
    const int32_t shifted_scale =
        mcu_get_reciprocal((int32_t)sum_of_exps, ACCUMULATION_INTEGER_BITS, &num_bits_over_unit);
    /* In [23, 31] for int8 output (the sum is below 512); for int16 output in [15, 27] unless a row
       of 4096+ elements wrapped the sum below 16 (undefined in TFLM): kept a valid shift there. */
    int exponent = num_bits_over_unit + 31 - out_bits;
    exponent = exponent < 0 ? 0 : (exponent > 31 ? 31 : exponent);

    for (int32_t c = 0; c < depth; c++) {
        const int32_t diff = (int32_t)in[c] - max;
        int32_t out = out_min;
        if (diff >= diff_min) {
            const int32_t scaled = mcu_srdhm((int32_t)((uint32_t)diff << left_shift), multiplier);
            const int32_t e = mcu_exp_on_negative_values(scaled, SCALED_DIFF_INTEGER_BITS);
            out = mcu_rdbpot(mcu_srdhm(shifted_scale, e), exponent) + out_min;
            out = out > out_max ? out_max : out;
            out = out < out_min ? out_min : out;
        }
        if (out_bits == 8) {
            out8[c] = (int8_t)out;
        } else {
            out16[c] = (int16_t)out;
        }
    }
}

void mcu_softmax_s8(const mcu_softmax_params *p, const int8_t *input, int8_t *output)
{
    for (int32_t r = 0; r < p->rows; r++) {
        softmax_row(p, input + r * p->depth, 8, output + r * p->depth, 0);
    }
}

void mcu_softmax_s8_s16(const mcu_softmax_params *p, const int8_t *input, int16_t *output)
{
    for (int32_t r = 0; r < p->rows; r++) {
        softmax_row(p, input + r * p->depth, 16, 0, output + r * p->depth);
    }
}
