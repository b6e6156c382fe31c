"""Memory planner: tables of hand-made lifetimes with expected arenas, the checker, and properties.

Each table case is a function whose docstring draws the lifetimes; `_buffers` reads the drawing,
so the picture is the test data. A row is `name(size)` or `name(size, align N)`, and `#` marks from
the column of the first step to the column of the last step (inclusive), e.g.

    step:   0 1 2 3
    a(16)   ###          a: 16 bytes, live at steps 0..1
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass, field

import pytest
from mcuforge.planner.memory import (
    ALGORITHMS,
    Alias,
    Buffer,
    InPlace,
    MemoryPlan,
    PlanError,
    build_problem,
    check_plan,
    lower_bound,
    plan_memory,
)
from mcuforge.planner.memory_exact import EXACT_MAX_BLOCKS, exact
from mcuforge.planner.memory_problem import NotApplicable

ROW = re.compile(r"^(\w+)\((\d+)(?:, align (\d+))?\)\s")


def _buffers(drawing: str) -> list[Buffer]:
    lines = drawing.splitlines()
    header = next(ln for ln in lines if ln.strip().startswith("step:"))
    step_at = {m.start(): int(m.group()) for m in re.finditer(r"\d+", header)}
    buffers = []
    for line in lines:
        m = ROW.match(line.strip())
        if m:
            marks = [i for i, ch in enumerate(line) if ch == "#"]
            first, last = step_at[marks[0]], step_at[marks[-1]]  # KeyError: a mark off the step columns
            buffers.append(Buffer(m.group(1), int(m.group(2)), int(m.group(3) or 1), first, last))
    return buffers


@dataclass
class Case:
    name: str
    drawing: str
    arena: int
    bound: int
    constraints: tuple = ()
    by_algorithm: dict[str, int] = field(default_factory=dict)

    @property
    def buffers(self) -> list[Buffer]:
        return _buffers(self.drawing)


CASES: list[Case] = []


def case(arena: int, bound: int, constraints: tuple = (), **by_algorithm: int):
    """Register the decorated function's docstring drawing as a table row."""
    def register(fn):
        CASES.append(Case(fn.__name__, fn.__doc__, arena, bound, constraints, by_algorithm))
        return fn
    return register


# ---------------------------------------------------------------------------------------------------
# The table


@case(arena=24, bound=24)
def chain():
    """Ping-pong: a and c never meet, so they take the same slot; b takes the other.

    step:   0 1 2 3
    a(16)   ###
    b(8)      ###
    c(16)       ###
    """


@case(arena=48, bound=48, greedy_by_size=56, greedy_by_conflicts=64, improving=48, exact=48)
def greedy_by_size_suboptimal():
    """Largest first puts a and d at 0 and then b over d, which forces c to 40: 56 bytes. The
    optimum (48) puts b under d: a [0,32) c [32,48) b [0,16) d [16,40).

    step:   0 1 2
    a(32)   #
    c(16)   ###
    b(16)     ###
    d(24)       #
    """


@case(arena=26, bound=20)
def alignment_padding():
    """Both need 16-byte alignment, so the second starts at 16, not 10: 6 bytes of padding.

    step:           0 1
    a(10, align 16) ###
    b(10, align 16) ###
    """


@case(arena=18, bound=18, greedy_by_size=24, exact=18)
def alignment_padding_avoided_by_order():
    """Largest first puts a at 0 and pads b to 16; placing b first (at 0) and a after it needs none.

    step:           0 1
    a(10)           ###
    b(8, align 16)  ###
    """


@case(arena=96, bound=96, constraints=(Alias("v", "x"),))
def alias_group_counts_once():
    """v is a reshape of x: one 64-byte block live 0..3, never counted twice (steps 1..2).

    step:   0 1 2 3
    x(64)   #####
    v(64)     #####
    y(32)     ###
    """


@case(arena=128, bound=128, constraints=(Alias("v", "x"),))
def alias_group_keeps_bytes_between_uses():
    """x is written at 0 and read through its view v at 3: w (step 2) must not reuse those bytes.

    step:   0 1 2 3
    x(64)   ###
    v(64)         #
    w(64)       #
    """


@case(arena=64, bound=64, constraints=(Alias("lo", "x", 0), Alias("hi", "x", 32)))
def alias_slices_at_offsets():
    """lo and hi are views of the two halves of x; once they die, z reuses all of x.

    step:   0 1 2
    x(64)   #
    lo(32)  ###
    hi(32)  ###
    z(64)       #
    """


