"""Partition: lift each matched composite into a module-level function tagged with its target and
composite name; `main` calls it. Targets are tried in priority order; the first whose pattern
matches and whose check passes takes the composite. Generic passes walk `main` only, so nothing
reaches inside a lifted function.

A composite of several ops (a convolution and the ADD that consumes it) is matched at its root,
the last op: the calls inside it are first left as they are (`_fused_inner`, decided before the walk,
only where each has that one user), so that the root's pattern sees them."""

from __future__ import annotations

from mcuforge.ir.expr import Call, Constant, Expr, Function, Module, Tuple, Var, inputs_of, post_order

from mcuforge.errors import UnsupportedError

from .patterns import Match, PatternEntry, match
from .target import Target


def partition(module: Module, targets: list[Target]) -> Module:
    fn = module.main
    new: dict[int, Expr] = {}
    lifted: dict[str, Function] = {}
    counts: dict[str, int] = {}
    problems: list[tuple[int, str, str]] = []
    inner = _fused_inner(fn, targets)
    for node in post_order(fn.body):
        args = tuple(new[id(a)] for a in inputs_of(node))
        if isinstance(node, Call) and id(node) in inner:  # lifted with the composite at its root
            new[id(node)] = _with_args(node, args)
        elif isinstance(node, Call):
            node_rebuilt = _with_args(node, args)
            found = _find(node_rebuilt, targets)
            if found is None:
                src = node.sources[0] if node.sources else None
                problems.append((src.index if src else -1, src.name if src else node.op,
                                 f"no target implements {node.op}"))
                new[id(node)] = node_rebuilt
                continue
            target, entry, m = found
            composite = str(entry.composite)
            # a pattern rooted at any op (a target's one-op fallback) names its functions by the op too
            base = f"{composite}_{node.op}" if entry.pattern.op is None else composite
            k = counts.get(base, 0)
            counts[base] = k + 1
            name = f"{base}_{k}"
            lifted[name], free = _lift(m, target.name, composite)
            new[id(node)] = Call(f"@{name}", free, node.type, {}, node.name, node.tensor,
                                 tuple(s for c in m.covered for s in c.sources))
        else:
            new[id(node)] = _with_args(node, args) if args else node
    if problems:
        raise UnsupportedError(problems)
    out = Module({**module.functions, "main": Function(fn.params, new[id(fn.body)], fn.attrs), **lifted},
                 module.meta)
    return out


def _with_args(node, args):
    from dataclasses import replace

    if all(a is b for a, b in zip(args, inputs_of(node))):
        return node
    if isinstance(node, Tuple):
        return Tuple(args)
    return replace(node, args=args)


def _find(call: Call, targets: list[Target], admit=lambda m: True) -> tuple[Target, PatternEntry, Match] | None:
    for t in targets:
        for entry in t.patterns:
            m = match(entry.pattern, call)
            if m is None or not admit(m):
                continue
            if entry.check(m.captures) is None:
                return t, entry, m
    return None


def _fused_inner(fn: Function, targets: list[Target]) -> set[int]:
    """The calls that composites of several ops cover below their root: for each call, the first
    composite that matches it (as _find), among those whose inner calls have no other user (nor are
    a model output)."""
    users: dict[int, int] = {}
    for node in post_order(fn.body):
        for a in inputs_of(node):
            users[id(a)] = users.get(id(a), 0) + 1
    for o in (fn.body.fields if isinstance(fn.body, Tuple) else (fn.body,)):
        users[id(o)] = users.get(id(o), 0) + 1
    inner: set[int] = set()
    for node in post_order(fn.body):
        if not isinstance(node, Call) or id(node) in inner:
            continue
        found = _find(node, targets, lambda m: all(users.get(id(c), 0) == 1 and id(c) not in inner
                                                   for c in m.covered[:-1]))
        if found is not None:
            inner |= {id(c) for c in found[2].covered[:-1]}
    return inner


def _lift(m: Match, target: str, composite: str) -> tuple[Function, tuple[Expr, ...]]:
    """The covered calls become the body of a new function; every other non-constant input
    becomes a parameter (constants stay inside, where the lowering reads them)."""
    covered = {id(c) for c in m.covered}
    params: list[Var] = []
    free: list[Expr] = []
    mapping: dict[int, Expr] = {}

    def clone(node: Expr) -> Expr:
        if id(node) in mapping:
            return mapping[id(node)]
        if isinstance(node, Constant):
            res: Expr = node
        elif isinstance(node, Call) and id(node) in covered:
            res = _with_args(node, tuple(clone(a) for a in node.args))
        else:
            name = getattr(node, "name", "") or f"arg{len(params)}"
            res = Var(name, node.type, getattr(node, "tensor", None))
            params.append(res)
            free.append(node)
        mapping[id(node)] = res
        return res

    body = clone(m.root)
    return Function(tuple(params), body, {"target": target, "composite": composite}), tuple(free)
