#!/usr/bin/env python3
"""Re-check the Keras-made models of ``tests/fixtures/keras`` (written by ``tools/gen_keras_models.py``).

For each entry of the directory's ``MANIFEST.json`` this

* checks that the file exists, that its sha256 and size are the manifest's, and that the manifest's
  ``ops`` and I/O dtypes are the file's,
* runs it in the TFLite Micro interpreter (``tflite-micro``, in a child process so that a crash is one
  error) on two seeded input sets (integer inputs uniform over the whole dtype range,
  float inputs over the range the input QUANTIZE represents), twice each, and checks that the
  outputs have the model's shapes and repeat; the result goes to ``tflm``,
* runs what ``mcuforge inspect`` runs (``read_tflite`` + ``inspect_graph``) and lists every operator
  mcuforge refuses, with its reason, or the reader's / importer's refusal of the whole model:
  ``mcuforge_blockers`` (the coverage gap of issues 12 and 15).

Without ``--update`` any difference from the manifest is reported and the exit status is 1 (when an
operator gets implemented, its blockers disappear: rerun with ``--update`` and commit the manifest).
With ``--update`` the ``tflm`` and ``mcuforge_blockers`` fields are rewritten from this run; a file
that does not match its manifest entry still fails.  Needs no TensorFlow::

    python tools/check_keras_models.py              # check
    python tools/check_keras_models.py --update     # refresh tflm / mcuforge_blockers
    python tools/check_keras_models.py --only lstm -v
    python tools/check_keras_models.py --table      # the table of tests/fixtures/keras/README.md
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_fixtures import _make_input, _model_info  # noqa: E402  (same directory)

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = REPO / "tests" / "fixtures" / "keras"
ARENA_BYTES = 16 << 20
_DTYPE = {0: "float32", 2: "int32", 3: "uint8", 7: "int16", 9: "int8"}


def tflm_outputs(path: Path, name: str) -> list[list[np.ndarray]]:
    """Run the model in TFLM on two seeded input sets, each twice on a fresh interpreter; return the
    outputs of the four runs. In this process: call it in a child, TFLM can crash (it segfaults on a
    too-small arena rather than failing, hence one generous arena)."""
    from tflite_micro import runtime

    blob = path.read_bytes()
    _, ins, outs = _model_info(blob)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    sets = [[_make_input(i, rng) for i in ins] for _ in range(2)]
    results = []
    for inputs in sets + sets:
        interp = runtime.Interpreter.from_bytes(blob, arena_size=ARENA_BYTES)
        for i, x in enumerate(inputs):
            interp.set_input(x, i)
        interp.invoke()
        results.append([np.array(interp.get_output(k)) for k in range(len(outs))])
    return results


def _tflm_child(path: str, name: str) -> None:
    """Child process: print the tflm result of one model as JSON."""
    try:
        runs = tflm_outputs(Path(path), name)
    except Exception as e:  # noqa: BLE001 - TFLM's refusal is the result being recorded
        print(json.dumps({"runs": False, "error": " ".join(f"{type(e).__name__}: {e}".split())[:400]}))
        return
    _, _, outs = _model_info(Path(path).read_bytes())
    problems, described = [], []
    for b in range(2):
        for k, info in enumerate(outs):
            o, again = runs[b][k], runs[b + 2][k]
            if tuple(o.shape) != info["shape"]:
                problems.append(f"output {k} shape {list(o.shape)} != model {list(info['shape'])}")
            if not np.array_equal(o, again):
                problems.append(f"output {k} differs between two runs of the same input")
            if b == 0:
                described.append(f"{o.dtype}{list(o.shape)} distinct={len(np.unique(o))}")
    print(json.dumps({"runs": False, "error": "; ".join(problems)} if problems
                     else {"runs": True, "outputs": described}))


def tflm_result(path: Path, name: str, timeout: float = 600.0) -> dict:
    """{"runs": True, "outputs": [...]} or {"runs": False, "error": "..."}, from a child process.
    Not mcuforge.oracle.run_tflm, whose error drops TFLM's own log: here the log names the cause (such
    as a missing kernel) in the recorded error."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--tflm-child", str(path), name]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"runs": False, "error": f"TFLM did not finish in {timeout:.0f} s"}
    lines = p.stdout.strip().splitlines()
    said = "; ".join(dict.fromkeys(line.strip() for line in p.stderr.splitlines() if line.strip()))
    if p.returncode != 0 or not lines:
        return {"runs": False, "error": f"TFLM crashed (exit status {p.returncode}): {said[-300:]}"}
    result = json.loads(lines[-1])
    if not result["runs"] and said:  # TFLM's own log names the cause (e.g. a missing kernel)
        result["error"] += f" (TFLM: {said[:300]})"
    return result


def mcuforge_blockers(path: Path) -> list[str]:
    """What `mcuforge inspect` refuses: 'OP: reason' per distinct refused operator, or one
    'read: ...' / 'import: ...' line when the reader or the importer refuses the whole model."""
    from mcuforge.frontend.reader import read_tflite

    from mcuforge.errors import McuforgeError
    from mcuforge.inspection import inspect_graph

    try:
        graph = read_tflite(path)
    except McuforgeError as e:
        return ["read: " + str(e).replace(f"{path}: ", "")]
    try:
        info = inspect_graph(graph)
    except McuforgeError as e:
        return ["import: " + str(e).replace(f"{path}: ", "")]
    return sorted({f"{u['op']}: {u['reason']}" for u in info["unsupported"]})


