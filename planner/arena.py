"""From the A-normal-form program to buffer records, and the static arena plan.

Every activation tensor (inputs and outputs included) and every kernel scratch buffer is planned in
the one arena. Views alias their source; an op whose kernel tolerates it writes over an input that
dies at that op (InPlace): exactly over it (element-wise kernels), or, in the `min` and `balanced`
memory modes, overlapping it as far as the kernel's Overlap declaration allows (planner/overlap.py
proves the plan). `fast` plans no overlap beyond the element-wise one. None of today's overlaps
costs an instruction (the kernels are the same), so `balanced` uses all of them, as `min` does.

States (LSTM/SVDF variable tensors) are not in the arena, whose bytes are reused within a run and
are garbage between runs: they get a region of their own, live for the whole life of the program,
laid out one after the other (`plan_states`; nothing can share bytes with a state, so that layout is
optimal). The generated C keeps it in a static array of `state_bytes` next to the arena.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcuforge.errors import ModelError

from .memory import Alias, Buffer, Constraint, InPlace, MemoryPlan, lower_bound, plan_memory
from .program import Program

ALIGNMENT = 4  # word alignment: every kernel's loads are word-sized at most
MEMORY_MODES = ("min", "balanced", "fast")  # --memory: the trade-off between arena and instructions
MAX_ARENA_BYTES = 1 << 31  # half of a 32-bit address space: no microcontroller has more RAM


@dataclass(frozen=True)
class ArenaPlan:
    plan: MemoryPlan
    buffers: tuple[Buffer, ...]
    constraints: tuple[Constraint, ...]
    scratch_bytes: int  # largest scratch buffer
    mode: str = "balanced"
    live_bound: int = 0  # the classic live-tensor bound: no output sharing a byte with its input
    overlaps: tuple[tuple[int, str, int], ...] = ()  # (step, input, shift) of every kernel overlapping an input
    states: dict[str, int] = field(default_factory=dict)  # state buffer -> offset in the state region
    state_bytes: int = 0  # bytes of the state region

    @property
    def arena_bytes(self) -> int:
        return self.plan.arena_bytes

    def offset(self, name: str) -> int:
        return self.plan.offsets[name]


def buffer_records(program: Program, mode: str = "balanced") -> tuple[list[Buffer], list[Constraint]]:
    first: dict[str, int] = {name: 0 for name in program.inputs}
    last: dict[str, int] = {}
    for step, b in enumerate(program.bindings):
        first[b.out] = step
        for a in b.args:
            last[a] = max(last.get(a, 0), step)
    end = max(len(program.bindings) - 1, 0)
    for o in program.outputs:
        last[o] = end
    buffers: list[Buffer] = []
    constraints: list[Constraint] = []
    for name, f in first.items():
        size = program.buffers[name].type.nbytes
        buffers.append(Buffer(name, size, ALIGNMENT, f, max(last.get(name, f), f)))
    for step, b in enumerate(program.bindings):
        if b.kernel.view:
            constraints.append(Alias(b.out, b.args[0]))
        elif (b.kernel.in_place and b.args and b.args[0] not in program.states
              and _dies_at(b.args[0], step, last, program)):
            constraints.append(InPlace(b.out, b.args[0]))
        elif mode != "fast" and b.kernel.overlap is not None:
            arg = b.args[b.kernel.overlap.input]
            shift = b.kernel.overlap.max_shift
            if arg not in program.states and b.args.count(arg) == 1 and _dies_at(arg, step, last, program):
                constraints.append(InPlace(b.out, arg, lo=None, hi=shift - shift % ALIGNMENT))
        if b.kernel.scratch_bytes:
            buffers.append(Buffer(f"scratch{step}", b.kernel.scratch_bytes, ALIGNMENT, step, step))
    return buffers, constraints


def _dies_at(name: str, step: int, last: dict[str, int], program: Program) -> bool:
    """`name` is read for the last time at `step`, and so is all of its storage: the tensor it is a
    view of and every view of that, none of them a graph output."""
    source = {b.out: b.args[0] for b in program.bindings if b.kernel.view}
    root = name
    while root in source:
        root = source[root]
    group = {root}
    for b in program.bindings:  # views follow their sources in the schedule
        if b.kernel.view and b.args[0] in group:
            group.add(b.out)
    return (last.get(name, -1) == step and all(last.get(g, -1) <= step for g in group)
            and not group & set(program.outputs))


def plan_states(program: Program) -> tuple[dict[str, int], int]:
    """Offsets of the states in their own region, one after the other in program order, each
    ALIGNMENT-aligned; and the region's size."""
    offsets, end = {}, 0
    for name in program.states:
        end = -(-end // ALIGNMENT) * ALIGNMENT
        offsets[name] = end
        end += program.buffers[name].type.nbytes
    return offsets, end


def plan_arena(program: Program, algorithms=None, mode: str = "balanced") -> ArenaPlan:
    if mode not in MEMORY_MODES:
        raise ModelError(f"unknown memory mode '{mode}'; known: {', '.join(MEMORY_MODES)}")
    buffers, constraints = buffer_records(program, mode)
    plan = plan_memory(buffers, constraints, algorithms)
    classic = [c for c in constraints if not isinstance(c, InPlace) or (c.lo, c.hi) == (0, 0)]
    live_bound = lower_bound(buffers, classic)
    states, state_bytes = plan_states(program)
    if plan.arena_bytes + state_bytes > MAX_ARENA_BYTES:
        raise ModelError(f"the model needs an arena of {plan.arena_bytes:,} B and {state_bytes:,} B of state, more "
                         f"than a Cortex-M can address ({MAX_ARENA_BYTES:,} B at most)")
    scratch = max((b.size for b in buffers if b.name.startswith("scratch")), default=0)
    from .overlap import overlapping_steps
    overlaps = tuple(overlapping_steps(program, plan.offsets))
    return ArenaPlan(plan, tuple(buffers), tuple(constraints), scratch, mode, live_bound, overlaps, states,
                     state_bytes)
