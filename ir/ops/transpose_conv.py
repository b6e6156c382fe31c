"""TRANSPOSE_CONV: NHWC transposed convolution with int8 weights [OC, KH, KW, IC] quantized per
tensor or per output channel and (newer schema) a fused activation, on int8 activations (optional
int32 bias) or int16 activations (16x8, optional int64 bias).

The TFLite inputs are (output_shape, weights, input[, bias]); the constant output_shape becomes the
`output_shape` attribute and the call's arguments are (input, weights[, bias]).

TFLM reference (reference_integer_ops::TransposeConv): every input element scatters
(x - x_zp) * w[oc, ky, kx, ic] into an int32 scratch at output (y*stride - pad + ky, x*stride - pad + kx)
(contributions outside the output are dropped); then + bias, per-channel requantize, + output zero
point, clamp. The padding is TFLite's ComputePaddingHeightWidth applied to the OUTPUT size (the
transposed direction), dilation 1.

16x8 (its int16 overload, _s16.py): the same scatter of raw x * w products (zero points ignored)
into int64 accumulators, + the int64 bias, the int64 MultiplyByQuantizedMultiplier, clamp without
the output zero point. TFLM reads a 16x8 bias as int64 whatever its type: an int32 bias is refused."""

from __future__ import annotations

import numpy as np
from mcuforge.firmware.macros import kernel_size
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _nn
from . import _s16


def parse(ctx):
    o = ctx.options()
    if o is None:
        raise ctx.fail("missing TransposeConvOptions")
    if len(ctx.inputs) < 3:
        raise ctx.fail(f"expected 3 or 4 inputs, got {len(ctx.inputs)}")
    shape = ctx.const(0)
    if shape.dtype != np.int32 or shape.ndim != 1:
        raise ctx.fail(f"output_shape must be a 1-D int32 tensor, got {shape.dtype} {list(shape.shape)}")
    w, x = ctx.inputs[1], ctx.inputs[2]
    b = ctx.inputs[3] if len(ctx.inputs) > 3 else None
    args = [x, w] + ([b] if b is not None else [])
    attrs = {
        "output_shape": tuple(int(d) for d in shape),
        "stride": (int(o.StrideH()), int(o.StrideW())),
        "padding": c.padding(o),
        "activation": c.activation(o),
        **_s16.bound_attrs(args, 0),
    }
    return args, attrs


def infer(args, attrs):
    return tuple(attrs["output_shape"]), args[0].dtype


def padding_hw(v: OpView) -> tuple[int, int]:
    """(top, left) padding: ComputePaddingHeightWidth with the output size as the 'input' size."""
    _, oh, ow, _ = v.out.shape
    _, kh, kw, _ = v.args[1].shape
    sh, sw = v.attrs["stride"]
    pads = []
    for size, k, s in ((oh, kh, sh), (ow, kw, sw)):
        n = c.out_size(v.attrs["padding"], size, k, s)
        pads.append(c.pad_before(s, 1, size, k, n))
    return pads[0], pads[1]


def reference(args, v: OpView):
    x, w = args[0], args[1]
    in_q, w_q, out_q = v.args[0].quant, v.args[1].quant, v.out.quant
    n, h, wd, ic = x.shape
    oc, kh, kw, _ = w.shape
    _, oh, ow, _ = v.out.shape
    sh, sw = v.attrs["stride"]
    pt, pl = padding_hw(v)
    s16 = _s16.is_16x8(v)
    rows = (x.astype(np.int64) - (0 if s16 else in_q.zp)).reshape(n * h * wd, ic)
    # Scratch covering every position any input element reaches, output origin at (pt, pl).
    sy = max((h - 1) * sh + kh, pt + oh)
    sx = max((wd - 1) * sw + kw, pl + ow)
    scratch = np.zeros((n, sy, sx, oc), dtype=np.int64)
    for ky in range(kh):
        for kx in range(kw):
            contrib = c.exact_matmul(rows, w[:, ky, kx, :].T).reshape(n, h, wd, oc)
            scratch[:, ky:ky + (h - 1) * sh + 1:sh, kx:kx + (wd - 1) * sw + 1:sw, :] += contrib
    acc = scratch[:, pt:pt + oh, pl:pl + ow, :]
    bias = args[2].astype(np.int64) if len(args) > 2 else None
    mult, shift = c.per_channel_multipliers(in_q.s, w_q.scale, out_q.s, oc)
    lo, hi = c.act_range(v)
    if s16:
        return _s16.requantize(acc, bias, True, mult, shift, lo, hi)
    if bias is not None:
        acc = acc + bias
    return c.requantize_clamp(acc, mult, shift, out_q.zp, lo, hi)


