"""Outputs written over their inputs (issue 13): the kernels' Overlap declarations, the checker that
simulates their read/write order on the planned offsets (planner/overlap.py), the planner's use of
them and the --memory modes. Bit-exactness of overlapped plans: tests/test_host_e2e.py (every model,
plain and DSP paths, default `balanced` mode) and the QEMU runs below, with guard bytes."""

import dataclasses
import os
import shutil

import numpy as np
import pytest
from conftest import MLPERF_MODELS, MODELS, manifest

from mcuforge.driver import Options, compile_model
from mcuforge.errors import IRError
from mcuforge.planner.arena import plan_program
from mcuforge.planner.checks import check_arena
from mcuforge.planner.fusion import FusedCall
from mcuforge.planner.kernel import Overlap
from mcuforge.planner.memory import Buffer, InPlace, MemoryPlan, PlanError, check_plan, plan_memory
from mcuforge.planner.overlap import ORDERS, first_conflict, max_safe_shift, orders
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
                assert k.overlap.max_shift <= max_safe_shift(order), (path.name, step, order.path)
                assert first_conflict(order, k.overlap.max_shift) is None
            seen.add(k.function)
    assert seen == set(ORDERS)  # every modelled kernel met at least once


def test_depthwise_overlap_needs_the_pixel_sweep_and_bands():
    """KWS's 3x3 depthwise layers (25x5x64, stride 1). Their fastest orders allow no useful overlap:
    the DSP path sweeps columns one group of four channels at a time (the whole map per group) and
    Helium's column path runs all its rows in one band (the whole map read before its last write).
    The declared overlap needs the DSP pixel sweep (one pixel at a time: 7 pixels below the input)
    and Helium bands (band_rows 8: rows 1..4, 5..12, ...), each band written while its windows are
    read, so the output must start 9 rows (2,880 B) below the input; with the pixel sweep's own
    scratch. `balanced` leaves them off on KWS (the bands cost about 40% more instructions on the
    M55); `min` uses them."""
    kws = compile_model(MLPERF_MODELS["kws"])
    dw = [b.kernel for b in kws.program.bindings if b.kernel.function == "mcu_cmsis_dwconv2d_s8"]
    assert len(dw) == 4
    for k in dw:
        assert k.overlap.max_shift == -2880 and k.overlap.needs == (("sweep", 2), ("band_rows", 8))
        assert k.params["sweep"] == 1 and k.params["band_rows"] == 0
        assert k.overlap.scratch_check == "MCU_CMSIS_DWCONV2D_S8_PIXELS_SCRATCH_BYTES(3, 3, 64, 64)"
    assert not kws.arena.costs
    assert {o.path: max_safe_shift(o) for o in orders(dw[0])} == {
        "pixels": -7 * 64, "DSP line sweep": -8000, "Helium columns": -7680}
    banded = dataclasses.replace(dw[0], params={**dw[0].params, **dict(dw[0].overlap.needs)})
    assert {o.path: max_safe_shift(o) for o in orders(banded)} == {"pixels": -7 * 64, "Helium columns": -2880}
    small = compile_model(MLPERF_MODELS["kws"], Options(memory="min"))
    assert small.arena.arena_bytes < kws.arena.arena_bytes and len(small.arena.costs) == 4
    for s, _ in small.arena.costs:
        k = small.program.bindings[s].kernel
        assert (k.params["sweep"], k.params["band_rows"], k.scratch_bytes) == (2, 8, k.overlap.scratch_bytes)
        assert k.scratch_check == k.overlap.scratch_check


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
    proc = cli("plan", MLPERF_MODELS["ic"], "--memory", "fast", "--json")
    assert proc.returncode == 0 and '"overlaps": []' in proc.stdout
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
              ("kws", "mps2-an386"), ("kws", "mps3-an547"), ("mobilenet_v2_035_96_u8.tflite", "mps2-an386")]


@pytest.mark.slow
@pytest.mark.skipif(bool(QEMU_TOOLS) and os.environ.get("CI") != "true", reason="needs the Arm toolchain and QEMU")
@pytest.mark.parametrize("model, board", QEMU_CASES, ids=[f"{m}-{b}" for m, b in QEMU_CASES])
def test_overlapped_plans_on_qemu_with_guard_bytes(model, board):
    """The M4 (DSP) and M55 (Helium) builds of overlapped plans: bit-exact with TFLM, canaries
    around the arena intact."""
    compiled = compile_model(MLPERF_MODELS.get(model) or KERAS / model, Options(memory="min"))
    assert [o for o in compiled.arena.overlaps if o[2] != 0]
    rng = np.random.default_rng(13)
    sets = [random_inputs(compiled.imported, rng) for _ in range(2)]
    results = verify_board(compiled, sets, board, isolate=False, guard=True)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad)
