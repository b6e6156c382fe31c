/*
 * int8 softmax over the last axis, TFLM's reference_ops::Softmax<int8_t, int8_t> step for step.
 *
 * Per row: d = x - max(row). Differences below diff_min give -128. The others are scaled into
 * Q5.26 (input_multiplier, input_left_shift), exponentiated with gemmlowp's
 * exp_on_negative_values (Q0.31 out) and summed in Q12.19; the output is exp * 1/sum, the
 * reciprocal from GetReciprocal, rounded into [0, 256) and offset by -128. A row whose sum reaches
 * 512 (where TFLM aborts: 512 or more elements near the maximum) gives -128 everywhere.
 *
 * The gemmlowp fixed-point helpers below work on raw int32 values; additions wrap (computed in
 * uint32) exactly as the numpy reference models them (ir/ops/_fixedpoint.py).
 */
#include "mcu_kernels_cmsis_nn.h"

#define SCALED_DIFF_INTEGER_BITS 5
#define ACCUMULATION_INTEGER_BITS 12
/* 512 in Q12.19: TFLM aborts on a row whose sum of exponentials reaches it (its final rounding shift
   would exceed 31); such a row is -128 here. */
#define SUM_LIMIT ((int32_t)512 << (31 - ACCUMULATION_INTEGER_BITS))

static int32_t add_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t sub_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

/** gemmlowp SaturatingRoundingMultiplyByPOT with a positive exponent: a saturating left shift. */
static int32_t shl_saturating(int32_t x, int exponent)
{
    const int32_t threshold = (int32_t)(((uint32_t)1 << (31 - exponent)) - 1);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << exponent);
}

/** exp(a) for a Q0.31 value a in [-1/4, 0): Taylor expansion around -1/8. */
static int32_t exp_on_interval_between_negative_one_quarter_and_0_excl(int32_t a)
{
    const int32_t constant_term = 1895147668; /* exp(-1/8) */
    const int32_t constant_1_over_3 = 715827883;
    const int32_t x = add_wrap(a, 1 << 28); /* a + 1/8 */
    const int32_t x2 = mcu_srdhm(x, x);
    const int32_t x3 = mcu_srdhm(x2, x);
    const int32_t x4 = mcu_srdhm(x2, x2);
    const int32_t x4_over_4 = mcu_rdbpot(x4, 2);
    const int32_t poly = mcu_rdbpot(add_wrap(mcu_srdhm(add_wrap(x4_over_4, x3), constant_1_over_3), x2), 1);
    return add_wrap(constant_term, mcu_srdhm(constant_term, add_wrap(x, poly)));
}

/** gemmlowp exp_on_negative_values for a Q5.26 value a <= 0, as Q0.31. */
static int32_t exp_on_negative_values(int32_t a)
{
    static const int32_t barrel[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
    const int frac_bits = 31 - SCALED_DIFF_INTEGER_BITS;
    const int32_t one_quarter = (int32_t)1 << (frac_bits - 2);
    const int32_t mask = one_quarter - 1;
    const int32_t a_mod_quarter_minus_one_quarter = sub_wrap(a & mask, one_quarter);
    /* Rescale Q5.26 -> Q0.31: a saturating multiply by 2^5. */
    int32_t result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        shl_saturating(a_mod_quarter_minus_one_quarter, SCALED_DIFF_INTEGER_BITS));
    const int32_t remainder = sub_wrap(a_mod_quarter_minus_one_quarter, a);
    /* exp(-1/4 * 2^k) for k = 0..6 (exponents -2..4 of the quarter): every bit of the remainder. */
    for (int k = 0; k < 7; k++) {
        if (remainder & ((int32_t)1 << (frac_bits - 2 + k))) {
            result = mcu_srdhm(result, barrel[k]);
        }
    }
    return a == 0 ? INT32_MAX : result;
}

/** 1 / (1 + a) for a Q0.31 value a in [0, 1), as Q0.31 (gemmlowp's Newton-Raphson). */
static int32_t one_over_one_plus_x_for_x_in_0_1(int32_t a)
{
    const int64_t sum = (int64_t)a + INT32_MAX;
    const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    const int32_t constant_48_over_17 = 1515870810;
    const int32_t constant_neg_32_over_17 = -1010580540;
    const int32_t one_q2 = 1 << 29;
    int32_t x = add_wrap(constant_48_over_17, mcu_srdhm(half_denominator, constant_neg_32_over_17));
    for (int i = 0; i < 3; i++) {
        const int32_t half_denominator_times_x = mcu_srdhm(half_denominator, x);
        const int32_t one_minus_half_denominator_times_x = sub_wrap(one_q2, half_denominator_times_x);
        x = add_wrap(x, shl_saturating(mcu_srdhm(x, one_minus_half_denominator_times_x), 2));
    }
    return shl_saturating(x, 1);
}

/** Leading zeros of a non-zero 32-bit value. */
static int count_leading_zeros(uint32_t x)
{
    int n = 0;
    while (!(x & 0x80000000u)) {
        x <<= 1;
        n++;
    }
    return n;
}

void mcu_cmsis_softmax_s8(const mcu_cmsis_softmax_params *p, const int8_t *input, int8_t *output)
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
        int32_t sum_of_exps = 0; /* Q12.19; stops growing at SUM_LIMIT, so it never wraps */
        for (int32_t i = 0; i < depth && sum_of_exps < SUM_LIMIT; i++) {
            const int32_t diff = x[i] - max;
            if (diff >= diff_min) {
                const int32_t scaled = mcu_requantize(diff, mult, left_shift); /* Q5.26 */
                sum_of_exps += mcu_rdbpot(exp_on_negative_values(scaled), ACCUMULATION_INTEGER_BITS);
            }
        }
        if (sum_of_exps >= SUM_LIMIT) { /* TFLM aborts on this row */
            for (int32_t i = 0; i < depth; i++) {
                out[i] = -128;
            }
            continue;
        }
        /* GetReciprocal: 1 / sum = shifted_scale * 2^-bits_over_unit (sum >= 1.0, so clz <= 12). */
        const int headroom_plus_one = count_leading_zeros((uint32_t)sum_of_exps);
        const int bits_over_unit = ACCUMULATION_INTEGER_BITS - headroom_plus_one;
        const int32_t shifted_sum_minus_one =
            (int32_t)(((uint32_t)sum_of_exps << headroom_plus_one) - ((uint32_t)1 << 31));
        const int32_t shifted_scale = one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one);
        for (int32_t i = 0; i < depth; i++) {
            const int32_t diff = x[i] - max;
            int32_t v = -128;
            if (diff >= diff_min) {
                const int32_t scaled = mcu_requantize(diff, mult, left_shift);
                const int32_t e = exp_on_negative_values(scaled);
                v = mcu_rdbpot(mcu_srdhm(shifted_scale, e), bits_over_unit + 31 - 8) - 128;
                v = v > 127 ? 127 : v;
                v = v < -128 ? -128 : v;
            }
            out[i] = (int8_t)v;
        }
    }
}
