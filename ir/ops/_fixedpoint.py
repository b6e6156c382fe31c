"""gemmlowp-style fixed-point arithmetic, vectorized, with TFLite Micro's exact integer semantics.

A fixed-point value is an int32 raw value with a number of integer bits `ib` (format Q`ib`.`31-ib`);
here every raw value is held in a numpy int64 array (so products are exact) and every operation
returns int32-range values, exactly as the C code's int32 arithmetic does (plain additions wrap).
Int16 variants (used by HARD_SWISH) are suffixed `_16`.

These are the building blocks of the int8 SOFTMAX, LOGISTIC and TANH kernels
(exp_on_negative_values, one_over_one_plus_x_for_x_in_0_1, logistic, tanh, GetReciprocal), of DIV
(GetReciprocal), LOG_SOFTMAX (log_x_for_x_greater_than_or_equal_to_1), RSQRT and L2_NORMALIZATION
(GetInvSqrtQuantizedMultiplierExp), and of the int16 pipeline of HARD_SWISH. The C versions are in
firmware/include/mcuforge_gemmlowp.h (tests/test_gemmlowp_c.py compares them). Not an op module (the leading underscore keeps it out of the
registry scan).
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.quant import (
    INT32_MAX,
    INT32_MIN,
    rounding_divide_by_pot,
    saturating_rounding_doubling_high_mul,
    wrap_int32,
)

INT16_MIN = -(2**15)
INT16_MAX = 2**15 - 1

# Re-exported under the gemmlowp names used throughout this module.
srdhm = saturating_rounding_doubling_high_mul
rdbpot = rounding_divide_by_pot


def _i64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def add(a, b) -> np.ndarray:
    """int32 a + b, wrapping as the C code does."""
    return wrap_int32(_i64(a) + _i64(b))


def sub(a, b) -> np.ndarray:
    """int32 a - b, wrapping."""
    return wrap_int32(_i64(a) - _i64(b))


def neg(a) -> np.ndarray:
    """int32 -a, wrapping (-INT32_MIN stays INT32_MIN)."""
    return wrap_int32(-_i64(a))


def one(integer_bits: int) -> int:
    """FixedPoint::One(): INT32_MAX in Q0.31 (1.0 is not representable), else 1 << fractional bits."""
    return INT32_MAX if integer_bits == 0 else 1 << (31 - integer_bits)


def saturating_rounding_multiply_by_pot(x, exponent: int) -> np.ndarray:
    """gemmlowp SaturatingRoundingMultiplyByPOT<exponent> on int32: a saturating left shift for a
    positive exponent, a rounding right shift (RoundingDivideByPOT) for a negative one."""
    x = _i64(x)
    if exponent == 0:
        return x
    if exponent < 0:
        return rdbpot(x, -exponent)
    threshold = (1 << (31 - exponent)) - 1
    shifted = np.clip(x * (1 << exponent), INT32_MIN, INT32_MAX)
    return np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, shifted))


def rescale(x, src_integer_bits: int, dst_integer_bits: int) -> np.ndarray:
    """gemmlowp Rescale<dst>(FixedPoint<src>): multiply the raw value by 2**(src - dst), saturating
    and rounding."""
    return saturating_rounding_multiply_by_pot(x, src_integer_bits - dst_integer_bits)


def rounding_half_sum(a, b) -> np.ndarray:
    """(a + b) / 2 rounded half away from zero, computed in 64 bits (TFLM's RoundingHalfSum)."""
    s = _i64(a) + _i64(b)
    t = s + np.where(s >= 0, 1, -1)
    return np.where(t >= 0, t // 2, -((-t) // 2))  # C division truncates toward zero


def count_leading_zeros32(x) -> np.ndarray:
    """CountLeadingZeros of x viewed as uint32 (32 for 0)."""
    u = _i64(x) & 0xFFFFFFFF
    out = np.full(u.shape, 32, dtype=np.int64)
    nz = u > 0
    # floor(log2(u)) exactly: frexp of a float64 is exact for integers below 2**53.
    _, e = np.frexp(u[nz].astype(np.float64))
    out[nz] = 32 - e.astype(np.int64)
    return out


# ---- gemmlowp math functions on Q`ib` int32 raw values ------------------------------------------

_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308),
               (2, 39332535), (3, 720401), (4, 242))


