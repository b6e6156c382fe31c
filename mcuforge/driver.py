"""The compiler driver: each stage by name, a check of its output after every one.

    load_tflite       .tflite -> Module ("main" in the QNN dialect)       verify (IR verifier)
    legalize          canonical ops, rules run to a fixpoint                verify
    partition         composites lifted to functions tagged with a target   verify
    lower             each lifted function -> one KernelCall (target hook)  check_kernels
    schedule          A-normal form, order chosen for the smallest peak     check_program
    plan_program      static arena offsets for every tensor and scratch     check_arena
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from mcuforge.errors import ModelError
from mcuforge.frontend import load_tflite
from mcuforge.ir.expr import Module
from mcuforge.ir.verifier import verify
from mcuforge.planner.arena import ArenaPlan, plan_program
from mcuforge.planner.report import layer_macs
from mcuforge.planner.checks import check_arena, check_kernels, check_program
from mcuforge.planner.kernel import KernelCall
from mcuforge.planner.legalize import legalize
from mcuforge.planner.lower import lower
from mcuforge.planner.partition import partition
from mcuforge.planner.program import Program, schedule
from mcuforge.planner.target import DEFAULT_ISA, get_target

DEFAULT_TARGETS = ("cmsis-nn", "c")
# --memory balanced: overlaps that cost instructions (planner/arena.py plan_program) may add up to
# 5% of the model's instructions, estimated per MAC: half an instruction for the DSP and plain paths
# (they take more: 1.2-1.7 on the M4 on the MLPerf Tiny models, so less in proportion), 0.45 for
# Helium (its kernels take 0.47 on KWS, 0.50 on VWW: the budget must stay under 5% there).
BALANCED_BUDGET = 0.05 * 0.5
BALANCED_BUDGET_MVE = 0.05 * 0.45


@dataclass(frozen=True)
class Options:
    targets: tuple[str, ...] = DEFAULT_TARGETS
    memory_algorithms: tuple[str, ...] | None = None  # None: every algorithm, best plan wins
    memory: str = "balanced"  # min | balanced | fast (planner/arena.py MEMORY_MODES)
    isa: str = DEFAULT_ISA  # the kernel paths the C is built with (planner/target.py ISAS): the board's Board.isa


@dataclass
class Compiled:
    imported: Module
    module: Module  # legalized and partitioned
    kernels: Mapping[str, KernelCall]
    program: Program
    arena: ArenaPlan
    blob: bytes = field(repr=False, default=b"")


def read_model(path: str | Path) -> tuple[Module, bytes]:
    """Read, import and verify a model; return the module and the file's bytes (for the oracle)."""
    module = verify(load_tflite(path))
    try:
        blob = Path(path).read_bytes()
    except OSError as e:
        raise ModelError(f"{path}: cannot read: {e}") from None
    return module, blob


def compile_model(path: str | Path, options: Options = Options()) -> Compiled:
    return compile_module(*read_model(path), options)


def compile_module(imported: Module, blob: bytes, options: Options = Options()) -> Compiled:
    """compile_model of a model already read (read_model): the CLI checks inputs against it first."""
    module = verify(legalize(imported))
    module = verify(partition(module, [get_target(t) for t in options.targets]))
    kernels = check_kernels(module, lower(module, options.isa))
    program = check_program(schedule(module, kernels))
    per_mac = BALANCED_BUDGET_MVE if options.isa == "mve" else BALANCED_BUDGET
    budget = int(per_mac * sum(layer_macs(module.functions[b.fn].body) for b in program.bindings))
    program, arena = plan_program(program, options.memory_algorithms, options.memory, budget)
    arena = check_arena(program, arena)
    return Compiled(imported, module, kernels, program, arena, blob)
