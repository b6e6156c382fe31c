"""End to end on QEMU: .tflite -> C -> arm-none-eabi-gcc firmware -> QEMU -> outputs over the serial
link, byte for byte equal to TFLite Micro. All four MLPerf Tiny models on mps2-an386 (Cortex-M4),
and one model on each of the other QEMU boards (two on the Cortex-M33, all four on the Cortex-M55),
each compiled for its board's ISA; on the micro:bit (Cortex-M0, 16 KiB RAM) small models, the cmsis-nn
kernels on their plain C paths and float I/O in soft float."""

import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import MLPERF_MODELS, MODELS

from mcuforge.boards import load_board
from mcuforge.driver import Options, compile_model
from mcuforge.planner.target import DEFAULT_ISA
from mcuforge.verify import random_inputs, verify_board

TOOLS = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm", "cmake") if shutil.which(t) is None]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(TOOLS) and os.environ.get("CI") != "true",
                       reason=f"needs {', '.join(TOOLS)} (CI installs them and runs these)"),
]

CASES = [("kws", "mps2-an386"), ("vww", "mps2-an386"), ("ic", "mps2-an386"), ("ad", "mps2-an386"),
         ("kws", "mps2-an385"), ("ic", "mps2-an500"), ("kws", "mps3-an547"), ("kws", "mps2-an505"),
         ("ad", "mps2-an505"), ("ad", "mps3-an547"), ("vww", "mps3-an547"), ("ic", "mps3-an547"),
         ("kws", "netduinoplus2"),
         ("mix_ds_cnn", "microbit"),
         ("mix_float_io_cnn", "microbit")]


@pytest.mark.parametrize("model, board", CASES, ids=[f"{m}-{b}" for m, b in CASES])
def test_model_on_qemu_is_bit_exact(model, board):
    """Compiled for the board's ISA (its weights laid out for its kernel paths), as `run` does."""
    _bit_exact_on(model, board, load_board(board).isa)


def test_c_laid_out_for_the_dsp_paths_is_bit_exact_on_helium():
    """C compiled without a board (the default ISA, DSP: the offset pair layout in KWS's
    convolutions) built for the Cortex-M55: its Helium paths read that layout too."""
    assert DEFAULT_ISA == "dsp" and load_board("mps3-an547").isa == "mve"
    _bit_exact_on("kws", "mps3-an547", DEFAULT_ISA)


def _bit_exact_on(model: str, board: str, isa: str) -> None:
    compiled = compile_model(MLPERF_MODELS.get(model) or MODELS / f"{model}.tflite", Options(isa=isa))
    rng = np.random.default_rng(11)
    sets = [random_inputs(compiled.imported, rng) for _ in range(2)]
    sets.append([np.zeros_like(x) for x in sets[0]])
    results = verify_board(compiled, sets, board, isolate=False)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad)


STATEFUL = [("lstm_kws", "mps2-an386"), ("lstm_kws", "mps3-an547"), ("svdf_kws", "mps2-an386"),
            ("svdf_kws", "mps3-an547"), ("lstm_time_major", "mps2-an385"), ("lstm_16x8", "mps2-an386"),
            ("lstm_16x8", "mps3-an547")]


@pytest.mark.parametrize("model, board", STATEFUL, ids=[f"{m}-{b}" for m, b in STATEFUL])
def test_stateful_model_on_qemu_is_bit_exact_on_sequences(model, board):
    """LSTM and SVDF (the cmsis-nn kernels' DSP and MVE paths, the portable ones on the M3): two
    sequences of three steps, the firmware's RESET between them, against TFLM reset likewise."""
    from conftest import FIXTURES

    path = {"lstm_kws": FIXTURES / "keras" / "lstm_kws_i8.tflite",
            "svdf_kws": FIXTURES / "models" / "svdf_kws_two_layers.tflite",
            "lstm_time_major": FIXTURES / "models" / "lstm_s8_time_major_batch2.tflite",
            "lstm_16x8": FIXTURES / "models" / "lstm_16x8.tflite"}[model]
    compiled = compile_model(path)
    assert compiled.program.states
    rng = np.random.default_rng(5)
    sets = [random_inputs(compiled.imported, rng) for _ in range(6)]
    results = verify_board(compiled, sets, board, isolate=False, steps=3)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad)


