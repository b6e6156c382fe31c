"""Memory benchmark: per MLPerf Tiny model, mcuforge's planned arena against the live-tensor lower
bound in TFLite's order (+ the largest scratch buffer) and the TFLite Micro arena for the same model
(from the tflite-micro package's allocation report).

    python benchmarks/memory.py [--json]

Arena = every activation tensor (inputs and outputs included) and every kernel scratch buffer.
TFLM's "head" is its planned tensor arena (non-persistent); its "total" adds the persistent tail
(per-op data, tensor structs) that mcuforge keeps in flash or does not need.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from mlperf import MLPERF

_TFLM_SCRIPT = """
import sys
from tflite_micro import runtime
blob = open(sys.argv[1], 'rb').read()
interp = runtime.Interpreter.from_bytes(blob, arena_size=int(sys.argv[2]))
interp.print_allocations()
"""


def tflm_arena(path: Path) -> dict[str, int]:
    """TFLM's arena figures, read from print_allocations() on the C stderr of a child process."""
    size = 4 * path.stat().st_size + (1 << 20)
    proc = subprocess.run([sys.executable, "-c", _TFLM_SCRIPT, str(path), str(size)], capture_output=True, text=True,
                          timeout=300)
    text = proc.stdout + proc.stderr
    out = {}
    for key in ("total", "head", "tail"):
        m = re.search(rf"Arena allocation {key} (\d+) bytes", text)
        if m:
            out[key] = int(m.group(1))
    if "total" not in out:
        raise RuntimeError(f"no allocation report from TFLM for {path.name}: {text[-300:]}")
    return out


def measure() -> list[dict]:
    from mcuforge.frontend.reader import read_tflite

    from mcuforge.driver import compile_model
    from mcuforge.inspection import live_lower_bound

    rows = []
    for short, path in MLPERF.items():
        name = short.upper()
        compiled = compile_model(path)
        bound, _ = live_lower_bound(read_tflite(path))
        tflm = tflm_arena(path)
        arena = compiled.arena
        rows.append({
            "model": name, "arena_bytes": arena.arena_bytes, "scratch_bytes": arena.scratch_bytes,
            "tflite_order_bound_bytes": bound, "budget_bytes": bound + arena.scratch_bytes,
            "own_lower_bound_bytes": arena.plan.lower_bound, "gap_bytes": arena.plan.gap,
            "tflm_arena_total_bytes": tflm["total"], "tflm_arena_head_bytes": tflm.get("head"),
            "ratio_vs_tflm_total": round(arena.arena_bytes / tflm["total"], 3),
        })
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| model | mcuforge arena | TFLite-order bound + scratch | own lower bound (gap) | "
             "TFLM arena total (head) | mcuforge / TFLM |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['arena_bytes']:,} | {r['tflite_order_bound_bytes']:,} + "
                     f"{r['scratch_bytes']:,} | {r['own_lower_bound_bytes']:,} ({r['gap_bytes']}) | "
                     f"{r['tflm_arena_total_bytes']:,} ({r['tflm_arena_head_bytes']:,}) | {r['ratio_vs_tflm_total']:.2f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    rows = measure()
    print(json.dumps(rows, indent=2) if ap.parse_args().json else table(rows))


if __name__ == "__main__":
    main()
