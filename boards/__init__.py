"""Board descriptions: one TOML file per board in this directory, read into a frozen `Board`.

A board says how to compile for it (cpu, fpu, float ABI), where code and data go (flash and RAM
regions, stack size), how the host talks to it (UART), how time is measured (timer) and how it runs
(QEMU machine, or a flash tool such as pyOCD). Names accept either spelling: "mps2-an386" or
"mps2_an386".
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from mcuforge.errors import McuforgeError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, as a package
    import tomli as tomllib  # type: ignore[no-redef]

BOARDS_DIR = Path(__file__).resolve().parent
# stm32-usart: ISR/RDR/TDR registers (F0/F3/F7/L4...); stm32f4-usart: SR/DR (F1/F2/F4); nrf51-uart: nRF51 UART
UART_TYPES = ("cmsdk-apb-uart", "stm32-usart", "stm32f4-usart", "stm32-lpuart", "nrf51-uart")
TIMER_TYPES = ("systick", "dwt")
TIMER_UNITS = ("instructions", "cycles")
RUN_METHODS = ("qemu", "pyocd")
EXIT_METHODS = ("semihosting", "reset")
MVE_KINDS = ("none", "int", "float")


@dataclass(frozen=True)
class MemoryRegion:
    name: str
    origin: int
    size: int

    @property
    def end(self) -> int:
        return self.origin + self.size


@dataclass(frozen=True)
class Uart:
    type: str                                   # one of UART_TYPES
    base: int
    baud: int
    clock_hz: int                               # the UART's input clock
    init: tuple[tuple[int, int, int], ...] = ()  # (address, mask, value) read-modify-writes before enabling

    @property
    def divisor(self) -> int:
        """The value for the baud-rate register: CMSDK BAUDDIV, STM32 USART BRR, LPUART BRR or nRF51
        BAUDRATE (baud * 2^32 / clock, rounded to a multiple of 4096 as the data sheet's table)."""
        if self.type == "stm32-lpuart":
            return round(256 * self.clock_hz / self.baud)
        if self.type == "nrf51-uart":
            return (round(self.baud * 2**32 / self.clock_hz) + 0x800) & 0xFFFFF000
        return round(self.clock_hz / self.baud)


@dataclass(frozen=True)
class Timer:
    type: str          # "systick" (QEMU boards) or "dwt" (cycle counter on real boards)
    clock_hz: int      # the rate the counter ticks at
    unit: str          # what reported counts mean: "instructions" (QEMU -icount shift=0) or "cycles"

    @property
    def units_per_tick(self) -> Fraction:
        """How many reported units one timer tick is: its resolution.

        Under QEMU's -icount shift=0 one instruction takes 1 ns of virtual time, so a counter at
        clock_hz ticks every 1e9 / clock_hz instructions. A cycle counter counts core cycles."""
        if self.unit == "instructions":
            return Fraction(10**9, self.clock_hz)
        return Fraction(1)


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    cpu: str                   # gcc -mcpu
    fpu: str                   # gcc -mfpu, or "none"
    float_abi: str             # gcc -mfloat-abi
    flash: MemoryRegion        # code, constants, .data load image
    ram: MemoryRegion          # .data, .bss, stack at the top
    stack_size: int
    uart: Uart
    timer: Timer
    run_method: str            # "qemu" or "pyocd"
    exit: str                  # how QUIT ends the firmware: "semihosting" or "reset"
    qemu_machine: str | None = None
    pyocd_target: str | None = None
    dsp: bool = False
    mve: str = "none"
    num_irqs: int = 32
    caches: bool = False       # enable the Cortex-M7 caches at reset
    weights: MemoryRegion | None = None  # where the model's constants go when code + constants overflow flash

    @property
    def flash_capacity(self) -> int:
        """Bytes of read-only image the board holds: flash, plus the weights region (where the linker
        moves the model's constants when they and the code overflow flash)."""
        return self.flash.size + (self.weights.size if self.weights else 0)

    @property
    def is_qemu(self) -> bool:
        return self.run_method == "qemu"

    @property
    def rx_gap_polls(self) -> int:
        """Polls of an idle UART after which the firmware abandons a half-received frame: about 1 s
        (QEMU polls a few million times a second; a board's polling loop takes about 8 cycles)."""
        return 2_000_000 if self.is_qemu else max(self.timer.clock_hz // 8, 100_000)

    @property
    def isa(self) -> str:
        """The kernel paths code built for this board takes (mcuforge.planner.target.ISAS): Helium
        where it has MVE, else the DSP instructions where it has them, else plain C."""
        return "mve" if self.mve != "none" else "dsp" if self.dsp else "plain"

    @property
    def key(self) -> str:
        """The name as a C/file-friendly identifier: "mps2_an386"."""
        return self.name.replace("-", "_")

    def cpu_flags(self) -> tuple[str, ...]:
        """gcc flags selecting the core, FPU and float ABI (compile and link)."""
        flags = [f"-mcpu={self.cpu}", "-mthumb", f"-mfloat-abi={self.float_abi}"]
        if self.fpu != "none":
            flags.append(f"-mfpu={self.fpu}")
        return tuple(flags)


def _toml_files() -> dict[str, Path]:
    return {p.stem.replace("_", "-"): p for p in sorted(BOARDS_DIR.glob("*.toml"))}


def board_names() -> list[str]:
    return sorted(_toml_files())


def load_board(name: str) -> Board:
    """The board called `name` ("mps2-an386" or "mps2_an386"), or a board file of your own (a path
    ending in .toml, in the same format as the built-in ones)."""
    if name.endswith(".toml"):
        path = Path(name)
        if not path.is_file():
            raise McuforgeError(f"board file {name} does not exist")
        return _parse(path)
    key = name.strip().lower().replace("_", "-")
    files = _toml_files()
    if key not in files:
        raise McuforgeError(f"unknown board {name!r}; known boards: {', '.join(sorted(files))}")
    return _parse(files[key])


def all_boards() -> list[Board]:
    return [_parse(p) for p in _toml_files().values()]


def _parse(path: Path) -> Board:
    try:
        data = tomllib.loads(path.read_text())
        return _board_from_dict(data)
    except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        what = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
        raise McuforgeError(f"board file {path.name} is invalid: {what}") from None


def _choice(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise ValueError(f"{what} is {value!r}, expected one of {', '.join(allowed)}")
    return value


def _region(d: dict[str, Any]) -> MemoryRegion:
    return MemoryRegion(name=str(d["name"]), origin=int(d["origin"]), size=int(d["size"]))


def _board_from_dict(d: dict[str, Any]) -> Board:
    run, mem, uart, timer = d["run"], d["memory"], d["uart"], d["timer"]
    board = Board(
        name=d["name"],
        description=d["description"],
        cpu=d["cpu"],
        fpu=d["fpu"],
        float_abi=_choice(d["float_abi"], ("soft", "softfp", "hard"), "float_abi"),
        flash=_region(mem["flash"]),
        ram=_region(mem["ram"]),
        stack_size=int(mem["stack_size"]),
        uart=Uart(type=_choice(uart["type"], UART_TYPES, "uart.type"), base=int(uart["base"]),
                  baud=int(uart["baud"]), clock_hz=int(uart["clock_hz"]),
                  init=tuple((int(a), int(m), int(v)) for a, m, v in uart.get("init", []))),
        timer=Timer(type=_choice(timer["type"], TIMER_TYPES, "timer.type"), clock_hz=int(timer["clock_hz"]),
                    unit=_choice(timer["unit"], TIMER_UNITS, "timer.unit")),
        run_method=_choice(run["method"], RUN_METHODS, "run.method"),
        exit=_choice(run["exit"], EXIT_METHODS, "run.exit"),
        qemu_machine=d.get("qemu_machine"),
        pyocd_target=run.get("pyocd_target"),
        dsp=bool(d.get("dsp", False)),
        mve=_choice(d.get("mve", "none"), MVE_KINDS, "mve"),
        num_irqs=int(d.get("num_irqs", 32)),
        caches=bool(d.get("caches", False)),
        weights=_region(mem["weights"]) if "weights" in mem else None,
    )
    if board.is_qemu and not board.qemu_machine:
        raise ValueError("run.method is qemu but qemu_machine is not set")
    if board.run_method == "pyocd" and not board.pyocd_target:
        raise ValueError("run.method is pyocd but run.pyocd_target is not set")
    if board.uart.type == "cmsdk-apb-uart" and board.uart.divisor < 16:
        raise ValueError("uart BAUDDIV (clock_hz / baud) must be at least 16")
    regions = [board.flash, board.ram] + ([board.weights] if board.weights else [])
    for i, a in enumerate(regions):
        for b in regions[i + 1:]:
            if a.origin < b.end and b.origin < a.end:
                raise ValueError(f"memory regions {a.name} and {b.name} overlap")
    if board.stack_size % 8 or not 0 < board.stack_size < board.ram.size:
        raise ValueError("memory.stack_size must be a positive multiple of 8 smaller than RAM")
    return board
