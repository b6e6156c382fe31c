"""Boards, the bare-metal runtime, the serial link and the QEMU runner.

The stand-in model "echo" (firmware/runtime/test_model) has two inputs (37 and 5 bytes) and two
outputs: output i = input i reversed, each byte + 1; two layers, the second burning a known number
of instructions. Input 1 spelling "fail!", "fault", "hang!" or "burn"+k makes it misbehave on purpose.

QEMU tests are marked slow; they are skipped only when the toolchain or QEMU is missing and CI is not
"true" (in CI they must run, and fail if the tools are absent).
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
import serial
from mcuforge.boards import BOARDS_DIR, all_boards, board_names, load_board

from mcuforge.errors import McuforgeError
from mcuforge.firmware_build import FirmwareBuildError, build_test_firmware, missing_tools, render_board_files
from mcuforge.qemu import QEMU, QemuError, start_qemu
from mcuforge.serial_link import (
    CMD_INFO,
    CMD_RESET,
    CMD_WRITE_INPUT,
    STATUS_BAD_CRC,
    STATUS_FAULT,
    STATUS_MODEL_ERROR,
    STATUS_WRONG_SIZE,
    BoardGone,
    Link,
    LinkCRCError,
    LinkTimeout,
    TargetError,
    encode_frame,
)

QEMU_BOARDS = ["mps2-an385", "mps2-an386", "mps2-an500", "mps2-an505", "mps3-an547", "microbit", "netduinoplus2"]
SIZES = (37, 5)
BURN = 2 * 50000  # instructions layer 1 burns per "burn" unit (ECHO_BURN_ITERATIONS = 50000)

_missing = missing_tools() + ([] if shutil.which(QEMU) else [QEMU])
needs_qemu = pytest.mark.skipif(bool(_missing) and os.environ.get("CI") != "true",
                                reason=f"not installed: {', '.join(_missing)} (CI=true makes this a failure)")
needs_toolchain = pytest.mark.skipif(bool(missing_tools()) and os.environ.get("CI") != "true",
                                     reason=f"not installed: {', '.join(missing_tools())} (CI=true makes this a failure)")


def expected_output(data: bytes) -> bytes:
    return bytes((b + 1) & 0xFF for b in reversed(data))


# ---------------------------------------------------------------- boards (no tools needed)

# The QEMU machines' real maps (QEMU 7.2 hw/arm/mps2.c, mps2-tz.c + armsse.c): code/flash, RAM, UART0.
QEMU_MAPS = {
    "mps2-an385": (0x00000000, 0x400000, 0x20000000, 0x400000, 0x40004000, 25_000_000),
    "mps2-an386": (0x00000000, 0x400000, 0x20000000, 0x400000, 0x40004000, 25_000_000),
    "mps2-an500": (0x00000000, 0x400000, 0x20000000, 0x400000, 0x40004000, 25_000_000),
    "mps2-an505": (0x10000000, 0x400000, 0x38000000, 0x400000, 0x40200000, 20_000_000),
    "mps3-an547": (0x00000000, 0x80000, 0x20000000, 0x80000, 0x49303000, 32_000_000),
}


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="needs arm-none-eabi-gcc")
def test_board_isa_is_what_its_compiler_flags_build():
    """Board.isa, the kernel paths the lowering lays the weights out for, names the paths the board's
    gcc flags compile: Helium where __ARM_FEATURE_MVE (integer) is set, else DSP where
    __ARM_FEATURE_DSP is, else plain C (mcu_cmsis_mve.h, mcu_cmsis_dsp.h)."""
    import subprocess

    seen = set()
    for b in all_boards():
        macros = subprocess.run(["arm-none-eabi-gcc", *b.cpu_flags(), "-dM", "-E", "-x", "c", "/dev/null"],
                                capture_output=True, text=True, check=True).stdout
        mve = re.search(r"#define __ARM_FEATURE_MVE (\d+)", macros)
        built = ("mve" if mve and int(mve.group(1)) & 1 else
                 "dsp" if re.search(r"#define __ARM_FEATURE_DSP 1", macros) else "plain")
        assert b.isa == built, b.name
        seen.add(built)
    assert seen == {"plain", "dsp", "mve"}


def test_board_table():
    boards = {b.name: b for b in all_boards()}
    assert set(boards) == set(QEMU_BOARDS) | {"nucleo-f746zg", "nucleo-l4r5zi"}
    assert board_names() == sorted(boards)
    for name, (flash, flash_size, ram, ram_size, uart, timer_hz) in QEMU_MAPS.items():
        b = boards[name]
        assert (b.flash.origin, b.flash.size, b.ram.origin, b.ram.size) == (flash, flash_size, ram, ram_size)
        assert (b.uart.type, b.uart.base, b.timer.type, b.timer.clock_hz) == ("cmsdk-apb-uart", uart, "systick",
                                                                               timer_hz)
        assert b.is_qemu and b.qemu_machine == name and b.exit == "semihosting" and b.timer.unit == "instructions"
    assert boards["mps2-an385"].timer.units_per_tick == 40
    assert boards["mps3-an547"].timer.units_per_tick == Fraction(125, 4)
    assert boards["mps2-an505"].timer.units_per_tick == 50
    assert boards["mps3-an547"].mve == "float" and boards["mps2-an386"].dsp and not boards["mps2-an385"].dsp
    assert boards["mps2-an505"].cpu_flags() == ("-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard",
                                                "-mfpu=fpv5-sp-d16") and boards["mps2-an505"].dsp
    for name, target in [("nucleo-f746zg", "stm32f746zgtx"), ("nucleo-l4r5zi", "stm32l4r5zitx")]:
        b = boards[name]
        assert (b.run_method, b.pyocd_target, b.timer.type, b.timer.unit, b.exit) == ("pyocd", target, "dwt",
                                                                                     "cycles", "reset")
        assert b.flash.origin == 0x08000000 and b.ram.origin == 0x20000000 and b.uart.init
    assert boards["nucleo-l4r5zi"].uart.divisor == 8889  # LPUART: 256 * 4 MHz / 115200
    assert boards["mps2-an386"].cpu_flags() == ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
                                                "-mfpu=fpv4-sp-d16")
    assert boards["mps2-an385"].cpu_flags() == ("-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft")
    # micro:bit (nRF51822): the data sheet's BAUDRATE value for 115200; STM32F405 USART1: BRR at 16 MHz
    mb, nd = boards["microbit"], boards["netduinoplus2"]
    assert (mb.cpu_flags(), mb.dsp, mb.ram.size, mb.flash.size) == (("-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft"),
                                                                    False, 16 * 1024, 256 * 1024)
    assert (mb.uart.type, mb.uart.base, mb.uart.divisor) == ("nrf51-uart", 0x40002000, 0x01D7E000)
    assert (nd.uart.type, nd.uart.base, nd.uart.divisor) == ("stm32f4-usart", 0x40011000, 139)
    assert (nd.flash.origin, nd.ram.size, nd.timer.units_per_tick) == (0x08000000, 128 * 1024, Fraction(125, 21))


def test_board_names_and_unknown_board():
    assert load_board("mps2_an386") == load_board("MPS2-AN386") == load_board("mps2-an386")
    with pytest.raises(McuforgeError, match=r"unknown board 'stm32'; known boards: microbit, mps2-an385, .*nucleo-l4r5zi"):
        load_board("stm32")


def test_linker_script_and_board_header(tmp_path):
    b = load_board("mps3-an547")
    out = render_board_files(b, tmp_path, stack_size=0x1000)
    ld = (out / "linker.ld").read_text()
    assert "FLASH (rx)  : ORIGIN = 0x00000000, LENGTH = 0x00080000" in ld
    assert "RAM   (rwx) : ORIGIN = 0x20000000, LENGTH = 0x00080000" in ld
    assert "__stack_size  = 0x1000;" in ld and "__stack_limit" in ld
    h = (out / "mcuforge_board.h").read_text()
    assert '#define MCU_BOARD_NAME "mps3-an547"' in h
    assert "#define MCU_UART_BASE 0x49303000u" in h
    assert "#define MCU_TIMER_UNITS_PER_TICK_NUM 125u" in h and "#define MCU_TIMER_UNITS_PER_TICK_DEN 4u" in h


def test_linker_script_moves_the_model_constants_to_the_weights_region(tmp_path):
    """Only when asked (the build asks after FLASH overflowed): the model's *_weights.c constants are
    linked into the board's weights region, placed before .rodata so that rule takes them."""
    b = load_board("mps3-an547")
    assert b.weights is not None and b.flash_capacity == b.flash.size + b.weights.size
    plain = (render_board_files(b, tmp_path / "plain") / "linker.ld").read_text()
    assert "WEIGHTS" not in plain and "_weights.c.obj" not in plain
    ld = (render_board_files(b, tmp_path / "spill", spill_weights=True) / "linker.ld").read_text()
    assert "WEIGHTS (r) : ORIGIN = 0x01000000, LENGTH = 0x00200000" in ld
    assert ld.index("*_weights.c.obj(.rodata .rodata.*)") < ld.index("*(.rodata .rodata.*)")
    assert "} > WEIGHTS" in ld
    assert load_board("mps2-an386").weights is None


