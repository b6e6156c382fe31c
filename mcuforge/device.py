"""Build generated C for a board and run it there: QEMU (over its TCP serial) or a real board
(over a serial device), one protocol and one code path (serial_link.Link)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from mcuforge.boards import Board
from mcuforge.errors import McuforgeError
from mcuforge.firmware_build import FirmwareBuild, build_firmware
from mcuforge.ir.types import TensorType
from mcuforge.serial_link import STATUS_BAD_CRC, BoardReset, Link, LinkCRCError, LinkTimeout, TargetError


@dataclass(frozen=True)
class OutputReport:
    """What the runners need from a directory written by `mcuforge compile`, read from its
    report.json (codegen/emit.py writes it), never parsed out of the generated C."""

    dir: Path
    prefix: str
    arena_bytes: int
    inputs: tuple[TensorType, ...]
    outputs: tuple[TensorType, ...]
    macs: int          # multiply-accumulates of one inference
    work: int          # MACs + bytes every layer writes: what the run timeout scales with
    info: dict         # the whole report (schedule, lower bound, ...), for printing


def read_report(src_dir: str | Path) -> OutputReport:
    """The report of a compiled directory; McuforgeError (one line) if it has none or a broken one."""
    src = Path(src_dir)
    path = src / "report.json"
    if not src.is_dir():
        raise McuforgeError(f"{src}: {'no such directory' if not src.exists() else 'not a directory'}: give a "
                            "directory written by mcuforge compile")
    try:
        info = json.loads(path.read_text())
    except FileNotFoundError:
        raise McuforgeError(f"{src}: no report.json, so not a directory written by mcuforge compile: run "
                            f"mcuforge compile MODEL -o {src} first") from None
    except (OSError, ValueError) as exc:
        raise McuforgeError(f"{path}: not a valid report ({exc}): compile the model again") from None
    try:
        prefix = info["prefix"]
        if not isinstance(prefix, str) or not prefix.isidentifier():
            raise ValueError(f"prefix {prefix!r}")
        io = [tuple(TensorType(tuple(int(d) for d in t["shape"]), t["dtype"], _quant(t)) for t in info[k])
              for k in ("inputs", "outputs")]
        schedule = info["schedule"]
        work = int(info["macs"]) + sum(int(s["output_bytes"]) for s in schedule)
        return OutputReport(src, prefix, int(info["arena_bytes"]), io[0], io[1], int(info["macs"]), work, info)
    except (KeyError, TypeError, ValueError) as exc:
        what = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
        raise McuforgeError(f"{path}: not a valid mcuforge report ({what}; written by another version?): compile "
                            "the model again") from None


def _quant(t: dict):
    """A report tensor's per-tensor quantization (run --input quantizes float arrays with it)."""
    from mcuforge.ir.types import QuantParams

    return QuantParams((float(t["scale"]),), (int(t["zero_point"]),)) if t.get("scale") is not None else None


# How long a RUN may take before the host gives up: a floor, plus a generous budget per unit of the
# model's work (a MAC, or a byte a layer writes). The slowest build, the plain C kernels at -O0 on a
# Cortex-M3, takes 43 instructions per MAC (KWS: 114.6 M instructions for 2.66 M MACs), which QEMU
# runs in under 2 s on an idle machine; 20 us per unit still holds if QEMU runs 50 times slower.
RUN_TIMEOUT_FLOOR = 60.0
RUN_SECONDS_PER_UNIT = 20e-6


def run_timeout(report: OutputReport) -> float:
    """Seconds to wait for one inference of the model in `report` (QEMU or a board)."""
    return RUN_TIMEOUT_FLOOR + RUN_SECONDS_PER_UNIT * report.work


def timeout_note(report: OutputReport) -> str:
    """How run_timeout was derived, for the message when it runs out."""
    return (f"the limit for this model: {RUN_TIMEOUT_FLOOR:.0f} s + {RUN_SECONDS_PER_UNIT * 1e6:.0f} us x "
            f"{report.work:,} ({report.macs:,} MACs + bytes written)")


