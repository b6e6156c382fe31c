"""Shape and data-movement ops (RESHAPE, SQUEEZE, CONCATENATION, PAD/PADV2, TRANSPOSE,
STRIDED_SLICE, RESIZE_NEAREST_NEIGHBOR): bit-exact against the TFLite Micro interpreter on
single-operator models written with devtools.tflite_writer, plus unit cases for the index
arithmetic and the support rules.

Where TFLM differs from desktop TFLite, TFLM is the target; the cases pinned below:
- CONCATENATION int8: TFLM requires every input to carry the output's scale and zero point (it
  copies bytes); desktop TFLite rescales mismatched inputs. Mismatches are rejected.
- PADV2 int8: TFLM requires the constant's scale and zero point to equal the output's.
- STRIDED_SLICE: TFLM forces ellipsis_mask/new_axis_mask to 0 and ignores the offset flag, supports
  rank <= 4 only, and leaves the output unwritten for a shrunk axis whose begin is past the end or
  whose stride is negative; all are rejected. A shrunk axis beginning before -size is clamped to 0
  by TFLM (TensorFlow itself reports an out-of-range index); we follow TFLM.
- TRANSPOSE: TFLM has no int32 kernel and stops at rank 5 (desktop TFLite: int32, rank 6).
- RESIZE_NEAREST_NEIGHBOR: TFLM computes source indices in float32 (desktop TFLite's optimized
  kernel uses 16.16 fixed point in the plain case), which differs from exact arithmetic for some sizes.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from conftest import MLPERF_MODELS
from mcuforge.frontend import load_tflite, read_tflite, read_tflite_bytes
from mcuforge.frontend.importer import import_graph
from mcuforge.ir.evaluate import evaluate
from mcuforge.ir.ops.reshape import resolve_shape, squeeze_axes
from mcuforge.ir.ops.resize_nearest_neighbor import source_index
from mcuforge.ir.registry import OpView, get_op
from mcuforge.ir.types import QuantParams, TensorType
from mcuforge.ir.verifier import verify

from mcuforge.oracle import run_tflm_inprocess
from mcuforge.verify import random_inputs, verify_reference

from devtools.tflite_writer import ModelWriter

Q = (0.25, -3)  # (scale, zero point) of the int8 activations in the built models


# ---- single-operator models -----------------------------------------------------------------------

def T(shape, dtype="int8", q=Q, data=None):
    """A tensor of the built model: a constant when `data` is given, else a model input."""
    if dtype != "int8" and q is Q:
        q = None
    return {"shape": tuple(shape), "dtype": dtype, "q": q, "data": data}


def model(op: str, inputs: list[dict], output: dict, options_cls: str = "", fields=None) -> bytes:
    """One `op` operator (options table `options_cls` with `fields`, none by default). Float32 model
    inputs are fed through a DEQUANTIZE from int8 (mcuforge imports quantized models only, and that
    is how float tensors occur in them)."""
    w = ModelWriter()

    def add_tensor(spec) -> int:
        scale, zp = spec["q"] if spec["q"] is not None else (None, None)
        return w.tensor(spec["shape"], spec["dtype"], scale, zp, data=spec["data"])

    graph_inputs, op_inputs = [], []
    for spec in inputs:
        idx = add_tensor(spec)
        if spec["data"] is None and spec["dtype"] == "float32":
            src = add_tensor(T(spec["shape"], "int8", q=(0.125, 1)))
            graph_inputs.append(src)
            w.op("DEQUANTIZE", [src], [idx], "")
        elif spec["data"] is None:
            graph_inputs.append(idx)
        op_inputs.append(idx)
    out = add_tensor(output)
    w.op(op, op_inputs, [out], options_cls, **(fields or {}))
    return w.finish(graph_inputs, [out])


def options(cls, **fields):
    """(table, fields) for `model`: field names as in the schema's builders (`NewShape`)."""
    return cls, fields


def i32(*v):
    return np.array(v, dtype=np.int32)


