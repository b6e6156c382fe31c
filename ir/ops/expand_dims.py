"""EXPAND_DIMS: insert a size-1 axis at a constant position; the data are unchanged.

TFLM (expand_dims.cc) reads the axis from a constant int32 tensor of one element (negative counts
from the end of the output: axis + rank + 1), checks the output shape against it and copies the
elements of int8, int16 or float32 tensors unchanged, whatever the quantization. mcuforge makes it a
view of its input, like RESHAPE (it legalizes to one)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from mcuforge.ir.registry import OpDef, OpKind, OpView, register

from . import _common as c

DTYPES = ("int8", "int16", "float32")


def parse(ctx):
    raw = np.asarray(ctx.const(1))
    return [ctx.inputs[0]], {"axis": int(raw.ravel()[0]) if raw.size else 0, "axis_count": int(raw.size),
                             "axis_rank": raw.ndim, "axis_dtype": str(raw.dtype)}


def resolved_axis(rank: int, axis: int) -> int:
    return axis + rank + 1 if axis < 0 else axis


def infer(args, attrs):
    shape = list(args[0].shape)
    shape.insert(resolved_axis(len(shape), attrs["axis"]), 1)
    return tuple(shape), args[0].dtype


def reference(args, v: OpView):
    return args[0].reshape(v.out.shape)


same_dtype = c.same_dtype_rule(DTYPES)


def one_axis(v: OpView) -> str | None:
    """The axis must be one int32 value (a scalar or a 1-element vector) from -(rank + 1) to rank."""
    a, r = v.attrs, v.args[0].rank
    if a["axis_dtype"] != "int32" or a["axis_count"] != 1 or a["axis_rank"] > 1:
        return f"{a['axis_count']} {a['axis_dtype']} values"
    return None if -(r + 1) <= a["axis"] <= r else f"axis {a['axis']} for rank {r}"


def expand_dims_as_reshape(call, ctx):
    """EXPAND_DIMS -> RESHAPE to the expanded shape: one view op (no copy)."""
    return replace(call, op="reshape", attrs={"new_shape": call.type.shape})


register(OpDef(
    name="expand_dims",
    tflm="expand_dims.cc (a copy of the elements)",
    kind=OpKind.INJECTIVE,
    doc="Insert a size-1 axis at a constant position (negative allowed); the data are unchanged.",
    infer=infer,
    reference=reference,
    checks=(same_dtype, one_axis),
    tflite={"EXPAND_DIMS": parse},
    legalize=(expand_dims_as_reshape,),
    view=True,
))
