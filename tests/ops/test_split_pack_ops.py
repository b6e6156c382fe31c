"""PACK, and the multi-output SPLIT, SPLIT_V and UNPACK (one `split` call per output), on
activations: bit-exact against the TFLite Micro interpreter in the numpy reference and in the
generated C on the host (int8 over its whole range, int16, int32, float32 where TFLM has them;
axes first, middle, last and negative; PACK with more inputs than CONCATENATION's 10; outputs
unused or used twice), and the rules that refuse what TFLM leaves undefined.
"""

from __future__ import annotations

import numpy as np
import pytest

from devtools.tflite_writer import ModelWriter
from mcuforge.driver import Options, compile_model
from mcuforge.frontend.importer import import_graph
from mcuforge.frontend.reader import read_tflite_bytes
from mcuforge.verify import random_inputs, verify_host, verify_reference

QUANT = {"int8": {"scale": 0.1, "zero_point": 3}, "int16": {"scale": 0.01, "zero_point": 0}}


def act(w: ModelWriter, shape, dtype, name=None) -> int:
    return w.tensor(shape, dtype, name=name, **QUANT.get(dtype, {}))


def i32(w: ModelWriter, value) -> int:
    value = np.asarray(value, dtype=np.int32)
    return w.tensor(value.shape, "int32", data=value)


def finish(w: ModelWriter, ins, outs, dtype) -> bytes:
    """The model; a float32 one gets an int8 RELU beside it (mcuforge refuses all-float models)."""
    if dtype == "float32":
        x, y = act(w, (1, 4), "int8", "side_in"), act(w, (1, 4), "int8", "side_out")
        w.op("RELU", [x], [y])
        ins, outs = [*ins, x], [*outs, y]
    return w.finish(ins, outs)


def check(blob: bytes, tmp_path, n_sets: int = 3):
    """Reference (with intermediates) and host C against TFLM; the compiled model."""
    path = tmp_path / "m.tflite"
    path.write_bytes(blob)
    compiled = compile_model(path, Options(targets=("c",)))
    rng = np.random.default_rng(100)
    sets = [random_inputs(compiled.imported, rng) for _ in range(n_sets)]
    bad = [str(m) for r in verify_reference(compiled.imported, blob, sets, intermediates=True, isolate=False)
           for m in r.mismatches]
    bad += [str(m) for r in verify_host(compiled, sets, isolate=False) for m in r.mismatches]
    assert not bad, "\n".join(bad[:5])
    return compiled


def split_shapes(shape, axis, sizes, drop=False):
    ax = axis % len(shape)
    outs = []
    for s in sizes:
        o = list(shape)
        if drop:
            del o[ax]
        else:
            o[ax] = s
        outs.append(tuple(o))
    return outs


