"""BROADCAST_ARGS against TFLite Micro: the numpy reference and the portable C on run-time int32 and
int64 shape vectors of different lengths; folded at compile time in a SHAPE -> BROADCAST_ARGS ->
BROADCAST_TO chain (as converters write it); and the rules."""

from __future__ import annotations

import numpy as np
import pytest
from elementwise_cases import Model, check, problems

PAIRS = [([2, 1, 3], [4, 1]), ([1], [5, 6, 7]), ([3, 4], [3, 4]), ([1, 1, 1, 1], [1]), ([6, 1, 1, 2, 1], [1, 5, 1, 1])]
OTHER = [([1, 9, 1], [1, 8]), ([4], [5, 1, 4]), ([1, 1], [7, 1]), ([2, 3, 1, 5], [5]), ([1, 1, 1, 1, 1], [9, 9, 9, 9])]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_run_time(tmp_path, dtype):
    m = Model()
    for a, b in PAIRS:
        m.op("BROADCAST_ARGS", [m.input(np.asarray(a, dtype)), m.input(np.asarray(b, dtype))], (max(len(a), len(b)),),
             dtype)
    i8 = np.zeros((1, 3), np.int8)  # an int8 operator: mcuforge refuses models without one
    m.op("REVERSE_V2", [m.input(i8, quant=(0.1, 0)), m.input(np.asarray([1], np.int32), const=True)], i8.shape,
         "int8", quant=(0.1, 0))
    other = [np.asarray(v, dtype) for a, b in OTHER for v in (a, b)] + [m.data[-1]]
    check(tmp_path, m, [m.data, other])


def test_folds_in_a_shape_chain(tmp_path):
    """SHAPE(x) and a constant shape -> BROADCAST_ARGS -> RESHAPE(y, that shape): no kernel for
    BROADCAST_ARGS (nor SHAPE) is generated."""
    from mcuforge.driver import Options, compile_model

    m = Model()
    q = (0.1, 2)
    x = m.input(np.zeros((2, 1, 3), np.int8), quant=q)
    y = m.input(np.arange(-12, 12, dtype=np.int8).reshape(4, 6), quant=q)
    s = m.w.tensor((3,), "int32", name="shape_x")
    m.w.op("SHAPE", [x], [s], OutType=2)
    target = m.w.tensor((3,), "int32", name="target")
    m.w.op("BROADCAST_ARGS", [s, m.input(np.asarray([4, 1], np.int32), const=True)], [target])
    r = m.op("RESHAPE", [y, target], (2, 4, 3), "int8", quant=q)
    m.op("REVERSE_V2", [r, m.input(np.asarray([1], np.int32), const=True)], (2, 4, 3), "int8", quant=q)
    check(tmp_path, m)
    compiled = compile_model(tmp_path / "model.tflite", Options(targets=("c",)))
    assert {b.kernel.source for b in compiled.program.bindings} == {"", "mcu_reverse"}  # RESHAPE: a view


def test_rules():
    m = Model()
    m.op("BROADCAST_ARGS", [m.input(np.ones(2, np.int32)), m.input(np.ones(2, np.int64))], (2,), "int32")
    m.op("BROADCAST_ARGS", [m.input(np.ones((1, 2), np.int32)), m.input(np.ones(2, np.int32))], (2,), "int32")
    m.op("BROADCAST_ARGS", [m.input(np.ones(2, np.int16)), m.input(np.ones(2, np.int16))], (2,), "int16")
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 1, 2], found
    rule = "Both inputs and the output must be 1-D shape vectors of one type, int32 or int64"
    assert all(f[2].startswith(rule) for f in found)
    assert [f[2].rsplit("(", 1)[1] for f in found] == ["got int32, int64)", "a tensor of shape [1, 2])",
                                                       "got int16)"]