def test_board_file_with_overlapping_regions_is_refused(tmp_path):
    text = (BOARDS_DIR / "mps3_an547.toml").read_text().replace("origin = 0x01000000", "origin = 0x00070000")
    (tmp_path / "bad.toml").write_text(text)
    with pytest.raises(McuforgeError, match="board file bad.toml is invalid: memory regions ITCM and SRAM overlap"):
        load_board(str(tmp_path / "bad.toml"))


# ---------------------------------------------------------------- the host side of the link (loop://)

def loop_link(timeout: float = 0.5) -> Link:
    return Link(serial.serial_for_url("loop://", timeout=0.02), name="loop", timeout=timeout)


def test_frames_round_trip_and_resync_on_garbage():
    link = loop_link()
    link.write_raw(b"\x00\xa5\xa5garbage\x5a" + encode_frame(0x81, b"hello"))
    assert link.receive_frame() == (0x81, 0, b"hello")
    assert link.skipped_bytes == 11
    link.write_raw(encode_frame(0x82, b"")[:-4])  # the CRC never comes
    with pytest.raises(LinkTimeout, match="no answer from loop in time"):
        link.receive_frame(timeout=0.2)


def test_damaged_frame_from_target_is_rejected():
    link = loop_link()
    frame = bytearray(encode_frame(0x84, bytes(range(20))))
    frame[12] ^= 0x10
    link.write_raw(bytes(frame))
    with pytest.raises(LinkCRCError, match="CRC mismatch on a 20-byte READ_OUTPUT answer"):
        link.receive_frame()


