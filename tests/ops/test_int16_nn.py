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

import numpy as np
from _int16 import add_conv, add_fc, add_tconv, build, check_against_tflm, edge_scales, kernels, refusals
from mcuforge.ir import quant

from devtools.tflite_writer import ModelWriter

ACTS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
BIASES = ("int64", "int32", None)


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
    fns = sorted(kernels(compiled))
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
    assert kernels(compiled) == {"mcu_depthwise_conv_2d_s16"}


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
    fns = sorted(kernels(compiled))
    assert fns == ["mcu_fully_connected_s16", "mcu_fully_connected_s16_acc32"], fns


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
    assert kernels(compiled) == {"mcu_transpose_conv_s16"}


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
