"""emit(): C sources for a compiled model, from Jinja2 templates.

Output directory (written atomically, never over a user's files: output_dir.py):
    <prefix>.h            the API: arena and state sizes, inputs/outputs with shapes and quantization
    <prefix>.c            kernel calls in the scheduled order at the planned arena offsets; the states
                          (LSTM/SVDF variable tensors) in a static array of their own, set to their
                          initial values before the first run and by <prefix>_reset()
    <prefix>_weights.c/h  constants in flash (const, 16-byte aligned), laid out for their kernels
    mcuforge_model.h      maps the harnesses' generic MCU_MODEL_* API to the prefixed names
    kernels/              the C kernels this model uses, and only those
    CMakeLists.txt        a static library a firmware can add_subdirectory()
    mcuforge_kernels.cmake  the kernels of every model of a build in one shared, version-checked library
    report.json/.txt      the plan (schedule, arena offsets, I/O types, MACs) and the prefix: what the
                          runners (mcuforge build/run/flash DIR) read
    .mcuforge-output.json the marker: mcuforge's version and the SHA-256 of every file above

Each kernel call is rendered by its target's template (`KernelCall.template`) with a typed context
(`KernelContext`); the model skeleton only loops over rendered calls.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, fields
from importlib.resources import files
from pathlib import Path
from typing import Any, Mapping, Sequence

import jinja2
import numpy as np
from mcuforge.planner.fusion import FusedCall, parts
from mcuforge.planner.kernel import KernelCall
from mcuforge.planner.report import plan_json, plan_text
from mcuforge.planner.target import get_target
from mcuforge.planner.targets.cmsis_nn.paths import kernel_paths

from mcuforge import __version__
from mcuforge.codegen.fused import render_fused
from mcuforge.codegen.output_dir import check_target, write_dir
from mcuforge.errors import McuforgeError

C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert
_Thread_local bool true false NULL main""".split())
C_TYPES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "uint16": "uint16_t", "int32": "int32_t",
           "int64": "int64_t", "float32": "float", "bool": "uint8_t"}


class CodegenError(McuforgeError):
    """The model cannot be turned into C (a missing kernel, a bad prefix)."""


def check_identifier(name: str, what: str = "prefix") -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or name in C_KEYWORDS:
        raise CodegenError(f"{what} '{name}' is not a usable C identifier (letters, digits, '_', not a keyword)")
    return name


@dataclass(frozen=True)
class Operand:
    """One argument of a kernel call after `&params`: an activation input in the arena (`input`,
    cast to `const ctype *`), a state the kernel updates in place (`state`, cast to `ctype *`), a
    constant array in flash (`const`), NULL for an absent optional argument (`null`), the scratch
    buffer (`scratch`), or the output in the arena (`output`)."""

    kind: str
    expr: str
    ctype: str = ""


@dataclass(frozen=True)
class KernelContext:
    """What a kernel template sees: each field is a template variable of that name."""

    k: KernelCall  # the call: function, params, constants, input/output types, op info
    params: Mapping[str, Any]  # k.params
    ins: tuple[str, ...]  # C expressions (uint8_t *) of the kernel inputs in the arena
    out: str  # C expression (uint8_t *) of the output in the arena
    scratch: str  # C expression of the scratch buffer, or "NULL"
    const: Mapping[str, str]  # constant role -> C identifier of its array in flash
    arg: tuple[str, ...]  # for each argument of the original op: its input or constant expression
    operands: tuple[Operand, ...]  # the generic call's arguments after &params (kernels with a `struct`)
    p: str  # prefix
    layer: int

    def variables(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def operands(kc: KernelCall, ins: tuple[str, ...], out: str, scratch: str,
             const: Mapping[str, str], state_slots: frozenset[int] = frozenset()) -> tuple[Operand, ...]:
    """The generic call's arguments: the op's arguments in op order (padded with NULL up to
    `op_args`), then the other constants in their order, the scratch buffer if any, the output.
    `state_slots`: the kernel inputs that are states (passed as writable pointers)."""
    result = []
    for i in range(kc.op_args if kc.op_args is not None else len(kc.arg_map)):
        slot = kc.arg_map[i] if i < len(kc.arg_map) else None
        if i >= len(kc.arg_map):
            result.append(Operand("null", "NULL"))
        elif slot is None:
            result.append(Operand("const", const[f"arg{i}"]))
        else:
            kind = "state" if slot in state_slots else "input"
            result.append(Operand(kind, ins[slot], C_TYPES[kc.inputs[slot].dtype]))
    result += [Operand("const", name) for role, name in const.items() if not role.startswith("arg")]
    if kc.scratch_bytes:
        result.append(Operand("scratch", scratch))
    result.append(Operand("output", out, C_TYPES[kc.output.dtype]))
    return tuple(result)


def c_value(v: Any) -> str:
    """A parameter value as a C initializer: ints (INT32_MIN spelled so that it is an int), strings
    as C literals already (float literals, hex), lists as arrays, dicts as nested structs."""
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, np.integer)):
        return int_literal(int(v))
    if isinstance(v, str):
        return v
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f".{k} = {c_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple, np.ndarray)):
        return "{ " + ", ".join(c_value(x) for x in v) + " }"
    raise CodegenError(f"no C form for parameter value {v!r}")


