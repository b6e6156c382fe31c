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


def progress(msg: str) -> None:
    """A step that takes more than a moment: say so on stderr (stdout stays the result)."""
    print(f"mcuforge: {msg}", file=sys.stderr, flush=True)


def check_fits(compiled, board) -> None:
    """Refuse at compile time a model that cannot fit the board: arena + stack in RAM, constants
    in flash (the build then checks the exact figures from the ELF)."""
    from mcuforge.errors import McuforgeError

    consts = sum(int(np.asarray(a).nbytes) for b in compiled.program.bindings for a in b.kernel.constants.values())
    ram_need = compiled.arena.arena_bytes + board.stack_size
    if ram_need > board.ram.size:
        raise McuforgeError(f"the model needs {compiled.arena.arena_bytes:,} B of arena + {board.stack_size:,} B of "
                            f"stack = {ram_need:,} B of RAM; {board.name} has {board.ram.size:,} B")
    if consts > board.flash.size:
        raise McuforgeError(f"the model's constants take {consts:,} B of flash; {board.name} has "
                            f"{board.flash.size:,} B")


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
    the input names), checked against the model's inputs."""
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

    return check_inputs(Function(tuple(params), Tuple(())), arrays)


def _cmd_verify(args: argparse.Namespace) -> int:
    from mcuforge.driver import Options, compile_model
    from mcuforge.verify import random_inputs, verify_host, verify_program

    if args.guard and args.on in ("reference", "host"):
        raise McuforgeError(f"--guard builds firmware for a board: use it with --on BOARD, not --on {args.on}")
    t0 = time.monotonic()
    compiled = compile_model(args.model, Options(targets=tuple(args.targets.split(","))))
    module = compiled.imported
    if args.input:
        input_sets = [load_inputs(args.input, module.main.params)]
    else:
        rng = np.random.default_rng(args.seed)
        input_sets = [random_inputs(module, rng) for _ in range(args.n)]
    if args.on == "reference":
        results = verify_program(compiled, input_sets, intermediates=args.intermediates)
        what = "outputs and intermediates" if args.intermediates else "outputs"
    elif args.on == "host":
        results = verify_host(compiled, input_sets)
        what = "outputs"
    else:
        from mcuforge.verify import verify_board

        results = verify_board(compiled, input_sets, args.on, port=args.port, progress=progress, guard=args.guard)
        what = "outputs"
    failed = 0
    for r in results:
        if not r.ok:
            failed += 1
            print(f"input {r.index}: MISMATCH — {r.mismatches[0]}")
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
    from mcuforge.driver import Options, compile_model

    t0 = time.monotonic()
    check_target(args.output, args.force, keep=[args.model])  # before the slow part
    compiled = compile_model(args.model, Options(targets=tuple(args.targets.split(","))))
    if args.board:
        from mcuforge.boards import load_board

        check_fits(compiled, load_board(args.board))
    emit(compiled, args.output, args.prefix, Path(args.model).name, force=args.force)
    weights = sum(int(np.asarray(a).nbytes) for b in compiled.program.bindings for a in b.kernel.constants.values())
    print(f"compiled {Path(args.model).name} -> {args.output}/ ({args.prefix}.h, {args.prefix}.c, "
          f"{args.prefix}_weights.c, kernels/, CMakeLists.txt, report.json) in {time.monotonic() - t0:.1f} s")
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


def _build(src: Path, board, opt: str, guard: bool = False):
    from mcuforge.device import build_generated

    progress(f"building {src} for {board.name} (arm-none-eabi-gcc {opt}{', guard build' if guard else ''})")
    fw = build_generated(src, board, opt=opt, guard=guard)
    return fw


def _print_sizes(fw) -> None:
    print(f"flash: {fw.flash_bytes:,} B (text {fw.text_bytes:,} + data {fw.data_bytes:,}) of {fw.board.flash.size:,} B")
    print(f"RAM:   {fw.ram_bytes:,} B static (data {fw.data_bytes:,} + bss {fw.bss_bytes:,}, arena included) "
          f"+ {fw.stack_bytes:,} B stack reserved, of {fw.board.ram.size:,} B")


def _cmd_build(args: argparse.Namespace) -> int:
    from mcuforge.boards import load_board
    from mcuforge.device import arena_bytes_of, stack_and_ram_report

    src = Path(args.dir)
    fw = _build(src, load_board(args.board), args.opt, args.guard)
    print(f"firmware: {fw.elf}" + (" (guard build: canaries around the arena and at the stack limit)"
                                   if args.guard else ""))
    _print_sizes(fw)
    if fw.board.is_qemu:
        progress(f"booting {fw.elf.name} on QEMU once to measure its stack")
    for line in stack_and_ram_report(fw, arena_bytes_of(src)):
        print(line)
    return 0


