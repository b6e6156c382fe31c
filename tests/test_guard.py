"""Guard builds (canaries around the arena and at the stack limit, checked after every RUN), the RAM
check with the static stack bound, and the measured stack `build` shows beside it.

The echo test model (firmware/runtime/test_model) has hooks that write where they must not: input 1
"over!" one byte past the arena, "undr!" one byte before it, "deep!" a word at the stack limit. A
generated model is corrupted the way a planner bug would: its arena size patched smaller than the
plan, so its last buffer runs past the end.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import MODELS
from mcuforge.boards import load_board

from mcuforge.device import StackUse, build_generated, check_ram, guard_defines, measure_stack, read_report
from mcuforge.errors import McuforgeError
from mcuforge.firmware_build import FirmwareBuild, build_test_firmware, missing_tools
from mcuforge.qemu import QEMU, start_qemu
from mcuforge.serial_link import STATUS_GUARD, GuardTripped

_missing = missing_tools() + ([] if shutil.which(QEMU) else [QEMU])
needs_qemu = pytest.mark.skipif(bool(_missing) and os.environ.get("CI") != "true",
                                reason=f"not installed: {', '.join(_missing)} (CI=true makes this a failure)")
MODEL = MODELS / "conv_2d_16ch_same_relu6.tflite"


def expected_output(data: bytes) -> bytes:
    return bytes((b + 1) & 0xFF for b in reversed(data))


# ---------------------------------------------------------------- no tools needed

CI_TEXT = """graph: { title: "a.c"
node: { title: "Reset_Handler" label: "Reset_Handler\\na.c:1:1\\n8 bytes (static)" }
node: { title: "main" label: "main\\na.c:2:1\\n16 bytes (static)" }
node: { title: "a.c:run" label: "run\\na.c:3:1\\n40 bytes (static)" }
node: { title: "hook" label: "hook\\na.c:4:1\\n100 bytes (static)" }
node: { title: "small" label: "small\\na.c:5:1\\n4 bytes (static)" }
node: { title: "SysTick_Handler" label: "SysTick_Handler\\na.c:6:1\\n0 bytes (static)" }
node: { title: "memcpy" label: "__builtin_memcpy\\n<built-in>" shape : ellipse }
node: { title: "__indirect_call" label: "Indirect Call Placeholder" shape : ellipse }
edge: { sourcename: "Reset_Handler" targetname: "main" label: "a.c:1:2" }
edge: { sourcename: "main" targetname: "a.c:run" label: "a.c:2:2" }
edge: { sourcename: "main" targetname: "small" label: "a.c:2:3" }
edge: { sourcename: "a.c:run" targetname: "__indirect_call" label: "a.c:3:2" }
edge: { sourcename: "small" targetname: "memcpy" label: "a.c:5:2" }
}
"""


def test_static_stack_from_call_graphs(tmp_path):
    from mcuforge.stack_usage import LIBRARY_FRAME, StackAnalysisError, static_stack

    ci = tmp_path / "a.c.ci"
    ci.write_text(CI_TEXT)
    s = static_stack([ci], exception_frame=32)
    # Reset 8 + main 16 + run 40 + hook 100 (through the pointer) = 164 > the memcpy path (28 + 64);
    # SysTick: 32 B of exception frame + its 0 B frame.
    assert (s.bytes, s.path, s.bounded) == (164 + 32, ("Reset_Handler", "main", "run", "__indirect_call", "hook"),
                                            True)
    ci.write_text(CI_TEXT.replace('"hook\\na.c:4:1\\n100 bytes', '"hook\\na.c:4:1\\n1 bytes'))
    s = static_stack([ci], exception_frame=32)
    assert s.bytes == 8 + 16 + 4 + LIBRARY_FRAME + 32 and s.library == ("memcpy",)
    ci.write_text(CI_TEXT + 'edge: { sourcename: "small" targetname: "main" label: "a.c:5:3" }\n')
    with pytest.raises(StackAnalysisError, match="recursion: main -> small -> main"):
        static_stack([ci], exception_frame=32)


def test_functions_the_link_dropped_are_not_hooks(tmp_path):
    """A model's run_io calls its run but nothing calls run_io: were it a hook, the profiler's
    pointer call would recurse. --gc-sections dropped it, so it cannot be called."""
    from mcuforge.stack_usage import StackAnalysisError, static_stack

    ci = tmp_path / "a.c.ci"
    ci.write_text(CI_TEXT + 'node: { title: "run_io" label: "run_io\\na.c:7:1\\n8 bytes (static)" }\n'
                            'edge: { sourcename: "run_io" targetname: "a.c:run" label: "a.c:7:2" }\n')
    with pytest.raises(StackAnalysisError, match="recursion: a.c:run -> __indirect_call -> run_io -> a.c:run"):
        static_stack([ci], exception_frame=32)
    linked = {"Reset_Handler", "main", "run", "hook", "small", "SysTick_Handler"}
    assert static_stack([ci], exception_frame=32, linked=linked).bytes == 164 + 32


def test_guard_defines_name_the_models_arena_hooks():
    assert guard_defines("kws") == ("MCU_GUARD=1", "KWS_EXTERNAL_ARENA", "MCU_MODEL_SET_ARENA=kws_set_arena")


def _fw(board, bss: int, stack: int) -> FirmwareBuild:
    return FirmwareBuild(board=board, elf=Path("m.elf"), map_file=Path("m.map"), text_bytes=1000, data_bytes=100,
                         bss_bytes=bss, stack_bytes=stack)


def test_ram_check_names_the_sizes():
    board = load_board("mps3-an547")  # 512 KiB RAM
    how = "static worst case from gcc's call graphs: main > run"
    check_ram(_fw(board, 400_000, 0x4000), 390_000, StackUse(peak=2000, reserved=0x4000, method=how))
    with pytest.raises(McuforgeError, match=r"m\.elf on mps3-an547: the stack needs up to 16,200 B \(static worst "
                                            r"case from gcc's call graphs\), the board reserves 16,384 B "
                                            r"\(memory\.stack_size; 256 B kept free"):
        check_ram(_fw(board, 400_000, 0x4000), 390_000, StackUse(peak=16_200, reserved=0x4000, method=how))
    small = replace(board, ram=replace(board.ram, size=300_000))
    with pytest.raises(McuforgeError, match=r"m\.elf does not fit mps3-an547's RAM: arena 290,000 B \+ other static "
                                            r"RAM 10,100 B \+ stack 2,000 B \(static worst case from gcc's call "
                                            r"graphs\) = 302,100 B of 300,000 B"):
        check_ram(_fw(small, 300_000, 0x4000), 290_000, StackUse(peak=2000, reserved=0x4000, method=how))


def test_guard_needs_a_board_for_verify(cli):
    proc = cli("verify", MODEL, "--on", "host", "--guard")
    assert proc.returncode == 2 and proc.stderr.strip() == (
        "mcuforge: error: --guard builds firmware for a board: use it with --on BOARD, not --on host")


# ---------------------------------------------------------------- the echo model on QEMU

@pytest.fixture(scope="module")
def echo_builds(tmp_path_factory):
    board = load_board("mps2-an386")
    root = tmp_path_factory.mktemp("fw")
    return (build_test_firmware(board, root / "plain"),
            build_test_firmware(board, root / "guard", defines=("MCU_GUARD=1", "ECHO_EXTERNAL_ARENA")))


@pytest.mark.slow
@needs_qemu
def test_guard_trips_name_the_canary_and_rearm(echo_builds):
    plain, guarded = echo_builds
    assert guarded.bss_bytes > plain.bss_bytes  # the canaries
    data = bytes(range(50, 87))
    with start_qemu(guarded.board, guarded.elf) as q:
        link = q.link
        assert link.info().guarded
        for word, canary, cause in [(b"over!", "arena-end", "a kernel wrote outside the model's arena"),
                                    (b"undr!", "arena-start", "a kernel wrote outside the model's arena"),
                                    (b"deep!", "stack-limit", "the stack reached its limit")]:
            link.write_input(0, data)
            link.write_input(1, b"12345")
            stats = link.run_stats()  # a clean run passes...
            assert 0 < stats.stack_bytes <= guarded.static_stack.bytes
            assert link.read_output(0) == expected_output(data)
            link.write_input(0, data)
            link.write_input(1, word)
            with pytest.raises(GuardTripped, match=rf"^guard tripped: the {canary} canary was overwritten during the "
                                                   rf"run of model echo: {canary} byte \d+ at 0x[0-9a-f]{{8}} is 0, "
                                                   rf"expected \d+; {cause}") as err:
                link.run()  # ...a corrupting one is caught, naming the canary...
            assert err.value.canaries == (canary,) and err.value.status == STATUS_GUARD
        link.write_input(0, data)
        link.write_input(1, b"12345")
        link.run()  # ...and the canaries are armed again afterwards
        assert link.read_output(0) == expected_output(data)
        link.quit()

    with start_qemu(plain.board, plain.elf) as q:  # without the guard the same overrun goes unnoticed
        assert not q.link.info().guarded
        q.link.write_input(0, data)
        q.link.write_input(1, b"over!")
        q.link.run()
        assert q.link.read_output(0) == expected_output(data)
        q.link.quit()


# ---------------------------------------------------------------- a generated model

@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The model compiled by the CLI into a directory (sources, report.json)."""
    from conftest import compiled_dir

    return compiled_dir(tmp_path_factory, MODEL)


