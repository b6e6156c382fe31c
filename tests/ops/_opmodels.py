"""Shared by the op test modules: many single-operator cases in one model (written with
devtools.tflite_writer, no TensorFlow), run once in TFLite Micro, and compared byte for byte with
mcuforge's numpy reference and the generated portable C on the host."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from mcuforge.codegen.emit import emit
from mcuforge.frontend import load_tflite
from mcuforge.ir.evaluate import evaluate

from devtools.tflite_writer import ModelWriter
from mcuforge.driver import Options, compile_model
from mcuforge.errors import UnsupportedError
from mcuforge.host import build_host, run_host
from mcuforge.oracle import OracleError, run_tflm

Q = (0.05, 3)  # (scale, zero point) of the int8 activations unless a case says otherwise


def values(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    """Random values over the whole range of an integer type (float32: normal, spread 10)."""
    if dtype == "float32":
        return rng.normal(0, 10, shape).astype(np.float32)
    info = np.iinfo(np.dtype(dtype))
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


class Cases:
    """Builds one model holding many operators, each with its own inputs and output."""

    def __init__(self, seed: int = 0) -> None:
        self.w = ModelWriter()
        self.rng = np.random.default_rng(seed)
        self.inputs: list[int] = []
        self.data: list[np.ndarray] = []
        self.outputs: list[int] = []
        self.labels: list[str] = []

    def input(self, shape, dtype: str = "int8", q: tuple[float, int] | None = Q, data=None) -> int:
        """A model input (random values unless `data` is given); `q` only for int8."""
        kw = {"scale": q[0], "zero_point": q[1]} if q is not None and dtype == "int8" else {}
        t = self.w.tensor(shape, dtype, name=f"in{len(self.inputs)}", **kw)
        self.inputs.append(t)
        self.data.append(np.asarray(data, dtype=dtype).reshape(shape) if data is not None
                         else values(self.rng, shape, dtype))
        return t

    def const(self, data, dtype: str = "int32", q: tuple[float, int] | None = None) -> int:
        arr = np.asarray(data, dtype=dtype)
        kw = {"scale": q[0], "zero_point": q[1]} if q is not None else {}
        return self.w.tensor(arr.shape, dtype, data=arr, **kw)

    def op(self, name: str, ins: Sequence[int], out_shape, dtype: str = "int8",
           q: tuple[float, int] | None = Q, label: str = "", **options: Any) -> int:
        kw = {"scale": q[0], "zero_point": q[1]} if q is not None and dtype == "int8" else {}
        y = self.w.tensor(out_shape, dtype, name=f"out{len(self.outputs)}", **kw)
        self.w.op(name, list(ins), [y], **options)
        self.outputs.append(y)
        self.labels.append(label or f"{name} #{len(self.outputs) - 1}")
        return y

    def finish(self) -> bytes:
        return self.w.finish(self.inputs, self.outputs)


def save(tmp_path: Path, blob: bytes, name: str = "m.tflite") -> Path:
    path = Path(tmp_path) / name
    path.write_bytes(blob)
    return path


def same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def check(tmp_path: Path, cases: Cases, input_sets: list[list[np.ndarray]] | None = None,
          host: bool = True) -> None:
    """TFLM, the numpy reference and (with `host`) the portable C on the host agree byte for byte
    on every output, for the cases' input set and any extra ones."""
    blob = cases.finish()
    path = save(tmp_path, blob)
    sets = [cases.data] + list(input_sets or [])
    theirs = run_tflm(blob, sets)
    module = load_tflite(path)
    for k, (data, (t_outs, _)) in enumerate(zip(sets, theirs)):
        ours = evaluate(module, data)
        bad = [cases.labels[i] for i, (o, t) in enumerate(zip(ours, t_outs)) if not same_bytes(o, t)]
        assert not bad, f"input set {k}: the reference differs from TFLM on {bad}"
    if host:
        compiled = compile_model(path, Options(targets=("c",)))
        outs = run_c(compiled, sets)
        for k, (ours, (t_outs, _)) in enumerate(zip(outs, theirs)):
            bad = [cases.labels[i] for i, (o, t) in enumerate(zip(ours, t_outs)) if not same_bytes(o, t)]
            assert not bad, f"input set {k}: the portable C differs from TFLM on {bad}"


def run_c(compiled, sets: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """The generated portable C, built with gcc -Wall -Wextra -Werror, on every input set."""
    prog = compiled.program
    with tempfile.TemporaryDirectory(prefix="mcuforge-ops-") as tmp:
        exe = build_host(emit(compiled, Path(tmp) / "model", "model"))
        return run_host(exe, sets, [prog.buffers[o].type for o in prog.outputs])


def problems(path: Path) -> list[tuple[int, str, str]]:
    """The unsupported-operator problems mcuforge reports for a model (empty when it loads)."""
    try:
        load_tflite(path)
    except UnsupportedError as e:
        return list(e.problems)
    return []


def tflm_refuses(blob: bytes, data: list[np.ndarray]) -> bool:
    try:
        run_tflm(blob, [data])
    except OracleError:
        return True
    return False


def assert_refused(tmp_path: Path, cases: Cases, expected: Sequence[str], tflm_too: Sequence[bool]) -> None:
    """Each operator of the model is refused, in order, with a reason containing `expected[i]`;
    and where `tflm_too[i]`, a model of that operator alone is refused by TFLM too."""
    blob = cases.finish()
    got = problems(save(tmp_path, blob))
    assert [p[0] for p in got] == list(range(len(expected))), got
    for (_, _, why), words in zip(got, expected):
        assert words in why, (words, why)
    for i, flag in enumerate(tflm_too):
        if flag:
            assert tflm_refuses(single(cases, i), [d for t, d in zip(cases.inputs, cases.data)
                                                   if t in cases.w.operators[i].inputs]), f"TFLM ran operator {i}"


def single(cases: Cases, i: int) -> bytes:
    """A model of operator i of `cases` alone (its inputs and output)."""
    w = ModelWriter()
    o = cases.w.operators[i]
    remap = {}
    for t in (*o.inputs, *o.outputs):
        src = cases.w.tensors[t]
        w.tensors.append(src)
        remap[t] = len(w.tensors) - 1
    w.op(o.op, [remap[t] for t in o.inputs], [remap[t] for t in o.outputs], o.options_cls, **o.options)
    return w.finish([remap[t] for t in o.inputs if t in cases.inputs], [remap[t] for t in o.outputs])
