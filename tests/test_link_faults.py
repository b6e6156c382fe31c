"""The serial link under faults, against a fake endpoint and against the firmware on QEMU.

The fake endpoint (`FakeBoard`) is a thread that speaks the firmware protocol over a TCP socket (the
host connects with `Link.open("socket://...")`, the same code path as QEMU) and plays the echo test
model (firmware/runtime/test_model: output i = input i reversed, each byte + 1). A script of faults,
one per request in order, makes it misbehave: garbage before the answer, a damaged answer, an answer
cut short, a damaged request (BAD_CRC), silence, a reset (its BOOT frame instead of the answer), a
late answer, or the connection closed. Every case must end, within a bound the test checks, with a
clear mcuforge error or with success.

The QEMU cases (marked slow) send malformed frames to the real firmware: a frame cut short (the
firmware abandons it when the line goes quiet), oversize and implausible lengths, unknown commands,
bad lengths per command; afterwards it must still answer correctly.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import struct
import threading
import time
import zlib
from collections import deque
from contextlib import contextmanager

import numpy as np
import pytest
import serial
from mcuforge.boards import load_board
from mcuforge.ir.types import TensorType

from mcuforge.device import run_sets
from mcuforge.firmware_build import build_test_firmware, missing_tools
from mcuforge.qemu import QEMU, start_qemu
from mcuforge.serial_link import (
    CMD_INFO,
    CMD_PROBE,
    CMD_READ_OUTPUT,
    CMD_READ_PROFILE,
    CMD_RESET,
    CMD_RUN,
    CMD_WRITE_INPUT,
    HEADER,
    MAGIC,
    PROTOCOL_VERSION,
    RESPONSE,
    STATUS_BAD_CRC,
    STATUS_BAD_INDEX,
    STATUS_BAD_LENGTH,
    STATUS_BOOT,
    STATUS_GUARD,
    STATUS_UNKNOWN_COMMAND,
    STATUS_WRONG_SIZE,
    BoardGone,
    BoardReset,
    GuardTripped,
    Link,
    LinkCRCError,
    LinkTimeout,
    ProtocolError,
    TargetError,
    encode_frame,
)

SIZES = (37, 5)
TIMEOUT = 1.0   # the links' answer timeout in these tests
PAUSE = 0.5     # the links' resync pause (the fake endpoint has no frame gap to wait out)


def expected_output(data: bytes) -> bytes:
    return bytes((b + 1) & 0xFF for b in reversed(data))


@pytest.fixture(autouse=True)
def hang_guard():
    """Fail (instead of hanging the suite) if a test runs for more than 30 s."""
    def expired(signum, frame):
        raise AssertionError("the test hung for 30 s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@contextmanager
def waits_out(link: Link, timeouts: int):
    """Assert that the block waits out exactly `timeouts` answer timeouts (a count, not a clock: a
    fault that is handled at once costs none, one the host must wait for costs one)."""
    before = link.timeouts
    yield
    assert link.timeouts - before == timeouts, f"{link.timeouts - before} timeouts waited out, expected {timeouts}"


# ---------------------------------------------------------------- the fake endpoint

class FakeBoard(threading.Thread):
    """The echo model behind the firmware protocol, on a TCP socket, with scripted faults.

    `script` holds one fault name (or None) per request, consumed in order; requests beyond it are
    answered normally. Faults: "boot" (a BOOT frame first), "garbage", "bogus", "corrupt", "truncate", "bad_crc", "silent", "reset",
    "late", "close", "guard"."""

    def __init__(self, script=(), boot: bool = True):
        super().__init__(daemon=True)
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1)
        self.url = f"socket://127.0.0.1:{self.server.getsockname()[1]}"
        self.script = deque(script)
        self.boot = boot
        self.requests: list[int] = []  # commands received intact, in order
        self.runs = 0
        self.resets = 0
        self.conn: socket.socket | None = None
        self._halt = threading.Event()
        self.inputs = [bytes(n) for n in SIZES]
        self.outputs = [bytes(n) for n in SIZES]
        self.start()

    # -------------------------------------------------------- plumbing

    def run(self) -> None:
        try:
            self.conn, _ = self.server.accept()
            self.conn.settimeout(0.05)
            if self.boot:
                self.send(encode_frame(RESPONSE, b"firmware for model echo on fake started", STATUS_BOOT))
            self.rx = bytearray()
            while not self._halt.is_set():
                frame = self.next_frame()
                if frame is not None:
                    self.answer(*frame)
        except (OSError, _Closed):
            pass
        finally:
            if self.conn is not None:
                self.conn.close()
            self.server.close()

    def stop(self) -> None:
        self._halt.set()
        self.join(5.0)

    def send(self, data: bytes) -> None:
        self.conn.sendall(data)

    def read(self, n: int) -> bytes:
        while len(self.rx) < n:
            if self._halt.is_set():
                raise _Closed()
            try:
                chunk = self.conn.recv(65536)
            except socket.timeout:
                continue
            if not chunk:
                raise _Closed()
            self.rx += chunk
        out, self.rx[:n] = bytes(self.rx[:n]), b""
        return out

    def next_frame(self):
        """(command, payload) of the next request; a damaged one is answered BAD_CRC here."""
        while self.read(1) != MAGIC[:1] or self.rx[:1] != MAGIC[1:]:
            pass
        self.read(1)
        header = self.read(HEADER.size)
        command, _, length = HEADER.unpack(header)
        body = self.read(length + 4)
        payload, (crc,) = body[:length], struct.unpack("<I", body[length:])
        if zlib.crc32(header + payload) != crc:
            self.send(encode_frame(command | RESPONSE, b"CRC mismatch", STATUS_BAD_CRC))
            return None
        self.requests.append(command)
        return command, payload

    # -------------------------------------------------------- the echo model

    def execute(self, command: int, payload: bytes) -> tuple[int, bytes]:
        if command == CMD_INFO:
            p = struct.pack("<HHIIII", PROTOCOL_VERSION, 0, 2, 2, 2, 160) + struct.pack("<4I", *SIZES, *SIZES)
            p += struct.pack("<II", 40, 1)
            for s in (b"echo", b"fake", b"instructions"):
                p += bytes([len(s)]) + s
            return 0, p
        if command == CMD_WRITE_INPUT:
            (index,) = struct.unpack_from("<I", payload)
            if index >= len(SIZES):
                return STATUS_BAD_INDEX, b"input index out of range"
            if len(payload) - 4 != SIZES[index]:
                return STATUS_WRONG_SIZE, f"input {index} takes {SIZES[index]} bytes".encode()
            self.inputs[index] = payload[4:]
            return 0, b""
        if command == CMD_RUN:
            self.runs += 1
            self.outputs = [expected_output(x) for x in self.inputs]
            self.inputs = [bytes(n) for n in SIZES]  # like an arena: the run consumes its inputs
            return 0, struct.pack("<QI", 1000, 400)
        if command == CMD_READ_PROFILE:
            return 0, struct.pack("<I3Q", 2, 0, 600, 1000)
        if command == CMD_RESET:
            self.resets += 1
            return 0, b""
        if command == CMD_READ_OUTPUT:
            (index,) = struct.unpack("<I", payload)
            return 0, self.outputs[index]
        return STATUS_UNKNOWN_COMMAND, b"unknown command"

    def answer(self, command: int, payload: bytes) -> None:
        fault = self.script.popleft() if self.script else None
        if fault == "bad_crc":  # as if the request had arrived damaged: not executed
            self.send(encode_frame(command | RESPONSE, b"CRC mismatch: request ignored", STATUS_BAD_CRC))
            return
        if fault == "silent":
            return
        if fault == "close":
            raise _Closed()
        if fault == "boot":
            self.send(encode_frame(RESPONSE, b"firmware for model echo on fake started", STATUS_BOOT))
        if fault == "reset":  # the board restarts: state lost, BOOT frame, no answer
            self.inputs = [bytes(n) for n in SIZES]
            self.outputs = [bytes(n) for n in SIZES]
            self.send(encode_frame(RESPONSE, b"firmware for model echo on fake started", STATUS_BOOT))
            return
        status, out = self.execute(command, payload)
        if fault == "guard":
            status, out = STATUS_GUARD, b"arena-end,stack-limit: overwritten during the run of model echo: ..."
        frame = bytearray(encode_frame(command | RESPONSE, out, status))
        if fault == "garbage":  # line noise, with lone magic bytes
            frame[:0] = b"\x00\xa5\x11\xa5\xa5\x00" + bytes(range(40))
        elif fault == "bogus":  # a full magic, then a header with an implausible length
            frame[:0] = b"\x5a\xa5\x5a\xff\xff\xff\xff\xff\xff" + bytes(range(40))
        elif fault == "corrupt":
            frame[len(frame) // 2] ^= 0x04
        elif fault == "truncate":
            frame = frame[: len(frame) // 2 + 1]
        elif fault == "late":
            time.sleep(TIMEOUT + 0.05)  # well within the host's resync pause after its timeout
        self.send(bytes(frame))


class _Closed(Exception):
    pass


@contextmanager
def fake(script=(), boot: bool = True, retries: int = 2):
    board = FakeBoard(script, boot)
    link = Link.open(board.url, timeout=TIMEOUT)
    link.resync_pause = PAUSE
    link.retries = retries
    try:
        yield board, link
    finally:
        link.close()
        board.stop()


def echo_round(link: Link, seed: int = 0) -> None:
    """Write both inputs, run, and check both outputs."""
    rng = np.random.default_rng(seed)
    data = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in SIZES]
    for i, d in enumerate(data):
        link.write_input(i, d)
    link.run()
    for i, d in enumerate(data):
        assert link.read_output(i) == expected_output(d)


# ---------------------------------------------------------------- fault cases, fake endpoint

def test_clean_session_skips_the_boot_frame():
    """The firmware announces its start with a BOOT frame; before the first answer it is skipped
    (here it comes after the first request was read, so the host cannot have dropped it as stale)."""
    with fake(["boot"], boot=False) as (board, link), waits_out(link, 0):
        info = link.info()
        assert (info.model_name, info.board_name, info.input_sizes, info.guarded) == ("echo", "fake", SIZES, False)
        echo_round(link)
        assert link.boots_seen == 1 and link.retried == 0


def test_garbage_before_a_frame_is_skipped():
    with fake(["garbage", "garbage"]) as (board, link), waits_out(link, 0):
        assert link.info().model_name == "echo"
        link.write_input(0, bytes(37))
        assert link.skipped_bytes >= 2 * 46 and link.retried == 0


def test_bogus_header_in_garbage_costs_one_retry():
    """A full magic in the noise followed by an implausible length reads as a damaged frame: an
    idempotent request is sent again and its answer read."""
    with fake(["bogus"]) as (board, link), waits_out(link, 0):
        assert link.info().model_name == "echo"
        assert link.retried == 1 and board.requests == [CMD_INFO, CMD_INFO]


@pytest.mark.parametrize("command", ["info", "write_input", "read_output", "read_profile"])
def test_damaged_answer_to_an_idempotent_request_is_retried(command):
    # WRITE_INPUT's answer has no payload: the flipped bit lands in its length, so the host waits for
    # bytes that never come (one timeout); elsewhere it lands in the payload (a CRC error, at once).
    with fake() as (board, link), waits_out(link, 1 if command == "write_input" else 0):
        echo_round(link)  # leaves outputs and a profile to read
        board.script.append("corrupt")
        if command == "info":
            assert link.info().num_inputs == 2
        elif command == "write_input":
            link.write_input(1, b"abcde")
        elif command == "read_output":
            assert len(link.read_output(0)) == 37
        else:
            assert link.read_profile().layer_counts == (600, 400)
        assert link.retried == 1


def test_damaged_answers_that_persist_give_a_clear_crc_error():
    with fake(["corrupt"] * 3) as (board, link), waits_out(link, 0):
        with pytest.raises(LinkCRCError, match=r"damaged frame from socket://.*: CRC mismatch on a \d+-byte INFO "
                                               r"answer \(after 3 attempts\)"):
            link.info()
        assert board.requests == [CMD_INFO] * 3
        assert link.info().num_outputs == 2  # and the next request works


def test_damaged_run_answer_is_not_resent_by_the_link_but_the_input_set_is_repeated():
    with fake() as (board, link), waits_out(link, 0):
        board.script.extend([None, None, "corrupt"])  # write, write, RUN's answer damaged
        with pytest.raises(LinkCRCError, match="CRC mismatch on a 12-byte RUN answer"):
            echo_round(link)
        assert board.runs == 1, "RUN must not be resent: it consumed its inputs"

        board.script.extend([None, None, None, "corrupt"])  # INFO, write, write, RUN's answer damaged
        types = [TensorType((n,), "uint8") for n in SIZES]
        x = [np.arange(n, dtype=np.uint8) for n in SIZES]
        res = run_sets(link, [x], types)  # the set is written and run again
        assert [o.tobytes() for o in res.outputs[0]] == [expected_output(a.tobytes()) for a in x]
        assert board.runs == 3 and res.counts == [1000]


def test_a_fault_in_a_sequence_repeats_the_whole_sequence_from_its_reset():
    """A model with state: RUN advances the state, so a damaged RUN answer in the middle of a sequence
    repeats the sequence from its RESET, never the one set (which would advance the state twice)."""
    with fake() as (board, link), waits_out(link, 0):
        types = [TensorType((n,), "uint8") for n in SIZES]
        x = [np.arange(n, dtype=np.uint8) for n in SIZES]
        # INFO, RESET, set 1 (write, write, RUN, READ_PROFILE, READ_OUTPUT x2), set 2's writes, its RUN damaged
        board.script.extend([None, None] + [None] * 6 + [None, None, "corrupt"])
        res = run_sets(link, [x, x, x, x], types, steps=2)
        assert [o.tobytes() for outs in res.outputs for o in outs] == [expected_output(a.tobytes()) for a in x] * 4
        assert board.resets == 3 and board.runs == 6  # sequence 1 twice (2 + 2 runs), sequence 2 once
        assert board.requests.count(CMD_RESET) == 3


def test_damaged_request_is_resent_even_for_run():
    """BAD_CRC means the firmware ignored the request, so resending is safe for every command."""
    with fake() as (board, link), waits_out(link, 0):
        link.write_input(0, bytes(37))
        board.script.extend(["bad_crc", "bad_crc"])
        assert link.run() == 1000
        assert board.runs == 1 and link.retried == 2
        board.script.extend(["bad_crc"] * 3)
        with pytest.raises(TargetError, match=r"target rejected RUN: BAD_CRC: CRC mismatch: request ignored "
                                              r"\(after 3 attempts\)") as err:
            link.run()
        assert err.value.status == STATUS_BAD_CRC and board.runs == 1


def test_truncated_answer_times_out_then_the_retry_recovers():
    with fake() as (board, link):
        echo_round(link)
        board.script.append("truncate")
        with waits_out(link, 1):
            assert len(link.read_output(1)) == 5
        assert link.retried == 1

        board.script.extend(["truncate"] * 3)
        with waits_out(link, 3), \
                pytest.raises(LinkTimeout, match=r"no answer from .* in time: the answer stopped half way "
                                                 r"\(\d+/\d+ bytes of a frame part arrived\) \(after 3 attempts\)"):
            link.info()

        board.script.append("truncate")  # RUN cut short: not resent, a clear timeout...
        with waits_out(link, 1), pytest.raises(LinkTimeout, match="stopped half way") as err:
            link.run()
        assert err.value.frame_started
        echo_round(link, seed=1)  # ...and the next frames work


def test_board_that_never_answers_times_out_once():
    """Nothing at all came (no BOOT frame, no answer): "no answer in N s", and silence is not
    retried (one request, one timeout waited out, not three)."""
    with fake(["silent"], boot=False) as (board, link):
        with waits_out(link, 1), pytest.raises(LinkTimeout, match=r"^no answer from socket://127\.0\.0\.1:\d+ in "
                                                                  r"1 s$") as err:
            link.info()
        assert board.requests == [CMD_INFO] and not err.value.frame_started
        with waits_out(link, 0):
            assert link.info().model_name == "echo"  # a board that answers again is usable


def test_firmware_that_answered_before_is_still_running():
    """A RUN that outlasts its timeout on firmware that has answered before is "still running after
    N s", with how the caller chose N; not a guess that the firmware does not answer."""
    with fake() as (board, link):
        echo_round(link)
        link.write_input(0, bytes(37))
        link.run_note = "the limit for this model: 60 s + 20 us x 12"
        board.script.append("silent")
        with waits_out(link, 1), pytest.raises(LinkTimeout, match=r"^no answer to RUN from socket://127\.0\.0\.1:\d+: "
                                                                  r"still running after 0\.5 s \(the limit for this "
                                                                  r"model: 60 s \+ 20 us x 12\)$"):
            link.run(timeout=0.5)
        assert board.runs == 1
        board.script.append("silent")  # another request: still running, without the RUN note
        with waits_out(link, 1), pytest.raises(LinkTimeout, match=r"^no answer to INFO from .*: still running after "
                                                                  r"1 s$"):
            link.info()