def test_mismatch_on_board_names_the_first_layer_that_differs(tmp_path):
    """A deliberately corrupted constant in layer 4 of the generated C: verify on QEMU fails and the
    per-layer readback names layer 4, not the output."""
    from mcuforge.codegen.emit import emit

    compiled = compile_model(MLPERF_MODELS["ad"], Options(targets=("c",)))
    out = emit(compiled, tmp_path / "model", "model")
    weights = out / "model_weights.c"
    text = weights.read_text()
    start = text.index("model_l4_arg2[")  # layer 4's bias
    body = text.index("{", start) + 1
    first_value_end = text.index(",", body)
    text = text[:body] + "\n    123456" + text[first_value_end:]
    weights.write_text(text)
    rng = np.random.default_rng(2)
    sets = [random_inputs(compiled.imported, rng)]
    results = verify_board(compiled, sets, "mps2-an386", isolate=False, src_dir=out)
    assert not results[0].ok
    assert results[0].first_layer is not None and results[0].first_layer.startswith("layer 4 (#4 FULLY_CONNECTED")


def test_bench_reports_every_figure(cli, tmp_path):
    """The benchmark command on one model, so it cannot rot (figures are reported, not asserted)."""
    import json

    proc = cli("bench", MLPERF_MODELS["ad"], "--board", "mps2-an386", "--json", "--picture", tmp_path / "ad.svg",
               "--cycles")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert r["unit"] == "instructions" and r["instructions"] > 0 and r["deterministic"]
    assert set(r["flash"]) == {"code", "weights", "other", "total"} and r["flash"]["weights"] >= 270_880
    assert set(r["ram"]) == {"arena", "state", "static", "stack", "total"} and r["ram"]["arena"] == 768
    assert r["ram"]["state"] == 0  # the autoencoder has no recurrent state
    assert r["compile_seconds"] > 0 and len(r["layers"]) == 10
    assert sum(L["instructions"] for L in r["layers"]) <= r["instructions"]
    assert r["layers"][0]["macs"] == 640 * 128
    assert (tmp_path / "ad.svg").read_text().count("<rect") == 11
    est = r["cycles_estimate"]
    assert est["core"] == "Cortex-M4" and len(est["layers"]) == 10 and est["runs"] == 2 and est["runs_equal"]
    assert est["cycles_low"] <= est["cycles"] <= est["cycles_high"] and "zero wait states" in est["assumptions"][0]
    assert [L["cycles_estimate"] for L in r["layers"]] == [L["cycles"] for L in est["layers"]]


