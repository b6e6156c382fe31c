"""The cycles of a straight run of instructions (a QEMU translation block) on one core model.

A block ends at its first branch, so its cost is fixed except for that branch: `block_cost` gives
the cycles when the block falls through and when its last instruction branches (adding the pipeline
refill P), each as (low, point, high). Pipeline rules between neighbours (load pipelining, address
and load-use stalls, IT folding, MVE beat overlap, dual issue) apply inside the block; a block
starts with an empty pipeline history (it follows a branch, or QEMU cut a run of code in two: the
trace then credits the pair at the seam, mcuforge.cycles.trace).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mcuforge.cycles.cores import HIGH, LOW, POINT, CoreModel
from mcuforge.cycles.isa import Insn

_DATA = frozenset(("alu", "mul", "mul_long", "dsp_mac", "div"))
_MEMORY = frozenset(("load", "store", "load_dual", "store_dual", "load_multiple", "store_multiple", "fp_mem",
                     "fp_multiple", "mve_mem"))
_LOADS = frozenset(("load", "load_dual", "load_multiple", "fp_mem", "fp_multiple", "mve_mem"))
_MULTIPLY = frozenset(("mul", "mul_long", "dsp_mac", "fp_mac", "mve_mac"))
_SINGLE_ISSUE = frozenset(("load_multiple", "store_multiple", "load_dual", "store_dual", "fp_multiple", "div",
                           "barrier", "system", "table_branch", "it", "loop_start", "loop_end"))


@dataclass(frozen=True)
class BlockCost:
    fall: tuple[float, float, float]   # (low, point, high) cycles when the block falls through
    taken: tuple[float, float, float]  # ... when its last instruction branches


def sequence_cycles(insns: Sequence[Insn], core: CoreModel, which: int = POINT) -> float:
    """Cycles of the instructions in order (no branch refill), estimate `which` (LOW/POINT/HIGH)."""
    total = 0.0
    prev: Insn | None = None
    paired = False
    for ins in insns:
        kind = "store_reg" if ins.kind == "store" and ins.reg_offset else ins.kind
        cycles = core.cost(kind, ins.base).at(which, ins.nregs)
        if prev is not None:
            cycles = _neighbour(prev, ins, cycles, core)
            if core.dual_issue and which != HIGH and not paired and _pairs(prev, ins):
                cycles, paired = 0.0, True
            else:
                paired = False
        total += cycles
        prev = ins
    return total


def _neighbour(prev: Insn, ins: Insn, cycles: float, core: CoreModel) -> float:
    """`cycles` of `ins` adjusted for the instruction before it."""
    if core.load_pipelined is not None and ins.kind in ("load", "store") and prev.kind == "load" \
            and not prev.writes & ins.addr_regs:
        cycles = core.load_pipelined
    elif core.addr_dep_stall and ins.kind in _MEMORY and prev.kind in _DATA and prev.writes & ins.addr_regs:
        cycles += core.addr_dep_stall
    if core.load_use_stall and prev.kind in _LOADS and prev.writes & (ins.reads | ins.addr_regs):
        cycles += core.load_use_stall
    if ins.kind == "it" and core.it_folding and prev.size == 2:
        cycles = 0.0
    if core.mve_overlap is not None and ins.kind.startswith("mve_") and prev.kind.startswith("mve_") \
            and ins.kind != prev.kind:
        cycles = min(cycles, core.mve_overlap)
    return cycles


def _pairs(first: Insn, second: Insn) -> bool:
    """Whether `second` can issue in the same cycle as `first` (the Cortex-M7 model)."""
    if first.writes_pc or first.kind in _SINGLE_ISSUE or second.kind in _SINGLE_ISSUE:
        return False
    if first.kind in _MEMORY and second.kind in _MEMORY:
        return False
    if first.kind in _MULTIPLY and second.kind in _MULTIPLY:
        return False
    return not first.writes & (second.reads | second.addr_regs)


def block_cost(insns: Sequence[Insn], core: CoreModel) -> BlockCost:
    """The cycles of a block falling through and branching at its end, each (low, point, high)."""
    fall, taken = [], []
    last = insns[-1]
    for which in (LOW, POINT, HIGH):
        body = sequence_cycles(insns, core, which)
        if last.kind == "loop_end":  # a taken LE/LETP costs loop_refill in all; its exit costs the table's
            branched = body - core.cost("loop_end").at(which) + core.loop_refill.at(which)
        else:
            branched = body + (core.refill.at(which) if last.writes_pc else 0.0)
        taken.append(branched)
        fall.append(body if last.conditional or not last.writes_pc else branched)
    return BlockCost(tuple(fall), tuple(taken))
