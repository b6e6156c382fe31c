"""Shared pieces for op entries: option decoding, padding arithmetic, common support checks and
integer helpers. Not an op module itself (the leading underscore keeps it out of the registry scan)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import OpView
from mcuforge.ir.types import TensorType

ACTIVATIONS = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}
QUANTIZABLE_ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


def activation(opts: Any) -> str:
    """The fused activation named in an options table (NONE when there is no table)."""
    if opts is None or not hasattr(opts, "FusedActivationFunction"):
        return "NONE"
    code = int(opts.FusedActivationFunction())
    return ACTIVATIONS.get(code, f"UNKNOWN_{code}")


def padding(opts: Any) -> str:
    return "SAME" if int(opts.Padding()) == 0 else "VALID"


def window_attrs(opts: Any) -> dict[str, Any]:
    """stride, dilation, padding and fused activation of a Conv2DOptions/DepthwiseConv2DOptions table."""
    return {
        "stride": (int(opts.StrideH()), int(opts.StrideW())),
        "dilation": (int(opts.DilationHFactor()), int(opts.DilationWFactor())),
        "padding": padding(opts),
        "activation": activation(opts),
    }


def weights_and_bias(ctx) -> list:
    """The data, weights and (when present) bias inputs of a conv-like operator."""
    b = ctx.inputs[2] if len(ctx.inputs) > 2 else None
    return [ctx.inputs[0], ctx.inputs[1]] + ([b] if b is not None else [])


def out_size(padding_kind: str, image: int, filt: int, stride: int, dilation: int = 1) -> int:
    """TFLite's ComputeOutSize."""
    eff = (filt - 1) * dilation + 1
    if padding_kind == "SAME":
        return (image + stride - 1) // stride
    return (image + stride - eff) // stride


def pad_before(stride: int, dilation: int, in_size: int, filt: int, out: int) -> int:
    """TFLite's ComputePaddingWithOffset: padding before the first element (the odd extra goes after)."""
    eff = (filt - 1) * dilation + 1
    total = max((out - 1) * stride + eff - in_size, 0)
    return total // 2


def act_range(view: OpView, key: str = "activation") -> tuple[int, int]:
    q = view.out.quant
    assert q is not None
    return quant.activation_range(view.attrs.get(key, "NONE"), q.s, q.zp, view.out.dtype)


def broadcast_problem(shapes: Sequence[tuple[int, ...]], out_rank: int, max_rank: int) -> str | None:
    """The detail of why `shapes` do not broadcast (numpy rules) within `max_rank` dimensions (the
    output's rank counts too), or None."""
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return f"shapes {' and '.join(str(list(s)) for s in shapes)} do not broadcast"
    rank = max(out_rank, *(len(s) for s in shapes))
    return None if rank <= max_rank else f"rank {rank}"


def act_clamp(call) -> tuple[int, int]:
    """A call's fused activation as an integer clamp in its output's quantized domain."""
    q = call.type.quant
    return quant.activation_range(call.attrs.get("activation", "NONE"), q.s, q.zp, call.type.dtype)


@dataclass(frozen=True)
class Window:
    """The geometry of a windowed op (convolution, depthwise convolution, pooling) on an NHWC
    input: shapes, kernel size, strides, dilation and the padding before the first row and column
    as TFLite places SAME padding (0 for VALID). Built once, by `window`, for every lowering."""

    batches: int
    in_h: int
    in_w: int
    in_c: int
    out_h: int
    out_w: int
    out_c: int
    k_h: int
    k_w: int
    stride_h: int
    stride_w: int
    dil_h: int
    dil_w: int
    pad_top: int
    pad_left: int

    def fields(self, *names: str) -> dict[str, int]:
        """The named fields (all of them when none are named), as kernel parameters."""
        return {n: getattr(self, n) for n in (names or self.__dataclass_fields__)}


def window(call, k_h: int, k_w: int) -> Window:
    """The Window of a call whose attributes hold `stride` and (optionally) `dilation`."""
    n, h, w, ch = call.args[0].type.shape
    _, oh, ow, oc = call.type.shape
    (sh, sw), (dh, dw) = call.attrs["stride"], call.attrs.get("dilation", (1, 1))
    return Window(n, h, w, ch, oh, ow, oc, k_h, k_w, sh, sw, dh, dw,
                  pad_before(sh, dh, h, k_h, oh), pad_before(sw, dw, w, k_w, ow))


