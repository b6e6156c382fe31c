"""LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT and REDUCE_ALL on bool tensors (one byte, 0 or 1).

TFLM: LOGICAL_AND / LOGICAL_OR (logical.cc, BinaryFunction / its broadcast walk) take two bool
tensors: equal shapes go element by element at any rank, other shapes broadcast (numpy rules; the
TFLM we verify against broadcasts any rank, its older sources at most 4 dimensions; the portable
kernel's walk takes 6). LOGICAL_NOT (elementwise.cc) maps a bool tensor
to a bool one. REDUCE_ALL (reduce.cc, ReduceGeneric with true and &&) is true where every element
over the constant axes is (negative axes count from the end, a repeated axis counts once, keep_dims
or not).
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable
from . import mean, reduce_min_max

BROADCAST_RANK = _portable.BROADCAST_RANK  # the portable broadcast walk


def parse_binary(ctx):
    return [ctx.inputs[0], ctx.inputs[1]], {}


def parse_unary(ctx):
    return [ctx.inputs[0]], {}


def infer_binary(args, attrs):
    return tuple(np.broadcast_shapes(args[0].shape, args[1].shape)), "bool"


def infer_unary(args, attrs):
    return args[0].shape, "bool"


def _binary_reference(fn):
    def reference(args, v: OpView):
        return fn(np.asarray(args[0], np.bool_), np.asarray(args[1], np.bool_)).reshape(v.out.shape)
    return reference


def not_reference(args, v: OpView):
    return np.logical_not(np.asarray(args[0], np.bool_))


def all_reference(args, v: OpView):
    return np.all(np.asarray(args[0], np.bool_), axis=tuple(v.attrs["axis"])).reshape(v.out.shape)


# ---- support checks ------------------------------------------------------------------------------

def all_bool(v: OpView) -> str | None:
    """Inputs and output must be bool."""
    found = sorted({t.dtype for t in (*v.args, v.out)})
    return None if found == ["bool"] else f"got {', '.join(found)}"


def broadcast_rank(v: OpView) -> str | None:
    """Inputs of different shapes must broadcast against each other (numpy rules) with at most 6
    dimensions; equal shapes may have any rank."""
    if v.args[0].shape == v.args[1].shape:
        return None
    return c.broadcast_problem((v.args[0].shape, v.args[1].shape), v.out.rank, BROADCAST_RANK)


# ---- portable kernels ----------------------------------------------------------------------------

def lower_binary(call) -> CKernel:
    """mcu_logical_and / mcu_logical_or: the broadcast walk over the bytes."""
    (a, b), out = (x.type for x in call.args), call.type
    return CKernel(f"mcu_{call.op}", "mcu_logical", "mcu_broadcast_params",
                   _portable.broadcast_plan(a.shape, b.shape, out.shape))


def lower_not(call) -> CKernel:
    return CKernel("mcu_logical_not", "mcu_logical", "mcu_logical_not_params", {"size": call.type.size})


def lower_all(call) -> CKernel:
    """mcu_reduce_all: REDUCE_MAX's runs of kept and reduced axes (its mcu_reduce_params)."""
    max_kernel = reduce_min_max.lower_c(call)
    return CKernel("mcu_reduce_all", "mcu_logical", "mcu_reduce_params", max_kernel.params)


for _name, _fn, _what in (("logical_and", np.logical_and, "x1 && x2"), ("logical_or", np.logical_or, "x1 || x2")):
    register(OpDef(
        name=_name,
        tflm=f"logical.cc, {'LogicalAnd' if _name == 'logical_and' else 'LogicalOr'} (BinaryFunction / broadcast)",
        kind=OpKind.BROADCAST,
        doc=f"{_what} element-wise on bool tensors, broadcasting.",
        infer=infer_binary,
        reference=_binary_reference(_fn),
        checks=(all_bool, broadcast_rank),
        tflite={_name.upper(): parse_binary},
        portable=Portable(lower_binary),
    ))

register(OpDef(
    name="logical_not",
    tflm="elementwise.cc, LogicalNotEval",
    kind=OpKind.ELEMWISE,
    doc="!x element-wise on a bool tensor.",
    infer=infer_unary,
    reference=not_reference,
    checks=(all_bool,),
    tflite={"LOGICAL_NOT": parse_unary},
    portable=Portable(lower_not, in_place=True),
))

register(OpDef(
    name="reduce_all",
    tflm="reduce.cc, ReduceGeneric<bool> (true, &&)",
    kind=OpKind.REDUCTION,
    doc="True where every bool element over constant axes is, keep_dims or not.",
    infer=mean.infer,
    reference=all_reference,
    checks=(all_bool, reduce_min_max.run_limit, reduce_min_max.nonempty),
    tflite={"REDUCE_ALL": mean.parse},
    portable=Portable(lower_all),
))
