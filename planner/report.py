"""The memory report of `mcuforge plan`: the schedule with op info, every buffer's offset and
lifetime, arena bytes, the lower bound and the gap, and the states (LSTM/SVDF variable tensors) in
their own region; as text, JSON, and a picture (SVG or PNG)."""

from __future__ import annotations

from typing import Any

from .fusion import fused_steps, functions
from .memory import InPlace


def layer_macs(call) -> int:
    """Multiply-accumulates of a layer (a call, or the body of a composite: every op in it), from each op's
    registry entry (0 for ops that have none)."""
    from mcuforge.ir.registry import OpView, get_op

    from mcuforge.ir.expr import Call, post_order

    total = 0
    for c in post_order(call):  # a composite of several ops: all of them
        macs = get_op(c.op).macs if isinstance(c, Call) and c.callee is None else None
        total += macs(OpView(tuple(a.type for a in c.args), c.type, c.attrs)) if macs else 0
    return total


def plan_json(compiled) -> dict[str, Any]:
    prog, arena = compiled.program, compiled.arena
    bufs = {b.name: b for b in arena.buffers}
    schedule = []
    for step, b in enumerate(prog.bindings):
        k = b.kernel
        schedule.append({
            "step": step, "output": b.out, "tensor": prog.buffers[b.out].label, "args": list(b.args),
            "op": k.info.op, "kind": k.info.kind.value, "target": k.info.target, "composite": k.info.composite,
            "kernel": None if k.view else k.function, "view": k.view,
            "tflite": [{"index": s.index, "op": s.name} for s in k.info.sources],
            "output_bytes": k.output.nbytes, "scratch_bytes": k.scratch_bytes,
            "macs": sum(layer_macs(compiled.module.functions[f].body) for f in functions(b)),
        })
    buffers = []
    for name, off in sorted(arena.plan.offsets.items(), key=lambda kv: (kv[1], kv[0])):
        b = bufs[name]
        label = prog.buffers[name].label if name in prog.buffers else "scratch"
        buffers.append({"name": name, "tensor": label, "offset": off, "size": b.size,
                        "first_use": b.first_use, "last_use": b.last_use})
    def io(names):
        return [{"name": n, "tensor": prog.buffers[n].label, "shape": list(prog.buffers[n].type.shape),
                 "dtype": prog.buffers[n].type.dtype, "offset": arena.offset(n), **_quant(prog.buffers[n].type.quant)}
                for n in names]

    return {
        "model": compiled.imported.meta.get("source", ""),
        "inputs": io(prog.inputs),
        "outputs": io(prog.outputs),
        "arena_bytes": arena.arena_bytes,
        "lower_bound_bytes": arena.plan.lower_bound,
        "gap_bytes": arena.plan.gap,
        "scratch_bytes": arena.scratch_bytes,
        "macs": sum(s["macs"] for s in schedule),
        "algorithm": arena.plan.algorithm,
        "algorithms": dict(arena.plan.arenas),
        "order": {"method": prog.order.method, "peak_bytes": prog.order.peak,
                  "file_order_peak_bytes": prog.file_order_peak},
        "in_place": [{"out": c.out, "input": c.inp} for c in arena.constraints
                     if isinstance(c, InPlace) and (c.lo, c.hi) == (0, 0)],
        "memory": {**_memory(prog, arena), "merged": _merged(compiled)},
        "state_bytes": arena.state_bytes,
        "states": [{"name": n, "tensor": prog.buffers[n].label, "shape": list(prog.buffers[n].type.shape),
                    "dtype": prog.buffers[n].type.dtype, "offset": off, "size": prog.buffers[n].type.nbytes,
                    "initial": prog.states[n]} for n, off in arena.states.items()],
        "schedule": schedule,
        "buffers": buffers,
    }


def _memory(prog, arena) -> dict[str, Any]:
    """The memory mode, the classic live-tensor bound (no output sharing a byte with its input) and
    the layers whose output overlaps an input (element-wise in place excluded)."""
    overlaps = []
    for step, arg, shift in arena.overlaps:
        b = prog.bindings[step]
        if b.kernel.in_place and shift == 0:
            continue
        out_lo, in_lo = arena.offset(b.out), arena.offset(arg)
        shared = min(out_lo + b.kernel.output.nbytes, in_lo + prog.buffers[arg].type.nbytes) - max(out_lo, in_lo)
        overlaps.append({"step": step, "output": b.out, "input": arg, "kernel": b.kernel.function,
                         "tflite": b.kernel.info.tflite, "shift": shift, "shared_bytes": shared,
                         "offset": max(out_lo, in_lo)})
    return {"mode": arena.mode, "live_tensor_bound_bytes": arena.live_bound,
            "below_bound_bytes": arena.live_bound - arena.arena_bytes,
            "instruction_cost": "; ".join([f"step {s}: {what}" for s, what in arena.costs]
                                          + [f"step {s}: fused (about {k.cost_instructions:,} more instructions)"
                                             for s, k in fused_steps(prog)])
                                or "none: the same kernels run, only their output offsets move",
            "overlaps": overlaps, "fused": _fused(prog)}