def per_channel_multipliers(in_scale: float, filter_scales: Sequence[float], out_scale: float,
                            channels: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-output-channel (multiplier, shift) as TFLM's PopulateConvolutionQuantizationParams:
    effective scale = double(input_scale) * double(filter_scale) / double(output_scale)."""
    fs = np.asarray(filter_scales, dtype=np.float32).astype(np.float64)
    if fs.size == 1:
        fs = np.repeat(fs, channels)
    pairs = [quant.quantize_multiplier(float(np.float64(in_scale) * s / np.float64(out_scale))) for s in fs]
    return np.array([m for m, _ in pairs], dtype=np.int64), np.array([s for _, s in pairs], dtype=np.int64)


def requantize_clamp(acc: np.ndarray, mult: Any, shift: Any, out_zp: int, lo: int, hi: int,
                     dtype: str = "int8") -> np.ndarray:
    """acc (int32) -> MultiplyByQuantizedMultiplier -> + output zero point -> clamp to [lo, hi]."""
    out = quant.multiply_by_quantized_multiplier(acc, mult, shift) + out_zp
    return np.clip(out, lo, hi).astype(np.dtype(dtype))


def exact_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer matrix product through float64 BLAS: exact while every partial sum stays below 2**53,
    which holds for int8 x int8 products (< 2**16 each) over fewer than 2**37 terms."""
    return np.rint(a.astype(np.float64) @ b.astype(np.float64)).astype(np.int64)


# ---- support checks (docstrings are the user-facing sentences) -------------------------------------

def int8_activations(v: OpView) -> str | None:
    """Input and output activations must be int8."""
    bad = [f"{t.dtype}" for t in (v.args[0], v.out) if t.dtype != "int8"]
    return None if not bad else f"got {', '.join(sorted(set(bad)))}"


def all_int8_activations(v: OpView) -> str | None:
    """All non-constant inputs and the output must be int8."""
    bad = {t.dtype for t in (*v.args, v.out) if t.dtype != "int8"}
    return None if not bad else f"got {', '.join(sorted(bad))}"


def quantized_per_tensor_io(v: OpView) -> str | None:
    """Input and output must carry per-tensor quantization parameters."""
    for what, t in (("input", v.args[0]), ("output", v.out)):
        if t.quant is None:
            return f"{what} is not quantized"
        if t.quant.per_channel:
            return f"{what} is quantized per channel"
    return None


def supported_fused_activation(v: OpView) -> str | None:
    """The fused activation must be NONE, RELU, RELU6 or RELU_N1_TO_1."""
    act = v.attrs.get("activation", "NONE")
    return None if act in QUANTIZABLE_ACTIVATIONS else f"got {act}"


def fused_clamp_fits_int32(v: OpView) -> str | None:
    """A fused RELU6 or RELU_N1_TO_1 needs its clamp bounds, the output zero point plus round(6 / output
    scale) (or round(+-1 / output scale)), within int32: TFLM refuses the model otherwise (the pooling
    ops instead leave the bound unset: undefined)."""
    act, q = v.attrs.get("activation", "NONE"), v.out.quant
    if act not in ("RELU6", "RELU_N1_TO_1") or q is None or q.per_channel:
        return None  # other activations and quantizations are reported by other checks
    return clamp_detail(act, q.s, q.zp)


def clamp_detail(act: str, scale: float, zp: int) -> str | None:
    """What is wrong with the clamp bounds of activation `act` at (scale, zero point), or None."""
    bad = [b for b in quant.ACTIVATION_BOUNDS[act] if b and quant.clamp_bound(b, scale, zp) is None]
    return None if not bad else f"{act}: {bad[0]:g} / {scale:.6g} does not fit in int32"


def left_shift_detail(shifts: Any, what: str = "the multiplier") -> str | None:
    """None when every requantization shift is at most quant.MAX_LEFT_SHIFT, else what is wrong."""
    worst = int(np.max(shifts))
    return None if worst <= quant.MAX_LEFT_SHIFT else f"{what} has exponent {worst}"


def rescale_below_2_30(v: OpView) -> str | None:
    """The requantization multiplier, input scale x weight scale / output scale, must be below 2^30
    for every output channel: TFLM shifts the accumulator left by the multiplier's exponent in
    int32, which is undefined from a shift of 31."""
    x, w, out = v.args[0].quant, v.args[1].quant, v.out.quant
    if x is None or w is None or out is None or x.per_channel or out.per_channel:
        return None  # reported by other checks
    _, shift = per_channel_multipliers(x.s, w.scale, out.s, len(w.scale))
    return left_shift_detail(shift, "a channel's multiplier")


def batch_one(v: OpView) -> str | None:
    """Batch size must be 1."""
    return None if v.args[0].shape[0] == 1 else f"batch is {v.args[0].shape[0]}"


def rank4_input(v: OpView) -> str | None:
    """Input must be a 4-D NHWC tensor."""
    return None if v.args[0].rank == 4 else f"input has rank {v.args[0].rank}"


def symmetric_weights(v: OpView) -> str | None:
    """Weights must be int8 with zero point 0 (symmetric), per-tensor or per output channel."""
    w = v.args[1]
    if w.dtype != "int8":
        return f"weights are {w.dtype}"
    if w.quant is None:
        return "weights are not quantized"
    if any(z != 0 for z in w.quant.zero_point):
        return "a weight zero point is not 0"
    return None


def int32_bias(v: OpView) -> str | None:
    """The bias, when present, must be int32."""
    if len(v.args) > 2 and v.args[2].dtype != "int32":
        return f"bias is {v.args[2].dtype}"
    return None


def same_quant(a: TensorType, b: TensorType) -> bool:
    return a.quant is not None and b.quant is not None and a.quant.scale == b.quant.scale \
        and a.quant.zero_point == b.quant.zero_point


def fold_pad_into_same(call, ctx):
    """Shared legalization of PAD -> conv (VALID): when the PAD fills with what the conv's padding
    stands for (the zero point for int8, a raw 0 for 16x8 layers, which ignore zero points) on H and W
    only and places its padding exactly as TFLite's SAME padding would, the conv reads the unpadded
    input with SAME padding instead (padding then contributes 0, exactly as the zero-point fill did).
    Returns the new call, or None where that is not equivalent (the PAD stays)."""
    from dataclasses import replace

    from mcuforge.ir.expr import Call as _Call

    pad = call.args[0]
    if not isinstance(pad, _Call) or pad.op != "pad" or call.attrs.get("padding") != "VALID":
        return None
    x = pad.args[0]
    pads = pad.attrs["paddings"]
    if len(pads) != 4 or pads[0] != (0, 0) or pads[3] != (0, 0):
        return None
    if x.type.quant is None or pad.type.quant is None or x.type.quant != pad.type.quant:
        return None
    fill = pad.attrs.get("pad_value")
    if fill is None:  # PAD: the zero point for int8, a raw 0 otherwise (pad.py)
        fill = pad.type.quant.zp if pad.type.dtype == "int8" else 0
    if fill != (x.type.quant.zp if x.type.dtype == "int8" else 0):  # what the conv's padding reads as
        return None
    w = call.args[1].type.shape
    kh, kw = (w[1], w[2])
    (sh, sw), (dh, dw) = call.attrs["stride"], call.attrs.get("dilation", (1, 1))
    _, h, wd, _ = x.type.shape
    _, oh, ow, _ = call.type.shape
    if (out_size("SAME", h, kh, sh, dh), out_size("SAME", wd, kw, sw, dw)) != (oh, ow):
        return None
    if (pad_before(sh, dh, h, kh, oh), pad_before(sw, dw, wd, kw, ow)) != (pads[1][0], pads[2][0]):
        return None
    return replace(call, args=(x, *call.args[1:]), attrs={**call.attrs, "padding": "SAME"},
                   sources=pad.sources + call.sources)


def same_dtype_rule(dtypes: Sequence[str], first: str = "input"):
    """A check that the first argument and the output share one element type out of `dtypes`; its
    docstring (the rule users read) names them."""
    names = list(dtypes)
    listed = f"{names[0]} or {names[1]}" if len(names) == 2 else \
        f"one of {', '.join(names[:-1])} or {names[-1]}" if len(names) > 2 else names[0]

    def same_dtype(v: OpView) -> str | None:
        a, o = v.args[0].dtype, v.out.dtype
        if a != o:
            return f"{first} is {a}, output {o}"
        return None if a in names else f"got {a}"

    subject = "Input" if first == "input" else f"The {first}"
    same_dtype.__doc__ = f"{subject} and output must have the same element type, {listed}."
    return same_dtype