@functools.lru_cache(maxsize=None)
def _env(directory: str) -> jinja2.Environment:
    """One environment per template directory, so each template is parsed once per process (Jinja
    still reloads a template whose file changed). A target's directory is searched first, then the
    shared templates (the generic call.c.j2)."""
    loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(directory)),
                                  jinja2.FileSystemLoader(str(_templates_root()))])
    env = jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["c_value"] = c_value
    return env


def _templates_root() -> Path:
    return Path(str(files("mcuforge.codegen") / "templates"))


def f32_literal(v: float) -> str:
    """A float32 value as a C constant expression with exactly its bits: the shortest decimal for a
    finite value; the compiler's builtins for infinities and NaNs (sign and payload kept)."""
    bits = int(np.float32(v).view(np.uint32))
    sign = "-" if bits >> 31 else ""
    if np.isfinite(np.float32(v)):
        return f"{float(np.float32(v))!r}f"
    if bits & 0x7FFFFF == 0:
        return f"({sign}__builtin_inff())"
    nan = "__builtin_nanf" if bits & 0x400000 else "__builtin_nansf"
    return f'({sign}{nan}("{bits & 0x3FFFFF}"))'


def int_literal(v: int) -> str:
    """An integer as a C constant of its value (the most negative int32/int64 is not a literal)."""
    if v == -(2**31):
        return "(-2147483647 - 1)"
    if v == -(2**63):
        return "(-9223372036854775807LL - 1)"
    return str(v)


def _c_array(data: np.ndarray) -> str:
    flat = np.asarray(data).reshape(-1)
    if flat.dtype == np.float32:
        items = [f32_literal(v) for v in flat]
    else:
        items = [int_literal(int(v)) for v in flat]
    width = 16 if flat.dtype == np.int8 else 8
    return "\n".join("    " + ", ".join(items[i:i + width]) + "," for i in range(0, len(items), width)) or "    0,"


QUANTIZED_IO = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}  # dtype -> its range


def _io_info(program, arena, names: Sequence[str]) -> list[dict[str, Any]]:
    """What the header says of each input (output): type, shape, quantization, arena offset; `quantized`
    when it gets float quantize (dequantize) helpers: an 8/16-bit type with one scale."""
    out = []
    for i, n in enumerate(names):
        b = program.buffers[n]
        q = b.type.quant
        scale = repr(float(q.s)) if q is not None and not q.per_channel else None
        out.append({"index": i, "label": b.label.replace("*/", "* /"), "dtype": b.type.dtype,
                    "ctype": C_TYPES[b.type.dtype], "shape": list(b.type.shape), "count": int(np.prod(b.type.shape)),
                    "nbytes": b.type.nbytes, "offset": arena.offset(n), "scale": scale,
                    "zero_point": q.zp if q is not None else 0,
                    "quantized": scale is not None and b.type.dtype in QUANTIZED_IO,
                    "range": QUANTIZED_IO.get(b.type.dtype)})
    return out


def _state_info(program, arena) -> list[dict[str, Any]]:
    """What the reset code needs of each state: where it lives, its bytes and the byte it is filled
    with (TFLM's ResetVariableTensors memsets an int8 state with its zero point, others with 0)."""
    out = []
    for n, off in arena.states.items():
        b, fill = program.buffers[n], program.states[n]
        if fill and b.type.dtype != "int8":
            raise CodegenError(f"state '{b.label}' ({b.type}) starts at {fill}: not a byte pattern")
        out.append({"label": b.label.replace("*/", "* /"), "offset": off, "nbytes": b.type.nbytes, "fill": fill,
                    "dtype": b.type.dtype, "shape": list(b.type.shape)})
    return out


def render(compiled, prefix: str, source: str) -> dict[str, str]:
    """The generated files as {relative path: text} (kernel sources are copied by `emit`)."""
    return render_context(model_context(compiled, prefix, source))


