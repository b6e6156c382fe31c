"""Checks of the planner's stage outputs, run by the driver after every stage (the IR verifier,
ir/verifier.py, checks the modules of the stages before): each raises IRError (a compiler bug,
exit code 3) naming what is inconsistent.

    check_kernels   lower     -> one KernelCall per lifted function, typed as the function
    check_program   schedule  -> every binding reads buffers defined before it, outputs defined
    check_arena     plan      -> every buffer and scratch planned, aligned, inside the arena,
                                 and the plan passes the planner's independent overlap check;
                                 every kernel whose output overlaps an input proven by simulating
                                 its read/write order (planner/overlap.py);
                                 every state in its own region, aligned, none overlapping
"""

from __future__ import annotations

from collections.abc import Mapping

from mcuforge.ir.expr import Module

from mcuforge.errors import IRError

from .arena import ALIGNMENT, ArenaPlan
from .kernel import KernelCall
from .memory import PlanError, check_plan
from .overlap import check_overlaps
from .program import Program


def check_kernels(module: Module, kernels: Mapping[str, KernelCall]) -> Mapping[str, KernelCall]:
    lifted = {n for n in module.functions if n != "main"}
    if set(kernels) != lifted:
        raise IRError(f"lowering gave kernels for {sorted(set(kernels) - lifted)} and none for "
                      f"{sorted(lifted - set(kernels))}")
    for name, kc in kernels.items():
        fn = module.functions[name]
        where = f"@{name} ({kc.info.tflite} {kc.info.op})"
        if tuple(p.type for p in fn.params) != kc.inputs or fn.outputs[0].type != kc.output:
            raise IRError(f"{where}: the kernel call is typed {list(map(str, kc.inputs))} -> {kc.output}, the "
                          f"function {[str(p.type) for p in fn.params]} -> {fn.outputs[0].type}")
        if not kc.view and not (kc.function and kc.source and kc.template):
            raise IRError(f"{where}: a kernel call needs a function, a source and a template")
        if kc.scratch_bytes < 0 or (kc.scratch_check and not kc.scratch_bytes):
            raise IRError(f"{where}: scratch of {kc.scratch_bytes} B for {kc.scratch_check or 'no declared need'}")
        if len(kc.arg_map) != len(fn.body.args) or any(s is not None and s >= len(kc.inputs) for s in kc.arg_map):
            raise IRError(f"{where}: argument map {kc.arg_map} does not fit {len(kc.inputs)} input(s)")
    return kernels


def check_program(program: Program) -> Program:
    defined = set(program.inputs) | set(program.states)
    for step, b in enumerate(program.bindings):
        missing = [a for a in b.args if a not in defined]
        if missing:
            raise IRError(f"step {step} ({b.out} = {b.fn}) reads {missing} before they are computed")
        if b.out in defined:
            raise IRError(f"step {step}: buffer {b.out} is computed twice")
        defined.add(b.out)
    undefined = [o for o in program.outputs if o not in defined]
    if undefined:
        raise IRError(f"model outputs {undefined} are never computed")
    unknown = sorted(defined - set(program.buffers))
    if unknown:
        raise IRError(f"buffers {unknown} have no type")
    return program


def check_arena(program: Program, arena: ArenaPlan) -> ArenaPlan:
    offsets = arena.plan.offsets
    wanted = dict.fromkeys(program.inputs) | {b.out: None for b in program.bindings}
    wanted |= {f"scratch{k}": None for k, b in enumerate(program.bindings) if b.kernel.scratch_bytes}
    missing = sorted(set(wanted) - set(offsets))
    if missing:
        raise IRError(f"the arena plan has no offset for {missing}")
    sizes = {b.name: b.size for b in arena.buffers}
    for k, b in enumerate(program.bindings):
        if b.kernel.scratch_bytes and sizes.get(f"scratch{k}") != b.kernel.scratch_bytes:
            raise IRError(f"step {k}: scratch planned with {sizes.get(f'scratch{k}')} B, the kernel needs "
                          f"{b.kernel.scratch_bytes} B")
    try:
        check_plan(arena.buffers, arena.constraints, arena.plan)
    except PlanError as e:
        raise IRError(f"the arena plan is invalid: {e}") from None
    check_overlaps(program, offsets)
    _check_states(program, arena)
    return arena


def _check_states(program: Program, arena: ArenaPlan) -> None:
    if set(arena.states) != set(program.states) or set(arena.states) & set(arena.plan.offsets):
        raise IRError(f"states planned {sorted(arena.states)}, the program has {sorted(program.states)}")
    spans = sorted((off, off + program.buffers[n].type.nbytes, n) for n, off in arena.states.items())
    for (lo, hi, n), nxt in zip(spans, spans[1:] + [(arena.state_bytes, 0, "end")]):
        if lo % ALIGNMENT or lo < 0 or hi > nxt[0]:
            raise IRError(f"state {n} at [{lo}, {hi}) is misaligned, overlaps {nxt[2]} or runs past the "
                          f"state region of {arena.state_bytes} B")
