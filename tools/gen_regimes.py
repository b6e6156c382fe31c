#!/usr/bin/env python3
"""Generate tests/fixtures/regimes/: small models at the edges of what TensorFlow Lite Micro defines,
built with devtools/tflite_writer.py (no TensorFlow), and their MANIFEST.json.

Each entry of the manifest says what the model exercises and what is expected of it:
  name, file     the model (NAME.tflite)
  op             the TFLite operator the regime is about
  exercises      the regime, in words
  mcuforge       "refuses" (the operator is reported with the sentence of registry check `rule`) or
                 "bit-exact" (compiled, and equal to TFLM byte for byte)
  rule           for "refuses": the name of the check in the op's registry entry (its docstring is the
                 sentence users see), or null with `reason`, the text of a refusal made by the frontend
  tflm           what the TFLM interpreter does with it: "refuses" (Prepare fails), "runs" (it computes
                 something: for a refused model, with an undefined or unset value), "aborts on some
                 inputs" (an assert on particular inputs), or null (not checked)
  no_rq          operators whose cmsis-nn lowering must take the general (no-proof) requantization:
                 no `rq` constant (tests/test_regimes.py asserts it, so the fixture keeps covering it)

tests/test_regimes.py checks every claim; tests/test_host_e2e.py runs the bit-exact ones on the host
(plain C and the emulated DSP path) against TFLM. Regenerate (deterministic) with
    python tools/gen_regimes.py
The 1001-class classifier is a TensorFlow-converted fixture in tests/fixtures/models
(tools/gen_fixtures.py, softmax_1001_classes).
"""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # devtools/ lives in the checkout, not in the installed package

from devtools.tflite_writer import ModelWriter  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "regimes"
HUGE = 2.0 ** -30 / 1.5  # an output scale that makes a unit-scale rescale 1.5 * 2^30: exponent 31
LARGE = 2.0 ** -29 / 1.5  # ... 1.5 * 2^29: exponent 30, the largest TFLM defines


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def _weights(rng, shape, wmax=127):
    return rng.integers(-wmax, wmax + 1, shape).astype(np.int8)


# ---- model builders (one operator of interest, a few around it where needed) -------------------------

def conv(name, s_in, s_w, s_out, act="NONE", wmax=127, zp_out=0, ic=3, oc=4, k=3):
    rng, w = _rng(name), ModelWriter(f"mcuforge regime fixture {name}")
    x = w.tensor((1, 6, 6, ic), scale=s_in, zero_point=int(rng.integers(-20, 20)), name="x")
    kt = w.tensor((oc, k, k, ic), data=_weights(rng, (oc, k, k, ic), wmax), scale=s_w)
    bt = w.tensor((oc,), dtype="int32", data=rng.integers(-50, 50, oc), scale=s_in * s_w)
    y = w.tensor((1, 6, 6, oc), scale=s_out, zero_point=zp_out, name="y")
    w.op("CONV_2D", [x, kt, bt], [y], Padding="SAME", StrideW=1, StrideH=1, DilationWFactor=1, DilationHFactor=1,
         FusedActivationFunction=act)
    return w.finish([x], [y])


def dwconv(name, s_in, s_w, s_out, act="NONE", wmax=127, c=4):
    rng, w = _rng(name), ModelWriter(f"mcuforge regime fixture {name}")
    x = w.tensor((1, 6, 6, c), scale=s_in, zero_point=int(rng.integers(-20, 20)), name="x")
    kt = w.tensor((1, 3, 3, c), data=_weights(rng, (1, 3, 3, c), wmax), scale=s_w)
    bt = w.tensor((c,), dtype="int32", data=rng.integers(-50, 50, c), scale=s_in * s_w)
    y = w.tensor((1, 6, 6, c), scale=s_out, name="y")
    w.op("DEPTHWISE_CONV_2D", [x, kt, bt], [y], Padding="SAME", StrideW=1, StrideH=1, DilationWFactor=1,
         DilationHFactor=1, DepthMultiplier=1, FusedActivationFunction=act)
    return w.finish([x], [y])