def assert_bit_exact(blob: bytes, n: int = 3, seed: int = 0):
    res = import_graph(read_tflite_bytes(blob))
    assert not res.problems, res.problems
    module = verify(res.module)
    rng = np.random.default_rng(seed)
    sets = [random_inputs(module, rng) for _ in range(n)]
    results = verify_reference(module, blob, sets, intermediates=True, isolate=False)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad[:5])
    return module


def assert_rejected(blob: bytes, rule_words: str, tflm_rejects: bool = True):
    """mcuforge refuses the operator with the rule containing `rule_words`; TFLM refuses it too."""
    res = import_graph(read_tflite_bytes(blob))
    assert res.problems, "mcuforge accepted the operator"
    text = " ".join(p[2] for p in res.problems)
    assert rule_words in text, text
    if tflm_rejects:
        first = read_tflite_bytes(blob).tensors[0]
        x = np.zeros(first.shape, dtype=first.dtype)
        with pytest.raises(RuntimeError):
            run_tflm_inprocess(blob, [[x]])


# ---- RESHAPE / SQUEEZE ---------------------------------------------------------------------------

@pytest.mark.parametrize("new_shape,count,want", [
    ((-1, 64), 64, (1, 64)),
    ((2, -1, 3), 24, (2, 4, 3)),
    ((4, 6), 24, (4, 6)),
    ((-1,), 7, (7,)),
    ((1, 1, -1), 1, (1, 1, 1)),
])
def test_resolve_shape(new_shape, count, want):
    assert resolve_shape(new_shape, count) == want


@pytest.mark.parametrize("new_shape,count", [((-1, -1), 4), ((5, -1), 24), ((3, 3), 8), ((-2, 4), 8)])
def test_resolve_shape_rejects(new_shape, count):
    with pytest.raises(ValueError):
        resolve_shape(new_shape, count)


@pytest.mark.parametrize("shape,dims,want", [
    ((1, 3, 1, 5), (), (0, 2)),
    ((1, 3, 1, 5), (-2,), (2,)),
    ((1, 3, 1, 5), (0, -2), (0, 2)),
    ((2, 1), (-1, 1), (1,)),
])
def test_squeeze_axes(shape, dims, want):
    assert squeeze_axes(shape, dims) == want


def test_mlperf_reshape_matches_tflm_on_tflm_tensors():
    """Each MLPerf RESHAPE, fed TFLM's own input tensor, reproduces TFLM's output tensor."""
    checked = 0
    for name in ("kws", "vww", "ic"):
        path = MLPERF_MODELS[name]
        graph = read_tflite(path)
        ops = [o for o in graph.operators if o.name == "RESHAPE"]
        module = load_tflite(path)
        rng = np.random.default_rng(3)
        x = random_inputs(module, rng)
        want = [t for o in ops for t in (o.inputs[0], o.outputs[0])]
        (_, tensors), = run_tflm_inprocess(path.read_bytes(), [x], want)
        reshapes = {c.tensor: c for c in module.main.calls() if c.op == "reshape"}
        for o in ops:
            call = reshapes[o.outputs[0]]
            view = OpView(tuple(a.type for a in call.args), call.type, call.attrs)
            ours = get_op("reshape").reference([tensors[o.inputs[0]]], view)
            np.testing.assert_array_equal(ours, tensors[o.outputs[0]])
            assert ours.dtype == tensors[o.outputs[0]].dtype
            checked += 1
    assert checked == 3


def test_reshape_from_shape_operand():
    blob = model("RESHAPE", [T((1, 2, 3, 4)), T((3,), "int32", data=i32(-1, 3, 4))], T((2, 3, 4)),
                 *options("ReshapeOptions"))
    m = assert_bit_exact(blob)
    assert m.main.outputs[0].attrs["new_shape"] == (-1, 3, 4)