def test_late_answer_after_a_timeout_is_not_taken_for_the_next_one():
    with fake() as (board, link):
        echo_round(link)
        board.script.append("late")
        with pytest.raises(LinkTimeout):
            link.read_profile()
        # The READ_PROFILE answer arrives now; the next request waits for a quiet line, so it reads its own.
        assert link.read_output(0) == board.outputs[0]


def test_reset_mid_run_is_a_clear_error_and_the_input_set_is_repeated():
    with fake() as (board, link):
        link.write_input(0, bytes(37))
        board.script.append("reset")
        with waits_out(link, 0), pytest.raises(BoardReset, match=r"restarted while handling RUN \(firmware for model echo "
                                                           r"on fake started\): its inputs and outputs are lost"):
            link.run()

        board.script.extend([None, None, None, "reset"])  # INFO, write, write, RUN
        types = [TensorType((n,), "uint8") for n in SIZES]
        x = [np.arange(n, dtype=np.uint8)[::-1].copy() for n in SIZES]
        with waits_out(link, 0):
            res = run_sets(link, [x], types)
        assert [o.tobytes() for o in res.outputs[0]] == [expected_output(a.tobytes()) for a in x]

        board.script.extend([None, None, None, "reset", None, None, "reset"])  # it keeps resetting: give up
        with waits_out(link, 0), pytest.raises(BoardReset):
            run_sets(link, [x], types)


