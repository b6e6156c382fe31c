"""`mcuforge bench`: the performance figures of one model on one board, measured on the device.

Instructions (QEMU, -icount: deterministic) or cycles (a board) per inference, per layer with op
info and MACs; on QEMU boards also estimated cycles per layer and in total (`cycles_estimate`:
the executed instruction stream weighted by the core's timing model, mcuforge.cycles); flash split
into code / weights / other; RAM split into arena / other static / measured stack high-water;
compile time. Performance lives here, not in timed tests.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np


def section_sizes(elf: Path) -> dict[str, int]:
    proc = subprocess.run(["arm-none-eabi-size", "-A", str(elf)], capture_output=True, text=True, check=True)
    out = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def bench(model: str | Path, board_name: str, targets=("cmsis-nn", "c"), port: str | None = None,
          opt: str = "-O2", progress=lambda m: None, cycles: bool = False, memory: str = "balanced") -> dict[str, Any]:
    """cycles: estimate cycles from QEMU's execution log (QEMU boards; ignored on real boards)."""
    from mcuforge.boards import load_board
    from mcuforge.codegen.emit import emit
    from mcuforge.device import build_generated, connect, read_report, run_sets, run_timeout
    from mcuforge.driver import Options, compile_model
    from mcuforge.planner.fusion import functions
    from mcuforge.planner.report import layer_macs

    board = load_board(board_name)
    t0 = time.monotonic()
    compiled = compile_model(model, Options(targets=tuple(targets), memory=memory, isa=board.isa))
    compile_seconds = time.monotonic() - t0
    prog = compiled.program
    weights = sum(int(np.asarray(v).nbytes) for b in prog.bindings for v in b.kernel.constants.values())
    with tempfile.TemporaryDirectory(prefix="mcuforge-bench-") as tmp:
        out = emit(compiled, Path(tmp) / "model", "model", Path(model).name)
        report = read_report(out)
        progress(f"building for {board.name}")
        fw = build_generated(out, board, Path(tmp) / "build", opt=opt)
        sections = section_sizes(fw.elf)
        tracer = None
        if cycles and board.is_qemu:
            from mcuforge.cycles import CycleTracer

            tracer = CycleTracer(fw.elf, board, len(prog.bindings))
        progress(f"running on {board.name}" + (" (tracing the instruction stream)" if tracer else ""))
        zeros = [np.zeros(p.type.shape, dtype=p.type.np_dtype) for p in compiled.imported.main.params]
        with connect(board, fw.elf, port, report=report, exec_log=tracer.consume if tracer else None) as link:
            # a model with state starts each run from its initial state (RESET), so the runs compare
            run = run_sets(link, [zeros, zeros], [prog.buffers[o].type for o in prog.outputs],
                           timeout=run_timeout(report), steps=1 if prog.states else 0)
        estimate = tracer.estimate() if tracer else None
    code = sections.get(".text", 0) + sections.get(".vectors", 0)
    layers = []
    est_layers = estimate["layers"] if estimate else [None] * len(prog.bindings)
    for step, (b, n, est) in enumerate(zip(prog.bindings, run.layer_counts, est_layers)):
        kc = b.kernel
        macs = sum(layer_macs(compiled.module.functions[f].body) for f in functions(b))
        layers.append({
            "step": step, "tflite": [{"index": s.index, "op": s.name} for s in kc.info.sources],
            "op": kc.info.op, "target": kc.info.target, "kernel": None if kc.view else kc.function,
            "input_shapes": [list(t.shape) for t in kc.inputs], "output_shape": list(kc.output.shape),
            "macs": macs, run.unit: n, f"{run.unit}_per_mac": round(n / macs, 3) if macs else None,
            **({"cycles_estimate": est["cycles"], "cycles_estimate_per_mac": round(est["cycles"] / macs, 3)
                if macs else None} if est else {}),
        })
    arena, state = compiled.arena.arena_bytes, compiled.arena.state_bytes
    return {
        "model": Path(model).name, "board": board.name, "unit": run.unit,
        run.unit: run.counts[-1], "deterministic": run.counts[0] == run.counts[-1],
        "flash": {"code": code, "weights": weights, "other": fw.flash_bytes - code - weights,
                  "total": fw.flash_bytes},
        "ram": {"arena": arena, "state": state, "static": fw.ram_bytes - arena - state, "stack": run.stack_bytes,
                "total": fw.ram_bytes + run.stack_bytes},
        "compile_seconds": round(compile_seconds, 3),
        "cycles_estimate": estimate,
        "layers": layers,
    }


