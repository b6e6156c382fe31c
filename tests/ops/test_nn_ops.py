"""Bit-exactness of the neural-network ops (DEPTHWISE_CONV_2D, FULLY_CONNECTED, AVERAGE_POOL_2D,
MAX_POOL_2D, MEAN, TRANSPOSE_CONV) against the TFLite Micro interpreter.

Three kinds of tests:
- per operator on the MLPerf Tiny models: TFLM's own intermediate input tensors of each layer are
  fed to our reference and compared with TFLM's output tensor of that layer (independent of the
  other ops' implementations);
- parametrized single-operator models written with devtools.tflite_writer (edge cases
  the converter does not emit on demand: padding edges, depth multipliers 2/3, dilation, fused
  activations that really clamp, rank-3 and batched FC, weight zero points, MEAN with equal or
  different quantization, transposed convolution output sizes), run through the frontend and
  compared with TFLM's outputs;
- support checks and a few hand-computed reference values.

TFLM (not desktop TFLite) is the target. Behaviours worth knowing, checked below:
- FULLY_CONNECTED with per-tensor weights applies the weight zero point; per-channel ignores it.
- MEAN is computed in integers (QuantizedMeanOrSum, 1/n folded into the multiplier) on every path,
  also when input and output quantization are equal and for H,W of a 4-D tensor (older TFLM used a
  truncating integer mean or float arithmetic there; desktop TFLite still rounds differently).
- TRANSPOSE_CONV applies the fused activation of the newer schema; its padding is computed from the
  output size.
"""

from __future__ import annotations

import math
import zlib
from pathlib import Path

import numpy as np
import pytest
from mcuforge.frontend.importer import import_graph, tensor_type
from mcuforge.frontend.reader import read_tflite, read_tflite_bytes
from mcuforge.ir import quant
from mcuforge.ir.evaluate import evaluate
from mcuforge.ir.expr import Constant, Var
from mcuforge.ir.registry import OpView, get_op, op_for_tflite
from mcuforge.ir.types import QuantParams, TensorType

from mcuforge.oracle import run_tflm

from devtools.tflite_writer import ModelWriter

ROOT = Path(__file__).resolve().parents[2]
MLPERF = ROOT / "tests" / "fixtures" / "mlperf"
MLPERF_MODELS = ["kws_ref_model", "vww_96_int8", "pretrainedResnet_quant", "ad01_int8"]
NN_OPS = {"DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D", "MAX_POOL_2D", "MEAN", "TRANSPOSE_CONV"}


# ---- single-operator models -----------------------------------------------------------------------

def tensor(shape, dtype="int8", scale=None, zp=None, axis=0, data=None):
    """One tensor of a single-op model; `data` makes it a constant."""
    return dict(shape=tuple(int(d) for d in shape), dtype=dtype, scale=scale, zp=zp, axis=axis, data=data)


def single_op_model(op_name, tensors, inputs, outputs, options_cls=None, options=None) -> bytes:
    """A valid one-subgraph, one-operator model: graph inputs are the operator's non-constant inputs,
    graph outputs its outputs; `options` maps option field names to values."""
    w = ModelWriter()
    for t in tensors:
        w.tensor(t["shape"], t["dtype"], t["scale"], t["zp"], t["axis"], data=t["data"])
    w.op(op_name, inputs, outputs, options_cls or "", **(options or {}))
    return w.finish([i for i in inputs if i >= 0 and tensors[i]["data"] is None], outputs)


def uniform_int8(rng, shape):
    return rng.integers(-128, 127, size=shape, endpoint=True).astype(np.int8)


def seed_of(case) -> int:
    return zlib.crc32(repr(case).encode())


def run_against_tflm(blob: bytes, n_sets: int = 3, seed: int = 0, make_input=uniform_int8):
    """Import the model through the frontend (all support checks must pass), run our reference and
    TFLM on seeded int8 inputs (by default uniform over the whole range); return (ours, theirs) per
    input set."""
    graph = read_tflite_bytes(blob)
    result = import_graph(graph)
    assert not result.problems, result.problems
    rng = np.random.default_rng(seed)
    sets = [[make_input(rng, graph.tensors[i].shape) for i in graph.inputs] for _ in range(n_sets)]
    theirs = run_tflm(blob, sets, isolate=False)
    return [(evaluate(result.module, s)[0], t[0][0]) for s, t in zip(sets, theirs)]


