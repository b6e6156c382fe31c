"""int16 RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH (every one of the 65536 inputs, several
quantizations each) and SOFTMAX (random and edge rows) against the TFLite Micro interpreter: the numpy
reference and the portable C kernels (host gcc), byte for byte; the sigmoid table read back out of
TFLM's TANH kernel; and the rules."""

from __future__ import annotations

import numpy as np
import pytest
from _int16 import all_int16, check_against_tflm, int16_values, kernels, refusals
from mcuforge.ir.ops._int16_lut import SIGMOID_TABLE
from mcuforge.ir.ops.logistic_tanh import int16_input_params

from devtools.tflite_writer import ModelWriter
from mcuforge.oracle import run_tflm

X = all_int16().reshape(256, 256)

# (op, input scale, input zero point, output scale, output zero point, options)
EXHAUSTIVE = [
    ("RELU", 1e-3, 0, 1e-3, 0, {}),
    ("RELU", 1e-3, 0, 3.7e-4, 0, {}),  # rescaled, clamps at the top
    ("RELU", 2e-4, 0, 9e-3, 0, {}),
    ("RELU6", 1e-3, 0, 1e-3, 0, {}),
    ("RELU6", 1e-4, 17, 1e-4, 17, {}),  # six = 60000 + 17: clamped to 32767
    ("RELU6", 3e-4, -200, 3e-4, -200, {}),
    ("LEAKY_RELU", 1e-3, 0, 1e-3, 0, {"Alpha": 0.2}),
    ("LEAKY_RELU", 5e-4, 13, 7e-4, -9, {"Alpha": 0.01}),
    ("LEAKY_RELU", 1e-3, 0, 2e-3, 0, {"Alpha": -0.5}),  # a negative alpha
    ("LEAKY_RELU", 1e-3, 0, 1e-4, 0, {"Alpha": 3.0}),  # saturates
    ("LOGISTIC", 2 ** -12, 0, 2 ** -15, 0, {}),  # the power-of-two input case
    ("LOGISTIC", 1e-3, 0, 2 ** -15, 0, {}),
    ("LOGISTIC", 3.1e-4, 0, 2 ** -15, 0, {}),
    ("LOGISTIC", 4.0, 0, 2 ** -15, 0, {}),  # multiplier above 32767, no shift
    ("LOGISTIC", 1e-10, 0, 2 ** -15, 0, {}),  # the shift loop stops at 31
    ("TANH", 2 ** -12, 0, 2 ** -15, 0, {}),
    ("TANH", 2 ** -11, 0, 2 ** -15, 0, {}),  # TANH's second power-of-two case
    ("TANH", 7e-4, 0, 2 ** -15, 0, {}),
    ("TANH", 4.2e-5, 0, 2 ** -15, 0, {}),
    ("TANH", 1.7, 0, 2 ** -15, 0, {}),
]


def unary_model(cases) -> tuple[bytes, list[np.ndarray]]:
    w = ModelWriter()
    ins, outs = [], []
    for k, (op, si, zi, so, zo, opts) in enumerate(cases):
        x = w.tensor(X.shape, "int16", scale=si, zero_point=zi, name=f"x{k}")
        y = w.tensor(X.shape, "int16", scale=so, zero_point=zo, name=f"y{k}")
        w.op(op, [x], [y], **opts)
        ins.append(x)
        outs.append(y)
    return w.finish(ins, outs), [X] * len(cases)


@pytest.mark.parametrize("ops", [("RELU", "RELU6", "LEAKY_RELU"), ("LOGISTIC", "TANH")], ids=["relus", "tables"])
def test_every_int16_input(tmp_path, ops):
    cases = [c for c in EXHAUSTIVE if c[0] in ops]
    compiled = check_against_tflm(tmp_path, *unary_model(cases))
    assert all(b.kernel.function.endswith("_s16") for b in compiled.program.bindings)


def test_multipliers_cover_both_input_paths():
    assert int16_input_params("logistic", 2 ** -12) == (3, 0)
    assert int16_input_params("tanh", 2 ** -11) == (6, 0)
    assert int16_input_params("logistic", 4.0) == (49152, 0)
    assert int16_input_params("logistic", 1e-10) == (2638, 31)


