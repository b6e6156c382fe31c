"""DIV against TFLite Micro: the numpy reference and the portable C, int8 on every pair of values
(divisors at the zero point included) under random quantizations, where TFLM's final shift goes
beyond 31 for many pairs (its x86-64 behaviour, which we reproduce); scales where a float32 and a
double multiplier differ; fused activations, broadcasts up to rank 6 and constant operands for int8
and int32; and the rules."""

from __future__ import annotations

import numpy as np
from elementwise_cases import Model, check, int8_pairs, problems, scale, values, zero_point
from test_elementwise_int32 import ACTIVATIONS, SHAPES, int32_case

from mcuforge.ir import quant
from mcuforge.ir.ops import _fixedpoint as fp
from mcuforge.ir.ops.div import count_leading_sign_bits, div_int8, multiplier

# (s1, s2, s_out) where QuantizeMultiplier of the float32 quotient s1 / (s2 * s_out) and of the
# double one differ, and so do some int8 quotients
PRECISION_SCALES = [(0.005244884639978409, 0.0021148379892110825, 0.07807143032550812),
                    (0.13738973438739777, 0.822482705116272, 0.0012856913963332772),
                    (0.14210405945777893, 0.22553037106990814, 0.0067187766544520855)]


def wide_shifts(a, b, zp1, zp2, s1, s2, so) -> int:
    """How many pairs reach TFLM's final rounding shift of 32 or more."""
    _, shift = multiplier(s1, s2, so)
    x, y = a.astype(np.int64) - zp1, b.astype(np.int64) - zp2
    _, recip_shift = fp.get_reciprocal(np.abs(y), 31)
    return int((count_leading_sign_bits(np.where(y < 0, -x, x)) + recip_shift - shift >= 32).sum())


def test_int8_every_pair(tmp_path):
    rng = np.random.default_rng(51)
    a, b = int8_pairs()
    m = Model()
    wide = 0
    for k in range(14):
        q1, q2 = (scale(rng, -3, 0), zero_point(rng)), (scale(rng, -3, 0), zero_point(rng))
        qo = (float(np.float32(q1[0] / q2[0] * 10 ** rng.uniform(-1.5, 1.5))), zero_point(rng))
        if k >= 12:  # the extreme multipliers allowed: final shifts from 0 up to 63
            q1, q2 = ((0.001, 5), (0.9, -3)) if k == 12 else ((0.9, -3), (0.001, 5))
            qo = (float(np.float32(q1[0] / (q2[0] * 2.0 ** (-24.9 if k == 12 else 19.9)))), 0)
            assert multiplier(q1[0], q2[0], qo[0])[1] == (-24 if k == 12 else 20)
        wide += wide_shifts(a, b, q1[1], q2[1], q1[0], q2[0], qo[0])
        m.op("DIV", [m.input(a, quant=q1), m.input(b, quant=q2)], a.shape, "int8", quant=qo)
    assert wide > 1000
    check(tmp_path, m)


def test_multiplier_is_a_double_quotient(tmp_path):
    a, b = int8_pairs()
    m = Model()
    for s1, s2, so in PRECISION_SCALES:
        m.op("DIV", [m.input(a, quant=(s1, 0)), m.input(b, quant=(s2, 0))], a.shape, "int8", quant=(so, 0))
    (theirs,) = check(tmp_path, m, c=False)
    for (s1, s2, so), t in zip(PRECISION_SCALES, theirs):
        m32, sh32 = quant.quantize_multiplier(float(np.float32(s1) / (np.float32(s2) * np.float32(so))))
        assert (m32, sh32) != multiplier(s1, s2, so)
        assert (np.clip(div_int8(a, b, 0, 0, m32, sh32), -128, 127) != t).any()


def test_activations_broadcast_and_int32(tmp_path):
    rng = np.random.default_rng(52)
    m = Model()
    for act in ACTIVATIONS:
        for k, (s1, s2) in enumerate(SHAPES):
            q1, q2 = (scale(rng, -2, 0), zero_point(rng)), (scale(rng, -2, 0), zero_point(rng))
            qo = (float(np.float32(q1[0] / q2[0] / 20)), zero_point(rng))
            m.op("DIV", [m.input(values(rng, s1, "int8"), quant=q1),
                         m.input(values(rng, s2, "int8"), quant=q2, const=k == 2)],
                 np.broadcast_shapes(s1, s2), "int8", quant=qo, options_cls="DivOptions", FusedActivationFunction=act)
            int32_case(m, rng, "DIV", s1, s2, k, nonzero=True, FusedActivationFunction=act)
    check(tmp_path, m)


def test_rules():
    m = Model()
    x = np.zeros((2, 3), np.int8)
    m.op("DIV", [m.input(x, quant=(1.0, 0)), m.input(x, quant=(1.0, 0))], (2, 3), "int8", quant=(2.0 ** -20, 0))
    m.op("DIV", [m.input(x, quant=(1.0, 0)), m.input(x, quant=(1.0, 0))], (2, 3), "int8", quant=(2.0 ** -19, 0))
    m.op("DIV", [m.input(x, quant=(2.0 ** -14, 0)), m.input(x, quant=(1.0, 0))], (2, 3), "int8", quant=(2.0 ** 13, 0))
    m.op("DIV", [m.input(x, quant=(0.1, 0)), m.input(x, quant=(0.1, 0))], (2, 3), "int8", quant=(0.1, 0),
         options_cls="DivOptions", FusedActivationFunction="TANH")
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 2, 3]
    assert found[0][2].startswith("The real multiplier s1 / (s2 * s_out) must lie in [2**-25, 2**20)")
    assert "1.04858e+06" in found[0][2]
    assert "7.45058e-09" in found[1][2]
    assert found[2][2].startswith("The fused activation must be NONE, RELU, RELU6 or RELU_N1_TO_1 (got TANH)")
