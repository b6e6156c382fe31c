"""int16 ADD, SUB and MUL against the TFLite Micro interpreter: the numpy reference and the portable
C kernels (host gcc), byte for byte, on a 256 x 256 grid of int16 pairs spanning the whole range
(with its edges), random pairs under broadcasting up to rank 6, zero points (ADD and SUB apply them;
MUL requires 0), fused activations and scale ratios; and the rules."""

from __future__ import annotations

import numpy as np
import pytest
from _int16 import EDGES16, check_against_tflm, int16_values, kernels, refusals

from devtools.tflite_writer import ModelWriter

# (shape 1, shape 2): the pair grid, equal shapes, a scalar, channel / row broadcasts, both sides, rank 6
SHAPES = [((256, 256), (256, 256)), ((1, 5, 7, 3), (1, 5, 7, 3)), ((2, 9), ()), ((1, 4, 5, 8), (1, 1, 1, 8)),
          ((3, 1, 6), (1, 4, 1)), ((2, 1, 3, 1, 2, 2), (1, 2, 1, 3, 2, 1))]


def pair_grid() -> tuple[np.ndarray, np.ndarray]:
    """256 values over the int16 range (its edges included), every pair."""
    v = np.unique(np.concatenate([EDGES16, np.linspace(-32768, 32767, 256 - EDGES16.size).astype(np.int64)]))
    v = np.resize(v, 256).astype(np.int16)
    a, b = np.meshgrid(v, v, indexing="ij")
    return a, b


# (op, scales (in1, in2, out), zero points (in1, in2, out), activation)
CASES = [
    ("ADD", (1e-3, 1e-3, 2e-3), (0, 0, 0), "NONE"),
    ("ADD", (3e-4, 7e-4, 5e-4), (5, -7, 3), "RELU"),
    ("ADD", (1e-3, 1e-5, 1e-3), (0, 0, 0), "RELU6"),  # input 2 far finer
    ("ADD", (2e-3, 1e-3, 1e-4), (0, 0, 0), "RELU_N1_TO_1"),  # the output clamps
    ("SUB", (1e-3, 1e-3, 2e-3), (0, 0, 0), "NONE"),
    ("SUB", (5e-4, 2e-4, 3e-4), (-11, 4, 0), "RELU"),
    ("SUB", (1e-3, 2.5e-3, 9e-4), (0, 0, 2), "RELU6"),
    ("MUL", (1e-3, 1e-3, 1e-3), (0, 0, 0), "NONE"),
    ("MUL", (2 ** -15, 3e-3, 1e-4), (0, 0, 0), "RELU"),  # a mask (LOGISTIC output) times a feature
    ("MUL", (1e-2, 3e-2, 0.3), (0, 0, 0), "RELU_N1_TO_1"),
    ("MUL", (1e-2, 1e-2, 1e-4), (0, 0, 0), "RELU6"),  # multiplier just below 1
]


def build(cases, shapes, const_second=False, seed=0):
    rng = np.random.default_rng(seed)
    w = ModelWriter()
    ins, outs, data = [], [], []
    for k, ((op, (s1, s2, so), (z1, z2, zo), act), (sh1, sh2)) in enumerate(
            (c, s) for c in cases for s in shapes):
        if (sh1, sh2) == ((256, 256), (256, 256)):
            x1, x2 = pair_grid()
        else:
            x1, x2 = int16_values(rng, sh1), int16_values(rng, sh2)
        t1 = w.tensor(sh1, "int16", scale=s1, zero_point=z1, name=f"a{k}")
        t2 = w.tensor(sh2, "int16", scale=s2, zero_point=z2, name=f"b{k}", data=x2 if const_second else None)
        y = w.tensor(np.broadcast_shapes(sh1, sh2), "int16", scale=so, zero_point=zo, name=f"y{k}")
        w.op(op, [t1, t2], [y], FusedActivationFunction=act)
        ins += [t1] + ([] if const_second else [t2])
        data += [x1] + ([] if const_second else [x2])
        outs.append(y)
    return w.finish(ins, outs), data


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_binary_ops(tmp_path, op):
    cases = [c for c in CASES if c[0] == op]
    compiled = check_against_tflm(tmp_path, *build(cases, SHAPES, seed=len(op)))
    assert kernels(compiled) == {f"mcu_{op.lower()}_s16"}


def test_constant_operand(tmp_path):
    cases = [CASES[1], CASES[5], CASES[8]]
    check_against_tflm(tmp_path, *build(cases, SHAPES[1:4], const_second=True, seed=9))


def test_rules(tmp_path):
    w = ModelWriter()
    specs = [("MUL", "int16", (1, 0, 0)),  # TFLM's int16 MUL requires zero points 0
             ("MUL", "int16", (0, 0, 0), 2.0),  # multiplier s1 * s2 / s_out = 2: products overflow int32
             ("ADD", "mixed", (0, 0, 0))]
    ins, outs = [], []
    for op, dt, zps, *mult in specs:
        so = 1e-3 * 1e-3 / mult[0] if mult else 1e-3
        a = w.tensor((4,), "int16", scale=1e-3, zero_point=zps[0])
        b = w.tensor((4,), "int8" if dt == "mixed" else "int16", scale=1e-3, zero_point=zps[1])
        y = w.tensor((4,), "int16", scale=so, zero_point=zps[2])
        w.op(op, [a, b], [y])
        ins += [a, b]
        outs.append(y)
    why = [r for _, r in refusals(tmp_path, w.finish(ins, outs))]
    assert len(why) == 3, why
    assert "zero point 0" in why[0] and "input 1" in why[0]
    assert "below 1" in why[1]
    assert "all int16" in why[2] and "int16, int8" in why[2]
