"""The `c` target: portable reference kernels covering every supported op (the fallback).

Its pattern table has one entry that matches any registry op that has a portable kernel
(`OpDef.portable`) or is a view (`OpDef.view`). Lowering asks the op's entry: its portable lowering
gives the C function, parameter struct fields and precomputed constants (`CKernel`); the constant
arguments of the op are passed as `arg<i>`; the kernel model evaluates the registry reference (the C
reference kernels implement exactly that arithmetic).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Callable

import numpy as np
from mcuforge.ir.evaluate import evaluate
from mcuforge.ir.expr import Call, Constant, Function, Module
from mcuforge.ir.registry import find_op, get_op

from ..kernel import KernelCall, OpInfo, Overlap, raster_overlap
from ..overlap import portable_geometry
from ..patterns import PatternEntry, any_op
from ..target import Target, register_target

NAME = "c"
COMPOSITE = "op"  # the portable target lifts single ops
GENERIC_TEMPLATE = "call.c.j2"  # codegen/templates/call.c.j2: function(&params, args, constants, scratch, out)


def root_call(fn: Function) -> Call:
    body = fn.body
    assert isinstance(body, Call)
    return body


def arg_map(fn: Function) -> tuple[int | None, ...]:
    """For each argument of the root call: the index of the function parameter (kernel input) it
    is, or None for a constant or a call inside the composite. A parameter may appear twice (x * x)."""
    call = root_call(fn)
    index = {id(p): i for i, p in enumerate(fn.params)}
    return tuple(index.get(id(a)) for a in call.args)


def function_model(fn: Function) -> Callable[[list[np.ndarray], KernelCall], np.ndarray]:
    """A kernel model that evaluates the lifted function with the registry references (the C
    reference kernels implement exactly that arithmetic)."""
    module = Module({"main": fn})

    def run(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
        (out,) = evaluate(module, args)
        return out

    return run


def has_kernel(caps) -> str | None:
    """The op has a portable kernel or is a view of its input."""
    op = find_op(caps["root"].op)
    return None if op is not None and (op.portable is not None or op.view) else "no portable kernel"


def lower(fn: Function, isa: str) -> KernelCall:
    """The portable kernels are plain C whatever the ISA."""
    call = root_call(fn)
    opdef = get_op(call.op)
    info = OpInfo(call.op, opdef.kind, call.attrs, call.sources, NAME, fn.attrs.get("composite", COMPOSITE))
    common = dict(inputs=tuple(p.type for p in fn.params), output=call.type, info=info,
                  evaluate=function_model(fn), arg_map=arg_map(fn))
    if opdef.view:
        return KernelCall("", "", "", params={}, constants={}, scratch_bytes=0, view=True, **common)
    assert opdef.portable is not None, call.op
    k = opdef.portable.lower(call)
    # the constant arguments the kernel takes (only the first op_args ones reach the call)
    constants = {f"arg{i}": a.data for i, a in enumerate(call.args)
                 if isinstance(a, Constant) and (k.op_args is None or i < k.op_args)}
    constants.update(k.constants)
    return KernelCall(k.function, k.source, k.template or GENERIC_TEMPLATE, params=dict(k.params),
                      constants=constants, scratch_bytes=k.scratch.bytes if k.scratch else 0,
                      in_place=opdef.portable.in_place, overlap=_overlap(k, call), struct=k.struct, op_args=k.op_args,
                      scratch_check=k.scratch.expr if k.scratch else "", fails=k.fails, **common)


def _overlap(k, call) -> Overlap | None:
    """The overlap a portable kernel's loop order allows ("pixels": one output pixel at a time in
    raster order, its channels written as they are computed): int8, one batch."""
    if k.order != "pixels" or call.type.dtype != "int8" or k.params.get("batches", 1) != 1:
        return None
    return raster_overlap(portable_geometry(k.params), block=1, buffered=False)


TARGET = register_target(Target(
    name=NAME,
    patterns=(PatternEntry(COMPOSITE, any_op("root"), has_kernel),),
    lower=lower,
    templates=Path(str(files("mcuforge.codegen") / "templates" / "c")),
    sources=Path(str(files("mcuforge.firmware") / "kernels" / "c")),
))