def assert_bit_exact(blob: bytes, act: str = "NONE", n_sets: int = 3, seed: int = 0, min_distinct: int = 4,
                     make_input=uniform_int8):
    """Ours == TFLM on every input set, and the case is not vacuous: TFLM's outputs take several
    distinct values, and a fused activation other than NONE actually clamps somewhere."""
    pairs = run_against_tflm(blob, n_sets, seed, make_input)
    for k, (ours, theirs) in enumerate(pairs):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours.shape, theirs.shape)
        diff = np.argwhere(ours != theirs)
        assert diff.size == 0, (f"set {k}: {len(diff)} of {ours.size} differ; first at {diff[0].tolist()}: "
                                f"ours {ours[tuple(diff[0])]}, TFLM {theirs[tuple(diff[0])]}")
    all_t = np.concatenate([t.ravel() for _, t in pairs])
    assert len(np.unique(all_t)) >= min_distinct, f"degenerate case: TFLM outputs {np.unique(all_t)}"
    if act != "NONE":
        graph = read_tflite_bytes(blob)
        q = graph.tensors[graph.outputs[0]].quant
        lo, hi = quant.activation_range(act, q.scale[0], q.zero_point[0])
        assert ((all_t == lo) & (lo > -128)).any() or ((all_t == hi) & (hi < 127)).any(), \
            f"the {act} clamp [{lo}, {hi}] is never reached"


def out_size(padding, size, k, stride, dilation=1):
    eff = (k - 1) * dilation + 1
    return (size + stride - 1) // stride if padding == "SAME" else (size + stride - eff) // stride


ACC_STD = 74.0 * 73.0  # std of (uniform int8 input - zp) times std of uniform int8 weights


def weight_scales(rng, in_scale, taps, channels, per_channel, target=3.0):
    """Weight scales giving accumulators of about `target` real units standard deviation."""
    base = target / (in_scale * ACC_STD * math.sqrt(taps))
    return list(base * rng.uniform(0.5, 1.5, channels)) if per_channel else [base]


def bias_tensor(rng, channels, in_scale, w_scales, taps):
    data = np.round(rng.normal(0.0, ACC_STD * math.sqrt(taps) / 2, channels)).astype(np.int32)
    return tensor((channels,), "int32", [in_scale * s for s in w_scales], data=data)


# ---- per-operator checks on the MLPerf Tiny models (TFLM intermediates as inputs) -------------------

class _Ctx:
    """A ParseContext over one operator of a raw graph (inputs as Var/Constant expressions)."""

    def __init__(self, graph, op):
        self.graph, self.op, self.index, self.name = graph, op, op.index, op.name
        self.inputs = []
        for t in op.inputs:
            if t < 0:
                self.inputs.append(None)
                continue
            tt = graph.tensors[t]
            typ = tensor_type(tt)
            const = tt.data is not None
            self.inputs.append(Constant(tt.name, typ, tt.data, t) if const else Var(tt.name, typ, t))
        self.out = tensor_type(graph.tensors[op.outputs[0]])

    def options(self):
        return self.op.options

    def const(self, i):
        return self.graph.tensors[self.op.inputs[i]].data

    def fail(self, why):
        return AssertionError(f"operator #{self.index} {self.name}: {why}")