def fc(name, s_in, s_w, s_out, act="NONE", wmax=127, depth=8, units=4):
    rng, w = _rng(name), ModelWriter(f"mcuforge regime fixture {name}")
    x = w.tensor((1, depth), scale=s_in, zero_point=int(rng.integers(-20, 20)), name="x")
    kt = w.tensor((units, depth), data=_weights(rng, (units, depth), wmax), scale=s_w)
    y = w.tensor((1, units), scale=s_out, name="y")
    w.op("FULLY_CONNECTED", [x, kt, -1], [y], FusedActivationFunction=act, KeepNumDims=False)
    return w.finish([x], [y])


def transpose_conv(name, s_in, s_w, s_out):
    rng, w = _rng(name), ModelWriter(f"mcuforge regime fixture {name}")
    shape = w.tensor((4,), dtype="int32", data=[1, 6, 6, 4])
    kt = w.tensor((4, 3, 3, 2), data=_weights(rng, (4, 3, 3, 2)), scale=s_w)
    x = w.tensor((1, 3, 3, 2), scale=s_in, zero_point=3, name="x")
    y = w.tensor((1, 6, 6, 4), scale=s_out, name="y")
    w.op("TRANSPOSE_CONV", [shape, kt, x], [y], Padding="SAME", StrideW=2, StrideH=2)
    return w.finish([x], [y])


def unary(name, op, s_in, s_out, zp_in=0, zp_out=0, shape=(1, 4, 4, 3), **opts):
    w = ModelWriter(f"mcuforge regime fixture {name}")
    x = w.tensor(shape, scale=s_in, zero_point=zp_in, name="x")
    y = w.tensor(shape, scale=s_out, zero_point=zp_out, name="y")
    w.op(op, [x], [y], **opts)
    return w.finish([x], [y])


def mean(name, s_in, s_out):
    w = ModelWriter(f"mcuforge regime fixture {name}")
    x = w.tensor((1, 2, 2, 4), scale=s_in, name="x")
    axis = w.tensor((2,), dtype="int32", data=[1, 2])
    y = w.tensor((1, 1, 1, 4), scale=s_out, name="y")
    w.op("MEAN", [x, axis], [y], KeepDims=True)
    return w.finish([x], [y])


def pool(name, op, s, act):
    w = ModelWriter(f"mcuforge regime fixture {name}")
    x = w.tensor((1, 4, 4, 3), scale=s, zero_point=-5, name="x")
    y = w.tensor((1, 2, 2, 3), scale=s, zero_point=-5, name="y")
    w.op(op, [x], [y], Padding="VALID", StrideW=2, StrideH=2, FilterWidth=2, FilterHeight=2,
         FusedActivationFunction=act)
    return w.finish([x], [y])


def binary(name, op, s1, s2, s_out, act="NONE", shape2=(1, 6, 6, 4), zp_out=None):
    rng, w = _rng(name), ModelWriter(f"mcuforge regime fixture {name}")
    a = w.tensor((1, 6, 6, 4), scale=s1, zero_point=int(rng.integers(-30, 30)), name="a")
    b = w.tensor(shape2, scale=s2, zero_point=int(rng.integers(-30, 30)), name="b")
    zo = int(rng.integers(-20, 20)) if zp_out is None else zp_out
    y = w.tensor((1, 6, 6, 4), scale=s_out, zero_point=zo, name="y")
    w.op(op, [a, b], [y], FusedActivationFunction=act)
    return w.finish([a, b], [y])


def softmax(name, rows, depth, s_in):
    w = ModelWriter(f"mcuforge regime fixture {name}")
    x = w.tensor((rows, depth), scale=s_in, name="x")
    y = w.tensor((rows, depth), scale=1 / 256, zero_point=-128, name="y")
    w.op("SOFTMAX", [x], [y], Beta=1.0)
    return w.finish([x], [y])


