"""A .tflite file as plain Python data, both ways: `encode` (the one place in mcuforge's development
code that calls the flatbuffer builders of the `tflite` package) and `decode`, its inverse for
well-formed files. `devtools.tflite_writer.ModelWriter` builds such a document; the fuzzer decodes a
model, damages the document and encodes it back.

The document mirrors the schema's tables (the parts mcuforge reads; metadata, signatures and
sparsity are not kept):

    {"version": 3, "description": str | bytes | None,
     "operator_codes": [{"builtin_code": int, "deprecated_builtin_code": int,
                         "custom_code": str | bytes | None, "version": int}],
     "subgraphs": [{"name": ..., "inputs": [int] | None, "outputs": [int] | None,
                    "tensors": [{"name": ..., "shape": [int] | None, "shape_signature": [int] | None,
                                 "type": int, "buffer": int, "is_variable": bool,
                                 "quant": None | {"scale": [float] | None, "zero_point": [int] | None,
                                                  "quantized_dimension": int}}],
                    "operators": [{"opcode_index": int, "inputs": [int] | None, "outputs": [int] | None,
                                   "options_type": int,
                                   "options": None | {"cls": "Conv2DOptions", "fields": {"StrideW": 1, ...}}}]
                   }] | None,
     "buffers": [{"data": bytes | None, "offset": int, "size": int}]}

Enums are the schema's integers (`tflite.TensorType`, `tflite.BuiltinOperator`, ...), so a document
may hold values no valid model has. Option fields are named as in the builder functions
(`StrideW` for `Conv2DOptionsAddStrideW`); a numpy array value becomes a vector of its dtype. A None
vector or string is left out of the file (absent, not empty). Buffer data is 16-byte aligned.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

import flatbuffers
import numpy as np
import tflite
from mcuforge.frontend.reader import builtin_code_field


def _module(name: str) -> Any:
    return importlib.import_module(f"tflite.{name}")  # the generated module (`tflite.<Name>` is the class)


# --------------------------------------------------------------------------------------------
# encode
# --------------------------------------------------------------------------------------------

class _Builder:
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

    def data(self, kind: str, data: bytes | None) -> int | None:
        """Raw bytes, aligned to 16 (TFLM reads constants in place)."""
        if data is None:
            return None
        b = self.b
        b.StartVector(1, len(data), 16)
        b.head = b.head - len(data)
        b.Bytes[b.head:b.head + len(data)] = data
        b.vectorNumElems = len(data)
        off = b.EndVector()
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

    def string(self, s: str | bytes | None) -> int | None:
        return None if s is None else self.b.CreateString(s)


def _encode_options(w: _Builder, opts: dict[str, Any]) -> int:
    cls = opts["cls"]
    mod = _module(cls)
    vecs = {f: w.numbers(f"option {f}", v, np.asarray(v).dtype) for f, v in opts["fields"].items()
            if isinstance(v, np.ndarray)}  # vectors (and strings) first: they cannot nest in a table
    vecs.update({f: w.string(v) for f, v in opts["fields"].items() if isinstance(v, (str, bytes))})
    getattr(mod, f"{cls}Start")(w.b)
    for f, v in opts["fields"].items():
        add = getattr(mod, f"{cls}Add{f}", None)
        if add is None:
            raise ValueError(f"{cls} has no field {f!r}")
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


def _encode_tensor(w: _Builder, t: dict[str, Any]) -> int:
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
    if sig is not None:
        T.TensorAddShapeSignature(w.b, sig)
    T.TensorAddType(w.b, t["type"])
    T.TensorAddBuffer(w.b, t["buffer"])
    if name is not None:
        T.TensorAddName(w.b, name)
    T.TensorAddIsVariable(w.b, t["is_variable"])
    if q is not None:
        T.TensorAddQuantization(w.b, q)
    return T.TensorEnd(w.b)


def _encode_operator(w: _Builder, o: dict[str, Any]) -> int:
    O = _module("Operator")
    opts = _encode_options(w, o["options"]) if o["options"] is not None else None
    ins = w.numbers("operator inputs", o["inputs"], np.int32)
    outs = w.numbers("operator outputs", o["outputs"], np.int32)
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


def _encode_subgraph(w: _Builder, sg: dict[str, Any]) -> int:
    S = _module("SubGraph")
    tensor_tables = [_encode_tensor(w, t) for t in sg["tensors"]]
    op_tables = [_encode_operator(w, o) for o in sg["operators"]]
    tensors = w.tables("subgraph tensors", S.SubGraphStartTensorsVector, tensor_tables)
    ops = w.tables("subgraph operators", S.SubGraphStartOperatorsVector, op_tables)
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


def _encode_buffer(w: _Builder, buf: dict[str, Any]) -> int:
    B = _module("Buffer")
    data = w.data("buffer data", buf["data"])
    B.BufferStart(w.b)
    if data is not None:
        B.BufferAddData(w.b, data)
    if buf["offset"]:
        B.BufferAddOffset(w.b, buf["offset"])
    if buf["size"]:
        B.BufferAddSize(w.b, buf["size"])
    return B.BufferEnd(w.b)


def _encode_code(w: _Builder, oc: dict[str, Any]) -> int:
    C = _module("OperatorCode")
    custom = w.string(oc["custom_code"])
    C.OperatorCodeStart(w.b)
    C.OperatorCodeAddBuiltinCode(w.b, oc["builtin_code"])
    C.OperatorCodeAddDeprecatedBuiltinCode(w.b, oc["deprecated_builtin_code"])
    if custom is not None:
        C.OperatorCodeAddCustomCode(w.b, custom)
    C.OperatorCodeAddVersion(w.b, oc["version"])
    return C.OperatorCodeEnd(w.b)


def encode_with_vectors(doc: dict[str, Any]) -> tuple[bytes, list[tuple[str, int]]]:
    """The document as a .tflite file; also (kind, byte position of the length prefix) of every
    vector, for mutations that make a vector claim more than it holds."""
    M = _module("Model")
    w = _Builder()
    bufs = [_encode_buffer(w, buf) for buf in doc["buffers"]]
    subgraphs = [_encode_subgraph(w, sg) for sg in doc["subgraphs"]] if doc["subgraphs"] is not None else None
    codes = [_encode_code(w, oc) for oc in doc["operator_codes"]]
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
# decode
# --------------------------------------------------------------------------------------------

OPTION_CLASSES = {  # BuiltinOptions value -> options table name
    v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_") and isinstance(v, int)
}


def _opt_vec(obj: Any, name: str) -> np.ndarray | None:
    if getattr(obj, f"{name}IsNone")():
        return None
    return np.asarray(getattr(obj, f"{name}AsNumpy")())


def _decode_options(op: Any) -> dict[str, Any] | None:
    """The operator's builtin options as {"cls": class name, "fields": {field: value}}: scalars,
    numeric vectors and strings (VAR_HANDLE's shared name: every option our ops read); sub-tables
    are dropped."""
    kind = int(op.BuiltinOptionsType())
    cls = OPTION_CLASSES.get(kind)
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
            if isinstance(v, (bool, int, float, bytes)):
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
    """A well-formed .tflite file as a document. Raises on a corrupt file: decode only sound models."""
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