def test_error_frames_become_target_errors():
    link = loop_link()
    link.write_raw(encode_frame(CMD_WRITE_INPUT | 0x80, b"input 0 takes 37 bytes, got 36", status=STATUS_WRONG_SIZE))
    with pytest.raises(TargetError, match="WRITE_INPUT: WRONG_SIZE: input 0 takes 37 bytes, got 36") as err:
        link.receive(CMD_WRITE_INPUT)
    assert err.value.status == STATUS_WRONG_SIZE


def test_closed_socket_is_board_gone():
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    link = Link.open(f"socket://127.0.0.1:{server.getsockname()[1]}", timeout=5.0)
    conn, _ = server.accept()
    conn.close()
    server.close()
    with pytest.raises(BoardGone, match="is gone"):  # at once: BoardGone, not a LinkTimeout after 5 s
        link.receive_frame()
    link.close()
    with pytest.raises(BoardGone, match="cannot open serial port"):
        Link.open("/dev/does-not-exist-mcuforge")


# ---------------------------------------------------------------- firmware on QEMU

@pytest.fixture(scope="module")
def firmwares(tmp_path_factory):
    """The echo firmware for the four QEMU boards, plus two AN385 variants: a tiny SysTick reload, and
    a "mute" one that talks on UART1, which nothing listens to."""
    root = tmp_path_factory.mktemp("fw")
    jobs = {name: (load_board(name), ()) for name in QEMU_BOARDS}
    jobs["wraps"] = (load_board("mps2-an385"), ("MCU_SYSTICK_RELOAD=0x3FF",))
    an385 = load_board("mps2-an385")
    jobs["mute"] = (replace(an385, uart=replace(an385.uart, base=0x40005000)), ())
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = {k: pool.submit(build_test_firmware, b, root / k, defines=d) for k, (b, d) in jobs.items()}
        return {k: f.result() for k, f in futures.items()}


