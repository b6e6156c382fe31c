"""The cmsis-nn int8 TRANSPOSE_CONV (mcu_cmsis_transpose_conv_s8) against the TFLite Micro interpreter:
its kernel model (verify --on reference), the C on the host with the plain path and with the DSP
path (instructions emulated), and, as slow tests, on QEMU with the real DSP instructions (Cortex-M4)
and Helium (Cortex-M55). One model holds a layer per geometry: strides 1, 2, 3 and 2x1, kernels 2
to 5 (a multiple of the stride or not, smaller than the stride: bias-only pixels), SAME and VALID
with output sizes that leave bias-only rows, in_c odd / a multiple of 4 / of 16, out_c odd and
multiples of 4, with and without bias, per-channel and per-tensor scales, every fused activation,
a batch of 2, and the Keras decoder fixtures (int8 and uint8 I/O)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from devtools.tflite_writer import ModelWriter
from mcuforge.driver import compile_model
from mcuforge.verify import verify_board, verify_host, verify_program

KERAS = Path(__file__).resolve().parents[1] / "fixtures" / "keras"
FIXTURES = [KERAS / "tconv_decoder_dynbatch_i8.tflite", KERAS / "tconv_decoder_dynbatch_u8.tflite"]  # int8 / uint8 I/O
ACT = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}
ACC_STD = 74.0 * 73.0  # std of (uniform int8 input - zp) times std of uniform int8 weights
# (batch, hw, in_c, out_c, kernel, stride, padding, out_hw, activation, per_channel, bias)
CASES = [
    (1, (8, 8), 32, 16, (3, 3), (2, 2), "SAME", (16, 16), "RELU", True, True),  # the decoder's first layer
    (1, (6, 6), 16, 8, (3, 3), (2, 2), "SAME", (12, 12), "NONE", True, True),
    (1, (5, 5), 4, 6, (3, 3), (2, 2), "SAME", (9, 9), "RELU", True, True),  # odd output: short quads
    (1, (5, 5), 4, 3, (3, 3), (2, 2), "VALID", (12, 12), "NONE", True, True),  # last row and column: bias only
    (1, (5, 6), 3, 5, (3, 3), (1, 1), "SAME", (5, 6), "RELU_N1_TO_1", False, True),
    (1, (4, 6), 2, 3, (4, 4), (2, 2), "SAME", (8, 12), "NONE", True, True),  # even kernel
    (1, (4, 3), 2, 3, (4, 4), (3, 3), "VALID", (13, 10), "NONE", True, True),
    (1, (3, 4), 3, 2, (2, 2), (3, 3), "SAME", (9, 12), "NONE", True, True),  # kernel < stride: gaps
    (1, (4, 4), 3, 4, (5, 3), (2, 1), "SAME", (8, 4), "RELU", True, False),
    (1, (3, 5), 20, 17, (5, 5), (2, 2), "SAME", (6, 10), "RELU6", True, True),
    (1, (4, 4), 48, 4, (2, 2), (2, 2), "VALID", (8, 8), "NONE", False, False),
    (1, (3, 3), 1, 1, (3, 3), (3, 3), "VALID", (9, 9), "NONE", True, True),
    (2, (3, 3), 5, 6, (3, 3), (2, 2), "SAME", (6, 6), "NONE", True, True),
    (1, (7, 5), 33, 9, (3, 3), (1, 1), "SAME", (7, 5), "RELU", True, True),
]


def build(cases, seed: int = 11) -> tuple[bytes, list[np.ndarray]]:
    """One model with a TRANSPOSE_CONV per case, each on its own input; one input set."""
    w, ins, outs, data = ModelWriter(), [], [], []
    rng = np.random.default_rng(seed)
    for k, (n, (h, wd), ic, oc, (kh, kw), (sh, sw), padding, out_hw, act, per_channel, bias) in enumerate(cases):
        in_s = 0.03
        taps = ic * max(1, math.ceil(kh / sh) * math.ceil(kw / sw))
        base = 3.0 / (in_s * ACC_STD * math.sqrt(taps))
        ws = list(base * rng.uniform(0.5, 1.5, oc)) if per_channel else [base]
        shape = w.tensor((4,), "int32", data=np.array((n, *out_hw, oc), np.int32), name=f"shape{k}")
        wt = w.tensor((oc, kh, kw, ic), "int8", ws, axis=0, data=rng.integers(-127, 128, (oc, kh, kw, ic)),
                      name=f"w{k}")
        x = w.tensor((n, h, wd, ic), "int8", in_s, int(rng.integers(-128, 128)), name=f"x{k}")
        inputs = [shape, wt, x]
        if bias:
            b = np.round(rng.normal(0.0, ACC_STD * math.sqrt(taps) / 2, oc)).astype(np.int32)
            inputs.append(w.tensor((oc,), "int32", [in_s * s for s in np.resize(ws, oc)], data=b, name=f"b{k}"))
        y = w.tensor((n, *out_hw, oc), "int8", 0.06 * math.sqrt(ic), int(rng.integers(-20, 21)), name=f"y{k}")
        w.op("TRANSPOSE_CONV", inputs, [y], Padding=0 if padding == "SAME" else 1, StrideW=sw, StrideH=sh,
             FusedActivationFunction=ACT[act])
        ins.append(x)
        outs.append(y)
        data.append(rng.integers(-128, 128, (n, h, wd, ic)).astype(np.int8))
    return w.finish(ins, outs), data


def compiled_cases(tmp_path):
    blob, data = build(CASES)
    path = tmp_path / "tconv.tflite"
    path.write_bytes(blob)
    compiled = compile_model(path)
    kernels = [b.kernel.function for b in compiled.program.bindings]
    assert kernels == ["mcu_cmsis_transpose_conv_s8"] * len(CASES), kernels
    return compiled, data


def fixture_inputs(compiled, seed: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for p in compiled.imported.main.params:
        info = np.iinfo(p.type.np_dtype)
        out.append(rng.integers(info.min, info.max, p.type.shape, endpoint=True).astype(p.type.np_dtype))
    return out


def test_kernel_models_equal_tflm(tmp_path):
    compiled, data = compiled_cases(tmp_path)
    for res in verify_program(compiled, [data], isolate=False):
        assert res.ok, [str(m) for m in res.mismatches][:5]


def test_cases_reach_every_clamp_and_odd_shape():
    """Not vacuous: every activation, odd in_c and out_c, batch 2 and a stride larger than the kernel."""
    assert {c[8] for c in CASES} == set(ACT)
    assert any(c[2] % 4 for c in CASES) and any(c[3] % 2 for c in CASES) and any(c[0] == 2 for c in CASES)
    assert any(c[4][0] < c[5][0] for c in CASES) and any(not c[10] for c in CASES)


@pytest.mark.parametrize("dsp", [False, True], ids=["plain", "dsp"])
def test_c_kernel_equals_tflm_on_host(tmp_path, dsp):
    compiled, data = compiled_cases(tmp_path)
    (res,) = verify_host(compiled, [data], isolate=False, dsp=dsp)
    assert res.ok, [str(m) for m in res.mismatches][:5]


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.stem)
@pytest.mark.parametrize("dsp", [False, True], ids=["plain", "dsp"])
def test_keras_decoder_fixtures_on_host(dsp, fixture):
    compiled = compile_model(fixture)
    assert [b.kernel.function for b in compiled.program.bindings].count("mcu_cmsis_transpose_conv_s8") == 2
    (res,) = verify_host(compiled, [fixture_inputs(compiled)], isolate=False, dsp=dsp)
    assert res.ok, [str(m) for m in res.mismatches][:5]


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_c_kernel_equals_tflm_on_qemu(tmp_path, board):
    compiled, data = compiled_cases(tmp_path)
    (res,) = verify_board(compiled, [data], board)
    assert res.ok, [str(m) for m in res.mismatches][:5]
    for path in FIXTURES:
        fixture = compile_model(path)
        (res,) = verify_board(fixture, [fixture_inputs(fixture)], board)
        assert res.ok, (path.name, [str(m) for m in res.mismatches][:5])
