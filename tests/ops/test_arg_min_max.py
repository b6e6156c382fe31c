"""ARG_MAX and ARG_MIN against TFLite Micro: the numpy reference and the portable C on the host
(int32 outputs), on seeded random shapes and axes of ranks 1-6, ties (the first index wins), and the
support rules (TFLM has no int64 output)."""

from __future__ import annotations

import numpy as np
from _opmodels import Cases, assert_refused, check

OUTPUT_TYPE = {"int32": 2, "int64": 4}


def test_arg_min_max_equal_tflm(tmp_path):
    rng = np.random.default_rng(1)
    c = Cases(seed=1)
    for op in ("ARG_MAX", "ARG_MIN"):
        for k in range(30):
            rank = int(rng.integers(1, 7))
            shape = tuple(int(d) for d in rng.integers(1, 6, rank))
            axis = int(rng.integers(-rank, rank))
            out = tuple(d for i, d in enumerate(shape) if i != axis % rank)
            x = c.input(shape)
            c.op(op, [x, c.const([axis] if k % 2 else axis)], out, "int32", None, label=f"{op} {shape} {axis}",
                 OutputType=OUTPUT_TYPE["int32"])
        # ties: few distinct values along a long axis, the first index must win
        x = c.input((3, 40, 2), data=np.random.default_rng(2).integers(-1, 2, (3, 40, 2)))
        c.op(op, [x, c.const([1])], (3, 2), "int32", None, label=f"{op} ties", OutputType=2)
        x = c.input((5, 7), data=np.full((5, 7), -128))
        c.op(op, [x, c.const([-1])], (5,), "int32", None, label=f"{op} all equal", OutputType=2)
    check(tmp_path, c)


def test_arg_min_max_rules(tmp_path):
    c = Cases()
    x = c.input((2, 3))
    c.op("ARG_MAX", [x, c.const([1])], (2,), "int64", None, OutputType=OUTPUT_TYPE["int64"])
    x = c.input((2, 3))
    c.op("ARG_MIN", [x, c.const([1], "int64")], (2,), "int32", None, OutputType=2)
    x = c.input((2, 3), "int16", None)
    c.op("ARG_MAX", [x, c.const([0])], (3,), "int32", None, OutputType=2)
    assert_refused(tmp_path, c, ["no int64 ARG_MAX", "1 int64 values", "input must be int8"], [True, True, True])