def test_port_that_disappears_is_board_gone():
    with fake() as (board, link):
        link.info()
        board.script.append("close")
        with waits_out(link, 0), pytest.raises(BoardGone, match=r"socket://127\.0\.0\.1:\d+ is gone"):
            link.run()
        with waits_out(link, 0), pytest.raises(BoardGone):
            link.info()


class _VanishingPort(serial.SerialBase):
    """A serial device that is unplugged after `ok_reads` reads: every call then raises."""

    def __init__(self, ok_reads: int):
        self.ok_reads = ok_reads
        super().__init__()

    def open(self):
        self.is_open = True

    def _reconfigure_port(self):
        pass

    def read(self, size=1):
        self.ok_reads -= 1
        if self.ok_reads < 0:
            raise serial.SerialException("device reports readiness to read but returned no data "
                                         "(device disconnected or multiple access on port?)")
        return b""

    def write(self, data):
        if self.ok_reads < 0:
            raise serial.SerialException("write failed: [Errno 5] Input/output error")
        return len(data)

    def flush(self):
        pass

    def reset_input_buffer(self):
        if self.ok_reads < 0:
            raise OSError(5, "Input/output error")


def test_unplugged_device_is_board_gone():
    link = Link(_VanishingPort(ok_reads=3), name="/dev/ttyACM0", timeout=5.0)
    with waits_out(link, 0), pytest.raises(BoardGone, match=r"/dev/ttyACM0 is gone \(device reports readiness"):
        link.info()
    with waits_out(link, 0), pytest.raises(BoardGone, match=r"/dev/ttyACM0 is gone \(\[Errno 5\] Input/output error\)"):
        link.info()


