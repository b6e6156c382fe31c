"""uint8 model inputs and outputs: QUANTIZE uint8 -> int8 (camera pixels) and int8 -> uint8, and
DEQUANTIZE from uint8, bit-exact against the TFLite Micro interpreter (exhaustive over the 256 input
values, many quantization draws, TFLM's x ^ 0x80 fast path), in the numpy reference and in the
generated C on the host; the pairs TFLM refuses are refused; uint8 I/O through the command line
(`verify --input`, `compile`'s header) and on QEMU (slow).

TFLM (quantize.cc) requantizes uint8 <-> int8 with the general Requantize, except that with equal
scales and zero points 128 apart it flips the top bit; it has no uint8 -> uint8, uint8 -> int16 or
float32 -> uint8 QUANTIZE (checked below), and (this tflite-micro) dequantizes uint8.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from conftest import FIXTURES

from devtools.tflite_writer import ModelWriter
from mcuforge.driver import Options, compile_model
from mcuforge.frontend.importer import import_graph
from mcuforge.frontend.reader import read_tflite_bytes
from mcuforge.oracle import OracleError, run_tflm
from mcuforge.verify import random_inputs, verify_board, verify_host, verify_reference

BYTES = np.arange(256).reshape(1, 256)
ALL = {"uint8": BYTES.astype(np.uint8), "int8": (BYTES - 128).astype(np.int8)}


def _scale(rng, lo=-4.0, hi=0.0) -> float:
    return float(np.float32(2.0 ** rng.uniform(lo, hi)))


def quantize_model(cases) -> bytes:
    """One independent QUANTIZE (or DEQUANTIZE) per case (op, in dtype, (s, zp), out dtype, (s, zp)),
    each a model input and output of 256 elements."""
    w = ModelWriter()
    ins, outs = [], []
    for k, (op, src, (si, zi), dst, q_out) in enumerate(cases):
        x = w.tensor((1, 256), src, scale=si, zero_point=zi, name=f"x{k}")
        y = w.tensor((1, 256), dst, name=f"y{k}", **({} if q_out is None else {"scale": q_out[0], "zero_point": q_out[1]}))
        w.op(op, [x], [y])
        ins.append(x)
        outs.append(y)
    return w.finish(ins, outs)


def check_everywhere(path, blob: bytes, sets) -> list:
    """Reference (with intermediates) and generated C on the host against TFLM; TFLM's outputs."""
    compiled = compile_model(path, Options(targets=("c",)))
    bad = [str(m) for r in verify_reference(compiled.imported, blob, sets, intermediates=True, isolate=False)
           for m in r.mismatches]
    bad += [str(m) for r in verify_host(compiled, sets, isolate=False) for m in r.mismatches]
    assert not bad, "\n".join(bad[:5])
    return compiled


def _random_cases(rng, n):
    cases = []
    for k in range(n):
        if k % 2 == 0:  # uint8 -> int8: the input side, any zero point in [0, 255]
            cases.append(("QUANTIZE", "uint8", (_scale(rng), int(rng.integers(0, 256))), "int8",
                          (_scale(rng), int(rng.integers(-128, 128)))))
        else:  # int8 -> uint8: the output side
            cases.append(("QUANTIZE", "int8", (_scale(rng), int(rng.integers(-128, 128))), "uint8",
                          (_scale(rng), int(rng.integers(0, 256)))))
    return cases


def test_quantize_uint8_int8_exhaustive(tmp_path):
    """Random scales and zero points in both directions (scale ratios from 1/16 to 16, so outputs
    saturate too), and the export's common cases: equal scales with zero points 128 apart (TFLM's
    bit flip), equal scales with other zero points, and 1/255 pixels to a [-1, 1] int8."""
    rng = np.random.default_rng(80)
    s = _scale(rng)
    cases = _random_cases(rng, 16) + [
        ("QUANTIZE", "uint8", (s, 128), "int8", (s, 0)),  # flip
        ("QUANTIZE", "uint8", (s, 0), "int8", (s, -128)),  # flip
        ("QUANTIZE", "int8", (s, -1), "uint8", (s, 127)),  # flip
        ("QUANTIZE", "uint8", (s, 128), "int8", (s, 1)),  # equal scales, not 128 apart: general path
        ("QUANTIZE", "int8", (s, 0), "uint8", (s, 100)),
        ("QUANTIZE", "uint8", (float(np.float32(1 / 255)), 0), "int8", (float(np.float32(2 / 255)), 0)),
    ]
    blob = quantize_model(cases)
    path = tmp_path / "q.tflite"
    path.write_bytes(blob)
    sets = [[ALL[c[1]] for c in cases]]
    compiled = check_everywhere(path, blob, sets)
    functions = sorted(kc.function for kc in compiled.kernels.values())
    assert functions.count("mcu_quantize_u8_xor") == 2 and functions.count("mcu_quantize_s8_u8_xor") == 1, functions
    assert functions.count("mcu_quantize_u8") == 8 + 2 and functions.count("mcu_quantize_s8_u8") == 8 + 1, functions
    ((theirs, _),) = run_tflm(blob, sets, isolate=False)
    for k in (16, 17, 18):  # the flip cases: TFLM's output is the input byte with its top bit flipped
        assert (theirs[k].view(np.uint8) == (ALL[cases[k][1]].view(np.uint8) ^ 0x80)).all()
    saturated = sum(int(((t == np.iinfo(t.dtype).min) | (t == np.iinfo(t.dtype).max)).sum()) for t in theirs[:16])
    assert saturated > 100 and all(len(np.unique(t)) > 8 for t in theirs), "degenerate draws"