def nonconstant_axis(name):
    """MEAN whose axis is a model input (not constant), a MEAN over three axes, an ADD that is fine."""
    w = ModelWriter(f"mcuforge regime fixture {name}")
    x = w.tensor((1, 4, 4, 3), scale=0.05, name="x")
    axis = w.tensor((2,), dtype="int32", name="axis")
    m1 = w.tensor((1, 1, 1, 3), scale=0.05, name="mean_dynamic")
    w.op("MEAN", [x, axis], [m1], KeepDims=True)
    axes3 = w.tensor((3,), dtype="int32", data=[0, 1, 2])
    m2 = w.tensor((1, 1, 1, 3), scale=0.05, name="mean_three_axes")
    w.op("MEAN", [x, axes3], [m2], KeepDims=True)
    y = w.tensor((1, 1, 1, 3), scale=0.1, name="y")
    w.op("ADD", [m1, m2], [y], FusedActivationFunction="NONE")
    return w.finish([x, axis], [y])


def no_proof_conv(name):
    """A 3x3 (im2col) then a 1x1 convolution whose rescale is at least 1/2 (shift >= 0): the DSP
    fast requantization needs a right shift, so neither layer gets `rq`. Weights in {-1, 0, 1}
    keep the outputs within int8."""
    rng, w = _rng(name), ModelWriter(f"mcuforge regime fixture {name}")
    x = w.tensor((1, 7, 7, 2), scale=0.02, zero_point=-3, name="x")
    k1 = w.tensor((4, 3, 3, 2), data=_weights(rng, (4, 3, 3, 2), 1), scale=0.01)
    b1 = w.tensor((4,), dtype="int32", data=rng.integers(-40, 40, 4), scale=0.0002)
    h = w.tensor((1, 7, 7, 4), scale=0.00025, zero_point=2, name="h")
    w.op("CONV_2D", [x, k1, b1], [h], Padding="SAME", StrideW=1, StrideH=1, DilationWFactor=1, DilationHFactor=1,
         FusedActivationFunction="NONE")
    k2 = w.tensor((4, 1, 1, 4), data=_weights(rng, (4, 1, 1, 4), 1), scale=[0.5, 0.6, 0.7, 0.8], axis=0)
    y = w.tensor((1, 7, 7, 4), scale=0.0002, zero_point=-1, name="y")
    w.op("CONV_2D", [h, k2, -1], [y], Padding="VALID", StrideW=1, StrideH=1, DilationWFactor=1,
         DilationHFactor=1, FusedActivationFunction="RELU")
    return w.finish([x], [y])


def no_proof_dwconv(name):
    """3x3 depthwise convolutions (multiplier 1: the 3x3 fast path; multiplier 2: the general one)
    with a rescale of at least 1/2: no `rq`."""
    rng, w = _rng(name), ModelWriter(f"mcuforge regime fixture {name}")
    x = w.tensor((1, 7, 6, 4), scale=0.02, zero_point=5, name="x")
    k1 = w.tensor((1, 3, 3, 4), data=_weights(rng, (1, 3, 3, 4), 1), scale=0.01)
    b1 = w.tensor((4,), dtype="int32", data=rng.integers(-30, 30, 4), scale=0.0002)
    h = w.tensor((1, 7, 6, 4), scale=0.0003, zero_point=-4, name="h")
    w.op("DEPTHWISE_CONV_2D", [x, k1, b1], [h], Padding="SAME", StrideW=1, StrideH=1, DilationWFactor=1,
         DilationHFactor=1, DepthMultiplier=1, FusedActivationFunction="NONE")
    k2 = w.tensor((1, 3, 3, 8), data=_weights(rng, (1, 3, 3, 8), 1), scale=0.5)
    b2 = w.tensor((8,), dtype="int32", data=rng.integers(-30, 30, 8), scale=0.00015)
    y = w.tensor((1, 4, 3, 8), scale=0.0002, zero_point=3, name="y")
    w.op("DEPTHWISE_CONV_2D", [h, k2, b2], [y], Padding="SAME", StrideW=2, StrideH=2, DilationWFactor=1,
         DilationHFactor=1, DepthMultiplier=2, FusedActivationFunction="NONE")
    return w.finish([x], [y])