def test_guard_status_names_the_canaries():
    with fake() as (board, link), waits_out(link, 0):
        link.write_input(0, bytes(37))
        board.script.append("guard")
        with pytest.raises(GuardTripped, match=r"guard tripped: the arena-end and stack-limit canaries were "
                                               r"overwritten during the run of model echo: \.\.\.; a kernel wrote "
                                               r"outside the model's arena and the stack reached its limit") as err:
            link.run()
        assert err.value.canaries == ("arena-end", "stack-limit") and err.value.status == STATUS_GUARD
        assert board.runs == 1


def test_answer_to_another_command_is_a_protocol_error():
    with fake() as (board, link), waits_out(link, 0):
        link.info()
        board.send(encode_frame(CMD_READ_OUTPUT | RESPONSE, b"x"))
        with pytest.raises(ProtocolError, match="answered READ_OUTPUT to INFO"):
            link.receive(CMD_INFO)


# ---------------------------------------------------------------- malformed frames, firmware on QEMU

_missing = missing_tools() + ([] if shutil.which(QEMU) else [QEMU])
needs_qemu = pytest.mark.skipif(bool(_missing) and os.environ.get("CI") != "true",
                                reason=f"not installed: {', '.join(_missing)} (CI=true makes this a failure)")


@pytest.fixture(scope="module")
def echo_an386(tmp_path_factory):
    return build_test_firmware(load_board("mps2-an386"), tmp_path_factory.mktemp("fw"))


