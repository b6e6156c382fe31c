#!/usr/bin/env python3
"""Check that every committed fixture model runs in the TFLite Micro reference interpreter.

For each entry of ``tests/fixtures/models/MANIFEST*.json`` (written by ``tools/gen_fixtures.py``) this

* checks that the file exists and that the manifest's ``ops`` list matches the operators in the file,
* loads it with ``tflite_micro.runtime.Interpreter.from_bytes`` (PyPI package ``tflite-micro``),
* feeds every input with seeded random data (int8 inputs: uniform over the full int8 range;
  float32 inputs: uniform over the range the model's QUANTIZE op can represent), invokes it twice and
  checks that both runs give the same outputs of the expected shape / dtype,
* warns when an output is degenerate (at most 2 distinct values), which would make the fixture a weak
  bit-exactness test.

It also reports ``.tflite`` files in the directory that the manifest does not list.
Exit status 0 only if every fixture loads and runs.  Needs no TensorFlow::

    python3 tools/check_fixtures.py                  # all fixtures in tests/fixtures/models
    python3 tools/check_fixtures.py --only conv_2d   # fixtures whose name contains "conv_2d"
    python3 tools/check_fixtures.py -v               # also print output shapes / value stats
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DIR = REPO / "tests" / "fixtures" / "models"
ARENA_SIZES = (64 * 1024, 512 * 1024, 4 * 1024 * 1024)


def _model_info(blob: bytes):
    """(ops in execution order (deduplicated), [input tensor info], [output tensor info]) from the flatbuffer."""
    import tflite
    from tflite.BuiltinOperator import BuiltinOperator

    code2name = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}
    m = tflite.Model.GetRootAsModel(blob, 0)
    codes = []
    for i in range(m.OperatorCodesLength()):
        oc = m.OperatorCodes(i)
        c = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        name = code2name.get(c, f"BUILTIN_{c}")
        if name == "CUSTOM":
            name = "CUSTOM:" + (oc.CustomCode() or b"").decode()
        codes.append(name)
    sg = m.Subgraphs(0)
    ops = []
    consumers = {}  # tensor index -> [(op name, op)]
    for o in range(sg.OperatorsLength()):
        op = sg.Operators(o)
        n = codes[op.OpcodeIndex()]
        if n not in ops:
            ops.append(n)
        for t in op.InputsAsNumpy():
            consumers.setdefault(int(t), []).append((n, op))
    for s in range(1, m.SubgraphsLength()):
        sub = m.Subgraphs(s)
        for o in range(sub.OperatorsLength()):
            n = codes[sub.Operators(o).OpcodeIndex()]
            if n not in ops:
                ops.append(n)

    def tinfo(ix):
        t = sg.Tensors(ix)
        q = t.Quantization()
        scale = zp = None
        if q is not None and q.ScaleLength() == 1:
            scale, zp = float(q.Scale(0)), int(q.ZeroPoint(0))
        info = {"index": int(ix), "shape": tuple(int(d) for d in t.ShapeAsNumpy()), "type": t.Type(),
                "scale": scale, "zero_point": zp, "float_range": None}
        if t.Type() == 0:  # float32: representable range of the QUANTIZE that consumes it
            for n, op in consumers.get(int(ix), []):
                if n == "QUANTIZE":
                    out = sg.Tensors(int(op.OutputsAsNumpy()[0])).Quantization()
                    if out is not None and out.ScaleLength() == 1:
                        s, z = float(out.Scale(0)), int(out.ZeroPoint(0))
                        info["float_range"] = ((-128 - z) * s, (127 - z) * s)
        return info

    ins = [tinfo(i) for i in sg.InputsAsNumpy()]
    outs = [tinfo(i) for i in sg.OutputsAsNumpy()]
    return ops, ins, outs


def _make_input(info, rng):
    shape = info["shape"]
    if info["type"] == 9:  # INT8
        return rng.integers(-128, 128, size=shape, dtype=np.int64).astype(np.int8)
    if info["type"] == 0:  # FLOAT32
        lo, hi = info["float_range"] or (-1.0, 1.0)
        # a little beyond the representable range so that the input QUANTIZE also saturates sometimes
        pad = 0.05 * (hi - lo)
        return rng.uniform(lo - pad, hi + pad, size=shape).astype(np.float32)
    if info["type"] == 7:  # INT16
        return rng.integers(-32768, 32768, size=shape, dtype=np.int64).astype(np.int16)
    if info["type"] == 3:  # UINT8
        return rng.integers(0, 256, size=shape, dtype=np.int64).astype(np.uint8)
    raise ValueError(f"unsupported input tensor type {info['type']}")


_NP_DTYPE = {9: np.int8, 0: np.float32, 7: np.int16, 3: np.uint8, 2: np.int32}


def run_tflm(blob: bytes, inputs):
    """Run the model in TFLM, growing the arena if needed. Returns (interpreter, arena_size)."""
    from tflite_micro import runtime

    last = None
    for arena in ARENA_SIZES:
        try:
            interp = runtime.Interpreter.from_bytes(blob, arena_size=arena)
        except Exception as e:  # noqa: BLE001 - TFLM reports allocation failures as RuntimeError
            last = e
            continue
        for i, x in enumerate(inputs):
            interp.set_input(x, i)
        interp.invoke()
        return interp, arena
    raise RuntimeError(f"could not create the interpreter: {last}")


def check_one(path: Path, entry: dict, verbose: bool):
    """Returns (errors, warnings, summary line)."""
    errors, warnings = [], []
    blob = path.read_bytes()
    ops, ins, outs = _model_info(blob)
    if entry is not None and list(entry.get("ops", [])) != ops:
        errors.append(f"manifest ops {entry.get('ops')} != file ops {ops}")
    rng = np.random.default_rng(zlib.crc32(path.stem.encode()))
    inputs = [_make_input(i, rng) for i in ins]
    try:
        interp, arena = run_tflm(blob, inputs)
        results = [np.array(interp.get_output(k)) for k in range(len(outs))]
        # second run on a fresh interpreter: must be deterministic
        interp2, _ = run_tflm(blob, inputs)
        results2 = [np.array(interp2.get_output(k)) for k in range(len(outs))]
    except Exception as e:  # noqa: BLE001
        errors.append(f"TFLM failed: {type(e).__name__}: {e}")
        return errors, warnings, ""
    for k, (o, o2, info) in enumerate(zip(results, results2, outs)):
        if tuple(o.shape) != info["shape"]:
            errors.append(f"output {k} shape {tuple(o.shape)} != model shape {info['shape']}")
        want = _NP_DTYPE.get(info["type"])
        if want is not None and o.dtype != want:
            errors.append(f"output {k} dtype {o.dtype} != {np.dtype(want)}")
        if not np.array_equal(o, o2):
            errors.append(f"output {k} differs between two runs")
        if len(np.unique(o)) <= 2 and o.size > 2:
            warnings.append(f"output {k} is degenerate: values {np.unique(o).tolist()}")
    summary = ""
    if verbose:
        parts = []
        for o in results:
            parts.append(f"{o.dtype}{list(o.shape)} min={o.min():.4g} max={o.max():.4g} distinct={len(np.unique(o))}")
        summary = f"arena<={arena // 1024}KiB  " + "; ".join(parts)
    return errors, warnings, summary


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Run every fixture model in the TFLite Micro interpreter.")
    ap.add_argument("--dir", default=str(DEFAULT_DIR), help="fixture directory (default: tests/fixtures/models)")
    ap.add_argument("--only", default=None, help="only fixtures whose name contains this substring")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)

    d = Path(args.dir)
    paths = sorted(d.glob("MANIFEST*.json"))
    if not paths:
        print(f"error: no MANIFEST*.json in {d} (run tools/gen_fixtures.py)", file=sys.stderr)
        return 2
    manifest = [e for path in paths for e in json.loads(path.read_text())]
    listed = {e["file"] for e in manifest}
    unlisted = sorted(p.name for p in d.glob("*.tflite") if p.name not in listed)

    n_ok, failed, warned = 0, [], []
    for entry in manifest:
        if args.only is not None and args.only not in entry["name"]:
            continue
        path = d / entry["file"]
        if not path.exists():
            failed.append((entry["name"], ["file missing"]))
            print(f"FAIL {entry['name']}: file {entry['file']} missing")
            continue
        errors, warnings, summary = check_one(path, entry, args.verbose)
        if errors:
            failed.append((entry["name"], errors))
            print(f"FAIL {entry['name']}: " + "; ".join(errors))
        else:
            n_ok += 1
            if args.verbose:
                print(f"ok   {entry['name']:50s} {' '.join(entry['ops'])}  |  {summary}")
        for w in warnings:
            warned.append((entry["name"], w))
            print(f"warn {entry['name']}: {w}")
    for name in unlisted:
        if args.only is None or args.only in name:
            print(f"warn {name}: not listed in any MANIFEST*.json")
    total = n_ok + len(failed)
    print(f"{n_ok}/{total} fixtures run in TFLM" + (f"; {len(failed)} FAILED: {[n for n, _ in failed]}" if failed
                                                     else "") + (f"; {len(warned)} warnings" if warned else ""))
    return 1 if failed or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
