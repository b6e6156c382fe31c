"""The command line checks what it can before the slow part (compiling, building, running) and says
what happened: --opt, --port against the board's kind, pyOCD before `flash` builds, --input before
compiling, the board's RAM and flash at compile time, a directory without a valid report, and run
timeouts that scale with the model's work. Each refusal is one line and exit code 2."""

from __future__ import annotations

import json
import os
import re
import shutil

import numpy as np
import pytest
from conftest import MLPERF_MODELS, ROOT, compiled_dir, run_cli

from mcuforge.cli import _attach_opt_values, main, opt_flag
from mcuforge.errors import McuforgeError

AD = MLPERF_MODELS["ad"]  # ten FULLY_CONNECTED layers, 640-128-128-128-128-8-128-128-128-128-640
AD_MACS = 640 * 128 + 3 * 128 * 128 + 128 * 8 + 8 * 128 + 3 * 128 * 128 + 128 * 640
REAL = "nucleo-f746zg"
QEMU = "mps2-an386"


def refused(proc, message: str) -> None:
    """Exit 2 and exactly this one line on stderr (so no progress line: nothing slow had started)."""
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"mcuforge: error: {message}\n")


@pytest.fixture(scope="module")
def ad_dir(tmp_path_factory):
    return compiled_dir(tmp_path_factory, AD)


# ---------------------------------------------------------------- --opt

@pytest.mark.parametrize("given, flag", [("-O2", "-O2"), ("O2", "-O2"), ("Os", "-Os"), ("-Os", "-Os"),
                                         ("O0", "-O0"), ("-O1", "-O1"), ("O3", "-O3"), ("-Og", "-Og"),
                                         ("Oz", "-Oz")])
def test_opt_levels_are_normalised(given, flag):
    assert opt_flag(given) == flag


@pytest.mark.parametrize("given", ["-O4", "O9", "-Ofast", "fast", "2", "-O", "", "-o2", "--O2", "-O2 -g"])
def test_other_opt_values_are_refused_in_one_line(cli, ad_dir, given):
    refused(cli("build", ad_dir, "--board", QEMU, f"--opt={given}"),
            f"--opt {given}: not an optimization level mcuforge builds with; use one of -O0, -O1, -O2, -O3, -Os, "
            "-Og, -Oz (the dash is optional)")


def test_opt_value_with_a_dash_is_taken_as_the_value(cli, tmp_path):
    assert _attach_opt_values(["build", "d", "--opt", "-Os", "--board", "b"]) == ["build", "d", "--opt=-Os", "--board",
                                                                                  "b"]
    # argparse alone would say "--opt: expected one argument"; here the next check is reached.
    refused(cli("build", tmp_path / "none", "--board", QEMU, "--opt", "-Os"),
            f"{tmp_path / 'none'}: no such directory: give a directory written by mcuforge compile")


# ---------------------------------------------------------------- --port and the board's kind

@pytest.mark.parametrize("argv", [("run", AD, "--board", QEMU), ("verify", AD, "--on", QEMU),
                                  ("bench", AD, "--board", QEMU)], ids=["run", "verify", "bench"])
def test_port_with_a_qemu_board_is_an_error(cli, argv):
    refused(cli(*argv, "--port", "/dev/ttyACM0"),
            f"--port /dev/ttyACM0: {QEMU} runs on QEMU, which mcuforge starts itself: leave --port out")


@pytest.mark.parametrize("argv", [("run", AD, "--board", REAL), ("verify", AD, "--on", REAL),
                                  ("bench", AD, "--board", REAL)], ids=["run", "verify", "bench"])
def test_real_board_without_port_fails_before_building(cli, argv):
    refused(cli(*argv), f"{REAL} is a real board: give its serial port with --port (e.g. /dev/ttyACM0), after "
                        "flashing it with mcuforge flash")


def test_run_of_a_directory_on_a_real_board_without_port(cli, ad_dir):
    refused(cli("run", ad_dir, "--board", REAL), f"{REAL} is a real board: give its serial port with --port (e.g. "
                                                 "/dev/ttyACM0), after flashing it with mcuforge flash")


@pytest.mark.parametrize("on", ["host", "reference"])
def test_port_without_a_board_is_an_error(cli, on):
    refused(cli("verify", AD, "--on", on, "--port", "/dev/ttyACM0"),
            f"--port /dev/ttyACM0: a serial port is for --on BOARD, not --on {on}")


