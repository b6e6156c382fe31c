"""SPLIT, SPLIT_V and UNPACK: one TFLite operator with several outputs, each a slice of the input
along one axis. The importer parses the operator once per output (`multi_output`), so each output
is a call of its own, `split`, with the axis, the sizes of all the pieces and the index of its
piece; UNPACK's pieces have size 1 and drop the axis. Each call is its own gather (mcu_gather over
its slice): the IR stays single-output, and an unused piece is simply not computed.

TFLM (split.cc, split_v.cc, unpack.cc) copies elements, whatever the quantization, for float32,
int8, int16 and int32, and needs a constant axis. It sizes the pieces from the output tensors'
dimensions in the file; we compute them (SPLIT: equal parts; SPLIT_V: size_splits with at most one
-1; UNPACK: one per index) and the importer checks that they are the file's. TFLM does not check
what it leaves undefined: a SPLIT axis that does not divide evenly, an UNPACK `num` other than the
axis size; both are refused."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _portable

DTYPES = ("int8", "int16", "int32", "float32")


def _axis_value(ctx, i: int) -> int:
    raw = np.asarray(ctx.const(i))
    if raw.size != 1 or raw.dtype.kind not in "iu":
        raise ctx.fail(f"the axis must be one integer, got {raw.dtype} {list(raw.shape)}")
    return int(raw.ravel()[0])


def parse_split(ctx):
    return [ctx.inputs[1]], {"axis": _axis_value(ctx, 0), "split": ("even", ctx.num_outputs),
                             "index": ctx.output_index}


def parse_split_v(ctx):
    sizes = np.asarray(ctx.const(1))
    if sizes.ndim != 1 or sizes.dtype.kind not in "iu":
        raise ctx.fail(f"size_splits must be an integer vector, got {sizes.dtype} {list(sizes.shape)}")
    if len(sizes) != ctx.num_outputs:
        raise ctx.fail(f"size_splits has {len(sizes)} sizes for {ctx.num_outputs} outputs")
    return [ctx.inputs[0]], {"axis": _axis_value(ctx, 2), "split": ("sizes", tuple(int(s) for s in sizes)),
                             "index": ctx.output_index}


def parse_unpack(ctx):
    o = ctx.options()
    if o is None:
        raise ctx.fail("missing UnpackOptions")
    if int(o.Num()) != ctx.num_outputs:
        raise ctx.fail(f"num is {int(o.Num())} for {ctx.num_outputs} outputs")
    return [ctx.inputs[0]], {"axis": int(o.Axis()), "split": ("unpack", ctx.num_outputs),
                             "index": ctx.output_index}


def axis_of(attrs, rank: int) -> int:
    axis = attrs["axis"]
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} for rank {rank}")
    return axis + rank if axis < 0 else axis


def pieces(shape, attrs) -> list[int]:
    """The size of every piece along the axis; ValueError when they do not tile it."""
    dim = shape[axis_of(attrs, len(shape))]
    kind, arg = attrs["split"]
    if kind == "even":
        if dim % arg:
            raise ValueError(f"an axis of size {dim} into {arg} equal pieces")
        return [dim // arg] * arg
    if kind == "unpack":
        if dim != arg:
            raise ValueError(f"an axis of size {dim} unpacked into {arg} outputs")
        return [1] * arg
    sizes = list(arg)
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise ValueError(f"size_splits {sizes}")
    if -1 in sizes:
        sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
    if sum(sizes) != dim or min(sizes) < 1:
        raise ValueError(f"size_splits {list(arg)} for an axis of size {dim}")
    return sizes


def piece(shape, attrs) -> tuple[int, int, int]:
    """(axis, first index, size) of this call's piece."""
    sizes = pieces(shape, attrs)
    j = attrs["index"]
    return axis_of(attrs, len(shape)), sum(sizes[:j]), sizes[j]


def infer(args, attrs):
    shape = list(args[0].shape)
    ax, _, size = piece(shape, attrs)
    if attrs["split"][0] == "unpack":
        del shape[ax]
    else:
        shape[ax] = size
    return tuple(shape), args[0].dtype


def reference(args, v: OpView):
    ax, begin, size = piece(args[0].shape, v.attrs)
    return np.take(args[0], np.arange(begin, begin + size), axis=ax).reshape(v.out.shape).astype(v.out.np_dtype)


# ---- support checks ------------------------------------------------------------------------------

def same_dtype(v: OpView) -> str | None:
    """Input and outputs must have the same element type, one of int8, int16, int32 or float32."""
    a, o = v.args[0].dtype, v.out.dtype
    if a != o:
        return f"input is {a}, output {o}"
    return None if a in DTYPES else f"got {a}"


def pieces_tile_axis(v: OpView) -> str | None:
    """The axis must lie within the input's rank (negative counts from the end) and the pieces must
    tile it exactly: SPLIT into equal parts, SPLIT_V's sizes (one -1 inferred) summing to its size,
    UNPACK's num equal to it."""
    try:
        pieces(v.args[0].shape, v.attrs)
    except ValueError as e:
        return str(e)
    return None


def lower_c(call) -> CKernel:
    """mcu_gather over this output's piece of the input."""
    x = call.args[0].type
    ax, begin, size = piece(x.shape, call.attrs)
    st = _portable.row_major_strides(x.shape)
    counts = list(x.shape)
    counts[ax] = size
    return _portable.gather_kernel(call, begin * st[ax], counts, st)


register(OpDef(
    name="split",
    tflm="split.cc, split_v.cc, unpack.cc (SplitImpl / UnpackImpl)",
    kind=OpKind.INJECTIVE,
    doc="One output of SPLIT (equal parts), SPLIT_V (given sizes, one -1 inferred) or UNPACK (each index, "
        "the axis removed): a slice along a constant axis (negative allowed); elements copied unchanged.",
    infer=infer,
    reference=reference,
    checks=(same_dtype, pieces_tile_axis),
    tflite={"SPLIT": parse_split, "SPLIT_V": parse_split_v, "UNPACK": parse_unpack},
    portable=Portable(lower_c),
    multi_output=True,
))
