"""Static memory planning over plain data: buffer records in, arena offsets out, every plan checked.

Input: `Buffer(name, size, alignment, first_use, last_use)` records, lifetimes being inclusive step
indices in the A-normal-form schedule, plus optional constraints:

- `Alias(name, of, offset)`: buffer `name` is a view of `of` and lives at exactly
  offset(of) + offset (a reshape shares its input's bytes). Aliases chain; the buffers linked by
  aliases form an *alias group*, planned as one block whose bytes are reserved for the hull of its
  members' lifetimes (from the first member's first use to the last member's last use).
- `InPlace(out, inp)`: `out` may be written over `inp` (an elementwise op). It requires that inp's
  group dies at the very step where out's group is born (group(inp) last use == group(out) first use).
  Then, and only when offset(out) == offset(inp) exactly, the two groups may overlap in bytes; any
  byte of out beyond inp's (out.size > inp.size) must still be free of every other live buffer.
  (Safe because inp's group is only read up to that step and out's only written from it, and the
  op at that step reads inp element by element before writing the same element of out.)
  `InPlace(out, inp, lo, hi)` widens "exactly" to a range: the groups may share bytes when
  offset(out) - offset(inp) lies in [lo, hi] (lo None: no lower limit), for a kernel whose write
  head stays behind its read head at those distances (planner/kernel.py's Overlap; the kernel's
  order at the planned distance is proven by planner/overlap.py).

Semantics checked by `check_plan`: every offset is >= 0 and a multiple of its buffer's alignment (the
arena base itself must be aligned to the largest alignment), every alias holds exactly, and two
buffers of different alias groups whose groups' lifetimes intersect (inclusive) do not share a byte,
unless an InPlace constraint between the two groups allows it as above. Zero-sized buffers never
overlap anything.

The algorithms sit in `ALGORITHMS`, each a pure function `Problem -> {buffer name: offset}`;
`plan_memory` runs them, checks every plan with `check_plan`, and keeps the smallest arena (ties go
to the first algorithm in name order). Ties between buffers always break by name, so the output does
not depend on the order of the input records.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from math import gcd

from .memory_exact import exact
from .memory_greedy import QUICK_ITERATIONS, greedy_by_conflicts, greedy_by_size, improving
from .memory_problem import Block, NotApplicable, Problem


class PlanError(Exception):
    """An invalid planning problem, or a plan that breaks it (always a compiler bug)."""


@dataclass(frozen=True)
class Buffer:
    """A tensor or scratch buffer: `size` bytes at a multiple of `alignment`, live over the steps
    first_use..last_use inclusive."""

    name: str
    size: int
    alignment: int
    first_use: int
    last_use: int


@dataclass(frozen=True)
class Alias:
    """Buffer `name` lives at exactly offset(of) + offset: a view sharing `of`'s bytes."""

    name: str
    of: str
    offset: int = 0


@dataclass(frozen=True)
class InPlace:
    """`out` may share bytes with `inp` when offset(out) - offset(inp) is in [lo, hi] (lo None: no
    lower limit; the default: exactly inp's offset): inp's storage dies where out is born."""

    out: str
    inp: str
    lo: int | None = 0
    hi: int = 0

    def allows(self, d: int) -> bool:
        return (self.lo is None or d >= self.lo) and d <= self.hi


Constraint = Alias | InPlace


@dataclass(frozen=True)
class MemoryPlan:
    """Offset of every buffer (sorted by name), the arena size, the algorithm that produced the plan,
    the lower bound on any valid arena, and the arena each algorithm tried reached."""

    offsets: dict[str, int]
    arena_bytes: int
    algorithm: str
    lower_bound: int
    arenas: dict[str, int] = field(default_factory=dict)

    @property
    def gap(self) -> int:
        """Bytes above the lower bound (0 means provably optimal)."""
        return self.arena_bytes - self.lower_bound

    def summary(self) -> str:
        pct = 100.0 * self.gap / self.lower_bound if self.lower_bound else 0.0
        tried = ", ".join(f"{name} {arena}" for name, arena in self.arenas.items())
        return (f"arena {self.arena_bytes} B ({self.algorithm}), lower bound {self.lower_bound} B, "
                f"gap {self.gap} B ({pct:.1f}%)" + (f"; tried: {tried}" if tried else ""))


