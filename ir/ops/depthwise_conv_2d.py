"""DEPTHWISE_CONV_2D: NHWC depthwise convolution with weights [1, KH, KW, IC*M] (M = depth
multiplier) quantized per tensor or per output channel (axis 3) and a fused activation, on int8
activations (optional int32 bias) or int16 activations (16x8, optional int64 bias). TFLM reference:
reference_integer_ops::DepthwiseConvPerChannel (output channel `ic*M + m` reads input channel `ic`;
the weight zero point is not used; padding contributes 0).

16x8 (its int16 overload, _s16.py): raw x * w products (zero points ignored) in an int64
accumulator, + the int64 bias, the int64 MultiplyByQuantizedMultiplier, clamp without the output
zero point. TFLM reads a 16x8 bias as int64 whatever its type, so an int32 bias is refused."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _nn
from . import _s16


def parse(ctx):
    o = ctx.options()
    if o is None:
        raise ctx.fail("missing DepthwiseConv2DOptions")
    args = c.weights_and_bias(ctx)
    attrs = {**c.window_attrs(o), "depth_multiplier": int(o.DepthMultiplier()), **_s16.bound_attrs(args, 3)}
    if len(ctx.inputs) > 2 and ctx.inputs[2] is None:
        attrs["bias_marked_absent"] = True  # see no_absent_bias_input
    return args, attrs


def no_absent_bias_input(v: OpView) -> str | None:
    """A bias must be given or left out, not written as an absent input (-1): TFLM's depthwise kernel
    crashes on that (a model with two inputs runs)."""
    return "the bias input is -1" if v.attrs.get("bias_marked_absent") else None


def infer(args, attrs):
    x, w = args[0], args[1]
    n, h, wd, _ = x.shape
    _, kh, kw, oc = w.shape
    (sh, sw), (dh, dw) = attrs["stride"], attrs["dilation"]
    pad = attrs["padding"]
    return (n, c.out_size(pad, h, kh, sh, dh), c.out_size(pad, wd, kw, sw, dw), oc), x.dtype


def reference(args, v: OpView):
    x, w = args[0], args[1]
    in_q, w_q, out_q = v.args[0].quant, v.args[1].quant, v.out.quant
    _, kh, kw, oc = w.shape
    ic = x.shape[3]
    n, oh, ow, _ = v.out.shape
    k, stride, dil = (kh, kw), v.attrs["stride"], v.attrs["dilation"]
    # (input + input_offset) with padding contributing 0; output channel o reads input channel o // M.
    s16 = _s16.is_16x8(v)
    xs = (x.astype(np.int64) - (0 if s16 else in_q.zp))[..., np.arange(oc) // (oc // ic)]
    xp = _nn.padded(xs, k, stride, dil, (oh, ow))
    wk = w[0].astype(np.int64)  # [KH, KW, OC]
    acc = np.zeros((n, oh, ow, oc), dtype=np.int64)
    for i, j, tap in _nn.taps(xp, k, stride, dil, (oh, ow)):
        acc += tap * wk[i, j]
    mult, shift = c.per_channel_multipliers(in_q.s, w_q.scale, out_q.s, oc)
    lo, hi = c.act_range(v)
    bias = args[2].astype(np.int64) if len(args) > 2 else None
    if s16:
        return _s16.requantize(acc, bias, True, mult, shift, lo, hi)
    if bias is not None:
        acc += bias
    return c.requantize_clamp(acc, mult, shift, out_q.zp, lo, hi)


def weights_layout(v: OpView) -> str | None:
    """Weights must be a 4-D [1, KH, KW, IC*M] tensor whose last dimension is a multiple of the input
    channels, matching the depth multiplier in the options."""
    w, ic = v.args[1].shape, (v.args[0].shape[-1] if v.args[0].rank else 0)
    if len(w) != 4 or w[0] != 1:
        return f"weights have shape {list(w)}"
    if ic == 0 or w[3] % ic:
        return f"{w[3]} output channels for {ic} input channels"
    m = v.attrs["depth_multiplier"]
    if m != w[3] // ic:
        return f"options say depth multiplier {m}, weights give {w[3] // ic}"
    return None


def weights_quant(v: OpView) -> str | None:
    """Weights must be int8 with zero point 0 (symmetric), per tensor or per output channel (axis 3)."""
    return _nn.weight_quant(v, 3, v.args[1].shape[-1])


def bias_per_channel(v: OpView) -> str | None:
    """The bias, when present, must have one element per output channel."""
    n, channels = (v.args[2].size if len(v.args) > 2 else None), v.args[1].shape[-1]
    return None if n is None or n == channels else f"bias has {n} elements for {channels} output channels"


def positive_stride_dilation(v: OpView) -> str | None:
    """Strides and dilation factors must be at least 1."""
    vals = (*v.attrs["stride"], *v.attrs["dilation"])
    return None if _nn.positive(*vals) else f"stride {v.attrs['stride']}, dilation {v.attrs['dilation']}"


def pad_folded_into_same_padding(call, ctx):
    """PAD (zero-point fill on H, W) + DEPTHWISE_CONV_2D with VALID padding -> SAME padding, where
    TFLite's SAME padding places exactly the same pads."""
    return c.fold_pad_into_same(call, ctx)


def lower_c(call) -> CKernel:
    """mcu_depthwise_conv_2d_s8 (mcu_depthwise_conv_2d_s16 for 16x8): geometry, depth multiplier,
    offsets (0 for 16x8), clamp, per-channel multipliers and shifts precomputed."""
    x, w, out = call.args[0].type, call.args[1].type, call.type
    _, kh, kw, oc = w.shape
    mult, shift = c.per_channel_multipliers(x.quant.s, w.quant.scale, out.quant.s, oc)
    lo, hi = c.act_clamp(call)
    s8 = x.dtype == "int8"
    params = {**c.window(call, kh, kw).fields(), "ch_mult": oc // x.shape[3],
              "input_offset": -x.quant.zp if s8 else 0, "output_offset": out.quant.zp if s8 else 0,
              "act_min": lo, "act_max": hi}
    function, source = _s16.lower_names("mcu_depthwise_conv_2d", call)
    return CKernel(function, source, "mcu_depthwise_conv_2d_params", params,
                   {"multiplier": mult.astype(np.int32), "shift": shift.astype(np.int32)}, op_args=3, order="pixels")


def macs(v: OpView) -> int:
    _, kh, kw, _ = v.args[1].shape
    return v.out.size * kh * kw


register(OpDef(
    name="depthwise_conv_2d",
    tflm="depthwise_conv.cc, reference_integer_ops::DepthwiseConvPerChannel",
    kind=OpKind.COMPLEX,
    doc="Depthwise 2-D convolution, NHWC input, [1, KH, KW, IC*M] weights, any depth multiplier M, "
        "stride, dilation and SAME/VALID padding; int8 or 16x8.",
    infer=infer,
    reference=reference,
    checks=(_s16.int8_or_int16_activations, c.quantized_per_tensor_io, c.rank4_input, weights_layout, weights_quant,
            _s16.int64_bias_only, bias_per_channel, no_absent_bias_input, positive_stride_dilation,
            c.supported_fused_activation, _s16.rescale_below_2_30, c.fused_clamp_fits_int32,
            _s16.accumulator_within_2_47),
    tflite={"DEPTHWISE_CONV_2D": parse},
    legalize=(pad_folded_into_same_padding,),
    portable=Portable(lower_c),
    fuses_activation=True,
    macs=macs,
))
