"""Bit-exact comparison of mcuforge against the TFLite Micro interpreter.

Models with state (LSTM, SVDF: TFLite variable tensors) are checked on sequences: every function
here takes `steps`, and the input sets are run in sequences of `steps` sets, the state carried from
one set to the next within a sequence and reset to its initial value at the start of each, on both
sides (TFLM is reset only there). `steps=1` (the default) starts every set from the initial state.
For a model without state, `steps` changes nothing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from mcuforge.ir.evaluate import evaluate, initial_states
from mcuforge.ir.expr import Call, Module, Var, users
from mcuforge.ir.ops.gather import gather_layout
from mcuforge.oracle import run_tflm


@dataclass
class Mismatch:
    what: str  # e.g. "output 0 'Identity'" or "tensor 12 'conv1/Relu'"
    count: int
    total: int
    first: list[tuple[tuple[int, ...], object, object]]  # (index, ours, theirs)

    def __str__(self) -> str:
        if self.total == 0:  # nothing compared element by element (e.g. a different number of outputs)
            return self.what
        shown = "; ".join(f"at {list(i)}: mcuforge {a}, TFLM {b}" for i, a, b in self.first)
        return f"{self.what}: {self.count} of {self.total} elements differ; {shown}"


@dataclass
class CaseResult:
    index: int
    mismatches: list[Mismatch] = field(default_factory=list)
    first_layer: str | None = None  # on a device: the first layer whose output differs (per-layer readback)

    @property
    def ok(self) -> bool:
        return not self.mismatches


def _bits(a: np.ndarray) -> np.ndarray:
    """Values compared bit for bit: floats by their bit pattern (so -0.0 != 0.0, NaN == same NaN)."""
    a = np.asarray(a)
    if a.dtype == np.float32:
        return a.view(np.uint32)
    return a


def compare(what: str, ours: np.ndarray, theirs: np.ndarray, show: int = 5) -> Mismatch | None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    if ours.dtype != theirs.dtype or ours.shape != theirs.shape:
        return Mismatch(f"{what}: mcuforge gives {ours.dtype}{list(ours.shape)}, TFLM {theirs.dtype}{list(theirs.shape)}",
                        ours.size, theirs.size, [])
    diff = _bits(ours) != _bits(theirs)
    if not diff.any():
        return None
    idx = np.argwhere(diff)[:show]
    first = [(tuple(int(v) for v in i), ours[tuple(i)].item(), theirs[tuple(i)].item()) for i in idx]
    return Mismatch(what, int(diff.sum()), int(diff.size), first)


def compare_outputs(res: CaseResult, ours: Sequence[np.ndarray], theirs: Sequence[np.ndarray],
                    labels: Sequence[str]) -> CaseResult:
    """Add a mismatch to `res` for every output that differs from TFLM's, and one when the two give a
    different number of outputs."""
    if len(ours) != len(theirs):
        res.mismatches.append(Mismatch(f"mcuforge gives {len(ours)} outputs, TFLM {len(theirs)}", 1, 0, []))
    for i, (o, t, label) in enumerate(zip(ours, theirs, labels)):
        m = compare(f"output {i} '{label}'", o, t)
        if m:
            res.mismatches.append(m)
    return res


def index_bound(p: Var, use: list) -> np.ndarray | None:
    """The exclusive upper bound of an input that is the indices of GATHER, GATHER_ND or
    EMBEDDING_LOOKUP ops (per index vector entry for GATHER_ND; the smallest over every op it
    indexes), None for other inputs: TFLM fails the invoke on an index out of range, so random
    indices must lie inside all of them."""
    bounds = []
    for u in use:
        if not isinstance(u, Call):
            continue
        if u.op == "embedding_lookup" and u.args[0] is p:
            bounds.append(np.array(u.args[1].type.shape[0]))
        elif u.op == "gather" and u.args[1] is p:
            bounds.append(np.array(gather_layout(u.args[0].type.shape, p.type.shape, u.attrs)[4]))
        elif u.op == "gather_nd" and u.args[1] is p:
            bounds.append(np.array(u.args[0].type.shape[:p.type.shape[-1]]))
    return np.minimum.reduce(np.broadcast_arrays(*bounds)) if bounds else None


def random_inputs(module: Module, rng: np.random.Generator) -> list[np.ndarray]:
    """One seeded random input set: int8 over its whole range; float32 over the range the model's
    QUANTIZE of that input can represent (a little beyond, to exercise saturation); indices of a
    gather or lookup inside what they index."""
    fn = module.main
    use = users(fn.body)
    out = []
    for p in fn.params:
        t = p.type
        bound = index_bound(p, use.get(id(p), []))
        if bound is not None:
            out.append((rng.random(size=t.shape) * bound).astype(t.np_dtype))
        elif t.np_dtype.kind in "iu":
            info = np.iinfo(t.np_dtype)
            out.append(rng.integers(info.min, info.max, size=t.shape, endpoint=True).astype(t.np_dtype))
        elif t.dtype == "float32":
            lo, hi = -1.0, 1.0
            for u in use.get(id(p), []):
                if isinstance(u, Call) and u.type.quant is not None:
                    q = u.type.quant
                    info = np.iinfo(u.type.np_dtype)
                    lo, hi = (info.min - q.zp) * q.s, (info.max - q.zp) * q.s
                    break
            span = hi - lo
            out.append(rng.uniform(lo - 0.05 * span, hi + 0.05 * span, size=t.shape).astype(np.float32))
        else:
            out.append(rng.integers(0, 2, size=t.shape).astype(t.np_dtype))
    return out


def verify_program(compiled, input_sets: Sequence[Sequence[np.ndarray]], intermediates: bool = False,
                   isolate: bool = True, steps: int = 1) -> list[CaseResult]:
    """Run the lowered, scheduled program (every KernelCall's numpy model, with the constants the
    kernels will read) and TFLM on each input set; compare outputs and, with `intermediates`, every
    buffer that stands for a TFLite tensor, in execution order."""
    from mcuforge.ir.evaluate import check_inputs

    prog = compiled.program
    named = [b.out for b in prog.bindings if prog.buffers[b.out].tensor is not None]
    tensors = [prog.buffers[n].tensor for n in named] if intermediates else []
    theirs_all = run_tflm(compiled.blob, input_sets, tensors, isolate=isolate, steps=steps)
    by_out = {b.out: b for b in prog.bindings}
    results = []
    states = prog.initial_states()
    for k, (inputs, (t_outs, t_inter)) in enumerate(zip(input_sets, theirs_all)):
        keep: dict[str, np.ndarray] = {}
        if k % steps == 0:
            states = prog.initial_states()
        ours = prog.evaluate(check_inputs(compiled.imported.main, inputs), keep, states)
        res = CaseResult(k)
        if intermediates:
            for n in named:
                buf = prog.buffers[n]
                info = by_out[n].kernel.info
                m = compare(f"tensor {buf.tensor} '{buf.label}' (from {info.tflite}, {info.target} "
                            f"{info.composite})", keep[n], t_inter[buf.tensor])
                if m:
                    res.mismatches.append(m)
        results.append(compare_outputs(res, ours, t_outs, [prog.buffers[n].label for n in prog.outputs]))
    return results


def verify_reference(module: Module, blob: bytes, input_sets: Sequence[Sequence[np.ndarray]],
                     intermediates: bool = False, isolate: bool = True, steps: int = 1) -> list[CaseResult]:
    """Run the numpy reference and TFLM on each input set; compare outputs (and, with
    `intermediates`, every tensor that has a TFLite index, in execution order)."""
    fn = module.main
    calls = [n for n in fn.nodes() if isinstance(n, Call) and n.tensor is not None]
    tensors = [n.tensor for n in calls] if intermediates else []
    theirs_all = run_tflm(blob, input_sets, tensors, isolate=isolate, steps=steps)
    results = []
    states = initial_states(module)
    for k, (inputs, (t_outs, t_inter)) in enumerate(zip(input_sets, theirs_all)):
        keep: dict[int, np.ndarray] = {}
        if k % steps == 0:
            states = initial_states(module)
        ours = evaluate(module, inputs, keep, states=states)
        res = CaseResult(k)
        if intermediates:
            for n in calls:
                src = ", ".join(str(s) for s in n.sources)
                m = compare(f"tensor {n.tensor} '{n.name}' (from {src})", keep[id(n)], t_inter[n.tensor])
                if m:
                    res.mismatches.append(m)
        labels = [e.name if isinstance(e, (Call, Var)) else "" for e in fn.outputs]
        results.append(compare_outputs(res, ours, t_outs, labels))
    return results


def verify_host(compiled, input_sets: Sequence[Sequence[np.ndarray]], work_dir=None,
                isolate: bool = True, dsp: bool = False, steps: int = 1) -> list[CaseResult]:
    """Generate C, build it with the host gcc (-Wall -Wextra -Werror), run every input set and
    compare the outputs with TFLM byte for byte. With `dsp`, the cmsis-nn kernels take their DSP
    paths, the instructions emulated in C (mcuforge.host.DSP_EMULATE)."""
    import tempfile
    from pathlib import Path

    from mcuforge.codegen.emit import emit
    from mcuforge.host import DSP_EMULATE, build_host, run_host

    with tempfile.TemporaryDirectory(prefix="mcuforge-host-") as tmp:
        out = emit(compiled, Path(work_dir or tmp) / "model", "model")
        exe = build_host(out, extra_cflags=(DSP_EMULATE,) if dsp else ())
        prog = compiled.program
        ours_all = run_host(exe, input_sets, [prog.buffers[o].type for o in prog.outputs], steps=steps)
    theirs_all = run_tflm(compiled.blob, input_sets, (), isolate=isolate, steps=steps)
    results = []
    labels = [prog.buffers[n].label for n in prog.outputs]
    for k, (ours, (t_outs, _)) in enumerate(zip(ours_all, theirs_all)):
        results.append(compare_outputs(CaseResult(k), ours, t_outs, labels))
    return results


def verify_board(compiled, input_sets: Sequence[Sequence[np.ndarray]], board_name: str, port=None,
                 progress=lambda msg: None, isolate: bool = True, src_dir=None, guard: bool = False,
                 steps: int = 1) -> list[CaseResult]:
    """Generate C (or take `src_dir`), build the firmware for the board, run every input set there
    (QEMU or a board on `port`) and compare the outputs with TFLM byte for byte. On a mismatch, read
    back every layer's output for the first failing input and name the first layer that differs."""
    import tempfile
    from pathlib import Path

    from mcuforge.boards import load_board
    from mcuforge.codegen.emit import emit
    from mcuforge.device import build_generated, connect, read_report, run_sets, run_timeout

    board = load_board(board_name)
    prog = compiled.program
    theirs_all = run_tflm(compiled.blob, input_sets, (), isolate=isolate, steps=steps)
    sequence = steps if prog.states else 0  # RESET before each sequence on the device
    with tempfile.TemporaryDirectory(prefix="mcuforge-board-") as tmp:
        out = Path(src_dir) if src_dir else emit(compiled, Path(tmp) / "model", "model")
        report = read_report(out)
        progress(f"building the firmware for {board.name}")
        fw = build_generated(out, board, build_dir=Path(tmp) / "build", guard=guard)
        progress(f"running {len(input_sets)} input(s) on {board.name}")
        with connect(board, fw.elf, port, report=report) as link:
            run = run_sets(link, input_sets, [prog.buffers[o].type for o in prog.outputs],
                           timeout=run_timeout(report), steps=sequence)
            labels = [prog.buffers[n].label for n in prog.outputs]
            results = [compare_outputs(CaseResult(k), ours, t_outs, labels)
                       for k, (ours, (t_outs, _)) in enumerate(zip(run.outputs, theirs_all))]
            bad = next((r for r in results if not r.ok), None)
            if bad is not None:
                progress(f"input {bad.index} differs: reading back every layer's output on {board.name}")
                start = bad.index - bad.index % sequence if sequence else bad.index
                bad.first_layer = _first_bad_layer(link, compiled, input_sets[start:bad.index + 1], isolate,
                                                   run_timeout(report))
    return results


