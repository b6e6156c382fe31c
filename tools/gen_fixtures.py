#!/usr/bin/env python3
"""Generate the committed int8 TFLite fixture models in ``tests/fixtures/models``.

Every fixture is a tiny ``tf.function`` built from seeded random (non-trivial) float weights,
converted with the TFLite converter to a fully-integer int8 model::

    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = <seeded random data, range differs per fixture>
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8     # tf.float32 for the QUANTIZE/DEQUANTIZE fixtures
    converter.inference_output_type = tf.int8    # idem

The fixtures together cover every operator (and the tricky parameter variants: strides, padding,
dilation, depth multipliers, broadcasting, fused activations, partial pooling windows, ...) that
mcuforge supports.  The tests run mcuforge's numpy reference on each fixture and compare it
bit-exactly with the TFLite Micro interpreter; ``tools/check_fixtures.py`` checks that TFLM can
load and run every fixture.

After converting, the script reads the operator codes of each produced file and

* fails if an operator the fixture is meant to exercise (``expect``) is missing (e.g. because a
  newer converter folds it away), and
* writes ``MANIFEST.json``: a list of ``{"name", "file", "ops", "covers"}``.

A few variants the converter cannot emit (softmax ``beta != 1``; SQUEEZE, which it always rewrites to
RESHAPE; CONV_2D / DEPTHWISE_CONV_2D without a bias input) are produced by a small, documented
post-conversion edit of the converted flatbuffer (``patch=`` in the fixture table, using
``tensorflow.lite.tools.flatbuffer_utils``); the "covers" text of those fixtures says so, and the
edited models still run in TFLM.

Everything is deterministic: each fixture's weights and calibration data come from a numpy
generator seeded with the CRC32 of the fixture name, and the TF seeds are fixed, so rerunning
the script reproduces the same files (for the same TensorFlow version; fixtures were generated
with TensorFlow 2.21).

Regenerate (tensorflow is only needed here, never by the tests; ``pip install .[fixtures]``
provides it)::

    python tools/gen_fixtures.py                       # all fixtures -> tests/fixtures/models
    python tools/gen_fixtures.py --only conv_2d        # only fixtures whose name contains "conv_2d"
    python tools/gen_fixtures.py --out /tmp/models     # somewhere else
    python tools/gen_fixtures.py --list                # list the fixture names and exit

(In the mcuforge dev environment: ``/opt/venv-tf/bin/python tools/gen_fixtures.py``.)
Then check that TFLM runs them all: ``python3 tools/check_fixtures.py``.

With ``--only`` the manifest entries of the other fixtures already present in the manifest are kept.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "tests" / "fixtures" / "models"
N_CALIB = 48  # representative-dataset samples per fixture

tf = None  # imported lazily in main() so that --help / --list work without tensorflow


# --------------------------------------------------------------------------------------------
# fixture table
# --------------------------------------------------------------------------------------------


@dataclass
class Fixture:
    name: str
    covers: str
    inputs: list  # list of input shapes
    ranges: list  # per input (lo, hi) of the representative data
    build: Callable  # build(W) -> fn(*inputs) -> output tensor or tuple of tensors
    expect: list  # TFLite builtin op names that must be present in the converted model
    float_io: bool = False
    per_channel_dense: bool = False
    patch: Callable | None = None  # patch(model_object) -> None, post-conversion option edit
    absent: list = field(default_factory=list)  # op names that must NOT be present
    group: str = ""  # "" for this file's table; <g> for tools/fixtures_<g>.py (MANIFEST.<g>.json)
    dynamic_batch: bool = False  # inputs' batch dimension unknown (None) as in Keras exports
    int16x8: bool = False  # 16x8: EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8, int16 I/O
    resource_variables: bool = False  # the function keeps state in tf.Variables (VAR_HANDLE, CALL_ONCE, ...)


FIXTURES: list[Fixture] = []
_GROUP = ""  # the group of the fixture table being loaded (see load_groups)


def fixture(name, covers, inputs, ranges, expect, **kw):
    def deco(build):
        if any(f.name == name for f in FIXTURES):
            raise ValueError(f"duplicate fixture {name}")
        FIXTURES.append(Fixture(name, covers, [tuple(s) for s in inputs], list(ranges), build,
                                list(expect), group=_GROUP, **kw))
        return build

    return deco


def load_groups() -> None:
    """More fixture tables: every tools/fixtures_<group>.py registers its fixtures with `fixture`
    (from gen_fixtures import fixture, W, ...); their manifest is MANIFEST.<group>.json, so that
    tables written side by side do not edit one file. tests/conftest.py reads every MANIFEST*.json."""
    global _GROUP
    import importlib

    sys.modules.setdefault("gen_fixtures", sys.modules[__name__])
    for path in sorted(Path(__file__).resolve().parent.glob("fixtures_*.py")):
        _GROUP = path.stem.removeprefix("fixtures_")
        importlib.import_module(path.stem)
    _GROUP = ""


def manifest_name(group: str) -> str:
    return f"MANIFEST.{group}.json" if group else "MANIFEST.json"


class W:
    """Seeded random weights for one fixture."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def filt(self, *shape, ch_axes=(-1,), gain=1.0):
        """Random filter, He-like scale, with a different magnitude per output channel so that the
        per-channel quantization scales differ."""
        shape = tuple(shape)
        red = [a for a in range(len(shape)) if a not in [c % len(shape) for c in ch_axes]]
        fan_in = int(np.prod([shape[a] for a in red])) if red else 1
        w = self.rng.normal(0.0, gain * np.sqrt(2.0 / max(fan_in, 1)), size=shape)
        ch_shape = [shape[a] if a in [c % len(shape) for c in ch_axes] else 1 for a in range(len(shape))]
        w = w * self.rng.uniform(0.25, 2.0, size=ch_shape)
        return w.astype(np.float32)

    def bias(self, n, scale=0.3):
        return self.rng.normal(0.0, scale, size=(n,)).astype(np.float32)

    def uniform(self, shape, lo, hi):
        return self.rng.uniform(lo, hi, size=shape).astype(np.float32)


def conv(x, w, stride=1, padding="SAME", dil=1):
    s = (1, stride, stride, 1) if isinstance(stride, int) else (1, stride[0], stride[1], 1)
    d = (1, dil, dil, 1)
    return tf.nn.conv2d(x, w, strides=s, padding=padding, dilations=d)


def dwconv(x, w, stride=1, padding="SAME", dil=1):
    s = [1, stride, stride, 1]
    return tf.raw_ops.DepthwiseConv2dNative(input=x, filter=w, strides=s, padding=padding,
                                            dilations=[1, dil, dil, 1])


def act(x, a):
    if a in (None, "none"):
        return x
    return {"relu": tf.nn.relu, "relu6": tf.nn.relu6}[a](x)


# ---- post-conversion option patches (the converter cannot emit these variants) --------------


def _ops_named(model, opname):
    from tensorflow.lite.python import schema_py_generated as schema

    code = getattr(schema.BuiltinOperator, opname)
    for sg in model.subgraphs:
        for op in sg.operators:
            oc = model.operatorCodes[op.opcodeIndex]
            if max(oc.builtinCode, oc.deprecatedBuiltinCode) == code:
                yield op


def patch_softmax_beta(beta):
    def patch(model):
        for op in _ops_named(model, "SOFTMAX"):
            op.builtinOptions.beta = float(beta)

    return patch


def _drop_unused_tensors(model):
    """Remove tensors no operator / subgraph input / output refers to any more (after a patch removed
    an operator input) and renumber the tensor indices."""
    for sg in model.subgraphs:
        used = set(int(i) for i in sg.inputs) | set(int(i) for i in sg.outputs)
        for op in sg.operators:
            used |= {int(i) for i in op.inputs if i >= 0} | {int(i) for i in op.outputs if i >= 0}
            if op.intermediates is not None:
                used |= {int(i) for i in op.intermediates}
        keep = [i for i in range(len(sg.tensors)) if i in used]
        remap = {old: new for new, old in enumerate(keep)}

        def rm(idx):
            return [remap[int(i)] if i >= 0 else -1 for i in idx]

        sg.tensors = [sg.tensors[i] for i in keep]
        sg.inputs, sg.outputs = rm(sg.inputs), rm(sg.outputs)
        for op in sg.operators:
            op.inputs, op.outputs = rm(op.inputs), rm(op.outputs)
            if op.intermediates is not None:
                op.intermediates = rm(op.intermediates)


