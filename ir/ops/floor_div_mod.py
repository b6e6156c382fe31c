"""FLOOR_DIV and FLOOR_MOD: float32 element-wise floored division and modulo, broadcasting.

TFLM (floor_div.cc, floor_mod.cc; both float32 only, inputs and output of one type):
- FLOOR_DIV: (float)floor((double)x1 / (double)x2); TFLM checks every divisor first and stops with
  an error when one is zero (a constant zero divisor is refused here; at run time the kernel gives
  the IEEE quotient, an infinity or NaN).
- FLOOR_MOD: t = fmodf(x1, x2); t + x2 when t != 0 and the signs of t and x2 differ, else t.
Equal shapes go element by element; other shapes broadcast (numpy rules; the TFLM we verify
against broadcasts any rank, the portable kernel's walk takes 6).
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Constant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable

f32 = np.float32


def parse(ctx):
    attrs = {}
    if ctx.name == "FLOOR_DIV" and isinstance(ctx.inputs[1], Constant):
        attrs["zero_divisor"] = bool(np.any(np.asarray(ctx.inputs[1].data) == 0))
    return [ctx.inputs[0], ctx.inputs[1]], attrs


def infer(args, attrs):
    return tuple(np.broadcast_shapes(args[0].shape, args[1].shape)), args[0].dtype


def floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.floor(a.astype(np.float64) / b.astype(np.float64)).astype(f32)


def floor_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(f32), b.astype(f32)
    with np.errstate(all="ignore"):
        t = np.fmod(a, b).astype(f32)
        adjust = (t != 0) & ((b < 0) != (t < 0))
        return np.where(adjust, (t + b).astype(f32), t).astype(f32)


def _reference(fn):
    def reference(args, v: OpView):
        a, b = np.broadcast_arrays(np.asarray(args[0], f32), np.asarray(args[1], f32))
        return fn(a, b).reshape(v.out.shape)
    return reference


def float32_only(v: OpView) -> str | None:
    """Inputs and output must be float32 (TFLM's kernels have no other type)."""
    found = sorted({t.dtype for t in (*v.args, v.out)})
    return None if found == ["float32"] else f"got {', '.join(found)}"


def broadcastable(v: OpView) -> str | None:
    """The input shapes must be equal or broadcast against each other (numpy rules), with at most 6
    dimensions."""
    if v.args[0].shape == v.args[1].shape:
        return None
    return c.broadcast_problem((v.args[0].shape, v.args[1].shape), v.out.rank, _portable.BROADCAST_RANK)


def nonzero_constant_divisor(v: OpView) -> str | None:
    """A constant divisor must not hold a zero (TFLM stops with an error on one)."""
    return "it holds a zero" if v.attrs.get("zero_divisor") else None


def lower_c(call) -> CKernel:
    """mcu_floor_div_f32 / mcu_floor_mod_f32 over the broadcast walk."""
    (a, b), out = (x.type for x in call.args), call.type
    return CKernel(f"mcu_{call.op}_f32", "mcu_floor_div_mod", "mcu_broadcast_params",
                   _portable.broadcast_plan(a.shape, b.shape, out.shape))


register(OpDef(
    name="floor_div",
    tflm="floor_div.cc, reference_ops::FloorDiv (float32 only)",
    kind=OpKind.BROADCAST,
    doc="floor(x1 / x2) element-wise on float32 tensors (the quotient in double), broadcasting.",
    infer=infer,
    reference=_reference(floor_div),
    checks=(float32_only, broadcastable, nonzero_constant_divisor),
    tflite={"FLOOR_DIV": parse},
    portable=Portable(lower_c),
))

register(OpDef(
    name="floor_mod",
    tflm="floor_mod.cc, reference_ops::FloorMod (float32 only)",
    kind=OpKind.BROADCAST,
    doc="x1 modulo x2 with the divisor's sign (fmodf, adjusted) element-wise on float32 tensors, broadcasting.",
    infer=infer,
    reference=_reference(floor_mod),
    checks=(float32_only, broadcastable),
    tflite={"FLOOR_MOD": parse},
    portable=Portable(lower_c),
))