def exp_on_interval_between_negative_one_quarter_and_0_excl(a) -> np.ndarray:
    """exp(a) for a Q0.31 value a in [-1/4, 0): Taylor expansion around -1/8."""
    constant_term = 1895147668  # exp(-1/8) in Q0.31
    constant_1_over_3 = 715827883
    x = add(a, 1 << 28)  # a + 1/8
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = saturating_rounding_multiply_by_pot(x4, -2)
    poly = saturating_rounding_multiply_by_pot(
        add(srdhm(add(x4_over_4, x3), constant_1_over_3), x2), -1)
    return add(constant_term, srdhm(constant_term, add(x, poly)))


def exp_on_negative_values(a, integer_bits: int) -> np.ndarray:
    """gemmlowp exp_on_negative_values: exp(a) for a Q`integer_bits` value a <= 0, as Q0.31."""
    a = _i64(a)
    frac = 31 - integer_bits
    one_quarter = 1 << (frac - 2)
    mask = one_quarter - 1
    a_mod_quarter_minus_one_quarter = sub(a & mask, one_quarter)
    result = exp_on_interval_between_negative_one_quarter_and_0_excl(
        rescale(a_mod_quarter_minus_one_quarter, integer_bits, 0))
    remainder = sub(a_mod_quarter_minus_one_quarter, a)
    for exponent, multiplier in _EXP_BARREL:
        if integer_bits > exponent:
            bit = 1 << (frac + exponent)
            result = np.where((remainder & bit) != 0, srdhm(result, multiplier), result)
    if integer_bits > 5:
        clamp = -(1 << (36 - integer_bits))  # -32.0 in this format
        result = np.where(a < clamp, 0, result)
    return np.where(a == 0, one(0), result)


def _newton_raphson_reciprocal(half_denominator) -> np.ndarray:
    """Three Newton-Raphson steps for 1 / half_denominator; the result is Q2.29."""
    constant_48_over_17 = 1515870810
    constant_neg_32_over_17 = -1010580540
    x = add(constant_48_over_17, srdhm(half_denominator, constant_neg_32_over_17))
    for _ in range(3):
        half_denominator_times_x = srdhm(half_denominator, x)
        one_minus = sub(one(2), half_denominator_times_x)
        x = add(x, rescale(srdhm(x, one_minus), 4, 2))
    return x


def one_over_one_plus_x_for_x_in_0_1(a) -> np.ndarray:
    """1 / (1 + a) for a Q0.31 value a in [0, 1), as Q0.31."""
    x = _newton_raphson_reciprocal(rounding_half_sum(a, one(0)))
    return rescale(x, 1, 0)  # ExactMulByPot<-1>: Q2 -> Q1 with the same raw value


def one_minus_x_over_one_plus_x_for_x_in_0_1(a) -> np.ndarray:
    """(1 - a) / (1 + a) for a Q0.31 value a in [0, 1), as Q0.31."""
    x = _newton_raphson_reciprocal(rounding_half_sum(a, one(0)))
    return rescale(sub(x, one(2)), 2, 0)


def logistic(a, integer_bits: int) -> np.ndarray:
    """gemmlowp logistic(a) = 1 / (1 + exp(-a)) for a Q`integer_bits` value, as Q0.31."""
    a = _i64(a)
    positive = a > 0
    abs_input = np.where(positive, a, neg(a))
    result_if_positive = one_over_one_plus_x_for_x_in_0_1(
        exp_on_negative_values(neg(abs_input), integer_bits))
    result_if_negative = sub(one(0), result_if_positive)
    return np.where(a == 0, 1 << 30, np.where(positive, result_if_positive, result_if_negative))


def tanh(a, integer_bits: int) -> np.ndarray:
    """gemmlowp tanh(a) for a Q`integer_bits` value, as Q0.31."""
    a = _i64(a)
    negative = a < 0
    n = np.where(negative, a, neg(a))
    # ExactMulByPot<1>: the same raw value read with one more integer bit, i.e. 2n.
    t = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(n, integer_bits + 1))
    return np.where(a == 0, 0, np.where(negative, neg(t), t))


