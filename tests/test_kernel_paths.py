"""The kernel paths a build carries (mcu_cmsis_paths.h, planner/targets/cmsis_nn/paths.py): the
compiler lists the run-time paths its layers take, the build compiles only those.

A path the list misses would cost speed (a general fallback) or stop the firmware (a trap where
there is none): the QEMU test below runs each model built with its list and with every path, and
requires the same outputs, no layer slower, and less code."""

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import MLPERF_MODELS

from mcuforge.codegen.emit import emit
from mcuforge.driver import Options, compile_model

TOOLS = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm", "cmake") if shutil.which(t) is None]
KERAS = MLPERF_MODELS["vww"].parent.parent / "keras"


def _paths(path, isa="dsp"):
    with tempfile.TemporaryDirectory() as tmp:
        out = emit(compile_model(path, Options(isa=isa)), Path(tmp) / "m", "m", Path(path).name)
        return json.loads((out / "report.json").read_text())["kernel_paths"], (out / "CMakeLists.txt").read_text()


def test_paths_of_the_mlperf_models():
    """KWS for the M4: its first conv (10x4 over one channel, K = 40: the wide layout's columns,
    which Helium's plain loop reads too), the 3x3 stride-1 depthwise layers in the pair layout
    (over their inputs, with a ring: Helium's pixel path, always there); the 1x1 layers (offset
    layout) and the 64 -> 12 head (groups of four, depth a multiple of 16) on the assembly alone.
    For the M55 the first conv is the one-input-channel depthwise path (its tables), the wide
    layout is gone and the 1x1 layers take the plain one; the M4's 1x1 layers, ReLU-like, take the
    offset layout's routine without the negative accumulators' rounding correction (PAIR_RELU). VWW adds the stride-2 depthwise pairs,
    the 3x3 three-channel first conv, its small maps' 3x3 pixel sweep with the 3x3 output maps'
    paths at stride 1 and 2, and Helium's 3x3 columns.
    AD: fully connected layers of one row only, every group on the assembly."""
    kws, cmake = _paths(MLPERF_MODELS["kws"])
    assert kws == ["CONV_COLUMN", "DW_PAIRS_S1", "MVE_WIDE", "PAIR_RELU"]
    assert "mcuforge_kernel_paths(CONV_COLUMN DW_PAIRS_S1 MVE_WIDE PAIR_RELU)" in cmake
    vww, _ = _paths(MLPERF_MODELS["vww"])
    assert {"CONV_3X3X3", "CONV_COLUMN", "DW_PAIRS_S1", "DW_PAIRS_S2", "DW_PIX3", "DW_MAP3", "DW_MAP3_S2",
            "MVE_DW_COLUMNS"} <= set(vww)
    assert not {"DW_IN1", "FC_ROWS", "PAIR_PLAIN", "MVE_DW_IN1", "MVE_DW_M4", "PAIR_SIGNED"} & set(vww)
    # the offset layout's routines: KWS's and VWW's 1x1 layers are all ReLU-like (no signed routine);
    # IC's convolutions before its residual adds are not
    assert "PAIR_RELU" in vww and {"PAIR_RELU", "PAIR_SIGNED"} <= set(_paths(MLPERF_MODELS["ic"])[0])
    assert _paths(MLPERF_MODELS["ad"])[0] == []
    helium, _ = _paths(MLPERF_MODELS["kws"], "mve")
    assert helium == ["DW_PAIRS_S1", "MVE_DW_IN1", "PAIR_PLAIN", "PAIR_RELU"]


def test_depthwise_pairs_and_maps_take_the_requantization_of_their_clamp():
    """The depthwise pair layout and 3x3 output maps carry the routines without the negative
    accumulators' rounding correction for a ReLU-like layer (output offset at or below the clamp's
    minimum: PAIR_RELU), the ones with it for any other (PAIR_SIGNED); the lane pairs and the general
    sweeps neither."""
    from mcuforge.planner.targets.cmsis_nn import depthwise

    base = {"sweep": depthwise.ROWS, "k_h": 3, "k_w": 3, "stride_h": 1, "stride_w": 1, "dil_h": 1, "dil_w": 1,
            "depth_multiplier": 1, "in_h": 12, "in_w": 12, "out_h": 12, "out_w": 12, "pad_top": 1, "pad_left": 1,
            "out_c": 8, "act_min": -128, "act_max": 127}
    relu, signed = {**base, "output_offset": -128}, {**base, "output_offset": -3}
    assert depthwise.dsp_paths(relu, True) == {"DW_PAIRS_S1", "PAIR_RELU"}
    assert depthwise.dsp_paths(signed, True) == {"DW_PAIRS_S1", "PAIR_SIGNED"}
    assert depthwise.dsp_paths({**relu, "dil_h": 2}, True) == {"DW_PAIRS_S1", "PAIR_RELU", "DW_K3S1"}
    assert depthwise.dsp_paths({**relu, "out_w": 3}, True) == {"DW_K3S1"}
    assert depthwise.dsp_paths(relu, False) == frozenset()
    m3 = {**base, "sweep": depthwise.PIXELS, "in_h": 6, "in_w": 6, "out_h": 3, "out_w": 3, "stride_h": 2,
          "stride_w": 2, "pad_top": 0, "pad_left": 0}
    assert depthwise.dsp_paths({**m3, "output_offset": -128}, True) == {"DW_PIX3", "DW_MAP3_S2", "PAIR_RELU"}
    assert depthwise.dsp_paths({**m3, "output_offset": 5}, True) == {"DW_PIX3", "DW_MAP3_S2", "PAIR_SIGNED"}


