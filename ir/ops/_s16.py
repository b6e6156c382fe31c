"""16x8 quantization (int16 activations, int8 weights): what the conv-like ops share.

TensorFlow Lite Micro runs CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and TRANSPOSE_CONV on int16
activations with int8 weights through the int16 overloads of its reference kernels
(reference_integer_ops::ConvPerChannel, DepthwiseConvPerChannel, FullyConnected[PerChannel],
TransposeConv, all templated on the accumulator type). Unlike their int8 versions they:

* ignore the input and the output zero points: the accumulator sums raw `x * w` products and the
  requantized value is clamped without adding the output zero point (the fused activation's clamp
  bounds are still computed from the output zero point, as CalculateActivationRangeQuantized does).
  FULLY_CONNECTED with per-tensor weights still adds the weight offset: `(w - w_zp) * x`;
* accumulate in int64 when the bias is int64 or absent, and requantize with the int64 overload of
  MultiplyByQuantizedMultiplier (the multiplier rounded to Q0.15, one rounding shift by
  15 - shift, the result truncated to int32: quant.multiply_by_quantized_multiplier_int64);
* accumulate in int32 (wrapping) when the bias is int32 -- CONV_2D and FULLY_CONNECTED only: the
  depthwise and transposed convolutions read any bias as int64, so an int32 bias is refused there --
  and requantize with the int32 MultiplyByQuantizedMultiplier (double rounding), as int8 layers do.

These rules were read from TFLM's sources (conv.cc, depthwise_conv.cc, fully_connected.cc,
transpose_conv.cc and the integer_ops headers) and confirmed against the tflite-micro interpreter
(tests/ops/test_int16_nn.py). Not an op module (the leading underscore keeps it out of the registry
scan).
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import OpView

from . import _common as c

ACTIVATION_DTYPES = ("int8", "int16")
INT16_MAX_ABS = 1 << 15  # the largest |x| of an int16 activation


def is_16x8(v: OpView) -> bool:
    return v.args[0].dtype == "int16"


def bias_dtype(v: OpView) -> str | None:
    return v.args[2].dtype if len(v.args) > 2 else None


def wide_accumulator(bias: str | None) -> bool:
    """TFLM accumulates a 16x8 layer in int64 with an int64 bias or none, in int32 with an int32 bias."""
    return bias != "int32"


def requantize(acc: np.ndarray, bias: np.ndarray | None, wide: bool, mult, shift, lo: int, hi: int) -> np.ndarray:
    """The end of TFLM's 16x8 conv-like kernels: acc (exact, int64) + bias, requantized by the int64
    (wide) or the int32 (wrapping, double rounding) MultiplyByQuantizedMultiplier, clamped to
    [lo, hi], without an output zero point."""
    acc = np.asarray(acc, dtype=np.int64)
    if bias is not None:
        acc = acc + np.asarray(bias, dtype=np.int64)
    if wide:
        out = quant.multiply_by_quantized_multiplier_int64(acc, mult, shift)
    else:
        out = quant.multiply_by_quantized_multiplier(quant.wrap_int32(acc), mult, shift)
    return np.clip(out, lo, hi).astype(np.int16)


# ---- support checks (docstrings are the user-facing sentences) -------------------------------------

def int8_or_int16_activations(v: OpView) -> str | None:
    """Input and output activations must both be int8, or both int16 (with int8 weights where the op
    has weights: 16x8)."""
    x, out = v.args[0].dtype, v.out.dtype
    if x == out:
        return None if x in ACTIVATION_DTYPES else f"got {x}"
    return f"input {x}, output {out}"


def conv_bias(v: OpView) -> str | None:
    """The bias, when present, must be int32 with int8 activations, int64 or int32 with int16
    activations."""
    b = bias_dtype(v)
    if b is None:
        return None
    allowed = ("int64", "int32") if is_16x8(v) else ("int32",)
    return None if b in allowed else f"bias is {b} with {v.args[0].dtype} activations"


def int64_bias_only(v: OpView) -> str | None:
    """The bias, when present, must be int32 with int8 activations and int64 with int16 activations
    (TFLM's 16x8 kernel reads the bias as int64 whatever its type)."""
    b = bias_dtype(v)
    if b is None:
        return None
    want = "int64" if is_16x8(v) else "int32"
    return None if b == want else f"bias is {b} with {v.args[0].dtype} activations"


def rescale_below_2_30(v: OpView) -> str | None:
    """The requantization multiplier, input scale x weight scale / output scale, must be below 2^30
    for every output channel (TFLM shifts the accumulator left by its exponent in int32, undefined
    from a shift of 31), and below 2^14 for a 16x8 layer accumulating in int64 (TFLM's int64
    requantization shifts right by 15 minus the exponent, undefined from an exponent of 15)."""
    x, w, out = v.args[0].quant, v.args[1].quant, v.out.quant
    if x is None or w is None or out is None or x.per_channel or out.per_channel:
        return None  # reported by other checks
    _, shift = c.per_channel_multipliers(x.s, w.scale, out.s, len(w.scale))
    if is_16x8(v) and wide_accumulator(bias_dtype(v)):
        worst = int(np.max(shift))
        return None if worst <= quant.MAX_LEFT_SHIFT_64 else f"a channel's multiplier has exponent {worst}"
    return c.left_shift_detail(shift, "a channel's multiplier")


def accumulator_within_2_47(v: OpView) -> str | None:
    """A 16x8 layer's int64 accumulator must stay within +-2^47 (TFLM's int64 requantization
    assumes it): |bias| plus 32768 times the sum of |weights| of any output, as far as the bias
    bound recorded at import shows."""
    bound = v.attrs.get("acc_bound")
    if bound is None or not is_16x8(v) or not wide_accumulator(bias_dtype(v)):
        return None
    return None if bound < quant.INT64_ACC_LIMIT else f"an accumulator may reach {bound}"


def accumulator_bound(weights: np.ndarray, bias: np.ndarray | None, channel_axis: int) -> int:
    """The largest |accumulator| a 16x8 layer can reach: over its output channels, 32768 times the
    sum of the channel's |weights| plus |bias| (every weight is read at most once per output)."""
    w = np.abs(np.moveaxis(np.asarray(weights, dtype=np.int64), channel_axis, 0))
    per_channel = w.reshape(w.shape[0], -1).sum(axis=1).astype(np.float64) * INT16_MAX_ABS
    if bias is not None:  # float64: exact up to 2**53, far beyond the 2**47 limit checked
        per_channel = per_channel + np.abs(np.asarray(bias).astype(np.float64).reshape(-1))
    return int(per_channel.max()) if per_channel.size else 0


def bound_attrs(args, channel_axis: int) -> dict[str, int]:
    """At import, for a 16x8 layer with arguments (input, constant weights[, constant bias]):
    {"acc_bound": the largest |accumulator| it can reach} for accumulator_within_2_47; nothing for
    other layers."""
    from mcuforge.ir.expr import Constant

    x, w, b = args[0], args[1], (args[2] if len(args) > 2 else None)
    if x is None or x.type.dtype != "int16" or not isinstance(w, Constant):
        return {}
    if b is not None and not isinstance(b, Constant):
        return {}
    return {"acc_bound": accumulator_bound(w.data, b.data if b is not None else None, channel_axis)}


def lower_names(base: str, call) -> tuple[str, str]:
    """(function, source) of a conv-like layer's portable kernel: mcu_<op>_s8, or mcu_<op>_s16 (int64
    bias or none) / mcu_<op>_s16_acc32 (int32 bias) in mcu_<op>_s16.c."""
    if call.args[0].type.dtype != "int16":
        return f"{base}_s8", f"{base}_s8"
    wide = wide_accumulator(call.args[2].type.dtype if len(call.args) > 2 else None)
    return (f"{base}_s16" if wide else f"{base}_s16_acc32"), f"{base}_s16"