def patch_reshape_to_squeeze(squeeze_dims):
    """The converter canonicalizes every SQUEEZE to RESHAPE; turn the RESHAPE back into the SQUEEZE it
    was (same input/output tensors, SqueezeOptions.squeeze_dims, shape operand removed)."""

    def patch(model):
        from tensorflow.lite.python import schema_py_generated as schema

        ops = list(_ops_named(model, "RESHAPE"))
        assert ops, "no RESHAPE to turn into SQUEEZE"
        for op in ops:
            oc = model.operatorCodes[op.opcodeIndex]
            oc.builtinCode = oc.deprecatedBuiltinCode = schema.BuiltinOperator.SQUEEZE
            oc.version = 1
            opts = schema.SqueezeOptionsT()
            opts.squeezeDims = list(squeeze_dims)
            op.builtinOptionsType = schema.BuiltinOptions.SqueezeOptions
            op.builtinOptions = opts
            op.inputs = [int(op.inputs[0])]
        _drop_unused_tensors(model)

    return patch


def patch_drop_bias(opname):
    """The converter always gives CONV_2D / DEPTHWISE_CONV_2D a (zero) bias tensor; drop it so the
    operator has only 2 inputs (bias is optional in the schema and in TFLM)."""

    def patch(model):
        ops = list(_ops_named(model, opname))
        assert ops
        for op in ops:
            op.inputs = [int(i) for i in op.inputs[:2]]
        _drop_unused_tensors(model)

    return patch


# ============================== CONV_2D =====================================================

def _conv_fixture(name, covers, in_shape, kh, kw, cout, stride=1, padding="SAME", dil=1, a=None,
                  bias=True, rng=(-1.0, 1.0), extra_expect=(), patch=None):
    @fixture(name, covers, [in_shape], [rng], ["CONV_2D", *extra_expect], patch=patch)
    def _(W):
        w = W.filt(kh, kw, in_shape[-1], cout)
        b = W.bias(cout)

        def f(x):
            y = conv(x, w, stride, padding, dil)
            if bias:
                y = tf.nn.bias_add(y, b)
            return act(y, a)

        return f


_conv_fixture("conv_2d_1x1_valid_s1", "1x1 kernel, 8->16 ch, stride 1, VALID, bias, no activation",
              (1, 6, 6, 8), 1, 1, 16, 1, "VALID", rng=(-2.0, 2.0))
_conv_fixture("conv_2d_3x3_same_s1_relu", "3x3, 3->8 ch, stride 1, SAME, fused RELU",
              (1, 8, 8, 3), 3, 3, 8, 1, "SAME", a="relu", rng=(0.0, 1.0))
_conv_fixture("conv_2d_3x3_valid_s1", "3x3, 4->6 ch, stride 1, VALID, no activation",
              (1, 7, 7, 4), 3, 3, 6, 1, "VALID", rng=(-3.0, 1.5))
_conv_fixture("conv_2d_same_s2_relu6", "3x3, 3->8 ch, stride 2, SAME on odd 9x9 input (asymmetric pad), RELU6",
              (1, 9, 9, 3), 3, 3, 8, 2, "SAME", a="relu6", rng=(-1.0, 2.0))
_conv_fixture("conv_2d_3x3_valid_s2", "3x3, 5->8 ch, stride 2, VALID on even 10x10 input",
              (1, 10, 10, 5), 3, 3, 8, 2, "VALID", rng=(-0.5, 0.5))
_conv_fixture("conv_2d_3x3_same_s2_even", "3x3, 4->4 ch, stride 2, SAME on even 8x8 input (pad only bottom/right)",
              (1, 8, 8, 4), 3, 3, 4, 2, "SAME", a="relu", rng=(-4.0, 4.0))
_conv_fixture("conv_2d_dil2_same", "3x3, dilation 2, stride 1, SAME, 4->8 ch",
              (1, 9, 9, 4), 3, 3, 8, 1, "SAME", dil=2, rng=(-1.0, 3.0))
_conv_fixture("conv_2d_dil2_valid_relu", "3x3, dilation 2, stride 1, VALID, 3->6 ch, RELU",
              (1, 10, 10, 3), 3, 3, 6, 1, "VALID", dil=2, a="relu", rng=(-2.0, 0.5))
_conv_fixture("conv_2d_1ch_5x5_same", "5x5 kernel, single input channel 1->8, SAME, RELU6",
              (1, 12, 12, 1), 5, 5, 8, 1, "SAME", a="relu6", rng=(0.0, 4.0))
_conv_fixture("conv_2d_3x1_same", "non-square 3x1 kernel, 6->6 ch, SAME, stride 1",
              (1, 8, 6, 6), 3, 1, 6, 1, "SAME", rng=(-1.0, 1.0))
_conv_fixture("conv_2d_1x3_s2x1_valid", "non-square 1x3 kernel, stride (2,1), VALID, 4->5 ch",
              (1, 9, 8, 4), 1, 3, 5, (2, 1), "VALID", rng=(-0.25, 0.75))
_conv_fixture("conv_2d_kws_10x4_s2_same_relu", "KWS first layer: 49x10x1 input, 10x4 kernel, stride 2, SAME, 1->16 ch, RELU",
              (1, 49, 10, 1), 10, 4, 16, 2, "SAME", a="relu", rng=(-6.0, 6.0))
_conv_fixture("conv_2d_nobias_1x1_relu", "1x1, 8->4 ch, no bias, fused RELU",
              (1, 5, 5, 8), 1, 1, 4, 1, "VALID", bias=False, a="relu", rng=(-2.0, 2.0))
_conv_fixture("conv_2d_nobias_3x3_same", "3x3, 4->8 ch, SAME, no bias: the converter still emits a zero int32 "
              "bias tensor", (1, 6, 6, 4), 3, 3, 8, 1, "SAME", bias=False, rng=(-1.0, 1.0))
_conv_fixture("conv_2d_nobias_2inputs", "3x3, 4->8 ch, SAME, relu, bias input omitted (operator has 2 inputs; the "
              "converter's zero bias tensor is removed by a post-conversion edit; TFLM runs it, desktop TFLite "
              "refuses quantized conv without bias)", (1, 6, 6, 4), 3, 3, 8, 1,
              "SAME", bias=False, a="relu", rng=(-1.0, 2.0), patch=patch_drop_bias("CONV_2D"))
_conv_fixture("conv_2d_16ch_same_relu6", "3x3, 16->16 ch, SAME, stride 1, RELU6 (larger accumulations)",
              (1, 6, 6, 16), 3, 3, 16, 1, "SAME", a="relu6", rng=(0.0, 6.0))


@fixture("conv_2d_float_io", "CONV_2D with float32 model input/output: QUANTIZE at the input, DEQUANTIZE at the output",
         [(1, 6, 6, 3)], [(-1.0, 1.0)], ["QUANTIZE", "CONV_2D", "DEQUANTIZE"], float_io=True)
def _(W):
    w, b = W.filt(3, 3, 3, 4), W.bias(4)
    return lambda x: tf.nn.relu(tf.nn.bias_add(conv(x, w), b))


# ============================== DEPTHWISE_CONV_2D ===========================================

def _dw_fixture(name, covers, in_shape, k, mult, stride=1, padding="SAME", dil=1, a=None,
                rng=(-1.0, 1.0), bias=True, patch=None):
    @fixture(name, covers, [in_shape], [rng], ["DEPTHWISE_CONV_2D"], patch=patch)
    def _(W):
        c = in_shape[-1]
        w = W.filt(k, k, c, mult, ch_axes=(-2, -1))
        b = W.bias(c * mult)

        def f(x):
            y = dwconv(x, w, stride, padding, dil)
            if bias:
                y = tf.nn.bias_add(y, b)
            return act(y, a)

        return f


_dw_fixture("depthwise_conv_2d_mult1_s1_same_relu", "3x3, 8 ch, multiplier 1, stride 1, SAME, RELU",
            (1, 8, 8, 8), 3, 1, 1, "SAME", a="relu", rng=(-1.0, 1.0))
