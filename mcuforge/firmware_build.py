"""Build a firmware ELF for a board: the bare-metal runtime and harness plus a model's C sources.

The build is CMake (firmware/runtime/CMakeLists.txt with boards/toolchain-arm-none-eabi.cmake), so a
user can rerun it, or copy it, without Python. This module renders the board's files (linker script,
mcuforge_board.h) into the build directory, drives CMake, and reads the ELF's flash and RAM use with
arm-none-eabi-size.

    from mcuforge.boards import load_board
    from mcuforge.firmware_build import build_firmware

    fw = build_firmware(load_board("mps2-an386"), sources=[...], include_dirs=[...], build_dir="build/an386")
    fw.elf, fw.bin, fw.hex, fw.flash_bytes, fw.ram_bytes
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2

import mcuforge.firmware
from mcuforge import __version__
from mcuforge.boards import BOARDS_DIR, Board
from mcuforge.errors import McuforgeError
from mcuforge.stack_usage import StackAnalysisError, StaticStack, exception_frame_bytes, pushed_bytes, static_stack

RUNTIME_DIR = Path(mcuforge.firmware.__file__).resolve().parent / "runtime"
TEST_MODEL_DIR = RUNTIME_DIR / "test_model"
TOOLCHAIN_FILE = BOARDS_DIR / "toolchain-arm-none-eabi.cmake"
GCC = "arm-none-eabi-gcc"
SIZE = "arm-none-eabi-size"


class FirmwareBuildError(McuforgeError):
    """The firmware could not be built: no toolchain, a compile error, or it does not fit the board
    (then `region` is the linker's name of the memory region that overflowed)."""

    def __init__(self, message: str, region: str | None = None):
        super().__init__(message)
        self.region = region


@dataclass(frozen=True)
class FirmwareBuild:
    board: Board
    elf: Path
    map_file: Path
    text_bytes: int    # code + constants in flash (arm-none-eabi-size "text")
    data_bytes: int    # initialized data: in flash (load image) and in RAM
    bss_bytes: int     # zeroed data in RAM (the model's arena and state are here)
    stack_bytes: int   # the stack reserved at the top of RAM
    static_stack: StaticStack | None = None  # worst case from the call graphs (None: no bound found)

    @property
    def bin(self) -> Path:
        """The raw flash image (objcopy -O binary), from the first flash address."""
        return self.elf.with_suffix(".bin")

    @property
    def hex(self) -> Path:
        """The Intel HEX image (objcopy -O ihex)."""
        return self.elf.with_suffix(".hex")

    @property
    def flash_bytes(self) -> int:
        return self.text_bytes + self.data_bytes

    @property
    def ram_bytes(self) -> int:
        """Static RAM: .data + .bss (the stack reservation is `stack_bytes`, on top)."""
        return self.data_bytes + self.bss_bytes

    def summary(self) -> str:
        b = self.board
        return (f"{self.elf.name} for {b.name}: flash {self.flash_bytes} B of {b.flash_capacity} B, "
                f"RAM {self.ram_bytes} B + stack {self.stack_bytes} B of {b.ram.size} B")


def missing_tools() -> list[str]:
    """The tools a firmware build needs that are not on PATH."""
    return [t for t in (GCC, SIZE, "cmake") if shutil.which(t) is None]


def render_board_files(board: Board, out_dir: str | os.PathLike, stack_size: int | None = None,
                       spill_weights: bool = False) -> Path:
    """Write linker.ld and mcuforge_board.h for `board` into out_dir (created); returns out_dir.
    With spill_weights the model's constants (its *_weights.c) go to the board's weights region."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(BOARDS_DIR)), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    context = {"board": board, "version": __version__, "stack_size": stack_size or board.stack_size,
               "spill_weights": spill_weights}
    for template, name in (("linker.ld.j2", "linker.ld"), ("board.h.j2", "mcuforge_board.h")):
        text = env.get_template(template).render(**context)
        path = out / name
        if not path.exists() or path.read_text() != text:  # keep mtimes: no needless rebuilds
            path.write_text(text)
    return out


def build_firmware(board: Board, sources: Sequence[str | os.PathLike], include_dirs: Sequence[str | os.PathLike],
                   build_dir: str | os.PathLike, *, name: str = "firmware", defines: Sequence[str] = (),
                   opt: str = "-Os", stack_size: int | None = None) -> FirmwareBuild:
    """Compile the runtime + `sources` for `board` into build_dir/<name>.elf.

    include_dirs must hold the model's mcuforge_model.h. defines are NAME or NAME=VALUE, for both the
    runtime and the model. Raises FirmwareBuildError with the compiler's or linker's words."""
    missing = missing_tools()
    if missing:
        raise FirmwareBuildError(f"cannot build firmware: {', '.join(missing)} not found on PATH "
                                 "(apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi cmake)")
    if not sources:
        raise FirmwareBuildError("cannot build firmware: no model sources given")
    build = Path(build_dir).resolve()
    try:
        board_dir = render_board_files(board, build / "board", stack_size)
    except OSError as exc:
        raise FirmwareBuildError(f"cannot write the build directory {build} ({exc.strerror or exc}): give another "
                                 "with --build-dir") from None
    srcs = [str(Path(s).resolve()) for s in sources]
    for s in srcs:
        if not Path(s).is_file():
            raise FirmwareBuildError(f"cannot build firmware: source {s} does not exist")
    incs = [str(Path(i).resolve()) for i in include_dirs]
    if not any((Path(i) / "mcuforge_model.h").is_file() for i in incs):
        raise FirmwareBuildError("cannot build firmware: no include directory holds mcuforge_model.h "
                                 f"(given: {', '.join(incs) or 'none'})")
    cmake_build = build / "cmake"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else ["-G", "Unix Makefiles"]
    configure = ["cmake", *generator, "-S", str(RUNTIME_DIR), "-B", str(cmake_build), "-Wno-dev",
                 f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN_FILE}",
                 f"-DMCU_CPU_FLAGS={' '.join(board.cpu_flags())}",
                 f"-DMCUFORGE_BOARD_DIR={board_dir}",
                 f"-DMCUFORGE_MODEL_SOURCES={';'.join(srcs)}",
                 f"-DMCUFORGE_MODEL_INCLUDE_DIRS={';'.join(incs)}",
                 f"-DMCUFORGE_FIRMWARE_NAME={name}",
                 f"-DMCUFORGE_OPT={opt}",
                 f"-DMCUFORGE_DEFINES={';'.join(defines)}"]
    _run(configure, f"configuring the firmware for {board.name}", board)
    try:
        _run(["cmake", "--build", str(cmake_build)], f"building the firmware for {board.name}", board)
    except FirmwareBuildError as exc:
        if exc.region != "FLASH" or board.weights is None:
            raise
        render_board_files(board, board_dir, stack_size, spill_weights=True)
        _run(["cmake", "--build", str(cmake_build)], f"building the firmware for {board.name}", board)
    elf = cmake_build / f"{name}.elf"
    text, data, bss = elf_sizes(elf)
    try:
        stack = static_stack(sorted(cmake_build.glob("CMakeFiles/**/*.ci")), exception_frame_bytes(board.fpu != "none"),
                             linked_functions(elf), elf_pushed_bytes(elf))
    except StackAnalysisError:
        stack = None
    return FirmwareBuild(board=board, elf=elf, map_file=cmake_build / f"{name}.map", text_bytes=text,
                         data_bytes=data, bss_bytes=bss, stack_bytes=stack_size or board.stack_size,
                         static_stack=stack)


def build_test_firmware(board: Board, build_dir: str | os.PathLike, *, defines: Sequence[str] = (),
                        name: str = "echo") -> FirmwareBuild:
    """The runtime with the stand-in "echo" model (firmware/runtime/test_model), for testing boards."""
    return build_firmware(board, [TEST_MODEL_DIR / "echo.c"], [TEST_MODEL_DIR], build_dir, name=name,
                          defines=defines)


def linked_functions(elf: Path) -> set[str] | None:
    """The names of the functions in the ELF (what --gc-sections kept), or None if nm fails."""
    proc = subprocess.run([SIZE.replace("size", "nm"), "--defined-only", str(elf)], check=False, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        return None
    return {parts[2] for parts in (line.split() for line in proc.stdout.splitlines())
            if len(parts) == 3 and parts[1] in "TtWw"}


def elf_pushed_bytes(elf: Path) -> dict[str, int] | None:
    """stack_usage.pushed_bytes of the ELF's disassembly (objdump -d), or None if objdump fails."""
    proc = subprocess.run([SIZE.replace("size", "objdump"), "-d", "--no-show-raw-insn", str(elf)], check=False,
                          capture_output=True, text=True)
    return pushed_bytes(proc.stdout) if proc.returncode == 0 else None


def elf_sizes(elf: Path) -> tuple[int, int, int]:
    """(text, data, bss) bytes of an ELF, from arm-none-eabi-size (Berkeley format)."""
    proc = subprocess.run([SIZE, "-B", str(elf)], check=False, capture_output=True, text=True)
    if proc.returncode != 0:
        raise FirmwareBuildError(f"{SIZE} failed on {elf}: {proc.stderr.strip()}")
    lines = proc.stdout.strip().splitlines()
    text, data, bss = (int(x) for x in lines[-1].split()[:3])
    return text, data, bss


_OVERFLOW = re.compile(r"region `?(\w+)'? overflowed by (\d+) bytes")


def _run(cmd: list[str], what: str, board: Board) -> None:
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    if proc.returncode == 0:
        return
    out = proc.stdout + proc.stderr
    overflow = _OVERFLOW.search(out)
    if overflow:
        name = overflow.group(1)
        region = {"FLASH": board.flash, "WEIGHTS": board.weights}.get(name, board.ram)
        raise FirmwareBuildError(f"the firmware does not fit {board.name}: {name} ({region.name}, "
                                 f"{region.size} B) overflowed by {overflow.group(2)} bytes", region=name)
    if "RAM overflow" in out:
        raise FirmwareBuildError(f"the firmware does not fit {board.name}: .data + .bss run into the "
                                 f"{board.stack_size} B stack at the top of RAM ({board.ram.size} B)")
    errors = [line for line in out.splitlines() if "error" in line.lower()]
    tail = "\n".join((errors or out.splitlines())[-15:])
    raise FirmwareBuildError(f"{what} failed:\n{tail}")
