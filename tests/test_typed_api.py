"""The typed API of the generated header: typed I/O pointers, shape/dtype macros, float quantize /
dequantize helpers bit-exact with TFLite Micro's QUANTIZE / DEQUANTIZE kernels (run in the oracle
on the same floats), run_io on buffers of the user's own, and float arrays for run/verify --input."""

import re
import subprocess

import numpy as np
import pytest
from conftest import MLPERF_MODELS
from devtools.tflite_writer import ModelWriter

from mcuforge.codegen.emit import emit
from mcuforge.driver import compile_model
from mcuforge.host import CFLAGS
from mcuforge.ir.ops.quantize import affine_quantize
from mcuforge.oracle import run_tflm

N = 256
S_IN, ZP_IN = 0.0371, -7      # the model's input quantization
S_OUT, ZP_OUT = 0.00513, 11   # and its output's


def relu_model() -> bytes:
    """int8[1, 256] -> RELU -> int8[1, 256], input and output quantized differently."""
    w = ModelWriter()
    x = w.tensor((1, N), scale=S_IN, zero_point=ZP_IN, name="x")
    y = w.tensor((1, N), scale=S_OUT, zero_point=ZP_OUT, name="y")
    w.op("RELU", [x], [y])
    return w.finish([x], [y])


def quantize_model(scale: float, zp: int) -> bytes:
    w = ModelWriter()
    x = w.tensor((1, N), dtype="float32", name="f")
    q = w.tensor((1, N), scale=scale, zero_point=zp, name="q")
    w.op("QUANTIZE", [x], [q])
    return w.finish([x], [q])


def dequantize_model(scale: float, zp: int) -> bytes:
    w = ModelWriter()
    q = w.tensor((1, N), scale=scale, zero_point=zp, name="q")
    f = w.tensor((1, N), dtype="float32", name="f")
    w.op("DEQUANTIZE", [q], [f])
    return w.finish([q], [f])


def edge_floats() -> np.ndarray:
    """Floats where QUANTIZE is easy to get wrong: exact halves of the scale (x / scale in float32
    lands on k + 0.5), their float neighbours, zeros of both signs, subnormals, saturating values,
    and random ones. (NaN, infinities and |x / scale| >= 2^31 are undefined behaviour in TFLM.)"""
    s = np.float32(S_IN)
    k = np.arange(-70, 70, dtype=np.float32)
    halves = (k + np.float32(0.5)) * s
    exact = halves[(halves / s) == (k + np.float32(0.5))][:60]
    near = np.concatenate([np.nextafter(exact, np.float32(np.inf)), np.nextafter(exact, np.float32(-np.inf))])
    special = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-40, 4.7, -4.7, 1e6, -1e6, 3e7, -3e7], dtype=np.float32)
    rng = np.random.default_rng(5)
    rand = (rng.standard_normal(N) * 3).astype(np.float32)
    return np.concatenate([exact, near, special, rand])[:N].astype(np.float32)


MAIN = r"""
#include <stdio.h>
#include <string.h>
#include "m.h"
_Static_assert(M_INPUT0_DTYPE == MCUFORGE_DTYPE_INT8 && M_INPUT0_DIMS == 2 && M_INPUT0_COUNT == 256, "macros");
int main(void) {
    static const int shape[M_INPUT0_DIMS] = M_INPUT0_SHAPE;
    static float x[M_INPUT0_COUNT], y[M_OUTPUT0_COUNT];
    static int8_t q[M_OUTPUT0_COUNT], in[M_INPUT0_COUNT], out[M_OUTPUT0_COUNT];
    if (shape[0] != 1 || shape[1] != 256) return 3;
    if (fread(x, sizeof x, 1, stdin) != 1 || fread(q, sizeof q, 1, stdin) != 1) return 1;
    if (m_quantize_input0(x) != M_OK) return 2;
    int8_t *typed = m_input0();                      /* typed: int8_t *, no cast */
    fwrite(typed, M_INPUT0_SIZE, 1, stdout);
    memcpy(in, typed, sizeof in);                    /* before the output is written: it may share bytes */
    memcpy((void *)m_output0(), q, sizeof q);        /* every int8 value through the dequantize helper */
    if (m_dequantize_output0(y) != M_OK) return 2;
    fwrite(y, sizeof y, 1, stdout);
    /* run_io: user buffers; the arena's input is clobbered first so only the copy can be right */
    memset(m_input0(), 0x55, M_INPUT0_SIZE);
    if (m_run_io(in, out) != M_OK) return 2;
    fwrite(out, sizeof out, 1, stdout);
    fwrite(in, sizeof in, 1, stdout);                /* unchanged */
    return 0;
}
"""


