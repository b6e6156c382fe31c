"""TRANSPOSE: permute the axes with a constant permutation (output axis i = input axis perm[i]).

TFLM (transpose_common.cc, reference_ops::Transpose) moves elements without arithmetic and
ignores quantization. It supports rank 1 to 5, int8, int16 and float32 (not int32, unlike desktop
TFLite), a constant int32 perm, and no negative perm entries."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _portable

DTYPES = ("int8", "int16", "float32")
MAX_RANK = 5


def parse(ctx):
    raw = np.asarray(ctx.const(1))
    return [ctx.inputs[0]], {"perm": tuple(int(p) for p in raw.ravel()), "perm_dtype": str(raw.dtype)}


def infer(args, attrs):
    shape = args[0].shape
    return tuple(shape[p] for p in attrs["perm"]), args[0].dtype


def reference(args, v: OpView):
    return np.ascontiguousarray(np.transpose(args[0], v.attrs["perm"]))


# ---- support checks ------------------------------------------------------------------------------

def same_dtype(v: OpView) -> str | None:
    """Input and output must have the same element type, one of int8, int16 or float32."""
    a, o = v.args[0].dtype, v.out.dtype
    if a != o:
        return f"input is {a}, output {o}"
    return None if a in DTYPES else f"got {a}"


def rank_limit(v: OpView) -> str | None:
    """The input must have rank 1 to 5."""
    r = v.args[0].rank
    return None if 1 <= r <= MAX_RANK else f"input has rank {r}"


def valid_perm(v: OpView) -> str | None:
    """The permutation must be an int32 list holding each input axis 0..rank-1 exactly once."""
    perm = v.attrs["perm"]
    if v.attrs.get("perm_dtype", "int32") != "int32":
        return f"perm is {v.attrs['perm_dtype']}"
    if sorted(perm) != list(range(v.args[0].rank)):
        return f"got {list(perm)} for rank {v.args[0].rank}"
    return None


def lower_c(call) -> CKernel:
    """mcu_gather in output order: output axis k walks input axis perm[k]."""
    x = call.args[0].type
    perm = call.attrs["perm"]
    st = _portable.row_major_strides(x.shape)
    return _portable.gather_kernel(call, 0, [x.shape[p] for p in perm], [st[p] for p in perm])


register(OpDef(
    name="transpose",
    tflm="transpose.cc, reference_ops::Transpose",
    kind=OpKind.INJECTIVE,
    doc="Permute the axes of a rank 1-5 tensor by a constant permutation.",
    infer=infer,
    reference=reference,
    checks=(same_dtype, rank_limit, valid_perm),
    tflite={"TRANSPOSE": parse},
    portable=Portable(lower_c),
))