_dw_fixture("depthwise_conv_2d_mult1_s2_valid", "3x3, 6 ch, multiplier 1, stride 2, VALID",
            (1, 9, 9, 6), 3, 1, 2, "VALID", rng=(-2.0, 1.0))
_dw_fixture("depthwise_conv_2d_mult1_s2_same_relu6", "3x3, 8 ch, multiplier 1, stride 2, SAME on even input, RELU6",
            (1, 10, 10, 8), 3, 1, 2, "SAME", a="relu6", rng=(0.0, 3.0))
_dw_fixture("depthwise_conv_2d_mult2_s1_valid", "3x3, 4 ch, multiplier 2 (8 out ch), stride 1, VALID",
            (1, 7, 7, 4), 3, 2, 1, "VALID", rng=(-0.5, 1.5))
_dw_fixture("depthwise_conv_2d_mult2_dil2_valid", "3x3, 3 ch, multiplier 2, dilation 2, VALID",
            (1, 10, 10, 3), 3, 2, 1, "VALID", dil=2, rng=(-3.0, 3.0))
_dw_fixture("depthwise_conv_2d_mult3_s2_same_relu6", "3x3, 3 ch, multiplier 3 (9 out ch), stride 2, SAME on odd input, RELU6",
            (1, 9, 9, 3), 3, 3, 2, "SAME", a="relu6", rng=(-1.0, 2.0))
_dw_fixture("depthwise_conv_2d_mult1_dil2_same_relu", "3x3, 5 ch, multiplier 1, dilation 2, SAME, RELU",
            (1, 9, 9, 5), 3, 1, 1, "SAME", dil=2, a="relu", rng=(-1.0, 1.0))
_dw_fixture("depthwise_conv_2d_1ch_mult8_same", "3x3, single input channel, multiplier 8, SAME",
            (1, 8, 8, 1), 3, 8, 1, "SAME", rng=(0.0, 2.0))
_dw_fixture("depthwise_conv_2d_5x5_mult1_same_nobias", "5x5, 16 ch, multiplier 1, SAME, no bias (converter "
            "emits a zero bias tensor)", (1, 6, 6, 16), 5, 1, 1, "SAME", rng=(-1.0, 1.0), bias=False)
_dw_fixture("depthwise_conv_2d_mult2_nobias_2inputs", "3x3, 4 ch, multiplier 2, SAME, bias input omitted (2 inputs; "
            "zero bias removed by a post-conversion edit)", (1, 6, 6, 4), 3, 2, 1, "SAME", rng=(-2.0, 1.0),
            bias=False, patch=patch_drop_bias("DEPTHWISE_CONV_2D"))


# ============================== FULLY_CONNECTED =============================================

def _fc_fixture(name, covers, in_shape, nout, bias=True, a=None, rng=(-1.0, 1.0), per_channel=False):
    # TF 2.21 quantizes dense weights per-channel by default; per-tensor (the classic TFLM layout) is
    # obtained with _experimental_disable_per_channel_quantization_for_dense_layers=True.
    @fixture(name, covers, [in_shape], [rng], ["FULLY_CONNECTED"], per_channel_dense=per_channel)
    def _(W):
        w = W.filt(in_shape[-1], nout)
        b = W.bias(nout)

        def f(x):
            y = tf.matmul(x, w)
            if bias:
                y = y + b
            return act(y, a)

        return f


_fc_fixture("fully_connected_bias", "[1,32]x[32,16] with bias, per-tensor weights, no activation",
            (1, 32), 16, rng=(-2.0, 2.0))
_fc_fixture("fully_connected_nobias", "[1,24]x[24,10] without bias (optional bias input -1), per-tensor weights",
            (1, 24), 10, bias=False, rng=(-1.0, 3.0))
_fc_fixture("fully_connected_relu", "[1,20]x[20,12] with bias, fused RELU",
            (1, 20), 12, a="relu", rng=(0.0, 1.0))
_fc_fixture("fully_connected_relu6_batch2", "batch of 2 rows [2,16]x[16,8], bias, fused RELU6",
            (2, 16), 8, a="relu6", rng=(-3.0, 3.0))
_fc_fixture("fully_connected_per_channel", "[1,32]x[32,16] with bias, PER-CHANNEL weights (TF 2.21 default, "
            "_experimental_disable_per_channel_quantization_for_dense_layers=False)",
            (1, 32), 16, rng=(-1.0, 2.0), per_channel=True)
_fc_fixture("fully_connected_per_channel_nobias_relu", "[1,20]x[20,12] PER-CHANNEL weights, no bias, fused RELU",
            (1, 20), 12, bias=False, a="relu", rng=(-3.0, 1.0), per_channel=True)
_fc_fixture("fully_connected_per_channel_rank3", "rank-3 [1,4,10]x[10,6] PER-CHANNEL weights, bias (keep_num_dims)",
            (1, 4, 10), 6, rng=(-1.0, 1.0), per_channel=True)


@fixture("fully_connected_rank3", "Dense on a rank-3 [1,6,12] tensor -> [1,6,8] (whatever the converter emits: "
         "FC keep_num_dims or reshapes)", [(1, 6, 12)], [(-1.0, 1.0)], ["FULLY_CONNECTED"])
def _(W):
    w, b = W.filt(12, 8), W.bias(8)
    return lambda x: tf.nn.relu(tf.matmul(x, w) + b)


@fixture("fully_connected_rank3_nobias", "rank-3 [1,5,10] input, no bias -> [1,5,6]", [(1, 5, 10)], [(-2.0, 1.0)],
         ["FULLY_CONNECTED"])
def _(W):
    w = W.filt(10, 6)
    return lambda x: tf.matmul(x, w)


# ============================== pooling =====================================================

def _pool_fixture(name, covers, kind, in_shape, k, s, padding, rng):
    op = "AVERAGE_POOL_2D" if kind == "avg" else "MAX_POOL_2D"

    @fixture(name, covers, [in_shape], [rng], [op])
    def _(W):
        fn = tf.nn.avg_pool2d if kind == "avg" else tf.nn.max_pool2d
        return lambda x: fn(x, ksize=k, strides=s, padding=padding)


for _kind, _op in (("avg", "average_pool_2d"), ("max", "max_pool_2d")):
    _pool_fixture(f"{_op}_2x2_s2_valid", "2x2 window, stride 2, VALID", _kind, (1, 8, 8, 4), 2, 2, "VALID", (-1.0, 2.0))
    _pool_fixture(f"{_op}_3x3_s1_same", "3x3 window, stride 1, SAME (partial windows at all borders)", _kind,
                  (1, 7, 7, 3), 3, 1, "SAME", (-3.0, 1.0))
    _pool_fixture(f"{_op}_3x3_s2_same_odd", "3x3 window, stride 2, SAME on odd 9x9 input (partial windows at edge)",
                  _kind, (1, 9, 9, 5), 3, 2, "SAME", (0.0, 5.0))
    _pool_fixture(f"{_op}_2x2_s2_same_odd", "2x2 window, stride 2, SAME on odd 7x7 input (partial last window)",
                  _kind, (1, 7, 7, 6), 2, 2, "SAME", (-0.5, 0.5))
    _pool_fixture(f"{_op}_global_5x5", "global pool: window = whole 5x5 H,W, VALID -> 1x1", _kind,
                  (1, 5, 5, 8), (5, 5), 1, "VALID", (-2.0, 2.0))
    _pool_fixture(f"{_op}_3x2_s1x2_valid", "non-square 3x2 window, stride (1,2), VALID", _kind,
                  (1, 6, 8, 4), (3, 2), (1, 2), "VALID", (-1.0, 1.0))


@fixture("average_pool_2d_relu_after_conv", "conv -> avgpool 2x2 -> relu (RELU fused into the AVERAGE_POOL_2D)",
         [(1, 8, 8, 3)], [(-1.0, 1.0)], ["CONV_2D", "AVERAGE_POOL_2D"], absent=["RELU"])
def _(W):
    w, b = W.filt(3, 3, 3, 4), W.bias(4)
    return lambda x: tf.nn.relu(tf.nn.avg_pool2d(conv(x, w) + b, 2, 2, "VALID"))


# ============================== ADD / SUB / MUL =============================================

