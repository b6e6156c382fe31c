"""Build generated C with the host gcc (-Wall -Wextra -Werror) and run it: the fast end-to-end path.

One path for one model (`verify --on host`, the tests) and for many (the random-model batches):
`build_host` links the generated directories it is given into one executable with the harness
(firmware/host: host_main.c, and host_model.c once per model), compiling each kernel source once
per content and included headers (cached in `cache_dir`), the compilers running in parallel on every
core; `run_host` / `run_host_models` feed it input sets and read the outputs back.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib.resources import files
from pathlib import Path

import numpy as np

from mcuforge.errors import McuforgeError

CFLAGS = ["-std=c11", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function"]
# The cmsis-nn kernels' DSP paths on the host, each instruction a C model (mcu_cmsis_dsp.h).
DSP_EMULATE = "-DMCU_CMSIS_DSP_EMULATE"
HARNESS = Path(str(files("mcuforge.firmware") / "host"))
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


class HostBuildError(McuforgeError):
    """The generated C did not compile on the host."""

    exit_code = 3


def build_host(src_dirs: Path | Sequence[Path], exe: Path | None = None, cc: str = "gcc",
               extra_cflags: Sequence[str] = (), cache_dir: Path | None = None) -> Path:
    """One executable running the generated model(s) in `src_dirs` (one directory written by
    mcuforge compile, or several, each with its own prefix), in that order. `extra_cflags` (e.g.
    DSP_EMULATE, sanitizers) apply to every compile and the link."""
    if shutil.which(cc) is None:
        raise HostBuildError(f"{cc} not found: install a host C compiler (apt-get install gcc)")
    dirs = [Path(src_dirs)] if isinstance(src_dirs, (str, os.PathLike)) else [Path(d) for d in src_dirs]
    exe = Path(exe) if exe else dirs[0] / "host_model"
    objdir = exe.parent / f".{exe.name}.objs"
    cache = Path(cache_dir) if cache_dir else objdir / "kernels"
    objdir.mkdir(parents=True, exist_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    flags = [*CFLAGS, *extra_cflags]
    jobs: dict[Path, list[str]] = {}  # object -> compile command
    for k, d in enumerate(dirs):
        for src in sorted(d.glob("*.c")) + [HARNESS / "host_model.c"]:
            obj = objdir / f"m{k}_{src.stem}.o"
            jobs[obj] = [cc, *flags, f"-DMCU_HOST_INDEX={k}", "-I", str(d), "-I", str(d / "kernels"), "-I",
                         str(HARNESS), "-c", str(src), "-o", str(obj)]
        for src in sorted((d / "kernels").glob("*.c")):
            obj = cache / f"{src.stem}-{_content_key(src, flags)}.o"
            if not obj.exists():
                jobs.setdefault(obj, [cc, *flags, "-I", str(d / "kernels"), "-c", str(src), "-o", str(obj)])
            else:
                jobs.setdefault(obj, [])
    main = objdir / "host_main.o"
    jobs[main] = [cc, *flags, "-I", str(HARNESS), "-c", str(HARNESS / "host_main.c"), "-o", str(main)]
    _compile_all([cmd for cmd in jobs.values() if cmd])
    link = [cc, *flags, *map(str, jobs), "-o", str(exe), "-lm"]
    proc = subprocess.run(link, capture_output=True, text=True)
    if proc.returncode != 0:
        raise HostBuildError(f"host link of {', '.join(map(str, dirs))} failed:\n{_first_lines(proc.stderr)}")
    return exe


def _content_key(src: Path, flags: Sequence[str]) -> str:
    """A kernel object's cache key: its source, every header it includes (transitively, from its
    directory) and the flags."""
    h = hashlib.sha256(" ".join(flags).encode())
    seen: set[Path] = set()
    todo = [src]
    while todo:
        p = todo.pop()
        if p in seen or not p.is_file():
            continue
        seen.add(p)
        text = p.read_bytes()
        h.update(p.name.encode() + text)
        todo += [src.parent / name for name in _INCLUDE.findall(text.decode(errors="replace"))]
    return h.hexdigest()[:16]


def _compile_all(commands: list[list[str]]) -> None:
    """Run the compile commands (each ending in `-o OBJ`) in parallel. Each writes a temporary file
    renamed to OBJ when complete, so an interrupted build never leaves a truncated object in the
    kernel cache for a later build to link."""
    def run(cmd: list[str]) -> str | None:
        obj = Path(cmd[-1])
        tmp = obj.with_name(f"{obj.name}.{os.getpid()}.tmp")
        proc = subprocess.run([*cmd[:-1], str(tmp)], capture_output=True, text=True)
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            return f"{cmd[-3]}:\n{_first_lines(proc.stderr)}"
        os.replace(tmp, obj)
        return None

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        errors = [e for e in pool.map(run, commands) if e]
    if errors:
        raise HostBuildError("host build failed: " + "\n".join(errors)[:3000])


def _first_lines(text: str, n: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[:n])


def run_host(exe: Path, input_sets: Sequence[Sequence[np.ndarray]], output_types, timeout: float = 300,
             steps: int = 0) -> list[list[np.ndarray]]:
    """Run every input set through a one-model host executable; outputs typed and shaped as
    `output_types`. A model with state carries it from set to set; `steps` > 0 resets it after every
    `steps` sets (sequences of `steps` runs, as `oracle.run_tflm(..., steps=)`)."""
    (outs,) = run_host_models(exe, [input_sets], [output_types], timeout, steps)
    return outs


def run_host_models(exe: Path, input_sets: Sequence[Sequence[Sequence[np.ndarray]]], output_types,
                    timeout: float = 300, steps: int = 0) -> list[list[list[np.ndarray]]]:
    """Per model of the executable (build_host's order): its input sets in, its outputs per set out."""
    stdin = b"".join(np.require(x, requirements="C").tobytes() for sets in input_sets for s in sets for x in s)
    counts = [str(len(sets)) for sets in input_sets] if len(input_sets) > 1 else []
    proc = subprocess.run([str(exe), str(steps), *counts], input=stdin, capture_output=True, timeout=timeout)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip()
        raise McuforgeError(f"host model exited with {proc.returncode}: {' '.join(err.splitlines()[:3])}")
    data, pos, results = proc.stdout, 0, []
    for sets, types in zip(input_sets, output_types):
        per_model = []
        for _ in sets:
            outs = []
            for t in types:
                outs.append(np.frombuffer(data[pos:pos + t.nbytes], dtype=t.np_dtype).reshape(t.shape).copy())
                pos += t.nbytes
            per_model.append(outs)
        results.append(per_model)
    if pos != len(data):
        raise McuforgeError(f"host model wrote {len(data)} bytes, expected {pos}")
    return results
