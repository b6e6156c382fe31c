"""Bit-exactness of the arithmetic, activation and (de)quantization ops (ADD, SUB, MUL, SOFTMAX, RELU,
RELU6, RELU_N1_TO_1, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH, QUANTIZE, DEQUANTIZE) against the
TFLite Micro interpreter, plus unit tests of the gemmlowp fixed-point helpers.

Kinds of tests:
- multi-config models written with devtools.tflite_writer: one model holds a dozen
  independent operators of the same type with seeded random quantization parameters (and shapes,
  options), so one TFLM run checks them all. Unary int8 ops are checked exhaustively (all 256 inputs);
- per operator on the MLPerf Tiny models and the fixture models: TFLM's own input tensors of each
  of our layers are fed to our reference and compared with TFLM's output tensor of that layer;
- support checks (the user-facing rules) and hand-derived values of the fixed-point primitives.

TFLM (not desktop TFLite) is the target. Differences found, each checked below:
- RELU6 clamps in the INPUT's quantized domain and ignores the output quantization (TFLite rescales).
- Multipliers are derived in double from the float32 scales for every op here, including SUB, RELU,
  LEAKY_RELU and HARD_SWISH whose TFLM sources read as float32 quotients widened to double (checked
  on scales where the two differ); the clamp bounds round(6 / s) and roundf(bound / s) ARE float32
  divisions (checked on scales where a double division would round the other way).
- RELU_N1_TO_1 has no TFLM kernel; we follow TFLite's reference kernel, which (unlike this TFLM)
  takes the float32 quotient s_in / s_out for its multiplier.
- Int8 SOFTMAX aborts in TFLM when a row's sum of exponentials reaches 512 (rows of 512+ elements);
  mcuforge gives -128 for such a row (tests/test_regimes.py).
- LOGISTIC/TANH only check (part of) the output quantization and always compute for 1/256, -128
  resp. 1/128, 0; we require exactly those.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MLPERF_MODELS, MODELS, manifest
from mcuforge.frontend.importer import import_graph, tensor_type
from mcuforge.frontend.reader import read_tflite_bytes
from mcuforge.ir import quant
from mcuforge.ir.evaluate import evaluate
from mcuforge.ir.expr import Constant, Var
from mcuforge.ir.ops import _fixedpoint as fp
from mcuforge.ir.ops.activations import hard_swish_int8, relu_x
from mcuforge.ir.ops.add_sub import multipliers
from mcuforge.ir.ops.logistic_tanh import input_params
from mcuforge.ir.ops.softmax import softmax_params
from mcuforge.ir.registry import OpView, op_for_tflite
from mcuforge.ir.types import QuantParams, TensorType

from mcuforge.oracle import OracleError, run_tflm

from devtools.tflite_writer import ModelWriter

INT32_MIN, INT32_MAX = quant.INT32_MIN, quant.INT32_MAX
MY_OPS = {"ADD", "SUB", "MUL", "SOFTMAX", "RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU", "HARD_SWISH",
          "LOGISTIC", "TANH", "QUANTIZE", "DEQUANTIZE"}
ALL_INT8 = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)


# ---- multi-operator models ----------------------------------------------------------------------

def T(shape, dtype="int8", scale=None, zp=0, data=None):
    """One tensor spec; `data` makes it a constant."""
    return {"shape": tuple(shape), "dtype": dtype, "scale": scale, "zp": zp, "data": data}


def Op(name, inputs, output, options=None):
    """One operator: builtin name, input tensor specs, output spec, (OptionsTable, {field: value})."""
    return {"name": name, "inputs": inputs, "output": output, "options": options}


def build_model(ops: list[dict]) -> bytes:
    """A one-subgraph model running every operator of `ops` side by side on its own tensors: the
    graph inputs are the non-constant operator inputs, the graph outputs every operator's output."""
    w = ModelWriter()
    graph_in, graph_out = [], []
    for op in ops:
        ins = []
        for t in op["inputs"]:
            ins.append(w.tensor(t["shape"], t["dtype"], t["scale"], t["zp"], data=t["data"]))
            if t["data"] is None:
                graph_in.append(ins[-1])
        o = op["output"]
        graph_out.append(w.tensor(o["shape"], o["dtype"], o["scale"], o["zp"], data=o["data"]))
        table, fields = op["options"] or ("", {})
        w.op(op["name"], ins, [graph_out[-1]], table, **fields)
    return w.finish(graph_in, graph_out)


# ---- comparison helpers -----------------------------------------------------------------------------

def _module(blob):
    result = import_graph(read_tflite_bytes(blob))
    assert not result.problems, result.problems
    return result.module


def _bits(a):
    a = np.asarray(a)
    return a.view(np.uint32) if a.dtype == np.float32 else a


