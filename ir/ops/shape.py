"""SHAPE: the static shape of its input, a constant.

Shapes are static (the file's shapes, which TFLM allocates), so SHAPE's result is known at compile
time: the parser records the input's shape as an attribute and the call takes no arguments, so the
importer always folds it into a constant (ir/fold.py). The shape chains converters build on it
(SHAPE -> STRIDED_SLICE -> PACK feeding RESHAPE or TRANSPOSE_CONV) then fold too. TFLM's kernel
writes the same dimensions at run time (int32 only; folding also gives int64)."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import OpDef, OpKind, OpView, register

OUT_DTYPES = ("int32", "int64")


def parse(ctx):
    if not ctx.inputs or ctx.inputs[0] is None:
        raise ctx.fail("input 0 is missing")
    if ctx.out.dtype not in OUT_DTYPES:
        raise ctx.fail(f"the output is {ctx.out.dtype}; SHAPE gives int32 or int64")
    return [], {"shape": tuple(ctx.inputs[0].type.shape), "out_dtype": ctx.out.dtype}


def infer(args, attrs):
    return (len(attrs["shape"]),), attrs["out_dtype"]


def reference(args, v: OpView):
    return np.asarray(v.attrs["shape"], dtype=np.dtype(v.attrs["out_dtype"])).reshape(v.out.shape)


register(OpDef(
    name="shape",
    tflm="shape.cc (the static dimensions; folded at compile time, no kernel)",
    kind=OpKind.OPAQUE,
    doc="The input's static shape as an int32 (or int64) vector; always a constant, folded at compile time.",
    infer=infer,
    reference=reference,
    tflite={"SHAPE": parse},
))
