"""Build generated C for a board and run it there: QEMU (over its TCP serial) or a real board
(over a serial device), one protocol and one code path (serial_link.Link)."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from mcuforge.boards import Board
from mcuforge.errors import McuforgeError
from mcuforge.firmware_build import FirmwareBuild, build_firmware
from mcuforge.serial_link import STATUS_BAD_CRC, BoardReset, Link, LinkCRCError, LinkTimeout, TargetError


def build_generated(src_dir: Path, board: Board, build_dir: Path | None = None, opt: str = "-O2",
                    guard: bool = False) -> FirmwareBuild:
    """Build the firmware (runtime + harness + the generated model in src_dir) for `board`.

    guard: a guard build (PROTOCOL.md, "Guard build"): the harness gives the model an arena between
    two canaries (the model is built without its own, -D<PREFIX>_EXTERNAL_ARENA) and checks them
    and a canary at the stack limit after every RUN."""
    src_dir = Path(src_dir)
    if not (src_dir / "mcuforge_model.h").is_file():
        raise McuforgeError(f"{src_dir}: not an mcuforge output directory (no mcuforge_model.h); "
                            "run mcuforge compile first")
    sources = sorted(src_dir.glob("*.c")) + sorted((src_dir / "kernels").glob("*.c"))
    prefix = _model_name(src_dir)
    defines = guard_defines(prefix) if guard else ()
    default_dir = src_dir / "build" / (board.key + ("-guard" if guard else ""))
    fw = build_firmware(board, sources, [src_dir, src_dir / "kernels"], build_dir or default_dir,
                        name=prefix, opt=opt, defines=defines)
    if fw.flash_bytes > board.flash.size or fw.ram_bytes + fw.stack_bytes > board.ram.size:
        raise McuforgeError(f"{fw.elf.name} does not fit {board.name}: flash {fw.flash_bytes:,} B of "
                            f"{board.flash.size:,} B, RAM {fw.ram_bytes:,} B + stack {fw.stack_bytes:,} B of "
                            f"{board.ram.size:,} B")
    return fw


def guard_defines(prefix: str) -> tuple[str, ...]:
    """Compile definitions of a guard build of the generated model `prefix`."""
    return ("MCU_GUARD=1", f"{prefix.upper()}_EXTERNAL_ARENA", f"MCU_MODEL_SET_ARENA={prefix}_set_arena")


def arena_bytes_of(src_dir: Path) -> int:
    """The planned arena of a generated directory, from its <prefix>.h."""
    import re

    prefix = _model_name(src_dir)
    header = Path(src_dir) / f"{prefix}.h"
    m = re.search(rf"#define {prefix.upper()}_ARENA_SIZE (\d+)", header.read_text()) if header.is_file() else None
    if m is None:
        raise McuforgeError(f"{header}: no {prefix.upper()}_ARENA_SIZE: not an mcuforge output directory")
    return int(m.group(1))


@dataclass(frozen=True)
class StackUse:
    """The firmware's stack use: `peak` bytes, measured how (`method`), against `reserved` bytes."""
    peak: int
    reserved: int
    method: str
    guarded: bool = False  # measured on a guard build, whose canaries were intact afterwards


def measure_stack(fw: FirmwareBuild, timeout: float = 60.0) -> StackUse:
    """Boot the firmware on QEMU once, run one inference on all-zero inputs and read the painted
    high-water mark (the harness paints the stack before each RUN and scans it after)."""
    board = fw.board
    if not board.is_qemu:
        raise McuforgeError(f"{board.name} is a real board: the stack is measured on QEMU boards only "
                            "(mcuforge run --port reports the high-water mark on the board)")
    with connect(board, fw.elf, timeout=timeout) as link:
        info = link.info()
        for i, n in enumerate(info.input_sizes):
            link.write_input(i, bytes(n))
        peak = link.run_stats().stack_bytes
    return StackUse(peak=peak, reserved=fw.stack_bytes, guarded=info.guarded,
                    method="measured: painted high-water mark of one inference on QEMU, zero inputs")


def check_ram(fw: FirmwareBuild, arena: int, stack: StackUse) -> None:
    """Arena + other static RAM + stack must fit the board's RAM, and the stack its reservation."""
    board = fw.board
    other = fw.ram_bytes - arena
    total = fw.ram_bytes + stack.peak
    if total > board.ram.size:
        raise McuforgeError(f"{fw.elf.name} does not fit {board.name}'s RAM: arena {arena:,} B + other static RAM "
                            f"{other:,} B + stack {stack.peak:,} B ({stack.method.split(':')[0]}) = {total:,} B of "
                            f"{board.ram.size:,} B")
    if stack.peak + _STACK_MARGIN > stack.reserved:
        raise McuforgeError(f"{fw.elf.name} on {board.name}: the stack peaks at {stack.peak:,} B "
                            f"({stack.method.split(':')[0]}), the board reserves {stack.reserved:,} B (memory.stack_size; "
                            f"{_STACK_MARGIN} B kept free for interrupts and faults): raise it in the board file")


_STACK_MARGIN = 256  # free stack left for an exception frame and the fault report