def bench_text(r: dict[str, Any]) -> str:
    u = r["unit"]
    f, m = r["flash"], r["ram"]
    lines = [f"{r['model']} on {r['board']}: {r[u]:,} {u} per inference"
             + ("" if r["deterministic"] else " (not deterministic across runs!)"),
             f"flash: {f['total']:,} B = code {f['code']:,} + weights {f['weights']:,} + other {f['other']:,}",
             f"RAM:   {m['total']:,} B = arena {m['arena']:,}" + (f" + state {m['state']:,}" if m.get("state") else "")
             + f" + other static {m['static']:,} + stack high-water {m['stack']:,}",
             f"compile: {r['compile_seconds']:.2f} s"]
    est = r.get("cycles_estimate")
    if est:
        lines += [f"estimated cycles: {est['cycles']:,} ({est['cycles_low']:,}..{est['cycles_high']:,}) for "
                  f"{est['instructions']:,} instructions, CPI {est['cpi']}", *(f"  {a}" for a in est["assumptions"])]
    cyc = f" {'est. cycles':>12} {'cyc/MAC':>8}" if est else ""
    lines += ["", f"{'#':>3}  {'TFLite op':<28} {'kernel':<34} {'MACs':>10} {u:>12} {'per MAC':>8}{cyc}"]
    for L in r["layers"]:
        src = ", ".join(f"#{t['index']} {t['op']}" for t in L["tflite"])
        per = L[f"{u}_per_mac"]
        row = (f"{L['step']:>3}  {src:<28} {str(L['kernel'] or 'view'):<34} {L['macs']:>10,} {L[u]:>12,} "
               f"{per if per is not None else '':>8}")
        if est:
            cpm = L["cycles_estimate_per_mac"]
            row += f" {L['cycles_estimate']:>12,} {cpm if cpm is not None else '':>8}"
        lines.append(row)
    return "\n".join(lines)


def bars(r: dict[str, Any]) -> "Scene":
    """Per-layer instructions (or cycles) as horizontal bars, each with its share of the total and its
    count per MAC; drawn by mcuforge.drawing (`.svg()`, `.png()`, `.write(path)`)."""
    from mcuforge.drawing import Scene, text_width

    u = r["unit"]
    layers = r["layers"]
    total = r[u] or 1
    top = max((L[u] for L in layers), default=1) or 1
    labels = [f"{L['step']:>2} " + ", ".join(f"#{t['index']} {t['op']}" for t in L["tflite"])[:34] for L in layers]
    row, left, width = 18, 16 + max((text_width(s, 10) for s in labels), default=0), 1000
    bar_room = width - left - 250
    sc = Scene(width, 78 + row * len(layers))
    f, m = r["flash"], r["ram"]
    sc.text(10, 20, f"{r['model']} on {r['board']}: {r[u]:,} {u} per inference", size=14)
    sc.text(10, 38, f"flash {f['total']:,} B (code {f['code']:,}, weights {f['weights']:,}), RAM {m['total']:,} B "
            f"(arena {m['arena']:,}, stack {m['stack']:,})", size=10)
    sc.text(left, 60, f"{u} per layer, % of all {u}, {u} per multiply-accumulate", size=10)
    for i, (L, label) in enumerate(zip(layers, labels)):
        y = 68 + i * row
        w = bar_room * L[u] / top
        per = L[f"{u}_per_mac"]
        sc.text(10, y + 12, label, size=10)
        sc.rect(left, y + 2, max(w, 0.5), row - 4, "#4e79a7", stroke=None,
                title=f"layer {L['step']} {L['op']} ({L['kernel'] or 'view'}): {L[u]:,} {u}")
        sc.text(left + w + 4, y + 12, f"{L[u]:,} ({100 * L[u] / total:.1f}%)" + (f" {per}/MAC" if per else ""),
                size=10)
    return sc


def bars_svg(r: dict[str, Any]) -> str:
    """The per-layer bar chart as SVG."""
    return bars(r).svg()
