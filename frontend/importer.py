"""Import a TflGraph into an ir.Module in the QNN dialect, through the op registry.

Every operator is parsed by its registry entry into one call per output: an operator with several
outputs (SPLIT, SPLIT_V, UNPACK: `OpDef.multi_output`) is parsed once per output, so the IR stays
single-output. A call whose arguments are all constants is folded into a Constant right away
(ir/fold.py), before support checks: a parser after it that needs a constant input (RESHAPE's
shape, TRANSPOSE_CONV's output shape) then sees one, and the call runs no kernel, so kernel limits
do not apply to it. Every other call's support checks run.

Problems of one operator (an unsupported op or type, a parser's refusal, a check, an output shape
the inputs contradict) are collected and the operator's outputs replaced by placeholders, so the
operators after it are still checked: one error names every blocker of the model. A malformed
operator (one its parser trips over, a non-finite option) stops the import with its own error.

Shapes are the file's `shape`, which is what TFLM allocates. A -1 in the shape signature is
accepted where that shape resolves it: model inputs may leave only the batch dimension unknown
(Keras exports have [-1, H, W, C] with shape [1, H, W, C]); an operator's output may have any -1,
as its inferred shape must be the file's anyway (TFLM requires the same of RESHAPE, and the
converter writes placeholders such as [1, 1] for [-1, -1] that the inputs then contradict). A
tensor whose shape itself holds a -1 cannot be allocated, by TFLM either.

Resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, with CALL_ONCE's initialization
subgraph) are imported by frontend/resources.py, IF (both branches in line, a SELECT_V2 per output)
by frontend/control_flow.py; every other subgraph (WHILE's) is refused.

Variable tensors (TFLite's `is_variable`: an LSTM's hidden and cell state, an SVDF's memory) become
`State` nodes, neither constants nor model inputs, starting as TFLM's ResetVariableTensors leaves
them (every element the zero point for int8, 0 otherwise). Each must be read by exactly one
operator, at an argument its op declares a state (`OpDef.state_args`); that operator updates it in
place (ir/expr.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from mcuforge.ir.expr import Call, Constant, Function, Module, OpSource, State, Tuple, Var
from mcuforge.ir.fold import fold
from mcuforge.ir.registry import OpDef, OpView, op_for_tflite
from mcuforge.ir.types import DTYPES, QuantParams, TensorType

from mcuforge.errors import ModelError, UnsupportedError

from . import control_flow, resources
from .reader import TflGraph, TflOperator, TflTensor, read_tflite


class UnsupportedTypeError(ModelError):
    """A tensor of a type mcuforge has no representation for (reported as an unsupported op)."""


class OperatorProblem(ModelError):
    """Something one operator uses that mcuforge cannot compile; `why` is reported with the others."""

    def __init__(self, index: int, name: str, why: str):
        super().__init__(f"operator #{index} {name}: {why}")
        self.why = why


def tensor_type(t: TflTensor) -> TensorType:
    if t.dtype not in DTYPES:
        raise UnsupportedTypeError(f"tensor {t.index} '{t.name}' has type {t.dtype.upper()}, which mcuforge does "
                                   "not support")
    q = None
    if t.quant is not None:
        try:
            q = QuantParams(t.quant.scale, t.quant.zero_point, t.quant.axis)
        except ValueError as e:
            raise ModelError(f"tensor {t.index} '{t.name}': bad quantization: {e}") from None
        _check_quant(t, q)
    return TensorType(t.shape, t.dtype, q)


# Quantize(x) = x / scale stays finite in float32 (as TFLite computes it) for |x| up to 3e8.
MIN_SCALE = 1e-30


def _check_quant(t: TflTensor, q: QuantParams) -> None:
    """Scales finite and at least MIN_SCALE (zero allowed only in constants: an all-zero weight
    channel), zero points within the tensor's integer type: no converter writes anything else,
    and the multipliers and clamps derived from them would be undefined."""
    where = f"tensor {t.index} '{t.name}': bad quantization"
    for s in q.scale:
        if not (math.isfinite(s) and (s >= MIN_SCALE or (s == 0 and t.is_const))):
            raise ModelError(f"{where}: scale {s!r} (scales must be finite and at least {MIN_SCALE:g})")
    kind = np.dtype(DTYPES[t.dtype]).kind
    if kind in "iu":
        info = np.iinfo(DTYPES[t.dtype])
        for z in q.zero_point:
            if not info.min <= z <= info.max:
                raise ModelError(f"{where}: zero point {z} outside the {t.dtype} range [{info.min}, {info.max}]")


class _Ctx:
    """The frontend's implementation of registry.ParseContext for one output of one operator."""

    def __init__(self, imp: _Importer, op: TflOperator, inputs: list[Any], out: TensorType, output_index: int):
        self._imp = imp
        self._op = op
        self.index = op.index
        self.name = op.name
        self.inputs = inputs
        self.out = out
        self.output_index = output_index
        self.num_outputs = len(op.outputs)

    def options(self) -> Any:
        return self._op.options

    def const(self, i: int) -> np.ndarray:
        """Constant input `i`: a constant tensor of the file, or one folded from constants."""
        if i >= len(self._op.inputs) or self._op.inputs[i] < 0:
            raise self.fail(f"input {i} is missing")
        e = self.inputs[i]
        if isinstance(e, Constant):
            return e.data
        t = self._imp.graph.tensors[self._op.inputs[i]]
        blocked = self._imp.placeholders.get(t.index)
        why = f"; it is the output of {blocked}, which cannot be imported" if blocked else \
            " (or computed from constants only)"
        raise self.fail(f"input {i} ('{t.name}') must be a constant tensor{why}")

    def fail(self, why: str) -> Exception:
        return OperatorProblem(self.index, self.name, why)