@pytest.mark.slow
@needs_qemu
def test_guarded_build_reports_stack_and_passes(cli, generated):
    src = generated
    proc = cli("build", src, "--board", "mps2-an386", "--guard")
    assert proc.returncode == 0, proc.stderr
    assert "(guard build: canaries around the arena and at the stack limit)" in proc.stdout
    arena = read_report(src).arena_bytes
    lines = {line.split(":")[0]: line for line in proc.stdout.splitlines()}
    assert lines["stack"].endswith("B reserved (measured: painted high-water mark of one inference on QEMU, "
                                   "zero inputs; information only, the check uses the bound)"), proc.stdout
    peak = int(lines["stack"].split()[1].replace(",", ""))
    assert 0 < peak < load_board("mps2-an386").stack_size
    bound = int(lines["stack bound"].split()[2].replace(",", ""))
    assert peak <= bound < 4 * peak, "the static worst case bounds the measured peak"
    assert "static worst case from gcc's call graphs: Reset_Handler > main > serve_one > serve_frame > model_run > " in proc.stdout
    m = re.fullmatch(rf"RAM check: arena {arena:,} B \+ other static ([\d,]+) B \+ stack bound {bound:,} B = "
                     rf"([\d,]+) B of 4,194,304 B: fits", lines["RAM check"])
    other, total = (int(g.replace(",", "")) for g in m.groups())
    assert arena + other + bound == total


