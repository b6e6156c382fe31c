"""Fuzzing with malformed models: mutate real .tflite files and check that every command ends with
exit 0 or one clean error line and exit 2 — no traceback, no hang, no memory blow-up, nothing
half-written on disk.

Three parts, each usable alone:

    decode / encode     a .tflite file <-> plain Python data (dicts and lists), through the
                        flatbuffer accessors and builders of the `tflite` package; `encode` also
                        records where each vector landed, so a length prefix can be patched
    mutate              one seeded mutant of a model: byte-level damage (bit flips, bytes,
                        truncation, int32 overwrites, chunks) or structural damage done on the
                        decoded data (out-of-range indices, absurd shapes, cycles, empty or missing
                        subgraphs, bad opcodes, quantization of the wrong length, wrong options,
                        vectors whose length claims gigabytes ...)
    Campaign            runs `inspect`, `plan` and `compile` on each mutant in a worker process
                        (the CLI's main() in-process, so a mutant costs milliseconds, not an
                        interpreter start) under an address-space limit; a hang is a timeout that
                        kills the worker; a sample of mutants is rerun through the real
                        `python -m mcuforge` entry point to guard the exit codes and messages;
                        with `verify`, a mutant that compiles must also be bit-exact with TFLite
                        Micro (`verify --on reference`) or be refused by it

`python tools/fuzz_models.py --seed S --count N --time-limit T` is the long run.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import resource
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import flatbuffers
import numpy as np
import tflite
from mcuforge.codegen.output_dir import MARKER, marker_text
from mcuforge.frontend.reader import builtin_code_field

# --------------------------------------------------------------------------------------------
# decode / encode: a .tflite file as plain data
# --------------------------------------------------------------------------------------------

_OPTION_CLASSES = {
    v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_") and isinstance(v, int)
}


def _opt_vec(obj: Any, name: str) -> np.ndarray | None:
    if getattr(obj, f"{name}IsNone")():
        return None
    return np.asarray(getattr(obj, f"{name}AsNumpy")())


def _module(name: str) -> Any:
    return importlib.import_module(f"tflite.{name}")


def _decode_options(op: Any) -> dict[str, Any] | None:
    """The operator's builtin options as {"cls": class name, "fields": {field: value}}: scalars
    and numeric vectors (every option our ops read); strings and sub-tables are dropped."""
    kind = int(op.BuiltinOptionsType())
    cls = _OPTION_CLASSES.get(kind)
    table = op.BuiltinOptions()
    if kind == 0 or cls is None or table is None or not hasattr(tflite, cls):
        return None
    obj = getattr(tflite, cls)()
    obj.Init(table.Bytes, table.Pos)
    fields: dict[str, Any] = {}
    prefix = f"{cls}Add"
    for fn in dir(_module(cls)):
        if not fn.startswith(prefix):
            continue
        f = fn[len(prefix):]
        if hasattr(obj, f"{f}AsNumpy"):
            v = _opt_vec(obj, f)
            if v is not None and v.dtype.kind in "iuf":
                fields[f] = v
        elif hasattr(obj, f):
            try:
                v = getattr(obj, f)()
            except TypeError:
                continue
            if isinstance(v, (bool, int, float)):
                fields[f] = v
    return {"cls": cls, "fields": fields}


def _ints(values: Any) -> list[int]:
    return [int(v) for v in values]


def _decode_tensor(t: Any) -> dict[str, Any]:
    q = t.Quantization()
    quant = None
    if q is not None:
        quant = {
            "scale": None if q.ScaleIsNone() else [float(s) for s in q.ScaleAsNumpy()],
            "zero_point": None if q.ZeroPointIsNone() else _ints(q.ZeroPointAsNumpy()),
            "quantized_dimension": int(q.QuantizedDimension()),
        }
    return {
        "name": t.Name() or b"",
        "shape": None if t.ShapeIsNone() else _ints(t.ShapeAsNumpy()),
        "shape_signature": None if t.ShapeSignatureIsNone() else _ints(t.ShapeSignatureAsNumpy()),
        "type": int(t.Type()),
        "buffer": int(t.Buffer()),
        "quant": quant,
        "is_variable": bool(t.IsVariable()),
    }


def _decode_operator(o: Any) -> dict[str, Any]:
    return {
        "opcode_index": int(o.OpcodeIndex()),
        "inputs": None if o.InputsIsNone() else _ints(o.InputsAsNumpy()),
        "outputs": None if o.OutputsIsNone() else _ints(o.OutputsAsNumpy()),
        "options_type": int(o.BuiltinOptionsType()),
        "options": _decode_options(o),
    }


def decode(blob: bytes) -> dict[str, Any]:
    """A well-formed .tflite file as plain data: the parts of the schema mcuforge reads (metadata,
    signatures and sparsity are dropped). Raises on a corrupt file: decode only sound models."""
    m = tflite.Model.GetRootAs(blob, 0)
    subgraphs = []
    for s in range(m.SubgraphsLength()):
        sg = m.Subgraphs(s)
        subgraphs.append({
            "name": sg.Name() or b"",
            "tensors": [_decode_tensor(sg.Tensors(i)) for i in range(sg.TensorsLength())],
            "operators": [_decode_operator(sg.Operators(i)) for i in range(sg.OperatorsLength())],
            "inputs": None if sg.InputsIsNone() else _ints(sg.InputsAsNumpy()),
            "outputs": None if sg.OutputsIsNone() else _ints(sg.OutputsAsNumpy()),
        })
    buffers = []
    for i in range(m.BuffersLength()):
        b = m.Buffers(i)
        buffers.append({
            "data": None if b.DataIsNone() else b.DataAsNumpy().tobytes(),
            "offset": int(b.Offset()), "size": int(b.Size()),
        })
    codes = []
    for i in range(m.OperatorCodesLength()):
        oc = m.OperatorCodes(i)
        codes.append({
            "builtin_code": builtin_code_field(oc), "deprecated_builtin_code": int(oc.DeprecatedBuiltinCode()),
            "custom_code": oc.CustomCode(), "version": int(oc.Version()),
        })
    return {"version": int(m.Version()), "description": m.Description(), "operator_codes": codes,
            "subgraphs": subgraphs, "buffers": buffers}


class _Writer:
    """flatbuffers.Builder plus a record of where each vector starts: (kind, offset from the end)."""

    def __init__(self) -> None:
        self.b = flatbuffers.Builder(4096)
        self.vectors: list[tuple[str, int]] = []

    def numbers(self, kind: str, values: Any, dtype: Any) -> int | None:
        if values is None:
            return None
        off = self.b.CreateNumpyVector(np.asarray(values, dtype=dtype).reshape(-1))
        self.vectors.append((kind, off))
        return off

    def tables(self, kind: str, start: Callable[[Any, int], Any], offsets: list[int] | None) -> int | None:
        if offsets is None:
            return None
        start(self.b, len(offsets))
        for o in reversed(offsets):
            self.b.PrependUOffsetTRelative(o)
        off = self.b.EndVector()
        self.vectors.append((kind, off))
        return off

    def string(self, s: bytes | None) -> int | None:
        return None if s is None else self.b.CreateString(s)


def _encode_options(w: _Writer, opts: dict[str, Any]) -> int:
    cls = opts["cls"]
    mod = _module(cls)
    vecs = {f: w.numbers(f"option {f}", v, np.asarray(v).dtype) for f, v in opts["fields"].items()
            if isinstance(v, np.ndarray)}
    getattr(mod, f"{cls}Start")(w.b)
    for f, v in opts["fields"].items():
        add = getattr(mod, f"{cls}Add{f}")
        if f in vecs:
            add(w.b, vecs[f])
            continue
        # A mutated integer may not fit the field (often a byte): wrap it as int8, then uint8.
        tries = (v, (v + 128) % 256 - 128, v % 256) if isinstance(v, int) and not isinstance(v, bool) else (v,)
        for i, value in enumerate(tries):
            try:
                add(w.b, value)  # the builder checks the range before it writes anything
                break
            except TypeError:
                if i == len(tries) - 1:
                    raise
    return getattr(mod, f"{cls}End")(w.b)


def _encode_tensor(w: _Writer, t: dict[str, Any]) -> int:
    T, Q = _module("Tensor"), _module("QuantizationParameters")
    name = w.string(t["name"])
    shape = w.numbers("tensor shape", t["shape"], np.int32)
    sig = w.numbers("tensor shape_signature", t["shape_signature"], np.int32)
    q = None
    if t["quant"] is not None:
        sc = w.numbers("quant scale", t["quant"]["scale"], np.float32)
        zp = w.numbers("quant zero_point", t["quant"]["zero_point"], np.int64)
        Q.QuantizationParametersStart(w.b)
        if sc is not None:
            Q.QuantizationParametersAddScale(w.b, sc)
        if zp is not None:
            Q.QuantizationParametersAddZeroPoint(w.b, zp)
        Q.QuantizationParametersAddQuantizedDimension(w.b, t["quant"]["quantized_dimension"])
        q = Q.QuantizationParametersEnd(w.b)
    T.TensorStart(w.b)
    if shape is not None:
        T.TensorAddShape(w.b, shape)
    T.TensorAddType(w.b, t["type"])
    T.TensorAddBuffer(w.b, t["buffer"])
    if name is not None:
        T.TensorAddName(w.b, name)
    if q is not None:
        T.TensorAddQuantization(w.b, q)
    T.TensorAddIsVariable(w.b, t["is_variable"])
    if sig is not None:
        T.TensorAddShapeSignature(w.b, sig)
    return T.TensorEnd(w.b)


def _encode_operator(w: _Writer, o: dict[str, Any]) -> int:
    O = _module("Operator")
    ins = w.numbers("operator inputs", o["inputs"], np.int32)
    outs = w.numbers("operator outputs", o["outputs"], np.int32)
    opts = _encode_options(w, o["options"]) if o["options"] is not None else None
    O.OperatorStart(w.b)
    O.OperatorAddOpcodeIndex(w.b, o["opcode_index"])
    if ins is not None:
        O.OperatorAddInputs(w.b, ins)
    if outs is not None:
        O.OperatorAddOutputs(w.b, outs)
    O.OperatorAddBuiltinOptionsType(w.b, o["options_type"])
    if opts is not None:
        O.OperatorAddBuiltinOptions(w.b, opts)
    return O.OperatorEnd(w.b)


def _encode_subgraph(w: _Writer, sg: dict[str, Any]) -> int:
    S = _module("SubGraph")
    tensors = w.tables("subgraph tensors", S.SubGraphStartTensorsVector,
                       [_encode_tensor(w, t) for t in sg["tensors"]])
    ops = w.tables("subgraph operators", S.SubGraphStartOperatorsVector,
                   [_encode_operator(w, o) for o in sg["operators"]])
    ins = w.numbers("subgraph inputs", sg["inputs"], np.int32)
    outs = w.numbers("subgraph outputs", sg["outputs"], np.int32)
    name = w.string(sg["name"])
    S.SubGraphStart(w.b)
    S.SubGraphAddTensors(w.b, tensors)
    S.SubGraphAddOperators(w.b, ops)
    if ins is not None:
        S.SubGraphAddInputs(w.b, ins)
    if outs is not None:
        S.SubGraphAddOutputs(w.b, outs)
    if name is not None:
        S.SubGraphAddName(w.b, name)
    return S.SubGraphEnd(w.b)


def encode_with_vectors(doc: dict[str, Any]) -> tuple[bytes, list[tuple[str, int]]]:
    """Serialize plain data back to a .tflite file; also return (kind, byte position of the
    length prefix) of every vector, for mutations that make a vector claim more than it holds."""
    M, B, C = _module("Model"), _module("Buffer"), _module("OperatorCode")
    w = _Writer()
    bufs = []
    for buf in doc["buffers"]:
        data = w.numbers("buffer data", np.frombuffer(buf["data"], np.uint8), np.uint8) \
            if buf["data"] is not None else None
        B.BufferStart(w.b)
        if data is not None:
            B.BufferAddData(w.b, data)
        if buf["offset"]:
            B.BufferAddOffset(w.b, buf["offset"])
        if buf["size"]:
            B.BufferAddSize(w.b, buf["size"])
        bufs.append(B.BufferEnd(w.b))
    subgraphs = [_encode_subgraph(w, sg) for sg in doc["subgraphs"]] if doc["subgraphs"] is not None else None
    codes = []
    for oc in doc["operator_codes"]:
        custom = w.string(oc["custom_code"])
        C.OperatorCodeStart(w.b)
        C.OperatorCodeAddDeprecatedBuiltinCode(w.b, oc["deprecated_builtin_code"])
        if custom is not None:
            C.OperatorCodeAddCustomCode(w.b, custom)
        C.OperatorCodeAddVersion(w.b, oc["version"])
        C.OperatorCodeAddBuiltinCode(w.b, oc["builtin_code"])
        codes.append(C.OperatorCodeEnd(w.b))
    codes_v = w.tables("model operator_codes", M.ModelStartOperatorCodesVector, codes)
    subs_v = w.tables("model subgraphs", M.ModelStartSubgraphsVector, subgraphs)
    bufs_v = w.tables("model buffers", M.ModelStartBuffersVector, bufs)
    desc = w.string(doc["description"])
    M.ModelStart(w.b)
    M.ModelAddVersion(w.b, doc["version"])
    M.ModelAddOperatorCodes(w.b, codes_v)
    if subs_v is not None:
        M.ModelAddSubgraphs(w.b, subs_v)
    if desc is not None:
        M.ModelAddDescription(w.b, desc)
    M.ModelAddBuffers(w.b, bufs_v)
    w.b.Finish(M.ModelEnd(w.b), file_identifier=b"TFL3")
    out = bytes(w.b.Output())
    return out, [(kind, len(out) - off) for kind, off in w.vectors]


def encode(doc: dict[str, Any]) -> bytes:
    return encode_with_vectors(doc)[0]


# --------------------------------------------------------------------------------------------
# mutations
# --------------------------------------------------------------------------------------------

class Skip(Exception):
    """This mutation does not apply to this model (e.g. it has no constant tensor)."""


I32 = [0, 1, -1, 2, 3, 7, 16, 127, -128, 255, 256, 65535, 65536, 1_000_003, 2**30, 2**31 - 1, -2**31, -7]
DIMS = [0, -1, -2, -5, 2**31 - 1, 2**30, 65536, 1_000_003, 46341, 1, 3]
U32 = [2**32 - 1, 2**31, 2**31 - 1, 65536, 1000]
HUGE_LENGTHS = [2**31 - 1, 2**31, 2**32 - 1, 2**28, 2**20]


def _pick(rng: np.random.Generator, seq: Any) -> Any:
    seq = list(seq)
    if not seq:
        raise Skip("nothing to pick from")
    return seq[int(rng.integers(len(seq)))]


def _sg(doc: dict[str, Any]) -> dict[str, Any]:
    if not doc["subgraphs"]:
        raise Skip("no subgraph")
    return doc["subgraphs"][0]


def _const_tensors(doc: dict[str, Any]) -> list[int]:
    bufs = doc["buffers"]
    return [i for i, t in enumerate(_sg(doc)["tensors"])
            if 0 < t["buffer"] < len(bufs) and bufs[t["buffer"]]["data"]]


def _act_tensors(doc: dict[str, Any]) -> list[int]:
    const = set(_const_tensors(doc))
    return [i for i in range(len(_sg(doc)["tensors"])) if i not in const]


def _op(rng: np.random.Generator, doc: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    ops = _sg(doc)["operators"]
    i = int(rng.integers(len(ops))) if ops else None
    if i is None:
        raise Skip("no operator")
    return i, ops[i]


def _bad_index(rng: np.random.Generator, n: int) -> int:
    return _pick(rng, [n, n + 1, n + 1000, 2**31 - 1, -2, -7, -2**31])


# Each structural mutation changes `doc` in place and returns what it did, in a few words.

def m_tensor_buffer(rng, doc):
    i = _pick(rng, range(len(_sg(doc)["tensors"])))
    t = _sg(doc)["tensors"][i]
    t["buffer"] = _pick(rng, [len(doc["buffers"]), len(doc["buffers"]) + 5, *U32])
    return f"tensor {i} buffer -> {t['buffer']}"


def m_op_tensor_index(rng, doc):
    i, op = _op(rng, doc)
    key = _pick(rng, ["inputs", "outputs"])
    vec = op[key] or [0]
    j = int(rng.integers(len(vec)))
    vec[j] = _bad_index(rng, len(_sg(doc)["tensors"]))
    op[key] = vec
    return f"operator {i} {key}[{j}] -> {vec[j]}"


def m_graph_io(rng, doc):
    sg = _sg(doc)
    key = _pick(rng, ["inputs", "outputs"])
    n = len(sg["tensors"])
    how = _pick(rng, ["oob", "empty", "none", "dup", "const", "other", "absent"])
    vec = list(sg[key] or [])
    if how == "oob":
        vec = vec or [0]
        vec[int(rng.integers(len(vec)))] = _bad_index(rng, n)
    elif how == "empty":
        vec = []
    elif how == "none":
        vec = None
    elif how == "dup":
        vec = vec + vec[:1]
    elif how == "const":
        vec = [_pick(rng, _const_tensors(doc))] + vec[1:]
    elif how == "other":
        vec = [int(rng.integers(n))] + vec[1:] if n else [0]
    else:
        vec = (vec or [0])[:-1] + [-1]
    sg[key] = vec
    return f"subgraph {key} {how} -> {vec}"


def m_shape(rng, doc):
    i = _pick(rng, range(len(_sg(doc)["tensors"])))
    t = _sg(doc)["tensors"][i]
    shape = list(t["shape"] or [])
    how = _pick(rng, ["dim", "dim", "dim", "drop", "add", "scalar", "none", "rank9", "all_huge"])
    if how == "dim" and shape:
        shape[int(rng.integers(len(shape)))] = _pick(rng, DIMS)
    elif how == "drop" and shape:
        del shape[int(rng.integers(len(shape)))]
    elif how == "add":
        shape.insert(int(rng.integers(len(shape) + 1)), _pick(rng, [1, 2, 3, 0, 2**31 - 1]))
    elif how == "scalar":
        shape = []
    elif how == "rank9":
        shape = [1] * 9
    elif how == "all_huge":
        shape = [2**31 - 1] * max(len(shape), 2)
    t["shape"] = None if how == "none" else shape
    return f"tensor {i} shape {how} -> {t['shape']}"


def m_shape_signature(rng, doc):
    i = _pick(rng, range(len(_sg(doc)["tensors"])))
    t = _sg(doc)["tensors"][i]
    sig = list(t["shape"] or [1])
    sig[int(rng.integers(len(sig)))] = _pick(rng, [-1, -2, 0, 2**31 - 1])
    if rng.random() < 0.3:
        sig.append(-1)
    t["shape_signature"] = sig
    return f"tensor {i} shape_signature -> {sig}"


def m_buffer_location(rng, doc):
    """Buffers stored outside the flatbuffer: offsets and sizes past the end or claiming gigabytes."""
    b = _pick(rng, range(1, len(doc["buffers"]))) if len(doc["buffers"]) > 1 else 0
    buf = doc["buffers"][b]
    buf["offset"] = _pick(rng, [2, 16, 1 << 20, 1 << 40, 2**64 - 1, 2**63])
    buf["size"] = _pick(rng, [0, 1, 1 << 30, 1 << 33, 2**64 - 1, 2**63])
    if rng.random() < 0.5:
        buf["data"] = None
    return f"buffer {b} offset {buf['offset']} size {buf['size']}"


def m_buffer_data(rng, doc):
    c = _pick(rng, _const_tensors(doc))
    t = _sg(doc)["tensors"][c]
    buf = doc["buffers"][t["buffer"]]
    data = buf["data"] or b""
    how = _pick(rng, ["short", "long", "empty", "swap", "share"])
    if how == "short":
        buf["data"] = data[: int(rng.integers(len(data) + 1))]
    elif how == "long":
        buf["data"] = data + bytes(int(rng.integers(1, 64)))
    elif how == "empty":
        buf["data"] = b""
    elif how == "swap":
        t["buffer"] = _sg(doc)["tensors"][_pick(rng, _const_tensors(doc))]["buffer"]
    else:  # an activation tensor reads a weight buffer (it becomes a constant)
        a = _pick(rng, _act_tensors(doc))
        _sg(doc)["tensors"][a]["buffer"] = t["buffer"]
        return f"activation tensor {a} uses the buffer of constant {c}"
    return f"constant tensor {c} buffer data {how}"


def m_drop_constant(rng, doc):
    c = _pick(rng, _const_tensors(doc))
    _sg(doc)["tensors"][c]["buffer"] = 0
    return f"constant tensor {c} loses its data"


def m_cycle(rng, doc):
    sg = _sg(doc)
    ops = sg["operators"]
    how = _pick(rng, ["self", "pair", "reverse", "swap"])
    if how == "self":
        i, op = _op(rng, doc)
        if not op["inputs"] or not op["outputs"]:
            raise Skip("operator without inputs or outputs")
        op["inputs"][0] = op["outputs"][0]
        return f"operator {i} consumes its own output"
    if len(ops) < 2:
        raise Skip("fewer than two operators")
    i, j = sorted(int(x) for x in rng.choice(len(ops), 2, replace=False))
    if how == "pair":
        a, b = ops[i], ops[j]
        if not (a["inputs"] and a["outputs"] and b["inputs"] and b["outputs"]):
            raise Skip("operator without inputs or outputs")
        a["inputs"][0], b["inputs"][0] = b["outputs"][0], a["outputs"][0]
        return f"operators {i} and {j} feed each other"
    if how == "reverse":
        ops.reverse()
        return "operator order reversed"
    ops[i], ops[j] = ops[j], ops[i]
    return f"operators {i} and {j} swapped"


def m_duplicate_writer(rng, doc):
    ops = _sg(doc)["operators"]
    if len(ops) < 2:
        raise Skip("fewer than two operators")
    i, j = (int(x) for x in rng.choice(len(ops), 2, replace=False))
    if not ops[i]["outputs"] or not ops[j]["outputs"]:
        raise Skip("operator without outputs")
    ops[i]["outputs"][0] = ops[j]["outputs"][0]
    return f"operators {i} and {j} write the same tensor"


def m_subgraphs(rng, doc):
    how = _pick(rng, ["none", "empty_list", "empty", "no_ops", "no_tensors", "two"])
    if how == "none":
        doc["subgraphs"] = None
    elif how == "empty_list":
        doc["subgraphs"] = []
    elif how == "empty":
        doc["subgraphs"] = [{"name": b"", "tensors": [], "operators": [], "inputs": [], "outputs": []}]
    elif how == "no_ops":
        _sg(doc)["operators"] = []
    elif how == "no_tensors":
        _sg(doc)["tensors"] = []
    else:
        sg = _sg(doc)
        doc["subgraphs"].append(copy.deepcopy(sg))
    return f"subgraphs: {how}"


def m_opcode_index(rng, doc):
    i, op = _op(rng, doc)
    op["opcode_index"] = _pick(rng, [len(doc["operator_codes"]), len(doc["operator_codes"]) + 3, *U32])
    return f"operator {i} opcode index -> {op['opcode_index']}"


def m_builtin_code(rng, doc):
    if not doc["operator_codes"]:
        raise Skip("no operator codes")
    k = int(rng.integers(len(doc["operator_codes"])))
    oc = doc["operator_codes"][k]
    how = _pick(rng, ["unknown", "other_op", "custom", "deprecated", "version"])
    if how == "unknown":
        oc["builtin_code"] = _pick(rng, [255, 1000, 2**31 - 1, -5, -2**31])
        oc["deprecated_builtin_code"] = _pick(rng, [oc["deprecated_builtin_code"], 127, -1, -128])
    elif how == "other_op":  # a known op whose inputs and options do not match what is there
        code = int(rng.integers(0, 160))
        oc["builtin_code"] = code
        oc["deprecated_builtin_code"] = min(code, 127)
    elif how == "custom":
        oc["builtin_code"] = oc["deprecated_builtin_code"] = tflite.BuiltinOperator.CUSTOM
        oc["custom_code"] = _pick(rng, [None, b"", b"\xff\xfe bad utf-8", b"TFLite_Detection_PostProcess"])
    elif how == "deprecated":
        oc["deprecated_builtin_code"] = _pick(rng, [-1, -128, 127, 0, 4])
    else:
        oc["version"] = _pick(rng, [0, -1, 99, 2**31 - 1])
    return f"operator code {k} {how} -> {oc['builtin_code']}/{oc['deprecated_builtin_code']}"


def m_quant(rng, doc):
    sg = _sg(doc)
    cands = [i for i, t in enumerate(sg["tensors"]) if t["quant"] is not None] or list(range(len(sg["tensors"])))
    i = _pick(rng, cands)
    t = sg["tensors"][i]
    q = t["quant"] or {"scale": [0.1], "zero_point": [0], "quantized_dimension": 0}
    scale, zp = list(q["scale"] or [1.0]), list(q["zero_point"] or [0])
    how = _pick(rng, ["scale_len", "zp_len", "scale_val", "zp_val", "axis", "drop", "none_scale", "per_channel"])
    if how == "scale_len":
        scale = scale + scale[:1] * int(rng.integers(1, 4)) if rng.random() < 0.5 else scale[:-1]
    elif how == "zp_len":
        zp = zp + [0] * int(rng.integers(1, 4)) if rng.random() < 0.5 else zp[:-1]
    elif how == "scale_val":
        scale[int(rng.integers(len(scale)))] = _pick(rng, [0.0, -1.0, float("nan"), float("inf"), 1e-45,
                                                           3e38, 1e-30, 1e30])
    elif how == "zp_val":
        zp[int(rng.integers(len(zp)))] = _pick(rng, [128, -129, 1000, -1000, 2**40, -2**62, 255])
    elif how == "axis":
        q["quantized_dimension"] = _pick(rng, [-1, 4, 7, 2**31 - 1, -2**31, 1, 2, 3])
    elif how == "drop":
        t["quant"] = None
        return f"tensor {i} quantization dropped"
    elif how == "none_scale":
        scale = None
    else:  # per-channel parameters where there should be one pair, or the wrong count
        n = int(rng.integers(2, 9))
        scale, zp = [0.05] * n, [0] * n
        q["quantized_dimension"] = int(rng.integers(0, 4))
    q["scale"], q["zero_point"] = scale, zp
    t["quant"] = q
    return f"tensor {i} quantization {how}"


def m_options(rng, doc):
    i, op = _op(rng, doc)
    how = _pick(rng, ["drop", "wrong_type", "field", "field", "field", "type_only"])
    if how == "drop":
        op["options"], op["options_type"] = None, 0
    elif how == "wrong_type":  # the table of one kind of options read as another
        cls = _pick(rng, [c for c in _OPTION_CLASSES.values() if hasattr(tflite, c)])
        if op["options"] is None:
            op["options"] = {"cls": cls, "fields": {}}
        op["options_type"] = getattr(tflite.BuiltinOptions, cls)
    elif how == "type_only":
        op["options_type"] = _pick(rng, [0, 200, 255])
    else:
        if op["options"] is None or not op["options"]["fields"]:
            raise Skip("operator without option fields")
        fields = op["options"]["fields"]
        f = _pick(rng, sorted(fields))
        v = fields[f]
        if isinstance(v, np.ndarray):
            v = v.copy()
            choice = _pick(rng, ["value", "empty", "long"])
            if choice == "value" and v.size:
                v[int(rng.integers(v.size))] = _pick(rng, [0, -1, -2, 7, 127, 2**20])
            elif choice == "empty":
                v = v[:0]
            else:
                v = np.concatenate([v, np.asarray([1, 2, 3], dtype=v.dtype)])
        elif isinstance(v, bool):
            v = not v
        elif isinstance(v, float):
            v = _pick(rng, [0.0, -1.0, float("nan"), float("inf"), 1e30, -1e-30])
        else:
            v = _pick(rng, I32)
        fields[f] = v
        return f"operator {i} option {f} -> {v.tolist() if isinstance(v, np.ndarray) else v}"
    return f"operator {i} options {how}"


def m_tensor_type(rng, doc):
    i = _pick(rng, range(len(_sg(doc)["tensors"])))
    t = _sg(doc)["tensors"][i]
    t["type"] = _pick(rng, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 42, 127, -1])
    return f"tensor {i} type -> {t['type']}"


def m_arity(rng, doc):
    i, op = _op(rng, doc)
    how = _pick(rng, ["drop_input", "extra_input", "absent_input", "no_outputs", "extra_output", "no_inputs"])
    n = len(_sg(doc)["tensors"])
    ins, outs = list(op["inputs"] or []), list(op["outputs"] or [])
    if how == "drop_input" and ins:
        del ins[int(rng.integers(len(ins)))]
    elif how == "extra_input" and n:
        ins.append(int(rng.integers(n)))
    elif how == "absent_input" and ins:
        ins[int(rng.integers(len(ins)))] = -1
    elif how == "no_outputs":
        outs = []
    elif how == "extra_output" and n:
        outs.append(int(rng.integers(n)))
    elif how == "no_inputs":
        ins = []
    op["inputs"], op["outputs"] = ins, outs
    return f"operator {i} {how}"


def m_remove_or_duplicate_op(rng, doc):
    i, op = _op(rng, doc)
    ops = _sg(doc)["operators"]
    if rng.random() < 0.5:
        del ops[i]
        return f"operator {i} removed"
    ops.insert(i, copy.deepcopy(op))
    return f"operator {i} duplicated"


def m_versions(rng, doc):
    doc["version"] = _pick(rng, [0, 1, 2, 4, 2**31 - 1])
    return f"model version -> {doc['version']}"


def m_rewire(rng, doc):
    """An operator reads a random existing tensor: wrong shapes and types, but every index valid."""
    i, op = _op(rng, doc)
    if not op["inputs"] or not _sg(doc)["tensors"]:
        raise Skip("operator without inputs or model without tensors")
    j = int(rng.integers(len(op["inputs"])))
    op["inputs"][j] = int(rng.integers(len(_sg(doc)["tensors"])))
    return f"operator {i} input {j} -> tensor {op['inputs'][j]}"


def m_resize_graph(rng, doc):
    """Every 4-D activation's height and width changed the same way: the shapes often still agree,
    so the model reaches lowering with edge cases (1x1 maps, windows larger than the input)."""
    how = _pick(rng, ["x2", "half", "one", "x3+1", "width_one"])
    f = {"x2": lambda d: d * 2, "half": lambda d: max(d // 2, 1), "one": lambda d: 1,
         "x3+1": lambda d: d * 3 + 1, "width_one": None}[how]
    for i in _act_tensors(doc):
        t = _sg(doc)["tensors"][i]
        if t["shape"] and len(t["shape"]) == 4:
            if f is None:
                t["shape"][2] = 1
            else:
                t["shape"][1], t["shape"][2] = f(t["shape"][1]), f(t["shape"][2])
            t["shape_signature"] = None
    return f"activations' height and width {how}"


# Mutations that keep most of the model plausible reach shape inference, legalization, lowering
# and planning; the others are mostly refused by the reader. The first kind is drawn more often.
DEEP = {"shape", "shape_signature", "buffer_data", "drop_constant", "cycle", "duplicate_writer", "builtin_code",
        "quant", "options", "tensor_type", "arity", "remove_or_duplicate_op", "rewire", "graph_io", "resize_graph"}

STRUCTURAL: dict[str, Callable[[np.random.Generator, dict[str, Any]], str]] = {
    "tensor_buffer": m_tensor_buffer,
    "op_tensor_index": m_op_tensor_index,
    "graph_io": m_graph_io,
    "shape": m_shape,
    "shape_signature": m_shape_signature,
    "buffer_location": m_buffer_location,
    "buffer_data": m_buffer_data,
    "drop_constant": m_drop_constant,
    "cycle": m_cycle,
    "duplicate_writer": m_duplicate_writer,
    "subgraphs": m_subgraphs,
    "opcode_index": m_opcode_index,
    "builtin_code": m_builtin_code,
    "quant": m_quant,
    "options": m_options,
    "tensor_type": m_tensor_type,
    "arity": m_arity,
    "remove_or_duplicate_op": m_remove_or_duplicate_op,
    "versions": m_versions,
    "rewire": m_rewire,
    "resize_graph": m_resize_graph,
}


# Byte-level mutations take and return the file's bytes.

def b_bitflip(rng, blob):
    out = bytearray(blob)
    k = int(rng.integers(1, 9))
    for pos in rng.integers(0, len(out) * 8, k):
        out[pos // 8] ^= 1 << (pos % 8)
    return bytes(out), f"{k} bit(s) flipped"


def b_bytes(rng, blob):
    out = bytearray(blob)
    k = int(rng.integers(1, 9))
    for pos in rng.integers(0, len(out), k):
        out[pos] = _pick(rng, [0, 1, 0x7F, 0x80, 0xFF, int(rng.integers(256))])
    return bytes(out), f"{k} byte(s) set"


def b_int32(rng, blob):
    """An aligned 32-bit word (an offset, a length, an index or a scalar) set to an interesting value."""
    out = bytearray(blob)
    k = int(rng.integers(1, 4))
    for _ in range(k):
        pos = int(rng.integers(0, len(out) // 4)) * 4
        out[pos:pos + 4] = (_pick(rng, I32) & 0xFFFFFFFF).to_bytes(4, "little")
    return bytes(out), f"{k} int32 word(s) overwritten"


def b_truncate(rng, blob):
    cut = int(rng.integers(0, len(blob)))
    return blob[:cut], f"truncated to {cut} bytes"


def b_chunk(rng, blob):
    a = int(rng.integers(0, len(blob)))
    n = int(rng.integers(1, 257))
    how = _pick(rng, ["delete", "duplicate", "insert"])
    if how == "delete":
        out = blob[:a] + blob[a + n:]
    elif how == "duplicate":
        out = blob[:a] + blob[a:a + n] + blob[a:]
    else:
        out = blob[:a] + rng.integers(0, 256, n, dtype=np.uint8).tobytes() + blob[a:]
    return out, f"{n} bytes at {a}: {how}"


BYTES: dict[str, Callable[[np.random.Generator, bytes], tuple[bytes, str]]] = {
    "bitflip": b_bitflip, "bytes": b_bytes, "int32": b_int32, "truncate": b_truncate, "chunk": b_chunk,
}


def _patch_length(rng: np.random.Generator, blob: bytes, vectors: list[tuple[str, int]]) -> tuple[bytes, str]:
    """A vector whose length prefix claims far more elements than the file holds: a shape of
    2^31 dims, a buffer of gigabytes, a tensor list of billions."""
    kind, pos = _pick(rng, vectors)
    n = _pick(rng, HUGE_LENGTHS)
    out = bytearray(blob)
    out[pos:pos + 4] = n.to_bytes(4, "little")
    return bytes(out), f"{kind} vector at byte {pos} claims {n} elements"


@dataclass
class Mutant:
    index: int
    source: Path
    data: bytes
    steps: list[str]

    def describe(self) -> str:
        return f"mutant {self.index} of {self.source.name}: " + "; ".join(self.steps)


def mutate(source: Path, blob: bytes, doc: dict[str, Any], rng: np.random.Generator, index: int = 0) -> Mutant:
    """One mutant: 1-3 structural mutations, then sometimes a huge vector length or byte damage;
    or byte damage alone."""
    steps: list[str] = []
    if rng.random() < 0.3:
        data = blob
    else:
        d = copy.deepcopy(doc)
        names = sorted(STRUCTURAL)
        weights = np.asarray([3.0 if n in DEEP else 1.0 for n in names])
        for _ in range(int(rng.choice([1, 2, 3], p=[0.6, 0.3, 0.1]))):
            name = names[int(rng.choice(len(names), p=weights / weights.sum()))]
            try:
                steps.append(f"{name}: {STRUCTURAL[name](rng, d)}")
            except Skip:
                continue
        try:
            data, vectors = encode_with_vectors(d)
        except (TypeError, OverflowError):  # a value its field cannot hold (e.g. a dimension doubled past int32)
            steps, data, vectors = [], blob, []  # byte damage instead
        if vectors and rng.random() < 0.1:
            data, what = _patch_length(rng, data, vectors)
            steps.append(f"huge_vector: {what}")
        if rng.random() < 0.8 and steps:
            return Mutant(index, source, data, steps)
    name = _pick(rng, sorted(BYTES))
    data, what = BYTES[name](rng, data)
    steps.append(f"{name}: {what}")
    return Mutant(index, source, data, steps)


# --------------------------------------------------------------------------------------------
# running the commands on mutants
# --------------------------------------------------------------------------------------------

COMMANDS = ("inspect", "plan", "compile")
SENTINEL = b"from an earlier compile\n"  # the one file of a fake earlier output a failed compile must keep
MEMORY_LIMIT = 1 << 30  # bytes of address space for a worker or a checked subprocess


def _limit_memory(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("MCUFORGE_DEBUG", None)
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"  # thread pools reserve address space
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def argv_for(command: str, model: Path, out_dir: Path) -> list[str]:
    return [command, str(model)] + (["-o", str(out_dir)] if command == "compile" else [])


@dataclass
class Result:
    code: int | None  # None: timed out (hang) or the process died
    stderr: str
    seconds: float
    note: str = ""


class Worker:
    """A child process that runs mcuforge.cli.main() on request under an address-space limit.
    Requests and replies are JSON lines; a request that takes longer than `timeout` kills it
    (the next request starts a fresh one)."""

    def __init__(self, timeout: float = 30.0, memory_limit: int = MEMORY_LIMIT):
        self.timeout = timeout
        self.memory_limit = memory_limit
        self.proc: subprocess.Popen | None = None
        self.errlog = tempfile.TemporaryFile()

    def _start(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "devtools.fuzz", "worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self.errlog, env=_child_env(), preexec_fn=_limit_memory(self.memory_limit))
        return self.proc

    def run(self, argv: list[str]) -> Result:
        proc = self._start()
        t0 = time.monotonic()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write((json.dumps(argv) + "\n").encode())
            proc.stdin.flush()
        except BrokenPipeError:
            self.close()
            return Result(None, "", 0.0, "worker died before the request")
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            ready = sel.select(self.timeout)
        if not ready:
            self.close()
            return Result(None, "", time.monotonic() - t0, f"no answer in {self.timeout:.0f} s (hang)")
        line = proc.stdout.readline()
        if not line:
            code = proc.wait()
            self.proc = None
            return Result(None, "", time.monotonic() - t0, f"worker died (exit {code})")
        reply = json.loads(line)
        return Result(reply["code"], reply["stderr"], reply["seconds"])

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for f in (self.proc.stdin, self.proc.stdout):
                if f is not None:
                    f.close()
            self.proc = None

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
        self.errlog.close()


def _worker_main() -> int:
    """The worker's loop: one JSON argv per line in, one JSON reply per line out."""
    import contextlib
    import io
    import warnings

    from mcuforge import cli

    proto = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # nothing but replies on the protocol channel
    for line in sys.stdin:
        argv = json.loads(line)
        out, err = io.StringIO(), io.StringIO()
        t0 = time.monotonic()
        with warnings.catch_warnings():
            warnings.simplefilter("always")  # as in a fresh process: every warning shows
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = cli.main(argv)
                except SystemExit as e:  # argparse
                    code = e.code if isinstance(e.code, int) else 1
                except BaseException as e:  # what main() lets through is a failure too
                    print(f"escaped main(): {type(e).__name__}: {e}", file=err)
                    code = 99
        proto.write(json.dumps({"code": code, "stderr": err.getvalue(),
                                "seconds": time.monotonic() - t0}) + "\n")
        proto.flush()
    return 0


