"""The `cmsis-nn` target: mcuforge's own optimized int8 kernels in the CMSIS-NN style.

Composites: conv2d, depthwise conv2d, fully connected, average and max pool, add, mul, softmax,
each with its support check. Lowering picks the kernel variant and precomputes what it reads:

- per-channel multipliers and shifts (TFLM's derivation, ir/ops/_common.py);
- for convolutions and fully connected layers, biases folded with the input zero point:
  acc = sum(x * w) + bias', where bias' = bias + input_offset * sum(w). This is exact integer
  algebra once padding is filled with the input zero point (a padded tap then adds zp * w, which
  the fold cancels: (zp + offset) = 0), so the inner loops multiply raw int8 values with no offset
  addition. Depthwise kernels keep the layer's bias and TFLM's (x + input_offset) * w: their DSP
  path adds the offset for free (SXTAB16) and border pixels skip padded taps without a padded copy
  of the window in RAM;
- weights in their natural layouts (OHWI rows, [KH*KW][OC] depthwise taps, [units][depth]): the
  kernels' SIMD orderings live in their scratch instead. The DSP im2col stores each group of four
  column values as x0 x2 x1 x3, the order SXTB16 / SXTB16 ROR #8 unpack a weight word into, and
  the MVE path multiplies int8 columns with the int8 rows directly; so one weight layout serves
  the plain, DSP and MVE builds of the same generated C;
- the element-wise and softmax constants (ADD's three multipliers, MUL's multiplier, SOFTMAX's
  input multiplier and diff_min) through the registry's own derivations;
- for the DSP paths, `rq`: per output channel a fast requantization record {m, add, right}
  (mcu_cmsis_rq in mcu_cmsis_dsp.h), emitted only when requant_records proves it exact over the
  layer's accumulator bounds (acc_bounds: weights, bias and the int8 input range); and for ADD,
  `table`: each input's rescaled value for all 256 int8 values.

The kernel models below compute from exactly those parameters and constants, so a wrong
precomputation fails `verify --on reference` before any C runs; the C kernels (plain, DSP and
Helium paths) must match the models bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.expr import Call, Constant, Expr, Function
from mcuforge.ir.ops import _common as c
from mcuforge.ir.ops import _fixedpoint as fp
from mcuforge.ir.ops import add_sub, mul, softmax
from mcuforge.ir.ops.conv_2d import windows
from mcuforge.ir.registry import get_op

from ..kernel import KernelCall, OpInfo
from ..patterns import Composite, PatternEntry, const, op, wildcard
from ..target import Target, register_target
from . import c as portable

NAME = "cmsis-nn"


# ---- support checks (docstrings are the rules) -------------------------------------------------------

def _int8_io(caps: dict[str, Expr]) -> str | None:
    root = caps["root"]
    bad = {a.type.dtype for a in root.args if not isinstance(a, Constant)} | {root.type.dtype}
    return None if bad == {"int8"} else f"types {sorted(bad)}"


def conv_check(caps: dict[str, Expr]) -> str | None:
    """int8 activations, symmetric int8 weights, batch 1."""
    root = caps["root"]
    w = caps["weights"].type
    if _int8_io(caps):
        return _int8_io(caps)
    if w.dtype != "int8" or w.quant is None or any(z != 0 for z in w.quant.zero_point):
        return "weights not symmetric int8"
    if root.args[0].type.shape[0] != 1:
        return "batch > 1"
    if root.attrs.get("activation") not in c.QUANTIZABLE_ACTIVATIONS:
        return "activation"
    return None


def fc_check(caps: dict[str, Expr]) -> str | None:
    """int8 activations, symmetric int8 weights in the default format."""
    root = caps["root"]
    w = caps["weights"].type
    if _int8_io(caps):
        return _int8_io(caps)
    if w.dtype != "int8" or w.quant is None or any(z != 0 for z in w.quant.zero_point):
        return "weights not symmetric int8"
    if root.attrs.get("weights_format", "DEFAULT") != "DEFAULT":
        return "weights format"
    return None


def pool_check(caps: dict[str, Expr]) -> str | None:
    """int8, batch 1."""
    root = caps["root"]
    if _int8_io(caps):
        return _int8_io(caps)
    return None if root.args[0].type.shape[0] == 1 else "batch > 1"


def same_shape_check(caps: dict[str, Expr]) -> str | None:
    """int8, both operands of the output's shape (broadcasting goes to the portable kernels)."""
    root = caps["root"]
    if _int8_io(caps):
        return _int8_io(caps)
    shapes = {a.type.shape for a in root.args}
    return None if shapes == {root.type.shape} else "broadcast"