@case(arena=32, bound=32, constraints=(InPlace("b", "a"), InPlace("c", "b")))
def in_place_chain():
    """Elementwise ops in place: each output written over its input, one 32-byte slot (64 without).

    step:   0 1 2 3
    a(32)   ###
    b(32)     ###
    c(32)       ###
    """


@case(arena=64, bound=64, constraints=())
def no_in_place_without_the_constraint():
    """The same chain without InPlace: buffers that touch at a step conflict, so two slots.

    step:   0 1 2 3
    a(32)   ###
    b(32)     ###
    c(32)       ###
    """


@case(arena=48, bound=48, constraints=(InPlace("b", "a"),))
def in_place_output_larger_than_input():
    """b grows over a: it sits at a's offset and its extra 16 bytes must be free of s too.

    step:   0 1 2
    s(16)   ###
    a(16)   ###
    b(32)     ###
    """


@case(arena=64, bound=64, constraints=(Alias("v", "x"), InPlace("y", "v")))
def in_place_over_a_view():
    """y = relu(reshape(x)) written over the view, hence over x: one block for all three.

    step:   0 1 2 3
    x(64)   ###
    v(64)     ###
    y(64)       ###
    """


@case(arena=40, bound=40)
def zero_sized_and_disjoint():
    """Zero-sized buffers take no room; buffers that never meet share the arena.

    step:   0 1 2 3
    e(0)    #######
    a(40)   #
    b(40)     #
    c(24)       ###
    d(16)       ###
    """


@pytest.mark.parametrize("c", CASES, ids=lambda c: c.name)
def test_table(c: Case):
    plan = plan_memory(c.buffers, c.constraints)
    assert (plan.arena_bytes, plan.lower_bound) == (c.arena, c.bound), plan.summary()
    assert lower_bound(c.buffers, c.constraints) == c.bound
    for name, arena in c.by_algorithm.items():
        assert plan.arenas[name] == arena, plan.summary()
    assert plan.arenas["exact"] == c.arena  # every case is small: the exact search finds the best
    if c.bound == c.arena:
        assert plan.gap == 0


def test_drawing_parser():
    assert _buffers(chain.__doc__) == [Buffer("a", 16, 1, 0, 1), Buffer("b", 8, 1, 1, 2),
                                       Buffer("c", 16, 1, 2, 3)]
    assert _buffers(alignment_padding.__doc__)[1] == Buffer("b", 10, 16, 0, 1)


# ---------------------------------------------------------------------------------------------------
# Placement details


def test_alias_offsets_are_exact():
    bufs = _buffers(alias_slices_at_offsets.__doc__)
    plan = plan_memory(bufs, (Alias("lo", "x", 0), Alias("hi", "x", 32)))
    assert plan.offsets["lo"] == plan.offsets["x"] and plan.offsets["hi"] == plan.offsets["x"] + 32


def test_alias_at_negative_offset_and_alignment():
    bufs = [Buffer("x", 32, 16, 0, 1), Buffer("v", 8, 8, 0, 1), Buffer("y", 5, 1, 0, 0)]
    plan = plan_memory(bufs, [Alias("v", "x", -8)])
    assert plan.offsets["v"] == plan.offsets["x"] - 8 and plan.offsets["x"] % 16 == 0


def test_in_place_shares_exact_offset():
    bufs = _buffers(in_place_chain.__doc__)
    plan = plan_memory(bufs, (InPlace("b", "a"), InPlace("c", "b")))
    assert plan.offsets == {"a": 0, "b": 0, "c": 0}


def test_offsets_respect_alignment():
    rng = random.Random(3)
    bufs = [Buffer(f"t{i}", rng.randint(1, 50), rng.choice([1, 2, 4, 8, 16]), i, i + 2) for i in range(12)]
    plan = plan_memory(bufs)
    assert all(plan.offsets[b.name] % b.alignment == 0 for b in bufs)


# ---------------------------------------------------------------------------------------------------
# The checker catches broken plans


def _plan(offsets, arena=64):
    return MemoryPlan(offsets, arena, "hand", 0)


