"""Run a firmware ELF on QEMU and talk to it over the serial link.

    from mcuforge.qemu import start_qemu

    with start_qemu(board, "build/echo.elf") as session:
        info = session.link.info()
        count = session.link.run()
        session.link.quit()
    session.returncode   # the firmware's exit code (semihosting)

QEMU runs with -icount shift=0 (virtual time counts instructions: 1 instruction = 1 ns, so the
firmware's timer reads instruction counts), semihosting (the firmware ends QEMU with an exit code),
and UART0 on a TCP server that waits for our connection before the guest starts, so no byte is lost.
The process is always reaped: on leaving the `with` block, on errors, and when the firmware ends.

exec_log: a function given QEMU's `-d in_asm,exec,nochain` log as a text stream while QEMU runs
(a named pipe read in a thread: nothing is written to disk), for mcuforge.cycles. A consumer that
fails is recorded (`session.exec_log_error`) and the rest of the log is drained, so QEMU never blocks.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

import serial

from mcuforge.boards import Board
from mcuforge.errors import McuforgeError
from mcuforge.serial_link import Link

QEMU = "qemu-system-arm"


class QemuError(McuforgeError):
    """QEMU is missing, would not start, or the firmware in it does not answer."""


def qemu_command(board: Board, elf: str | os.PathLike, port: int, extra_args: Sequence[str] = ()) -> list[str]:
    """The qemu-system-arm command line for `board` running `elf`, UART0 on 127.0.0.1:port."""
    if not board.is_qemu or not board.qemu_machine:
        raise QemuError(f"board {board.name} is not a QEMU board (it runs with {board.run_method})")
    return [QEMU, "-machine", board.qemu_machine, "-nographic", "-monitor", "none",
            "-serial", f"tcp:127.0.0.1:{port},server=on,wait=on,nodelay=on",
            "-icount", "shift=0",
            "-semihosting-config", "enable=on,target=native",
            *extra_args, "-kernel", str(elf)]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class QemuSession:
    """A running QEMU with the firmware, and the Link to it. Use as a context manager."""

    def __init__(self, board: Board, elf: Path, process: subprocess.Popen, port: int, log_path: Path,
                 exec_log: _ExecLog | None = None):
        self.board = board
        self.elf = elf
        self.process = process
        self.port = port
        self.log_path = log_path
        self.link: Link | None = None
        self.exec_log = exec_log

    @property
    def exec_log_error(self) -> BaseException | None:
        return self.exec_log.error if self.exec_log else None

    @property
    def returncode(self) -> int | None:
        return self.process.poll()

    def log_tail(self, n: int = 5) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        lines = [line for line in lines if "QEMU waiting for connection" not in line]
        important = [line for line in lines if re.search(r"qemu|fatal|error|lockup", line, re.IGNORECASE)]
        return " | ".join(important[:n] or lines[-n:])

    def describe(self) -> str:
        """QEMU's state, for error messages."""
        try:
            code = self.process.wait(0.3)  # a closed port usually means QEMU is exiting: let it finish
        except subprocess.TimeoutExpired:
            code = None
        log = self.log_tail()
        says = f"; QEMU says: {log}" if log else ""
        if code is None and self.link is not None and self.link.heard:
            return says[2:]  # the firmware is up and talking: the link says it is still running
        if code is None:
            return (f"QEMU ({self.board.qemu_machine}, {self.elf.name}) is still running but nothing at all came "
                    f"from the firmware (built for another board? stuck?)" + says)
        how = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return f"QEMU ({self.board.qemu_machine}, {self.elf.name}) {how}" + says

    def kill(self) -> None:
        """Kill QEMU now (the link then reports BoardGone)."""
        if self.process.poll() is None:
            self.process.kill()

    def wait(self, timeout: float) -> int | None:
        """Wait up to `timeout` s for QEMU to exit by itself (after QUIT); its exit code or None."""
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self, grace: float = 2.0) -> int:
        """Close the link, let QEMU exit for `grace` s if it is already ending, else stop it; reap it."""
        if self.link is not None:
            self.link.close()
        if self.process.poll() is None:
            try:
                self.process.wait(grace if self._quitting() else 0.05)
            except subprocess.TimeoutExpired:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(2.0)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        try:
            self.log_path.unlink()
        except OSError:
            pass
        if self.exec_log is not None:
            self.exec_log.finish()
        return self.process.returncode

    def _quitting(self) -> bool:
        return self.link is not None and self.link.quit_sent

    def __enter__(self) -> QemuSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_qemu(board: Board, elf: str | os.PathLike, *, timeout: float = 10.0, connect_timeout: float = 10.0,
               extra_args: Sequence[str] = (), exec_log: Callable[[TextIO], None] | None = None) -> QemuSession:
    """Start QEMU for `board` with `elf` and connect a Link (session.link) with answer timeout `timeout`.

    exec_log: called in a thread with QEMU's execution log as a text stream (see the module doc)."""
    elf_path = Path(elf).resolve()
    if not elf_path.is_file():
        raise QemuError(f"firmware {elf_path} does not exist")
    qemu_command(board, elf_path, 0)  # a board QEMU cannot run is an error before anything starts
    if shutil.which(QEMU) is None:
        raise QemuError(f"{QEMU} not found on PATH (apt-get install qemu-system-arm)")
    last_problem = ""
    for _attempt in range(3):  # a port taken between free_port() and QEMU's bind: try another
        session = _spawn(board, elf_path, free_port(), extra_args, exec_log)
        try:
            session.link = _connect(session, timeout, connect_timeout)
            session.link.wait_for_boot(min(timeout, 2.0))  # requests sent before the UART is on may be lost
            return session
        except _PortTaken as exc:
            last_problem = str(exc)
            session.close()
        except BaseException:
            session.close()
            raise
    raise QemuError(f"QEMU could not listen on a free port: {last_problem}")


