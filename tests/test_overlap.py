"""Outputs written over their inputs (issue 13): the kernels' Overlap declarations, the checker that
simulates their read/write order on the planned offsets (planner/overlap.py), the planner's use of
them and the --memory modes. Bit-exactness of overlapped plans: tests/test_host_e2e.py (every model,
plain and DSP paths, default `balanced` mode) and the QEMU runs below, with guard bytes."""

import dataclasses
import json
import os
import shutil

import numpy as np
import pytest
from conftest import MLPERF_MODELS, MODELS, manifest

from mcuforge.driver import BALANCED_BUDGET_MVE, Options, compile_model
from mcuforge.errors import IRError
from mcuforge.planner.arena import plan_program
from mcuforge.planner.checks import check_arena
from mcuforge.planner.fusion import FusedCall
from mcuforge.planner.kernel import Overlap
from mcuforge.planner.memory import Buffer, InPlace, MemoryPlan, PlanError, check_plan, plan_memory
from mcuforge.planner.overlap import ORDERS, first_conflict, max_safe_shift, orders, ring_lag
from mcuforge.verify import random_inputs, verify_board, verify_host

KERAS = MODELS.parent / "keras"
WINDOWED = ("conv", "depthwise", "pool", "mobilenet", "ds_cnn")


@pytest.fixture(scope="module")
def ic():
    return compile_model(MLPERF_MODELS["ic"])


def _declared(compiled):
    return [(step, b) for step, b in enumerate(compiled.program.bindings) if b.kernel.overlap is not None]


def _windowed_models():
    names = [f["file"] for f in manifest() if any(w in f["name"] for w in WINDOWED)]
    return [MODELS / n for n in names] + sorted(MLPERF_MODELS.values())


def test_every_declaration_is_proven_on_every_modelled_path():
    """Each kernel's declared distance is at most what the simulation of each of its build paths'
    orders allows, on every windowed fixture model (conv, 1x1, depthwise, pools; strides, padding,
    dilation, depth multipliers), with the cmsis-nn kernels and with the portable ones."""
    seen = set()
    for path, targets in [(p, t) for p in _windowed_models() for t in (("cmsis-nn", "c"), ("c",))]:
        for step, b in _declared(compile_model(path, Options(targets=targets))):
            k = b.kernel  # as the planner runs it when it uses the overlap
            if isinstance(k, FusedCall):  # models its own order: tests/test_fusion.py
                continue
            k = dataclasses.replace(k, params={**k.params, **dict(k.overlap.needs)})
            assert k.function in ORDERS, k.function
            for order in orders(k):
                if k.overlap.min_shift is not None:  # a range: every aligned shift in it
                    for shift in range(k.overlap.max_shift, k.overlap.min_shift - 1, -4):
                        assert first_conflict(order, shift) is None, (path.name, step, order.path, shift)
                    continue
                assert k.overlap.max_shift <= max_safe_shift(order), (path.name, step, order.path)
                assert first_conflict(order, k.overlap.max_shift) is None
            seen.add(k.function)
    assert seen == set(ORDERS)  # every modelled kernel met at least once


def test_depthwise_in_place_row_lagged():
    """KWS's 3x3 depthwise layers (25x5x64, stride 1, SAME): the output exactly over the input. The
    pixel paths (plain C, the DSP pixel sweep, Helium's pixels, which then take the column rows)
    keep the last 5 + 1 + 1 = 7 pixels in a ring: a pixel reaches its place once the pixel below
    right of it (the last reader of the input it covers) is computed. The DSP line sweep (columns
    here) needs nothing: a group of four channels reads each input column into its line cache
    before it writes the output column over it. The ring (7 x 64 B after Helium's 136 B) fits in
    the line sweep's scratch (964 B)."""
    kws = compile_model(MLPERF_MODELS["kws"], Options(memory="min"))
    dw = [b.kernel for b in kws.program.bindings if b.kernel.function == "mcu_cmsis_dwconv2d_s8"]
    assert len(dw) == 4
    for k in dw:
        assert (k.overlap.min_shift, k.overlap.max_shift, k.overlap.needs) == (0, 0, (("lag", 7),))
        assert k.params["sweep"] == 1 and k.params["lag"] == 7 and k.scratch_bytes == 964
        assert k.scratch_check.startswith("(MCU_CMSIS_DWCONV2D_S8_LINES_SCRATCH_BYTES(3, 3, 1, 25, 1, 1, 64) > "
                                          "MCU_CMSIS_DWCONV2D_S8_RING_SCRATCH_BYTES(136, 7, 64)")
        paths = {o.path: o for o in orders(k)}
        assert set(paths) == {"pixels, lagged", "DSP line sweep"}
        assert all(first_conflict(o, 0) is None for o in paths.values())
        # one group of four channels lower the line sweep meets a group it has not read yet
        assert first_conflict(paths["DSP line sweep"], -4) is not None
        unlagged = dataclasses.replace(k, params={**k.params, "lag": 6})
        assert first_conflict(orders(unlagged)[0], 0) is not None  # one pixel short


