"""CUMSUM against TFLite Micro: the numpy reference and the portable C on the host, every
exclusive / reverse combination on seeded random shapes and axes with random quantization, every
int8 value, long axes whose int32 accumulator wraps, and float32 (as the converter leaves it); and
the support rules."""

from __future__ import annotations

import numpy as np
from _opmodels import Cases, assert_refused, check


def test_cumsum_equals_tflm(tmp_path):
    rng = np.random.default_rng(1)
    c = Cases(seed=1)
    for exclusive in (False, True):
        for reverse in (False, True):
            for k in range(10):
                rank = int(rng.integers(1, 7))
                shape = tuple(int(d) for d in rng.integers(1, 6, rank))
                axis = int(rng.integers(-rank, rank))
                s_in = float(np.float32(rng.uniform(0.005, 0.1)))
                q_in = (s_in, int(rng.integers(-128, 128)))
                q_out = (float(np.float32(s_in * rng.uniform(0.5, 30))), int(rng.integers(-128, 128)))
                x = c.input(shape, q=q_in)
                c.op("CUMSUM", [x, c.const([axis] if k % 2 else axis)], shape, q=q_out,
                     label=f"{shape} axis {axis} excl={exclusive} rev={reverse}", Exclusive=exclusive, Reverse=reverse)
            # every int8 value; a 300-long axis of extremes wraps the int32 accumulator
            x = c.input((256,), q=(0.05, -7), data=np.arange(-128, 128))
            c.op("CUMSUM", [x, c.const([0])], (256,), q=(0.6, 3), label=f"all values {exclusive} {reverse}",
                 Exclusive=exclusive, Reverse=reverse)
            x = c.input((2, 300), q=(0.05, 127), data=np.tile([[-128], [127]], (1, 300)))
            c.op("CUMSUM", [x, c.const([1])], (2, 300), q=(1.5, 0), label=f"wraps {exclusive} {reverse}",
                 Exclusive=exclusive, Reverse=reverse)
            for shape, axis in (((3, 50, 2), 1), ((4, 5), -1), ((7,), 0)):
                x = c.input(shape, "float32", None)
                c.op("CUMSUM", [x, c.const([axis])], shape, "float32", None,
                     label=f"float32 {shape} {axis} {exclusive} {reverse}", Exclusive=exclusive, Reverse=reverse)
    check(tmp_path, c)


def test_cumsum_rules(tmp_path):
    c = Cases()
    x = c.input((2, 3), q=(0.1, 0))
    c.op("CUMSUM", [x, c.const([1])], (2, 3), q=(1e-7, 0))
    x = c.input((2, 3))
    c.op("CUMSUM", [x, c.const([0, 1])], (2, 3))
    x = c.input((2, 3))
    c.op("CUMSUM", [x, c.const([2])], (2, 3))
    assert_refused(tmp_path, c, ["output scale must exceed", "2 int32 values", "axis 2 of a rank-2"],
                   [False, True, True])
