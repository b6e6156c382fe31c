"""TILE: repeat a tensor `multiples[k]` times along each axis k (numpy's np.tile with one multiple
per axis): output element i reads input element i mod size, axis by axis.

TensorFlow Lite Micro has no TILE kernel, so TFLM cannot check this op: its reference is np.tile,
and the portable kernel is tested against np.tile on many shapes. The multiples (int32 or int64)
must be constant; elements are copied raw, whatever their quantization (as TFLite's TILE does)."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable

DTYPES = ("int8", "int16", "int32", "float32")
MAX_RANK = _portable.GATHER_TABLE_RANK


def parse(ctx):
    raw = np.asarray(ctx.const(1))
    return [ctx.inputs[0]], {"multiples": tuple(int(m) for m in raw.ravel()), "multiples_shape": tuple(raw.shape),
                             "multiples_dtype": str(raw.dtype)}


def infer(args, attrs):
    return tuple(d * m for d, m in zip(args[0].shape, attrs["multiples"])), args[0].dtype


def reference(args, v: OpView):
    return np.tile(args[0], v.attrs["multiples"]).astype(v.out.np_dtype)


# ---- support checks ------------------------------------------------------------------------------

same_dtype = c.same_dtype_rule(DTYPES)


def rank_limit(v: OpView) -> str | None:
    """The input must have rank 1 to 6."""
    r = v.args[0].rank
    return None if 1 <= r <= MAX_RANK else f"input has rank {r}"


def multiples_vector(v: OpView) -> str | None:
    """The multiples must be an int32 or int64 vector with one value of at least 1 per input axis."""
    a = v.attrs
    if a["multiples_dtype"] not in ("int32", "int64"):
        return f"multiples are {a['multiples_dtype']}"
    if a["multiples_shape"] != (v.args[0].rank,) or min(a["multiples"], default=1) < 1:
        return f"got {list(a['multiples'])} for rank {v.args[0].rank}"
    return None


def lower_c(call) -> CKernel:
    """mcu_gather_table: output index i of axis k reads input index i mod size_k."""
    x = call.args[0].type
    strides = _portable.row_major_strides(x.shape)
    tables = [(np.arange(n) % d) * st for n, d, st in zip(call.type.shape, x.shape, strides)]
    return _portable.gather_table_kernel(call, call.type.shape, tables)


register(OpDef(
    name="tile",
    tflm="none (TensorFlow Lite Micro has no TILE kernel; tested against numpy's np.tile)",
    kind=OpKind.INJECTIVE,
    doc="Repeat a rank 1-6 tensor along each axis by constant multiples (not checkable against TFLM, "
        "which has no TILE kernel).",
    infer=infer,
    reference=reference,
    checks=(same_dtype, rank_limit, multiples_vector),
    tflite={"TILE": parse},
    portable=Portable(lower_c),
))
