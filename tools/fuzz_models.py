"""The long fuzz run: seeded mutants of the fixture and MLPerf models through `inspect`, `plan` and
`compile`; every run must end with exit 0 or one clean error line and exit 2.

    python tools/fuzz_models.py --seed 1 --count 20000 --time-limit 600
    python tools/fuzz_models.py --seed 1 --only 1234 --save /tmp/fuzz-failures   # replay one mutant

Prints the number of mutants and the outcome counts per command, and every failure with the
mutations that made it (mutant i depends only on the seed and i, so `--only i` reproduces it).
Exit code 1 when any run failed. See devtools/fuzz/ for the mutations and the checks.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.fuzz import Campaign, source_models  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=1000, help="number of mutants (default 1000)")
    ap.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                    help="stop after this many seconds even if --count is not reached")
    ap.add_argument("--start", type=int, default=0, help="index of the first mutant (default 0)")
    ap.add_argument("--only", type=int, metavar="I", help="run mutant I alone and print what it is")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds one command may take (default 30)")
    ap.add_argument("--subprocess-every", type=int, default=50, metavar="N",
                    help="rerun every Nth mutant through `python -m mcuforge` and compare (default 50, 0: never)")
    ap.add_argument("--save", type=Path, metavar="DIR", help="write every failing mutant to DIR")
    ap.add_argument("--verify", action="store_true",
                    help="also run `verify --on reference` (bit-exact with TFLite Micro) on every mutant that compiles")
    ap.add_argument("--models", type=Path, nargs="*", help="source .tflite files (default: the test fixtures)")
    args = ap.parse_args()
    sources = args.models or source_models(ROOT)
    with tempfile.TemporaryDirectory(prefix="mcuforge-fuzz-") as tmp:
        campaign = Campaign(sources, args.seed, Path(tmp), timeout=args.timeout,
                            subprocess_every=args.subprocess_every, save_dir=args.save, verify=args.verify)
        if args.only is not None:
            print(campaign.mutant(args.only).describe())
            report = campaign.run(1, start=args.only)
        else:
            report = campaign.run(args.count, args.time_limit, start=args.start, progress=lambda r: print(
                f"  ... {r.mutants} mutants, {r.seconds:.0f} s, {len(r.failures)} failure(s)", file=sys.stderr,
                flush=True), on_failure=lambda f: print(
                f"FAIL {f.command} on {f.mutant.describe()}: {f.problem}", file=sys.stderr, flush=True))
    print(report.summary())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