CHECKER_CASES = [
    # (buffers, constraints, offsets, words the message must contain)
    ([Buffer("a", 16, 1, 0, 1), Buffer("b", 16, 1, 1, 2)], (), {"a": 0, "b": 8},
     ["'a' (steps 0..1, bytes [0, 16))", "'b' (steps 1..2, bytes [8, 24))", "overlap in bytes [8, 16)",
      "steps 1..1"]),
    ([Buffer("a", 16, 16, 0, 1)], (), {"a": 4}, ["'a' at offset 4 is not aligned to 16 bytes"]),
    ([Buffer("x", 16, 1, 0, 1), Buffer("v", 16, 1, 1, 2)], (Alias("v", "x"),), {"x": 0, "v": 16},
     ["alias violated", "'v' is at 16"]),
    ([Buffer("a", 16, 1, 0, 1), Buffer("b", 16, 1, 1, 2)], (InPlace("b", "a"),), {"a": 0, "b": 4},
     ["'a'", "'b'", "overlap"]),  # in place only at exactly the same offset
    ([Buffer("a", 16, 1, 0, 2), Buffer("b", 16, 1, 1, 2)], (InPlace("b", "a"),), {"a": 0, "b": 0},
     ["overlap"]),  # a still lives after b is born: the InPlace does not apply
    ([Buffer("x", 16, 1, 0, 0), Buffer("v", 16, 1, 3, 3), Buffer("w", 16, 1, 2, 2)], (Alias("v", "x"),),
     {"x": 0, "v": 0, "w": 0}, ["'w'", "alias group live 0..3", "steps 2..2"]),
    ([Buffer("a", 16, 1, 0, 1)], (), {"a": 60}, ["outside the arena [0, 64)"]),
    ([Buffer("a", 16, 1, 0, 1)], (), {"a": 0, "ghost": 0}, ["ghost"]),
]


@pytest.mark.parametrize("bufs, constraints, offsets, words", CHECKER_CASES)
def test_checker_catches(bufs, constraints, offsets, words):
    with pytest.raises(PlanError) as err:
        check_plan(bufs, constraints, _plan(offsets))
    for w in words:
        assert w in str(err.value)


def test_checker_accepts_valid_sharing():
    bufs = [Buffer("a", 16, 1, 0, 1), Buffer("b", 24, 1, 1, 2), Buffer("s", 8, 1, 2, 2)]
    check_plan(bufs, [InPlace("b", "a")], _plan({"a": 0, "b": 0, "s": 24}))


def test_every_plan_is_checked(monkeypatch):
    monkeypatch.setitem(ALGORITHMS, "broken", lambda problem: {b: 0 for b in "abc"})
    with pytest.raises(PlanError, match="overlap"):
        plan_memory(_buffers(chain.__doc__))


BAD_INPUT = [
    ([Buffer("a", 1, 1, 0, 0), Buffer("a", 1, 1, 0, 0)], (), "two buffers are named 'a'"),
    ([Buffer("a", 1, 0, 0, 0)], (), "alignment >= 1"),
    ([Buffer("a", 1, 1, 2, 1)], (), "first_use <= last_use"),
    ([Buffer("a", 1, 1, 0, 0)], (Alias("a", "z"),), "unknown buffer 'z'"),
    ([Buffer("a", 1, 1, 0, 0), Buffer("b", 1, 1, 0, 0)], (Alias("a", "b"), Alias("b", "a")), "alias cycle"),
    ([Buffer("a", 8, 8, 0, 0), Buffer("b", 8, 8, 0, 0)], (Alias("b", "a", 4),), "no offset aligns"),
    ([Buffer("a", 8, 1, 0, 2), Buffer("b", 8, 1, 1, 2)], (InPlace("b", "a"),), "in-place needs them equal"),
    ([Buffer("a", 8, 1, 0, 1)], (), None),
]


@pytest.mark.parametrize("bufs, constraints, message", BAD_INPUT)
def test_bad_input(bufs, constraints, message):
    if message is None:
        plan_memory(bufs, constraints, algorithms=["greedy_by_size"])
        with pytest.raises(PlanError, match="unknown memory planning algorithm"):
            plan_memory(bufs, constraints, algorithms=["nope"])
        return
    with pytest.raises(PlanError, match=re.escape(message)):
        plan_memory(bufs, constraints)


# ---------------------------------------------------------------------------------------------------
# Determinism, bounds, limits


