"""Side-by-side benchmark: mcuforge against TFLite Micro + CMSIS-NN on the QEMU boards.

    python benchmarks/bench.py [--boards mps2-an386,mps3-an547,mps2-an505] [--models kws,vww,ic,ad] [--out FILE.md]

Runs `mcuforge bench --cycles` for each model and board and writes a markdown table with the peer's
figures (measured on this project's machine kind: QEMU 7.2, -icount shift=0, TFLM release build with
its CMSIS-NN kernels, gcc 12.2; see shared/peer/tflm-cmsis-nn-qemu.md) beside ours and the ratios,
our estimated cycles (docs/cycles.md) beside ST X-CUBE-AI's published cycles, plus per-layer tables
and bar charts (SVG) next to the markdown file.
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

# ST X-CUBE-AI 10.2's published MLPerf Tiny v1.3 results, as cycles (latency x clock): NUCLEO-L4R5ZI
# (Cortex-M4 @ 120 MHz) and NUCLEO-U385RG-Q (Cortex-M33 @ 96 MHz), real silicon (flash wait states
# and caches included), against our zero-wait-state estimates.
XCUBE = {
    "cortex-m4": {"kws": 5_210_000, "vww": 10_730_000, "ic": 19_880_000, "ad": 575_000},
    "cortex-m33": {"kws": 4_640_000, "vww": 9_480_000, "ic": 17_500_000, "ad": 520_000},
}


def main() -> int:
    from mcuforge.bench import bars_svg, bench
    from mcuforge.boards import load_board

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--boards", default="mps2-an386,mps3-an547,mps2-an505")
    ap.add_argument("--models", default="kws,vww,ic,ad")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results.md"))
    args = ap.parse_args()
    out = Path(args.out)
    rows, details, cycles = [], [], {}
    for board in args.boards.split(","):
        for m in args.models.split(","):
            print(f"bench {m} on {board} ...", file=sys.stderr, flush=True)
            r = bench(MLPERF[m], board, cycles=True)
            (out.parent / f"{m}-{board}.svg").write_text(bars_svg(r))
            (out.parent / f"{m}-{board}.json").write_text(json.dumps(r, indent=2))
            est = r["cycles_estimate"]
            cycles[(load_board(board).cpu, m)] = (board, r["instructions"], est)
            rows.append(_row(m, board, r, est))
            details.append(_details(m, board, r, est))
    text = ("# mcuforge vs TFLite Micro + CMSIS-NN (QEMU, instructions per inference)\n\n"
            "Estimated cycles: the executed instruction stream weighted by the core's timing model, zero wait "
            "states (docs/cycles.md); the range is the model's low and high assumptions.\n\n"
            "| model | board | mcuforge instr | est. cycles (range) | CPI | TFLM+CMSIS-NN instr | ratio | "
            "mcuforge arena | TFLM arena | ratio | mcuforge flash excl. weights | TFLM flash excl. model (int8-only) | "
            "ratio | stack | compile s |\n"
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n" + "\n".join(rows) + "\n"
            + _xcube_table(cycles, args.models.split(","))
            + "\n## Where the time goes (top 5 layers by estimated cycles)\n" + "".join(details))
    out.write_text(text)
    print(text)
    return 0


def _ratio(a, b) -> str:
    return f"{a / b:.2f}" if a is not None and b else "n/a"


def _num(x) -> str:
    return f"{x:,}" if x is not None else "n/a"


def _row(m: str, board: str, r: dict, est: dict) -> str:
    peer_instr, peer_arena, peer_flash = PEER.get((board, m), (None, None, None))
    flash_ex = r["flash"]["code"] + r["flash"]["other"]
    return (f"| {m.upper()} | {board} | {r['instructions']:,} | {est['cycles']:,} ({est['cycles_low']:,}.."
            f"{est['cycles_high']:,}) | {est['cpi']} | {_num(peer_instr)} | {_ratio(r['instructions'], peer_instr)} | "
            f"{r['ram']['arena']:,} | {_num(peer_arena)} | {_ratio(r['ram']['arena'], peer_arena)} | "
            f"{flash_ex:,} | {_num(peer_flash)} | {_ratio(flash_ex, peer_flash)} | {r['ram']['stack']:,} | "
            f"{r['compile_seconds']:.2f} |")


def _details(m: str, board: str, r: dict, est: dict) -> str:
    total = est["cycles"] or 1
    top = sorted(r["layers"], key=lambda L: -L["cycles_estimate"])[:5]
    return (f"\n### {m.upper()} on {board}: {r['instructions']:,} instructions, {est['cycles']:,} est. cycles "
            f"({est['core']})\n\n| # | op | kernel | MACs | instructions | per MAC | est. cycles | % of cycles | "
            "cycles per MAC |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n" + "\n".join(
                f"| {L['step']} | {', '.join(t['op'] for t in L['tflite'])} | {L['kernel']} | {L['macs']:,} | "
                f"{L['instructions']:,} | {L['instructions_per_mac'] or ''} | {L['cycles_estimate']:,} | "
                f"{100 * L['cycles_estimate'] / total:.1f} | {L['cycles_estimate_per_mac'] or ''} |" for L in top)
            + f"\n\n![per layer]({m}-{board}.svg)\n")


def _xcube_table(cycles: dict, models: list[str]) -> str:
    """Our estimated cycles beside ST X-CUBE-AI's published cycles, per core that both have."""
    lines = ["\n## Estimated cycles beside ST X-CUBE-AI (published)\n",
             "X-CUBE-AI 10.2, MLPerf Tiny v1.3: latency x clock on NUCLEO-L4R5ZI (Cortex-M4 @ 120 MHz) and "
             "NUCLEO-U385RG-Q (Cortex-M33 @ 96 MHz), real silicon with flash wait states; ours: estimates at zero "
             "wait states on the same core (docs/cycles.md says what the model leaves out).\n",
             "| core | " + " | ".join(m.upper() for m in models) + " |", "|---|" + "---:|" * len(models)]
    for cpu in XCUBE:
        ours = [cycles.get((cpu, m)) for m in models]
        if not any(ours):
            continue
        board = next(o[0] for o in ours if o)
        lines.append(f"| {cpu}: ST X-CUBE-AI (published) | " + " | ".join(f"{XCUBE[cpu][m]:,}" for m in models) + " |")
        lines.append(f"| {cpu}: mcuforge est. ({board}) | " + " | ".join(
            f"{o[2]['cycles']:,}" if o else "n/a" for o in ours) + " |")
        lines.append(f"| {cpu}: ratio mcuforge / X-CUBE-AI | " + " | ".join(
            _ratio(o[2]["cycles"], XCUBE[cpu][m]) if o else "n/a" for o, m in zip(ours, models)) + " |")
        lines.append(f"| {cpu}: mcuforge instructions | " + " | ".join(
            f"{o[1]:,}" if o else "n/a" for o in ours) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