def _first_bad_layer(link, compiled, inputs_seq: Sequence[Sequence[np.ndarray]], isolate: bool, timeout: float) -> str:
    """Per-layer readback: each layer's output read from the device right after it ran, against
    TFLM's tensor, in execution order; the first that differs, described. `inputs_seq` is the failing
    input set, preceded by the sets of its sequence before it (a model with state: the device is
    reset and they are replayed before each probe, as TFLM runs them before the failing one)."""
    prog, arena = compiled.program, compiled.arena
    steps = [(k, b) for k, b in enumerate(prog.bindings) if prog.buffers[b.out].tensor is not None]
    tensors = [prog.buffers[b.out].tensor for _, b in steps]
    theirs = run_tflm(compiled.blob, inputs_seq, tensors, isolate=isolate, steps=len(inputs_seq))[-1][1]
    input0 = arena.offset(prog.inputs[0])

    def write(inputs):
        for i, x in enumerate(inputs):
            link.write_input(i, np.require(x, requirements="C").tobytes())

    for k, b in steps:
        buf = prog.buffers[b.out]
        if prog.states:
            link.reset()
            for before in inputs_seq[:-1]:
                write(before)
                link.run(timeout=timeout)
        write(inputs_seq[-1])
        raw = link.probe(k, arena.offset(b.out), buf.type.nbytes, input0, timeout=timeout)
        ours = np.frombuffer(raw, dtype=buf.type.np_dtype).reshape(buf.type.shape)
        info = b.kernel.info
        m = compare(f"layer {k} ({info.tflite} {info.op}, {info.target} {b.kernel.function}) output '{buf.label}'",
                    ours, theirs[buf.tensor])
        if m:
            return str(m)
    return "every layer's output matches TFLM; the difference is in reading the outputs back"
