"""Sizes the C kernels declare in their headers, read by the compiler: one source of truth.

A kernel that needs scratch memory declares its size as a macro beside its declaration,

    #define MCU_CMSIS_CONV2D_1X1_S8_SCRATCH_BYTES(in_c) (4 * (in_c))

The planner sizes the scratch buffer by evaluating that macro here (`kernel_size`), and the generated
C checks the planned size against the same macro compiled by the C compiler (a `_Static_assert` per
layer), so the Python side never holds a copy of a kernel's formula. The macro body may use integer
literals, its parameters, + - * / % and parentheses; `/` and `%` are C's, on non-negative values.
"""

from __future__ import annotations

import ast
import functools
import operator
import re
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

KERNELS = Path(str(files("mcuforge.firmware") / "kernels"))
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)[ \t]*((?:[^\n\\]|\\\n)*)$", re.MULTILINE)


@dataclass(frozen=True)
class KernelSize:
    """A size a kernel's header declares: its value and the C expression that computes it."""

    bytes: int
    expr: str


@functools.cache
def header_macros(target: str) -> dict[str, tuple[tuple[str, ...], str]]:
    """Every function-like macro of the target's kernel headers: name -> (parameters, body)."""
    found: dict[str, tuple[tuple[str, ...], str]] = {}
    for header in sorted((KERNELS / target).glob("*.h")):
        for name, params, body in _DEFINE.findall(header.read_text()):
            found[name] = (tuple(p.strip() for p in params.split(",") if p.strip()), body.replace("\\\n", " ").strip())
    return found


def kernel_size(target: str, macro: str, *args: int) -> KernelSize:
    """Evaluate `macro(*args)` from the headers of firmware/kernels/<target>/."""
    try:
        params, body = header_macros(target)[macro]
    except KeyError:
        raise LookupError(f"no macro {macro} in firmware/kernels/{target}/*.h") from None
    if len(params) != len(args):
        raise TypeError(f"{macro} takes {len(params)} arguments, got {len(args)}")
    env = {p: int(a) for p, a in zip(params, args)}
    value = _eval(ast.parse(body, mode="eval").body, env, macro)
    return KernelSize(value, f"{macro}({', '.join(str(int(a)) for a in args)})")


def _c_div(a: int, b: int) -> int:
    if a < 0 or b <= 0:
        raise ValueError(f"C division of {a} by {b}: only non-negative operands are supported")
    return a // b


def _c_mod(a: int, b: int) -> int:
    return a - _c_div(a, b) * b


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: _c_div,
        ast.FloorDiv: _c_div, ast.Mod: _c_mod}


def _eval(node: ast.AST, env: dict[str, int], macro: str) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left, env, macro), _eval(node.right, env, macro))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, env, macro)
    raise ValueError(f"{macro}: unsupported expression {ast.dump(node)}")