def assert_outputs_match_tflm(blob: bytes, input_sets: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """Every graph output of our reference equals TFLM's, bit for bit, on every input set; returns
    TFLM's outputs."""
    module = _module(blob)
    theirs = run_tflm(blob, input_sets)
    for k, (inputs, (t_outs, _)) in enumerate(zip(input_sets, theirs)):
        ours = evaluate(module, inputs)
        assert len(ours) == len(t_outs)
        for i, (o, t) in enumerate(zip(ours, t_outs)):
            assert o.dtype == t.dtype and o.shape == t.shape, (k, i, o.dtype, t.dtype, o.shape, t.shape)
            diff = _bits(o) != _bits(t)
            if diff.any():
                at = tuple(np.argwhere(diff)[0])
                pytest.fail(f"input set {k}, output {i}: {int(diff.sum())} of {diff.size} differ; "
                            f"at {list(at)}: ours {o[at]}, TFLM {t[at]}")
    return [t_outs for t_outs, _ in theirs]


class _LayerCtx:
    """A ParseContext for one operator of a graph (what the frontend gives an op's parser)."""

    def __init__(self, graph, op, inputs, out):
        self._graph, self._op = graph, op
        self.index, self.name, self.inputs, self.out = op.index, op.name, inputs, out

    def options(self):
        return self._op.options

    def const(self, i):
        return self._graph.tensors[self._op.inputs[i]].data

    def fail(self, why):
        return AssertionError(f"op #{self.index} {self.name}: {why}")


def check_layers(blob: bytes, input_sets, ops=MY_OPS) -> int:
    """Feed TFLM's own input tensors of each layer in `ops` to our reference and compare with TFLM's
    output tensor of that layer. Returns the number of layers checked. TFLM runs in this process:
    only for model files known to run (the MLPerf models and the fixtures)."""
    g = read_tflite_bytes(blob)
    layers = [o for o in g.operators if o.name in ops]
    wanted = sorted({t for o in layers for t in o.inputs + o.outputs if t >= 0 and g.tensors[t].data is None})
    runs = run_tflm(blob, input_sets, wanted, isolate=False)
    for o in layers:
        opdef = op_for_tflite(o.name)
        exprs = []
        for t in o.inputs:
            tt = g.tensors[t] if t >= 0 else None
            exprs.append(None if tt is None else
                         Constant(tt.name, tensor_type(tt), tt.data, t) if tt.data is not None else
                         Var(tt.name, tensor_type(tt), t))
        out_t = tensor_type(g.tensors[o.outputs[0]])
        args, attrs = opdef.tflite[o.name](_LayerCtx(g, o, exprs, out_t))
        view = OpView(tuple(a.type for a in args), out_t, attrs)
        assert not opdef.check(view), (o.index, o.name, opdef.check(view))
        for k, (_, inter) in enumerate(runs):
            vals = [a.data if isinstance(a, Constant) else inter[a.tensor] for a in args]
            ours, theirs = opdef.reference(vals, view), inter[o.outputs[0]]
            assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
            diff = _bits(ours) != _bits(theirs)
            assert not diff.any(), f"op #{o.index} {o.name} {attrs}, input set {k}: {int(diff.sum())} differ"
    return len(layers)


def _random_inputs(blob, rng, n=3):
    g = read_tflite_bytes(blob)
    sets = []
    for _ in range(n):
        xs = []
        for i in g.inputs:
            t = g.tensors[i]
            if t.dtype == "float32":
                xs.append(rng.uniform(-4, 4, size=t.shape).astype(np.float32))
            else:
                info = np.iinfo(np.dtype(t.dtype))
                xs.append(rng.integers(info.min, info.max, size=t.shape, endpoint=True).astype(t.dtype))
        sets.append(xs)
    return sets


def _scale(rng, lo=-3.0, hi=0.5) -> float:
    return float(np.float32(10 ** rng.uniform(lo, hi)))


def _zp(rng) -> int:
    return int(rng.integers(-128, 128))


# ---- unary ops: exhaustive over the int8 inputs ----------------------------------------------------

def _int8_type(scale, zp, shape=(1, 256)):
    return TensorType(shape, "int8", QuantParams((scale,), (zp,)))


def _unary_model(op, configs, options=None):
    return build_model([Op(op, [T((1, 256), scale=si, zp=zi)], T((1, 256), scale=so, zp=zo),
                           options(k) if options else None)
                        for k, (si, zi, so, zo) in enumerate(configs)])


def _unary_configs(rng, n, out=None):
    return [(_scale(rng), _zp(rng), *(out or (_scale(rng), _zp(rng)))) for _ in range(n)]


@pytest.mark.parametrize("op", ["RELU", "LEAKY_RELU", "HARD_SWISH", "LOGISTIC", "TANH"])
def test_unary_op_exhaustive(op):
    """Twelve random quantizations per op, every int8 input value: bit-exact with TFLM."""
    rng = np.random.default_rng(sum(map(ord, op)))
    fixed = {"LOGISTIC": (1 / 256, -128), "TANH": (1 / 128, 0)}.get(op)
    configs = _unary_configs(rng, 12, fixed)
    if op == "HARD_SWISH":  # TFLM requires s_in < 128 * s_out; keep the drawn configs valid
        configs = [(si, zi, max(so, si / 100), zo) for si, zi, so, zo in configs]
    alphas = [float(np.float32(a)) for a in rng.uniform(-0.6, 1.6, size=12)]
    opts = (lambda k: ("LeakyReluOptions", {"Alpha": alphas[k]})) if op == "LEAKY_RELU" else None
    blob = _unary_model(op, configs, opts)
    outs = assert_outputs_match_tflm(blob, [[ALL_INT8] * len(configs)])
    assert len({o.tobytes() for o in outs[0]}) == len(configs)  # the configs really differ


def test_relu6_clamps_in_input_domain():
    """TFLM's RELU6 (Relu6Quantized) clamps x to [zp_in, round(6 / s_in) + zp_in] in the INPUT's
    quantized domain and copies the int8 value through: it ignores the output scale and zero point.
    TFLite (desktop) instead rescales to the output quantization. We match TFLM, and this test's
    configurations (input and output quantization differ) tell the two apart."""
    rng = np.random.default_rng(6)
    configs = _unary_configs(rng, 12)
    blob = _unary_model("RELU6", configs)
    outs = assert_outputs_match_tflm(blob, [[ALL_INT8] * len(configs)])[0]
    for (si, zi, so, zo), got in zip(configs, outs):
        view = OpView((_int8_type(si, zi),), _int8_type(so, zo), {})
        tflite_like = relu_x(ALL_INT8, view, 0.0, 6.0, float32_quotient=True)
        assert (got != tflite_like).any()
        six = min(127, zi + quant.tflite_round(float(np.float32(6.0) / np.float32(si))))
        assert np.array_equal(got, np.clip(ALL_INT8, zi, six))


# RELU_N1_TO_1 outputs of TFLite 2.21's reference kernel (BUILTIN_REF; the optimized one agrees) for
# the inputs -128..127, per (s_in, zp_in, s_out, zp_out).
RELU_N1_TO_1_TFLITE = {
    (0.02, -10, 0.01, 5): (
        "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
        "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a3a5a7a9abadafb1b3b5b7b9bbbdbfc1c3c5c7c9cbcdcfd1d3d5d7"
        "d9dbdddfe1e3e5e7e9ebedeff1f3f5f7f9fbfdff01030507090b0d0f11131517191b1d1f21232527292b2d2f31333537"
        "393b3d3f41434547494b4d4f51535557595b5d5f61636567696969696969696969696969696969696969696969696969"
        "696969696969696969696969696969696969696969696969696969696969696969696969696969696969696969696969"
        "69696969696969696969696969696969"),
    (0.004, 30, 0.009, -3): (
        "b7b7b7b8b8b9b9bababbbbbbbcbcbdbdbebebfbfbfc0c0c1c1c2c2c3c3c3c4c4c5c5c6c6c7c7c7c8c8c9c9cacacbcbcb"
        "cccccdcdcececfcfcfd0d0d1d1d2d2d3d3d3d4d4d5d5d6d6d7d7d7d8d8d9d9dadadbdbdbdcdcdddddededfdfdfe0e0e1"
        "e1e2e2e3e3e3e4e4e5e5e6e6e7e7e7e8e8e9e9eaeaebebebececededeeeeefefeff0f0f1f1f2f2f3f3f3f4f4f5f5f6f6"
        "f7f7f7f8f8f9f9fafafbfbfbfcfcfdfefeffffff000001010202030303040405050606070707080809090a0a0b0b0b0c"
        "0c0d0d0e0e0f0f0f101011111212131313141415151616171717181819191a1a1b1b1b1c1c1d1d1e1e1f1f1f20202121"
        "22222323232424252526262727272828"),
    # A scale pair where TFLite's float32 quotient s_in / s_out and a double one give other outputs.
    (0.004304919391870499, -98, 0.008391868323087692, -110): (
        "83838484858586868787888889898a8a8b8b8c8c8d8d8e8e8f8f909091919293939494959596969797989899999a9a9b"
        "9b9c9c9d9d9e9e9f9fa0a0a1a1a2a2a3a3a4a4a5a5a6a7a7a8a8a9a9aaaaababacacadadaeaeafafb0b0b1b1b2b2b3b3"
        "b4b4b5b5b6b6b7b7b8b8b9bababbbbbcbcbdbdbebebfbfc0c0c1c1c2c2c3c3c4c4c5c5c6c6c7c7c8c8c9c9cacacbcbcc"
        "cccdcececfcfd0d0d1d1d2d2d3d3d4d4d5d5d6d6d7d7d8d8d9d9dadadbdbdcdcdddddededfdfe0e0e1e2e2e3e3e4e4e5"
        "e5e6e6e7e7e8e8e9e9eaeaebebececededeeeeefeff0f0f1f1f2f2f3f3f4f4f5f6f6f7f7f8f8f9f9fafafbfbfcfcfdfd"
        "fefeffff000001010202030304040505"),
}


def test_relu_n1_to_1_follows_tflite():
    """TFLM registers no RELU_N1_TO_1 kernel (the oracle cannot run it); we implement TFLite's
    reference semantics (TFLM's RELU arithmetic clamped to the quantized [-1, 1], with TFLite's
    float32 quotient for the multiplier) and compare with outputs recorded from TFLite's interpreter."""
    configs = list(RELU_N1_TO_1_TFLITE)
    module = _module(_unary_model("RELU_N1_TO_1", configs))
    ours = evaluate(module, [ALL_INT8] * len(configs))
    for cfg, o in zip(configs, ours):
        assert o.tobytes().hex() == RELU_N1_TO_1_TFLITE[cfg], cfg
    with pytest.raises(OracleError):
        run_tflm(_unary_model("RELU_N1_TO_1", configs[:1]), [[ALL_INT8]])


# ---- ADD / SUB / MUL --------------------------------------------------------------------------------

BINARY_SHAPES = [((1, 5, 5, 4), (1, 5, 5, 4)), ((1, 5, 5, 4), (1, 1, 1, 4)), ((1, 1, 1, 4), (1, 5, 5, 4)),
                 ((2, 3, 4), (4,)), ((1, 6, 1), (1, 1, 5)), ((3, 1, 2, 1, 4), (1, 2, 1, 3, 4)),
                 ((2, 1, 3, 1, 2, 2), (1, 2, 1, 2, 1, 2)), ((7,), (7,))]
OPTIONS = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions"}


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_binary_op(op):
    """Broadcasting up to rank 6, constant and scalar operands, fused activations, random
    quantization and one configuration where both inputs and the output share their quantization
    (TFLM's int8 kernels have no shortcut for it): bit-exact with TFLM."""
    rng = np.random.default_rng(len(op) * 7 + ord(op[0]))
    ops = []
    for k, (sa, sb) in enumerate(BINARY_SHAPES + [((3, 4), ()), ((2, 3, 4), (4,)), ((1, 4, 4, 3), (1, 4, 4, 3))]):
        q = [(_scale(rng), _zp(rng)) for _ in range(3)]
        if op == "MUL":  # keep the output scale in a useful range
            q[2] = (float(np.float32(q[0][0] * q[1][0] * 10 ** rng.uniform(-1, 2))), q[2][1])
        if k == 10:  # shared quantization
            q = [q[0]] * 3
        const_b = k in (8, 9)
        b_data = rng.integers(-128, 128, size=sb).astype(np.int8) if const_b else None
        out_shape = tuple(np.broadcast_shapes(sa, sb))
        ops.append(Op(op, [T(sa, scale=q[0][0], zp=q[0][1]), T(sb, scale=q[1][0], zp=q[1][1], data=b_data)],
                      T(out_shape, scale=q[2][0], zp=q[2][1]),
                      (OPTIONS[op], {"FusedActivationFunction": k % 4})))
    blob = build_model(ops)
    assert_outputs_match_tflm(blob, _random_inputs(blob, rng, 4))


# Scales for which float32 and double Prepare arithmetic give different multipliers AND outputs.
PRECISION_SCALES = (0.041582655161619186, 0.05753234773874283, 0.020000368356704712)


@pytest.mark.parametrize("op", ["ADD", "SUB"])
def test_add_sub_prepare_precision(op):
    """TFLM's ADD and SUB derive their multipliers in double from the float32 scales (some TFLM
    sources of SUB's Prepare use float32 arithmetic; the interpreter we match does not). On every
    pair of int8 inputs, with scales where the two precisions differ, we match TFLM, and the
    float32 variant would not."""
    s1, s2, so = PRECISION_SCALES
    a = np.repeat(ALL_INT8.reshape(256, 1), 256, axis=1)
    b = np.ascontiguousarray(a.T)
    blob = build_model([Op(op, [T((256, 256), scale=s1), T((256, 256), scale=s2)], T((256, 256), scale=so),
                           (OPTIONS[op], {"FusedActivationFunction": 0}))])
    (theirs,) = assert_outputs_match_tflm(blob, [[a, b]])[0]
    sign = 1 if op == "ADD" else -1
    (m1, e1), (m2, e2), (mo, eo) = multipliers(s1, s2, so, float32_prepare=True)
    scaled = quant.multiply_by_quantized_multiplier_smaller_than_one_exp
    raw = scaled(scaled(a.astype(np.int64) << 20, m1, e1) + sign * scaled(b.astype(np.int64) << 20, m2, e2), mo, eo)
    assert (np.clip(raw, -128, 127) != theirs).sum() > 0


# (s_in, zp_in, s_out, zp_out[, alpha]) where a float32 quotient would give another multiplier and
# another output for at least one int8 input than the double quotient TFLM computes.
PRECISION_UNARY = {
    "RELU": [(0.6262962222099304, -74, 2.2155680656433105, -103), (0.049980632960796356, -44, 0.0703175812959671, -53),
             (0.0017512914491817355, -24, 0.013438480906188488, 57)],
    "LEAKY_RELU": [(0.2746633291244507, -54, 0.08234462141990662, -111, 0.1374092549085617),
                   (0.0037774036172777414, 90, 0.0020901465322822332, 119, 0.7580918073654175),
                   (0.07807696610689163, 18, 0.0013746666954830289, 46, 0.004523907322436571)],
    "HARD_SWISH": [(0.8485841155052185, -44, 1.941279649734497, -31), (0.20249368250370026, -66, 0.09237523376941681, -128),
                   (0.14037244021892548, -120, 0.07254742085933685, -42)],
}


def _float32_quotient_variant(op, cfg):
    """What the op would give with its multipliers from float32 quotients (not what TFLM does)."""
    f32, x = np.float32, ALL_INT8.astype(np.int64)
    si, zi, so, zo = cfg[:4]
    mbqm = quant.multiply_by_quantized_multiplier
    if op == "RELU":
        m, e = quant.quantize_multiplier(float(f32(si) / f32(so)))
        return np.clip(zo + mbqm(x - zi, m, e), max(zo, -128), 127)
    if op == "LEAKY_RELU":
        (mi, ei), (ma, ea) = (quant.quantize_multiplier(float(f32(si) / f32(so))),
                              quant.quantize_multiplier(abs(float(f32(si) * f32(cfg[4]) / f32(so)))))
        neg = mbqm(x - zi, ma, ea) * (-1 if cfg[4] < 0 else 1)
        return np.clip(zo + np.where(x >= zi, mbqm(x - zi, mi, ei), neg), -128, 127)
    hires = f32(1 / 128) * f32(si)
    (om, oe), (rm, re) = (quant.quantize_multiplier(float(hires / f32(so))),
                          quant.quantize_multiplier(float(hires / (f32(3) / f32(32768)))))
    params = {"output_multiplier": fp.downscale_int32_to_int16_multiplier(om), "output_exponent": oe,
              "reluish_multiplier": fp.downscale_int32_to_int16_multiplier(rm), "reluish_exponent": re}
    return hard_swish_int8(ALL_INT8, zi, zo, params)


def test_multiplier_precision():
    """RELU, LEAKY_RELU and HARD_SWISH multipliers are double quotients of the float32 scales (the
    TFLM sources read as float32 quotients widened to double; the interpreter computes in double).
    On configurations where the two differ we match TFLM, and the float32 variant would not."""
    ops = []
    for op, cfgs in PRECISION_UNARY.items():
        for cfg in cfgs:
            opts = ("LeakyReluOptions", {"Alpha": cfg[4]}) if op == "LEAKY_RELU" else None
            ops.append(Op(op, [T((1, 256), scale=cfg[0], zp=cfg[1])], T((1, 256), scale=cfg[2], zp=cfg[3]), opts))
    theirs = assert_outputs_match_tflm(build_model(ops), [[ALL_INT8] * len(ops)])[0]
    variants = [_float32_quotient_variant(op, cfg) for op, cfgs in PRECISION_UNARY.items() for cfg in cfgs]
    assert all((v != t).any() for v, t in zip(variants, theirs))


# float32 scales s where round(6 / s) (or round(1 / s)) differs between a float32 and a double division.
TIE_SCALES_6 = (2.4000000953674316, 1.7142857313156128, 0.800000011920929, 0.5714285969734192)
TIE_SCALES_1 = (0.6666666865348816, 0.4000000059604645, 0.1818181872367859)


def test_clamp_bounds_are_float32_divisions():
    """RELU6's upper bound round(6 / s_in) and the fused RELU6 / RELU_N1_TO_1 bounds roundf(+-bound / s_out)
    are computed with float32 divisions: on scales where 6 / s (1 / s) is within a float32 rounding of
    k + 1/2, TFLM's largest output is the float32-rounded bound (a double division would give k)."""
    ops = [Op("RELU6", [T((1, 256), scale=s)], T((1, 256), scale=s)) for s in TIE_SCALES_6]
    ops += [Op("ADD", [T((1, 256), scale=1.0), T((1, 256), scale=1.0)], T((1, 256), scale=s),
               ("AddOptions", {"FusedActivationFunction": act}))
            for act, scales in ((3, TIE_SCALES_6), (2, TIE_SCALES_1)) for s in scales]
    zeros = np.zeros((1, 256), np.int8)
    theirs = assert_outputs_match_tflm(build_model(ops), [[ALL_INT8] * 4 + [ALL_INT8, zeros] * 7])[0]
    bounds = [(6.0, s) for s in TIE_SCALES_6] * 2 + [(1.0, s) for s in TIE_SCALES_1]
    for out, (bound, s) in zip(theirs, bounds):
        as_float32 = quant.tflite_round(float(np.float32(bound) / np.float32(s)))
        assert int(out.max()) == as_float32 == quant.tflite_round(bound / s) + 1


# ---- SOFTMAX ----------------------------------------------------------------------------------------

def test_softmax():
    """Depths 2..511 (int8 output) and up to 2000 (int16 output), betas from 0.02 to 50, random input
    scales; random rows, constant rows (the largest sums) and narrow rows: bit-exact with TFLM."""
    rng = np.random.default_rng(40)
    depths = [2, 3, 10, 37, 100, 256, 511, 511, 12, 1000, 2000, 64]
    betas = [1.0, 0.5, 2.0, 0.02, 50.0, 1.0, 1.0, 0.3, 1.0, 1.0, 0.7, 5.0]
    ops = []
    for k, (d, beta) in enumerate(zip(depths, betas)):
        shape = ((1,), (2, 3), (1, 2, 2))[k % 3] + (d,)
        int16 = k >= 9
        out = T(shape, "int16", 1 / 65536, -32768) if int16 else T(shape, scale=1 / 256, zp=-128)
        ops.append(Op("SOFTMAX", [T(shape, scale=_scale(rng, -3, 1), zp=_zp(rng))], out,
                      ("SoftmaxOptions", {"Beta": float(np.float32(beta))})))
    blob = build_model(ops)
    sets = _random_inputs(blob, rng, 2)
    sets.append([np.full(op["inputs"][0]["shape"], int(rng.integers(-128, 128)), np.int8) for op in ops])
    sets.append([np.clip(rng.integers(-5, 6, size=op["inputs"][0]["shape"]) + 90, -128, 127).astype(np.int8)
                 for op in ops])
    assert_outputs_match_tflm(blob, sets)


def test_softmax_params_hand_derived():
    """beta 1, input scale 1/256: multiplier 2**18 -> (2**30, shift 19); diff_min = -floor(31 * 2**26 / 2**19)."""
    assert softmax_params(1.0, 1 / 256) == (1 << 30, 19, -3968)


# ---- QUANTIZE / DEQUANTIZE --------------------------------------------------------------------------

def test_quantize():
    """float32 -> int8/int16 (float32 division, round half away from zero; inputs include exact
    ties and +/-0) and integer requantization int8 -> int8/int16/int32, int16 -> int8/int16."""
    rng = np.random.default_rng(50)
    pairs = [("float32", "int8")] * 3 + [("float32", "int16")] * 2 + \
        [("int8", "int8")] * 3 + [("int8", "int16"), ("int8", "int32"), ("int16", "int8"), ("int16", "int16")]
    qp = {"int8": lambda: (_scale(rng), _zp(rng)), "int16": lambda: (_scale(rng, -5, -1), int(rng.integers(-900, 900))),
          "int32": lambda: (_scale(rng, -6, -2), int(rng.integers(-99, 99)))}
    ops, sets = [], [[], [], []]
    for src, dst in pairs:
        so, zo = qp[dst]()
        shape = (1, 300)
        if src == "float32":
            lo, hi = quant.dtype_range(dst)
            for s in sets:
                x = rng.uniform((lo - zo) * so * 1.2, (hi - zo) * so * 1.2, size=shape).astype(np.float32)
                x[0, :100] = ((rng.integers(-300, 300, size=100) + 0.5) * np.float32(so)).astype(np.float32)
                x[0, 100:102] = (0.0, -0.0)
                s.append(x)
            ops.append(Op("QUANTIZE", [T(shape, "float32")], T(shape, dst, so, zo)))
        else:
            si, zi = qp[src]()
            lo, hi = quant.dtype_range(src)
            for s in sets:
                s.append(rng.integers(lo, hi, size=shape, endpoint=True).astype(src))
            ops.append(Op("QUANTIZE", [T(shape, src, si, zi)], T(shape, dst, so, zo)))
    theirs = assert_outputs_match_tflm(build_model(ops), sets)
    # The near-tie inputs tell a float32 division (TFLM) from a double one.
    for i, op in enumerate(ops[:5]):
        out_t = op["output"]
        x = sets[0][i].astype(np.float64) / float(np.float32(out_t["scale"]))
        as_double = np.clip(np.sign(x) * np.floor(np.abs(x) + 0.5) + out_t["zp"], *quant.dtype_range(out_t["dtype"]))
        assert (as_double != theirs[0][i]).any()


def test_dequantize():
    """int8 (all values) and int16 -> float32: the product in double rounded once to float32."""
    rng = np.random.default_rng(51)
    ops = [Op("DEQUANTIZE", [T((1, 256), "int8", _scale(rng, -4, 1), _zp(rng))], T((1, 256), "float32"))
           for _ in range(6)]
    ops += [Op("DEQUANTIZE", [T((1, 256), "int16", _scale(rng, -6, -1), int(rng.integers(-500, 500)))],
               T((1, 256), "float32")) for _ in range(3)]
    i16 = [rng.integers(-32768, 32767, size=(1, 256), endpoint=True).astype(np.int16) for _ in range(3)]
    assert_outputs_match_tflm(build_model(ops), [[ALL_INT8] * 6 + i16])


# ---- real models: MLPerf Tiny and the fixtures ------------------------------------------------------

@pytest.mark.parametrize("name, layers", [("ic", 4), ("kws", 1), ("vww", 1)])
def test_mlperf_layers(name, layers):
    """Every ADD and SOFTMAX layer of the MLPerf Tiny models (IC: three residual ADDs and the
    SOFTMAX; AD has none of our ops), on TFLM's own layer inputs."""
    blob = MLPERF_MODELS[name].read_bytes()
    assert check_layers(blob, _random_inputs(blob, np.random.default_rng(3), 3)) == layers


def _fixtures_per_op(per_op=2):
    chosen = []
    for op in sorted(MY_OPS):
        for entry in [e for e in manifest() if op in e["ops"]][:per_op]:
            if entry["file"] not in chosen:
                chosen.append(entry["file"])
    return chosen


@pytest.mark.parametrize("fname", _fixtures_per_op())
def test_fixture_layers(fname):
    """The first two fixture models holding each of our ops: every such layer on TFLM's own inputs."""
    blob = (MODELS / fname).read_bytes()
    assert check_layers(blob, _random_inputs(blob, np.random.default_rng(4), 3)) >= 1


# ---- support checks ---------------------------------------------------------------------------------

# A supported int8 operator, so that a model is not rejected as a whole for being all-float.
INT8_OP = Op("RELU", [T((1, 4), scale=0.1)], T((1, 4), scale=0.1))


def _problems(ops):
    return " | ".join(p[2] for p in import_graph(read_tflite_bytes(build_model(ops))).problems)


@pytest.mark.parametrize("op, dtype", [(op, "float32") for op in ("RELU", "RELU6", "LEAKY_RELU", "HARD_SWISH",
                                                                   "LOGISTIC", "TANH", "SOFTMAX")]
                         + [("HARD_SWISH", "int16")])  # the others take int16 (tests/ops/test_int16_unary.py)
def test_unary_rejects_other_dtypes(op, dtype):
    q = (None, 0) if dtype == "float32" else (1 / 32768, 0)
    msg = _problems([Op(op, [T((1, 8), dtype, *q)], T((1, 8), dtype, *q)), INT8_OP])
    assert f"got {dtype}" in msg or f"input is {dtype}" in msg, msg


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_binary_rejects_float_and_rank7(op):
    f = _problems([Op(op, [T((2, 3), "float32"), T((2, 3), "float32")], T((2, 3), "float32")), INT8_OP])
    assert "must be int8, all int16, or all int32 (got float32)" in f, f
    shape = (1, 2, 1, 2, 1, 2, 3)
    r = _problems([Op(op, [T(shape, scale=0.1), T(shape, scale=0.1)], T(shape, scale=0.2))])
    assert "at most 6 dimensions" in r and "(rank 7)" in r, r


def test_softmax_output_rules():
    def softmax(d, out, beta=1.0):
        return Op("SOFTMAX", [T((1, d), scale=0.1)], out, ("SoftmaxOptions", {"Beta": beta}))

    bad_q = _problems([softmax(10, T((1, 10), scale=1 / 255, zp=-128))])
    assert "scale 1/256 and zero point -128" in bad_q and "0.0039215" in bad_q, bad_q
    # rows of 512+ elements are accepted (TFLM aborts only on rows whose sum reaches 512: test_regimes.py)
    assert _problems([softmax(1001, T((1, 1001), scale=1 / 256, zp=-128))]) == ""
    assert _problems([softmax(4000, T((1, 4000), "int16", 1 / 65536, -32768))]) == ""
    no_beta = _problems([Op("SOFTMAX", [T((1, 10), scale=0.1)], T((1, 10), scale=1 / 256, zp=-128))])
    assert "must exceed 1" in no_beta and "(beta 0 and input scale 0.1 give 0)" in no_beta, no_beta


def test_logistic_tanh_output_rules():
    lo = _problems([Op("LOGISTIC", [T((1, 4), scale=0.1)], T((1, 4), scale=1 / 256, zp=0))])
    assert "scale 1/256 and zero point -128" in lo, lo
    th = _problems([Op("TANH", [T((1, 4), scale=0.1)], T((1, 4), scale=1 / 256, zp=0))])
    assert "scale 1/128 and zero point 0" in th, th


def test_hard_swish_and_add_scale_rules():
    hs = _problems([Op("HARD_SWISH", [T((1, 4), scale=1.0)], T((1, 4), scale=1 / 128))])
    assert "smaller than 128 times the output scale" in hs, hs
    assert _problems([Op("HARD_SWISH", [T((1, 4), scale=1.0)], T((1, 4), scale=float(np.float32(1 / 127.9))))]) == ""
    add = _problems([Op("ADD", [T((4,), scale=1.0), T((4,), scale=1.0)], T((4,), scale=2.0 ** -20),
                        ("AddOptions", {"FusedActivationFunction": 0}))])
    assert "smaller than 2**20 (int16: 2**15) times the output scale" in add, add


def test_quantize_rules():
    f = _problems([Op("QUANTIZE", [T((4,), "float32")], T((4,), "int32", 0.1, 0))])
    assert "float32 to int32" in f, f
    d = _problems([Op("DEQUANTIZE", [T((4,), "int8", 0.1, 0)], T((4,), "int16", 0.1, 0))])
    assert "int8 to int16" in d, d


# ---- fixed-point primitives: hand-derived values on edge inputs -------------------------------------

def test_srdhm_edges():
    f = fp.srdhm
    assert f(INT32_MIN, INT32_MIN) == INT32_MAX  # the one overflow case saturates
    assert f(INT32_MIN, INT32_MAX) == -INT32_MAX  # -(2**31 - 1) exactly
    assert f(1 << 15, 1 << 15) == 1  # 2**30 / 2**31 = 0.5 -> rounds up
    assert f(-(1 << 15), 1 << 15) == 0  # -0.5 -> 0 (gemmlowp's nudge 1 - 2**30 for negatives)
    assert f(3 << 14, 1 << 16) == 2  # 1.5 -> 2
    assert f(-(3 << 14), 1 << 16) == -1  # -1.5 -> -1
    assert f(0, INT32_MIN) == 0


def test_rounding_divide_by_pot_edges():
    f = fp.rdbpot
    assert [int(f(x, 1)) for x in (5, -5, 4, -4, 3, -3)] == [3, -3, 2, -2, 2, -2]  # ties away from zero
    assert f(INT32_MIN, 31) == -1 and f(INT32_MAX, 31) == 1 and f(-(1 << 30), 31) == -1 and f((1 << 30) - 1, 31) == 0
    assert f(12345, 0) == 12345


def test_saturating_multiply_by_pot_edges():
    f = fp.saturating_rounding_multiply_by_pot
    assert f((1 << 29) - 1, 2) == (1 << 31) - 4
    assert f(1 << 29, 2) == INT32_MAX  # above the threshold 2**29 - 1: saturates
    assert f(-(1 << 29) + 1, 2) == -(1 << 31) + 4 and f(-(1 << 29), 2) == INT32_MIN
    assert f(INT32_MIN, -31) == -1 and f(7, 0) == 7


def test_rounding_half_sum_and_clz():
    assert fp.rounding_half_sum(INT32_MAX, INT32_MAX) == INT32_MAX
    assert fp.rounding_half_sum(INT32_MIN, INT32_MIN) == INT32_MIN
    assert fp.rounding_half_sum(0, INT32_MAX) == 1 << 30  # (2**31 - 1 + 1) / 2
    assert fp.rounding_half_sum(-1, -2) == -2 and fp.rounding_half_sum(1, 2) == 2
    assert list(fp.count_leading_zeros32([0, 1, INT32_MAX, INT32_MIN, -1, 1 << 19])) == [32, 31, 1, 0, 0, 12]


def test_fixed_point_functions_exact_identities():
    a = np.array([INT32_MIN + 1, -(1 << 27), -12345, -1, 1, 12345, 1 << 27, INT32_MAX], dtype=np.int64)
    assert fp.exp_on_negative_values(0, 5) == INT32_MAX  # exp(0) is One()
    assert fp.exp_on_negative_values(INT32_MIN, 6) == 0  # below -32 with 6 integer bits: clamped to 0
    assert fp.logistic(0, 4) == 1 << 30 and fp.tanh(0, 4) == 0
    assert np.array_equal(fp.logistic(a, 4) + fp.logistic(-a, 4), np.full(a.shape, INT32_MAX))
    assert np.array_equal(fp.tanh(-a, 4), -fp.tanh(a, 4))
    assert fp.one_over_one_plus_x_for_x_in_0_1(0) == INT32_MAX  # 1 / (1 + 0), saturated at One()
    scale, bits = fp.get_reciprocal(1 << 19, 12)  # 1.0 in Q12.19
    assert (int(scale), int(bits)) == (INT32_MAX, 0)
    # vectorized == elementwise, also on the int32 extremes
    assert np.array_equal(fp.tanh(a, 4), [int(fp.tanh(int(v), 4)) for v in a])


def test_int16_primitives_edges():
    assert fp.srdhm_16(-32768, -32768) == 32767
    assert fp.srdhm_16(3, 16384) == 2 and fp.srdhm_16(-3, 16384) == -1  # 1.5 -> 2, -1.5 -> -1
    assert fp.saturating_doubling_high_mul_16(3, 16384) == 1  # SQDMULH truncates: 1.5 -> 1
    assert fp.saturating_doubling_high_mul_16(-3, 16384) == -1  # -1.5 -> -1 (toward zero)
    assert fp.saturating_doubling_high_mul_16(-32768, -32768) == 32767
    assert fp.saturating_left_shift_16(20000, 1) == 32767 and fp.saturating_left_shift_16(-20000, 1) == -32768
    assert [int(fp.rdbpot_16(x, 2)) for x in (6, -6, 5, -5)] == [2, -2, 1, -1]
    assert fp.rdbpot_16(0, 16) == 1  # the C template's int16 mask wraps to -1 for exponents >= 16
    assert fp.downscale_int32_to_int16_multiplier(INT32_MAX) == 32767
    assert fp.downscale_int32_to_int16_multiplier(1 << 30) == 16384
    assert fp.downscale_int32_to_int16_multiplier((1 << 30) + (1 << 15)) == 16385  # rounds half up


def test_logistic_tanh_input_params_hand_derived():
    """Input scale 1/16: 2**-4 * 2**27 = 2**23 -> frexp (0.5, 24) -> multiplier 2**30, shift 24;
    radius floor(15 * 2**27 / 2**24) = 120."""
    assert input_params(1 / 16) == (1 << 30, 24, 120)


def test_add_multipliers_hand_derived():
    """Equal scales 1.0: input multipliers 0.5 -> (2**30, 0); output 2 / 2**20 = 2**-19 -> (2**30, -18)."""
    assert multipliers(1.0, 1.0, 1.0, False) == ((1 << 30, 0), (1 << 30, 0), (1 << 30, -18))
    assert multipliers(1.0, 1.0, 1.0, True) == ((1 << 30, 0), (1 << 30, 0), (1 << 30, -18))
