"""RESIZE_BILINEAR (int8) against TFLite Micro: the numpy reference and the portable C on the host,
over a grid of input and output sizes (up- and downsampling) in all three corner modes, every int8
value, several channels and batches; and the support rules."""

from __future__ import annotations

import numpy as np
from _opmodels import Cases, assert_refused, check
from mcuforge.ir.ops.resize_bilinear import axis_taps

MODES = [(False, False), (True, False), (False, True)]  # (align_corners, half_pixel_centers)


def resize(c: Cases, shape, size, ac, hp, q=(0.1, -3), data=None):
    x = c.input(shape, q=q, data=data)
    n, _, _, ch = shape
    c.op("RESIZE_BILINEAR", [x, c.const(size)], (n, *size, ch), q=q, label=f"{shape} -> {size} ac={ac} hp={hp}",
         AlignCorners=ac, HalfPixelCenters=hp)


def test_resize_bilinear_size_grid_equals_tflm(tmp_path):
    """Heights 1-7 to 1-15 (every pair) in all three modes, on a 2-column, 1-channel input."""
    c = Cases(seed=1)
    for ac, hp in MODES:
        for h in range(1, 8):
            for oh in range(1, 16):
                resize(c, (1, h, 2, 1), (oh, 3), ac, hp)
    check(tmp_path, c)


def test_resize_bilinear_equals_tflm(tmp_path):
    rng = np.random.default_rng(2)
    c = Cases(seed=2)
    for ac, hp in MODES:
        for shape, size in [((1, 4, 4, 3), (8, 8)), ((2, 5, 3, 4), (7, 11)), ((1, 16, 16, 2), (5, 6)),
                            ((1, 3, 7, 8), (12, 2)), ((1, 1, 1, 5), (4, 4)), ((1, 6, 6, 1), (6, 6))]:
            resize(c, shape, size, ac, hp, q=(float(np.float32(rng.uniform(0.01, 0.2))), int(rng.integers(-128, 128))))
        # every int8 value, in corners and between them
        resize(c, (1, 16, 16, 1), (37, 21), ac, hp, data=np.arange(-128, 128).reshape(1, 16, 16, 1))
    check(tmp_path, c, [[np.full(d.shape, v, np.int8) for d in c.data] for v in (-128, 127)])


def test_taps_outside_the_input_are_refused(tmp_path):
    """A 1-row input stretched to 70 rows: the rounded scale (15, not 1024/70 = 14.6) carries the last
    row to input row 1, outside the input, which TFLM reads; refused."""
    lo, _, _ = axis_taps(1, 70, False, False)
    assert lo.max() == 1
    c = Cases()
    resize(c, (1, 1, 2, 1), (70, 2), False, False)
    x = c.input((1, 2, 2, 1))
    c.op("RESIZE_BILINEAR", [x, c.const([3, 3])], (1, 3, 3, 1), AlignCorners=True, HalfPixelCenters=True)
    x = c.input((1, 2, 2, 1), "int16", None)
    c.op("RESIZE_BILINEAR", [x, c.const([3, 3])], (1, 3, 3, 1), "int16", None)
    assert_refused(tmp_path, c, ["output row 69 reads input row 1 of 1", "both set", "got int16"],
                   [False, True, False])