def session(firmwares, key: str, timeout: float = 10.0):
    fw = firmwares[key]
    return start_qemu(fw.board, fw.elf, timeout=timeout)


@pytest.mark.slow
@needs_qemu
@pytest.mark.parametrize("name", QEMU_BOARDS)
def test_echo_model_on_qemu(firmwares, name):
    fw = firmwares[name]
    assert fw.flash_bytes < 8 * 1024 and fw.ram_bytes < 1024, fw.summary()
    rng = np.random.default_rng(0)
    with session(firmwares, name) as q:
        link = q.link
        info = link.info()
        assert (info.model_name, info.board_name, info.protocol_version) == ("echo", name, 2)
        assert (info.num_inputs, info.num_outputs, info.num_layers, info.arena_size) == (2, 2, 2, 160)
        assert info.input_sizes == SIZES and info.output_sizes == SIZES
        assert info.unit == "instructions" and info.units_per_tick == fw.board.timer.units_per_tick

        inputs = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in SIZES]
        counts = []
        for _ in range(2):
            for i, data in enumerate(inputs):
                link.write_input(i, data)
            stats = link.run_stats(profile=True)
            counts.append(stats.count)
            for i, data in enumerate(inputs):
                assert link.read_output(i) == expected_output(data)
            profile = link.read_profile()
            assert len(profile.timestamps) == info.num_layers + 1
            assert list(profile.timestamps) == sorted(profile.timestamps)
            assert profile.timestamps[-1] <= stats.count
            assert 0 < stats.stack_bytes < fw.stack_bytes
        assert counts[0] == counts[1], "instruction counts must be deterministic"
        assert BURN < counts[0] < BURN + 2000
        assert link.run(profile=False) < counts[0]  # no profiler hook calls

        # Calibration: layer 1 with 3x the burn costs exactly 2 * BURN more instructions, to the
        # timer's resolution (plus two turns of the outer loop).
        layer1 = {}
        for k in (1, 3):
            link.write_input(1, b"burn" + bytes([k]))
            link.run(profile=True)
            layer1[k] = link.read_profile().layer_counts[1]
        assert abs(layer1[3] - layer1[1] - 2 * BURN) <= info.units_per_tick + 20, layer1

        link.quit(5)
        assert q.wait(5.0) == 5
    assert q.returncode == 5

    with session(firmwares, name) as q:  # a fresh QEMU counts the same
        for i, data in enumerate(inputs):
            q.link.write_input(i, data)
        assert q.link.run(profile=True) == counts[0]


@pytest.mark.slow
@needs_qemu
def test_systick_wraps_are_counted(firmwares):
    """With a 1024-tick SysTick period, runs of many periods still measure the same work."""
    with session(firmwares, "wraps") as q:
        link = q.link
        link.write_input(0, bytes(37))
        counts = {}
        for k in (1, 3, 50):
            link.write_input(1, b"burn" + bytes([k]))
            counts[k] = link.run(profile=True)
            t = link.read_profile().timestamps
            assert list(t) == sorted(t)
        # Each wrap costs its interrupt handler (a few instructions): allow 10 per 1024 ticks.
        wraps = counts[50] // (40 * 1024)
        assert 0 <= counts[50] - counts[1] - 49 * BURN <= 49 * 10 + 10 * wraps + 40, counts
        link.quit()


