"""MAXIMUM and MINIMUM (the worked example of docs/adding-an-op.md) against TFLite Micro: the numpy
reference, the portable C kernel and the cmsis-nn kernel (plain and DSP paths on the host), on every
int8 pair, int16/int32/float32 values with the float specials, broadcast shapes and a constant
operand; and the support rules."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from mcuforge.frontend import load_tflite
from mcuforge.ir.evaluate import evaluate

from devtools.tflite_writer import ModelWriter
from mcuforge.driver import Options, compile_model
from mcuforge.errors import UnsupportedError
from mcuforge.oracle import run_tflm
from mcuforge.verify import verify_host

OPS = ("MAXIMUM", "MINIMUM")
# (shape of input 1, shape of input 2): equal shapes, a scalar, channel and row broadcasts, both
# sides broadcast, rank 5
SHAPES = [((256, 256), (256, 256)), ((1, 4, 5, 8), (1,)), ((), (2, 3)), ((1, 4, 5, 8), (1, 1, 1, 8)),
          ((3, 1, 6), (1, 4, 1)), ((2, 1, 3, 1, 2), (1, 4, 1, 2, 2))]
F32_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -1.5, 3e38], dtype=np.float32)


def all_int8_pairs() -> tuple[np.ndarray, np.ndarray]:
    a, b = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128), indexing="ij")
    return a.astype(np.int8), b.astype(np.int8)


def values(rng, shape, dtype: str) -> np.ndarray:
    if dtype == "float32":
        x = rng.normal(0, 10, shape).astype(np.float32)
        flat = x.reshape(-1)
        flat[: min(flat.size, 16)] = rng.choice(F32_SPECIALS, min(flat.size, 16))
        return x
    info = np.iinfo(np.dtype(dtype))
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def build(cases, const_second: bool = False) -> tuple[bytes, list[np.ndarray]]:
    """One model with a MAXIMUM or MINIMUM per case (op, dtype, shape1, shape2); every non-constant
    operand a model input. Returns the model and one input set."""
    w, ins, outs, data = ModelWriter(), [], [], []
    rng = np.random.default_rng(7)
    for k, (op, dtype, s1, s2) in enumerate(cases):
        q = {"scale": 0.05, "zero_point": 3} if dtype == "int8" else {}
        x1 = values(rng, s1, dtype)
        x2 = values(rng, s2, dtype)
        if dtype == "int8" and s1 == (256, 256):
            x1, x2 = all_int8_pairs()
        t1 = w.tensor(s1, dtype, name=f"a{k}", **q)
        t2 = w.tensor(s2, dtype, name=f"b{k}", data=x2 if const_second else None, **q)
        y = w.tensor(np.broadcast_shapes(s1, s2), dtype, name=f"y{k}", **q)
        w.op(op, [t1, t2], [y])
        ins += [t1] + ([] if const_second else [t2])
        data += [x1] + ([] if const_second else [x2])
        outs.append(y)
    return w.finish(ins, outs), data


def cases_for(dtypes) -> list:
    return [(op, dt, s1, s2) for op, dt, (s1, s2) in itertools.product(OPS, dtypes, SHAPES)
            if not (s1 == (256, 256) and dt != "int8")]


@pytest.mark.parametrize("const_second", [False, True], ids=["inputs", "constant"])
def test_reference_and_portable_c_equal_tflm(tmp_path, const_second):
    blob, data = build(cases_for(("int8", "int16", "int32", "float32")), const_second)
    path = tmp_path / "m.tflite"
    path.write_bytes(blob)
    (theirs, _), = run_tflm(blob, [data])
    ours = evaluate(load_tflite(path), data)
    for k, (o, t) in enumerate(zip(ours, theirs)):
        assert o.dtype == t.dtype and np.array_equal(o.view(np.uint8), t.view(np.uint8)), f"output {k}"
    compiled = compile_model(path, Options(targets=("c",)))
    assert {b.kernel.source for b in compiled.program.bindings} == {"mcu_maximum_minimum"}
    (res,) = verify_host(compiled, [data], isolate=False)
    assert res.ok, [str(m) for m in res.mismatches]


@pytest.mark.parametrize("const_second", [False, True], ids=["inputs", "constant"])
@pytest.mark.parametrize("dsp", [False, True], ids=["plain", "dsp"])
def test_cmsis_nn_kernel_equals_tflm(tmp_path, monkeypatch, dsp, const_second):
    """Same-shape and scalar-operand int8 calls go to the cmsis-nn kernel (both operand orders,
    odd sizes for the vector tails, the second operand an input or a constant), the rest to the
    portable one; all bit-exact with TFLM."""
    import mcuforge.host

    shapes = [((256, 256), (256, 256)), ((1, 5, 7, 3), (1, 5, 7, 3)), ((1, 4, 5, 8), (1,)), ((1,), (3, 11)),
              ((1, 4, 5, 8), (1, 1, 1, 8))]
    blob, data = build([(op, "int8", s1, s2) for op in OPS for s1, s2 in shapes], const_second)
    path = tmp_path / "m.tflite"
    path.write_bytes(blob)
    compiled = compile_model(path)
    targets = [b.kernel.info.target for b in compiled.program.bindings]
    assert targets.count("cmsis-nn") == 8 and targets.count("c") == 2, targets
    if dsp:
        monkeypatch.setattr(mcuforge.host, "CFLAGS", [*mcuforge.host.CFLAGS, "-DMCU_CMSIS_DSP_EMULATE"])
    (res,) = verify_host(compiled, [data], isolate=False)
    assert res.ok, [str(m) for m in res.mismatches]


def test_rules(tmp_path):
    w = ModelWriter()
    a = w.tensor((2, 3), "int8", scale=0.1)
    b = w.tensor((2, 3), "int16", scale=0.1)
    y = w.tensor((2, 3), "int8", scale=0.1)
    w.op("MAXIMUM", [a, b], [y])
    a6 = w.tensor((2, 1, 1, 1, 1, 3), "int32")
    b6 = w.tensor((1, 2, 1, 1, 1, 3), "int32")
    y6 = w.tensor((2, 2, 1, 1, 1, 3), "int32")
    w.op("MINIMUM", [a6, b6], [y6])
    path = tmp_path / "bad.tflite"
    path.write_bytes(w.finish([a, b, a6, b6], [y, y6]))
    with pytest.raises(UnsupportedError) as e:
        load_tflite(path)
    (i0, _, why0), (i1, _, why1) = e.value.problems
    assert (i0, i1) == (0, 1)
    assert why0.startswith("Both inputs and the output must have one element type") and "int16, int8" in why0
    assert why1.startswith("The input shapes must be equal, or broadcast") and "rank 6" in why1
