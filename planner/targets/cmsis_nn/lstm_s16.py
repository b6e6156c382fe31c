"""16x8 UNIDIRECTIONAL_SEQUENCE_LSTM on cmsis-nn: mcu_cmsis_lstm_s16, TFLM's integer LSTM with int16
activations (EvalLstm<int16_t, int8_t, int16_t, int64_t>), each time step's gates as two
matrix-vector products over all four gates at once through the 16x8 one-column tiles (DSP: SMLAD on
int16 pairs, Helium: VMLADAVA.S16; mcu_cmsis_s16.h). The portable lowering's parameters and
constants (the op's lower_c: int64 biases folded with the zero points, the sigmoid table); the
weight matrices as tiles of four rows, and the int32 chunk that keeps every partial sum exact
(_s16.chunk). The model is the registry reference: the kernel changes how the products are
computed, not what."""

from __future__ import annotations

from mcuforge.ir.expr import Call, Expr
from mcuforge.ir.registry import get_op

from . import _s16
from ._recurrent import reference_model
from .common import Composite, Lowered, scratch_size
from .lstm import PATTERN


def check(caps: dict[str, Expr]) -> str | None:
    """TFLM's 16x8->16 integer LSTM (int16 activations; the 8x8 one has its own kernel)."""
    return None if caps["x"].type.dtype == "int16" else "8x8 LSTM"


def lower(call: Call) -> Lowered:
    k = get_op(call.op).portable.lower(call)
    p, consts = dict(k.params), dict(k.constants)
    units, inputs = p["units"], p["inputs"]
    w = consts["input_weights"].reshape(4 * units, inputs)
    r = consts["recurrent_weights"].reshape(4 * units, units)
    consts["input_weights"] = _s16.weight_tiles(w, 4)
    consts["recurrent_weights"] = _s16.weight_tiles(r, 4)
    params = {"lstm": p, "input_depth8": _s16.depth8(inputs), "recurrent_depth8": _s16.depth8(units),
              "input_chunk": _s16.chunk(w, True), "recurrent_chunk": _s16.chunk(r, True)}
    scratch = scratch_size("MCU_CMSIS_LSTM_S16_SCRATCH_BYTES", units, params["input_depth8"],
                           params["recurrent_depth8"])
    return Lowered("mcu_cmsis_lstm_s16", params, consts, reference_model(call), scratch=scratch,
                   struct="mcu_cmsis_lstm_s16_params", op_args=k.op_args)


COMPOSITES = (Composite("qnn_lstm_s16", PATTERN, check, lower),)