def test_reshape_from_options_only():
    """Legacy form: one input, the new shape in ReshapeOptions."""
    blob = model("RESHAPE", [T((1, 6, 4))], T((4, 6)), *options("ReshapeOptions", NewShape=[-1, 6]))
    assert_bit_exact(blob)


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
def test_reshape_other_dtypes(dtype):
    blob = model("RESHAPE", [T((2, 3), dtype), T((1,), "int32", data=i32(6))], T((6,), dtype),
                 *options("ReshapeOptions"))
    assert_bit_exact(blob)


def test_reshape_reinterprets_other_output_quantization():
    """TFLM copies the bytes even when the output's quantization differs; so do we."""
    blob = model("RESHAPE", [T((1, 8)), T((2,), "int32", data=i32(2, 4))], T((2, 4), q=(0.5, 7)),
                 *options("ReshapeOptions"))
    assert_bit_exact(blob)


@pytest.mark.parametrize("shape,dims,out", [
    ((1, 3, 1, 5), [], (3, 5)),
    ((1, 3, 1, 5), [-2], (1, 3, 5)),
    ((1, 3, 1, 5), [0, 2], (3, 5)),
    ((4, 1), [-1], (4,)),
    ((1, 1, 1, 1, 1, 1, 2, 1), [], (2,)),
])
def test_squeeze_bit_exact(shape, dims, out):
    blob = model("SQUEEZE", [T(shape)], T(out), *options("SqueezeOptions", SqueezeDims=dims))
    assert_bit_exact(blob)


def test_squeeze_rejects_non_unit_axis():
    blob = model("SQUEEZE", [T((1, 3))], T((1,)), *options("SqueezeOptions", SqueezeDims=[1]))
    assert_rejected(blob, "size 1")


def test_squeeze_rejects_rank_9():
    blob = model("SQUEEZE", [T((1,) * 9)], T(()), *options("SqueezeOptions", SqueezeDims=[]))
    assert_rejected(blob, "at most 8")


# ---- CONCATENATION -------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes,axis,dtype", [
    ([(1, 4, 4, 3), (1, 4, 4, 5)], -1, "int8"),
    ([(1, 2, 4, 3), (1, 3, 4, 3), (1, 1, 4, 3)], 1, "int8"),
    ([(2, 3), (1, 3), (3, 3)], 0, "int8"),
    ([(1, 2, 3)] * 10, -2, "int8"),
    ([(1, 2, 1, 1, 1, 3), (1, 2, 1, 1, 1, 2)], 5, "int8"),
    ([(2, 3), (2, 2)], -1, "float32"),
    ([(2, 3), (2, 2)], 1, "int32"),
    ([(2, 3), (2, 2)], 1, "int16"),
])
def test_concatenation_bit_exact(shapes, axis, dtype):
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    blob = model("CONCATENATION", [T(s, dtype) for s in shapes], T(out, dtype),
                 *options("ConcatenationOptions", Axis=axis))
    assert_bit_exact(blob)


def test_concatenation_with_constant_input():
    c = np.arange(6, dtype=np.int8).reshape(1, 2, 3)
    blob = model("CONCATENATION", [T((1, 2, 3)), T((1, 2, 3), data=c)], T((1, 4, 3)),
                 *options("ConcatenationOptions", Axis=1))
    assert_bit_exact(blob)


@pytest.mark.parametrize("q2", [(0.25, -2), (0.5, -3)])
def test_concatenation_rejects_mismatched_int8_quant(q2):
    """Desktop TFLite would rescale input 1; TFLM refuses it, and so do we."""
    blob = model("CONCATENATION", [T((1, 3)), T((1, 2), q=q2)], T((1, 5)),
                 *options("ConcatenationOptions", Axis=1))
    assert_rejected(blob, "exactly the output's scale and zero point")


def test_concatenation_rejects_fused_activation():
    blob = model("CONCATENATION", [T((1, 3)), T((1, 2))], T((1, 5)),
                 *options("ConcatenationOptions", Axis=1, FusedActivationFunction=1))
    assert_rejected(blob, "must be NONE")


