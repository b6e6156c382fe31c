"""SQUARED_DIFFERENCE: (x1 - x2)**2 element-wise, numpy broadcasting; int8 or int32.

TFLM (squared_difference.cc, SquaredDifference with ArithmeticParams from PrepareQuantized), int8:
both inputs move onto a common scale as in ADD but with a left shift of 7,
    a = MultiplyByQuantizedMultiplierSmallerThanOneExp((x1 - zp1) * 2**7, m1, s1)   (b likewise)
with m1 = s1 / (2 max(s1, s2)) and m2 = s2 / (2 max(s1, s2)) in double; then
    out = MultiplyByQuantizedMultiplier((a - b)**2, m_out, s_out) + zp_out, clamped to int8,
with m_out = (2 max(s1, s2))**2 / (2**14 * s_out) (the denominator a float32 product, exact).
|a - b| < 2**15, so the square fits int32; a multiplier of 2 or more would shift it out of int32
(undefined in TFLM), which the rules refuse. int32: (x1 - x2)**2 on the raw values, wrapping.
There is no fused activation. Broadcasting works in the TFLM we verify against up to 6 dimensions.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _portable
from .add_sub import all_quantized_per_tensor, broadcastable, infer, int8_or_int32, int32_reference, lower_s32

LEFT_SHIFT = 7


def parse(ctx):
    return [ctx.inputs[0], ctx.inputs[1]], {}


def multipliers(s1: float, s2: float, s_out: float):
    """((m1, sh1), (m2, sh2), (m_out, sh_out)) as TFLM's PrepareQuantized derives them."""
    f32 = np.float32
    twice_max = 2.0 * float(max(f32(s1), f32(s2)))
    out_denominator = float(f32(1 << (2 * LEFT_SHIFT)) * f32(s_out))
    return (quant.quantize_multiplier_smaller_than_one_exp(float(f32(s1)) / twice_max),
            quant.quantize_multiplier_smaller_than_one_exp(float(f32(s2)) / twice_max),
            quant.quantize_multiplier(twice_max * twice_max / out_denominator))


def reference(args, v: OpView):
    if v.out.dtype == "int32":
        return int32_reference(args, v, lambda a, b: (a - b) * (a - b), activation=False)
    q1, q2, qo = v.args[0].quant, v.args[1].quant, v.out.quant
    (m1, s1), (m2, s2), (mo, so) = multipliers(q1.s, q2.s, qo.s)
    x1, x2 = np.broadcast_arrays(args[0].astype(np.int64), args[1].astype(np.int64))
    scaled = quant.multiply_by_quantized_multiplier_smaller_than_one_exp
    a = scaled((x1 - q1.zp) * (1 << LEFT_SHIFT), m1, s1)
    b = scaled((x2 - q2.zp) * (1 << LEFT_SHIFT), m2, s2)
    raw = quant.multiply_by_quantized_multiplier((a - b) * (a - b), mo, so) + qo.zp
    return np.clip(raw, -128, 127).astype(np.int8).reshape(v.out.shape)


def output_multiplier_below_two(v: OpView) -> str | None:
    """The output scale must be above max(s1, s2)**2 / 8192: a smaller one gives an output multiplier
    of 2 or more, which shifts TFLM's squared int32 difference out of range (undefined)."""
    if v.out.dtype != "int8" or all_quantized_per_tensor(v) is not None:
        return None
    _, _, (_, shift) = multipliers(v.args[0].quant.s, v.args[1].quant.s, v.out.quant.s)
    return None if shift <= 1 else f"output scale {v.out.quant.s:.6g}, input scales {v.args[0].quant.s:.6g}, " \
        f"{v.args[1].quant.s:.6g}"


def lower_c(call) -> CKernel:
    """mcu_squared_difference_s8: the broadcast walk, offsets and the three multipliers (int32:
    mcu_squared_difference_s32)."""
    if call.type.dtype == "int32":
        return lower_s32(call, activation=False)
    (a, b), out = (x.type for x in call.args), call.type
    (m1, s1), (m2, s2), (mo, so) = multipliers(a.quant.s, b.quant.s, out.quant.s)
    params = {**_portable.binary_params(call, (-128, 127)), "left_shift": LEFT_SHIFT,
              "input1_multiplier": m1, "input1_shift": s1, "input2_multiplier": m2, "input2_shift": s2,
              "output_multiplier": mo, "output_shift": so}
    return CKernel("mcu_squared_difference_s8", "mcu_squared_difference_s8", "mcu_squared_difference_params",
                   params)


register(OpDef(
    name="squared_difference",
    tflm="squared_difference.cc, SquaredDifference (int8: PrepareQuantized's multipliers)",
    kind=OpKind.BROADCAST,
    doc="(x1 - x2)**2 element-wise with broadcasting: int8 (TFLM's rescaled arithmetic) or int32 (wrapping).",
    infer=infer,
    reference=reference,
    checks=(int8_or_int32, all_quantized_per_tensor, broadcastable, output_multiplier_below_two),
    tflite={"SQUARED_DIFFERENCE": parse},
    portable=Portable(lower_c),
))
