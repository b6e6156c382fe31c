"""LOG_SOFTMAX against TFLite Micro: the numpy reference and the portable C on rows of 1 to 4095
elements, random, constant and narrow rows, input scales from 1e-3 to 10 (and the smallest TFLM
accepts, just above 2**-26); and the rules."""

from __future__ import annotations

import numpy as np
from elementwise_cases import Model, check, problems, scale, values, zero_point

OUT = (16 / 256, 127)


def test_log_softmax(tmp_path):
    rng = np.random.default_rng(91)
    m = Model()
    depths = [1, 2, 3, 10, 37, 100, 256, 1000, 4095]
    for k in range(27):
        d = depths[k % len(depths)]
        shape = ((2, d), (1, 2, 2, d), (d,))[k % 3]
        x = values(rng, shape, "int8")
        if k % 4 == 1:
            x = np.full(shape, int(rng.integers(-128, 128)), np.int8)  # the largest sums
        elif k % 4 == 2:
            x = np.clip(rng.integers(-5, 6, size=shape) + 90, -128, 127).astype(np.int8)
        s = float(np.float32(2.0 ** -25.9)) if k == 26 else scale(rng, -3, 1)
        m.op("LOG_SOFTMAX", [m.input(x, quant=(s, zero_point(rng)))], shape, "int8", quant=OUT)
    check(tmp_path, m)


def test_rules():
    m = Model()
    x = np.zeros((1, 8), np.int8)
    m.op("LOG_SOFTMAX", [m.input(x, quant=(0.1, 0))], x.shape, "int8", quant=(1 / 16, 0))
    m.op("LOG_SOFTMAX", [m.input(x, quant=(2.0 ** -26, 0))], x.shape, "int8", quant=OUT)
    big = np.zeros((1, 4096), np.int8)
    m.op("LOG_SOFTMAX", [m.input(big, quant=(0.1, 0))], big.shape, "int8", quant=OUT)
    m.op("LOG_SOFTMAX", [m.input(x.astype(np.int16), quant=(0.1, 0))], x.shape, "int16", quant=OUT)
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 1, 2, 3]
    assert found[0][2] == ("The output must be quantized with scale 16/256 and zero point 127 (TFLM requires exactly "
                           "these) (output has scale 0.0625 and zero point 0)")
    assert found[1][2].startswith("The input scale must be above 2**-26")
    assert found[2][2].endswith("(the last axis has 4096 elements)")
    assert found[3][2].startswith("Input and output activations must be int8 (got int16)")
