"""UNIDIRECTIONAL_SEQUENCE_LSTM on cmsis-nn: mcu_cmsis_lstm_s8, TFLM's integer LSTM with each time step's
gates as two matrix-vector products over all four gates (DSP: SXTB16 + SMLAD, four rows per pass;
MVE: VMLADAVA). The portable lowering's parameters and constants (the op's lower_c: biases folded
with the zero points, [4][units][...] weights, the sigmoid table), the weight rows zero-padded to a
multiple of four, and the DSP path's fast requantization records where proven (requant.py) for the
gate FCs and the three inter-gate products. The model is the registry reference: the kernel changes
how the products are computed, not what."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call, Expr
from mcuforge.ir.registry import get_op

from ...patterns import const, op, wildcard
from ._recurrent import NO_PROOF, padded, record, reference_model
from .common import Composite, Lowered, scratch_size
from .requant import acc_bounds

Q15_MAX = 32767  # sigmoid outputs lie in [0, Q15_MAX], tanh outputs in [-Q15_MAX, Q15_MAX]


def check(caps: dict[str, Expr]) -> str | None:
    """TFLM's 8x8->16 integer LSTM (the 16x8 one: lstm_s16.py)."""
    return None if caps["x"].type.dtype == "int8" else "16x8 LSTM"


def gate_records(weights: np.ndarray, bias: np.ndarray, mult: list[int], shift: list[int]) -> list[tuple[int, ...]]:
    """Per gate, a record for its FC over int8 inputs (the bounds of its rows' accumulators)."""
    out = []
    for g in range(4):
        lo, hi = acc_bounds(bias[g], weights[g], -128, 127)
        out.append(record(int(lo.min()), int(hi.max()), mult[g], shift[g], 0, -32768, 32767))
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