def softmax_check(caps: dict[str, Expr]) -> str | None:
    """int8 in and out."""
    return _int8_io(caps)


PATTERNS = (
    PatternEntry(Composite.CONV2D, op("conv_2d", wildcard("x"), const("weights"), const("bias", optional=True),
                                      capture="root"), conv_check),
    PatternEntry(Composite.DEPTHWISE_CONV2D, op("depthwise_conv_2d", wildcard("x"), const("weights"),
                                                const("bias", optional=True), capture="root"), conv_check),
    PatternEntry(Composite.FULLY_CONNECTED, op("fully_connected", wildcard("x"), const("weights"),
                                               const("bias", optional=True), capture="root"), fc_check),
    PatternEntry(Composite.AVG_POOL2D, op("average_pool_2d", wildcard("x"), capture="root"), pool_check),
    PatternEntry(Composite.MAX_POOL2D, op("max_pool_2d", wildcard("x"), capture="root"), pool_check),
    PatternEntry(Composite.ADD, op("add", wildcard("a"), wildcard("b"), capture="root"), same_shape_check),
    PatternEntry(Composite.MUL, op("mul", wildcard("a"), wildcard("b"), capture="root"), same_shape_check),
    PatternEntry(Composite.SOFTMAX, op("softmax", wildcard("x"), capture="root"), softmax_check),
)


# ---- shared pieces of the lowerings -----------------------------------------------------------------

@dataclass(frozen=True)
class Lowered:
    """What a composite's lowering decides: the kernel variant and everything it reads."""

    symbol: str
    params: dict[str, Any]
    constants: dict[str, np.ndarray]
    model: Callable[[list[np.ndarray], KernelCall], np.ndarray]
    scratch_bytes: int = 0
    in_place: bool = False


def _act(call: Call) -> tuple[int, int]:
    q = call.type.quant
    return quant.activation_range(call.attrs.get("activation", "NONE"), q.s, q.zp, call.type.dtype)


