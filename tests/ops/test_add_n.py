"""ADD_N against TFLite Micro: the numpy reference and the portable C. int8 on every pair of input
values under several quantizations, 3 to 15 inputs at the extremes of the accumulator (and a
constant operand); float32 on the IEEE specials with the summation order visible in the rounding;
and the rules."""

from __future__ import annotations

import numpy as np
from elementwise_cases import F32_SPECIALS, Model, check, int8_pairs, problems, scale, values, zero_point


def test_int8_every_pair(tmp_path):
    rng = np.random.default_rng(31)
    a, b = int8_pairs()
    m = Model()
    for k in range(6):
        zp = (-128, 127, 0)[k] if k < 3 else zero_point(rng)
        q, qo = (scale(rng, -3, 0.5), zp), (scale(rng, -3, 0.5), zero_point(rng))
        m.op("ADD_N", [m.input(a, quant=q), m.input(b, quant=q)], a.shape, "int8", quant=qo)
    check(tmp_path, m)


def test_int8_many_inputs(tmp_path):
    """3, 5 and 15 inputs (15 at zero point -128 and 127: the accumulator's limit), random values and
    all at the extremes, one operand constant."""
    rng = np.random.default_rng(32)
    m = Model()
    for n, zp in ((3, None), (5, None), (15, -128), (15, 127), (15, 0), (4, None)):
        zp = zero_point(rng) if zp is None else zp
        q, qo = (scale(rng, -2, 0.5), zp), (scale(rng, -2, 0.5), zero_point(rng))
        shape = (2, 3, 40)
        ins = []
        for j in range(n):
            x = values(rng, shape, "int8")
            x.reshape(-1)[:20] = 127
            x.reshape(-1)[20:40] = -128
            ins.append(m.input(x, quant=q, const=(n == 4 and j == 2)))
        m.op("ADD_N", ins, shape, "int8", quant=qo)
    check(tmp_path, m)


def test_float32(tmp_path):
    rng = np.random.default_rng(33)
    m = Model()
    specials = np.array(np.meshgrid(F32_SPECIALS, F32_SPECIALS, indexing="ij")).astype(np.float32)
    m.op("ADD_N", [m.input(specials[0]), m.input(specials[1])], specials[0].shape, "float32")
    # 1e8 + 1 - 1e8 ... : float32 rounding depends on the order of the additions
    big = np.array([1e8, 1.0, -1e8, 3e38, 3e38, -3e38], dtype=np.float32)
    cols = [np.roll(big, k).reshape(2, 3) for k in range(4)]
    m.op("ADD_N", [m.input(c) for c in cols], (2, 3), "float32")
    xs = [values(rng, (1, 7, 9), "float32") for _ in range(5)]
    m.op("ADD_N", [m.input(x, const=(j == 1)) for j, x in enumerate(xs)], (1, 7, 9), "float32")
    i8 = np.zeros((1, 4), np.int8)  # an int8 operator: mcuforge refuses all-float models
    m.op("ADD_N", [m.input(i8, quant=(0.1, 0)), m.input(i8, quant=(0.1, 0))], i8.shape, "int8", quant=(0.1, 0))
    check(tmp_path, m)


def test_rules():
    m = Model()
    x = np.zeros((2, 3), np.int8)
    q = (0.1, 0)
    m.op("ADD_N", [m.input(x, quant=q)], x.shape, "int8", quant=q)
    m.op("ADD_N", [m.input(x, quant=q), m.input(x.astype(np.int16), quant=q)], x.shape, "int8", quant=q)
    m.op("ADD_N", [m.input(x, quant=q), m.input(x[:1], quant=q)], x.shape, "int8", quant=q)
    m.op("ADD_N", [m.input(x, quant=q), m.input(x, quant=(0.1, 1))], x.shape, "int8", quant=q)
    m.op("ADD_N", [m.input(x, quant=(1.0, 0)), m.input(x, quant=(1.0, 0))], x.shape, "int8", quant=(2.0 ** -20, 0))
    m.op("ADD_N", [m.input(x, quant=(0.1, -128)) for _ in range(16)], x.shape, "int8", quant=q)
    m.op("ADD_N", [m.input(x.astype(np.int32)), m.input(x.astype(np.int32))], x.shape, "int32")
    found = problems(m.finish())
    assert [p[0] for p in found] == list(range(7)), found
    assert found[0][2] == "ADD_N needs at least two inputs (got 1)"
    assert "one shape" not in found[1][2] and "int8, or all float32 (got int16, int8)" in found[1][2]
    assert found[2][2].startswith("All inputs must have the same shape") and "[1, 3]" in found[2][2]
    assert "first input's scale and zero point" in found[3][2] and "zero point 1" in found[3][2]
    assert "smaller than 2**20 times the output scale" in found[4][2]
    assert "must fit in int32" in found[5][2] and "16 inputs with zero point -128" in found[5][2]
    assert "(got int32)" in found[6][2]
