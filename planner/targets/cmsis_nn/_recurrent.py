"""What the recurrent cmsis-nn kernels (LSTM, SVDF) share: their kernel model (the op's registry
reference: they change how the products are computed, not what), one fast requantization record
for a whole range of accumulators, and rows zero-padded for mcu_cmsis_rows4_dot."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mcuforge.ir.expr import Call, Constant
from mcuforge.ir.registry import OpView, get_op

from ...kernel import KernelCall
from .requant import requant_records

NO_PROOF = (0, 0, 0)


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


def padded(weights: np.ndarray) -> np.ndarray:
    """[..., rows, k] -> [all rows, k rounded up to a multiple of 4], zero-padded (for
    mcu_cmsis_rows4_dot)."""
    k = weights.shape[-1]
    rows = weights.reshape(-1, k)
    out = np.zeros((rows.shape[0], -(-k // 4) * 4), dtype=np.int8)
    out[:, :k] = rows
    return out