def test_deterministic_and_independent_of_input_order():
    bufs, cons = _random_problem(11, n=14)
    first = plan_memory(bufs, cons)
    assert plan_memory(bufs, cons) == first
    for seed in range(5):
        shuffled = bufs[:]
        random.Random(seed).shuffle(shuffled)
        assert plan_memory(shuffled, list(reversed(cons))) == first


def test_ties_between_algorithms_go_to_name_order():
    plan = plan_memory(_buffers(chain.__doc__))
    assert set(plan.arenas.values()) == {24} and plan.algorithm == "exact"
    plan = plan_memory(_buffers(chain.__doc__), algorithms=["improving", "greedy_by_size"])
    assert plan.algorithm == "greedy_by_size" and list(plan.arenas) == ["greedy_by_size", "improving"]


def test_lower_bound():
    bufs = _buffers(greedy_by_size_suboptimal.__doc__)
    assert lower_bound(bufs) == 48  # a + c at step 0
    assert lower_bound([]) == 0
    bufs = _buffers(in_place_chain.__doc__)
    assert lower_bound(bufs) == 64 and lower_bound(bufs, [InPlace("b", "a"), InPlace("c", "b")]) == 32


def test_summary_reports_gap():
    plan = plan_memory(_buffers(alignment_padding.__doc__))
    assert plan.gap == 6
    assert plan.summary().startswith("arena 26 B (exact), lower bound 20 B, gap 6 B (30.0%)")


def test_empty_problem():
    plan = plan_memory([])
    assert (plan.offsets, plan.arena_bytes, plan.lower_bound) == ({}, 0, 0)


def test_exact_declines_big_problems():
    bufs = [Buffer(f"t{i:02d}", 16, 1, i, i + 1) for i in range(EXACT_MAX_BLOCKS + 1)]
    with pytest.raises(NotApplicable):
        exact(build_problem(bufs))
    assert "exact" not in plan_memory(bufs).arenas


def test_exact_reaches_the_bound_with_equal_sizes():
    """Equal sizes, no alignment: the conflict graph is an interval graph, which can be coloured with
    as many colours as its largest clique, so the optimum is exactly the lower bound."""
    for seed in range(40):
        rng = random.Random(seed)
        bufs = [Buffer(f"b{i}", 8, 1, s, s + rng.randrange(4)) for i, s in
                enumerate(rng.randrange(8) for _ in range(rng.randint(1, 10)))]
        plan = plan_memory(bufs)
        assert plan.arenas["exact"] == plan.lower_bound == plan.arena_bytes


def test_exact_is_the_best_lowest_fit_order():
    """On small problems, compare the exact search with trying every placement order."""
    for seed in range(60):
        bufs, cons = _random_problem(seed, n=random.Random(seed).randint(2, 6))
        problem = build_problem(bufs, cons)
        brute = min(problem.arena(problem.place(order))
                    for order in itertools.permutations(range(len(problem.blocks))))
        assert plan_memory(bufs, cons, algorithms=["exact"]).arena_bytes == brute


def test_exact_is_optimal_over_all_offsets():
    """Without InPlace, the exact search is optimal over every plan: compare with trying every offset."""
    for seed in range(60):
        rng = random.Random(seed)
        bufs = [Buffer(f"b{i}", rng.randint(0, 6), rng.choice([1, 2, 4]), s, s + rng.randrange(3))
                for i, s in enumerate(rng.randrange(5) for _ in range(rng.randint(2, 5)))]
        plan = plan_memory(bufs, algorithms=["exact"])
        assert plan.arena_bytes == _best_over_all_offsets(bufs, plan.arena_bytes)


def _best_over_all_offsets(bufs: list[Buffer], upper: int) -> int:
    best = upper
    offsets: dict[str, int] = {}

    def visit(i: int) -> None:
        nonlocal best
        if i == len(bufs):
            best = min(best, max((offsets[b.name] + b.size for b in bufs), default=0))
            return
        b = bufs[i]
        for x in range(0, best - b.size, b.alignment):
            if all(x + b.size <= offsets[o.name] or offsets[o.name] + o.size <= x or not b.size or not o.size
                   or o.last_use < b.first_use or b.last_use < o.first_use for o in bufs[:i]):
                offsets[b.name] = x
                visit(i + 1)
    visit(0)
    return best


# ---------------------------------------------------------------------------------------------------
# Properties over random problems


