"""SELECT_V2 against TFLite Micro: the numpy reference and the portable C, for int8 (x, y and the
output in different quantizations: TFLM copies the stored value), int16 and float32 (IEEE
specials), equal shapes, single-element and scalar conditions, three-way broadcasts up to rank 6
and constant operands; and the rules. (TFLM has no SELECT, version 1: it stays unsupported.)"""

from __future__ import annotations

import numpy as np
import pytest
from elementwise_cases import Model, check, problems, values

# (condition, x, y) shapes
SHAPES = [((2, 3), (2, 3), (2, 3)), ((), (2, 3), (2, 3)), ((1,), (3, 4), (3, 4)), ((4,), (3, 4), (3, 1)),
          ((3, 1), (3, 4), (3, 4)), ((1, 1), (1,), (1, 1, 1)), ((2, 1, 3, 1, 2), (1, 2, 1, 2, 1), (2, 2, 3, 2, 1)),
          ((2, 1, 3, 1, 2, 1), (1, 2, 1, 2, 1, 2), (1, 1, 1, 1, 1, 2)), ((1, 5, 7, 16), (1, 5, 7, 16), (16,))]


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_select_v2(tmp_path, dtype):
    rng = np.random.default_rng(21)
    m = Model()
    quants = [((0.1, 3), (0.02, -7), (0.05, 0))] if dtype == "int8" else [(None, None, None)]
    for k, (sc, sx, sy) in enumerate(SHAPES):
        qx, qy, qo = quants[0]
        cond = m.input(values(rng, sc, "bool"))
        x = m.input(values(rng, sx, dtype), quant=qx, const=k == 3)
        y = m.input(values(rng, sy, dtype), quant=qy)
        m.op("SELECT_V2", [cond, x, y], np.broadcast_shapes(sc, sx, sy), dtype, quant=qo)
    check(tmp_path, m)


def test_rules():
    m = Model()
    i8 = np.zeros((2, 3), np.int8)
    b = np.zeros((2, 3), np.bool_)
    m.op("SELECT_V2", [m.input(i8, quant=(0.1, 0)), m.input(i8, quant=(0.1, 0)), m.input(i8, quant=(0.1, 0))],
         (2, 3), "int8", quant=(0.1, 0))
    m.op("SELECT_V2", [m.input(b), m.input(i8, quant=(0.1, 0)), m.input(i8.astype(np.int32))], (2, 3), "int8",
         quant=(0.1, 0))
    m.op("SELECT_V2", [m.input(b), m.input(i8.astype(np.int32)), m.input(i8.astype(np.int32))], (2, 3), "int32")
    x7 = np.zeros((1, 2, 1, 2, 1, 2, 3), np.float32)
    m.op("SELECT_V2", [m.input(x7.astype(np.bool_)), m.input(x7), m.input(x7)], x7.shape, "float32")
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 1, 2, 3]
    assert found[0][2] == "The condition (input 1) must be bool (got int8)"
    assert "one element type: int8, int16 or float32 (got int32, int8)" in found[1][2]
    assert "(got int32)" in found[2][2]
    assert "at most 6 dimensions (rank 7)" in found[3][2]