@pytest.mark.slow
@needs_qemu
def test_protocol_errors_keep_the_firmware_working(firmwares):
    with session(firmwares, "mps2-an386") as q:
        link = q.link
        with pytest.raises(TargetError, match="WRONG_SIZE: input 0 of model echo takes 37 bytes, got 36") as err:
            link.write_input(0, bytes(36))
        assert err.value.status == STATUS_WRONG_SIZE
        with pytest.raises(TargetError, match="BAD_INDEX: input index 2 out of range"):
            link.write_input(2, bytes(5))
        with pytest.raises(TargetError, match="BAD_INDEX: output index 7 out of range"):
            link.read_output(7)
        with pytest.raises(TargetError, match="NO_PROFILE"):
            link.read_profile()
        with pytest.raises(TargetError, match="UNKNOWN_COMMAND: unknown command 66"):
            link.request(0x42)
        link.reset()  # a model without state (no MCU_MODEL_RESET): RESET answers OK, does nothing
        with pytest.raises(TargetError, match="BAD_LENGTH: RESET takes no payload"):
            link.request(CMD_RESET, b"x")

        # Garbage before a frame (with lone magic bytes, never the full magic) is skipped.
        garbage = bytearray(np.random.default_rng(1).integers(0, 256, 300, dtype=np.uint8).tobytes())
        garbage = bytes(b if b != 0x5A else 0x00 for b in garbage) + b"\xa5\xa5"
        link.write_raw(garbage)
        assert link.info().model_name == "echo"

        # A damaged request is rejected with BAD_CRC, whatever part of it was hit.
        for damage_at in (-1, 10):
            frame = bytearray(encode_frame(CMD_WRITE_INPUT, struct.pack("<I", 1) + b"abcde"))
            frame[damage_at] ^= 0x01
            link.write_raw(bytes(frame))
            with pytest.raises(TargetError, match="BAD_CRC: CRC mismatch") as err:
                link.receive(CMD_WRITE_INPUT)
            assert err.value.status == STATUS_BAD_CRC
        frame = bytearray(encode_frame(CMD_INFO))
        frame[-2] ^= 0x80
        link.write_raw(bytes(frame))
        with pytest.raises(TargetError, match="BAD_CRC"):
            link.receive(CMD_INFO)

        # A model error is reported with the model's code.
        link.write_input(1, b"fail!")
        with pytest.raises(TargetError, match="MODEL_ERROR: model echo run returned error 7") as err:
            link.run()
        assert err.value.status == STATUS_MODEL_ERROR

        # After all that, it still works.
        data = bytes(range(100, 137))
        link.write_input(0, data)
        link.write_input(1, b"12345")
        link.run()
        assert link.read_output(0) == expected_output(data) and link.read_output(1) == b"65432"
        link.quit()


@pytest.mark.slow
@needs_qemu
@pytest.mark.parametrize("name", QEMU_BOARDS)
def test_fault_is_reported_then_qemu_exits(firmwares, name):
    with session(firmwares, name) as q:
        q.link.write_input(1, b"fault")
        armv6m = q.board.cpu == "cortex-m0"  # no divide instruction, no UsageFault: an unaligned load
        want = (r"HardFault on microbit: pc=0x[0-9a-f]{8} lr=0x[0-9a-f]{8} exc_return=" if armv6m else
                rf"UsageFault on {name}: pc=0x[0-9a-f]{{8}} .*\(integer division by zero\)")
        with pytest.raises(TargetError, match="FAULT: " + want) as err:
            q.link.run()
        assert err.value.status == STATUS_FAULT
        assert q.wait(5.0) == 128 + (3 if armv6m else 6)  # exits with 128 + the exception number


