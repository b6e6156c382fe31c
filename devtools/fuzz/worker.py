"""Running one command on a mutant safely: in a long-lived worker process (the CLI's main()
in-process) or through the real `python -m mcuforge` entry point, each under an address-space limit
and a timeout; and judging the result (exit 0, or exit 2 with one clean error line)."""

from __future__ import annotations

import json
import os
import resource
import selectors
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from mcuforge.codegen.output_dir import MARKER

COMMANDS = ("inspect", "plan", "compile")
SENTINEL = b"from an earlier compile\n"  # the one file of a fake earlier output a failed compile must keep
MEMORY_LIMIT = 1 << 30  # bytes of address space for a worker or a checked subprocess


def _limit_memory(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("MCUFORGE_DEBUG", None)
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"  # thread pools reserve address space
    root = str(Path(__file__).resolve().parents[2])  # the checkout, for `import devtools`
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def argv_for(command: str, model: Path, out_dir: Path) -> list[str]:
    return [command, str(model)] + (["-o", str(out_dir)] if command == "compile" else [])


@dataclass
class Result:
    code: int | None  # None: timed out (hang) or the process died
    stderr: str
    seconds: float
    note: str = ""


class Worker:
    """A child process that runs mcuforge.cli.main() on request under an address-space limit.
    Requests and replies are JSON lines; a request that takes longer than `timeout` kills it
    (the next request starts a fresh one)."""

    def __init__(self, timeout: float = 30.0, memory_limit: int = MEMORY_LIMIT):
        self.timeout = timeout
        self.memory_limit = memory_limit
        self.proc: subprocess.Popen | None = None
        self.errlog = tempfile.TemporaryFile()

    def _start(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "devtools.fuzz", "worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self.errlog, env=_child_env(), preexec_fn=_limit_memory(self.memory_limit))
        return self.proc

    def run(self, argv: list[str]) -> Result:
        proc = self._start()
        t0 = time.monotonic()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write((json.dumps(argv) + "\n").encode())
            proc.stdin.flush()
        except BrokenPipeError:
            self.close()
            return Result(None, "", 0.0, "worker died before the request")
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            ready = sel.select(self.timeout)
        if not ready:
            self.close()
            return Result(None, "", time.monotonic() - t0, f"no answer in {self.timeout:.0f} s (hang)")
        line = proc.stdout.readline()
        if not line:
            code = proc.wait()
            self.proc = None
            return Result(None, "", time.monotonic() - t0, f"worker died (exit {code})")
        reply = json.loads(line)
        return Result(reply["code"], reply["stderr"], reply["seconds"])

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for f in (self.proc.stdin, self.proc.stdout):
                if f is not None:
                    f.close()
            self.proc = None

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
        self.errlog.close()


def worker_main() -> int:
    """The worker's loop: one JSON argv per line in, one JSON reply per line out."""
    import contextlib
    import io
    import warnings

    from mcuforge import cli

    proto = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # nothing but replies on the protocol channel
    for line in sys.stdin:
        argv = json.loads(line)
        out, err = io.StringIO(), io.StringIO()
        t0 = time.monotonic()
        with warnings.catch_warnings():
            warnings.simplefilter("always")  # as in a fresh process: every warning shows
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = cli.main(argv)
                except SystemExit as e:  # argparse
                    code = e.code if isinstance(e.code, int) else 1
                except BaseException as e:  # what main() lets through is a failure too
                    print(f"escaped main(): {type(e).__name__}: {e}", file=err)
                    code = 99
        proto.write(json.dumps({"code": code, "stderr": err.getvalue(),
                                "seconds": time.monotonic() - t0}) + "\n")
        proto.flush()
    return 0


def run_subprocess(argv: list[str], timeout: float = 60.0, memory_limit: int = MEMORY_LIMIT) -> Result:
    """The real entry point, `python -m mcuforge ARGV`, with an address-space limit and a timeout."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-m", "mcuforge", *argv], capture_output=True, text=True,
                           timeout=timeout, env=_child_env(), preexec_fn=_limit_memory(memory_limit))
    except subprocess.TimeoutExpired:
        return Result(None, "", time.monotonic() - t0, f"no answer in {timeout:.0f} s (hang)")
    return Result(p.returncode, p.stderr, time.monotonic() - t0)


def judge(result: Result) -> tuple[str, str]:
    """(outcome, problem): outcome is "exit 0", "exit 2" or "FAIL"; problem says what is wrong."""
    if result.code is None:
        return "FAIL", result.note
    err = result.stderr.strip()
    lines = err.splitlines()
    if "Traceback" in result.stderr:
        return "FAIL", "traceback: " + (lines[-1] if lines else "")
    if result.code == 0:
        return ("exit 0", "") if not err else ("FAIL", f"exit 0 with stderr: {lines[0][:300]}")
    if result.code == 2:
        if len(lines) != 1 or not lines[0].startswith("mcuforge: error: "):
            return "FAIL", f"exit 2 but stderr is {len(lines)} line(s): {err[:300]!r}"
        return "exit 2", ""
    return "FAIL", f"exit {result.code}: {err[:300]}"


def check_output_dir(out: Path, outcome: str, sentinel: bool) -> str:
    """'' if the -o directory is right after `compile`: complete on success; on failure untouched
    (the sentinel of an earlier run still there with its marker, alone) or absent; no temporary
    directory left."""
    leftovers = [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    if leftovers:
        return f"temporary files left beside the output: {leftovers}"
    if outcome == "exit 0":
        if not (out / "report.json").is_file() or not (out / "CMakeLists.txt").is_file():
            return "exit 0 but the output directory is incomplete"
        if (out / "SENTINEL").exists():
            return "exit 0 but the old output directory was not replaced"
        return ""
    if sentinel:
        names = sorted(p.name for p in out.iterdir()) if out.is_dir() else None
        return "" if names == [MARKER, "SENTINEL"] else f"failed compile changed the existing output directory: {names}"
    return f"failed compile left {out.name}/ behind" if out.exists() else ""