@dataclass
class ImportResult:
    module: Module | None
    problems: list[tuple[int, str, str]] = field(default_factory=list)
    folded: dict[int, Constant] = field(default_factory=dict)  # TFLite tensor -> its value, folded at import


def load_tflite(path: str | Path) -> Module:
    """Read and import a .tflite file; raise UnsupportedError naming every unsupported operator."""
    graph = read_tflite(path)
    result = import_graph(graph)
    if result.problems:
        raise UnsupportedError(result.problems)
    assert result.module is not None
    return result.module


def import_graph(graph: TflGraph) -> ImportResult:
    _check_input_shapes(graph)
    _check_outputs(graph)
    acts = [t for t in graph.tensors if not t.is_const]
    if acts and all(t.dtype == "float32" for t in acts):
        raise ModelError(
            f"{graph.source}: a float32 model (no quantized activations); mcuforge compiles int8-quantized "
            "models: convert it with full-integer quantization (TFLiteConverter with a representative dataset)"
        )
    imp = _Importer(graph, main=True)
    resources.check_subgraphs(graph, imp.resources, control_flow.used_subgraphs(graph))
    for op in graph.operators:
        imp.operator(op)
    folded = {t: e for t, e in imp.env.items() if isinstance(e, Constant) and graph.tensors[t].data is None}
    if imp.problems:
        return ImportResult(None, imp.problems, folded)
    outs = [imp.expr_for(idx, -1, "(model output)") for idx in graph.outputs]
    for idx, e in zip(graph.outputs, outs):
        if isinstance(e, Constant):
            raise ModelError(f"model output tensor {idx} '{graph.tensors[idx].name}' is computed from constants "
                             "only; there is nothing to run on the device")
    outs[0] = resources.after(outs[0], imp.resources.writes())
    body = outs[0] if len(outs) == 1 else Tuple(tuple(outs))
    meta = {"source": graph.source, "description": graph.description}
    return ImportResult(Module({"main": Function(tuple(imp.params), body)}, meta), folded=folded)


