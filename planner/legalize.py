"""Legalization to a fixpoint.

Each op's registry entry lists its rules. A rule maps one call to a graph of other ops, which may
themselves have rules: the pass rewrites `main` bottom-up, one rule per node per round, and repeats
until a round changes nothing. Before its op's rules, every call whose arguments are all constants
is folded into a constant (ir/fold.py): constants that rules produce fold in the same fixpoint. A graph seen before means the rules cycle; that, or more rounds than
`max_rounds`, stops with a LegalizeError naming the rules that fired last, instead of looping.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from mcuforge.ir.expr import Call, Constant, Expr, Function, Module, State, Tuple, Var, inputs_of, post_order
from mcuforge.ir.fold import fold
from mcuforge.ir.registry import find_op

from mcuforge.errors import McuforgeError


class LegalizeError(McuforgeError):
    """Legalization did not reach a fixpoint."""

    exit_code = 3


@dataclass
class Context:
    """What a rule may ask about the graph being rewritten."""

    _users: dict[int, int]
    _origin: dict[int, int]
    _outputs: set[int]

    def user_count(self, node: Expr) -> int:
        """How many consumers `node` has (model outputs count as one)."""
        key = self._origin.get(id(node), id(node))
        return self._users.get(key, 0) + (1 if key in self._outputs else 0)


def _rebuild(node: Expr, new_inputs: tuple[Expr, ...]) -> Expr:
    if all(a is b for a, b in zip(new_inputs, inputs_of(node))):
        return node
    if isinstance(node, Call):
        return replace(node, args=new_inputs)
    if isinstance(node, Tuple):
        return Tuple(new_inputs)
    return node


def _round(body: Expr) -> tuple[Expr, list[str]]:
    users: dict[int, int] = {}
    for node in post_order(body):
        for a in inputs_of(node):
            users[id(a)] = users.get(id(a), 0) + 1
    outputs = {id(o) for o in (body.fields if isinstance(body, Tuple) else (body,))}
    new: dict[int, Expr] = {}
    origin: dict[int, int] = {}
    ctx = Context(users, origin, outputs)
    fired: list[str] = []
    for node in post_order(body):
        rebuilt = _rebuild(node, tuple(new[id(a)] for a in inputs_of(node)))
        origin[id(rebuilt)] = id(node)
        folded = fold(rebuilt) if isinstance(rebuilt, Call) else None
        if folded is not None:
            fired.append("fold")
            origin[id(folded)] = id(node)
            rebuilt = folded
        elif isinstance(rebuilt, Call) and rebuilt.callee is None:
            opdef = find_op(rebuilt.op)
            for rule in opdef.legalize if opdef else ():
                result = rule(rebuilt, ctx)
                if result is not None and result is not rebuilt:
                    fired.append(f"{rule.__module__.rsplit('.', 1)[-1]}.{rule.__name__}")
                    origin[id(result)] = id(node)
                    rebuilt = result
                    break
        new[id(node)] = rebuilt
    return new[id(body)], fired


def fingerprint(body: Expr) -> str:
    """A structural hash of a graph: ops, attributes, types, constants' bytes, wiring."""
    h = hashlib.sha256()
    index: dict[int, int] = {}
    for i, node in enumerate(post_order(body)):
        index[id(node)] = i
        if isinstance(node, Var):
            h.update(f"var {node.name} {node.type}".encode())
        elif isinstance(node, Constant):
            h.update(f"const {node.type}".encode() + node.data.tobytes())
        elif isinstance(node, State):
            h.update(f"state {node.name} {node.type} {node.fill}".encode())
        elif isinstance(node, Call):
            attrs = sorted((k, repr(v)) for k, v in node.attrs.items())
            h.update(f"call {node.op} {attrs} {node.type} {[index[id(a)] for a in node.args]}".encode())
        else:
            h.update(f"tuple {[index[id(a)] for a in inputs_of(node)]}".encode())
    return h.hexdigest()


def legalize(module: Module, max_rounds: int = 64) -> Module:
    fn = module.main
    body = fn.body
    seen = {fingerprint(body): 0}
    history: list[list[str]] = []
    for rnd in range(1, max_rounds + 1):
        body, fired = _round(body)
        if not fired:
            return module.with_function("main", Function(fn.params, body, fn.attrs))
        history.append(fired)
        key = fingerprint(body)
        if key in seen:
            loop = sorted({r for rules in history[seen[key]:] for r in rules})
            raise LegalizeError(f"legalization rules cycle: the graph repeats after rules {', '.join(loop)}")
        seen[key] = rnd
    raise LegalizeError(f"legalization did not reach a fixpoint in {max_rounds} rounds "
                        f"(still firing: {', '.join(sorted(set(history[-1])))})")
