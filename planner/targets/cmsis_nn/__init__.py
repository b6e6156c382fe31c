"""The `cmsis-nn` target: mcuforge's own optimized int8 kernels in the CMSIS-NN style.

One module per composite (conv, depthwise, fully_connected, pool, add, mul, softmax), each holding
its `Composite` entries: the pattern, the support check (its docstring is the rule), and the
lowering, which picks the kernel variant and precomputes what it reads, with the numpy model of
exactly what the kernel computes from those parameters and constants (so a wrong precomputation
fails `verify --on reference` before any C runs; the C kernels' plain, DSP and Helium paths must
match the models bit for bit). `requant.py` is the prover of the DSP paths' fast requantization;
`common.py` the pieces the composites share. Adding a composite is adding a module here, its C
kernel (firmware/kernels/cmsis_nn/<source>.c and, for its declarations, <source>.h) and, unless its
call fits the generic template (a parameter struct: `Lowered.struct`), its template
(codegen/templates/cmsis_nn/<name>.c.j2).

Precomputed, in short: per-channel multipliers and shifts (TFLM's derivation); for convolutions and
fully connected layers, biases folded with the input zero point and weights in the pair layout
(common.pair_rows: output channels 2j and 2j + 1 byte interleaved, which SXTB16 / SXTB16 ROR #8 and
Helium's VLD2 split at full rate; for convolutions, common.pair_layout: from K = 48 on where it is
exact each pair's second row stored less 1 where the first is negative, so that each int16 lane of
a weight word reads a + 256 b, which lets the DSP inner loop split each weight word
once, below it the pairs already widened to int16 words (twice the bytes of few weights), no split:
only for the DSP ISA, Helium and plain C pay for it, Helium reading the wide layout through plain C);
depthwise taps in their natural [KH*KW][OC] layout. Every
layout is read by the plain, DSP and MVE builds of the kernels alike (the generated C runs wherever
it is built), the ISA (planner/target.py) only picks the fastest; the columns' SIMD orderings live
in the kernels' scratch.
"""

from __future__ import annotations

import importlib
import pkgutil
from importlib.resources import files
from pathlib import Path

from mcuforge.ir.expr import Call, Function, post_order
from mcuforge.ir.registry import OpKind, get_op

from ...kernel import KernelCall, OpInfo
from ...patterns import PatternEntry
from ...target import Target, register_target
from .. import c as portable
from .common import Composite

NAME = "cmsis-nn"
_SHARED = ("common", "paths", "requant")


def _composites() -> dict[str, Composite]:
    found: dict[str, Composite] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name in _SHARED:
            continue
        for comp in importlib.import_module(f"{__name__}.{info.name}").COMPOSITES:
            if comp.name in found:
                raise ValueError(f"cmsis-nn composite {comp.name!r} defined twice")
            found[comp.name] = comp
    return found


COMPOSITES = _composites()


def lower(fn: Function, isa: str) -> KernelCall:
    call = portable.root_call(fn)
    composite = fn.attrs["composite"]
    covered = [c for c in post_order(fn.body) if isinstance(c, Call)]  # every op of the composite
    kinds = [get_op(c.op).kind for c in covered]  # a fused convolution is a complex op
    kind = OpKind.COMPLEX if OpKind.COMPLEX in kinds else kinds[-1]
    info = OpInfo(call.op, kind, call.attrs, tuple(s for c in covered for s in c.sources), NAME, composite)
    comp = COMPOSITES[composite]
    low = comp.lower(call, isa) if comp.by_isa else comp.lower(call)
    scratch = low.scratch.bytes if low.scratch else 0
    template = portable.GENERIC_TEMPLATE if low.struct else f"{composite}.c.j2"
    arg_map = portable.arg_map(fn)
    return KernelCall(low.function, low.source or low.function, template, tuple(p.type for p in fn.params),
                      call.type, low.params, low.constants, scratch, info, low.model, in_place=low.in_place,
                      in_place_input=arg_map[low.in_place_arg] if low.in_place else 0, overlap=low.overlap,
                      arg_map=arg_map, scratch_check=low.scratch.expr if low.scratch else "",
                      struct=low.struct, op_args=low.op_args)


def pattern_ops(p) -> int:
    """The ops a pattern covers."""
    return (p.kind == "op") + sum(pattern_ops(a) for a in p.args)


TARGET = register_target(Target(
    name=NAME,
    # composites of several ops first: partition takes the first pattern that matches at a root
    patterns=tuple(PatternEntry(c.name, c.pattern, c.check)
                   for c in sorted(COMPOSITES.values(), key=lambda c: -pattern_ops(c.pattern))),
    lower=lower,
    templates=Path(str(files("mcuforge.codegen") / "templates" / "cmsis_nn")),
    sources=Path(str(files("mcuforge.firmware") / "kernels" / "cmsis_nn")),
))