def test_run_command_prints_outputs_and_report(cli, tmp_path):
    from mcuforge.oracle import run_tflm

    x = np.random.default_rng(8).integers(-128, 128, (1, 640), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    proc = cli("run", MLPERF_MODELS["ad"], "--board", "mps2-an386", "--input", tmp_path / "x.npy",
               "--save", tmp_path / "out.npz")
    assert proc.returncode == 0, proc.stderr
    want = run_tflm(MLPERF_MODELS["ad"].read_bytes(), [[x]], isolate=False)[0][0][0]
    got = np.load(tmp_path / "out.npz")["arr_0"]
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert "output 0 int8[1, 640]: " in proc.stdout
    for needle in ("instructions: ", "flash: ", "RAM: ", "stack high-water: ", "arena: 768 B planned", "per layer:"):
        assert needle in proc.stdout, needle
    dev = cli("compile", MLPERF_MODELS["ad"], "-o", tmp_path / "ad", "--prefix", "ad")
    assert dev.returncode == 0, dev.stderr
    built = cli("build", tmp_path / "ad", "--board", "mps2-an385", "--build-dir", tmp_path / "bd")
    assert built.returncode == 0 and "flash: " in built.stdout and "RAM: " in built.stdout, built.stderr
    elf = Path(re.search(r"firmware: (\S+\.elf)", built.stdout).group(1))
    assert elf.is_relative_to(tmp_path / "bd")
    image = elf.with_suffix(".bin").read_bytes()  # the raw image starts with the vector table: SP, reset
    sp, reset = int.from_bytes(image[:4], "little"), int.from_bytes(image[4:8], "little")
    assert sp == 0x20400000 and reset & 1 and reset < len(image)
    hex_lines = elf.with_suffix(".hex").read_text().split()
    assert hex_lines[-1] == ":00000001FF" and all(line.startswith(":") for line in hex_lines)
    assert f"images:   {elf.with_suffix('.bin')}" in built.stdout


@pytest.mark.parametrize("board, model", [("microbit", "mix_float_io_cnn"), ("netduinoplus2", "mix_ds_cnn")])
def test_run_on_the_small_boards_with_float_input(cli, tmp_path, board, model):
    """mcuforge run on the Cortex-M0 micro:bit and the STM32F405 (real USART/RCC registers), with a
    float .npy: quantized on the host for an int8 input, or passed as it is to a float input."""
    from mcuforge.ir.ops.quantize import affine_quantize
    from mcuforge.oracle import run_tflm

    path = MODELS / f"{model}.tflite"
    c = compile_model(path)
    t = c.imported.main.params[0].type
    x = np.random.default_rng(4).standard_normal(t.shape).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    proc = cli("run", path, "--board", board, "--input", tmp_path / "x.npy", "--save", tmp_path / "out.npz")
    assert proc.returncode == 0, proc.stderr
    fed = x if t.dtype == "float32" else affine_quantize(x, t.quant.s, t.quant.zp, t.dtype)
    want = run_tflm(c.blob, [[fed]])[0][0]
    got = np.load(tmp_path / "out.npz")
    assert all(np.array_equal(got[f"arr_{i}"], w) for i, w in enumerate(want))
    assert "instructions: " in proc.stdout and "stack high-water: " in proc.stdout


def test_mismatch_in_a_sequence_replays_the_sequence_to_name_the_layer(tmp_path):
    """A stateful model with a corrupted time weight of filter 0 at memory slot 6 of 8 (layer 0, an
    SVDF): the slot holds the initial 0 at step 0, so step 0 matches TFLM and step 1 does not; the
    per-layer readback resets the board and replays step 0 before probing step 1, and names layer 0."""
    from mcuforge.codegen.emit import emit

    compiled = compile_model(MODELS / "svdf_kws_two_layers.tflite", Options(targets=("c",)))
    out = emit(compiled, tmp_path / "model", "model")
    weights = out / "model_weights.c"
    text = weights.read_text()
    body = text.index("{", text.index("model_l0_arg2[")) + 1
    values = text[body:text.index("}", body)].split(",")
    values[6] = " 32767" if values[6].strip() != "32767" else " -32768"
    weights.write_text(text[:body] + ",".join(values) + text[text.index("}", body):])
    rng = np.random.default_rng(3)
    sets = [random_inputs(compiled.imported, rng) for _ in range(3)]
    results = verify_board(compiled, sets, "mps2-an386", isolate=False, src_dir=out, steps=3)
    assert [r.ok for r in results] == [True, False, False]
    assert results[1].first_layer is not None and results[1].first_layer.startswith("layer 0 (#0 SVDF")


def test_constants_that_overflow_the_itcm_run_from_the_weights_region():
    """MobileNetV2 0.35 (uint8 I/O) has more constants than the M55 board's 512 KiB ITCM holds: the
    build links them into the board's weights region (SRAM) instead, and the model runs bit-exact."""
    board = load_board("mps3-an547")
    compiled = compile_model(MODELS.parent / "keras" / "mobilenet_v2_035_96_u8.tflite", Options(isa=board.isa))
    consts = sum(np.asarray(a).nbytes for b in compiled.program.bindings for a in b.kernel.constants.values())
    assert consts > board.flash.size and board.weights is not None
    sets = [random_inputs(compiled.imported, np.random.default_rng(3))]
    results = verify_board(compiled, sets, board.name, isolate=False)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad)
