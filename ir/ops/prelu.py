"""PRELU: x for x >= 0, alpha * x otherwise, alpha broadcasting against x; int8.

TFLM (prelu.cc, reference_ops::BroadcastPrelu4DSlow; multipliers from CalculatePreluParams, in
double from the float32 scales): with a = x - zp_in,
    out = MultiplyByQuantizedMultiplier(a, m1, s1)                      for a >= 0, m1 = s_in / s_out
    out = MultiplyByQuantizedMultiplier(a * (alpha - zp_alpha), m2, s2) otherwise, m2 = s_in * s_alpha / s_out
plus zp_out, clamped to int8. alpha is an int8 tensor (usually a per-channel constant) with one
scale. Shapes broadcast over at most 4 dimensions (TFLM's 4-D walk; its float kernel aborts beyond).
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable
from .add_sub import all_quantized_per_tensor

MAX_RANK = 4
# left shifts beyond these overflow TFLM's int32 product a * 2**shift (|a| <= 255, |a * alpha| < 2**16)
MAX_SHIFT_POSITIVE, MAX_SHIFT_NEGATIVE = 23, 15


def parse(ctx):
    return [ctx.inputs[0], ctx.inputs[1]], {}


def infer(args, attrs):
    return tuple(np.broadcast_shapes(args[0].shape, args[1].shape)), args[0].dtype


def multipliers(s_in: float, s_alpha: float, s_out: float) -> tuple[tuple[int, int], tuple[int, int]]:
    """((m1, s1), (m2, s2)) as TFLM's CalculatePreluParams, in double from the float32 scales."""
    s_in, s_alpha, s_out = (float(np.float32(s)) for s in (s_in, s_alpha, s_out))
    return quant.quantize_multiplier(s_in / s_out), quant.quantize_multiplier(s_in * s_alpha / s_out)


def reference(args, v: OpView):
    qi, qa, qo = v.args[0].quant, v.args[1].quant, v.out.quant
    (m1, s1), (m2, s2) = multipliers(qi.s, qa.s, qo.s)
    x, alpha = np.broadcast_arrays(args[0].astype(np.int64) - qi.zp, args[1].astype(np.int64) - qa.zp)
    out = np.where(x >= 0, quant.multiply_by_quantized_multiplier(x, m1, s1),
                   quant.multiply_by_quantized_multiplier(x * alpha, m2, s2)) + qo.zp
    return np.clip(out, -128, 127).astype(np.int8).reshape(v.out.shape)


# ---- support checks ------------------------------------------------------------------------------

def int8_tensors(v: OpView) -> str | None:
    """The input, alpha and the output must be int8."""
    found = {t.dtype for t in (*v.args, v.out)}
    return None if found == {"int8"} else f"got {', '.join(sorted(found))}"


def broadcast_rank4(v: OpView) -> str | None:
    """The input and alpha shapes must broadcast against each other (numpy rules), with at most 4
    dimensions (TFLM's PRELU walk)."""
    return c.broadcast_problem((v.args[0].shape, v.args[1].shape), v.out.rank, MAX_RANK)


def multipliers_in_range(v: OpView) -> str | None:
    """s_in / s_out must be below 2**23 and s_in * s_alpha / s_out below 2**15 (larger multipliers
    overflow TFLM's int32 arithmetic)."""
    if int8_tensors(v) is not None or all_quantized_per_tensor(v) is not None:
        return None
    (_, s1), (_, s2) = multipliers(v.args[0].quant.s, v.args[1].quant.s, v.out.quant.s)
    return None if s1 <= MAX_SHIFT_POSITIVE and s2 <= MAX_SHIFT_NEGATIVE else "the output scale is too small"


# ---- portable kernel -----------------------------------------------------------------------------

def lower_c(call) -> CKernel:
    """mcu_prelu_s8: the broadcast walk, offsets and both multipliers, and the output of every x at or
    above the input zero point (it depends on x alone): `positive`, 256 bytes indexed by x + 128."""
    (x, alpha), out = (a.type for a in call.args), call.type
    (m1, s1), (m2, s2) = multipliers(x.quant.s, alpha.quant.s, out.quant.s)
    params = {"shape": _portable.broadcast_plan(x.shape, alpha.shape, out.shape), "input_offset": -x.quant.zp,
              "alpha_offset": -alpha.quant.zp, "output_offset": out.quant.zp, "positive_multiplier": m1,
              "positive_shift": s1, "negative_multiplier": m2, "negative_shift": s2}
    a = np.maximum(np.arange(-128, 128, dtype=np.int64) - x.quant.zp, 0)
    positive = np.clip(quant.multiply_by_quantized_multiplier(a, m1, s1) + out.quant.zp, -128, 127).astype(np.int8)
    return CKernel("mcu_prelu_s8", "mcu_prelu_s8", "mcu_prelu_params", params, {"positive": positive})


register(OpDef(
    name="prelu",
    tflm="prelu.cc, reference_ops::BroadcastPrelu4DSlow",
    kind=OpKind.BROADCAST,
    doc="x for x >= 0, alpha * x otherwise (alpha an int8 tensor broadcasting against x), rescaled to the output.",
    infer=infer,
    reference=reference,
    checks=(int8_tensors, all_quantized_per_tensor, broadcast_rank4, multipliers_in_range),
    tflite={"PRELU": parse},
    portable=Portable(lower_c),
))
