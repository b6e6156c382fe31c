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
    assert found[0][2].startswith("The output must be quantized with scale 1/128 and zero point 0")
    assert found[1][2].endswith("(rank 5)")
    assert found[2][2] == "The fused activation must be NONE (TFLM's kernel supports no other) (got RELU)"
    assert found[3][2].endswith("(the last axis has 33026 elements)")
