"""SUM: the int8 sum over constant axes (TFLite's reduce_sum), keep_dims or not, requantized.

TFLM (reduce_common.cc, EvalSumHelper -> reference_ops::QuantizedMeanOrSum with compute_sum) is
MEAN's integer path without the division: an int32 sum of the raw values over the reduced axes, the
input zero point times the count removed, one requantization by QuantizeMultiplier(double(input
scale) / double(output scale)) (double rounding, either shift sign), plus the output zero point,
clamped. Its resolved-axis scratch holds 2 axes and its index scratch 5 dimensions. The portable
kernel is MEAN's (mcu_mean_s8) with that multiplier."""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from .mean import infer, mean_dims, nonempty, parse, rank_limit

MAX_AXES = 2  # TFLM's resolved-axis scratch holds 2 axes


def sum_multiplier(in_scale: float, out_scale: float) -> tuple[int, int]:
    return quant.quantize_multiplier(float(np.float64(in_scale) / np.float64(out_scale)))


def reference(args, v: OpView):
    x, axes = args[0], v.attrs["axis"]
    in_q, out_q = v.args[0].quant, v.out.quant
    if in_q is None or out_q is None:  # an int32 (shape) sum, evaluated when its input is constant
        total = x.astype(np.int64).sum(axis=axes) if x.dtype.kind == "i" else x.sum(axis=axes, dtype=x.dtype)
        return (quant.wrap_int32(total) if x.dtype == np.int32 else total).astype(v.out.np_dtype).reshape(v.out.shape)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    total = quant.wrap_int32(quant.wrap_int32(x.astype(np.int64).sum(axis=axes)) - in_q.zp * count)
    mult, shift = sum_multiplier(in_q.s, out_q.s)
    out = quant.multiply_by_quantized_multiplier(total, mult, shift) + out_q.zp
    return np.clip(out, -128, 127).astype(np.int8).reshape(v.out.shape)


def axes_limit(v: OpView) -> str | None:
    """At most 2 distinct axes may be summed (TFLM's limit); sum in two SUM ops otherwise."""
    n = len(v.attrs["axis"])
    return None if n <= MAX_AXES else f"{n} axes {list(v.attrs['axis'])}"


def multiplier_range(v: OpView) -> str | None:
    """The input/output scale ratio must give a requantization shift from -31 to 30 (TFLM's
    rounding shift is undefined beyond)."""
    if v.args[0].quant is None or v.out.quant is None:
        return None  # reported by quantized_per_tensor_io
    _, shift = sum_multiplier(v.args[0].quant.s, v.out.quant.s)
    return None if -31 <= shift <= 30 else f"shift {shift}"


def lower_c(call) -> CKernel:
    """mcu_mean_s8 (MEAN's kernel): the summed-axis layout, the zero point times the count folded
    into one offset, and the input/output rescale."""
    x, out = call.args[0].type, call.type
    dims = mean_dims(tuple(x.shape), tuple(call.attrs["axis"]))
    count = dims[1] * dims[3]
    mult, shift = sum_multiplier(x.quant.s, out.quant.s)
    params = {"outer": dims[0], "reduce_outer": dims[1], "middle": dims[2], "reduce_inner": dims[3],
              "inner": dims[4], "sum_offset": int(quant.wrap_int32(np.int64(-x.quant.zp) * count)),
              "multiplier": int(mult), "shift": int(shift), "output_offset": out.quant.zp}
    return CKernel("mcu_mean_s8", "mcu_mean_s8", "mcu_mean_params", params)


register(OpDef(
    name="sum",
    tflm="reduce.cc, reference_ops::QuantizedMeanOrSum (compute_sum)",
    kind=OpKind.REDUCTION,
    doc="Sum over constant axes (at most 2), with or without keep_dims, requantized to the output.",
    infer=infer,
    reference=reference,
    checks=(c.int8_activations, c.quantized_per_tensor_io, rank_limit, axes_limit, nonempty, multiplier_range),
    tflite={"SUM": parse},
    portable=Portable(lower_c),
))