def test_kws_arena_by_memory_mode():
    """KWS: `fast` 16,964 B (8,000 B in, 8,000 B out, the depthwise line sweep's scratch); `min`
    8,964 B: every depthwise layer exactly over its input, every 1x1 layer but the last too (input
    pixels copied to scratch first: six at a time on plain C, two on Helium; the last one's output,
    read only by the pool, finds room of its own), so the arena is one 8,000 B map and the largest
    scratch. `balanced` buys what the budget (2.5% of the MACs) pays at the cost of the ISA the C
    is built for: for the DSP paths (the default, and the M4's) these overlaps cost nothing (the
    line sweep caches its input lines, the GEMM widens three pixels first), so `balanced` is `min`;
    for Helium each costs its estimate (its pixel path for the depthwise column rows, ~13,100
    instructions a layer; the pair copies, ~1,100), and its budget (2.25% of the MACs) buys all
    seven; plain C pays the ring's copies and a cheap chunk set-up: all seven fit too."""
    arenas = {m: compile_model(MLPERF_MODELS["kws"], Options(memory=m)).arena for m in ("fast", "balanced", "min")}
    assert {m: a.arena_bytes for m, a in arenas.items()} == {"fast": 16_964, "balanced": 8_964, "min": 8_964}
    assert not arenas["fast"].costs and len(arenas["min"].costs) == 7 and len(arenas["balanced"].costs) == 7
    kws = compile_model(MLPERF_MODELS["kws"])
    assert sum(kws.program.bindings[s].kernel.overlap.cost_instructions for s, _ in kws.arena.costs) == 0
    mve = compile_model(MLPERF_MODELS["kws"], Options(isa="mve"))
    assert mve.arena.arena_bytes == 8_964 and len(mve.arena.costs) == 7
    paid = sum(mve.program.bindings[s].kernel.overlap.cost_instructions for s, _ in mve.arena.costs)
    assert 4 * 13_000 < paid <= BALANCED_BUDGET_MVE * 2_656_768  # the four rings and three pair copies
    plain = compile_model(MLPERF_MODELS["kws"], Options(isa="plain"))  # the ring and chunks are cheap there
    assert plain.arena.arena_bytes == 8_964 and len(plain.arena.costs) == 7
    assert compile_model(MLPERF_MODELS["kws"], Options(isa="mve", memory="min")).arena.arena_bytes == 8_964


def test_1x1_in_chunks():
    """KWS's 1x1 layers (64 -> 64 channels): two pixels read again for every output channel
    (plain C, Helium pairs) keep the output 128 B below the input, free (Overlap.without); pixels
    copied to scratch first (plain C: six at a time, Helium: two) let it lie exactly over it, on
    every path."""
    kws = compile_model(MLPERF_MODELS["kws"])
    k = next(b.kernel for b in kws.program.bindings if b.kernel.function == "mcu_cmsis_conv2d_1x1_s8")
    assert (k.overlap.max_shift, k.overlap.needs, k.overlap.without.max_shift) == (0, (("chunk", 6),), -128)
    assert k.params["chunk"] == 6  # free for the DSP paths the default build is for: taken in balanced
    chunked, unchunked = (dataclasses.replace(k, params={**k.params, "chunk": c}) for c in (6, 0))
    assert [o.path for o in orders(chunked)] == ["DSP", "plain chunks", "Helium pairs copied"]
    assert all(first_conflict(o, 0) is None for o in orders(chunked))
    assert [first_conflict(o, 0) is None for o in orders(unchunked)] == [True, False, False]


def test_ring_lag_on_a_small_case():
    """A 3x3 stride-1 SAME depthwise on 4x4x2: input pixel (y, x) is read last by output pixel
    (y + 1, x + 1), 5 pixels on, so a pixel may reach its place 6 pixels after it is computed; the
    DSP line sweep (rows) is in place without a ring, and even one row up, not two."""
    p = dict(in_h=4, in_w=4, in_c=2, out_h=4, out_w=4, out_c=2, k_h=3, k_w=3, stride_h=1, stride_w=1, dil_h=1,
             dil_w=1, pad_top=1, pad_left=1, depth_multiplier=1, sweep=0)
    assert ring_lag(p) == 6
    pixels = orders_of(p, lag=6)
    assert [o.path for o in pixels] == ["pixels, lagged", "DSP line sweep"]
    assert all(first_conflict(o, 0) is None for o in pixels)
    assert first_conflict(orders_of(p, lag=5)[0], 0) is not None
    # one row up: row r lands on input row r + 1, which the cache read before row r is written; two
    # rows up on input row r + 2, read only for the next row
    assert first_conflict(pixels[1], 8) is None and first_conflict(pixels[1], 16) is not None