def test_concatenation_rejects_11_inputs_and_rank_7():
    blob = model("CONCATENATION", [T((1, 2))] * 11, T((11, 2)), *options("ConcatenationOptions", Axis=0))
    assert_rejected(blob, "at most 10 inputs")
    blob = model("CONCATENATION", [T((1,) * 7)] * 2, T((2,) + (1,) * 6),
                 *options("ConcatenationOptions", Axis=0))
    assert_rejected(blob, "rank at most 6")


# ---- PAD / PADV2 ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,pads,dtype", [
    ((1, 4, 5, 3), [[0, 0], [1, 2], [3, 0], [0, 0]], "int8"),  # image style
    ((1, 4, 5, 3), [[1, 0], [0, 1], [2, 2], [1, 3]], "int8"),  # generic
    ((7,), [[2, 5]], "int8"),
    ((2, 1, 3, 2, 2), [[0, 1], [1, 1], [0, 0], [2, 0], [1, 1]], "int8"),
    ((3, 4), [[1, 1], [0, 2]], "float32"),
    ((3, 4), [[1, 1], [0, 2]], "int32"),
    ((3, 4), [[1, 1], [0, 2]], "int16"),
])
def test_pad_bit_exact(shape, pads, dtype):
    out = [d + a + b for d, (a, b) in zip(shape, pads)]
    blob = model("PAD", [T(shape, dtype), T((len(shape), 2), "int32", data=np.array(pads, np.int32))],
                 T(out, dtype), *options("PadOptions"))
    assert_bit_exact(blob)


def test_pad_fills_int8_with_output_zero_point():
    """PAD's border is the output zero point, even when the input has other quantization."""
    blob = model("PAD", [T((1, 2), q=(0.5, 9)), T((2, 2), "int32", data=i32(0, 0, 1, 1))],
                 T((1, 4), q=(0.25, -7)), *options("PadOptions"))
    m = assert_bit_exact(blob)
    (out,) = evaluate(m, [np.array([[1, 2]], np.int8)])
    np.testing.assert_array_equal(out, [[-7, 1, 2, -7]])


@pytest.mark.parametrize("dtype,value,q", [("int8", 17, Q), ("int8", -128, Q), ("float32", -1.5, None),
                                           ("int32", 123456, None)])
def test_padv2_bit_exact(dtype, value, q):
    blob = model("PADV2", [T((2, 3, 2), dtype, q), T((3, 2), "int32", data=i32(1, 0, 0, 2, 1, 1)),
                           T((), dtype, q, data=np.array(value, dtype))],
                 T((3, 5, 4), dtype, q), *options("PadV2Options"))
    m = assert_bit_exact(blob)
    p = m.main.params[0].type
    (out,) = evaluate(m, [np.zeros(p.shape, p.np_dtype)])
    assert out[0, 0, 0] == np.array(value, dtype) and out[1, 2, 1] != np.array(value, dtype)


def test_padv2_rejects_constant_with_other_quant():
    other = T((), q=(0.5, -3), data=np.int8(4))
    blob = model("PADV2", [T((2, 3)), T((2, 2), "int32", data=i32(1, 0, 0, 2)), other], T((3, 5)),
                 *options("PadV2Options"))
    assert_rejected(blob, "constant must have the input's element type")


def test_pad_rejects_rank_6_and_int64_paddings():
    blob = model("PAD", [T((1,) * 6), T((6, 2), "int32", data=np.zeros((6, 2), np.int32))], T((1,) * 6),
                 *options("PadOptions"))
    assert_rejected(blob, "rank 1 to 5")
    blob = model("PAD", [T((2, 2)), T((2, 2), "int64", data=np.ones((2, 2), np.int64))], T((4, 4)),
                 *options("PadOptions"))
    assert_rejected(blob, "int32 [rank, 2] table")


