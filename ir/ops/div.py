"""DIV: x1 / x2 element-wise with numpy broadcasting and a fused activation; int8 or int32.

TFLM (div.cc, reference_ops::DivElementwise / BroadcastDivSlow), int8: with a = x1 - zp1 and
b = x2 - zp2 (both negated when b < 0),
    inv, recip_shift = GetReciprocal(b, 31)              (1 / b in Q0.31 times 2**-recip_shift)
    headroom = CountLeadingSignBits(a)
    q = SaturatingRoundingDoublingHighMul(a << headroom, inv)
    out = RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(q, m),
                              headroom + recip_shift - shift) + zp_out, clamped to the activation,
with (m, shift) = QuantizeMultiplier(s1 / (s2 * s_out)) in double from the float32 scales (the
source reads as a float32 quotient; the interpreter we verify against computes it in double, and
tests/ops/test_elementwise_div.py has scales where the two differ).

The final shift reaches 32 or more for small quotients (e.g. |a| = 1 over b >= 128 with a small
multiplier) and for b = 0 (GetReciprocal of 0 is TFLM's arbitrary but fixed value): gemmlowp's
RoundingDivideByPOT then shifts an int32 by 32 or more, which C++ leaves undefined. The TFLM we
verify against (x86-64) shifts by the count modulo 32 with an all-ones rounding mask there, which
gives large (mostly saturated) quotients; mcuforge reproduces exactly that on every target, so it
is bit-exact with TFLM's reference interpreter (TFLM built for Arm may differ on those elements).
Multipliers below 2**-25 or from 2**21 up (shifts beyond that range) are refused.

int32: truncating division of the raw values, clamped to the fused activation's range (TFLM traps
on a zero divisor and on INT32_MIN / -1; the kernel gives 0 and INT32_MIN there).
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _fixedpoint as fp
from .add_sub import (
    all_quantized_per_tensor,
    broadcastable,
    infer,
    int8_or_int32,
    int32_reference,
    lower_one_multiplier,
    parse,
)

MIN_SHIFT, MAX_SHIFT = -24, 20  # output multiplier exponents keeping TFLM's final shift in [0, 63]


def multiplier(s1: float, s2: float, s_out: float) -> tuple[int, int]:
    """QuantizeMultiplier(s1 / (s2 * s_out)) in double from the float32 scales."""
    s1, s2, s_out = (float(np.float32(s)) for s in (s1, s2, s_out))
    return quant.quantize_multiplier(s1 / (s2 * s_out))


def count_leading_sign_bits(x) -> np.ndarray:
    """TFLM's CountLeadingSignBits of int32 values (31 for 0 and -1, 0 for INT32_MIN)."""
    x = np.asarray(x, dtype=np.int64)
    positive = fp.count_leading_zeros32(x) - 1
    negative = fp.count_leading_zeros32(2 * -x - 1)
    return np.where(x >= 0, positive, np.where(x == quant.INT32_MIN, 0, negative))


def rounding_divide_by_pot_x86(x, exponent) -> np.ndarray:
    """gemmlowp's RoundingDivideByPOT for exponents in [0, 63] as TFLM runs on x86-64: from 32 on,
    the mask (1 << exponent) - 1 truncated to int32 is all ones and the shift count wraps mod 32."""
    x, e = np.asarray(x, dtype=np.int64), np.asarray(exponent, dtype=np.int64)
    mask = np.where(e >= 32, -1, (np.int64(1) << np.minimum(e, 31)) - 1)
    remainder = quant.wrap_int32(x & mask)
    threshold = (mask >> 1) + (x < 0)
    return (x >> (e & 31)) + (remainder > threshold)


def div_int8(x1: np.ndarray, x2: np.ndarray, zp1: int, zp2: int, m: int, shift: int) -> np.ndarray:
    """TFLM's quantized quotient before the output offset and clamp."""
    a, b = x1.astype(np.int64) - zp1, x2.astype(np.int64) - zp2
    a, b = np.where(b < 0, -a, a), np.abs(b)
    inv, recip_shift = fp.get_reciprocal(b, 31)
    headroom = count_leading_sign_bits(a)
    q = fp.srdhm(quant.wrap_int32(a << headroom), inv)
    return rounding_divide_by_pot_x86(fp.srdhm(q, m), headroom + recip_shift - shift)


def reference(args, v: OpView):
    if v.out.dtype == "int32":
        def divide(a, b):
            safe = np.where(b == 0, 1, b)
            return np.where(b == 0, 0, np.sign(a) * np.sign(safe) * (np.abs(a) // np.abs(safe)))
        return int32_reference(args, v, divide)
    q1, q2, qo = v.args[0].quant, v.args[1].quant, v.out.quant
    m, shift = multiplier(q1.s, q2.s, qo.s)
    x1, x2 = np.broadcast_arrays(args[0], args[1])
    lo, hi = c.act_range(v)
    out = div_int8(x1, x2, q1.zp, q2.zp, m, shift) + qo.zp
    return np.clip(out, lo, hi).astype(np.int8).reshape(v.out.shape)


def multiplier_in_range(v: OpView) -> str | None:
    """The real multiplier s1 / (s2 * s_out) must lie in [2**-25, 2**20) (beyond, TFLM's rescaling
    shifts leave the range in which its arithmetic is defined)."""
    if v.out.dtype != "int8" or all_quantized_per_tensor(v) is not None:
        return None
    _, shift = multiplier(v.args[0].quant.s, v.args[1].quant.s, v.out.quant.s)
    if MIN_SHIFT <= shift <= MAX_SHIFT:
        return None
    return f"s1 / (s2 * s_out) = {v.args[0].quant.s / (v.args[1].quant.s * v.out.quant.s):.6g}"


def lower_c(call) -> CKernel:
    """mcu_div_s8 (int32: mcu_div_s32)."""
    return lower_one_multiplier(call, multiplier)


register(OpDef(
    name="div",
    tflm="div.cc, reference_ops::DivElementwise / BroadcastDivSlow (int32: reference_ops::Div)",
    kind=OpKind.BROADCAST,
    doc=("x1 / x2 element-wise with broadcasting and a fused activation: int8 (TFLM's reciprocal "
         "arithmetic, as on x86-64 where its shifts exceed 31) or int32 (truncating)."),
    infer=infer,
    reference=reference,
    checks=(int8_or_int32, all_quantized_per_tensor, broadcastable, c.supported_fused_activation,
            multiplier_in_range),
    tflite={"DIV": parse},
    portable=Portable(lower_c),
))