def orders_of(p, lag):
    return ORDERS["mcu_cmsis_dwconv2d_s8"]({**p, "lag": lag})


def test_a_wrong_declaration_is_refused(ic):
    """The checker trusts the order models, not the declaration: 64 B more than the conv allows
    and the plan is refused."""
    prog = ic.program
    step, b = next((s, b) for s, b in _declared(ic) if b.kernel.function == "mcu_cmsis_conv2d_s8"
                   and any(st == s for st, _, _ in ic.arena.overlaps))
    wrong = dataclasses.replace(b.kernel, overlap=Overlap(0, b.kernel.overlap.max_shift + 64))
    bindings = list(prog.bindings)
    bindings[step] = dataclasses.replace(b, kernel=wrong)
    bad = dataclasses.replace(prog, bindings=tuple(bindings))
    bad, arena = plan_program(bad, mode="min")
    assert any(st == step for st, _, _ in arena.overlaps)
    with pytest.raises(IRError, match=rf"step {step} .*writes input bytes a later block still reads"):
        check_arena(bad, arena)


def test_an_overlap_without_an_order_model_is_refused():
    """A declaration on a kernel the checker cannot simulate (here the fully connected layer) is no
    proof: the plan is refused."""
    ad = compile_model(MLPERF_MODELS["ad"])
    prog = ad.program
    step = 1
    b = prog.bindings[step]
    bindings = list(prog.bindings)
    bindings[step] = dataclasses.replace(b, kernel=dataclasses.replace(b.kernel, overlap=Overlap(0, 0)))
    bad = dataclasses.replace(prog, bindings=tuple(bindings))
    bad, arena = plan_program(bad, mode="min")
    if not any(st == step for st, _, _ in arena.overlaps):  # the plan did not need it: force it
        offsets = dict(arena.plan.offsets)
        offsets[b.out] = offsets[b.args[0]]
        arena = dataclasses.replace(arena, plan=dataclasses.replace(arena.plan, offsets=offsets))
    with pytest.raises(IRError, match="no read/write order model"):
        check_arena(bad, arena)


def test_order_simulation_on_a_small_case():
    """A 3x3 stride-1 SAME conv on 4x4x1 -> 4x4x1, one pixel a block, buffered: the write of pixel
    n must stay below the first byte the next pixel's window reads, (row - 1) * 4 + col - 1."""
    p = dict(in_h=4, in_w=4, in_c=1, out_h=4, out_w=4, out_c=1, k_h=3, k_w=3, stride_h=1, stride_w=1, dil_h=1,
             dil_w=1, pad_top=1, pad_left=1)
    pixels = next(o for o in ORDERS["mcu_cmsis_conv2d_s8"](p) if o.path == "Helium pixels")
    # pixel (1, 0) writes byte 4; pixel (1, 1) still reads from byte 0: the shift must be <= -5
    assert max_safe_shift(pixels) == -5
    assert first_conflict(pixels, -5) is None and first_conflict(pixels, -4) is not None


def test_planner_ranges_and_the_plan_check():
    bufs = [Buffer("a", 100, 4, 0, 1), Buffer("b", 100, 4, 1, 2), Buffer("c", 40, 4, 0, 2)]
    plan = plan_memory(bufs, [InPlace("b", "a", lo=None, hi=-8)])
    assert plan.arena_bytes == 148 and plan.gap == 0
    assert plan.offsets["b"] - plan.offsets["a"] <= -8
    offsets = dict(plan.offsets)
    offsets["b"] = offsets["a"] - 4  # closer than allowed
    with pytest.raises(PlanError, match="overlap in bytes"):
        check_plan(bufs, [InPlace("b", "a", lo=None, hi=-8)], MemoryPlan(offsets, 200, "x", 0))
    exact = plan_memory(bufs, [InPlace("b", "a")])  # the element-wise rule: exactly over it
    assert exact.offsets["b"] == exact.offsets["a"] and exact.arena_bytes == 140


