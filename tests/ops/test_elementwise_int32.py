"""ADD, SUB, MUL on int32 tensors (and DIV, SQUARED_DIFFERENCE: their own tests) against TFLite
Micro: the numpy reference and the portable C (mcu_arith_s32.c) with every fused activation (TFLM's
int32 ADD ignores it, SUB and MUL apply it), overflow at the int32 extremes (wrapping), broadcasts
up to rank 6 and constant operands; and the type rules."""

from __future__ import annotations

import numpy as np
import pytest
from elementwise_cases import Model, check, problems, values

SHAPES = [((2, 3), (2, 3)), ((1, 4, 5, 8), (1, 1, 1, 8)), ((), (2, 3)), ((3, 1, 6), (1, 4, 1)),
          ((2, 1, 3, 1, 2), (1, 4, 1, 2, 2)), ((2, 1, 3, 1, 2, 2), (1, 2, 1, 2, 1, 2))]
OPTIONS = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions", "DIV": "DivOptions"}
ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
EXTREMES = np.array([2**31 - 1, -2**31, 2**30, -2**30, 65536, -65536, 46341, -1, 0, 1, 7, -7], np.int32)


def int32_case(m: Model, rng, op: str, s1, s2, k: int, nonzero: bool = False, **options) -> None:
    """One operator on small values (the clamps matter), full-range values or the extremes."""
    if k % 3 == 0:
        x, y = values(rng, s1, "int32", -9, 9), values(rng, s2, "int32", -9, 9)
    elif k % 3 == 1:
        x, y = values(rng, s1, "int32"), values(rng, s2, "int32")
    else:
        x, y = rng.choice(EXTREMES, s1).astype(np.int32), rng.choice(EXTREMES, s2).astype(np.int32)
    if nonzero:  # TFLM traps on a zero divisor and on INT32_MIN / -1
        y = np.where((y == 0) | (y == -1), 5, y).astype(np.int32)
    m.op(op, [m.input(x), m.input(y, const=k == 2)], np.broadcast_shapes(s1, s2), "int32",
         options_cls=OPTIONS.get(op) if options else None, **options)


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_int32(tmp_path, op):
    rng = np.random.default_rng(31)
    m = Model()
    for act in ACTIVATIONS:
        for k, (s1, s2) in enumerate(SHAPES):
            int32_case(m, rng, op, s1, s2, k, FusedActivationFunction=act)
    check(tmp_path, m)


def test_int32_rules():
    m = Model()
    x = np.zeros((2, 3), np.int32)
    m.op("ADD", [m.input(x), m.input(x.astype(np.int8), quant=(0.1, 0))], (2, 3), "int32")
    m.op("MUL", [m.input(x.astype(np.int16), quant=(0.1, 0)), m.input(x)], (2, 3), "int16", quant=(0.1, 0))
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 1]
    assert found[0][2].startswith("All inputs and the output must be int8, all int16, or all int32 (got int32, int8)")
    assert found[1][2].startswith("All inputs and the output must be int8, all int16, or all int32 (got int16, int32)")
