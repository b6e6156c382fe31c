"""MEAN: the average of an int8 or int16 tensor over constant axes (TFLite's reduce_mean), keep_dims or not.

TFLM (reduce_common.cc, EvalIntegerMean -> reference_ops::QuantizedMeanOrSum) does it in integers on
every path, whether or not input and output quantization are equal and whatever the axes:
  sum   = int32 sum of the raw input values over the reduced axes, n = number of summed elements
  (m, e)  = QuantizeMultiplier(double(input_scale) / double(output_scale))
  k     = min(floor(log2 n), 32, 31 + e);  m' = (int64(m) << k) / n;  e' = e - k
  out   = clamp(MultiplyByQuantizedMultiplier(sum - input_zp * n, m', e') + output_zp, -128, 127)
(int16: the same with the int16 range, zero points applied as for int8; the int32 sum wraps past
65536 elements as TFLM's does).
The axis tensor becomes the `axis` attribute (normalized to non-negative, duplicates removed, sorted).
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _s16

MAX_RANK = 5  # TFLM's index scratch holds 5 dimensions
MAX_AXES = 2  # TFLM's resolved-axis scratch holds 2 axes


def parse(ctx):
    axis = ctx.const(1)
    if axis.dtype != np.int32:
        raise ctx.fail(f"the axis tensor is {axis.dtype}, TFLite requires int32")
    rank = len(ctx.inputs[0].type.shape)
    axes = []
    for a in (int(v) for v in np.ravel(axis)):
        if not -rank <= a < rank:
            raise ctx.fail(f"axis {a} is out of range for a rank-{rank} input")
        a %= rank
        if a not in axes:
            axes.append(a)
    o = ctx.options()
    attrs = {"axis": tuple(sorted(axes)), "keep_dims": bool(o.KeepDims()) if o is not None else False}
    return [ctx.inputs[0]], attrs


def infer(args, attrs):
    x, axes = args[0], attrs["axis"]
    if attrs["keep_dims"]:
        return tuple(1 if i in axes else d for i, d in enumerate(x.shape)), x.dtype
    return tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype


def mean_multiplier(in_scale: float, out_scale: float, count: int) -> tuple[int, int]:
    """TFLM's (multiplier, shift) for a mean over `count` elements: the input/output rescale with
    1/count folded in (see the module docstring)."""
    mult, shift = quant.quantize_multiplier(float(np.float64(in_scale) / np.float64(out_scale)))
    if count <= 0:
        return mult, shift
    k = min(count.bit_length() - 1, 32, 31 + shift)
    return (mult << k) // count, shift - k


def reference(args, v: OpView):
    x, axes = args[0], v.attrs["axis"]
    in_q, out_q = v.args[0].quant, v.out.quant
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    total = quant.wrap_int32(x.astype(np.int64).sum(axis=axes) - in_q.zp * count)
    mult, shift = mean_multiplier(in_q.s, out_q.s, count)
    out = quant.multiply_by_quantized_multiplier(total, mult, shift) + out_q.zp
    lo, hi = quant.dtype_range(v.out.dtype)
    return np.clip(out, lo, hi).astype(v.out.np_dtype).reshape(v.out.shape)


def rank_limit(v: OpView) -> str | None:
    """The input may have at most 5 dimensions."""
    r = v.args[0].rank
    return None if r <= MAX_RANK else f"input has rank {r}"


def axes_limit(v: OpView) -> str | None:
    """At most 2 distinct axes may be reduced (TFLM's limit); reduce in two MEAN ops otherwise."""
    n = len(v.attrs["axis"])
    return None if n <= MAX_AXES else f"{n} axes {list(v.attrs['axis'])}"


def nonempty(v: OpView) -> str | None:
    """The input must not be empty."""
    return None if v.args[0].size > 0 else f"input shape {list(v.args[0].shape)}"


def mean_dims(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, int, int, int, int]:
    """The input seen as [outer, reduce_outer, middle, reduce_inner, inner]: consecutive dimensions of
    the same kind (kept / reduced) merged. Groups alternate kept, reduced, kept, reduced, kept, so at
    most two runs of reduced axes fit (MEAN reduces at most 2 axes)."""
    dims = [1] * 5
    group = 0
    for i, d in enumerate(shape):
        reduced = i in axes
        while (group % 2 == 1) != reduced:
            group += 1
        if group >= 5:
            raise ValueError(f"MEAN over axes {list(axes)} of {list(shape)}: more than two runs of reduced axes")
        dims[group] *= int(d)
    return tuple(dims)  # type: ignore[return-value]


def lower_c(call) -> CKernel:
    """mcu_mean_s8 / mcu_mean_s16: the reduced-axis layout, the zero point times the count folded into
    one offset, and the 1/count multiplier."""
    x, out = call.args[0].type, call.type
    dims = mean_dims(tuple(x.shape), tuple(call.attrs["axis"]))
    count = dims[1] * dims[3]
    mult, shift = mean_multiplier(x.quant.s, out.quant.s, count)
    params = {"outer": dims[0], "reduce_outer": dims[1], "middle": dims[2], "reduce_inner": dims[3],
              "inner": dims[4], "sum_offset": int(quant.wrap_int32(np.int64(-x.quant.zp) * count)),
              "multiplier": int(mult), "shift": int(shift), "output_offset": out.quant.zp}
    name = "mcu_mean_s16" if x.dtype == "int16" else "mcu_mean_s8"
    return CKernel(name, name, "mcu_mean_params", params)


def rescale_below_2_30(v: OpView) -> str | None:
    """The mean's multiplier, input scale / output scale with 1 / (number of averaged elements)
    folded in as TFLM folds it, must be below 2^30: TFLM shifts the sum left by the multiplier's
    exponent in int32, which is undefined from a shift of 31."""
    if c.quantized_per_tensor_io(v) is not None:
        return None
    count = int(np.prod([v.args[0].shape[a] for a in v.attrs["axis"]], dtype=np.int64))
    return c.left_shift_detail(mean_multiplier(v.args[0].quant.s, v.out.quant.s, count)[1])


def mean_without_keep_dims(call, ctx):
    """MEAN without keep_dims -> MEAN with keep_dims, then RESHAPE (a view) to the reduced shape, so
    the mean itself can legalize further (e.g. to an average pool)."""
    if call.attrs["keep_dims"]:
        return None
    from dataclasses import replace

    from mcuforge.ir.expr import Call

    x = call.args[0].type
    kept = tuple(1 if i in call.attrs["axis"] else d for i, d in enumerate(x.shape))
    inner = replace(call, attrs={**call.attrs, "keep_dims": True}, type=call.type.with_shape(kept),
                    name=f"{call.name}/keep_dims", tensor=None)
    return Call("reshape", (inner,), call.type, {"new_shape": call.type.shape}, name=call.name,
                tensor=call.tensor, sources=call.sources)


def hw_mean_as_average_pool(call, ctx):
    """MEAN over H, W of an NHWC tensor with keep_dims -> AVERAGE_POOL_2D over the whole plane, when
    input and output quantization are equal and the two integer computations agree on every sum
    the input can produce (checked exhaustively at compile time)."""
    x = call.args[0].type
    if call.attrs["axis"] != (1, 2) or not call.attrs["keep_dims"] or x.rank != 4 or x.dtype != "int8":
        return None
    if x.quant is None or call.type.quant is None or x.quant != call.type.quant:
        return None
    n = x.shape[1] * x.shape[2]
    sums = np.arange(-128 * n, 127 * n + 1, dtype=np.int64)
    mult, shift = mean_multiplier(x.quant.s, call.type.quant.s, n)
    as_mean = np.clip(quant.multiply_by_quantized_multiplier(sums - x.quant.zp * n, mult, shift) + x.quant.zp,
                      -128, 127)
    half = n // 2
    as_pool = np.clip(np.where(sums > 0, (sums + half) // n, -((half - sums) // n)), -128, 127)
    if not np.array_equal(as_mean, as_pool):
        return None
    from dataclasses import replace

    attrs = {"filter": (x.shape[1], x.shape[2]), "stride": (1, 1), "padding": "VALID", "activation": "NONE"}
    return replace(call, op="average_pool_2d", attrs=attrs)


register(OpDef(
    name="mean",
    tflm="reduce.cc, reference_ops::QuantizedMeanOrSum (int8 and int16)",
    kind=OpKind.REDUCTION,
    doc="Mean over constant axes (at most 2), with or without keep_dims; input and output "
        "quantization may differ; int8 or int16.",
    infer=infer,
    reference=reference,
    checks=(_s16.int8_or_int16_activations, c.quantized_per_tensor_io, rank_limit, axes_limit, nonempty,
            rescale_below_2_30),
    tflite={"MEAN": parse},
    legalize=(mean_without_keep_dims, hw_mean_as_average_pool),
    portable=Portable(lower_c),
))
