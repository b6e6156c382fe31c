"""Shrinking a failing spec to a small one that fails the same way, and keeping it as a fixture."""

from __future__ import annotations

from pathlib import Path

from devtools.randmodel.graph import build
from devtools.randmodel.check import Outcome, check_models


def _drop_op(spec: dict, k: int) -> dict:
    """The spec without op k: readers of its value read its first source instead."""
    ops = [dict(o) for o in spec["ops"]]
    gone = ops.pop(k)
    v = k + 1

    def remap(r: int) -> int:
        return gone["src"] if r == v else r - 1 if r > v else r

    for o in ops[k:]:
        for key in ("src", "src2"):
            if key in o:
                o[key] = remap(o[key])
        if "srcs" in o:
            o["srcs"] = [remap(r) for r in o["srcs"]]
    return {**spec, "ops": ops}


_SIMPLER = {  # op field -> simpler values to try, simplest first
    "per_channel": [False], "act": ["NONE"], "qj": [1.0], "zj": [0], "clamp_calib": [False], "bias": [0.0, 1.0],
    "stride": [[1, 1]], "dil": [[1, 1]], "k": [[1, 1], [3, 3]], "mult": [1, 2], "share_q": [True],
    "same_q": [True], "keep": [True], "pads": [[0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0]],
}


def _candidates(spec: dict):
    """Smaller or simpler specs, the biggest cuts first."""
    for k in reversed(range(len(spec["ops"]))):
        yield _drop_op(spec, k)
    for d, n in enumerate(spec["input"]):
        for m in sorted({1, n // 2, n - 1}):
            if 1 <= m < n:
                yield {**spec, "input": spec["input"][:d] + [m] + spec["input"][d + 1:]}
    if spec["input_q"][1] != 0:
        yield {**spec, "input_q": [spec["input_q"][0], 0]}
    for k, op in enumerate(spec["ops"]):
        for key in ("oc", "units"):
            if key in op and op[key] > 1:
                for m in sorted({1, op[key] // 2, op[key] - 1}):
                    yield {**spec, "ops": spec["ops"][:k] + [{**op, key: m}] + spec["ops"][k + 1:]}
        for key, simpler in _SIMPLER.items():
            if key not in op:
                continue
            # only values before the current one in the list: a strict order, so shrinking cannot cycle
            for val in simpler[:simpler.index(op[key])] if op[key] in simpler else simpler:
                    yield {**spec, "ops": spec["ops"][:k] + [{**op, key: val}] + spec["ops"][k + 1:]}


def shrink(spec: dict, still_fails, budget: int = 200, progress=lambda msg: None) -> dict:
    """Greedy reduction: apply the first candidate that still fails (`still_fails(spec) -> bool`),
    start over, until no candidate fails or `budget` checks are spent."""
    checks = 0
    improved = True
    while improved and checks < budget:
        improved = False
        for cand in _candidates(spec):
            if checks >= budget:
                break
            checks += 1
            if still_fails(cand):
                spec, improved = cand, True
                progress(f"shrunk to {len(spec['ops'])} ops, input {spec['input']} ({checks} checks)")
                break
    return spec


def check_spec(spec: dict, work: Path, n_sets: int = 3) -> Outcome:
    """One spec through `check_models`."""
    return check_models([(f"seed{spec.get('seed', 0)}", build(spec))], work, n_sets, [spec.get("seed", 0)])[0]


def shrink_failure(spec: dict, outcome: Outcome, work: Path, budget: int = 200, progress=lambda m: None):
    """Shrink a failing spec while it fails at the same stage; (small spec, its outcome)."""
    counter = [0]

    def still_fails(cand: dict) -> bool:
        counter[0] += 1
        return check_spec(cand, work / f"shrink{counter[0] % 4}").stage == outcome.stage

    small = shrink(spec, still_fails, budget, progress)
    return small, check_spec(small, work / "final")


def save_fixture(directory: Path, spec: dict, outcome: Outcome, origin: str) -> Path:
    """Keep a (shrunk) failing case: NAME.tflite (the reproducer) and NAME.json (its spec, where it
    came from and how it failed)."""
    import json

    directory.mkdir(parents=True, exist_ok=True)
    name = f"seed{spec.get('seed', 0)}_{outcome.stage}"
    (directory / f"{name}.tflite").write_bytes(build(spec))
    (directory / f"{name}.json").write_text(json.dumps(
        {"origin": origin, "failure": str(outcome), "spec": spec}, indent=1) + "\n")
    return directory / f"{name}.tflite"
