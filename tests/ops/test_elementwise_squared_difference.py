"""SQUARED_DIFFERENCE against TFLite Micro: the numpy reference and the portable C, int8 on every
pair of values under random quantizations (and ones with the output multiplier's left shift of 1,
the largest TFLM keeps in int32), broadcasts up to rank 6 and constant operands; int32 wrapping at
the extremes; and the rules."""

from __future__ import annotations

import numpy as np
from elementwise_cases import Model, check, int8_pairs, problems, scale, values, zero_point
from test_elementwise_int32 import SHAPES, int32_case

from mcuforge.ir.ops.squared_difference import multipliers


def test_int8_every_pair(tmp_path):
    rng = np.random.default_rng(41)
    a, b = int8_pairs()
    m = Model()
    shifts = set()
    for k in range(10):
        q1, q2 = (scale(rng, -2.5, 0), zero_point(rng)), (scale(rng, -2.5, 0), zero_point(rng))
        spread = max(q1[0], q2[0]) ** 2
        s_out = float(np.float32(spread / 8191 if k < 2 else spread * 10 ** rng.uniform(-3, 2)))
        qo = (s_out, zero_point(rng))
        shifts.add(multipliers(q1[0], q2[0], s_out)[2][1])
        m.op("SQUARED_DIFFERENCE", [m.input(a, quant=q1), m.input(b, quant=q2)], a.shape, "int8", quant=qo)
    assert 1 in shifts
    check(tmp_path, m)


def test_int8_broadcast_and_int32(tmp_path):
    rng = np.random.default_rng(42)
    m = Model()
    for k, (s1, s2) in enumerate(SHAPES):
        q = [(scale(rng, -2, 0), zero_point(rng)) for _ in range(2)]
        qo = (float(np.float32(max(q[0][0], q[1][0]) ** 2 * 20)), zero_point(rng))
        m.op("SQUARED_DIFFERENCE", [m.input(values(rng, s1, "int8"), quant=q[0]),
                                    m.input(values(rng, s2, "int8"), quant=q[1], const=k == 2)],
             np.broadcast_shapes(s1, s2), "int8", quant=qo)
        int32_case(m, rng, "SQUARED_DIFFERENCE", s1, s2, k)
    check(tmp_path, m)


def test_rules():
    m = Model()
    x = np.zeros((2, 3), np.int8)
    m.op("SQUARED_DIFFERENCE", [m.input(x, quant=(0.5, 0)), m.input(x, quant=(0.25, 0))], (2, 3), "int8",
         quant=(float(np.float32(0.25 / 8100)), 0))
    m.op("SQUARED_DIFFERENCE", [m.input(x, quant=(0.5, 0)), m.input(x, quant=(0.25, 0))], (2, 3), "int8",
         quant=(float(np.float32(0.25 / 8200)), 0))
    m.op("SQUARED_DIFFERENCE", [m.input(x.astype(np.float32)), m.input(x.astype(np.float32))], (2, 3), "float32")
    found = problems(m.finish())
    assert [p[0] for p in found] == [1, 2]
    assert found[0][2].startswith("The output scale must be above max(s1, s2)**2 / 8192")
    assert found[1][2].startswith("All inputs and the output must be int8, or all int32 (got float32)")
