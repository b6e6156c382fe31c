"""RESHAPE and SQUEEZE: the same bytes under a new shape.

TFLM copies the input buffer unchanged (memcpy) for both, whatever the quantization parameters:
an output with other quantization than the input reinterprets the same int8 values, and so do we.
TFLM's RESHAPE sizes its output from the output tensor's dimensions in the file (resolving one -1);
the shape operand only has to agree with them, which the importer checks through `infer`."""

from __future__ import annotations

import math

import numpy as np
from mcuforge.ir.expr import Constant
from mcuforge.ir.registry import OpDef, OpKind, OpView, register

# Element types both kernels move (TFLM copies bytes of any type; these are the ones that matter).
DTYPES = ("int8", "int16", "int32", "float32")
MAX_SQUEEZE_RANK = 8  # TFLM's squeeze.cc: max_squeeze_dims


def resolve_shape(new_shape, count: int) -> tuple[int, ...]:
    """TFLite's shape inference for RESHAPE: at most one -1, which takes whatever the other
    dimensions leave of `count` elements. Raises ValueError on an impossible shape."""
    dims = [int(d) for d in new_shape]
    if dims.count(-1) > 1:
        raise ValueError(f"new shape {dims} has more than one -1")
    if any(d < -1 for d in dims):
        raise ValueError(f"new shape {dims} has a negative dimension")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or count % known:
            raise ValueError(f"cannot fit {count} elements into {dims}")
        dims[dims.index(-1)] = count // known
    if math.prod(dims) != count:
        raise ValueError(f"new shape {dims} holds {math.prod(dims)} elements, the input {count}")
    return tuple(dims)


def parse_reshape(ctx):
    """The new shape comes from the constant shape operand, else ReshapeOptions.new_shape, else
    (a shape computed at run time, which TFLM ignores too) the output tensor's dimensions."""
    x = ctx.inputs[0]
    if len(ctx.inputs) > 1 and isinstance(ctx.inputs[1], Constant):
        new_shape = tuple(int(d) for d in np.asarray(ctx.const(1)).ravel())
    else:
        o = ctx.options()
        if o is not None and not o.NewShapeIsNone() and o.NewShapeLength() > 0:
            new_shape = tuple(int(d) for d in o.NewShapeAsNumpy())
        else:
            new_shape = tuple(ctx.out.shape)
    return [x], {"new_shape": new_shape}


def infer_reshape(args, attrs):
    return resolve_shape(attrs["new_shape"], args[0].size), args[0].dtype


def reference_reshape(args, v: OpView):
    return args[0].reshape(v.out.shape)


def squeeze_axes(shape: tuple[int, ...], squeeze_dims) -> tuple[int, ...]:
    """Axes SQUEEZE removes: the listed ones (negative counts from the end), or every size-1 axis
    when the list is empty. Raises ValueError on an axis out of range or of size other than 1."""
    rank = len(shape)
    if not squeeze_dims:
        return tuple(i for i, d in enumerate(shape) if d == 1)
    axes = set()
    for a in squeeze_dims:
        ax = a + rank if a < 0 else a
        if not 0 <= ax < rank:
            raise ValueError(f"axis {a} is out of range for rank {rank}")
        if shape[ax] != 1:
            raise ValueError(f"axis {a} has size {shape[ax]}, not 1")
        axes.add(ax)
    return tuple(sorted(axes))


def parse_squeeze(ctx):
    o = ctx.options()
    dims = () if o is None or o.SqueezeDimsIsNone() else tuple(int(d) for d in o.SqueezeDimsAsNumpy())
    return [ctx.inputs[0]], {"squeeze_dims": dims}


def infer_squeeze(args, attrs):
    shape = args[0].shape
    axes = squeeze_axes(shape, attrs["squeeze_dims"])
    return tuple(d for i, d in enumerate(shape) if i not in axes), args[0].dtype


def reference_squeeze(args, v: OpView):
    return args[0].reshape(v.out.shape)


# ---- support checks ------------------------------------------------------------------------------

def moved_dtype(v: OpView) -> str | None:
    """Input and output must have the same element type, one of int8, int16, int32 or float32."""
    a, o = v.args[0].dtype, v.out.dtype
    if a != o:
        return f"input is {a}, output {o}"
    return None if a in DTYPES else f"got {a}"


def new_shape_fits(v: OpView) -> str | None:
    """The new shape must hold exactly the input's elements, with at most one -1 to infer."""
    try:
        resolve_shape(v.attrs["new_shape"], v.args[0].size)
    except ValueError as e:
        return str(e)
    return None


def squeeze_rank(v: OpView) -> str | None:
    """SQUEEZE input rank must be at most 8."""
    r = v.args[0].rank
    return None if r <= MAX_SQUEEZE_RANK else f"input has rank {r}"


def squeeze_dims_valid(v: OpView) -> str | None:
    """Every squeezed axis must exist in the input and have size 1."""
    try:
        squeeze_axes(v.args[0].shape, v.attrs["squeeze_dims"])
    except ValueError as e:
        return str(e)
    return None


register(OpDef(
    name="reshape",
    tflm="reshape.cc (a copy of the bytes)",
    kind=OpKind.INJECTIVE,
    doc="Reshape to a static shape (one -1 inferred); the data are copied unchanged.",
    infer=infer_reshape,
    reference=reference_reshape,
    checks=(moved_dtype, new_shape_fits),
    tflite={"RESHAPE": parse_reshape},
    view=True,
))

def squeeze_as_reshape(call, ctx):
    """SQUEEZE -> RESHAPE to the squeezed shape: one view op for both (no copy)."""
    from dataclasses import replace

    return replace(call, op="reshape", attrs={"new_shape": call.type.shape})


register(OpDef(
    name="squeeze",
    tflm="squeeze.cc (a copy of the bytes)",
    kind=OpKind.INJECTIVE,
    doc="Remove size-1 axes (the listed ones, negative allowed, or all when none are listed).",
    infer=infer_squeeze,
    reference=reference_squeeze,
    checks=(moved_dtype, squeeze_rank, squeeze_dims_valid),
    tflite={"SQUEEZE": parse_squeeze},
    legalize=(squeeze_as_reshape,),
    view=True,
))
