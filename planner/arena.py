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

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from mcuforge.errors import ModelError

from .memory import Alias, Buffer, Constraint, InPlace, MemoryPlan, lower_bound, plan_memory
from .kernel import Overlap
from .fusion import choose_fusions, fusion_cost
from .overlap import overlapping_steps
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
    costs: tuple[tuple[int, str], ...] = ()  # (step, what it costs) of the overlaps that need kernel parameters
    states: dict[str, int] = field(default_factory=dict)  # state buffer -> offset in the state region
    state_bytes: int = 0  # bytes of the state region

    @property
    def arena_bytes(self) -> int:
        return self.plan.arena_bytes

    def offset(self, name: str) -> int:
        return self.plan.offsets[name]


def buffer_records(program: Program, use_overlap: Callable[[int, Overlap], bool] = lambda step, overlap: True
                   ) -> tuple[list[Buffer], list[Constraint]]:
    """The buffers and constraints of a program; `use_overlap(step, declaration)` says which
    kernels' Overlap declarations become InPlace ranges."""
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
        elif (b.kernel.in_place and b.args and b.args[b.kernel.in_place_input] not in program.states
              and _dies_at(b.args[b.kernel.in_place_input], step, last, program)):
            constraints.append(InPlace(b.out, b.args[b.kernel.in_place_input]))
        elif (overlap := _usable(step, b.kernel.overlap, use_overlap)) is not None:
            arg = b.args[overlap.input]
            shift, low = overlap.max_shift, overlap.min_shift
            if arg not in program.states and b.args.count(arg) == 1 and _dies_at(arg, step, last, program):
                constraints.append(InPlace(b.out, arg, lo=None if low is None else low + -low % ALIGNMENT,
                                           hi=shift - shift % ALIGNMENT))
        kernel = b.kernel  # as it runs: with the parameters (and scratch) of an overlap it uses that needs them
        if kernel.overlap is not None and kernel.overlap.needs and use_overlap(step, kernel.overlap):
            kernel = _with_needs(kernel)
        if kernel.scratch_bytes:
            buffers.append(Buffer(f"scratch{step}", kernel.scratch_bytes, ALIGNMENT, step, step))
    return buffers, constraints


def _usable(step: int, overlap: Overlap | None, use_overlap: Callable[[int, Overlap], bool]) -> Overlap | None:
    """The declaration the planner uses at a step: the kernel's, else what it allows without the
    parameters that one needs (Overlap.without), else none."""
    if overlap is not None and not use_overlap(step, overlap):
        overlap = overlap.without
    return overlap if overlap is not None and use_overlap(step, overlap) else None


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


def plan_program(program: Program, algorithms=None, mode: str = "balanced", budget: int = 0
                 ) -> tuple[Program, ArenaPlan]:
    """Plan the arena in a memory mode, fusing chains of row-local layers where that shrinks it
    (planner/fusion.py: min and balanced; balanced within `budget` instructions, the overlaps
    getting what the fusions leave of it); returns the program (fused, with the kernel parameters
    the used overlaps need set) and its plan."""
    def planner(m: str, quick: bool = False) -> Callable[[Program], tuple[Program, ArenaPlan]]:
        return lambda p: _plan_overlaps(p, algorithms, m, max(budget - fusion_cost(p), 0), quick)

    # the fusion search compares arenas only: its plans skip the search for costly overlaps the
    # arena does not need (that lowers their instruction cost, never the arena), done once on the
    # chosen program
    return choose_fusions(program, planner(mode, quick=True), mode, budget, planner("balanced", quick=True), planner(mode))


