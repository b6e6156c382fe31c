"""The op registry: one `OpDef` per operator holds everything about it.

An entry gives the op's kind, how TFLite operators parse into it, type inference, the numpy
reference implementation with TensorFlow Lite Micro's integer semantics, and the support checks
whose docstrings are the sentences users read (and SUPPORTED_OPS.md is generated from).

An entry also holds the facts later stages need about the op, so that no stage keeps its own list
of op names: whether it is a view of its input (`view`), whether its TFLite operator has several
outputs (`multi_output`: each output is parsed into a call of its own), whether it carries a fused
activation that clamps like TFLite's (`fuses_activation`), which fused activation a standalone op
equals (`folds_as`), its multiply-accumulate count (`macs`), and its portable C kernel (`portable`:
how the `c` target lowers it) and which of its arguments are states it updates in place
(`state_args`). Op modules live in `mcuforge.ir.ops` and call `register()` at import time.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

import numpy as np
from mcuforge.firmware.macros import KernelSize

from .types import TensorType


class OpKind(str, enum.Enum):
    ELEMWISE = "elementwise"
    BROADCAST = "broadcast"
    INJECTIVE = "injective"
    REDUCTION = "reduction"
    COMPLEX = "complex"
    OPAQUE = "opaque"


@dataclass(frozen=True)
class OpView:
    """What checks and reference implementations see of one call: argument types, result type
    (with its quantization) and attributes."""

    args: tuple[TensorType, ...]
    out: TensorType
    attrs: Mapping[str, Any]


class ParseContext(Protocol):
    """What a TFLite parser sees of one operator (implemented by the frontend)."""

    index: int  # operator index in the subgraph
    name: str  # builtin name, e.g. "CONV_2D"
    inputs: Sequence[Any]  # one Expr per operator input; None where the file says -1 (absent)
    out: TensorType  # the type of the output being parsed
    output_index: int  # which output of the operator is being parsed (0 unless OpDef.multi_output)
    num_outputs: int  # how many outputs the operator has

    def options(self) -> Any:
        """The decoded builtin options table (a `tflite.*Options` object), or None."""

    def const(self, i: int) -> np.ndarray:
        """The value of constant input `i`; raises ModelError naming the op if it is not constant."""

    def fail(self, why: str) -> Exception:
        """An error naming this operator, to raise when the file holds something unparseable."""


# A parser turns one TFLite operator into (call arguments, attributes).
Parser = Callable[[ParseContext], "tuple[list[Any], dict[str, Any]]"]
# A check returns None when the call is supported, or a short detail of what is wrong.
Check = Callable[[OpView], "str | None"]
Infer = Callable[[Sequence[TensorType], Mapping[str, Any]], "tuple[tuple[int, ...], str]"]
Reference = Callable[[list[np.ndarray], OpView], np.ndarray]
# A legalization rule gets a call of its op (and the pass's context: user counts) and returns the
# expression that replaces it, or None when it does not apply. Its docstring says what it does.
Rule = Callable[[Any, Any], Any]
# Multiply-accumulates of one call of the op (for the benchmark's per-MAC figures).
Macs = Callable[[OpView], int]


@dataclass(frozen=True)
class CKernel:
    """One call of a portable C kernel, as an op's portable lowering decides it.

    The call is `function(&params, <op arguments>, <constants>, [scratch], output)`: `params` are the
    fields of the `struct` the kernel reads (C values: ints, strings of C literals, lists for arrays,
    dicts for nested structs), the op's arguments are passed in op order (an activation input or a
    constant array; `op_args` pads absent optional ones with NULL), then `constants` (precomputed
    arrays, in the kernel's argument order). A kernel with another call shape names its own
    `template` (in codegen/templates/c/)."""

    function: str  # the C function, e.g. "mcu_conv_2d_s8"
    source: str  # the kernel's file stem: firmware/kernels/c/<source>.c (and <source>.h when it has one)
    struct: str  # the parameter struct type
    params: Mapping[str, Any] = field(default_factory=dict)
    constants: Mapping[str, np.ndarray] = field(default_factory=dict)
    op_args: int | None = None  # how many op arguments the kernel takes (None: as many as the call has)
    scratch: KernelSize | None = None  # from the kernel header's macro (mcuforge.firmware.macros)
    template: str | None = None  # a template of its own instead of the generic call
    # The kernel's loop order, for outputs overlapping their input (planner/targets/c.py): "pixels"
    # when it computes output pixels one at a time in raster order, each pixel's channels written
    # as they are computed (planner/overlap.py models it).
    order: str = ""
    # The kernel returns non-zero when a run-time index input is out of range (TFLM fails the invoke
    # there): the generated run stops with <PREFIX>_ERR_INDEX.
    fails: bool = False


@dataclass(frozen=True)
class Portable:
    """How the portable `c` target lowers an op: `lower(call) -> CKernel`, and whether the kernel
    tolerates its output placed exactly over input 0 (it reads each element before writing it)."""

    lower: Callable[[Any], CKernel]
    in_place: bool = False


@dataclass(frozen=True)
class OpDef:
    name: str
    kind: OpKind
    doc: str
    infer: Infer
    reference: Reference
    checks: tuple[Check, ...] = ()
    tflite: Mapping[str, Parser] = field(default_factory=dict)
    legalize: tuple[Rule, ...] = ()
    portable: Portable | None = None  # None: the op has no kernel (it legalizes away, or is a view)
    view: bool = False  # the output is input 0's bytes under another shape: no code, no copy
    fuses_activation: bool = False  # has a fused activation clamping its output as TFLite's do
    folds_as: str | None = None  # a standalone activation equal to this fused one in one quantization
    macs: Macs | None = None
    tflm: str = ""  # the TFLM kernel it is bit-exact with (file / function), or why there is none
    # The TFLite operator has several outputs: the importer parses it once per output
    # (ctx.output_index, ctx.out) and each output becomes a call of its own (the IR is single-output).
    multi_output: bool = False
    # Argument positions that are states (TFLite variable tensors, ir.expr.State): the op reads them
    # and its reference (and kernel) writes their new value in place (LSTM, SVDF).
    state_args: tuple[int, ...] = ()
    # Its states may be taken by several calls of such ops (a resource variable's read and its
    # write): the importer orders them by data dependence (every read before the write).
    shares_state: bool = False

    def check(self, view: OpView) -> list[str]:
        """Every support problem of this call as user-facing sentences (empty when supported)."""
        problems = []
        for chk in self.checks:
            detail = chk(view)
            if detail is not None:
                rule = check_rule(chk)
                problems.append(f"{rule.rstrip('.')} ({detail})" if detail else rule)
        return problems


def check_rule(chk: Check) -> str:
    """The sentence a check stands for: its docstring, on one line."""
    return " ".join((chk.__doc__ or chk.__name__).split())


_REGISTRY: dict[str, OpDef] = {}
_BY_TFLITE: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    if op.name in _REGISTRY:
        raise ValueError(f"op {op.name!r} registered twice")
    for builtin in op.tflite:
        if builtin in _BY_TFLITE:
            raise ValueError(f"TFLite op {builtin} already parsed by {_BY_TFLITE[builtin].name!r}")
        _BY_TFLITE[builtin] = op
    _REGISTRY[op.name] = op
    return op


def _load() -> None:
    from . import ops  # noqa: F401  (importing registers every op module)


def get_op(name: str) -> OpDef:
    _load()
    return _REGISTRY[name]


def find_op(name: str) -> OpDef | None:
    _load()
    return _REGISTRY.get(name)


def op_for_tflite(builtin: str) -> OpDef | None:
    _load()
    return _BY_TFLITE.get(builtin)


def all_ops() -> list[OpDef]:
    _load()
    return sorted(_REGISTRY.values(), key=lambda o: o.name)


def tflite_builtins() -> dict[str, OpDef]:
    _load()
    return dict(sorted(_BY_TFLITE.items()))