def test_flash_checks_board_and_pyocd_before_building(cli, ad_dir, tmp_path, monkeypatch):
    refused(cli("flash", ad_dir, "--board", QEMU), f"{QEMU} runs on QEMU: nothing to flash (use mcuforge run --board "
                                                   f"{QEMU})")
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # no pyocd (nor a compiler: nothing may be built)
    refused(cli("flash", ad_dir, "--board", REAL), f"pyocd not found on PATH, needed to flash {REAL}: pip install "
                                                   "pyocd")


# ---------------------------------------------------------------- --input before compiling

@pytest.fixture
def no_compiling(monkeypatch):
    """In-process: compiling a model fails the test (so a refusal proves it came first)."""
    def compile_module(*a, **k):
        raise AssertionError("compiled before checking the input")

    monkeypatch.setattr("mcuforge.driver.compile_module", compile_module)


@pytest.mark.parametrize("array, problem", [
    (np.zeros((1, 64), np.int8), "input 0 'input_1' must have shape [1, 640], got [1, 64]"),
    (np.zeros((1, 640), np.int16), "input 0 'input_1' must be int8, got int16"),  # (a float array is quantized)
])
@pytest.mark.parametrize("command", ["run", "verify"])
def test_input_is_checked_before_compiling(tmp_path, capsys, no_compiling, command, array, problem):
    x = tmp_path / "x.npy"
    np.save(x, array)
    where = ["--board", QEMU] if command == "run" else ["--on", QEMU]
    assert main([command, str(AD), *where, "--input", str(x)]) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", f"mcuforge: error: --input {x}: {problem}\n")


def test_input_of_a_directory_is_checked_before_building(cli, ad_dir, tmp_path):
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((640,), np.int8))
    refused(cli("run", ad_dir, "--board", QEMU, "--input", x),
            f"--input {x}: input 0 'input_1' must have shape [1, 640], got [640]")


# ---------------------------------------------------------------- what the board holds

def _board(tmp_path, ram: int | None = None, flash: int | None = None) -> str:
    text = (ROOT / "boards" / "mps2_an386.toml").read_text()
    if ram is not None:
        text = re.sub(r"(\[memory\.ram\][^\[]*?size\s*=\s*)0x[0-9A-Fa-f]+", rf"\g<1>{ram:#x}", text, flags=re.S)
    if flash is not None:
        text = re.sub(r"(\[memory\.flash\][^\[]*?size\s*=\s*)0x[0-9A-Fa-f]+", rf"\g<1>{flash:#x}", text, flags=re.S)
    path = tmp_path / "small.toml"
    path.write_text(text)
    return str(path)


def test_compile_for_a_board_names_flash_ram_or_both(cli, tmp_path):
    # ad01's constants as generated: inspect's 270,880 B of weights in the pair layout (its 8-deep layer
    # padded to 16 columns), int32 biases and requantization records
    consts = 305_344
    arena = 768  # the activations: the one-row fully connected layers need no scratch
    flash_msg = f"its constants take {consts:,} B of flash; mps2-an386 has 262,144 B"
    ram_msg = f"it needs {arena:,} B of arena + 16,384 B of stack = {arena + 16384:,} B of RAM; mps2-an386 has 16,640 B"
    out = tmp_path / "out"
    refused(cli("compile", AD, "-o", out, "--board", _board(tmp_path, flash=0x40000)),
            f"the model does not fit mps2-an386: {flash_msg}")
    refused(cli("compile", AD, "-o", out, "--board", _board(tmp_path, ram=0x4100)),
            f"the model does not fit mps2-an386: {ram_msg}")
    refused(cli("compile", AD, "-o", out, "--board", _board(tmp_path, ram=0x4100, flash=0x40000)),
            f"the model does not fit mps2-an386: {ram_msg} and {flash_msg}")
    assert not out.exists()


# ---------------------------------------------------------------- the report runners read

def test_report_carries_what_the_runners_need(ad_dir):
    from mcuforge.device import read_report

    r = read_report(ad_dir)
    assert (r.prefix, r.arena_bytes, r.macs) == ("model", 768, AD_MACS)
    assert [(t.shape, t.dtype) for t in r.inputs + r.outputs] == [((1, 640), "int8"), ((1, 640), "int8")]
    assert r.work == AD_MACS + sum(s["output_bytes"] for s in r.info["schedule"])


