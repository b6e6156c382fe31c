"""Side-by-side benchmark: mcuforge against TFLite Micro + CMSIS-NN on the QEMU boards.

    python benchmarks/bench.py [--boards mps2-an386,mps3-an547] [--models kws,vww,ic,ad] [--out FILE.md]

Runs `mcuforge bench` for each model and board and writes a markdown table with the peer's figures
(measured on this project's machine kind: QEMU 7.2, -icount shift=0, TFLM release build with its
CMSIS-NN kernels, gcc 12.2; see shared/peer/tflm-cmsis-nn-qemu.md) beside ours and the ratios, plus
per-layer tables and bar charts (SVG) next to the markdown file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mlperf import MLPERF, ROOT

# The peer: TFLM + CMSIS-NN instructions per inference, TFLM arena_used_bytes, and TFLM flash excluding the
# model with int8-only op registrations (shared/peer/tflm-cmsis-nn-qemu.md, "Totals").
PEER = {
    ("mps2-an386", "kws"): (7_697_320, 22_820, 54_204),
    ("mps2-an386", "vww"): (24_101_920, 100_708, 56_732),
    ("mps2-an386", "ic"): (29_858_920, 54_996, 54_536),
    ("mps2-an386", "ad"): (582_920, 2_580, 28_836),
    ("mps3-an547", "kws"): (1_813_093, 27_348, 45_596),
    ("mps3-an547", "vww"): (6_558_312, 100_772, 48_092),
    ("mps3-an547", "ic"): (4_913_781, 55_028, 44_828),
    ("mps3-an547", "ad"): (150_000, 9_268, 20_872),
}


def main() -> int:
    from mcuforge.bench import bars_svg, bench

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--boards", default="mps2-an386,mps3-an547")
    ap.add_argument("--models", default="kws,vww,ic,ad")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results.md"))
    args = ap.parse_args()
    out = Path(args.out)
    rows, details = [], []
    for board in args.boards.split(","):
        for m in args.models.split(","):
            print(f"bench {m} on {board} ...", file=sys.stderr, flush=True)
            r = bench(MLPERF[m], board)
            (out.parent / f"{m}-{board}.svg").write_text(bars_svg(r))
            (out.parent / f"{m}-{board}.json").write_text(json.dumps(r, indent=2))
            peer_instr, peer_arena, peer_flash = PEER.get((board, m), (None, None, None))
            u = r["unit"]
            flash_ex = r["flash"]["code"] + r["flash"]["other"]
            rows.append(
                f"| {m.upper()} | {board} | {r[u]:,} | {peer_instr:,} | {r[u] / peer_instr:.2f} | "
                f"{r['ram']['arena']:,} | {peer_arena:,} | {r['ram']['arena'] / peer_arena:.2f} | "
                f"{flash_ex:,} | {peer_flash:,} | {flash_ex / peer_flash:.2f} | {r['ram']['stack']:,} | "
                f"{r['compile_seconds']:.2f} |")
            top = sorted(r["layers"], key=lambda L: -L[u])[:5]
            details.append(f"\n### {m.upper()} on {board}: {r[u]:,} {u}\n\n| # | op | kernel | MACs | {u} | per MAC |\n"
                           "|---|---|---|---:|---:|---:|\n" + "\n".join(
                               f"| {L['step']} | {', '.join(t['op'] for t in L['tflite'])} | {L['kernel']} | "
                               f"{L['macs']:,} | {L[u]:,} | {L[f'{u}_per_mac'] or ''} |" for L in top)
                           + f"\n\n![per layer]({m}-{board}.svg)\n")
    text = ("# mcuforge vs TFLite Micro + CMSIS-NN (QEMU, instructions per inference)\n\n"
            "| model | board | mcuforge instr | TFLM+CMSIS-NN instr | ratio | mcuforge arena | TFLM arena | ratio | "
            "mcuforge flash excl. weights | TFLM flash excl. model (int8-only) | ratio | stack | compile s |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" + "\n".join(rows) + "\n"
            "\n## Where the instructions go (top 5 layers)\n" + "".join(details))
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
