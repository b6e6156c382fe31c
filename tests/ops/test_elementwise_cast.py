"""CAST against TFLite Micro: the numpy reference and the portable C for every pair of int8, int16,
int32, float32 and bool, on the types' extremes, values just inside and outside the narrower types,
float32 halves, infinities, NaN, signed zeros and out-of-range values (TFLM saturates those), plus
random values; and the rules."""

from __future__ import annotations

import numpy as np
from elementwise_cases import Model, check, problems, values

TYPES = ("int8", "int16", "int32", "float32", "bool")
EDGES = {
    "int8": [-128, -1, 0, 1, 127],
    "int16": [-32768, -129, -128, -1, 0, 1, 127, 128, 255, 256, 32767],
    "int32": [-2**31, -65537, -32769, -129, -1, 0, 1, 128, 255, 256, 32768, 65541, 16777217, 2**31 - 1],
    "float32": [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 1.9, -1.9, 127.9, 128.0, 128.5, -128.9,
                -129.0, 255.5, 300.7, -300.7, 32767.5, 32768.0, -32769.0, 40000.2, 3e9, -3e9, 2147483520.0,
                2147483648.0, -2147483648.0, -2147483904.0, 1e-45, 16777217.0],
    "bool": [True, False],
}


def test_every_type_pair(tmp_path):
    rng = np.random.default_rng(81)
    m = Model()
    for src in TYPES:
        edges = np.array(EDGES[src], dtype=np.dtype(src))
        x = np.concatenate([edges, values(rng, (64,), src)]).reshape(1, -1)
        t = m.input(x)
        for dst in TYPES:
            m.op("CAST", [t], x.shape, dst)
    check(tmp_path, m)


def test_rules():
    m = Model()
    x = np.zeros((1, 4), np.int8)
    m.op("CAST", [m.input(x, quant=(0.1, 0))], x.shape, "uint8")
    m.op("CAST", [m.input(x.astype(np.int64))], x.shape, "int32")
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 1]
    assert found[0][2] == "Input and output must each be int8, int16, int32, float32 or bool (got uint8)"
    assert found[1][2] == "Input and output must each be int8, int16, int32, float32 or bool (got int64)"
