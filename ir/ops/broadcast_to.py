"""BROADCAST_TO: repeat a tensor to a constant shape by numpy's broadcasting rules (missing leading
axes and size-1 axes stretch).

TFLM (broadcast_to.cc, reference_ops::BroadcastTo<5>) copies raw elements of any type (quantization
is not looked at), supports input and output ranks up to 5 and an int32 or int64 shape vector that
must equal the output's shape and be reachable from the input's. The kernel is the output-order
gather (mcu_gather) with input step 0 along every stretched axis."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable

DTYPES = ("int8", "int16", "int32", "float32")
MAX_RANK = 5  # broadcast_to.cc kMaxDims


def parse(ctx):
    raw = np.asarray(ctx.const(1))
    return [ctx.inputs[0]], {"shape": tuple(int(d) for d in raw.ravel()), "shape_shape": tuple(raw.shape),
                             "shape_dtype": str(raw.dtype)}


def infer(args, attrs):
    return tuple(attrs["shape"]), args[0].dtype


def reference(args, v: OpView):
    return np.ascontiguousarray(np.broadcast_to(args[0], v.attrs["shape"])).astype(v.out.np_dtype)


# ---- support checks ------------------------------------------------------------------------------

same_dtype = c.same_dtype_rule(DTYPES)


def rank_limit(v: OpView) -> str | None:
    """The output (and so the input) must have rank at most 5."""
    r = len(v.attrs["shape"])
    return None if r <= MAX_RANK and v.args[0].rank <= MAX_RANK else f"rank {max(r, v.args[0].rank)}"


def broadcastable(v: OpView) -> str | None:
    """The shape must be an int32 or int64 vector the input broadcasts to: each input axis, aligned
    from the last, has the shape's size or size 1."""
    a, x = v.attrs, v.args[0].shape
    if a["shape_dtype"] not in ("int32", "int64") or len(a["shape_shape"]) != 1:
        return f"shape is a {a['shape_dtype']} tensor of shape {list(a['shape_shape'])}"
    shape = a["shape"]
    if len(x) > len(shape) or any(d not in (1, s) for d, s in zip(x[::-1], shape[::-1])):
        return f"{list(x)} does not broadcast to {list(shape)}"
    return None


def lower_c(call) -> CKernel:
    """mcu_gather over the output: input step 0 along the stretched axes."""
    x, out = call.args[0].type, call.type.shape
    lead = len(out) - x.rank
    dims = (1,) * lead + tuple(x.shape)
    st = [0] * lead + _portable.row_major_strides(x.shape)
    steps = [s if d == n else 0 for d, n, s in zip(dims, out, st)]
    return _portable.walk_kernel(call, 0, out, steps)


register(OpDef(
    name="broadcast_to",
    tflm="broadcast_to.cc, reference_ops::BroadcastTo",
    kind=OpKind.BROADCAST,
    doc="Broadcast a tensor to a constant shape of rank at most 5.",
    infer=infer,
    reference=reference,
    checks=(same_dtype, rank_limit, broadcastable),
    tflite={"BROADCAST_TO": parse},
    portable=Portable(lower_c),
))
