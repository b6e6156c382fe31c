"""BROADCAST_ARGS: the shape two shapes broadcast to (numpy rules), computed from two shape vectors.

TFLM (broadcast_args.cc, reference_ops::BroadcastArgs): two 1-D int32 (or two int64) shape tensors
and an output of their type and of rank 1. Walking the dimensions from the last, a missing
dimension counts as 1; the output dimension is the other input's where one is 1, else both must be
equal (TFLM aborts otherwise; the portable kernel then writes input 1's). Its inputs are usually
constants (the shapes of static tensors), and then the op folds at compile time; otherwise the
portable kernel computes it when the model runs.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

DTYPES = ("int32", "int64")


def parse(ctx):
    return [ctx.inputs[0], ctx.inputs[1]], {}


def infer(args, attrs):
    return (max(args[0].size, args[1].size),), args[0].dtype


def reference(args, v: OpView):
    a, b = (np.asarray(x).reshape(-1).astype(np.int64) for x in args)
    n = max(a.size, b.size)
    a = np.concatenate([np.ones(n - a.size, np.int64), a])
    b = np.concatenate([np.ones(n - b.size, np.int64), b])
    if np.any((a != 1) & (b != 1) & (a != b)):
        raise ValueError(f"shapes {a.tolist()} and {b.tolist()} do not broadcast (TFLM aborts)")
    return np.where(a == 1, b, a).astype(v.out.np_dtype)


def shape_vectors(v: OpView) -> str | None:
    """Both inputs and the output must be 1-D shape vectors of one type, int32 or int64."""
    found = sorted({t.dtype for t in (*v.args, v.out)})
    if len(found) != 1 or found[0] not in DTYPES:
        return f"got {', '.join(found)}"
    bad = next((t for t in (*v.args, v.out) if t.rank != 1), None)
    return None if bad is None else f"a tensor of shape {list(bad.shape)}"


def lower_c(call) -> CKernel:
    """mcu_broadcast_args_s32 / _s64: the two input lengths and the output's."""
    a, b = (x.type for x in call.args)
    suffix = "s32" if a.dtype == "int32" else "s64"
    params = {"size1": a.size, "size2": b.size, "out_size": call.type.size}
    return CKernel(f"mcu_broadcast_args_{suffix}", "mcu_broadcast_args", "mcu_broadcast_args_params", params)


register(OpDef(
    name="broadcast_args",
    tflm="broadcast_args.cc, reference_ops::BroadcastArgs",
    kind=OpKind.OPAQUE,
    doc="The shape two int32 (or int64) shape vectors broadcast to; folds at compile time when both are "
        "constant.",
    infer=infer,
    reference=reference,
    checks=(shape_vectors,),
    tflite={"BROADCAST_ARGS": parse},
    portable=Portable(lower_c),
))
