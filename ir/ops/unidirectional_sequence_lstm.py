"""UNIDIRECTIONAL_SEQUENCE_LSTM: TFLM's integer LSTMs, 8x8->16 (int8 activations and weights, int32
biases, int16 gates and cell state) and 16x8->16 (int16 activations, int8 weights, int64 biases),
over a [batch, time, input] (or time-major [time, batch, input]) sequence, with the hidden and cell
state kept between runs (variable tensors).

TFLM (unidirectional_sequence_lstm.cc, lstm_eval.h / lstm_eval.cc / lstm_eval_common.cc: EvalLstm,
LstmStep, CalculateLstmGate, UpdateLstmCell, UpdateLstmHidden) supports only the standard LSTM (all
four gates; no CIFG, peephole, projection or layer norm). Per batch and time step, with h the hidden
state (int8, zero point h_zp) and c the cell state (int16, scale 2^k):

  gate_g  = sat16(FC(x_t, W_g, b_g) + FC(h, R_g))   for g in forget, input, cell, output
            FC = reference_integer_ops::FullyConnected into int16 of scale 2^-12 (zero point 0):
            sum(w * (x - x_zp)) + bias (weights symmetric), MultiplyByQuantizedMultiplier by
            double(float32(x_scale * w_scale)) / 2^-12, clamped to int16 (the recurrent FC has no bias)
  f, i, o = sigmoid(gate) and g = tanh(gate): the int16 LUT functions (_int16_lut), Q3.12 in, Q0.15 out
  c       = sat16(mul(f, c; 2^-15) + mul(i, g; 2^-30 / c_scale)), then clipped to +-cell_clip / c_scale
            (truncated to int16) when cell_clip > 0
  h       = clamp8(h_zp + mul(tanh(c; input scale 2^k), o; 2^-30 / h_scale)); the output at t is h

where mul(a, b; s) is MulElementwise: MultiplyByQuantizedMultiplier(a * b) by QuantizeMultiplier(s).
The forget, input and cell gates read the previous h; so does the output gate (h is updated last).
The output tensor's own quantization is not used: TFLM copies h into it.

16x8 (EvalLstm<int16_t, int8_t, int16_t, int64_t>): the same with int16 x and h (their zero points
applied as above: checked against TFLM with non-zero ones), int64 biases and accumulators, and
TFLM's int64 MultiplyByQuantizedMultiplier (the multiplier rounded to Q0.15, one rounding); h is
clamped to int16. The converter makes no 16x8 LSTM (it refuses to), but TFLM runs one, so mcuforge
does.

Operands: args = [x, hidden state, cell state, weights and biases in TFLite input order]; the
TFLite input index of each argument after the states is `attrs["inputs"]`, so that a model using an
LSTM variant TFLM does not support is parsed, and refused by a check naming the variant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from mcuforge.ir.expr import State
from mcuforge.ir.quant import (
    MAX_LEFT_SHIFT_64,
    dtype_range,
    multiply_by_quantized_multiplier,
    multiply_by_quantized_multiplier_int64,
    quantize_multiplier,
    tflite_round,
)
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from ._int16_lut import SIGMOID_TABLE, logistic_s16, tanh_input_scaling, tanh_s16

HIDDEN, CELL = 1, 2  # argument positions of the states
GATES = ("input", "forget", "cell", "output")  # TFLite's order of the per-gate tensors
INPUT_WEIGHTS = {1: "input", 2: "forget", 3: "cell", 4: "output"}
RECURRENT_WEIGHTS = {5: "input", 6: "forget", 7: "cell", 8: "output"}
BIASES = {12: "input", 13: "forget", 14: "cell", 15: "output"}
STANDARD = (1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 14, 15)  # the inputs (after x) TFLM's kernel requires
VARIANTS = {9: "peephole", 10: "peephole", 11: "peephole", 16: "projection", 17: "projection",
            20: "layer norm", 21: "layer norm", 22: "layer norm", 23: "layer norm"}
OUTPUT_STATE, CELL_STATE = 18, 19  # TFLite input indices of the states
Q12, Q15 = 2.0 ** -12, 2.0 ** -15  # gate pre-activations are Q3.12, gate outputs Q0.15


def parse(ctx):
    if len(ctx.inputs) != 24:
        raise ctx.fail(f"an LSTM takes 24 inputs, got {len(ctx.inputs)}")
    for i, what in ((OUTPUT_STATE, "output (hidden) state"), (CELL_STATE, "cell state")):
        if not isinstance(ctx.inputs[i], State):
            raise ctx.fail(f"input {i} (the {what}) must be a variable tensor, as TFLite Micro requires")
    present = tuple(i for i in range(1, 24) if i not in (OUTPUT_STATE, CELL_STATE) and ctx.inputs[i] is not None)
    for i in present:
        ctx.const(i)  # weights and biases: a clear error when one is not a constant
    o = ctx.options()
    attrs = {
        "activation": c.activation(o),
        "cell_clip": float(o.CellClip()) if o is not None else 0.0,
        "time_major": bool(o.TimeMajor()) if o is not None else False,
        "inputs": present,
    }
    args = [ctx.inputs[0], ctx.inputs[OUTPUT_STATE], ctx.inputs[CELL_STATE]] + [ctx.inputs[i] for i in present]
    return args, attrs


def operand(args, attrs, tflite_index: int):
    """The argument that is TFLite input `tflite_index` (a weight or bias)."""
    return args[3 + attrs["inputs"].index(tflite_index)]


@dataclass(frozen=True)
class Sizes:
    batches: int
    steps: int
    inputs: int
    units: int  # the state dimension
    time_major: bool


def sizes(args, attrs) -> Sizes:
    x = args[0].shape
    tm = attrs["time_major"]
    units = operand(args, attrs, 2).shape[0]
    return Sizes(x[1] if tm else x[0], x[0] if tm else x[1], x[2], units, tm)


def infer(args, attrs):
    x = args[0].shape
    return (x[0], x[1], sizes(args, attrs).units), args[0].dtype


# ---- the integer parameters, shared by the reference and the kernel -------------------------------

@dataclass(frozen=True)
class Params:
    input_mult: tuple[tuple[int, int], ...]  # per gate (input, forget, cell, output): input FC's (mult, shift)
    recurrent_mult: tuple[tuple[int, int], ...]  # per gate: recurrent FC's (mult, shift)
    forget_mult: tuple[int, int]  # forget gate * cell state -> cell state
    input_gate_mult: tuple[int, int]  # input gate * cell gate -> cell state
    hidden_mult: tuple[int, int]  # tanh(cell) * output gate -> hidden state
    input_zp: int
    hidden_zp: int
    cell_clip: int  # 0: no clipping
    tanh_mult: int  # the cell state's tanh input scaling (tanh_input_scaling)
    tanh_shift: int
    hidden_min: int
    hidden_max: int


def cell_scale_power(scale: float) -> int:
    """TFLM's CheckedLog2 as CreateLstmCellStateInfo uses it (its verdict ignored): log2 of the scale
    computed in float32, rounded to the nearest integer."""
    f = np.float32(math.log(float(np.float32(scale)))) * (np.float32(1.0) / np.float32(math.log(2.0)))
    return tflite_round(float(np.float32(f)))


def fc_multiplier(x_scale: float, w_scale: float) -> tuple[int, int]:
    """GetQuantizedConvolutionMultipler into the int16 gate of scale 2^-12: the product of the two
    float32 scales in float32, then divided in double."""
    return quantize_multiplier(float(np.float32(x_scale) * np.float32(w_scale)) / Q12)


def params(v: OpView) -> Params:
    args, attrs = v.args, v.attrs
    x, h, cell = args[0].quant, args[HIDDEN].quant, args[CELL].quant
    w = {g: operand(args, attrs, i).quant for i, g in INPUT_WEIGHTS.items()}
    r = {g: operand(args, attrs, i).quant for i, g in RECURRENT_WEIGHTS.items()}
    cs = float(np.float32(cell.s))
    clip = attrs["cell_clip"]
    qclip = int(min(max(float(np.float32(clip)) / cs, -32768.0), 32767.0)) if clip > 0 else 0
    tm, ts = tanh_input_scaling(cell_scale_power(cell.s))
    lo, hi = dtype_range(args[HIDDEN].dtype)
    return Params(
        input_mult=tuple(fc_multiplier(x.s, w[g].s) for g in GATES),
        recurrent_mult=tuple(fc_multiplier(h.s, r[g].s) for g in GATES),
        forget_mult=quantize_multiplier(Q15 * cs / cs),
        input_gate_mult=quantize_multiplier(Q15 * Q15 / cs),
        hidden_mult=quantize_multiplier(Q15 * Q15 / float(np.float32(h.s))),
        input_zp=x.zp, hidden_zp=h.zp,
        cell_clip=qclip, tanh_mult=tm, tanh_shift=ts, hidden_min=lo, hidden_max=hi,
    )


# ---- the reference -------------------------------------------------------------------------------

def _sat16(x) -> np.ndarray:
    return np.clip(x, -32768, 32767)


def _mul(a, b, mult: tuple[int, int]) -> np.ndarray:
    """MulElementwise without offsets: MultiplyByQuantizedMultiplier(a * b)."""
    return multiply_by_quantized_multiplier(np.asarray(a, np.int64) * np.asarray(b, np.int64), *mult)


def reference(args, v: OpView):
    x, hidden, cell = args[0], args[HIDDEN], args[CELL]
    s, p = sizes(v.args, v.attrs), params(v)
    w = {g: operand(args, v.attrs, i).astype(np.int64) for i, g in INPUT_WEIGHTS.items()}
    r = {g: operand(args, v.attrs, i).astype(np.int64) for i, g in RECURRENT_WEIGHTS.items()}
    b = {g: operand(args, v.attrs, i).astype(np.int64) for i, g in BIASES.items()}
    seq = x.astype(np.int64)
    seq = seq.transpose(1, 0, 2) if s.time_major else seq  # [batch, time, input]
    h = hidden.reshape(s.batches, s.units)  # views: the states are updated in place
    cs = cell.reshape(s.batches, s.units)
    out = np.empty((s.batches, s.steps, s.units), dtype=x.dtype)

    # 16x8: int64 accumulators and requantization
    fc_requant = multiply_by_quantized_multiplier_int64 if x.dtype == np.int16 else multiply_by_quantized_multiplier
    x_off, h_off = p.input_zp, p.hidden_zp

    def gate(k: int, name: str, xt: np.ndarray, hb: np.ndarray) -> np.ndarray:
        fc_in = _sat16(fc_requant(w[name] @ (xt - x_off) + b[name], *p.input_mult[k]))
        fc_rec = _sat16(fc_requant(r[name] @ (hb - h_off), *p.recurrent_mult[k]))
        pre = _sat16(fc_in + fc_rec)
        return tanh_s16(pre) if name == "cell" else logistic_s16(pre)

    for bi in range(s.batches):
        for t in range(s.steps):
            xt, hb = seq[bi, t], h[bi].astype(np.int64)
            f, i, g = gate(1, "forget", xt, hb), gate(0, "input", xt, hb), gate(2, "cell", xt, hb)
            new_c = _sat16(_sat16(_mul(f, cs[bi], p.forget_mult)) + _sat16(_mul(i, g, p.input_gate_mult)))
            if p.cell_clip > 0:
                new_c = np.clip(new_c, -p.cell_clip, p.cell_clip)
            cs[bi] = new_c
            o = gate(3, "output", xt, hb)
            th = tanh_s16(cs[bi], p.tanh_mult, p.tanh_shift)
            h[bi] = np.clip(p.hidden_zp + _mul(th, o, p.hidden_mult), p.hidden_min, p.hidden_max)
            out[bi, t] = h[bi]
    return out.transpose(1, 0, 2) if s.time_major else out


# ---- support checks -------------------------------------------------------------------------------

def standard_lstm(v: OpView) -> str | None:
    """Only the standard LSTM, as TFLM's kernel: all four gates with input weights, recurrent weights
    and biases; no CIFG, peephole, projection or layer normalization."""
    present = set(v.attrs["inputs"])
    missing = [i for i in STANDARD if i not in present]
    extra = sorted({VARIANTS[i] for i in present if i in VARIANTS})
    if missing:
        return f"inputs {missing} are absent" + (" (CIFG)" if 1 in missing else "")
    return f"has {', '.join(extra)} inputs" if extra else None


def lstm_types(v: OpView) -> str | None:
    """Types must be those of one of TFLM's integer LSTMs: 8x8->16 (int8 input, output and hidden
    state, int32 biases) or 16x8->16 (int16 input, output and hidden state, int64 biases), both with
    int8 weights and an int16 cell state."""
    if standard_lstm(v):
        return None  # named by standard_lstm
    act = v.args[0].dtype if v.args[0].dtype in ("int8", "int16") else "int8"
    got = {"input": v.args[0].dtype, "output": v.out.dtype, "hidden state": v.args[HIDDEN].dtype,
           "cell state": v.args[CELL].dtype}
    want = {"input": act, "output": act, "hidden state": act, "cell state": "int16"}
    bad = [f"{k} is {got[k]}" for k in want if got[k] != want[k]]
    for i in STANDARD:
        t = operand(v.args, v.attrs, i)
        kind, need = ("bias", "int32" if act == "int8" else "int64") if i in BIASES else ("weights", "int8")
        if t.dtype != need:
            bad.append(f"input {i} ({kind}) is {t.dtype}")
    return "; ".join(bad) or None


def wide_requantization(v: OpView) -> str | None:
    """With int16 activations, every gate FC's requantization shift must be at most 14 (TFLM's int64
    requantization is undefined beyond)."""
    if standard_lstm(v) or lstm_types(v) or per_tensor_quantized(v) or v.args[0].dtype != "int16":
        return None
    p = params(v)
    worst = max(sh for _, sh in (*p.input_mult, *p.recurrent_mult))
    return None if worst <= MAX_LEFT_SHIFT_64 else f"a shift of {worst}"


def per_tensor_quantized(v: OpView) -> str | None:
    """The input, both states and every weight must be quantized per tensor (TFLM computes one
    multiplier per gate from the first scale), the weights symmetric (zero point 0, which TFLM's
    kernel assumes)."""
    named = [("input", v.args[0]), ("hidden state", v.args[HIDDEN]), ("cell state", v.args[CELL])]
    weights = [] if standard_lstm(v) else [operand(v.args, v.attrs, i) for i in (*INPUT_WEIGHTS, *RECURRENT_WEIGHTS)]
    for what, t in named + [(f"weights '{i}'", w) for i, w in zip(STANDARD, weights)]:
        if t.quant is None or t.quant.per_channel:
            return f"{what} is {'not quantized' if t.quant is None else 'quantized per channel'}"
    bad = [i for i, w in zip(STANDARD, weights) if w.quant.zp != 0]
    return f"inputs {bad} have a non-zero zero point" if bad else None


def lstm_shapes(v: OpView) -> str | None:
    """Shapes must be TFLM's: a rank-3 input and output, input weights [units, input], recurrent
    weights [units, units], biases [units], a rank-2 hidden state [batches, units] and a cell state of
    batches * units elements."""
    if standard_lstm(v):
        return None
    x, h, cell = v.args[0].shape, v.args[HIDDEN].shape, v.args[CELL].shape
    if len(x) != 3 or v.out.rank != 3 or len(h) != 2:
        return f"input {list(x)}, hidden state {list(h)}"
    s = sizes(v.args, v.attrs)
    for i in STANDARD:
        t = operand(v.args, v.attrs, i).shape
        want = (s.units,) if i in BIASES else (s.units, s.inputs if i in INPUT_WEIGHTS else s.units)
        if t != want:
            return f"input {i} has shape {list(t)}, expected {list(want)}"
    if h != (s.batches, s.units) or math.prod(cell) != s.batches * s.units:
        return f"hidden state {list(h)}, cell state {list(cell)} for {s.batches} batch(es) of {s.units} units"
    return None


def tanh_activation(v: OpView) -> str | None:
    """The cell gate's activation must be TANH (TFLM's integer gates implement only sigmoid and tanh,
    and the schema has no sigmoid)."""
    act = v.attrs["activation"]
    return None if act == "TANH" else f"got {act}"


def cell_clip(v: OpView) -> str | None:
    """The cell clip must be 0 (none) or positive, as TFLM checks."""
    clip = v.attrs["cell_clip"]
    return None if clip >= 0 and math.isfinite(clip) else f"got {clip}"


def cell_scale(v: OpView) -> str | None:
    """The cell state's scale must round to a power of two 2^k with -30 <= k <= 2 (TFLM uses the
    rounded log2 to scale it into its int16 tanh; beyond, its fixed-point scaling overflows int32)."""
    q = v.args[CELL].quant
    if q is None or q.per_channel or not q.s > 0:
        return None  # named by per_tensor_quantized
    k = cell_scale_power(q.s)
    return None if -30 <= k <= 2 else f"cell state scale {q.s:.6g} is 2^{k}"


# ---- the portable kernel -------------------------------------------------------------------------

def lower_c(call) -> CKernel:
    """mcu_lstm_s8 (mcu_lstm_s16 for 16x8): sizes, the per-gate FC multipliers, the inter-gate
    multipliers, the cell clip and tanh scaling; constants: each gate's weights and bias folded with
    the input zero point (bias - x_zp * sum(w); int64 for 16x8), as [4][units][...] arrays in the order
    input, forget, cell, output, the recurrent weights' row sums times the hidden zero point likewise,
    and the sigmoid table. Scratch: one step's new hidden state."""
    from mcuforge.firmware.macros import kernel_size

    v = OpView(tuple(a.type for a in call.args), call.type, call.attrs)
    s, p = sizes(v.args, v.attrs), params(v)
    consts = {}
    w = np.stack([const_of(call, i).astype(np.int64) for i in INPUT_WEIGHTS])  # [4, units, inputs]
    r = np.stack([const_of(call, i).astype(np.int64) for i in RECURRENT_WEIGHTS])  # [4, units, units]
    bias = np.stack([const_of(call, i).astype(np.int64) for i in BIASES])  # [4, units]
    # sum(w * (x - x_zp)) + b = sum(w * x) + [b - x_zp * sum(w)], the bracket a constant (int32
    # arithmetic wraps alike on both sides); the same for the recurrent FC with the hidden zero point
    wide = v.args[0].dtype == "int16"
    acc = np.int64 if wide else np.int32  # the 16x8 LSTM accumulates (and folds its biases) in int64
    consts["input_bias"] = (bias - p.input_zp * w.sum(axis=2)).astype(acc)
    consts["recurrent_bias"] = (-p.hidden_zp * r.sum(axis=2)).astype(acc)
    consts["input_weights"] = w.astype(np.int8)
    consts["recurrent_weights"] = r.astype(np.int8)
    consts["sigmoid_table"] = SIGMOID_TABLE
    params_c = {
        "batches": s.batches, "steps": s.steps, "inputs": s.inputs, "units": s.units,
        "time_major": int(s.time_major),
        "input_multiplier": [m for m, _ in p.input_mult], "input_shift": [sh for _, sh in p.input_mult],
        "recurrent_multiplier": [m for m, _ in p.recurrent_mult],
        "recurrent_shift": [sh for _, sh in p.recurrent_mult],
        "forget_multiplier": p.forget_mult[0], "forget_shift": p.forget_mult[1],
        "input_gate_multiplier": p.input_gate_mult[0], "input_gate_shift": p.input_gate_mult[1],
        "hidden_multiplier": p.hidden_mult[0], "hidden_shift": p.hidden_mult[1],
        "hidden_zero_point": p.hidden_zp, "cell_clip": p.cell_clip,
        "tanh_multiplier": p.tanh_mult if p.tanh_mult else 3 << p.tanh_shift,  # the power-of-two case resolved
        "tanh_shift": p.tanh_shift if p.tanh_mult else 0,
    }
    function = "mcu_lstm_s16" if wide else "mcu_lstm_s8"
    return CKernel(function, "mcu_lstm_s8", "mcu_lstm_params", params_c, consts, op_args=3,
                   scratch=kernel_size("c", f"{function.upper()}_SCRATCH_BYTES", s.units))


