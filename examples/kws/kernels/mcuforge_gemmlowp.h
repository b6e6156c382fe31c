/*
 * mcuforge gemmlowp-style fixed-point functions with TensorFlow Lite Micro's exact integer semantics
 * (ir/ops/_fixedpoint.py is their numpy model, bit for bit): exp of negative values, 1 / (1 + x),
 * GetReciprocal, and the counting helpers they need. A fixed-point value is an int32 raw value with
 * a number of integer bits ib (format Q<ib>.<31 - ib>). Plain additions wrap as int32 (computed in
 * uint32, defined C), exactly as TFLM's int32 arithmetic does on its targets.
 */
#ifndef MCUFORGE_GEMMLOWP_H
#define MCUFORGE_GEMMLOWP_H

#include <stdint.h>

#include "mcuforge_fixedpoint.h"

static inline int32_t mcu_add_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int32_t mcu_sub_wrap(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

/** CountLeadingZeros of a uint32 (32 for 0). */
static inline int mcu_clz32(uint32_t x)
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

/** TFLM's CountLeadingSignBits of an int32: the left shift that keeps x's sign (31 for 0 and -1). */
static inline int mcu_clsb32(int32_t x)
{
    if (x >= 0) {
        return mcu_clz32((uint32_t)x) - 1;
    }
    return x == INT32_MIN ? 0 : mcu_clz32(2u * (uint32_t)(-x) - 1u);
}

/** gemmlowp SaturatingRoundingMultiplyByPOT for an exponent in [1, 30]: x * 2^exponent, saturated
    to the int32 range. */
static inline int32_t mcu_saturating_left_shift(int32_t x, int exponent)
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
static inline int32_t mcu_exp_on_interval_between_negative_one_quarter_and_0_excl(int32_t a)
{
    const int32_t constant_term = 1895147668;     /* exp(-1/8) */
    const int32_t constant_1_over_3 = 715827883;  /* 1/3 */
    const int32_t x = mcu_add_wrap(a, 1 << 28);   /* a + 1/8 */
    const int32_t x2 = mcu_srdhm(x, x);
    const int32_t x3 = mcu_srdhm(x2, x);
    const int32_t x4 = mcu_srdhm(x2, x2);
    const int32_t x4_over_4 = mcu_rdbpot(x4, 2);
    const int32_t poly = mcu_rdbpot(mcu_add_wrap(mcu_srdhm(mcu_add_wrap(x4_over_4, x3), constant_1_over_3), x2), 1);
    return mcu_add_wrap(constant_term, mcu_srdhm(constant_term, mcu_add_wrap(x, poly)));
}

/** gemmlowp exp_on_negative_values for a Q<integer_bits>.<31 - integer_bits> value a <= 0
    (integer_bits in [1, 6]), as Q0.31: exp of a mod 1/4 on the interval above, times exp(-2^k)
    for each set bit k of the rest; below -32 the result is 0. */
static inline int32_t mcu_exp_on_negative_values(int32_t a, int integer_bits)
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
    const int fractional_bits = 31 - integer_bits;
    const int32_t one_quarter = (int32_t)1 << (fractional_bits - 2);
    const int32_t a_mod_quarter_minus_one_quarter = mcu_sub_wrap(a & (one_quarter - 1), one_quarter);
    int32_t result = mcu_exp_on_interval_between_negative_one_quarter_and_0_excl(
        mcu_saturating_left_shift(a_mod_quarter_minus_one_quarter, integer_bits));
    const int32_t remainder = mcu_sub_wrap(a_mod_quarter_minus_one_quarter, a);
    for (int k = 0; k < 7 && k - 2 < integer_bits; k++) {
        if (remainder & ((int32_t)1 << (fractional_bits - 2 + k))) {
            result = mcu_srdhm(result, exp_of_minus_pot[k]);
        }
    }
    if (integer_bits > 5 && a < -((int32_t)1 << (36 - integer_bits))) {
        result = 0;
    }
    return a == 0 ? INT32_MAX : result;
}

