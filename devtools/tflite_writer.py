"""A small .tflite writer: build a one-subgraph model in memory and serialize it with the
flatbuffer builders of the `tflite` package (no TensorFlow needed).

    w = ModelWriter()
    x = w.tensor((1, 8, 8, 3), scale=0.05, zero_point=-3, name="x")           # an activation
    k = w.tensor((4, 3, 3, 3), data=weights, scale=[0.01] * 4, axis=0)        # a constant, per channel
    b = w.tensor((4,), dtype="int32", data=bias, scale=[0.0005] * 4)
    y = w.tensor((1, 8, 8, 4), scale=0.1, zero_point=5)
    w.op("CONV_2D", [x, k, b], [y], Padding="SAME", StrideW=1, StrideH=1, FusedActivationFunction="RELU")
    blob = w.finish(inputs=[x], outputs=[y])

Tensors carry a shape, an element type, optional quantization (one scale per tensor, or one per
channel along `axis`) and, for constants, their data (stored little-endian in a buffer of their own).
`variable=True` marks a variable tensor (`is_variable`: the state an LSTM or SVDF keeps between
invocations).
Operator options are given by the field names of the schema's options table (`StrideW` for
`Conv2DOptionsAddStrideW`); the table is chosen from the operator (`OPTIONS`) unless `options_cls` is
given. Values are ints, bools, floats, enum names (padding and activation names as strings), or
sequences, which become int32 vectors (e.g. `NewShape` of RESHAPE). The input -1 marks an absent
optional input.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Sequence

import flatbuffers
import numpy as np
import tflite

TENSOR_TYPES = {"float32": 0, "int32": 2, "uint8": 3, "int64": 4, "bool": 6, "int16": 7, "int8": 9}
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
}


def _module(name: str):
    return sys.modules[f"tflite.{name}"]  # the generated module (`tflite.<Name>` is the class)


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
        """Add an operator (a `tflite.BuiltinOperator` name); return its index."""
        if not hasattr(tflite.BuiltinOperator, op):
            raise ValueError(f"unknown builtin operator {op!r}")
        cls = options_cls or OPTIONS.get(op)
        if options and cls is None:
            raise ValueError(f"{op} has no options table; give options_cls")
        self.operators.append(WOperator(op, tuple(int(i) for i in inputs), tuple(int(o) for o in outputs),
                                        cls, dict(options)))
        return len(self.operators) - 1

    # ---- serialization ---------------------------------------------------------------------------

    def finish(self, inputs: Sequence[int], outputs: Sequence[int]) -> bytes:
        """The model as .tflite bytes, with the given graph inputs and outputs."""
        size = 1024 + sum(len(t.data or b"") + 64 for t in self.tensors)
        b = flatbuffers.Builder(size)
        buffers, buffer_of = self._buffers(b)
        tensors = [self._tensor(b, t, buffer_of[i]) for i, t in enumerate(self.tensors)]
        codes: list[str] = []
        ops = []
        for o in self.operators:
            if o.op not in codes:
                codes.append(o.op)
            ops.append(self._operator(b, o, codes.index(o.op)))
        S = _module("SubGraph")
        tv = self._offsets(b, S.SubGraphStartTensorsVector, tensors)
        ov = self._offsets(b, S.SubGraphStartOperatorsVector, ops)
        gi = b.CreateNumpyVector(np.asarray(list(inputs), dtype=np.int32))
        go = b.CreateNumpyVector(np.asarray(list(outputs), dtype=np.int32))
        name = b.CreateString("main")
        S.SubGraphStart(b)
        S.SubGraphAddTensors(b, tv)
        S.SubGraphAddOperators(b, ov)
        S.SubGraphAddInputs(b, gi)
        S.SubGraphAddOutputs(b, go)
        S.SubGraphAddName(b, name)
        sg = S.SubGraphEnd(b)
        C = _module("OperatorCode")
        code_offsets = []
        for op in codes:
            code = int(getattr(tflite.BuiltinOperator, op))
            C.OperatorCodeStart(b)
            C.OperatorCodeAddBuiltinCode(b, code)
            C.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127))
            C.OperatorCodeAddVersion(b, 1)
            code_offsets.append(C.OperatorCodeEnd(b))
        M = _module("Model")
        cv = self._offsets(b, M.ModelStartOperatorCodesVector, code_offsets)
        sv = self._offsets(b, M.ModelStartSubgraphsVector, [sg])
        bv = self._offsets(b, M.ModelStartBuffersVector, buffers)
        desc = b.CreateString(self.description)
        M.ModelStart(b)
        M.ModelAddVersion(b, 3)
        M.ModelAddOperatorCodes(b, cv)
        M.ModelAddSubgraphs(b, sv)
        M.ModelAddDescription(b, desc)
        M.ModelAddBuffers(b, bv)
        b.Finish(M.ModelEnd(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    @staticmethod
    def _offsets(b: flatbuffers.Builder, start, offsets: Sequence[int]) -> int:
        start(b, len(offsets))
        for o in reversed(offsets):
            b.PrependUOffsetTRelative(o)
        return b.EndVector()

    def _buffers(self, b: flatbuffers.Builder) -> tuple[list[int], list[int]]:
        """Buffer 0 is the empty sentinel; each constant gets its own buffer (data 16-byte aligned)."""
        B = _module("Buffer")
        B.BufferStart(b)
        buffers, buffer_of = [B.BufferEnd(b)], []
        for t in self.tensors:
            if t.data is None:
                buffer_of.append(0)
                continue
            b.StartVector(1, len(t.data), 16)
            b.head = b.head - len(t.data)
            b.Bytes[b.head:b.head + len(t.data)] = t.data
            b.vectorNumElems = len(t.data)
            vec = b.EndVector()
            B.BufferStart(b)
            B.BufferAddData(b, vec)
            buffer_of.append(len(buffers))
            buffers.append(B.BufferEnd(b))
        return buffers, buffer_of

    @staticmethod
    def _tensor(b: flatbuffers.Builder, t: WTensor, buffer: int) -> int:
        T, Q = _module("Tensor"), _module("QuantizationParameters")
        name = b.CreateString(t.name)
        shape = b.CreateNumpyVector(np.asarray(t.shape, dtype=np.int32))
        sig = None if t.signature is None else b.CreateNumpyVector(np.asarray(t.signature, dtype=np.int32))
        q = None
        if t.scale is not None:
            sc = b.CreateNumpyVector(np.asarray(t.scale, dtype=np.float32))
            zp = b.CreateNumpyVector(np.asarray(t.zero_point, dtype=np.int64))
            Q.QuantizationParametersStart(b)
            Q.QuantizationParametersAddScale(b, sc)
            Q.QuantizationParametersAddZeroPoint(b, zp)
            Q.QuantizationParametersAddQuantizedDimension(b, t.axis)
            q = Q.QuantizationParametersEnd(b)
        T.TensorStart(b)
        T.TensorAddShape(b, shape)
        if sig is not None:
            T.TensorAddShapeSignature(b, sig)
        T.TensorAddType(b, TENSOR_TYPES[t.dtype])
        T.TensorAddBuffer(b, buffer)
        T.TensorAddName(b, name)
        if t.variable:
            T.TensorAddIsVariable(b, True)
        if q is not None:
            T.TensorAddQuantization(b, q)
        return T.TensorEnd(b)

    @staticmethod
    def _operator(b: flatbuffers.Builder, o: WOperator, code_index: int) -> int:
        O = _module("Operator")
        opts = None
        if o.options_cls is not None:
            om = _module(o.options_cls)
            values = {}
            for field, value in o.options.items():  # vectors first: they cannot nest in a table
                if isinstance(value, (list, tuple, np.ndarray)):
                    values[field] = b.CreateNumpyVector(np.asarray(value, dtype=np.int32))
                elif field == "Padding" and isinstance(value, str):
                    values[field] = PADDING[value]
                elif field == "FusedActivationFunction" and isinstance(value, str):
                    values[field] = ACTIVATION[value]
                else:
                    values[field] = value
            getattr(om, f"{o.options_cls}Start")(b)
            for field, value in values.items():
                adder = getattr(om, f"{o.options_cls}Add{field}", None)
                if adder is None:
                    raise ValueError(f"{o.options_cls} has no field {field!r}")
                adder(b, value)
            opts = getattr(om, f"{o.options_cls}End")(b)
        ins = b.CreateNumpyVector(np.asarray(o.inputs, dtype=np.int32))
        outs = b.CreateNumpyVector(np.asarray(o.outputs, dtype=np.int32))
        O.OperatorStart(b)
        O.OperatorAddOpcodeIndex(b, code_index)
        O.OperatorAddInputs(b, ins)
        O.OperatorAddOutputs(b, outs)
        if opts is not None:
            O.OperatorAddBuiltinOptionsType(b, getattr(tflite.BuiltinOptions, o.options_cls))
            O.OperatorAddBuiltinOptions(b, opts)
        return O.OperatorEnd(b)
