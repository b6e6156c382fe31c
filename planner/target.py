"""Targets plug in through hooks, not through edits to the core.

A Target is a name plus its pattern table, a `lower` hook (a lifted function -> one KernelCall with
its constants precomputed, its scratch size among them), its templates and its C sources. Register one
with `register_target`; the built-in ones (`cmsis-nn`, `c`) live in planner/targets/.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mcuforge.ir.expr import Function

from mcuforge.errors import McuforgeError

from .kernel import KernelCall
from .patterns import PatternEntry


@dataclass(frozen=True)
class Target:
    name: str
    patterns: tuple[PatternEntry, ...]
    lower: Callable[[Function], KernelCall]
    templates: Path  # directory of this target's Jinja templates
    sources: Path  # directory of this target's C sources


_TARGETS: dict[str, Target] = {}
_BUILTIN = ("mcuforge.planner.targets.c", "mcuforge.planner.targets.cmsis_nn")


def register_target(target: Target) -> Target:
    _TARGETS[target.name] = target
    return target


def get_target(name: str) -> Target:
    for mod in _BUILTIN:
        importlib.import_module(mod)
    if name not in _TARGETS:
        raise McuforgeError(f"unknown target '{name}' (known: {', '.join(sorted(_TARGETS))})")
    return _TARGETS[name]


def all_targets() -> list[str]:
    for mod in _BUILTIN:
        importlib.import_module(mod)
    return sorted(_TARGETS)
