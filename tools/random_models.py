"""Differential run over random valid int8 models: compile with the default targets, run the
generated C on the host, compare byte for byte with TFLite Micro.

    python tools/random_models.py --seed 1000 --count 2000            # the long run
    python tools/random_models.py --seed 1000 --count 500 --sanitize  # with ASan + UBSan on the host C
    python tools/random_models.py --seed 1000 --count 500 --dsp       # the cmsis-nn DSP paths, emulated
    python tools/random_models.py --seed 3 --count 1 --shrink         # reproduce, shrink and keep one

Prints one line per failing model and a summary; with --shrink every failure is reduced
(devtools.randmodel.shrink_failure) and written to tests/fixtures/random/ (or --keep DIR), which
tests/test_random_models.py replays. Exit code 0 when every model is bit-exact, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # devtools/ lives in the checkout, not in the installed package

from devtools.randmodel import build, check_models, random_spec, save_fixture, shrink_failure  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--count", type=int, default=200, help="number of models (default 200)")
    ap.add_argument("--sets", type=int, default=3, help="random input sets per model (default 3)")
    ap.add_argument("--chunk", type=int, default=100, help="models per compile/TFLM/host round (default 100)")
    ap.add_argument("--sanitize", action="store_true",
                    help="build the host C with AddressSanitizer and UBSan (slower; catches out-of-bounds accesses)")
    ap.add_argument("--dsp", action="store_true",
                    help="build the cmsis-nn kernels' DSP paths, their instructions emulated in C")
    ap.add_argument("--shrink", action="store_true", help="shrink every failure and keep it as a fixture")
    ap.add_argument("--budget", type=int, default=200, help="checks per shrink (default 200)")
    ap.add_argument("--keep", type=Path, default=ROOT / "tests" / "fixtures" / "random", help="fixture directory")
    ap.add_argument("--work", type=Path, default=None, help="work directory (default: a temporary one)")
    args = ap.parse_args(argv)
    if args.count < 1 or args.sets < 1 or args.chunk < 1:
        print("error: --count, --sets and --chunk must be at least 1", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mcuforge-random-") as tmp:
        work = args.work or Path(tmp)
        start, stages, failures = time.monotonic(), Counter(), []
        seeds = list(range(args.seed, args.seed + args.count))
        for c in range(0, len(seeds), args.chunk):
            part = seeds[c:c + args.chunk]
            specs = {s: random_spec(s) for s in part}
            outcomes = check_models([(f"seed{s}", build(specs[s])) for s in part], work / f"chunk{c}",
                                    n_sets=args.sets, input_seeds=part, sanitize=args.sanitize,
                                    dsp=args.dsp)
            for s, o in zip(part, outcomes):
                stages[o.stage] += 1
                if not o.ok:
                    print(o, flush=True)
                    failures.append((specs[s], o))
            print(f"{c + len(part)}/{len(seeds)} models, {dict(stages)}, {time.monotonic() - start:.0f} s",
                  file=sys.stderr, flush=True)
        if args.shrink:
            for spec, o in failures:
                small, so = shrink_failure(spec, o, work / f"shrink{spec['seed']}", args.budget,
                                           lambda m: print("  " + m, file=sys.stderr, flush=True))
                path = save_fixture(args.keep, small, so, f"random_spec({spec['seed']}), shrunk by "
                                    f"tools/random_models.py (budget {args.budget}): {len(spec['ops'])} ops on "
                                    f"{spec['input']} -> {len(small['ops'])} ops on {small['input']}")
                print(f"kept {path}: {so}")
    n = sum(stages.values())
    others = ", ".join(f"{k} {v}" for k, v in sorted(stages.items()) if k != "ok")
    print(f"{n} models, {stages['ok']} bit-exact ({100.0 * stages['ok'] / n:.1f} %)" + (f"; {others}" if others else ""))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
