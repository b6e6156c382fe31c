"""MIRROR_PAD against TFLite Micro, and TILE (which TFLM has no kernel for) against numpy's np.tile:
the numpy reference and the portable C (mcu_gather_table, per-axis offset tables) on the host;
and the support rules."""

from __future__ import annotations

import numpy as np
from _opmodels import Cases, assert_refused, check, run_c, save
from mcuforge.frontend import load_tflite
from mcuforge.ir.evaluate import evaluate
from mcuforge.ir.ops._portable import gather_table_plan

from mcuforge.driver import Options, compile_model

MODES = {"REFLECT": 0, "SYMMETRIC": 1}

# (input shape, paddings): edge-to-edge pads on each side, one-axis pads (channel runs stay
# contiguous), a pad of the innermost axis (single-element runs), rank 1 and rank 6
MIRROR_CASES = [
    ((1, 5, 6, 3), [[0, 0], [1, 2], [2, 1], [0, 0]]),
    ((1, 5, 6, 3), [[0, 0], [4, 4], [0, 0], [0, 0]]),
    ((2, 4, 3), [[1, 1], [0, 0], [2, 2]]),
    ((7,), [[3, 6]]),
    ((2, 3), [[0, 1], [2, 0]]),
    ((2, 1, 3, 2, 3, 4), [[1, 0], [0, 0], [2, 1], [1, 1], [0, 2], [3, 0]]),
]


def max_pad(shape, pads, mode):
    """The paddings clipped to what the mode can mirror."""
    limit = 1 if mode == "REFLECT" else 0
    return [[min(lo, d - limit), min(hi, d - limit)] for d, (lo, hi) in zip(shape, pads)]


def test_mirror_pad_equals_tflm(tmp_path):
    """Both modes, int8 and float32, int32 and int64 paddings, each case at the mode's largest pads."""
    c = Cases(seed=1)
    for dtype, q in (("int8", (0.1, -7)), ("float32", None)):
        for mode in MODES:
            for shape, pads in MIRROR_CASES:
                pads = max_pad(shape, pads, mode)
                for pdt in ("int32", "int64"):
                    x = c.input(shape, dtype, q)
                    out = [d + lo + hi for d, (lo, hi) in zip(shape, pads)]
                    c.op("MIRROR_PAD", [x, c.const(pads, pdt)], out, dtype, q,
                         label=f"{dtype} {mode} {shape} {pads} {pdt}", Mode=MODES[mode])
    check(tmp_path, c)


def test_mirror_pad_matches_numpy_pad():
    """Within the mode's limits TFLM's index rule is numpy's reflect / symmetric padding."""
    from mcuforge.ir.ops.mirror_pad import source_index

    for mode, np_mode in (("REFLECT", "reflect"), ("SYMMETRIC", "symmetric")):
        for size in range(1, 7):
            limit = size - 1 if mode == "REFLECT" else size
            for lo in range(limit + 1):
                for hi in range(limit + 1):
                    want = np.pad(np.arange(size), (lo, hi), mode=np_mode)
                    got = [source_index(i, lo, size, mode) for i in range(lo + size + hi)]
                    assert list(want) == got, (mode, size, lo, hi)


def test_mirror_pad_rules(tmp_path):
    c = Cases()
    x = c.input((3, 4))
    c.op("MIRROR_PAD", [x, c.const([[3, 0], [0, 0]])], (6, 4), Mode=0)  # REFLECT beyond size - 1
    x = c.input((3, 4))
    c.op("MIRROR_PAD", [x, c.const([[0, 0], [0, 5]])], (3, 9), Mode=1)  # SYMMETRIC beyond size
    x = c.input((3, 4), "int16", None)
    c.op("MIRROR_PAD", [x, c.const([[1, 1], [0, 0]])], (5, 4), "int16", None, Mode=0)
    x = c.input((3, 4))
    c.op("MIRROR_PAD", [x, c.const([1, 1, 0, 0, 0, 0])], (5, 4), Mode=0)
    assert_refused(tmp_path, c, ["axis 0 of size 3 padded by 3 and 0", "axis 1 of size 4 padded by 0 and 5",
                                 "int8 or float32", "paddings shape [6]"], [False, False, True, True])


# ---- TILE: np.tile is the oracle -----------------------------------------------------------------

def tile_shapes(rng, n: int):
    """Seeded random (shape, multiples) pairs of rank 1 to 6, small enough to run quickly."""
    out = []
    while len(out) < n:
        rank = int(rng.integers(1, 7))
        shape = tuple(int(d) for d in rng.integers(1, 5, rank))
        mult = tuple(int(m) for m in rng.integers(1, 4, rank))
        if np.prod(shape) * np.prod(mult) <= 4096:
            out.append((shape, mult))
    return out


def test_tile_reference_and_c_equal_np_tile(tmp_path):
    """TFLM has no TILE: the reference and the generated C must equal np.tile, for int8, int16,
    int32 and float32, on 40 seeded random shapes and multiples of rank 1-6 each plus the edge cases
    (all multiples 1, one axis, size-1 axes), with int32 and int64 multiples."""
    rng = np.random.default_rng(1)
    edge = [((3, 4), (1, 1)), ((1,), (7,)), ((1, 1, 1), (2, 3, 4)), ((5, 1, 3), (1, 6, 1))]
    c = Cases(seed=5)
    mults = []
    for dtype, q in (("int8", (0.2, 1)), ("int16", None), ("int32", None), ("float32", None)):
        for k, (shape, mult) in enumerate(tile_shapes(rng, 40) + edge):
            x = c.input(shape, dtype, q)
            c.op("TILE", [x, c.const(mult, "int64" if k % 2 else "int32")], tuple(np.multiply(shape, mult)), dtype,
                 q, label=f"{dtype} {shape} x {mult}")
            mults.append(mult)
    path = save(tmp_path, c.finish())
    want = [np.tile(x, m) for x, m in zip(c.data, mults)]
    ours = evaluate(load_tflite(path), c.data)
    compiled = compile_model(path, Options(targets=("c",)))
    (host,) = run_c(compiled, [c.data])
    for label, w, o, h in zip(c.labels, want, ours, host):
        assert o.dtype == w.dtype and np.array_equal(o, w), f"reference, {label}"
        assert h.dtype == w.dtype and np.array_equal(h, w), f"portable C, {label}"


def test_tile_rules(tmp_path):
    c = Cases()
    x = c.input((2, 3))
    c.op("TILE", [x, c.const([2, 0])], (4, 0))
    x = c.input((1,) * 7)
    c.op("TILE", [x, c.const([1] * 7)], (1,) * 7)
    assert_refused(tmp_path, c, ["got [2, 0] for rank 2", "rank 1 to 6"], [False, False])


def test_gather_table_plan_merges_contiguous_runs():
    """Innermost axes that continue the run become the run; size-1 axes fold into the start."""
    params, offsets = gather_table_plan([1, 3, 4, 5], [[7], [0, 40, 20], np.arange(4) * 5, np.arange(5)])
    assert params == {"start": 7, "count": [1, 1, 1, 1, 1, 3], "run": 20}
    assert list(offsets) == [0, 0, 0, 0, 0, 0, 40, 20]