ALGORITHMS: dict[str, Callable[[Problem], dict[str, int]]] = {
    "greedy_by_size": greedy_by_size,
    "greedy_by_conflicts": greedy_by_conflicts,
    "improving": improving,
    "exact": exact,
}


def plan_memory(buffers: Sequence[Buffer], constraints: Iterable[Constraint] = (),
                algorithms: Iterable[str] | None = None, quick: bool = False) -> MemoryPlan:
    """Run the named algorithms (default: all), keep the smallest arena, and check that plan.
    `quick`: the improving search tries QUICK_ITERATIONS orders (a search comparing many programs'
    plans), not IMPROVING_ITERATIONS.

    An algorithm that declines the problem (NotApplicable: the exact search on a big one) is skipped;
    `MemoryPlan.arenas` lists those that ran."""
    constraints = tuple(constraints)
    problem = build_problem(buffers, constraints)
    names = sorted(set(ALGORITHMS if algorithms is None else algorithms))
    unknown = [n for n in names if n not in ALGORITHMS]
    if unknown:
        raise PlanError(f"unknown memory planning algorithm(s) {unknown}; known: {sorted(ALGORITHMS)}")
    plans = []
    for name in names:
        try:
            run = ALGORITHMS[name]
            offsets = improving(problem, QUICK_ITERATIONS) if quick and run is improving else run(problem)
        except NotApplicable:  # the exact search on a problem too big for it
            continue
        arena = max((offsets[b.name] + b.size for b in buffers), default=0)
        plans.append(MemoryPlan(offsets, arena, name, problem.bound))
    if not plans:
        raise PlanError(f"none of the algorithms {names} applies to this problem")
    best = min(plans, key=lambda p: (p.arena_bytes, p.algorithm))
    check_plan(buffers, constraints, best)
    return replace(best, arenas={p.algorithm: p.arena_bytes for p in plans})


def lower_bound(buffers: Sequence[Buffer], constraints: Iterable[Constraint] = ()) -> int:
    """The largest number of bytes simultaneously live, a bound no valid plan can beat.

    At each step it sums the footprints of the live alias groups (a group counts once, with the bytes
    its members cover), less, for each InPlace pair whose groups meet at that step, the smaller of
    the two footprints (the most the pair can share)."""
    return build_problem(buffers, constraints).bound


def build_problem(buffers: Sequence[Buffer], constraints: Iterable[Constraint] = ()) -> Problem:
    """Validate the records and constraints and build the allocators' `Problem` (see memory_problem)."""
    by_name = _validate_buffers(buffers)
    constraints = tuple(constraints)
    aliases = [c for c in constraints if isinstance(c, Alias)]
    inplaces = [c for c in constraints if isinstance(c, InPlace)]
    others = [c for c in constraints if not isinstance(c, Alias | InPlace)]
    if others:
        raise PlanError(f"unknown memory constraint {others[0]!r}")
    groups = _alias_groups(by_name, aliases)
    blocks = tuple(_make_block(root, groups[root], by_name) for root in sorted(groups))
    index = {name: i for i, blk in enumerate(blocks) for name, _ in blk.members}
    conflicts = tuple(tuple(j for j, other in enumerate(blocks) if j != i and _meet(blk, other))
                      for i, blk in enumerate(blocks))
    shares: list[dict[int, set[tuple[float, float]]]] = [{} for _ in blocks]
    pairs: dict[tuple[int, int], float] = {}
    for c in inplaces:
        for name in (c.out, c.inp):
            if name not in by_name:
                raise PlanError(f"{c!r} names unknown buffer '{name}'")
        q, p = index[c.out], index[c.inp]
        if p == q:
            raise PlanError(f"{c!r}: '{c.out}' and '{c.inp}' are in the same alias group")
        if blocks[p].last != blocks[q].first:
            raise PlanError(f"{c!r}: the storage of '{c.inp}' is live to step {blocks[p].last} but "
                            f"'{c.out}' is born at step {blocks[q].first}; in-place needs them equal")
        # offset(out) - offset(inp) = base(q) - base(p) + rel(out) - rel(inp)
        d = dict(blocks[p].members)[c.inp] - dict(blocks[q].members)[c.out]
        lo = float("-inf") if c.lo is None else c.lo + d
        shares[q].setdefault(p, set()).add((lo, c.hi + d))  # base(q) - base(p) in [lo, hi]
        shares[p].setdefault(q, set()).add((-(c.hi + d), -lo))
        pairs[p, q] = max(pairs.get((p, q), float("-inf")), c.hi + d)
    frozen = tuple({c: frozenset(ds) for c, ds in sorted(s.items())} for s in shares)
    bound = _bound(blocks, [_footprint(blk, by_name) for blk in blocks], pairs)
    return Problem(blocks, conflicts, frozen, bound)


