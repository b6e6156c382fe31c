"""Estimated cycles from the instruction stream QEMU executed, weighted by a per-core timing model.

    tracer = CycleTracer(fw.elf, board, n_layers)
    with connect(board, fw.elf, exec_log=tracer.consume) as link:
        ... run the model with the profiler on ...
    tracer.estimate()      # {"cycles": ..., "layers": [...], "assumptions": [...]}

isa: instructions decoded from the ELF; cores: the timing tables; timing: cycles of a block;
trace: the QEMU log parser. docs/cycles.md explains the model and its limits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from mcuforge.boards import Board
from mcuforge.cycles.cores import HIGH, LOW, POINT, CoreModel, core_for
from mcuforge.cycles.isa import code_map, symbol_address
from mcuforge.cycles.trace import ExecTrace, LayerCount
from mcuforge.errors import McuforgeError

PROFILE_HOOK = "profile_hook"  # the harness's profiler (firmware/runtime/harness.c)
SPAN = ("from the profiler hook before layer 0 to the hook after the last layer; each layer includes "
        "one hook call (about 40 instructions), as the instruction profile does")

__all__ = ["CycleTracer", "CoreModel", "core_for", "estimate_json"]


class CycleTracer:
    """Collects per-layer instructions and estimated cycles of profiled RUNs from QEMU's log."""

    def __init__(self, elf: Path, board: Board, n_layers: int):
        self.core = core_for(board.cpu)
        self.trace = ExecTrace(code_map(Path(elf), self.core.objdump_arch), self.core,
                               symbol_address(Path(elf), PROFILE_HOOK), n_layers)
        self.error: BaseException | None = None

    def consume(self, stream: TextIO) -> None:
        try:
            self.trace.consume(stream)
        except BaseException as exc:
            self.error = exc
            raise

    def estimate(self) -> dict[str, Any]:
        """The last complete profiled RUN as JSON-ready figures; McuforgeError if there was none."""
        if self.error is not None:
            raise McuforgeError(f"reading QEMU's execution log failed: {self.error}")
        if not self.trace.runs:
            raise McuforgeError("QEMU's execution log holds no complete profiled run")
        return estimate_json(self.core, self.trace.runs, self.trace.undecoded_blocks)


def estimate_json(core: CoreModel, runs: list[list[LayerCount]], undecoded: int = 0) -> dict[str, Any]:
    layers = runs[-1]
    instr = sum(L.instructions for L in layers)
    cyc = [sum(L.cycles[w] for L in layers) for w in (LOW, POINT, HIGH)]
    return {
        "core": core.name, "source": core.source, "assumptions": core.describe(), "span": SPAN,
        "instructions": instr, "cycles": round(cyc[POINT]), "cycles_low": round(cyc[LOW]),
        "cycles_high": round(cyc[HIGH]), "cpi": round(cyc[POINT] / instr, 3) if instr else None,
        "runs": len(runs), "runs_equal": all([L.instructions for L in r] == [L.instructions for L in layers]
                                             for r in runs),
        "undecoded_blocks": undecoded,
        "layers": [{"instructions": L.instructions, "cycles": round(L.cycles[POINT]),
                    "cycles_low": round(L.cycles[LOW]), "cycles_high": round(L.cycles[HIGH])} for L in layers],
    }