def no_proof_fc(name):
    """FULLY_CONNECTED with a rescale of at least 1/2: no `rq`."""
    rng, w = _rng(name), ModelWriter(f"mcuforge regime fixture {name}")
    x = w.tensor((1, 12), scale=0.02, zero_point=-7, name="x")
    kt = w.tensor((6, 12), data=_weights(rng, (6, 12), 1), scale=0.01)
    bt = w.tensor((6,), dtype="int32", data=rng.integers(-40, 40, 6), scale=0.0002)
    y = w.tensor((1, 6), scale=0.0003, zero_point=1, name="y")
    w.op("FULLY_CONNECTED", [x, kt, bt], [y], FusedActivationFunction="NONE", KeepNumDims=False)
    return w.finish([x], [y])


def no_proof_add(name):
    """ADD whose output scale is 2^6 times coarser than the larger input scale and whose zero point is
    -128: the zero point shifted by the output right shift (24) leaves int32 in the fast record, so
    no `rq` (the outputs still take 8 values)."""
    return binary(name, "ADD", 0.05, 0.04, 0.05 * 2.0 ** 6, zp_out=-128)


# ---- the table -------------------------------------------------------------------------------------

def _refused(op, exercises, rule, tflm, build, reason=None):
    entry = {"op": op, "exercises": exercises, "mcuforge": "refuses", "rule": rule, "tflm": tflm}
    return ({**entry, "reason": reason} if reason else entry), build


def _exact(op, exercises, tflm, build, no_rq=()):
    return {"op": op, "exercises": exercises, "mcuforge": "bit-exact", "tflm": tflm, "no_rq": list(no_rq)}, build


SHIFT31 = "a requantization multiplier of 1.5 * 2^30 (QuantizeMultiplier exponent 31)"
SHIFT30 = "a requantization multiplier of 1.5 * 2^29 (exponent 30, the largest TFLM defines)"
BOUND = "a fused {act} whose clamp bound, {b} / scale, does not fit in int32"

