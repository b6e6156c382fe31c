"""FILL and ZEROS_LIKE: a tensor of one repeated element.

FILL (fill.cc, reference_ops::Fill) copies its scalar value operand (constant or computed) into
every output element, raw (an int8 value is not requantized to the output's quantization), for
int8, int32 and float32; a constant dims operand must equal the output shape (a computed one is
ignored: TFLM takes the output shape from the model). ZEROS_LIKE (zeros_like.cc) writes 0 (raw: not
the zero point) into a tensor of its input's shape and type, for int8, int32, int64 and float32. Both
run the same kernel, ZEROS_LIKE with a constant 0."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Constant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c

FILL_DTYPES = ("int8", "int32", "float32")
ZEROS_DTYPES = ("int8", "int32", "int64", "float32")


def parse_fill(ctx):
    dims = ctx.inputs[0]
    attrs = {"shape": tuple(ctx.out.shape), "dims": None, "dims_dtype": None}
    if isinstance(dims, Constant):
        attrs["dims"] = tuple(int(d) for d in np.asarray(dims.data).ravel()) if dims.type.rank == 1 else None
        attrs["dims_dtype"] = dims.type.dtype if dims.type.rank == 1 else f"rank-{dims.type.rank} {dims.type.dtype}"
    return [ctx.inputs[1]], attrs


def infer_fill(args, attrs):
    return tuple(attrs["shape"]), args[0].dtype


def reference_fill(args, v: OpView):
    return np.full(v.out.shape, np.asarray(args[0]).reshape(()), dtype=v.out.np_dtype)


def parse_zeros_like(ctx):
    return [ctx.inputs[0]], {}


def infer_zeros_like(args, attrs):
    return args[0].shape, args[0].dtype


def reference_zeros_like(args, v: OpView):
    return np.zeros(v.out.shape, dtype=v.out.np_dtype)


# ---- support checks ------------------------------------------------------------------------------

def fill_value(v: OpView) -> str | None:
    """The value must be a scalar of the output's element type: int8, int32 or float32."""
    t = v.args[0]
    if t.rank != 0:
        return f"value has shape {list(t.shape)}"
    if t.dtype != v.out.dtype:
        return f"value is {t.dtype}, output {v.out.dtype}"
    return None if t.dtype in FILL_DTYPES else f"got {t.dtype}"


def fill_dims(v: OpView) -> str | None:
    """A constant dims operand must be an integer vector equal to the output shape."""
    a = v.attrs
    if a["dims_dtype"] is None:
        return None
    if a["dims_dtype"] not in ("int8", "int16", "int32", "int64") or a["dims"] != tuple(a["shape"]):
        return f"dims {a['dims_dtype']} {list(a['dims']) if a['dims'] is not None else ''}, output {list(a['shape'])}"
    return None


zeros_dtype = c.same_dtype_rule(ZEROS_DTYPES)


# ---- portable kernel -----------------------------------------------------------------------------

def lower_fill(call) -> CKernel:
    """mcu_fill: the value operand (an activation or a constant) into every element."""
    t = call.type
    return CKernel("mcu_fill", "mcu_fill", "mcu_fill_params", {"elem_size": t.np_dtype.itemsize, "size": t.size})


def lower_zeros_like(call) -> CKernel:
    """mcu_fill from a constant 0 (the input only gives the shape: not passed)."""
    t = call.type
    return CKernel("mcu_fill", "mcu_fill", "mcu_fill_params", {"elem_size": t.np_dtype.itemsize, "size": t.size},
                   {"zero": np.zeros(1, dtype=t.np_dtype)}, op_args=0)


register(OpDef(
    name="fill",
    tflm="fill.cc, reference_ops::Fill",
    kind=OpKind.BROADCAST,
    doc="A tensor of the output's shape holding one scalar value (constant or computed), copied raw.",
    infer=infer_fill,
    reference=reference_fill,
    checks=(fill_value, fill_dims),
    tflite={"FILL": parse_fill},
    portable=Portable(lower_fill),
))

register(OpDef(
    name="zeros_like",
    tflm="zeros_like.cc, Eval (raw 0)",
    kind=OpKind.ELEMWISE,
    doc="A tensor of the input's shape and type holding raw 0 (not the zero point).",
    infer=infer_zeros_like,
    reference=reference_zeros_like,
    checks=(zeros_dtype,),
    tflite={"ZEROS_LIKE": parse_zeros_like},
    portable=Portable(lower_zeros_like),
))
