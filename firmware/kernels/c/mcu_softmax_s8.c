/* Portable int8 SOFTMAX over the last axis: TFLM's reference_ops::Softmax<int8_t, OutputT>, step
   for step, with gemmlowp's fixed-point exp and reciprocal (ir/ops/_fixedpoint.py is the numpy
   model of the helpers below). Per row:
     1. the row maximum;
     2. each difference d = x - max >= diff_min, scaled onto Q5.26, through exp (Q0.31), summed
        in Q12.19;
     3. the reciprocal of the sum (Q0.31 scale and a power of two), and each exp times it, rounded
        onto the output's 8 or 16 bits. Differences below diff_min give the minimum output.
   With int8 output a row whose sum reaches 512 gives -128 everywhere (TFLM aborts on it).
   Plain additions wrap as int32 (done in uint32 to stay defined C). */
#include "mcu_kernels_c.h"

#define SCALED_DIFF_INTEGER_BITS 5  /* exp input: Q5.26 */
#define ACCUMULATION_INTEGER_BITS 12 /* sum of exps: Q12.19 */
/* 512 in Q12.19: with int8 output TFLM aborts on a row whose sum reaches it (its final rounding
   shift would exceed 31); that row is -128 here. */
#define INT8_SUM_LIMIT ((uint64_t)512 << (31 - ACCUMULATION_INTEGER_BITS))

static int32_t add_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t sub_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

/** gemmlowp SaturatingRoundingMultiplyByPOT for a positive exponent in [1, 30]: x * 2^exponent,
    saturated to the int32 range. */
static int32_t saturating_left_shift(int32_t x, int exponent)
{
    const int32_t threshold = (int32_t)((1u << (31 - exponent)) - 1u);
    if (x > threshold) {
        return INT32_MAX;
    }
    if (x < -threshold) {
        return INT32_MIN;
    }
    return (int32_t)((uint32_t)x << exponent);
}

/** exp(a) for a Q0.31 value a in [-1/4, 0): Taylor expansion around -1/8, as Q0.31. */
static int32_t exp_on_interval_between_negative_one_quarter_and_0_excl(int32_t a)
{
    const int32_t constant_term = 1895147668;     /* exp(-1/8) */
    const int32_t constant_1_over_3 = 715827883;  /* 1/3 */
    const int32_t x = add_wrap(a, 1 << 28);       /* a + 1/8 */
    const int32_t x2 = mcu_srdhm(x, x);
    const int32_t x3 = mcu_srdhm(x2, x);
    const int32_t x4 = mcu_srdhm(x2, x2);
    const int32_t x4_over_4 = mcu_rdbpot(x4, 2);
    const int32_t poly = mcu_rdbpot(add_wrap(mcu_srdhm(add_wrap(x4_over_4, x3), constant_1_over_3), x2), 1);
    return add_wrap(constant_term, mcu_srdhm(constant_term, add_wrap(x, poly)));
}

/** gemmlowp exp_on_negative_values for a Q5.26 value a <= 0, as Q0.31: exp of a mod 1/4 on the
    interval above, times exp(-2^k) for each set bit k of the rest. */
static int32_t exp_on_negative_values_q5_26(int32_t a)
{
    static const int32_t exp_of_minus_pot[7] = {
        1672461947, /* exp(-1/4) */
        1302514674, /* exp(-1/2) */
        790015084,  /* exp(-1) */
        290630308,  /* exp(-2) */
        39332535,   /* exp(-4) */
        720401,     /* exp(-8) */
        242,        /* exp(-16) */
    };
    const int fractional_bits = 31 - SCALED_DIFF_INTEGER_BITS;
    const int32_t one_quarter = (int32_t)1 << (fractional_bits - 2);
    const int32_t a_mod_quarter_minus_one_quarter = sub_wrap(a & (one_quarter - 1), one_quarter);
    int32_t result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        saturating_left_shift(a_mod_quarter_minus_one_quarter, SCALED_DIFF_INTEGER_BITS));
    const int32_t remainder = sub_wrap(a_mod_quarter_minus_one_quarter, a);
    for (int k = 0; k < 7; k++) {
        if (remainder & ((int32_t)1 << (fractional_bits - 2 + k))) {
            result = mcu_srdhm(result, exp_of_minus_pot[k]);
        }
    }
    return a == 0 ? INT32_MAX : result;
}

/** gemmlowp one_over_one_plus_x_for_x_in_0_1: 1 / (1 + a) for a Q0.31 value a in [0, 1), as
    Q0.31, by three Newton-Raphson steps on the half denominator (Q2.29 iterate). */
static int32_t one_over_one_plus_x_for_x_in_0_1(int32_t a)
{
    const int32_t constant_48_over_17 = 1515870810;
    const int32_t constant_neg_32_over_17 = -1010580540;
    const int32_t one_q2_29 = (int32_t)1 << 29;
    /* RoundingHalfSum(a, 1.0), in 64 bits */
    const int64_t sum = (int64_t)a + INT32_MAX;
    const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    int32_t x = add_wrap(constant_48_over_17, mcu_srdhm(half_denominator, constant_neg_32_over_17));
    for (int i = 0; i < 3; i++) {
        const int32_t half_denominator_times_x = mcu_srdhm(half_denominator, x);
        const int32_t one_minus_half_denominator_times_x = sub_wrap(one_q2_29, half_denominator_times_x);
        x = add_wrap(x, saturating_left_shift(mcu_srdhm(x, one_minus_half_denominator_times_x), 2));
    }
    return saturating_left_shift(x, 1); /* Q2.29 halved, read as Q0.31 */
}

static int count_leading_zeros(uint32_t x)
{
    int n = 0;
    if (x == 0u) {
        return 32;
    }
    while ((x & 0x80000000u) == 0u) {
        x <<= 1;
        n++;
    }
    return n;
}

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
            const int32_t e = exp_on_negative_values_q5_26(scaled);
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
    const int headroom_plus_one = count_leading_zeros(sum_of_exps);
    const int num_bits_over_unit = ACCUMULATION_INTEGER_BITS - headroom_plus_one;
    const uint32_t shifted_sum = headroom_plus_one < 32 ? sum_of_exps << headroom_plus_one : 0u;
    const int32_t shifted_scale = one_over_one_plus_x_for_x_in_0_1((int32_t)(shifted_sum - 0x80000000u));
    /* In [23, 31] for int8 output (the sum is below 512); for int16 output in [15, 27] unless a row
       of 4096+ elements wrapped the sum below 16 (undefined in TFLM): kept a valid shift there. */
    int exponent = num_bits_over_unit + 31 - out_bits;
    exponent = exponent < 0 ? 0 : (exponent > 31 ? 31 : exponent);

    for (int32_t c = 0; c < depth; c++) {
        const int32_t diff = (int32_t)in[c] - max;
        int32_t out = out_min;
        if (diff >= diff_min) {
            const int32_t scaled = mcu_srdhm((int32_t)((uint32_t)diff << left_shift), multiplier);
            const int32_t e = exp_on_negative_values_q5_26(scaled);
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