def default_build_dir(src_dir: str | Path, board: Board, guard: bool = False) -> Path:
    """Where `mcuforge build DIR` builds unless told (--build-dir): outside DIR, which a firmware may
    add_subdirectory(): $XDG_CACHE_HOME/mcuforge/build/<hash of DIR's absolute path>-<board>[-guard]."""
    cache = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(cache) if os.path.isabs(cache) else Path.home() / ".cache"
    key = hashlib.sha256(str(Path(src_dir).resolve()).encode()).hexdigest()[:16]
    return root / "mcuforge" / "build" / f"{key}-{board.key}{'-guard' if guard else ''}"


def build_generated(src_dir: Path, board: Board, build_dir: Path, opt: str = "-O2",
                    guard: bool = False, progress=lambda msg: None) -> FirmwareBuild:
    """Build the firmware (runtime + harness + the generated model in src_dir) for `board` in
    `build_dir`, and check it fits: flash, and RAM with the static stack bound.

    guard: a guard build (PROTOCOL.md, "Guard build"): the harness gives the model an arena between
    two canaries (the model is built without its own, -D<PREFIX>_EXTERNAL_ARENA) and checks them
    and a canary at the stack limit after every RUN."""
    src_dir = Path(src_dir)
    report = read_report(src_dir)
    if not (src_dir / "mcuforge_model.h").is_file():
        raise McuforgeError(f"{src_dir}: not an mcuforge output directory (no mcuforge_model.h); "
                            "run mcuforge compile first")
    if Path(build_dir).resolve().is_relative_to(src_dir.resolve()):
        raise McuforgeError(f"build directory {build_dir} is inside {src_dir}: the build would add files to the "
                            "directory a firmware add_subdirectory()s; give one outside it")
    sources = sorted(src_dir.glob("*.c")) + sorted((src_dir / "kernels").glob("*.c"))
    defines = (guard_defines(report.prefix) if guard else ()) + path_defines(report.info.get("kernel_paths"))
    progress(f"building {src_dir} for {board.name} (arm-none-eabi-gcc {opt}{', guard build' if guard else ''}) in "
             f"{build_dir}")
    fw = build_firmware(board, sources, [src_dir, src_dir / "kernels"], build_dir,
                        name=report.prefix, opt=opt, defines=defines)
    if fw.flash_bytes > board.flash_capacity or fw.ram_bytes + fw.stack_bytes > board.ram.size:
        raise McuforgeError(f"{fw.elf.name} does not fit {board.name}: flash {fw.flash_bytes:,} B of "
                            f"{board.flash_capacity:,} B, RAM {fw.ram_bytes:,} B + stack {fw.stack_bytes:,} B of "
                            f"{board.ram.size:,} B")
    check_ram(fw, report.arena_bytes, static_stack_use(fw))
    return fw


def path_defines(paths) -> tuple[str, ...]:
    """Compile definitions carrying only the kernel paths the model takes (mcu_cmsis_paths.h);
    none (every path) for a report without the list."""
    if paths is None:
        return ()
    return ("MCU_PATHS_SELECTED", *(f"MCU_PATH_{name}=1" for name in paths))


def guard_defines(prefix: str) -> tuple[str, ...]:
    """Compile definitions of a guard build of the generated model `prefix`."""
    return ("MCU_GUARD=1", f"{prefix.upper()}_EXTERNAL_ARENA", f"MCU_MODEL_SET_ARENA={prefix}_set_arena")


@dataclass(frozen=True)
class StackUse:
    """The firmware's stack use: `peak` bytes, measured or bounded how (`method`), against `reserved` bytes."""
    peak: int
    reserved: int
    method: str
    guarded: bool = False  # measured on a guard build, whose canaries were intact afterwards

    @property
    def how(self) -> str:
        """The method in a few words ("measured", "static worst case from gcc's call graphs")."""
        return self.method.split(":")[0]


def static_stack_use(fw: FirmwareBuild) -> StackUse:
    """The static worst case from gcc's call graphs: what every RAM check uses."""
    if fw.static_stack is None:
        raise McuforgeError(f"{fw.elf}: gcc's call graphs give no stack bound (recursion?), so the stack cannot "
                            f"be checked against {fw.board.name}'s reservation")
    return StackUse(peak=fw.static_stack.bytes, reserved=fw.stack_bytes, method=fw.static_stack.describe())


