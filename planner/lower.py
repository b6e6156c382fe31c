"""Lower: each lifted function becomes one KernelCall through its target's `lower` hook."""

from __future__ import annotations

from mcuforge.ir.expr import Module

from .kernel import KernelCall
from .target import DEFAULT_ISA, check_isa, get_target


def lower(module: Module, isa: str = DEFAULT_ISA) -> dict[str, KernelCall]:
    """KernelCall for every lifted function, by function name, for code built with `isa`'s kernel
    paths (planner/target.py ISAS)."""
    check_isa(isa)
    kernels = {}
    for name, fn in module.functions.items():
        if name == "main":
            continue
        kernels[name] = get_target(fn.attrs["target"]).lower(fn, isa)
    return kernels
