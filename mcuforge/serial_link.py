"""The host side of the firmware protocol (firmware/runtime/PROTOCOL.md), over pyserial.

One code path for QEMU and boards: `Link.open("socket://127.0.0.1:PORT")` for QEMU's
`-serial tcp:...`, `Link.open("/dev/ttyACM0", baud=115200)` for a board's virtual COM port.

    with Link.open(url) as link:
        info = link.info()
        link.write_input(0, data)
        instructions = link.run(profile=True)
        out = link.read_output(0)
        per_layer = link.read_profile().layer_counts

Every failure is a `LinkError` (a McuforgeError): `LinkTimeout` (no answer in time), `LinkCRCError`
(a damaged frame from the target), `BoardGone` (the port closed: QEMU exited, board unplugged),
`BoardReset` (the firmware restarted while a request was pending), `TargetError` (the firmware
answered with an error status, e.g. a wrong-sized input, a fault; `GuardTripped` when a guard
build found a canary overwritten), `ProtocolError` (an answer that makes no sense).

Faults on the line are retried where that is safe (PROTOCOL.md, "Faults on the line"): requests
that only read or overwrite state (INFO, WRITE_INPUT, READ_OUTPUT, READ_PROFILE, RESET) are sent again,
up to `retries` times, when the request or its answer arrived damaged or the answer stopped half
way; RUN, PROBE and QUIT are never resent (a run consumes its inputs: `device.run_sets` repeats
the whole input set instead). After a timeout the next request first waits for the line to stay
quiet for `resync_pause` seconds, so the firmware has given up any frame it was still reading.
"""

from __future__ import annotations

import itertools
import struct
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import serial

from mcuforge.errors import McuforgeError

PROTOCOL_VERSION = 2
MAGIC = b"\xa5\x5a"
RESPONSE = 0x80
MAX_PAYLOAD = 0x01000000
HEADER = struct.Struct("<BBI")  # command, status, length

CMD_INFO = 0x01
CMD_WRITE_INPUT = 0x02
CMD_RUN = 0x03
CMD_READ_OUTPUT = 0x04
CMD_READ_PROFILE = 0x05
CMD_QUIT = 0x06
CMD_PROBE = 0x07
CMD_RESET = 0x08
COMMAND_NAMES = {CMD_INFO: "INFO", CMD_WRITE_INPUT: "WRITE_INPUT", CMD_RUN: "RUN", CMD_READ_OUTPUT: "READ_OUTPUT",
                 CMD_READ_PROFILE: "READ_PROFILE", CMD_QUIT: "QUIT", CMD_PROBE: "PROBE", CMD_RESET: "RESET"}
RUN_PROFILE = 0x01

STATUS_OK = 0
STATUS_NAMES = {0: "OK", 1: "BAD_CRC", 2: "UNKNOWN_COMMAND", 3: "BAD_LENGTH", 4: "BAD_INDEX", 5: "WRONG_SIZE",
                6: "MODEL_ERROR", 7: "NO_PROFILE", 8: "FAULT", 9: "BOOT", 10: "GUARD"}
STATUS_BAD_CRC = 1
STATUS_UNKNOWN_COMMAND = 2
STATUS_BAD_LENGTH = 3
STATUS_BAD_INDEX = 4
STATUS_WRONG_SIZE = 5
STATUS_MODEL_ERROR = 6
STATUS_FAULT = 8
STATUS_BOOT = 9    # unsolicited (command 0x80): the firmware has just started
STATUS_GUARD = 10  # a guard build found a canary overwritten after RUN

INFO_GUARDED = 0x0001  # INFO flags: a guard build

# Requests that only read state or overwrite it with the same bytes: sending one twice does what
# sending it once does, so a damaged or truncated exchange is simply repeated.
IDEMPOTENT = frozenset({CMD_INFO, CMD_WRITE_INPUT, CMD_READ_OUTPUT, CMD_READ_PROFILE, CMD_RESET})
GUARD_CANARIES = ("arena-start", "arena-end", "stack-limit")


class LinkError(McuforgeError):
    """A problem talking to the target over the serial link."""


class LinkTimeout(LinkError):
    """The target did not answer in time. `frame_started`: part of an answer frame had arrived (a
    truncated answer) rather than nothing at all."""

    def __init__(self, message: str, frame_started: bool = False):
        super().__init__(message)
        self.frame_started = frame_started


