"""REDUCE_MAX, REDUCE_MIN and SUM against TFLite Micro: the numpy reference and the portable C on
the host, on seeded random axes (negative, repeated) of ranks 1-6, keep_dims or not, and for
SUM many quantization draws (output scale smaller and larger than the input's); and the rules."""

from __future__ import annotations

import numpy as np
from _opmodels import Cases, assert_refused, check


def random_reduction(rng, max_rank: int, max_axes: int):
    rank = int(rng.integers(1, max_rank + 1))
    shape = tuple(int(d) for d in rng.integers(1, 6, rank))
    n = int(rng.integers(1, min(rank, max_axes) + 1))
    axes = [int(a) for a in rng.choice(rank, n, replace=False)]
    axes = [a - rank if rng.random() < 0.3 else a for a in axes]
    if axes and rng.random() < 0.2:
        axes.append(axes[0])  # a repeated axis counts once
    keep = bool(rng.random() < 0.5)
    resolved = {a % rank for a in axes}
    out = tuple(1 if i in resolved else d for i, d in enumerate(shape) if keep or i not in resolved)
    return shape, axes, keep, out


def test_reduce_max_min_equal_tflm(tmp_path):
    rng = np.random.default_rng(1)
    c = Cases(seed=1)
    for op in ("REDUCE_MAX", "REDUCE_MIN"):
        cases = [random_reduction(rng, 6, 6) for _ in range(40)]
        cases += [((1, 24, 8), [1], False, (1, 8)), ((1, 6, 7, 9), [1, 2], True, (1, 1, 1, 9)),
                  ((2, 3, 4, 5, 6, 2), [0, 2, 4], False, (3, 5, 2))]
        for shape, axes, keep, out in cases:
            q = (float(np.float32(rng.uniform(0.01, 0.2))), int(rng.integers(-128, 128)))
            x = c.input(shape, q=q)
            c.op(op, [x, c.const(axes)], out, q=q, label=f"{op} {shape} {axes} keep={keep}", KeepDims=keep)
    # every int8 value reaches the output: a reduction over 256 values holding each once
    perm = np.random.default_rng(2).permutation(np.arange(-128, 128)).astype(np.int8)
    for op in ("REDUCE_MAX", "REDUCE_MIN"):
        x = c.input((256,), data=perm)
        c.op(op, [x, c.const([0])], (), label=f"{op} all values")
        x = c.input((256, 1), data=perm)
        c.op(op, [x, c.const([1])], (256, 1), label=f"{op} identity", KeepDims=True)
    check(tmp_path, c)


def test_sum_equals_tflm(tmp_path):
    """60 seeded random sums (ranks 1-5, 1 or 2 axes, negative, repeated) with random input and output
    quantization: output scales from 0.3x to 40x the input's, every zero point range."""
    rng = np.random.default_rng(3)
    c = Cases(seed=3)
    for k in range(60):
        shape, axes, keep, out = random_reduction(rng, 5, 2)
        s_in = float(np.float32(rng.uniform(0.005, 0.1)))
        q_in = (s_in, int(rng.integers(-128, 128)))
        q_out = (float(np.float32(s_in * rng.choice([0.3, 0.7, 1.0, 2.5, 8.0, 40.0]))), int(rng.integers(-128, 128)))
        x = c.input(shape, q=q_in)
        c.op("SUM", [x, c.const(axes)], out, q=q_out, label=f"SUM {shape} {axes} keep={keep} {q_in} {q_out}",
             KeepDims=keep)
    x = c.input((1, 64, 64, 2), q=(0.02, -128), data=np.full((1, 64, 64, 2), 127))
    c.op("SUM", [x, c.const([1, 2])], (1, 2), q=(0.02, 5), label="SUM saturating")
    check(tmp_path, c, [[np.random.default_rng(9).integers(-128, 128, d.shape).astype(np.int8) for d in c.data]])


def test_reduce_rules(tmp_path):
    c = Cases()
    x = c.input((2, 3), q=(0.1, 0))
    c.op("REDUCE_MAX", [x, c.const([1])], (2,), q=(0.2, 0))
    x = c.input((2, 3), q=(0.1, 0))
    c.op("REDUCE_MIN", [x, c.const([1])], (2,), q=(0.1, 1))
    x = c.input((2, 3, 2, 3, 2, 3, 2))
    c.op("REDUCE_MAX", [x, c.const([0, 2, 4, 6])], (3, 3, 3))
    x = c.input((2, 3, 4))
    c.op("SUM", [x, c.const([0, 1, 2])], ())
    x = c.input((2, 3), "int16", None)
    c.op("SUM", [x, c.const([1])], (2,), "int16", None)
    assert_refused(tmp_path, c, ["scale and zero point (TFLM does not requantize) (input scale 0.100000001", "output 0.100000001 1",
                                 "7 runs", "3 axes [0, 1, 2]", "int8"], [True, True, False, False, False])
