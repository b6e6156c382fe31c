"""16x8 (int16 activations, int8 weights) CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and
TRANSPOSE_CONV against the TFLite Micro interpreter: the numpy reference and the portable C kernels
(host gcc), byte for byte. Models are written with devtools/tflite_writer.py; inputs are int16 over
the whole range with its edges.

What is pinned here (ir/ops/_s16.py states it): zero points are ignored; the bias type picks the
accumulator (int64 with an int64 bias or none, int32 with an int32 bias for CONV_2D and
FULLY_CONNECTED); DEPTHWISE_CONV_2D and TRANSPOSE_CONV refuse an int32 bias; the int64
requantization's reduced multiplier (including multipliers from 0x7FFF0000 up) and its shift limit.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from _int16 import check_against_tflm, int16_values
from mcuforge.frontend import load_tflite
from mcuforge.ir import quant

from devtools.tflite_writer import ModelWriter
from mcuforge.errors import UnsupportedError

ACTS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
BIASES = ("int64", "int32", None)


def out_scale(x_scale: float, w_scales: np.ndarray, taps: int, spread: float = 1.0) -> float:
    """An output scale that puts a typical accumulator (uniform int16 x int8 over `taps` products)
    near `spread` times the int16 range, so the clamp is exercised."""
    typical = np.sqrt(taps) * 18918 * 73 * float(np.mean(w_scales)) * x_scale  # std of uniform int16 / int8
    return float(typical / (32767 * 0.5 * spread))


def bias_values(rng, dtype, n, x_scale, w_scales):
    """A bias as a converter writes it (real bias / (x_scale * w_scale)), sometimes large."""
    if dtype is None:
        return None
    real = rng.normal(0, 2.0, n)
    q = np.round(real / (x_scale * np.asarray(w_scales)))
    lim = 2**31 - 1 if dtype == "int32" else 2**40
    return np.clip(q, -lim, lim).astype(dtype)


def add_conv(w, rng, *, ic, oc, k, stride=(1, 1), dil=(1, 1), padding="SAME", hw=(7, 6), bias="int64", act="NONE",
             per_channel=True, zps=(0, 0), spread=1.0, depthwise=False):
    """One CONV_2D (or DEPTHWISE_CONV_2D, oc = ic * multiplier) on its own input; returns (input
    tensor, output tensor, input data)."""
    kh, kw = k
    x_s = float(rng.uniform(1e-4, 1e-3))
    n_w = oc
    w_s = rng.uniform(0.002, 0.02, n_w) if per_channel else np.full(n_w, rng.uniform(0.002, 0.02))
    shape = (1, kh, kw, oc) if depthwise else (oc, kh, kw, ic)
    W = rng.integers(-127, 128, shape).astype(np.int8)
    taps = kh * kw * (1 if depthwise else ic)
    y_s = out_scale(x_s, w_s, taps, spread)
    x = w.tensor((1, *hw, ic), "int16", scale=x_s, zero_point=zps[0])
    wt = w.tensor(shape, "int8", data=W, scale=list(w_s) if per_channel else float(w_s[0]),
                  axis=3 if depthwise else 0)
    ins = [x, wt]
    b = bias_values(rng, bias, oc, x_s, w_s)
    if b is not None:
        ins.append(w.tensor((oc,), bias, data=b, scale=list(x_s * w_s), axis=0))
    from mcuforge.ir.ops._common import out_size
    oh = out_size(padding, hw[0], kh, stride[0], dil[0])
    ow = out_size(padding, hw[1], kw, stride[1], dil[1])
    y = w.tensor((1, oh, ow, oc), "int16", scale=y_s, zero_point=zps[1])
    opts = dict(Padding=padding, StrideH=stride[0], StrideW=stride[1], DilationHFactor=dil[0],
                DilationWFactor=dil[1], FusedActivationFunction=act)
    if depthwise:
        w.op("DEPTHWISE_CONV_2D", ins, [y], DepthMultiplier=oc // ic, **opts)
    else:
        w.op("CONV_2D", ins, [y], **opts)
    return x, y, int16_values(rng, (1, *hw, ic))


def build(cases, fn, seed: int):
    rng = np.random.default_rng(seed)
    w = ModelWriter()
    xs, ys, data = [], [], []
    for case in cases:
        x, y, d = fn(w, rng, **case)
        xs.append(x)
        ys.append(y)
        data.append(d)
    return w.finish(xs, ys), data


CONV_CASES = [
    dict(ic=3, oc=5, k=(3, 3)),
    dict(ic=8, oc=4, k=(1, 1), bias="int32"),
    dict(ic=4, oc=6, k=(3, 2), stride=(2, 1), padding="VALID", bias=None),
    dict(ic=2, oc=3, k=(3, 3), dil=(2, 2), act="RELU"),
    dict(ic=5, oc=4, k=(5, 1), stride=(1, 2), act="RELU6", per_channel=False),
    dict(ic=3, oc=4, k=(2, 2), act="RELU_N1_TO_1", bias="int32", spread=8.0),
    dict(ic=6, oc=2, k=(3, 3), zps=(7, -5), act="RELU"),  # TFLM ignores both zero points
    dict(ic=4, oc=7, k=(1, 3), spread=0.05, bias=None),  # most outputs clamp
    dict(ic=40, oc=3, k=(3, 3), spread=3.0, bias="int32"),  # 360 taps
    dict(ic=1, oc=1, k=(7, 6), padding="VALID", hw=(7, 6)),  # one output
]


def test_conv_2d(tmp_path):
    blob, data = build(CONV_CASES, add_conv, 1)
    compiled = check_against_tflm(tmp_path, blob, data)
    fns = sorted({b.kernel.function for b in compiled.program.bindings})
    assert fns == ["mcu_conv_2d_s16", "mcu_conv_2d_s16_acc32"], fns


DW_CASES = [
    dict(ic=3, oc=3, k=(3, 3)),
    dict(ic=4, oc=8, k=(3, 3), stride=(2, 2), bias=None),
    dict(ic=2, oc=6, k=(5, 3), padding="VALID", act="RELU6", per_channel=False),
    dict(ic=5, oc=5, k=(3, 3), dil=(2, 1), act="RELU", zps=(-3, 11)),
    dict(ic=6, oc=6, k=(1, 1), spread=0.05),
    dict(ic=1, oc=4, k=(7, 6), padding="VALID", act="RELU_N1_TO_1", spread=4.0),
]


def test_depthwise_conv_2d(tmp_path):
    blob, data = build([dict(c, depthwise=True) for c in DW_CASES], add_conv, 2)
    compiled = check_against_tflm(tmp_path, blob, data)
    assert {b.kernel.function for b in compiled.program.bindings} == {"mcu_depthwise_conv_2d_s16"}


def add_fc(w, rng, *, depth, units, rows=1, bias="int64", act="NONE", per_channel=True, w_zp=0, zps=(0, 0),
           spread=1.0, keep_dims=False, scales=None, bias_data=None):
    """One FULLY_CONNECTED; `scales` = (input, weight, output) and `bias_data` pin what is drawn."""
    x_s = float(rng.uniform(1e-4, 1e-3))
    w_s = rng.uniform(0.002, 0.02, units) if per_channel else np.full(units, rng.uniform(0.002, 0.02))
    W = rng.integers(-127, 128, (units, depth)).astype(np.int8)
    y_s = out_scale(x_s, w_s, depth, spread)
    if scales is not None:
        x_s, y_s = scales[0], scales[2]
        w_s = np.full(units, scales[1])
    in_shape = (rows, 2, depth) if keep_dims else (rows, depth)
    x = w.tensor(in_shape, "int16", scale=x_s, zero_point=zps[0])
    wt = w.tensor(W.shape, "int8", data=W, scale=list(w_s) if per_channel else float(w_s[0]),
                  zero_point=0 if per_channel else w_zp)
    ins = [x, wt]
    b = bias_values(rng, bias, units, x_s, w_s) if bias_data is None else np.asarray(bias_data, dtype=bias)
    if b is not None:
        ins.append(w.tensor((units,), bias, data=b, scale=list(x_s * w_s) if per_channel else float(x_s * w_s[0])))
    out_shape = (rows, 2, units) if keep_dims else (rows, units)
    y = w.tensor(out_shape, "int16", scale=y_s, zero_point=zps[1])
    w.op("FULLY_CONNECTED", ins, [y], FusedActivationFunction=act, KeepNumDims=keep_dims)
    return x, y, int16_values(rng, in_shape)


FC_CASES = [
    dict(depth=16, units=5),
    dict(depth=10, units=12, rows=3, bias=None),
    dict(depth=33, units=4, bias="int32", act="RELU"),
    dict(depth=8, units=6, per_channel=False, w_zp=5, act="RELU6"),  # the weight offset applies
    dict(depth=8, units=6, per_channel=False, w_zp=-9, bias="int32", spread=4.0),
    dict(depth=5, units=3, zps=(4, -6), act="RELU_N1_TO_1", spread=6.0),
    dict(depth=700, units=3, bias="int32", spread=2.0),  # the int32 accumulator may wrap
    dict(depth=12, units=7, keep_dims=True, spread=0.05),
]


def test_fully_connected(tmp_path):
    blob, data = build(FC_CASES, add_fc, 3)
    compiled = check_against_tflm(tmp_path, blob, data)
    fns = sorted({b.kernel.function for b in compiled.program.bindings})
    assert fns == ["mcu_fully_connected_s16", "mcu_fully_connected_s16_acc32"], fns


def add_tconv(w, rng, *, ic, oc, k, stride, hw, out_hw, padding="SAME", bias="int64", act="NONE",
              per_channel=True, zps=(0, 0), spread=1.0):
    x_s = float(rng.uniform(1e-4, 1e-3))
    w_s = rng.uniform(0.002, 0.02, oc) if per_channel else np.full(oc, rng.uniform(0.002, 0.02))
    W = rng.integers(-127, 128, (oc, *k, ic)).astype(np.int8)
    overlap = max(1, (k[0] // stride[0]) * (k[1] // stride[1]))
    y_s = out_scale(x_s, w_s, ic * overlap, spread)
    shape = w.tensor((4,), "int32", data=np.array([1, *out_hw, oc]))
    wt = w.tensor(W.shape, "int8", data=W, scale=list(w_s) if per_channel else float(w_s[0]), axis=0)
    x = w.tensor((1, *hw, ic), "int16", scale=x_s, zero_point=zps[0])
    ins = [shape, wt, x]
    b = bias_values(rng, bias, oc, x_s, w_s)
    if b is not None:
        ins.append(w.tensor((oc,), bias, data=b, scale=list(x_s * w_s), axis=0))
    y = w.tensor((1, *out_hw, oc), "int16", scale=y_s, zero_point=zps[1])
    w.op("TRANSPOSE_CONV", ins, [y], Padding=padding, StrideH=stride[0], StrideW=stride[1],
         FusedActivationFunction=act)
    return x, y, int16_values(rng, (1, *hw, ic))


TCONV_CASES = [
    dict(ic=3, oc=4, k=(3, 3), stride=(2, 2), hw=(3, 4), out_hw=(6, 8)),
    dict(ic=2, oc=3, k=(1, 16), stride=(1, 8), hw=(1, 5), out_hw=(1, 40), bias=None),  # overlap-add decoder
    dict(ic=4, oc=2, k=(3, 3), stride=(1, 1), hw=(4, 4), out_hw=(6, 6), padding="VALID", act="RELU"),
    dict(ic=5, oc=3, k=(2, 2), stride=(2, 2), hw=(3, 3), out_hw=(6, 6), per_channel=False, zps=(3, -2),
         act="RELU6", spread=4.0),
]


def test_transpose_conv(tmp_path):
    blob, data = build(TCONV_CASES, add_tconv, 4)
    compiled = check_against_tflm(tmp_path, blob, data)
    assert {b.kernel.function for b in compiled.program.bindings} == {"mcu_transpose_conv_s16"}


def edge_scales(real: float) -> tuple[float, float, float]:
    """(input, weight, output) float32 scales whose effective multiplier, computed as TFLM does
    (double products of the float32 scales), is `real` to float32 precision."""
    x_s, w_s = 2.0 ** -12, 2.0 ** -7
    return x_s, w_s, float(np.float32(x_s * w_s / real))


def multiplier_of(scales) -> tuple[int, int]:
    f = [float(np.float32(v)) for v in scales]
    return quant.quantize_multiplier(f[0] * f[1] / f[2])


EDGE_CASES = [
    # significands from 0x7FFF0000 up: TFLM's reduced multiplier is 0x7FFF, not the rounded 0x8000
    dict(depth=20, units=4, scales=edge_scales(0.99999 * 2.0 ** -9)),
    dict(depth=20, units=4, scales=edge_scales(0.999985 * 2.0 ** -12), bias=None),
    # the largest int64 shift (14): a rounding shift by one
    dict(depth=3, units=3, scales=edge_scales(0.75 * 2.0 ** 14), bias=None),
    # an int64 bias far beyond int32: the requantized value is truncated to int32 before the clamp
    dict(depth=6, units=4, scales=edge_scales(0.6 * 2.0 ** -2), bias_data=[2**46, -(2**46), 2**40 + 12345, -7]),
    # the int32 path at a large left shift: TFLM's int32 products wrap
    dict(depth=64, units=3, bias="int32", scales=edge_scales(0.9 * 2.0 ** 9)),
]


def test_requantization_edges(tmp_path):
    assert multiplier_of(EDGE_CASES[0]["scales"])[0] >= 0x7FFF0000
    assert multiplier_of(EDGE_CASES[1]["scales"])[0] >= 0x7FFF0000
    assert multiplier_of(EDGE_CASES[2]["scales"])[1] == quant.MAX_LEFT_SHIFT_64
    check_against_tflm(tmp_path, *build(EDGE_CASES, add_fc, 5))


def refusals(tmp_path, blob) -> list[tuple[int, str]]:
    path = tmp_path / "bad.tflite"
    path.write_bytes(blob)
    with pytest.raises(UnsupportedError) as e:
        load_tflite(path)
    return [(i, why) for i, _, why in e.value.problems]


def test_rules(tmp_path):
    """What TFLM refuses or leaves undefined for 16x8 layers is refused, each with its rule."""
    rng = np.random.default_rng(6)
    w = ModelWriter()
    outs, ins = [], []
    for case in (dict(ic=2, oc=2, k=(3, 3), depthwise=True, bias="int32"),  # TFLM reads it as int64
                 dict(ic=2, oc=2, k=(3, 3), bias="int16")):
        x, y, _ = add_conv(w, rng, **case)
        ins.append(x)
        outs.append(y)
    x, y, _ = add_tconv(w, rng, ic=2, oc=2, k=(2, 2), stride=(2, 2), hw=(2, 2), out_hw=(4, 4), bias="int32")
    ins.append(x)
    outs.append(y)
    for case in (dict(depth=4, units=2, scales=edge_scales(0.75 * 2.0 ** 15), bias=None),  # int64 shift 15
                 dict(depth=4, units=2, bias_data=[2**47, 0])):  # beyond TFLM's +-2^47 accumulator
        x, y, _ = add_fc(w, rng, **case)
        ins.append(x)
        outs.append(y)
    x = w.tensor((1, 4), "int16", scale=0.01)  # int16 in, int8 out
    k = w.tensor((2, 4), "int8", data=np.ones((2, 4)), scale=0.01)
    y = w.tensor((1, 2), "int8", scale=0.01)
    w.op("FULLY_CONNECTED", [x, k], [y])
    got = refusals(tmp_path, w.finish([*ins, x], [*outs, y]))
    assert [i for i, _ in got] == [0, 1, 2, 3, 4, 5], got
    assert "must be int32 with int8 activations and int64 with int16 activations (" in got[0][1]
    assert "int64 or int32 with int16 activations (bias is int16" in got[1][1]
    assert "must be int32 with int8 activations and int64 with int16 activations (" in got[2][1]
    assert "below 2^14 for a 16x8 layer" in got[3][1] and "exponent 15" in got[3][1]
    assert "must stay within +-2^47" in got[4][1]
    assert got[5][1].startswith("Input and output activations must both be int8, or both int16") and \
        "input int16, output int8" in got[5][1]
