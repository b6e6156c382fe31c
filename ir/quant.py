"""Fixed-point arithmetic with TensorFlow Lite Micro's exact integer semantics.

Everything here works on numpy int64 arrays holding int32 values, so results are bit-exact with
the C code (which computes in int32/int64). TFLM requantizes with *double rounding*: a saturating
rounding doubling high multiply, then a rounding right shift. (LiteRT's single-rounding variant can
differ by one; we match TFLM.)

These helpers are the single source of truth for both the numpy reference and the constants the
code generator precomputes for C kernels.
"""

from __future__ import annotations

import math

import numpy as np

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


def tflite_round(x: float) -> int:
    """std::round: halves away from zero."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


# TFLM's MultiplyByQuantizedMultiplier computes x * (1 << shift) in int32: a left shift of 31 or more
# is undefined there. quantize_multiplier returns TFLM's true shift; each op's support check refuses a
# multiplier whose shift is above this, and multiply_by_quantized_multiplier raises on one.
MAX_LEFT_SHIFT = 30


def quantize_multiplier(real: float) -> tuple[int, int]:
    """A real multiplier as (Q0.31 significand, power-of-two exponent), exactly TFLM's QuantizeMultiplier
    (the double-rounding build): real ~= mult * 2**(shift - 31), a positive shift is a left shift.

    A multiplier below 2**-32 (shift < -31) is flushed to (0, 0), as TFLM does. The shift is not
    capped above: TFLM's is not either (a shift above MAX_LEFT_SHIFT makes its requantization
    undefined, which the support checks refuse)."""
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    q_fixed = tflite_round(q * (1 << 31))
    if q_fixed == (1 << 31):
        q_fixed //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q_fixed, shift


def quantize_multiplier_greater_than_one(real: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplierGreaterThanOne: the left shift is non-negative."""
    mult, shift = quantize_multiplier(real)
    if shift < 0:
        raise ValueError(f"multiplier {real} is not greater than one")
    return mult, shift


def quantize_multiplier_smaller_than_one_exp(real: float) -> tuple[int, int]:
    """TFLite's QuantizeMultiplierSmallerThanOneExp: shift <= 0 (a right shift)."""
    mult, shift = quantize_multiplier(real)
    if shift > 0:
        raise ValueError(f"multiplier {real} is not smaller than one")
    return mult, shift


def wrap_int32(x: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of int64 values to the int32 range."""
    x = np.asarray(x, dtype=np.int64)
    return ((x + 2**31) & 0xFFFFFFFF) - 2**31


def saturating_rounding_doubling_high_mul(a, b) -> np.ndarray:
    """gemmlowp's SaturatingRoundingDoublingHighMul on int32 values: round(a*b / 2**31)."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    overflow = (a == INT32_MIN) & (b == INT32_MIN)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    s = ab + nudge
    # C integer division truncates toward zero.
    high = np.where(s >= 0, s >> 31, -((-s) >> 31))
    return np.where(overflow, INT32_MAX, high)


def rounding_divide_by_pot(x, exponent) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT: x / 2**exponent rounded half away from zero."""
    x = np.asarray(x, dtype=np.int64)
    exponent = np.asarray(exponent, dtype=np.int64)
    mask = (np.int64(1) << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + (remainder > threshold)


def multiply_by_quantized_multiplier(x, mult, shift) -> np.ndarray:
    """TFLM's MultiplyByQuantizedMultiplier (double rounding). `mult`/`shift` may be arrays that
    broadcast against x (per-channel). A shift above MAX_LEFT_SHIFT (undefined in TFLM) raises."""
    shift = np.asarray(shift, dtype=np.int64)
    if np.any(shift > MAX_LEFT_SHIFT):
        raise ValueError(f"a left shift of {int(np.max(shift))} is undefined in TFLM's requantization "
                         f"(at most {MAX_LEFT_SHIFT})")
    left = np.maximum(shift, 0)
    right = np.maximum(-shift, 0)
    scaled = wrap_int32(np.asarray(x, dtype=np.int64) * (np.int64(1) << left))
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(scaled, mult), right)


# TFLM's int64 MultiplyByQuantizedMultiplier (16x8 layers) rounds once by 2**(15 - shift): a shift of 15
# or more is undefined there (a shift by a negative amount), and its input must lie within +-2**47.
MAX_LEFT_SHIFT_64 = 14
INT64_ACC_LIMIT = 1 << 47


def reduced_multiplier(mult) -> np.ndarray:
    """TFLM's Q0.31 multiplier rounded to Q0.15 for the int64 requantization (0x7FFF at the top)."""
    mult = np.asarray(mult, dtype=np.int64)
    return np.where(mult < 0x7FFF0000, (mult + (1 << 15)) >> 16, 0x7FFF)


def multiply_by_quantized_multiplier_int64(x, mult, shift) -> np.ndarray:
    """TFLM's MultiplyByQuantizedMultiplier(int64_t x, ...), the requantization of 16x8 layers with
    64-bit accumulators: (x * reduced + 2**(14 - shift)) >> (15 - shift), one rounding (half up),
    then truncated to int32 as its cast does. x must lie within +-2**47 and shift be at most
    MAX_LEFT_SHIFT_64 (raises otherwise: TFLM is undefined there)."""
    x = np.asarray(x, dtype=np.int64)
    shift = np.asarray(shift, dtype=np.int64)
    if np.any(shift > MAX_LEFT_SHIFT_64):
        raise ValueError(f"a shift of {int(np.max(shift))} is undefined in TFLM's int64 requantization "
                         f"(at most {MAX_LEFT_SHIFT_64})")
    if np.any(np.abs(x) >= INT64_ACC_LIMIT):
        raise ValueError("an accumulator beyond 2**47 is outside TFLM's int64 requantization")
    total = 15 - shift
    return wrap_int32((x * reduced_multiplier(mult) + (np.int64(1) << (total - 1))) >> total)


def multiply_by_quantized_multiplier_smaller_than_one_exp(x, mult, shift) -> np.ndarray:
    """TFLite's MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0)."""
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, mult), -np.asarray(shift))


