"""Read a .tflite flatbuffer into plain Python data, validating everything we rely on.

We read with the `tflite` package (generated flatbuffer accessors for TFLite's schema, pure
Python, no TensorFlow): it tracks the official schema, so new fields and ops are named correctly,
and it reads lazily from the bytes, so a large model costs no copy until a buffer is used. The
generated code trusts the file; every access here is wrapped so that a corrupt file becomes one
ModelError naming what was being read, never an IndexError from deep inside flatbuffers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import flatbuffers
import numpy as np
import tflite

from mcuforge.errors import ModelError

# Refuse absurd sizes before allocating anything (a fuzzed file can claim terabytes).
MAX_TENSOR_BYTES = 1 << 30

_TFL_DTYPES = {
    v: k.lower() for k, v in vars(tflite.TensorType).items() if not k.startswith("_") and isinstance(v, int)
}
_BUILTIN_NAMES = {
    v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_") and isinstance(v, int)
}
_OPTION_CLASSES = {
    v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_") and isinstance(v, int)
}
_NP_DTYPES = {
    "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "float32": np.float32, "bool": np.bool_, "float16": np.float16, "float64": np.float64,
    "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
}
ACTIVATIONS = {
    v: k for k, v in vars(tflite.ActivationFunctionType).items() if not k.startswith("_") and isinstance(v, int)
}
PADDINGS = {v: k for k, v in vars(tflite.Padding).items() if not k.startswith("_") and isinstance(v, int)}


@dataclass
class TflQuant:
    scale: tuple[float, ...]
    zero_point: tuple[int, ...]
    axis: int


@dataclass
class TflTensor:
    index: int
    name: str
    shape: tuple[int, ...]
    dtype: str  # lower-case TFLite type name, e.g. "int8", "float32", "float16"
    quant: TflQuant | None
    data: np.ndarray | None  # constant contents, None for activations
    dynamic: bool = False  # the shape itself has an unknown (-1) dimension: nothing can allocate it
    signature: tuple[int, ...] = ()  # shape_signature (-1 for a dimension unknown at conversion), or the shape
    is_variable: bool = False  # a variable tensor: state kept between invocations (LSTM, SVDF)

    @property
    def nbytes(self) -> int:
        item = np.dtype(_NP_DTYPES[self.dtype]).itemsize if self.dtype in _NP_DTYPES else 1
        return math.prod(self.shape) * item

    @property
    def is_const(self) -> bool:
        return self.data is not None


@dataclass
class TflOperator:
    index: int
    name: str  # builtin name such as "CONV_2D", or "CUSTOM:<code>"
    inputs: list[int]  # tensor indices, -1 for an absent optional input
    outputs: list[int]
    options: Any = None  # decoded tflite.*Options object, or None
    version: int = 1


@dataclass
class TflGraph:
    tensors: list[TflTensor]
    operators: list[TflOperator]
    inputs: list[int]
    outputs: list[int]
    description: str = ""
    source: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    # The model's other subgraphs (subgraph k + 1 at index k): CALL_ONCE's initialization subgraph,
    # IF/WHILE bodies. The importer decides which it supports.
    subgraphs: list[TflGraph] = field(default_factory=list)


def read_tflite(path: str | Path) -> TflGraph:
    p = Path(path)
    try:
        blob = p.read_bytes()
    except FileNotFoundError:
        raise ModelError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise ModelError(f"{p}: is a directory, not a .tflite file") from None
    except OSError as e:
        raise ModelError(f"{p}: cannot read: {e.strerror}") from None
    return read_tflite_bytes(blob, source=str(p))


def read_tflite_bytes(blob: bytes, source: str = "<bytes>") -> TflGraph:
    if len(blob) < 8:
        raise ModelError(f"{source}: not a TFLite file ({len(blob)} bytes, too short)")
    if blob[4:8] != b"TFL3":
        raise ModelError(f"{source}: not a TFLite file (no 'TFL3' identifier at byte 4)")
    try:
        return _read(bytes(blob), source)
    except ModelError:
        raise
    except Exception as e:  # generated accessors raise anything on a corrupt buffer
        raise ModelError(f"{source}: corrupt or truncated TFLite file ({type(e).__name__}: {e})") from None


def _read(blob: bytes, source: str) -> TflGraph:
    model = tflite.Model.GetRootAs(blob, 0)
    if model.Version() != 3:
        raise ModelError(f"{source}: TFLite schema version {model.Version()}, expected 3")
    n_sub = model.SubgraphsLength()
    if n_sub == 0:
        raise ModelError(f"{source}: the model has no subgraph")
    buffers = [model.Buffers(i) for i in range(model.BuffersLength())]
    codes = []
    for i in range(model.OperatorCodesLength()):
        oc = model.OperatorCodes(i)
        code = max(builtin_code_field(oc), int(oc.DeprecatedBuiltinCode()))
        name = _BUILTIN_NAMES.get(code, f"BUILTIN_{code}")
        if name == "CUSTOM":
            custom = oc.CustomCode()
            name = f"CUSTOM:{_text(custom, 64) or '?'}"
        codes.append((name, int(oc.Version())))
    graphs = [_read_subgraph(blob, model.Subgraphs(k), buffers, codes, source if k == 0 else f"{source} subgraph {k}")
              for k in range(n_sub)]
    main = graphs[0]
    main.description = _text(model.Description(), 1000)
    main.source = source
    main.subgraphs = graphs[1:]
    return main


def _read_subgraph(blob: bytes, sg: Any, buffers: list[Any], codes: list[tuple[str, int]], source: str) -> TflGraph:
    tensors = [_read_tensor(blob, sg.Tensors(i), i, buffers, source) for i in range(sg.TensorsLength())]
    n_t = len(tensors)

    def tensor_list(values: Any, what: str, allow_absent: bool) -> list[int]:
        out = [int(v) for v in values]
        for t in out:
            if not (0 <= t < n_t or (allow_absent and t == -1)):
                raise ModelError(f"{source}: {what} refers to tensor {t}, but the model has {n_t} tensors")
        return out

    ops = []
    for i in range(sg.OperatorsLength()):
        o = sg.Operators(i)
        oi = int(o.OpcodeIndex())
        if not 0 <= oi < len(codes):
            raise ModelError(f"{source}: operator #{i} uses opcode {oi}, but the model has {len(codes)} opcodes")
        name, version = codes[oi]
        ins = tensor_list(o.InputsAsNumpy() if not o.InputsIsNone() else [], f"operator #{i} {name} input", True)
        outs = tensor_list(o.OutputsAsNumpy() if not o.OutputsIsNone() else [], f"operator #{i} {name} output", False)
        ops.append(TflOperator(i, name, ins, outs, _options(o), version))

    inputs = tensor_list(sg.InputsAsNumpy() if not sg.InputsIsNone() else [], "subgraph input", False)
    outputs = tensor_list(sg.OutputsAsNumpy() if not sg.OutputsIsNone() else [], "subgraph output", False)
    return TflGraph(tensors, ops, inputs, outputs, "", source)


def builtin_code_field(oc: Any) -> int:
    """OperatorCode.builtin_code as stored. The `tflite` package's BuiltinCode() returns the
    deprecated byte instead whenever the field is below 127, but TFLM takes the larger of the two
    fields (GetBuiltinCode): a file where they disagree would otherwise run a different operator."""
    o = oc._tab.Offset(10)  # the field's vtable slot in the schema
    return int(oc._tab.Get(flatbuffers.number_types.Int32Flags, o + oc._tab.Pos)) if o else 0


def _text(raw: bytes | None, limit: int) -> str:
    """A name or description from the file, made safe to print on one line (error messages, reports):
    non-printable characters (newlines, escapes, NUL) escaped, at most `limit` characters."""
    s = (raw or b"").decode("utf-8", "replace")
    s = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in s)
    return s if len(s) <= limit else s[:limit] + "..."


def _options(o: Any) -> Any:
    kind = int(o.BuiltinOptionsType())
    if kind == 0:
        return None
    cls_name = _OPTION_CLASSES.get(kind)
    table = o.BuiltinOptions()
    if cls_name is None or table is None or not hasattr(tflite, cls_name):
        return None
    obj = getattr(tflite, cls_name)()
    obj.Init(table.Bytes, table.Pos)
    return obj


def _read_tensor(blob: bytes, t: Any, index: int, buffers: list[Any], source: str) -> TflTensor:
    name = _text(t.Name(), 1000) or f"tensor_{index}"
    dtype = _TFL_DTYPES.get(int(t.Type()), f"type{int(t.Type())}")
    shape = tuple(int(d) for d in (t.ShapeAsNumpy() if not t.ShapeIsNone() else []))
    sig = tuple(int(d) for d in (t.ShapeSignatureAsNumpy() if not t.ShapeSignatureIsNone() else []))
    # Converters mark the batch dimension -1 in the signature while the shape holds 1, and the
    # dimensions computed from it -1 too: the shape is what TFLM allocates (the importer decides
    # which signatures it accepts). A -1 in the shape itself is a dynamic shape.
    dynamic = any(d < 0 for d in shape)
    sig = sig if len(sig) == len(shape) else shape
    if any(d < 0 for d in shape):
        shape = tuple(max(d, 1) for d in shape)
    quant = _read_quant(t.Quantization())
    if quant is not None and len(quant.zero_point) not in (1, len(quant.scale)):
        raise ModelError(f"{source}: tensor {index} '{name}' has {len(quant.scale)} quantization scale(s) but "
                         f"{len(quant.zero_point)} zero point(s)")
    data = None
    b = int(t.Buffer())
    if not 0 <= b < len(buffers):
        raise ModelError(f"{source}: tensor {index} '{name}' uses buffer {b}, but the model has {len(buffers)} buffers")
    nelem = math.prod(shape)
    np_dtype = _NP_DTYPES.get(dtype)
    if np_dtype is not None and nelem * np.dtype(np_dtype).itemsize > MAX_TENSOR_BYTES:
        raise ModelError(f"{source}: tensor {index} '{name}' claims shape {list(shape)} ({dtype}), over 1 GiB")
    raw = _buffer_bytes(blob, buffers[b], b, source) if b > 0 else None
    if raw is not None and len(raw) > 0:
        if np_dtype is None:
            raise ModelError(f"{source}: constant tensor {index} '{name}' has unsupported type {dtype}")
        want = nelem * np.dtype(np_dtype).itemsize
        if len(raw) != want:
            raise ModelError(
                f"{source}: constant tensor {index} '{name}' of shape {list(shape)} {dtype} needs {want} bytes, "
                f"its buffer {b} holds {len(raw)}"
            )
        data = np.frombuffer(raw, dtype=np.dtype(np_dtype).newbyteorder("<")).astype(np_dtype).reshape(shape)
        data.setflags(write=False)
    return TflTensor(index, name, shape, dtype, quant, data, dynamic, sig, bool(t.IsVariable()))


def _buffer_bytes(blob: bytes, buf: Any, b: int, source: str) -> bytes | None:
    offset = int(buf.Offset())
    if offset > 1:  # large models keep buffers outside the flatbuffer, after it
        size = int(buf.Size())
        if offset + size > len(blob):
            raise ModelError(f"{source}: buffer {b} lies at bytes {offset}..{offset + size}, past the end of the file")
        return blob[offset:offset + size]
    if buf.DataIsNone():
        return None
    return buf.DataAsNumpy().tobytes()


def _read_quant(q: Any) -> TflQuant | None:
    if q is None or q.ScaleIsNone() or q.ScaleLength() == 0:
        return None
    scale = tuple(float(s) for s in q.ScaleAsNumpy().astype(np.float32))
    # No zero points is not "zero points 0": TFLM then treats the tensor as not quantized at all
    # (scale 0), so the importer refuses it rather than guess.
    zp = tuple(int(z) for z in q.ZeroPointAsNumpy()) if not q.ZeroPointIsNone() else ()
    return TflQuant(scale, zp, int(q.QuantizedDimension()))
