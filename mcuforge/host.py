"""Build generated C with the host gcc (-Wall -Wextra -Werror) and run it: the fast end-to-end path."""

from __future__ import annotations

import shutil
import subprocess
from importlib.resources import files
from pathlib import Path
from typing import Sequence

import numpy as np

from mcuforge.errors import McuforgeError

CFLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function"]
# The cmsis-nn kernels' DSP paths on the host, each instruction a C model (mcu_cmsis_dsp.h).
DSP_EMULATE = "-DMCU_CMSIS_DSP_EMULATE"


class HostBuildError(McuforgeError):
    """The generated C did not compile on the host."""

    exit_code = 3


def build_host(src_dir: Path, exe: Path | None = None, cc: str = "gcc", extra_cflags: Sequence[str] = ()) -> Path:
    """Compile the generated C in `src_dir` with the host harness; `extra_cflags` e.g. DSP_EMULATE."""
    if shutil.which(cc) is None:
        raise HostBuildError(f"{cc} not found: install a host C compiler (apt-get install gcc)")
    src_dir = Path(src_dir)
    exe = exe or src_dir / "host_model"
    main = Path(str(files("mcuforge.firmware") / "host" / "host_main.c"))
    sources = sorted(str(p) for p in src_dir.glob("*.c")) + sorted(str(p) for p in (src_dir / "kernels").glob("*.c"))
    cmd = [cc, *CFLAGS, *extra_cflags, "-I", str(src_dir), "-I", str(src_dir / "kernels"), *sources, str(main), "-o", str(exe), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        first = "\n".join(proc.stderr.strip().splitlines()[:12])
        raise HostBuildError(f"host build of {src_dir} failed:\n{first}")
    return exe


def run_host(exe: Path, input_sets: Sequence[Sequence[np.ndarray]], output_types, timeout: float = 300,
             steps: int = 0) -> list[list[np.ndarray]]:
    """Run every input set through the host executable; outputs typed and shaped as `output_types`.
    A model with state carries it from set to set; `steps` > 0 resets it after every `steps` sets
    (sequences of `steps` runs, as `oracle.run_tflm(..., steps=)`)."""
    stdin = b"".join(np.require(x, requirements="C").tobytes() for inputs in input_sets for x in inputs)
    proc = subprocess.run([str(exe), str(steps)], input=stdin, capture_output=True, timeout=timeout)
    if proc.returncode != 0:
        raise McuforgeError(f"host model exited with {proc.returncode}: {proc.stderr.decode(errors='replace').strip()}")
    data, pos, results = proc.stdout, 0, []
    for _ in input_sets:
        outs = []
        for t in output_types:
            n = t.nbytes
            outs.append(np.frombuffer(data[pos:pos + n], dtype=t.np_dtype).reshape(t.shape).copy())
            pos += n
        results.append(outs)
    if pos != len(data):
        raise McuforgeError(f"host model wrote {len(data)} bytes, expected {pos}")
    return results
