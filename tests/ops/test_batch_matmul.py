"""BATCH_MATMUL against TFLite Micro: the numpy reference and the portable C on the host, on seeded
random shapes (ranks 2-5, broadcast batch axes), every adj_x / adj_y pair, constant operands, many
quantization draws including scales whose float32 product gives another multiplier (and output)
than the product in double, which TFLM uses; and the support rules."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from _opmodels import Cases, assert_refused, check
from mcuforge.ir import quant

from mcuforge.driver import compile_model
from mcuforge.verify import verify_board, verify_host, verify_program


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


# ---- the cmsis-nn kernel (mcu_cmsis_batch_matmul_s8) -------------------------------------------------

def cmsis_cases() -> Cases:
    """The kernel's layouts and paths: a constant rhs with and without adj_y (stored [cols][depth] at
    compile time), both operands activations (the attention products, rhs transposed in scratch or
    read as it is), adj_x (lhs transposed in scratch, or a constant lhs stored transposed),
    broadcast batch axes (a transposed matrix reused), one and two rows (the DSP path without
    widening), column counts and depths off the multiples of four, extreme zero points, a layer
    without a fast requantization (multiplier above 1) and a long depth of extremes."""
    rng = np.random.default_rng(12)
    c = Cases(seed=12)

    def q(depth):
        sa, sb = f32(rng.uniform(0.005, 0.05)), f32(rng.uniform(0.005, 0.05))
        so = f32(sa * sb * rng.uniform(20, 80) * np.sqrt(depth))
        za, zb = (int(z) for z in rng.integers(-128, 128, 2))
        return (sa, za), (sb, zb), (so, int(rng.integers(-20, 21)))

    def values(shape):
        return rng.integers(-128, 128, shape).astype(np.int8)

    def add(lhs, rhs, out, adj_x=False, adj_y=False, const_lhs=False, const_rhs=False, quant=None, label=""):
        depth = lhs[-2] if adj_x else lhs[-1]
        qa, qb, qo = quant or q(depth)
        a = c.const(values(lhs), "int8", qa) if const_lhs else c.input(lhs, q=qa)
        b = c.const(values(rhs), "int8", qb) if const_rhs else c.input(rhs, q=qb)
        c.op("BATCH_MATMUL", [a, b], out, q=qo, label=label or f"{lhs} x {rhs} adj {adj_x} {adj_y}",
             AdjX=adj_x, AdjY=adj_y)

    add((1, 49, 64), (64, 64), (1, 49, 64), const_rhs=True)
    add((1, 10, 30), (13, 30), (1, 10, 13), adj_y=True, const_rhs=True)
    add((4, 16, 32), (4, 32, 16), (4, 16, 16))
    add((4, 32, 32), (4, 32, 32), (4, 32, 32), adj_y=True)
    add((2, 2, 9, 7), (2, 2, 9, 5), (2, 2, 7, 5), adj_x=True)
    add((3, 6, 5), (3, 4, 6), (3, 5, 4), adj_x=True, adj_y=True)
    add((6, 11), (2, 3, 11, 7), (2, 3, 6, 7))  # lhs broadcast
    add((2, 1, 5, 6), (3, 6, 4), (2, 3, 5, 4))  # both broadcast: the rhs matrices reused
    add((2, 3, 5, 6), (1, 6, 4), (2, 3, 5, 4), const_rhs=True)
    add((1, 37), (37, 9), (1, 9))  # one row
    add((2, 2, 13), (2, 6, 13), (2, 2, 6), adj_y=True)  # two rows
    add((8, 5), (8, 3), (5, 3), adj_x=True, const_lhs=True)
    add((7, 3), (3, 1), (7, 1))  # one column, depth 3
    add((5, 4), (4, 6), (5, 6), quant=((0.5, -128), (0.5, 127), (1e-3, 5)), label="no fast requantization")
    add((3, 8), (8, 5), (3, 5), quant=((0.02, 127), (0.03, -128), (0.5, 0)), label="extreme zero points")
    add((3, 600), (600, 4), (3, 4), quant=((0.05, 127), (0.05, -128), (200.0, 0)), label="long depth")
    return c


def extreme_sets(c: Cases) -> list[list[np.ndarray]]:
    return [[np.full(x.shape, v, np.int8) for x in c.data] for v in (-128, 127)]


@pytest.mark.parametrize("dsp", [False, True], ids=["plain", "dsp"])
def test_cmsis_nn_kernel_equals_tflm_on_host(tmp_path, dsp):
    """Every case goes to mcu_cmsis_batch_matmul_s8, whose model and C (plain and DSP-emulated builds)
    equal TFLM byte for byte on random and extreme inputs."""
    c = cmsis_cases()
    path = tmp_path / "m.tflite"
    path.write_bytes(c.finish())
    compiled = compile_model(path)
    assert {b.kernel.function for b in compiled.program.bindings} == {"mcu_cmsis_batch_matmul_s8"}
    sets = [c.data] + extreme_sets(c)
    for res in verify_program(compiled, sets):
        assert res.ok, [str(m) for m in res.mismatches][:5]
    for res in verify_host(compiled, sets, isolate=False, dsp=dsp):
        assert res.ok, [str(m) for m in res.mismatches][:5]


def test_cmsis_nn_lowering():
    """The layouts and records the cases rely on: constants stored [.., rows, depth] / [.., cols,
    depth], activations stored the other way transposed by the kernel, a fast requantization
    record on ordinary layers and none where the multiplier exceeds 1."""
    c = cmsis_cases()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "m.tflite"
        path.write_bytes(c.finish())
        compiled = compile_model(path)
    calls = sorted((b.kernel for b in compiled.program.bindings), key=lambda k: k.info.sources[0].index)
    assert [(k.params["transpose_lhs"], k.params["transpose_rhs"]) for k in calls[:8]] == \
        [(0, 0), (0, 0), (0, 1), (0, 0), (1, 1), (1, 0), (0, 1), (0, 1)]
    assert calls[0].constants["arg1"].shape == (64, 64) and calls[1].constants["arg1"].shape == (13, 30)
    assert calls[11].constants["arg0"].shape == (5, 8) and calls[11].params["transpose_lhs"] == 0
    assert [k.params["rq_right"] > 0 for k in calls] == [True] * 13 + [False, True, True]


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_cmsis_nn_kernel_equals_tflm_on_qemu(tmp_path, board):
    """The DSP path with the real instructions (Cortex-M4) and the Helium path (Cortex-M55)."""
    c = cmsis_cases()
    path = tmp_path / "m.tflite"
    path.write_bytes(c.finish())
    compiled = compile_model(path)
    for res in verify_board(compiled, [c.data] + extreme_sets(c), board):
        assert res.ok, [str(m) for m in res.mismatches][:5]
