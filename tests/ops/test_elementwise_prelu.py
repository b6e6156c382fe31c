"""PRELU against TFLite Micro: the numpy reference and the portable C on every (x, alpha) int8 pair
under random quantizations (negative, positive and large alphas), per-channel constant alphas and
other broadcasts up to rank 4; and the rules."""

from __future__ import annotations

import numpy as np
from elementwise_cases import Model, check, int8_pairs, problems, scale, values, zero_point

SHAPES = [((1, 6, 5, 8), (8,)), ((1, 6, 5, 8), (1, 1, 8)), ((1, 6, 5, 8), (1, 6, 5, 8)), ((2, 3), (1, 2, 3)),
          ((4, 1, 3), (5, 1)), ((7,), ())]


def test_every_pair(tmp_path):
    rng = np.random.default_rng(61)
    x, alpha = int8_pairs()
    m = Model()
    for k in range(10):
        qi, qa, qo = (scale(rng), zero_point(rng)), (scale(rng, -3, 0.3), zero_point(rng)), (scale(rng), zero_point(rng))
        if k >= 8:  # the largest multipliers allowed: left shifts 23 and 15 on the extreme products
            qi, qa, qo = (1.0, -128 if k == 8 else 127), (2.0 ** -8, -128), (float(np.float32(2.0 ** -22.5)), 0)
        m.op("PRELU", [m.input(x, quant=qi), m.input(alpha, quant=qa)], x.shape, "int8", quant=qo)
    check(tmp_path, m)


def test_broadcast_alpha(tmp_path):
    rng = np.random.default_rng(62)
    m = Model()
    for k, (sx, sa) in enumerate(SHAPES):
        qi, qa, qo = (scale(rng), zero_point(rng)), (scale(rng, -3, -1), 0), (scale(rng), zero_point(rng))
        m.op("PRELU", [m.input(values(rng, sx, "int8"), quant=qi),
                       m.input(values(rng, sa, "int8"), quant=qa, const=k != 3)],
             np.broadcast_shapes(sx, sa), "int8", quant=qo)
    check(tmp_path, m)


def test_rules():
    m = Model()
    x5 = np.zeros((1, 2, 2, 2, 3), np.int8)
    m.op("PRELU", [m.input(x5, quant=(0.1, 0)), m.input(np.zeros(3, np.int8), quant=(0.1, 0), const=True)], x5.shape,
         "int8", quant=(0.1, 0))
    x = np.zeros((2, 3), np.int8)
    m.op("PRELU", [m.input(x, quant=(0.1, 0)), m.input(np.zeros(3, np.float32), const=True)], (2, 3), "int8",
         quant=(0.1, 0))
    m.op("PRELU", [m.input(x, quant=(1.0, 0)), m.input(x, quant=(0.5, 0))], (2, 3), "int8", quant=(2.0 ** -16, 0))
    m.op("PRELU", [m.input(x, quant=(1.0, 0)), m.input(x, quant=(0.5, 0))], (2, 3), "int8", quant=(2.0 ** -15, 0))
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 1, 2]
    assert found[0][2] == ("The input and alpha shapes must broadcast against each other (numpy rules), with at most 4 "
                           "dimensions (TFLM's PRELU walk) (rank 5)")
    assert found[1][2].startswith("The input, alpha and the output must be int8 (got float32, int8)")
    assert found[2][2].startswith("s_in / s_out must be below 2**23 and s_in * s_alpha / s_out below 2**15")