def stack_and_ram_report(fw: FirmwareBuild, arena: int) -> list[str]:
    """The firmware's stack use and the RAM check, as lines for `mcuforge build`: on a QEMU board
    (with QEMU installed) the painted high-water mark of one inference, otherwise the static worst
    case from gcc's call graphs; both are shown when both are known. McuforgeError if it does not fit."""
    from mcuforge.qemu import QEMU

    static, lines = fw.static_stack, []
    if fw.board.is_qemu and shutil.which(QEMU):
        stack = measure_stack(fw)
        lines.append(f"stack: {stack.peak:,} B peak of {stack.reserved:,} B reserved ({stack.method})")
    elif static is not None:
        stack = StackUse(peak=static.bytes, reserved=fw.stack_bytes, method=static.describe())
    else:
        raise McuforgeError(f"no stack bound for {fw.elf.name}: gcc's call graphs give none (recursion?)")
    if static is not None:
        lines.append(f"stack bound: {static.bytes:,} B, {static.describe()}")
    check_ram(fw, arena, stack)
    lines.append(f"RAM check: arena {arena:,} B + other static {fw.ram_bytes - arena:,} B + stack {stack.peak:,} B "
                 f"({stack.method.split(':')[0]}) = {fw.ram_bytes + stack.peak:,} B of {fw.board.ram.size:,} B: fits")
    return lines


def _model_name(src_dir: Path) -> str:
    """The model's prefix, from its generated mcuforge_model.h."""
    import re

    m = re.search(r'#define MCU_MODEL_NAME "(\w+)"', (src_dir / "mcuforge_model.h").read_text())
    return m.group(1) if m else "model"


@contextlib.contextmanager
def connect(board: Board, elf: Path | None = None, port: str | None = None, timeout: float = 60.0,
            exec_log=None) -> Iterator[Link]:
    """A Link to firmware running on `board`: QEMU started (and always reaped) for QEMU boards;
    the serial device `port` for real boards (flash it first with `mcuforge flash`).
    exec_log: QEMU only, a consumer of QEMU's execution log (mcuforge.qemu.start_qemu)."""
    if board.is_qemu:
        from mcuforge.qemu import start_qemu

        if elf is None:
            raise McuforgeError("no firmware to run on QEMU")
        with start_qemu(board, elf, timeout=timeout, exec_log=exec_log) as session:
            try:
                yield session.link
            finally:
                with contextlib.suppress(Exception):
                    session.link.quit()
    else:
        if port is None:
            raise McuforgeError(f"{board.name} is a real board: give its serial port with --port (e.g. /dev/ttyACM0)")
        with Link.open(port, board.uart.baud, timeout=timeout) as link:
            yield link


@dataclass
class DeviceRun:
    outputs: list[list[np.ndarray]]  # per input set
    counts: list[int]  # instructions (QEMU) or cycles per inference
    stack_bytes: int  # peak stack use seen
    layer_counts: tuple[int, ...]  # per layer, from the last run
    unit: str


def run_sets(link: Link, input_sets: Sequence[Sequence[np.ndarray]], output_types, set_retries: int = 1) -> DeviceRun:
    """Run every input set (write inputs, RUN with the profiler, read the profile and outputs).

    A set whose RUN was hit by a line fault (its answer damaged or cut short) or by a board reset
    is run again from its inputs, up to `set_retries` times: RUN consumes its inputs, so the whole
    set is the unit that can be repeated (the Link itself retries the other requests)."""
    info = link.info()
    outs, counts, stack, layers = [], [], 0, ()
    for inputs in input_sets:
        for attempt in range(set_retries + 1):
            try:
                r, set_layers, set_outs = _run_set(link, inputs, output_types)
                break
            except (BoardReset, LinkCRCError, LinkTimeout, TargetError) as exc:
                if attempt == set_retries or not _set_fault(exc):
                    raise
                link.retried += 1
        counts.append(r.count)
        stack = max(stack, r.stack_bytes)
        layers = set_layers
        outs.append(set_outs)
    return DeviceRun(outs, counts, stack, tuple(layers), info.unit)


def _run_set(link: Link, inputs: Sequence[np.ndarray], output_types):
    for i, x in enumerate(inputs):
        link.write_input(i, np.require(x, requirements="C").tobytes())
    r = link.run_stats(profile=True)
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


def flash(board: Board, elf: Path, probe: str | None = None) -> None:
    """Flash `elf` with pyOCD (the board's pyocd_target)."""
    if board.is_qemu:
        raise McuforgeError(f"{board.name} runs on QEMU: nothing to flash (use mcuforge run)")
    exe = shutil.which("pyocd")
    if exe is None:
        raise McuforgeError("pyocd not found: pip install pyocd")
    cmd = [exe, "flash", "--target", str(board.pyocd_target), str(elf)] + (["--uid", probe] if probe else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise McuforgeError(f"pyocd flash failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}")


def io_types_of(src_dir: Path):
    """(input types, output types) from a generated directory's report (for `run DIR`)."""
    from mcuforge.ir.types import TensorType

    path = Path(src_dir) / "report.json"
    try:
        info = json.loads(path.read_text())
    except OSError:
        raise McuforgeError(f"{path} is missing: give a directory written by mcuforge compile") from None
    except ValueError as exc:
        raise McuforgeError(f"{path} is not valid JSON ({exc}): compile the model again") from None
    return ([TensorType(tuple(t["shape"]), t["dtype"]) for t in info["inputs"]],
            [TensorType(tuple(t["shape"]), t["dtype"]) for t in info["outputs"]])