class _PortTaken(Exception):
    pass


def _spawn(board: Board, elf: Path, port: int, extra_args: Sequence[str],
           consumer: Callable[[TextIO], None] | None = None) -> QemuSession:
    fd, log_name = tempfile.mkstemp(prefix="mcuforge-qemu-", suffix=".log")
    exec_log = _ExecLog(consumer) if consumer is not None else None
    args = [*extra_args, *exec_log.qemu_args()] if exec_log else extra_args
    try:
        process = subprocess.Popen(qemu_command(board, elf, port, args), stdin=subprocess.DEVNULL,
                                   stdout=fd, stderr=subprocess.STDOUT, start_new_session=True)
    except BaseException:
        if exec_log:
            exec_log.finish()
        raise
    finally:
        os.close(fd)
    return QemuSession(board, elf, process, port, Path(log_name), exec_log)


class _ExecLog:
    """QEMU's -d log through a named pipe into `consumer`, read by a thread started before QEMU."""

    def __init__(self, consumer: Callable[[TextIO], None]):
        self.consumer = consumer
        self.error: BaseException | None = None
        self.dir = Path(tempfile.mkdtemp(prefix="mcuforge-exec-"))
        self.fifo = self.dir / "exec.log"
        os.mkfifo(self.fifo)
        self.thread = threading.Thread(target=self._read, name="qemu-exec-log", daemon=True)
        self.thread.start()

    def qemu_args(self) -> list[str]:
        return ["-d", "in_asm,exec,nochain", "-D", str(self.fifo)]

    def _read(self) -> None:
        with open(self.fifo, encoding="ascii", errors="replace") as stream:
            try:
                self.consumer(stream)
            except BaseException as exc:  # noqa: BLE001 - reported by finish(); QEMU must not block on the pipe
                self.error = exc
            for _ in stream:
                pass

    def finish(self) -> None:
        """After QEMU has ended: let the reader reach the end of the log, then remove the pipe."""
        while self.thread.is_alive():
            try:  # if QEMU never opened the pipe, the reader waits in open(): a writer that leaves ends it
                os.close(os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
            self.thread.join(0.2)
        shutil.rmtree(self.dir, ignore_errors=True)


def _connect(session: QemuSession, timeout: float, connect_timeout: float) -> Link:
    url = f"socket://127.0.0.1:{session.port}"
    deadline = time.monotonic() + connect_timeout
    while True:
        code = session.process.poll()
        if code is not None:
            log = session.log_tail()
            if "Address already in use" in log or "Failed to bind" in log:
                raise _PortTaken(log)
            raise QemuError(f"QEMU ({session.board.qemu_machine}) exited with code {code} before the firmware "
                            f"started: {log or 'no message'}")
        try:
            port = serial.serial_for_url(url, baudrate=115200, timeout=0.05, write_timeout=timeout)
            return Link(port, name=f"{session.board.name} on QEMU", timeout=timeout, describe=session.describe)
        except (serial.SerialException, OSError):
            if time.monotonic() > deadline:
                raise QemuError(f"could not connect to QEMU's serial port {url} within {connect_timeout} s: "
                                f"{session.describe()}") from None
            time.sleep(0.02)
