"""AVERAGE_POOL_2D and MAX_POOL_2D on int8 or int16 NHWC tensors whose input and output share their
quantization. TFLM reference: reference_integer_ops::AveragePool / MaxPool (int8 and int16 overloads,
the same arithmetic; zero points are not used).

Both clip each window to the input (padding is never read). Average: the int32 sum of the raw values
over the window's valid elements, divided by their count rounding half away from zero
((sum +- count/2) / count in C), then clamped to the fused activation's range. Max: the largest
valid value (starting from the type's minimum), clamped likewise. An int16 window holds at most
65536 elements, so that its int32 sum cannot overflow."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _nn
from . import _s16

_NO_DILATION = (1, 1)


def parse(ctx):
    o = ctx.options()
    if o is None:
        raise ctx.fail("missing Pool2DOptions")
    attrs = {
        "filter": (int(o.FilterHeight()), int(o.FilterWidth())),
        "stride": (int(o.StrideH()), int(o.StrideW())),
        "padding": c.padding(o),
        "activation": c.activation(o),
    }
    return [ctx.inputs[0]], attrs


def infer(args, attrs):
    n, h, w, ch = args[0].shape
    (fh, fw), (sh, sw) = attrs["filter"], attrs["stride"]
    pad = attrs["padding"]
    return (n, c.out_size(pad, h, fh, sh), c.out_size(pad, w, fw, sw), ch), args[0].dtype


def _windows(x: np.ndarray, v: OpView, fill: int):
    n, oh, ow, _ = v.out.shape
    k, s = v.attrs["filter"], v.attrs["stride"]
    xp = _nn.padded(x, k, s, _NO_DILATION, (oh, ow), fill)
    return _nn.taps(xp, k, s, _NO_DILATION, (oh, ow))


def average_reference(args, v: OpView):
    x = args[0].astype(np.int64)
    acc = np.zeros(v.out.shape, dtype=np.int64)
    for _, _, tap in _windows(x, v, 0):
        acc += tap
    count = np.zeros(v.out.shape[:3] + (1,), dtype=np.int64)
    for _, _, tap in _windows(np.ones(x.shape[:3] + (1,), dtype=np.int64), v, 0):
        count += tap
    half = count // 2
    # C integer division truncates toward zero: round half away from zero for either sign.
    avg = np.where(acc > 0, (acc + half) // count, -((half - acc) // count))
    lo, hi = c.act_range(v)
    return np.clip(avg, lo, hi).astype(v.out.np_dtype)


def max_reference(args, v: OpView):
    x = args[0]
    lowest = np.iinfo(v.out.np_dtype).min
    out = np.full(v.out.shape, lowest, dtype=v.out.np_dtype)
    for _, _, tap in _windows(x, v, lowest):
        np.maximum(out, tap, out=out)
    lo, hi = c.act_range(v)
    return np.clip(out, lo, hi).astype(v.out.np_dtype)


def same_io_quant(v: OpView) -> str | None:
    """Input and output must have the same quantization (scales within 1e-6, equal zero points)."""
    a, b = v.args[0], v.out
    if a.quant is None or b.quant is None or _nn.same_quant_within(a, b):
        return None
    return f"input {a.quant}, output {b.quant}"


def positive_window(v: OpView) -> str | None:
    """Filter sizes and strides must be at least 1."""
    vals = (*v.attrs["filter"], *v.attrs["stride"])
    return None if _nn.positive(*vals) else f"filter {v.attrs['filter']}, stride {v.attrs['stride']}"


def valid_window_fits(v: OpView) -> str | None:
    """With VALID padding the filter must fit in the input."""
    x = v.args[0]
    if v.attrs["padding"] != "VALID" or x.rank != 4:
        return None
    (fh, fw), (_, h, w, _) = v.attrs["filter"], x.shape
    return None if fh <= h and fw <= w else f"filter {fh}x{fw} on a {h}x{w} input"


MAX_WINDOW = 1 << 15


def window_not_absurd(v: OpView) -> str | None:
    """Filter sizes and strides must be at most 32768: TFLM computes window bounds and padding in
    int, and windows near 2^31 give it undefined results (no real input is that large)."""
    vals = (*v.attrs["filter"], *v.attrs["stride"])
    return None if all(x <= MAX_WINDOW for x in vals) else \
        f"filter {v.attrs['filter']}, stride {v.attrs['stride']} beyond {MAX_WINDOW}"


def int16_sum_fits(v: OpView) -> str | None:
    """An int16 window may hold at most 65536 elements (TFLM sums it in int32)."""
    fh, fw = v.attrs["filter"]
    return None if v.args[0].dtype != "int16" or fh * fw <= 1 << 16 else f"a {fh}x{fw} window"


_CHECKS = (_s16.int8_or_int16_activations, c.quantized_per_tensor_io, c.rank4_input, same_io_quant, positive_window,
           window_not_absurd, valid_window_fits, c.supported_fused_activation, c.fused_clamp_fits_int32)

def lower_c(call) -> CKernel:
    """mcu_average_pool_2d_s8 / mcu_max_pool_2d_s8 (_s16 in mcu_pool_2d_s16.c): the window geometry and
    the activation clamp."""
    fh, fw = call.attrs["filter"]
    g = c.window(call, fh, fw)
    lo, hi = c.act_clamp(call)
    params = {**g.fields("batches", "in_h", "in_w"), "channels": g.in_c, **g.fields("out_h", "out_w"),
              "filter_h": fh, "filter_w": fw, **g.fields("stride_h", "stride_w", "pad_top", "pad_left"),
              "act_min": lo, "act_max": hi}
    if call.type.dtype == "int16":
        return CKernel(f"mcu_{call.op}_s16", "mcu_pool_2d_s16", "mcu_pool_2d_params", params)
    name = f"mcu_{call.op}_s8"
    return CKernel(name, name, "mcu_pool_2d_params", params, order="pixels")


register(OpDef(
    name="average_pool_2d",
    tflm="pooling.cc, reference_integer_ops::AveragePool (int8 and int16)",
    kind=OpKind.REDUCTION,
    doc="2-D average pooling, NHWC, any window, stride and SAME/VALID padding; padded elements are "
        "excluded from the average; int8 or int16.",
    infer=infer,
    reference=average_reference,
    checks=_CHECKS + (int16_sum_fits,),
    tflite={"AVERAGE_POOL_2D": parse},
    portable=Portable(lower_c),
    fuses_activation=True,
))

register(OpDef(
    name="max_pool_2d",
    tflm="pooling.cc, reference_integer_ops::MaxPool (int8 and int16)",
    kind=OpKind.REDUCTION,
    doc="2-D max pooling, NHWC, any window, stride and SAME/VALID padding; int8 or int16.",
    infer=infer,
    reference=max_reference,
    checks=_CHECKS,
    tflite={"MAX_POOL_2D": parse},
    portable=Portable(lower_c),
    fuses_activation=True,
))