class LinkCRCError(LinkError):
    """A frame from the target arrived damaged."""


class BoardGone(LinkError):
    """The port closed or disappeared: QEMU exited, or the board was unplugged or reset."""


class BoardReset(LinkError):
    """The firmware announced a fresh start (its BOOT frame) while a request was pending: the board
    reset (watchdog, brown-out, reset button, a fault on a real board) and lost its state."""


class ProtocolError(LinkError):
    """The target answered something the protocol does not allow."""


class TargetError(LinkError):
    """The firmware answered a request with an error status; `message` is its own explanation."""

    def __init__(self, command: int, status: int, message: str):
        self.command, self.status, self.message = command, status, message
        name = COMMAND_NAMES.get(command, f"command 0x{command:02x}")
        super().__init__(f"target rejected {name}: {STATUS_NAMES.get(status, status)}: {message}")


class GuardTripped(TargetError):
    """A guard build found canaries overwritten after a run; `canaries` names them (a subset of
    GUARD_CANARIES: "arena-start", "arena-end", "stack-limit")."""

    def __init__(self, command: int, status: int, message: str):
        head, _, detail = message.partition(":")
        self.canaries = tuple(c for c in head.split(",") if c in GUARD_CANARIES)
        super().__init__(command, status, message)
        what = " and ".join(self.canaries) or "an unknown"
        causes = []
        if {"arena-start", "arena-end"} & set(self.canaries):
            causes.append("a kernel wrote outside the model's arena")
        if "stack-limit" in self.canaries:
            causes.append("the stack reached its limit (raise the board's memory.stack_size)")
        self.args = (f"guard tripped: the {what} canar{'ies were' if len(self.canaries) > 1 else 'y was'} "
                     f"{detail.strip()}" + (f"; {' and '.join(causes)}" if causes else ""),)


@dataclass(frozen=True)
class TargetInfo:
    protocol_version: int
    model_name: str
    board_name: str
    num_inputs: int
    num_outputs: int
    num_layers: int
    arena_size: int
    input_sizes: tuple[int, ...]
    output_sizes: tuple[int, ...]
    unit: str                  # what counts are: "instructions" (QEMU) or "cycles"
    units_per_tick: Fraction   # the timer's resolution in those units
    guarded: bool = False      # a guard build: canaries checked after every RUN


@dataclass(frozen=True)
class RunResult:
    count: int         # instructions (QEMU) or cycles (board) the inference took
    stack_bytes: int   # peak stack use of the firmware during the run


@dataclass(frozen=True)
class Profile:
    timestamps: tuple[int, ...]  # when layer i started, relative to the run's start; the last: when it ended

    @property
    def layer_counts(self) -> tuple[int, ...]:
        """Instructions (or cycles) per layer."""
        t = self.timestamps
        return tuple(b - a for a, b in itertools.pairwise(t))

    @property
    def total(self) -> int:
        return self.timestamps[-1] - self.timestamps[0] if self.timestamps else 0


def encode_frame(command: int, payload: bytes = b"", status: int = 0) -> bytes:
    """A complete frame: magic, header, payload, CRC-32 (zlib) of header + payload."""
    body = HEADER.pack(command, status, len(payload)) + payload
    return MAGIC + body + struct.pack("<I", zlib.crc32(body))