@pytest.mark.slow
@needs_qemu
def test_qemu_killed_mid_run_is_board_gone_quickly(firmwares):
    with session(firmwares, "mps2-an385", timeout=30.0) as q:
        q.link.write_input(1, b"hang!")
        threading.Timer(0.3, q.kill).start()
        with pytest.raises(BoardGone, match=r"is gone .*QEMU \(mps2-an385, echo.elf\) killed by signal 9"):
            q.link.run()
        assert q.link.timeouts == 0  # seen when QEMU went, not after the 30 s timeout
    assert q.returncode is not None


@pytest.mark.slow
@needs_qemu
def test_firmware_that_does_not_answer_is_a_clear_timeout(firmwares):
    """Firmware that talks on another UART: the link times out, naming the cause."""
    fw = firmwares["mute"]
    expected = (r"^no answer from mps2-an385 on QEMU in 1 s: QEMU \(mps2-an385, echo.elf\) is still running but "
                r"nothing at all came from the firmware \(built for another board\? stuck\?\)$")
    with start_qemu(load_board("mps2-an385"), fw.elf, timeout=1.0) as q, pytest.raises(LinkTimeout, match=expected):
        q.link.info()
    assert q.returncode is not None and q.link.timeouts == 1


@pytest.mark.slow
@needs_qemu
def test_firmware_still_computing_when_the_timeout_runs_out_says_so(firmwares):
    """Firmware that answered INFO and WRITE_INPUT, then computes past RUN's timeout: "still running
    after N s", not a guess that it does not answer."""
    with session(firmwares, "mps2-an385") as q:
        q.link.info()
        q.link.write_input(1, b"hang!")
        with pytest.raises(LinkTimeout, match=r"^no answer to RUN from mps2-an385 on QEMU: still running after "
                                              r"0\.5 s$"):
            q.link.run(timeout=0.5)
        assert q.returncode is None and q.link.timeouts == 1


@pytest.mark.slow
@needs_qemu
def test_firmware_for_another_board_crashing_qemu_is_reported(firmwares):
    """The AN547 ELF (code at 0, no RAM at its data addresses on AN385) locks the core up: QEMU aborts."""
    expected = r"QEMU \(mps2-an385, echo.elf\) killed by signal 6; QEMU says: .*Lockup"
    with start_qemu(load_board("mps2-an385"), firmwares["mps3-an547"].elf, timeout=5.0) as q, \
            pytest.raises(BoardGone, match=expected):
        q.link.info()


def test_missing_firmware_file_is_a_clear_error(tmp_path):
    with pytest.raises(QemuError, match="does not exist"):
        start_qemu(load_board("mps2-an385"), tmp_path / "nope.elf")
    with pytest.raises(QemuError, match="not a QEMU board"):
        from mcuforge.qemu import qemu_command
        qemu_command(load_board("nucleo-l4r5zi"), "x.elf", 1234)


@pytest.mark.slow
@needs_toolchain
@pytest.mark.parametrize("name", ["nucleo-f746zg", "nucleo-l4r5zi"])
def test_firmware_builds_for_real_boards(tmp_path, name):
    fw = build_test_firmware(load_board(name), tmp_path)
    assert fw.elf.is_file() and 0 < fw.flash_bytes < 8 * 1024 and fw.stack_bytes == 0x2000


@pytest.mark.slow
@needs_toolchain
def test_firmware_that_does_not_fit_is_a_clear_error(tmp_path):
    board = load_board("mps3-an547")
    with pytest.raises(FirmwareBuildError, match="does not fit mps3-an547: .data \\+ .bss run into the"):
        from mcuforge.firmware_build import TEST_MODEL_DIR, build_firmware
        build_firmware(board, [TEST_MODEL_DIR / "echo.c"], [TEST_MODEL_DIR], tmp_path, stack_size=board.ram.size - 64)
