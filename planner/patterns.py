"""Pattern tables as data: a composite is matched by a small pattern tree with named captures.

    pattern = op("conv_2d", wildcard("x"), const("weights"), const("bias", optional=True))

`match(pattern, call)` returns the captures ({name: node}) and the calls the composite covers, or
None. Checks then read captures by name instead of walking `args[0].args[0]`. Composite names
belong to the target that defines them (e.g. an `enum.StrEnum` in the target's package): the core
only carries them as strings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from mcuforge.ir.expr import Call, Constant, Expr


@dataclass(frozen=True)
class Pattern:
    kind: str  # "op", "wildcard", "const"
    name: str | None = None  # capture name
    op: str | None = None
    args: tuple["Pattern", ...] = ()
    optional: bool = False  # may be absent (only as a trailing argument)


def op(op_name: str, *args: Pattern, capture: str | None = None) -> Pattern:
    return Pattern("op", capture, op_name, tuple(args))


def wildcard(capture: str | None = None) -> Pattern:
    return Pattern("wildcard", capture)


def const(capture: str | None = None, optional: bool = False) -> Pattern:
    return Pattern("const", capture, optional=optional)


def any_op(capture: str | None = None) -> Pattern:
    """Any registry op with any arguments."""
    return Pattern("op", capture, None)


@dataclass
class Match:
    root: Call
    captures: dict[str, Expr] = field(default_factory=dict)
    covered: list[Call] = field(default_factory=list)  # calls inside the composite, root last


def match(pattern: Pattern, node: Expr) -> Match | None:
    if not isinstance(node, Call) or node.callee is not None:
        return None
    m = Match(node)
    return m if _match(pattern, node, m) else None


def _match(p: Pattern, node: Expr, m: Match) -> bool:
    if p.kind == "wildcard":
        pass
    elif p.kind == "const":
        if not isinstance(node, Constant):
            return False
    elif p.kind == "op":
        if not isinstance(node, Call) or node.callee is not None or (p.op is not None and node.op != p.op):
            return False
        if p.op is not None:
            required = [a for a in p.args if not a.optional]
            if not (len(required) <= len(node.args) <= len(p.args)):
                return False
            for sub, arg in zip(p.args, node.args):
                if not _match(sub, arg, m):
                    return False
        m.covered.append(node)
    if p.name:
        m.captures[p.name] = node
    return True


@dataclass(frozen=True)
class PatternEntry:
    """One row of a target's pattern table. `check` gets the captures and returns None when the
    composite is supported by this target, or a detail of why not (its docstring is the rule)."""

    composite: str  # the target's name for the composite (a StrEnum member or a plain string)
    pattern: Pattern
    check: Callable[[dict[str, Expr]], "str | None"] = lambda caps: None