def run_subprocess(argv: list[str], timeout: float = 60.0, memory_limit: int = MEMORY_LIMIT) -> Result:
    """The real entry point, `python -m mcuforge ARGV`, with an address-space limit and a timeout."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-m", "mcuforge", *argv], capture_output=True, text=True,
                           timeout=timeout, env=_child_env(), preexec_fn=_limit_memory(memory_limit))
    except subprocess.TimeoutExpired:
        return Result(None, "", time.monotonic() - t0, f"no answer in {timeout:.0f} s (hang)")
    return Result(p.returncode, p.stderr, time.monotonic() - t0)


def judge(result: Result) -> tuple[str, str]:
    """(outcome, problem): outcome is "exit 0", "exit 2" or "FAIL"; problem says what is wrong."""
    if result.code is None:
        return "FAIL", result.note
    err = result.stderr.strip()
    lines = err.splitlines()
    if "Traceback" in result.stderr:
        return "FAIL", "traceback: " + (lines[-1] if lines else "")
    if result.code == 0:
        return ("exit 0", "") if not err else ("FAIL", f"exit 0 with stderr: {lines[0][:300]}")
    if result.code == 2:
        if len(lines) != 1 or not lines[0].startswith("mcuforge: error: "):
            return "FAIL", f"exit 2 but stderr is {len(lines)} line(s): {err[:300]!r}"
        return "exit 2", ""
    return "FAIL", f"exit {result.code}: {err[:300]}"


def check_output_dir(out: Path, outcome: str, sentinel: bool) -> str:
    """'' if the -o directory is right after `compile`: complete on success; on failure untouched
    (the sentinel of an earlier run still there with its marker, alone) or absent; no temporary
    directory left."""
    leftovers = [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    if leftovers:
        return f"temporary files left beside the output: {leftovers}"
    if outcome == "exit 0":
        if not (out / "report.json").is_file() or not (out / "CMakeLists.txt").is_file():
            return "exit 0 but the output directory is incomplete"
        if (out / "SENTINEL").exists():
            return "exit 0 but the old output directory was not replaced"
        return ""
    if sentinel:
        names = sorted(p.name for p in out.iterdir()) if out.is_dir() else None
        return "" if names == [MARKER, "SENTINEL"] else f"failed compile changed the existing output directory: {names}"
    return f"failed compile left {out.name}/ behind" if out.exists() else ""


def source_models(root: Path) -> list[Path]:
    fx = root / "tests" / "fixtures"
    return sorted((fx / "models").glob("*.tflite")) + sorted((fx / "mlperf").glob("*.tflite"))


@dataclass
class Failure:
    mutant: Mutant
    command: str
    problem: str
    stderr: str = ""


@dataclass
class Report:
    seed: int
    mutants: int = 0
    seconds: float = 0.0
    counts: dict[str, Counter] = field(default_factory=lambda: {c: Counter() for c in (*COMMANDS, "verify")})
    subprocess_checks: int = 0
    failures: list[Failure] = field(default_factory=list)
    mutations: Counter = field(default_factory=Counter)
    slowest: dict[str, tuple[float, int]] = field(default_factory=dict)  # command -> (seconds, mutant)

    def summary(self) -> str:
        lines = [f"seed {self.seed}: {self.mutants} mutants in {self.seconds:.1f} s, "
                 f"{self.subprocess_checks} rechecked through `python -m mcuforge`"]
        for c, counts in self.counts.items():
            if c != "verify" or counts:
                lines.append(f"  {c:<8} " + ", ".join(f"{k}: {counts[k]}" for k in ("exit 0", "exit 2", "FAIL")))
        lines.append("  mutations applied: " + ", ".join(f"{k} {n}" for k, n in sorted(self.mutations.items())))
        lines.append("  slowest:  " + ", ".join(f"{c} {t:.2f} s (mutant {i})" for c, (t, i) in self.slowest.items()))
        lines.append(f"  failures: {len(self.failures)}")
        for f in self.failures[:50]:
            lines.append(f"    {f.command} on {f.mutant.describe()}: {f.problem}")
        return "\n".join(lines)


class Campaign:
    """Seeded mutants of `sources`, each run through every command; stop at `count` mutants or
    after `time_limit` seconds, whichever comes first. Mutant i depends only on (seed, i)."""

    def __init__(self, sources: Iterable[Path], seed: int, workdir: Path, timeout: float = 30.0,
                 subprocess_every: int = 0, save_dir: Path | None = None, commands: Iterable[str] = COMMANDS,
                 verify: bool = False):
        self.sources = list(sources)
        self.seed = seed
        self.workdir = Path(workdir)
        self.timeout = timeout
        self.subprocess_every = subprocess_every
        self.save_dir = save_dir
        self.commands = tuple(commands)
        self.verify = verify  # also `verify --on reference` every mutant that compiles
        self._cache: dict[Path, tuple[bytes, dict[str, Any]]] = {}

    def mutant(self, i: int) -> Mutant:
        rng = np.random.default_rng([self.seed, i])
        # The MLPerf models are large and slow to re-encode: drawn less often than the small ones.
        weights = np.asarray([0.25 if "mlperf" in p.parts else 1.0 for p in self.sources])
        src = self.sources[int(rng.choice(len(self.sources), p=weights / weights.sum()))]
        if src not in self._cache:
            blob = src.read_bytes()
            self._cache[src] = (blob, decode(blob))
        blob, doc = self._cache[src]
        return mutate(src, blob, doc, rng, i)

    def run(self, count: int, time_limit: float | None = None, start: int = 0,
            progress: Callable[[Report], None] | None = None,
            on_failure: Callable[[Failure], None] | None = None) -> Report:
        report = Report(self.seed)
        t0 = time.monotonic()
        self.workdir.mkdir(parents=True, exist_ok=True)
        with Worker(self.timeout) as worker:
            for i in range(start, start + count):
                if time_limit is not None and time.monotonic() - t0 > time_limit:
                    break
                seen = len(report.failures)
                self.run_one(worker, self.mutant(i), report)
                report.mutants += 1
                for f in report.failures[seen:] if on_failure else ():
                    on_failure(f)
                if progress and report.mutants % 100 == 0:
                    report.seconds = time.monotonic() - t0
                    progress(report)
        report.seconds = time.monotonic() - t0
        return report

    def run_one(self, worker: Worker, m: Mutant, report: Report) -> None:
        for s in m.steps:
            report.mutations[s.split(":")[0]] += 1
        model = self.workdir / f"mutant_{m.index}.tflite"
        model.write_bytes(m.data)
        out = self.workdir / f"out_{m.index}"
        # Every Nth mutant, one command (in turn) also runs through the real entry point.
        every = self.subprocess_every
        recheck = COMMANDS[(m.index // every) % len(COMMANDS)] if every and m.index % every == 0 else None
        sentinel = m.index % 2 == 1  # odd mutants compile over the output of an earlier compile
        try:
            for command in self.commands:
                argv = argv_for(command, model, out)
                outcome, problem, result = self._check(worker, command, argv, out, sentinel, recheck == command)
                report.subprocess_checks += recheck == command
                report.counts[command][outcome] += 1
                if result.seconds > report.slowest.get(command, (-1.0, 0))[0]:
                    report.slowest[command] = (result.seconds, m.index)
                if problem:
                    self._fail(report, Failure(m, command, problem, result.stderr))
                if command == "compile" and outcome == "exit 0" and self.verify:
                    # An accepted mutant must also be bit-exact with TFLite Micro (or refused by it).
                    r = worker.run(["verify", str(model), "--on", "reference", "-n", "2"])
                    outcome, problem = judge(r)
                    report.counts["verify"][outcome] += 1
                    if problem:
                        self._fail(report, Failure(m, "verify", problem, r.stderr))
        finally:
            model.unlink(missing_ok=True)
            shutil.rmtree(out, ignore_errors=True)

    def _check(self, worker: Worker, command: str, argv: list[str], out: Path, sentinel: bool,
               recheck: bool) -> tuple[str, str, Result]:
        """Run one command on the worker (and through the entry point when `recheck`): (outcome,
        problem or '', the worker's result)."""

        def prepare() -> None:
            shutil.rmtree(out, ignore_errors=True)
            if command == "compile" and sentinel:  # an earlier output of mcuforge, marked as such
                out.mkdir()
                (out / "SENTINEL").write_bytes(SENTINEL)
                (out / MARKER).write_text(marker_text({"SENTINEL": SENTINEL}))

        prepare()
        result = worker.run(argv)
        outcome, problem = judge(result)
        if not problem and command == "compile":
            problem = check_output_dir(out, outcome, command == "compile" and sentinel)
        if recheck and not problem:
            prepare()
            real = run_subprocess(argv, timeout=max(self.timeout, 60.0))
            if (real.code, real.stderr) != (result.code, result.stderr):
                problem = (f"`python -m mcuforge` gave exit {real.code} {real.stderr.strip()[:200]!r}, "
                           f"in-process exit {result.code} {result.stderr.strip()[:200]!r}")
        shutil.rmtree(out, ignore_errors=True)
        return ("FAIL" if problem else outcome), problem, result

    def _fail(self, report: Report, failure: Failure) -> None:
        report.failures.append(failure)
        if self.save_dir is not None:
            self.save_dir.mkdir(parents=True, exist_ok=True)
            (self.save_dir / f"seed{self.seed}_mutant{failure.mutant.index}.tflite").write_bytes(failure.mutant.data)


if __name__ == "__main__" and sys.argv[1:] == ["worker"]:
    sys.exit(_worker_main())