# ---- TRANSPOSE -----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,perm,dtype", [
    ((1, 5, 7, 4), (0, 3, 1, 2), "int8"),
    ((3, 4, 5), (2, 0, 1), "int8"),
    ((6,), (0,), "int8"),
    ((2, 3, 1, 4, 5), (4, 2, 0, 3, 1), "int8"),
    ((3, 4), (1, 0), "float32"),
    ((2, 3, 4), (1, 2, 0), "int16"),
])
def test_transpose_bit_exact(shape, perm, dtype):
    out = [shape[p] for p in perm]
    blob = model("TRANSPOSE", [T(shape, dtype), T((len(perm),), "int32", data=np.array(perm, np.int32))],
                 T(out, dtype), *options("TransposeOptions"))
    assert_bit_exact(blob)


def test_transpose_rejects_int32_rank_6_and_repeated_axes():
    blob = model("TRANSPOSE", [T((2, 3), "int32"), T((2,), "int32", data=i32(1, 0))], T((3, 2), "int32"),
                 *options("TransposeOptions"))
    assert_rejected(blob, "int8, int16 or float32")
    blob = model("TRANSPOSE", [T((1,) * 6), T((6,), "int32", data=i32(5, 4, 3, 2, 1, 0))], T((1,) * 6),
                 *options("TransposeOptions"))
    assert_rejected(blob, "rank 1 to 5")
    blob = model("TRANSPOSE", [T((2, 2)), T((2,), "int32", data=i32(0, 0))], T((2, 2)),
                 *options("TransposeOptions"))
    assert_rejected(blob, "exactly once", tflm_rejects=False)  # TFLM only range-checks perm


# ---- STRIDED_SLICE -------------------------------------------------------------------------------

def ss_attrs(begin, end, strides, begin_mask=0, end_mask=0, shrink=0, **extra):
    return dict(begin=tuple(begin), end=tuple(end), strides=tuple(strides), begin_mask=begin_mask,
                end_mask=end_mask, shrink_axis_mask=shrink, ellipsis_mask=0, new_axis_mask=0, offset=False,
                index_dtype="int32", **extra)


def ss_model(shape, a, dtype="int8", out=None):
    x_t = TensorType(tuple(shape), dtype)
    out = out if out is not None else get_op("strided_slice").infer((x_t,), a)[0]
    r = len(shape)
    opts = options("StridedSliceOptions", BeginMask=a["begin_mask"], EndMask=a["end_mask"],
                   ShrinkAxisMask=a["shrink_axis_mask"], EllipsisMask=a["ellipsis_mask"],
                   NewAxisMask=a["new_axis_mask"], Offset=a["offset"])
    vectors = [T((r,), "int32", data=np.array(a[k], np.int32)) for k in ("begin", "end", "strides")]
    return model("STRIDED_SLICE", [T(shape, dtype), *vectors], T(out, dtype), *opts)


def _slice(b, e, s, bm, em):
    return slice(None if bm else b, None if em else e, s)


@pytest.mark.parametrize("shape,attrs", [
    ((5, 6), ss_attrs((1, -4), (4, -1), (2, 1))),
    ((5, 6), ss_attrs((-1, 5), (0, 0), (-2, -1))),
    ((5, 6), ss_attrs((3, 2), (0, 5), (-1, 2), begin_mask=2, end_mask=1)),
    ((4, 3, 5), ss_attrs((-9, 0, 9), (9, 2, -9), (1, 1, -2))),  # out-of-range indices clamp
    ((4, 3, 5), ss_attrs((2, 0, -1), (0, 3, 0), (1, 1, 1), shrink=5)),  # shrink with a negative begin
])
def test_strided_slice_matches_numpy_slicing(shape, attrs):
    """Without shrink quirks, TFLM's clamping is Python slicing; shrink axes index one element."""
    x = np.arange(math.prod(shape)).reshape(shape).astype(np.int32)
    x_t = TensorType(shape, "int32")
    out_t = TensorType(get_op("strided_slice").infer((x_t,), attrs)[0], "int32")
    got = get_op("strided_slice").reference([x], OpView((x_t,), out_t, attrs))
    key = []
    for ax in range(len(shape)):
        if attrs["shrink_axis_mask"] >> ax & 1:
            key.append(attrs["begin"][ax])
        else:
            key.append(_slice(attrs["begin"][ax], attrs["end"][ax], attrs["strides"][ax],
                              attrs["begin_mask"] >> ax & 1, attrs["end_mask"] >> ax & 1))
    np.testing.assert_array_equal(got, x[tuple(key)])


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "float32"])
def test_strided_slice_dtypes_bit_exact(dtype):
    blob = ss_model((1, 5, 6, 3), ss_attrs((0, 4, 1, 0), (1, 0, -1, 3), (1, -2, 2, 1), end_mask=8), dtype)
    assert_bit_exact(blob)