def _bin(kind, a, b):
    return {"add": tf.add, "sub": tf.subtract, "mul": tf.multiply}[kind](a, b)


def _elt_fixture(name, covers, kind, sa, sb, ra, rb, a=None, extra_expect=()):
    @fixture(name, covers, [sa, sb], [ra, rb], [kind.upper(), *extra_expect])
    def _(W):
        return lambda x, y: act(_bin(kind, x, y), a)


def _elt_const_fixture(name, covers, kind, sa, cshape, ra, rc, a=None, const_first=False):
    @fixture(name, covers, [sa], [ra], [kind.upper()])
    def _(W):
        c = W.uniform(cshape, *rc)
        if const_first:
            return lambda x: act(_bin(kind, c, x), a)
        return lambda x: act(_bin(kind, x, c), a)


for _k in ("add", "sub", "mul"):
    _elt_fixture(f"{_k}_same_shape", "two [1,4,4,8] inputs with different scales/zero points", _k,
                 (1, 4, 4, 8), (1, 4, 4, 8), (-1.0, 1.0), (-0.2, 3.0))
    _elt_fixture(f"{_k}_broadcast_1x1xC", "[1,4,4,8] op [1,1,1,8] (per-channel broadcast)", _k,
                 (1, 4, 4, 8), (1, 1, 1, 8), (-2.0, 2.0), (0.0, 1.0))
    _elt_fixture(f"{_k}_broadcast_hw1", "[1,4,4,8] op [1,4,4,1] (broadcast over channels)", _k,
                 (1, 4, 4, 8), (1, 4, 4, 1), (-1.0, 0.5), (-4.0, 4.0))
    _elt_fixture(f"{_k}_broadcast_both", "[1,4,1,6] op [1,1,5,6] (both operands broadcast)", _k,
                 (1, 4, 1, 6), (1, 1, 5, 6), (-0.5, 1.5), (-1.0, 1.0))
    _elt_fixture(f"{_k}_broadcast_rank2", "[3,8] op [8] style: [1,3,8] op [1,1,8] rank-3 broadcast", _k,
                 (1, 3, 8), (1, 1, 8), (-3.0, 1.0), (0.5, 2.0))
    _elt_const_fixture(f"{_k}_const_vector", "[1,4,4,8] op constant [8] vector", _k,
                       (1, 4, 4, 8), (8,), (-1.0, 1.0), (-0.7, 1.3))
    _elt_const_fixture(f"{_k}_const_full", "constant [1,4,4,3] op input [1,4,4,3] (constant as first operand)", _k,
                       (1, 4, 4, 3), (1, 4, 4, 3), (0.0, 2.0), (-2.0, 0.5), const_first=True)
    _elt_fixture(f"{_k}_relu", "same shape [1,5,5,4], fused RELU", _k,
                 (1, 5, 5, 4), (1, 5, 5, 4), (-1.0, 1.0), (-1.0, 2.0), a="relu")
    _elt_fixture(f"{_k}_broadcast_relu6", "[1,5,5,4] op [1,1,1,4], fused RELU6", _k,
                 (1, 5, 5, 4), (1, 1, 1, 4), (-3.0, 5.0), (-1.0, 1.0), a="relu6")


@fixture("mul_const_scalar", "[1,6,6,4] * scalar constant 0.37", [(1, 6, 6, 4)], [(-2.0, 3.0)], ["MUL"])
def _(W):
    return lambda x: x * 0.37


@fixture("add_self_square_mul", "x*x (MUL with the same tensor twice) then + x (ADD)", [(1, 4, 4, 4)], [(-1.5, 1.5)],
         ["MUL", "ADD"])
def _(W):
    return lambda x: x * x + x


# ============================== SOFTMAX =====================================================

@fixture("softmax_1x10", "softmax over last axis of [1,10]", [(1, 10)], [(-4.0, 4.0)], ["SOFTMAX"])
def _(W):
    return lambda x: tf.nn.softmax(x, axis=-1)


@fixture("softmax_1x4x6", "softmax over last axis of [1,4,6]", [(1, 4, 6)], [(-2.0, 6.0)], ["SOFTMAX"])
def _(W):
    return lambda x: tf.nn.softmax(x, axis=-1)


@fixture("softmax_1x3x3x5", "softmax over last axis of a rank-4 [1,3,3,5] tensor", [(1, 3, 3, 5)], [(-8.0, 8.0)],
         ["SOFTMAX"])
def _(W):
    return lambda x: tf.nn.softmax(x, axis=-1)


@fixture("softmax_after_fc", "FC -> softmax of [1,12] (classifier head)", [(1, 16)], [(-1.0, 1.0)],
         ["FULLY_CONNECTED", "SOFTMAX"])
def _(W):
    w, b = W.filt(16, 12), W.bias(12)
    return lambda x: tf.nn.softmax(tf.matmul(x, w) + b)


@fixture("softmax_beta_0p5", "softmax over [1,10] with beta=0.5 (converter always emits beta=1: beta is set by a "
         "post-conversion option edit; the model is otherwise converter output)", [(1, 10)], [(-5.0, 3.0)],
         ["SOFTMAX"], patch=patch_softmax_beta(0.5))
def _(W):
    return lambda x: tf.nn.softmax(x, axis=-1)


@fixture("softmax_1001_classes", "MobileNet-like classifier with 1001 classes: conv3x3 s2 relu6 -> dw3x3 relu6 -> "
         "conv1x1 relu6 -> global mean -> FC 1001 -> int8 SOFTMAX over 1001 elements (rows of 512+ elements: TFLM "
         "aborts only on a row whose sum of exponentials reaches 512, which real logits do not reach)",
         [(1, 16, 16, 3)], [(-1.0, 1.0)], ["CONV_2D", "DEPTHWISE_CONV_2D", "MEAN", "FULLY_CONNECTED", "SOFTMAX"])
def _(W):
    w1, b1 = W.filt(3, 3, 3, 16), W.bias(16)
    d, db = W.filt(3, 3, 16, 1, ch_axes=(-2, -1)), W.bias(16)
    p, pb = W.filt(1, 1, 16, 32), W.bias(32)
    fw, fb = W.filt(32, 1001), W.bias(1001, 0.1)

    def f(x):
        y = tf.nn.relu6(conv(x, w1, 2) + b1)  # [1,8,8,16]
        y = tf.nn.relu6(dwconv(y, d) + db)
        y = tf.nn.relu6(conv(y, p) + pb)
        y = tf.reduce_mean(y, axis=[1, 2])  # [1,32]
        return tf.nn.softmax(tf.matmul(y, fw) + fb)

    return f


@fixture("softmax_beta_2p5", "softmax over [1,4,6] with beta=2.5 (set by a post-conversion option edit)",
         [(1, 4, 6)], [(-1.0, 1.0)], ["SOFTMAX"], patch=patch_softmax_beta(2.5))
def _(W):
    return lambda x: tf.nn.softmax(x, axis=-1)


# ============================== shape ops ===================================================

@fixture("reshape_4d_to_2d", "RESHAPE [1,4,4,8] -> [1,128]", [(1, 4, 4, 8)], [(-1.0, 2.0)], ["RESHAPE"])
def _(W):
    w, b = W.filt(3, 3, 8, 8), W.bias(8)
    # reshape alone would be the whole model (input == output); put a conv in front
    return lambda x: tf.reshape(conv(x, w) + b, (1, 128))


@fixture("reshape_4d_to_3d", "RESHAPE [1,4,6,4] -> [1,8,12] (after an ADD so it is not a no-op model)",
         [(1, 4, 6, 4)], [(-2.0, 1.0)], ["RESHAPE"])
def _(W):
    c = W.uniform((4,), -0.5, 0.5)
    return lambda x: tf.reshape(x + c, (1, 8, 12))


@fixture("squeeze_hw", "SQUEEZE axes 1,2 of [1,1,1,8] after global avg pool (the converter always emits RESHAPE "
         "for squeeze; turned back into SQUEEZE by a post-conversion edit)", [(1, 4, 4, 8)], [(-1.0, 1.0)],
         ["SQUEEZE"], absent=["RESHAPE"], patch=patch_reshape_to_squeeze([1, 2]))
