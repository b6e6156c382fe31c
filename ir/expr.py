"""Immutable expressions, functions and modules.

A function body is a DAG of expressions: `Var` (a parameter), `Constant` (weights, in flash),
`State` (a variable tensor kept between runs), `Call` (an operator from the registry, or a call to
a module-level function) and `Tuple` (several results). Nodes hold their inputs; consumers are
computed when needed (`users`). Nodes compare by identity, so a DAG can share a node between
several users.

State and the single-output IR: a `State` is storage that outlives one run of the model (an LSTM's
hidden and cell state, an SVDF's activation memory: TFLite's variable tensors). It is neither a
constant nor a model input. Exactly one call reads it, at one of the argument positions its op
declares in `OpDef.state_args`, and that call also writes the new value over it, in place, as a
side effect: the call's value is still its one output. No other node sees the state within a run,
so the order of evaluation is unaffected and the A-normal form needs no extra binding; the next run
reads what this one wrote. A resource variable (READ_VARIABLE / ASSIGN_VARIABLE) is the exception:
its state is taken by a read and by a write whose ops share states (`OpDef.shares_state`), the
write ordered after the read by data dependence (ir/ops/resource_variable.py). The numpy evaluator passes the state's array to the op's reference,
which updates it in place, exactly as the C kernel writes the state's bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterator, Mapping

import numpy as np

from .types import TensorType


def _freeze(attrs: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(attrs or {}))


@dataclass(frozen=True)
class OpSource:
    """Where a call came from: the TFLite operator index and builtin name."""

    index: int
    name: str

    def __str__(self) -> str:
        return f"#{self.index} {self.name}"


@dataclass(frozen=True, eq=False)
class Var:
    """A function parameter. `tensor` is the TFLite tensor index it was read from, if any."""

    name: str
    type: TensorType
    tensor: int | None = None


@dataclass(frozen=True, eq=False)
class Constant:
    """A constant tensor (weights, biases). The array is read-only."""

    name: str
    type: TensorType
    data: np.ndarray
    tensor: int | None = None

    def __post_init__(self) -> None:
        arr = np.array(self.data, dtype=self.type.np_dtype, copy=True).reshape(self.type.shape)
        arr.setflags(write=False)
        object.__setattr__(self, "data", arr)


@dataclass(frozen=True, eq=False)
class State:
    """A variable tensor: persistent storage read and updated in place by the one call that takes
    it (see the module docstring). Every element starts, and starts again on reset, equal to `fill`
    (TFLM: the zero point of an int8 state, 0 otherwise). `tensor` is its TFLite tensor index."""

    name: str
    type: TensorType
    fill: int = 0
    tensor: int | None = None

    def initial(self) -> np.ndarray:
        """A fresh array holding the state's initial value."""
        return np.full(self.type.shape, self.fill, dtype=self.type.np_dtype)


@dataclass(frozen=True, eq=False)
class Call:
    """Apply operator `op` (a registry name, or "@fn" for a module-level function) to `args`.

    `type` is the result type including its quantization (in the QNN dialect the output
    quantization is part of the call). `name` is the result tensor's name, `tensor` its TFLite
    tensor index if it has one, `sources` the TFLite operators it stands for."""

    op: str
    args: tuple[Expr, ...]
    type: TensorType
    attrs: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""
    tensor: int | None = None
    sources: tuple[OpSource, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "attrs", _freeze(self.attrs))
        object.__setattr__(self, "sources", tuple(self.sources))

    @property
    def callee(self) -> str | None:
        """The module-level function this call invokes, or None for a registry op."""
        return self.op[1:] if self.op.startswith("@") else None


@dataclass(frozen=True, eq=False)
class Tuple:
    """Several results, e.g. the outputs of a model with more than one output."""

    fields: tuple[Expr, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))


Expr = Var | Constant | State | Call | Tuple


def inputs_of(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Tuple):
        return node.fields
    return ()


def post_order(root: Expr) -> list[Expr]:
    """Every node reachable from `root`, each after its inputs (iterative: deep graphs are fine).
    Among a node's inputs the first argument is visited first, so the order is deterministic."""
    order: list[Expr] = []
    seen: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for arg in reversed(inputs_of(node)):
            if id(arg) not in seen:
                stack.append((arg, False))
    return order


def users(root: Expr) -> dict[int, list[Expr]]:
    """Map id(node) -> the nodes that consume it (computed, never stored)."""
    out: dict[int, list[Expr]] = {}
    for node in post_order(root):
        for arg in inputs_of(node):
            out.setdefault(id(arg), []).append(node)
    return out


@dataclass(frozen=True, eq=False)
class Function:
    """`params` -> `body`. Lifted (partitioned) functions carry attrs such as target and composite."""

    params: tuple[Var, ...]
    body: Expr
    attrs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", tuple(self.params))
        object.__setattr__(self, "attrs", _freeze(self.attrs))

    @property
    def outputs(self) -> tuple[Expr, ...]:
        return self.body.fields if isinstance(self.body, Tuple) else (self.body,)

    def nodes(self) -> list[Expr]:
        return post_order(self.body)

    def calls(self) -> Iterator[Call]:
        return (n for n in self.nodes() if isinstance(n, Call))

    def states(self) -> list[State]:
        """The function's states, in evaluation order."""
        return [n for n in self.nodes() if isinstance(n, State)]


@dataclass(frozen=True, eq=False)
class Module:
    """`main` plus module-level (lifted) functions, by name. `meta` holds model-level facts
    (source file name, TFLite description)."""

    functions: Mapping[str, Function]
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "functions", MappingProxyType(dict(self.functions)))
        object.__setattr__(self, "meta", _freeze(self.meta))
        if "main" not in self.functions:
            raise ValueError("a Module needs a 'main' function")

    @property
    def main(self) -> Function:
        return self.functions["main"]

    def with_function(self, name: str, fn: Function) -> Module:
        return Module({**self.functions, name: fn}, self.meta)
