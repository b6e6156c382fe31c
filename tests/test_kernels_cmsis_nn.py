"""The `cmsis-nn` target's int8 kernels (firmware/kernels/cmsis_nn): plain C, DSP and Helium paths.

Layers of checks, all exact (element by element, the first mismatches printed with their index):
- the kernels' fast requantization (and the DSP records) equal mcu_requantize, the portable C form
  of TFLM's MultiplyByQuantizedMultiplier in mcuforge_fixedpoint.h (our own C as the oracle: it is
  checked against TFLM through the end-to-end tests of every kernel that uses it);
- kernel unit tests (CMSIS-NN's test style): synthetic single-op calls over edge cases (odd channel
  counts, filter-row tails, odd pixel counts, borders, dilation, depth multipliers, windows over 256
  elements, in-place element-wise ops) are lowered by the target; the kernel model must equal the
  registry's TFLM reference, and the C kernel must equal the kernel model, built on the host once
  with the plain C path and once with the DSP path, its instructions emulated in C
  (-DMCU_CMSIS_DSP_EMULATE);
- end to end against the TFLite Micro interpreter on the host (plain and DSP builds, every fixture
  and the MLPerf Tiny models): tests/test_host_e2e.py;
- (slow) the kernel unit tests on QEMU: Cortex-M4 with the real DSP instructions, Cortex-M55 with
  Helium (MVE), which the host cannot run.
"""

from __future__ import annotations

import dataclasses
import math
import re
import shutil
import struct
import subprocess
import zlib
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest
from conftest import MLPERF_MODELS
from mcuforge.ir.expr import Call, Constant, Function, Var, post_order
from mcuforge.ir.registry import OpView, get_op
from mcuforge.ir.types import QuantParams, TensorType
from mcuforge.planner.patterns import match
from mcuforge.planner.target import DEFAULT_ISA, ISAS
from mcuforge.planner.targets import cmsis_nn
from mcuforge.planner.targets.cmsis_nn import common as cmsis_common
from mcuforge.planner.targets.cmsis_nn import conv as cmsis_conv
from mcuforge.planner.targets.cmsis_nn import depthwise as cmsis_depthwise
from mcuforge.planner.targets.cmsis_nn.common import unpair_rows
from mcuforge.planner.targets.cmsis_nn.requant import requant_records

from mcuforge.boards import load_board
from mcuforge.driver import compile_model
from mcuforge.host import DSP_EMULATE

KERNELS = Path(str(files("mcuforge.firmware") / "kernels" / "cmsis_nn"))
INCLUDE = Path(str(files("mcuforge.firmware") / "include"))
CFLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function"]
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="host gcc not installed")


def first_mismatches(ours: np.ndarray, expected: np.ndarray, show: int = 5) -> str:
    idx = np.argwhere(ours != expected)
    parts = [f"at {list(map(int, i))}: got {ours[tuple(i)]}, expected {expected[tuple(i)]}" for i in idx[:show]]
    return f"{len(idx)} of {expected.size} differ; " + "; ".join(parts)


# ---- the fast requantization ---------------------------------------------------------------------

REQUANT_PROGRAM = r"""
#include <stdio.h>
#include "mcu_kernels_cmsis_nn.h"
int main(void) {
    long x, m; int s;
    while (scanf("%ld %ld %d", &x, &m, &s) == 3) {
        if (mcu_requantize_q31((int32_t)x, (int32_t)m, s) != mcu_requantize((int32_t)x, (int32_t)m, s)) {
            printf("x=%ld m=%ld s=%d: %d, portable %d\n", x, m, s, (int)mcu_requantize_q31((int32_t)x, (int32_t)m, s),
                   (int)mcu_requantize((int32_t)x, (int32_t)m, s));
        }
    }
    return 0;
}
"""


@needs_gcc
def test_fast_requantize_equals_portable_requantize(tmp_path):
    """mcu_requantize_q31 (one SMLAL, 32-bit masks) == mcu_requantize (mcuforge_fixedpoint.h, the
    portable C form of TFLM's MultiplyByQuantizedMultiplier) for every non-negative
    multiplier, shift in [-31, 30], and any int32 accumulator, edge values included."""
    src = tmp_path / "t.c"
    src.write_text(REQUANT_PROGRAM)
    exe = tmp_path / "t"
    subprocess.run(["gcc", *CFLAGS, "-I", str(KERNELS), "-I", str(INCLUDE), str(src), "-o", str(exe)], check=True)
    rng = np.random.default_rng(5)
    n = 60000
    xs = rng.integers(-(2**31), 2**31, n) >> rng.integers(0, 31, n)
    edges = np.array([0, 1, -1, 2**31 - 1, -(2**31), -(2**31) + 1, 2**30, -(2**30), 2**30 + 1, -(2**30) - 1])
    xs[: 10 * edges.size] = np.repeat(edges, 10)
    ms = rng.integers(2**30, 2**31, n)
    ms[::17] = rng.integers(0, 2**31, ms[::17].size)
    ms[::101], ms[::103] = 0, 2**31 - 1
    ss = rng.integers(-31, 31, n)
    ss[::3] = -rng.integers(0, 12, ss[::3].size)
    stdin = "\n".join(f"{x} {m} {s}" for x, m, s in zip(xs, ms, ss))
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout
    assert out == "", out[:1000]


RQ_PROGRAM = r"""
#include <stdio.h>
#include "mcu_cmsis_dsp.h"
#include "mcu_kernels_cmsis_nn.h"
int main(void) {
    long x, m, s, off, lo, hi, r0, r1, r2;
    while (scanf("%ld %ld %ld %ld %ld %ld %ld %ld %ld", &x, &m, &s, &off, &lo, &hi, &r0, &r1, &r2) == 9) {
        const int32_t rq[3] = {(int32_t)r0, (int32_t)r1, (int32_t)r2};
        const int32_t fast = mcu_cmsis_rq_clamp((int32_t)x, rq, (int32_t)lo, (int32_t)hi);
        int32_t portable = mcu_requantize((int32_t)x, (int32_t)m, (int)s) + (int32_t)off;
        portable = portable < lo ? (int32_t)lo : portable > hi ? (int32_t)hi : portable;
        if (fast != portable) {
            printf("x=%ld m=%ld s=%ld off=%ld rq={%ld,%ld,%ld}: %d, portable %d\n", x, m, s, off, r0, r1, r2,
                   (int)fast, (int)portable);
        }
    }
    return 0;
}
"""


def dsp_program(tmp_path: Path, source: str) -> Path:
    """A host program of the kernels' headers, the DSP instructions emulated in C."""
    src, exe = tmp_path / "t.c", tmp_path / "t"
    src.write_text(source)
    subprocess.run(["gcc", *CFLAGS, DSP_EMULATE, "-I", str(KERNELS), "-I", str(INCLUDE), str(src), "-o", str(exe)],
                   check=True)
    return exe


def rq_trials(rng, n: int):
    """(accumulator bounds, multiplier, shift, output offset, clamp) per trial: shifts over the whole
    range, bounds from tiny to past 2^30 (no proof), some degenerate (a single accumulator, as an
    all-zero weight row gives) and near +-2^30."""
    for i in range(n):
        m = int(rng.integers(2**30, 2**31)) if i % 11 else int(rng.integers(0, 2**31))
        s = int(rng.integers(-31, 31)) if i % 3 == 0 else -int(rng.integers(0, 12))
        off = int(rng.integers(-128, 128))
        clamp = (-128, 127) if i % 4 else tuple(sorted(int(v) for v in rng.integers(-128, 128, 2)))
        mag = 2 ** int(rng.integers(4, 32))
        a, b = sorted(int(v) for v in rng.integers(-mag, mag, 2))
        if i % 7 == 0:
            a = b = int(rng.choice([2**30, -(2**30), 2**30 - 1, -(2**30) + 1, 0, b]))
        yield max(a, -(2**31)), min(b, 2**31 - 1), m, s, off, clamp