def per_op_mismatches(path: Path, n_sets: int, seed: int) -> tuple[int, list[str]]:
    graph = read_tflite(path)
    ops = [op for op in graph.operators if op.name in NN_OPS]
    wanted = sorted({t for op in ops for t in (*op.inputs, *op.outputs)
                     if t >= 0 and graph.tensors[t].data is None} - set(graph.inputs))
    rng = np.random.default_rng(seed)
    sets = []
    for _ in range(n_sets):
        ins = []
        for i in graph.inputs:
            t = graph.tensors[i]
            if t.dtype == "float32":
                ins.append(rng.uniform(-1.0, 1.0, t.shape).astype(np.float32))
            else:
                info = np.iinfo(t.dtype)
                ins.append(rng.integers(info.min, info.max, t.shape, endpoint=True).astype(t.dtype))
        sets.append(ins)
    checked, bad = 0, []
    for ins, (_, inter) in zip(sets, run_tflm(path.read_bytes(), sets, wanted, isolate=False)):
        values = dict(inter)
        values.update(zip(graph.inputs, ins))
        for op in ops:
            opdef = op_for_tflite(op.name)
            ctx = _Ctx(graph, op)
            args, attrs = opdef.tflite[op.name](ctx)
            view = OpView(tuple(a.type for a in args), ctx.out, attrs)
            problems = opdef.check(view)
            if problems:
                bad.append(f"#{op.index} {op.name} unsupported: {problems}")
                continue
            arrays = [a.data if isinstance(a, Constant) else values[a.tensor] for a in args]
            ours = opdef.reference(arrays, view)
            theirs = values[op.outputs[0]]
            checked += 1
            if ours.shape != theirs.shape or ours.dtype != theirs.dtype or not np.array_equal(ours, theirs):
                n = int((ours != theirs).sum()) if ours.shape == theirs.shape else ours.size
                bad.append(f"#{op.index} {op.name}: {n} of {theirs.size} elements differ")
    return checked, bad


MLPERF_NN_LAYERS = {"kws_ref_model": 6, "vww_96_int8": 15, "pretrainedResnet_quant": 2, "ad01_int8": 10}


@pytest.mark.parametrize("name", MLPERF_MODELS)
def test_mlperf_layers_bit_exact(name):
    """Every DEPTHWISE_CONV_2D / FULLY_CONNECTED / AVERAGE_POOL_2D layer of the MLPerf Tiny models,
    fed TFLM's own input tensors, reproduces TFLM's output tensor exactly."""
    checked, bad = per_op_mismatches(MLPERF / f"{name}.tflite", n_sets=3, seed=11)
    assert not bad, "\n".join(bad)
    assert checked == 3 * MLPERF_NN_LAYERS[name]


# ---- DEPTHWISE_CONV_2D ----------------------------------------------------------------------------

def depthwise_model(seed, hw, ic, mult, k, stride=(1, 1), dil=(1, 1), padding="SAME", act="NONE",
                    per_channel=True, bias=True, option_mult=None):
    rng = np.random.default_rng(seed)
    (h, w), (kh, kw), oc = hw, k, ic * mult
    oh, ow = out_size(padding, h, kh, stride[0], dil[0]), out_size(padding, w, kw, stride[1], dil[1])
    in_s = 0.03
    ws = weight_scales(rng, in_s, kh * kw, oc, per_channel)
    ts = [tensor((1, h, w, ic), "int8", [in_s], [int(rng.integers(-20, 21))]),
          tensor((1, kh, kw, oc), "int8", ws, axis=3, data=rng.integers(-127, 128, (1, kh, kw, oc))),
          bias_tensor(rng, oc, in_s, ws, kh * kw),
          tensor((1, oh, ow, oc), "int8", [0.06], [int(rng.integers(-20, 21))])]
    # Without bias: two inputs. (An absent bias written as -1 crashes TFLM's DEPTHWISE_CONV_2D Prepare,
    # which releases the missing bias tensor unconditionally; mcuforge reads both forms alike.)
    inputs = [0, 1, 2] if bias else [0, 1]
    opts = dict(Padding=padding, StrideW=stride[1], StrideH=stride[0],
                DepthMultiplier=mult if option_mult is None else option_mult,
                FusedActivationFunction=act, DilationWFactor=dil[1], DilationHFactor=dil[0])
    return single_op_model("DEPTHWISE_CONV_2D", ts, inputs, [3], "DepthwiseConv2DOptions", opts)


