"""The IR verifier: run after every stage. Checks every op is known, every variable is bound,
call types agree with type inference and with callee signatures, and every state is read (and
updated in place) by exactly one call, at a position its op declares a state (ir.expr.State)."""

from __future__ import annotations

import numpy as np

from mcuforge.errors import IRError

from .expr import Call, Constant, Function, Module, State, Tuple, Var, inputs_of, post_order
from .registry import find_op


def verify(module: Module) -> Module:
    """Raise IRError describing the first inconsistency; return the module unchanged otherwise."""
    for name, fn in module.functions.items():
        _verify_function(module, name, fn)
    return module


def _verify_function(module: Module, fname: str, fn: Function) -> None:
    params = {id(p) for p in fn.params}
    if len(params) != len(fn.params):
        raise IRError(f"@{fname}: a parameter is listed twice")
    for node in post_order(fn.body):
        if isinstance(node, Var):
            if id(node) not in params:
                raise IRError(f"@{fname}: variable %{node.name} is used but is not a parameter")
        elif isinstance(node, Constant):
            if node.data.shape != node.type.shape or node.data.dtype != node.type.np_dtype:
                raise IRError(f"@{fname}: constant {node.name} holds {node.data.dtype}{list(node.data.shape)}, "
                              f"typed {node.type}")
        elif isinstance(node, Call):
            _verify_call(module, fname, node)
        elif isinstance(node, State):
            _verify_state(fname, node)
        elif not isinstance(node, Tuple):
            raise IRError(f"@{fname}: unknown node {type(node).__name__}")
    _verify_state_uses(fname, fn)


def _verify_state(fname: str, state: State) -> None:
    info = np.iinfo(state.type.np_dtype) if state.type.np_dtype.kind in "iu" else None
    if info is None or not info.min <= state.fill <= info.max:
        raise IRError(f"@{fname}: state {state.name} of type {state.type} cannot start at {state.fill}")


def _verify_state_uses(fname: str, fn: Function) -> None:
    """A state has exactly one reader, a call (its in-place update), at a state position of a registry
    op (a call of a lifted function takes it as a plain argument); it is never a function output."""
    uses: dict[int, list[tuple[Call | Tuple, int]]] = {}
    for node in post_order(fn.body):
        for i, a in enumerate(inputs_of(node)):
            if isinstance(a, State):
                uses.setdefault(id(a), []).append((node, i))
    for state in fn.states():
        where = uses.get(id(state), [])
        if len(where) != 1 or not isinstance(where[0][0], Call) or state in fn.outputs:
            raise IRError(f"@{fname}: state {state.name} must be read by exactly one call and not be an output")
        call, i = where[0]
        opdef = find_op(call.op) if call.callee is None else None
        if opdef is not None and i not in opdef.state_args:
            raise IRError(f"@{fname}: state {state.name} is argument {i} of {call.op}, which is not a state")


def _verify_call(module: Module, fname: str, call: Call) -> None:
    where = f"@{fname}: %{call.name or call.op} = {call.op}"
    if call.callee is not None:
        callee = module.functions.get(call.callee)
        if callee is None:
            raise IRError(f"{where}: calls a function that is not in the module")
        if len(callee.params) != len(call.args):
            raise IRError(f"{where}: {len(call.args)} arguments for {len(callee.params)} parameters")
        for a, p in zip(call.args, callee.params):
            if _type_of(a) != p.type:
                raise IRError(f"{where}: argument of type {_type_of(a)} for parameter %{p.name}: {p.type}")
        outs = callee.outputs
        if len(outs) != 1 or _type_of(outs[0]) != call.type:
            raise IRError(f"{where}: result type {call.type} differs from the callee's")
        return
    opdef = find_op(call.op)
    if opdef is None:
        raise IRError(f"{where}: unknown op")
    if any(isinstance(a, Tuple) for a in call.args):
        raise IRError(f"{where}: a tuple cannot be an operator argument")
    shape, dtype = opdef.infer(tuple(_type_of(a) for a in call.args), call.attrs)
    if (tuple(shape), dtype) != (call.type.shape, call.type.dtype):
        raise IRError(f"{where}: typed {call.type}, but inference gives {dtype}{list(shape)}")


def _type_of(node):
    if isinstance(node, Tuple):
        raise IRError("a tuple has no single type")
    return node.type