def test_prefix_comes_from_the_report_not_the_headers(cli, tmp_path):
    out = tmp_path / "out"
    assert cli("compile", AD, "-o", out, "--prefix", "ad").returncode == 0
    from mcuforge.device import read_report

    (out / "mcuforge_model.h").write_text("/* nothing to parse here */\n")
    assert read_report(out).prefix == "ad"


@pytest.mark.parametrize("damage, problem", [
    ("remove", "{d}: no report.json, so not a directory written by mcuforge compile: run mcuforge compile MODEL -o {d} "
               "first"),
    ("garbage", "{d}/report.json: not a valid report (Expecting value: line 1 column 1 (char 0)): compile the model "
                "again"),
    ("no prefix", "{d}/report.json: not a valid mcuforge report (no 'prefix'; written by another version?): compile "
                  "the model again"),
    ("bad dtype", "{d}/report.json: not a valid mcuforge report (unknown dtype 'int7'; written by another version?): "
                  "compile the model again"),
])
@pytest.mark.parametrize("command", ["build", "run", "flash"])
def test_directory_without_a_valid_report_is_one_clear_error(cli, ad_dir, tmp_path, monkeypatch, damage, problem,
                                                             command):
    d = tmp_path / "d"
    shutil.copytree(ad_dir, d)
    report = d / "report.json"
    info = json.loads(report.read_text())
    if damage == "remove":
        report.unlink()
    elif damage == "garbage":
        report.write_text("not json")
    elif damage == "no prefix":
        del info["prefix"]
        report.write_text(json.dumps(info))
    else:
        info["inputs"][0]["dtype"] = "int7"
        report.write_text(json.dumps(info))
    board = REAL if command == "flash" else QEMU
    if command == "flash":  # a stand-in pyocd on PATH: flash checks for it before the directory
        fake = tmp_path / "bin" / "pyocd"
        fake.parent.mkdir()
        fake.write_text("#!/bin/sh\nexit 1\n")
        fake.chmod(0o755)
        monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    refused(cli(command, d, "--board", board), problem.format(d=d))


# ---------------------------------------------------------------- timeouts

def test_run_timeout_scales_with_the_models_work(tmp_path):
    from mcuforge.device import RUN_SECONDS_PER_UNIT, RUN_TIMEOUT_FLOOR, read_report, run_timeout, timeout_note

    small, big = tmp_path / "ad", tmp_path / "ic"
    for model, out in ((AD, small), (MLPERF_MODELS["ic"], big)):
        assert run_cli("compile", model, "-o", out).returncode == 0
    a, b = read_report(small), read_report(big)
    assert b.macs > 40 * a.macs
    assert run_timeout(a) == RUN_TIMEOUT_FLOOR + RUN_SECONDS_PER_UNIT * a.work
    assert run_timeout(b) - RUN_TIMEOUT_FLOOR == pytest.approx((run_timeout(a) - RUN_TIMEOUT_FLOOR) * b.work / a.work)
    assert timeout_note(a) == f"the limit for this model: 60 s + 20 us x {a.work:,} ({AD_MACS:,} MACs + bytes written)"


def test_static_stack_bound_is_required_for_the_ram_check():
    from pathlib import Path

    from mcuforge.boards import load_board
    from mcuforge.device import static_stack_use
    from mcuforge.firmware_build import FirmwareBuild

    fw = FirmwareBuild(board=load_board(QEMU), elf=Path("m.elf"), map_file=Path("m.map"), text_bytes=1, data_bytes=1,
                       bss_bytes=1, stack_bytes=0x4000, static_stack=None)
    with pytest.raises(McuforgeError, match=r"^m\.elf: gcc's call graphs give no stack bound \(recursion\?\), so the "
                                            r"stack cannot be checked against mps2-an386's reservation$"):
        static_stack_use(fw)


# ---------------------------------------------------------------- --help

def test_every_command_has_help():
    """`mcuforge <command> --help` prints its options (argparse expands %-formats in help strings: a
    bare % was a traceback)."""
    from mcuforge.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for name, sub in commands.items():
        assert "usage:" in sub.format_help(), name