def test_memory_modes_and_report(ic, cli):
    """IC's residual blocks: each second convolution is fused with its ADD (mcu_cmsis_conv2d_add_s8)
    and writes the sum over the block's input, so its own output tensor never exists: the peak is
    the block's input and inner tensor (16,384 B each) plus the fused kernel's scratch (the
    three-column block, 864 B at K = 144, and a 12-pixel stage, 192 B), in every memory mode (the
    fusion costs no overlap, and the planner has nothing left to overlap at that peak)."""
    fast = compile_model(MLPERF_MODELS["ic"], Options(memory="fast")).arena
    assert fast.arena_bytes == fast.live_bound == 2 * 16_384 + 864 + 192 <= 34_000
    assert not [o for o in fast.overlaps if o[2] != 0]
    assert ic.arena.mode == "balanced" and ic.arena.arena_bytes == fast.arena_bytes
    assert compile_model(MLPERF_MODELS["ic"], Options(memory="min")).arena.arena_bytes == ic.arena.arena_bytes
    fused = [b for b in ic.program.bindings if b.kernel.function == "mcu_cmsis_conv2d_add_s8"]
    assert len(fused) == 3 and all(b.kernel.in_place for b in fused)
    proc = cli("plan", MLPERF_MODELS["ic"])
    assert proc.returncode == 0
    assert "memory:       balanced; live-tensor bound 33,824 B" in proc.stdout
    assert "[#2 CONV_2D, #3 ADD] complex, cmsis-nn:mcu_cmsis_conv2d_add_s8" in proc.stdout
    assert "merged:       3 step(s) compute several TFLite ops in one kernel" in proc.stdout
    assert "mcu_cmsis_conv2d_add_s8 [#2 CONV_2D, #3 ADD]: 16,384 B never exist" in proc.stdout
    proc = cli("plan", MLPERF_MODELS["ic"], "--memory", "fast", "--json")
    assert proc.returncode == 0 and '"overlaps": []' in proc.stdout
    merged = json.loads(proc.stdout)["memory"]["merged"]
    assert [(m["step"], m["hidden_bytes"]) for m in merged] == [(2, 16_384), (5, 8_192), (8, 4_096)]
    proc = cli("plan", MLPERF_MODELS["ic"], "--memory", "tiny")
    assert proc.returncode == 2 and "invalid choice: 'tiny'" in proc.stderr


def test_picture_marks_the_overlap(tmp_path, cli):
    compiled = compile_model(MLPERF_MODELS["vww"])
    step, arg, shift = next(o for o in compiled.arena.overlaps if o[2] != 0)
    proc = cli("plan", MLPERF_MODELS["vww"], "--picture", tmp_path / "vww.svg")
    assert proc.returncode == 0
    svg = (tmp_path / "vww.svg").read_text()
    out = compiled.program.bindings[step].out
    assert "output over its input" in svg and f"{out} over {arg} ({shift:+} B)" in svg


HOST_CASES = [("mobilenet_v1_025_96_i8.tflite", ("cmsis-nn", "c")), ("squeezenet_64_u8.tflite", ("cmsis-nn", "c")),
              ("squeezenet_64_i8.tflite", ("c",)), ("mobilenet_v1_025_96_i8.tflite", ("c",)),
              ("mobilenet_v2_035_96_u8.tflite", ("cmsis-nn", "c"))]


@pytest.mark.parametrize("dsp", [False, True], ids=["plain", "dsp"])
@pytest.mark.parametrize("name, targets", HOST_CASES, ids=[f"{n}-{'+'.join(t)}" for n, t in HOST_CASES])
def test_overlapped_keras_models_bit_exact_on_host(name, targets, dsp):
    path = KERAS / name
    compiled = compile_model(path, Options(targets=targets, memory="min"))
    assert [o for o in compiled.arena.overlaps if o[2] != 0], "the plan overlaps nothing: no test"
    rng = np.random.default_rng(5)
    results = verify_host(compiled, [random_inputs(compiled.imported, rng) for _ in range(2)], isolate=False, dsp=dsp)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad)


QEMU_TOOLS = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm", "cmake") if shutil.which(t) is None]
QEMU_CASES = [("ic", "mps2-an386"), ("ic", "mps3-an547"), ("vww", "mps2-an386"), ("vww", "mps3-an547"),
              ("kws", "mps2-an386"), ("kws", "mps3-an547"), ("mobilenet_v2_035_96_u8.tflite", "mps2-an386"),
              ("kws", "mps2-an386", "balanced"), ("kws", "mps3-an547", "balanced")]


@pytest.mark.slow
@pytest.mark.skipif(bool(QEMU_TOOLS) and os.environ.get("CI") != "true", reason="needs the Arm toolchain and QEMU")
@pytest.mark.parametrize("case", QEMU_CASES, ids=["-".join(c) for c in QEMU_CASES])
def test_overlapped_plans_on_qemu_with_guard_bytes(case):
    """The M4 (DSP) and M55 (Helium) builds of overlapped plans (`min`, and KWS's row-lagged
    depthwise layers in `balanced`): bit-exact with TFLM, canaries around the arena intact."""
    model, board, memory = (*case, "min")[:3]
    compiled = compile_model(MLPERF_MODELS.get(model) or KERAS / model, Options(memory=memory))
    assert [o for o in compiled.arena.overlaps if o[2] != 0]
    rng = np.random.default_rng(13)
    sets = [random_inputs(compiled.imported, rng) for _ in range(2)]
    results = verify_board(compiled, sets, board, isolate=False, guard=True)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad)