@pytest.fixture(scope="module")
def helpers_exe(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("typed")
    (tmp / "relu.tflite").write_bytes(relu_model())
    compiled = compile_model(tmp / "relu.tflite")
    out = emit(compiled, tmp / "m", "m", "relu.tflite")
    (tmp / "main.c").write_text(MAIN)
    exe = tmp / "typed"
    sources = [str(p) for p in sorted(out.glob("*.c")) + sorted((out / "kernels").glob("*.c"))]
    subprocess.run(["gcc", *CFLAGS, "-I", str(out), "-I", str(out / "kernels"), *sources, str(tmp / "main.c"),
                    "-o", str(exe), "-lm"], check=True)
    return exe, compiled, out


def run_helpers(exe, x: np.ndarray, q: np.ndarray):
    proc = subprocess.run([str(exe)], input=x.tobytes() + q.tobytes(), capture_output=True, check=True)
    b = proc.stdout
    quantized = np.frombuffer(b[:N], np.int8)
    floats = np.frombuffer(b[N:N + 4 * N], np.float32)
    out, kept = np.frombuffer(b[5 * N:6 * N], np.int8), np.frombuffer(b[6 * N:7 * N], np.int8)
    return quantized, floats, out, kept


def test_quantize_and_dequantize_helpers_are_bit_exact_with_tflm(helpers_exe):
    exe, compiled, _ = helpers_exe
    x = edge_floats()
    q = np.arange(-128, 128, dtype=np.int8)
    quantized, floats, out, kept = run_helpers(exe, x, q)
    want_q = run_tflm(quantize_model(S_IN, ZP_IN), [[x.reshape(1, N)]])[0][0][0].reshape(-1)
    bad = np.flatnonzero(quantized != want_q)
    assert not bad.size, f"QUANTIZE differs at {bad[:8]}: x={x[bad[:8]]} got {quantized[bad[:8]]} want {want_q[bad[:8]]}"
    assert np.array_equal(affine_quantize(x, S_IN, ZP_IN, "int8"), want_q)  # run/verify --input's arithmetic
    want_f = run_tflm(dequantize_model(S_OUT, ZP_OUT), [[q.reshape(1, N)]])[0][0][0].reshape(-1)
    assert want_f.dtype == np.float32 and np.array_equal(floats.view(np.uint32), want_f.view(np.uint32))
    # run_io: the model on the user's buffers, as TFLM runs it; the input buffer left alone
    want_out = run_tflm(compiled.blob, [[quantized.reshape(1, N)]])[0][0][0].reshape(-1)
    assert np.array_equal(out, want_out) and np.array_equal(kept, quantized)


def test_quantize_helper_nan_and_infinities(helpers_exe):
    """Where TFLM's float -> int conversion is undefined: NaN gives the zero point, infinities and
    huge values saturate (mcu_quantize_f32's portable semantics)."""
    exe, _, _ = helpers_exe
    x = np.zeros(N, np.float32)
    x[:5] = [np.nan, np.inf, -np.inf, 3e38, -3e38]
    quantized = run_helpers(exe, x, np.zeros(N, np.int8))[0]
    assert list(quantized[:5]) == [ZP_IN, 127, -128, 127, -128]
    with np.errstate(over="ignore"):  # 3e38 / scale overflows to infinity, which saturates
        assert list(affine_quantize(x[:5], S_IN, ZP_IN, "int8")) == [ZP_IN, 127, -128, 127, -128]


def test_header_macros_and_typed_pointers(tmp_path):
    c = compile_model(MLPERF_MODELS["kws"])
    out = emit(c, tmp_path / "kws", "kws", "kws_ref_model.tflite")
    h = (out / "kws.h").read_text()
    for line in ("#define KWS_INPUT0_SHAPE { 1, 49, 10, 1 }", "#define KWS_INPUT0_DIMS 4",
                 "#define KWS_INPUT0_DTYPE MCUFORGE_DTYPE_INT8", "#define KWS_OUTPUT0_COUNT 12",
                 "static inline int8_t *kws_input0(void)", "static inline const int8_t *kws_output0(void)",
                 "int kws_quantize_input0(const float *x);", "int kws_dequantize_output0(float *y);",
                 "int kws_run_io(const int8_t *input0, int8_t *output0);", "KWS_ERR_NO_ARENA = -1",
                 '#define KWS_MCUFORGE_VERSION "'):
        assert line in h, line
    import hashlib

    assert f'#define KWS_MODEL_SHA256 "{hashlib.sha256(c.blob).hexdigest()}"' in h


def test_float_io_model_has_float_pointers_and_no_helpers(tmp_path):
    from conftest import MODELS

    out = emit(compile_model(MODELS / "mix_float_io_cnn.tflite"), tmp_path / "f", "f")
    h = (out / "f.h").read_text()
    assert "static inline float *f_input0(void)" in h and "#define F_INPUT0_DTYPE MCUFORGE_DTYPE_FLOAT32" in h
    assert "quantize_input0" not in h and "mcuforge_quantize.h" not in (out / "f.c").read_text()


def test_no_arena_is_a_named_error(helpers_exe, tmp_path):
    """Built with -DM_EXTERNAL_ARENA and no set_arena: every call says M_ERR_NO_ARENA."""
    _, _, out = helpers_exe
    main = tmp_path / "main.c"
    main.write_text('#include "m.h"\nint main(void) { static float x[M_INPUT0_COUNT]; static int8_t i[256], o[256];\n'
                    "return !(m_run() == M_ERR_NO_ARENA && m_quantize_input0(x) == M_ERR_NO_ARENA &&\n"
                    "m_dequantize_output0(x) == M_ERR_NO_ARENA && m_run_io(i, o) == M_ERR_NO_ARENA && !m_input0()); }\n")
    sources = [str(p) for p in sorted(out.glob("*.c")) + sorted((out / "kernels").glob("*.c"))]
    exe = tmp_path / "noarena"
    subprocess.run(["gcc", *CFLAGS, "-DM_EXTERNAL_ARENA", "-I", str(out), "-I", str(out / "kernels"), *sources,
                    str(main), "-o", str(exe), "-lm"], check=True)
    assert subprocess.run([str(exe)]).returncode == 0


def test_verify_and_run_take_float_inputs(cli, tmp_path):
    """A float .npy for an int8 input is quantized with the input's scale and zero point (the same
    arithmetic as QUANTIZE): verify on the host is bit-exact with TFLM fed the quantized bytes."""
    (tmp_path / "relu.tflite").write_bytes(relu_model())
    x = edge_floats().reshape(1, N)
    np.save(tmp_path / "x.npy", x.astype(np.float64))  # float64 is taken as float32 first
    proc = cli("verify", tmp_path / "relu.tflite", "--on", "host", "--input", tmp_path / "x.npy")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"input 0 'x': float64 values quantized with scale 0\.0370999.* and zero point -7 to int8", proc.stderr)
    want_q = run_tflm(quantize_model(S_IN, ZP_IN), [[x]])[0][0][0]
    assert np.array_equal(affine_quantize(x, S_IN, ZP_IN, "int8"), want_q)
