"""ARG_MAX and ARG_MIN: the index of the largest / smallest int8 value along one constant axis.

TFLM (arg_min_max.cc, reference_ops::ArgMinMax) walks the axis from index 0 and replaces the best
value only when a later one compares strictly greater (less), so a tie gives the first index. It
compares raw values (quantization is not looked at), reads the axis from an int32 tensor (negative
counts from the end) and writes int32 indices only: an int64 output (ArgMaxOptions.output_type) makes
it fail."""

from __future__ import annotations

import math

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

MAX_RANK = 6  # TFLM's RuntimeShape


def parse(ctx):
    raw = np.asarray(ctx.const(1))
    axis = int(raw.ravel()[0]) if raw.size else 0
    return [ctx.inputs[0]], {"axis": axis, "axis_count": int(raw.size), "axis_dtype": str(raw.dtype)}


def resolved_axis(rank: int, attrs) -> int:
    return attrs["axis"] + rank if attrs["axis"] < 0 else attrs["axis"]


def infer(args, attrs):
    shape, axis = args[0].shape, resolved_axis(args[0].rank, attrs)
    return tuple(d for i, d in enumerate(shape) if i != axis), "int32"


def _reference(pick):
    def reference(args, v: OpView):
        return pick(args[0], axis=resolved_axis(args[0].ndim, v.attrs)).astype(np.int32).reshape(v.out.shape)
    return reference


# ---- support checks ------------------------------------------------------------------------------

def int8_input(v: OpView) -> str | None:
    """The input must be int8."""
    return None if v.args[0].dtype == "int8" else f"got {v.args[0].dtype}"


def int32_output(v: OpView) -> str | None:
    """The output must be int32 (TFLM has no int64 ARG_MAX / ARG_MIN kernel)."""
    return None if v.out.dtype == "int32" else f"got {v.out.dtype}"


def one_axis(v: OpView) -> str | None:
    """The axis must be one int32 value naming an axis of the input (negative counts from the end),
    whose rank must be 1 to 6."""
    a, r = v.attrs, v.args[0].rank
    if a["axis_dtype"] != "int32" or a["axis_count"] != 1:
        return f"{a['axis_count']} {a['axis_dtype']} values"
    if not 1 <= r <= MAX_RANK or not -r <= a["axis"] < r:
        return f"axis {a['axis']} of a rank-{r} input"
    return None


def lower_c(call) -> CKernel:
    """mcu_arg_max_s8 / mcu_arg_min_s8 over the input seen as [outer, axis, inner]."""
    shape = call.args[0].type.shape
    axis = resolved_axis(len(shape), call.attrs)
    params = {"outer": math.prod(shape[:axis]), "axis_size": shape[axis], "inner": math.prod(shape[axis + 1:])}
    return CKernel(f"mcu_{call.op}_s8", "mcu_arg_min_max", "mcu_arg_min_max_params", params)


for _name, _pick, _doc in (
    ("arg_max", np.argmax, "The int32 index of the largest int8 value along a constant axis (first on ties)."),
    ("arg_min", np.argmin, "The int32 index of the smallest int8 value along a constant axis (first on ties)."),
):
    register(OpDef(
        name=_name,
        tflm="arg_min_max.cc, reference_ops::ArgMinMax",
        kind=OpKind.REDUCTION,
        doc=_doc,
        infer=infer,
        reference=_reference(_pick),
        checks=(int8_input, int32_output, one_axis),
        tflite={_name.upper(): parse},
        portable=Portable(lower_c),
    ))
