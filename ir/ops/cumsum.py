"""CUMSUM: the running sum along one constant axis, exclusive and / or reversed, int8 or float32
(the TensorFlow converter leaves CUMSUM in float32 between a DEQUANTIZE and a QUANTIZE).

float32: TFLM (cumsum.cc, reference_ops::CumSum<float>) adds along the axis in float32, in order
(from the end when reversed), starting from 0. int8: TFLM (cumsum.cc, reference_ops::CumSum with ArithmeticParams) rescales like ADD: left_shift 20,
input multiplier QuantizeMultiplierSmallerThanOneExp(s / 2s) (one half), output multiplier
QuantizeMultiplierSmallerThanOneExp(2s / (2^20 * output scale)). Each element becomes
scaled = MultiplyByQuantizedMultiplierSmallerThanOneExp((x - input_zp) * 2^20, in_mult, in_shift)
and is added to an int32 accumulator (wrapping). The accumulator does NOT start at 0: it starts at
the scaled value of the input offset itself (-input_zp), so every output carries one extra -input_zp.
An inclusive output is the accumulator after its element, an exclusive one before it; a reversed
sum walks the axis from the end. Output = MultiplyByQuantizedMultiplierSmallerThanOneExp(acc,
out_mult, out_shift) + output_zp, clamped to int8."""

from __future__ import annotations

import math

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from .arg_min_max import one_axis

LEFT_SHIFT = 20  # cumsum.cc kCumSumIntegerShift


def parse(ctx):
    raw = np.asarray(ctx.const(1))
    o = ctx.options()
    return [ctx.inputs[0]], {"axis": int(raw.ravel()[0]) if raw.size else 0, "axis_count": int(raw.size),
                             "axis_dtype": str(raw.dtype), "exclusive": bool(o.Exclusive()) if o else False,
                             "reverse": bool(o.Reverse()) if o else False}


def infer(args, attrs):
    return args[0].shape, args[0].dtype


def multipliers(in_scale: float, out_scale: float) -> tuple[int, int, int, int]:
    """(input multiplier, input shift, output multiplier, output shift) as TFLM's Prepare."""
    twice = 2 * np.float64(in_scale)
    im, ish = quant.quantize_multiplier_smaller_than_one_exp(float(np.float64(in_scale) / twice))
    om, osh = quant.quantize_multiplier_smaller_than_one_exp(float(twice / ((1 << LEFT_SHIFT) * np.float64(out_scale))))
    return im, ish, om, osh


def scaled(x, zp: int, mult: int, shift: int):
    """One element (or the input offset itself) on the accumulator's scale."""
    y = (np.asarray(x, dtype=np.int64) - zp) * (1 << LEFT_SHIFT)
    return quant.multiply_by_quantized_multiplier_smaller_than_one_exp(y, mult, shift)


def reference_f32(x: np.ndarray, axis: int, exclusive: bool, reverse: bool) -> np.ndarray:
    """Sequential float32 sums (np.cumsum on float32 adds in order, as TFLM's loop)."""
    xs = np.moveaxis(x.astype(np.float32), axis, -1)
    if reverse:
        xs = xs[..., ::-1]
    acc = np.cumsum(xs, axis=-1, dtype=np.float32)
    if exclusive:
        acc = np.concatenate([np.zeros(acc.shape[:-1] + (1,), np.float32), acc[..., :-1]], axis=-1)
    if reverse:
        acc = acc[..., ::-1]
    return np.ascontiguousarray(np.moveaxis(acc, -1, axis))