def raw(link: Link, command: int, payload: bytes = b"", length: int | None = None) -> tuple[int, int, bytes]:
    """Send a frame whose header may lie about its length; the answer (command, status, payload)."""
    body = HEADER.pack(command, 0, len(payload) if length is None else length) + payload
    link.write_raw(MAGIC + body + struct.pack("<I", zlib.crc32(body)))
    return link.receive_frame(timeout=30.0)


@pytest.mark.slow
@needs_qemu
def test_firmware_rejects_malformed_frames_and_keeps_its_buffers(echo_an386):
    """Bad lengths per command, oversize payloads, an implausible length, an unknown command, a
    frame cut short: each gets its error (or, cut short, is dropped when the line goes quiet), no
    byte lands outside the input buffers, and the firmware answers correctly afterwards."""
    fw = echo_an386
    with start_qemu(fw.board, fw.elf, timeout=10.0) as q:
        link = q.link
        link.resync_pause = 3.0
        before = bytes(range(37))
        link.write_input(0, before)
        link.write_input(1, b"12345")
        link.run()
        out0 = link.read_output(0)
        assert out0 == expected_output(before)

        cases = [
            (CMD_RUN, b"\x00\x00", None, STATUS_BAD_LENGTH, "RUN takes at most a 1-byte flags payload"),
            (CMD_READ_OUTPUT, b"\x00", None, STATUS_BAD_LENGTH, "READ_OUTPUT takes a u32 index"),
            (CMD_PROBE, bytes(8), None, STATUS_BAD_LENGTH, "PROBE takes layer, offset, length"),
            (CMD_PROBE, struct.pack("<4I", 0, 150, 20, 0), None, STATUS_BAD_LENGTH, "probe outside the arena of 160"),
            (CMD_INFO, bytes(17), None, STATUS_BAD_LENGTH, "payload of 17 bytes is too long for this command"),
            (CMD_WRITE_INPUT, b"\x01\x00", None, STATUS_BAD_LENGTH, "WRITE_INPUT needs a u32 index"),
            (CMD_WRITE_INPUT, struct.pack("<I", 1) + bytes(6), None, STATUS_WRONG_SIZE, "takes 5 bytes, got 6"),
            (CMD_WRITE_INPUT, struct.pack("<I", 0xFFFFFFFF) + bytes(5), None, STATUS_BAD_INDEX,
             "input index 4294967295 out of range"),
            (CMD_READ_OUTPUT, struct.pack("<I", 0x80000000), None, STATUS_BAD_INDEX, "output index 2147483648"),
            (0x7F, b"", None, STATUS_UNKNOWN_COMMAND, "unknown command 127"),
            (CMD_WRITE_INPUT, b"", 0x7FFFFFFF, STATUS_BAD_LENGTH, "frame length 2147483647 is not plausible"),
        ]
        for command, payload, length, status, message in cases:
            got, st, text = raw(link, command, payload, length)
            assert (got, st) == (command | RESPONSE, status), (command, text)
            assert message in text.decode(), text

        # An oversize WRITE_INPUT (a 4 KiB payload for a 37-byte input) is read and dropped.
        got, st, text = raw(link, CMD_WRITE_INPUT, struct.pack("<I", 0) + bytes([0xEE]) * 4096)
        assert st == STATUS_WRONG_SIZE and b"takes 37 bytes, got 4096" in text

        # A frame cut short (it promises 37 input bytes, 10 come): the firmware gives it up once the
        # line goes quiet, without an answer; the host times out, then the next frame is served.
        frame = encode_frame(CMD_WRITE_INPUT, struct.pack("<I", 0) + bytes([0xAB]) * 37)
        link.write_raw(frame[:22])
        with waits_out(link, 1):
            with pytest.raises(LinkTimeout, match="no answer"):
                link.receive(CMD_WRITE_INPUT, timeout=1.0)
            assert link.info().model_name == "echo"  # waits for a quiet line first (resync_pause)

        # A frame that arrives in pieces, with pauses well under the firmware's frame gap, is served.
        frame = encode_frame(CMD_WRITE_INPUT, struct.pack("<I", 1) + b"abcde")
        for piece in (frame[:3], frame[3:9], frame[9:]):
            link.write_raw(piece)
            time.sleep(0.2)
        assert link.receive(CMD_WRITE_INPUT) == b""

        # Nothing was written outside the buffers (the cut-short frame wrote its 10 bytes into input
        # 0, as PROTOCOL.md says): the outputs are unchanged and the same inputs give the same outputs.
        assert link.read_output(0) == out0
        link.write_input(0, before)
        link.write_input(1, b"12345")
        link.run()
        assert link.read_output(0) == out0 and link.read_output(1) == expected_output(b"12345")
        link.quit()