def _(W):
    return lambda x: tf.squeeze(tf.nn.avg_pool2d(x, 4, 1, "VALID"), axis=[1, 2])


@fixture("squeeze_axis1", "SQUEEZE axis 1 of [1,1,6,5] after a conv (RESHAPE turned back into SQUEEZE by a "
         "post-conversion edit)", [(1, 3, 6, 2)], [(-1.0, 1.0)], ["SQUEEZE"], absent=["RESHAPE"],
         patch=patch_reshape_to_squeeze([1]))
def _(W):
    w, b = W.filt(3, 1, 2, 5), W.bias(5)
    return lambda x: tf.squeeze(conv(x, w, 1, "VALID") + b, axis=[1])


@fixture("squeeze_as_reshape", "what the converter really emits for tf.squeeze(axis=[1,2]) of [1,1,1,6]: RESHAPE",
         [(1, 3, 3, 6)], [(0.0, 2.0)], ["RESHAPE"])
def _(W):
    return lambda x: tf.squeeze(tf.nn.max_pool2d(x, 3, 1, "VALID"), axis=[1, 2])


def _concat_fixture(name, covers, shapes, ranges, axis):
    @fixture(name, covers, shapes, ranges, ["CONCATENATION"])
    def _(W):
        return lambda *xs: tf.concat(list(xs), axis=axis)


_concat_fixture("concatenation_axis_last_2in", "2 inputs [1,4,4,3]+[1,4,4,5] concat axis -1, different input ranges",
                [(1, 4, 4, 3), (1, 4, 4, 5)], [(-1.0, 1.0), (-2.0, 2.0)], -1)
_concat_fixture("concatenation_axis1_3in", "3 inputs concat on axis 1 (H): [1,2,4,3]+[1,3,4,3]+[1,1,4,3]",
                [(1, 2, 4, 3), (1, 3, 4, 3), (1, 1, 4, 3)], [(-1.0, 1.0), (0.0, 3.0), (-0.5, 0.25)], 1)
_concat_fixture("concatenation_axis2_2in", "2 inputs concat on axis 2 (W): [1,3,2,4]+[1,3,5,4]",
                [(1, 3, 2, 4), (1, 3, 5, 4)], [(-4.0, 4.0), (-1.0, 1.0)], 2)
_concat_fixture("concatenation_axis_last_3in_rank2", "3 rank-2 inputs [1,4]+[1,6]+[1,2] concat axis -1",
                [(1, 4), (1, 6), (1, 2)], [(-1.0, 1.0), (-1.0, 1.0), (-1.0, 1.0)], -1)


@fixture("concatenation_same_scale_after_conv", "two convs of the same input concatenated on channels (axis 3)",
         [(1, 6, 6, 3)], [(-1.0, 1.0)], ["CONV_2D", "CONCATENATION"])
def _(W):
    w1, b1, w2, b2 = W.filt(3, 3, 3, 4), W.bias(4), W.filt(1, 1, 3, 2), W.bias(2)
    return lambda x: tf.concat([tf.nn.relu(conv(x, w1) + b1), conv(x, w2) + b2], axis=3)


@fixture("pad_hw_asymmetric", "PAD H by (1,2) and W by (0,1), constant 0, input with non-zero zero point",
         [(1, 5, 5, 3)], [(0.5, 3.0)], ["PAD"])
def _(W):
    return lambda x: tf.pad(x, [[0, 0], [1, 2], [0, 1], [0, 0]])


@fixture("pad_hw_then_conv", "PAD H by (1,2), W by (2,1) then VALID conv (a SAME-equivalent pad would be folded "
         "into the conv)", [(1, 6, 6, 4)], [(-1.0, 1.0)], ["PAD", "CONV_2D"])
def _(W):
    w, b = W.filt(3, 3, 4, 4), W.bias(4)
    return lambda x: conv(tf.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]]), w, 1, "VALID") + b


@fixture("pad_channels_rank3", "PAD a rank-3 [1,4,6] tensor: (0,0),(2,0),(1,3)", [(1, 4, 6)], [(-3.0, -0.5)], ["PAD"])
def _(W):
    return lambda x: tf.pad(x, [[0, 0], [2, 0], [1, 3]])


@fixture("mean_hw_keepdims", "MEAN over axes 1,2 (H,W) keepdims=True of [1,5,5,8]", [(1, 5, 5, 8)], [(-1.0, 2.0)],
         ["MEAN"])
def _(W):
    return lambda x: tf.reduce_mean(x, axis=[1, 2], keepdims=True)


@fixture("mean_hw_nokeepdims", "MEAN over axes 1,2 (H,W) keepdims=False of [1,6,4,10] -> [1,10]", [(1, 6, 4, 10)],
         [(0.0, 4.0)], ["MEAN"])
def _(W):
    return lambda x: tf.reduce_mean(x, axis=[1, 2], keepdims=False)


@fixture("mean_channel_keepdims", "MEAN over the channel axis 3 keepdims=True of [1,4,4,6]", [(1, 4, 4, 6)],
         [(-2.0, 1.0)], ["MEAN"])
def _(W):
    return lambda x: tf.reduce_mean(x, axis=[3], keepdims=True)


@fixture("mean_channel_nokeepdims", "MEAN over the channel axis -1 keepdims=False of [1,3,5,7] -> [1,3,5]",
         [(1, 3, 5, 7)], [(-1.0, 1.0)], ["MEAN"])
def _(W):
    return lambda x: tf.reduce_mean(x, axis=[-1], keepdims=False)


@fixture("mean_hw_after_conv", "conv -> MEAN over H,W (different input/output scale)", [(1, 6, 6, 3)], [(-1.0, 1.0)],
         ["CONV_2D", "MEAN"])
def _(W):
    w, b = W.filt(3, 3, 3, 8), W.bias(8)
    return lambda x: tf.reduce_mean(tf.nn.relu(conv(x, w) + b), axis=[1, 2])


@fixture("mean_rank3_axis1", "MEAN over axis 1 of a rank-3 [1,8,6] tensor (time average)", [(1, 8, 6)],
         [(-2.0, 2.0)], ["MEAN"])
def _(W):
    return lambda x: tf.reduce_mean(x, axis=[1])


@fixture("transpose_0213", "TRANSPOSE perm (0,2,1,3) of [1,3,5,4]", [(1, 3, 5, 4)], [(-1.0, 1.0)], ["TRANSPOSE"])
def _(W):
    return lambda x: tf.transpose(x, (0, 2, 1, 3))


@fixture("transpose_0312", "TRANSPOSE perm (0,3,1,2) of [1,4,5,6] (NHWC->NCHW)", [(1, 4, 5, 6)], [(-0.5, 2.0)],
         ["TRANSPOSE"])
def _(W):
    return lambda x: tf.transpose(x, (0, 3, 1, 2))


@fixture("transpose_rank3_021", "TRANSPOSE perm (0,2,1) of rank-3 [1,6,4]", [(1, 6, 4)], [(-3.0, 3.0)],
         ["TRANSPOSE"])
def _(W):
    return lambda x: tf.transpose(x, (0, 2, 1))


@fixture("strided_slice_stride2", "x[:, ::2, 1:7:2, :] on [1,8,8,4] (strides 2)", [(1, 8, 8, 4)], [(-1.0, 1.0)],
         ["STRIDED_SLICE"])
def _(W):
    return lambda x: x[:, ::2, 1:7:2, :]


@fixture("strided_slice_masks", "x[:, 1:, :3, 2:] on [1,6,6,5] (begin/end masks)", [(1, 6, 6, 5)], [(-2.0, 0.5)],
         ["STRIDED_SLICE"])
def _(W):
    return lambda x: x[:, 1:, :3, 2:]


@fixture("strided_slice_masks_stride", "x[:, 1:, :5:2, 2:] on [1,6,6,5] (begin/end masks + stride 2)",
         [(1, 6, 6, 5)], [(-2.0, 0.5)], ["STRIDED_SLICE"])
def _(W):
    return lambda x: x[:, 1:, :5:2, 2:]


@fixture("strided_slice_shrink_axis", "x[:, 1, :, :] on [1,4,5,6] (shrink_axis_mask) -> [1,5,6]", [(1, 4, 5, 6)],
         [(-1.0, 3.0)], ["STRIDED_SLICE"])
