"""CONCATENATION: join tensors along one axis.

TFLM copies the inputs' bytes (reference_ops::Concatenation, no arithmetic). For int8 its Prepare
requires every input to carry exactly the output's scale and zero point; desktop TFLite instead
rescales mismatched int8 inputs (ConcatenationWithScaling). We follow TFLM: mismatched int8
quantization is rejected. For int16 it requires every zero point (inputs and output) to be 0 and
lets the scales differ (the bytes are copied as they are). TFLM also rejects any fused activation,
more than 10 inputs and ranks above 6 (RuntimeShape::kMaxSmallSize)."""

from __future__ import annotations

import math

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable

DTYPES = ("int8", "int16", "int32", "float32")
MAX_INPUTS = 10  # TFLM concatenation.cc kMaxInputNum
MAX_RANK = 6  # RuntimeShape::kMaxSmallSize


def parse(ctx):
    o = ctx.options()
    if o is None:
        raise ctx.fail("missing ConcatenationOptions")
    return list(ctx.inputs), {"axis": int(o.Axis()), "activation": c.activation(o)}


def positive_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def infer(args, attrs):
    rank = args[0].rank
    ax = positive_axis(attrs["axis"], rank)
    shape = list(args[0].shape)
    shape[ax] = sum(a.shape[ax] for a in args)
    return tuple(shape), args[0].dtype


def reference(args, v: OpView):
    ax = positive_axis(v.attrs["axis"], v.out.rank)
    return np.concatenate(args, axis=ax).astype(v.out.np_dtype, copy=False)


# ---- support checks ------------------------------------------------------------------------------

def same_dtype(v: OpView) -> str | None:
    """All inputs and the output must have the same element type, one of int8, int16, int32 or float32."""
    types = sorted({t.dtype for t in (*v.args, v.out)})
    if len(types) > 1:
        return f"got {', '.join(types)}"
    return None if types[0] in DTYPES else f"got {types[0]}"


def input_count(v: OpView) -> str | None:
    """CONCATENATION takes at most 10 inputs."""
    return None if len(v.args) <= MAX_INPUTS else f"got {len(v.args)}"


def rank_limit(v: OpView) -> str | None:
    """Inputs must have rank at most 6."""
    worst = max(t.rank for t in v.args)
    return None if worst <= MAX_RANK else f"an input has rank {worst}"


def axis_and_shapes(v: OpView) -> str | None:
    """The axis must lie within the rank (negative counts from the end), and all inputs must have
    the same rank and agree on every dimension except the axis."""
    rank = v.args[0].rank
    axis = v.attrs["axis"]
    if not -rank <= axis < rank:
        return f"axis {axis} for rank {rank}"
    ax = positive_axis(axis, rank)
    ref = v.args[0].shape
    for i, t in enumerate(v.args[1:], 1):
        if t.rank != rank or any(d != e for k, (d, e) in enumerate(zip(t.shape, ref)) if k != ax):
            return f"input {i} is {list(t.shape)}, input 0 is {list(ref)}"
    return None


def no_activation(v: OpView) -> str | None:
    """The fused activation must be NONE (TFLM rejects any other)."""
    act = v.attrs.get("activation", "NONE")
    return None if act == "NONE" else f"got {act}"


def _qkey(t):
    """(scale, zero point) as TFLM reads them: unquantized tensors have scale 0 and zero point 0."""
    return (t.quant.scale[0], t.quant.zero_point[0]) if t.quant is not None else (0.0, 0)


def int8_same_quant(v: OpView) -> str | None:
    """Every int8 input must have exactly the output's scale and zero point (TFLM does not rescale)."""
    if v.out.dtype != "int8":
        return None
    want = _qkey(v.out)
    for i, t in enumerate(v.args):
        got = _qkey(t)
        if got != want:
            return f"input {i} has scale {got[0]:.9g} and zero point {got[1]}, " \
                   f"the output {want[0]:.9g} and {want[1]}"
    return None


def int16_zero_points(v: OpView) -> str | None:
    """Every int16 input and the output must have zero point 0 (TFLM does not rescale; its scales may
    differ)."""
    if v.out.dtype != "int16":
        return None
    for i, t in enumerate((*v.args, v.out)):
        zp = _qkey(t)[1]
        if zp != 0:
            return f"{'the output' if i == len(v.args) else f'input {i}'} has zero point {zp}"
    return None


def lower_c(call) -> CKernel:
    """mcu_concatenation (element-size generic): the elements each input contributes per outer step.
    It takes an array of input pointers: concatenation.c.j2 renders that call."""
    out = call.type
    ax = positive_axis(call.attrs["axis"], out.rank)
    inner = math.prod(out.shape[ax + 1:])
    sizes = [a.type.shape[ax] * inner for a in call.args]
    params = {"elem_size": _portable.elem_size(call), "num_inputs": len(sizes),
              "outer_size": math.prod(out.shape[:ax]), "copy_size": sizes}
    return CKernel("mcu_concatenation", "mcu_concatenation", "mcu_concatenation_params", params,
                   template="concatenation.c.j2")


register(OpDef(
    name="concatenation",
    tflm="concatenation.cc, reference_ops::Concatenation",
    kind=OpKind.INJECTIVE,
    doc="Concatenate up to 10 tensors along one axis (negative allowed); int8 inputs share the "
        "output's quantization, int16 ones have zero point 0.",
    infer=infer,
    reference=reference,
    checks=(same_dtype, input_count, rank_limit, axis_and_shapes, no_activation, int8_same_quant, int16_zero_points),
    tflite={"CONCATENATION": parse},
    portable=Portable(lower_c),
))
