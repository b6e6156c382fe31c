"""SELECT_V2: out = condition ? x : y element-wise, the three inputs broadcasting against each other.

TFLM (select.cc, reference_ops::Select / BroadcastSelect5DSlow): the condition is bool, x and y
int8, int16 or float32 of one type, and the chosen element is copied as stored: no requantization
(the quantization parameters are not read; a converter gives x, y and the output one quantization).
Equal shapes (or all single-element tensors) take a flat loop; other shapes broadcast (numpy rules),
which the TFLM we verify against does correctly up to 6 dimensions. TFLM has no kernel for SELECT
(version 1, whose rank-1 condition selects whole rows): that operator stays unsupported.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable

DTYPES = ("int8", "int16", "float32")
MAX_RANK = 6


def parse(ctx):
    return [ctx.inputs[0], ctx.inputs[1], ctx.inputs[2]], {}


def infer(args, attrs):
    return tuple(np.broadcast_shapes(*(a.shape for a in args))), args[1].dtype


def reference(args, v: OpView):
    cond, x, y = np.broadcast_arrays(*args)
    return np.where(cond, x, y).astype(v.out.np_dtype).reshape(v.out.shape)


# ---- support checks ------------------------------------------------------------------------------

def bool_condition(v: OpView) -> str | None:
    """The condition (input 1) must be bool."""
    return None if v.args[0].dtype == "bool" else f"got {v.args[0].dtype}"


def same_value_dtype(v: OpView) -> str | None:
    """The two value inputs and the output must have one element type: int8, int16 or float32."""
    found = {t.dtype for t in (v.args[1], v.args[2], v.out)}
    if len(found) > 1:
        return f"got {', '.join(sorted(found))}"
    return None if found <= set(DTYPES) else f"got {found.pop()}"


def broadcastable3(v: OpView) -> str | None:
    """The three input shapes must broadcast against each other (numpy rules), with at most 6
    dimensions."""
    return c.broadcast_problem(tuple(t.shape for t in v.args), 0, MAX_RANK)


# ---- portable kernel -----------------------------------------------------------------------------

def lower_c(call) -> CKernel:
    """mcu_select_v2: the three-input broadcast walk and the element size (a byte copy)."""
    out = call.type
    dims, (sc, sx, sy) = _portable.broadcast_walk([a.type.shape for a in call.args], out.shape)
    params = {"elem_size": _portable.ELEM_SIZES[out.dtype], "dims": dims, "stride_cond": sc, "stride_x": sx,
              "stride_y": sy}
    return CKernel("mcu_select_v2", "mcu_select_v2", "mcu_select_v2_params", params)


register(OpDef(
    name="select_v2",
    tflm="select.cc, reference_ops::Select / BroadcastSelect5DSlow",
    kind=OpKind.BROADCAST,
    doc="condition ? x : y element-wise with broadcasting; the chosen value is copied as stored.",
    infer=infer,
    reference=reference,
    checks=(bool_condition, same_value_dtype, broadcastable3),
    tflite={"SELECT_V2": parse},
    portable=Portable(lower_c),
))
