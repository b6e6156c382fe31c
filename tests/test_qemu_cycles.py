"""The cycle estimate end to end on QEMU: the instruction stream parsed from QEMU's exec log counts
exactly the instructions QEMU's -icount clock counts, on real models, and tracing changes nothing
in the run. Hand-written sequences against the TRM: tests/test_cycles.py."""

import os
import shutil
from fractions import Fraction

import pytest
from conftest import MLPERF_MODELS

from mcuforge.bench import bench
from mcuforge.boards import load_board

TOOLS = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm", "cmake") if shutil.which(t) is None]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(TOOLS) and os.environ.get("CI") != "true",
                       reason=f"needs {', '.join(TOOLS)} (CI installs them and runs these)"),
]

CASES = [("ad", "mps2-an386"), ("kws", "mps2-an505"), ("ad", "mps3-an547")]


def ticks_of(units: int, per_tick: Fraction) -> int | None:
    """The tick count the harness reported as `units` (it prints floor(ticks * per_tick)), if any."""
    ticks = -(-units // per_tick)  # ceil
    return int(ticks) if int(ticks * per_tick) == units else None


def explains(stream: list[int], cumulative: list[int], per_tick: Fraction) -> bool:
    """Whether the harness's timestamps follow from the stream's exact counts: the harness reports
    T_i = floor(k_i * per_tick), k_i the SysTick ticks since its start; we see T_i - T_0 (per-layer
    differences). True if some k_0 (ticks before the first hook) and some phase p of the first
    timer read inside its tick (0 <= p < per_tick) give k_i - k_0 = floor((stream_i + p) / per_tick)
    for every i."""
    for k0 in range(64):
        t0 = int(k0 * per_tick)
        ticks = [ticks_of(t0 + c, per_tick) for c in cumulative]
        if None in ticks:
            continue
        lo, hi = Fraction(0), per_tick
        for s, k in zip(stream, ticks):
            lo, hi = max(lo, (k - k0) * per_tick - s), min(hi, (k - k0 + 1) * per_tick - s)
        if lo < hi:
            return True
    return False


@pytest.mark.parametrize("model, board", CASES, ids=[f"{m}-{b}" for m, b in CASES])
def test_stream_counts_what_icount_counts(model, board):
    traced = bench(MLPERF_MODELS[model], board, cycles=True)
    plain = bench(MLPERF_MODELS[model], board, cycles=False)
    # -d in_asm,exec,nochain changes nothing in the run
    assert traced["instructions"] == plain["instructions"] and plain["cycles_estimate"] is None
    assert [L["instructions"] for L in traced["layers"]] == [L["instructions"] for L in plain["layers"]]

    est = traced["cycles_estimate"]
    assert est["runs"] == 2 and est["runs_equal"] and est["undecoded_blocks"] == 0
    assert sum(L["instructions"] for L in est["layers"]) == est["instructions"]
    assert sum(L["cycles"] for L in est["layers"]) == est["cycles"]
    assert est["instructions"] <= est["cycles_low"] <= est["cycles"] <= est["cycles_high"]

    # The harness's per-layer counts are SysTick timestamps (whole ticks: 40, 50 or 31.25 instructions)
    # taken inside the profiler hook; the stream's are exact. They agree exactly: one phase of the
    # first timestamp within its tick explains every timestamp of the run.
    stream, harness = [0], [0]
    for s, h in zip(est["layers"], traced["layers"]):
        stream.append(stream[-1] + s["instructions"])
        harness.append(harness[-1] + h["instructions"])
    per_tick = Fraction(load_board(board).timer.units_per_tick)
    assert explains(stream, harness, per_tick), f"the stream's {stream} do not explain the harness's {harness}"
    off_by_two_ticks = stream[:-1] + [stream[-1] + int(2 * per_tick) + 1]  # two ticks: a phase cannot absorb it
    assert not explains(off_by_two_ticks, harness, per_tick)  # the check can fail