def _(W):
    return lambda x: x[:, 1, :, :]


@fixture("strided_slice_negative", "x[:, -3:, ::-1, :] on [1,5,4,3] (negative begin, negative stride)",
         [(1, 5, 4, 3)], [(-1.0, 1.0)], ["STRIDED_SLICE"])
def _(W):
    return lambda x: x[:, -3:, ::-1, :]


@fixture("strided_slice_rank3_time", "x[:, 2:10:3, :] on rank-3 [1,12,5]", [(1, 12, 5)], [(0.0, 1.0)],
         ["STRIDED_SLICE"])
def _(W):
    return lambda x: x[:, 2:10:3, :]


def _resize_fixture(name, covers, in_shape, size, align_corners, half_pixel, rng):
    @fixture(name, covers, [in_shape], [rng], ["RESIZE_NEAREST_NEIGHBOR"])
    def _(W):
        return lambda x: tf.raw_ops.ResizeNearestNeighbor(images=x, size=size, align_corners=align_corners,
                                                          half_pixel_centers=half_pixel)


_resize_fixture("resize_nearest_neighbor_x2", "scale 2 [1,4,4,3]->[1,8,8,3], align_corners=False, "
                "half_pixel_centers=False", (1, 4, 4, 3), (8, 8), False, False, (-1.0, 1.0))
_resize_fixture("resize_nearest_neighbor_x2_half_pixel", "scale 2, align_corners=False, half_pixel_centers=True",
                (1, 4, 4, 3), (8, 8), False, True, (-2.0, 1.0))
_resize_fixture("resize_nearest_neighbor_x2_align_corners", "scale 2 [1,5,5,2]->[1,10,10,2], align_corners=True",
                (1, 5, 5, 2), (10, 10), True, False, (0.0, 3.0))
_resize_fixture("resize_nearest_neighbor_5x3_to_8x7", "non-integer scale [1,5,3,4]->[1,8,7,4], plain",
                (1, 5, 3, 4), (8, 7), False, False, (-1.0, 1.0))
_resize_fixture("resize_nearest_neighbor_5x3_to_8x7_half_pixel", "non-integer scale [1,5,3,4]->[1,8,7,4], "
                "half_pixel_centers=True", (1, 5, 3, 4), (8, 7), False, True, (-1.0, 1.0))
_resize_fixture("resize_nearest_neighbor_5x3_to_8x7_align_corners", "non-integer scale [1,5,3,4]->[1,8,7,4], "
                "align_corners=True", (1, 5, 3, 4), (8, 7), True, False, (-1.0, 1.0))
_resize_fixture("resize_nearest_neighbor_downscale", "downscale [1,9,7,2]->[1,4,3,2], half_pixel_centers=True",
                (1, 9, 7, 2), (4, 3), False, True, (-1.0, 1.0))


def _tconv_fixture(name, covers, in_shape, k, cout, stride, padding, bias, a=None, rng=(-1.0, 1.0)):
    @fixture(name, covers, [in_shape], [rng], ["TRANSPOSE_CONV"])
    def _(W):
        n, h, w_, cin = in_shape
        if padding == "SAME":
            oh, ow = h * stride, w_ * stride
        else:
            oh, ow = (h - 1) * stride + k, (w_ - 1) * stride + k
        wt = W.filt(k, k, cout, cin, ch_axes=(2,))
        b = W.bias(cout)

        def f(x):
            y = tf.nn.conv2d_transpose(x, wt, (n, oh, ow, cout), strides=stride, padding=padding)
            if bias:
                y = tf.nn.bias_add(y, b)
            return act(y, a)

        return f


_tconv_fixture("transpose_conv_s2_same_bias", "3x3, stride 2, SAME, 4->6 ch, with bias", (1, 4, 4, 4), 3, 6, 2,
               "SAME", True, rng=(-1.0, 2.0))
_tconv_fixture("transpose_conv_s2_same_nobias", "3x3, stride 2, SAME, 3->5 ch, no bias", (1, 5, 5, 3), 3, 5, 2,
               "SAME", False, rng=(-2.0, 1.0))
_tconv_fixture("transpose_conv_s2_valid_bias", "3x3, stride 2, VALID, 4->4 ch, with bias", (1, 4, 4, 4), 3, 4, 2,
               "VALID", True, rng=(0.0, 1.0))
_tconv_fixture("transpose_conv_s2_valid_nobias", "2x2, stride 2, VALID, 6->3 ch, no bias", (1, 3, 3, 6), 2, 3, 2,
               "VALID", False, rng=(-1.0, 1.0))
_tconv_fixture("transpose_conv_s1_same_bias_relu", "3x3, stride 1, SAME, 3->4 ch, bias, RELU after",
               (1, 5, 5, 3), 3, 4, 1, "SAME", True, a="relu", rng=(-1.0, 1.0))


# ============================== standalone activations ======================================

def _act_fixture(name, covers, fn, op, in_shape, rng, after_conv=False, absent=()):
    @fixture(name, covers, [in_shape], [rng], [op] + (["CONV_2D"] if after_conv else []), absent=list(absent))
    def _(W):
        if after_conv:
            w, b = W.filt(3, 3, in_shape[-1], 6), W.bias(6)
            return lambda x: fn(conv(x, w) + b)
        return lambda x: fn(x)


_act_fixture("relu_on_input", "standalone RELU directly on the quantized input (asymmetric range)",
             lambda x: tf.nn.relu(x), "RELU", (1, 4, 4, 8), (-1.0, 3.0))
_act_fixture("relu_on_input_negative_heavy", "standalone RELU on input with mostly negative range",
             lambda x: tf.nn.relu(x), "RELU", (1, 6, 10), (-5.0, 1.0))
_act_fixture("relu6_on_input", "standalone RELU6 directly on the input (range beyond 6)",
             lambda x: tf.nn.relu6(x), "RELU6", (1, 4, 4, 8), (-4.0, 9.0))
_act_fixture("leaky_relu_0p1", "LEAKY_RELU alpha=0.1 on the input", lambda x: tf.nn.leaky_relu(x, 0.1),
             "LEAKY_RELU", (1, 5, 5, 4), (-3.0, 2.0))
_act_fixture("leaky_relu_0p3", "LEAKY_RELU alpha=0.3 on the input", lambda x: tf.nn.leaky_relu(x, 0.3),
             "LEAKY_RELU", (1, 16, 8), (-1.0, 4.0))
_act_fixture("leaky_relu_0p2_after_conv", "conv -> LEAKY_RELU alpha=0.2", lambda x: tf.nn.leaky_relu(x, 0.2),
             "LEAKY_RELU", (1, 6, 6, 3), (-1.0, 1.0), after_conv=True)
_act_fixture("logistic_on_input", "LOGISTIC (sigmoid) on the input", lambda x: tf.sigmoid(x), "LOGISTIC", (1, 4, 4, 8),
             (-6.0, 6.0))
_act_fixture("logistic_after_conv", "conv -> LOGISTIC", lambda x: tf.sigmoid(x), "LOGISTIC", (1, 6, 6, 3), (-1.0, 1.0),
             after_conv=True)
_act_fixture("tanh_on_input", "TANH on the input", lambda x: tf.tanh(x), "TANH", (1, 4, 4, 8), (-3.0, 3.0))
_act_fixture("tanh_after_conv", "conv -> TANH", lambda x: tf.tanh(x), "TANH", (1, 6, 6, 3), (-2.0, 0.5), after_conv=True)
_act_fixture("hard_swish_on_input", "HARD_SWISH from x*relu6(x+3)/6 on the input", lambda x: x * tf.nn.relu6(x + 3.0)
             / 6.0, "HARD_SWISH", (1, 4, 4, 8), (-5.0, 5.0), absent=["MUL"])
_act_fixture("hard_swish_after_conv", "conv -> HARD_SWISH (x*relu6(x+3)*(1/6) pattern)",
             lambda x: x * tf.nn.relu6(x + 3.0) * (1.0 / 6.0), "HARD_SWISH", (1, 6, 6, 3), (-1.0, 1.0),
             after_conv=True, absent=["MUL"])


@fixture("relu6_after_concat", "CONCATENATION -> standalone RELU6 (not fused into the concat; output scale differs)",
         [(1, 4, 4, 3), (1, 4, 4, 2)], [(-2.0, 8.0), (-1.0, 1.0)], ["CONCATENATION", "RELU6"])
