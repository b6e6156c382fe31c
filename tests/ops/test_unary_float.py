"""CEIL, SQUARE, SIN and COS against TFLite Micro (float32 only, as TFLM's kernels): the numpy
reference and the portable C on the IEEE specials, halves and their neighbours, subnormals, large
arguments (sinf / cosf argument reduction) and random values; and the int8 refusal."""

from __future__ import annotations

import numpy as np
from elementwise_cases import ALL_INT8, F32_SPECIALS, Model, check, problems

OPS = ("CEIL", "SQUARE", "SIN", "COS")


def float_inputs(rng) -> np.ndarray:
    halves = np.arange(-8, 8, dtype=np.float32) + np.float32(0.5)
    beside = np.concatenate([np.nextafter(halves, np.float32(np.inf)), np.nextafter(halves, np.float32(-np.inf))])
    special = np.array([1e-40, -1e-40, 1e-20, 1.8e19, -1.9e19, 3.1415927, -3.1415927, 1.5707964, 105414350.0,
                        1e30, -1e30, 8388607.5, -8388608.5], dtype=np.float32)
    random = np.concatenate([rng.normal(0, 3, 300), rng.uniform(-1e4, 1e4, 300),
                             rng.uniform(-1e9, 1e9, 100)]).astype(np.float32)
    return np.concatenate([F32_SPECIALS, halves, beside, special, random]).astype(np.float32).reshape(1, -1)


def test_float32(tmp_path):
    x = float_inputs(np.random.default_rng(91))
    m = Model()
    for op in OPS:
        m.op(op, [m.input(x)], x.shape, "float32")
    i8 = ALL_INT8.reshape(1, 256)  # an int8 operator: mcuforge refuses all-float models
    m.op("ABS", [m.input(i8, quant=(0.1, 0))], i8.shape, "int8", quant=(0.1, 0))
    check(tmp_path, m)


def test_rules():
    m = Model()
    x = np.zeros((1, 4), np.int8)
    for op in OPS:
        m.op(op, [m.input(x, quant=(0.1, 0))], x.shape, "int8", quant=(0.1, 0))
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 1, 2, 3]
    assert [f[2] for f in found] == [f"Input and output must be float32 (TFLM's {op} kernel has no int8 variant) "
                                     "(got int8)" for op in OPS]
