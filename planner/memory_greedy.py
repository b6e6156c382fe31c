"""Greedy allocators and a bounded improving search, all as placement orders over a `Problem`.

Each allocator fixes an order and places the blocks one by one at their lowest fit
(`Problem.lowest_fit`); ties in every ordering break by block name (= block index).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from .memory_problem import Problem

# The improving search: how many perturbations it tries, and its fixed seed (deterministic output);
# QUICK_ITERATIONS in searches that plan many programs to compare them (the fusion search).
IMPROVING_ITERATIONS = 1200
QUICK_ITERATIONS = 300
IMPROVING_SEED = 20240611


def size_order(p: Problem) -> list[int]:
    """Largest block first (TFLM's GreedyMemoryPlanner order), then name."""
    return sorted(range(len(p.blocks)), key=lambda i: (-p.blocks[i].extent, i))


def conflict_order(p: Problem) -> list[int]:
    """Most conflicting blocks first (TVM's greedy_by_conflicts), then largest, then name."""
    return sorted(range(len(p.blocks)), key=lambda i: (-len(p.conflicts[i]), -p.blocks[i].extent, i))


def first_use_order(p: Problem) -> list[int]:
    """Schedule order: earliest born first, then longest lived, then largest, then name."""
    return sorted(range(len(p.blocks)),
                  key=lambda i: (p.blocks[i].first, -p.blocks[i].last, -p.blocks[i].extent, i))


def last_use_order(p: Problem) -> list[int]:
    """The schedule backwards: latest to die first, then latest born, largest, name (a chain of
    outputs each allowed below its input is laid out upwards from its end)."""
    return sorted(range(len(p.blocks)), key=lambda i: (-p.blocks[i].last, -p.blocks[i].first, -p.blocks[i].extent, i))


def greedy_by_size(problem: Problem) -> dict[str, int]:
    """As TFLM's GreedyMemoryPlanner: take the blocks largest first; put each at the lowest offset
    where it fits between the already placed blocks whose lifetimes intersect its own.

    One pass, O(n^2 log n). Guarantees only validity; it can be beaten (see `improving`)."""
    return problem.buffer_offsets(problem.place(size_order(problem)))


def greedy_by_conflicts(problem: Problem) -> dict[str, int]:
    """As `greedy_by_size`, but take first the blocks that conflict with the most others."""
    return problem.buffer_offsets(problem.place(conflict_order(problem)))


def improving(problem: Problem, iterations: int = IMPROVING_ITERATIONS, seed: int = IMPROVING_SEED
              ) -> dict[str, int]:
    """A bounded local search over placement orders, deterministic (fixed seed, fixed iteration count).

    - Start from the best of the size, conflict, first-use and last-use greedy orders.
    - Repeat `iterations` times: perturb the current order (half the time, move a block that reaches
      the top of the arena to an earlier random position; otherwise move a random block to a random
      position), re-place the blocks from the first changed position on, and keep the new order if
      its arena is no larger (sideways moves let it cross plateaus).
    - Stop early if the arena reaches the problem's lower bound.

    Guarantees: a valid plan whose arena is never larger than greedy_by_size's or
    greedy_by_conflicts' (it starts from both and only keeps orders that are no worse)."""
    n = len(problem.blocks)
    starts: list[Callable[[Problem], list[int]]] = [size_order, conflict_order, first_use_order, last_use_order]
    candidates = []
    for rank, make in enumerate(starts):
        order = make(problem)
        offsets = problem.place(order)
        candidates.append((problem.arena(offsets), rank, order, offsets))
    arena, _, order, offsets = min(candidates, key=lambda c: (c[0], c[1]))
    best = offsets
    best_arena = arena
    rng = random.Random(seed)
    position = [0] * n
    for _ in range(iterations if n > 1 else 0):
        if best_arena <= problem.bound:
            break
        for k, b in enumerate(order):
            position[b] = k
        if rng.random() < 0.5:
            tops = [b for b in range(n) if offsets[b] + problem.blocks[b].extent == arena]
            i = position[rng.choice(tops)] if tops else rng.randrange(n)
            j = rng.randrange(i) if i else rng.randrange(n)
        else:
            i, j = rng.randrange(n), rng.randrange(n)
        if i == j:
            continue
        new_order = order[:]
        new_order.insert(j, new_order.pop(i))
        start = min(i, j)
        new_offsets = offsets[:]
        for b in new_order[start:]:
            new_offsets[b] = -1
        if problem.place(new_order[start:], new_offsets, cap=arena) is None:
            continue  # some block ends above the current arena: the order is worse, rejected
        new_arena = problem.arena(new_offsets)
        if new_arena <= arena:
            order, offsets, arena = new_order, new_offsets, new_arena
            if arena < best_arena:
                best, best_arena = offsets, arena
    return problem.buffer_offsets(best)