@pytest.mark.slow
@needs_qemu
def test_guarded_verify_is_bit_exact(cli):
    proc = cli("verify", MODEL, "--on", "mps2-an386", "--guard", "-n", "2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("verify PASS: 2/2 inputs bit-exact"), proc.stdout


@pytest.mark.slow
@needs_qemu
def test_arena_smaller_than_planned_trips_the_arena_end_canary(cli, generated, tmp_path):
    src = generated
    bad = tmp_path / "model"
    shutil.copytree(src, bad)
    header = bad / "model.h"
    arena = read_report(src).arena_bytes
    text = header.read_text()
    assert f"#define MODEL_ARENA_SIZE {arena}\n" in text
    header.write_text(text.replace(f"#define MODEL_ARENA_SIZE {arena}\n", f"#define MODEL_ARENA_SIZE {arena - 16}\n"))
    proc = cli("run", bad, "--board", "mps2-an386", "--guard")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "mcuforge: error: guard tripped: the arena-end canary was overwritten during the run of model model: "
        "arena-end byte "), proc.stderr
    assert "a kernel wrote outside the model's arena" in proc.stderr


@pytest.mark.slow
@needs_qemu
def test_stack_reservation_checked_against_the_static_bound_not_one_measurement(generated, tmp_path):
    """A board whose stack reservation holds the measured peak of one inference but not the static
    worst case + margin: the build refuses, naming the bound (one input's high-water mark proves
    nothing about another input's path)."""
    src = generated
    board = load_board("mps2-an386")
    fw = build_generated(src, board, tmp_path / "ok", guard=True)
    peak, bound = measure_stack(fw).peak, fw.static_stack.bytes
    assert peak < bound
    tight = replace(board, stack_size=(bound + 128) // 8 * 8)  # fits the peak and the bound, not the margin
    with pytest.raises(McuforgeError, match=rf"the stack needs up to {bound:,} B \(static worst case from gcc's "
                                            rf"call graphs\), the board reserves {tight.stack_size:,} B "
                                            rf"\(memory\.stack_size"):
        build_generated(src, tight, tmp_path / "tight", guard=True)


def test_naked_assembly_frames_from_the_disassembly(tmp_path):
    """gcc reports a naked assembly routine with a 0-byte frame; its pushes (PUSH, STMDB sp!, VPUSH,
    SUB sp) read from the ELF's disassembly count instead."""
    from mcuforge.stack_usage import pushed_bytes, static_stack

    listing = ("00000100 <asm_routine>:\n"
               " 100:\tpush\t{r4, r5, r6, r7, r8, r9, sl, fp, lr}\n"
               " 104:\tpush\t{r0}\n"
               " 106:\tldr\tr0, [r0, #4]\n"
               " 108:\tpop\t{r4, r5, r6, r7, r8, r9, sl, fp, pc}\n\n"
               "00000200 <c_function>:\n"
               " 200:\tstmdb\tsp!, {r4-r11, lr}\n"
               " 204:\tvpush\t{d8-d9}\n"
               " 208:\tsub.w\tsp, sp, #1024\n"
               " 20c:\tsub\tsp, #12\n")
    assert pushed_bytes(listing) == {"asm_routine": 40, "c_function": 36 + 16 + 1024 + 12}
    ci = tmp_path / "a.c.ci"
    ci.write_text(CI_TEXT.replace('"small\\na.c:5:1\\n4 bytes', '"small\\na.c:5:1\\n0 bytes')
                  .replace('targetname: "memcpy"', 'targetname: "asm_routine"')
                  + 'node: { title: "asm_routine" label: "asm_routine\\na.c:8:1\\n0 bytes (static)" }\n')
    # without the listing: Reset 8 + main 16 + small 0 + asm_routine 0, below the hook path (164);
    # with a routine pushing 236 B, that path is the deepest
    assert static_stack([ci], exception_frame=32).bytes == 164 + 32
    big = listing.replace("push\t{r0}", "sub\tsp, #200")
    assert static_stack([ci], exception_frame=32, pushed=pushed_bytes(big)).bytes == 8 + 16 + 0 + 236 + 32