def reference(args, v: OpView):
    x, axis = args[0], v.attrs["axis"] % args[0].ndim
    if v.out.dtype == "float32":
        return reference_f32(x, axis, v.attrs["exclusive"], v.attrs["reverse"])
    if v.out.quant is None:  # an int32 cumsum, evaluated when its input is constant
        xs = np.moveaxis(x.astype(np.int64), axis, -1)
        xs = xs[..., ::-1] if v.attrs["reverse"] else xs
        acc = np.cumsum(xs, axis=-1)
        if v.attrs["exclusive"]:
            acc = np.concatenate([np.zeros(acc.shape[:-1] + (1,), np.int64), acc[..., :-1]], axis=-1)
        acc = acc[..., ::-1] if v.attrs["reverse"] else acc
        return np.ascontiguousarray(np.moveaxis(quant.wrap_int32(acc), -1, axis)).astype(v.out.np_dtype)
    in_q, out_q = v.args[0].quant, v.out.quant
    im, ish, om, osh = multipliers(in_q.s, out_q.s)
    xs = np.moveaxis(x, axis, -1)
    if v.attrs["reverse"]:
        xs = xs[..., ::-1]
    init = int(scaled(0, in_q.zp, im, ish))  # TFLM's accumulator starts at the scaled input offset
    acc = quant.wrap_int32(np.cumsum(scaled(xs, in_q.zp, im, ish), axis=-1) + init)
    if v.attrs["exclusive"]:
        acc = np.concatenate([np.full(acc.shape[:-1] + (1,), init, dtype=np.int64), acc[..., :-1]], axis=-1)
    out = np.clip(quant.multiply_by_quantized_multiplier_smaller_than_one_exp(acc, om, osh) + out_q.zp, -128, 127)
    if v.attrs["reverse"]:
        out = out[..., ::-1]
    return np.ascontiguousarray(np.moveaxis(out, -1, axis)).astype(np.int8)


# ---- support checks ------------------------------------------------------------------------------

def io_types(v: OpView) -> str | None:
    """Input and output must both be int8, quantized per tensor, or both float32."""
    a, o = v.args[0], v.out
    if a.dtype != o.dtype or a.dtype not in ("int8", "float32"):
        return f"input is {a.dtype}, output {o.dtype}"
    if a.dtype == "int8" and c.quantized_per_tensor_io(v) is not None:
        return c.quantized_per_tensor_io(v)
    return None



def output_scale_range(v: OpView) -> str | None:
    """The output scale must exceed 2^-19 times the input scale (TFLM's output multiplier must be
    below 1)."""
    if v.out.dtype != "int8" or v.args[0].quant is None or v.out.quant is None:
        return None  # float32, or reported by io_types
    real = 2 * np.float64(v.args[0].quant.s) / ((1 << LEFT_SHIFT) * np.float64(v.out.quant.s))
    return None if real < 1 else f"input scale {v.args[0].quant.s:.9g}, output {v.out.quant.s:.9g}"


def lower_c(call) -> CKernel:
    """mcu_cumsum_s8 / mcu_cumsum_f32 over the input seen as [outer, axis, inner]; int8: TFLM's
    multipliers and start value."""
    x, out = call.args[0].type, call.type
    axis = call.attrs["axis"] % x.rank
    params = {"outer": math.prod(x.shape[:axis]), "depth": x.shape[axis], "inner": math.prod(x.shape[axis + 1:]),
              "exclusive": int(call.attrs["exclusive"]), "reverse": int(call.attrs["reverse"])}
    if out.dtype == "float32":
        return CKernel("mcu_cumsum_f32", "mcu_cumsum", "mcu_cumsum_f32_params", params)
    im, ish, om, osh = multipliers(x.quant.s, out.quant.s)
    params.update({"input_offset": -x.quant.zp, "input_multiplier": im, "input_shift": ish,
                   "output_multiplier": om, "output_shift": osh, "output_offset": out.quant.zp,
                   "init": int(scaled(0, x.quant.zp, im, ish))})
    return CKernel("mcu_cumsum_s8", "mcu_cumsum", "mcu_cumsum_params", params)


register(OpDef(
    name="cumsum",
    tflm="cumsum.cc, reference_ops::CumSum",
    kind=OpKind.COMPLEX,
    doc="Running sum along a constant axis, exclusive and / or reversed: int8 requantized (TFLM's "
        "accumulator starts at the input offset), or float32.",
    infer=infer,
    reference=reference,
    checks=(io_types, one_axis, output_scale_range),
    tflite={"CUMSUM": parse},
    portable=Portable(lower_c),
))