def shapes_match(v: OpView) -> str | None:
    """Weights must be [OC, KH, KW, IC] with IC the input's channels, and output_shape a 4-D
    [N, H, W, OC] with the input's batch."""
    x, w, out = v.args[0].shape, v.args[1].shape, tuple(v.attrs["output_shape"])
    if len(w) != 4 or len(out) != 4 or len(x) != 4:
        return f"input {list(x)}, weights {list(w)}, output_shape {list(out)}"
    if w[3] != x[3] or out[3] != w[0] or out[0] != x[0]:
        return f"input {list(x)}, weights {list(w)}, output_shape {list(out)}"
    if min(out) < 1:
        return f"output_shape {list(out)}"
    return None


def weights_quant(v: OpView) -> str | None:
    """Weights must be int8 with zero point 0 (symmetric), per tensor or per output channel (axis 0)."""
    return _nn.weight_quant(v, 0, v.args[1].shape[0] if v.args[1].rank else 0)


def bias_per_channel(v: OpView) -> str | None:
    """The bias, when present, must have one element per output channel."""
    n, channels = (v.args[2].size if len(v.args) > 2 else None), (v.args[1].shape[0] if v.args[1].rank else 0)
    return None if n is None or n == channels else f"bias has {n} elements for {channels} output channels"


def positive_stride(v: OpView) -> str | None:
    """Strides must be at least 1."""
    return None if _nn.positive(*v.attrs["stride"]) else f"stride {v.attrs['stride']}"


def input_lands_in_output(v: OpView) -> str | None:
    """Each input row and column must land inside the output ((in - 1) * stride < out, as in every
    transposed convolution that inverts a convolution)."""
    x, out = v.args[0].shape, tuple(v.attrs["output_shape"])
    if len(x) != 4 or len(out) != 4:
        return None  # reported by shapes_match
    (sh, sw), (h, w), (oh, ow) = v.attrs["stride"], x[1:3], out[1:3]
    if (h - 1) * sh < oh and (w - 1) * sw < ow:
        return None
    return f"input {h}x{w} with stride {sh}x{sw} reaches beyond the {oh}x{ow} output"


def lower_c(call) -> CKernel:
    """mcu_transpose_conv_s8 (mcu_transpose_conv_s16 for 16x8): shapes, the reference's padding (on
    the output size), offsets (0 for 16x8), clamp, per-channel multipliers and shifts; int32 (int64 for
    16x8) accumulators for the scatter in scratch."""
    x, w, out = call.args[0].type, call.args[1].type, call.type
    n, h, wd, ic = x.shape
    oc, kh, kw, _ = w.shape
    _, oh, ow, _ = out.shape
    mult, shift = c.per_channel_multipliers(x.quant.s, w.quant.scale, out.quant.s, oc)
    pt, pl = padding_hw(OpView(tuple(a.type for a in call.args), out, call.attrs))
    lo, hi = c.act_clamp(call)
    sh, sw = call.attrs["stride"]
    s8 = x.dtype == "int8"
    params = {"batches": n, "in_h": h, "in_w": wd, "in_c": ic, "out_h": oh, "out_w": ow, "out_c": oc,
              "k_h": kh, "k_w": kw, "stride_h": sh, "stride_w": sw, "pad_top": pt, "pad_left": pl,
              "input_offset": -x.quant.zp if s8 else 0, "output_offset": out.quant.zp if s8 else 0,
              "act_min": lo, "act_max": hi}
    function, source = _s16.lower_names("mcu_transpose_conv", call)
    return CKernel(function, source, "mcu_transpose_conv_params", params,
                   {"multiplier": mult.astype(np.int32), "shift": shift.astype(np.int32)}, op_args=3,
                   scratch=kernel_size("c", f"{source.upper()}_SCRATCH_BYTES", n, oh, ow, oc))


def macs(v: OpView) -> int:
    """Every input element scatters a whole kernel."""
    oc, kh, kw, _ = v.args[1].shape
    return v.args[0].size * oc * kh * kw


register(OpDef(
    name="transpose_conv",
    tflm="transpose_conv.cc, reference_integer_ops::TransposeConv",
    kind=OpKind.COMPLEX,
    doc="Transposed 2-D convolution (deconvolution), NHWC input, [OC, KH, KW, IC] weights, constant "
        "output shape, any stride, SAME/VALID padding; int8 or 16x8.",
    infer=infer,
    reference=reference,
    checks=(_s16.int8_or_int16_activations, c.quantized_per_tensor_io, c.rank4_input, shapes_match, weights_quant,
            _s16.int64_bias_only, bias_per_channel, positive_stride, input_lands_in_output,
            c.supported_fused_activation, _s16.rescale_below_2_30, c.fused_clamp_fits_int32,
            _s16.accumulator_within_2_47),
    tflite={"TRANSPOSE_CONV": parse},
    portable=Portable(lower_c),
    fuses_activation=True,
    macs=macs,
))
