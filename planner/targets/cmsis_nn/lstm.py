"""UNIDIRECTIONAL_SEQUENCE_LSTM on cmsis-nn: mcu_cmsis_lstm_s8, TFLM's integer LSTM with each time step's
gates as two matrix-vector products over all four gates (DSP: SXTB16 + SMLAD, four rows per pass;
MVE: VMLADAVA). The portable lowering's parameters and constants (the op's lower_c: biases folded
with the zero points, [4][units][...] weights, the sigmoid table), the weight rows zero-padded to a
multiple of four, and the DSP path's fast requantization records where proven (requant.py) for the
gate FCs and the three inter-gate products. The model is the registry reference: the kernel changes
how the products are computed, not what."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mcuforge.ir.expr import Call, Constant, Expr
from mcuforge.ir.registry import OpView, get_op

from ...kernel import KernelCall
from ...patterns import const, op, wildcard
from .common import Composite, Lowered, scratch_size
from .requant import acc_bounds, requant_records

Q15_MAX = 32767  # sigmoid outputs lie in [0, Q15_MAX], tanh outputs in [-Q15_MAX, Q15_MAX]
NO_PROOF = (0, 0, 0)


def check(caps: dict[str, Expr]) -> str | None:
    """TFLM's 8x8->16 integer LSTM (the op's own checks admitted it)."""
    return None


def reference_model(call: Call) -> Callable[[list[np.ndarray], KernelCall], np.ndarray]:
    """The registry reference on the kernel's inputs (the call's non-constant arguments, in order; the
    states among them are updated in place, as the kernel updates them)."""
    opdef = get_op(call.op)
    view = OpView(tuple(a.type for a in call.args), call.type, call.attrs)

    def run(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
        given = iter(args)
        return opdef.reference([a.data if isinstance(a, Constant) else next(given) for a in call.args], view)

    return run


def record(lo: int, hi: int, mult: int, shift: int, offset: int, act_min: int, act_max: int) -> tuple[int, ...]:
    """One fast requantization record valid for every accumulator in [lo, hi] (all rows of a gate
    share it), or NO_PROOF. Only the general form counts (m > 0): requant_records' constant-output
    form assumes an int8 output."""
    rq = requant_records(np.array([lo]), np.array([hi]), np.array([mult]), np.array([shift]), offset, act_min, act_max)
    return tuple(int(v) for v in rq) if rq is not None and rq[0] > 0 else NO_PROOF


def gate_records(weights: np.ndarray, bias: np.ndarray, mult: list[int], shift: list[int]) -> list[tuple[int, ...]]:
    """Per gate, a record for its FC over int8 inputs (the bounds of its rows' accumulators)."""
    out = []
    for g in range(4):
        lo, hi = acc_bounds(bias[g], weights[g], -128, 127)
        out.append(record(int(lo.min()), int(hi.max()), mult[g], shift[g], 0, -32768, 32767))
    return out


def padded(weights: np.ndarray) -> np.ndarray:
    """[4, units, k] -> [4 * units, k rounded up to a multiple of 4], zero-padded."""
    g, units, k = weights.shape
    out = np.zeros((g * units, -(-k // 4) * 4), dtype=np.int8)
    out[:, :k] = weights.reshape(g * units, k)
    return out


def lower(call: Call) -> Lowered:
    k = get_op(call.op).portable.lower(call)
    p, consts = dict(k.params), dict(k.constants)
    sig, tanh = (0, Q15_MAX), (-Q15_MAX, Q15_MAX)
    cell = (-32768, 32767)
    products = [  # the inter-gate products' bounds and (multiplier, shift, offset, clamp)
        (sig[1] * cell[0], sig[1] * cell[1], p["forget_multiplier"], p["forget_shift"], 0, *cell),
        (sig[1] * tanh[0], sig[1] * tanh[1], p["input_gate_multiplier"], p["input_gate_shift"], 0, *cell),
        (sig[1] * tanh[0], sig[1] * tanh[1], p["hidden_multiplier"], p["hidden_shift"], p["hidden_zero_point"],
         -128, 127),
    ]
    records = (gate_records(consts["input_weights"], consts["input_bias"], p["input_multiplier"], p["input_shift"])
               + gate_records(consts["recurrent_weights"], consts["recurrent_bias"], p["recurrent_multiplier"],
                              p["recurrent_shift"])
               + [record(*pr) for pr in products])
    consts["input_weights"] = padded(consts["input_weights"])
    consts["recurrent_weights"] = padded(consts["recurrent_weights"])
    consts["rq"] = np.array(records, dtype=np.int32).reshape(-1)
    strides = {"input_stride": consts["input_weights"].shape[1], "recurrent_stride": consts["recurrent_weights"].shape[1]}
    scratch = scratch_size("MCU_CMSIS_LSTM_S8_SCRATCH_BYTES", p["units"], *strides.values())
    return Lowered("mcu_cmsis_lstm_s8", {"lstm": p, **strides}, consts, reference_model(call), scratch=scratch,
                   struct="mcu_cmsis_lstm_params", op_args=k.op_args)


# x, the hidden and the cell state, then the twelve weights and biases of the standard LSTM
PATTERN = op("unidirectional_sequence_lstm", wildcard("x"), wildcard("hidden"), wildcard("cell"),
             *(const() for _ in range(12)), capture="root")
COMPOSITES = (Composite("qnn_lstm", PATTERN, check, lower),)
