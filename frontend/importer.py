"""Import a TflGraph into an ir.Module in the QNN dialect, through the op registry.

Every operator is parsed by its registry entry; support checks run on each call. All problems are
collected so that one error names every unsupported operator, with its index and name."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from mcuforge.ir.expr import Call, Constant, Function, Module, OpSource, Tuple, Var
from mcuforge.ir.registry import OpView, op_for_tflite
from mcuforge.ir.types import DTYPES, QuantParams, TensorType

from mcuforge.errors import ModelError, UnsupportedError

from .reader import TflGraph, TflTensor, read_tflite


class UnsupportedTypeError(ModelError):
    """A tensor of a type mcuforge has no representation for (reported as an unsupported op)."""


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


class NotConstantError(ModelError):
    """An operator input that mcuforge needs constant (an axis, a shape) is computed at run time:
    reported as an unsupported operator, so the other operators are still checked."""

    def __init__(self, where: str, reason: str):
        super().__init__(f"{where}: {reason}")
        self.reason = reason


class _Ctx:
    """The frontend's implementation of registry.ParseContext for one operator."""

    def __init__(self, graph: TflGraph, op_index: int, inputs: list[Any], out: TensorType):
        self._graph = graph
        self._op = graph.operators[op_index]
        self.index = op_index
        self.name = self._op.name
        self.inputs = inputs
        self.out = out

    def options(self) -> Any:
        return self._op.options

    def const(self, i: int) -> np.ndarray:
        if i >= len(self._op.inputs) or self._op.inputs[i] < 0:
            raise self.fail(f"input {i} is missing")
        t = self._graph.tensors[self._op.inputs[i]]
        if t.data is None:
            raise NotConstantError(f"operator #{self.index} {self.name}",
                                   f"input {i} ('{t.name}') must be a constant tensor")
        return t.data

    def fail(self, why: str) -> Exception:
        return ModelError(f"operator #{self.index} {self.name}: {why}")


@dataclass
class ImportResult:
    module: Module | None
    problems: list[tuple[int, str, str]] = field(default_factory=list)


def load_tflite(path: str | Path) -> Module:
    """Read and import a .tflite file; raise UnsupportedError naming every unsupported operator."""
    graph = read_tflite(path)
    result = import_graph(graph)
    if result.problems:
        raise UnsupportedError(result.problems)
    assert result.module is not None
    return result.module


def import_graph(graph: TflGraph) -> ImportResult:
    problems: list[tuple[int, str, str]] = []
    for idx in graph.inputs + graph.outputs:
        t = graph.tensors[idx]
        if t.dynamic:
            raise ModelError(
                f"tensor {idx} '{t.name}' has a dynamic shape {list(t.shape)} (signature has -1); "
                "only static shapes are supported"
            )
    _check_outputs(graph)
    acts = [t for t in graph.tensors if not t.is_const]
    if acts and all(t.dtype == "float32" for t in acts):
        raise ModelError(
            f"{graph.source}: a float32 model (no quantized activations); mcuforge compiles int8-quantized "
            "models: convert it with full-integer quantization (TFLiteConverter with a representative dataset)"
        )
    env: dict[int, Any] = {}
    params = []
    for idx in graph.inputs:
        t = graph.tensors[idx]
        if t.is_const:
            raise ModelError(f"model input tensor {idx} '{t.name}' is a constant")
        var = Var(t.name, tensor_type(t), idx)
        env[idx] = var
        params.append(var)

    def expr_for(tidx: int, op_index: int, op_name: str) -> Any:
        if tidx < 0:
            return None
        if tidx in env:
            return env[tidx]
        t = graph.tensors[tidx]
        if t.data is not None:
            c = Constant(t.name, tensor_type(t), t.data, tidx)
            env[tidx] = c
            return c
        raise ModelError(
            f"operator #{op_index} {op_name} reads tensor {tidx} '{t.name}' before any operator writes it "
            "(graph out of order or cyclic)"
        )

    for op in graph.operators:
        where = f"operator #{op.index} {op.name}"
        if len(op.outputs) != 1:
            problems.append((op.index, op.name, f"has {len(op.outputs)} outputs; only single-output ops are supported"))
            for o in op.outputs:
                _placeholder(env, graph.tensors[o])
            continue
        out_t = graph.tensors[op.outputs[0]]
        if out_t.dynamic:
            raise ModelError(f"{where}: output tensor '{out_t.name}' has a dynamic shape")
        opdef = op_for_tflite(op.name)
        if opdef is None:
            problems.append((op.index, op.name, "operator not supported"))
            _placeholder(env, out_t)
            continue
        try:
            inputs = [expr_for(t, op.index, op.name) for t in op.inputs]
            out_type = tensor_type(out_t)
        except UnsupportedTypeError as e:
            problems.append((op.index, op.name, str(e)))
            _placeholder(env, out_t)
            continue
        ctx = _Ctx(graph, op.index, inputs, out_type)
        try:
            args, attrs = opdef.tflite[op.name](ctx)
            for key, value in attrs.items():
                # a float pad value is data copied as is (-inf pads for a max pool); other float
                # options are scale factors the integer kernels derive multipliers from
                if key != "pad_value" and isinstance(value, float) and not math.isfinite(value):
                    raise ModelError(f"{where}: option {key} is {value}")
            view = OpView(tuple(a.type for a in args), out_type, attrs)
            issues = opdef.check(view)
            if issues:
                problems.append((op.index, op.name, "; ".join(issues)))
                _placeholder(env, out_t)
                continue
            shape, dtype = opdef.infer(view.args, attrs)
        except NotConstantError as e:
            problems.append((op.index, op.name, e.reason))
            _placeholder(env, out_t)
            continue
        except ModelError:
            raise
        except Exception as e:  # a malformed operator the parser or inference trips over
            raise ModelError(f"{where}: malformed operator ({type(e).__name__}: {e})") from None
        if (tuple(shape), dtype) != (out_type.shape, out_type.dtype):
            raise ModelError(
                f"{where}: output '{out_t.name}' is {out_type.dtype}{list(out_type.shape)} in the file, "
                f"but the inputs give {dtype}{list(shape)}"
            )
        env[op.outputs[0]] = Call(
            opdef.name, tuple(args), out_type, attrs, name=out_t.name, tensor=op.outputs[0],
            sources=(OpSource(op.index, op.name),),
        )

    if problems:
        return ImportResult(None, problems)
    outs = []
    for idx in graph.outputs:
        e = expr_for(idx, -1, "(model output)") if idx not in env else env[idx]
        outs.append(e)
    body = outs[0] if len(outs) == 1 else Tuple(tuple(outs))
    meta = {"source": graph.source, "description": graph.description}
    return ImportResult(Module({"main": Function(tuple(params), body)}, meta))


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


def _placeholder(env: dict[int, Any], t: TflTensor) -> None:
    """Stand-in for the output of an operator we cannot import, so that the operators after it
    are still parsed and checked (one error then names every unsupported operator)."""
    try:
        env[t.index] = Var(t.name, tensor_type(t), t.index)
    except ModelError:
        env[t.index] = Var(t.name, TensorType(t.shape, "int8"), t.index)