/** gemmlowp one_over_one_plus_x_for_x_in_0_1: 1 / (1 + a) for a Q0.31 value a in [0, 1), as
    Q0.31, by three Newton-Raphson steps on the half denominator (Q2.29 iterate). TFLM also calls it
    on values outside [0, 1) (GetReciprocal of 0); the arithmetic here is the same there. */
static inline int32_t mcu_one_over_one_plus_x_for_x_in_0_1(int32_t a)
{
    const int32_t constant_48_over_17 = 1515870810;
    const int32_t constant_neg_32_over_17 = -1010580540;
    const int32_t one_q2_29 = (int32_t)1 << 29;
    /* RoundingHalfSum(a, 1.0), in 64 bits */
    const int64_t sum = (int64_t)a + INT32_MAX;
    const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    int32_t x = mcu_add_wrap(constant_48_over_17, mcu_srdhm(half_denominator, constant_neg_32_over_17));
    for (int i = 0; i < 3; i++) {
        const int32_t half_denominator_times_x = mcu_srdhm(half_denominator, x);
        const int32_t one_minus_half_denominator_times_x = mcu_sub_wrap(one_q2_29, half_denominator_times_x);
        x = mcu_add_wrap(x, mcu_saturating_left_shift(mcu_srdhm(x, one_minus_half_denominator_times_x), 2));
    }
    return mcu_saturating_left_shift(x, 1); /* Q2.29 halved, read as Q0.31 */
}

/** TFLM's GetReciprocal: 1 / x for a Q<x_integer_digits> value x >= 0, as a Q0.31 scale with
    1 / x = scale * 2^-num_bits_over_unit. x = 0 gives TFLM's value for it (num_bits_over_unit is
    x_integer_digits - 32). */
static inline int32_t mcu_get_reciprocal(int32_t x, int x_integer_digits, int *num_bits_over_unit)
{
    const int headroom_plus_one = mcu_clz32((uint32_t)x);
    *num_bits_over_unit = x_integer_digits - headroom_plus_one;
    const uint32_t shifted = headroom_plus_one < 32 ? (uint32_t)x << headroom_plus_one : 0u;
    return mcu_one_over_one_plus_x_for_x_in_0_1((int32_t)(shifted - 0x80000000u));
}

/** TFLM's SaturatingRoundingMultiplyByPOTParam for an exponent in [0, 31]: x * 2^exponent, saturated
    to the int32 range. */
static inline int32_t mcu_saturating_left_shift_param(int32_t x, int exponent)
{
    return exponent == 0 ? x : mcu_saturating_left_shift(x, exponent);
}

static inline int32_t mcu_saturating_add(int32_t a, int32_t b)
{
    const int64_t s = (int64_t)a + b;
    return s > INT32_MAX ? INT32_MAX : (s < INT32_MIN ? INT32_MIN : (int32_t)s);
}

/** TFLM's log_x_for_x_greater_than_or_equal_to_1_impl<output_integer_bits, input_integer_bits>:
    log(x) for a positive Q<input_integer_bits> value x, as a Q<output_integer_bits> value
    (output_integer_bits in [1, 29]). x = 2^z * r with r normalised two ways (the better kept), log(r)
    by a rational approximation around sqrt(sqrt(1/2)), accumulated with one more integer bit. */
