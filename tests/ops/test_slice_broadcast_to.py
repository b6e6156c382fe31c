"""SLICE and BROADCAST_TO against TFLite Micro: the numpy reference and the portable C (the
output-order gather, mcu_gather) on the host, on seeded random slices and broadcasts of rank 1-5 for
every element type; and the support rules."""

from __future__ import annotations

import numpy as np
from _opmodels import Cases, assert_refused, check

DTYPES = (("int8", (0.1, -4)), ("int16", None), ("int32", None), ("float32", None))


def random_slice(rng):
    rank = int(rng.integers(1, 6))
    shape = tuple(int(d) for d in rng.integers(1, 7, rank))
    begin = [int(rng.integers(0, d)) for d in shape]
    size = [-1 if rng.random() < 0.3 else int(rng.integers(1, d - b + 1)) for d, b in zip(shape, begin)]
    out = [d - b if s == -1 else s for d, b, s in zip(shape, begin, size)]
    return shape, begin, size, out


def test_slice_equals_tflm(tmp_path):
    """30 seeded random slices per element type (int32 and int64 begin/size, sizes of -1), plus
    the whole input and single elements."""
    rng = np.random.default_rng(2)
    c = Cases(seed=3)
    for dtype, q in DTYPES:
        cases = [random_slice(rng) for _ in range(30)]
        cases += [((2, 3, 4), [0, 0, 0], [-1, -1, -1], [2, 3, 4]), ((5,), [4], [1], [1]),
                  ((1, 2, 3, 4, 5), [0, 1, 2, 3, 4], [1, 1, 1, 1, 1], [1] * 5)]
        for k, (shape, begin, size, out) in enumerate(cases):
            idt = "int64" if k % 3 == 0 else "int32"
            x = c.input(shape, dtype, q)
            c.op("SLICE", [x, c.const(begin, idt), c.const(size, idt)], out, dtype, q,
                 label=f"{dtype} {shape} begin {begin} size {size}")
    check(tmp_path, c)


def random_broadcast(rng):
    rank = int(rng.integers(1, 6))
    out = tuple(int(d) for d in rng.integers(1, 6, rank))
    keep = int(rng.integers(0, rank + 1))
    shape = tuple(d if rng.random() < 0.5 else 1 for d in out[rank - keep:])
    return shape, out


def test_broadcast_to_equals_tflm(tmp_path):
    """20 seeded random broadcasts per element type (leading axes added, size-1 axes stretched,
    int32 and int64 shapes), plus a scalar-like input and the identity."""
    rng = np.random.default_rng(4)
    c = Cases(seed=5)
    for dtype, q in DTYPES:
        cases = [random_broadcast(rng) for _ in range(20)] + [((1,), (2, 3, 4, 5, 6)), ((3, 1, 2), (3, 1, 2)),
                                                             ((4, 1), (2, 1, 3, 4, 7))]
        for k, (shape, out) in enumerate(cases):
            x = c.input(shape, dtype, q)
            c.op("BROADCAST_TO", [x, c.const(out, "int64" if k % 2 else "int32")], out, dtype, q,
                 label=f"{dtype} {shape} -> {out}")
    check(tmp_path, c)


def test_slice_rules(tmp_path):
    """The tflite-micro build the tests run does not validate begin/size: it reads outside the
    input for the first two cases and reads an int64 size as int32 words for the third (newer TFLM
    sources refuse all three); mcuforge refuses them."""
    c = Cases()
    x = c.input((3, 4))
    c.op("SLICE", [x, c.const([1, 4]), c.const([1, 1])], (1, 1))  # begin past the end
    x = c.input((3, 4))
    c.op("SLICE", [x, c.const([1, 1]), c.const([3, 1])], (3, 1))  # size past the end
    x = c.input((3, 4))
    c.op("SLICE", [x, c.const([1, 1]), c.const([1, 1], "int64")], (1, 1))  # mixed index types
    x = c.input((1,) * 6)
    c.op("SLICE", [x, c.const([0] * 6), c.const([1] * 6)], (1,) * 6)
    assert_refused(tmp_path, c, ["axis 1 of size 4: begin 4", "axis 0 of size 3: begin 1, size 3",
                                 "begin is int32, size int64", "rank 1 to 5"], [False, False, False, True])


def test_broadcast_to_rules(tmp_path):
    c = Cases()
    x = c.input((3, 2))
    c.op("BROADCAST_TO", [x, c.const([2, 3, 4])], (2, 3, 4))
    x = c.input((2, 1))
    c.op("BROADCAST_TO", [x, c.const([1, 1, 1, 1, 2, 3])], (1, 1, 1, 1, 2, 3))
    assert_refused(tmp_path, c, ["[3, 2] does not broadcast to [2, 3, 4]", "rank 6"], [True, True])