DEPTHWISE_CASES = [
    # hw, ic, mult, k, stride, dilation, padding, act, per_channel, bias
    ((7, 7), 3, 1, (3, 3), (1, 1), (1, 1), "SAME", "NONE", True, True),
    ((8, 8), 4, 1, (3, 3), (2, 2), (1, 1), "SAME", "RELU6", True, True),   # even input: pad only after
    ((9, 9), 4, 1, (3, 3), (2, 2), (1, 1), "SAME", "RELU", True, True),    # odd input
    ((6, 9), 3, 2, (3, 3), (1, 2), (1, 1), "VALID", "NONE", True, True),
    ((7, 8), 2, 3, (3, 2), (2, 1), (1, 1), "SAME", "RELU_N1_TO_1", True, False),
    ((9, 10), 3, 2, (3, 3), (1, 1), (2, 2), "SAME", "NONE", True, True),    # dilation with SAME
    ((11, 9), 2, 3, (3, 3), (1, 1), (2, 3), "VALID", "RELU", True, True),   # uneven dilation
    ((10, 10), 1, 8, (5, 5), (2, 2), (1, 1), "SAME", "NONE", False, True),   # per-tensor weights
    ((5, 12), 6, 1, (1, 5), (1, 3), (1, 1), "SAME", "RELU6", False, False),
    ((4, 4), 5, 2, (4, 4), (1, 1), (1, 1), "SAME", "NONE", True, True),     # even kernel: odd total pad
]


@pytest.mark.parametrize("case", DEPTHWISE_CASES, ids=lambda c: f"{c[1]}ch_m{c[2]}_k{c[3][0]}x{c[3][1]}_"
                         f"s{c[4][0]}{c[4][1]}_d{c[5][0]}{c[5][1]}_{c[6]}_{c[7]}_{'pc' if c[8] else 'pt'}"
                         f"{'' if c[9] else '_nobias'}")
def test_depthwise_conv_2d(case):
    hw, ic, mult, k, stride, dil, padding, act, per_channel, bias = case
    blob = depthwise_model(seed_of(case), hw, ic, mult, k, stride, dil, padding, act, per_channel, bias)
    assert_bit_exact(blob, act)


def test_depthwise_multiplier_must_match_options():
    """TFLM loops over the options' depth multiplier: a value that disagrees with the weights is
    rejected rather than computed wrongly."""
    blob = depthwise_model(0, (5, 5), 2, 2, (3, 3), option_mult=1)
    problems = import_graph(read_tflite_bytes(blob)).problems
    assert len(problems) == 1 and "depth multiplier 1, weights give 2" in problems[0][2]


# ---- FULLY_CONNECTED ------------------------------------------------------------------------------

def fc_model(seed, in_shape, units, keep=False, per_channel=False, bias=True, act="NONE", w_zp=0):
    rng = np.random.default_rng(seed)
    depth = in_shape[-1]
    rows = math.prod(in_shape) // depth
    out_shape = (*in_shape[:-1], units) if keep else (rows, units)
    in_s = 0.03
    ws = weight_scales(rng, in_s, depth, units, per_channel)
    wq = dict(scale=ws, zp=[w_zp] * len(ws), axis=0)
    ts = [tensor(in_shape, "int8", [in_s], [int(rng.integers(-20, 21))]),
          tensor((units, depth), "int8", data=rng.integers(-127, 128, (units, depth)), **wq),
          bias_tensor(rng, units, in_s, ws, depth),
          tensor(out_shape, "int8", [0.06], [int(rng.integers(-20, 21))])]
    opts = dict(FusedActivationFunction=act, KeepNumDims=keep)
    return single_op_model("FULLY_CONNECTED", ts, [0, 1, 2] if bias else [0, 1, -1], [3],
                           "FullyConnectedOptions", opts)