def measure_stack(fw: FirmwareBuild, report: OutputReport | None = None) -> StackUse:
    """Boot the firmware on QEMU once, run one inference on all-zero inputs and read the painted
    high-water mark (the harness paints the stack before each RUN and scans it after): one input's
    figure, shown as information; checks use static_stack_use."""
    board = fw.board
    if not board.is_qemu:
        raise McuforgeError(f"{board.name} is a real board: the stack is measured on QEMU boards only "
                            "(mcuforge run --port reports the high-water mark on the board)")
    timeout = run_timeout(report) if report is not None else RUN_TIMEOUT_FLOOR
    with connect(board, fw.elf, report=report) as link:
        info = link.info()
        for i, n in enumerate(info.input_sizes):
            link.write_input(i, bytes(n))
        peak = link.run_stats(timeout=timeout).stack_bytes
    return StackUse(peak=peak, reserved=fw.stack_bytes, guarded=info.guarded,
                    method="measured: painted high-water mark of one inference on QEMU, zero inputs")


def check_ram(fw: FirmwareBuild, arena: int, stack: StackUse) -> None:
    """Arena + other static RAM + stack must fit the board's RAM, and the stack its reservation."""
    board = fw.board
    other = fw.ram_bytes - arena
    total = fw.ram_bytes + stack.peak
    if total > board.ram.size:
        raise McuforgeError(f"{fw.elf.name} does not fit {board.name}'s RAM: arena {arena:,} B + other static RAM "
                            f"{other:,} B + stack {stack.peak:,} B ({stack.how}) = {total:,} B of "
                            f"{board.ram.size:,} B")
    if stack.peak + _STACK_MARGIN > stack.reserved:
        raise McuforgeError(f"{fw.elf.name} on {board.name}: the stack needs up to {stack.peak:,} B "
                            f"({stack.how}), the board reserves {stack.reserved:,} B (memory.stack_size; "
                            f"{_STACK_MARGIN} B kept free for interrupts and faults): raise it in the board file")


_STACK_MARGIN = 256  # free stack left for an exception frame and the fault report


def stack_and_ram_report(fw: FirmwareBuild, report: OutputReport) -> list[str]:
    """The firmware's stack and the RAM check, as lines for `mcuforge build`: the static bound from
    gcc's call graphs (what the check uses; build_generated has checked it) and, on a QEMU board with
    QEMU installed, the painted high-water mark of one inference on zero inputs, as information."""
    from mcuforge.qemu import QEMU

    stack, lines = static_stack_use(fw), []
    if fw.board.is_qemu and shutil.which(QEMU):
        measured = measure_stack(fw, report)
        lines.append(f"stack: {measured.peak:,} B measured of {measured.reserved:,} B reserved ({measured.method}; "
                     "information only, the check uses the bound)")
    lines.append(f"stack bound: {stack.peak:,} B, {stack.method}")
    arena = report.arena_bytes
    check_ram(fw, arena, stack)
    lines.append(f"RAM check: arena {arena:,} B + other static {fw.ram_bytes - arena:,} B + stack bound "
                 f"{stack.peak:,} B = {fw.ram_bytes + stack.peak:,} B of {fw.board.ram.size:,} B: fits")
    return lines


@contextlib.contextmanager
def connect(board: Board, elf: Path | None = None, port: str | None = None, timeout: float = 60.0,
            report: OutputReport | None = None, exec_log=None) -> Iterator[Link]:
    """A Link to firmware running on `board`: QEMU started (and always reaped) for QEMU boards;
    the serial device `port` for real boards (flash it first with `mcuforge flash`). `timeout`: for
    each request; RUN gets run_timeout(report), and `report` explains that limit if it runs out.
    exec_log: QEMU only, a consumer of QEMU's execution log (mcuforge.qemu.start_qemu)."""
    note = timeout_note(report) if report is not None else ""
    if board.is_qemu:
        from mcuforge.qemu import start_qemu

        if elf is None:
            raise McuforgeError("no firmware to run on QEMU")
        with start_qemu(board, elf, timeout=timeout, exec_log=exec_log) as session:
            session.link.run_note = note
            try:
                yield session.link
            finally:
                with contextlib.suppress(Exception):
                    session.link.quit()
    else:
        if port is None:
            raise McuforgeError(f"{board.name} is a real board: give its serial port with --port (e.g. /dev/ttyACM0)")
        with Link.open(port, board.uart.baud, timeout=timeout) as link:
            link.run_note = note
            yield link


