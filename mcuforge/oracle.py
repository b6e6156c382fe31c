"""The TensorFlow Lite Micro reference interpreter (PyPI `tflite-micro`) as the oracle.

TFLM segfaults on a too-small arena or a bad tensor index, so `run_tflm` runs it in a child
process by default; a crash there becomes one clear error instead of killing the caller.

Stateful models (variable tensors: LSTM, SVDF) run in sequences of `steps` input sets: the
interpreter is reset (ResetVariableTensors) before the first set of each sequence only, so the state
one invoke leaves is what the next one reads. `steps=1`, the default, resets before every set. A
model with CALL_ONCE (resource variables with initial values) gets a fresh interpreter per sequence
instead: TFLM's Reset() refills resource variables with their zero point and never runs CALL_ONCE
again, while a sequence (and mcuforge's reset) starts as at startup.
Usage of the child: python -m mcuforge.oracle IN.npz OUT.npz (see `_child`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

import numpy as np

from mcuforge.errors import McuforgeError


class OracleError(McuforgeError):
    """The reference interpreter could not run the model."""


def arena_size_for(blob: bytes) -> int:
    """A generous arena: every tensor kept alive at once (kPreserveAllTensors) plus headroom."""
    from mcuforge.frontend.reader import read_tflite_bytes

    graph = read_tflite_bytes(blob)
    return 2 * sum(t.nbytes for t in graph.tensors) + (1 << 20)


def run_tflm_inprocess(blob: bytes, batches: Sequence[Sequence[np.ndarray]], tensors: Sequence[int] = (),
                       arena_size: int | None = None,
                       steps: int = 1) -> list[tuple[list[np.ndarray], dict[int, np.ndarray]]]:
    """Run every input set in `batches`, resetting the interpreter before every `steps`-th one (the
    start of a sequence); return (outputs, {tensor index: value}) for each."""
    from tflite_micro import runtime

    from mcuforge.frontend.reader import read_tflite_bytes

    cfg = runtime.InterpreterConfig.kPreserveAllTensors if tensors else runtime.InterpreterConfig.kAllocationRecording

    def fresh():
        return runtime.Interpreter.from_bytes(bytes(blob), arena_size=arena_size or arena_size_for(blob),
                                              intrepreter_config=cfg)

    interp = fresh()
    graph = read_tflite_bytes(bytes(blob))
    call_once = any(op.name == "CALL_ONCE" for op in graph.operators)
    n_outputs = len(graph.outputs)
    results = []
    for k, inputs in enumerate(batches):
        if k % steps == 0 and call_once and k:
            interp = fresh()
        elif k % steps == 0:
            interp.reset()
        for i, x in enumerate(inputs):
            interp.set_input(np.require(x, requirements="C"), i)
        interp.invoke()
        outs = [np.array(interp.get_output(i)) for i in range(n_outputs)]
        inter = {t: np.array(interp.GetTensor(t, 0)["tensor_data"]) for t in tensors}
        results.append((outs, inter))
    return results


Result = list[tuple[list[np.ndarray], dict[int, np.ndarray]]]


def run_tflm(blob: bytes, batches: Sequence[Sequence[np.ndarray]], tensors: Sequence[int] = (),
             isolate: bool = True, timeout: float = 600.0, steps: int = 1) -> Result:
    """Every input set of `batches` through TFLM: (outputs, {tensor index: value}) for each, in
    sequences of `steps` sets (state carried within a sequence). With `isolate` (the default) in a
    child process, a crash or refusal there an OracleError."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    if not isolate:
        return run_tflm_inprocess(blob, batches, tensors, steps=steps)
    result = _run_children([bytes(blob)], [batches], [tensors], timeout, steps)
    if isinstance(result, str):
        raise OracleError(result)
    if isinstance(result[0], str):
        raise OracleError(f"the TFLite Micro interpreter failed on this model: {result[0]}")
    return result[0]