def test_dequantize_uint8_exhaustive(tmp_path):
    rng = np.random.default_rng(81)
    cases = [("DEQUANTIZE", "uint8", (_scale(rng, -8, 2), int(rng.integers(0, 256))), "float32", None)
             for _ in range(6)]
    blob = quantize_model(cases)
    path = tmp_path / "dq.tflite"
    path.write_bytes(blob)
    compiled = check_everywhere(path, blob, [[ALL["uint8"]] * len(cases)])
    assert {kc.function for kc in compiled.kernels.values()} == {"mcu_dequantize_u8"}


@pytest.mark.parametrize("src, dst", [("uint8", "uint8"), ("uint8", "int16"), ("int16", "uint8"),
                                      ("float32", "uint8")])
def test_quantize_pairs_tflm_refuses_are_refused(src, dst):
    q_in = (0.5, 0 if src == "float32" else 10)
    blob = quantize_model([("QUANTIZE", src, q_in, dst, (0.25, 3))])
    res = import_graph(read_tflite_bytes(blob))
    assert len(res.problems) == 1 and "uint8 to or from int8" in res.problems[0][2], res.problems
    assert f"({src} to {dst})" in res.problems[0][2]
    x = np.zeros((1, 256), dtype=src)
    with pytest.raises(OracleError):
        run_tflm(blob, [[x]])


def uint8_model(tmp_path):
    """uint8 pixels -> QUANTIZE -> int8 ... a 3x3 CONV_2D -> QUANTIZE -> uint8 scores, shape
    signatures with a dynamic batch as Keras exports them."""
    rng = np.random.default_rng(82)
    w = ModelWriter()
    x = w.tensor((1, 6, 6, 3), "uint8", scale=1 / 255, zero_point=0, name="pixels", signature=(-1, 6, 6, 3))
    xq = w.tensor((1, 6, 6, 3), scale=1 / 255, zero_point=-128, signature=(-1, 6, 6, 3))
    k = w.tensor((4, 3, 3, 3), data=rng.integers(-127, 128, (4, 3, 3, 3)), scale=[0.004, 0.006, 0.005, 0.003])
    b = w.tensor((4,), "int32", data=rng.integers(-300, 300, 4), scale=[0.004 / 255, 0.006 / 255, 0.005 / 255,
                                                                         0.003 / 255])
    y = w.tensor((1, 6, 6, 4), scale=0.02, zero_point=-10, signature=(-1, 6, 6, 4))
    out = w.tensor((1, 6, 6, 4), "uint8", scale=0.02, zero_point=118, name="scores", signature=(-1, 6, 6, 4))
    w.op("QUANTIZE", [x], [xq])
    w.op("CONV_2D", [xq, k, b], [y], Padding="SAME", StrideW=1, StrideH=1)
    w.op("QUANTIZE", [y], [out])
    path = tmp_path / "u8.tflite"
    path.write_bytes(w.finish([x], [out]))
    return path


def test_uint8_model_through_the_command_line(tmp_path, cli):
    path = uint8_model(tmp_path)
    pixels = np.random.default_rng(83).integers(0, 256, (1, 6, 6, 3)).astype(np.uint8)
    np.save(tmp_path / "x.npy", pixels)
    proc = cli("verify", path, "--on", "host", "--input", tmp_path / "x.npy")
    assert proc.returncode == 0 and "PASS" in proc.stdout, proc.stdout + proc.stderr
    np.save(tmp_path / "bad.npy", pixels.astype(np.int8))
    proc = cli("verify", path, "--input", tmp_path / "bad.npy")
    assert proc.returncode == 2 and "must be uint8, got int8" in proc.stderr, proc.stderr
    proc = cli("compile", path, "-o", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    header = (tmp_path / "out" / "model.h").read_text()
    assert "input 0 'pixels': uint8[1x6x6x3]" in header and "output 0 'scores': uint8[1x6x6x4]" in header


def test_random_inputs_cover_the_uint8_range(tmp_path):
    compiled = compile_model(uint8_model(tmp_path))
    (x,) = random_inputs(compiled.imported, np.random.default_rng(0))
    assert x.dtype == np.uint8 and x.min() < 10 and x.max() > 245


TOOLS = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm", "cmake") if shutil.which(t) is None]


@pytest.mark.slow
@pytest.mark.skipif(bool(TOOLS) and os.environ.get("CI") != "true", reason=f"needs {', '.join(TOOLS)}")
def test_uint8_keras_model_on_qemu():
    """A Keras export with uint8 I/O and a dynamic batch (shape chains folded) on mps2-an386."""
    compiled = compile_model(FIXTURES / "keras" / "resnet8_cifar_u8.tflite")
    rng = np.random.default_rng(84)
    sets = [random_inputs(compiled.imported, rng) for _ in range(2)]
    results = verify_board(compiled, sets, "mps2-an386", isolate=False)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad)