class Link:
    """A framed request/response channel to the firmware harness."""

    def __init__(self, port: serial.SerialBase, *, name: str, timeout: float = 10.0, baud: int = 115200,
                 describe: Callable[[], str] | None = None, retries: int = 2, resync_pause: float = 2.5):
        self.port = port
        self.name = name
        self.timeout = timeout
        self.baud = baud
        self.describe = describe   # extra context for error messages (e.g. QEMU's state)
        self.retries = retries     # extra attempts for an IDEMPOTENT request hit by a line fault
        self.resync_pause = resync_pause  # quiet line required after a timeout (> the firmware's frame gap)
        self.skipped_bytes = 0     # garbage seen before frames, for diagnostics
        self.retried = 0           # requests sent again after a line fault, for diagnostics
        self.boots_seen = 0        # BOOT frames seen
        self.timeouts = 0          # answers waited for in vain (a timeout ran out), for diagnostics
        self.heard = False         # any intact frame came from the firmware (its BOOT frame, an answer)
        self.run_note = ""         # how the caller chose RUN's timeout, for the message when it runs out
        self.quit_sent = False
        self._answered = False     # an answer came from the running firmware: a BOOT now means a reset
        self._after_timeout = False
        self._info: TargetInfo | None = None

    # ---------------------------------------------------------------- opening and closing

    @classmethod
    def open(cls, url_or_device: str, baud: int = 115200, timeout: float = 10.0,
             describe: Callable[[], str] | None = None) -> Link:
        """Open `socket://host:port` (QEMU) or a device path such as /dev/ttyACM0 (a board)."""
        try:
            port = serial.serial_for_url(url_or_device, baudrate=baud, timeout=0.05, write_timeout=timeout)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise BoardGone(f"cannot open serial port {url_or_device}: {exc}") from None
        return cls(port, name=url_or_device, timeout=timeout, baud=baud, describe=describe)

    def close(self) -> None:
        try:
            self.port.close()
        except (serial.SerialException, OSError):
            pass

    def __enter__(self) -> Link:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- the protocol's commands

    def info(self) -> TargetInfo:
        p = self.request(CMD_INFO)
        try:
            version, flags, n_in, n_out, n_layers, arena = struct.unpack_from("<HHIIII", p, 0)
            pos = 20
            sizes = struct.unpack_from(f"<{n_in + n_out}I", p, pos)
            pos += 4 * (n_in + n_out)
            num, den = struct.unpack_from("<II", p, pos)
            pos += 8
            strings = []
            for _ in range(3):
                n = p[pos]
                strings.append(p[pos + 1:pos + 1 + n].decode())
                pos += 1 + n
        except (struct.error, IndexError, UnicodeDecodeError):
            raise ProtocolError(f"malformed INFO answer from {self.name} ({len(p)} bytes)") from None
        if version != PROTOCOL_VERSION:
            raise ProtocolError(f"{self.name} speaks protocol version {version}, this host speaks {PROTOCOL_VERSION}")
        self._info = TargetInfo(protocol_version=version, model_name=strings[0], board_name=strings[1],
                                num_inputs=n_in, num_outputs=n_out, num_layers=n_layers, arena_size=arena,
                                input_sizes=tuple(sizes[:n_in]), output_sizes=tuple(sizes[n_in:]), unit=strings[2],
                                units_per_tick=Fraction(num, den), guarded=bool(flags & INFO_GUARDED))
        return self._info

    def write_input(self, index: int, data: bytes) -> None:
        """Copy `data` into input `index`; the firmware rejects a wrong index or size (TargetError)."""
        self.request(CMD_WRITE_INPUT, struct.pack("<I", index) + bytes(data))

    def run(self, profile: bool = False, timeout: float | None = None) -> int:
        """Run one inference; returns its instructions (QEMU) or cycles (board)."""
        return self.run_stats(profile, timeout).count

    def run_stats(self, profile: bool = False, timeout: float | None = None) -> RunResult:
        p = self.request(CMD_RUN, bytes([RUN_PROFILE if profile else 0]), timeout=timeout)
        if len(p) != 12:
            raise ProtocolError(f"RUN answer from {self.name} has {len(p)} bytes, expected 12")
        count, stack = struct.unpack("<QI", p)
        return RunResult(count=count, stack_bytes=stack)

    def read_output(self, index: int) -> bytes:
        return self.request(CMD_READ_OUTPUT, struct.pack("<I", index))

    def read_profile(self) -> Profile:
        """Per-layer timestamps of the last run(profile=True)."""
        p = self.request(CMD_READ_PROFILE)
        if len(p) < 4:
            raise ProtocolError(f"READ_PROFILE answer from {self.name} has {len(p)} bytes")
        (n,) = struct.unpack_from("<I", p)
        if len(p) != 4 + 8 * (n + 1):
            raise ProtocolError(f"READ_PROFILE answer from {self.name}: {len(p)} bytes for {n} layers")
        return Profile(timestamps=struct.unpack_from(f"<{n + 1}Q", p, 4))

    def probe(self, layer: int, offset: int, length: int, input0_offset: int, timeout: float | None = None) -> bytes:
        """Run once more and read `length` arena bytes at `offset` right after `layer` ran (per-layer
        readback: what a layer wrote, before later layers reuse the bytes)."""
        payload = struct.pack("<IIII", layer, offset, length, input0_offset)
        data = self.request(CMD_PROBE, payload, timeout=timeout)
        if len(data) != length:
            raise ProtocolError(f"PROBE answer from {self.name} has {len(data)} bytes, expected {length}")
        return data

    def reset(self) -> None:
        """Put the model's state (LSTM, SVDF) back to its initial value; nothing for a model without."""
        self.request(CMD_RESET)

    def quit(self, code: int = 0) -> None:
        """Ask the firmware to end (semihosting exit on QEMU, reset on a board)."""
        self.quit_sent = True
        try:
            self.request(CMD_QUIT, struct.pack("<i", code), timeout=min(self.timeout, 5.0))
        except BoardGone:
            pass  # it may be gone before its answer is read: that is what was asked

    # ---------------------------------------------------------------- frames

    def request(self, command: int, payload: bytes = b"", timeout: float | None = None) -> bytes:
        """Send one request and return the payload of its OK answer (TargetError otherwise).

        Sent again (up to `retries` times) when the firmware says the request arrived damaged
        (BAD_CRC: it was not executed), and, for an IDEMPOTENT request, when the answer arrived
        damaged or stopped half way; the last failure is raised, saying how many attempts were made."""
        attempts = 1 + self.retries
        for attempt in range(1, attempts + 1):
            try:
                return self._exchange(command, payload, timeout)
            except (LinkCRCError, LinkTimeout, TargetError) as exc:
                if attempt == attempts or not _line_fault(exc, command):
                    if attempt > 1:
                        exc.args = (f"{exc.args[0]} (after {attempt} attempts)",)
                    raise
                self.retried += 1
        raise AssertionError("unreachable")

    def _exchange(self, command: int, payload: bytes, timeout: float | None) -> bytes:
        if self._after_timeout:
            self._wait_quiet()
        try:
            self.port.reset_input_buffer()  # drop anything stale: each answer belongs to one request
        except (serial.SerialException, OSError) as exc:
            raise self._gone(exc) from None
        self.write_raw(encode_frame(command, payload))
        return self.receive(command, timeout=self._budget(timeout, len(payload)))

    def _wait_quiet(self) -> None:
        """Wait until the line has been quiet for `resync_pause` s (bounded by the timeout plus the
        pause): a late answer is dropped, and the firmware gives up any frame it was still reading."""
        end = time.monotonic() + self.timeout + self.resync_pause
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < self.resync_pause:
            try:
                if self.port.read(4096):
                    quiet_since = time.monotonic()
            except (serial.SerialException, OSError) as exc:
                raise self._gone(exc) from None
            if time.monotonic() > end:
                raise LinkTimeout(f"{self.name} keeps sending: the line never went quiet for "
                                  f"{self.resync_pause} s{self._context()}")
        self._after_timeout = False

    def receive(self, command: int, timeout: float | None = None) -> bytes:
        """The answer to `command`: its payload if OK, else TargetError with the firmware's message."""
        budget = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + budget
        while True:
            try:
                got, status, payload = self.receive_frame(max(0.0, deadline - time.monotonic()))
            except LinkTimeout as exc:
                self._after_timeout = True  # the next request first waits for a quiet line
                self.timeouts += 1
                if exc.frame_started or not self.heard:
                    raise
                name = COMMAND_NAMES.get(command, hex(command))
                note = f" ({self.run_note})" if self.run_note and command in (CMD_RUN, CMD_PROBE) else ""
                raise LinkTimeout(f"no answer to {name} from {self.name}: still running after {budget:.3g} s"
                                  f"{note}{self._context()}") from None
            self.heard = True
            if got == RESPONSE and status == STATUS_BOOT:
                self.boots_seen += 1
                if self._answered:  # this firmware had answered before: it restarted under our request
                    self._answered = False
                    raise BoardReset(f"{self.name} restarted while handling "
                                     f"{COMMAND_NAMES.get(command, hex(command))} ({payload.decode(errors='replace')}):"
                                     f" its inputs and outputs are lost{self._context()}")
                continue  # the power-on announcement, sent before our request was read: the answer follows
            break
        self._answered = status != STATUS_FAULT  # after a fault report the firmware ends (a board restarts)
        if status == STATUS_FAULT:  # the firmware crashed: its fault report answers whatever was asked
            raise TargetError(command, status, payload.decode(errors="replace"))
        if status == STATUS_BAD_CRC:  # the request was damaged, perhaps in its command byte
            raise TargetError(command, status, payload.decode(errors="replace"))
        if status == STATUS_GUARD and got == command | RESPONSE:
            raise GuardTripped(command, status, payload.decode(errors="replace"))
        if got != command | RESPONSE:
            raise ProtocolError(f"{self.name} answered {COMMAND_NAMES.get(got & 0x7F, hex(got))} to "
                                f"{COMMAND_NAMES.get(command, hex(command))}")
        if status != STATUS_OK:
            raise TargetError(command, status, payload.decode(errors="replace"))
        return payload

    def write_raw(self, data: bytes) -> None:
        try:
            self.port.write(data)
            self.port.flush()
        except serial.SerialTimeoutException:
            raise LinkTimeout(f"{self.name} does not accept data (write timed out){self._context()}") from None
        except (serial.SerialException, OSError) as exc:
            raise self._gone(exc) from None

    def wait_for_boot(self, timeout: float) -> bool:
        """Wait up to `timeout` s for the firmware's power-on BOOT frame: True if it came. A UART that
        drops bytes until the firmware enables it (the STM32F4 USART's model in QEMU) must not get a
        request before then. A silent or vanished board is left for the first request to report."""
        try:
            got, status, _ = self.receive_frame(timeout)
        except (LinkTimeout, BoardGone):
            return False
        if got == RESPONSE and status == STATUS_BOOT:
            self.boots_seen += 1
            return True
        return False

    def receive_frame(self, timeout: float | None = None) -> tuple[int, int, bytes]:
        """(command, status, payload) of the next intact frame; bytes before its magic are skipped."""
        budget = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + budget
        prev = b""
        while True:
            b = self._read(1, deadline, started=False, budget=budget)
            if prev == MAGIC[:1] and b == MAGIC[1:]:
                break
            if prev:
                self.skipped_bytes += 1
            prev = b
        header = self._read(HEADER.size, deadline, started=True)
        command, status, length = HEADER.unpack(header)
        if length > MAX_PAYLOAD:
            raise LinkCRCError(f"damaged frame from {self.name}: implausible length {length}")
        rest = self._read(length + 4, deadline, started=True)
        payload, (crc,) = rest[:length], struct.unpack("<I", rest[length:])
        if zlib.crc32(header + payload) != crc:
            raise LinkCRCError(f"damaged frame from {self.name}: CRC mismatch on a {length}-byte "
                               f"{COMMAND_NAMES.get(command & 0x7F, hex(command))} answer")
        return command, status, payload

    def _read(self, n: int, deadline: float, started: bool = False, budget: float = 0.0) -> bytes:
        buf = bytearray()
        while len(buf) < n:
            if time.monotonic() > deadline:
                if started:
                    raise LinkTimeout(f"no answer from {self.name} in time: the answer stopped half way ({len(buf)}/{n} "
                                      f"bytes of a frame part arrived){self._context()}", frame_started=True)
                raise LinkTimeout(f"no answer from {self.name} in {budget:.3g} s{self._context()}")
            try:
                chunk = self.port.read(n - len(buf))
            except (serial.SerialException, OSError) as exc:
                raise self._gone(exc) from None
            buf += chunk
        return bytes(buf)

    def _budget(self, timeout: float | None, nbytes: int) -> float:
        """The time allowed for an answer: the timeout plus what `nbytes` take on the wire, twice over."""
        base = self.timeout if timeout is None else timeout
        return base + 2.0 * nbytes * 10 / self.baud

    def _gone(self, exc: BaseException) -> BoardGone:
        return BoardGone(f"{self.name} is gone ({exc}){self._context()}")

    def _context(self) -> str:
        if self.describe is None:
            return ""
        extra = self.describe()
        return f": {extra}" if extra else ""


def _line_fault(exc: LinkError, command: int) -> bool:
    """A fault of the line, not of the target, after which sending `command` again is safe."""
    if isinstance(exc, TargetError):
        return exc.status == STATUS_BAD_CRC  # the firmware ignored the damaged request: resending is safe
    if command not in IDEMPOTENT:
        return False  # it may have been executed: the caller decides (device.run_sets repeats the input set)
    if isinstance(exc, LinkTimeout):
        return exc.frame_started  # silence is not retried: a board that never answers fails in `timeout`
    return isinstance(exc, LinkCRCError)
