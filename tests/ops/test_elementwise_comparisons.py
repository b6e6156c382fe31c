"""EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL against TFLite Micro: the numpy
reference and the portable C on every int8 pair under several quantizations (TFLM compares int8 on a
rounded common scale, so close values can compare equal), raw int32 / float32 / bool values with
the extremes and IEEE specials, broadcasts up to rank 6 and constant operands; and the rules."""

from __future__ import annotations

import numpy as np
import pytest
from elementwise_cases import Model, check, int8_pairs, problems, scale, values, zero_point

OPS = ("EQUAL", "NOT_EQUAL", "LESS", "LESS_EQUAL", "GREATER", "GREATER_EQUAL")
REAL = {"EQUAL": np.equal, "NOT_EQUAL": np.not_equal, "LESS": np.less, "LESS_EQUAL": np.less_equal,
        "GREATER": np.greater, "GREATER_EQUAL": np.greater_equal}
SHAPES = [((2, 3), (2, 3)), ((1, 4, 5, 8), (1, 1, 1, 8)), ((), (2, 3)), ((3, 1, 6), (1, 4, 1)),
          ((2, 1, 3, 1, 2), (1, 4, 1, 2, 2)), ((2, 1, 3, 1, 2, 2), (1, 2, 1, 2, 1, 2))]


def test_int8_every_pair(tmp_path):
    """Four quantization pairs per op (one shared, one with a tiny scale whose rounding merges
    neighbouring values), all 65536 int8 pairs."""
    rng = np.random.default_rng(11)
    a, b = int8_pairs()
    m = Model()
    configs = []
    for op in OPS:
        for k in range(4):
            q1 = (scale(rng, -3, -0.01), zero_point(rng))
            q2 = q1 if k == 0 else ((float(np.float32(0.0007)), zero_point(rng)) if k == 1 else
                                    (scale(rng, -3, -0.01), zero_point(rng)))
            m.op(op, [m.input(a, quant=q1), m.input(b, quant=q2)], a.shape, "bool")
            configs.append((op, q1, q2))
    (theirs,) = check(tmp_path, m)
    # the rescaling matters: somewhere TFLM's answer is not the comparison of the real values
    merged = 0
    for (op, (s1, z1), (s2, z2)), t in zip(configs, theirs):
        real = REAL[op]((a.astype(np.float64) - z1) * s1, (b.astype(np.float64) - z2) * s2)
        merged += int((real != t).sum())
    assert merged > 0


@pytest.mark.parametrize("dtype", ["int32", "float32", "bool"])
def test_raw_values(tmp_path, dtype):
    """Raw comparisons with broadcasting up to rank 6 and a constant second operand; int32 extremes,
    float32 infinities, NaN and signed zeros; bool for EQUAL / NOT_EQUAL (the only ones TFLM has)."""
    rng = np.random.default_rng(12)
    m = Model()
    ops = OPS if dtype != "bool" else ("EQUAL", "NOT_EQUAL")
    for op in ops:
        for k, (s1, s2) in enumerate(SHAPES):
            x = values(rng, s1, dtype, -3, 3) if dtype == "int32" and k % 2 else values(rng, s1, dtype)
            y = values(rng, s2, dtype, -3, 3) if dtype == "int32" and k % 2 else values(rng, s2, dtype)
            if dtype == "float32" and k == 0:
                y = x.copy()  # equal values, NaNs included
                y.reshape(-1)[:2] = -y.reshape(-1)[:2]  # and signed zeros against each other
            m.op(op, [m.input(x), m.input(y, const=k == 2)], np.broadcast_shapes(s1, s2), "bool")
    check(tmp_path, m)


def test_rules():
    m = Model()
    i8 = values(np.random.default_rng(0), (2, 3), "int8")
    m.op("LESS", [m.input(i8, quant=(0.1, 0)), m.input(i8.astype(np.int32))], (2, 3), "bool")
    m.op("GREATER", [m.input(i8, quant=(1.0, 0)), m.input(i8, quant=(0.5, 0))], (2, 3), "bool")
    m.op("LESS", [m.input(np.ones((2, 3), np.bool_)), m.input(np.ones((2, 3), np.bool_))], (2, 3), "bool")
    m.op("EQUAL", [m.input(i8, quant=(0.1, 0)), m.input(i8, quant=(0.1, 0))], (2, 3), "int8", quant=(0.1, 0))
    x6 = np.zeros((1, 2, 1, 2, 1, 2, 3), np.int32)
    m.op("NOT_EQUAL", [m.input(x6), m.input(x6)], x6.shape, "bool")
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 1, 2, 3, 4]
    assert found[0][2].startswith("Both inputs must have one element type") and "int32, int8" in found[0][2]
    assert "scales below 1" in found[1][2] and "input 1 has scale 1" in found[1][2]
    assert "int8, int32 or float32 (got bool)" in found[2][2]
    assert found[3][2] == "The output must be bool (got int8)"
    assert "at most 6 dimensions" in found[4][2] and "(rank 7)" in found[4][2]
