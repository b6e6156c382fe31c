"""Stream-parse QEMU's `-d in_asm,exec,nochain` log into executed instructions and estimated
cycles per layer of each profiled RUN.

QEMU 7.2 (no TCG plugins) logs each translation block (TB) when it translates it ("IN:" and one
line per instruction) and every TB it starts executing ("Trace 0: <host pointer> [...]"); with
`nochain` every TB execution goes through the main loop and is logged. Two more lines correct the
stream: "Stopped execution of TB chain before <host pointer>" (the TB just logged exited before its
first instruction: an interrupt or the icount budget ran out; it runs again later) and
"cpu_io_recompile: rewound execution of TB to <pc>" (an I/O access in the middle of the TB: only
the instructions before <pc> ran, QEMU re-translates from <pc>). A TB's instructions are the
firmware's own (objdump, mcuforge.cycles.isa) in the byte range its IN: block covers.

Layers: the generated model calls the harness's profiler hook before every layer and once at the
end (model.c.j2); every execution of the hook's first TB (its address from the ELF's symbols) is a
boundary. Layer i is everything from the i-th hook entry to the next: the layer's own code plus the
hook itself (about 40 instructions), so the instructions per layer match the harness's profile,
which reads its timer inside the hook. A RUN is n_layers + 1 hook entries.

Never keeps the log: one pass over the lines, memory bounded by the number of distinct TBs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from mcuforge.cycles.cores import CoreModel
from mcuforge.cycles.isa import Insn
from mcuforge.cycles.timing import block_cost, sequence_cycles


@dataclass(frozen=True)
class Block:
    """A translation block as executed: its address range, instruction count and cycles."""
    start: int
    end: int                            # the address after its last instruction (the fall-through)
    n: int                              # instructions
    fall: tuple[float, float, float]    # cycles (low, point, high) falling through
    taken: tuple[float, float, float]   # ... branching at its end
    index: int
    decoded: bool = True                # False: not in the ELF's code; costed 1 cycle per instruction
    first: Insn | None = None           # its first and last instructions (decoded blocks), for the seams
    last: Insn | None = None


@dataclass
class LayerCount:
    instructions: int = 0
    cycles: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])  # low, point, high


class ExecTrace:
    """Consumes a QEMU exec log (see module doc); `runs` holds each complete profiled RUN's layers."""

    def __init__(self, code: dict[int, Insn], core: CoreModel, hook: int, n_layers: int):
        self.code, self.core, self.hook, self.n_layers = code, core, hook, n_layers
        self.runs: list[list[LayerCount]] = []
        self.blocks: list[Block] = []
        self.undecoded_blocks = 0
        self.executed = 0                                  # instructions of every block accounted, in or out of runs
        self._by_range: dict[tuple[int, int, int], Block] = {}
        self._counts: list[dict[int, int]] | None = None  # per layer: block index * 2 + taken -> executions
        self._seams: list[dict[tuple[int, int], int]] | None = None  # per layer: (block, next block) -> fall-throughs
        self._seam_cost: dict[tuple[int, int], tuple[float, float, float]] = {}
        self._call = -1                                    # hook entries seen in the current RUN

    # ---------------------------------------------------------------- the stream

    def consume(self, lines: Iterable[str]) -> None:
        """Read the whole log (QEMU's -D file or pipe) line by line."""
        tbs: dict[str, Block] = {}
        in_start = in_end = in_lines = -1
        pending: Block | None = None
        for line in lines:
            c = line[:1]
            if c == "T" and line.startswith("Trace "):
                key = line[9:line.find(" ", 9)]
                if in_start >= 0:  # the first execution of the TB just translated
                    blk = tbs[key] = self._block(in_start, in_end, in_lines)
                    in_start = -1
                else:
                    blk = tbs.get(key)
                    if blk is None:
                        continue  # a TB translated before the log started
                if pending is not None:
                    self._account(pending, blk.start != pending.end)
                    if blk.start == pending.end:
                        self._seam(pending, blk)
                pending = blk
            elif c == "0":  # "0x000000d4:  4a21       ldr      r2, [pc, #0x84]"
                addr = int(line[2:10], 16)
                if in_start < 0 or in_lines < 0:
                    in_start, in_lines = addr, 0
                in_end = addr + 2 * len(line[13:24].split())
                in_lines += 1
            elif c == "I" and line.startswith("IN:"):
                in_start, in_lines = -1, -1
            elif c == "S" and line.startswith("Stopped execution of TB chain"):
                pending = None
            elif c == "c" and line.startswith("cpu_io_recompile: rewound"):
                if pending is not None:
                    pc = int(line.rsplit(None, 1)[-1], 16)
                    if pc > pending.start:
                        self._account(self._partial(pending, pc), False)
                pending = None
        if pending is not None:
            self._account(pending, False)

    def _block(self, start: int, end: int, lines: int) -> Block:
        key = (start, end, lines)
        blk = self._by_range.get(key)
        if blk is None:
            insns = self._insns(start, end)
            if insns is None:
                self.undecoded_blocks += 1
                n = max(lines, 1)
                blk = Block(start, end, n, (n,) * 3, (n,) * 3, len(self.blocks), decoded=False)
            else:
                cost = block_cost(insns, self.core)
                blk = Block(start, end, len(insns), cost.fall, cost.taken, len(self.blocks), first=insns[0],
                            last=insns[-1])
            self.blocks.append(blk)
            self._by_range[key] = blk
        return blk

    def _insns(self, start: int, end: int) -> list[Insn] | None:
        out, addr = [], start
        while addr < end:
            ins = self.code.get(addr)
            if ins is None:
                return None
            out.append(ins)
            addr += ins.size
        return out or None

    def _partial(self, blk: Block, pc: int) -> Block:
        """The part of `blk` before `pc` (the rest was rewound by an I/O access)."""
        return self._block(blk.start, pc, -2)

    # ---------------------------------------------------------------- layers

    def _account(self, blk: Block, taken: bool) -> None:
        self.executed += blk.n
        if blk.start == self.hook:
            self._boundary()
        counts = self._counts
        if counts is not None:
            layer = counts[self._call]
            k = blk.index * 2 + taken
            layer[k] = layer.get(k, 0) + 1

    def _seam(self, a: Block, b: Block) -> None:
        """Block a fell through into block b (QEMU cut a straight run of code in two, or a conditional
        branch was not taken): the pair of instructions at the seam, which each block's own cost
        cannot see (a load pipelined after a load ...), is credited to the layer."""
        if self._seams is None or a.last is None or b.first is None:
            return
        layer = self._seams[self._call]
        layer[(a.index, b.index)] = layer.get((a.index, b.index), 0) + 1

    def _seam_cycles(self, key: tuple[int, int]) -> tuple[float, float, float]:
        cost = self._seam_cost.get(key)
        if cost is None:
            a, b = self.blocks[key[0]].last, self.blocks[key[1]].first
            assert a is not None and b is not None
            cost = self._seam_cost[key] = tuple(  # type: ignore[assignment]
                sequence_cycles([a, b], self.core, w) - sequence_cycles([a], self.core, w)
                - sequence_cycles([b], self.core, w) for w in range(3))
        return cost

    def _boundary(self) -> None:
        if self._counts is None:
            self._counts, self._call = [{} for _ in range(self.n_layers)], 0
            self._seams = [{} for _ in range(self.n_layers)]
            return
        self._call += 1
        if self._call == self.n_layers:
            assert self._seams is not None
            self.runs.append([self._total(layer, seams) for layer, seams in zip(self._counts, self._seams)])
            self._counts, self._seams, self._call = None, None, -1

    def _total(self, counts: dict[int, int], seams: dict[tuple[int, int], int]) -> LayerCount:
        out = LayerCount()
        for k, n in counts.items():
            blk = self.blocks[k >> 1]
            out.instructions += n * blk.n
            cyc = blk.taken if k & 1 else blk.fall
            for w in range(3):
                out.cycles[w] += n * cyc[w]
        for key, n in seams.items():
            cyc = self._seam_cycles(key)
            for w in range(3):
                out.cycles[w] += n * cyc[w]
        return out