def run_tflm_models(blobs: Sequence[bytes], batches: Sequence[Sequence[Sequence[np.ndarray]]],
                    timeout: float = 600.0) -> list[list[list[np.ndarray]] | str]:
    """Several models through TFLM in one child process: per model its outputs per input set, or
    the reason TFLM refused it. When the child crashes or hangs (TFLM segfaults on some bad
    models), each model runs in a child of its own, so one model cannot take the others with it."""
    result = _run_children([bytes(b) for b in blobs], batches, [()] * len(blobs), timeout)
    if isinstance(result, str):
        result = []
        for blob, sets in zip(blobs, batches):
            one = _run_children([bytes(blob)], [sets], [()], timeout)
            result.append(one if isinstance(one, str) else one[0])
    return [r if isinstance(r, str) else [outs for outs, _ in r] for r in result]


def _run_children(blobs: list[bytes], batches, tensors, timeout: float, steps: int = 1) -> list[Result | str] | str:
    """One child process for all `blobs`: per model its results or why TFLM refused it, or (a str)
    why the child itself failed."""
    with tempfile.TemporaryDirectory(prefix="mcuforge-oracle-") as tmp:
        req, resp = Path(tmp) / "req.npz", Path(tmp) / "resp.npz"
        payload: dict[str, np.ndarray] = {"models": np.asarray(len(blobs)), "steps": np.asarray(steps)}
        for m, (blob, sets, wanted) in enumerate(zip(blobs, batches, tensors)):
            payload[f"model_{m}"] = np.frombuffer(blob, dtype=np.uint8)
            payload[f"tensors_{m}"] = np.asarray(list(wanted), dtype=np.int64)
            payload[f"shape_{m}"] = np.asarray([len(sets), len(sets[0]) if sets else 0], dtype=np.int64)
            for b, inputs in enumerate(sets):
                for i, x in enumerate(inputs):
                    payload[f"in_{m}_{b}_{i}"] = np.asarray(x)
        np.savez(req, **payload)
        try:
            proc = subprocess.run([sys.executable, "-m", "mcuforge.oracle", str(req), str(resp)],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"the TFLite Micro interpreter did not finish within {timeout:.0f} s"
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit code {proc.returncode}"
            return f"the TFLite Micro interpreter failed on this model ({how}): {last}"
        data = np.load(resp)
        results: list[Result | str] = []
        for m, (sets, wanted) in enumerate(zip(batches, tensors)):
            if f"error_{m}" in data:
                results.append(str(data[f"error_{m}"]))
                continue
            results.append([([data[f"out_{m}_{b}_{i}"] for i in range(int(data[f"nout_{m}_{b}"]))],
                             {int(t): data[f"t_{m}_{b}_{t}"] for t in wanted}) for b in range(len(sets))])
        return results


def _child(req: str, resp: str) -> None:
    """Runs each model of the request in turn; a model TFLM refuses (an exception) is reported as
    its error text, the others still run."""
    data = np.load(req)
    out: dict[str, np.ndarray] = {}
    for m in range(int(data["models"])):
        nb, ni = (int(v) for v in data[f"shape_{m}"])
        batches = [[data[f"in_{m}_{b}_{i}"] for i in range(ni)] for b in range(nb)]
        try:
            results = run_tflm_inprocess(data[f"model_{m}"].tobytes(), batches,
                                         [int(t) for t in data[f"tensors_{m}"]], steps=int(data["steps"]))
        except Exception as e:  # TFLM refusing the model, whatever it raises
            out[f"error_{m}"] = np.asarray(f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[-1]}")
            continue
        for b, (outs, inter) in enumerate(results):
            out[f"nout_{m}_{b}"] = np.asarray(len(outs))
            for i, o in enumerate(outs):
                out[f"out_{m}_{b}_{i}"] = o
            for t, v in inter.items():
                out[f"t_{m}_{b}_{t}"] = v
    np.savez(resp, **out)


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    _child(sys.argv[1], sys.argv[2])