@needs_gcc
def test_fast_requant_records_equal_portable_requantize(tmp_path):
    """mcu_cmsis_rq_clamp on the planner's records (cmsis_nn.requant_records) equals mcu_requantize
    (the portable C form of TFLM's requantization) + offset + clamp for accumulators across each proven range: both ends, the
    middle, random values, values around 0 and at rounding ties of the right shift; and the planner refuses
    (None) only where the fast form could differ (checked: some trials are refused, some prove
    constant channels)."""
    exe = dsp_program(tmp_path, RQ_PROGRAM)
    rng = np.random.default_rng(9)
    lines, refused, constant = [], 0, 0
    for lo, hi, m, s, off, (amin, amax) in rq_trials(rng, 3000):
        rec = requant_records(np.array([lo]), np.array([hi]), np.array([m]), np.array([s]), off, amin, amax)
        if rec is None:
            refused += 1
            continue
        constant += int(rec[0] == 0)
        xs = {lo, hi, (lo + hi) // 2, *rng.integers(lo, hi + 1, 40).tolist()}
        xs |= {v for v in range(-3, 3) if lo <= v <= hi}  # small negative accumulators: y == 0 > acc
        if -s >= 1:  # ties of the rounding divide: y = (k + 1/2) * 2^right
            y = (rng.integers(-2**20, 2**20, 20) * 2 + 1) << (-s - 1)
            xs |= {int(v) for v in (y << 31) // max(m, 1) if lo <= v <= hi}
        lines += [f"{x} {m} {s} {off} {amin} {amax} {rec[0]} {rec[1]} {rec[2]}" for x in sorted(xs)]
    assert refused > 50 and constant > 20 and len(lines) > 50000, (refused, constant, len(lines))
    out = subprocess.run([str(exe)], input="\n".join(lines), capture_output=True, text=True, check=True).stdout
    assert out == "", out[:1000]


RQ_RELU_PROGRAM = RQ_PROGRAM.replace(
    "mcu_cmsis_rq_clamp((int32_t)x, rq, (int32_t)lo, (int32_t)hi)",
    "mcu_relu_clamp(mcu_ssat8(mcu_cmsis_rq3_relu((int32_t)x, rq[0], rq[1], rq[2])), lo, hi)").replace(
    "int main(void) {",
    "static int32_t mcu_relu_clamp(int32_t v, long lo, long hi) { return v < lo ? (int32_t)lo : v > hi ? (int32_t)hi : v; }\n"
    "int main(void) {")


@needs_gcc
def test_relu_requant_records_equal_portable_requantize(tmp_path):
    """mcu_cmsis_rq3_relu (no rounding correction of negative accumulators: the PAIR_RELU routines)
    equals TFLM's requantization + offset + clamp wherever the output offset is at or below the
    clamp's minimum, over the planner's proven records and accumulators as in the test above (small
    negative ones and rounding ties included); where the offset is above the minimum it does differ
    (the condition is needed: some trials there must fail)."""
    exe = dsp_program(tmp_path, RQ_RELU_PROGRAM)
    rng = np.random.default_rng(11)
    lines = {True: [], False: []}
    for lo, hi, m, s, off, (amin, amax) in rq_trials(rng, 6000):
        relu = bool(rng.integers(0, 4))
        if relu:  # the offset at or below the minimum (a ReLU's clamp is [offset, ...])
            off = max(-128, amin - int(rng.integers(0, 3)) * int(rng.integers(0, 40)))
        elif off <= amin:
            continue
        rec = requant_records(np.array([lo]), np.array([hi]), np.array([m]), np.array([s]), off, amin, amax)
        if rec is None:
            continue
        xs = {lo, hi, (lo + hi) // 2, *rng.integers(lo, hi + 1, 40).tolist()}
        xs |= {v for v in range(-3, 3) if lo <= v <= hi}
        if -s >= 1:  # ties of the rounding divide, negative ones included
            y = (rng.integers(-2**20, 2**20, 20) * 2 + 1) << (-s - 1)
            xs |= {int(v) for v in (y << 31) // max(m, 1) if lo <= v <= hi}
        lines[relu] += [f"{x} {m} {s} {off} {amin} {amax} {rec[0]} {rec[1]} {rec[2]}" for x in sorted(xs)]
    assert len(lines[True]) > 50000 and len(lines[False]) > 10000, {k: len(v) for k, v in lines.items()}
    run = lambda ls: subprocess.run([str(exe)], input="\n".join(ls), capture_output=True, text=True,  # noqa: E731
                                    check=True).stdout
    out = run(lines[True])
    assert out == "", out[:1000]
    assert run(lines[False]).count("\n") > 10  # without the condition the correction matters


# ---- synthetic single-op calls -------------------------------------------------------------------

def q(scale, zp=0, axis=0) -> QuantParams:
    scales = tuple(float(np.float32(s)) for s in np.atleast_1d(scale))
    zps = tuple(int(z) for z in np.atleast_1d(zp)) if np.ndim(zp) else (int(zp),) * len(scales)
    return QuantParams(scales, zps, axis)


def _call(op: str, args: list, attrs: dict, out_quant: QuantParams, out_dtype: str | None = None) -> Call:
    opdef = get_op(op)
    shape, dtype = opdef.infer([a.type for a in args], attrs)
    out = TensorType(tuple(shape), out_dtype or dtype, out_quant)
    problems = opdef.check(OpView(tuple(a.type for a in args), out, attrs))
    assert not problems, problems
    return Call(op, tuple(args), out, attrs, name="out")


ACC_STD = 74.0 * 73.0  # std of (uniform int8 input - zp) times std of uniform int8 weights


def conv_like(rng, op, hw, ic, oc, k, stride=(1, 1), dil=(1, 1), padding="SAME", act="NONE", bias=True,
              mult=1, per_channel=True, out_zp=None) -> Call:
    (h, w), (kh, kw) = hw, k
    in_s = 0.03
    x = Var("x", TensorType((1, h, w, ic), "int8", q(in_s, rng.integers(-128, 128))))
    taps = kh * kw * (ic if op == "conv_2d" else 1)
    base = 3.0 / (in_s * ACC_STD * math.sqrt(taps))
    ws = base * rng.uniform(0.5, 1.5, oc if per_channel else 1)
    if op == "conv_2d":
        wshape, axis = (oc, kh, kw, ic), 0
        attrs = {"stride": stride, "dilation": dil, "padding": padding, "activation": act}
    else:
        wshape, axis = (1, kh, kw, oc), 3
        attrs = {"stride": stride, "dilation": dil, "padding": padding, "activation": act, "depth_multiplier": mult}
    wq = q(ws, 0, axis)
    weights = Constant("w", TensorType(wshape, "int8", wq), rng.integers(-127, 128, wshape))
    args = [x, weights]
    if bias:
        data = np.round(rng.normal(0, ACC_STD * math.sqrt(taps) / 2, oc))
        args.append(Constant("b", TensorType((oc,), "int32", q(in_s * np.resize(ws, oc))), data))
    return _call(op, args, attrs, q(0.06, rng.integers(-20, 21) if out_zp is None else out_zp))


def extreme(call: Call, bias: dict[int, int], zero_rows: tuple[int, ...] = (), out_scale: float | None = None) -> Call:
    """The call with some channels' biases set (e.g. past 2^30) and some weight rows all zero, as
    trained models have (VWW): the planner proves those channels constant. With a tiny output
    scale (requantization multipliers above 1: left shifts), no fast requantization exists and the
    kernels take their general path."""
    w, b = call.args[1], call.args[2]
    wdata, bdata = w.data.copy(), b.data.copy()
    axis = 3 if call.op == "depthwise_conv_2d" else 0
    for ch in zero_rows:
        np.moveaxis(wdata, axis, 0)[ch] = 0
    for ch, v in bias.items():
        bdata[ch] = v
    args = (call.args[0], Constant("w", w.type, wdata), Constant("b", b.type, bdata))
    out = call.type
    if out_scale is not None:
        out = TensorType(out.shape, out.dtype, q(out_scale, out.quant.zero_point[0]))
    return Call(call.op, args, out, call.attrs, name="out")


def saturated(call: Call, rows: tuple[int, ...], bias: int, seed: int = 3) -> Call:
    """The convolution with some output channels' weights all +-127 (as many of each sign, in a
    random order: the input offset folds nothing into their biases) and their biases `bias`: the
    largest sum|w| a row can have, which with |bias| decides whether the offset pair layout is
    allowed."""
    w, b = call.args[1], call.args[2]
    data, bias_data = w.data.copy(), b.data.copy()
    n = int(np.prod(data.shape[1:]))
    signs = np.random.default_rng(seed).permutation(np.resize([127, -127], n)).reshape(data.shape[1:])
    for ch in rows:
        data[ch], bias_data[ch] = signs, bias
    return Call(call.op, (call.args[0], Constant("w", w.type, data), Constant("b", b.type, bias_data),
                          *call.args[3:]), call.type, call.attrs, name="out")


def conv(rng, hw, ic, oc, k, **kw) -> Call:
    return conv_like(rng, "conv_2d", hw, ic, oc, k, **kw)


def dwconv(rng, hw, ic, mult, k, **kw) -> Call:
    return conv_like(rng, "depthwise_conv_2d", hw, ic, ic * mult, k, mult=mult, **kw)


def fc(rng, rows, depth, units, act="NONE", bias=True, per_channel=False) -> Call:
    in_s = 0.03
    x = Var("x", TensorType((rows, depth), "int8", q(in_s, rng.integers(-128, 128))))
    base = 3.0 / (in_s * ACC_STD * math.sqrt(depth))
    ws = base * rng.uniform(0.5, 1.5, units if per_channel else 1)
    w = Constant("w", TensorType((units, depth), "int8", q(ws)), rng.integers(-127, 128, (units, depth)))
    args = [x, w]
    if bias:
        bq = q(in_s * float(np.float32(ws[0]))) if not per_channel else q(in_s * ws)
        args.append(Constant("b", TensorType((units,), "int32", bq), np.round(rng.normal(0, 2000, units))))
    attrs = {"activation": act, "keep_num_dims": False, "weights_format": "DEFAULT"}
    return _call("fully_connected", args, attrs, q(0.05, rng.integers(-20, 21)))


def pool(rng, op, hw, ch, k, stride, padding="SAME", act="NONE") -> Call:
    xq = q(0.05, rng.integers(-30, 31))
    x = Var("x", TensorType((1, *hw, ch), "int8", xq))
    attrs = {"filter": k, "stride": stride, "padding": padding, "activation": act}
    return _call(op, [x], attrs, xq)


def binary(rng, op, shape, act="NONE", same_input=False, out_s=None) -> Call:
    a = Var("a", TensorType(shape, "int8", q(rng.uniform(0.01, 0.1), rng.integers(-128, 128))))
    b = a if same_input else Var("b", TensorType(shape, "int8", q(rng.uniform(0.01, 0.1), rng.integers(-128, 128))))
    out_s = out_s or (0.15 if op == "add" else 0.2)
    return _call(op, [a, b], {"activation": act}, q(out_s, rng.integers(-20, 21)))


def conv_add(rng, hw, ic, oc, k, conv_first=True, act="NONE", **kw) -> Call:
    """CONV_2D whose output goes into an ADD with a residual tensor of its shape (the fused kernel)."""
    cv = conv(rng, hw, ic, oc, k, **kw)
    r = Var("r", TensorType(cv.type.shape, "int8", q(rng.uniform(0.02, 0.1), rng.integers(-128, 128))))
    return _call("add", [cv, r] if conv_first else [r, cv], {"activation": act}, q(0.12, rng.integers(-20, 21)))


def max_min(rng, op, shape_a, shape_b) -> Call:
    """MAXIMUM / MINIMUM (raw values: the quantization only has to be the same)."""
    qa = q(rng.uniform(0.01, 0.1), rng.integers(-128, 128))
    a, b = Var("a", TensorType(shape_a, "int8", qa)), Var("b", TensorType(shape_b, "int8", qa))
    return _call(op, [a, b], {}, qa)


def batch_matmul(rng, lhs, rhs, adj_x=False, adj_y=False, const_rhs=False, zps=None, out_s=None) -> Call:
    """BATCH_MATMUL of int8 operands (the rhs an activation or a constant)."""
    za, zb = zps if zps else rng.integers(-128, 128, 2)
    sa, sb = rng.uniform(0.01, 0.05, 2)
    depth = lhs[-2] if adj_x else lhs[-1]
    a = Var("a", TensorType(lhs, "int8", q(sa, za)))
    bt = TensorType(rhs, "int8", q(sb, zb))
    b = Constant("b", bt, rng.integers(-128, 128, rhs)) if const_rhs else Var("b", bt)
    out_s = out_s or float(np.float32(sa) * np.float32(sb) * 40 * math.sqrt(depth))
    return _call("batch_matmul", [a, b], {"adj_x": adj_x, "adj_y": adj_y}, q(out_s, rng.integers(-20, 21)))


def flushed_add(rng, shape, input_scales, out_s) -> Call:
    """ADD with given scales: a multiplier below 2^-32 is flushed to zero (well defined in TFLM)."""
    a, b = (Var(n, TensorType(shape, "int8", q(s, rng.integers(-128, 128)))) for n, s in zip("ab", input_scales))
    return _call("add", [a, b], {"activation": "NONE"}, q(out_s, rng.integers(-20, 21)))


def softmax(rng, shape, beta=1.0, scale=0.1) -> Call:
    x = Var("x", TensorType(shape, "int8", q(scale, rng.integers(-30, 31))))
    return _call("softmax", [x], {"beta": beta, "out_dtype": "int8"}, q(1.0 / 256, -128), "int8")


def tconv(rng, hw, ic, oc, k, stride, padding, out_hw, act="NONE", bias=True, per_channel=True, batch=1) -> Call:
    """TRANSPOSE_CONV [oc, kh, kw, ic] weights onto an out_hw output (what TFLite's output_shape gives)."""
    (h, w), (kh, kw) = hw, k
    in_s = 0.03
    x = Var("x", TensorType((batch, h, w, ic), "int8", q(in_s, rng.integers(-128, 128))))
    taps = max(1, -(-kh // stride[0]) * -(-kw // stride[1])) * ic
    ws = 3.0 / (in_s * ACC_STD * math.sqrt(taps)) * rng.uniform(0.5, 1.5, oc if per_channel else 1)
    wshape = (oc, kh, kw, ic)
    args = [x, Constant("w", TensorType(wshape, "int8", q(ws, 0, 0)), rng.integers(-127, 128, wshape))]
    if bias:
        data = np.round(rng.normal(0, ACC_STD * math.sqrt(taps) / 2, oc))
        args.append(Constant("b", TensorType((oc,), "int32", q(in_s * np.resize(ws, oc))), data))
    attrs = {"output_shape": (batch, *out_hw, oc), "stride": stride, "padding": padding, "activation": act}
    return _call("transpose_conv", args, attrs, q(0.06, rng.integers(-20, 21)))


def transpose(rng, shape, perm) -> Call:
    x = Var("x", TensorType(shape, "int8", q(0.05, rng.integers(-128, 128))))
    return _call("transpose", [x], {"perm": perm, "perm_dtype": "int32"}, x.type.quant)


CASES = {
    # conv2d through im2col: filter-row tails (K % 4), odd output channels, odd pixel counts, padding
    "conv_3x3_ic3_oc16_same": lambda r: conv(r, (9, 9), 3, 16, (3, 3)),
    "conv_3x3_ic5_oc7_same_s2_relu": lambda r: conv(r, (9, 8), 5, 7, (3, 3), stride=(2, 2), act="RELU"),
    "conv_3x3_ic16_oc9_valid": lambda r: conv(r, (7, 6), 16, 9, (3, 3), padding="VALID"),
    "conv_10x4_ic1_oc8_s2_same": lambda r: conv(r, (25, 10), 1, 8, (10, 4), stride=(2, 2)),
    "conv_3x3_dil2_ic4_oc6": lambda r: conv(r, (9, 9), 4, 6, (3, 3), dil=(2, 2)),
    "conv_5x3_ic6_oc5_dil_2x1_relu6": lambda r: conv(r, (11, 7), 6, 5, (5, 3), dil=(2, 1), act="RELU6"),
    "conv_3x1_ic7_oc3_nobias": lambda r: conv(r, (5, 5), 7, 3, (3, 1), bias=False),
    "conv_3x3_ic32_oc33_per_tensor": lambda r: conv(r, (5, 5), 32, 33, (3, 3), per_channel=False),
    "conv_2x2_ic2_oc2_1px": lambda r: conv(r, (2, 2), 2, 2, (2, 2), padding="VALID"),
    # 3x3 over three channels (the first layers): the DSP path widens blocks of three windows wholly
    # inside the input straight from the input rows (wide maps: most blocks), the others through the
    # int8 column; stride 2, odd pixel counts, odd out_c, VALID (the right edge's over-read), dilation
    "conv_3x3_ic3_oc8_s2_same_wide": lambda r: conv(r, (15, 21), 3, 8, (3, 3), stride=(2, 2)),
    "conv_3x3_ic3_oc7_relu6_wide": lambda r: conv(r, (7, 17), 3, 7, (3, 3), act="RELU6"),
    "conv_3x3_ic3_oc5_valid_wide": lambda r: conv(r, (6, 16), 3, 5, (3, 3), padding="VALID"),
    "conv_3x3_ic3_oc6_dil2x1_wide": lambda r: conv(r, (12, 14), 3, 6, (3, 3), dil=(2, 1), stride=(1, 2)),
    # the blocks the rows' runs do not take, staged on the fast path (even out_c, no clamp): maps two
    # pixels wide (every window over a border, every block across rows), VALID with stride 2 (the
    # right edge's over-read), and in the fused residual kernel (blocks of pixels from mid-row)
    "conv_3x3_ic3_oc8_narrow_staged": lambda r: conv(r, (7, 2), 3, 8, (3, 3)),
    "conv_3x3_ic3_oc10_s2_valid_staged": lambda r: conv(r, (11, 13), 3, 10, (3, 3), stride=(2, 2), padding="VALID"),
    "conv_add_3x3_ic3_oc8_staged": lambda r: conv_add(r, (9, 10), 3, 8, (3, 3)),
    # mcu_conv3_rows_asm's pair loop at its ends: one pair (out_c 2) and sixteen (out_c 32), long
    # runs of blocks along odd-width rows (stride 1 and 2)
    "conv_3x3_ic3_oc2_s2_conv3": lambda r: conv(r, (13, 25), 3, 2, (3, 3), stride=(2, 2)),
    "conv_3x3_ic3_oc32_conv3": lambda r: conv(r, (6, 23), 3, 32, (3, 3)),
    # one output pixel whose window is the whole input (a classifier head): the one-row fully
    # connected kernel, on the flattened input
    "conv_1x1_ic256_oc2_1px_head": lambda r: conv(r, (1, 1), 256, 2, (1, 1)),
    "conv_3x3_ic5_oc7_valid_1px_relu": lambda r: conv(r, (3, 3), 5, 7, (3, 3), padding="VALID", act="RELU"),
    # in_c % 16 != 0 with out_c % 4 == 0 (Helium: two plain columns a pair), odd pixel counts,
    # dilation across
    "conv_3x3_ic8_oc8_odd_px": lambda r: conv(r, (5, 7), 8, 8, (3, 3)),
    "conv_3x3_ic24_oc12_s2x1_dil1x2": lambda r: conv(r, (9, 8), 24, 12, (3, 3), stride=(2, 1), dil=(1, 2)),
    "conv_2x3_ic5_oc4_valid": lambda r: conv(r, (6, 7), 5, 4, (2, 3), padding="VALID"),
    # Helium's two-pixel im2col path for any in_c (k >= 16: two plain columns, the k % 16 values past
    # the steps under a predicate): squeezenet's 3x3 8 -> 32 with an odd pixel count, stride and
    # padding, VALID with k = 24, dilation, k = 16 (the least it takes) and k = 15 (one pixel at a
    # time)
    "conv_3x3_ic8_oc32_odd_px": lambda r: conv(r, (7, 9), 8, 32, (3, 3)),
    # Helium's im2col pairs: both windows inside (stride 2 across), the border's padded taps, windows
    # wider than the input (padding on both sides of one row), a pair across two output rows
    "conv_3x3_ic8_oc8_s2_pairs": lambda r: conv(r, (9, 10), 8, 8, (3, 3), stride=(2, 2)),
    "conv_5x5_ic8_oc12_narrow_pairs": lambda r: conv(r, (4, 3), 8, 12, (5, 5)),
    "conv_3x3_ic4_oc8_s1x3_pairs": lambda r: conv(r, (5, 10), 4, 8, (3, 3), stride=(1, 3)),
    # Helium in_c 8: an odd last pixel through the two-pixel assembly as both of a pair
    "conv_1x1_ic8_oc20_odd_px_relu": lambda r: conv(r, (3, 5), 8, 20, (1, 1), act="RELU"),
    # Helium 16 < k <= 32 (one step and the rest): k = 32 through im2col, k = 20 1x1 with a rows tail
    "conv_2x2_ic8_oc8_k32": lambda r: conv(r, (5, 6), 8, 8, (2, 2)),
    "conv_1x1_ic20_oc10_k20": lambda r: conv(r, (3, 3), 20, 10, (1, 1), act="RELU6"),
    "conv_3x3_ic24_oc8_s2_same": lambda r: conv(r, (7, 8), 24, 8, (3, 3), stride=(2, 2)),
    "conv_3x1_ic8_oc4_valid_k24": lambda r: conv(r, (6, 5), 8, 4, (3, 1), padding="VALID"),
    "conv_3x3_ic7_oc12_dil2_k63": lambda r: conv(r, (8, 9), 7, 12, (3, 3), dil=(2, 2)),
    "conv_4x4_ic1_oc4_k16": lambda r: conv(r, (6, 7), 1, 4, (4, 4)),
    "conv_3x5_ic1_oc8_k15": lambda r: conv(r, (5, 6), 1, 8, (3, 5)),
    # the whole channel loop in one assembly block (mcu_cmsis_mve_matvec2_any): several groups of
    # four, the clamp read from the layer's state, a last row after the groups, an odd pixel
    "conv_3x3_ic8_oc13_relu6": lambda r: conv(r, (5, 5), 8, 13, (3, 3), act="RELU6"),
    # the int8 column's border rows: the taps inside one run [lo, hi) over the padded row (a 5-wide
    # filter two taps over the left edge), or with horizontal dilation tap by tap
    "conv_5x5_ic3_oc4_s2_same": lambda r: conv(r, (9, 11), 3, 4, (5, 5), stride=(2, 2)),
    "conv_3x3_ic5_oc6_dil1x2_same": lambda r: conv(r, (8, 9), 5, 6, (3, 3), dil=(1, 2)),
    # 1x1 without im2col, any stride
    "conv_1x1_ic8_oc16": lambda r: conv(r, (5, 5), 8, 16, (1, 1)),
    # in_c 8 on Helium (mcu_cmsis_mve_matvec2_k8): the pixels widened once for three groups of four,
    # the clamp, stride 2
    "conv_1x1_ic8_oc12_relu6_s2": lambda r: conv(r, (7, 5), 8, 12, (1, 1), stride=(2, 2), act="RELU6"),
    # the wide layout's dense blocks, widened by the assembly (one group of four, an odd count, the
    # most the layout takes: 11), a whole number of blocks or a short last one after them
    "conv_1x1_ic4_oc4_dense": lambda r: conv(r, (3, 3), 4, 4, (1, 1)),
    "conv_1x1_ic12_oc10_dense": lambda r: conv(r, (4, 6), 12, 10, (1, 1)),
    "conv_1x1_ic44_oc6_dense": lambda r: conv(r, (5, 4), 44, 6, (1, 1)),
    # the small-K run on the stack (mcu_cmsis_pair_small_dsp.h, in_c <= 32): its longest K (every
    # straight step), one pair, many pairs, a short last block after the run, one block alone, and
    # in_c 36 just past it (the wide routine's run)
    "conv_1x1_ic32_oc64_small": lambda r: conv(r, (3, 4), 32, 64, (1, 1)),
    "conv_1x1_ic28_oc2_small_one_pair": lambda r: conv(r, (2, 5), 28, 2, (1, 1)),
    "conv_1x1_ic20_oc34_small_tail": lambda r: conv(r, (4, 4), 20, 34, (1, 1)),
    "conv_1x1_ic8_oc6_small_one_block": lambda r: conv(r, (1, 3), 8, 6, (1, 1)),
    "conv_1x1_ic36_oc8_past_small": lambda r: conv(r, (3, 3), 36, 8, (1, 1)),
    # its routines specialised for K = 8, 16, 24, 32 (mcu_pair_small_k8 ...): one pair, three, many,
    # odd pair counts, one block alone, short last blocks after the run, with and without ReLU
    "conv_1x1_ic8_oc2_small8_one_pair": lambda r: conv(r, (4, 5), 8, 2, (1, 1)),
    "conv_1x1_ic8_oc34_small8_relu": lambda r: conv(r, (3, 3), 8, 34, (1, 1), act="RELU", out_zp=-128),
    "conv_1x1_ic16_oc6_small16_one_block": lambda r: conv(r, (1, 3), 16, 6, (1, 1)),
    "conv_1x1_ic16_oc10_small16_relu_tail": lambda r: conv(r, (4, 5), 16, 10, (1, 1), act="RELU", out_zp=-128),
    "conv_1x1_ic24_oc6_small24_relu": lambda r: conv(r, (3, 7), 24, 6, (1, 1), act="RELU", out_zp=-128),
    "conv_1x1_ic24_oc14_small24": lambda r: conv(r, (2, 4), 24, 14, (1, 1)),
    "conv_1x1_ic32_oc10_small32_relu_tail": lambda r: conv(r, (5, 2), 32, 10, (1, 1), act="RELU", out_zp=-128),
    "conv_1x1_ic32_oc2_small32_one_pair": lambda r: conv(r, (3, 3), 32, 2, (1, 1)),
    "conv_1x1_ic13_oc11_s2": lambda r: conv(r, (7, 9), 13, 11, (1, 1), stride=(2, 2)),
    "conv_1x1_ic64_oc3_relu_n1": lambda r: conv(r, (3, 5), 64, 3, (1, 1), act="RELU_N1_TO_1"),
    "conv_1x1_ic1_oc1_s3x2": lambda r: conv(r, (7, 5), 1, 1, (1, 1), stride=(3, 2)),
    # 1x1 with in_c 16 / 32 / 64 / 128 and out_c % 4 == 0: Helium's two-pixel unrolled path
    "conv_1x1_ic16_oc12_odd_px": lambda r: conv(r, (3, 5), 16, 12, (1, 1)),
    # other in_c > 16 with out_c % 4 == 0: Helium's two-pixel loop (mcu_cmsis_mve_matvec2_any), in_c %
    # 16 values past its steps loaded under a VCTP predicate (8, 8 with stride 2, 1, none), an odd
    # pixel count
    "conv_1x1_ic24_oc12_odd_px": lambda r: conv(r, (3, 5), 24, 12, (1, 1)),
    "conv_1x1_ic40_oc8_s2": lambda r: conv(r, (7, 6), 40, 8, (1, 1), stride=(2, 2)),
    "conv_1x1_ic17_oc4_relu": lambda r: conv(r, (4, 4), 17, 4, (1, 1), act="RELU"),
    "conv_1x1_ic192_oc32": lambda r: conv(r, (3, 3), 192, 32, (1, 1)),
    "conv_1x1_ic24_oc20_relu6_s2": lambda r: conv(r, (5, 7), 24, 20, (1, 1), stride=(2, 2), act="RELU6"),
    # out_c % 4 != 0 on the two-pixel loop: the last rows a weight pair at a time
    # (mcu_cmsis_mve_rows_tail; squeezenet's 256 -> 10 head, two rows; one; three with in_c 16)
    "conv_1x1_ic256_oc10_head": lambda r: conv(r, (3, 3), 256, 10, (1, 1)),
    "conv_1x1_ic40_oc5_relu6": lambda r: conv(r, (3, 4), 40, 5, (1, 1), act="RELU6"),
    "conv_1x1_ic16_oc7": lambda r: conv(r, (5, 3), 16, 7, (1, 1)),
    # the DSP ISA's wide pair layout (K < 48): every entry step of the eight-step K loop, K % 4 tails,
    # odd output channels, a clamp (the other requantization form)
    "conv_1x1_ic24_oc9_wide_layout": lambda r: conv(r, (4, 7), 24, 9, (1, 1)),
    "conv_1x1_ic47_oc5_wide_layout": lambda r: conv(r, (3, 4), 47, 5, (1, 1)),
    "conv_1x1_ic4_oc3_relu_wide_layout": lambda r: conv(r, (5, 3), 4, 3, (1, 1), act="RELU"),
    "conv_2x2_ic11_oc6_s2_wide_layout": lambda r: conv(r, (7, 8), 11, 6, (2, 2), stride=(2, 2)),
    # in_c % 4 == 0 with K < 48: windows inside the input and over the border widened, then put in the
    # wide layout's order (mcu_pair_wide_order)
    "conv_3x3_ic4_oc6_wide_layout": lambda r: conv(r, (6, 7), 4, 6, (3, 3)),
    "conv_1x1_ic32_oc8_s2": lambda r: conv(r, (9, 7), 32, 8, (1, 1), stride=(2, 2)),
    "conv_1x1_ic64_oc8_relu": lambda r: conv(r, (4, 3), 64, 8, (1, 1), act="RELU"),
    "conv_1x1_ic128_oc4": lambda r: conv(r, (3, 3), 128, 4, (1, 1)),
    # the offset pair layout (K >= 48): Helium's two-pixel im2col and 1x1 (in_c 256) kernels, and
    # pairs whose second row sits at the layout's bound (|bias_b| + 128 * sum|b| just under 2^23:
    # taken) or on it (the plain layout)
    "conv_3x3_ic16_oc8_offset": lambda r: conv(r, (6, 5), 16, 8, (3, 3)),
    "conv_1x1_ic256_oc8_offset": lambda r: conv(r, (3, 3), 256, 8, (1, 1)),
    # the offset layout's dense blocks (the assembly widens and sums them, one call for the layer):
    # KWS's shape, a short last block (one or two pixels), fewer pixels than a block, an odd row
    # count (its last row off the assembly), K % 8 != 0 (the loop entered mid-body)
    "conv_1x1_ic64_oc64_offset_blocks": lambda r: conv(r, (5, 5), 64, 64, (1, 1)),
    "conv_1x1_ic52_oc8_offset_short_block": lambda r: conv(r, (2, 5), 52, 8, (1, 1)),
    "conv_1x1_ic48_oc6_offset_2px": lambda r: conv(r, (1, 2), 48, 6, (1, 1)),
    "conv_1x1_ic96_oc7_offset_odd_rows": lambda r: conv(r, (4, 2), 96, 7, (1, 1)),
    # output zero point -128 (ReLU-like: the offset routine without the negative accumulators'
    # rounding correction, PAIR_RELU), with and without a ReLU, a 3x3 one through the im2col columns
    "conv_1x1_ic64_oc10_offset_zp_min_relu": lambda r: conv(r, (5, 4), 64, 10, (1, 1), act="RELU", out_zp=-128),
    "conv_1x1_ic48_oc7_offset_zp_min": lambda r: conv(r, (3, 5), 48, 7, (1, 1), out_zp=-128),
    "conv_3x3_ic16_oc6_offset_zp_min_relu": lambda r: conv(r, (5, 6), 16, 6, (3, 3), act="RELU", out_zp=-128),
    "conv_1x1_ic516_oc6_offset_bound": lambda r: saturated(conv(r, (2, 3), 516, 6, (1, 1)), (1, 3), 33277),
    "conv_1x1_ic516_oc6_offset_bound_neg": lambda r: saturated(conv(r, (2, 3), 516, 6, (1, 1)), (1,), -33278),
    "conv_1x1_ic520_oc5_plain_bound": lambda r: saturated(conv(r, (2, 2), 520, 5, (1, 1)), (1,), 0),
    "conv_1x1_ic516_oc5_plain_bias_bound": lambda r: saturated(conv(r, (2, 2), 516, 5, (1, 1)), (1,), 33278),
    # pairs' second rows whose output is constant (bias past 2^30, zero weights): the offset layout
    "conv_1x1_ic64_oc6_offset_dead_rows": lambda r: extreme(conv(r, (3, 3), 64, 6, (1, 1)),
                                                            {1: 2**30 + 9, 3: -(2**30) - 9}, (1, 3)),
    # depthwise 3x3 fast path: interior and padded borders, channel tails
    "dw3x3_c8_same": lambda r: dwconv(r, (7, 7), 8, 1, (3, 3)),
    "dw3x3_c13_same_s2_even": lambda r: dwconv(r, (8, 8), 13, 1, (3, 3), stride=(2, 2), act="RELU6"),
    "dw3x3_c6_same_s2_odd": lambda r: dwconv(r, (9, 7), 6, 1, (3, 3), stride=(2, 2)),
    "dw3x3_c64_valid_noborder": lambda r: dwconv(r, (5, 6), 64, 1, (3, 3), padding="VALID"),
    "dw3x3_c3_1x1_input": lambda r: dwconv(r, (1, 1), 3, 1, (3, 3), act="RELU"),
    "dw3x3_c4_s1x2_nobias": lambda r: dwconv(r, (6, 9), 4, 1, (3, 3), stride=(1, 2), bias=False),
    # depthwise 3x3 on tall maps (eight or more rows inside vertically, eight or more columns):
    # Helium's column path
    "dw3x3_c5_tall_same": lambda r: dwconv(r, (13, 8), 5, 1, (3, 3)),
    "dw3x3_c16_tall_s2_relu6": lambda r: dwconv(r, (20, 15), 16, 1, (3, 3), stride=(2, 2), act="RELU6"),
    "dw3x3_c4_tall_dil2": lambda r: dwconv(r, (14, 8), 4, 1, (3, 3), dil=(2, 2)),
    # general depthwise: other filters, dilation, depth multipliers
    "dw5x5_c16_same": lambda r: dwconv(r, (6, 6), 16, 1, (5, 5)),
    "dw3x3_c5_dil2_same": lambda r: dwconv(r, (9, 9), 5, 1, (3, 3), dil=(2, 2)),
    "dw3x3_c3_mult3_s2_same": lambda r: dwconv(r, (9, 9), 3, 3, (3, 3), stride=(2, 2)),
    "dw3x2_c4_mult2_valid": lambda r: dwconv(r, (6, 7), 4, 2, (3, 2), padding="VALID", act="RELU_N1_TO_1"),
    "dw1x1_c1_mult8": lambda r: dwconv(r, (4, 4), 1, 8, (1, 1)),
    # depthwise line sweeps (DSP): rows / columns, 3x3 stride 1 and 2 (assembly), blocks of four with
    # one pixel left or an overlapping last block, partial groups, other filters along the lines
    "dw3x3_c16_rows_s1": lambda r: dwconv(r, (10, 12), 16, 1, (3, 3)),
    "dw3x3_c8_rows_s1_rest2": lambda r: dwconv(r, (9, 14), 8, 1, (3, 3)),
    "dw3x3_c8_rows_s1_rest1": lambda r: dwconv(r, (9, 13), 8, 1, (3, 3)),
    "dw3x3_c8_columns_s1_rest2": lambda r: dwconv(r, (14, 9), 8, 1, (3, 3)),
    "dw3x3_c12_rows_s2": lambda r: dwconv(r, (17, 18), 12, 1, (3, 3), stride=(2, 2)),
    "dw3x3_c8_columns_narrow": lambda r: dwconv(r, (25, 5), 8, 1, (3, 3)),
    "dw3x3_c6_rows_partial_group": lambda r: dwconv(r, (9, 9), 6, 1, (3, 3)),
    "dw3x3_c8_rows_relu6": lambda r: dwconv(r, (9, 9), 8, 1, (3, 3), act="RELU6"),
    # the stride-1 line sweep's own driver and builder (mcu_cmsis_dw_pairs_group_s1): edge pairs or
    # none, 1 + 2 + 4k inside pairs, three groups over the padding lines, stride 2 or dilation across
    "dw3x3_c8_rows_s1_valid_odd": lambda r: dwconv(r, (12, 17), 8, 1, (3, 3), padding="VALID"),
    "dw3x3_c8_rows_s1_valid_even": lambda r: dwconv(r, (12, 16), 8, 1, (3, 3), padding="VALID"),
    "dw3x3_c12_rows_s1_n7": lambda r: dwconv(r, (8, 16), 12, 1, (3, 3)),
    "dw3x3_c8_rows_s2x1": lambda r: dwconv(r, (18, 13), 8, 1, (3, 3), stride=(2, 1)),
    "dw3x3_c4_rows_dil2x1": lambda r: dwconv(r, (14, 13), 4, 1, (3, 3), dil=(2, 1)),
    "dw5x5_c8_s2_lines": lambda r: dwconv(r, (16, 18), 8, 1, (5, 5), stride=(2, 2)),
    "dw9x1_c16_temporal": lambda r: dwconv(r, (40, 1), 16, 1, (9, 1)),
    "dw9x1_c8_temporal_s2": lambda r: dwconv(r, (33, 1), 8, 1, (9, 1), stride=(2, 2)),
    "dw1x5_c8_wide": lambda r: dwconv(r, (8, 20), 8, 1, (1, 5)),
    "dw5x1_c12_s2_tall": lambda r: dwconv(r, (22, 12), 12, 1, (5, 1), stride=(2, 2)),
    # several filter lines of the generic lane pair (columns of a 5x3 filter), dilated across them
    "dw5x3_c8_s2_dil1x2_lines": lambda r: dwconv(r, (17, 14), 8, 1, (5, 3), stride=(2, 2), dil=(1, 2)),
    "dw3x3_c2_mult2_lines": lambda r: dwconv(r, (12, 11), 2, 2, (3, 3)),
    # K x 1 / 1 x K depthwise, Helium's line path: the inside rows in one raster run (K x 1), the
    # border columns rewritten after the run (1 x K), per line (strides), 3 / 5 / 9 taps with zero
    # taps padding, dilation, odd channels and widths (tails); 1-D maps keep the pixel path
    "dw5x1_c24_same_raster": lambda r: dwconv(r, (12, 9), 24, 1, (5, 1)),
    "dw1x5_c13_same_raster": lambda r: dwconv(r, (7, 10), 13, 1, (1, 5), act="RELU6"),
    # 1 x K on Helium: the inside windows row by row in one assembly loop (whole vectors a row, a
    # tail-predicated last one; rows two input rows apart; lanes two columns apart), the border
    # columns with their inside taps only
    "dw1x3_c4_rows_whole": lambda r: dwconv(r, (5, 10), 4, 1, (1, 3)),
    "dw1x5_c6_rows_s2x1": lambda r: dwconv(r, (9, 11), 6, 1, (1, 5), stride=(2, 1)),
    "dw1x7_c3_rows_s1x2": lambda r: dwconv(r, (6, 23), 3, 1, (1, 7), stride=(1, 2), act="RELU"),
    "dw3x1_c7_valid": lambda r: dwconv(r, (9, 6), 7, 1, (3, 1), padding="VALID"),
    "dw1x7_c5_dil2": lambda r: dwconv(r, (6, 19), 5, 1, (1, 7), dil=(1, 2)),
    "dw1x8_c32_one_row": lambda r: dwconv(r, (1, 49), 32, 1, (1, 8), padding="VALID"),
    "dw7x1_c6_s2": lambda r: dwconv(r, (15, 5), 6, 1, (7, 1), stride=(2, 2)),
    "dw2x1_c4_nobias": lambda r: dwconv(r, (5, 4), 4, 1, (2, 1), bias=False),
    "dw1x3_c9_s1x2": lambda r: dwconv(r, (5, 11), 9, 1, (1, 3), stride=(1, 2)),
    "dw9x1_c3_short": lambda r: dwconv(r, (6, 2), 3, 1, (9, 1)),
    # the pair layout (DSP, 3x3 stride 1 along lines, an even number of positions along them): a
    # partial group after it, valid padding, stride and dilation across lines, columns with an
    # overlapping last block
    "dw3x3_c7_pairs_partial": lambda r: dwconv(r, (8, 10), 7, 1, (3, 3)),
    "dw3x3_c12_pairs_valid": lambda r: dwconv(r, (10, 12), 12, 1, (3, 3), padding="VALID"),
    "dw3x3_c8_pairs_s2x1": lambda r: dwconv(r, (11, 12), 8, 1, (3, 3), stride=(2, 1)),
    "dw3x3_c4_pairs_dil2x1": lambda r: dwconv(r, (10, 12), 4, 1, (3, 3), dil=(2, 1)),
    "dw3x3_c16_pairs_columns": lambda r: dwconv(r, (14, 6), 16, 1, (3, 3)),
    # stride 2 along the lines with a padded first position: columns with an overlapping last block
    # and a partial group; rows whose inside pairs are odd in number (one before the two at a time)
    "dw3x3_c13_pairs_s2_columns_overlap": lambda r: dwconv(r, (21, 13), 13, 1, (3, 3), stride=(2, 2)),
    "dw3x3_c8_pairs_s2_rows_pad1": lambda r: dwconv(r, (13, 23), 8, 1, (3, 3), stride=(2, 2)),
    # valid padding, an odd width: a rear edge pair (the last position and the zero point), no front one
    "dw3x3_c8_pairs_valid_odd_rear": lambda r: dwconv(r, (9, 13), 8, 1, (3, 3), padding="VALID"),
    # one input channel (DSP: dot products of tap pairs; Helium: dot products of the taps copied into
    # a band, gathered with dilation; over 48 taps the pixel path, a byte broadcast per tap)
    "dw3x3_c1_mult8_s2": lambda r: dwconv(r, (17, 16), 1, 8, (3, 3), stride=(2, 2)),
    "dw10x4_c1_mult8_s2_kws": lambda r: dwconv(r, (25, 10), 1, 8, (10, 4), stride=(2, 2)),
    "dw3x3_c1_mult6": lambda r: dwconv(r, (7, 9), 1, 6, (3, 3)),
    "dw3x3_c1_mult16_valid": lambda r: dwconv(r, (9, 8), 1, 16, (3, 3), padding="VALID"),
    "dw3x3_c1_mult4_dil2": lambda r: dwconv(r, (11, 12), 1, 4, (3, 3), dil=(2, 2)),
    "dw5x5_c1_mult3_s1x2_wide": lambda r: dwconv(r, (9, 37), 1, 3, (5, 5), stride=(1, 2), act="RELU6"),
    "dw7x7_c1_mult4_over48": lambda r: dwconv(r, (10, 9), 1, 4, (7, 7)),
    # one input channel lowered for Helium with its tables laid out offline (sweep ONE_TABLE, only
    # the band in scratch; the plain C loop on the other builds): convolutions of one input channel
    # too, partial last groups of channels, borders, strides, 16 / 32 / 48 taps
    "conv_5x3_ic1_oc7_s2x1_relu": lambda r: conv(r, (13, 11), 1, 7, (5, 3), stride=(2, 1), act="RELU"),
    "conv_6x6_ic1_oc2_s2_valid": lambda r: conv(r, (14, 13), 1, 2, (6, 6), stride=(2, 2), padding="VALID"),
    "conv_3x3_ic1_oc9_dil2": lambda r: conv(r, (9, 10), 1, 9, (3, 3), dil=(2, 2)),
    "dw4x4_c1_mult13_s3": lambda r: dwconv(r, (14, 15), 1, 13, (4, 4), stride=(3, 3)),
    "dw2x8_c1_mult5_s1x2_relu6": lambda r: dwconv(r, (6, 21), 1, 5, (2, 8), stride=(1, 2), act="RELU6"),
    "dw3x3_c4_mult4": lambda r: dwconv(r, (9, 9), 4, 4, (3, 3)),
    # depth multipliers that are neither 1 nor a multiple of four (Helium: each lane's input channel
    # gathered), odd channel counts, stride 2, padding, dilation, more than sixteen channels
    "dw3x3_c16_mult2_s2_same": lambda r: dwconv(r, (11, 10), 16, 2, (3, 3), stride=(2, 2)),
    "dw3x3_c7_mult2_valid": lambda r: dwconv(r, (8, 9), 7, 2, (3, 3), padding="VALID", act="RELU6"),
    "dw3x3_c5_mult3_same": lambda r: dwconv(r, (7, 6), 5, 3, (3, 3)),
    "dw5x5_c3_mult5_s2_dil": lambda r: dwconv(r, (13, 12), 3, 5, (5, 5), stride=(2, 2), dil=(1, 2)),
    "dw3x3_c9_mult6_s2": lambda r: dwconv(r, (9, 8), 9, 6, (3, 3), stride=(2, 2), bias=False),
    "dw3x3_c3_mult8_same": lambda r: dwconv(r, (6, 7), 3, 8, (3, 3), act="RELU"),
    "dw3x3_c21_mult7_valid": lambda r: dwconv(r, (5, 5), 21, 7, (3, 3), padding="VALID"),
    # multiples of four: the last twelve channels in one pass (Helium), after sixteen or alone
    "dw3x3_c3_mult4_same": lambda r: dwconv(r, (8, 7), 3, 4, (3, 3)),
    "dw3x3_c7_mult4_s2_relu6": lambda r: dwconv(r, (9, 10), 7, 4, (3, 3), stride=(2, 2), act="RELU6"),
    # small maps pixel by pixel (DSP), with a partial group; Helium's column path on many rows
    "dw3x3_c18_pixels": lambda r: dwconv(r, (6, 6), 18, 1, (3, 3)),
    "dw3x3_c40_tall_columns": lambda r: dwconv(r, (20, 6), 40, 1, (3, 3)),
    "dw3x3_c24_s2_pixels": lambda r: dwconv(r, (5, 7), 24, 1, (3, 3), stride=(2, 2)),
    # the pixel sweep's group path (stride 1, whole groups of four, 4 to 14 pixels a row): one band,
    # bands of one to three output rows (few channels: little scratch), odd rows, no padding
    "dw3x3_c64_groups_same": lambda r: dwconv(r, (6, 6), 64, 1, (3, 3)),
    "dw3x3_c16_groups_odd_bands": lambda r: dwconv(r, (7, 7), 16, 1, (3, 3)),
    "dw3x3_c24_groups_bands": lambda r: dwconv(r, (6, 5), 24, 1, (3, 3)),
    "dw3x3_c32_groups_valid": lambda r: dwconv(r, (9, 6), 32, 1, (3, 3), padding="VALID"),
    "dw3x3_c8_groups_narrow_fallback": lambda r: dwconv(r, (4, 3), 8, 1, (3, 3)),
    # (rows of an odd width past the input on the right only: the widening's edge pair after, none before)
    "dw3x3_c32_groups_valid_odd": lambda r: dwconv(r, (6, 7), 32, 1, (3, 3), padding="VALID"),
    # 3x3 output maps, SAME, stride 1 over 3x3 and stride 2 over 6x6 (DSP: every tap inside the input
    # once per group of four); a partial group, RELU6 (the clamp), and at stride 2 VALID 7x7 and SAME
    # 5x5 (padded above) take the pixels
    "dw3x3_c20_map3": lambda r: dwconv(r, (3, 3), 20, 1, (3, 3)),
    "dw3x3_c4_map3_nobias": lambda r: dwconv(r, (3, 3), 4, 1, (3, 3), bias=False),
    "dw3x3_c6_map3_partial": lambda r: dwconv(r, (3, 3), 6, 1, (3, 3)),
    "dw3x3_c8_map3_relu6": lambda r: dwconv(r, (3, 3), 8, 1, (3, 3), act="RELU6"),
    "dw3x3_c12_map3_s2": lambda r: dwconv(r, (6, 6), 12, 1, (3, 3), stride=(2, 2)),
    "dw3x3_c4_map3_s2_valid": lambda r: dwconv(r, (7, 7), 4, 1, (3, 3), stride=(2, 2), padding="VALID"),
    "dw3x3_c4_map3_s2_nobias": lambda r: dwconv(r, (6, 6), 4, 1, (3, 3), stride=(2, 2), bias=False),
    "dw3x3_c10_map3_s2_partial": lambda r: dwconv(r, (6, 6), 10, 1, (3, 3), stride=(2, 2)),
    "dw3x3_c8_map3_s2_relu6": lambda r: dwconv(r, (6, 6), 8, 1, (3, 3), stride=(2, 2), act="RELU6"),
    "dw3x3_c8_map3_s2_padded_above": lambda r: dwconv(r, (5, 5), 8, 1, (3, 3), stride=(2, 2)),
    # a map narrower than the window (every window past both side borders; SAME)
    "dw3x3_c12_narrow_pixels": lambda r: dwconv(r, (2, 1), 12, 1, (3, 3)),
    # fully connected
    "fc_1x32x16": lambda r: fc(r, 1, 32, 16),
    "fc_1x37x13_relu": lambda r: fc(r, 1, 37, 13, act="RELU"),
    "fc_3x10x5_per_channel_nobias": lambda r: fc(r, 3, 10, 5, bias=False, per_channel=True),
    "fc_1x3x1": lambda r: fc(r, 1, 3, 1),
    "fc_1x256x2": lambda r: fc(r, 1, 256, 2),  # a classifier head: one group of two units
    "fc_1x40x11_relu": lambda r: fc(r, 1, 40, 11, act="RELU"),  # groups of four, four, three
    "fc_2x640x128_relu6": lambda r: fc(r, 2, 640, 128, act="RELU6", per_channel=True),
    # one row (the word layout): depth tails of 1 to 3 values, a short last group of 2 or 3 units
    "fc_1x42x6": lambda r: fc(r, 1, 42, 6),
    # several rows, the plain pair layout through the fast pair assembly (mcu_pair_rows3_asm), a short last block
    "fc_4x64x8_pair_asm": lambda r: fc(r, 4, 64, 8),
    "fc_1x23x7_per_channel": lambda r: fc(r, 1, 23, 7, per_channel=True),
    "fc_1x640x128_relu": lambda r: fc(r, 1, 640, 128, act="RELU", per_channel=True),
    # tiny heads: whole groups of four run by one assembly loop with their requantization (full int8
    # range, or clamped), a short last group of one, two or three units after them
    "fc_1x16x12": lambda r: fc(r, 1, 16, 12),
    "fc_1x128x2": lambda r: fc(r, 1, 128, 2),
    "fc_1x48x5_relu6": lambda r: fc(r, 1, 48, 5, act="RELU6"),
    "fc_1x32x7_relu": lambda r: fc(r, 1, 32, 7, act="RELU", per_channel=True),
    "fc_1x16x1": lambda r: fc(r, 1, 16, 1),
    # depths off a multiple of sixteen: up to 64 the row zero-padded on the stack (fc_groups_padded)
    "fc_1x8x12_relu": lambda r: fc(r, 1, 8, 12, act="RELU"),
    "fc_1x61x9_relu6": lambda r: fc(r, 1, 61, 9, act="RELU6", per_channel=True),
    "fc_1x65x8": lambda r: fc(r, 1, 65, 8),
    # pools: partial windows, large windows (over 256 elements: the 32-bit sum path), clamps
    "avg_3x3_s1_same_c7": lambda r: pool(r, "average_pool_2d", (6, 5), 7, (3, 3), (1, 1)),
    "avg_2x2_s2_same_odd_c8": lambda r: pool(r, "average_pool_2d", (7, 7), 8, (2, 2), (2, 2)),
    "avg_global_20x20_c5": lambda r: pool(r, "average_pool_2d", (20, 20), 5, (20, 20), (1, 1), "VALID"),
    "avg_global_16x16_c8_relu": lambda r: pool(r, "average_pool_2d", (16, 16), 8, (16, 16), (1, 1), "VALID", "RELU"),
    "avg_3x2_s1x2_valid_c12_relu6": lambda r: pool(r, "average_pool_2d", (7, 8), 12, (3, 2), (1, 2), "VALID", "RELU6"),
    "max_3x3_s2_same_c9": lambda r: pool(r, "max_pool_2d", (9, 9), 9, (3, 3), (2, 2)),
    "max_2x2_s2_valid_c16_relu": lambda r: pool(r, "max_pool_2d", (8, 6), 16, (2, 2), (2, 2), "VALID", "RELU"),
    "max_3x3_s1_same_c4_relu_n1": lambda r: pool(r, "max_pool_2d", (5, 5), 4, (3, 3), (1, 1), act="RELU_N1_TO_1"),
    # element-wise
    "add_1x4x4x8": lambda r: binary(r, "add", (1, 4, 4, 8)),
    "add_1x5x5x3_relu": lambda r: binary(r, "add", (1, 5, 5, 3), "RELU"),
    "add_same_input": lambda r: binary(r, "add", (1, 3, 7), same_input=True),
    # the smallest output scale TFLM allows: an output rescale without division (shift 0)
    "add_output_shift_zero": lambda r: binary(r, "add", (1, 5, 7), out_s=1e-7),
    # multipliers below 2^-32, flushed to zero: input 2 contributes nothing / the output is its zero point
    "add_input2_flushed": lambda r: flushed_add(r, (1, 5, 7), (0.05, 0.05 * 2.0 ** -34), 0.06),
    "add_output_flushed": lambda r: flushed_add(r, (1, 3, 9), (0.05, 0.04), 0.05 * 2.0 ** 14),
    # a convolution fused with the ADD of a residual connection: blocks of pixels across rows, a
    # short last block, stride 2 and padding (blocks' windows start inside the input: negative pads
    # on Helium), either operand order, clamps on both, offset and plain pair layouts
    "conv_add_3x3_ic16_oc16_32px": lambda r: conv_add(r, (8, 9), 16, 16, (3, 3)),
    # blocks of six pixels across rows of five, the last block odd (35 pixels): Helium's pairs from
    # the block's first pixel, its odd last pixel alone
    "conv_add_3x3_ic16_oc32_s2_odd_blocks": lambda r: conv_add(r, (13, 9), 16, 32, (3, 3), stride=(2, 2)),
    "conv_add_3x3_ic5_oc7_s2_relu_first": lambda r: conv_add(r, (11, 13), 5, 7, (3, 3), stride=(2, 2), act="RELU"),
    "conv_add_3x3_ic8_oc64_second_relu6": lambda r: conv_add(r, (5, 6), 8, 64, (3, 3), conv_first=False,
                                                             act="RELU6"),
    "conv_add_5x3_ic3_oc9_valid_conv_relu": lambda r: conv_add(r, (9, 17), 3, 9, (5, 3), padding="VALID",
                                                               act="NONE", conv_first=False),
    "mul_1x4x4x8": lambda r: binary(r, "mul", (1, 4, 4, 8)),
    "mul_1x6x5_relu6": lambda r: binary(r, "mul", (1, 6, 5), "RELU6"),
    "mul_square": lambda r: binary(r, "mul", (1, 2, 9), same_input=True),
    # extreme biases: constant channels (zero weights, bias past +-2^30), and layers without a fast
    # requantization proof (multipliers above 1)
    "conv_1x1_ic8_oc6_zero_rows": lambda r: extreme(conv(r, (3, 5), 8, 6, (1, 1)), {0: 2**30, 3: -(2**30) - 9}, (0, 3)),
    "conv_3x3_ic3_oc5_no_proof": lambda r: extreme(conv(r, (5, 5), 3, 5, (3, 3)), {2: 2**30 - 7}, (), 1e-5),
    "conv_3x3_ic3_oc5_wide_no_proof": lambda r: extreme(conv(r, (7, 16), 3, 5, (3, 3)), {2: 2**30 - 7}, (), 1e-5),
    "dw3x3_c8_zero_rows": lambda r: extreme(dwconv(r, (5, 5), 8, 1, (3, 3)), {1: -(2**30) - 1, 6: 2**30}, (1, 6)),
    "dw3x3_c4_no_proof": lambda r: extreme(dwconv(r, (5, 5), 4, 1, (3, 3)), {3: -(2**30) + 3}, (), 2e-5),
    "dw3x3_c4_tall_no_proof": lambda r: extreme(dwconv(r, (12, 4), 4, 1, (3, 3)), {3: -(2**30) + 3}, (), 2e-5),
    "conv_1x1_ic16_oc8_no_proof": lambda r: extreme(conv(r, (3, 3), 16, 8, (1, 1)), {2: 2**30 - 7}, (), 1e-5),
    "dw3x3_c4_mult2_no_proof": lambda r: extreme(dwconv(r, (5, 5), 2, 2, (3, 3)), {3: 2**30}, (), 2e-5),
    "fc_1x16x9_zero_rows": lambda r: extreme(fc(r, 1, 16, 9, per_channel=True), {4: 2**30}, (4,)),
    "fc_2x20x6_no_proof": lambda r: extreme(fc(r, 2, 20, 6), {5: -(2**30)}, (), 1e-4),
    "fc_1x21x7_no_proof": lambda r: extreme(fc(r, 1, 21, 7), {5: -(2**30)}, (), 1e-4),
    # transpose conv: stride phases (kernel a multiple of the stride or not, kernel < stride: bias-only
    # pixels), in_c tails (the 4-value groups), odd out_c and odd pixel counts per phase, batches
    "tconv_3x3_s2_same_ic32_oc16": lambda r: tconv(r, (4, 4), 32, 16, (3, 3), (2, 2), "SAME", (8, 8)),
    "tconv_3x3_s2_same_ic16_oc8_odd_out": lambda r: tconv(r, (5, 5), 16, 8, (3, 3), (2, 2), "SAME", (9, 9), "RELU"),
    "tconv_3x3_s2_valid_ic5_oc3_nobias": lambda r: tconv(r, (4, 5), 5, 3, (3, 3), (2, 2), "VALID", (9, 11), "RELU6",
                                                         bias=False),
    "tconv_3x3_s2_valid_ic4_oc7_bias_only_edge": lambda r: tconv(r, (4, 4), 4, 7, (3, 3), (2, 2), "VALID", (10, 10)),
    "tconv_3x3_s1_same_ic3_oc5_per_tensor": lambda r: tconv(r, (5, 6), 3, 5, (3, 3), (1, 1), "SAME", (5, 6),
                                                            "RELU_N1_TO_1", per_channel=False),
    "tconv_4x4_s2_same_ic2_oc4": lambda r: tconv(r, (3, 5), 2, 4, (4, 4), (2, 2), "SAME", (6, 10)),
    "tconv_4x4_s3_valid_ic6_oc3": lambda r: tconv(r, (3, 3), 6, 3, (4, 4), (3, 3), "VALID", (10, 10)),
    "tconv_2x2_s3_same_ic3_oc2_gaps": lambda r: tconv(r, (3, 4), 3, 2, (2, 2), (3, 3), "SAME", (9, 12)),
    "tconv_5x3_s2x1_same_ic17_oc9": lambda r: tconv(r, (4, 4), 17, 9, (5, 3), (2, 1), "SAME", (8, 4), "RELU"),
    "tconv_5x5_s2_same_ic1_oc1": lambda r: tconv(r, (3, 3), 1, 1, (5, 5), (2, 2), "SAME", (6, 6)),
    "tconv_2x2_s2_valid_ic48_oc20_batch2": lambda r: tconv(r, (3, 3), 48, 20, (2, 2), (2, 2), "VALID", (6, 6),
                                                           batch=2),
    "tconv_3x3_s2_ic8_oc6_no_proof": lambda r: extreme(tconv(r, (3, 3), 8, 6, (3, 3), (2, 2), "SAME", (6, 6)),
                                                       {2: 2**30 - 7}, (), 1e-5),
    "tconv_3x3_s2_ic8_oc6_zero_rows": lambda r: extreme(tconv(r, (3, 3), 8, 6, (3, 3), (2, 2), "SAME", (6, 6)),
                                                        {1: 2**30, 4: -(2**30) - 9}, (1, 4)),
    # transpose: NHWC <-> NCHW planes (4x4 blocks and their edges), strided rows, rank 5, copies
    "transpose_nhwc_to_nchw_1x8x12x16": lambda r: transpose(r, (1, 8, 12, 16), (0, 3, 1, 2)),
    "transpose_nchw_to_nhwc_1x7x5x9": lambda r: transpose(r, (1, 7, 5, 9), (0, 2, 3, 1)),
    "transpose_2d_37x19": lambda r: transpose(r, (37, 19), (1, 0)),
    "transpose_3d_swap_outer_4x6x10": lambda r: transpose(r, (4, 6, 10), (1, 0, 2)),
    "transpose_3d_2x3x5_201": lambda r: transpose(r, (2, 3, 5), (2, 0, 1)),
    "transpose_5d_2x3x4x5x3": lambda r: transpose(r, (2, 3, 4, 5, 3), (4, 2, 0, 3, 1)),
    "transpose_wide_stride_2x3x6000": lambda r: transpose(r, (2, 3, 6000), (2, 1, 0)),
    # maximum / minimum: odd lengths (the vector tails), a scalar on either side
    "maximum_1x37": lambda r: max_min(r, "maximum", (1, 37), (1, 37)),
    "minimum_1x4x4x8": lambda r: max_min(r, "minimum", (1, 4, 4, 8), (1, 4, 4, 8)),
    "maximum_scalar_second_1x5x7": lambda r: max_min(r, "maximum", (1, 5, 7), (1,)),
    "minimum_scalar_first_3x11": lambda r: max_min(r, "minimum", (1, 1), (3, 11)),
    # batch matmul: a constant rhs (stored [cols][depth]), both activations with and without adj_y
    # (the rhs widened across its columns or read as it is), adj_x (the lhs transposed in scratch),
    # broadcast batches, one and two rows (the DSP path without widening), depth and column tails,
    # extreme zero points, a layer without a fast requantization
    "bmm_1x49x64_const_64x64": lambda r: batch_matmul(r, (1, 49, 64), (64, 64), const_rhs=True),
    "bmm_4x16x32_4x32x16": lambda r: batch_matmul(r, (4, 16, 32), (4, 32, 16)),
    "bmm_2x9x30_2x11x30_adj_y": lambda r: batch_matmul(r, (2, 9, 30), (2, 11, 30), adj_y=True),
    "bmm_2x1x7x5_3x7x6_adj_x": lambda r: batch_matmul(r, (2, 1, 7, 5), (3, 7, 6), adj_x=True),
    "bmm_1x37_37x9": lambda r: batch_matmul(r, (1, 37), (37, 9)),
    "bmm_2x13_6x13_adj_y_const": lambda r: batch_matmul(r, (2, 13), (6, 13), adj_y=True, const_rhs=True),
    "bmm_3x8_8x5_extreme_zp": lambda r: batch_matmul(r, (3, 8), (8, 5), zps=(127, -128)),
    "bmm_5x4_4x6_no_proof": lambda r: batch_matmul(r, (5, 4), (4, 6), out_s=1e-5),
    # softmax
    "softmax_1x10": lambda r: softmax(r, (1, 10)),
    "softmax_3x4x7_beta0p5": lambda r: softmax(r, (3, 4, 7), beta=0.5),
    "softmax_2x300_scale_small": lambda r: softmax(r, (2, 300), scale=0.01),
    "softmax_1x5_beta2p5_wide": lambda r: softmax(r, (1, 5), beta=2.5, scale=0.3),
    # 1001 classes: the all -128 / all 127 input sets are rows of equal values, which TFLM aborts on
    # (sum of exponentials 1001 >= 512): -128 everywhere there
    "softmax_2x1001": lambda r: softmax(r, (2, 1001), scale=0.05),
    # the exponential table (test_softmax_takes_the_table_on_large_layers): 2x1001 and 2x300 take one
    # of 256 entries, 120x3 a short one (scale 0.5: diff_min -62); 1x200 none (200 elements, 256
    # entries), its row longer than SOFTMAX_KEPT (exponentials from 32 on computed twice)
    "softmax_120x3_short_table": lambda r: softmax(r, (120, 3), scale=0.5),
    "softmax_1x200_no_table": lambda r: softmax(r, (1, 200), scale=0.01),
}

def lowered(call: Call, isa: str = DEFAULT_ISA):
    """The cmsis-nn KernelCall of a call (the composite whose pattern and check accept it: an op may
    have several, e.g. int8 and 16x8; of those the one covering the most ops), lowered for `isa`'s
    kernel paths."""
    found = [(e, match(e.pattern, call)) for e in cmsis_nn.COMPOSITES.values() if e.pattern.op == call.op]
    accepted = [(e, m) for e, m in found if m is not None and e.check(m.captures) is None]
    assert accepted, [e.check(m.captures) for e, m in found if m is not None]
    entry, m = max(accepted, key=lambda em: cmsis_nn.pattern_ops(em[0].pattern))  # as partition: the largest
    params = []
    for a in post_order(call):
        if isinstance(a, Var) and a not in params:
            params.append(a)
    fn = Function(tuple(params), call, {"target": cmsis_nn.NAME, "composite": entry.name})
    return fn, cmsis_nn.lower(fn, isa)


def case_data(name: str):
    """(call, fn, KernelCall) of a case, seeded by its name; `<case>@<isa>` is the case lowered for
    that ISA (planner/target.py ISAS), else for the default one."""
    base, _, isa = name.partition("@")
    call = CASES[base](np.random.default_rng(zlib.crc32(base.encode())))
    fn, kc = lowered(call, isa or DEFAULT_ISA)
    return call, fn, kc


@pytest.mark.parametrize("name", sorted(CASES))
def test_kernel_model_equals_registry_reference(name):
    """The kernel model on its precomputed constants (folded bias, reordered weights, multipliers)
    equals the registry's TFLM reference on the same call, on random and extreme inputs."""
    call, fn, kc = case_data(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 1)
    sets = [[rng.integers(-128, 128, p.type.shape).astype(np.int8) for p in fn.params] for _ in range(3)]
    sets += [[np.full(p.type.shape, v, np.int8) for p in fn.params] for v in (-128, 127)]
    def reference(node, env):
        if isinstance(node, Constant):
            return node.data
        if isinstance(node, Var):
            return env[id(node)]
        args = [reference(a, env) for a in node.args]
        return get_op(node.op).reference(args, OpView(tuple(a.type for a in node.args), node.type, node.attrs))

    for inputs in sets:
        expected = reference(call, {id(p): x for p, x in zip(fn.params, inputs)})
        ours = kc.run(inputs)
        assert np.array_equal(ours, expected), first_mismatches(ours, expected)


# ---- the kernels in C, plain and DSP paths -------------------------------------------------------

# symbol -> (parameter struct, the constant roles it reads in order, whether it takes scratch)
SIGNATURES = {
    "mcu_cmsis_conv2d_s8": ("mcu_cmsis_conv_params", ("weights", "bias", "multiplier", "shift", "rq"), "int16_t"),
    "mcu_cmsis_conv2d_1x1_s8": ("mcu_cmsis_conv_params", ("weights", "bias", "multiplier", "shift", "rq"),
                                "int16_t"),
    "mcu_cmsis_conv2d_add_s8": ("mcu_cmsis_conv_add_params",
                                ("weights", "bias", "multiplier", "shift", "rq", "add_table", "add_rq"), "int16_t"),
    "mcu_cmsis_dwconv2d_s8": ("mcu_cmsis_dw_conv_params",
                              ("weights", "bias", "folded_bias", "multiplier", "shift", "rq"), "int32_t"),
    "mcu_cmsis_fully_connected_s8": ("mcu_cmsis_fc_params", ("weights", "bias", "multiplier", "shift", "rq"),
                                     "int16_t"),
    "mcu_cmsis_avg_pool2d_s8": ("mcu_cmsis_pool_params", (), None),
    "mcu_cmsis_max_pool2d_s8": ("mcu_cmsis_pool_params", (), None),
    "mcu_cmsis_add_s8": ("mcu_cmsis_add_params", ("table", "rq"), None),
    "mcu_cmsis_mul_s8": ("mcu_cmsis_mul_params", (), None),
    "mcu_cmsis_softmax_s8": ("mcu_cmsis_softmax_params", ("exp",), None),
    "mcu_cmsis_batch_matmul_s8": ("mcu_cmsis_batch_matmul_params", (), "void"),
    "mcu_cmsis_maximum_s8": ("mcu_cmsis_max_min_params", (), None),
    "mcu_cmsis_transpose_s8": ("mcu_cmsis_transpose_params", (), None),
    "mcu_cmsis_transpose_conv_s8": ("mcu_cmsis_tconv_params", ("weights", "bias", "multiplier", "shift", "rq"),
                                    "void"),
    "mcu_cmsis_minimum_s8": ("mcu_cmsis_max_min_params", (), None),
}
BINARY = ("mcu_cmsis_add_s8", "mcu_cmsis_mul_s8", "mcu_cmsis_maximum_s8", "mcu_cmsis_minimum_s8",
          "mcu_cmsis_batch_matmul_s8", "mcu_cmsis_conv2d_add_s8")
PARAM_ALIASES = {"channels": "in_c"}


def optional(role: str) -> bool:
    """Constants a kernel takes as NULL when the planner leaves them out: requantization records
    (without a proof) and the softmax exponential table (on small layers)."""
    return role.endswith("rq") or role == "exp"

  # struct field -> KernelCall parameter
PARAM_DEFAULTS = {"first": 0, "count": 0}  # struct fields the generated initializers omit (zero)


def struct_fields() -> dict[str, list[str]]:
    """Field names of every parameter struct, read from the kernels' headers (all int32_t)."""
    text = "\n".join(h.read_text() for h in sorted(KERNELS.glob("*.h")))
    out = {}
    for body, name in re.findall(r"typedef struct \{(.*?)\}\s*(\w+);", text, re.DOTALL):
        decls = re.findall(r"int32_t ([^;]+);", body)
        assert decls and "int32_t" in body and not re.search(r"\b(?!int32_t)\w+_t\b", body), name
        out[name] = [f.strip() for d in decls for f in d.split(",")]
    return out


HOST_IO = r"""
#include <stdio.h>
#include <stdlib.h>
static int read_bytes(void *dst, uint32_t n) { return fread(dst, 1, n, stdin) == n; }
static void *alloc(uint32_t n) { return malloc(n); }
static void free_all(void) {}
static void write_output(const int8_t *p, uint32_t n) { fwrite(p, 1, n, stdout); }
"""

# Bare metal (QEMU): records linked in, a bump allocator, outputs as hex lines over semihosting.
SEMIHOSTING_IO = r"""
void sh_write0(const char *s);
static const uint8_t records[] = {RECORDS};
static uint32_t pos, heap_top;
static uint8_t heap[160 * 1024] __attribute__((aligned(16)));
static int read_bytes(void *dst, uint32_t n)
{
    if (pos + n > sizeof records) return 0;
    memcpy(dst, records + pos, n);
    pos += n;
    return 1;
}
static void *alloc(uint32_t n)
{
    void *p = heap + heap_top;
    heap_top = (heap_top + n + 15u) & ~15u;
    return heap_top <= sizeof heap ? p : NULL;
}
static void free_all(void) { heap_top = 0; }
static void write_output(const int8_t *p, uint32_t n)
{
    static const char hex[] = "0123456789abcdef";
    static char line[2 * 1024 + 1];
    sh_write0("OUT ");
    while (n) {
        const uint32_t m = n > 1024 ? 1024 : n;
        for (uint32_t i = 0; i < m; i++) {
            line[2 * i] = hex[(uint8_t)p[i] >> 4];
            line[2 * i + 1] = hex[(uint8_t)p[i] & 15];
        }
        line[2 * m] = 0;
        sh_write0(line);
        p += m;
        n -= m;
    }
    sh_write0("\n");
}
"""


def harness_source(io: str = HOST_IO) -> str:
    """A C program that runs one kernel per record: symbol, int32 parameters (the struct's fields
    in order), blobs (the op's activation inputs, then the constants), in-place flag, output and
    scratch sizes; it writes each output. `io` supplies read_bytes, alloc, free_all and
    write_output (stdin/stdout on the host, linked-in records and semihosting on QEMU)."""
    cases = []
    for sym, (st, roles, scratch) in SIGNATURES.items():
        n_in = 2 if sym in BINARY else 1
        args = [f"(const int8_t *)b[{i}]" for i in range(n_in)]
        casts = {"weights": "const int8_t *", "bias": "const int32_t *", "folded_bias": "const int32_t *",
                 "multiplier": "const int32_t *",
                 "shift": "const int32_t *", "table": "const int32_t *", "add_table": "const int32_t *"}
        args += [f"({casts[r]})b[{n_in + i}]" if not optional(r) else f"(bn[{n_in + i}] ? (const int32_t *)b[{n_in + i}] : NULL)"
                 for i, r in enumerate(roles)]
        if scratch:
            args.append(f"({scratch} *)scratch")
        cases.append(f"""    if (strcmp(name, "{sym}") == 0) {{
        {st} prm;
        if (np * 4 != sizeof prm) return 3;
        memcpy(&prm, params, sizeof prm);
        {sym}(&prm, {", ".join(args)}, out);
        return 0;
    }}""")
    return r"""
#include <stdint.h>
#include <string.h>
#include "mcu_kernels_cmsis_nn.h"
#include "mcu_cmsis_max_min_s8.h"
#include "mcu_cmsis_transpose_conv_s8.h"
#include "mcu_cmsis_transpose_s8.h"
#include "mcu_cmsis_batch_matmul_s8.h"
""" + io + r"""
#define GUARD 64u

/* Guard bytes after a buffer: a pattern a kernel is unlikely to write by chance (byte i of the buffer). */
static uint8_t guard_byte(uint32_t i) { return (uint8_t)(0x5a + 37u * i); }
static void fill_guard(uint8_t *p, uint32_t from, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) p[i] = guard_byte(from + i);
}
static int guard_intact(const uint8_t *p, uint32_t from, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (p[i] != guard_byte(from + i)) return 0;
    }
    return 1;
}

static void *read_blob(uint32_t *n)
{
    if (!read_bytes(n, 4)) return NULL;
    void *p = alloc(*n + 16);
    if (p == NULL || (*n && !read_bytes(p, *n))) return NULL;
    return p;
}

static int run(const char *name, const int32_t *params, uint32_t np, void **b, const uint32_t *bn, void *scratch,
               int8_t *out)
{
""" + "\n".join(cases) + r"""
    return 2;
}

int main(void)
{
    char name[64];
    while (read_bytes(name, 64)) {
        uint32_t np, nb, bn[16], inplace, out_n, scratch_n;
        void *b[16];
        free_all();
        int32_t *params = read_blob(&np);
        if (params == NULL || !read_bytes(&nb, 4) || nb > 16) return 4;
        for (uint32_t i = 0; i < nb; i++) {
            if ((b[i] = read_blob(&bn[i])) == NULL) return 4;
        }
        if (!read_bytes(&inplace, 4) || !read_bytes(&out_n, 4) || !read_bytes(&scratch_n, 4)) return 4;
        int8_t *out = inplace ? (int8_t *)b[0] : alloc(out_n + GUARD);
        uint8_t *scratch = alloc(scratch_n + GUARD);
        if (out == NULL || scratch == NULL) return 5;
        fill_guard(scratch, 0, scratch_n + GUARD);
        if (!inplace) fill_guard((uint8_t *)out + out_n, out_n, GUARD);
        const int rc = run(name, params, np / 4, b, bn, scratch, out);
        if (rc) return rc;
        /* the kernel wrote nothing past the scratch size its header declares, nor past its output */
        if (!guard_intact(scratch + scratch_n, scratch_n, GUARD)) return 6;
        if (!inplace && !guard_intact((uint8_t *)out + out_n, out_n, GUARD)) return 7;
        write_output(out, out_n);
    }
    return 0;
}
"""


@pytest.fixture(scope="module", params=["plain", "dsp"])
def harness(request, tmp_path_factory):
    if shutil.which("gcc") is None:
        pytest.skip("host gcc not installed")
    d = tmp_path_factory.mktemp(f"cmsis_{request.param}")
    (d / "harness.c").write_text(harness_source())
    exe = d / "harness"
    flags = [DSP_EMULATE] if request.param == "dsp" else []
    cmd = ["gcc", *CFLAGS, *flags, "-I", str(KERNELS), "-I", str(INCLUDE), str(d / "harness.c"),
           *sorted(str(p) for p in KERNELS.glob("*.c")), "-o", str(exe)]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[:3000]
    return exe


def record(kc, inputs: list[np.ndarray], inplace: bool = False) -> bytes:
    st, roles, _ = SIGNATURES[kc.function]
    fields = struct_fields()[st]
    params = np.array([int(kc.params.get(PARAM_ALIASES.get(f, f), PARAM_DEFAULTS.get(f))) for f in fields],
                      dtype="<i4")
    n_act = 2 if kc.function in BINARY else 1  # the op's activation operands
    if kc.function == "mcu_cmsis_conv2d_add_s8":  # (residual, convolution input), whatever the ADD's order
        op_args = [inputs[kc.in_place_input], inputs[1 - kc.in_place_input]]
    else:
        op_args = [kc.constants[f"arg{i}"] if slot is None else inputs[slot]
                   for i, slot in enumerate(kc.arg_map[:n_act])]
    blobs = [np.ascontiguousarray(x).tobytes() for x in op_args]
    # an optional constant the planner left out passes NULL (an empty blob); Helium's one-input-channel
    # tables ride in the depthwise kernel's rq argument (as qnn_depthwise_conv2d.c.j2 passes them)
    consts = {**kc.constants, "rq": kc.constants["in1_tables"]} if "in1_tables" in kc.constants else kc.constants
    blobs += [b"" if optional(r) and r not in consts else np.ascontiguousarray(consts[r]).tobytes() for r in roles]

    def blob(b: bytes) -> bytes:
        return struct.pack("<I", len(b)) + b

    return (kc.function.encode().ljust(64, b"\0") + blob(params.tobytes()) + struct.pack("<I", len(blobs))
            + b"".join(blob(b) for b in blobs) + struct.pack("<III", int(inplace), kc.output.nbytes, kc.scratch_bytes))


# Harness exit codes of a kernel that wrote beyond a buffer (checked after every record).
GUARD_EXITS = {6: "a kernel wrote past the scratch size its header declares",
               7: "a kernel wrote past its output"}


def run_harness(exe: Path, records: list[bytes]) -> bytes:
    proc = subprocess.run([str(exe)], check=False, input=b"".join(records), capture_output=True, timeout=120)
    assert proc.returncode not in GUARD_EXITS, GUARD_EXITS.get(proc.returncode)
    assert proc.returncode == 0, f"harness exited with {proc.returncode}"
    return proc.stdout


def test_every_kernel_has_a_signature_and_a_template():
    """Each kernel function the cases reach has a harness signature; each composite whose call is not
    the generic one has its template."""
    calls = [case_data(n)[2] for n in CASES]
    assert {kc.function for kc in calls} == set(SIGNATURES)
    templates = Path(str(files("mcuforge.codegen") / "templates" / "cmsis_nn"))
    own = {kc.template for kc in calls if not kc.struct}
    assert own <= {p.name for p in templates.iterdir()} and all(kc.template == "call.c.j2" for kc in calls if kc.struct)
    assert {SIGNATURES[s][0] for s in SIGNATURES} <= set(struct_fields())


# Kernels with state (LSTM, SVDF): checked on multi-step sequences against TFLM instead, on the host
# (plain C and emulated DSP, tests/ops/test_recurrent_ops.py) and on QEMU (tests/test_qemu_e2e.py).
STATEFUL = {"mcu_cmsis_lstm_s8": "qnn_lstm", "mcu_cmsis_svdf_s8": "qnn_svdf"}


def test_case_list_reaches_every_kernel():
    """Every int8 kernel and composite but the stateful ones (the 16x8 ones, *_s16, are
    tests/ops/test_int16_cmsis_nn.py's)."""
    int16 = {p.stem for p in KERNELS.glob("*_s16.c")}
    assert {case_data(n)[2].source for n in CASES} == {p.stem for p in KERNELS.glob("*.c")} - set(STATEFUL) - int16
    assert {case_data(n)[2].info.composite for n in CASES} == \
        {c for c in cmsis_nn.COMPOSITES if not c.endswith("_s16")} - set(STATEFUL.values())


def case_sets(name: str):
    """(KernelCall, input sets, in-place flags) of a case: random inputs, every input at -128, every
    input at 127, and for element-wise kernels the first set again with the output over input 1."""
    name, lagged, _ = name.partition("#lagged")
    name, chunked, _ = name.partition("#chunked")
    _, _, kc = case_data(name)
    rng = np.random.default_rng(zlib.crc32(name.partition("@")[0].encode()) + 2)
    sets = [[rng.integers(-128, 128, t.shape).astype(np.int8) for t in kc.inputs] for _ in range(3)]
    sets += [[np.full(t.shape, v, np.int8) for t in kc.inputs] for v in (-128, 127)]
    if chunked:  # `<case>#chunked`: with the overlap's chunk, every set's output exactly over its input
        return dataclasses.replace(kc, params={**kc.params, **dict(kc.overlap.needs)}), sets, [True] * len(sets)
    if lagged:  # `<case>#lagged`: a depthwise case row-lagged, every set's output exactly over its input
        over = cmsis_depthwise.in_place(kc.params)
        v = dataclasses.replace(kc, params={**kc.params, **dict(over.needs)}, scratch_bytes=over.scratch_bytes)
        return v, sets, [True] * len(sets)
    inplace = [False] * len(sets)
    if kc.in_place:
        sets.append(sets[0])
        inplace.append(True)
    return kc, sets, inplace


def check_outputs(names: list[str], outputs: list[bytes]) -> list[str]:
    """Each case's outputs, in case_sets order, against the kernel model: the mismatches."""
    bad, k = [], 0
    for name in names:
        kc, sets, _ = case_sets(name)
        for j, inputs in enumerate(sets):
            expected = kc.run(inputs)
            if k >= len(outputs) or len(outputs[k]) != expected.nbytes:
                return bad + [f"{name} set {j}: no output"]
            ours = np.frombuffer(outputs[k], dtype=np.int8).reshape(expected.shape)
            if not np.array_equal(ours, expected):
                bad.append(f"{name} set {j}: " + first_mismatches(ours, expected))
            k += 1
    return bad


def records_of(names: list[str]) -> bytes:
    return b"".join(record(kc, s, ip) for n in names for kc, sets, flags in [case_sets(n)]
                    for s, ip in zip(sets, flags))


@pytest.mark.parametrize("name", sorted(CASES))
def test_c_kernel_equals_kernel_model(harness, name):
    """Plain and DSP-emulated builds: the C kernel equals the kernel model, element by element."""
    kc = case_sets(name)[0]
    out = run_harness(harness, [records_of([name])])
    n = kc.output.nbytes
    assert not (bad := check_outputs([name], [out[i:i + n] for i in range(0, len(out), n)])), "\n".join(bad)


def laid_out(kc) -> tuple:
    return (sorted(kc.params.items()), sorted((r, v.tobytes()) for r, v in kc.constants.items()))


def isa_variants(isa: str) -> list[str]:
    """`<case>@<other>` for every case that another ISA lowers differently from `isa` (its weights'
    layout): a build for one core runs C generated for another too, slower but exact."""
    return [f"{n}@{o}" for n in sorted(CASES) for o in ISAS
            if o != isa and laid_out(case_data(f"{n}@{o}")[2]) != laid_out(case_data(f"{n}@{isa}")[2])]


def test_isa_variants_are_the_offset_and_wide_pair_layouts():
    """Only the DSP ISA takes the offset pair layout (the convolutions with K >= 48 that allow it)
    and the wide one (the convolutions with K < 48): plain C and Helium read the plain pair layout;
    each layout's weights are the layer's, row for row."""
    variants = [v for v in isa_variants(DEFAULT_ISA) if v not in one_tables(DEFAULT_ISA)]
    assert DEFAULT_ISA == "dsp" and len(variants) > 10 and {v.partition("@")[2] for v in variants} == {"plain", "mve"}
    layouts = set()
    for v in variants:
        call, _, kc = case_data(v)
        dsp = case_data(v.partition("@")[0])[2]
        conv_call = next((a for a in call.args if isinstance(a, Call)), call)  # a fused ADD's convolution
        oc, kh, kw, ic = conv_call.args[1].type.shape
        k = kh * kw * ic
        layout = dsp.params["pair_offset"]
        assert layout == (cmsis_common.WIDE if k < cmsis_common.PAIR_OFFSET_MIN_K else cmsis_common.OFFSET)
        assert kc.params["pair_offset"] == cmsis_common.PLAIN
        layouts.add(layout)
        for lowered_kc, how in ((kc, cmsis_common.PLAIN), (dsp, layout)):
            assert np.array_equal(unpair_rows(lowered_kc.constants["weights"], oc, k, how),
                                  conv_call.args[1].data.reshape(oc, -1))
        if layout == cmsis_common.WIDE:  # int16 words, twice the bytes of K rounded up to four
            assert dsp.constants["weights"].size == 2 * 2 * ((oc + 1) // 2) * (-(-k // 4) * 4)
    assert layouts == {cmsis_common.OFFSET, cmsis_common.WIDE}
    # plain C and Helium lay every other case out alike
    assert [v for v in isa_variants("mve") if v not in one_tables("mve")] == [
        f"{v.partition('@')[0]}@dsp" for v in variants if v.endswith("@plain")]


def one_tables(isa: str) -> list[str]:
    """The variants of isa_variants(isa) that differ by Helium's one-input-channel tables: the cases
    of one input channel the Helium path takes (as Helium lowers them, or as the others do)."""
    return [v for v in isa_variants(isa) if cmsis_depthwise.ONE_TABLE in
            (case_data(v)[2].params.get("sweep"), case_data(f"{v.partition('@')[0]}@mve")[2].params.get("sweep"))]


def test_one_input_channel_tables_on_helium():
    """Built for Helium, every depthwise case and convolution (not 1x1) of one input channel the
    one-input-channel path takes (mcu_cmsis_dw_mve_in1_fits) is lowered with its tables (sweep
    ONE_TABLE, no rq) and only the band in scratch; the tables hold the requantization vectors and
    the layer's weights column by column; the DSP and plain lowerings keep theirs."""
    ones = [n for n in sorted(CASES) if case_data(n)[0].op in ("conv_2d", "depthwise_conv_2d")
            and case_data(n)[0].args[0].type.shape[-1] == 1]
    tabled = 0
    for n in ones:
        call, _, kc = case_data(f"{n}@mve")
        p = kc.params
        if call.op == "conv_2d" and kc.function != "mcu_cmsis_dwconv2d_s8":
            assert call.args[1].type.shape[1:3] == (1, 1) or not cmsis_depthwise.mve_in1_fits({**p, "in_c": 1}), n
            continue
        if not cmsis_depthwise.mve_in1_fits(p):
            assert p["sweep"] != cmsis_depthwise.ONE_TABLE, n
            continue
        tabled += 1
        assert p["sweep"] == cmsis_depthwise.ONE_TABLE and "rq" not in kc.constants, n
        assert kc.scratch_bytes == ((p["out_w"] - 1) * p["stride_w"] + (p["k_w"] - 1) * p["dil_w"] + 1) * p["k_h"] + 16
        oc, taps = p["out_c"], p["k_h"] * p["k_w"]
        groups, span = -(-oc // 4), -(-taps // 16) * 16
        t = kc.constants["in1_tables"]
        prm = t[:16 * groups].reshape(groups, 4, 4).transpose(1, 0, 2).reshape(4, -1)
        shift = kc.constants["shift"]
        for row, want in zip(prm, (kc.constants["folded_bias"], np.maximum(shift, 0), kc.constants["multiplier"],
                                   np.minimum(shift, 0))):
            assert np.array_equal(row[:oc], want) and not row[oc:].any(), n
        wt = t[16 * groups:].view(np.int8).reshape(4 * groups, span)
        w = (call.args[1].data[..., 0] if call.op == "conv_2d" else call.args[1].data[0].transpose(2, 0, 1))
        assert np.array_equal(wt[:oc, :taps], w.transpose(0, 2, 1).reshape(oc, taps)), n
        assert not wt[oc:].any() and not wt[:, taps:].any(), n
        for other in ("dsp", "plain"):
            assert case_data(f"{n}@{other}")[2].params.get("sweep") != cmsis_depthwise.ONE_TABLE, n
    assert tabled >= 10


def test_c_kernel_other_isa_layouts(harness):
    """The cases laid out for plain C and Helium (the plain pair layout where the DSP ISA takes the
    offset or wide one) on the plain and DSP-emulated builds: equal to the kernel model."""
    names = isa_variants(DEFAULT_ISA)
    out = run_harness(harness, [records_of(names)])
    expected = [(n, j, kc.run(x)) for n in names for kc, sets, _ in [case_sets(n)] for j, x in enumerate(sets)]
    bad, pos = compare_runs(out, expected)
    assert len(expected) > 50 and pos == len(out) and not bad, "\n".join(bad)


def compare_runs(out: bytes, expected: list) -> tuple[list[str], int]:
    """The harness's outputs `out` against (case, set, expected array) in order: the mismatches and
    the bytes read."""
    bad, pos = [], 0
    for name, j, e in expected:
        ours = np.frombuffer(out[pos:pos + e.nbytes], dtype=np.int8).reshape(e.shape)
        pos += e.nbytes
        if not np.array_equal(ours, e):
            bad.append(f"{name} set {j}: " + first_mismatches(ours, e))
    return bad, pos


def test_c_kernel_general_requant_path(harness):
    """Every case with fast requantization records run again without them (rq = NULL, what a layer
    without a proof passes): the kernels' general requantization equals the kernel model too."""
    names = [n for n in sorted(CASES) if "rq" in case_data(n)[2].constants]
    recs, expected = [], []
    for name in names:
        kc, sets, flags = case_sets(name)
        general = dataclasses.replace(kc, constants={r: v for r, v in kc.constants.items() if r != "rq"})
        recs += [record(general, x, ip) for x, ip in zip(sets, flags)]
        expected += [(name, j, kc.run(x)) for j, x in enumerate(sets)]
    out = run_harness(harness, recs)
    bad, pos = compare_runs(out, expected)
    assert len(names) > 20 and pos == len(out) and not bad, "\n".join(bad)


THREE_CHANNEL_3X3 = ["conv_3x3_ic3_oc16_same", "conv_3x3_ic3_oc8_s2_same_wide", "conv_3x3_ic3_oc7_relu6_wide",
                     "conv_3x3_ic3_oc5_valid_wide", "conv_3x3_ic3_oc6_dil2x1_wide", "conv_3x3_ic3_oc5_wide_no_proof"]


def test_c_kernel_three_channel_3x3_offset_layout(harness, monkeypatch):
    """The 3x3 three-channel cases (K = 27) in the offset pair layout, which the planner takes only
    from K = 48 on (PAIR_OFFSET_MIN_K, lowered to 0 here): the DSP path's straight widening sums
    each column for it; with and without the fast requantization records, equal to the kernel model."""
    monkeypatch.setattr(cmsis_common, "PAIR_OFFSET_MIN_K", 0)
    recs, expected = [], []
    for name in THREE_CHANNEL_3X3:
        kc, sets, flags = case_sets(name)
        assert kc.params["pair_offset"] == 1 and kc.params["in_c"] == 3 and kc.params["k_h"] == 3
        variants = [kc] + ([dataclasses.replace(kc, constants={r: v for r, v in kc.constants.items() if r != "rq"})]
                           if "rq" in kc.constants else [])
        for v in variants:
            recs += [record(v, x, ip) for x, ip in zip(sets, flags)]
            expected += [(name, j, kc.run(x)) for j, x in enumerate(sets)]
    out = run_harness(harness, recs)
    bad, pos = compare_runs(out, expected)
    assert len(expected) > 40 and pos == len(out) and not bad, "\n".join(bad)


def test_c_kernel_depthwise_pixel_sweep_any_requantization(harness):
    """The DSP pixel sweep an overlap may need (planner/targets/cmsis_nn/depthwise.py's overlap: the
    planner may set sweep = pixels on any 3x3 depthwise layer with depth multiplier 1 and no
    dilation, whatever its clamp): every such case forced to it, with its own scratch, with and without the
    fast requantization records (the general instance of mcu_cmsis_dw3x3_dsp.h), equal to the
    kernel model on the plain and DSP paths."""
    recs, expected, clamped = [], [], 0
    for name in sorted(CASES):
        if not name.startswith("dw3x3"):
            continue
        kc, sets, flags = case_sets(name)
        p = kc.params
        if (p["depth_multiplier"], p["dil_h"], p["dil_w"], p["in_c"] > 1) != (1, 1, 1, True):
            continue
        forced = {**p, "sweep": 2}
        pixels = dataclasses.replace(kc, params=forced, scratch_bytes=cmsis_depthwise.scratch(forced).bytes)
        clamped += (kc.params["act_min"], kc.params["act_max"]) != (-128, 127)
        variants = [pixels] + ([dataclasses.replace(pixels, constants={r: v for r, v in kc.constants.items()
                                                                       if r != "rq"})] if "rq" in kc.constants else [])
        for v in variants:
            recs += [record(v, x, ip) for x, ip in zip(sets, flags)]
            expected += [(name, j, kc.run(x)) for j, x in enumerate(sets)]
    out = run_harness(harness, recs)
    bad, pos = compare_runs(out, expected)
    assert clamped and len(expected) > 20 and pos == len(out) and not bad, "\n".join(bad)


def test_c_kernel_depthwise_row_lagged_in_place(harness):
    """The row-lagged in-place order (planner/targets/cmsis_nn/depthwise.py's in_place) forced on
    every depthwise case that allows it, the output exactly over the input: with the case's own
    sweep (the DSP line sweeps in place, the pixel paths through the ring) and with the DSP pixel
    sweep (3x3, undilated), with the ring's scratch; equal to the kernel model on the plain and DSP
    paths. A lag one pixel short corrupts some output (the ring is what makes it in place)."""
    recs, expected, short, short_expected = [], [], [], []
    for name in sorted(CASES):
        kc, sets, _ = case_sets(name)
        if kc.function != "mcu_cmsis_dwconv2d_s8":
            continue
        p = dict(kc.params)
        sweeps = [p["sweep"]] + ([2] if (p["k_h"], p["k_w"], p["dil_h"], p["dil_w"]) == (3, 3, 1, 1) else [])
        for sweep in dict.fromkeys(sweeps):
            over = cmsis_depthwise.in_place({**p, "sweep": sweep})
            if over is None:
                continue
            lagged = {**p, "sweep": sweep, **dict(over.needs)}
            v = dataclasses.replace(kc, params=lagged, scratch_bytes=over.scratch_bytes)
            recs += [record(v, x, True) for x in sets]
            expected += [(f"{name} sweep {sweep}", j, kc.run(x)) for j, x in enumerate(sets)]
            bad = dataclasses.replace(v, params={**lagged, "lag": lagged["lag"] - 1})
            if lagged["lag"] > 1:
                short += [record(bad, sets[0], True)]
                short_expected += [(f"{name} sweep {sweep}, lag - 1", 0, kc.run(sets[0]))]
    out = run_harness(harness, recs)
    bad, pos = compare_runs(out, expected)
    assert len(expected) > 60 and pos == len(out) and not bad, "\n".join(bad)
    wrong, _ = compare_runs(run_harness(harness, short), short_expected)
    assert wrong


def chunked_1x1() -> list[str]:
    """`<case>@<isa>#chunked` for every stride-1 1x1 case whose output may lie exactly over its input
    with its chunk (planner/targets/cmsis_nn/conv.py's overlap_1x1), lowered for every ISA (C
    generated for one core runs on the others: a Helium build reads the DSP ISA's wide layout too)."""
    out = []
    for name in sorted(CASES):
        for isa in ISAS:
            kc = case_data(f"{name}@{isa}")[2]
            over = kc.overlap
            if kc.function == "mcu_cmsis_conv2d_1x1_s8" and over is not None and over.needs and over.max_shift >= 0:
                out.append(f"{name}@{isa}#chunked")
    return out


def lagged_depthwise(isa: str) -> list[str]:
    """`<case>@<isa>#lagged` for every depthwise case that may run row-lagged in place
    (planner/targets/cmsis_nn/depthwise.py's in_place): on Helium the pixel path through its ring, or
    the line path copying each channel's input into scratch first (K x 1 with room for it)."""
    return [f"{name}@{isa}#lagged" for name in sorted(CASES)
            if case_data(name)[2].function == "mcu_cmsis_dwconv2d_s8"
            and cmsis_depthwise.in_place(case_data(name)[2].params) is not None]


def test_c_kernel_1x1_chunks_in_place(harness):
    """Every stride-1 1x1 case whose output may lie over its input with chunks (planner/targets/
    cmsis_nn/conv.py's overlap_1x1) run exactly over it with its chunks (plain C; the DSP path's
    three widened pixels), and unchunked on the plain path, where the pairs corrupt it."""
    recs, expected, unchunked, names = [], [], [], []
    for name in sorted(CASES):
        kc, sets, _ = case_sets(name)
        over = kc.overlap
        if kc.function != "mcu_cmsis_conv2d_1x1_s8" or over is None or not over.needs or over.max_shift < 0:
            continue
        chunked = dataclasses.replace(kc, params={**kc.params, **dict(over.needs)})
        recs += [record(chunked, x, True) for x in sets]
        expected += [(name, j, kc.run(x)) for j, x in enumerate(sets)]
        unchunked.append(record(kc, sets[0], True))
        names.append((name, 0, kc.run(sets[0])))
    out = run_harness(harness, recs)
    bad, pos = compare_runs(out, expected)
    assert len(names) >= 3 and pos == len(out) and not bad, "\n".join(bad)
    wrong, _ = compare_runs(run_harness(harness, unchunked), names)
    assert bool(wrong) == (harness.parent.name.startswith("cmsis_plain"))


# ---- the MLPerf Tiny models ----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(MLPERF_MODELS))
def test_mlperf_models_lower_entirely_to_cmsis_nn(name):
    """Every kernel of the MLPerf Tiny models is a cmsis-nn one (tests/test_host_e2e.py runs them, and
    every fixture, as C on the host against TFLM, plain and with the DSP path emulated)."""
    compiled = compile_model(MLPERF_MODELS[name])
    targets = {b.kernel.info.target for b in compiled.program.bindings if not b.kernel.view}
    assert targets == {"cmsis-nn"}, targets


def test_softmax_takes_the_table_on_large_layers():
    """The exponential table comes with a layer of at least as many elements as it has entries
    (min(256, 1 - diff_min)), and holds exactly the exponentials TFLM's arithmetic gives (the
    kernel's results with the table are checked against the model in the CASES)."""
    from mcuforge.ir import quant
    from mcuforge.ir.ops import _fixedpoint as fp

    rng = np.random.default_rng(4)
    for shape, scale, entries in (((2, 1001), 0.05, 256), ((2, 300), 0.01, 256), ((120, 3), 0.5, None),
                                  ((1, 200), 0.01, 0), ((1, 10), 0.1, 0)):
        _, k = lowered(softmax(rng, shape, scale=scale))
        p = k.params
        want = entries if entries is not None else 1 - p["diff_min"]
        if want == 0:
            assert "exp" not in k.constants, shape
            continue
        assert want < 256 or p["diff_min"] < -255
        d = -np.arange(want, dtype=np.int64)
        e = fp.exp_on_negative_values(quant.multiply_by_quantized_multiplier_greater_than_one(
            d, p["input_multiplier"], p["input_left_shift"]), 5)
        np.testing.assert_array_equal(k.constants["exp"], e)
        assert k.constants["exp"].dtype == np.int32 and k.constants["exp"][0] == 2**31 - 1


def test_lowering_picks_the_kernel_variants():
    """1x1 convolutions skip im2col (scratch: three int16 input pixels); others get three int16 im2col
    columns and an int8 one; a convolution with one window over the whole input is a one-row fully
    connected layer; weights of convolutions and fully connected layers are in the pair
    layout (checked byte by byte), except a fully connected layer with one input row: the group layout,
    no scratch; with more rows they widen three at a time.
    Depthwise layers take one kernel whose scratch is the DSP path's (plus the Helium path's tap
    pointers and pad row): on small 3x3 maps (pixel by pixel) a pad row and widened weights, else a
    line cache (a pad line and a line per input line a window spans, of two words per spanned input
    position, the widened weights and a few words of bookkeeping), along columns on narrow maps;
    they keep the layer's bias, the others fold it."""
    rng = np.random.default_rng(0)
    _, k = lowered(conv(rng, (5, 5), 8, 4, (1, 1), stride=(2, 2)))
    assert k.function == "mcu_cmsis_conv2d_1x1_s8" and k.scratch_bytes == 3 * 2 * 8
    call = conv(rng, (5, 5), 6, 5, (3, 3))
    _, k = lowered(call)
    assert k.function == "mcu_cmsis_conv2d_s8" and k.scratch_bytes == 3 * 2 * 56 + 56 + 4
    w = call.args[1].data.reshape(5, 54).astype(np.int64)
    pairs = k.constants["weights"].reshape(3, 64, 2)  # 54 values padded to 64, five rows to three pairs
    # K >= 48: the offset layout, each pair's first row stored plus 128 as uint8, padding 0
    assert k.params["pair_offset"] == 1
    assert np.array_equal(pairs[:, :54, 0].view(np.uint8).astype(np.int64) - 128, w[0::2])
    assert np.array_equal(pairs[:2, :54, 1], w[1::2])
    assert not pairs[:, 54:].any() and not pairs[2, :, 1].any()
    folded = call.args[2].data + k.params["input_offset"] * w.sum(axis=1)
    assert np.array_equal(k.constants["bias"], folded)
    # K = 36: the wide layout, doubled int16 words 2 (a[c], a[c']), 2 (b[c], b[c']) over the columns in
    # the order SXTB16 / SXTB16 ROR #8 split an input word: 0, 2, then 1, 3 of each four
    call = conv(rng, (5, 5), 4, 3, (3, 3))
    _, k = lowered(call)
    w = call.args[1].data.reshape(3, 36).astype(np.int16)[:, [4 * g + j for g in range(9) for j in (0, 2, 1, 3)]]
    words = k.constants["weights"].view("<i2").reshape(2, 18, 2, 2)  # pair, step, row, lane
    assert k.params["pair_offset"] == 2 and np.array_equal(words[:, :, 0].reshape(2, 36), 2 * w[0::2])
    assert np.array_equal(words[:1, :, 1].reshape(1, 36), 2 * w[1::2]) and not words[1, :, 1].any()
    w = call.args[1].data.reshape(3, 36)
    _, k = lowered(call, isa="plain")  # the other ISAs: the plain layout
    pairs = k.constants["weights"].reshape(2, 48, 2)
    assert k.params["pair_offset"] == 0 and np.array_equal(pairs[:, :36, 0], w[0::2])
    assert np.array_equal(pairs[:1, :36, 1], w[1::2])
    # the bounds on each pair's second row: 128 * sum|b| < 2^23 (516 inputs of +-127: taken, 520: not),
    # and with the fast requantization its accumulator in [-2^23, 2^23) (the offset assembly takes 256
    # times it: the saturated rows' biases put one end just inside or on the bound) unless its
    # output is constant (huge biases)
    assert case_data("conv_1x1_ic516_oc6_offset_bound")[2].params["pair_offset"] == 1
    assert case_data("conv_1x1_ic516_oc6_offset_bound_neg")[2].params["pair_offset"] == 1
    assert case_data("conv_1x1_ic520_oc5_plain_bound")[2].params["pair_offset"] == 0
    assert case_data("conv_1x1_ic516_oc5_plain_bias_bound")[2].params["pair_offset"] == 0
    dead = case_data("conv_1x1_ic64_oc6_offset_dead_rows@dsp")[2]
    assert dead.params["pair_offset"] == 1 and not dead.constants["rq"].reshape(-1, 3)[[1, 3], 0].any()
    fc_call = fc(rng, 1, 37, 3)  # one row: the group layout, no scratch
    _, k = lowered(fc_call)
    chunks = k.constants["weights"].reshape(48 // 16, 3, 16)  # 37 inputs padded to 48; three units, no fourth
    w = np.zeros((3, 48), np.int8)
    w[:, :37] = fc_call.args[1].data
    assert k.scratch_bytes == 0 and np.array_equal(chunks, w.reshape(3, 3, 16).transpose(1, 0, 2))
    fc_call = fc(rng, 1, 20, 6)  # a group of four units, then a group of two
    flat, w = lowered(fc_call)[1].constants["weights"], np.zeros((6, 32), np.int8)
    w[:, :20] = fc_call.args[1].data
    assert flat.size == 6 * 32 and np.array_equal(flat[:128].reshape(2, 4, 16), w[:4].reshape(4, 2, 16).transpose(1, 0, 2))
    assert np.array_equal(flat[128:].reshape(2, 2, 16), w[4:].reshape(2, 2, 16).transpose(1, 0, 2))
    # a convolution with one output pixel whose window is the whole input is that one-row layer
    call = conv(rng, (3, 2), 5, 3, (3, 2), padding="VALID")
    _, k = lowered(call)
    w = np.zeros((3, 32), np.int8)
    w[:, :30] = call.args[1].data.reshape(3, 30)
    assert (k.function, k.scratch_bytes, k.params["rows"], k.params["depth"]) == ("mcu_cmsis_fully_connected_s8", 0, 1, 30)
    assert np.array_equal(k.constants["weights"].reshape(2, 3, 16), w.reshape(3, 2, 16).transpose(1, 0, 2))
    _, k = lowered(conv(rng, (3, 2), 5, 3, (3, 2)))  # SAME: six pixels, the im2col kernel
    assert k.function == "mcu_cmsis_conv2d_s8"
    fc_call = fc(rng, 2, 37, 3)  # more rows: the pair layout, widened three at a time
    _, k = lowered(fc_call)
    assert k.scratch_bytes == 3 * 2 * 40 and k.constants["weights"].size == 2 * 2 * 48
    assert np.array_equal(unpair_rows(k.constants["weights"], 3, 37), fc_call.args[1].data)
    call = dwconv(rng, (6, 6), 8, 1, (3, 3))
    _, k = lowered(call)  # a small map goes pixel by pixel: a pad row and 72 bytes per group of four channels
    helium = 8 * 9 + 8  # and in any case the Helium path's nine tap pointers and offsets, its pad row of in_c bytes
    assert k.function == "mcu_cmsis_dwconv2d_s8" and k.params["sweep"] == 2 and k.scratch_bytes == 8 + 72 * 2 + helium
    assert np.array_equal(k.constants["bias"], call.args[2].data)
    _, k = lowered(dwconv(rng, (6, 6), 4, 2, (3, 3), dil=(1, 2)))
    span, helium = 5 + 2 * 2 + 1, 8 * 9 + 4  # other layers go line by line; dilation 2 across
    # three cached lines (a line of padding takes a slot like the others)
    assert k.params["sweep"] == 0 and k.scratch_bytes == 8 * span * 3 + 8 * 9 + 8 * 3 + 72 + 4 * 3 + helium
    _, k = lowered(dwconv(rng, (9, 8), 4, 1, (3, 3), dil=(2, 1)))
    rows, span = 5, 7 + 2 + 1  # dilation 2 down: the cache holds the five input rows a window spans
    assert k.params["sweep"] == 0 and k.scratch_bytes == 8 * span * rows + 8 * 9 + 8 * 3 + 72 + 4 * rows + helium
    _, k = lowered(dwconv(rng, (25, 5), 4, 1, (3, 3)))
    span = 24 + 2 + 1  # a narrow map is swept by columns: the cache holds columns
    assert k.params["sweep"] == 1 and k.scratch_bytes == 8 * span * 3 + 8 * 9 + 8 * 3 + 72 + 4 * 3 + helium


def test_depthwise_map3_cases_reach_its_paths():
    """The 3x3 output maps' cases take mcu_cmsis_dw3x3_map3 at their stride (DW_MAP3, DW_MAP3_S2:
    depthwise.map3_stride mirrors the kernel's checks), the partial group, clamp and other padding
    cases the pixel sweep without it."""
    taken = {name: cmsis_depthwise.dsp_paths(kc.params, "rq" in kc.constants)
             for name in CASES if "map3" in name for kc in [case_data(name)[2]]}
    assert {n for n, paths in taken.items() if "DW_MAP3" in paths} == {"dw3x3_c20_map3", "dw3x3_c4_map3_nobias"}
    assert {n for n, paths in taken.items() if "DW_MAP3_S2" in paths} == {"dw3x3_c12_map3_s2",
                                                                          "dw3x3_c4_map3_s2_nobias"}
    assert "DW_PIX3" in taken["dw3x3_c10_map3_s2_partial"] and "DW_PIX3" in taken["dw3x3_c8_map3_s2_padded_above"]


def test_fast_requant_proof_per_layer():
    """The extreme-bias cases: zero-weight channels become constant records {0, 2v + 1, 1}, the other
    channels keep their multiplier; a huge bias on real weights leaves the layer without `rq`;
    ordinary layers (every other case with a requantization) get one record per channel."""
    for name in CASES:
        kc = case_data(name)[2]
        if "multiplier" not in kc.constants:
            continue
        rq = kc.constants.get("rq")
        if name.endswith("no_proof"):
            assert rq is None, name
            continue
        channels, layout = kc.constants["multiplier"].size, kc.params.get("pair_offset")
        # the wide layout's: per pair its two biases doubled, then its records (conv.wide_records)
        size = 8 * ((channels + 1) // 2) if layout == cmsis_common.WIDE else 3 * channels
        assert rq is not None and rq.shape == (size,), name
        recs = cmsis_conv.channel_records(rq, channels, layout)
        if layout == cmsis_common.WIDE:
            per_pair = rq.reshape(-1, 8)
            doubled = per_pair[:, :2].reshape(-1).astype(np.int64)
            assert ((doubled[:channels] - 2 * kc.constants["bias"].astype(np.int64)) % 2**32 == 0).all(), name
            assert not doubled[channels:].any() and not per_pair[:, 2:].reshape(-1)[3 * channels:].any(), name
        zero = {"conv_1x1_ic8_oc6_zero_rows": (0, 3), "dw3x3_c8_zero_rows": (1, 6), "fc_1x16x9_zero_rows": (4,),
                "tconv_3x3_s2_ic8_oc6_zero_rows": (1, 4), "conv_1x1_ic64_oc6_offset_dead_rows": (1, 3)}
        for ch, (m, add, right) in enumerate(recs.tolist()):
            if ch in zero.get(name, ()):
                assert (m, right) == (0, 1) and add % 2 == 1 and -128 <= add // 2 <= 127, (name, ch)
            else:
                assert (m, right) == (kc.constants["multiplier"][ch], -kc.constants["shift"][ch]), (name, ch)


def test_generated_sources_cross_compile_for_cortex_m(tmp_path):
    """Warning-free with arm-none-eabi-gcc for Cortex-M4 (DSP path), M7 (the DSP path under GCC's M7
    scheduling, which once made the pair loop's register operands impossible), M55 (Helium) and M0+
    (plain), at -O2 and, for the inline assembly's register budget (the frame pointer takes r7), -O0."""
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc not installed")
    m4 = ["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
    m55 = ["-mcpu=cortex-m55", "-mfloat-abi=hard"]
    builds = [(m4, "-O2"), (m4, "-O0"), (["-mcpu=cortex-m7", "-mfloat-abi=hard", "-mfpu=fpv5-d16"], "-O2"),
              (m55, "-O2"), (m55, "-O0"), (["-mcpu=cortex-m0plus", "-mfloat-abi=soft"], "-O2")]
    for cpu, opt in builds:
        cmd = ["arm-none-eabi-gcc", *cpu, "-mthumb", "-std=c11", opt, "-Wall", "-Wextra", "-Werror",
               "-I", str(KERNELS), "-I", str(INCLUDE), "-c", *sorted(str(p) for p in KERNELS.glob("*.c"))]
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 0, f"{cpu[0]} {opt}:\n{proc.stderr[:2000]}"


def test_only_the_convolutions_define_the_wide_pair_routines(tmp_path):
    """The fully connected kernel shares the generic pair routines, which name the wide layout's
    (mcu_cmsis_pair_dsp.h), but never takes that layout: its object only references them weakly
    (nothing pulled in: AD's firmware carries none), the convolutions' objects define them."""
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc not installed")
    wide = {"mcu_pair_rows3_asm_wide", "mcu_pair_wide_dot3"}
    for name, defines in [("mcu_cmsis_fully_connected_s8", False), ("mcu_cmsis_conv2d_s8", True),
                          ("mcu_cmsis_conv2d_1x1_s8", True)]:
        obj = tmp_path / f"{name}.o"
        cmd = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-mthumb", "-std=c11",
               "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(KERNELS), "-I", str(INCLUDE), "-c",
               str(KERNELS / f"{name}.c"), "-o", str(obj)]
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[:2000]
        nm = subprocess.run(["arm-none-eabi-nm", str(obj)], check=True, capture_output=True, text=True).stdout
        kinds = {parts[-1]: parts[-2] for parts in (line.split() for line in nm.splitlines()) if parts[-1] in wide}
        if defines:
            assert kinds == {s: "W" for s in wide}, (name, kinds)
        else:
            assert kinds == {s: "w" for s in wide}, (name, kinds)  # weak undefined

# ---- the same kernel cases on QEMU: real DSP instructions (Cortex-M4) and Helium (Cortex-M55) ------

QEMU_STARTUP = r"""
#include <stdint.h>
extern uint32_t __bss_start__[], __bss_end__[], __stack_top[];
int main(void);
void reset_handler(void);
void fault_handler(void);
static int semihost(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}
void sh_write0(const char *s) { semihost(0x04, s); }
static void sh_exit(int code)
{
    static uint32_t block[2];
    block[0] = 0x20026u; /* ADP_Stopped_ApplicationExit */
    block[1] = (uint32_t)code;
    semihost(0x20, block);
    for (;;) {
    }
}
__attribute__((section(".vectors"), used)) void (*const vectors[16])(void) = {
    (void (*)(void))__stack_top, reset_handler, fault_handler, fault_handler, fault_handler, fault_handler,
    fault_handler, 0, 0, 0, 0, fault_handler, 0, 0, fault_handler, fault_handler,
};
void fault_handler(void)
{
    sh_write0("FAULT\n");
    sh_exit(3);
}
void reset_handler(void)
{
    for (uint32_t *p = __bss_start__; p < __bss_end__; p++) {
        *p = 0;
    }
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20; /* CPACR: CP10, CP11 (FPU and MVE) */
    __asm__ volatile("dsb\n\tisb");
#endif
    sh_exit(main());
}
"""

QEMU_LINKER = """
MEMORY {{ CODE (rx) : ORIGIN = 0x00000000, LENGTH = {code}  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = {ram} }}
SECTIONS {{
  .text : {{ KEEP(*(.vectors)) *(.text*) *(.rodata*) }} > CODE
  .data : {{ *(.data*) }} > RAM
  .bss (NOLOAD) : {{ __bss_start__ = .; *(.bss*) *(COMMON) . = ALIGN(4); __bss_end__ = .; }} > RAM
  __stack_top = ORIGIN(RAM) + LENGTH(RAM);
}}
"""

# cpu -> (QEMU machine, float flags, code and RAM sizes: AN386 SSRAM, AN547 ITCM/DTCM)
QEMU_CPUS = {
    "cortex-m4": ("mps2-an386", ["-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"], "4M", "4M"),
    "cortex-m55": ("mps3-an547", ["-mfloat-abi=hard"], "512K", "512K"),
}


def batches(names: list[str], limit: int) -> list[list[str]]:
    """Consecutive cases whose records together stay under `limit` bytes (a lone bigger case
    still gets its own batch)."""
    out: list[list[str]] = [[]]
    size = 0
    for name in names:
        n = len(records_of([name]))
        if out[-1] and size + n > limit:
            out.append([])
            size = 0
        out[-1].append(name)
        size += n
    return out


@pytest.mark.slow
@pytest.mark.parametrize("cpu", sorted(QEMU_CPUS))
def test_kernels_on_qemu(cpu, tmp_path):
    """Every kernel case built for the core (DSP path on the M4 with the real instructions, Helium
    path on the M55) and run on QEMU: outputs equal the kernel models; the 1x1 cases whose output may
    lie over their input with a chunk also run so (chunked_1x1), and the depthwise cases that may run
    row-lagged exactly over their input (lagged_depthwise)."""
    missing = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    machine, fflags, code, ram = QEMU_CPUS[cpu]
    isa = load_board(machine).isa  # the cases as lowered for this core, and as for the others where they differ
    names = [f"{n}@{isa}" for n in sorted(CASES)] + isa_variants(isa) + chunked_1x1() + lagged_depthwise(isa)
    (tmp_path / "startup.c").write_text(QEMU_STARTUP)
    (tmp_path / "link.ld").write_text(QEMU_LINKER.format(code=code, ram=ram))
    bad: list[str] = []
    limit = 3 << 20 if code == "4M" else 380 << 10  # the records and the code fit the code memory
    for k, batch in enumerate(batches(names, limit)):
        io = SEMIHOSTING_IO.replace("RECORDS", ",".join(map(str, records_of(batch))))
        (tmp_path / "harness.c").write_text(harness_source(io))
        elf = tmp_path / f"h{k}.elf"
        cmd = ["arm-none-eabi-gcc", f"-mcpu={cpu}", "-mthumb", *fflags, "-O2", "-std=c11", "-Wall", "-Wextra",
               "-Werror", "-I", str(KERNELS), "-I", str(INCLUDE), str(tmp_path / "startup.c"),
               str(tmp_path / "harness.c"), *sorted(str(p) for p in KERNELS.glob("*.c")), "-T",
               str(tmp_path / "link.ld"), "-nostartfiles", "--specs=nano.specs", "--specs=nosys.specs", "-o", str(elf)]
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[:3000]
        run = subprocess.run(["qemu-system-arm", "-machine", machine, "-nographic", "-monitor", "none", "-serial",
                              "none", "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)],
                             check=False, capture_output=True, text=True, timeout=300)
        text = run.stdout + run.stderr
        assert run.returncode not in GUARD_EXITS, f"{GUARD_EXITS.get(run.returncode)}: {text[-500:]}"
        assert run.returncode == 0, text[-2000:]
        bad += check_outputs(batch, [bytes.fromhex(line[4:]) for line in text.splitlines() if line.startswith("OUT ")])
    assert not bad, "\n".join(bad)
