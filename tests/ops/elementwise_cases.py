"""Shared pieces of the element-wise op tests (tests/ops/test_elementwise_*.py): models with many
independent operators written with devtools.tflite_writer, value generators, and the check that the
numpy reference and the generated portable C both equal TFLite Micro byte for byte."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
from mcuforge.frontend.importer import import_graph
from mcuforge.frontend.reader import read_tflite_bytes
from mcuforge.ir.evaluate import evaluate

from devtools.tflite_writer import ModelWriter
from mcuforge.driver import Options, compile_model
from mcuforge.oracle import run_tflm
from mcuforge.verify import verify_host

ALL_INT8 = np.arange(-128, 128, dtype=np.int8)
F32_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 1.5, -2.5, 3e38, -3e38, 1e-45],
                        dtype=np.float32)


def int8_pairs() -> tuple[np.ndarray, np.ndarray]:
    """Every pair of int8 values, as two (256, 256) arrays."""
    a, b = np.meshgrid(ALL_INT8, ALL_INT8, indexing="ij")
    return np.ascontiguousarray(a), np.ascontiguousarray(b)


def scale(rng, lo: float = -3.0, hi: float = 0.5) -> float:
    """A float32 scale 10**u, u uniform in [lo, hi]."""
    return float(np.float32(10 ** rng.uniform(lo, hi)))


def zero_point(rng) -> int:
    return int(rng.integers(-128, 128))


def values(rng, shape, dtype: str, lo=None, hi=None) -> np.ndarray:
    """Random values of a type: integers over [lo, hi] (the type's range by default); float32 normal
    with the IEEE specials in the first elements; bool 0/1."""
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype == "float32":
        x = rng.normal(0, 10, size=shape).astype(np.float32)
        flat = x.reshape(-1)
        n = min(flat.size, F32_SPECIALS.size)
        flat[:n] = rng.permutation(F32_SPECIALS)[:n]
        return x
    info = np.iinfo(np.dtype(dtype))
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


class Model:
    """A model of independent operators; every non-constant operand is a model input."""

    def __init__(self) -> None:
        self.w = ModelWriter()
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        self.data: list[np.ndarray] = []

    def input(self, x: np.ndarray, dtype: str | None = None, quant=None, const: bool = False) -> int:
        """A tensor holding x (a model input, or a constant); quant is (scale, zero point)."""
        q = {} if quant is None else {"scale": quant[0], "zero_point": quant[1]}
        dtype = dtype or str(x.dtype)
        t = self.w.tensor(x.shape, dtype, data=x if const else None, name=f"t{len(self.w.tensors)}", **q)
        if not const:
            self.inputs.append(t)
            self.data.append(x)
        return t

    def op(self, name: str, inputs: Sequence[int], shape, dtype: str, quant=None, options_cls=None,
           **options) -> int:
        q = {} if quant is None else {"scale": quant[0], "zero_point": quant[1]}
        y = self.w.tensor(tuple(shape), dtype, name=f"y{len(self.outputs)}", **q)
        self.w.op(name, inputs, [y], options_cls=options_cls, **options)
        self.outputs.append(y)
        return y

    def finish(self) -> bytes:
        return self.w.finish(self.inputs, self.outputs)


def problems(blob: bytes) -> list[tuple[int, str, str]]:
    """The importer's (operator index, name, why) for every operator it refuses."""
    return import_graph(read_tflite_bytes(blob)).problems


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32) if a.dtype == np.float32 else a


def check(tmp_path: Path, model: Model | bytes, input_sets=None, c: bool = True) -> list[list[np.ndarray]]:
    """The numpy reference and (with `c`) the portable C built with gcc -Wall -Wextra -Werror equal
    TFLM on every input set, byte for byte. Returns TFLM's outputs per input set."""
    blob = model.finish() if isinstance(model, Model) else model
    input_sets = input_sets if input_sets is not None else [model.data]
    assert not problems(blob), problems(blob)
    path = tmp_path / "model.tflite"
    path.write_bytes(blob)
    module = import_graph(read_tflite_bytes(blob)).module
    theirs = [outs for outs, _ in run_tflm(blob, input_sets)]
    for k, (inputs, t_outs) in enumerate(zip(input_sets, theirs)):
        ours = evaluate(module, inputs)
        assert len(ours) == len(t_outs)
        for i, (o, t) in enumerate(zip(ours, t_outs)):
            assert o.dtype == t.dtype and o.shape == t.shape, (k, i, o.dtype, t.dtype, o.shape, t.shape)
            diff = _bits(o) != _bits(t)
            if diff.any():
                at = tuple(np.argwhere(diff)[0])
                raise AssertionError(f"reference, input set {k}, output {i}: {int(diff.sum())} of {diff.size} "
                                     f"differ; at {list(at)}: ours {o[at]}, TFLM {t[at]}")
    if c:
        compiled = compile_model(path, Options(targets=("c",)))
        results = verify_host(compiled, input_sets, isolate=False)
        bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
        assert not bad, "portable C:\n" + "\n".join(bad)
    return theirs