def test_strided_slice_random_cases_bit_exact():
    """Seeded random begin/end/strides/masks on ranks 1-4, each run through TFLM: our shape must be
    the one TFLM's Prepare accepts and our values TFLM's."""
    rng = np.random.default_rng(11)
    op = get_op("strided_slice")
    done = 0
    while done < 120:
        rank = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 7, rank))
        strides = rng.choice([-3, -2, -1, 1, 2, 3], rank)
        a = ss_attrs(rng.integers(-8, 9, rank), rng.integers(-8, 9, rank), strides,
                     int(rng.integers(0, 1 << rank)), int(rng.integers(0, 1 << rank)),
                     int(rng.integers(0, 1 << rank)) if rng.random() < 0.4 else 0)
        a = {k: (tuple(int(v) for v in val) if isinstance(val, tuple) else val) for k, val in a.items()}
        x_t = TensorType(shape, "int8", QuantParams((Q[0],), (Q[1],)))
        if op.check(OpView((x_t,), x_t, a)):
            continue
        out = op.infer((x_t,), a)[0]
        blob = ss_model(shape, a)
        x = rng.integers(-128, 128, shape, endpoint=False).astype(np.int8)
        (theirs, _), = run_tflm_inprocess(blob, [[x]])
        ours = op.reference([x], OpView((x_t,), TensorType(out, "int8", x_t.quant), a))
        assert ours.shape == theirs[0].shape, (shape, a)
        np.testing.assert_array_equal(ours, theirs[0], err_msg=f"{shape} {a}")
        done += 1


def test_strided_slice_shrink_begin_below_minus_size_is_clamped_like_tflm():
    blob = ss_model((2, 5), ss_attrs((0, -7), (2, 8), (1, 1), shrink=2), out=(2,))
    m = assert_bit_exact(blob)
    x = np.arange(10, dtype=np.int8).reshape(2, 5)
    np.testing.assert_array_equal(evaluate(m, [x])[0], [0, 5])


@pytest.mark.parametrize("attrs,words", [
    (ss_attrs((0, 2), (2, 3), (1, -1), shrink=2), "positive stride"),
    (ss_attrs((0, 5), (2, 6), (1, 1), shrink=2), "begin index below the axis size"),
    (ss_attrs((0, 3), (2, 1), (1, 1)), "at least one element"),
])
def test_strided_slice_rejects_what_tflm_leaves_unwritten(attrs, words):
    blob = ss_model((2, 5), attrs, out=(2,) if attrs["shrink_axis_mask"] else (2, 1))
    assert_rejected(blob, words, tflm_rejects=False)


def test_strided_slice_tflm_leaves_negative_stride_shrink_unwritten():
    """Why the rule exists: TFLM writes nothing for such an axis, so its output ignores the input."""
    blob = ss_model((2, 5), ss_attrs((0, 2), (2, 3), (1, -1), shrink=2), out=(2,))
    x1 = np.arange(10, dtype=np.int8).reshape(2, 5)
    (a, _), (b, _) = run_tflm_inprocess(blob, [[x1], [-x1 - 1]])
    np.testing.assert_array_equal(a[0], b[0])


