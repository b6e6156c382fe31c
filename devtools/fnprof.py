"""Where a layer's instructions and estimated cycles go, function by function (a developer's tool).

    python devtools/fnprof.py MODEL.tflite --board mps2-an386 [--layer N ...] [--blocks K]

Runs `mcuforge bench --cycles` with the tracer's per-translation-block counts kept, and prints, for
each chosen layer (default: every layer), the instructions and estimated cycles (point) per function
of the firmware ELF, and with --blocks the K costliest blocks (address range, executions, cycles).
"""

from __future__ import annotations

import argparse
import bisect
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from mcuforge.cycles import trace as trace_mod
from mcuforge.cycles.cores import POINT


def symbols(elf: Path) -> tuple[list[int], list[str]]:
    out = subprocess.run(["arm-none-eabi-nm", "-n", "--defined-only", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            addrs.append(int(parts[0], 16) & ~1)
            names.append(parts[2])
    return addrs, names


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--board", default="mps2-an386")
    ap.add_argument("--layer", type=int, action="append")
    ap.add_argument("--blocks", type=int, default=0)
    args = ap.parse_args()

    kept: dict = {}
    total = trace_mod.ExecTrace._total

    def keep(self, counts, seams):  # every layer's block counts of the last RUN (the seams' few cycles left out)
        kept.setdefault(id(self), {"trace": self, "layers": []})
        entry = kept[id(self)]
        if len(entry["layers"]) == self.n_layers:
            entry["layers"] = []
        entry["layers"].append(dict(counts))
        return total(self, counts, seams)

    trace_mod.ExecTrace._total = keep
    import mcuforge.device as device
    from mcuforge.bench import bench

    elf_seen: list[Path] = []
    build = device.build_generated

    def build_keep(*a, **k):
        fw = build(*a, **k)
        elf_seen.append(Path(fw.elf))
        syms.append(symbols(fw.elf))
        return fw

    syms: list = []
    device.build_generated = build_keep
    r = bench(args.model, args.board, cycles=True)
    entry = next(iter(kept.values()))
    tr, layers = entry["trace"], entry["layers"]
    addrs, names = syms[-1]
    for i, counts in enumerate(layers):
        if args.layer and i not in args.layer:
            continue
        lay = r["layers"][i]
        per_fn: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
        rows = []
        for k, n in counts.items():
            blk = tr.blocks[k >> 1]
            cyc = (blk.taken if k & 1 else blk.fall)[POINT]
            j = bisect.bisect_right(addrs, blk.start) - 1
            fn = names[j] if j >= 0 else "?"
            per_fn[fn][0] += n * blk.n
            per_fn[fn][1] += n * cyc
            rows.append((n * cyc, blk.start, blk.end, n, blk.n, fn))
        print(f"layer {i} {lay['op']} {lay['kernel']} {lay['input_shapes']} -> {lay['output_shape']}: "
              f"{lay.get('instructions')} instructions, {lay.get('cycles_estimate')} est. cycles")
        for fn, (ins, cyc) in sorted(per_fn.items(), key=lambda kv: -kv[1][1]):
            print(f"    {fn:48s} {ins:>10,} instr {cyc:>12,.0f} cycles")
        for cyc, start, end, n, ni, fn in sorted(rows, reverse=True)[: args.blocks]:
            print(f"      {start:#x}..{end:#x} x{n} ({ni} instr) {cyc:,.0f} cycles  {fn}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