def _validate_buffers(buffers: Sequence[Buffer]) -> dict[str, Buffer]:
    by_name: dict[str, Buffer] = {}
    for b in buffers:
        if not isinstance(b, Buffer):
            raise PlanError(f"expected a Buffer record, got {b!r}")
        if b.name in by_name:
            raise PlanError(f"two buffers are named '{b.name}'")
        ints = (b.size, b.alignment, b.first_use, b.last_use)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in ints):
            raise PlanError(f"{b!r}: size, alignment and lifetimes must be integers")
        if b.size < 0 or b.alignment < 1 or b.first_use > b.last_use:
            raise PlanError(f"{b!r}: need size >= 0, alignment >= 1 and first_use <= last_use")
        by_name[b.name] = b
    return by_name


def _alias_groups(by_name: dict[str, Buffer], aliases: list[Alias]) -> dict[str, dict[str, int]]:
    """root name -> {member name: offset relative to the root} (the root itself at 0)."""
    parent: dict[str, Alias] = {}
    for a in aliases:
        for name in (a.name, a.of):
            if name not in by_name:
                raise PlanError(f"{a!r} names unknown buffer '{name}'")
        if a.name in parent:
            raise PlanError(f"'{a.name}' is declared an alias twice: {parent[a.name]!r} and {a!r}")
        parent[a.name] = a
    groups: dict[str, dict[str, int]] = {}
    for name in by_name:
        rel, seen, root = 0, [name], name
        while root in parent:
            rel += parent[root].offset
            root = parent[root].of
            if root in seen:
                raise PlanError(f"alias cycle: {' -> '.join(seen + [root])}")
            seen.append(root)
        groups.setdefault(root, {})[name] = rel
    return groups


def _make_block(root: str, rels: dict[str, int], by_name: dict[str, Buffer]) -> Block:
    low = min(rels.values())  # a view at a negative offset moves the base below the root
    members = tuple(sorted((name, rel - low) for name, rel in rels.items()))
    residue, modulus = 0, 1
    for name, rel in members:
        merged = _merge_congruence(residue, modulus, -rel, by_name[name].alignment)
        if merged is None:
            raise PlanError(f"alias group '{root}': no offset aligns every member "
                            f"('{name}' needs alignment {by_name[name].alignment} at +{rel} in the group)")
        residue, modulus = merged
    return Block(name=root, members=members,
                 extent=max(rel + by_name[name].size for name, rel in members),
                 first=min(by_name[name].first_use for name, _ in members),
                 last=max(by_name[name].last_use for name, _ in members),
                 modulus=modulus, phase=residue)


def _merge_congruence(r1: int, m1: int, r2: int, m2: int) -> tuple[int, int] | None:
    """x = r1 (mod m1) and x = r2 (mod m2) -> x = r (mod lcm), or None if they contradict."""
    g = gcd(m1, m2)
    if (r2 - r1) % g:
        return None
    k = (r2 - r1) // g * pow(m1 // g, -1, m2 // g) % (m2 // g)
    lcm = m1 // g * m2
    return (r1 + m1 * k) % lcm, lcm


def _meet(a: Block, b: Block) -> bool:
    return a.first <= b.last and b.first <= a.last


def _footprint(blk: Block, by_name: dict[str, Buffer]) -> int:
    """Bytes covered by the members of a block (the union of their ranges)."""
    total, reach = 0, 0
    for lo, hi in sorted((rel, rel + by_name[name].size) for name, rel in blk.members):
        if hi > reach:
            total += hi - max(lo, reach)
            reach = hi
    return total