def _fused(prog) -> list[dict[str, Any]]:
    """The fused steps: their layers, line buffers and estimated instruction cost."""
    return [{"step": s, "kernels": [p.function for p in k.parts], "tflite": [p.info.tflite for p in k.parts],
             "rows": k.rows, "line_bytes": list(k.lines), "moved_bytes": k.moved_bytes, "kernel_calls": k.calls,
             "instruction_cost": k.cost_instructions} for s, k in fused_steps(prog)]


def _merged(compiled) -> list[dict[str, Any]]:
    """Steps whose one kernel computes several TFLite ops (a composite, e.g. a convolution with the
    residual ADD it feeds): the ops' intermediate tensors, which never exist in the arena (the
    live-tensor bound above is already without them)."""
    from mcuforge.ir.expr import Call, post_order

    out = []
    for step, b in enumerate(compiled.program.bindings):
        if len(b.kernel.info.sources) < 2 or b.kernel.view:
            continue
        for f in functions(b):
            body = compiled.module.functions[f].body
            inner = [c for c in post_order(body) if isinstance(c, Call) and c is not body]
            if inner:
                out.append({"step": step, "kernel": b.kernel.function, "tflite": b.kernel.info.tflite,
                            "hidden_bytes": sum(c.type.nbytes for c in inner)})
    return out


def _quant(q) -> dict[str, Any]:
    """A tensor's per-tensor quantization for the report (None, None when it has none or per channel)."""
    if q is None or q.per_channel:
        return {"scale": None, "zero_point": None}
    return {"scale": q.s, "zero_point": q.zp}


def _memory_text(m: dict[str, Any]) -> str:
    lines = [f"memory:       {m['mode']}; live-tensor bound {m['live_tensor_bound_bytes']:,} B (no output over its "
             f"input), arena {m['below_bound_bytes']:,} B below it; {len(m['overlaps'])} layer(s) write their "
             f"output over their input; instruction cost {m['instruction_cost']}"]
    for o in m["overlaps"]:
        lines.append(f"  step {o['step']:>3} {o['output']:<6} over {o['input']:<6} {o['shift']:+7} B "
                     f"({o['shared_bytes']:,} B shared)  {o['kernel']} [{o['tflite']}]")
    lines.append(f"fused:        {len(m['fused'])} step(s) run a chain of layers row by row through line buffers "
                 "(the chain's intermediate tensors never exist)")
    for f in m["fused"]:
        lines.append(f"  step {f['step']:>3} {' -> '.join(f['tflite'])}: {f['rows']} row(s) at a time, line buffers "
                     f"{' + '.join(f'{n:,}' for n in f['line_bytes'])} B, {f['moved_bytes']:,} B moved, "
                     f"{f['kernel_calls']} kernel calls (about {f['instruction_cost']:,} more instructions)")
    if m.get("merged"):
        lines.append(f"merged:       {len(m['merged'])} step(s) compute several TFLite ops in one kernel (their "
                     "intermediate tensors never exist)")
    for f in m.get("merged", []):
        lines.append(f"  step {f['step']:>3} {f['kernel']} [{f['tflite']}]: {f['hidden_bytes']:,} B never exist")
    return "\n".join(lines)


def plan_text(info: dict[str, Any]) -> str:
    out = [f"model: {info['model']}", "", "schedule (A-normal form, execution order):"]
    for s in info["schedule"]:
        src = ", ".join(f"#{t['index']} {t['op']}" for t in s["tflite"])
        kern = "view (no code)" if s["view"] else f"{s['target']}:{s['kernel']}"
        scratch = f" + scratch {s['scratch_bytes']} B" if s["scratch_bytes"] else ""
        out.append(f"  {s['step']:>3}  {s['output']:<6} = {s['op']}({', '.join(s['args'])})  [{src}] "
                   f"{s['kind']}, {kern}, {s['output_bytes']} B{scratch}")
    out += ["", "buffers (offset, size, live steps):"]
    for b in info["buffers"]:
        label = b["tensor"] if len(b["tensor"]) <= 48 else b["tensor"][:45] + "..."
        out.append(f"  {b['offset']:>8} +{b['size']:<7} steps {b['first_use']:>3}..{b['last_use']:<3} "
                   f"{b['name']:<10} {label}")
    o = info["order"]
    out += [
        "",
        f"order:        {o['method']}; peak live bytes {o['peak_bytes']:,} (file's order: {o['file_order_peak_bytes']:,})",
        f"arena bytes:  {info['arena_bytes']:,} ({info['algorithm']}; tried: "
        + ", ".join(f"{k} {v:,}" for k, v in sorted(info["algorithms"].items())) + ")",
        f"lower bound:  {info['lower_bound_bytes']:,} (largest sum of simultaneously live buffers, chosen order)",
        f"gap:          {info['gap_bytes']:,} B",
        f"scratch:      {info['scratch_bytes']:,} B (largest kernel scratch buffer)",
        f"in place:     {len(info['in_place'])} op(s) write over an input that dies there",
        _memory_text(info["memory"]),
        f"state:        {info['state_bytes']:,} B in {len(info['states'])} state(s) kept between runs, outside "
        "the arena",
    ]
    for st in info["states"]:
        out.append(f"  {st['offset']:>8} +{st['size']:<7} {st['name']:<10} {st['dtype']}{st['shape']} starts at "
                   f"{st['initial']}  {st['tensor']}")
    return "\n".join(out)