FC_CASES = [
    # in_shape, units, keep_num_dims, per_channel, bias, act, weight zero point
    ((1, 40), 12, False, False, True, "NONE", 0),
    ((1, 33), 7, False, True, True, "RELU", 0),
    ((3, 16), 9, False, True, False, "RELU6", 0),
    ((2, 20), 6, False, False, False, "RELU_N1_TO_1", 0),
    ((1, 4, 10), 6, True, False, True, "NONE", 0),     # rank 3, keep_num_dims
    ((1, 4, 10), 6, True, True, True, "RELU", 0),      # rank 3 per-channel: TFLM handles it
    ((2, 3, 8), 5, False, False, True, "NONE", 0),     # rank 3 flattened to [6, 8]
    ((1, 2, 3, 12), 4, True, True, False, "NONE", 0),  # rank 4 keep_num_dims
    ((1, 24), 10, False, False, True, "NONE", 7),      # per-tensor weight zero point: TFLM applies it
    ((2, 24), 10, False, False, True, "RELU", -5),
]


@pytest.mark.parametrize("case", FC_CASES, ids=lambda c: f"{'x'.join(map(str, c[0]))}_u{c[1]}"
                         f"{'_keep' if c[2] else ''}_{'pc' if c[3] else 'pt'}{'' if c[4] else '_nobias'}"
                         f"_{c[5]}_wzp{c[6]}")
def test_fully_connected(case):
    in_shape, units, keep, per_channel, bias, act, w_zp = case
    assert_bit_exact(fc_model(seed_of(case), in_shape, units, keep, per_channel, bias, act, w_zp), act)


def test_fully_connected_per_tensor_weight_zero_point_matters():
    """The weight zero point of per-tensor FC weights changes TFLM's result (it is applied), so the
    w_zp cases above are not vacuous."""
    a = run_against_tflm(fc_model(1, (1, 24), 10, w_zp=0), 1)[0][1]
    b = run_against_tflm(fc_model(1, (1, 24), 10, w_zp=9), 1)[0][1]
    assert not np.array_equal(a, b)


def test_fully_connected_rejects_shuffled_weights_and_bad_shapes():
    fc = get_op("fully_connected")
    q = QuantParams((0.1,), (0,))
    x, w, out = TensorType((1, 8), "int8", q), TensorType((4, 8), "int8", q), TensorType((1, 4), "int8", q)
    ok = {"activation": "NONE", "keep_num_dims": False, "weights_format": "DEFAULT"}
    assert fc.check(OpView((x, w), out, ok)) == []
    shuffled = fc.check(OpView((x, w), out, {**ok, "weights_format": "SHUFFLED4x16INT8"}))
    assert len(shuffled) == 1 and "DEFAULT format" in shuffled[0]
    odd = fc.check(OpView((TensorType((1, 9), "int8", q), w), out, ok))
    assert len(odd) == 1 and "multiple of depth" in odd[0]
    pc_wrong_axis = TensorType((4, 8), "int8", QuantParams((0.1,) * 8, (0,) * 8, axis=1))
    assert any("axis 1" in p for p in fc.check(OpView((x, pc_wrong_axis), out, ok)))
    assert fc.check(OpView((TensorType((1, 8), "int16", q), w), TensorType((1, 4), "int16", q), ok)) == []  # 16x8
    mixed = fc.check(OpView((TensorType((1, 8), "int16", q), w), out, ok))
    assert any("both int16" in p for p in mixed)
    bias_ok = TensorType((4,), "int32", QuantParams((0.0101,), (0,)))  # 0.1 * 0.1 = 0.01: within 2%
    bias_off = TensorType((4,), "int32", QuantParams((0.02,), (0,)))
    assert fc.check(OpView((x, w, bias_ok), out, ok)) == []
    off = fc.check(OpView((x, w, bias_off), out, ok))
    assert len(off) == 1 and "within 2%" in off[0]


# ---- AVERAGE_POOL_2D / MAX_POOL_2D ----------------------------------------------------------------

def pool_model(seed, op, hw, ch, f, stride, padding, act="NONE", out_q=None):
    rng = np.random.default_rng(seed)
    (h, w), (fh, fw) = hw, f
    q = ([0.05], [int(rng.integers(-8, 8)) if out_q is None else 0])
    oq = out_q or q
    oh, ow = out_size(padding, h, fh, stride[0]), out_size(padding, w, fw, stride[1])
    ts = [tensor((1, h, w, ch), "int8", *q), tensor((1, oh, ow, ch), "int8", *oq)]
    opts = dict(Padding=padding, StrideW=stride[1], StrideH=stride[0], FilterWidth=fw, FilterHeight=fh,
                FusedActivationFunction=act)
    return single_op_model(op, ts, [0], [1], "Pool2DOptions", opts)


