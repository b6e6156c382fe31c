"""CONV_2D: NHWC convolution with per-channel (or per-tensor) symmetric int8 weights (OHWI) and a fused
activation, on int8 activations (optional int32 bias) or int16 activations (16x8, optional int64 or
int32 bias). TFLM reference: reference_integer_ops::ConvPerChannel (conv.cc).

int8: acc = sum((x - x_zp) * w) + bias (int32), MultiplyByQuantizedMultiplier per channel, + output
zero point, clamp. 16x8 (the int16 overload, _s16.py): acc = sum(x * w) (zero points ignored) + bias,
int64 accumulator with an int64 bias or none (requantized by the int64 MultiplyByQuantizedMultiplier),
int32 accumulator with an int32 bias; clamp without the output zero point."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _s16


def parse(ctx):
    o = ctx.options()
    if o is None:
        raise ctx.fail("missing Conv2DOptions")
    args = c.weights_and_bias(ctx)
    return args, {**c.window_attrs(o), **_s16.bound_attrs(args, 0)}


def infer(args, attrs):
    x, w = args[0], args[1]
    n, h, wd, _ = x.shape
    oc, kh, kw, _ = w.shape
    (sh, sw), (dh, dw) = attrs["stride"], attrs["dilation"]
    return (n, c.out_size(attrs["padding"], h, kh, sh, dh), c.out_size(attrs["padding"], wd, kw, sw, dw), oc), x.dtype


def windows(x: np.ndarray, kh: int, kw: int, attrs, out_hw: tuple[int, int], fill: int = 0) -> np.ndarray:
    """Im2col: [N, OH, OW, KH, KW, C] windows of x, padded with `fill` as TFLite places SAME padding."""
    n, h, w, ch = x.shape
    (sh, sw), (dh, dw) = attrs["stride"], attrs["dilation"]
    oh, ow = out_hw
    pt = c.pad_before(sh, dh, h, kh, oh)
    pl = c.pad_before(sw, dw, w, kw, ow)
    need_h = (oh - 1) * sh + (kh - 1) * dh + 1
    need_w = (ow - 1) * sw + (kw - 1) * dw + 1
    pb = max(need_h - h - pt, 0)
    pr = max(need_w - w - pl, 0)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill)
    iy = (np.arange(oh) * sh)[:, None] + np.arange(kh) * dh  # [OH, KH]
    ix = (np.arange(ow) * sw)[:, None] + np.arange(kw) * dw  # [OW, KW]
    return xp[:, iy[:, None, :, None], ix[None, :, None, :], :]  # [N, OH, OW, KH, KW, C]


def reference(args, v: OpView):
    x, w = args[0], args[1]
    bias = args[2].astype(np.int64) if len(args) > 2 else None
    in_q, w_q, out_q = v.args[0].quant, v.args[1].quant, v.out.quant
    oc, kh, kw, ic = w.shape
    n, oh, ow, _ = v.out.shape
    s16 = _s16.is_16x8(v)
    xs = x.astype(np.int64) - (0 if s16 else in_q.zp)  # (input + input_offset); padding contributes 0
    cols = windows(xs, kh, kw, v.attrs, (oh, ow)).reshape(n * oh * ow, kh * kw * ic)
    acc = c.exact_matmul(cols, w.reshape(oc, kh * kw * ic).T)
    mult, shift = c.per_channel_multipliers(in_q.s, w_q.scale, out_q.s, oc)
    lo, hi = c.act_range(v)
    if s16:
        wide = _s16.wide_accumulator(_s16.bias_dtype(v))
        return _s16.requantize(acc, bias, wide, mult, shift, lo, hi).reshape(n, oh, ow, oc)
    if bias is not None:
        acc = acc + bias
    return c.requantize_clamp(acc, mult, shift, out_q.zp, lo, hi).reshape(n, oh, ow, oc)


def filter_matches_input(v: OpView) -> str | None:
    """Filter input channels must equal the input's channels (grouped convolution is not supported)."""
    return None if v.args[1].shape[3] == v.args[0].shape[3] else \
        f"input has {v.args[0].shape[3]} channels, filter {v.args[1].shape[3]}"


def per_channel_on_output_axis(v: OpView) -> str | None:
    """Per-channel weight quantization must be along the output-channel axis (0)."""
    q = v.args[1].quant
    if q is not None and q.per_channel and (q.axis != 0 or len(q.scale) != v.args[1].shape[0]):
        return f"axis {q.axis} with {len(q.scale)} scales"
    return None


def pad_folded_into_same_padding(call, ctx):
    """PAD (zero-point fill on H, W) + CONV_2D with VALID padding -> CONV_2D with SAME padding,
    where TFLite's SAME padding places exactly the same pads."""
    return c.fold_pad_into_same(call, ctx)


def lower_c(call) -> CKernel:
    """mcu_conv_2d_s8 (mcu_conv_2d_s16[_acc32] for 16x8): the window geometry, zero-point offsets (0 for
    16x8, whose kernel ignores them), activation clamp and per-channel multipliers and shifts (the
    reference's derivation) precomputed."""
    x, w, out = call.args[0].type, call.args[1].type, call.type
    oc, kh, kw, _ = w.shape
    mult, shift = c.per_channel_multipliers(x.quant.s, w.quant.scale, out.quant.s, oc)
    lo, hi = c.act_clamp(call)
    s8 = x.dtype == "int8"
    params = {**c.window(call, kh, kw).fields(), "input_offset": -x.quant.zp if s8 else 0,
              "output_offset": out.quant.zp if s8 else 0, "act_min": lo, "act_max": hi}
    function, source = _s16.lower_names("mcu_conv_2d", call)
    return CKernel(function, source, "mcu_conv_2d_params", params,
                   {"multiplier": mult.astype(np.int32), "shift": shift.astype(np.int32)}, op_args=3, order="pixels")


def macs(v: OpView) -> int:
    _, kh, kw, ic = v.args[1].shape
    return v.out.size * kh * kw * ic


register(OpDef(
    name="conv_2d",
    tflm="conv.cc, reference_integer_ops::ConvPerChannel",
    kind=OpKind.COMPLEX,
    doc="2-D convolution, NHWC input, OHWI weights, any stride, dilation and SAME/VALID padding; int8 or 16x8.",
    infer=infer,
    reference=reference,
    checks=(_s16.int8_or_int16_activations, c.quantized_per_tensor_io, c.rank4_input, c.symmetric_weights,
            per_channel_on_output_axis, filter_matches_input, _s16.conv_bias, c.supported_fused_activation,
            _s16.rescale_below_2_30, c.fused_clamp_fits_int32, _s16.accumulator_within_2_47),
    tflite={"CONV_2D": parse},
    legalize=(pad_folded_into_same_padding,),
    portable=Portable(lower_c),
    fuses_activation=True,
    macs=macs,
))