static inline int32_t mcu_log_x_for_x_greater_than_or_equal_to_1(int32_t x, int output_integer_bits,
                                                                 int input_integer_bits)
{
    const int32_t log_2 = 1488522236;
    const int32_t sqrt_sqrt_half = 1805811301;
    const int32_t sqrt_half = 1518500250;
    const int32_t alpha_n = 117049297;
    const int32_t alpha_d = 127690142;
    const int32_t alpha_i = 1057819769;
    const int32_t alpha_f = 638450708;
    const int accum_bits = output_integer_bits + 1;
    const int32_t shifted_quarter = mcu_rdbpot(536870912, accum_bits); /* 1/4 in Q<accum_bits> */

    const int z_a_headroom_plus_1 = mcu_clz32((uint32_t)x);
    const int32_t r_a_tmp = mcu_saturating_left_shift_param(x, z_a_headroom_plus_1 - 1);
    const int32_t r_a = mcu_saturating_left_shift_param(mcu_srdhm(r_a_tmp, sqrt_half), 1);
    const int32_t z_a_pow_2_adj = mcu_saturating_add(
        mcu_saturating_left_shift_param(input_integer_bits - z_a_headroom_plus_1, 31 - accum_bits), shifted_quarter);
    const int32_t z_b = mcu_srdhm(x, sqrt_half);
    const int z_b_headroom = mcu_clz32((uint32_t)z_b) - 1;
    const int32_t r_b = mcu_saturating_left_shift_param(x, z_b_headroom);
    const int32_t z_b_pow_2_adj = mcu_saturating_add(
        mcu_saturating_left_shift_param(input_integer_bits - z_b_headroom, 31 - accum_bits), -shifted_quarter);

    const int32_t r = r_a < r_b ? r_a : r_b;
    const int32_t z_pow_2_adj = z_a_pow_2_adj > z_b_pow_2_adj ? z_a_pow_2_adj : z_b_pow_2_adj;
    const int64_t half_sum = (int64_t)r + sqrt_sqrt_half; /* RoundingHalfSum(r, sqrt_sqrt_half) */
    const int32_t p = (int32_t)((half_sum + (half_sum >= 0 ? 1 : -1)) / 2);
    int32_t q = mcu_sub_wrap(r, sqrt_sqrt_half);
    q = mcu_add_wrap(q, q);
    const int32_t common_sq = mcu_srdhm(q, q);
    const int32_t num = mcu_add_wrap(mcu_srdhm(q, r), mcu_srdhm(mcu_srdhm(q, common_sq), alpha_n));
    const int32_t denom_minus_one = mcu_add_wrap(
        mcu_srdhm(p, mcu_add_wrap(mcu_add_wrap(alpha_i, q), mcu_srdhm(alpha_d, common_sq))), mcu_srdhm(alpha_f, q));
    const int32_t recip_denom = mcu_one_over_one_plus_x_for_x_in_0_1(denom_minus_one);
    const int32_t num_scaled = mcu_rdbpot(num, accum_bits);
    const int32_t sum = mcu_add_wrap(mcu_srdhm(z_pow_2_adj, log_2), mcu_srdhm(num_scaled, recip_denom));
    return mcu_saturating_left_shift(sum, 1); /* Q<accum_bits> to Q<output_integer_bits> */
}

/** TFLM's GetInvSqrtQuantizedMultiplierExp: 1 / sqrt(input) for input >= 0 as a Q0.31 multiplier and
    a shift (times reverse_shift: -1 gives a right shift as a negative left shift), by five
    Newton-Raphson steps in Q3.28 on the input normalised to [2^27, 2^29). Inputs up to 1 give
    (INT32_MAX, 0). */
static inline void mcu_inv_sqrt_multiplier_exp(int32_t input, int reverse_shift, int32_t *multiplier, int *shift)
{
    if (input <= 1) {
        *multiplier = INT32_MAX;
        *shift = 0;
        return;
    }
    int s = 11;
    while (input >= ((int32_t)1 << 29)) {
        input /= 4;
        s++;
    }
    const int pairs = (mcu_clz32((uint32_t)input) - 1) / 2 - 1; /* >= 0: input < 2^29 here */
    s -= pairs;
    input <<= 2 * pairs;
    const int32_t half_input = mcu_rdbpot(input >> 1, 1);
    const int32_t half_three = ((int32_t)1 << 28) + ((int32_t)1 << 27); /* 1.5 in Q3.28 */
    int32_t y = (int32_t)1 << 28;                                         /* 1.0 in Q3.28 */
    for (int i = 0; i < 5; i++) {
        const int32_t y3 = mcu_saturating_left_shift(mcu_srdhm(mcu_srdhm(y, y), y), 6);
        y = mcu_saturating_left_shift(mcu_sub_wrap(mcu_srdhm(half_three, y), mcu_srdhm(half_input, y3)), 3);
    }
    y = mcu_srdhm(y, 1518500250); /* times sqrt(2) / 2 */
    if (s < 0) {
        y = (int32_t)((uint32_t)y << -s);
        s = 0;
    }
    *multiplier = y;
    *shift = s * reverse_shift;
}

#endif /* MCUFORGE_GEMMLOWP_H */