@pytest.mark.parametrize("extra,words", [
    ({"ellipsis_mask": 1}, "ellipsis_mask=1"), ({"new_axis_mask": 2}, "new_axis_mask=2"),
    ({"offset": True}, "offset=true"),
])
def test_strided_slice_rejects_masks_tflm_ignores(extra, words):
    a = ss_attrs((0, 0), (2, 3), (1, 1))
    a.update(extra)
    assert_rejected(ss_model((2, 3), a, out=(2, 3)), words, tflm_rejects=False)


def test_strided_slice_rejects_rank_5():
    a = ss_attrs((0,) * 5, (1,) * 5, (1,) * 5)
    assert_rejected(ss_model((1,) * 5, a, out=(1,) * 5), "rank 1 to 4")


# ---- RESIZE_NEAREST_NEIGHBOR ---------------------------------------------------------------------

def exact_source_index(n_in, n_out, align_corners, half_pixel_centers):
    """The same rule in exact rational arithmetic (what TFLM does NOT do)."""
    scale = Fraction(n_in - 1, n_out - 1) if align_corners and n_out > 1 else Fraction(n_in, n_out)
    off = Fraction(1, 2) if half_pixel_centers else 0
    idx = [math.floor((i + off) * scale + (Fraction(1, 2) if align_corners else 0)) for i in range(n_out)]
    return np.array([max(min(v, n_in - 1), 0) if half_pixel_centers else min(v, n_in - 1) for v in idx])


def resize_model(n_in, n_out, align_corners, half_pixel_centers, ch=1, dtype="int8"):
    o = options("ResizeNearestNeighborOptions", AlignCorners=align_corners,
                HalfPixelCenters=half_pixel_centers)
    size = T((2,), "int32", data=i32(n_out, 3))
    return model("RESIZE_NEAREST_NEIGHBOR", [T((1, n_in, 2, ch), dtype), size],
                 T((1, n_out, 3, ch), dtype), *o)


# (in, out, align_corners, half_pixel_centers) where float32 picks another row than exact math.
FLOAT32_CASES = [(6, 74, False, False), (26, 22, False, False), (39, 33, False, False), (2, 41, False, True),
                 (6, 37, False, True)]


@pytest.mark.parametrize("case", FLOAT32_CASES)
def test_resize_source_index_is_float32_not_exact(case):
    assert not np.array_equal(source_index(*case), exact_source_index(*case))


@pytest.mark.parametrize("case", FLOAT32_CASES)
def test_resize_float32_cases_bit_exact(case):
    n_in, n_out, ac, hp = case
    blob = resize_model(n_in, n_out, ac, hp)
    x = np.arange(n_in * 2, dtype=np.int8).reshape(1, n_in, 2, 1)  # row r holds 2r, 2r+1
    (theirs, _), = run_tflm_inprocess(blob, [[x]])
    np.testing.assert_array_equal(theirs[0][0, :, 0, 0] // 2, source_index(n_in, n_out, ac, hp))
    assert_bit_exact(blob, n=1)


def test_resize_index_grid_bit_exact():
    """Every (in, out) with in <= 12, out <= 20 under all four flag settings, through TFLM."""
    for ac in (False, True):
        for hp in (False, True):
            for n_in in range(1, 13):
                for n_out in range(1, 21, 3):
                    blob = resize_model(n_in, n_out, ac, hp)
                    x = np.arange(n_in * 2, dtype=np.int8).reshape(1, n_in, 2, 1)
                    (theirs, _), = run_tflm_inprocess(blob, [[x]])
                    rows = theirs[0][0, :, 0, 0] // 2
                    np.testing.assert_array_equal(rows, source_index(n_in, n_out, ac, hp),
                                                  err_msg=f"{n_in}->{n_out} ac={ac} hp={hp}")


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_resize_dtypes_bit_exact(dtype):
    assert_bit_exact(resize_model(5, 9, False, True, ch=3, dtype=dtype))


def test_resize_rejects_int32():
    assert_rejected(resize_model(3, 5, False, False, dtype="int32"), "int8, int16 or float32")
