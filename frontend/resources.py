"""Resource variables in the importer: VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE and CALL_ONCE.

A variable is named by its VAR_HANDLE's shared name and becomes a State (ir/ops/resource_variable.py
has the semantics and TFLM's). The importer follows the main subgraph in order, as TFLM runs it:
a read before any write in the run is one `read_variable` call of the state; a read after a write
is the written value; the last value written is copied into the state by one `assign_variable` call
at the end of the run, which the model's first output takes through `after` so that it runs.

The variable's type is that of the first value assigned to it (in the main subgraph, then in the
initialization subgraphs), as TFLM allocates the buffer at the first ASSIGN_VARIABLE it prepares;
every read and write must agree with it. CALL_ONCE's initialization subgraph is imported on its
own and must compute constants (folded at compile time): they are the variables' initial values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from mcuforge.ir.expr import Call, Constant, OpSource, State, post_order
from mcuforge.ir.ops.resource_variable import DONE
from mcuforge.ir.types import TensorType

from mcuforge.errors import ModelError

OPS = ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE")
CONTROL_FLOW = ("WHILE",)  # its subgraphs are refused


@dataclass(frozen=True)
class Handle:
    """What a VAR_HANDLE's output tensor stands for: the variable's name."""

    name: str


@dataclass
class Variable:
    name: str
    type: TensorType  # as TFLM allocates it: the first value assigned to it
    state: State
    flag: State | None  # 0 until the initial value is copied in (startup, reset)
    init: Constant | None  # CALL_ONCE's value
    read: Call | None = None  # this run's read of the state
    current: Any = None  # the value written last in this run (an Expr), or None
    writer: OpSource | None = None  # the operator that wrote it


def handle_name(op) -> str:
    o = op.options
    shared = o.SharedName() if o is not None else None
    return (shared or b"").decode("utf-8", "replace")


def init_subgraph(op) -> int:
    return int(op.options.InitSubgraphIndex()) if op.options is not None else -1


class Resources:
    """The variables of one import (the main subgraph's importer holds one)."""

    def __init__(self, graph, make_importer: Callable[[Any], Any], problem: Callable[[Any, str], Exception]):
        self.graph = graph
        self.problem = problem  # (operator, why) -> the exception to raise
        self.types: dict[str, TensorType] = {}
        self.inits: dict[str, Constant] = {}
        self.vars: dict[str, Variable] = {}
        self.used_subgraphs: set[int] = set()
        self.init_problems: dict[int, str] = {}  # CALL_ONCE operator index -> why its subgraph is refused
        self._first_types(graph.operators, graph)
        for op in graph.operators:
            if op.name == "CALL_ONCE":
                self._initialize(op, make_importer)

    # ---- before the import: types and initial values ---------------------------------------------

    def _first_types(self, ops, graph) -> None:
        from .importer import tensor_type

        handles: dict[int, str] = {}
        for op in ops:
            if op.name == "VAR_HANDLE" and op.outputs:
                handles[op.outputs[0]] = handle_name(op)
            elif op.name == "ASSIGN_VARIABLE" and len(op.inputs) == 2 and op.inputs[0] in handles:
                try:
                    self.types.setdefault(handles[op.inputs[0]], tensor_type(graph.tensors[op.inputs[1]]))
                except ModelError:
                    pass  # the assignment itself reports it

    def _initialize(self, op, make_importer) -> None:
        """Import CALL_ONCE's subgraph: its ASSIGN_VARIABLEs of constants are the initial values."""
        k = init_subgraph(op)
        if not 1 <= k <= len(self.graph.subgraphs):
            self.init_problems[op.index] = f"its initialization subgraph {k} does not exist"
            return
        self.used_subgraphs.add(k)
        sub = self.graph.subgraphs[k - 1]
        self._first_types(sub.operators, sub)
        try:
            imp = make_importer(sub, within=OpSource(op.index, f"CALL_ONCE subgraph {k}"))
        except ModelError as e:
            self.init_problems[op.index] = f"initialization subgraph {k}: {e}"
            return
        handles: dict[int, str] = {}
        for sop in sub.operators:
            where = f"initialization subgraph {k}, operator #{sop.index} {sop.name}"
            if sop.name == "VAR_HANDLE" and sop.outputs:
                handles[sop.outputs[0]] = handle_name(sop)
            elif sop.name == "ASSIGN_VARIABLE" and len(sop.inputs) == 2:
                value = imp.expr_for(sop.inputs[1], sop.index, sop.name)
                if not isinstance(value, Constant):
                    self.init_problems[op.index] = f"{where}: the value is not computed from constants only"
                    return
                self.inits[handles.get(sop.inputs[0], "")] = value
            elif sop.name in OPS:
                self.init_problems[op.index] = f"{where}: not supported in an initialization subgraph"
                return
            else:
                imp.operator(sop)
                if imp.problems:
                    self.init_problems[op.index] = f"{where}: {imp.problems[0][2]}"
                    return

    # ---- the main subgraph, operator by operator -------------------------------------------------

    def operator(self, imp, op) -> None:
        """Import one resource-variable operator of the main subgraph (raises the importer's problem)."""
        if op.name == "VAR_HANDLE":
            if len(op.outputs) != 1 or not handle_name(op):
                raise self.problem(op, "a VAR_HANDLE needs one output and a shared name")
            imp.env[op.outputs[0]] = Handle(handle_name(op))
        elif op.name == "CALL_ONCE":
            if op.index in self.init_problems:
                raise self.problem(op, self.init_problems[op.index])
            if any(v.read is not None or v.current is not None for v in self.vars.values()):
                raise self.problem(op, "CALL_ONCE must come before the resource variable operators")
        elif op.name == "READ_VARIABLE":
            self._read(imp, op)
        else:
            self._assign(imp, op)

    def _variable(self, imp, op, tensor: int) -> Variable:
        handle = imp.env.get(tensor) if tensor >= 0 else None
        if not isinstance(handle, Handle):
            raise self.problem(op, "its input 0 is not a VAR_HANDLE's output")
        name = handle.name
        if name not in self.vars:
            typ = self.types.get(name)
            if typ is None:
                raise self.problem(op, f"resource variable '{name}' is never assigned (TFLM cannot allocate it)")
            q = typ.quant
            if q is not None and (q.per_channel or (typ.dtype != "int8" and q.zp != 0)):
                raise self.problem(op, f"resource variable '{name}' is {typ}: TFLM fills a resource variable with "
                                       "its zero point byte by byte, which mcuforge supports for int8 only")
            fill = q.zp if q is not None and typ.dtype == "int8" else 0
            init = self.inits.get(name)
            if init is not None and (init.type.dtype, init.type.shape) != (typ.dtype, typ.shape):
                raise self.problem(op, f"resource variable '{name}' is {typ.dtype}{list(typ.shape)}, its "
                                       f"initialization assigns {init.type.dtype}{list(init.type.shape)}")
            flag = State(f"{name}:initialized", TensorType((1,), "int8")) if init is not None else None
            self.vars[name] = Variable(name, typ, State(name, typ, fill), flag, init)
        return self.vars[name]

    def _read(self, imp, op) -> None:
        from .importer import tensor_type

        if len(op.inputs) != 1 or len(op.outputs) != 1:
            raise self.problem(op, "a READ_VARIABLE has one input and one output")
        var = self._variable(imp, op, op.inputs[0])
        out_t = self.graph.tensors[op.outputs[0]]
        out = tensor_type(out_t)
        if (out.dtype, out.shape) != (var.type.dtype, var.type.shape):
            raise self.problem(op, f"reads {out.dtype}{list(out.shape)} from resource variable '{var.name}' of "
                                   f"{var.type.dtype}{list(var.type.shape)}")
        if var.current is not None:
            if var.current.type != out:
                raise self.problem(op, f"reads resource variable '{var.name}' as {out}, after writing it as "
                                       f"{var.current.type}")
            imp.env[op.outputs[0]] = var.current
            return
        if var.read is None or var.read.type != out:
            args = (var.state,) if var.init is None else (var.state, var.flag, var.init)
            var.read = Call("read_variable", args, out, {}, out_t.name, out_t.index, (OpSource(op.index, op.name),))
        imp.env[op.outputs[0]] = var.read

    def _assign(self, imp, op) -> None:
        if len(op.inputs) != 2 or op.outputs:
            raise self.problem(op, "an ASSIGN_VARIABLE has two inputs and no output")
        var = self._variable(imp, op, op.inputs[0])
        value = imp.expr_for(op.inputs[1], op.index, op.name)
        if (value.type.dtype, value.type.shape) != (var.type.dtype, var.type.shape):
            raise self.problem(op, f"assigns {value.type.dtype}{list(value.type.shape)} to resource variable "
                                   f"'{var.name}' of {var.type.dtype}{list(var.type.shape)}")
        var.current, var.writer = value, OpSource(op.index, op.name)

    # ---- after the import ------------------------------------------------------------------------

    def writes(self) -> list[Call]:
        """One assign_variable call per variable written in the run (after its read)."""
        out = []
        for var in self.vars.values():
            if var.current is None or var.current is var.read:
                continue
            args = (var.state, var.current)
            if var.read is not None and not any(n is var.read for n in post_order(var.current)):
                args += (var.read,)  # the write must follow the read
            out.append(Call("assign_variable", args, DONE, {}, f"{var.name}:assign", None, (var.writer,)))
        return out


def after(output, writes: list[Call]):
    """The model output, once the variables' writes are done."""
    if not writes:
        return output
    return Call("after", (output, *writes), output.type, {}, output.name, output.tensor, output.sources)


def check_subgraphs(graph, resources: Resources | None, branches: set[int]) -> None:
    """Every subgraph besides the main one must be a CALL_ONCE's initialization subgraph or an IF's
    branch (`branches`)."""
    used = (resources.used_subgraphs if resources is not None else set()) | branches
    extra = [k for k in range(1, len(graph.subgraphs) + 1) if k not in used]
    if extra:
        flow = [f"#{op.index} {op.name}" for op in graph.operators if op.name in CONTROL_FLOW]
        what = f"{', '.join(flow)}: control flow is not supported; " if flow else ""
        raise ModelError(
            f"{graph.source}: {what}the model has {len(graph.subgraphs) + 1} subgraphs; only single-subgraph models "
            "are supported, besides CALL_ONCE initialization subgraphs and IF branches (WHILE is not)")


def has_call_once(graph) -> bool:
    return any(op.name == "CALL_ONCE" for op in graph.operators)