def _(W):
    return lambda x, y: tf.nn.relu6(tf.concat([x, y], axis=-1))


@fixture("relu_after_mean", "MEAN over W -> standalone RELU", [(1, 4, 3, 6)], [(-1.5, 1.5)], ["MEAN", "RELU"])
def _(W):
    return lambda x: tf.nn.relu(tf.reduce_mean(x, axis=[2]))


@fixture("max_pool_2d_fused_relu", "RELU after MAX_POOL_2D is fused into the pool (fused_activation_function=RELU)",
         [(1, 6, 6, 4)], [(-2.0, 1.0)], ["MAX_POOL_2D"], absent=["RELU"])
def _(W):
    return lambda x: tf.nn.relu(tf.nn.max_pool2d(x, 2, 2, "VALID"))


# ============================== QUANTIZE / DEQUANTIZE =======================================

@fixture("quantize_dequantize_float_io", "float32 model input/output: QUANTIZE (float->int8) at the input, "
         "DEQUANTIZE (int8->float) at the output around an ADD with a constant", [(1, 4, 4, 3)], [(-2.0, 5.0)],
         ["QUANTIZE", "DEQUANTIZE"], float_io=True)
def _(W):
    c = W.uniform((3,), -1.0, 1.0)
    return lambda x: x + c


@fixture("quantize_requant_concat", "int8->int8 QUANTIZE (requantize): concat of LOGISTIC (fixed scale 1/256, "
         "zp -128) and TANH (1/128, zp 0) outputs; both are requantized to the concat's scale",
         [(1, 4, 4, 3)], [(-3.0, 2.0)], ["LOGISTIC", "TANH", "QUANTIZE", "CONCATENATION"])
def _(W):
    return lambda x: tf.concat([tf.sigmoid(x), tf.tanh(x)], axis=-1)


@fixture("quantize_requant_to_input_scale", "int8->int8 QUANTIZE: LOGISTIC output requantized to the input's "
         "scale/zero point to be concatenated with the input", [(1, 3, 5, 4)], [(-1.0, 6.0)],
         ["LOGISTIC", "QUANTIZE", "CONCATENATION"])
def _(W):
    return lambda x: tf.concat([tf.sigmoid(x), x], axis=-1)


@fixture("concatenation_inputs_different_ranges", "concat of two model inputs calibrated on very different ranges "
         "(the converter gives both inputs the concat's shared scale; no requantize)", [(1, 3, 3, 4), (1, 3, 3, 4)],
         [(-0.1, 0.1), (-8.0, 8.0)], ["CONCATENATION"])
def _(W):
    return lambda x, y: tf.concat([x, y], axis=-1)


# ============================== multi-op models =============================================

@fixture("mix_residual_block", "residual block: conv3x3+relu -> conv3x3 -> ADD with the skip -> relu",
         [(1, 8, 8, 8)], [(-1.0, 2.0)], ["CONV_2D", "ADD"])
def _(W):
    w1, b1, w2, b2 = W.filt(3, 3, 8, 8), W.bias(8), W.filt(3, 3, 8, 8, gain=0.5), W.bias(8)

    def f(x):
        y = tf.nn.relu(conv(x, w1) + b1)
        y = conv(y, w2) + b2
        return tf.nn.relu(y + x)

    return f


@fixture("mix_residual_block_proj", "residual block with 1x1 stride-2 projection on the skip",
         [(1, 8, 8, 4)], [(-2.0, 2.0)], ["CONV_2D", "ADD"])
def _(W):
    w1, b1 = W.filt(3, 3, 4, 8), W.bias(8)
    w2, b2 = W.filt(3, 3, 8, 8), W.bias(8)
    ws, bs = W.filt(1, 1, 4, 8), W.bias(8)

    def f(x):
        y = tf.nn.relu6(conv(x, w1, 2) + b1)
        y = conv(y, w2) + b2
        return tf.nn.relu6(y + conv(x, ws, 2) + bs)

    return f


