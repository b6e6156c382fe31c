"""The allocators' view of a memory-planning problem, and lowest-fit placement.

`memory.build_problem` validates the buffer records and constraints and turns them into a `Problem`;
the allocators (memory_greedy.py, memory_exact.py) work only on this form:

- A **block** is one alias group placed as a unit: its members sit at fixed offsets from the block's
  base, the block spans `extent` bytes from the base, and is live over the hull of its members'
  lifetimes. A buffer without aliases is a block of one.
- Two blocks **conflict** when their (inclusive) lifetimes intersect; conflicting blocks may not
  overlap in bytes, except at a displacement an InPlace constraint allows (`shares`).
- **Lowest fit**: given some blocks already placed, a block goes to the lowest base offset that meets
  its alignment and overlaps no placed conflicting block (except at an allowed displacement).
  Every allocator here is a choice of placement order; the plan is then fully determined.

Blocks are sorted by name, so a block's index is also its rank in name order: sorting by index breaks
ties by name and the output does not depend on the order of the input records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field


class NotApplicable(Exception):
    """Raised by an allocator that declines a problem (the exact search, when it is too big)."""


@dataclass(frozen=True)
class Block:
    """One alias group, placed as a unit.

    `members` holds (buffer name, offset from the block base); the base must satisfy
    base % modulus == phase, which puts every member on its own alignment."""

    name: str
    members: tuple[tuple[str, int], ...]
    extent: int
    first: int
    last: int
    modulus: int = 1
    phase: int = 0

    def align_up(self, x: int) -> int:
        """The lowest legal base offset >= x."""
        return x + (self.phase - x) % self.modulus


@dataclass(frozen=True)
class Problem:
    """Blocks sorted by name, with their conflict lists and in-place permissions.

    conflicts[b]: indices of the blocks whose lifetimes intersect block b's (sorted).
    shares[b][c]: closed ranges (lo, hi) of base(b) - base(c) within which b may overlap c (from InPlace
    constraints; lo may be -inf).
    bound: a lower bound on the arena of any valid plan (see `memory.lower_bound`)."""

    blocks: tuple[Block, ...]
    conflicts: tuple[tuple[int, ...], ...]
    shares: tuple[Mapping[int, frozenset[tuple[float, float]]], ...]
    bound: int = 0
    _extent: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _modulus: tuple[int, ...] = field(init=False, repr=False, compare=False)
    _phase: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Flat per-block arrays for the hot loop in lowest_fit.
        object.__setattr__(self, "_extent", tuple(blk.extent for blk in self.blocks))
        object.__setattr__(self, "_modulus", tuple(blk.modulus for blk in self.blocks))
        object.__setattr__(self, "_phase", tuple(blk.phase for blk in self.blocks))

    @property
    def has_sharing(self) -> bool:
        return any(self.shares)

    def lowest_fit(self, b: int, offsets: Sequence[int]) -> int:
        """The lowest legal base for block b given `offsets` (-1 = not placed yet).

        The lowest feasible base is either the lowest base that overlaps no placed conflicting block
        (found by a gap scan over them sorted by offset, as TFLM's greedy planner does), or, for each
        placed InPlace partner, the lowest base within the range it allows that overlaps no other
        placed conflicting block (the same scan without the partner); both kinds are tried."""
        extent = self._extent
        if not extent[b]:
            return self._phase[b]
        # the placed conflicting blocks by offset, scanned once per kind of base below
        busy = sorted([(offsets[c], offsets[c] + extent[c], c) for c in self.conflicts[b]
                       if offsets[c] >= 0 and extent[c]])
        x = self._scan(b, busy, self._phase[b], -1)
        for c, ranges in self.shares[b].items():
            o = offsets[c]
            if o < 0:
                continue
            for lo, hi in sorted(ranges):
                start = max(0, int(o + lo) if lo != float("-inf") else 0)
                y = self._scan(b, busy, self.blocks[b].align_up(start), c)
                if y < x and y <= o + hi and self.fits(b, y, offsets):
                    x = y
        return x

    def _scan(self, b: int, busy: Sequence[tuple[int, int, int]], x: int, skip: int) -> int:
        """The lowest base >= x (x aligned) overlapping none of the `busy` (start, end, block)
        ranges, sorted, but block `skip`'s."""
        size, modulus, phase = self._extent[b], self._modulus[b], self._phase[b]
        for lo, hi, c in busy:
            if hi <= x or c == skip:
                continue
            if lo >= x + size:
                break
            x = hi + (phase - hi) % modulus
        return x

    def fits(self, b: int, base: int, offsets: Sequence[int]) -> bool:
        """Whether block b may sit at `base` next to the placed blocks (alignment not checked)."""
        size = self.blocks[b].extent
        allowed = self.shares[b]
        for c in self.conflicts[b]:
            o = offsets[c]
            end = o + self.blocks[c].extent
            if o < 0 or end == o or size == 0:
                continue
            if base < end and o < base + size and not any(lo <= base - o <= hi for lo, hi in allowed.get(c, ())):
                return False
        return True

    def place(self, order: Iterable[int], offsets: list[int] | None = None, cap: int | None = None
              ) -> list[int] | None:
        """Place the blocks of `order` one after another at their lowest fit; returns all bases.

        `offsets` (modified in place) may hold blocks placed before; -1 marks an unplaced block.
        `cap`: give up (return None) as soon as a block ends above it, the arena then being larger
        whatever the rest's places (a search rejecting such orders skips the rest of the work)."""
        if offsets is None:
            offsets = [-1] * len(self.blocks)
        extent = self._extent
        for b in order:
            offsets[b] = self.lowest_fit(b, offsets)
            if cap is not None and offsets[b] + extent[b] > cap:
                return None
        return offsets

    def arena(self, offsets: Sequence[int]) -> int:
        return max((o + blk.extent for o, blk in zip(offsets, self.blocks) if o >= 0), default=0)

    def buffer_offsets(self, offsets: Sequence[int]) -> dict[str, int]:
        """Expand block bases into the offset of every buffer, sorted by buffer name."""
        out = {name: base + rel for base, blk in zip(offsets, self.blocks) for name, rel in blk.members}
        return dict(sorted(out.items()))