POOL_CASES = [
    # hw, ch, filter, stride, padding, act
    ((8, 8), 3, (2, 2), (2, 2), "VALID", "NONE"),
    ((7, 7), 4, (3, 3), (1, 1), "SAME", "RELU"),        # partial windows on every border
    ((9, 8), 2, (3, 3), (2, 2), "SAME", "RELU6"),
    ((7, 9), 3, (2, 2), (2, 2), "SAME", "RELU_N1_TO_1"),  # odd input: partial last window only
    ((6, 10), 2, (3, 2), (1, 2), "VALID", "NONE"),
    ((5, 5), 8, (5, 5), (5, 5), "VALID", "NONE"),       # global
    ((5, 6), 2, (4, 5), (3, 2), "SAME", "NONE"),        # windows bigger than the stride
    ((3, 3), 4, (6, 6), (1, 1), "SAME", "NONE"),        # window larger than the input
]


@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("case", POOL_CASES, ids=lambda c: f"{c[0][0]}x{c[0][1]}_f{c[2][0]}x{c[2][1]}_"
                         f"s{c[3][0]}{c[3][1]}_{c[4]}_{c[5]}")
def test_pool_2d(op, case):
    hw, ch, f, stride, padding, act = case
    n_out = out_size(padding, hw[0], f[0], stride[0]) * out_size(padding, hw[1], f[1], stride[1]) * ch
    assert_bit_exact(pool_model(seed_of(case), op, hw, ch, f, stride, padding, act), act,
                     min_distinct=min(4, n_out))


def test_average_pool_rounds_half_away_from_zero():
    """(sum +- count/2) / count with C truncation: 5/2 -> 3, -5/2 -> -3, -3/2 -> -2, 3/2 -> 2."""
    op = get_op("average_pool_2d")
    q = QuantParams((0.05,), (0,))
    x = np.array([2, 3, -2, -3, -1, -2, 1, 2], dtype=np.int8).reshape(1, 4, 2, 1)
    view = OpView((TensorType((1, 4, 2, 1), "int8", q),), TensorType((1, 4, 1, 1), "int8", q),
                  {"filter": (1, 2), "stride": (1, 2), "padding": "VALID", "activation": "NONE"})
    assert op.reference([x], view).ravel().tolist() == [3, -3, -2, 2]


def test_pool_requires_equal_input_output_quantization():
    for out_q in (([0.05], [3]), ([0.0500011], [0])):  # zero points differ; scales differ by > 1e-6
        blob = pool_model(0, "AVERAGE_POOL_2D", (4, 4), 2, (2, 2), (2, 2), "VALID", out_q=out_q)
        problems = import_graph(read_tflite_bytes(blob)).problems
        assert len(problems) == 1 and "same quantization" in problems[0][2]
    close = pool_model(0, "MAX_POOL_2D", (4, 4), 2, (2, 2), (2, 2), "VALID", out_q=([0.0500005], [0]))
    assert not import_graph(read_tflite_bytes(close)).problems  # within TFLM's 1e-6 tolerance


# ---- MEAN -----------------------------------------------------------------------------------------

def mean_model(shape, axes, keep, q_in, q_out):
    rank = len(shape)
    red = {a % rank for a in axes}
    out = [1 if i in red else d for i, d in enumerate(shape)] if keep else [d for i, d in enumerate(shape)
                                                                           if i not in red]
    ts = [tensor(shape, "int8", [q_in[0]], [q_in[1]]),
          tensor((len(axes),), "int32", data=np.array(axes, dtype=np.int32)),
          tensor(out, "int8", [q_out[0]], [q_out[1]])]
    return single_op_model("MEAN", ts, [0, 1], [2], "ReducerOptions", {"KeepDims": keep})


