"""Targets plug in through hooks, not through edits to the core.

A Target is a name plus its pattern table, a `lower` hook (a lifted function and the ISA the code
is compiled for -> one KernelCall with its constants precomputed, its scratch size among them), its
templates and its C sources. Register one with `register_target`; the built-in ones (`cmsis-nn`, `c`)
live in planner/targets/.

The ISA (`ISAS`) names the kernel paths the C will be built with: "plain" C, "dsp" (the Armv7E-M DSP
instructions: Cortex-M4, M7, M33) or "mve" (Helium: Cortex-M55, M85). The board decides it
(mcuforge.boards.Board.isa); without a board, DEFAULT_ISA. A lowering may pick the constants' layout
that suits those paths best; the kernels still read every layout on every path, so the generated C
is correct whatever it is built for, only slower on another core.
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


ISAS = ("plain", "dsp", "mve")
DEFAULT_ISA = "dsp"  # the most common build (and the layouts mcuforge chose before it knew the core)


def check_isa(isa: str) -> str:
    if isa not in ISAS:
        raise McuforgeError(f"unknown ISA '{isa}' (known: {', '.join(ISAS)})")
    return isa


@dataclass(frozen=True)
class Target:
    name: str
    patterns: tuple[PatternEntry, ...]
    lower: Callable[[Function, str], KernelCall]  # (lifted function, one of ISAS)
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
