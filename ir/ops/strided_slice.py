"""STRIDED_SLICE with constant begin/end/strides and begin/end/shrink-axis masks.

Indices follow TFLM's eval path (strided_slice_logic.h StridedSliceStartForAxis/EndForAxis):
a negative index counts from the end, then it is clamped to [0, size] for a positive stride or to
[-1, size-1] for a negative one, then a set begin/end mask bit replaces it by the full-range bound;
a shrink axis takes the single element at its start. TFLM ignores ellipsis_mask, new_axis_mask
and the offset flag (it forces them to 0/false), so models using them are rejected, as are inputs
of rank above 4, empty slices (TFLM cannot allocate them) and shrink axes that TFLM would leave
unwritten (begin at or past the end, or a negative stride). The kernel only moves elements;
quantization is not looked at."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _portable

DTYPES = ("int8", "int16", "int32", "float32")
MAX_RANK = 4  # strided_slice_common.cc kMaxDim


def _bit(mask: int, axis: int) -> bool:
    return bool(mask & (1 << axis))


def parse(ctx):
    o = ctx.options()
    if o is None:
        raise ctx.fail("missing StridedSliceOptions")
    raws = [np.asarray(ctx.const(i)) for i in (1, 2, 3)]
    odd = [str(r.dtype) for r in raws if r.dtype != np.int32]
    attrs = {
        "begin": tuple(int(b) for b in raws[0].ravel()),
        "end": tuple(int(e) for e in raws[1].ravel()),
        "strides": tuple(int(s) for s in raws[2].ravel()),
        "begin_mask": int(o.BeginMask()),
        "end_mask": int(o.EndMask()),
        "shrink_axis_mask": int(o.ShrinkAxisMask()),
        "ellipsis_mask": int(o.EllipsisMask()),
        "new_axis_mask": int(o.NewAxisMask()),
        "offset": bool(o.Offset()) if hasattr(o, "Offset") else False,
        "index_dtype": odd[0] if odd else "int32",
    }
    return [ctx.inputs[0]], attrs


def start_for_axis(begin: int, stride: int, size: int, masked: bool) -> int:
    """TFLM's StridedSliceStartForAxis."""
    start = begin + size if begin < 0 else begin
    start = min(max(start, 0), size) if stride > 0 else min(max(start, -1), size - 1)
    if masked:
        start = 0 if stride > 0 else size - 1
    return start


def end_for_axis(end: int, stride: int, size: int, masked: bool, shrink: bool, start: int) -> int:
    """TFLM's StridedSliceEndForAxis (without the offset flag, which TFLM never sets)."""
    if shrink:
        return start if start >= size else start + 1
    stop = end + size if end < 0 else end
    stop = min(max(stop, 0), size) if stride > 0 else min(max(stop, -1), size - 1)
    if masked:
        stop = size if stride > 0 else -1
    return stop


def axis_indices(shape, attrs) -> list[range]:
    """The input indices read along each axis, in output order."""
    out = []
    for ax, size in enumerate(shape):
        stride = attrs["strides"][ax]
        start = start_for_axis(attrs["begin"][ax], stride, size, _bit(attrs["begin_mask"], ax))
        stop = end_for_axis(attrs["end"][ax], stride, size, _bit(attrs["end_mask"], ax),
                            _bit(attrs["shrink_axis_mask"], ax), start)
        out.append(range(start, stop, stride))
    return out


def infer(args, attrs):
    shape = args[0].shape
    idx = axis_indices(shape, attrs)
    dims = tuple(len(r) for ax, r in enumerate(idx) if not _bit(attrs["shrink_axis_mask"], ax))
    return dims, args[0].dtype


def reference(args, v: OpView):
    x = args[0]
    idx = [np.asarray(r, dtype=np.int64) for r in axis_indices(x.shape, v.attrs)]
    picked = x[np.ix_(*idx)]
    return np.ascontiguousarray(picked).reshape(v.out.shape)


# ---- support checks ------------------------------------------------------------------------------

def same_dtype(v: OpView) -> str | None:
    """Input and output must have the same element type, one of int8, int16, int32 or float32."""
    a, o = v.args[0].dtype, v.out.dtype
    if a != o:
        return f"input is {a}, output {o}"
    return None if a in DTYPES else f"got {a}"


def rank_limit(v: OpView) -> str | None:
    """The input must have rank 1 to 4."""
    r = v.args[0].rank
    return None if 1 <= r <= MAX_RANK else f"input has rank {r}"


def index_vectors(v: OpView) -> str | None:
    """begin, end and strides must be int32 vectors with one entry per input axis, and no stride may be 0."""
    a = v.attrs
    if a.get("index_dtype", "int32") != "int32":
        return f"got {a['index_dtype']} indices"
    r = v.args[0].rank
    lens = (len(a["begin"]), len(a["end"]), len(a["strides"]))
    if any(n != r for n in lens):
        return f"lengths {list(lens)} for rank {r}"
    if 0 in a["strides"]:
        return f"strides {list(a['strides'])}"
    return None


def unsupported_masks(v: OpView) -> str | None:
    """ellipsis_mask and new_axis_mask must be 0 and the offset flag unset (TFLM ignores them)."""
    a = v.attrs
    bad = [f"{k}={a[k]}" for k in ("ellipsis_mask", "new_axis_mask") if a.get(k)]
    if a.get("offset"):
        bad.append("offset=true")
    return None if not bad else ", ".join(bad)


def shrink_axes_in_range(v: OpView) -> str | None:
    """A shrunk axis must have a positive stride and a begin index below the axis size (TFLM
    writes nothing otherwise; a begin below -size is clamped to 0, as TFLM does)."""
    a = v.attrs
    shape = v.args[0].shape
    for ax, size in enumerate(shape):
        if not _bit(a["shrink_axis_mask"], ax) or ax >= len(a["strides"]) or ax >= len(a["begin"]):
            continue
        stride = a["strides"][ax]
        if stride <= 0:
            return f"axis {ax} has stride {stride}"
        if not _bit(a["begin_mask"], ax) and a["begin"][ax] >= size:
            return f"axis {ax} of size {size} begins at {a['begin'][ax]}"
    return None


def non_empty(v: OpView) -> str | None:
    """The slice must keep at least one element along every axis (TFLM cannot allocate an empty tensor)."""
    if index_vectors(v) is not None:
        return None  # reported by index_vectors
    empty = [ax for ax, r in enumerate(axis_indices(v.args[0].shape, v.attrs)) if len(r) == 0]
    return None if not empty else f"axis {empty[0]} selects nothing"


def lower_c(call) -> CKernel:
    """mcu_gather over the slice: its first element and, per axis, count and input step."""
    x = call.args[0].type
    ranges = axis_indices(x.shape, call.attrs)
    st = _portable.row_major_strides(x.shape)
    start = sum(r.start * s for r, s in zip(ranges, st))
    return _portable.gather_kernel(call, start, [len(r) for r in ranges], [r.step * s for r, s in zip(ranges, st)])


register(OpDef(
    name="strided_slice",
    tflm="strided_slice.cc, reference_ops::StridedSlice",
    kind=OpKind.INJECTIVE,
    doc="Strided slice of a rank 1-4 tensor with constant begin/end/strides (negative allowed) and "
        "begin, end and shrink-axis masks.",
    infer=infer,
    reference=reference,
    checks=(same_dtype, rank_limit, index_vectors, unsupported_masks, shrink_axes_in_range, non_empty),
    tflite={"STRIDED_SLICE": parse},
    portable=Portable(lower_c),
))
