"""Shared pieces of the 16x8 (int16 activation) op tests: int16 inputs over the whole range with
their edges, and one check that the numpy reference and the portable C (host gcc) equal TFLM."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from mcuforge.frontend import load_tflite
from mcuforge.ir.evaluate import evaluate

from mcuforge.driver import Options, compile_model
from mcuforge.oracle import run_tflm
from mcuforge.verify import verify_host

EDGES16 = np.array([-32768, -32767, -1, 0, 1, 32766, 32767], dtype=np.int16)


def int16_values(rng: np.random.Generator, shape, lo: int = -32768, hi: int = 32767) -> np.ndarray:
    """Uniform over [lo, hi] with the int16 edges inside that range planted at the start."""
    x = rng.integers(lo, hi, shape, endpoint=True).astype(np.int16)
    flat = x.reshape(-1)
    edges = EDGES16[(EDGES16 >= lo) & (EDGES16 <= hi)]
    n = min(flat.size, edges.size)
    flat[:n] = edges[:n]
    return x


def all_int16() -> np.ndarray:
    return np.arange(-32768, 32768, dtype=np.int64).astype(np.int16)


def same_bytes(ours, theirs) -> list[str]:
    """The outputs that differ (dtype or bytes), with their first mismatching indices."""
    bad = []
    for k, (o, t) in enumerate(zip(ours, theirs)):
        o, t = np.asarray(o), np.asarray(t)
        if o.dtype != t.dtype or o.shape != t.shape:
            bad.append(f"output {k}: ours {o.dtype}{list(o.shape)}, TFLM {t.dtype}{list(t.shape)}")
        elif not np.array_equal(o.view(np.uint8), t.view(np.uint8)):
            idx = np.argwhere(o != t)[:5]
            bad.append(f"output {k}: {int(np.sum(o != t))} differ, first at {idx.tolist()}: "
                       f"ours {[o[tuple(i)] for i in idx]}, TFLM {[t[tuple(i)] for i in idx]}")
    return bad


def check_against_tflm(tmp_path: Path, blob: bytes, data: list[np.ndarray], targets=("c",), host: bool = True,
                       name: str = "m") -> object:
    """The numpy reference and (with `host`) the generated C built with gcc -Werror equal TFLM byte
    for byte. Returns the compiled model."""
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(blob)
    (theirs, _), = run_tflm(blob, [data])
    ours = evaluate(load_tflite(path), data)
    assert len(ours) == len(theirs)
    bad = same_bytes(ours, theirs)
    assert not bad, bad
    compiled = compile_model(path, Options(targets=tuple(targets)))
    if host:
        (res,) = verify_host(compiled, [data], isolate=False)
        assert res.ok, [str(m) for m in res.mismatches][:5]
    return compiled
