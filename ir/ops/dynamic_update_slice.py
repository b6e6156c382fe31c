"""DYNAMIC_UPDATE_SLICE: the operand with a block overwritten by the update, at start indices
given at run time.

TFLM (dynamic_update_slice.cc): operand, update and output of one element type (float32, int8 or
int32; the elements are copied as stored, no requantization), the update of the operand's rank and
no larger along any axis, the start indices an int32 or int64 vector with one entry per operand
axis. At run time each start index is clamped to [0, operand dim - update dim]. When the update has
as many elements as the operand the output is the update; otherwise the operand rank is at most 6
(TFLM stops with an error beyond). The portable kernel reads the indices when it runs, so they may
be computed by the model (a streaming ring buffer's write position) or constant.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _portable

DTYPES = ("int8", "int32", "float32")
MAX_RANK = 6  # MCU_DYNAMIC_UPDATE_SLICE_RANK, TFLM's kMaxDimensions


def parse(ctx):
    return [ctx.inputs[0], ctx.inputs[1], ctx.inputs[2]], {}


def infer(args, attrs):
    return args[0].shape, args[0].dtype


def clamped_starts(operand_shape, update_shape, indices) -> list[int]:
    return [int(min(max(0, int(i)), d - u)) for i, d, u in zip(np.ravel(indices), operand_shape, update_shape)]


def reference(args, v: OpView):
    operand, update, indices = (np.asarray(a) for a in args)
    if operand.size == update.size:
        return update.reshape(operand.shape).copy()
    out = operand.copy()
    starts = clamped_starts(operand.shape, update.shape, indices)
    out[tuple(slice(s, s + u) for s, u in zip(starts, update.shape))] = update
    return out


# ---- support checks ------------------------------------------------------------------------------

def same_dtype(v: OpView) -> str | None:
    """The operand, the update and the output must have one element type: int8, int32 or float32."""
    found = sorted({v.args[0].dtype, v.args[1].dtype, v.out.dtype})
    return None if len(found) == 1 and found[0] in DTYPES else f"got {', '.join(found)}"


def index_vector(v: OpView) -> str | None:
    """The start indices must be an int32 or int64 vector with one entry per operand axis."""
    idx, rank = v.args[2], v.args[0].rank
    if idx.dtype not in ("int32", "int64"):
        return f"got {idx.dtype}"
    return None if idx.shape == (rank,) else f"shape {list(idx.shape)} for operand rank {rank}"


def update_fits(v: OpView) -> str | None:
    """The update must have the operand's rank and be no larger than the operand along any axis."""
    a, u = v.args[0].shape, v.args[1].shape
    ok = len(a) == len(u) and all(x <= y for x, y in zip(u, a))
    return None if ok else f"update {list(u)}, operand {list(a)}"


def rank_limit(v: OpView) -> str | None:
    """An update smaller than the operand needs an operand of rank at most 6."""
    small = v.args[1].size != v.args[0].size
    return None if not small or v.args[0].rank <= MAX_RANK else f"rank {v.args[0].rank}"


# ---- portable kernel -----------------------------------------------------------------------------

def lower_c(call) -> CKernel:
    """mcu_dynamic_update_slice: the operand and update shapes left-padded to rank 6, the element
    and index sizes; the kernel clamps the run-time indices itself."""
    a, u, idx = (x.type for x in call.args)
    lead = MAX_RANK - a.rank
    whole = a.size == u.size
    params = {"elem_size": _portable.ELEM_SIZES[a.dtype], "rank": a.rank, "index_size": idx.np_dtype.itemsize,
              "whole": int(whole), "size": a.size,
              "operand_dims": [1] * lead + list(a.shape) if not whole else [1] * MAX_RANK,
              "update_dims": [1] * lead + list(u.shape) if not whole else [1] * MAX_RANK}
    return CKernel("mcu_dynamic_update_slice", "mcu_dynamic_update_slice", "mcu_dynamic_update_slice_params",
                   params)


register(OpDef(
    name="dynamic_update_slice",
    tflm="dynamic_update_slice.cc, EvalImpl",
    kind=OpKind.INJECTIVE,
    doc="The operand with the update written over it at run-time start indices (each clamped so that "
        "the update fits); the elements are copied as stored.",
    infer=infer,
    reference=reference,
    checks=(same_dtype, index_vector, update_fits, rank_limit),
    tflite={"DYNAMIC_UPDATE_SLICE": parse},
    portable=Portable(lower_c),
))