@dataclass
class DeviceRun:
    outputs: list[list[np.ndarray]]  # per input set
    counts: list[int]  # instructions (QEMU) or cycles per inference
    stack_bytes: int  # peak stack use seen
    layer_counts: tuple[int, ...]  # per layer, from the last run
    unit: str


def run_sets(link: Link, input_sets: Sequence[Sequence[np.ndarray]], output_types, set_retries: int = 1,
             timeout: float | None = None, steps: int = 0) -> DeviceRun:
    """Run every input set (write inputs, RUN with the profiler, read the profile and outputs); each
    RUN may take `timeout` seconds (default: the link's timeout; run_timeout(report) for a model).

    A set whose RUN was hit by a line fault (its answer damaged or cut short) or by a board reset
    is run again from its inputs, up to `set_retries` times: RUN consumes its inputs, so the whole
    set is the unit that can be repeated (the Link itself retries the other requests).

    With `steps` > 0 (a model with state: LSTM, SVDF) the sets are sequences of `steps` runs: RESET
    before each sequence, the state carried from set to set within it. A fault then repeats the
    whole sequence from its RESET (a set run twice would advance the state twice)."""
    info = link.info()
    unit = steps if steps > 0 else 1
    outs, counts, stack, layers = [], [], 0, ()
    for start in range(0, len(input_sets), unit):
        sequence = input_sets[start:start + unit]
        for attempt in range(set_retries + 1):
            try:
                if steps > 0:
                    link.reset()
                done = [_run_set(link, inputs, output_types, timeout) for inputs in sequence]
                break
            except (BoardReset, LinkCRCError, LinkTimeout, TargetError) as exc:
                if attempt == set_retries or not _set_fault(exc):
                    raise
                link.retried += 1
        for r, set_layers, set_outs in done:
            counts.append(r.count)
            stack = max(stack, r.stack_bytes)
            layers = set_layers
            outs.append(set_outs)
    return DeviceRun(outs, counts, stack, tuple(layers), info.unit)


def _run_set(link: Link, inputs: Sequence[np.ndarray], output_types, timeout: float | None):
    for i, x in enumerate(inputs):
        link.write_input(i, np.require(x, requirements="C").tobytes())
    r = link.run_stats(profile=True, timeout=timeout)
    layers = link.read_profile().layer_counts
    outs = [np.frombuffer(link.read_output(i), dtype=t.np_dtype).reshape(t.shape).copy()
            for i, t in enumerate(output_types)]
    return r, layers, outs


def _set_fault(exc: Exception) -> bool:
    """A fault after which running the whole input set again is worth it (not: a silent board, a
    target that rejects the request, a fault report, a tripped guard)."""
    if isinstance(exc, LinkTimeout):
        return exc.frame_started
    if isinstance(exc, TargetError):
        return exc.status == STATUS_BAD_CRC
    return isinstance(exc, (BoardReset, LinkCRCError))


def pyocd_for(board: Board) -> str:
    """pyOCD's path, once `board` is known to be one it flashes; McuforgeError otherwise (checked
    before building)."""
    if board.is_qemu:
        raise McuforgeError(f"{board.name} runs on QEMU: nothing to flash (use mcuforge run --board {board.name})")
    exe = shutil.which("pyocd")
    if exe is None:
        raise McuforgeError(f"pyocd not found on PATH, needed to flash {board.name}: pip install pyocd")
    return exe


def flash(board: Board, elf: Path, probe: str | None = None) -> None:
    """Flash `elf` with pyOCD (the board's pyocd_target)."""
    cmd = [pyocd_for(board), "flash", "--target", str(board.pyocd_target), str(elf)] + (["--uid", probe] if probe else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        last = ((proc.stderr or proc.stdout).strip().splitlines() or ["no message"])[-1]
        raise McuforgeError(f"pyocd flash of {elf.name} to {board.name} failed: {last}")