def _random_problem(seed: int, n: int | None = None) -> tuple[list[Buffer], list]:
    """Random lifetimes, sizes and alignments, a few views and a few in-place pairs (each buffer at
    most once on each side, as elementwise ops produce)."""
    rng = random.Random(seed)
    n = n or rng.randint(1, 10)
    steps = rng.randint(2, 10) if n <= 10 else n * 2 // 3
    bufs = []
    for i in range(n):
        first = rng.randrange(steps)
        bufs.append(Buffer(f"b{i}", rng.choice([0, 1, 3, 8, 16, 24, 40, 64, 100]),
                           rng.choice([1, 1, 2, 4, 8, 16]), first, min(steps - 1, first + rng.randrange(4))))
    cons: list = [Alias(f"b{i}", f"b{rng.randrange(i)}", rng.choice([0, 0, 16, -16, 32]))
                  for i in range(1, n) if rng.random() < 0.15]
    outs: set[str] = set()
    inps: set[str] = set()
    for x, y in itertools.permutations(bufs, 2):
        if x.last_use == y.first_use and x.name not in inps and y.name not in outs and rng.random() < 0.3:
            try:
                build_problem(bufs, cons + [InPlace(y.name, x.name)])
            except PlanError:
                continue
            cons.append(InPlace(y.name, x.name))
            outs.add(y.name)
            inps.add(x.name)
    return bufs, cons


def test_random_problems_every_algorithm_valid_and_above_bound():
    for seed in range(200):
        bufs, cons = _random_problem(seed)
        problem = build_problem(bufs, cons)
        bound = lower_bound(bufs, cons)
        arenas = {}
        for name, algorithm in ALGORITHMS.items():
            try:
                offsets = algorithm(problem)
            except NotApplicable:
                continue
            arenas[name] = max((offsets[b.name] + b.size for b in bufs), default=0)
            check_plan(bufs, cons, MemoryPlan(offsets, arenas[name], name, bound))
            assert arenas[name] >= bound, (seed, name)
        assert arenas["improving"] <= min(arenas["greedy_by_size"], arenas["greedy_by_conflicts"]), seed
        assert arenas.get("exact", 0) <= min(arenas.values()), seed
        if seed % 10 == 0:
            assert plan_memory(bufs, cons).arena_bytes == min(arenas.values())


def _vww_like() -> tuple[list[Buffer], list]:
    """A MobileNet-like schedule: 60 activations (mostly a chain, some skip connections) and scratch
    buffers, sized like Visual Wake Words at 96x96."""
    rng = random.Random(96)
    sizes = [96 * 96 * 8, 48 * 48 * 16, 48 * 48 * 32, 24 * 24 * 64, 24 * 24 * 128, 12 * 12 * 256, 6 * 6 * 512]
    bufs = []
    for i in range(60):
        last = i + 1 if rng.random() < 0.85 else i + rng.randint(2, 4)
        bufs.append(Buffer(f"t{i:02d}", sizes[min(i // 9, len(sizes) - 1)], 16, i, last))
        if rng.random() < 0.4:
            bufs.append(Buffer(f"s{i:02d}", rng.randint(100, 3000), 4, i + 1, i + 1))
    return bufs, []


def _dense_random() -> tuple[list[Buffer], list]:
    """60 random buffers over 40 steps with views and in-place pairs: the greedy plans stay above the
    bound, so the improving search runs all its iterations."""
    return _random_problem(4, n=60)


@pytest.mark.parametrize("make", [_vww_like, _dense_random])
def test_sixty_buffers_plan_with_bounded_work(make, monkeypatch):
    """Sixty buffers: the exact search declines (too many blocks) and the others place the blocks a
    bounded number of times (two greedy orders, the improving search's four starts and at most
    IMPROVING_ITERATIONS perturbations): bounded by count; speed is benchmarks/compile_time.py's."""
    from mcuforge.planner.memory_greedy import IMPROVING_ITERATIONS
    from mcuforge.planner.memory_problem import Problem

    placements = []
    place = Problem.place
    monkeypatch.setattr(Problem, "place", lambda self, *a, **k: placements.append(1) or place(self, *a, **k))
    bufs, cons = make()
    plan = plan_memory(bufs, cons)
    assert "exact" not in plan.arenas
    assert 6 <= len(placements) <= 6 + IMPROVING_ITERATIONS
    assert plan.arena_bytes >= plan.lower_bound and set(plan.arenas) >= {"greedy_by_size", "improving"}