def _plan_overlaps(program: Program, algorithms=None, mode: str = "balanced", budget: int = 0, quick: bool = False
                   ) -> tuple[Program, ArenaPlan]:
    """Plan the arena in a memory mode; returns the program with the kernel parameters the used
    overlaps need (Overlap.needs) set, and its plan.

    fast: no Overlap declaration used. min: every declaration that needs no parameter (no
    instruction cost), and those that do except each the arena stays as small without. balanced:
    the same, then while those cost more than `budget` instructions together (their
    Overlap.cost_instructions), the one whose loss grows the arena least dropped. `quick`: the
    costly declarations the arena does not need are not looked for (balanced still drops for its
    budget): an arena never smaller (the same on every model tried), for far fewer plans; and
    the improving search tries QUICK_ITERATIONS orders (memory_greedy.py), not the final plan's
    IMPROVING_ITERATIONS."""
    if mode not in MEMORY_MODES:
        raise ModelError(f"unknown memory mode '{mode}'; known: {', '.join(MEMORY_MODES)}")
    costly = {s for s, b in enumerate(program.bindings) if b.kernel.overlap is not None and b.kernel.overlap.needs}

    def attempt(chosen: set[int]) -> ArenaPlan:
        def use(step: int, overlap: Overlap) -> bool:
            return mode != "fast" and (not overlap.needs or step in chosen)

        return _plan(program, algorithms, mode, use, quick)

    def cost(steps: set[int]) -> int:
        return sum(program.bindings[s].kernel.overlap.cost_instructions for s in steps)

    chosen: set[int] = set()
    arena = attempt(chosen)
    if mode != "fast" and costly:
        keep = set(costly)
        best = attempt(keep)
        for step in sorted(costly) if not quick else ():  # drop what the arena does not need
            trial = attempt(keep - {step})
            if trial.arena_bytes <= best.arena_bytes:
                best, keep = trial, keep - {step}
        if mode == "balanced" and keep and budget < min(cost({s}) for s in keep):
            keep, best = set(), arena  # the budget affords none of them: the loop below would drop all
        while mode == "balanced" and cost(keep) > budget:  # drop the one whose loss grows the arena least
            best, step = min(((attempt(keep - {s}), s) for s in sorted(keep)),
                             key=lambda t: (t[0].arena_bytes, -cost({t[1]})))
            keep.discard(step)
        if best.arena_bytes < arena.arena_bytes:
            arena, chosen = best, keep
    used = costly & chosen
    bindings = tuple(replace(b, kernel=_with_needs(b.kernel)) if s in used else b for s, b in enumerate(program.bindings))
    costs = tuple((s, program.bindings[s].kernel.overlap.cost) for s in sorted(used))
    return replace(program, bindings=bindings), replace(arena, costs=costs)


def _with_needs(kernel):
    """The kernel with the parameters (and scratch) its overlap needs."""
    overlap = kernel.overlap
    params = {**kernel.params, **dict(overlap.needs)}
    if overlap.scratch_bytes is None:
        return replace(kernel, params=params)
    return replace(kernel, params=params, scratch_bytes=overlap.scratch_bytes, scratch_check=overlap.scratch_check)


def _plan(program: Program, algorithms, mode: str, use_overlap: Callable[[int, Overlap], bool],
          quick: bool = False) -> ArenaPlan:
    buffers, constraints = buffer_records(program, use_overlap)
    plan = plan_memory(buffers, constraints, algorithms, quick)
    element_wise = {b.out for b in program.bindings if b.kernel.in_place}
    classic = [c for c in constraints if not isinstance(c, InPlace) or c.out in element_wise]
    live_bound = lower_bound(buffers, classic)
    states, state_bytes = plan_states(program)
    if plan.arena_bytes + state_bytes > MAX_ARENA_BYTES:
        raise ModelError(f"the model needs an arena of {plan.arena_bytes:,} B and {state_bytes:,} B of state, more "
                         f"than a Cortex-M can address ({MAX_ARENA_BYTES:,} B at most)")
    scratch = max((b.size for b in buffers if b.name.startswith("scratch")), default=0)
    overlaps = tuple(overlapping_steps(program, plan.offsets))
    return ArenaPlan(plan, tuple(buffers), tuple(constraints), scratch, mode, live_bound, overlaps,
                     states=states, state_bytes=state_bytes)