def test_sigmoid_table_is_tflms():
    """Every entry of SIGMOID_TABLE, read back out of TFLM's int16 TANH: with an input multiplier of
    2^14 and a shift of 6 (or 13) the kernel's table input is 256 x (or 2 x), and TANH returns
    T[h] - 32768 exactly where the interpolation weight is 0; entry 255 from the weight 254/256."""
    s6 = float(np.float32(16384.5 / (2 ** 6 * 12288)))
    s13 = float(np.float32(16384.5 / (2 ** 13 * 12288)))
    assert int16_input_params("tanh", s6) == (16384, 6) and int16_input_params("tanh", s13) == (16384, 13)
    w = ModelWriter()
    a = w.tensor((255,), "int16", scale=s6)
    b = w.tensor((1,), "int16", scale=s13)
    ya = w.tensor((255,), "int16", scale=2 ** -15)
    yb = w.tensor((1,), "int16", scale=2 ** -15)
    w.op("TANH", [a], [ya])
    w.op("TANH", [b], [yb])
    (outs, _), = run_tflm(w.finish([a, b], [ya, yb]), [[np.arange(255, dtype=np.int16), np.array([32639], np.int16)]])
    table = outs[0].astype(np.int64) + 32768
    last_step = int(outs[1][0]) - (int(table[254]) - 32768)  # (254 * (T[255] - T[254]) + 128) >> 8
    assert np.array_equal(SIGMOID_TABLE[:255], table)
    assert SIGMOID_TABLE[255] - SIGMOID_TABLE[254] == last_step


def softmax_model(rows_list, beta_scales, seed=0):
    rng = np.random.default_rng(seed)
    w = ModelWriter()
    ins, outs, data = [], [], []
    for k, (shape, (beta, s_in)) in enumerate(zip(rows_list, beta_scales)):
        x = w.tensor(shape, "int16", scale=s_in, name=f"x{k}")
        y = w.tensor(shape, "int16", scale=1 / 32768, name=f"y{k}")
        w.op("SOFTMAX", [x], [y], Beta=beta)
        ins.append(x)
        outs.append(y)
        d = int16_values(rng, shape)
        flat = d.reshape(-1, shape[-1])
        if flat.shape[0] > 3:
            flat[0] = 7  # a row of equal values
            flat[1] = -32768
            flat[1, -1] = 32767  # one element far above the rest
            flat[2] = rng.integers(-300, 300, flat.shape[1])  # close values
        data.append(d)
    return w.finish(ins, outs), data


def test_softmax(tmp_path):
    shapes = [(1, 12), (6, 10), (2, 3, 257), (4, 1), (1, 2000), (5, 64)]
    params = [(1.0, 1e-3), (1.0, 3.1e-4), (0.5, 2e-4), (1.0, 1e-3), (2.0, 1e-4), (1.0, 1.5e-3)]
    compiled = check_against_tflm(tmp_path, *softmax_model(shapes, params))
    assert kernels(compiled) == {"mcu_softmax_s16"}


def test_rules(tmp_path):
    w = ModelWriter()
    specs = [("RELU", (1e-3, 4), (1e-3, 0), {}),  # TFLM's int16 RELU requires zero points 0
             ("HARD_SWISH", (1e-3, 0), (1e-3, 0), {}),  # TFLM has no int16 HARD_SWISH
             ("LOGISTIC", (1e-3, 0), (2 ** -14, 0), {}),  # output scale must be 2^-15
             ("TANH", (1e-3, 3), (2 ** -15, 0), {}),  # zero points 0
             ("LOGISTIC", (6.0, 0), (2 ** -15, 0), {}),  # input multiplier beyond 16 bits
             ("TANH", (1e-14, 0), (2 ** -15, 0), {}),  # multiplier 0: TFLM's power-of-two path, shift 31
             ("SOFTMAX", (1e-3, 5), (1 / 32768, 0), {"Beta": 1.0}),  # input zero point 0
             ("SOFTMAX", (1e-3, 0), (1 / 65536, 0), {"Beta": 1.0}),  # output scale 1/32768
             ("SOFTMAX", (8.0, 0), (1 / 32768, 0), {"Beta": 1.0})]  # exponent 16: d << 16 overflows
    ins, outs = [], []
    for op, (si, zi), (so, zo), opts in specs:
        x = w.tensor((1, 4), "int16", scale=si, zero_point=zi)
        y = w.tensor((1, 4), "int16", scale=so, zero_point=zo)
        w.op(op, [x], [y], **opts)
        ins.append(x)
        outs.append(y)
    why = [r for _, r in refusals(tmp_path, w.finish(ins, outs))]
    assert len(why) == len(specs), why
    assert "zero point 0" in why[0] and "input zero point 4" in why[0]
    assert "Input and output activations must be int8" in why[1]
    assert "output scale 2^-15" in why[2] and "6.1035156e-05" in why[2]
    assert "output scale 2^-15" in why[3] and "input zero point 3" in why[3]
    assert "input multiplier of 73728" in why[4]
    assert "input multiplier of 0" in why[5]
    assert "input zero point 5" in why[6]
    assert "scale 1/32768" in why[7]
    assert "exponent 16" in why[8]
