"""The reference evaluator: run a Module with the registry's numpy implementations."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from mcuforge.errors import InputError

from .expr import Call, Constant, Function, Module, State, Tuple, Var, post_order
from .registry import OpView, get_op


def check_inputs(fn: Function, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Inputs as arrays of the exact dtype and shape of the parameters, or an InputError."""
    if len(inputs) != len(fn.params):
        raise InputError(f"the model takes {len(fn.params)} input(s), got {len(inputs)}")
    out = []
    for i, (p, x) in enumerate(zip(fn.params, inputs)):
        x = np.asarray(x)
        if x.dtype != p.type.np_dtype:
            raise InputError(f"input {i} '{p.name}' must be {p.type.dtype}, got {x.dtype}")
        if tuple(x.shape) != p.type.shape:
            raise InputError(f"input {i} '{p.name}' must have shape {list(p.type.shape)}, got {list(x.shape)}")
        out.append(x)
    return out


def initial_states(module: Module) -> dict[int, np.ndarray]:
    """Every state of `main` at its initial value, by id(State): what a model starts from and what
    its reset restores. Pass the same dict to `evaluate` run after run to carry the states."""
    return {id(s): s.initial() for s in module.main.states()}


def evaluate(module: Module, inputs: Sequence[np.ndarray], keep: dict[int, np.ndarray] | None = None,
             fn_name: str = "main", states: dict[int, np.ndarray] | None = None) -> list[np.ndarray]:
    """Run `fn_name` on `inputs`; return its outputs. With `keep`, every computed value is stored
    there under id(node) (intermediates, for verify --intermediates and debugging).

    `states` (from `initial_states`) holds the value of every State by id; the ops that take a state
    update its array in place. Without it, each call starts from the initial states."""
    fn = module.functions[fn_name]
    if states is None:
        states = {id(s): s.initial() for s in fn.states()}
    values: dict[int, np.ndarray] = {}
    for p, x in zip(fn.params, check_inputs(fn, inputs)):
        values[id(p)] = x
    for node in post_order(fn.body):
        if id(node) in values or isinstance(node, Tuple):
            continue
        if isinstance(node, Constant):
            values[id(node)] = node.data
        elif isinstance(node, State):
            values[id(node)] = states[id(node)]
        elif isinstance(node, Var):
            raise InputError(f"free variable '{node.name}' in {fn_name}")
        elif isinstance(node, Call):
            args = [values[id(a)] for a in node.args]
            if node.callee is not None:
                (result,) = evaluate(module, args, keep, node.callee)
            else:
                view = OpView(tuple(a.type for a in node.args), node.type, node.attrs)
                result = get_op(node.op).reference(args, view)
            result = np.asarray(result)
            if result.dtype != node.type.np_dtype or result.shape != node.type.shape:
                raise AssertionError(
                    f"{node.op} '{node.name}' produced {result.dtype}{list(result.shape)}, "
                    f"expected {node.type.dtype}{list(node.type.shape)}"
                )
            values[id(node)] = result
    if keep is not None:
        keep.update(values)
    return [values[id(o)] for o in fn.outputs]