MEAN_SHAPES = [
    ((1, 5, 7, 8), [1, 2], True),       # the 4-D H,W keep_dims case (a separate path in older TFLM)
    ((1, 6, 4, 10), [2, 1], False),
    ((1, 3, 5, 7), [-1], True),
    ((2, 9, 6), [1], False),
    ((3, 4, 5), [0, -1], True),
    ((1, 48, 48, 2), [1, 2], True),     # n = 2304: the 1/n fold uses an 11-bit shift
    ((9,), [0], False),
    ((2, 3, 4, 5, 6), [4, 1], False),   # rank 5
    ((1, 5, 7, 3), [1, 1, 2], True),    # duplicate axis
]
MEAN_QUANT = {
    "equal": ((0.05, 3), (0.05, 3)),
    "equal_zp_min": ((0.3, -128), (0.3, -128)),
    "rescale": ((0.05, -7), (0.02, 11)),
    "shrink": ((0.01, 5), (0.1, -2)),
    "expand": ((0.03, 0), (0.012, -60)),  # saturates sometimes
}


def clustered_int8(axes):
    """Inputs whose reduced groups have different centres (so the means spread over the range)."""
    def make(rng, shape):
        red = {a % len(shape) for a in axes}
        centre = rng.integers(-110, 111, [1 if i in red else d for i, d in enumerate(shape)])
        return np.clip(centre + rng.integers(-20, 21, shape), -128, 127).astype(np.int8)
    return make


@pytest.mark.parametrize("quant_name", sorted(MEAN_QUANT))
@pytest.mark.parametrize("case", MEAN_SHAPES, ids=lambda c: f"{'x'.join(map(str, c[0]))}_ax"
                         f"{''.join(str(a) for a in c[1])}{'_keep' if c[2] else ''}")
def test_mean(case, quant_name):
    shape, axes, keep = case
    q_in, q_out = MEAN_QUANT[quant_name]
    assert_bit_exact(mean_model(shape, axes, keep, q_in, q_out), n_sets=6, min_distinct=3,
                     make_input=clustered_int8(axes))
    assert_bit_exact(mean_model(shape, axes, keep, q_in, q_out), min_distinct=1, seed=1)  # uniform inputs too