def _bound(blocks: Sequence[Block], footprint: list[int], pairs: Mapping[tuple[int, int], float]) -> int:
    # The live sum only rises where a block starts; just after a start, in-place pairs no longer
    # share, so those points are candidates too. A pair (inp p, out q) shares at most the smaller
    # footprint, and, when out must start hi > 0 bytes below inp (base(q) - base(p) <= hi < 0), at
    # most extent(q) + hi bytes.
    starts = {blk.first for blk in blocks}
    steps = sorted(starts | {s + 1 for s in starts})
    best = 0
    for t in steps:
        live = [fp for blk, fp in zip(blocks, footprint) if blk.first <= t <= blk.last]
        shared = sum(int(min(footprint[p], footprint[q], max(0, blocks[q].extent + min(hi, 0))))
                     for (p, q), hi in pairs.items() if blocks[q].first == t)
        best = max(best, sum(live) - shared, max(live, default=0))
    return best


def check_plan(buffers: Sequence[Buffer], constraints: Iterable[Constraint], plan: MemoryPlan) -> None:
    """Raise PlanError unless `plan` is valid (see the module docstring). Deliberately simple and
    independent of the allocators: it checks every pair of buffers."""
    by_name = {b.name: b for b in buffers}
    offsets = plan.offsets
    if set(offsets) != set(by_name):
        raise PlanError(f"plan offsets name {sorted(set(offsets) ^ set(by_name))} which are not "
                        "exactly the buffers")
    for b in buffers:
        off = offsets[b.name]
        if not isinstance(off, int) or off < 0 or off + b.size > plan.arena_bytes:
            raise PlanError(f"'{b.name}' at offset {off!r} (size {b.size}) is outside the arena "
                            f"[0, {plan.arena_bytes})")
        if off % b.alignment:
            raise PlanError(f"'{b.name}' at offset {off} is not aligned to {b.alignment} bytes")
    parent: dict[str, str] = {}
    for c in constraints:
        if isinstance(c, Alias):
            if c.name not in by_name or c.of not in by_name:
                raise PlanError(f"{c!r} names an unknown buffer")
            if offsets[c.name] != offsets[c.of] + c.offset:
                raise PlanError(f"alias violated: '{c.name}' is at {offsets[c.name]} but {c!r} puts it at "
                                f"{offsets[c.of]} + {c.offset} = {offsets[c.of] + c.offset}")
            parent[c.name] = c.of
    root = {name: _find_root(name, parent) for name in by_name}
    live: dict[str, tuple[int, int]] = {}
    for b in buffers:
        lo, hi = live.get(root[b.name], (b.first_use, b.last_use))
        live[root[b.name]] = (min(lo, b.first_use), max(hi, b.last_use))
    shared = set()
    for c in constraints:
        if isinstance(c, InPlace) and c.out in by_name and c.inp in by_name:
            out, inp = root[c.out], root[c.inp]
            if live[inp][1] == live[out][0] and c.allows(offsets[c.out] - offsets[c.inp]):
                shared.add(frozenset((out, inp)))
    ordered = sorted(buffers, key=lambda b: b.name)
    for i, p in enumerate(ordered):
        for q in ordered[i + 1:]:
            rp, rq = root[p.name], root[q.name]
            if rp == rq or frozenset((rp, rq)) in shared or not p.size or not q.size:
                continue
            first, last = max(live[rp][0], live[rq][0]), min(live[rp][1], live[rq][1])
            lo, hi = max(offsets[p.name], offsets[q.name]), min(offsets[p.name] + p.size,
                                                                 offsets[q.name] + q.size)
            if first <= last and lo < hi:
                raise PlanError(f"{_describe(p, offsets, live[rp])} and {_describe(q, offsets, live[rq])} "
                                f"overlap in bytes [{lo}, {hi}) while both live at steps {first}..{last}")


def _find_root(name: str, parent: dict[str, str]) -> str:
    path = [name]
    while name in parent:
        name = parent[name]
        if name in path:
            raise PlanError(f"alias cycle: {' -> '.join(path + [name])}")
        path.append(name)
    return name


def _describe(b: Buffer, offsets: dict[str, int], live: tuple[int, int]) -> str:
    extra = "" if live == (b.first_use, b.last_use) else f", its alias group live {live[0]}..{live[1]}"
    off = offsets[b.name]
    return f"'{b.name}' (steps {b.first_use}..{b.last_use}{extra}, bytes [{off}, {off + b.size}))"
