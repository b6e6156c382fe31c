"""FULLY_CONNECTED: matrix product of the input, seen as [batches, depth] rows, with int8 weights
[units, depth], a fused activation and an optional bias: int8 activations with an int32 bias, or int16
activations (16x8) with an int64 or int32 bias.

TFLM reference kernels (fully_connected.cc, reference_integer_ops::FullyConnected[PerChannel]):
- per-tensor weights: acc = sum((w - w_zp) * (x - x_zp)) + bias; one multiplier from
  double(input_scale) * double(weight_scale) / double(output_scale);
- per-channel weights (one scale per unit): acc = sum(w * (x - x_zp)) + bias (the weight zero
  point is not applied), one multiplier per unit from the same double expression.
Then MultiplyByQuantizedMultiplier, + output zero point, clamp to the activation range.
16x8 (the int16 overloads, _s16.py): the same products on the raw inputs (the input and output zero
points are ignored; the per-tensor weight offset still applies), an int64 accumulator with an int64
bias or none, an int32 one with an int32 bias, and no output zero point.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _s16

WEIGHTS_FORMATS = {0: "DEFAULT", 1: "SHUFFLED4x16INT8"}


def parse(ctx):
    o = ctx.options()
    x, w = ctx.inputs[0], ctx.inputs[1]
    b = ctx.inputs[2] if len(ctx.inputs) > 2 else None
    args = [x, w] + ([b] if b is not None else [])
    fmt = int(o.WeightsFormat()) if o is not None else 0
    attrs = {
        "activation": c.activation(o),
        "keep_num_dims": bool(o.KeepNumDims()) if o is not None else False,
        "weights_format": WEIGHTS_FORMATS.get(fmt, f"UNKNOWN_{fmt}"),
        **_s16.bound_attrs(args, 0),
    }
    return args, attrs


def infer(args, attrs):
    x, w = args[0], args[1]
    units, depth = w.shape[0], w.shape[-1]
    if attrs["keep_num_dims"]:
        return (*x.shape[:-1], units), x.dtype
    return (x.size // depth, units), x.dtype


def reference(args, v: OpView):
    x, w = args[0], args[1]
    in_q, w_q, out_q = v.args[0].quant, v.args[1].quant, v.out.quant
    units, depth = w.shape[0], w.shape[-1]
    s16 = _s16.is_16x8(v)
    rows = (x.astype(np.int64) - (0 if s16 else in_q.zp)).reshape(-1, depth)
    wt = w.astype(np.int64).reshape(units, depth)
    if not w_q.per_channel:
        wt = wt - w_q.zp  # TFLM applies the weight offset only on the per-tensor path
    acc = c.exact_matmul(rows, wt.T)
    bias = args[2].astype(np.int64).reshape(units) if len(args) > 2 else None
    mult, shift = c.per_channel_multipliers(in_q.s, w_q.scale, out_q.s, units)
    lo, hi = c.act_range(v)
    if s16:
        wide = _s16.wide_accumulator(_s16.bias_dtype(v))
        return _s16.requantize(acc, bias, wide, mult, shift, lo, hi).reshape(v.out.shape)
    if bias is not None:
        acc = acc + bias
    return c.requantize_clamp(acc, mult, shift, out_q.zp, lo, hi).reshape(v.out.shape)


# ---- support checks -------------------------------------------------------------------------------

def default_weights_format(v: OpView) -> str | None:
    """Weights must use the DEFAULT format (shuffled weight layouts are not supported)."""
    fmt = v.attrs.get("weights_format", "DEFAULT")
    return None if fmt == "DEFAULT" else f"got {fmt}"


def weights_2d(v: OpView) -> str | None:
    """Weights must be a 2-D [units, depth] tensor, and the input's size a multiple of depth (its last
    dimension equal to depth when keep_num_dims is set)."""
    w, x = v.args[1], v.args[0]
    if w.rank != 2:
        return f"weights have shape {list(w.shape)}"
    depth = w.shape[1]
    if depth == 0 or x.size % depth:
        return f"input of {x.size} elements, weights depth {depth}"
    if v.attrs.get("keep_num_dims") and (x.rank == 0 or x.shape[-1] != depth):
        return f"keep_num_dims with input {list(x.shape)} and weights depth {depth}"
    return None


def weights_int8(v: OpView) -> str | None:
    """Weights must be int8, quantized per tensor or per output unit (axis 0); per-unit weights must be
    symmetric (zero point 0)."""
    w = v.args[1]
    if w.dtype != "int8":
        return f"weights are {w.dtype}"
    q = w.quant
    if q is None:
        return "weights are not quantized"
    if q.per_channel:
        if q.axis != 0 or len(q.scale) != w.shape[0]:
            return f"{len(q.scale)} scales on axis {q.axis} for {w.shape[0]} units"
        if any(z != 0 for z in q.zero_point):
            return "a per-unit weight zero point is not 0"
    return None


def bias_units(v: OpView) -> str | None:
    """The bias, when present, must have one element per output unit."""
    if len(v.args) < 3:
        return None
    b, units = v.args[2], v.args[1].shape[0]
    return None if b.size == units else f"bias has {b.size} elements for {units} units"


def bias_scale_close(v: OpView) -> str | None:
    """With per-tensor weights, the bias scale must equal input_scale * weight_scale to within 2% of
    the output scale, as TFLM checks when preparing the kernel."""
    q = v.args[1].quant
    if len(v.args) < 3 or q is None or q.per_channel or v.args[0].quant is None or v.out.quant is None:
        return None
    bq = v.args[2].quant
    bias_scale = float(bq.scale[0]) if bq is not None else 0.0
    prod = float(v.args[0].quant.s) * float(q.s)
    diff = abs(prod - bias_scale) / float(v.out.quant.s)
    return None if diff <= 0.02 else f"bias scale {bias_scale:.6g}, input*weight scale {prod:.6g}"


def lower_c(call) -> CKernel:
    """mcu_fully_connected_s8 (mcu_fully_connected_s16[_acc32] for 16x8): rows/depth/units, offsets
    (TFLM applies the weight zero point on the per-tensor path only; 16x8 ignores the input and output
    ones), clamp, per-unit multipliers and shifts."""
    x, w, out = call.args[0].type, call.args[1].type, call.type
    units, depth = w.shape[0], w.shape[-1]
    mult, shift = c.per_channel_multipliers(x.quant.s, w.quant.scale, out.quant.s, units)
    lo, hi = c.act_clamp(call)
    s8 = x.dtype == "int8"
    params = {"rows": x.size // depth, "depth": depth, "units": units, "input_offset": -x.quant.zp if s8 else 0,
              "weight_offset": 0 if w.quant.per_channel else -w.quant.zp,
              "output_offset": out.quant.zp if s8 else 0, "act_min": lo, "act_max": hi}
    function, source = _s16.lower_names("mcu_fully_connected", call)
    return CKernel(function, source, "mcu_fully_connected_params", params,
                   {"multiplier": mult.astype(np.int32), "shift": shift.astype(np.int32)}, op_args=3)


def macs(v: OpView) -> int:
    return v.out.size * v.args[1].shape[-1]


register(OpDef(
    name="fully_connected",
    tflm="fully_connected.cc, reference_integer_ops::FullyConnected / FullyConnectedPerChannel",
    kind=OpKind.COMPLEX,
    doc="Fully connected layer: input rows [batches, depth] times int8 weights [units, depth], "
        "per-tensor or per-unit weight scales, optional bias, keep_num_dims; int8 or 16x8.",
    infer=infer,
    reference=reference,
    checks=(_s16.int8_or_int16_activations, c.quantized_per_tensor_io, default_weights_format, weights_2d,
            weights_int8, _s16.conv_bias, bias_units, bias_scale_close, c.supported_fused_activation,
            _s16.rescale_below_2_30, c.fused_clamp_fits_int32, _s16.accumulator_within_2_47),
    tflite={"FULLY_CONNECTED": parse},
    portable=Portable(lower_c),
    fuses_activation=True,
    macs=macs,
))