def get_reciprocal(x, x_integer_digits: int) -> tuple[np.ndarray, np.ndarray]:
    """TFLM's GetReciprocal: 1/x for a positive Q`x_integer_digits` value x, as (Q0.31 scale,
    num_bits_over_unit) with 1/x = scale * 2**-num_bits_over_unit."""
    x = _i64(x)
    headroom_plus_one = count_leading_zeros32(x)
    num_bits_over_unit = x_integer_digits - headroom_plus_one
    shifted = ((x & 0xFFFFFFFF) << headroom_plus_one) & 0xFFFFFFFF
    shifted_sum_minus_one = wrap_int32(shifted - (1 << 31))
    return one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one), num_bits_over_unit


# ---- int16 primitives (HARD_SWISH) ---------------------------------------------------------------

def wrap_int16(x) -> np.ndarray:
    x = _i64(x)
    return ((x + 2**15) & 0xFFFF) - 2**15


def srdhm_16(a, b) -> np.ndarray:
    """gemmlowp SaturatingRoundingDoublingHighMul on int16: round(a*b / 2**15), -1*-1 saturating."""
    a, b = _i64(a), _i64(b)
    ab = a * b
    s = ab + np.where(ab >= 0, 1 << 14, 1 - (1 << 14))
    high = np.where(s >= 0, s >> 15, -((-s) >> 15))
    return np.where((a == INT16_MIN) & (b == INT16_MIN), INT16_MAX, wrap_int16(high))


def saturating_doubling_high_mul_16(a, b) -> np.ndarray:
    """TFLM's SaturatingDoublingHighMul (SQDMULH): a*b / 2**15 truncated toward zero."""
    a, b = _i64(a), _i64(b)
    ab = a * b
    high = np.where(ab >= 0, ab >> 15, -((-ab) >> 15))
    return np.where((a == INT16_MIN) & (b == INT16_MIN), INT16_MAX, wrap_int16(high))


def saturating_left_shift_16(x, amount: int) -> np.ndarray:
    return np.clip(_i64(x) * (1 << amount), INT16_MIN, INT16_MAX)


def rdbpot_16(x, exponent: int) -> np.ndarray:
    """gemmlowp RoundingDivideByPOT on int16 values, including its behaviour for exponents above 15
    (the mask (1 << exponent) - 1 is truncated to int16 there, as in the C template)."""
    x = _i64(x)
    mask = int(wrap_int16((1 << exponent) - 1))
    remainder = wrap_int16(x & mask)
    threshold = wrap_int16((mask >> 1) + (x < 0))
    return wrap_int16((x >> exponent) + (remainder > threshold))


def downscale_int32_to_int16_multiplier(m: int) -> int:
    """TFLM's DownScaleInt32ToInt16Multiplier: a Q0.31 multiplier rounded to Q0.15."""
    if m >= INT32_MAX - (1 << 15):
        return INT16_MAX
    return (m + (1 << 15)) >> 16


# ---- logarithm (LOG_SOFTMAX) ---------------------------------------------------------------------

def saturating_rounding_multiply_by_pot_param(x, exponent) -> np.ndarray:
    """TFLM's SaturatingRoundingMultiplyByPOTParam for exponents >= 0 given per element: a
    saturating left shift (x itself for exponent 0)."""
    x, e = _i64(x), _i64(exponent)
    threshold = (np.int64(1) << (31 - e)) - 1
    shifted = wrap_int32(x << e)
    out = np.where(x > threshold, INT32_MAX, np.where(x < -threshold, INT32_MIN, shifted))
    return np.where(e == 0, x, out)


def saturating_add(a, b) -> np.ndarray:
    return np.clip(_i64(a) + _i64(b), INT32_MIN, INT32_MAX)


def saturating_sub(a, b) -> np.ndarray:
    return np.clip(_i64(a) - _i64(b), INT32_MIN, INT32_MAX)


_LOG_2 = 1488522236  # Q0.31 constants of TFLM's log_x_for_x_greater_than_or_equal_to_1_impl
_SQRT_SQRT_HALF = 1805811301
_SQRT_HALF = 1518500250
_ONE_QUARTER = 536870912
_ALPHA_N, _ALPHA_D, _ALPHA_I, _ALPHA_F = 117049297, 127690142, 1057819769, 638450708


