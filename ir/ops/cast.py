"""CAST: convert the stored values to another element type (quantization parameters not read).

TFLM (cast.cc) converts between int8, int16, int32, float32 and bool, any pair, as C++ casts: integers
to narrower integers wrap (two's complement), integers to float32 round to nearest, anything to bool
is x != 0 (NaN gives true), bool gives 0 or 1; float32 to an integer truncates toward zero and, in
the TFLM we verify against, saturates to the integer type's range, with NaN giving 0.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _portable

DTYPES = ("int8", "int16", "int32", "float32", "bool")


def parse(ctx):
    return [ctx.inputs[0]], {"out_dtype": ctx.out.dtype}


def infer(args, attrs):
    return args[0].shape, attrs["out_dtype"]


def cast(x: np.ndarray, dtype: str) -> np.ndarray:
    """TFLM's CAST of the values x to `dtype`."""
    target = np.dtype(dtype)
    if dtype == "bool":
        return x != 0
    if x.dtype == np.float32 and target.kind == "i":
        info = np.iinfo(target)
        t = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=info.max, neginf=info.min))
        return np.clip(t, info.min, info.max).astype(target)
    if x.dtype.kind in "iub" and target.kind == "i":  # wrap to the narrower type
        bits = target.itemsize * 8
        return (((x.astype(np.int64) - info_min(target)) % (1 << bits)) + info_min(target)).astype(target)
    return x.astype(target)


def info_min(t: np.dtype) -> int:
    return int(np.iinfo(t).min)


def reference(args, v: OpView):
    return cast(args[0], v.out.dtype)


def supported_types(v: OpView) -> str | None:
    """Input and output must each be int8, int16, int32, float32 or bool."""
    bad = sorted({t.dtype for t in (v.args[0], v.out)} - set(DTYPES))
    return None if not bad else f"got {', '.join(bad)}"


def lower_c(call) -> CKernel:
    """mcu_cast_<from>_<to> (mcu_cast.c): one conversion loop per type pair."""
    src, dst = (_portable.c_suffix(t) for t in (call.args[0].type.dtype, call.type.dtype))
    return CKernel(f"mcu_cast_{src}_{dst}", "mcu_cast", "mcu_cast_params", {"size": call.type.size})


register(OpDef(
    name="cast",
    tflm="cast.cc, copyCast (static_cast; float32 to integers saturating)",
    kind=OpKind.ELEMWISE,
    doc="The stored values converted to another type: int8, int16, int32, float32, bool (as C++ casts).",
    infer=infer,
    reference=reference,
    checks=(supported_types,),
    tflite={"CAST": parse},
    portable=Portable(lower_c),
))
