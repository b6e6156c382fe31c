"""GATHER and GATHER_ND against TFLite Micro: the numpy reference and the portable C on the host,
with constant and run-time indices, constant params (an embedding table) and activations, int8 and
float32; an index outside the params gives zeros in mcuforge (TFLM fails the invoke); and the
support rules."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _opmodels import Cases, assert_refused, check, run_c, save, tflm_refuses
from mcuforge.frontend import load_tflite
from mcuforge.ir.evaluate import evaluate

from mcuforge.driver import Options, compile_model
from mcuforge.errors import McuforgeError

DTYPES = (("int8", (0.1, -5)), ("float32", None))

# (params shape, indices shape, axis, batch_dims)
GATHER = [((5, 3), (2,), 0, 0), ((5, 3), (4,), 1, 0), ((2, 3, 4), (2, 2), -2, 0), ((2, 3, 4), (2, 3), 2, 1),
          ((2, 3, 4, 5), (2, 3, 2), 2, -1), ((2, 3, 4, 5), (2, 2, 3), 3, 1), ((7,), (), 0, 0), ((6, 2), (3, 1, 2), 0, 0)]


def out_shape(p, i, axis, bd):
    axis %= len(p)
    bd = bd + len(i) if bd < 0 else bd
    return tuple(p[:axis]) + tuple(i[bd:]) + tuple(p[axis + 1:])


def test_gather_equals_tflm(tmp_path):
    rng = np.random.default_rng(1)
    c = Cases(seed=1)
    for dtype, q in DTYPES:
        for k, (p, i, axis, bd) in enumerate(GATHER):
            size = p[axis]
            idx = rng.integers(0, size, i).astype(np.int32)
            x = c.input(p, dtype, q)
            ind = c.const(idx) if k % 2 else c.input(i, "int32", data=idx)
            c.op("GATHER", [x, ind], out_shape(p, i, axis, bd), dtype, q, label=f"{dtype} {p} {i} {axis} {bd}",
                 Axis=axis, BatchDims=bd)
        table = c.const(rng.integers(-128, 128, (10, 4)).astype(dtype), dtype, q)  # an embedding lookup
        c.op("GATHER", [table, c.input((3, 2), "int32", data=[[9, 0], [3, 3], [7, 1]])], (3, 2, 4), dtype, q,
             label=f"{dtype} embedding", Axis=0, BatchDims=0)
    more = [[d if t != "int32" else rng.integers(0, 1, d.shape).astype(np.int32) for d, t in
             zip(c.data, [c.w.tensors[i].dtype for i in c.inputs])]]
    check(tmp_path, c, more)


def gather_nd_cases(rng):
    out = []
    for p, depth, lead in [((5, 3), 1, (2,)), ((5, 3), 2, (4,)), ((2, 3, 4), 2, (2, 2)), ((2, 3, 4, 2, 3), 5, (3,)),
                           ((2, 3, 4, 2, 3), 4, (1, 2)), ((6,), 1, (3, 2)), ((3, 4), 2, ())]:
        idx = np.stack([rng.integers(0, d, lead) for d in p[:depth]], axis=-1).astype(np.int32)
        out.append((p, idx))
    # an index outside its axis but inside the params' flat range: TFLM reads element 5
    out.append(((3, 4), np.array([[0, 5], [1, -1], [2, 3]], np.int32)))
    return out


def test_gather_nd_equals_tflm(tmp_path):
    rng = np.random.default_rng(2)
    c = Cases(seed=2)
    for dtype, q in DTYPES:
        for k, (p, idx) in enumerate(gather_nd_cases(rng)):
            x = c.input(p, dtype, q)
            ind = c.const(idx) if k % 2 else c.input(idx.shape, "int32", data=idx)
            c.op("GATHER_ND", [x, ind], idx.shape[:-1] + p[idx.shape[-1]:], dtype, q, label=f"{dtype} {p} {idx.shape}")
    check(tmp_path, c)


def test_out_of_range_indices_stop_the_run_as_tflm(tmp_path):
    """TFLM fails the invoke; so does the generated run (it returns <PREFIX>_ERR_INDEX, -2); the
    reference (which carries on) writes zero bytes for that slice."""
    cases = [("GATHER", [[1, 4, -1]], (3,), (3, 3), {"Axis": 0}, [[4, 5, 6], [0, 0, 0], [0, 0, 0]]),
             ("GATHER_ND", [[1, 1], [3, 3], [-1, 0]], (3, 2), (3,), {}, [5, 0, 0])]
    for k, (op, idx, idx_shape, out_shape, attrs, want) in enumerate(cases):
        c = Cases()
        x = c.input((4, 3), data=np.arange(1, 13))
        c.op(op, [x, c.input(idx_shape, "int32", data=idx)], out_shape, **attrs)
        blob = c.finish()
        assert tflm_refuses(blob, c.data)
        path = save(tmp_path, blob, f"m{k}.tflite")
        np.testing.assert_array_equal(evaluate(load_tflite(path), c.data)[0], np.array(want, np.int8))
        with pytest.raises(McuforgeError, match=r"returned -2 \(an index input out of range"):
            run_c(compile_model(path, Options(targets=("c",))), [c.data])


def test_gather_rules(tmp_path):
    c = Cases()
    x = c.input((5, 3), "int16", None)
    c.op("GATHER", [x, c.const([1])], (1, 3), "int16", None, Axis=0)
    x = c.input((5, 3))
    c.op("GATHER", [x, c.const([1], "int64")], (1, 3), Axis=0)
    x = c.input((5, 3))
    c.op("GATHER", [x, c.const([5])], (1, 3), Axis=0)
    x = c.input((2, 3))
    c.op("GATHER", [x, c.const([[0], [1]])], (2, 1), Axis=1, BatchDims=2)
    x = c.input((3, 4))
    c.op("GATHER_ND", [x, c.const([[2, 4]])], (1,))
    x = c.input((2,) * 6)
    c.op("GATHER_ND", [x, c.const([[0] * 6])], (1,))
    assert_refused(tmp_path, c, ["int8 or float32", "got int64", "indices from 5 to 5 for size 5", "batch_dims 2",
                                 "flat positions from 12 to 12 in 12", "index depth 6"],
                   [True, True, True, True, True, True])


def test_gather_of_constant_params_is_the_table_lookup(tmp_path):
    """The params of an embedding lookup stay a constant array in flash, read by the kernel."""
    c = Cases()
    table = c.const(np.arange(40).reshape(10, 4), "int8", (0.1, 0))
    c.op("GATHER", [table, c.input((2,), "int32", data=[3, 9])], (2, 4), Axis=0)
    compiled = compile_model(save(tmp_path, c.finish()), Options(targets=("c",)))
    (b,) = compiled.program.bindings
    assert b.kernel.function == "mcu_gather_axis" and math.prod(b.kernel.constants["arg0"].shape) == 40


def test_random_inputs_draw_indices_inside(tmp_path):
    """mcuforge verify's random inputs: an input used as indices lies inside what it indexes (per
    index vector entry for GATHER_ND), so TFLM runs them and the outputs agree."""
    from mcuforge.oracle import run_tflm
    from mcuforge.verify import random_inputs

    c = Cases()
    x = c.input((4, 3), data=np.arange(1, 13))
    c.op("GATHER", [x, c.input((6,), "int32", data=[0] * 6)], (6, 3), Axis=0)
    x = c.input((2, 5, 3), data=np.arange(30))
    c.op("GATHER_ND", [x, c.input((4, 2), "int32", data=[[0, 0]] * 4)], (4, 3))
    blob = c.finish()
    module = load_tflite(save(tmp_path, blob))
    rng = np.random.default_rng(1)
    sets = [random_inputs(module, rng) for _ in range(8)]
    for s in sets:
        gi, nd = s[1], s[3]
        assert gi.dtype == nd.dtype == np.int32 and gi.shape == (6,) and nd.shape == (4, 2)
        assert gi.min() >= 0 and gi.max() < 4 and (nd >= 0).all() and (nd[:, 0] < 2).all() and (nd[:, 1] < 5).all()
    assert len({int(v) for s in sets for v in s[1]}) == 4  # every row drawn
    for s, (outs, _) in zip(sets, run_tflm(blob, sets)):
        for o, w in zip(evaluate(module, s), outs):
            np.testing.assert_array_equal(o, w)


def test_random_indices_fit_every_op_they_index(tmp_path):
    """One index input feeding two GATHERs, of 7 and of 3 rows (in either order): random indices stay
    below the smaller, so TFLM runs both and the outputs agree."""
    from mcuforge.oracle import run_tflm
    from mcuforge.verify import random_inputs

    for rows in ((7, 3), (3, 7)):
        c = Cases()
        idx = c.input((16,), "int32", data=[0] * 16)
        for n in rows:
            c.op("GATHER", [c.input((n, 2), data=np.arange(2 * n)), idx], (16, 2), Axis=0)
        blob = c.finish()
        module = load_tflite(save(tmp_path, blob))
        sets = [random_inputs(module, np.random.default_rng(2)) for _ in range(4)]
        drawn = np.concatenate([s[0] for s in sets])
        assert drawn.min() >= 0 and drawn.max() == 2, rows
        for s, (outs, _) in zip(sets, run_tflm(blob, sets)):
            for o, w in zip(evaluate(module, s), outs):
                np.testing.assert_array_equal(o, w)
