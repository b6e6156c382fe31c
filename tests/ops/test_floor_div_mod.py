"""FLOOR_DIV and FLOOR_MOD against TFLite Micro (float32 only, as TFLM's kernels): the numpy
reference and the portable C on every pair of signed values, halves and IEEE specials (FLOOR_MOD
also with zero divisors: NaN), random values, broadcasts up to rank 6 and constant operands; and
the rules (a constant zero divisor of FLOOR_DIV, which TFLM stops on)."""

from __future__ import annotations

import numpy as np
from elementwise_cases import Model, check, problems

SHAPES = [((2, 3), (2, 3)), ((1, 4, 5, 8), (1, 1, 1, 8)), ((), (2, 3)), ((3, 1, 6), (1, 4, 1)),
          ((2, 1, 2, 1, 2, 1), (1, 2, 1, 2, 1, 2))]
VALUES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 7.0, -7.0, 3.0, -3.0, 1e-40, 3e38, -3e38, 1e-30,
                   np.inf, -np.inf, np.nan, 0.1, -0.1, 16777217.0, 1.0000001], dtype=np.float32)


def int8_op(m: Model) -> None:
    i8 = np.zeros((1, 3), np.int8)  # an int8 operator: mcuforge refuses all-float models
    m.op("ABS", [m.input(i8, quant=(0.1, 0))], i8.shape, "int8", quant=(0.1, 0))


def test_pairs_and_broadcasts(tmp_path):
    rng = np.random.default_rng(101)
    a, b = (x.astype(np.float32) for x in np.meshgrid(VALUES, VALUES, indexing="ij"))
    nonzero = np.where(b == 0, np.float32(1.5), b)
    m = Model()
    m.op("FLOOR_DIV", [m.input(a), m.input(nonzero)], a.shape, "float32")
    m.op("FLOOR_MOD", [m.input(a), m.input(b)], a.shape, "float32")
    for op in ("FLOOR_DIV", "FLOOR_MOD"):
        for k, (s1, s2) in enumerate(SHAPES):
            x1 = rng.normal(0, 20, s1).astype(np.float32)
            x2 = rng.choice([-1, 1], s2) * rng.uniform(0.1, 6, s2).astype(np.float32)
            m.op(op, [m.input(x1), m.input(np.asarray(x2, np.float32), const=k == 1)], np.broadcast_shapes(s1, s2),
                 "float32")
    int8_op(m)
    check(tmp_path, m)


def test_rules():
    m = Model()
    x = np.ones((2, 3), np.float32)
    m.op("FLOOR_DIV", [m.input(x), m.input(np.array([1, 0, 2], np.float32), const=True)], x.shape, "float32")
    m.op("FLOOR_MOD", [m.input(x.astype(np.int32)), m.input(x.astype(np.int32))], x.shape, "int32")
    x7 = np.ones((2, 1, 2, 1, 2, 1, 2), np.float32)
    m.op("FLOOR_DIV", [m.input(x7), m.input(np.ones((1, 2, 1, 2, 1, 2, 1), np.float32))], (2,) * 7, "float32")
    int8_op(m)
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 1, 2], found
    assert found[0][2] == "A constant divisor must not hold a zero (TFLM stops with an error on one) (it holds a zero)"
    assert found[1][2] == "Inputs and output must be float32 (TFLM's kernels have no other type) (got int32)"
    assert "at most 6 dimensions (rank 7)" in found[2][2]