def _build_run(out: Path, board, x):
    from mcuforge.device import build_generated, connect, read_report, run_sets, run_timeout

    report = read_report(out)
    fw = build_generated(out, board, out.parent / f"build-{out.name}")
    with connect(board, fw.elf, None, report=report) as link:
        run = run_sets(link, [x], [t for t in report.outputs], timeout=run_timeout(report))
    return fw.text_bytes, run


MODELS = [MLPERF_MODELS["kws"], MLPERF_MODELS["ic"], MLPERF_MODELS["ad"], KERAS / "mobilenet_v1_025_96_i8.tflite",
          KERAS / "squeezenet_64_i8.tflite", KERAS / "lenet5_logsoftmax_i8.tflite", KERAS / "har_cnn1d_i8.tflite"]
CASES = [(m, "mps2-an386") for m in MODELS] + [(m, "mps3-an547") for m in (
    MLPERF_MODELS["kws"], KERAS / "mobilenet_v1_025_96_i8.tflite", KERAS / "har_cnn1d_i8.tflite")]


@pytest.mark.slow
@pytest.mark.skipif(bool(TOOLS) and os.environ.get("CI") != "true",
                    reason=f"needs {', '.join(TOOLS)} (CI installs them and runs these)")
@pytest.mark.parametrize("path, board", CASES, ids=[f"{p.stem}-{b}" for p, b in CASES])
def test_a_build_with_its_paths_only_runs_as_one_with_all(path, board, tmp_path):
    """On the Cortex-M4 (DSP paths) and M55 (Helium), each compiled for its core: the same outputs
    for a random input, every layer's instructions at most 0.5% (and 200) over the build with every
    path (a missed path would fall back to a general loop, several times slower, or trap), and
    less code."""
    from mcuforge.boards import load_board
    from mcuforge.verify import random_inputs

    board = load_board(board)
    compiled = compile_model(path, Options(isa=board.isa))
    x = random_inputs(compiled.imported, np.random.default_rng(1))
    selected = emit(compiled, tmp_path / "selected", "model", path.name)
    every = emit(compiled, tmp_path / "every", "model", path.name)
    report = json.loads((every / "report.json").read_text())
    assert report["kernel_paths"] is not None
    (every / "report.json").write_text(json.dumps({**report, "kernel_paths": None}))
    code_selected, run_selected = _build_run(selected, board, x)
    code_every, run_every = _build_run(every, board, x)
    for a, b in zip(run_selected.outputs[0], run_every.outputs[0]):
        np.testing.assert_array_equal(a, b)
    for step, (a, b) in enumerate(zip(run_selected.layer_counts, run_every.layer_counts)):
        assert a <= b + max(200, b // 200), f"layer {step}: {a} instructions with its paths, {b} with all"
    assert code_selected < code_every


@pytest.mark.slow
@pytest.mark.skipif(bool(TOOLS) and os.environ.get("CI") != "true",
                    reason=f"needs {', '.join(TOOLS)} (CI installs them and runs these)")
def test_a_path_left_out_stops_the_firmware(tmp_path):
    """LeNet's convolutions take the offset layout's columns: built without that path (a list
    that misses it), the firmware stops at the check (a UsageFault the host reports), never
    answering with wrong outputs."""
    from mcuforge.boards import load_board
    from mcuforge.errors import McuforgeError
    from mcuforge.verify import random_inputs

    path = KERAS / "lenet5_logsoftmax_i8.tflite"
    board = load_board("mps2-an386")
    compiled = compile_model(path, Options(isa=board.isa))
    out = emit(compiled, tmp_path / "m", "model", path.name)
    report = json.loads((out / "report.json").read_text())
    assert "CONV_OFFSET" in report["kernel_paths"]
    report["kernel_paths"].remove("CONV_OFFSET")
    (out / "report.json").write_text(json.dumps(report))
    with pytest.raises(McuforgeError, match="FAULT: UsageFault"):
        _build_run(out, board, random_inputs(compiled.imported, np.random.default_rng(0)))
