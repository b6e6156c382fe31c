"""DYNAMIC_UPDATE_SLICE against TFLite Micro: the numpy reference and the portable C, int8 / int32 /
float32, start indices int32 or int64 given at run time (in range, negative, past the end: TFLM
clamps them) or constant, ranks 1 to 6, an update as large as the operand, in place; and the rules."""

from __future__ import annotations

import numpy as np
import pytest
from elementwise_cases import Model, check, problems, values

# (operand shape, update shape)
SHAPES = [((10,), (3,)), ((4, 6), (2, 3)), ((4, 6), (4, 1)), ((2, 5, 7, 3), (1, 2, 3, 3)),
          ((2, 3, 2, 4, 3, 2), (1, 2, 1, 3, 2, 2)), ((3, 4), (3, 4)), ((1, 16, 8), (1, 1, 8))]


def index_sets(rng, operand, update, n: int) -> list[np.ndarray]:
    """Start indices: in range, then random ones far outside the valid range."""
    sets = [np.array([rng.integers(0, d - u + 1) for d, u in zip(operand, update)])]
    for _ in range(n - 1):
        sets.append(rng.integers(-5, 12, size=len(operand)))
    return sets


@pytest.mark.parametrize("dtype", ["int8", "int32", "float32"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_run_time_indices(tmp_path, dtype, index_dtype):
    rng = np.random.default_rng(51)
    m = Model()
    per_op = []
    for operand, update in SHAPES:
        q = (0.05, 3) if dtype == "int8" else None
        x = m.input(values(rng, operand, dtype), quant=q)
        u = m.input(values(rng, update, dtype), quant=(0.02, -5) if dtype == "int8" else None)
        sets = index_sets(rng, operand, update, 4)
        i = m.input(sets[0].astype(index_dtype))
        m.op("DYNAMIC_UPDATE_SLICE", [x, u, i], operand, dtype, quant=q)
        per_op.append(sets)
    if dtype != "int8":  # an int8 operator: mcuforge refuses all-float models
        i8 = np.zeros((2, 3), np.int8)
        m.op("DYNAMIC_UPDATE_SLICE", [m.input(i8, quant=(0.1, 0)), m.input(i8[:1], quant=(0.1, 0)),
                                      m.input(np.zeros(2, index_dtype))], i8.shape, "int8", quant=(0.1, 0))
    extra = []
    for k in range(1, 4):
        data = list(m.data)
        for j, sets in enumerate(per_op):
            data[3 * j + 2] = sets[k].astype(index_dtype)
        extra.append(data)
    check(tmp_path, m, [m.data] + extra)


def test_constant_indices_and_operand(tmp_path):
    rng = np.random.default_rng(52)
    m = Model()
    for operand, update in SHAPES[:4]:
        x = m.input(values(rng, operand, "int8"), quant=(0.05, 3), const=True)
        u = m.input(values(rng, update, "int8"), quant=(0.05, 3))
        i = m.input(index_sets(rng, operand, update, 2)[1].astype(np.int32), const=True)
        m.op("DYNAMIC_UPDATE_SLICE", [x, u, i], operand, "int8", quant=(0.05, 3))
    check(tmp_path, m)


def test_rules():
    m = Model()
    q = (0.1, 0)
    x = np.zeros((4, 6), np.int8)
    m.op("DYNAMIC_UPDATE_SLICE", [m.input(x, quant=q), m.input(x[:2].astype(np.int16), quant=q),
                                  m.input(np.zeros(2, np.int32))], x.shape, "int8", quant=q)
    m.op("DYNAMIC_UPDATE_SLICE", [m.input(x, quant=q), m.input(x[:2], quant=q), m.input(np.zeros(3, np.int32))],
         x.shape, "int8", quant=q)
    m.op("DYNAMIC_UPDATE_SLICE", [m.input(x, quant=q), m.input(x[:2], quant=q), m.input(np.zeros(2, np.int16))],
         x.shape, "int8", quant=q)
    m.op("DYNAMIC_UPDATE_SLICE", [m.input(x, quant=q), m.input(np.zeros((2, 7), np.int8), quant=q),
                                  m.input(np.zeros(2, np.int32))], x.shape, "int8", quant=q)
    x7 = np.zeros((1, 2, 1, 1, 1, 1, 2), np.int8)
    m.op("DYNAMIC_UPDATE_SLICE", [m.input(x7, quant=q), m.input(x7[:, :1], quant=q), m.input(np.zeros(7, np.int32))],
         x7.shape, "int8", quant=q)
    found = problems(m.finish())
    assert [p[0] for p in found] == list(range(5)), found
    assert "one element type: int8, int32 or float32 (got int16, int8)" in found[0][2]
    assert "one entry per operand axis (shape [3] for operand rank 2)" in found[1][2]
    assert "one entry per operand axis (got int16)" in found[2][2]
    assert "no larger than the operand along any axis (update [2, 7], operand [4, 6])" in found[3][2]
    assert found[4][2] == "An update smaller than the operand needs an operand of rank at most 6 (rank 7)"
