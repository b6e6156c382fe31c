"""REVERSE_V2 against TFLite Micro: the numpy reference and the portable C, every element type TFLM
takes (int8, uint8, int16, int32, int64, float32, bool), one or several contiguous axes in any order
and sign, ranks 1 to 6; and the rules (TFLM refuses non-contiguous and repeated axes at run time)."""

from __future__ import annotations

import numpy as np
import pytest
from elementwise_cases import Model, check, problems, values

CASES = [((7,), [0]), ((3, 5), [1]), ((3, 5), [0]), ((3, 5), [-1, 0]), ((2, 3, 4, 5), [1, 2]),
         ((2, 3, 4, 5), [2, 1, 3]), ((2, 3, 4, 5), [-3]), ((1, 2, 3, 2, 2, 3), [3, 4]), ((2, 1, 3, 2, 1, 3), [0]),
         ((4, 1, 6), [1])]
DTYPES = ["int8", "uint8", "int16", "int32", "int64", "float32", "bool"]


def axis(m: Model, axes) -> int:
    return m.input(np.asarray(axes, np.int32), const=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reverse(tmp_path, dtype):
    rng = np.random.default_rng(41)
    m = Model()
    for shape, axes in CASES:
        q = (0.05, 3) if dtype == "int8" else None
        x = values(rng, shape, dtype)
        m.op("REVERSE_V2", [m.input(x, quant=q), axis(m, axes)], shape, dtype, quant=q)
    if dtype != "int8":  # an int8 operator: mcuforge refuses all-float models
        i8 = np.arange(6, dtype=np.int8).reshape(2, 3)
        m.op("REVERSE_V2", [m.input(i8, quant=(0.1, 0)), axis(m, [1])], i8.shape, "int8", quant=(0.1, 0))
    check(tmp_path, m)


def test_rules():
    m = Model()
    x = np.zeros((2, 3, 4), np.int8)
    q = (0.1, 0)
    for axes in ([0, 2], [1, 1], [3], [0, 1, 2, 0]):
        m.op("REVERSE_V2", [m.input(x, quant=q), axis(m, axes)], x.shape, "int8", quant=q)
    x7 = np.zeros((1,) * 7, np.int8)
    m.op("REVERSE_V2", [m.input(x7, quant=q), axis(m, [0])], x7.shape, "int8", quant=q)
    m.op("REVERSE_V2", [m.input(x, quant=q), m.input(np.zeros(1, np.int32))], x.shape, "int8", quant=q)
    m.op("REVERSE_V2", [m.input(x, quant=q), m.input(np.zeros(1, np.int64), const=True)], x.shape, "int8", quant=q)
    found = problems(m.finish())
    assert [p[0] for p in found] == list(range(7)), found
    rule = "The axes must be one or more distinct dimensions of the input"
    assert all(found[i][2].startswith(rule) for i in range(4)), found
    assert [found[i][2].rsplit("(", 1)[1] for i in range(4)] == [
        "axes [0, 2])", "axes [1, 1])", "axes [3] for rank 3)", "4 axes for rank 3)"]
    assert found[4][2] == "The input must have at most 6 dimensions (rank 7)"
    assert "must be a constant tensor" in found[5][2]
    assert "TFLM takes int32 axes" in found[6][2]


def test_no_axes_is_refused():
    """An empty axis tensor (TFLM reads before its axis array): the writer cannot store one, so the
    rule is checked on the call's view."""
    from mcuforge.ir.ops.reverse_v2 import valid_axes
    from mcuforge.ir.registry import OpView
    from mcuforge.ir.types import TensorType

    t = TensorType((2, 3), "int8")
    assert valid_axes(OpView((t,), t, {"axis": ()})) == "no axes"


@pytest.mark.parametrize("axes", [[0, 2], [1, 1]])
def test_tflm_refuses_what_we_refuse(axes):
    from mcuforge.oracle import OracleError, run_tflm

    m = Model()
    x = np.zeros((2, 3, 4), np.int8)
    m.op("REVERSE_V2", [m.input(x, quant=(0.1, 0)), axis(m, axes)], x.shape, "int8", quant=(0.1, 0))
    with pytest.raises(OracleError):
        run_tflm(m.finish(), [m.data])
