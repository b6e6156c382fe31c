"""SLICE: the block of `size` elements per axis starting at `begin`, both constant vectors (int32
or int64, of the same type); a size of -1 takes everything from begin to the end of the axis.

TFLM (slice.cc, GetValidatedBeginAndSizeVectors then reference_ops::Slice) requires 0 <= begin <=
size of the axis and a resolved size in [0, size - begin], an input of rank at most 5 and a 1-D
begin and size with one entry per axis; it copies raw elements (quantization is not looked at).
Empty slices are refused (TFLM cannot allocate an empty tensor). The kernel is the output-order
gather (mcu_gather) with the slice's start and the input strides."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable

DTYPES = ("int8", "int16", "int32", "float32")
MAX_RANK = 5  # slice.cc kMaxDim


def parse(ctx):
    begin, size = np.asarray(ctx.const(1)), np.asarray(ctx.const(2))
    attrs = {"begin": tuple(int(b) for b in begin.ravel()), "size": tuple(int(s) for s in size.ravel()),
             "index_shapes": (tuple(begin.shape), tuple(size.shape)),
             "index_dtypes": (str(begin.dtype), str(size.dtype))}
    return [ctx.inputs[0]], attrs


def resolved_sizes(shape, attrs) -> tuple[int, ...]:
    """Each axis' slice length (-1: to the end of the axis)."""
    return tuple(d - b if s == -1 else s for d, b, s in zip(shape, attrs["begin"], attrs["size"]))


def infer(args, attrs):
    return resolved_sizes(args[0].shape, attrs), args[0].dtype


def reference(args, v: OpView):
    x = args[0]
    key = tuple(slice(b, b + n) for b, n in zip(v.attrs["begin"], resolved_sizes(x.shape, v.attrs)))
    return np.ascontiguousarray(x[key]).astype(v.out.np_dtype)


# ---- support checks ------------------------------------------------------------------------------

same_dtype = c.same_dtype_rule(DTYPES)


def rank_limit(v: OpView) -> str | None:
    """The input must have rank 1 to 5."""
    r = v.args[0].rank
    return None if 1 <= r <= MAX_RANK else f"input has rank {r}"


def index_vectors(v: OpView) -> str | None:
    """begin and size must be int32 or int64 vectors of one type with one entry per input axis."""
    a, r = v.attrs, v.args[0].rank
    if a["index_dtypes"][0] != a["index_dtypes"][1] or a["index_dtypes"][0] not in ("int32", "int64"):
        return f"begin is {a['index_dtypes'][0]}, size {a['index_dtypes'][1]}"
    if a["index_shapes"] != ((r,), (r,)):
        return f"shapes {[list(s) for s in a['index_shapes']]} for rank {r}"
    return None


def within_input(v: OpView) -> str | None:
    """Each axis' slice must lie in the input and keep at least one element: 0 <= begin < size of
    the axis, and a slice size of -1 (to the end) or from 1 to size - begin."""
    if index_vectors(v) is not None:
        return None  # reported by index_vectors
    for ax, (d, b, s) in enumerate(zip(v.args[0].shape, v.attrs["begin"], v.attrs["size"])):
        if not 0 <= b < d or not (s == -1 or 1 <= s <= d - b):
            return f"axis {ax} of size {d}: begin {b}, size {s}"
    return None


def lower_c(call) -> CKernel:
    """mcu_gather: the slice's first element, its sizes and the input strides."""
    x = call.args[0].type
    st = _portable.row_major_strides(x.shape)
    start = sum(b * s for b, s in zip(call.attrs["begin"], st))
    return _portable.walk_kernel(call, start, resolved_sizes(x.shape, call.attrs), st)


register(OpDef(
    name="slice",
    tflm="slice.cc, reference_ops::Slice",
    kind=OpKind.INJECTIVE,
    doc="The block of a rank 1-5 tensor at constant begin with constant sizes (-1: to the end).",
    infer=infer,
    reference=reference,
    checks=(same_dtype, rank_limit, index_vectors, within_input),
    tflite={"SLICE": parse},
    portable=Portable(lower_c),
))
