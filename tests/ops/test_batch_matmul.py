"""BATCH_MATMUL against TFLite Micro: the numpy reference and the portable C on the host, on seeded
random shapes (ranks 2-5, broadcast batch axes), every adj_x / adj_y pair, constant operands, many
quantization draws including scales whose float32 product gives another multiplier (and output)
than the product in double, which TFLM uses; and the support rules."""

from __future__ import annotations

import numpy as np
from _opmodels import Cases, assert_refused, check
from mcuforge.ir import quant


def f32(v) -> float:
    return float(np.float32(v))


def random_case(rng):
    rows, depth, cols = (int(v) for v in rng.integers(1, 9, 3))
    batch = tuple(int(d) for d in rng.integers(1, 4, int(rng.integers(0, 4))))
    lb = tuple(d if rng.random() < 0.6 else 1 for d in batch)[int(rng.integers(0, len(batch) + 1)):]
    rb = tuple(d if rng.random() < 0.6 else 1 for d in batch)[int(rng.integers(0, len(batch) + 1)):]
    return lb, rb, rows, depth, cols


def float32_product_case(rng) -> tuple[float, float, float, int]:
    """Scales whose float32 product gives another QuantizeMultiplier than the exact product, and an
    accumulator value (|acc| < 2^21) on which the two multipliers round to different outputs."""
    accs = np.arange(-(1 << 21), 1 << 21, dtype=np.int64)
    while True:
        a, b = f32(rng.uniform(0.001, 0.1)), f32(rng.uniform(0.001, 0.1))
        o = f32(a * b * (1 << 21) / rng.uniform(20, 100))
        exact = quant.quantize_multiplier(np.float64(a) * np.float64(b) / np.float64(o))
        single = quant.quantize_multiplier(float(np.float64(np.float32(a) * np.float32(b)) / np.float64(o)))
        if exact == single:
            continue
        differ = np.flatnonzero(quant.multiply_by_quantized_multiplier(accs, *exact)
                                != quant.multiply_by_quantized_multiplier(accs, *single))
        if differ.size:
            return a, b, o, int(accs[differ[0]])


def operands_for(acc: int) -> tuple[np.ndarray, np.ndarray]:
    """A row and a column (zero points 0) whose dot product is `acc`."""
    q, r = divmod(abs(acc), 127 * 127)
    sign = 1 if acc >= 0 else -1
    row = [127] * q + [r // 127, r % 127]
    col = [127 * sign] * q + [127 * sign, sign]
    return np.array(row, np.int8), np.array(col, np.int8)


def test_batch_matmul_equals_tflm(tmp_path):
    rng = np.random.default_rng(1)
    c = Cases(seed=1)
    for k in range(48):
        lb, rb, rows, depth, cols = random_case(rng)
        adj_x, adj_y = bool(k & 1), bool(k & 2)
        lhs = lb + ((depth, rows) if adj_x else (rows, depth))
        rhs = rb + ((cols, depth) if adj_y else (depth, cols))
        if len(lhs) < 2 or len(rhs) < 2:
            continue
        sa, sb = f32(rng.uniform(0.002, 0.1)), f32(rng.uniform(0.002, 0.1))
        qa, qb = (sa, int(rng.integers(-128, 128))), (sb, int(rng.integers(-128, 128)))
        qo = (f32(sa * sb * rng.uniform(1, 100) * np.sqrt(depth)), int(rng.integers(-128, 128)))
        a = c.input(lhs, q=qa)
        b = c.const(rng.integers(-128, 128, rhs).astype(np.int8), "int8", qb) if k % 5 == 4 else c.input(rhs, q=qb)
        out = tuple(np.broadcast_shapes(lb, rb)) + (rows, cols)
        c.op("BATCH_MATMUL", [a, b], out, q=qo, label=f"{lhs} x {rhs} adj {adj_x} {adj_y}", AdjX=adj_x, AdjY=adj_y)
    for _ in range(3):  # the float32 product's multiplier would give another output here
        sa, sb, so, acc = float32_product_case(rng)
        row, col = operands_for(acc)
        a = c.input((1, row.size), q=(sa, 0), data=row)
        b = c.input((col.size, 1), q=(sb, 0), data=col)
        c.op("BATCH_MATMUL", [a, b], (1, 1), q=(so, 0), label=f"float32 product {sa} {sb} {so} acc {acc}")
    # a long depth of extremes: the int32 sum far from zero, saturating outputs
    a = c.input((1, 2, 600), q=(0.05, 127), data=np.full((1, 2, 600), -128))
    b = c.input((600, 3), q=(0.05, -128), data=np.full((600, 3), 127))
    c.op("BATCH_MATMUL", [a, b], (1, 2, 3), q=(200.0, 0), label="long depth")
    check(tmp_path, c)


def test_batch_matmul_rules(tmp_path):
    c = Cases()
    a, b = c.input((2, 3, 4)), c.input((3, 4, 5))
    c.op("BATCH_MATMUL", [a, b], (2, 3, 5))
    a, b = c.input((3, 4)), c.input((5, 6))
    c.op("BATCH_MATMUL", [a, b], (3, 6))
    a, b = c.input((1, 1, 1, 1, 3, 4)), c.input((4, 5))
    c.op("BATCH_MATMUL", [a, b], (1, 1, 1, 1, 3, 5))
    a, b = c.input((3, 4), "int16", None), c.input((4, 5), "int16", None)
    c.op("BATCH_MATMUL", [a, b], (3, 5), "int16", None)
    assert_refused(tmp_path, c, ["do not broadcast", "depths 4 and 5", "lhs [1, 1, 1, 1, 3, 4]", "lhs is int16"],
                   [True, True, True, False])
