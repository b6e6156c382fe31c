"""L2_NORMALIZATION against TFLite Micro: the numpy reference and the portable C on rows of 1 to
33025 elements (the longest TFLM's int32 sum of squares allows), random rows, rows at the zero point
(a zero sum), single large values and near-constant rows, ranks 1 to 4; and the rules."""

from __future__ import annotations

import numpy as np
from elementwise_cases import Model, check, problems, scale, values, zero_point

OUT = (1 / 128, 0)


def test_l2_normalization(tmp_path):
    rng = np.random.default_rng(95)
    m = Model()
    shapes = [(1,), (7,), (3, 64), (1, 4, 4, 16), (2, 1, 300), (1, 33025), (5, 2), (1, 1, 1, 1)]
    for k, shape in enumerate(shapes * 3):
        zp = zero_point(rng)
        x = values(rng, shape, "int8")
        if k % 3 == 1:
            x = np.full(shape, zp, np.int8)
            x.reshape(-1)[::5] = np.int8(rng.integers(-128, 128))  # zeros and one repeated value
        elif k % 3 == 2:
            x = np.clip(rng.integers(-3, 4, size=shape) + zp, -128, 127).astype(np.int8)
        m.op("L2_NORMALIZATION", [m.input(x, quant=(scale(rng), zp))], shape, "int8", quant=OUT)
    zero = np.zeros((2, 9), np.int8)
    m.op("L2_NORMALIZATION", [m.input(zero, quant=(0.1, 0))], zero.shape, "int8", quant=OUT)
    check(tmp_path, m)


def test_rules():
    m = Model()
    x = np.zeros((1, 8), np.int8)
    m.op("L2_NORMALIZATION", [m.input(x, quant=(0.1, 0))], x.shape, "int8", quant=(1 / 127, 0))
    x5 = np.zeros((1, 1, 1, 2, 8), np.int8)
    m.op("L2_NORMALIZATION", [m.input(x5, quant=(0.1, 0))], x5.shape, "int8", quant=OUT)
    m.op("L2_NORMALIZATION", [m.input(x, quant=(0.1, 0))], x.shape, "int8", quant=OUT, options_cls="L2NormOptions",
         FusedActivationFunction="RELU")
    deep = np.zeros((1, 33026), np.int8)
    m.op("L2_NORMALIZATION", [m.input(deep, quant=(0.1, 0))], deep.shape, "int8", quant=OUT)
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 1, 2, 3]
    assert found[0][2].startswith("An int8 output must be quantized with scale 1/128 and zero point 0")
    assert found[1][2].endswith("(rank 5)")
    assert found[2][2] == "The fused activation must be NONE (TFLM's kernel supports no other) (got RELU)"
    assert found[3][2].endswith("(the last axis has 33026 elements)")


def test_l2_normalization_float32(tmp_path):
    """float32 rows (ranks 1 to 4, long rows where the summation order shows, rows of zeros and
    tiny values that hit the epsilon floor, IEEE specials): reference and C equal TFLM bit for bit."""
    rng = np.random.default_rng(96)
    m = Model()
    for shape in [(1,), (7,), (3, 64), (1, 4, 4, 16), (2, 1, 300), (1, 4097), (5, 2)]:
        m.op("L2_NORMALIZATION", [m.input(values(rng, shape, "float32"))], shape, "float32")
        x = (rng.normal(0, 1, size=shape) * 10.0 ** rng.integers(-30, 30, size=shape)).astype(np.float32)
        m.op("L2_NORMALIZATION", [m.input(x)], shape, "float32")
    tiny = np.array([[0.0, 0.0, 0.0], [1e-7, -1e-7, 0.0], [1e-20, 0.0, 2e-20]], np.float32)
    m.op("L2_NORMALIZATION", [m.input(tiny)], tiny.shape, "float32")
    q = values(rng, (2, 8), "int8")  # one int8 operator: mcuforge refuses all-float models
    m.op("L2_NORMALIZATION", [m.input(q, quant=(0.05, 3))], q.shape, "int8", quant=OUT)
    check(tmp_path, m)


def test_float32_rules():
    m = Model()
    x = np.zeros((1, 8), np.float32)
    m.op("L2_NORMALIZATION", [m.input(x)], x.shape, "int8", quant=OUT)
    deep = np.zeros((1, 40000), np.float32)
    m.op("L2_NORMALIZATION", [m.input(deep)], deep.shape, "float32")
    found = problems(m.finish())
    assert [p[0] for p in found] == [0]
    assert found[0][2].startswith("Input and output must both be int8 or both float32 (got float32, int8)")
