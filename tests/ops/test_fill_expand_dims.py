"""FILL, ZEROS_LIKE and EXPAND_DIMS against TFLite Micro: the numpy reference and the portable C on
the host (FILL with a computed value, a raw copy whatever the quantization, and folded to a constant
when its value is constant; ZEROS_LIKE writes raw 0, not the zero point; EXPAND_DIMS is a view); and
the support rules."""

from __future__ import annotations

import numpy as np
from _opmodels import Cases, assert_refused, check, save

from mcuforge.driver import Options, compile_model


def test_fill_and_zeros_like_equal_tflm(tmp_path):
    c = Cases(seed=1)
    for dtype, q in (("int8", (0.5, 7)), ("int32", None), ("float32", None)):
        for shape, ddt in (((2, 3), "int32"), ((4,), "int64"), ((1, 2, 3, 4, 5), "int32")):
            v = c.input((), dtype, q)
            c.op("FILL", [c.const(shape, ddt), v], shape, dtype, (0.1, -3) if q else None, label=f"fill {dtype} {shape}")
    for dtype, q in (("int8", (0.1, -20)), ("int32", None), ("int64", None), ("float32", None)):
        x = c.input((3, 5), dtype, q)
        c.op("ZEROS_LIKE", [x], (3, 5), dtype, q, label=f"zeros_like {dtype}")
    check(tmp_path, c)


def test_fill_of_constants_folds(tmp_path):
    """A FILL whose dims and value are constants is a constant (ir/fold.py): no kernel runs for it,
    and the CONCATENATION reading it still equals TFLM's."""
    c = Cases(seed=3)
    for dtype, q in (("int8", (0.5, 7)), ("int32", None), ("float32", None)):
        y = c.w.tensor((3, 2), dtype, **({"scale": q[0], "zero_point": q[1]} if q else {}))
        c.w.op("FILL", [c.const((3, 2)), c.const(np.array(-9 if dtype != "float32" else 2.5), dtype, q)], [y])
        c.op("CONCATENATION", [c.input((3, 2), dtype, q), y], (3, 4), dtype, q, label=f"fill constant {dtype}",
             Axis=1)
    check(tmp_path, c)
    compiled = compile_model(save(tmp_path, c.finish()), Options(targets=("c",)))
    assert {b.kernel.function for b in compiled.program.bindings} == {"mcu_concatenation"}


def test_expand_dims_equals_tflm_and_is_a_view(tmp_path):
    c = Cases(seed=2)
    for dtype, q in (("int8", (0.1, 4)), ("int16", None), ("float32", None)):
        for shape, axis in (((3, 4), 0), ((3, 4), 1), ((3, 4), 2), ((3, 4), -1), ((3, 4), -3), ((5,), 0),
                            ((2, 3, 4), [1])):
            x = c.input(shape, dtype, q)
            a = axis[0] if isinstance(axis, list) else axis
            out = list(shape)
            out.insert(a + len(shape) + 1 if a < 0 else a, 1)
            c.op("EXPAND_DIMS", [x, c.const(axis)], out, dtype, q, label=f"{dtype} {shape} {axis}")
    check(tmp_path, c)
    compiled = compile_model(save(tmp_path, c.finish()), Options(targets=("c",)))
    assert all(b.kernel.view for b in compiled.program.bindings)


def test_fill_expand_dims_rules(tmp_path):
    c = Cases()
    c.op("FILL", [c.const((2, 3)), c.input((), "int16", None)], (2, 3), "int16", None)
    c.op("FILL", [c.const((2, 3)), c.input((1,), "int32", None)], (2, 3), "int32", None)
    c.op("FILL", [c.const((3, 3)), c.input((), "int32", None)], (2, 3), "int32", None)
    c.op("ZEROS_LIKE", [c.input((2,), "int16", None)], (2,), "int16", None)
    c.op("EXPAND_DIMS", [c.input((2, 3), "int32", None), c.const(0)], (1, 2, 3), "int32", None)
    c.op("EXPAND_DIMS", [c.input((2, 3)), c.const(3)], (2, 3, 1))
    assert_refused(tmp_path, c, ["got int16", "value has shape [1]", "dims int32 [3, 3], output [2, 3]", "got int16",
                                 "got int32", "axis 3 for rank 2"], [True, True, True, True, True, True])
