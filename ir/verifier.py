"""The IR verifier: run after every stage. Checks every op is known, every variable is bound,
call types agree with type inference and with callee signatures, and every state is read (and
updated in place) by exactly one call (or by the calls of ops that share states: a resource
variable's read and write), at a position its op declares a state (ir.expr.State)."""

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
    _verify_state_uses(fname, fn, module)


def _verify_state(fname: str, state: State) -> None:
    kind = state.type.np_dtype.kind
    info = np.iinfo(state.type.np_dtype) if kind in "iu" else None
    ok = info.min <= state.fill <= info.max if info is not None else kind == "f" and state.fill == 0
    if not ok:
        raise IRError(f"@{fname}: state {state.name} of type {state.type} cannot start at {state.fill}")


def _verify_state_uses(fname: str, fn: Function, module: Module) -> None:
    """A state is read by calls only, at state positions of registry ops (a call of a lifted function
    takes it as a plain argument), and it is never a function output. Exactly one call takes it, or
    several that all share states (OpDef.shares_state: a resource variable's read and write)."""
    uses: dict[int, list[tuple[Call | Tuple, int]]] = {}
    for node in post_order(fn.body):
        for i, a in enumerate(inputs_of(node)):
            if isinstance(a, State):
                uses.setdefault(id(a), []).append((node, i))
    for state in fn.states():
        where = uses.get(id(state), [])
        shared = len(where) > 1 and all(isinstance(n, Call) and _shares_state(module, n) for n, _ in where)
        if not where or (len(where) != 1 and not shared) or not isinstance(where[0][0], Call) or state in fn.outputs:
            raise IRError(f"@{fname}: state {state.name} must be read by exactly one call and not be an output")
        for call, i in where:
            opdef = find_op(call.op) if call.callee is None else None
            if opdef is not None and i not in opdef.state_args:
                raise IRError(f"@{fname}: state {state.name} is argument {i} of {call.op}, which is not a state")


def _shares_state(module: Module, call: Call) -> bool:
    """The call's op shares its states (a lifted function's: a call in its body does)."""
    if call.callee is None:
        opdef = find_op(call.op)
        return opdef is not None and opdef.shares_state
    callee = module.functions.get(call.callee)
    return callee is not None and any(_shares_state(module, c) for c in callee.calls())


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
