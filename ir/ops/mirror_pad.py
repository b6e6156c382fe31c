"""MIRROR_PAD: pad each axis with a mirror image of the input, REFLECT (the edge element not
repeated) or SYMMETRIC (repeated), with a constant [rank, 2] paddings table (int32 or int64).

TFLM (mirror_pad.cc, MirrorPad / GetInputDimension) maps every output index, axis by axis, to an
input index: before the input, original = left_pad + offset - 1 and the index is original -
min(i, original - offset); after it, original = size - 1 - offset and the index is original -
min(i - left_pad - size, original), with offset 1 for REFLECT and 0 for SYMMETRIC. It copies raw
elements (quantization is not looked at) of int8 or float32 tensors. Paddings beyond what the mode
can mirror (REFLECT: size - 1, SYMMETRIC: size) make TFLM read outside the input, so they are
refused, as TensorFlow refuses them."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable

DTYPES = ("int8", "float32")
MODES = {0: "REFLECT", 1: "SYMMETRIC"}
MAX_RANK = _portable.GATHER_TABLE_RANK


def parse(ctx):
    raw = np.asarray(ctx.const(1))
    o = ctx.options()
    mode = int(o.Mode()) if o is not None else 0
    attrs = {"paddings": tuple((int(a), int(b)) for a, b in raw.reshape(-1, 2)) if raw.size % 2 == 0 else (),
             "paddings_shape": tuple(raw.shape), "paddings_dtype": str(raw.dtype),
             "mode": MODES.get(mode, f"UNKNOWN_{mode}")}
    return [ctx.inputs[0]], attrs


def infer(args, attrs):
    return tuple(d + lo + hi for d, (lo, hi) in zip(args[0].shape, attrs["paddings"])), args[0].dtype


def source_index(i: int, before: int, size: int, mode: str) -> int:
    """TFLM's GetInputDimension: the input index output index `i` of one axis reads."""
    offset = 1 if mode == "REFLECT" else 0
    if i < before:
        original = before + offset - 1
        return original - min(i, original - offset)
    i -= before
    if i >= size:
        original = size - 1 - offset
        return original - min(i - size, original)
    return i


def axis_sources(shape, attrs) -> list[np.ndarray]:
    """Per axis, the input index each output index reads."""
    return [np.array([source_index(i, lo, d, attrs["mode"]) for i in range(lo + d + hi)], dtype=np.int64)
            for d, (lo, hi) in zip(shape, attrs["paddings"])]


def reference(args, v: OpView):
    x = args[0]
    return np.ascontiguousarray(x[np.ix_(*axis_sources(x.shape, v.attrs))]) if x.ndim else x.copy()


# ---- support checks ------------------------------------------------------------------------------

same_dtype = c.same_dtype_rule(DTYPES)


def rank_limit(v: OpView) -> str | None:
    """The input must have rank 1 to 6."""
    r = v.args[0].rank
    return None if 1 <= r <= MAX_RANK else f"input has rank {r}"


def known_mode(v: OpView) -> str | None:
    """The mode must be REFLECT or SYMMETRIC."""
    return None if v.attrs["mode"] in MODES.values() else f"got {v.attrs['mode']}"


def paddings_table(v: OpView) -> str | None:
    """Paddings must be an int32 or int64 [rank, 2] table of non-negative values, at most size - 1
    per side for REFLECT and size for SYMMETRIC."""
    shape, pads = v.args[0].shape, v.attrs["paddings"]
    if v.attrs["paddings_dtype"] not in ("int32", "int64"):
        return f"paddings are {v.attrs['paddings_dtype']}"
    if v.attrs["paddings_shape"] != (len(shape), 2):
        return f"paddings shape {list(v.attrs['paddings_shape'])} for rank {len(shape)}"
    limit = 1 if v.attrs["mode"] == "REFLECT" else 0
    for ax, (d, (lo, hi)) in enumerate(zip(shape, pads)):
        if min(lo, hi) < 0 or max(lo, hi) > d - limit:
            return f"axis {ax} of size {d} padded by {lo} and {hi}"
    return None


def lower_c(call) -> CKernel:
    """mcu_gather_table: per output axis, the input index it reads times the input stride."""
    x = call.args[0].type
    strides = _portable.row_major_strides(x.shape)
    tables = [src * st for src, st in zip(axis_sources(x.shape, call.attrs), strides)]
    return _portable.gather_table_kernel(call, call.type.shape, tables)


register(OpDef(
    name="mirror_pad",
    tflm="mirror_pad.cc, MirrorPad",
    kind=OpKind.INJECTIVE,
    doc="Mirror padding (REFLECT or SYMMETRIC) of a rank 1-6 tensor with constant paddings.",
    infer=infer,
    reference=reference,
    checks=(same_dtype, rank_limit, known_mode, paddings_table),
    tflite={"MIRROR_PAD": parse},
    portable=Portable(lower_c),
))