def file_problems(path: Path, entry: dict) -> list[str]:
    if not path.exists():
        return [f"file {entry['file']} missing"]
    blob = path.read_bytes()
    problems = []
    if hashlib.sha256(blob).hexdigest() != entry.get("sha256") or len(blob) != entry.get("bytes"):
        problems.append("sha256/size differ from the manifest (regenerated without updating it?)")
    ops, ins, outs = _model_info(blob)
    if ops != entry.get("ops"):
        problems.append(f"manifest ops {entry.get('ops')} != file ops {ops}")
    for what, infos in (("input", ins), ("output", outs)):
        got = [_DTYPE.get(i["type"], str(i["type"])) for i in infos]
        if got != entry.get(f"{what}_dtypes"):
            problems.append(f"manifest {what} dtypes {entry.get(what + '_dtypes')} != file {got}")
    return problems


def markdown_table(d: Path, manifest: list[dict]) -> str:
    """The README's table of the models, from the manifest (and mcuforge's activation lower bound)."""
    from mcuforge.frontend.reader import read_tflite

    from mcuforge.inspection import live_lower_bound

    rows = ["| model | KB | I/O | activations >= KB | operators | TFLM | mcuforge refuses |",
            "|---|---:|---|---:|---|---|---|"]
    for e in manifest:
        bound, _ = live_lower_bound(read_tflite(d / e["file"]))
        tflm = e["tflm"] or {}
        blockers = e["mcuforge_blockers"] or []
        whole = [b for b in blockers if b.startswith(("read: ", "import: "))]
        refused = re.sub(r" \('[^']*'\)| '[^']*'", "", whole[0]) if whole else ", ".join(dict.fromkeys(b.split(":")[0] for b in blockers)) or "nothing"
        rows.append(f"| {e['name']} | {e['bytes'] / 1024:.0f} | {e['input_dtypes'][0]} ({e['quantization']}) | "
                    f"{bound / 1024:.0f} | {' '.join(e['ops'])} | "
                    f"{'runs' if tflm.get('runs') else 'fails: ' + tflm.get('error', 'not checked')} | "
                    f"{refused.replace('|', '/')} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Re-check the Keras-made fixture models (TFLM, mcuforge inspect).")
    ap.add_argument("--dir", default=str(DEFAULT_DIR), help="model directory (default: tests/fixtures/keras)")
    ap.add_argument("--only", default=None, help="only models whose name contains this substring")
    ap.add_argument("--update", action="store_true", help="rewrite the tflm and mcuforge_blockers fields")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--table", action="store_true", help="print the README's markdown table of the models and exit")
    ap.add_argument("--tflm-child", nargs=2, metavar=("FILE", "NAME"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.tflm_child:
        _tflm_child(*args.tflm_child)
        return 0

    d = Path(args.dir)
    manifest_path = d / "MANIFEST.json"
    if not manifest_path.exists():
        print(f"error: {manifest_path} not found (run tools/gen_keras_models.py)", file=sys.stderr)
        return 2
    manifest = json.loads(manifest_path.read_text())
    if args.table:
        print(markdown_table(d, manifest))
        return 0
    failed, changed, n = [], [], 0
    for entry in manifest:
        if args.only is not None and args.only not in entry["name"]:
            continue
        n += 1
        path = d / entry["file"]
        problems = file_problems(path, entry)
        if problems:
            failed.append(entry["name"])
            print(f"FAIL {entry['name']}: " + "; ".join(problems))
            continue
        tflm = tflm_result(path, entry["name"])
        blockers = mcuforge_blockers(path)
        diffs = [f for f, new in (("tflm", tflm), ("mcuforge_blockers", blockers)) if entry.get(f) != new]
        if diffs:
            changed.append(entry["name"])
            if args.update:
                entry["tflm"], entry["mcuforge_blockers"] = tflm, blockers
        status = "ok  " if not diffs else ("upd " if args.update else "DIFF")
        tf_s = "TFLM ok" if tflm["runs"] else f"TFLM FAILS ({tflm['error'][:80]})"
        print(f"{status} {entry['name']:36s} {tf_s}; {len(blockers)} mcuforge blocker(s)")
        if args.verbose or (diffs and not args.update):
            for f in diffs:
                print(f"       {f}: manifest {json.dumps(entry.get(f))}\n       {' ' * len(f)}  now      {json.dumps(tflm if f == 'tflm' else blockers)}")
            if args.verbose:
                print("       " + "\n       ".join(tflm.get("outputs", []) + blockers))
    if args.update and changed:
        manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{n} models: {len(failed)} failed file checks, {len(changed)} "
          f"{'updated' if args.update else 'differ from the manifest'}")
    return 1 if failed or n == 0 or (changed and not args.update) else 0


if __name__ == "__main__":
    sys.exit(main())