def model_context(compiled, prefix: str, source: str) -> dict[str, Any]:
    """What the model's templates see: names, version, arena, inputs and outputs, rendered layers,
    constants, the kernels it uses."""
    p = check_identifier(prefix)
    P = p.upper()
    prog, arena = compiled.program, compiled.arena
    common = {"p": p, "P": P, "version": __version__, "source": Path(source).name,
              "sha256": hashlib.sha256(compiled.blob).hexdigest()}
    constants: list[dict[str, Any]] = []
    layers: list[dict[str, str]] = []
    headers: set[str] = set()
    for step, b in enumerate(prog.bindings):
        kc = b.kernel
        const_names = {}
        for role, data in kc.constants.items():
            cname = f"{p}_l{step}_{check_identifier(role, 'constant role')}"
            const_names[role] = cname
            constants.append({"name": cname, "ctype": C_TYPES[str(np.asarray(data).dtype)],
                              "count": int(np.asarray(data).size) or 1, "body": _c_array(data),
                              "comment": f"layer {step} {role}: {kc.info.tflite} {list(np.asarray(data).shape)}"})
        ins = tuple(f"({p}_state + {arena.states[a]})" if a in arena.states else f"(arena + {arena.offset(a)})"
                    for a in b.args)
        state_slots = frozenset(i for i, a in enumerate(b.args) if a in arena.states)
        out = f"(arena + {arena.offset(b.out)})"
        scratch = f"(arena + {arena.offset(f'scratch{step}')})" if kc.scratch_bytes else "NULL"
        comment = f"{kc.info.tflite} {kc.info.op} '{prog.buffers[b.out].label}' -> {kc.info.target} {kc.function or 'view'}"
        if kc.view:
            code = "    /* a view of its input: no code */"
        elif isinstance(kc, FusedCall):
            def part(k, params, src, dst, scratch, const, step=step):
                return _render_call(k, params, (src,), dst, scratch, const, frozenset(), p, step)

            code = render_fused(kc, ins[0], out, scratch, const_names, part)
            headers.update(_header_for(k, get_target(k.info.target)) for k in kc.parts)
        else:
            code = _render_call(kc, kc.params, ins, out, scratch, const_names, state_slots, p, step)
            headers.add(_header_for(kc, get_target(kc.info.target)))
        layers.append({"comment": comment.replace("*/", "* /"), "code": code, "scratch_check": kc.scratch_check,
                       "scratch_bytes": kc.scratch_bytes, "step": step})
    return {**common, "arena_bytes": arena.arena_bytes, "state_bytes": arena.state_bytes,
            "states": _state_info(prog, arena), "inputs": _io_info(prog, arena, prog.inputs),
            "outputs": _io_info(prog, arena, prog.outputs), "layers": layers, "constants": constants,
            "kernel_headers": sorted(headers), "kernel_sources": sorted(kernel_files(compiled)[0]),
            "kernel_paths": selected_paths(compiled)}


def selected_paths(compiled) -> list[str]:
    """The kernels' run-time paths the model takes (mcu_cmsis_paths.h), for the build to compile
    only those."""
    return list(kernel_paths(b.kernel for b in compiled.program.bindings))


def _render_call(kc: KernelCall, params: Mapping[str, Any], ins: tuple[str, ...], out: str, scratch: str,
                 const_names: Mapping[str, str], state_slots: frozenset[int], p: str, step: int) -> str:
    """One kernel call, rendered by its target's template."""
    target = get_target(kc.info.target)
    try:
        tmpl = _env(str(target.templates)).get_template(kc.template)
    except jinja2.TemplateNotFound:
        raise CodegenError(f"layer {step} ({kc.info.tflite} {kc.info.op}): target '{target.name}' has no "
                           f"template {kc.template}") from None
    arg = tuple(const_names.get(f"arg{i}", "NULL") if slot is None else ins[slot] for i, slot in enumerate(kc.arg_map))
    ctx = KernelContext(kc, params, ins, out, scratch, const_names, arg,
                        operands(kc, ins, out, scratch, const_names, state_slots) if kc.struct else (), p, step)
    return tmpl.render(ctx.variables()).rstrip()


def render_context(ctx: dict[str, Any]) -> dict[str, str]:
    root = _env(str(_templates_root()))
    p = ctx["p"]
    return {
        f"{p}.h": root.get_template("model.h.j2").render(ctx),
        f"{p}.c": root.get_template("model.c.j2").render(ctx),
        f"{p}_weights.h": root.get_template("weights.h.j2").render(ctx),
        f"{p}_weights.c": root.get_template("weights.c.j2").render(ctx),
        "mcuforge_model.h": root.get_template("mcuforge_model.h.j2").render(ctx),
        "CMakeLists.txt": root.get_template("CMakeLists.txt.j2").render(ctx),
        "mcuforge_kernels.cmake": root.get_template("mcuforge_kernels.cmake.j2").render(ctx),
    }


def _package(files: dict[str, bytes], kind: str, ctx: dict[str, Any]) -> None:
    from mcuforge.codegen.packages import PACKAGES, write_package

    if kind not in PACKAGES:
        raise CodegenError(f"unknown package '{kind}' (known: {', '.join(PACKAGES)})")
    env = _env(str(_templates_root() / "packages"))
    write_package(files, kind, ctx, lambda name, c=None: env.get_template(name).render(c or ctx))


