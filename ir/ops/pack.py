"""PACK: stack N tensors of one shape along a new axis.

TFLM (pack.cc) copies the inputs' elements (float32, int8, int32, int64), whatever their
quantization: each output element is an input element's bytes. The portable kernel mcu_pack is the
same copy for any number of inputs (it is called as mcu_concatenation is, with an array of input
pointers: concatenation.c.j2).
Shape chains (SHAPE -> STRIDED_SLICE -> PACK) fold at compile time and need no kernel."""

from __future__ import annotations

import math

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _portable

DTYPES = ("int8", "int32", "float32")  # the kernel's; TFLM also has int64, which we only fold
MAX_RANK = 6  # the output's, as the other data-movement ops (RuntimeShape::kMaxSmallSize)


def parse(ctx):
    o = ctx.options()
    if o is None:
        raise ctx.fail("missing PackOptions")
    if int(o.ValuesCount()) != len(ctx.inputs):
        raise ctx.fail(f"values_count is {int(o.ValuesCount())} for {len(ctx.inputs)} inputs")
    return list(ctx.inputs), {"axis": int(o.Axis())}


def positive_axis(axis: int, out_rank: int) -> int:
    return axis + out_rank if axis < 0 else axis


def infer(args, attrs):
    shape = list(args[0].shape)
    shape.insert(positive_axis(attrs["axis"], len(shape) + 1), len(args))
    return tuple(shape), args[0].dtype


def reference(args, v: OpView):
    ax = positive_axis(v.attrs["axis"], v.out.rank)
    return np.stack([np.asarray(a) for a in args], axis=ax).astype(v.out.np_dtype, copy=False)


# ---- support checks ------------------------------------------------------------------------------

def same_dtype(v: OpView) -> str | None:
    """All inputs and the output must have the same element type, one of int8, int32 or float32."""
    types = sorted({t.dtype for t in (*v.args, v.out)})
    if len(types) > 1:
        return f"got {', '.join(types)}"
    return None if types[0] in DTYPES else f"got {types[0]}"


def same_shapes(v: OpView) -> str | None:
    """All inputs must have the same shape."""
    ref = v.args[0].shape
    bad = next((i for i, t in enumerate(v.args) if t.shape != ref), None)
    return None if bad is None else f"input {bad} is {list(v.args[bad].shape)}, input 0 is {list(ref)}"


def axis_in_range(v: OpView) -> str | None:
    """The axis must lie within the output's rank (negative counts from the end), at most 6."""
    r = v.args[0].rank + 1
    if r > MAX_RANK:
        return f"output rank {r}"
    axis = v.attrs["axis"]
    return None if -r <= axis < r else f"axis {axis} for output rank {r}"


def lower_c(call) -> CKernel:
    """mcu_pack: per outer step, each input's elements after the new axis in turn (the call, with its
    array of input pointers, is rendered by concatenation.c.j2)."""
    out = call.type
    ax = positive_axis(call.attrs["axis"], out.rank)
    params = {"elem_size": _portable.elem_size(call), "num_inputs": len(call.args),
              "outer_size": math.prod(out.shape[:ax]), "copy_size": math.prod(out.shape[ax + 1:])}
    return CKernel("mcu_pack", "mcu_pack", "mcu_pack_params", params, template="concatenation.c.j2")


register(OpDef(
    name="pack",
    tflm="pack.cc, PackImpl",
    kind=OpKind.INJECTIVE,
    doc="Stack any number of same-shape tensors along a new axis (negative allowed); the elements are "
        "copied unchanged.",
    infer=infer,
    reference=reference,
    checks=(same_dtype, same_shapes, axis_in_range),
    tflite={"PACK": parse},
    portable=Portable(lower_c),
))
