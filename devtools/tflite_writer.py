"""The .tflite writer of mcuforge's tests, tools and benchmarks: build a one-subgraph model in memory
and serialize it (no TensorFlow needed). Every model the tests make by hand is written with it.

    w = ModelWriter()
    x = w.tensor((1, 8, 8, 3), scale=0.05, zero_point=-3, name="x")           # an activation
    k = w.tensor((4, 3, 3, 3), data=weights, scale=[0.01] * 4, axis=0)        # a constant, per channel
    b = w.tensor((4,), dtype="int32", data=bias, scale=[0.0005] * 4)
    y = w.tensor((1, 8, 8, 4), scale=0.1, zero_point=5)
    w.op("CONV_2D", [x, k, b], [y], Padding="SAME", StrideW=1, StrideH=1, FusedActivationFunction="RELU")
    blob = w.finish(inputs=[x], outputs=[y])

Tensors carry a shape, an element type (`TENSOR_TYPES`: float32, int32, uint8, int64, bool, int16,
int8), optional quantization (one scale per tensor, or one per channel along `axis`) and, for
constants, their data (converted to the type, stored little-endian in a buffer of their own).
`variable=True` marks a variable tensor (`is_variable`: the state an LSTM or SVDF keeps between
invocations); `signature` writes a shape signature (-1 for a dynamic dimension).

Operator options are given by the field names of the schema's options table (`StrideW` for
`Conv2DOptionsAddStrideW`). The table is the operator's (`OPTIONS`), written even when no field is
given; `options_cls` names another one, and `options_cls=""` writes none (as a model whose operator
lacks its options). Values are ints, bools, floats, enum names (padding and activation names as
strings), sequences, which become int32 vectors (e.g. `NewShape` of RESHAPE), or other strings
(`SharedName` of VAR_HANDLE). The input -1 marks an absent optional input. Operator codes are
numbered in order of first use. More subgraphs (CALL_ONCE's initialization subgraph, IF's
branches) are ModelWriters of their own added with `add_subgraph`; they share the model's buffers
and operator codes.

`document` gives the model as plain data (`devtools.tflite_codec`'s document: edit it to make what
the writer refuses to, e.g. a second subgraph); `finish` is `tflite_codec.encode(document(...))`.
The bytes are deterministic (tests/test_random_models.py checks kept models against their specs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import tflite

from devtools.tflite_codec import encode

TENSOR_TYPES = {"float32": 0, "int32": 2, "uint8": 3, "int64": 4, "bool": 6, "int16": 7, "int8": 9, "resource": 13}
PADDING = {"SAME": 0, "VALID": 1}
ACTIVATION = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3, "TANH": 4}

# operator -> its builtin options table (operators without options are absent)
OPTIONS = {
    "ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions",
    "CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions", "FULLY_CONNECTED": "FullyConnectedOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions", "MAX_POOL_2D": "Pool2DOptions",
    "CONCATENATION": "ConcatenationOptions", "RESHAPE": "ReshapeOptions", "SQUEEZE": "SqueezeOptions",
    "PAD": "PadOptions", "PADV2": "PadV2Options", "MEAN": "ReducerOptions", "SOFTMAX": "SoftmaxOptions",
    "LEAKY_RELU": "LeakyReluOptions", "STRIDED_SLICE": "StridedSliceOptions",
    "TRANSPOSE": "TransposeOptions", "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "QUANTIZE": "QuantizeOptions", "DEQUANTIZE": "DequantizeOptions", "HARD_SWISH": "HardSwishOptions",
    "SHAPE": "ShapeOptions", "PACK": "PackOptions", "UNPACK": "UnpackOptions", "SPLIT": "SplitOptions",
    "SPLIT_V": "SplitVOptions",
    "REDUCE_MAX": "ReducerOptions", "REDUCE_MIN": "ReducerOptions", "SUM": "ReducerOptions",
    "ARG_MAX": "ArgMaxOptions", "ARG_MIN": "ArgMinOptions", "CUMSUM": "CumsumOptions",
    "BATCH_MATMUL": "BatchMatMulOptions", "GATHER": "GatherOptions", "DEPTH_TO_SPACE": "DepthToSpaceOptions",
    "SPACE_TO_DEPTH": "SpaceToDepthOptions", "MIRROR_PAD": "MirrorPadOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions",
    "SVDF": "SVDFOptions", "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "REDUCE_ALL": "ReducerOptions", "L2_POOL_2D": "Pool2DOptions",
    "VAR_HANDLE": "VarHandleOptions", "CALL_ONCE": "CallOnceOptions",
}


@dataclass
class WTensor:
    shape: tuple[int, ...]
    dtype: str
    name: str
    scale: tuple[float, ...] | None = None
    zero_point: tuple[int, ...] | None = None
    axis: int = 0
    data: bytes | None = None
    signature: tuple[int, ...] | None = None
    variable: bool = False


@dataclass
class WOperator:
    op: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options_cls: str | None
    options: dict[str, Any]


class ModelWriter:
    """Collects tensors and operators of one subgraph; `finish` serializes the model."""

    def __init__(self, description: str = "mcuforge.tflite_writer") -> None:
        self.tensors: list[WTensor] = []
        self.operators: list[WOperator] = []
        self.description = description
        self.subgraphs: list[tuple[ModelWriter, tuple[int, ...], tuple[int, ...], str]] = []

    def add_subgraph(self, sub: ModelWriter, inputs: Sequence[int] = (), outputs: Sequence[int] = (),
                     name: str = "") -> int:
        """Add `sub` (its tensors and operators) as the model's next subgraph; return its index (the
        main one is 0), e.g. for CALL_ONCE's InitSubgraphIndex."""
        self.subgraphs.append((sub, tuple(inputs), tuple(outputs), name or f"subgraph{len(self.subgraphs) + 1}"))
        return len(self.subgraphs)

    def tensor(self, shape: Sequence[int], dtype: str = "int8", scale: float | Sequence[float] | None = None,
               zero_point: int | Sequence[int] | None = None, axis: int = 0, data: Any = None,
               name: str | None = None, signature: Sequence[int] | None = None,
               variable: bool = False) -> int:
        """Add a tensor; return its index. With `data` it is a constant (converted to `dtype`).
        A scalar scale is per tensor; a sequence of scales is per channel along `axis`. A missing
        zero point is 0 (one per scale). `signature` is the shape signature (-1 for a dimension
        unknown at conversion, e.g. a dynamic batch), written only when given."""
        if dtype not in TENSOR_TYPES:
            raise ValueError(f"unknown tensor type {dtype!r}")
        shape = tuple(int(d) for d in shape)
        scales = zps = None
        if scale is not None:
            scales = tuple(float(s) for s in np.atleast_1d(np.asarray(scale, dtype=np.float64)))
            if zero_point is None:
                zps = (0,) * len(scales)
            else:
                zps = tuple(int(z) for z in np.atleast_1d(np.asarray(zero_point, dtype=np.int64)))
                if len(zps) == 1 and len(scales) > 1:
                    zps = zps * len(scales)
        raw = None
        if data is not None:
            arr = np.asarray(data).astype(np.dtype(dtype).newbyteorder("<"))
            if arr.size != int(np.prod(shape, dtype=np.int64)):
                raise ValueError(f"tensor data has {arr.size} elements, shape {list(shape)} needs "
                                 f"{int(np.prod(shape))}")
            raw = np.ascontiguousarray(arr).tobytes()
        sig = None if signature is None else tuple(int(d) for d in signature)
        self.tensors.append(WTensor(shape, dtype, name or f"t{len(self.tensors)}", scales, zps, int(axis), raw, sig,
                                    bool(variable)))
        return len(self.tensors) - 1

    def op(self, op: str, inputs: Sequence[int], outputs: Sequence[int], options_cls: str | None = None,
           **options: Any) -> int:
        """Add an operator (a `tflite.BuiltinOperator` name); return its index. `options_cls` names
        its options table (by default the operator's, from OPTIONS; "" for none)."""
        if not hasattr(tflite.BuiltinOperator, op):
            raise ValueError(f"unknown builtin operator {op!r}")
        cls = OPTIONS.get(op) if options_cls is None else (options_cls or None)
        if options and cls is None:
            raise ValueError(f"{op} has no options table; give options_cls")
        self.operators.append(WOperator(op, tuple(int(i) for i in inputs), tuple(int(o) for o in outputs),
                                        cls, dict(options)))
        return len(self.operators) - 1

    # ---- serialization ---------------------------------------------------------------------------

    def document(self, inputs: Sequence[int], outputs: Sequence[int]) -> dict[str, Any]:
        """The model as a `devtools.tflite_codec` document, with the given graph inputs and outputs
        (and the subgraphs added with `add_subgraph` after the main one): buffer 0 is the empty
        sentinel, each constant has a buffer of its own, operator codes are numbered in order of
        first use."""
        buffers = [{"data": None, "offset": 0, "size": 0}]
        codes: list[str] = []
        graphs = [(self, tuple(inputs), tuple(outputs), "main"), *self.subgraphs]
        subgraphs = [g._subgraph_document(ins, outs, name, buffers, codes) for g, ins, outs, name in graphs]
        operator_codes = []
        for op in codes:
            code = int(getattr(tflite.BuiltinOperator, op))
            operator_codes.append({"builtin_code": code, "deprecated_builtin_code": min(code, 127),
                                   "custom_code": None, "version": 1})
        return {"version": 3, "description": self.description, "operator_codes": operator_codes,
                "subgraphs": subgraphs, "buffers": buffers}

    def _subgraph_document(self, inputs: Sequence[int], outputs: Sequence[int], name: str, buffers: list,
                           codes: list[str]) -> dict[str, Any]:
        """This writer's tensors and operators as one subgraph of a document (its constants appended
        to `buffers`, its operators' codes to `codes`)."""
        tensors = []
        for t in self.tensors:
            buffer = 0
            if t.data is not None:
                buffer = len(buffers)
                buffers.append({"data": t.data, "offset": 0, "size": 0})
            quant = None if t.scale is None else {
                "scale": list(t.scale), "zero_point": list(t.zero_point), "quantized_dimension": t.axis}
            tensors.append({"name": t.name, "shape": list(t.shape), "shape_signature": t.signature,
                            "type": TENSOR_TYPES[t.dtype], "buffer": buffer, "quant": quant,
                            "is_variable": t.variable})
        for o in self.operators:
            if o.op not in codes:
                codes.append(o.op)
        operators = [{"opcode_index": codes.index(o.op), "inputs": list(o.inputs), "outputs": list(o.outputs),
                      "options_type": getattr(tflite.BuiltinOptions, o.options_cls) if o.options_cls else 0,
                      "options": _options(o)} for o in self.operators]
        return {"name": name, "tensors": tensors, "operators": operators,
                "inputs": [int(i) for i in inputs], "outputs": [int(o) for o in outputs]}

    def finish(self, inputs: Sequence[int], outputs: Sequence[int]) -> bytes:
        """The model as .tflite bytes, with the given graph inputs and outputs."""
        return encode(self.document(inputs, outputs))


def _options(o: WOperator) -> dict[str, Any] | None:
    """The operator's options table as a document entry: enum names become their values, sequences
    int32 vectors."""
    if not o.options_cls:
        return None
    fields: dict[str, Any] = {}
    for field, value in o.options.items():
        if isinstance(value, (list, tuple, np.ndarray)):
            fields[field] = np.asarray(value, dtype=np.int32)
        elif field == "Padding" and isinstance(value, str):
            fields[field] = PADDING[value]
        elif field == "FusedActivationFunction" and isinstance(value, str):
            fields[field] = ACTIVATION[value]
        else:
            fields[field] = value
    return {"cls": o.options_cls, "fields": fields}