def _requant_params(call: Call, channels: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Zero points, activation clamp and per-channel (multiplier, shift) of a conv-like op."""
    x, w = call.args[0].type, call.args[1].type
    mult, shift = c.per_channel_multipliers(x.quant.s, w.quant.scale, call.type.quant.s, channels)
    lo, hi = _act(call)
    params = {"input_offset": -x.quant.zp, "output_offset": call.type.quant.zp, "act_min": lo, "act_max": hi}
    return params, {"multiplier": mult.astype(np.int32), "shift": shift.astype(np.int32)}


def _folded_bias(call: Call, wsum: np.ndarray, input_offset: int) -> np.ndarray:
    """bias + input_offset * sum(weights) per output channel, as int32 (wrapping like the C sums)."""
    bias = call.args[2].data.astype(np.int64).reshape(wsum.shape) if len(call.args) > 2 else 0
    return quant.wrap_int32(bias + input_offset * wsum).astype(np.int32)


def _geometry(call: Call, kh: int, kw: int) -> dict[str, int]:
    """Shapes, strides, dilation and (top, left) padding of a windowed op on a batch-1 NHWC input."""
    _, h, w, ch = call.args[0].type.shape
    _, oh, ow, oc = call.type.shape
    (sh, sw) = call.attrs["stride"]
    (dh, dw) = call.attrs.get("dilation", (1, 1))
    return {"in_h": h, "in_w": w, "in_c": ch, "out_h": oh, "out_w": ow, "out_c": oc, "k_h": kh, "k_w": kw,
            "stride_h": sh, "stride_w": sw, "dil_h": dh, "dil_w": dw,
            "pad_top": c.pad_before(sh, dh, h, kh, oh), "pad_left": c.pad_before(sw, dw, w, kw, ow)}


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def acc_bounds(bias: np.ndarray, taps: np.ndarray, x_lo: int, x_hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Per output channel, the smallest and largest accumulator bias + sum(x * w) over inputs x in
    [x_lo, x_hi] (taps: [channels, K] weights). A tap may also add nothing (a depthwise border pixel
    skips its padded taps), so each tap's range includes 0; bounds of the exact integers (int64)."""
    w = taps.astype(np.int64)
    ends = np.stack([w * x_lo, w * x_hi, np.zeros_like(w)])
    b = np.asarray(bias, dtype=np.int64).reshape(-1)
    return b + ends.min(axis=0).sum(axis=1), b + ends.max(axis=0).sum(axis=1)


def requant_records(lo: np.ndarray, hi: np.ndarray, mult: np.ndarray, shift: np.ndarray, out_offset: int,
                    act_min: int, act_max: int) -> np.ndarray | None:
    """The DSP kernels' fast requantization records {m, add, right} per channel (see mcu_cmsis_rq in
    mcu_cmsis_dsp.h), or None when a channel has no proof, the layer then taking the general path.

    For accumulators in [lo, hi] (int32, and no int32 wrap-around in the kernel's sums), a channel
    gets {m, 2^(right-1) + (out_offset << right), right} when right = -shift >= 1, 2 * acc fits in
    int32 (then SMMULR(2 * acc, m) is TFLM's doubling high multiply; with m >= 0 it is monotonic, so
    its extremes bound y) and y + add and y + add - 1 cannot overflow; otherwise {0, 2 * v + 1, 1}
    when the clamped output is one value v over the whole range (requantization is monotonic for
    m >= 0 and no wrap in acc << left)."""
    records = []
    for l, h, m, s in zip(lo.tolist(), hi.tolist(), mult.tolist(), shift.tolist()):
        if not (INT32_MIN <= l <= h <= INT32_MAX) or m < 0:
            return None
        right = -s
        if right >= 1 and -(2**30) <= l and h < 2**30:
            y_lo, y_hi = (int(quant.saturating_rounding_doubling_high_mul(v, m)) for v in (l, h))
            add = (1 << (right - 1)) + (out_offset << right)
            if INT32_MIN <= y_lo + add - 1 and y_hi + add <= INT32_MAX:
                records.append((m, add, right))
                continue
        left = max(s, 0)
        if INT32_MIN <= l << left and h << left <= INT32_MAX:
            v_lo, v_hi = (int(c.requantize_clamp(np.int64(v), m, s, out_offset, act_min, act_max)) for v in (l, h))
            if v_lo == v_hi:
                records.append((0, 2 * v_lo + 1, 1))
                continue
        return None
    return np.array(records, dtype=np.int32).reshape(-1)


def _with_rq(consts: dict[str, np.ndarray], params: Mapping[str, Any], lo: np.ndarray, hi: np.ndarray) -> None:
    """Adds the `rq` constant when requant_records proves the fast path for every channel."""
    rq = requant_records(lo, hi, consts["multiplier"].astype(np.int64), consts["shift"].astype(np.int64),
                         params["output_offset"], params["act_min"], params["act_max"])
    if rq is not None:
        consts["rq"] = rq


def _requant(acc: np.ndarray, kc: KernelCall) -> np.ndarray:
    p, k = kc.params, kc.constants
    return c.requantize_clamp(acc, k["multiplier"].astype(np.int64), k["shift"].astype(np.int64),
                              p["output_offset"], p["act_min"], p["act_max"])


def _filled_windows(x: np.ndarray, p: Mapping[str, Any]) -> np.ndarray:
    """[1, OH, OW, KH, KW, C] windows with padding filled with the input zero point, the value the
    kernels read for a padded tap (it adds nothing once the bias is folded)."""
    attrs = {"stride": (p["stride_h"], p["stride_w"]), "dilation": (p["dil_h"], p["dil_w"])}
    return windows(x.astype(np.int64), p["k_h"], p["k_w"], attrs, (p["out_h"], p["out_w"]),
                   fill=-p["input_offset"])


# ---- CONV_2D --------------------------------------------------------------------------------------

def conv_uses_1x1(call: Call) -> bool:
    """1x1 filters read input pixels in place, no im2col (any stride: a 1x1 window is never padded)."""
    _, kh, kw, _ = call.args[1].type.shape
    return (kh, kw) == (1, 1)


def lower_conv(call: Call) -> Lowered:
    w = call.args[1].data
    oc, kh, kw, ic = w.shape
    params, consts = _requant_params(call, oc)
    params.update(_geometry(call, kh, kw))
    w2d = w.reshape(oc, kh * kw * ic)
    consts["bias"] = _folded_bias(call, w2d.astype(np.int64).sum(axis=1), params["input_offset"])
    consts["weights"] = w2d.astype(np.int8)
    _with_rq(consts, params, *acc_bounds(consts["bias"], w2d, -128, 127))
    if conv_uses_1x1(call):  # the DSP path widens two input pixels in scratch
        return Lowered("mcu_cmsis_conv2d_1x1_s8", params, consts, model_conv, conv_scratch(ic))
    return Lowered("mcu_cmsis_conv2d_s8", params, consts, model_conv, conv_scratch(kh * kw * ic, im2col=True))


def conv_scratch(k: int, im2col: bool = False) -> int:
    """Two columns of k values as int16 (two 1x1 input pixels, or im2col of two output pixels: the
    matrix product works on pairs of columns), plus for im2col the two columns as int8, which the
    DSP path copies before widening (rounded up to whole words). The MVE path uses int8 im2col
    columns only, and no scratch for 1x1."""
    return 2 * k * 2 + (-(-2 * k // 4) * 4 if im2col else 0)


def model_conv(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p, k = kc.params, kc.constants
    oh, ow, oc = p["out_h"], p["out_w"], p["out_c"]
    weights = k["weights"].reshape(oc, -1)
    cols = _filled_windows(args[0], p).reshape(oh * ow, -1)
    acc = c.exact_matmul(cols, weights.T) + k["bias"]
    return _requant(acc, kc).reshape(kc.output.shape)


# ---- DEPTHWISE_CONV_2D -----------------------------------------------------------------------------

def dwconv_uses_3x3(call: Call) -> bool:
    """3x3 filters, depth multiplier 1, no dilation: the fast path (the usual MobileNet / DS-CNN
    layer; any stride and padding, border pixels take the general tap loop)."""
    _, kh, kw, oc = call.args[1].type.shape
    in_c = call.args[0].type.shape[3]
    return (kh, kw) == (3, 3) and oc == in_c and tuple(call.attrs.get("dilation", (1, 1))) == (1, 1)


def lower_dwconv(call: Call) -> Lowered:
    w = call.args[1].data  # [1, KH, KW, OC]
    _, kh, kw, oc = w.shape
    params, consts = _requant_params(call, oc)
    params.update(_geometry(call, kh, kw))
    params["depth_multiplier"] = oc // params["in_c"]
    bias = call.args[2].data.reshape(oc) if len(call.args) > 2 else np.zeros(oc)
    consts["bias"] = bias.astype(np.int32)  # not folded: border pixels skip their padded taps
    consts["weights"] = w.reshape(kh * kw, oc).astype(np.int8)
    off = params["input_offset"]
    _with_rq(consts, params, *acc_bounds(consts["bias"], consts["weights"].T, off - 128, off + 127))
    if dwconv_uses_3x3(call):
        return Lowered("mcu_cmsis_dwconv2d_3x3_s8", params, consts, model_dwconv, dw3x3_scratch(oc))
    return Lowered("mcu_cmsis_dwconv2d_s8", params, consts, model_dwconv)


def dw3x3_scratch(channels: int) -> int:
    """The 3x3 depthwise DSP path's pad row (the input zero point, whole words) and its weights
    widened to int16 words, 18 per group of four channels (mcu_cmsis_dw3x3_dsp.h)."""
    return -(-channels // 4) * 4 + 72 * (channels // 4)


def model_dwconv(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    """TFLM's form: bias + sum over the taps inside the input of (x + input_offset) * w (padded
    taps, filled with the zero point here, add 0)."""
    p, k = kc.params, kc.constants
    oc = p["out_c"]
    cols = _filled_windows(args[0], p) + p["input_offset"]  # [1, OH, OW, KH, KW, IC]
    cols = cols[..., np.arange(oc) // p["depth_multiplier"]]
    taps = k["weights"].reshape(p["k_h"], p["k_w"], oc).astype(np.int64)
    acc = (cols * taps).sum(axis=(3, 4)) + k["bias"]
    return _requant(acc, kc)


# ---- FULLY_CONNECTED ------------------------------------------------------------------------------

def lower_fc(call: Call) -> Lowered:
    w = call.args[1].data  # [units, depth]
    units, depth = w.shape
    params, consts = _requant_params(call, units)
    params.update(units=units, depth=depth, rows=call.args[0].type.size // depth)
    consts["bias"] = _folded_bias(call, w.astype(np.int64).sum(axis=1), params["input_offset"])
    consts["weights"] = w.astype(np.int8)
    _with_rq(consts, params, *acc_bounds(consts["bias"], w, -128, 127))
    return Lowered("mcu_cmsis_fully_connected_s8", params, consts, model_fc)


def model_fc(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p, k = kc.params, kc.constants
    acc = c.exact_matmul(args[0].reshape(p["rows"], p["depth"]), k["weights"].T) + k["bias"]
    return _requant(acc, kc).reshape(kc.output.shape)


# ---- AVERAGE_POOL_2D, MAX_POOL_2D -------------------------------------------------------------------

def _lower_pool(call: Call) -> dict[str, Any]:
    fh, fw = call.attrs["filter"]
    params = _geometry(call, fh, fw)
    params["act_min"], params["act_max"] = _act(call)
    return params


def lower_avg_pool(call: Call) -> Lowered:
    return Lowered("mcu_cmsis_avg_pool2d_s8", _lower_pool(call), {}, model_avg_pool)


def lower_max_pool(call: Call) -> Lowered:
    return Lowered("mcu_cmsis_max_pool2d_s8", _lower_pool(call), {}, model_max_pool)


def _pool_taps(x: np.ndarray, p: Mapping[str, Any], fill: int) -> np.ndarray:
    """[1, OH, OW, KH, KW, C] windows with out-of-input taps set to `fill`."""
    attrs = {"stride": (p["stride_h"], p["stride_w"]), "dilation": (1, 1)}
    return windows(x.astype(np.int64), p["k_h"], p["k_w"], attrs, (p["out_h"], p["out_w"]), fill=fill)


def model_avg_pool(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p = kc.params
    total = _pool_taps(args[0], p, 0).sum(axis=(3, 4))
    ones = np.ones(args[0].shape[:3] + (1,), dtype=np.int64)
    count = _pool_taps(ones, p, 0).sum(axis=(3, 4))
    half = count // 2
    avg = np.where(total > 0, (total + half) // count, -((half - total) // count))  # C division
    return np.clip(avg, p["act_min"], p["act_max"]).astype(np.int8)


def model_max_pool(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p = kc.params
    top = _pool_taps(args[0], p, -128).max(axis=(3, 4))
    return np.clip(top, p["act_min"], p["act_max"]).astype(np.int8)


# ---- ADD, MUL --------------------------------------------------------------------------------------

def _operands(call: Call) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    (q1, q2), qo = (a.type.quant for a in call.args), call.type.quant
    lo, hi = _act(call)
    params = {"size": call.type.size, "input1_offset": -q1.zp, "input2_offset": -q2.zp,
              "output_offset": qo.zp, "act_min": lo, "act_max": hi}
    consts = {f"arg{i}": a.data for i, a in enumerate(call.args) if isinstance(a, Constant)}
    return params, consts


def lower_add(call: Call) -> Lowered:
    params, consts = _operands(call)
    q1, q2, qo = call.args[0].type.quant, call.args[1].type.quant, call.type.quant
    (m1, s1), (m2, s2), (mo, so) = add_sub.multipliers(q1.s, q2.s, qo.s, float32_prepare=False)
    params.update(left_shift=add_sub.LEFT_SHIFT, input1_multiplier=m1, input1_shift=s1,
                  input2_multiplier=m2, input2_shift=s2, output_multiplier=mo, output_shift=so)
    consts.update(_add_tables(params))
    return Lowered("mcu_cmsis_add_s8", params, consts, model_add, in_place=True)


def _add_tables(p: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """ADD's rescaled inputs depend on one int8 each: `table` holds them for the DSP path, 256
    values of input 1 then 256 of input 2 (index x + 128); `rq`, when proven, the fast
    requantization record of their sum, whose bounds the tables give."""
    small = quant.multiply_by_quantized_multiplier_smaller_than_one_exp
    x = np.arange(-128, 128, dtype=np.int64)
    t1 = small((x + p["input1_offset"]) << p["left_shift"], p["input1_multiplier"], p["input1_shift"])
    t2 = small((x + p["input2_offset"]) << p["left_shift"], p["input2_multiplier"], p["input2_shift"])
    out = {"table": np.concatenate([t1, t2]).astype(np.int32)}
    lo, hi = np.array([t1.min() + t2.min()]), np.array([t1.max() + t2.max()])
    rq = requant_records(lo, hi, np.array([p["output_multiplier"]]), np.array([p["output_shift"]]),
                         p["output_offset"], p["act_min"], p["act_max"])
    if rq is not None:
        out["rq"] = rq
    return out


def _op_args(args: list[np.ndarray], kc: KernelCall) -> list[np.ndarray]:
    """The op's two operands from the kernel inputs and constants (x * x has one input twice)."""
    return [kc.constants[f"arg{i}"] if slot is None else args[slot] for i, slot in enumerate(kc.arg_map)]


def model_add(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p = kc.params
    x1, x2 = (a.astype(np.int64).reshape(-1) for a in _op_args(args, kc))
    small = quant.multiply_by_quantized_multiplier_smaller_than_one_exp
    a = small((x1 + p["input1_offset"]) << p["left_shift"], p["input1_multiplier"], p["input1_shift"])
    b = small((x2 + p["input2_offset"]) << p["left_shift"], p["input2_multiplier"], p["input2_shift"])
    out = small(a + b, p["output_multiplier"], p["output_shift"]) + p["output_offset"]
    return np.clip(out, p["act_min"], p["act_max"]).astype(np.int8).reshape(kc.output.shape)


def lower_mul(call: Call) -> Lowered:
    params, consts = _operands(call)
    m, s = mul.multiplier(call.args[0].type.quant.s, call.args[1].type.quant.s, call.type.quant.s)
    params.update(output_multiplier=m, output_shift=s)
    return Lowered("mcu_cmsis_mul_s8", params, consts, model_mul, in_place=True)


def model_mul(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p = kc.params
    x1, x2 = (a.astype(np.int64).reshape(-1) for a in _op_args(args, kc))
    prod = (x1 + p["input1_offset"]) * (x2 + p["input2_offset"])
    out = quant.multiply_by_quantized_multiplier(prod, p["output_multiplier"], p["output_shift"])
    out = out + p["output_offset"]
    return np.clip(out, p["act_min"], p["act_max"]).astype(np.int8).reshape(kc.output.shape)


# ---- SOFTMAX ----------------------------------------------------------------------------------------

def lower_softmax(call: Call) -> Lowered:
    depth = call.type.shape[-1]
    mult, shift, diff_min = softmax.softmax_params(call.attrs["beta"], call.args[0].type.quant.s)
    params = {"rows": call.type.size // depth, "depth": depth, "input_multiplier": mult, "input_left_shift": shift,
              "diff_min": diff_min}
    return Lowered("mcu_cmsis_softmax_s8", params, {}, model_softmax)


def model_softmax(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    """The kernel's arithmetic on its precomputed (multiplier, left shift, diff_min)."""
    p = kc.params
    x = args[0].astype(np.int64).reshape(p["rows"], p["depth"])
    diff = x - x.max(axis=-1, keepdims=True)
    valid = diff >= p["diff_min"]
    rescaled = quant.multiply_by_quantized_multiplier_greater_than_one(np.where(valid, diff, 0),
                                                                      p["input_multiplier"], p["input_left_shift"])
    exps = fp.exp_on_negative_values(rescaled, softmax.SCALED_DIFF_INTEGER_BITS)
    acc = fp.rescale(exps, 0, softmax.ACCUMULATION_INTEGER_BITS)
    total = fp.wrap_int32(np.where(valid, acc, 0).sum(axis=-1, keepdims=True))
    scale, bits_over_unit = fp.get_reciprocal(total, softmax.ACCUMULATION_INTEGER_BITS)
    unsat = quant.rounding_divide_by_pot(fp.srdhm(scale, exps), bits_over_unit + 31 - 8)
    out = np.where(valid, np.clip(unsat - 128, -128, 127), -128)
    return out.astype(np.int8).reshape(kc.output.shape)


# ---- the lower hook ---------------------------------------------------------------------------------

LOWER: dict[str, Callable[[Call], Lowered]] = {
    Composite.CONV2D.value: lower_conv,
    Composite.DEPTHWISE_CONV2D.value: lower_dwconv,
    Composite.FULLY_CONNECTED.value: lower_fc,
    Composite.AVG_POOL2D.value: lower_avg_pool,
    Composite.MAX_POOL2D.value: lower_max_pool,
    Composite.ADD.value: lower_add,
    Composite.MUL.value: lower_mul,
    Composite.SOFTMAX.value: lower_softmax,
}


def lower(fn: Function) -> KernelCall:
    call = portable.root_call(fn)
    composite = fn.attrs["composite"]
    info = OpInfo(call.op, get_op(call.op).kind, call.attrs, call.sources, NAME, composite)
    low = LOWER[composite](call)
    return KernelCall(low.symbol, f"{composite}.c.j2", tuple(p.type for p in fn.params), call.type, low.params,
                      low.constants, low.scratch_bytes, info, low.model, in_place=low.in_place,
                      arg_map=portable.arg_map(fn))


def scratch_size(fn: Function) -> int:
    """Bytes of scratch the kernel needs (only the im2col convolution has any)."""
    return LOWER[fn.attrs["composite"]](portable.root_call(fn)).scratch_bytes


TARGET = register_target(Target(
    name=NAME,
    patterns=PATTERNS,
    lower=lower,
    templates=Path(str(files("mcuforge.codegen") / "templates" / "cmsis_nn")),
    sources=Path(str(files("mcuforge.firmware") / "kernels" / "cmsis_nn")),
    scratch_size=scratch_size,
))
