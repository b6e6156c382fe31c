"""MUL: int8, int16 or int32 element-wise multiplication with numpy-style broadcasting and a fused activation.

TFLM reference: reference_integer_ops::MulElementwise / BroadcastMul6DSlow:
    out = MultiplyByQuantizedMultiplier((x1 - zp1) * (x2 - zp2), m, s) + zp_out, clamped,
with (m, s) = QuantizeMultiplier(double(s1) * double(s2) / double(s_out)) (CalculateOpDataMul).
int32 tensors multiply the raw values, wrapping on overflow, clamped to the fused activation's range
(reference_ops::Mul on int32).
int16 (the same MulElementwise / BroadcastMul6DSlow on int16): TFLM's Prepare requires every zero
point to be 0; the int16 range bounds the clamp.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from .add_sub import (
    all_quantized_per_tensor,
    broadcastable,
    infer,
    int8_int16_or_int32,
    int32_reference,
    lower_one_multiplier,
    parse,
)

# The largest multiplier exponent whose left shift keeps every product within int32: int8 products
# (with zero points) reach 255**2 < 2**16, int16 ones (zero points 0) 2**30.
MAX_SHIFT = {"int8": 15, "int16": 0}


def multiplier(s1: float, s2: float, s_out: float) -> tuple[int, int]:
    """QuantizeMultiplier(double(s1) * double(s2) / double(s_out)) of the file's float32 scales."""
    s1, s2, s_out = (float(np.float32(s)) for s in (s1, s2, s_out))
    return quant.quantize_multiplier(s1 * s2 / s_out)


def multiplier_in_range(v: OpView) -> str | None:
    """The output multiplier s1 * s2 / s_out must be below 2^15 (int16: below 1): above it, TFLM's
    (x1 - zp1) * (x2 - zp2) shifted left by the multiplier's exponent overflows int32 (undefined
    behaviour, so no bit-exact answer exists)."""
    q1, q2, qo = v.args[0].quant, v.args[1].quant, v.out.quant
    if v.out.dtype not in MAX_SHIFT or all_quantized_per_tensor(v) is not None:
        return None  # reported by int8_int16_or_int32 / all_quantized_per_tensor
    _, shift = multiplier(q1.s, q2.s, qo.s)
    return None if shift <= MAX_SHIFT.get(v.out.dtype, 15) else f"s1 * s2 / s_out = {float(np.float32(q1.s)) * float(np.float32(q2.s)) / float(np.float32(qo.s)):.6g}"


def reference(args, v: OpView):
    if v.out.dtype == "int32":
        return int32_reference(args, v, np.multiply)
    q1, q2, qo = v.args[0].quant, v.args[1].quant, v.out.quant
    m, s = multiplier(q1.s, q2.s, qo.s)
    x1, x2 = np.broadcast_arrays(args[0].astype(np.int64), args[1].astype(np.int64))
    prod = (x1 - q1.zp) * (x2 - q2.zp)
    raw = quant.multiply_by_quantized_multiplier(prod, m, s) + qo.zp
    lo, hi = c.act_range(v)
    return np.clip(raw, lo, hi).astype(v.out.np_dtype).reshape(v.out.shape)


def int16_zero_points(v: OpView) -> str | None:
    """int16 inputs and output must have zero point 0 (TFLM's Prepare requires it)."""
    if v.out.dtype != "int16":
        return None
    bad = [what for what, t in (("input 1", v.args[0]), ("input 2", v.args[1]), ("output", v.out))
           if t.quant is not None and any(z != 0 for z in t.quant.zero_point)]
    return None if not bad else f"{', '.join(bad)} not 0"


def lower_c(call) -> CKernel:
    """mcu_mul_s8 (int16: mcu_mul_s16; int32: mcu_mul_s32)."""
    return lower_one_multiplier(call, multiplier)


register(OpDef(
    name="mul",
    tflm="mul.cc, reference_integer_ops::Mul / BroadcastMul6DSlow (int8 and int16); int32: reference_ops::Mul",
    kind=OpKind.BROADCAST,
    doc=("Element-wise multiplication of two int8 (or two int16, zero points 0) tensors with broadcasting and "
         "a fused activation (int32: raw values, wrapping)."),
    infer=infer,
    reference=reference,
    checks=(int8_int16_or_int32, all_quantized_per_tensor, int16_zero_points, broadcastable, multiplier_in_range,
            c.supported_fused_activation, c.fused_clamp_fits_int32),
    tflite={"MUL": parse},
    portable=Portable(lower_c),
    fuses_activation=True,
))