def test_mean_with_equal_quantization_rounds():
    """With equal input/output quantization TFLM rounds the mean (integer QuantizedMeanOrSum); a
    truncating integer mean (older TFLM's reference_ops::Mean path) would differ."""
    shape = (1, 6, 6, 16)
    ours, theirs = run_against_tflm(mean_model(shape, [1, 2], True, (0.05, 0), (0.05, 0)), 1, seed=3)[0]
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 127, size=shape, endpoint=True).astype(np.int64)
    s = x.sum(axis=(1, 2), keepdims=True)
    truncated = np.where(s >= 0, s // 36, -((-s) // 36))
    assert np.array_equal(ours, theirs) and not np.array_equal(theirs, truncated)


def test_mean_multiplier_folds_count():
    from mcuforge.ir.ops.mean import mean_multiplier

    m, e = quant.quantize_multiplier(0.5)
    assert mean_multiplier(1.0, 2.0, 1) == (m, e)
    assert mean_multiplier(1.0, 2.0, 4) == (m, e - 2)             # power of two: exact
    assert mean_multiplier(1.0, 2.0, 3) == ((m << 1) // 3, e - 1)
    m, e = quant.quantize_multiplier(1e-7)                         # 31 + shift caps the fold
    assert mean_multiplier(1e-7, 1.0, 1 << 20) == ((m << (31 + e)) // (1 << 20), -31)


def test_mean_rejects_more_than_two_axes():
    mean = get_op("mean")
    q = QuantParams((0.1,), (0,))
    view = OpView((TensorType((2, 3, 4, 5), "int8", q),), TensorType((1, 1, 1, 5), "int8", q),
                  {"axis": (0, 1, 2), "keep_dims": True})
    problems = mean.check(view)
    assert len(problems) == 1 and "At most 2 distinct axes" in problems[0]


# ---- TRANSPOSE_CONV -------------------------------------------------------------------------------

def transpose_conv_model(seed, hw, ic, oc, k, stride, padding, out_hw, act="NONE", per_channel=True,
                         bias=True):
    rng = np.random.default_rng(seed)
    (h, w), (kh, kw) = hw, k
    in_s = 0.03
    taps = ic * max(1, math.ceil(kh / stride[0]) * math.ceil(kw / stride[1]))
    ws = weight_scales(rng, in_s, taps / ic, oc, per_channel)
    out_shape = (1, *out_hw, oc)
    ts = [tensor((4,), "int32", data=np.array(out_shape, dtype=np.int32)),
          tensor((oc, kh, kw, ic), "int8", ws, axis=0, data=rng.integers(-127, 128, (oc, kh, kw, ic))),
          tensor((1, h, w, ic), "int8", [in_s], [int(rng.integers(-20, 21))]),
          bias_tensor(rng, oc, in_s, ws, taps),
          tensor(out_shape, "int8", [0.06 * math.sqrt(ic)], [int(rng.integers(-20, 21))])]
    opts = dict(Padding=padding, StrideW=stride[1], StrideH=stride[0], FusedActivationFunction=act)
    inputs = [0, 1, 2, 3] if bias else [0, 1, 2] if bias is False else [0, 1, 2, -1]  # None: bias -1
    return single_op_model("TRANSPOSE_CONV", ts, inputs, [4], "TransposeConvOptions", opts)


TRANSPOSE_CONV_CASES = [
    # hw, ic, oc, k, stride, padding, out_hw, act, per_channel, bias
    ((5, 5), 4, 6, (3, 3), (2, 2), "SAME", (10, 10), "NONE", True, True),
    ((5, 5), 4, 6, (3, 3), (2, 2), "SAME", (9, 9), "RELU", True, True),      # odd output: ceil(9/2) = 5
    ((5, 5), 4, 3, (3, 3), (2, 2), "VALID", (11, 11), "RELU6", True, False),
    ((5, 5), 4, 3, (3, 3), (2, 2), "VALID", (12, 12), "NONE", True, True),   # last row/col: bias only
    ((5, 6), 3, 5, (3, 3), (1, 1), "SAME", (5, 6), "RELU_N1_TO_1", False, True),
    ((4, 6), 2, 3, (4, 4), (2, 2), "SAME", (8, 12), "NONE", True, True),     # even kernel
    ((4, 3), 2, 3, (4, 4), (3, 3), "VALID", (13, 10), "NONE", True, True),
    ((3, 4), 3, 2, (2, 2), (3, 3), "SAME", (9, 12), "NONE", True, True),     # kernel < stride: gaps
    ((4, 4), 3, 4, (5, 3), (2, 1), "SAME", (8, 4), "RELU", True, False),
    ((6, 5), 2, 3, (3, 3), (2, 2), "SAME", (12, 10), "RELU6", True, None),   # bias input written as -1
]


@pytest.mark.parametrize("case", TRANSPOSE_CONV_CASES, ids=lambda c: f"{c[0][0]}x{c[0][1]}_"
                         f"k{c[3][0]}x{c[3][1]}_s{c[4][0]}{c[4][1]}_{c[5]}_out{c[6][0]}x{c[6][1]}_{c[7]}_"
                         f"{'pc' if c[8] else 'pt'}{'' if c[9] else '_nobias' if c[9] is False else '_bias-1'}")
def test_transpose_conv(case):
    hw, ic, oc, k, stride, padding, out_hw, act, per_channel, bias = case
    blob = transpose_conv_model(seed_of(case), hw, ic, oc, k, stride, padding, out_hw, act, per_channel, bias)
    assert_bit_exact(blob, act)


def test_transpose_conv_args_and_attrs():
    """output_shape becomes an attribute; the call's arguments are (input, weights[, bias])."""
    module = import_graph(read_tflite_bytes(transpose_conv_model(0, (5, 5), 4, 6, (3, 3), (2, 2), "SAME",
                                                                 (10, 10)))).module
    call = module.main.body
    assert call.op == "transpose_conv" and call.attrs["output_shape"] == (1, 10, 10, 6)
    assert [a.type.shape for a in call.args] == [(1, 5, 5, 4), (6, 3, 3, 4), (6,)]
