"""ABS, NEG, SQRT, RSQRT, EXP, LOG, ELU, FLOOR, ROUND against TFLite Micro: the numpy reference and
the portable C. int8 (ABS, RSQRT, ELU: the only int8 kernels TFLM has) exhaustively over the 256
input values under many quantizations (ABS with equal scales too; RSQRT on the inputs at or above
the zero point, TFLM's domain); float32 (all nine) on the IEEE specials, halves and values just
beside them, subnormals and random values; and the rules."""

from __future__ import annotations

import numpy as np
import pytest
from elementwise_cases import ALL_INT8, F32_SPECIALS, Model, check, problems, scale, zero_point

FLOAT_OPS = ("ABS", "NEG", "SQRT", "RSQRT", "EXP", "LOG", "ELU", "FLOOR", "ROUND")


def float_inputs(rng) -> np.ndarray:
    halves = np.arange(-8, 8, dtype=np.float32) + np.float32(0.5)
    beside = np.concatenate([np.nextafter(halves, np.float32(np.inf)), np.nextafter(halves, np.float32(-np.inf))])
    small = np.array([-0.3, -0.5, -1e-30, 1e-40, -1e-40, 8388608.5, 8388607.5, -8388607.5, 1e30, -88.7, 88.8,
                      -103.9, 0.6931472], dtype=np.float32)
    random = np.concatenate([rng.normal(0, 3, 200), rng.uniform(-100, 100, 200)]).astype(np.float32)
    return np.concatenate([F32_SPECIALS, halves, beside, small, random]).astype(np.float32).reshape(1, -1)


@pytest.mark.parametrize("op", ["ABS", "ELU"])
def test_int8_exhaustive(tmp_path, op):
    rng = np.random.default_rng(71 + len(op))
    x = ALL_INT8.reshape(1, 256)
    m = Model()
    for k in range(24):
        qi, qo = (scale(rng, -3, 0.5), zero_point(rng)), (scale(rng, -3, 0.5), zero_point(rng))
        if k == 0 and op == "ABS":
            qo = (qi[0], qo[1])  # equal scales: TFLM's path without rescaling
        m.op(op, [m.input(x, quant=qi)], x.shape, "int8", quant=qo)
    check(tmp_path, m)


def test_rsqrt_int8(tmp_path):
    """Every input value from the zero point up (TFLM refuses to run on the values below it)."""
    rng = np.random.default_rng(73)
    m = Model()
    for k in range(24):
        zp = -128 if k == 0 else zero_point(rng)
        x = np.maximum(ALL_INT8, np.int8(zp)).reshape(1, 256)
        qi, qo = (scale(rng, -3, 0.5), zp), (scale(rng, -3, 0.5), zero_point(rng))
        m.op("RSQRT", [m.input(x, quant=qi)], x.shape, "int8", quant=qo)
    check(tmp_path, m)


def test_float32(tmp_path):
    x = float_inputs(np.random.default_rng(74))
    m = Model()
    for op in FLOAT_OPS:
        m.op(op, [m.input(x)], x.shape, "float32")
    i8 = ALL_INT8.reshape(1, 256)  # an int8 operator: mcuforge refuses all-float models
    m.op("ABS", [m.input(i8, quant=(0.1, 0))], i8.shape, "int8", quant=(0.1, 0))
    check(tmp_path, m)


def test_round_is_tflm_round_to_nearest():
    """Halves go to even and values in [-1/2, 0) to +0.0 (numpy's rint gives -0.0 there)."""
    from mcuforge.ir.ops.unary import round_to_nearest

    x = np.array([-2.5, -1.5, -0.5, -0.3, 0.5, 1.5, 2.5], dtype=np.float32)
    assert round_to_nearest(x).tolist() == [-2.0, -2.0, 0.0, 0.0, 0.0, 2.0, 2.0]
    assert not np.signbit(round_to_nearest(x)[2:4]).any() and np.signbit(np.rint(x[2:4])).all()


def test_rules():
    m = Model()
    x = np.zeros((1, 4), np.int8)
    for op in ("NEG", "SQRT", "EXP", "LOG", "FLOOR", "ROUND"):
        m.op(op, [m.input(x, quant=(0.1, 0))], x.shape, "int8", quant=(0.1, 0))
    m.op("ABS", [m.input(x.astype(np.int16), quant=(0.1, 0))], x.shape, "int16", quant=(0.1, 0))
    m.op("ABS", [m.input(x, quant=(1.0, 0))], x.shape, "int8", quant=(2.0 ** -24, 0))
    m.op("ELU", [m.input(x, quant=(0.01, 0))], x.shape, "int8", quant=(2.0 ** -24, 0))
    m.op("RSQRT", [m.input(x)], x.shape, "int8")
    found = problems(m.finish())
    assert [p[0] for p in found] == list(range(10))
    assert found[0][2] == "Input and output must be float32 (TFLM's NEG kernel has no int8 variant) (got int8)"
    assert found[6][2] == "Input and output must both be int8 or both float32 (got int16)"
    assert found[7][2].startswith("For int8, s_in / s_out must be below 2**23")
    assert found[8][2].startswith("For int8, s_in / s_out and 1 / s_out must be below 2**23")
    assert found[9][2] == "int8 input and output must carry per-tensor quantization parameters (input is not quantized per tensor)"
