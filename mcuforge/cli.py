"""The `mcuforge` command line. Every user error is one line on stderr and exit code 2;
a bit-exactness failure in `verify` is exit code 1; never a traceback (MCUFORGE_DEBUG=1 shows one)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from mcuforge import __version__
from mcuforge.errors import InputError, McuforgeError
from mcuforge.planner.arena import MEMORY_MODES


def progress(msg: str) -> None:
    """A step that takes more than a moment: say so on stderr (stdout stays the result)."""
    print(f"mcuforge: {msg}", file=sys.stderr, flush=True)


def check_fits(compiled, board) -> None:
    """Refuse at compile time a model that cannot fit the board: arena + state + stack reservation
    in RAM, constants in flash, naming each that does not fit (the build then checks the exact
    figures from the ELF, with the static stack bound)."""
    consts = sum(int(np.asarray(a).nbytes) for b in compiled.program.bindings for a in b.kernel.constants.values())
    state = compiled.arena.state_bytes
    ram_need = compiled.arena.arena_bytes + state + board.stack_size
    problems = []
    if ram_need > board.ram.size:
        kept = f" + {state:,} B of state" if state else ""
        problems.append(f"it needs {compiled.arena.arena_bytes:,} B of arena{kept} + {board.stack_size:,} B of stack "
                        f"= {ram_need:,} B of RAM; {board.name} has {board.ram.size:,} B")
    if consts > board.flash_capacity:
        problems.append(f"its constants take {consts:,} B of flash; {board.name} has {board.flash_capacity:,} B")
    if problems:
        raise McuforgeError(f"the model does not fit {board.name}: {' and '.join(problems)}")


OPT_LEVELS = ("-O0", "-O1", "-O2", "-O3", "-Os", "-Og", "-Oz")


def options(args: argparse.Namespace, board=None):
    """The compile options of a command: --targets, --memory and the kernel paths of the board the
    code is for (its ISA: the weights' layout suits them), the default ISA without a board."""
    from mcuforge.driver import Options
    from mcuforge.planner.target import DEFAULT_ISA

    return Options(targets=tuple(args.targets.split(",")), memory=args.memory,
                   isa=board.isa if board else DEFAULT_ISA)


def opt_flag(value: str) -> str:
    """--opt as arm-none-eabi-gcc's flag: -O2 or O2 -> -O2. A closed list: -Ofast is left out (its
    -ffast-math changes float results), and gcc's silent -O4 ... -O9 (= -O3) with it."""
    flag = "-" + value[1:] if value.startswith("-") else "-" + value
    if flag not in OPT_LEVELS:
        raise McuforgeError(f"--opt {value}: not an optimization level mcuforge builds with; use one of "
                            f"{', '.join(OPT_LEVELS)} (the dash is optional)")
    return flag


def check_port(board, port: str | None) -> None:
    """Before building: a real board is reached on --port, a QEMU board is started by mcuforge."""
    if board.is_qemu and port:
        raise McuforgeError(f"--port {port}: {board.name} runs on QEMU, which mcuforge starts itself: leave "
                            "--port out")
    if not board.is_qemu and not port:
        raise McuforgeError(f"{board.name} is a real board: give its serial port with --port (e.g. /dev/ttyACM0), "
                            "after flashing it with mcuforge flash")


def _cmd_inspect(args: argparse.Namespace) -> int:
    from mcuforge.frontend.reader import read_tflite
    from mcuforge.inspection import format_report, inspect_graph

    info = inspect_graph(read_tflite(args.model))
    if args.json:
        print(json.dumps(info, indent=2))
    else:
        print(format_report(info))
    if info["unsupported"]:
        from mcuforge.errors import UnsupportedError

        raise UnsupportedError([(u["index"], u["op"], u["reason"]) for u in info["unsupported"]])
    return 0


def load_inputs(paths: Sequence[str], params) -> list[np.ndarray]:
    """Arrays from .npy files (one per model input, in order) or one .npz (arr_0, arr_1, ... or
    the input names), checked against the model's inputs. A float array for a quantized input is
    quantized with its scale and zero point, as TFLite's QUANTIZE does."""
    arrays: list[np.ndarray] = []
    for p in paths:
        try:
            loaded = np.load(p, allow_pickle=False)
        except FileNotFoundError:
            raise InputError(f"{p}: no such file") from None
        except (ValueError, OSError) as e:
            raise InputError(f"{p}: not a .npy/.npz array file ({e})") from None
        if isinstance(loaded, np.lib.npyio.NpzFile):
            keys = list(loaded.keys())
            names = [v.name for v in params]
            order = names if all(n in keys for n in names) else sorted(keys)
            arrays.extend(loaded[k] for k in order)
        else:
            arrays.append(loaded)
    from mcuforge.ir.evaluate import check_inputs
    from mcuforge.ir.expr import Function, Tuple

    arrays = [quantize_float_input(i, x, params[i]) if i < len(params) else x for i, x in enumerate(arrays)]
    try:
        return check_inputs(Function(tuple(params), Tuple(())), arrays)
    except InputError as e:
        raise InputError(f"--input {', '.join(map(str, paths))}: {e}") from None


def quantize_float_input(i: int, x: np.ndarray, param) -> np.ndarray:
    """x quantized with the input's scale and zero point when x is float and the input is a quantized
    integer (the value first rounded to float32, then TFLM's AffineQuantize); otherwise x as it is."""
    from mcuforge.codegen.emit import QUANTIZED_IO
    from mcuforge.ir.ops.quantize import affine_quantize

    t, x = param.type, np.asarray(x)
    q = t.quant
    if x.dtype.kind != "f" or t.dtype not in QUANTIZED_IO or q is None or q.per_channel:
        return x
    progress(f"input {i} '{param.name}': {x.dtype} values quantized with scale {q.s!r} and zero point {q.zp} "
             f"to {t.dtype}")
    with np.errstate(over="ignore"):  # a huge value saturates, as QUANTIZE does
        return affine_quantize(x.astype(np.float32), q.s, q.zp, t.dtype)


def _cmd_verify(args: argparse.Namespace) -> int:
    from mcuforge.driver import compile_module, read_model
    from mcuforge.verify import random_inputs, verify_host, verify_program

    on_board = args.on not in ("reference", "host")
    if args.guard and not on_board:
        raise McuforgeError(f"--guard builds firmware for a board: use it with --on BOARD, not --on {args.on}")
    if args.port and not on_board:
        raise McuforgeError(f"--port {args.port}: a serial port is for --on BOARD, not --on {args.on}")
    board = None
    if on_board:
        from mcuforge.boards import load_board

        board = load_board(args.on)
        check_port(board, args.port)
    t0 = time.monotonic()
    module, blob = read_model(args.model)
    given = [load_inputs(args.input, module.main.params)] if args.input else None  # before the slow part
    compiled = compile_module(module, blob, options(args, board))
    # a model with state (LSTM, SVDF) runs --sequences sequences of -n steps, the state carried
    steps = args.n if compiled.program.states and not given else 1
    if given:
        input_sets = given
    else:
        rng = np.random.default_rng(args.seed)
        count = args.n * (args.sequences if compiled.program.states else 1)
        input_sets = [random_inputs(module, rng) for _ in range(count)]
    if args.on == "reference":
        results = verify_program(compiled, input_sets, intermediates=args.intermediates, steps=steps)
        what = "outputs and intermediates" if args.intermediates else "outputs"
    elif args.on == "host":
        results = verify_host(compiled, input_sets, steps=steps)
        what = "outputs"
    else:
        from mcuforge.verify import verify_board

        results = verify_board(compiled, input_sets, args.on, port=args.port, progress=progress, guard=args.guard,
                               steps=steps)
        what = "outputs"
    if compiled.program.states:
        what += f"; {len(input_sets) // steps} sequence(s) of {steps} step(s), state carried"
    failed = 0
    for r in results:
        if not r.ok:
            failed += 1
            where = f" (sequence {r.index // steps}, step {r.index % steps})" if steps > 1 else ""
            print(f"input {r.index}{where}: MISMATCH — {r.mismatches[0]}")
            if len(r.mismatches) > 1:
                print(f"  ({len(r.mismatches) - 1} more mismatching tensor(s))")
            if r.first_layer:
                print(f"  first layer that differs (per-layer readback): {r.first_layer}")
    n = len(results)
    layers = len(compiled.program.bindings)
    verdict = "PASS" if failed == 0 else "FAIL"
    print(f"verify {verdict}: {n - failed}/{n} inputs bit-exact with TFLite Micro ({what}) on {args.on} — "
          f"{Path(args.model).name}, {layers} layers, seed {args.seed}, {time.monotonic() - t0:.1f} s")
    return 0 if failed == 0 else 1


def _cmd_compile(args: argparse.Namespace) -> int:
    from mcuforge.codegen.emit import emit
    from mcuforge.codegen.output_dir import check_target
    from mcuforge.driver import compile_model

    t0 = time.monotonic()
    check_target(args.output, args.force, keep=[args.model])  # before the slow part
    board = None
    if args.board:
        from mcuforge.boards import load_board

        board = load_board(args.board)
    compiled = compile_model(args.model, options(args, board))
    if board:
        check_fits(compiled, board)
    emit(compiled, args.output, args.prefix, Path(args.model).name, force=args.force, package=args.package)
    weights = sum(int(np.asarray(a).nbytes) for b in compiled.program.bindings for a in b.kernel.constants.values())
    what = (f"as {PACKAGE_NAMES[args.package]}" if args.package else
            f"({args.prefix}.h, {args.prefix}.c, {args.prefix}_weights.c, kernels/, CMakeLists.txt, report.json)")
    print(f"compiled {Path(args.model).name} -> {args.output}/ {what} in {time.monotonic() - t0:.1f} s")
    print(f"  layers {len(compiled.program.bindings)}, arena {compiled.arena.arena_bytes:,} B "
          f"(lower bound {compiled.arena.plan.lower_bound:,} B), constants {weights:,} B")
    return 0


def _cmd_boards(args: argparse.Namespace) -> int:
    from mcuforge.boards import board_names, load_board

    print(f"{'board':<16} {'cpu':<11} {'flash':>10} {'RAM':>10}  {'runs on':<8} extensions")
    for name in board_names():
        b = load_board(name)
        ext = ", ".join(x for x in ("DSP" if b.dsp else "", f"MVE {b.mve}" if b.mve != "none" else "",
                                    f"FPU {b.fpu}" if b.fpu != "none" else "") if x) or "-"
        how = "QEMU" if b.is_qemu else "pyOCD"
        print(f"{b.name:<16} {b.cpu:<11} {b.flash.size // 1024:>8} K {b.ram.size // 1024:>8} K  {how:<8} {ext}")
    return 0


def _build(src: Path, board, opt: str, build_dir: Path, guard: bool = False):
    from mcuforge.device import build_generated

    return build_generated(src, board, build_dir, opt=opt, guard=guard, progress=progress)


def _print_sizes(fw) -> None:
    print(f"flash: {fw.flash_bytes:,} B (text {fw.text_bytes:,} + data {fw.data_bytes:,}) of {fw.board.flash_capacity:,} B")
    print(f"RAM:   {fw.ram_bytes:,} B static (data {fw.data_bytes:,} + bss {fw.bss_bytes:,}, arena included) "
          f"+ {fw.stack_bytes:,} B stack reserved, of {fw.board.ram.size:,} B")


def _build_dir(args, board) -> Path:
    from mcuforge.device import default_build_dir

    return Path(args.build_dir) if args.build_dir else default_build_dir(args.dir, board, getattr(args, "guard", False))


def _cmd_build(args: argparse.Namespace) -> int:
    from mcuforge.boards import load_board
    from mcuforge.device import read_report, stack_and_ram_report

    src = Path(args.dir)
    board = load_board(args.board)
    report = read_report(src)
    fw = _build(src, board, args.opt, _build_dir(args, board), args.guard)
    print(f"firmware: {fw.elf}" + (" (guard build: canaries around the arena and at the stack limit)"
                                   if args.guard else ""))
    print(f"images:   {fw.bin} (raw, from {fw.board.flash.origin:#010x}), {fw.hex} (Intel HEX)")
    _print_sizes(fw)
    if fw.board.is_qemu:
        progress(f"booting {fw.elf.name} on QEMU once to measure its stack")
    for line in stack_and_ram_report(fw, report):
        print(line)
    return 0


def _run_inputs(args, params) -> list[np.ndarray]:
    if args.input:
        return load_inputs(args.input, params)
    progress("no --input given: running on all-zero inputs")
    return [np.zeros(p.type.shape, dtype=p.type.np_dtype) for p in params]


def _cmd_run(args: argparse.Namespace) -> int:
    import tempfile

    from mcuforge.boards import load_board
    from mcuforge.codegen.emit import emit
    from mcuforge.device import connect, read_report, run_sets, run_timeout
    from mcuforge.driver import compile_module, read_model
    from mcuforge.ir.expr import Var

    board = load_board(args.board)
    check_port(board, args.port)
    src = Path(args.model)
    with tempfile.TemporaryDirectory(prefix="mcuforge-run-") as tmp:
        if src.is_dir():  # everything checked before the build
            report = read_report(src)
            inputs = _run_inputs(args, [Var(t["tensor"], ty) for t, ty in zip(report.info["inputs"], report.inputs)])
        else:
            module, blob = read_model(src)
            inputs = _run_inputs(args, module.main.params)
            progress(f"compiling {src.name}")
            compiled = compile_module(module, blob, options(args, board))
            check_fits(compiled, board)
            report = read_report(emit(compiled, Path(tmp) / "model", "model", src.name))
        fw = _build(report.dir, board, args.opt, Path(tmp) / "build", args.guard)
        progress(f"running on {board.name}" + (" (QEMU)" if board.is_qemu else f" ({args.port})"))
        with connect(board, fw.elf, args.port, report=report) as link:
            res = run_sets(link, [inputs], report.outputs, timeout=run_timeout(report))
    for i, o in enumerate(res.outputs[0]):
        print(f"output {i} {o.dtype}{list(o.shape)}: {np.array2string(o.reshape(-1), max_line_width=100, threshold=64)}")
    if args.save:
        np.savez(args.save, *res.outputs[0])
        print(f"outputs saved to {args.save} (arr_0 ...)")
    print(f"{res.unit}: {res.counts[0]:,} per inference")
    _print_sizes(fw)
    print(f"stack high-water: {res.stack_bytes:,} B on this input (the RAM check uses the static bound, "
          f"{fw.static_stack.bytes:,} B)")
    if args.guard:
        print("guard: canaries before and after the arena and at the stack limit intact after the run")
    info = report.info
    print(f"arena: {info['arena_bytes']:,} B planned (lower bound {info['lower_bound_bytes']:,} B, "
          f"gap {info['gap_bytes']:,} B)")
    if res.layer_counts:
        print("per layer:")
        for s, n in zip(info["schedule"], res.layer_counts):
            src_ops = ", ".join(f"#{t['index']} {t['op']}" for t in s["tflite"])
            print(f"  {s['step']:>3} {src_ops:<28} {s['op']:<20} {n:>12,}")
    return 0


def _cmd_flash(args: argparse.Namespace) -> int:
    from mcuforge.boards import load_board
    from mcuforge.device import flash, pyocd_for, read_report

    board = load_board(args.board)
    pyocd_for(board)  # a QEMU board, or no pyOCD: said before building
    read_report(args.dir)
    fw = _build(Path(args.dir), board, args.opt, _build_dir(args, board))
    progress(f"flashing {fw.elf.name} to {board.name} with pyOCD")
    flash(board, fw.elf, args.probe)
    print(f"flashed {fw.elf} to {board.name}")
    return 0


def _cmd_toolchain_file(args: argparse.Namespace) -> int:
    from mcuforge.firmware_build import TOOLCHAIN_FILE

    if args.board:
        from mcuforge.boards import load_board

        flags = " ".join(load_board(args.board).cpu_flags())
        print(f'-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN_FILE} "-DMCU_CPU_FLAGS={flags}"')
    else:
        print(TOOLCHAIN_FILE)
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from mcuforge.bench import bars, bench, bench_text
    from mcuforge.boards import load_board

    if args.picture and Path(args.picture).suffix.lower() not in (".svg", ".png"):
        raise McuforgeError(f"--picture {args.picture}: use a .svg or .png file name")
    check_port(load_board(args.board), args.port)
    r = bench(args.model, args.board, tuple(args.targets.split(",")), args.port, args.opt, progress,
              cycles=args.cycles, memory=args.memory)
    print(json.dumps(r, indent=2) if args.json else bench_text(r))
    if args.picture:
        bars(r).write(args.picture)
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    from mcuforge.driver import compile_model
    from mcuforge.planner.picture import write_picture
    from mcuforge.planner.report import plan_json, plan_text

    if args.picture and Path(args.picture).suffix.lower() not in (".svg", ".png"):
        raise McuforgeError(f"--picture {args.picture}: use a .svg or .png file name")
    board = None
    if args.board:
        from mcuforge.boards import load_board

        board = load_board(args.board)
    compiled = compile_model(args.model, options(args, board))
    info = plan_json(compiled)
    if board:
        info["board"] = board.name
    print(json.dumps(info, indent=2) if args.json else plan_text(info))
    if args.picture:
        write_picture(info, args.picture)
        if not args.json:
            print(f"picture:      {args.picture}")
    return 0


MEMORY_HELP = ("arena against instructions: min (every overlap of an output with its input the kernels allow and "
               "the arena needs, and fused chains of conv/depthwise layers run row by row where they shrink the "
               "arena, whatever the slower kernel paths and extra calls cost), balanced (default: the free "
               "overlaps, and the costly ones and fusions within ~5%% more instructions), fast (no overlap beyond "
               "element-wise in place, no fusion)")
OPT_HELP = f"arm-none-eabi-gcc optimization level: {', '.join(OPT_LEVELS)} (default -O2; the dash is optional)"
BUILD_DIR_HELP = ("where to build (default: outside DIR, under $XDG_CACHE_HOME/mcuforge/build/ or "
                  "~/.cache/mcuforge/build/)")
PACKAGE_NAMES = {"zephyr": "a Zephyr module", "platformio": "a PlatformIO library", "arduino": "an Arduino library",
                 "cmsis-pack": "a CMSIS-Pack"}  # mcuforge.codegen.packages.PACKAGES
PACKAGES = tuple(PACKAGE_NAMES)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mcuforge", description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("--version", action="version", version=f"mcuforge {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    s = sub.add_parser("inspect", help="operators, tensors, weights, unsupported ops and memory lower bound")
    s.add_argument("model", help="a .tflite file")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.set_defaults(func=_cmd_inspect)

    s = sub.add_parser("compile", help="generate the C sources, CMake project and report for a model")
    s.add_argument("model", help="a .tflite file")
    s.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="output directory: new, empty, or an earlier mcuforge output (replaced atomically)")
    s.add_argument("--force", action="store_true",
                   help="replace DIR even if it holds other files, or is a file or a symbolic link (the link "
                        "itself)")
    s.add_argument("--prefix", default="model", help="C name prefix, so several models link into one firmware")
    s.add_argument("--board", help="target board: checks the model fits its RAM and flash, and lays the weights out "
                                   "for its core's kernel paths (plain C, DSP or Helium; the C stays correct on "
                                   "any core)")
    s.add_argument("--targets", default="cmsis-nn,c", help="targets in priority order (default cmsis-nn,c)")
    s.add_argument("--memory", default="balanced", choices=MEMORY_MODES, help=MEMORY_HELP)
    s.add_argument("--package", choices=PACKAGES,
                   help="lay the output out as a Zephyr module, PlatformIO library, Arduino library or CMSIS-Pack")
    s.set_defaults(func=_cmd_compile)

    s = sub.add_parser("boards", help="list the boards mcuforge can build for")
    s.set_defaults(func=_cmd_boards)

    s = sub.add_parser("toolchain-file", help="print the path of the CMake toolchain file for arm-none-eabi-gcc")
    s.add_argument("--board", help="print the CMake arguments for this board instead (toolchain file and CPU flags)")
    s.set_defaults(func=_cmd_toolchain_file)

    s = sub.add_parser("build", help="build a compiled model directory into firmware for a board (ELF, .bin, .hex)")
    s.add_argument("dir", help="a directory written by mcuforge compile")
    s.add_argument("--board", required=True, help="board name (see mcuforge boards) or a board .toml")
    s.add_argument("--opt", default="-O2", help=OPT_HELP)
    s.add_argument("--build-dir", metavar="BUILD", help=BUILD_DIR_HELP)
    s.add_argument("--guard", action="store_true",
                   help="guard build: canaries around the arena and at the stack limit, checked after every run")
    s.set_defaults(func=_cmd_build)

    s = sub.add_parser("run", help="build and run a model on a board or QEMU; print outputs and counts")
    s.add_argument("model", help="a .tflite file or a directory written by mcuforge compile")
    s.add_argument("--board", required=True, help="board name (see mcuforge boards) or a board .toml")
    s.add_argument("--input", action="append", metavar="FILE", help=".npy per model input (default: zeros); float arrays are quantized with the input's scale")
    s.add_argument("--port", help="serial device of a real board (e.g. /dev/ttyACM0)")
    s.add_argument("--save", metavar="FILE.npz", help="also save the outputs to FILE.npz")
    s.add_argument("--targets", default="cmsis-nn,c", help="targets in priority order (default cmsis-nn,c)")
    s.add_argument("--memory", default="balanced", choices=MEMORY_MODES, help=MEMORY_HELP)
    s.add_argument("--opt", default="-O2", help=OPT_HELP)
    s.add_argument("--guard", action="store_true",
                   help="guard build: canaries around the arena and at the stack limit, checked after every run")
    s.set_defaults(func=_cmd_run)

    s = sub.add_parser("flash", help="build a compiled model directory and flash it with pyOCD")
    s.add_argument("dir", help="a directory written by mcuforge compile")
    s.add_argument("--board", required=True, help="a real board (see mcuforge boards)")
    s.add_argument("--probe", help="pyOCD probe unique id, when several are connected")
    s.add_argument("--opt", default="-O2", help=OPT_HELP)
    s.add_argument("--build-dir", metavar="BUILD", help=BUILD_DIR_HELP)
    s.set_defaults(func=_cmd_flash)

    s = sub.add_parser("bench", help="instructions/cycles per inference and per layer, flash, RAM, compile time")
    s.add_argument("model", help="a .tflite file")
    s.add_argument("--board", required=True, help="board name (see mcuforge boards) or a board .toml")
    s.add_argument("--port", help="serial device of a real board (e.g. /dev/ttyACM0)")
    s.add_argument("--targets", default="cmsis-nn,c", help="targets in priority order (default cmsis-nn,c)")
    s.add_argument("--memory", default="balanced", choices=MEMORY_MODES, help=MEMORY_HELP)
    s.add_argument("--opt", default="-O2", help=OPT_HELP)
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--picture", metavar="FILE", help="per-layer bar chart (%% of total, per MAC) to FILE.svg or FILE.png")
    s.add_argument("--cycles", action="store_true",
                   help="QEMU boards: also estimate cycles from the executed instruction stream (about 2-3x slower)")
    s.set_defaults(func=_cmd_bench)

    s = sub.add_parser("plan", help="schedule, arena offsets and lifetimes, lower bound, picture")
    s.add_argument("model", help="a .tflite file")
    s.add_argument("--board", help="board the plan is for (its core's kernel paths; memory limits are checked at "
                                   "compile time)")
    s.add_argument("--targets", default="cmsis-nn,c", help="targets in priority order (default cmsis-nn,c)")
    s.add_argument("--memory", default="balanced", choices=MEMORY_MODES, help=MEMORY_HELP)
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--picture", metavar="FILE", help="draw the arena over time to FILE.svg or FILE.png")
    s.set_defaults(func=_cmd_plan)

    s = sub.add_parser("verify", help="check mcuforge is bit-exact with the TFLite Micro interpreter")
    s.add_argument("model", help="a .tflite file")
    s.add_argument("--on", default="reference", metavar="reference|host|BOARD",
                   help="what runs mcuforge's side: 'reference' evaluates the lowered program's kernel models "
                        "in numpy; 'host' compiles the generated C with gcc and runs it; a board name builds "
                        "the firmware and runs it there (QEMU or --port)")
    s.add_argument("--port", help="serial device of a real board (e.g. /dev/ttyACM0)")
    s.add_argument("--targets", default="cmsis-nn,c", help="targets in priority order (default cmsis-nn,c)")
    s.add_argument("--memory", default="balanced", choices=MEMORY_MODES, help=MEMORY_HELP)
    s.add_argument("-n", type=int, default=10,
                   help="number of seeded random inputs (default 10); for a model with state (LSTM, SVDF) the "
                        "steps of each sequence, the state carried from step to step")
    s.add_argument("--sequences", type=int, default=2,
                   help="for a model with state: how many sequences of -n steps, each from the initial state "
                        "(default 2)")
    s.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    s.add_argument("--input", action="append", metavar="FILE",
                   help="use this .npy (one per model input, in order) or .npz instead of random inputs; "
                        "float arrays are quantized with the input's scale and zero point")
    s.add_argument("--intermediates", action="store_true", help="compare every intermediate tensor too")
    s.add_argument("--guard", action="store_true",
                   help="with --on BOARD: a guard build (canaries around the arena and at the stack limit)")
    s.set_defaults(func=_cmd_verify)
    return p


def _one_line(msg: str) -> str:
    """Errors are one line: text taken from a file or a path (a name with a newline) stays on it."""
    return " ".join(msg.splitlines())


def _attach_opt_values(argv: Sequence[str]) -> list[str]:
    """`--opt -O2` as `--opt=-O2`: argparse would take a value starting with '-' for an option."""
    out, rest = [], iter(argv)
    for a in rest:
        value = next(rest, None) if a == "--opt" else None
        out.append(a if value is None else f"--opt={value}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(_attach_opt_values(sys.argv[1:] if argv is None else argv))
    if getattr(args, "n", 1) < 1:
        parser.error("-n must be at least 1")
    if getattr(args, "sequences", 1) < 1:
        parser.error("--sequences must be at least 1")
    try:
        if getattr(args, "opt", None) is not None:
            args.opt = opt_flag(args.opt)
        return int(args.func(args) or 0)
    except McuforgeError as e:
        print(f"mcuforge: error: {_one_line(str(e))}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("mcuforge: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug in mcuforge: one line, not a traceback
        if os.environ.get("MCUFORGE_DEBUG"):
            raise
        print(f"mcuforge: internal error: {type(e).__name__}: {e} (rerun with MCUFORGE_DEBUG=1 for details "
              "and please report it)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