def _prepare(args, workdir: Path):
    """(generated dir, board, compiled or None) for run/verify: compile a .tflite, or take a DIR."""
    from mcuforge.boards import load_board
    from mcuforge.codegen.emit import emit
    from mcuforge.driver import Options, compile_model

    board = load_board(args.board)
    src = Path(args.model)
    compiled = None
    if src.is_dir():
        return src, board, None
    progress(f"compiling {src.name}")
    compiled = compile_model(src, Options(targets=tuple(args.targets.split(","))))
    check_fits(compiled, board)
    out = emit(compiled, workdir / "model", "model", src.name)
    return out, board, compiled


def _cmd_run(args: argparse.Namespace) -> int:
    import tempfile

    from mcuforge.device import connect, io_types_of, run_sets

    with tempfile.TemporaryDirectory(prefix="mcuforge-run-") as tmp:
        src, board, compiled = _prepare(args, Path(tmp))
        in_types, out_types = io_types_of(src)
        fw = _build(src, board, args.opt, args.guard)
        if args.input:
            from mcuforge.ir.expr import Var

            inputs = load_inputs(args.input, [Var(f"input{i}", t) for i, t in enumerate(in_types)])
        else:
            inputs = [np.zeros(t.shape, dtype=t.np_dtype) for t in in_types]
            progress("no --input given: running on all-zero inputs")
        progress(f"running on {board.name}" + (" (QEMU)" if board.is_qemu else f" ({args.port})"))
        with connect(board, fw.elf, args.port) as link:
            res = run_sets(link, [inputs], out_types)
        report = json.loads((src / "report.json").read_text()) if (src / "report.json").exists() else None
    for i, o in enumerate(res.outputs[0]):
        print(f"output {i} {o.dtype}{list(o.shape)}: {np.array2string(o.reshape(-1), max_line_width=100, threshold=64)}")
    if args.save:
        np.savez(args.save, *res.outputs[0])
        print(f"outputs saved to {args.save} (arr_0 ...)")
    print(f"{res.unit}: {res.counts[0]:,} per inference")
    _print_sizes(fw)
    print(f"stack high-water: {res.stack_bytes:,} B")
    if args.guard:
        print("guard: canaries before and after the arena and at the stack limit intact after the run")
    if report:
        print(f"arena: {report['arena_bytes']:,} B planned (lower bound {report['lower_bound_bytes']:,} B, "
              f"gap {report['gap_bytes']:,} B)")
    if report and res.layer_counts:
        print("per layer:")
        for s, n in zip(report["schedule"], res.layer_counts):
            src_ops = ", ".join(f"#{t['index']} {t['op']}" for t in s["tflite"])
            print(f"  {s['step']:>3} {src_ops:<28} {s['op']:<20} {n:>12,}")
    return 0