@fixture("mix_ds_cnn", "DS-CNN-like KWS: conv10x4 s2 -> dw3x3 -> pw1x1 -> dw -> pw -> avgpool -> reshape -> FC -> "
         "softmax (the converter folds the reshape into the FC, which flattens its 4-D input)",
         [(1, 25, 10, 1)], [(-4.0, 4.0)],
         ["CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "FULLY_CONNECTED", "SOFTMAX"])
def _(W):
    c = 16
    w0, b0 = W.filt(10, 4, 1, c), W.bias(c)
    d1, db1 = W.filt(3, 3, c, 1, ch_axes=(-2, -1)), W.bias(c)
    p1, pb1 = W.filt(1, 1, c, c), W.bias(c)
    d2, db2 = W.filt(3, 3, c, 1, ch_axes=(-2, -1)), W.bias(c)
    p2, pb2 = W.filt(1, 1, c, c), W.bias(c)
    fw, fb = W.filt(c, 12, gain=0.15), W.bias(12, 0.1)

    def f(x):
        y = tf.nn.relu(conv(x, w0, 2) + b0)  # [1,13,5,16]
        y = tf.nn.relu(dwconv(y, d1) + db1)
        y = tf.nn.relu(conv(y, p1) + pb1)
        y = tf.nn.relu(dwconv(y, d2) + db2)
        y = tf.nn.relu(conv(y, p2) + pb2)
        y = tf.nn.avg_pool2d(y, (13, 5), 1, "VALID")
        y = tf.reshape(y, (1, c))
        return tf.nn.softmax(tf.matmul(y, fw) + fb)

    return f


@fixture("mix_branchy_concat", "two branches (3x3 conv / maxpool+1x1 conv) concatenated, then 1x1 conv",
         [(1, 8, 8, 4)], [(0.0, 2.0)], ["CONV_2D", "MAX_POOL_2D", "CONCATENATION"])
def _(W):
    wa, ba = W.filt(3, 3, 4, 6), W.bias(6)
    wb, bb = W.filt(1, 1, 4, 4), W.bias(4)
    wc, bc = W.filt(1, 1, 10, 8), W.bias(8)

    def f(x):
        a = tf.nn.relu(conv(x, wa) + ba)
        b = tf.nn.relu(conv(tf.nn.max_pool2d(x, 3, 1, "SAME"), wb) + bb)
        return conv(tf.concat([a, b], axis=-1), wc) + bc

    return f


@fixture("mix_two_in_two_out", "2 inputs (image [1,6,6,3], vector [1,8]) and 2 outputs (class softmax [1,5], "
         "feature map [1,3,3,4])", [(1, 6, 6, 3), (1, 8)], [(-1.0, 1.0), (0.0, 3.0)],
         ["CONV_2D", "FULLY_CONNECTED", "ADD", "SOFTMAX"])
def _(W):
    w1, b1 = W.filt(3, 3, 3, 4), W.bias(4)
    fw1, fb1 = W.filt(36, 5), W.bias(5)
    fw2, fb2 = W.filt(8, 5), W.bias(5)

    def f(img, vec):
        fm = tf.nn.relu(conv(img, w1, 2) + b1)  # [1,3,3,4]
        logits = tf.matmul(tf.reshape(fm, (1, 36)), fw1) + fb1 + (tf.matmul(vec, fw2) + fb2)
        return tf.nn.softmax(logits), fm

    return f


@fixture("mix_mobilenet_block", "MobileNetV2-like inverted residual: 1x1 expand relu6 -> dw3x3 relu6 -> 1x1 project "
         "-> ADD skip, then hard-swish head", [(1, 8, 8, 8)], [(-1.0, 1.0)],
         ["CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "HARD_SWISH"])
def _(W):
    we, be = W.filt(1, 1, 8, 16), W.bias(16)
    wd, bd = W.filt(3, 3, 16, 1, ch_axes=(-2, -1)), W.bias(16)
    wp, bp = W.filt(1, 1, 16, 8), W.bias(8)

    def f(x):
        y = tf.nn.relu6(conv(x, we) + be)
        y = tf.nn.relu6(dwconv(y, wd) + bd)
        y = conv(y, wp) + bp + x
        return y * tf.nn.relu6(y + 3.0) / 6.0

    return f


@fixture("mix_float_io_cnn", "float32 I/O small CNN: QUANTIZE -> conv -> maxpool -> FC -> softmax -> DEQUANTIZE",
         [(1, 8, 8, 1)], [(0.0, 1.0)], ["QUANTIZE", "CONV_2D", "MAX_POOL_2D", "FULLY_CONNECTED", "SOFTMAX",
                                        "DEQUANTIZE"], float_io=True)
def _(W):
    w, b = W.filt(3, 3, 1, 4), W.bias(4)
    fw, fb = W.filt(64, 6), W.bias(6)

    def f(x):
        y = tf.nn.max_pool2d(tf.nn.relu(conv(x, w) + b), 2, 2, "VALID")
        return tf.nn.softmax(tf.matmul(tf.reshape(y, (1, 64)), fw) + fb)

    return f


@fixture("mix_encoder_decoder", "tiny encoder/decoder: conv s2 -> transpose_conv s2 -> resize-free skip concat -> "
         "conv -> logistic", [(1, 8, 8, 2)], [(-1.0, 1.0)], ["CONV_2D", "TRANSPOSE_CONV", "CONCATENATION",
                                                          "LOGISTIC"])
def _(W):
    w1, b1 = W.filt(3, 3, 2, 6), W.bias(6)
    wt, bt = W.filt(3, 3, 4, 6, ch_axes=(2,)), W.bias(4)
    w2, b2 = W.filt(3, 3, 6, 1), W.bias(1)

    def f(x):
        y = tf.nn.relu(conv(x, w1, 2) + b1)  # [1,4,4,6]
        y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d_transpose(y, wt, (1, 8, 8, 4), 2, "SAME"), bt))
        y = tf.concat([y, x], axis=-1)
        return tf.sigmoid(conv(y, w2) + b2)

    return f


# --------------------------------------------------------------------------------------------
# conversion
# --------------------------------------------------------------------------------------------


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


def calib_samples(fx: Fixture, rng: np.random.Generator):
    for i in range(N_CALIB):
        sample = []
        for shape, (lo, hi) in zip(fx.inputs, fx.ranges):
            if i == 0:  # make sure the calibrated range spans exactly [lo, hi]
                x = rng.uniform(lo, hi, size=shape)
                flat = x.reshape(-1)
                flat[0], flat[-1] = lo, hi
            else:
                x = rng.uniform(lo, hi, size=shape)
            sample.append(x.astype(np.float32))
        yield sample


def convert(fx: Fixture) -> bytes:
    tf.random.set_seed(seed_of(fx.name) & 0x7FFFFFFF)
    fn = fx.build(W(seed_of(fx.name)))
    sig = [tf.TensorSpec((None, *s[1:]) if fx.dynamic_batch else s, tf.float32, name=f"input_{i}")
           for i, s in enumerate(fx.inputs)]
    tfn = tf.function(fn, input_signature=sig, autograph=False)
    cf = tfn.get_concrete_function()
    owner = tfn
    if fx.resource_variables:  # a module that tracks the captured variables, so that they stay variables
        owner = tf.Module()
        owner.fn, owner.state = tfn, list(cf.variables)
    conv_ = tf.lite.TFLiteConverter.from_concrete_functions([cf], owner)
    conv_.optimizations = [tf.lite.Optimize.DEFAULT]
    calib = list(calib_samples(fx, np.random.default_rng(seed_of(fx.name) ^ 0x5EED)))
    conv_.representative_dataset = lambda: iter(calib)
    if fx.int16x8:  # int16 activations, int8 weights (int64 biases), as users quantize audio models
        conv_.target_spec.supported_ops = [tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
    else:
        conv_.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    io_type = tf.float32 if fx.float_io else (tf.int16 if fx.int16x8 else tf.int8)
    conv_.inference_input_type = io_type
    conv_.inference_output_type = io_type
    conv_.experimental_enable_resource_variables = fx.resource_variables
    # per-tensor FULLY_CONNECTED weights are what TFLM-targeting models normally use; only the
    # per-channel fixtures opt in.
    conv_._experimental_disable_per_channel_quantization_for_dense_layers = not fx.per_channel_dense
    blob = conv_.convert()
    if fx.patch is not None:
        from tensorflow.lite.tools import flatbuffer_utils

        model = flatbuffer_utils.convert_bytearray_to_object(bytearray(blob))
        fx.patch(model)
        blob = bytes(flatbuffer_utils.convert_object_to_bytearray(model))
    return bytes(blob)


def op_names(blob: bytes) -> list[str]:
    """Builtin op names of the operators of all subgraphs, in execution order, deduplicated."""
    from tensorflow.lite.python import schema_py_generated as schema

    code2name = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    m = schema.Model.GetRootAsModel(blob, 0)
    codes = []
    for i in range(m.OperatorCodesLength()):
        oc = m.OperatorCodes(i)
        c = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        name = code2name.get(c, f"BUILTIN_{c}")
        if name == "CUSTOM":
            name = "CUSTOM:" + (oc.CustomCode() or b"").decode()
        codes.append(name)
    out = []
    for s in range(m.SubgraphsLength()):
        sg = m.Subgraphs(s)
        for o in range(sg.OperatorsLength()):
            n = codes[sg.Operators(o).OpcodeIndex()]
            if n not in out:
                out.append(n)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="output directory (default: tests/fixtures/models)")
    ap.add_argument("--only", default=None, help="only fixtures whose name contains this substring")
    ap.add_argument("--list", action="store_true", help="list fixture names and exit")
    args = ap.parse_args(argv)

    load_groups()
    selected = [f for f in FIXTURES if args.only is None or args.only in f.name]
    if args.list:
        for f in selected:
            print(f"{f.name:50s} {f.covers}")
        return 0
    if not selected:
        print(f"no fixture matches {args.only!r}", file=sys.stderr)
        return 2

    global tf
    import tensorflow as _tf

    tf = _tf
    tf.get_logger().setLevel("ERROR")
    np.random.seed(0)
    tf.random.set_seed(0)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    entries = {}
    if args.only is not None:
        for path in out.glob("MANIFEST*.json"):
            entries.update({e["name"]: e for e in json.loads(path.read_text())})

    failures = []
    t0 = time.time()
    for fx in selected:
        t = time.time()
        try:
            blob = convert(fx)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{fx.name}: conversion failed: {type(e).__name__}: {str(e)[:300]}")
            print(f"FAIL {fx.name}: {type(e).__name__}: {str(e)[:300]}", flush=True)
            continue
        ops = op_names(blob)
        missing = [o for o in fx.expect if o not in ops]
        present = [o for o in fx.absent if o in ops]
        if missing or present:
            msg = f"{fx.name}: ops {ops}; missing expected {missing}; unexpected {present}"
            failures.append(msg)
            print("FAIL", msg, flush=True)
        fname = f"{fx.name}.tflite"
        (out / fname).write_bytes(blob)
        entries[fx.name] = {"name": fx.name, "file": fname, "ops": ops, "covers": fx.covers}
        print(f"ok   {fx.name:50s} {len(blob):7d} B  {time.time() - t:5.1f}s  {' '.join(ops)}", flush=True)

    order = {f.name: i for i, f in enumerate(FIXTURES)}
    group_of = {f.name: f.group for f in FIXTURES}
    manifest = sorted(entries.values(), key=lambda e: (order.get(e["name"], len(order)), e["name"]))
    for group in sorted(set(group_of.values())):
        mine = [e for e in manifest if group_of.get(e["name"], "") == group]
        if mine:
            (out / manifest_name(group)).write_text(json.dumps(mine, indent=1) + "\n")

    known = {f"{f.name}.tflite" for f in FIXTURES}
    stale = sorted(p.name for p in out.glob("*.tflite") if p.name not in known)
    if stale:
        print(f"warning: files in {out} not produced by any fixture: {stale}", file=sys.stderr)
    total = sum((out / e["file"]).stat().st_size for e in manifest if (out / e["file"]).exists())
    print(f"{len(selected) - len(failures)}/{len(selected)} fixtures ok in {time.time() - t0:.0f}s; "
          f"manifest has {len(manifest)} entries, {total / 1024:.0f} KiB total")
    for f in failures:
        print("FAILED:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