def const_of(call, tflite_index: int) -> np.ndarray:
    return operand(call.args, call.attrs, tflite_index).data


def macs(v: OpView) -> int:
    if standard_lstm(v):
        return 0
    s = sizes(v.args, v.attrs)
    return s.batches * s.steps * 4 * s.units * (s.inputs + s.units)


register(OpDef(
    name="unidirectional_sequence_lstm",
    tflm="unidirectional_sequence_lstm.cc, lstm_eval.h EvalLstm<int8_t, int8_t, int16_t, int32_t> and "
         "<int16_t, int8_t, int16_t, int64_t>",
    kind=OpKind.OPAQUE,
    doc="Unidirectional sequence LSTM, TFLM's integer LSTMs: int8 (int32 biases) or int16 (int64 biases) "
        "input, output and hidden state, int8 weights, int16 gates and cell state; the hidden and cell state "
        "kept between runs.",
    infer=infer,
    reference=reference,
    checks=(standard_lstm, lstm_types, per_tensor_quantized, lstm_shapes, tanh_activation, cell_clip,
            cell_scale, wide_requantization),
    tflite={"UNIDIRECTIONAL_SEQUENCE_LSTM": parse},
    portable=Portable(lower_c),
    macs=macs,
    state_args=(HIDDEN, CELL),
))