def log_x_for_x_greater_than_or_equal_to_1(x, output_integer_bits: int, input_integer_bits: int) -> np.ndarray:
    """TFLM's log_x_for_x_greater_than_or_equal_to_1_impl: log(x) for a positive Q`input_integer_bits`
    value x, as a Q`output_integer_bits` value: x = 2**z * r with r in [sqrt(1/2), 1) (two
    normalisations, the better kept), log(r) by a rational approximation around sqrt(sqrt(1/2)),
    accumulated with one extra integer bit."""
    accum_bits = output_integer_bits + 1
    z_a = _i64(x)
    shifted_quarter = rescale(_ONE_QUARTER, 0, accum_bits)
    z_a_headroom_plus_1 = count_leading_zeros32(z_a)
    r_a_tmp = saturating_rounding_multiply_by_pot_param(z_a, z_a_headroom_plus_1 - 1)
    r_a = saturating_rounding_multiply_by_pot_param(srdhm(r_a_tmp, _SQRT_HALF), 1)
    z_a_pow_2_adj = saturating_add(saturating_rounding_multiply_by_pot_param(
        input_integer_bits - z_a_headroom_plus_1, 31 - accum_bits), shifted_quarter)
    z_b = srdhm(z_a, _SQRT_HALF)
    z_b_headroom = count_leading_zeros32(z_b) - 1
    r_b = saturating_rounding_multiply_by_pot_param(z_a, z_b_headroom)
    z_b_pow_2_adj = saturating_sub(saturating_rounding_multiply_by_pot_param(
        input_integer_bits - z_b_headroom, 31 - accum_bits), shifted_quarter)
    r = np.minimum(r_a, r_b)
    z_pow_2_adj = np.maximum(z_a_pow_2_adj, z_b_pow_2_adj)
    p = rounding_half_sum(r, _SQRT_SQRT_HALF)
    q = sub(r, _SQRT_SQRT_HALF)
    q = add(q, q)
    common_sq = srdhm(q, q)
    num = add(srdhm(q, r), srdhm(srdhm(q, common_sq), _ALPHA_N))
    denom_minus_one = add(srdhm(p, add(add(_ALPHA_I, q), srdhm(_ALPHA_D, common_sq))), srdhm(_ALPHA_F, q))
    recip_denom = one_over_one_plus_x_for_x_in_0_1(denom_minus_one)
    num_scaled = rescale(num, 0, accum_bits)
    return rescale(add(srdhm(z_pow_2_adj, _LOG_2), srdhm(num_scaled, recip_denom)), accum_bits, output_integer_bits)


# ---- inverse square root (RSQRT, L2_NORMALIZATION) ------------------------------------------------

def inv_sqrt_multiplier_exp(x, reverse_shift: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """TFLM's GetInvSqrtQuantizedMultiplierExp: 1 / sqrt(x) for int32 x as (Q0.31 multiplier, shift),
    by five Newton-Raphson steps in Q3.28 on x normalised to [2**27, 2**29). x <= 1 gives
    (INT32_MAX, 0). Vectorized; the Python ints of TFLM's loops become per-element arrays."""
    x = np.asarray(x, dtype=np.int64)
    small = x <= 1
    x = np.where(small, 2, x)
    shift = np.full(x.shape, 11, dtype=np.int64)
    while (x >= 1 << 29).any():  # input /= 4 while input >= 2**29
        big = x >= 1 << 29
        x = np.where(big, x // 4, x)
        shift = shift + big
    pairs = (count_leading_zeros32(x) - 1) // 2 - 1
    shift = shift - pairs
    x = x << (2 * pairs)
    half_input = rdbpot(x >> 1, 1)  # SaturatingRoundingMultiplyByPOT<-1> of the Q3.28 input
    half_three = (1 << 28) + (1 << 27)
    y = np.full(x.shape, 1 << 28, dtype=np.int64)  # One() in Q3.28
    for _ in range(5):
        y3 = rescale(srdhm(srdhm(y, y), y), 9, 3)
        y = rescale(sub(srdhm(half_three, y), srdhm(half_input, y3)), 6, 3)
    y = srdhm(y, 1518500250)  # times sqrt(2) / 2 (Q0.31)
    y = np.where(shift < 0, wrap_int32(y << np.maximum(-shift, 0)), y)
    shift = np.maximum(shift, 0) * reverse_shift
    return np.where(small, INT32_MAX, y), np.where(small, 0, shift)
