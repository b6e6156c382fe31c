"""DEPTH_TO_SPACE, SPACE_TO_DEPTH, BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND against TFLite Micro:
the numpy reference and the portable C (even walks, a table gather for the cropped
BATCH_TO_SPACE_ND) on the host, int8 and float32, 3-D and 4-D; and the support rules (a padding
SPACE_TO_BATCH_ND is refused: TFLM fills the padding with an uninitialized value)."""

from __future__ import annotations

import numpy as np
from _opmodels import Cases, assert_refused, check

DTYPES = (("int8", (0.1, -5)), ("float32", None))


def test_depth_to_space_and_back_equal_tflm(tmp_path):
    c = Cases(seed=1)
    for dtype, q in DTYPES:
        for shape, b in [((1, 3, 4, 8), 2), ((2, 2, 3, 18), 3), ((1, 1, 1, 4), 2), ((1, 3, 2, 5), 1), ((1, 2, 2, 64), 4)]:
            n, h, w, ch = shape
            x = c.input(shape, dtype, q)
            c.op("DEPTH_TO_SPACE", [x], (n, h * b, w * b, ch // (b * b)), dtype, q, label=f"d2s {dtype} {shape} {b}",
                 BlockSize=b)
        for shape, b in [((1, 4, 6, 3), 2), ((2, 6, 3, 2), 3), ((1, 2, 2, 1), 2), ((1, 3, 5, 7), 1), ((1, 8, 8, 2), 4)]:
            n, h, w, ch = shape
            x = c.input(shape, dtype, q)
            c.op("SPACE_TO_DEPTH", [x], (n, h // b, w // b, ch * b * b), dtype, q, label=f"s2d {dtype} {shape} {b}",
                 BlockSize=b)
    check(tmp_path, c)


# (input shape, block shape, crops): no crops, crops on every side, 3-D, uneven blocks, batch > 1
B2S = [((4, 2, 3, 2), [2, 2], [[0, 0], [0, 0]]), ((4, 3, 3, 3), [2, 2], [[1, 0], [0, 1]]),
       ((8, 2, 2, 1), [2, 2], [[1, 2], [2, 1]]), ((6, 3, 2), [3], [[2, 1]]), ((6, 2, 4, 3), [3, 2], [[1, 1], [0, 3]]),
       ((4, 5, 1, 2), [1, 4], [[0, 2], [1, 0]]), ((3, 4, 2), [1], [[0, 0]])]
# (input shape, block shape, paddings)
S2B = [((1, 4, 6, 2), [2, 2], [[0, 0], [0, 0]]), ((2, 4, 4, 3), [2, 2], [[0, 0], [0, 0]]),
       ((1, 2, 2, 1), [2, 2], [[0, 0], [0, 0]]), ((2, 6, 3), [3], [[0, 0]]), ((1, 6, 4, 3), [3, 2], [[0, 0], [0, 0]]),
       ((3, 5, 4, 2), [1, 4], [[0, 0], [0, 0]]), ((1, 4, 2), [2], [[0, 0]]), ((2, 6, 9, 2), [3, 3], [[0, 0], [0, 0]])]


def b2s_out(shape, block, crops):
    spatial = [d * b - lo - hi for d, b, (lo, hi) in zip(shape[1:-1], block, crops)]
    return (shape[0] // int(np.prod(block)), *spatial, shape[-1])


def s2b_out(shape, block, pads):
    spatial = [(d + lo + hi) // b for d, b, (lo, hi) in zip(shape[1:-1], block, pads)]
    return (shape[0] * int(np.prod(block)), *spatial, shape[-1])


def test_batch_space_equal_tflm(tmp_path):
    c = Cases(seed=2)
    for dtype, q in DTYPES:
        for shape, block, crops in B2S:
            x = c.input(shape, dtype, q)
            c.op("BATCH_TO_SPACE_ND", [x, c.const(block), c.const(crops)], b2s_out(shape, block, crops), dtype, q,
                 label=f"b2s {dtype} {shape} {block} {crops}")
        for shape, block, pads in S2B:
            x = c.input(shape, dtype, q)
            c.op("SPACE_TO_BATCH_ND", [x, c.const(block), c.const(pads)], s2b_out(shape, block, pads), dtype, q,
                 label=f"s2b {dtype} {shape} {block} {pads}")
    check(tmp_path, c)


def test_space_rules(tmp_path):
    c = Cases()
    x = c.input((1, 2, 2, 6))
    c.op("DEPTH_TO_SPACE", [x], (1, 4, 4, 1), BlockSize=2)
    x = c.input((1, 3, 4, 1))
    c.op("SPACE_TO_DEPTH", [x], (1, 1, 2, 4), BlockSize=2)
    x = c.input((3, 2, 2, 1))
    c.op("BATCH_TO_SPACE_ND", [x, c.const([2, 2]), c.const([[0, 0], [0, 0]])], (0, 4, 4, 1))
    x = c.input((1, 3, 4, 1))
    c.op("SPACE_TO_BATCH_ND", [x, c.const([2, 2]), c.const([[0, 0], [0, 0]])], (4, 1, 2, 1))
    x = c.input((1, 3, 3, 1))
    c.op("SPACE_TO_BATCH_ND", [x, c.const([2, 2]), c.const([[1, 0], [0, 1]])], (4, 2, 2, 1))
    x = c.input((2, 2, 2, 2, 1))
    c.op("SPACE_TO_BATCH_ND", [x, c.const([1, 1, 1]), c.const([[0, 0]] * 3)], (2, 2, 2, 2, 1))
    x = c.input((4, 2, 2, 1), "int16", None)
    c.op("BATCH_TO_SPACE_ND", [x, c.const([2, 2]), c.const([[0, 0], [0, 0]])], (1, 4, 4, 1), "int16", None)
    assert_refused(tmp_path, c, ["6 channels for block size 2", "3x4 for block size 2", "batch 3 for block shape",
                                 "[3, 4], block [2, 2]", "paddings must be 0: TFLM fills padding with a value its "
                                 "kernel never initializes (got [[1, 0], [0, 1]])", "rank 3 (N, H, C) or 4",
                                 "int8 or float32"],
                   [False, True, False, False, False, True, True])
