"""REVERSE_V2: reverse a tensor along constant axes.

TFLM (reverse.cc, reference_ops::Reverse) takes int8, uint8, int16, int32, int64, float32 and bool
(the elements are copied unchanged, whatever their quantization), input rank at most 6, a 1-D int32
axis tensor with at most as many entries as the input has dimensions. At Eval it resolves negative
axes, refuses axes out of range and axes that are not contiguous once sorted (so a repeated axis is
refused too), and reads past its axis array when there is none (undefined: refused here).
Reversing a run of contiguous axes reverses their flattened block, so the portable kernel copies
rows: the output is `outer` blocks of `count` rows of `inner` elements, row k of a block taken from
row count - 1 - k of the input's block.
"""

from __future__ import annotations

import math

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

DTYPES = ("int8", "uint8", "int16", "int32", "int64", "float32", "bool")
MAX_RANK = 6


def parse(ctx):
    axis = np.asarray(ctx.const(1))
    if axis.dtype != np.int32:
        raise ctx.fail(f"the axis tensor is {axis.dtype}; TFLM takes int32 axes")
    if axis.ndim != 1:
        raise ctx.fail(f"the axis tensor has rank {axis.ndim}; it must be 1-D")
    return [ctx.inputs[0]], {"axis": tuple(int(a) for a in axis)}


def infer(args, attrs):
    return args[0].shape, args[0].dtype


def resolved_axes(rank: int, axes) -> list[int]:
    return sorted(a + rank if a < 0 else a for a in axes)


def reference(args, v: OpView):
    x = np.asarray(args[0])
    return np.flip(x, axis=tuple(resolved_axes(x.ndim, v.attrs["axis"]))).copy()


# ---- support checks ------------------------------------------------------------------------------

def supported_dtype(v: OpView) -> str | None:
    """Input and output must have one element type: int8, uint8, int16, int32, int64, float32 or bool."""
    found = sorted({v.args[0].dtype, v.out.dtype})
    return None if len(found) == 1 and found[0] in DTYPES else f"got {', '.join(found)}"


def rank_limit(v: OpView) -> str | None:
    """The input must have at most 6 dimensions."""
    return None if v.args[0].rank <= MAX_RANK else f"rank {v.args[0].rank}"


def valid_axes(v: OpView) -> str | None:
    """The axes must be one or more distinct dimensions of the input (negative counts from the end),
    contiguous once sorted (TFLM refuses others at run time)."""
    rank, axes = v.args[0].rank, v.attrs["axis"]
    if not axes:
        return "no axes"
    if len(axes) > rank:
        return f"{len(axes)} axes for rank {rank}"
    if any(not -rank <= a < rank for a in axes):
        return f"axes {list(axes)} for rank {rank}"
    r = resolved_axes(rank, axes)
    return None if r == list(range(r[0], r[0] + len(r))) else f"axes {list(axes)}"


# ---- portable kernel -----------------------------------------------------------------------------

def lower_c(call) -> CKernel:
    """mcu_reverse: outer blocks of count rows of inner_bytes bytes, rows reversed in each block."""
    x = call.args[0].type
    r = resolved_axes(x.rank, call.attrs["axis"])
    params = {"outer": math.prod(x.shape[:r[0]]), "count": math.prod(x.shape[r[0]:r[-1] + 1]),
              "inner_bytes": math.prod(x.shape[r[-1] + 1:]) * x.np_dtype.itemsize}
    return CKernel("mcu_reverse", "mcu_reverse", "mcu_reverse_params", params)


register(OpDef(
    name="reverse_v2",
    tflm="reverse.cc, reference_ops::Reverse",
    kind=OpKind.INJECTIVE,
    doc="Reverse a tensor along constant, contiguous axes; the elements are copied unchanged.",
    infer=infer,
    reference=reference,
    checks=(supported_dtype, rank_limit, valid_axes),
    tflite={"REVERSE_V2": parse},
    portable=Portable(lower_c),
))
