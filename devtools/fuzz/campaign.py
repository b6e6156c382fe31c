"""A fuzz campaign: seeded mutants of the source models through every command, with a report."""

from __future__ import annotations

import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from devtools.fuzz.mutant import Mutant, mutate
from devtools.fuzz.worker import (COMMANDS, SENTINEL, Result, Worker, argv_for, check_output_dir, judge,
                                  run_subprocess)
from devtools.tflite_codec import decode
from mcuforge.codegen.output_dir import MARKER, marker_text

def source_models(root: Path) -> list[Path]:
    fx = root / "tests" / "fixtures"
    return sorted((fx / "models").glob("*.tflite")) + sorted((fx / "mlperf").glob("*.tflite"))


@dataclass
class Failure:
    mutant: Mutant
    command: str
    problem: str
    stderr: str = ""


@dataclass
class Report:
    seed: int
    mutants: int = 0
    seconds: float = 0.0
    counts: dict[str, Counter] = field(default_factory=lambda: {c: Counter() for c in (*COMMANDS, "verify")})
    subprocess_checks: int = 0
    failures: list[Failure] = field(default_factory=list)
    mutations: Counter = field(default_factory=Counter)
    slowest: dict[str, tuple[float, int]] = field(default_factory=dict)  # command -> (seconds, mutant)

    def summary(self) -> str:
        lines = [f"seed {self.seed}: {self.mutants} mutants in {self.seconds:.1f} s, "
                 f"{self.subprocess_checks} rechecked through `python -m mcuforge`"]
        for c, counts in self.counts.items():
            if c != "verify" or counts:
                lines.append(f"  {c:<8} " + ", ".join(f"{k}: {counts[k]}" for k in ("exit 0", "exit 2", "FAIL")))
        lines.append("  mutations applied: " + ", ".join(f"{k} {n}" for k, n in sorted(self.mutations.items())))
        lines.append("  slowest:  " + ", ".join(f"{c} {t:.2f} s (mutant {i})" for c, (t, i) in self.slowest.items()))
        lines.append(f"  failures: {len(self.failures)}")
        for f in self.failures[:50]:
            lines.append(f"    {f.command} on {f.mutant.describe()}: {f.problem}")
        return "\n".join(lines)


class Campaign:
    """Seeded mutants of `sources`, each run through every command; stop at `count` mutants or
    after `time_limit` seconds, whichever comes first. Mutant i depends only on (seed, i)."""

    def __init__(self, sources: Iterable[Path], seed: int, workdir: Path, timeout: float = 30.0,
                 subprocess_every: int = 0, save_dir: Path | None = None, commands: Iterable[str] = COMMANDS,
                 verify: bool = False):
        self.sources = list(sources)
        self.seed = seed
        self.workdir = Path(workdir)
        self.timeout = timeout
        self.subprocess_every = subprocess_every
        self.save_dir = save_dir
        self.commands = tuple(commands)
        self.verify = verify  # also `verify --on reference` every mutant that compiles
        self._cache: dict[Path, tuple[bytes, dict[str, Any]]] = {}

    def mutant(self, i: int) -> Mutant:
        rng = np.random.default_rng([self.seed, i])
        # The MLPerf models are large and slow to re-encode: drawn less often than the small ones.
        weights = np.asarray([0.25 if "mlperf" in p.parts else 1.0 for p in self.sources])
        src = self.sources[int(rng.choice(len(self.sources), p=weights / weights.sum()))]
        if src not in self._cache:
            blob = src.read_bytes()
            self._cache[src] = (blob, decode(blob))
        blob, doc = self._cache[src]
        return mutate(src, blob, doc, rng, i)

    def run(self, count: int, time_limit: float | None = None, start: int = 0,
            progress: Callable[[Report], None] | None = None,
            on_failure: Callable[[Failure], None] | None = None) -> Report:
        report = Report(self.seed)
        t0 = time.monotonic()
        self.workdir.mkdir(parents=True, exist_ok=True)
        with Worker(self.timeout) as worker:
            for i in range(start, start + count):
                if time_limit is not None and time.monotonic() - t0 > time_limit:
                    break
                seen = len(report.failures)
                self.run_one(worker, self.mutant(i), report)
                report.mutants += 1
                for f in report.failures[seen:] if on_failure else ():
                    on_failure(f)
                if progress and report.mutants % 100 == 0:
                    report.seconds = time.monotonic() - t0
                    progress(report)
        report.seconds = time.monotonic() - t0
        return report

    def run_one(self, worker: Worker, m: Mutant, report: Report) -> None:
        for s in m.steps:
            report.mutations[s.split(":")[0]] += 1
        model = self.workdir / f"mutant_{m.index}.tflite"
        model.write_bytes(m.data)
        out = self.workdir / f"out_{m.index}"
        # Every Nth mutant, one command (in turn) also runs through the real entry point.
        every = self.subprocess_every
        recheck = COMMANDS[(m.index // every) % len(COMMANDS)] if every and m.index % every == 0 else None
        sentinel = m.index % 2 == 1  # odd mutants compile over the output of an earlier compile
        try:
            for command in self.commands:
                argv = argv_for(command, model, out)
                outcome, problem, result = self._check(worker, command, argv, out, sentinel, recheck == command)
                report.subprocess_checks += recheck == command
                report.counts[command][outcome] += 1
                if result.seconds > report.slowest.get(command, (-1.0, 0))[0]:
                    report.slowest[command] = (result.seconds, m.index)
                if problem:
                    self._fail(report, Failure(m, command, problem, result.stderr))
                if command == "compile" and outcome == "exit 0" and self.verify:
                    # An accepted mutant must also be bit-exact with TFLite Micro (or refused by it).
                    r = worker.run(["verify", str(model), "--on", "reference", "-n", "2"])
                    outcome, problem = judge(r)
                    report.counts["verify"][outcome] += 1
                    if problem:
                        self._fail(report, Failure(m, "verify", problem, r.stderr))
        finally:
            model.unlink(missing_ok=True)
            shutil.rmtree(out, ignore_errors=True)

    def _check(self, worker: Worker, command: str, argv: list[str], out: Path, sentinel: bool,
               recheck: bool) -> tuple[str, str, Result]:
        """Run one command on the worker (and through the entry point when `recheck`): (outcome,
        problem or '', the worker's result)."""

        def prepare() -> None:
            shutil.rmtree(out, ignore_errors=True)
            if command == "compile" and sentinel:  # an earlier output of mcuforge, marked as such
                out.mkdir()
                (out / "SENTINEL").write_bytes(SENTINEL)
                (out / MARKER).write_text(marker_text({"SENTINEL": SENTINEL}))

        prepare()
        result = worker.run(argv)
        outcome, problem = judge(result)
        if not problem and command == "compile":
            problem = check_output_dir(out, outcome, command == "compile" and sentinel)
        if recheck and not problem:
            prepare()
            real = run_subprocess(argv, timeout=max(self.timeout, 60.0))
            if (real.code, real.stderr) != (result.code, result.stderr):
                problem = (f"`python -m mcuforge` gave exit {real.code} {real.stderr.strip()[:200]!r}, "
                           f"in-process exit {result.code} {result.stderr.strip()[:200]!r}")
        shutil.rmtree(out, ignore_errors=True)
        return ("FAIL" if problem else outcome), problem, result

    def _fail(self, report: Report, failure: Failure) -> None:
        report.failures.append(failure)
        if self.save_dir is not None:
            self.save_dir.mkdir(parents=True, exist_ok=True)
            (self.save_dir / f"seed{self.seed}_mutant{failure.mutant.index}.tflite").write_bytes(failure.mutant.data)