REGIMES = {
    # requantization left shift of 31 or more: undefined in TFLM (x * (1 << shift) in int32)
    "shift31_conv_2d": _refused("CONV_2D", SHIFT31, "rescale_below_2_30", "runs",
                                lambda n: conv(n, 1.0, 1.0, HUGE)),
    "shift30_conv_2d": _exact("CONV_2D", SHIFT30, "runs", lambda n: conv(n, 1.0, 1.0, LARGE)),
    "shift31_depthwise_conv_2d": _refused("DEPTHWISE_CONV_2D", SHIFT31, "rescale_below_2_30", "runs",
                                          lambda n: dwconv(n, 1.0, 1.0, HUGE)),
    "shift30_depthwise_conv_2d": _exact("DEPTHWISE_CONV_2D", SHIFT30, "runs", lambda n: dwconv(n, 1.0, 1.0, LARGE)),
    "shift31_fully_connected": _refused("FULLY_CONNECTED", SHIFT31, "rescale_below_2_30", "runs",
                                        lambda n: fc(n, 1.0, 1.0, HUGE)),
    "shift30_fully_connected": _exact("FULLY_CONNECTED", SHIFT30, "runs", lambda n: fc(n, 1.0, 1.0, LARGE)),
    "shift31_transpose_conv": _refused("TRANSPOSE_CONV", SHIFT31, "rescale_below_2_30", "runs",
                                       lambda n: transpose_conv(n, 1.0, 1.0, HUGE)),
    "shift30_transpose_conv": _exact("TRANSPOSE_CONV", SHIFT30, "runs", lambda n: transpose_conv(n, 1.0, 1.0, LARGE)),
    "shift31_leaky_relu": _refused("LEAKY_RELU", SHIFT31 + " (input / output scale)",
                                   "leaky_relu_rescale_below_2_30", "runs",
                                   lambda n: unary(n, "LEAKY_RELU", 1.0, HUGE, zp_in=-3, Alpha=0.25)),
    "shift30_leaky_relu": _exact("LEAKY_RELU", SHIFT30, "runs",
                                 lambda n: unary(n, "LEAKY_RELU", 1.0, LARGE, zp_in=-3, Alpha=0.25)),
    "shift31_mean": _refused("MEAN", "a mean over 4 elements whose folded multiplier has exponent 31 "
                             "(input / output scale 1.5 * 2^32)", "rescale_below_2_30", "runs",
                             lambda n: mean(n, 1.0, 2.0 ** -32 / 1.5)),
    "shift30_mean": _exact("MEAN", "a mean over 4 elements whose folded multiplier has exponent 30", "runs",
                           lambda n: mean(n, 1.0, 2.0 ** -31 / 1.5)),
    "shift31_quantize": _refused("QUANTIZE", SHIFT31 + " (int8 -> int8 requantization)", "requantize_below_2_30",
                                 "runs", lambda n: unary(n, "QUANTIZE", 1.0, HUGE, zp_in=4)),
    "shift30_quantize": _exact("QUANTIZE", SHIFT30 + " (int8 -> int8 requantization)", "runs",
                               lambda n: unary(n, "QUANTIZE", 1.0, LARGE, zp_in=4)),
    "shift31_relu": _refused("RELU", SHIFT31, "relu_rescale_below_2_30", "runs",
                             lambda n: unary(n, "RELU", 1.0, HUGE, zp_in=-2)),
    "shift30_relu": _exact("RELU", SHIFT30, "runs", lambda n: unary(n, "RELU", 1.0, LARGE, zp_in=-2)),
    "shift31_relu_n1_to_1": _refused("RELU_N1_TO_1", SHIFT31 + " (TFLM has no RELU_N1_TO_1 kernel)",
                                     "relu_n1_to_1_rescale_below_2_30", "refuses",
                                     lambda n: unary(n, "RELU_N1_TO_1", 1.0, HUGE)),
    "shift32_hard_swish": _refused("HARD_SWISH", "input scale 3e7: the reluish multiplier has exponent 32",
                                   "hard_swish_reluish_shift", "runs",
                                   lambda n: unary(n, "HARD_SWISH", 3e7, 3e5)),
    "shift31_hard_swish": _exact("HARD_SWISH", "input scale 2e7: the reluish multiplier has exponent 31 "
                                 "(the largest TFLM defines)", "runs", lambda n: unary(n, "HARD_SWISH", 2e7, 3e5)),
    # fused clamp bounds beyond int32
    "bound_conv_2d_relu6": _refused("CONV_2D", BOUND.format(act="RELU6", b=6), "fused_clamp_fits_int32", "refuses",
                                    lambda n: conv(n, 1e-5, 1e-5, 1e-9, act="RELU6")),
    "bound_conv_2d_relu6_at_limit": _exact("CONV_2D", "a fused RELU6 whose bound 6 / scale is 2^30: fits",
                                           "runs", lambda n: conv(n, 1e-5, 1e-5, 6.0 / 2**30, act="RELU6")),
    "bound_fully_connected_relu_n1_to_1": _refused("FULLY_CONNECTED", BOUND.format(act="RELU_N1_TO_1", b=1),
                                                   "fused_clamp_fits_int32", "refuses",
                                                   lambda n: fc(n, 1e-5, 1e-5, 2e-10, act="RELU_N1_TO_1")),
    "bound_average_pool_2d_relu6": _refused("AVERAGE_POOL_2D", BOUND.format(act="RELU6", b=6) + " (TFLM leaves "
                                            "the bound unset and runs)", "fused_clamp_fits_int32", "runs",
                                            lambda n: pool(n, "AVERAGE_POOL_2D", 1e-9, "RELU6")),
    "bound_max_pool_2d_relu_n1_to_1": _refused("MAX_POOL_2D", BOUND.format(act="RELU_N1_TO_1", b=1) + " (TFLM "
                                               "leaves both bounds unset and runs)", "fused_clamp_fits_int32",
                                               "runs", lambda n: pool(n, "MAX_POOL_2D", 2e-10, "RELU_N1_TO_1")),
    "bound_add_relu_n1_to_1": _refused("ADD", BOUND.format(act="RELU_N1_TO_1", b=1), "fused_clamp_fits_int32",
                                       "refuses", lambda n: binary(n, "ADD", 1e-5, 1e-5, 2e-10, act="RELU_N1_TO_1")),
    "bound_relu6_op": _refused("RELU6", "a RELU6 operator whose bound, 6 / input scale, does not fit in int32",
                               "relu6_bound_fits", "runs", lambda n: unary(n, "RELU6", 1e-9, 1e-9)),
    # ADD / SUB multipliers flushed to zero (below 2^-32): well defined in TFLM
    "flush_add_input": _exact("ADD", "input 2's multiplier 2^-35 flushed to zero (input 2 contributes nothing)",
                              "runs", lambda n: binary(n, "ADD", 0.05, 0.05 * 2.0 ** -34, 0.06)),
    "flush_sub_input_broadcast": _exact("SUB", "input 1's multiplier flushed to zero, broadcast input 2, RELU",
                                        "runs", lambda n: binary(n, "SUB", 0.05 * 2.0 ** -34, 0.05, 0.06,
                                                                 act="RELU", shape2=(1, 1, 1, 4))),
    "flush_add_output": _exact("ADD", "the output multiplier 2^-33 flushed to zero (the output is its zero point)",
                               "runs", lambda n: binary(n, "ADD", 0.05, 0.05, 0.05 * 2.0 ** 14)),
    "flush_add_input_at_limit": _exact("ADD", "input 2's multiplier 2^-32: the smallest kept (not flushed)", "runs",
                                       lambda n: binary(n, "ADD", 0.05, 0.05 * 2.0 ** -31, 0.06)),
    # SOFTMAX over 1001 classes
    "softmax_1001_rows": _exact("SOFTMAX", "int8 softmax over 1001 elements: bit-exact where TFLM computes; "
                                "TFLM aborts on a row whose sum of exponentials reaches 512 (e.g. equal values), "
                                "mcuforge gives -128 there", "aborts on some inputs",
                                lambda n: softmax(n, 2, 1001, 0.05)),
    # inspect: an operator input that must be constant is not
    "nonconstant_mean_axis": _refused("MEAN", "MEAN whose axis is a model input (inspect still lists every "
                                      "operator: a second MEAN over three axes is refused too, the ADD is fine)",
                                      None, None, nonconstant_axis,
                                      reason="input 1 ('axis') must be a constant tensor"),
    # the cmsis-nn DSP kernels' general (no-proof) requantization
    "no_proof_conv_2d": _exact("CONV_2D", "3x3 and 1x1 convolutions without a fast-requantization proof (rescale "
                               ">= 1/2)", "runs", no_proof_conv, no_rq=["CONV_2D"]),
    "no_proof_depthwise_conv_2d": _exact("DEPTHWISE_CONV_2D", "3x3 depthwise, multipliers 1 and 2, without a "
                                         "fast-requantization proof (rescale >= 1/2)", "runs", no_proof_dwconv,
                                         no_rq=["DEPTHWISE_CONV_2D"]),
    "no_proof_fully_connected": _exact("FULLY_CONNECTED", "fully connected without a fast-requantization proof "
                                       "(rescale >= 1/2)", "runs", no_proof_fc, no_rq=["FULLY_CONNECTED"]),
    "no_proof_add": _exact("ADD", "same-shape ADD without a fast-requantization proof (output zero point -128 "
                           "shifted by 24 leaves int32)", "runs", no_proof_add, no_rq=["ADD"]),
}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = []
    for name, (entry, build) in REGIMES.items():
        (OUT / f"{name}.tflite").write_bytes(build(name))
        manifest.append({"name": name, "file": f"{name}.tflite", **entry})
    (OUT / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    stale = sorted(p.name for p in OUT.glob("*.tflite") if p.stem not in REGIMES)
    if stale:
        print(f"warning: files not produced by any regime: {stale}", file=sys.stderr)
    print(f"wrote {len(manifest)} models and MANIFEST.json to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
