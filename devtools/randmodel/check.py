"""The differential run: compile each model, run it on the host C path (models batched into one
executable) and in TFLite Micro, compare byte for byte."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mcuforge.oracle import run_tflm_models


@dataclass
class Outcome:
    """What happened to one model: ok, or the first problem in one line (`stage`: compile, tflm,
    host, mismatch, degenerate)."""

    name: str
    stage: str = "ok"
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.stage == "ok"

    def __str__(self) -> str:
        return f"{self.name}: {self.stage}" + (f": {self.detail}" if self.detail else "")


SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]


def run_host_batch(compiled: list[Any], input_sets: list[list[list[np.ndarray]]], work: Path,
                   sanitize: bool = False, dsp: bool = False):
    """Emit every compiled model with its own prefix and run them all in one host executable
    (mcuforge.host: kernels compiled once, cached beside `work`); the outputs per model and input
    set (or raise). With `sanitize`, everything is built with AddressSanitizer and UBSan: a kernel
    reading or writing outside its buffers, or past its model's arena, stops the run. With `dsp`, the
    cmsis-nn kernels take their DSP paths, the instructions emulated in C (-DMCU_CMSIS_DSP_EMULATE)."""
    from mcuforge.codegen.emit import emit

    from mcuforge.host import DSP_EMULATE, build_host, run_host_models

    extra = (*(SANITIZE if sanitize else ()), *((DSP_EMULATE,) if dsp else ()))
    work.mkdir(parents=True, exist_ok=True)
    dirs = [emit(c, work / f"r{k}", f"r{k}") for k, c in enumerate(compiled)]
    exe = build_host(dirs, work / "batch", extra_cflags=extra, cache_dir=work.parent / "kernel_objs")
    types = [[c.program.buffers[n].type for n in c.program.outputs] for c in compiled]
    return run_host_models(exe, input_sets, types)


def degenerate(outputs_per_set: list[list[np.ndarray]]) -> str | None:
    """Why TFLM's outputs make a vacuous test (an output equal for every input set, or a single
    value everywhere), or None."""
    for i in range(len(outputs_per_set[0])):
        vals = [np.asarray(outs[i]) for outs in outputs_per_set]
        if all(np.array_equal(vals[0], v) for v in vals[1:]):
            return f"output {i} is the same for every input"
        if len(np.unique(np.concatenate([v.ravel() for v in vals]))) < 2:
            return f"output {i} takes a single value"
    return None


def check_models(named_blobs: list[tuple[str, bytes]], work: Path, n_sets: int = 3,
                 input_seeds: list[int] | None = None, batch: int = 40, sanitize: bool = False,
                 dsp: bool = False) -> list[Outcome]:
    """Compile each model with the default targets, run it on the host C path (models batched into
    one executable) and in TFLM on `n_sets` random inputs (seeded by `input_seeds`, default the
    model's position); compare byte for byte. `sanitize`, `dsp`: see `run_host_batch`."""
    from mcuforge.driver import compile_model
    from mcuforge.errors import McuforgeError
    from mcuforge.verify import compare, random_inputs

    work.mkdir(parents=True, exist_ok=True)
    outcomes = [Outcome(name) for name, _ in named_blobs]
    compiled: dict[int, Any] = {}
    inputs: dict[int, list[list[np.ndarray]]] = {}
    for k, (name, blob) in enumerate(named_blobs):
        path = work / f"m{k}.tflite"
        path.write_bytes(blob)
        try:
            c = compile_model(path)
        except Exception as e:  # a refusal or an internal error: both are failures on a valid model
            outcomes[k] = Outcome(name, "compile", f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}")
            continue
        compiled[k] = c
        rng = np.random.default_rng(input_seeds[k] if input_seeds else k)
        inputs[k] = [random_inputs(c.imported, rng) for _ in range(n_sets)]
    keys = sorted(compiled)
    theirs = dict(zip(keys, run_tflm_models([named_blobs[k][1] for k in keys], [inputs[k] for k in keys])))
    ours: dict[int, Any] = {}
    for start in range(0, len(keys), batch):
        part = keys[start:start + batch]
        try:
            ours.update(zip(part, run_host_batch([compiled[k] for k in part], [inputs[k] for k in part],
                                                 work / f"batch{start}", sanitize, dsp)))
        except McuforgeError:  # find the model(s) that break the batch: one by one
            for k in part:
                try:
                    ours[k] = run_host_batch([compiled[k]], [inputs[k]], work / f"single{k}", sanitize, dsp)[0]
                except McuforgeError as e:
                    ours[k] = f"{type(e).__name__}: {str(e).splitlines()[0]} {' '.join(str(e).splitlines()[1:3])}"
    for k in keys:
        name = named_blobs[k][0]
        if isinstance(theirs[k], str):
            outcomes[k] = Outcome(name, "tflm", theirs[k])
        elif isinstance(ours[k], str):
            outcomes[k] = Outcome(name, "host", ours[k])
        else:
            bad = []
            for s, (o_set, t_set) in enumerate(zip(ours[k], theirs[k])):
                if len(o_set) != len(t_set):
                    bad.append(f"input set {s}: mcuforge gives {len(o_set)} outputs, TFLM {len(t_set)}")
                for i, (o, t) in enumerate(zip(o_set, t_set)):
                    m = compare(f"input set {s} output {i}", o, t)
                    if m:
                        bad.append(str(m))
            if bad:
                outcomes[k] = Outcome(name, "mismatch", bad[0])
            elif (why := degenerate(theirs[k])) is not None:
                outcomes[k] = Outcome(name, "degenerate", why)
    return outcomes

