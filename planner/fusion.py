"""Fused execution of chains of row-local layers through line buffers (issue 13, item 2).

A chain of convolutions and depthwise convolutions (cmsis-nn's mcu_cmsis_conv2d_1x1_s8,
mcu_cmsis_conv2d_s8, mcu_cmsis_dwconv2d_s8), each reading only the previous one's output, runs as
one step: for each output row of the last layer, each earlier layer computes the rows of its
output the next one's windows need and have not been computed yet, into a line buffer that holds
only those rows (rows no longer needed are dropped by moving the ones kept to the buffer's start).
The intermediate tensors never exist; the line buffers are the fused step's scratch. Each layer's
kernel is called on a band of rows: its parameters with in_h, out_h and pad_top set for the band
(the window of the band's first row starts at its first input row held, or in the real top
padding), so every output byte is the same integer the layer computes alone and no MAC is
repeated. What it costs: the rows moved, and a kernel call per band (its set-up).

`choose_fusions` fuses where the arena shrinks (memory modes `min` and `balanced`; `balanced`
within its instruction budget; never in `fast`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np

from .kernel import KernelCall, OpInfo, Overlap
from .overlap import Order, max_safe_shift, mve_column_rows

# The kernels whose output rows depend only on a band of input rows, and take a band through
# in_h, out_h and pad_top (their parameter structs, codegen/templates/cmsis_nn/).
ROW_LOCAL = frozenset({"mcu_cmsis_conv2d_1x1_s8", "mcu_cmsis_conv2d_s8", "mcu_cmsis_dwconv2d_s8"})
ALIGNMENT = 4
# What fusion costs in instructions, roughly (fit on VWW's fused first chain, QEMU mps2-an386 and
# mps3-an547, bands of one and two rows): a kernel call's set-up per band beyond the one call of
# the layer alone (its requantization records, pointers, the DSP line caches: ~3,500 on the M4),
# half an instruction per byte moved (word copies), and on Helium each output pixel-channel of a
# depthwise band too short for the column path the whole layer takes (the pixel path: ~6 more).
# The planner counts the larger of the M4 and the M55 estimate, as the overlaps' costs do.
CALL_INSTRUCTIONS = 3500
MOVE_INSTRUCTIONS_PER_BYTE = 0.5
HELIUM_PIXEL_PATH = 6


@dataclass(frozen=True, eq=False)
class FusedCall(KernelCall):
    """A fused step: its `parts` (the layers' own kernel calls, first to last), their lifted
    functions `fns`, the bytes of each line buffer (between part i and i + 1), and the estimate
    of the instructions the fusion adds."""

    parts: tuple[KernelCall, ...] = ()
    fns: tuple[str, ...] = ()
    lines: tuple[int, ...] = ()
    cost_instructions: int = 0
    moved_bytes: int = 0
    calls: int = 0
    rows: int = 1  # output rows of the last part per band

    def orders(self) -> list[Order]:
        """The read/write order planner/overlap.py checks an overlap of the output with the input
        against: per output row of the last part, the input rows the first part's band reads, all
        read before the row is written (buffered)."""
        ps = [k.params for k in self.parts]
        irb, orb = row_bytes(ps[0], "in"), row_bytes(ps[-1], "out")
        reads = [needed_rows(ps[0], first, first + count) if count else (0, 0)
                 for first, count in (step[0][3:] for step in schedule_rows(ps, self.rows))]
        r0 = np.arange(0, ps[-1]["out_h"], self.rows, dtype=np.int64)
        r1 = np.minimum(r0 + self.rows, ps[-1]["out_h"])
        return [Order("fused rows", np.array([lo * irb for lo, _ in reads], dtype=np.int64),
                      np.array([hi * irb for _, hi in reads], dtype=np.int64), r0 * orb, r1 * orb, True)]

    @property
    def part_scratch(self) -> int:
        """Offset of the parts' (shared) scratch in the fused step's scratch: after the lines."""
        return sum(_align(n) for n in self.lines)


def _align(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


def parts(kernel: KernelCall) -> tuple[KernelCall, ...]:
    return kernel.parts if isinstance(kernel, FusedCall) else (kernel,)


def needed_rows(p: Mapping[str, Any], lo: int, hi: int) -> tuple[int, int]:
    """The input rows [ilo, ihi) the windows of output rows [lo, hi) read, clipped to the input."""
    span = (p["k_h"] - 1) * p["dil_h"]
    ilo = lo * p["stride_h"] - p["pad_top"]
    ihi = (hi - 1) * p["stride_h"] - p["pad_top"] + span + 1
    return min(max(ilo, 0), p["in_h"]), min(max(ihi, 0), p["in_h"])


def row_bytes(p: Mapping[str, Any], side: str) -> int:
    return p[f"{side}_w"] * p[f"{side}_c"]


def schedule_rows(ps: list[Mapping[str, Any]], rows: int = 1) -> list[list[tuple[int, int, int, int, int]]]:
    """The fused loop, as the generated C runs it (codegen/fused.py): for each band of `rows`
    output rows of the last part, for each part but the last, (rows wanted lo, hi; rows moved to the line buffer's
    start; first row computed, rows computed) of that part's output."""
    n = len(ps)
    have = [(0, 0)] * (n - 1)
    out = []
    for r in range(0, ps[-1]["out_h"], rows):
        want = [(0, 0)] * (n - 1)
        lo, hi = r, min(r + rows, ps[-1]["out_h"])
        for k in range(n - 1, 0, -1):
            lo, hi = needed_rows(ps[k], lo, hi)
            want[k - 1] = (lo, hi)
        step = []
        for k in range(n - 1):
            (wlo, whi), (hlo, hhi) = want[k], have[k]
            moved = 0
            if wlo > hlo:
                moved = max(hhi - wlo, 0)
                hlo, hhi = wlo, max(hhi, wlo)
            first = hhi
            have[k] = (hlo, max(hhi, whi))
            step.append((wlo, whi, moved, first, max(whi - first, 0)))
        out.append(step)
    return out


def plan_lines(ps: list[Mapping[str, Any]], rows: int = 1) -> tuple[tuple[int, ...], int, int] | None:
    """Bytes of each line buffer, bytes moved and kernel calls of the fused loop; None when some
    output row's window reads no row at all (not fused)."""
    held = [0] * (len(ps) - 1)
    moved, calls = 0, -(-ps[-1]["out_h"] // rows)
    for step in schedule_rows(ps, rows):
        for k, (wlo, whi, rows, first, count) in enumerate(step):
            if whi <= wlo:
                return None
            held[k] = max(held[k], whi - wlo)
            moved += rows * row_bytes(ps[k], "out")
            calls += count > 0
    return tuple(h * row_bytes(p, "out") for h, p in zip(held, ps)), moved, calls


def fusable(a: KernelCall, b: KernelCall) -> bool:
    """Row-local kernels, batch 1, every row a multiple of 4 bytes (band pointers stay word
    aligned), b reading exactly a's output."""
    ks = [*parts(a), *parts(b)]
    if not all(k.function in ROW_LOCAL and not k.view for k in ks):
        return False
    if a.output.shape != b.inputs[0].shape or len(b.inputs) != 1 or a.output.shape[0] != 1:
        return False
    return all(row_bytes(k.params, s) % ALIGNMENT == 0 for k in ks for s in ("in", "out"))


def fuse(a: KernelCall, b: KernelCall, fns: tuple[str, ...], rows: int = 1) -> FusedCall | None:
    """The fused call of a then b (either may be fused already), computing `rows` output rows of
    the last layer at a time; None when it cannot be."""
    return fuse_parts((*parts(a), *parts(b)), fns, rows)


def fuse_parts(ks: tuple[KernelCall, ...], fns: tuple[str, ...], rows: int = 1) -> FusedCall | None:
    planned = plan_lines([k.params for k in ks], rows)
    if planned is None:
        return None
    lines, moved, calls = planned
    scratch = sum(_align(n) for n in lines) + max(k.scratch_bytes for k in ks)
    constants = {f"s{i}_{role}": v for i, k in enumerate(ks) for role, v in k.constants.items()}
    info = OpInfo(ks[-1].info.op, ks[-1].info.kind, ks[-1].info.attrs,
                  tuple(s for k in ks for s in k.info.sources), ks[-1].info.target,
                  "+".join(k.info.composite for k in ks))
    cost = int(moved * MOVE_INSTRUCTIONS_PER_BYTE + CALL_INSTRUCTIONS * (calls - len(ks))
               + HELIUM_PIXEL_PATH * _short_depthwise_bands(ks, rows))
    fused = FusedCall(
        function="+".join(k.function for k in ks), source="", template="", inputs=ks[0].inputs,
        output=ks[-1].output, params={}, constants=constants, scratch_bytes=scratch, info=info,
        evaluate=_evaluate, arg_map=(0,), parts=ks, fns=fns, lines=lines, cost_instructions=cost,
        moved_bytes=moved, calls=calls, rows=rows)
    shift = max_safe_shift(fused.orders()[0])  # the output may start this far above the input
    if shift <= -fused.output.nbytes:
        return fused
    return replace(fused, overlap=Overlap(0, min(shift, fused.inputs[0].nbytes)))


def _short_depthwise_bands(ks, rows: int) -> int:
    """Output pixel-channels of the depthwise parts computed in bands too short for the Helium
    column path their whole layer takes."""
    ps = [k.params for k in ks]
    total = 0
    h = ps[-1]["out_h"]
    bands = [[(first, count) for (_, _, _, first, count) in step] for step in schedule_rows(ps, rows)]
    for i, r in enumerate(range(0, h, rows)):
        bands[i].append((r, min(r + rows, h) - r))
    for k, part in enumerate(ks):
        p = part.params
        if part.function != "mcu_cmsis_dwconv2d_s8" or mve_column_rows(p) is None:
            continue
        for band in bands:
            count = band[k][1]
            span = (p["k_h"] - 1) * p["dil_h"] + 1
            short = {**p, "out_h": count, "in_h": (count - 1) * p["stride_h"] + span, "pad_top": 0}
            if count and mve_column_rows(short) is None:
                total += count * p["out_w"] * p["out_c"]
    return total


def _evaluate(args: list[np.ndarray], kc: FusedCall) -> np.ndarray:
    x = args[0]
    for k in kc.parts:
        x = k.run([x])
    return x


def functions(binding) -> tuple[str, ...]:
    """The lifted functions a binding computes (several for a fused step)."""
    k = binding.kernel
    return k.fns if isinstance(k, FusedCall) else (binding.fn,)


def candidates(program) -> list[int]:
    """Steps s whose binding can be fused with the next: the next reads only s's output, which
    nothing else reads and is no model output."""
    found = []
    bs = program.bindings
    for s in range(len(bs) - 1):
        a, b = bs[s], bs[s + 1]
        readers = [x for x in bs if a.out in x.args]
        if (b.args == (a.out,) and readers == [b] and a.out not in program.outputs and a.args
                and a.args[0] not in program.states and fusable(a.kernel, b.kernel)):
            found.append(s)
    return found


def fuse_step(program, s: int):
    """The program with steps s and s + 1 fused (None when they cannot be)."""
    a, b = program.bindings[s], program.bindings[s + 1]
    fused = fuse(a.kernel, b.kernel, functions(a) + functions(b))
    if fused is None:
        return None
    binding = replace(b, kernel=fused, args=a.args)
    return replace(program, bindings=program.bindings[:s] + (binding,) + program.bindings[s + 2:])


def fusion_cost(program) -> int:
    """The instructions the program's fusions add (estimate)."""
    return sum(k.cost_instructions for _, k in fused_steps(program))


def fused_steps(program) -> list[tuple[int, FusedCall]]:
    return [(s, b.kernel) for s, b in enumerate(program.bindings) if isinstance(b.kernel, FusedCall)]


def choose_fusions(program, plan: Callable, mode: str, budget: int, balanced_plan: Callable | None = None,
                   final: Callable | None = None):
    """Fuse where it lowers the arena: repeatedly, the fusion of two neighbouring steps that
    shrinks the planned arena most (`plan(program) -> (program, ArenaPlan)`), while one does;
    `balanced`: only while the fusions' instructions stay within `budget`; `fast`: none. The
    search is greedy: `min` also plans the fusions the same search finds with `balanced_plan`
    (the costly overlaps left to the budget: other peaks), and keeps the smaller arena. `final`:
    how the chosen program is planned at the end (default `plan`)."""
    unfused = plan(program)
    if mode == "fast":
        return unfused
    best = _greedy(program, plan, budget if mode == "balanced" else None, unfused)
    if mode == "min" and balanced_plan is not None:
        other = plan(_unneeded(_greedy(program, balanced_plan, None)[0], program))
        if other[1].arena_bytes < best[1].arena_bytes:
            best = other
    if final is not None and final is not plan:
        best = final(_unneeded(best[0], program))
    # the classic live-tensor bound is the model's: its intermediate tensors all there
    return best[0], replace(best[1], live_bound=unfused[1].live_bound)


def _greedy(program, plan: Callable, budget: int | None, best=None):
    best = best or plan(program)
    spent = 0
    while True:
        trials = []
        for s in _worth_trying(best):
            start = _unneeded(best[0], program)
            fused = fuse_step(start, s)
            if fused is None:
                continue
            trial = plan(fused)
            if trial[1].arena_bytes >= best[1].arena_bytes:
                continue
            # its cost one row at a time: at most what it costs once widened (_widen_all)
            cost = fusion_cost(fused) - fusion_cost(start)
            if budget is not None and spent + cost > budget:
                continue
            trials.append((trial, cost))
        if not trials:
            return _widen_all(best, program, plan)
        best, cost = min(trials, key=lambda t: (t[0][1].arena_bytes, t[1]))
        spent += cost


def _widen(program, s: int, plan: Callable):
    """The fused step s computing as many output rows at a time (doubling: fewer, wider kernel
    calls) as keep the planned arena as small as with one; planned."""
    best = plan(program)
    k = program.bindings[s].kernel
    rows = 2
    while rows < 2 * k.parts[-1].params["out_h"]:
        wider = fuse_parts(k.parts, k.fns, rows)
        if wider is None:
            break
        trial_program = replace(program, bindings=program.bindings[:s] + (replace(program.bindings[s], kernel=wider),)
                                + program.bindings[s + 1:])
        trial = plan(trial_program)
        if trial[1].arena_bytes > best[1].arena_bytes:
            break
        best, rows = trial, rows * 2
    return best


def _widen_all(planned, program, plan: Callable):
    """Every fused step as wide as the final arena allows."""
    for s, _ in fused_steps(planned[0]):
        planned = _widen(_unneeded(planned[0], program), s, plan)
    return planned


def _worth_trying(planned) -> list[int]:
    """The fusion candidates of a planned program at its peak: steps s where the buffers live at s
    or s + 1 add up to the arena at least (elsewhere, removing the tensor between them cannot lower
    the arena: overlaps only lower what is live)."""
    program, arena = planned
    live = [sum(b.size for b in arena.buffers if b.first_use <= step <= b.last_use)
            for step in range(len(program.bindings))]
    return [s for s in candidates(program) if max(live[s], live[s + 1]) >= arena.arena_bytes]


def _unneeded(planned, original):
    """The planned program's bindings with the kernels as lowered (the parameters an overlap needs
    are set by the plan; fusion starts from the kernels without them, and the plan of the fused
    program sets them again where they are used)."""
    lowered = {}
    for b in original.bindings:
        lowered[b.out] = b.kernel
    bindings = tuple(b if isinstance(b.kernel, FusedCall) or b.out not in lowered
                     else replace(b, kernel=lowered[b.out]) for b in planned.bindings)
    return replace(planned, bindings=bindings)
