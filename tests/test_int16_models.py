"""Whole 16x8 models against TFLite Micro: a mixed model (float32 I/O, int8 and int16 parts joined by
QUANTIZE), and the Keras-made 16x8 models of tests/fixtures/keras that mcuforge accepts (the manifest's
`mcuforge_blockers`, which tools/check_keras_models.py keeps current), on the host (portable and
cmsis-nn kernels, the DSP paths emulated) and, as slow tests, on QEMU (Cortex-M4 and Cortex-M55)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import FIXTURES

from devtools.tflite_writer import ModelWriter
from mcuforge.driver import Options, compile_model
from mcuforge.verify import random_inputs, verify_host

KERAS = FIXTURES / "keras"
ACCEPTED_16X8 = [e["name"] for e in json.loads((KERAS / "MANIFEST.json").read_text())
                 if e["quantization"].startswith("int16x8") and e["mcuforge_blockers"] == []]


def mixed_model() -> bytes:
    """float32 -> int8 conv -> int16 conv, LOGISTIC mask, MUL -> int8 dense -> SOFTMAX -> float32; the
    type changes are QUANTIZE operators, as a user joins an int8 front end to a 16x8 back end."""
    rng = np.random.default_rng(11)
    w = ModelWriter()
    x = w.tensor((1, 6, 6, 2), "float32", name="x")
    q8 = w.tensor((1, 6, 6, 2), "int8", scale=0.02, zero_point=-3)
    w.op("QUANTIZE", [x], [q8])
    k8 = w.tensor((4, 3, 3, 2), "int8", data=rng.integers(-127, 128, (4, 3, 3, 2)), scale=[0.01, 0.02, 0.015, 0.01])
    b8 = w.tensor((4,), "int32", data=rng.integers(-500, 500, 4), scale=[2e-4, 4e-4, 3e-4, 2e-4])
    c8 = w.tensor((1, 6, 6, 4), "int8", scale=0.05, zero_point=5)
    w.op("CONV_2D", [q8, k8, b8], [c8], Padding="SAME", StrideW=1, StrideH=1, FusedActivationFunction="RELU")
    c16 = w.tensor((1, 6, 6, 4), "int16", scale=2e-4)
    w.op("QUANTIZE", [c8], [c16])
    k16 = w.tensor((4, 1, 1, 4), "int8", data=rng.integers(-127, 128, (4, 1, 1, 4)), scale=0.01)
    b16 = w.tensor((4,), "int64", data=rng.integers(-20000, 20000, 4), scale=2e-6)
    d16 = w.tensor((1, 6, 6, 4), "int16", scale=1e-3)
    w.op("CONV_2D", [c16, k16, b16], [d16], Padding="SAME", StrideW=1, StrideH=1)
    mask = w.tensor((1, 6, 6, 4), "int16", scale=2 ** -15)
    w.op("LOGISTIC", [d16], [mask])
    prod = w.tensor((1, 6, 6, 4), "int16", scale=1e-3)
    w.op("MUL", [mask, d16], [prod])
    p8 = w.tensor((1, 6, 6, 4), "int8", scale=0.03, zero_point=2)
    w.op("QUANTIZE", [prod], [p8])
    flat = w.tensor((1, 144), "int8", scale=0.03, zero_point=2)
    shape = w.tensor((2,), "int32", data=np.array([1, 144]))
    w.op("RESHAPE", [p8, shape], [flat], NewShape=[1, 144])
    kf = w.tensor((5, 144), "int8", data=rng.integers(-127, 128, (5, 144)), scale=0.01)
    logits = w.tensor((1, 5), "int8", scale=0.4, zero_point=0)
    w.op("FULLY_CONNECTED", [flat, kf], [logits])
    probs = w.tensor((1, 5), "int8", scale=1 / 256, zero_point=-128)
    w.op("SOFTMAX", [logits], [probs], Beta=1.0)
    y = w.tensor((1, 5), "float32", name="y")
    w.op("DEQUANTIZE", [probs], [y])
    return w.finish([x], [y])


@pytest.mark.parametrize("targets", [("c",), ("cmsis-nn", "c")], ids=["portable", "cmsis-nn"])
def test_mixed_int8_int16_model(tmp_path, targets):
    path = tmp_path / "mixed.tflite"
    path.write_bytes(mixed_model())
    compiled = compile_model(path, Options(targets=targets))
    dtypes = {b.kernel.output.dtype for b in compiled.program.bindings}
    assert {"int8", "int16", "float32"} <= dtypes
    rng = np.random.default_rng(0)
    batches = [[rng.uniform(-2.5, 2.5, (1, 6, 6, 2)).astype(np.float32)] for _ in range(4)]
    for res in verify_host(compiled, batches, isolate=False):
        assert res.ok, [str(m) for m in res.mismatches][:5]


def test_keras_16x8_models_are_listed():
    """The accepted list is not empty (the manifest records what mcuforge refuses: when a 16x8 model's
    last blocker goes, it joins the tests below)."""
    assert "svdf_style_kws_i16" in ACCEPTED_16X8


@pytest.mark.parametrize("dsp", [False, True], ids=["plain", "dsp"])
@pytest.mark.parametrize("name", ACCEPTED_16X8)
def test_keras_16x8_on_host(name, dsp):
    compiled = compile_model(KERAS / f"{name}.tflite")
    rng = np.random.default_rng(1)
    batches = [random_inputs(compiled.module, rng) for _ in range(4)]
    for res in verify_host(compiled, batches, isolate=False, dsp=dsp):
        assert res.ok, [str(m) for m in res.mismatches][:5]


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
@pytest.mark.parametrize("name", ACCEPTED_16X8)
def test_keras_16x8_on_qemu(name, board, cli):
    proc = cli("verify", KERAS / f"{name}.tflite", "--on", board, "-n", "2")
    assert proc.returncode == 0 and "verify PASS" in proc.stdout, (proc.stdout[-1000:], proc.stderr[-2000:])