class _Importer:
    """The tensors imported so far (`env`: TFLite tensor index -> expression) and the problems."""

    def __init__(self, graph: TflGraph, main: bool = False, within: OpSource | None = None):
        self.graph = graph
        self.within = within  # the operator whose subgraph this is (an IF's branch), None for the main one
        self.env: dict[int, Any] = {}
        self.params: list[Var] = []
        self.problems: list[tuple[int, str, str]] = []
        self.placeholders: dict[int, str] = {}  # tensor -> "#i OP" whose failure it stands in for
        self.state_readers: dict[int, int] = {}  # id(State) -> the operator reading it
        for idx in graph.inputs:
            t = graph.tensors[idx]
            if t.is_const:
                raise ModelError(f"model input tensor {idx} '{t.name}' is a constant")
            if t.is_variable:
                raise ModelError(f"model input tensor {idx} '{t.name}' is a variable tensor (state kept "
                                 "between runs); a model input is written before every run")
            var = Var(t.name, tensor_type(t), idx)
            self.env[idx] = var
            self.params.append(var)
        # the main subgraph's resource variables (an initialization subgraph is imported on its own)
        self.resources = resources.Resources(graph, _Importer,
                                             lambda op, why: OperatorProblem(op.index, op.name, why)) if main else None

    def source(self, op: TflOperator) -> OpSource:
        """Where a call comes from: the operator, inside the IF whose branch this subgraph is."""
        if self.within is None:
            return OpSource(op.index, op.name)
        return OpSource(self.within.index, f"{self.within.name}: #{op.index} {op.name}")

    def expr_for(self, tidx: int, op_index: int, op_name: str) -> Any:
        if tidx < 0:
            return None
        if tidx in self.env:
            return self.env[tidx]
        t = self.graph.tensors[tidx]
        if t.data is not None and not t.is_variable:
            c = Constant(t.name, tensor_type(t), t.data, tidx)
            self.env[tidx] = c
            return c
        if t.is_variable:
            self.env[tidx] = _state(self.graph, t)
            return self.env[tidx]
        raise ModelError(
            f"operator #{op_index} {op_name} reads tensor {tidx} '{t.name}' before any operator writes it "
            "(graph out of order or cyclic)"
        )

    def operator(self, op: TflOperator) -> None:
        """Import one operator: a call (or folded constant) per output, or a problem."""
        try:
            if op.name in resources.OPS:
                if self.resources is None:
                    raise OperatorProblem(op.index, op.name, "resource variables are supported in the main subgraph "
                                                             "only (not in an IF branch)")
                self.resources.operator(self, op)
                return
            if op.name in control_flow.OPS:
                control_flow.import_if(self, op, _Importer, lambda o, why: OperatorProblem(o.index, o.name, why))
                return
            opdef = op_for_tflite(op.name)
            if opdef is None:
                raise OperatorProblem(op.index, op.name, "operator not supported")
            if len(op.outputs) != 1 and not opdef.multi_output:
                raise OperatorProblem(op.index, op.name, f"has {len(op.outputs)} outputs; {op.name} has one")
            inputs = [self.expr_for(t, op.index, op.name) for t in op.inputs]
            results = [self.output(op, opdef, inputs, j) for j in range(len(op.outputs))]
        except (OperatorProblem, UnsupportedTypeError) as e:
            self.problems.append((op.index, op.name, e.why if isinstance(e, OperatorProblem) else str(e)))
            for o in op.outputs:
                self.placeholder(self.graph.tensors[o], f"#{op.index} {op.name}")
            return
        for o, r in zip(op.outputs, results):
            self.env[o] = r

    def output(self, op: TflOperator, opdef: OpDef, inputs: list[Any], j: int) -> Call | Constant:
        """Output `j` of `op`: parsed, folded when its arguments are constants, else checked."""
        out_t = self.graph.tensors[op.outputs[j]]
        if out_t.dynamic:
            raise OperatorProblem(op.index, op.name, f"output tensor '{out_t.name}' has an unknown shape "
                                                     f"{list(out_t.signature)}")
        out_type = tensor_type(out_t)
        try:
            args, attrs = opdef.tflite[op.name](_Ctx(self, op, inputs, out_type, j))
            _check_options(op, attrs)
            misuse = _state_misuse(opdef, args, self.state_readers, op.index)
            if misuse:
                raise OperatorProblem(op.index, op.name, misuse)
            call = Call(opdef.name, tuple(args), out_type, attrs, name=out_t.name,
                        tensor=out_t.index if self.within is None else None, sources=(self.source(op),))
            folded = _fold(opdef, call)
            if folded is not None:
                return folded
            view = OpView(tuple(a.type for a in args), out_type, attrs)
            issues = opdef.check(view)
            if issues:
                raise OperatorProblem(op.index, op.name, "; ".join(issues))
            shape, dtype = opdef.infer(view.args, attrs)
        except ModelError:
            raise
        except Exception as e:  # a malformed operator the parser or inference trips over
            raise ModelError(f"operator #{op.index} {op.name}: malformed operator ({type(e).__name__}: {e})") from None
        if (tuple(shape), dtype) != (out_type.shape, out_type.dtype):
            raise OperatorProblem(op.index, op.name, f"output '{out_t.name}' is {out_type.dtype}{list(out_type.shape)} "
                                                     f"in the file, but the inputs give {dtype}{list(shape)}")
        if all(isinstance(a, Constant) for a in args):
            raise OperatorProblem(op.index, op.name, "its inputs are constants, but it cannot be evaluated at "
                                                     "compile time")
        return call

    def placeholder(self, t: TflTensor, blocked_by: str) -> None:
        """Stand-in for the output of an operator we cannot import, so that the operators after it
        are still parsed and checked (one error then names every unsupported operator)."""
        self.placeholders[t.index] = blocked_by
        try:
            self.env[t.index] = Var(t.name, tensor_type(t), t.index)
        except ModelError:
            self.env[t.index] = Var(t.name, TensorType(t.shape, "int8"), t.index)