def _header_for(kc: KernelCall, target) -> str:
    """The header declaring the kernel: its own `<source>.h` when it has one, else the target's
    umbrella header."""
    if (target.sources / f"{kc.source}.h").is_file():
        return f"{kc.source}.h"
    return f"mcu_kernels_{kc.info.target.replace('-', '_')}.h"


def all_kernel_files() -> tuple[dict[str, Path], dict[str, Path]]:
    """({.c name: path}, {.h name: path}) of every kernel of every target, and the shared headers."""
    from mcuforge.planner.target import all_targets

    dirs = [get_target(t).sources for t in all_targets()]
    sources = {f.name: f for d in dirs for f in sorted(d.glob("*.c"))}
    headers = {f.name: f for d in [*dirs, Path(str(files("mcuforge.firmware") / "include"))]
               for f in sorted(d.glob("*.h"))}
    return sources, headers


def kernel_files(compiled) -> tuple[dict[str, Path], dict[str, Path]]:
    """({.c name: path}, {.h name: path}) of the kernels the model uses, and exactly the headers they
    need: those the generated model includes (a kernel's own `<source>.h`, or its target's umbrella
    header, and what the model templates include, e.g. mcuforge_quantize.h) and everything these and
    the kernel sources include, transitively, from the targets' kernel directories and
    firmware/include (a shared header no used kernel reaches is left out)."""
    sources: dict[str, Path] = {}
    roots: list[Path] = sorted(Path(str(_templates_root())).glob("*.j2"))
    for step, b in enumerate(compiled.program.bindings):
        for kc in parts(b.kernel):
            if kc.view:
                continue
            target = get_target(kc.info.target)
            src = target.sources / f"{kc.source}.c"
            if not src.exists():
                raise CodegenError(f"layer {step} ({kc.info.tflite} {kc.info.op}): no C kernel {kc.source} in "
                                   f"target '{target.name}'")
            sources[src.name] = src
            header = target.sources / _header_for(kc, target)
            roots += [src, header] if header.is_file() else [src]
    todo = list(sources.values())
    while todo:  # the kernels a kernel calls (mcu_cmsis_conv2d_add_s8: the convolution and the ADD)
        src = todo.pop()
        for names in _CALLS.findall(src.read_text()):
            for dep in names.split():
                path = src.parent / dep  # a target's kernels sit side by side
                if not path.is_file():
                    raise CodegenError(f"kernel {src.name} calls {dep}, which is not beside it")
                if dep not in sources:
                    sources[dep] = path
                    roots.append(path)
                    todo.append(path)
    return sources, _included(roots)


# A kernel source that calls other kernels names their sources in this comment.
_CALLS = re.compile(r"^/\* mcuforge kernel calls: ([\w. ]+) \*/$", re.MULTILINE)


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.MULTILINE)


def _included(roots: list[Path]) -> dict[str, Path]:
    """The roots that are headers, and every header the roots include, transitively, found in the
    kernel directories of the targets or in firmware/include ({name: path}; the generated kernels/
    directory is flat, so a name is unique)."""
    from mcuforge.planner.target import all_targets

    search = [get_target(t).sources for t in all_targets()] + [Path(str(files("mcuforge.firmware") / "include"))]
    found: dict[str, Path] = {r.name: r for r in roots if r.suffix == ".h"}
    todo = list(dict.fromkeys(roots))
    while todo:
        for name in _INCLUDE.findall(todo.pop().read_text()):
            path = next((d / name for d in search if (d / name).is_file()), None)
            if path is not None and name not in found:
                found[name] = path
                todo.append(path)
    return found


def emit(compiled, out_dir: str | Path, prefix: str = "model", source: str = "model.tflite",
         force: bool = False, package: str | None = None) -> Path:
    """Write the generated project and its report to `out_dir`, atomically (all or nothing), over
    nothing but an earlier output of mcuforge unless `force` (output_dir.py says what is refused);
    with `package`, laid out as that build system's package (mcuforge.codegen.packages)."""
    check_target(out_dir, force)
    ctx = model_context(compiled, prefix, source)
    out = {name: text.encode() for name, text in render_context(ctx).items()}
    sources, headers = kernel_files(compiled)
    for name, path in sorted({**sources, **headers}.items()):
        out[f"kernels/{name}"] = path.read_bytes()
    info = {"prefix": prefix, **plan_json(compiled), "model": Path(source).name, "kernel_paths": ctx["kernel_paths"]}
    out["report.json"] = (json.dumps(info, indent=2) + "\n").encode()
    out["report.txt"] = (plan_text(info) + "\n").encode()
    if package:
        _package(out, package, ctx)
    return write_dir(out_dir, out, force)