def _cmd_flash(args: argparse.Namespace) -> int:
    from mcuforge.boards import load_board
    from mcuforge.device import flash

    board = load_board(args.board)
    fw = _build(Path(args.dir), board, args.opt)
    progress(f"flashing {fw.elf.name} to {board.name} with pyOCD")
    flash(board, fw.elf, args.probe)
    print(f"flashed {fw.elf} to {board.name}")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from mcuforge.bench import bars_svg, bench, bench_text

    if args.picture and not args.picture.endswith(".svg"):
        raise McuforgeError(f"--picture {args.picture}: use a .svg file name")
    r = bench(args.model, args.board, tuple(args.targets.split(",")), args.port, args.opt, progress,
              cycles=args.cycles)
    print(json.dumps(r, indent=2) if args.json else bench_text(r))
    if args.picture:
        Path(args.picture).write_text(bars_svg(r))
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    from mcuforge.driver import Options, compile_model
    from mcuforge.planner.picture import write_picture
    from mcuforge.planner.report import plan_json, plan_text

    if args.picture and Path(args.picture).suffix.lower() not in (".svg", ".png"):
        raise McuforgeError(f"--picture {args.picture}: use a .svg or .png file name")
    compiled = compile_model(args.model, Options(targets=tuple(args.targets.split(","))))
    info = plan_json(compiled)
    if args.board:
        from mcuforge.boards import load_board

        board = load_board(args.board)
        info["board"] = board.name
    print(json.dumps(info, indent=2) if args.json else plan_text(info))
    if args.picture:
        write_picture(info, args.picture)
        if not args.json:
            print(f"picture:      {args.picture}")
    return 0


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
    s.add_argument("--board", help="target board (checks the model fits its RAM and flash)")
    s.add_argument("--targets", default="cmsis-nn,c", help="targets in priority order (default cmsis-nn,c)")
    s.set_defaults(func=_cmd_compile)

    s = sub.add_parser("boards", help="list the boards mcuforge can build for")
    s.set_defaults(func=_cmd_boards)

    s = sub.add_parser("build", help="build a compiled model directory into firmware for a board")
    s.add_argument("dir", help="a directory written by mcuforge compile")
    s.add_argument("--board", required=True, help="board name (see mcuforge boards) or a board .toml")
    s.add_argument("--opt", default="-O2", help="optimization flag (default -O2)")
    s.add_argument("--guard", action="store_true",
                   help="guard build: canaries around the arena and at the stack limit, checked after every run")
    s.set_defaults(func=_cmd_build)

    s = sub.add_parser("run", help="build and run a model on a board or QEMU; print outputs and counts")
    s.add_argument("model", help="a .tflite file or a directory written by mcuforge compile")
    s.add_argument("--board", required=True, help="board name (see mcuforge boards) or a board .toml")
    s.add_argument("--input", action="append", metavar="FILE", help=".npy per model input (default: zeros)")
    s.add_argument("--port", help="serial device of a real board (e.g. /dev/ttyACM0)")
    s.add_argument("--save", metavar="FILE.npz", help="also save the outputs to FILE.npz")
    s.add_argument("--targets", default="cmsis-nn,c", help="targets in priority order (default cmsis-nn,c)")
    s.add_argument("--opt", default="-O2", help="optimization flag (default -O2)")
    s.add_argument("--guard", action="store_true",
                   help="guard build: canaries around the arena and at the stack limit, checked after every run")
    s.set_defaults(func=_cmd_run)

    s = sub.add_parser("flash", help="build a compiled model directory and flash it with pyOCD")
    s.add_argument("dir", help="a directory written by mcuforge compile")
    s.add_argument("--board", required=True, help="a real board (see mcuforge boards)")
    s.add_argument("--probe", help="pyOCD probe unique id, when several are connected")
    s.add_argument("--opt", default="-O2", help="optimization flag (default -O2)")
    s.set_defaults(func=_cmd_flash)

    s = sub.add_parser("bench", help="instructions/cycles per inference and per layer, flash, RAM, compile time")
    s.add_argument("model", help="a .tflite file")
    s.add_argument("--board", required=True, help="board name (see mcuforge boards) or a board .toml")
    s.add_argument("--port", help="serial device of a real board (e.g. /dev/ttyACM0)")
    s.add_argument("--targets", default="cmsis-nn,c", help="targets in priority order (default cmsis-nn,c)")
    s.add_argument("--opt", default="-O2", help="optimization flag (default -O2)")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    s.add_argument("--picture", metavar="FILE.svg", help="per-layer bar chart")
    s.add_argument("--cycles", action="store_true",
                   help="QEMU boards: also estimate cycles from the executed instruction stream (about 2-3x slower)")
    s.set_defaults(func=_cmd_bench)

    s = sub.add_parser("plan", help="schedule, arena offsets and lifetimes, lower bound, picture")
    s.add_argument("model", help="a .tflite file")
    s.add_argument("--board", help="board the plan is for (memory limits are checked at compile time)")
    s.add_argument("--targets", default="cmsis-nn,c", help="targets in priority order (default cmsis-nn,c)")
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
    s.add_argument("-n", type=int, default=10, help="number of seeded random inputs (default 10)")
    s.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    s.add_argument("--input", action="append", metavar="FILE",
                   help="use this .npy (one per model input, in order) or .npz instead of random inputs")
    s.add_argument("--intermediates", action="store_true", help="compare every intermediate tensor too")
    s.add_argument("--guard", action="store_true",
                   help="with --on BOARD: a guard build (canaries around the arena and at the stack limit)")
    s.set_defaults(func=_cmd_verify)
    return p


def _one_line(msg: str) -> str:
    """Errors are one line: text taken from a file or a path (a name with a newline) stays on it."""
    return " ".join(msg.splitlines())


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "n", 1) < 1:
        parser.error("-n must be at least 1")
    try:
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
