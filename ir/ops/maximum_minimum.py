"""MAXIMUM and MINIMUM: the element-wise larger / smaller of two tensors, numpy broadcasting.

TFLM (maximum_minimum.cc, reference_ops::MaximumMinimumBroadcastSlow) compares the raw stored values,
whatever the quantization parameters (an int8 model's converter gives both inputs and the output one
quantization; TFLM does not check it), with `a > b ? a : b` (`a < b ? a : b` for MINIMUM): for float32
that returns the second operand when the first is NaN or when the two compare equal (0.0 and -0.0).
Shapes that differ broadcast over at most 5 dimensions (NdArrayDesc<5>); equal shapes take a flat loop.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable

DTYPES = ("int8", "int16", "int32", "float32")
MAX_BROADCAST_RANK = 5


def parse(ctx):
    return [ctx.inputs[0], ctx.inputs[1]], {}


def infer(args, attrs):
    return tuple(np.broadcast_shapes(args[0].shape, args[1].shape)), args[0].dtype


def _reference(better):
    def reference(args, v: OpView):
        a, b = np.broadcast_arrays(args[0], args[1])
        return np.where(better(a, b), a, b).astype(v.out.np_dtype)
    return reference


# ---- support checks ------------------------------------------------------------------------------

def same_supported_dtype(v: OpView) -> str | None:
    """Both inputs and the output must have one element type: int8, int16, int32 or float32."""
    types = {t.dtype for t in (*v.args, v.out)}
    if len(types) > 1:
        return f"got {', '.join(sorted(types))}"
    return None if types <= set(DTYPES) else f"got {types.pop()}"


def broadcast_rank(v: OpView) -> str | None:
    """The input shapes must be equal, or broadcast against each other over at most 5 dimensions
    (TFLM's broadcast walk)."""
    a, b = v.args[0].shape, v.args[1].shape
    return None if a == b else c.broadcast_problem((a, b), 0, MAX_BROADCAST_RANK)


# ---- portable kernel -----------------------------------------------------------------------------

def lower_c(call) -> CKernel:
    """mcu_maximum_<t> / mcu_minimum_<t>: the broadcast walk (equal shapes: one flat row)."""
    (a, b), out = (x.type for x in call.args), call.type
    params = _portable.broadcast_plan(a.shape, b.shape, out.shape)
    return CKernel(f"mcu_{call.op}_{_portable.SUFFIX[out.dtype]}", "mcu_maximum_minimum", "mcu_broadcast_params",
                   params)


for _name, _better, _doc in (
    ("maximum", np.greater, "The element-wise larger of two tensors (raw values, any quantization), broadcasting."),
    ("minimum", np.less, "The element-wise smaller of two tensors (raw values, any quantization), broadcasting."),
):
    register(OpDef(
        name=_name,
        tflm="maximum_minimum.cc, reference_ops::MaximumMinimumBroadcastSlow",
        kind=OpKind.BROADCAST,
        doc=_doc,
        infer=infer,
        reference=_reference(_better),
        checks=(same_supported_dtype, broadcast_rank),
        tflite={_name.upper(): parse},
        portable=Portable(lower_c),
    ))