SPLITS = [  # (input shape, axis, number of pieces)
    ((1, 6, 4, 8), 3, 2), ((1, 6, 4, 8), 1, 3), ((2, 6, 4), -1, 4), ((12,), 0, 3), ((1, 5, 3), -2, 5),
]


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "float32"])
def test_split(dtype, tmp_path):
    w = ModelWriter()
    ins, outs = [], []
    for k, (shape, axis, n) in enumerate(SPLITS):
        x = act(w, shape, dtype, f"x{k}")
        pieces = [act(w, s, dtype) for s in split_shapes(shape, axis, [shape[axis] // n] * n)]
        w.op("SPLIT", [i32(w, axis), x], pieces, NumSplits=n)
        ins.append(x)
        outs += pieces
    compiled = check(finish(w, ins, outs, dtype), tmp_path, n_sets=2 if dtype != "int8" else 3)
    assert {kc.function for kc in compiled.kernels.values()} >= {"mcu_gather"}


def test_split_v_and_unpack_int8(tmp_path):
    w = ModelWriter()
    ins, outs = [], []
    for k, (shape, axis, sizes) in enumerate([((1, 10, 4), 1, [3, -1, 2]), ((2, 3, 7), -1, [1, 6]),
                                               ((9,), 0, [4, 4, 1])]):
        x = act(w, shape, "int8", f"v{k}")
        resolved = [s if s >= 0 else shape[axis] - (sum(sizes) + 1) for s in sizes]
        pieces = [act(w, s, "int8") for s in split_shapes(shape, axis, resolved)]
        w.op("SPLIT_V", [x, i32(w, sizes), i32(w, axis)], pieces, NumSplits=len(sizes))
        ins.append(x)
        outs += pieces
    for k, (shape, axis) in enumerate([((1, 3, 4), 1), ((4, 2), 0), ((2, 3, 5), -1)]):
        x = act(w, shape, "int8", f"u{k}")
        pieces = [act(w, s, "int8") for s in split_shapes(shape, axis, [1] * shape[axis], drop=True)]
        w.op("UNPACK", [x], pieces, Num=shape[axis], Axis=axis)
        ins.append(x)
        outs += pieces
    check(w.finish(ins, outs), tmp_path)


def test_split_pieces_unused_and_reused(tmp_path):
    """Only the pieces the graph uses are computed; a piece read by two operators is computed once."""
    w = ModelWriter()
    x = act(w, (1, 4, 4, 6), "int8", "x")
    a, b, c = (act(w, (1, 4, 4, 2), "int8") for _ in range(3))
    w.op("SPLIT", [i32(w, -1), x], [a, b, c], NumSplits=3)
    y = act(w, (1, 4, 4, 2), "int8", "y")
    w.op("ADD", [c, c], [y])
    z = act(w, (1, 4, 4, 4), "int8", "z")
    w.op("CONCATENATION", [c, y], [z], Axis=3)
    compiled = check(w.finish([x], [z]), tmp_path)
    assert sorted(kc.info.op for kc in compiled.kernels.values()).count("split") == 1


@pytest.mark.parametrize("dtype", ["int8", "int32", "float32"])
def test_pack(dtype, tmp_path):
    """PACK along every axis of rank-3 inputs, negative axes, and 12 inputs (over CONCATENATION's 10)."""
    w = ModelWriter()
    ins, outs = [], []
    for k, (shape, n, axis) in enumerate([((2, 3, 4), 3, 0), ((2, 3, 4), 2, 1), ((2, 3, 4), 4, 3),
                                          ((1, 5), 2, -1), ((3,), 12, -2), ((1, 2, 2), 12, 2)]):
        xs = [act(w, shape, dtype, f"x{k}_{i}") for i in range(n)]
        out_shape = list(shape)
        out_shape.insert(axis % (len(shape) + 1), n)
        y = act(w, out_shape, dtype)
        w.op("PACK", xs, [y], ValuesCount=n, Axis=axis)
        ins += xs
        outs.append(y)
    compiled = check(finish(w, ins, outs, dtype), tmp_path, n_sets=2)
    assert {kc.function for kc in compiled.kernels.values()} >= {"mcu_pack"}


def test_pack_with_a_constant_input(tmp_path):
    w = ModelWriter()
    x = act(w, (2, 3), "int8", "x")
    c = w.tensor((2, 3), "int8", data=np.arange(-3, 3).reshape(2, 3), **QUANT["int8"])
    y = act(w, (2, 2, 3), "int8", "y")
    w.op("PACK", [x, c], [y], ValuesCount=2, Axis=1)
    check(w.finish([x], [y]), tmp_path)


def problems_of(build) -> str:
    w = ModelWriter()
    inputs, outputs = build(w)
    res = import_graph(read_tflite_bytes(w.finish(inputs, outputs)))
    return " ".join(p[2] for p in res.problems)


def test_rules():
    def uneven_split(w):  # TFLM only DCHECKs that the pieces tile the axis
        x = act(w, (1, 7), "int8")
        outs = [act(w, (1, 3), "int8") for _ in range(2)]
        w.op("SPLIT", [i32(w, 1), x], outs, NumSplits=2)
        return [x], outs
    assert "an axis of size 7 into 2 equal pieces" in problems_of(uneven_split)

    def bad_sizes(w):
        x = act(w, (1, 7), "int8")
        outs = [act(w, (1, 3), "int8") for _ in range(2)]
        w.op("SPLIT_V", [x, i32(w, [3, 3]), i32(w, 1)], outs, NumSplits=2)
        return [x], outs
    assert "size_splits [3, 3] for an axis of size 7" in problems_of(bad_sizes)

    def unpack_num(w):  # TFLM indexes the input with num instead of the axis size
        x = act(w, (1, 3, 4), "int8")
        outs = [act(w, (1, 4), "int8") for _ in range(2)]
        w.op("UNPACK", [x], outs, Num=2, Axis=1)
        return [x], outs
    assert "an axis of size 3 unpacked into 2 outputs" in problems_of(unpack_num)

    def runtime_axis(w):
        x, a = act(w, (1, 4), "int8"), w.tensor((), "int32")
        outs = [act(w, (1, 2), "int8") for _ in range(2)]
        w.op("SPLIT", [a, x], outs, NumSplits=2)
        return [x, a], outs
    assert "input 0 ('t1') must be a constant tensor" in problems_of(runtime_axis)

    def pack_shapes(w):
        xs = [act(w, (2, 3), "int8"), act(w, (3, 2), "int8")]
        y = act(w, (2, 2, 3), "int8")
        w.op("PACK", xs, [y], ValuesCount=2, Axis=0)
        return xs, [y]
    assert "All inputs must have the same shape (input 1 is [3, 2]" in problems_of(pack_shapes)

    def pack_int16(w):  # TFLM's PACK has no int16 kernel
        xs = [act(w, (2, 3), "int16"), act(w, (2, 3), "int16")]
        y = act(w, (2, 2, 3), "int16")
        w.op("PACK", xs, [y], ValuesCount=2, Axis=0)
        return xs, [y]
    assert "one of int8, int32 or float32 (got int16)" in problems_of(pack_int16)
