"""A-normal form: the lowered `main` as a flat, ordered list of bindings

    t3 = conv_0(t1); t4 = dwconv_1(t3); ...

The order is chosen by planner.order (smallest peak live memory); liveness for the memory planner
comes from positions in this list, so the planner sees exactly what the generated C does.

States (ir.expr.State, TFLite variable tensors) are buffers named `state<i>` that no binding
produces: the binding that takes one reads it and writes its new value in place. They live in their
own persistent region (planner.arena.plan_states), not in the arena, so they take no part in the
order's or the arena's liveness.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
from mcuforge.ir.evaluate import check_inputs
from mcuforge.ir.expr import Call, Module, Tuple, Var, post_order

from .kernel import KernelCall
from .order import Graph, Node, Order, choose_order, peak


@dataclass(frozen=True)
class Binding:
    out: str  # buffer name of the result
    fn: str  # lifted function name
    kernel: KernelCall
    args: tuple[str, ...]  # buffer names of the activation arguments


@dataclass(frozen=True)
class BufferInfo:
    name: str  # C-safe buffer name
    label: str  # the TFLite tensor name
    type: object  # TensorType
    tensor: int | None  # TFLite tensor index, for verify --intermediates


@dataclass(frozen=True)
class Program:
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    buffers: Mapping[str, BufferInfo]
    bindings: tuple[Binding, ...]
    order: Order  # the chosen order's method and peak
    file_order_peak: int  # peak live bytes in the file's order
    states: Mapping[str, int] = field(default_factory=dict)  # state buffer -> the value every element starts at

    def initial_states(self) -> dict[str, np.ndarray]:
        """Every state at its initial value (what the generated `<prefix>_reset()` restores)."""
        return {n: np.full(self.buffers[n].type.shape, fill, dtype=self.buffers[n].type.np_dtype)
                for n, fill in self.states.items()}

    def evaluate(self, inputs: list[np.ndarray], keep: dict[str, np.ndarray] | None = None,
                 states: dict[str, np.ndarray] | None = None) -> list[np.ndarray]:
        """Run the kernel models in order. `states` (from `initial_states`) carries the states from
        run to run: the kernels update its arrays in place; without it a run starts from the initial
        states."""
        values: dict[str, np.ndarray] = dict(zip(self.inputs, inputs))
        values.update(self.initial_states() if states is None else states)
        for b in self.bindings:
            values[b.out] = b.kernel.run([values[a] for a in b.args])
        if keep is not None:
            keep.update(values)
        return [values[o] for o in self.outputs]


def schedule(module: Module, kernels: Mapping[str, KernelCall]) -> Program:
    """Put the partitioned `main` (calls to lifted functions only) in A-normal form."""
    fn = module.main
    names: dict[int, str] = {}
    buffers: dict[str, BufferInfo] = {}
    for i, p in enumerate(fn.params):
        names[id(p)] = f"input{i}"
        buffers[f"input{i}"] = BufferInfo(f"input{i}", p.name, p.type, p.tensor)
    states: dict[str, int] = {}
    for i, st in enumerate(fn.states()):
        names[id(st)] = f"state{i}"
        buffers[f"state{i}"] = BufferInfo(f"state{i}", st.name, st.type, st.tensor)
        states[f"state{i}"] = st.fill
    calls = [n for n in post_order(fn.body) if isinstance(n, Call)]
    nodes, bindings = [], {}
    for k, call in enumerate(calls):
        assert call.callee is not None, f"main still holds an unlowered op {call.op}"
        out = f"t{k}"
        names[id(call)] = out
        buffers[out] = BufferInfo(out, call.name, call.type, call.tensor)
        kc = kernels[call.callee]
        args = tuple(names[id(a)] for a in call.args)
        bindings[out] = Binding(out, call.callee, kc, args)
        in_arena = tuple(a for a in args if a not in states)
        nodes.append(Node(out, in_arena, call.type.nbytes, alias_of=args[0] if kc.view else None))
    outs = fn.body.fields if isinstance(fn.body, Tuple) else (fn.body,)
    for o in outs:
        if not isinstance(o, (Call, Var)):
            raise ValueError("a model output must be computed or be an input")
    outputs = tuple(names[id(o)] for o in outs)
    graph = Graph(tuple(nodes), tuple((f"input{i}", p.type.nbytes) for i, p in enumerate(fn.params)), outputs)
    order = choose_order(graph)
    return Program(
        inputs=tuple(f"input{i}" for i in range(len(fn.params))),
        outputs=outputs,
        buffers=buffers,
        bindings=tuple(bindings[n] for n in order.names),
        order=order,
        file_order_peak=peak(graph, [nd.name for nd in nodes]),
        states=states,
    )


def evaluate_program(program: Program, inputs: list[np.ndarray], module: Module,
                     keep: dict[str, np.ndarray] | None = None,
                     states: dict[str, np.ndarray] | None = None) -> list[np.ndarray]:
    return program.evaluate(check_inputs(module.main, inputs), keep, states)
