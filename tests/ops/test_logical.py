"""LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT and REDUCE_ALL against TFLite Micro: the numpy reference and
the portable C on bool tensors, every input pair, broadcasts up to rank 6 and equal shapes of rank 7,
constant operands; REDUCE_ALL over one, several, negative and repeated axes with keep_dims or not;
and the rules."""

from __future__ import annotations

import numpy as np
from elementwise_cases import Model, check, problems, values

SHAPES = [((2, 2), (2, 2)), ((2, 3, 4), (4,)), ((), (3, 5)), ((3, 1, 6), (1, 4, 1)), ((2, 1, 3, 2), (1, 4, 1, 2)),
          ((2, 1, 2, 1, 2, 1), (1, 2, 1, 2, 1, 2)), ((2, 1, 2, 3, 1, 2, 2), (2, 1, 2, 3, 1, 2, 2))]


def int8_op(m: Model) -> None:
    """An int8 operator: mcuforge refuses models without quantized activations."""
    i8 = np.zeros((1, 3), np.int8)
    m.op("REVERSE_V2", [m.input(i8, quant=(0.1, 0)), m.input(np.asarray([1], np.int32), const=True)], i8.shape,
         "int8", quant=(0.1, 0))


def test_and_or_not(tmp_path):
    rng = np.random.default_rng(81)
    m = Model()
    a, b = np.meshgrid([False, True], [False, True], indexing="ij")
    for op in ("LOGICAL_AND", "LOGICAL_OR"):
        m.op(op, [m.input(a), m.input(b)], a.shape, "bool")
        for k, (s1, s2) in enumerate(SHAPES[1:]):
            m.op(op, [m.input(values(rng, s1, "bool")), m.input(values(rng, s2, "bool"), const=k == 2)],
                 np.broadcast_shapes(s1, s2), "bool")
    for shape in ((2,), (3, 4, 5), (1, 2, 1, 2, 1, 2)):
        m.op("LOGICAL_NOT", [m.input(values(rng, shape, "bool"))], shape, "bool")
    int8_op(m)
    check(tmp_path, m)


def test_reduce_all(tmp_path):
    rng = np.random.default_rng(82)
    m = Model()
    cases = [((2, 3, 4), [1], False), ((2, 3, 4), [-1, 0], True), ((2, 3, 4), [1, 1, -2], False),
             ((2, 3, 4), [0, 1, 2], False), ((5, 7), [0], True), ((2, 1, 3, 2, 2, 3), [0, 2, 4], False),
             ((1, 40), [1], False)]
    for shape, axes, keep in cases:
        x = rng.random(shape) < 0.85
        x.reshape(-1)[::7] = True
        res = tuple(a % len(shape) for a in axes)
        out = tuple(1 if i in res else d for i, d in enumerate(shape)) if keep else \
            tuple(d for i, d in enumerate(shape) if i not in res)
        m.op("REDUCE_ALL", [m.input(x), m.input(np.asarray(axes, np.int32), const=True)], out, "bool", KeepDims=keep)
    int8_op(m)
    ones = [np.ones_like(d) if d.dtype == np.bool_ else d for d in m.data]
    check(tmp_path, m, [m.data, ones])


def test_rules():
    m = Model()
    b = np.zeros((2, 3), np.bool_)
    m.op("LOGICAL_AND", [m.input(b), m.input(b.astype(np.int8), quant=(0.1, 0))], b.shape, "bool")
    b7 = np.zeros((2, 1, 2, 1, 2, 1, 2), np.bool_)
    m.op("LOGICAL_OR", [m.input(b7), m.input(np.zeros((1, 2, 1, 2, 1, 2, 1), np.bool_))], (2,) * 7, "bool")
    m.op("LOGICAL_NOT", [m.input(b.astype(np.int8), quant=(0.1, 0))], b.shape, "int8", quant=(0.1, 0))
    m.op("REDUCE_ALL", [m.input(b.astype(np.int8), quant=(0.1, 0)), m.input(np.asarray([0], np.int32), const=True)],
         (3,), "int8", quant=(0.1, 0))
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 1, 2, 3], found
    assert found[0][2] == "Inputs and output must be bool (got bool, int8)"
    assert found[1][2].startswith("Inputs of different shapes must broadcast") and "rank 7" in found[1][2]
    assert found[2][2] == found[3][2] == "Inputs and output must be bool (got int8)"