def _fold(opdef: OpDef, call: Call) -> Constant | None:
    """The call folded into a constant when its arguments are all constants and its inferred type
    is the file's (the folded value is then the file's tensor)."""
    if not all(isinstance(a, Constant) for a in call.args):
        return None
    try:
        shape, dtype = opdef.infer(tuple(a.type for a in call.args), call.attrs)
    except Exception:  # noqa: BLE001 - the checks then say what is wrong
        return None
    if (tuple(shape), dtype) != (call.type.shape, call.type.dtype):
        return None
    return fold(call)


def _check_options(op: TflOperator, attrs: dict[str, Any]) -> None:
    for key, value in attrs.items():
        # a float pad value is data copied as is (-inf pads for a max pool); other float
        # options are scale factors the integer kernels derive multipliers from
        if key != "pad_value" and isinstance(value, float) and not math.isfinite(value):
            raise ModelError(f"operator #{op.index} {op.name}: option {key} is {value}")


def _check_input_shapes(graph: TflGraph) -> None:
    """Model inputs have static shapes; only the batch dimension may be unknown (-1 in the
    signature), and then the file's shape fixes it. (Every other tensor is an operator's output,
    whose shape the operator's inputs must give.)"""
    for idx in graph.inputs:
        t = graph.tensors[idx]
        if t.dynamic or any(d < 0 for d in t.signature[1:]):
            raise ModelError(
                f"tensor {idx} '{t.name}' has a dynamic shape {list(t.signature)} (signature has -1 beyond the "
                "batch); only static shapes are supported: convert with a fixed input size"
            )


def _check_outputs(graph: TflGraph) -> None:
    """Every model output must be computed by an operator: a model without outputs, or whose
    output is a constant or one of its inputs, has nothing to compile."""
    if not graph.outputs:
        raise ModelError(f"{graph.source}: the model has no outputs")
    written = {t for op in graph.operators for t in op.outputs}
    for idx in graph.outputs:
        t = graph.tensors[idx]
        what = f"model output tensor {idx} '{t.name}'"
        if t.is_const:
            raise ModelError(f"{what} is a constant; every output must be computed by an operator")
        if idx in graph.inputs:
            raise ModelError(f"{what} is also a model input; every output must be computed by an operator")
        if idx not in written:
            raise ModelError(f"{what} is not written by any operator")


def _state(graph: TflGraph, t: TflTensor) -> State:
    """A variable tensor as a State, checked: not written by an operator, not a model input or
    output, no contents in the file, an int8 one quantized (its zero point is its initial value)."""
    what = f"variable tensor {t.index} '{t.name}'"
    if t.index in graph.outputs:
        raise ModelError(f"{what} is a model output; a variable tensor is state kept between runs")
    if any(t.index in op.outputs for op in graph.operators):
        raise ModelError(f"{what} is written by an operator; only the operator that reads it may update it")
    if t.data is not None:
        raise ModelError(f"{what} has contents in the file; TFLite Micro starts every variable tensor at "
                         "its zero point, so mcuforge does not support initial values")
    typ = tensor_type(t)
    if typ.dtype == "int8" and typ.quant is None:
        raise ModelError(f"{what} is int8 but not quantized (its zero point is its initial value)")
    return State(t.name, typ, typ.quant.zp if typ.dtype == "int8" and typ.quant else 0, t.index)


def _state_misuse(opdef, args: list[Any], readers: dict[int, int], op_index: int) -> str | None:
    """Why the operator's use of variable tensors is unsupported, or None: a state must sit at an
    argument the op updates in place (OpDef.state_args), and be read by no other operator."""
    for i, a in enumerate(args):
        if not isinstance(a, State):
            continue
        if i not in opdef.state_args:
            return (f"reads variable tensor '{a.name}' as an ordinary input; mcuforge supports variable tensors "
                    "only as the state an LSTM or SVDF updates")
        if readers.setdefault(id(a), op_index) != op_index:
            return f"variable tensor '{a.name}' is already the state of operator #{readers[id(a)]}"
    return None