def multiply_by_quantized_multiplier_greater_than_one(x, mult, left_shift) -> np.ndarray:
    """TFLite's MultiplyByQuantizedMultiplierGreaterThanOne (shift >= 0)."""
    scaled = wrap_int32(np.asarray(x, dtype=np.int64) * (np.int64(1) << np.asarray(left_shift)))
    return saturating_rounding_doubling_high_mul(scaled, mult)


def dtype_range(dtype: str) -> tuple[int, int]:
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def clamp_bound(real: float, scale: float, zero_point: int) -> int | None:
    """zero_point + round(real / scale), the division and the rounding in float32 as TFLM's Quantize
    (kernel_util.cc) computes an activation bound; None when it does not fit in int32 (TFLM then
    refuses the model, or converts out of range: undefined)."""
    r = float(np.float32(real) / np.float32(scale))
    if not math.isfinite(r):
        return None
    rounded = tflite_round(r)
    value = zero_point + rounded
    return value if INT32_MIN <= rounded <= INT32_MAX and INT32_MIN <= value <= INT32_MAX else None


# The real bounds of each fused activation (None: unbounded on that side).
ACTIVATION_BOUNDS = {"NONE": (None, None), "RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}


def activation_range(activation: str, scale: float, zero_point: int, dtype: str = "int8") -> tuple[int, int]:
    """TFLite's CalculateActivationRangeQuantized: the fused activation as an integer clamp in the
    output's quantized domain. Supported activations: NONE, RELU, RELU6, RELU_N1_TO_1. Raises
    ValueError when a bound does not fit in int32 (the support checks refuse those models)."""
    if activation not in ACTIVATION_BOUNDS:
        raise ValueError(f"fused activation {activation} has no quantized form")
    qmin, qmax = dtype_range(dtype)
    out = [qmin, qmax]
    for k, real in enumerate(ACTIVATION_BOUNDS[activation]):
        if real is None:
            continue
        bound = clamp_bound(real, scale, zero_point)
        if bound is None:
            raise ValueError(f"{activation} bound {real:g} / scale {scale:g} does not fit in int32")
        out[k] = max(qmin, bound) if k == 0 else min(qmax, bound)
    return out[0], out[1]


def saturate(x: np.ndarray, dtype: str) -> np.ndarray:
    lo, hi = dtype_range(dtype)
    return np.clip(x, lo, hi).astype(np.dtype(dtype))
