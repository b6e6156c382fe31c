"""Portable (`c` target) kernels of the arithmetic family: ADD, SUB, MUL, SOFTMAX, RELU, RELU6,
RELU_N1_TO_1, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH, QUANTIZE and DEQUANTIZE.

Each case generates C, builds it with the host gcc (-Wall -Wextra -Werror), runs it and compares the
outputs with the TFLite Micro interpreter byte for byte:
- every fixture made only of these ops (plus CONV_2D and RESHAPE), and the MLPerf Tiny models that
  hold some (KWS, VWW, IC: SOFTMAX, IC's residual ADDs);
- built multi-operator models (the builders of tests/ops/test_arith_ops.py) holding many independent
  operators with what the fixtures do not reach: every int8 input of the unary ops under random
  quantizations, broadcasts up to rank 6 with constant and scalar operands, SOFTMAX rows up to 511
  elements (int8 output) and beyond 4096 (int16 output), every QUANTIZE type pair, DEQUANTIZE from
  int16, float32 ties, signed zeros, infinities and NaN;
- RELU_N1_TO_1, which TFLM cannot run: the C output against the registry reference (itself checked
  against TFLite's outputs in tests/ops/test_arith_ops.py).
Plus unit checks of the lowering (broadcast plans, float32 literals, DEQUANTIZE's float32 product)
and, when arm-none-eabi-gcc is installed, a warning-free cross build of every kernel for Cortex-M4
and M55.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import MLPERF_MODELS, MODELS, ROOT, manifest
from mcuforge.ir.evaluate import evaluate
from mcuforge.ir.ops._portable import broadcast_plan, float32_literal

from mcuforge.driver import Options, compile_model
from mcuforge.verify import random_inputs, verify_host

FAMILY = {"ADD", "SUB", "MUL", "SOFTMAX", "LOGISTIC", "TANH", "RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU",
          "HARD_SWISH", "QUANTIZE", "DEQUANTIZE"}
OPS = FAMILY | {"CONV_2D", "RESHAPE"}
# fixtures made only of these ops, with at least one of the family (CONV_2D alone: test_kernels_c_nn.py)
FIXTURES = [f for f in manifest() if set(f["ops"]) <= OPS and set(f["ops"]) & FAMILY]
KERNELS = ROOT / "firmware" / "kernels" / "c"
ARITH_KERNELS = [KERNELS / f"mcu_{name}.c" for name in (
    "add_s8", "sub_s8", "mul_s8", "softmax_s8", "relu_s8", "relu6_s8", "relu_n1_to_1_s8", "leaky_relu_s8",
    "hard_swish_s8", "logistic_s8", "tanh_s8", "quantize_s8", "quantize_s16", "quantize_f32", "dequantize_s8",
    "dequantize_s16")]
ALL_INT8 = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)


def _builders():
    """The multi-operator .tflite builders of the op tests."""
    path = Path(__file__).resolve().parent / "ops" / "test_arith_ops.py"
    spec = importlib.util.spec_from_file_location("_mcuforge_test_arith_ops_builders", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


B = _builders()
T, Op, build_model = B.T, B.Op, B.build_model


def _failures(results) -> str:
    return "\n".join(f"input {r.index}: {m}" for r in results for m in r.mismatches)


def check_host(path: Path, input_sets=None, n: int = 4, seed: int = 3):
    """Compile for target c, build and run on the host, compare with TFLM byte for byte."""
    compiled = compile_model(path, Options(targets=("c",)))
    if input_sets is None:
        rng = np.random.default_rng(seed)
        input_sets = [random_inputs(compiled.imported, rng) for _ in range(n)]
    results = verify_host(compiled, input_sets, isolate=False)
    assert all(r.ok for r in results), _failures(results) or "host run failed"
    return compiled


def check_built(tmp_path: Path, ops: list[dict], input_sets) -> None:
    path = tmp_path / "model.tflite"
    path.write_bytes(build_model(ops))
    check_host(path, input_sets)


# ---- fixtures and MLPerf ----------------------------------------------------------------------------

def test_fixture_selection_covers_the_family():
    covered = {op for f in FIXTURES for op in f["ops"]}
    assert FAMILY - {"RELU_N1_TO_1"} <= covered  # TFLM cannot run RELU_N1_TO_1: checked below


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f["name"] for f in FIXTURES])
def test_fixture_host_bit_exact(fixture):
    check_host(MODELS / fixture["file"])


@pytest.mark.parametrize("name", ["kws", "vww", "ic"])
def test_mlperf_host_bit_exact(name):
    """The MLPerf Tiny models holding family ops (SOFTMAX; IC also its residual ADDs), whole, on
    target c (their other ops are the nn family's)."""
    check_host(MLPERF_MODELS[name], n=2, seed=5)


# ---- unary int8 ops: every input, random quantizations ----------------------------------------------

@pytest.mark.parametrize("op", ["RELU", "RELU6", "LEAKY_RELU", "HARD_SWISH", "LOGISTIC", "TANH"])
def test_unary_exhaustive(tmp_path, op):
    """Eight random quantizations per op (alphas of either sign for LEAKY_RELU), all 256 int8 inputs,
    each operator on its own graph input."""
    rng = np.random.default_rng(sum(map(ord, op)) + 1)
    fixed = {"LOGISTIC": (1 / 256, -128), "TANH": (1 / 128, 0)}.get(op)
    configs = B._unary_configs(rng, 8, fixed)
    if op == "HARD_SWISH":  # TFLM requires s_in < 128 * s_out
        configs = [(si, zi, max(so, si / 100), zo) for si, zi, so, zo in configs]
    alphas = [float(np.float32(a)) for a in rng.uniform(-0.6, 1.6, size=len(configs))]
    ops = [Op(op, [T((1, 256), scale=si, zp=zi)], T((1, 256), scale=so, zp=zo),
              ("LeakyReluOptions", {"Alpha": alphas[k]}) if op == "LEAKY_RELU" else None)
           for k, (si, zi, so, zo) in enumerate(configs)]
    check_built(tmp_path, ops, [[ALL_INT8] * len(ops), [ALL_INT8[:, ::-1].copy()] * len(ops)])


def run_c(tmp_path: Path, blob: bytes, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(outputs of the generated C on the host, outputs of the registry references) for one input set."""
    from mcuforge.codegen.emit import emit

    from mcuforge.host import build_host, run_host

    path = tmp_path / "model.tflite"
    path.write_bytes(blob)
    compiled = compile_model(path, Options(targets=("c",)))
    exe = build_host(emit(compiled, tmp_path / "model", "model"))
    prog = compiled.program
    (ours,) = run_host(exe, [inputs], [prog.buffers[o].type for o in prog.outputs])
    return ours, evaluate(compiled.imported, inputs)


def test_relu_n1_to_1_matches_reference(tmp_path):
    """TFLM has no RELU_N1_TO_1 kernel: the C output equals the registry reference (which follows
    TFLite's reference kernel) on every int8 input."""
    rng = np.random.default_rng(11)
    configs = B._unary_configs(rng, 6) + list(B.RELU_N1_TO_1_TFLITE)
    ours, expected = run_c(tmp_path, B._unary_model("RELU_N1_TO_1", configs), [ALL_INT8] * len(configs))
    for cfg, o, e in zip(configs, ours, expected):
        assert np.array_equal(o, e), cfg


# ---- ADD / SUB / MUL -------------------------------------------------------------------------------

BINARY_SHAPES = [((1, 5, 5, 4), (1, 5, 5, 4)), ((1, 5, 5, 4), (1, 1, 1, 4)), ((1, 1, 1, 4), (1, 5, 5, 4)),
                 ((2, 3, 4), (4,)), ((1, 6, 1), (1, 1, 5)), ((3, 1, 2, 1, 4), (1, 2, 1, 3, 4)),
                 ((2, 1, 3, 1, 2, 2), (1, 2, 1, 2, 1, 2)), ((7,), (7,)), ((3, 4), ()), ((), (2, 3)),
                 ((2, 3, 4), (4,)), ((4, 1, 3), (1, 5, 1)), ((1, 4, 4, 3), (1, 4, 4, 3))]


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_binary_broadcasts(tmp_path, op):
    """Broadcasts up to rank 6 (either side), scalar operands, constants on either side, every fused
    activation, random quantizations and one shared quantization."""
    rng = np.random.default_rng(len(op) * 11 + ord(op[0]))
    ops = []
    for k, (sa, sb) in enumerate(BINARY_SHAPES):
        q = [(B._scale(rng), B._zp(rng)) for _ in range(3)]
        if op == "MUL":  # keep the output scale in a useful range
            q[2] = (float(np.float32(q[0][0] * q[1][0] * 10 ** rng.uniform(-1, 2))), q[2][1])
        if k == 12:
            q = [q[0]] * 3
        a_data = rng.integers(-128, 128, size=sa).astype(np.int8) if k == 9 else None
        b_data = rng.integers(-128, 128, size=sb).astype(np.int8) if k in (8, 10) else None
        out_shape = tuple(np.broadcast_shapes(sa, sb))
        ops.append(Op(op, [T(sa, scale=q[0][0], zp=q[0][1], data=a_data), T(sb, scale=q[1][0], zp=q[1][1], data=b_data)],
                      T(out_shape, scale=q[2][0], zp=q[2][1]),
                      (B.OPTIONS[op], {"FusedActivationFunction": k % 4})))
    blob = build_model(ops)
    path = tmp_path / "binary.tflite"
    path.write_bytes(blob)
    check_host(path, B._random_inputs(blob, rng, 3))


@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_binary_every_input_pair(tmp_path, op):
    """Every pair of int8 inputs (a [256, 1] by [1, 256] broadcast), with the scales where float32
    and double Prepare arithmetic differ for ADD/SUB."""
    s1, s2, so = B.PRECISION_SCALES
    if op == "MUL":
        so = float(np.float32(s1 * s2 * 3.7))
    ops = [Op(op, [T((256, 1), scale=s1, zp=3), T((1, 256), scale=s2, zp=-7)], T((256, 256), scale=so, zp=1),
              (B.OPTIONS[op], {"FusedActivationFunction": 0}))]
    check_built(tmp_path, ops, [[ALL_INT8.reshape(256, 1), ALL_INT8]])


def test_broadcast_rank_matches_header():
    from mcuforge.ir.ops._portable import BROADCAST_RANK

    header = (KERNELS / "mcu_kernels_c_arith.h").read_text()
    assert f"#define MCU_BROADCAST_RANK {BROADCAST_RANK}\n" in header


@pytest.mark.parametrize("a, b, dims, s1, s2", [
    ((1, 4, 4, 8), (1, 4, 4, 8), [1, 1, 1, 1, 1, 128], [0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 1]),
    ((1, 4, 4, 8), (8,), [1, 1, 1, 1, 16, 8], [0, 0, 0, 0, 8, 1], [0, 0, 0, 0, 0, 1]),
    ((1, 4, 4, 8), (1, 4, 4, 1), [1, 1, 1, 1, 16, 8], [0, 0, 0, 0, 8, 1], [0, 0, 0, 0, 1, 0]),
    ((1, 4, 1, 6), (1, 1, 5, 6), [1, 1, 1, 4, 5, 6], [0, 0, 0, 6, 0, 1], [0, 0, 0, 0, 6, 1]),
    ((3, 4), (), [1, 1, 1, 1, 1, 12], [0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0]),
    ((2, 1, 3, 1, 2, 2), (1, 2, 1, 2, 1, 2), [2, 2, 3, 2, 2, 2], [12, 0, 4, 0, 2, 1], [0, 4, 0, 2, 0, 1]),
])
def test_broadcast_plan(a, b, dims, s1, s2):
    out = tuple(np.broadcast_shapes(a, b))
    assert broadcast_plan(a, b, out) == {"dims": dims, "stride1": s1, "stride2": s2}
    # the plan walks the same elements as numpy's broadcast
    x1 = np.arange(int(np.prod(a)), dtype=np.int64).reshape(a)
    x2 = np.arange(int(np.prod(b)), dtype=np.int64).reshape(b)
    idx = np.indices(dims).reshape(6, -1)
    assert np.array_equal((np.array(s1) @ idx), np.broadcast_to(x1, out).reshape(-1))
    assert np.array_equal((np.array(s2) @ idx), np.broadcast_to(x2, out).reshape(-1))


# ---- SOFTMAX ----------------------------------------------------------------------------------------

def test_softmax(tmp_path):
    """Depths 1..511 with int8 output and up to 5000 with int16 output (a constant row of 5000 wraps
    the int32 sum, as in TFLM), betas from 0.02 to 50, random input scales; random, constant and
    narrow rows."""
    rng = np.random.default_rng(41)
    depths = [1, 2, 3, 10, 37, 100, 256, 511, 511, 12, 1000, 4095, 5000, 64]
    betas = [1.0, 1.0, 0.5, 2.0, 0.02, 50.0, 1.0, 1.0, 0.3, 1.0, 1.0, 0.7, 1.0, 5.0]
    ops = []
    for k, (d, beta) in enumerate(zip(depths, betas)):
        shape = ((1,), (2, 3), (1, 2, 2))[k % 3] + (d,)
        out = T(shape, "int16", 1 / 65536, -32768) if k >= 10 else T(shape, scale=1 / 256, zp=-128)
        ops.append(Op("SOFTMAX", [T(shape, scale=B._scale(rng, -3, 1), zp=B._zp(rng))], out,
                      ("SoftmaxOptions", {"Beta": float(np.float32(beta))})))
    blob = build_model(ops)
    sets = B._random_inputs(blob, rng, 2)
    sets.append([np.full(op["inputs"][0]["shape"], int(rng.integers(-128, 128)), np.int8) for op in ops])
    sets.append([np.clip(rng.integers(-5, 6, size=op["inputs"][0]["shape"]) + 90, -128, 127).astype(np.int8)
                 for op in ops])
    path = tmp_path / "softmax.tflite"
    path.write_bytes(blob)
    check_host(path, sets)


# ---- QUANTIZE / DEQUANTIZE --------------------------------------------------------------------------

def test_quantize_every_type_pair(tmp_path):
    """float32 -> int8/int16 (ties, +/-0, tiny values, quotients near +/-2^31), and int8 ->
    int8/int16/int32, int16 -> int8/int16 requantization."""
    rng = np.random.default_rng(52)
    pairs = [("float32", "int8")] * 3 + [("float32", "int16")] * 2 + \
        [("int8", "int8")] * 2 + [("int8", "int16"), ("int8", "int32"), ("int16", "int8"), ("int16", "int16")] * 2
    qp = {"int8": lambda: (B._scale(rng), B._zp(rng)),
          "int16": lambda: (B._scale(rng, -5, -1), int(rng.integers(-900, 900))),
          "int32": lambda: (B._scale(rng, -6, -2), int(rng.integers(-99, 99)))}
    ops, sets = [], [[], [], []]
    shape = (1, 300)
    for src, dst in pairs:
        so, zo = qp[dst]()
        if src == "float32":
            lo, hi = (-128, 127) if dst == "int8" else (-32768, 32767)
            for s in sets:
                x = rng.uniform((lo - zo) * so * 1.2, (hi - zo) * so * 1.2, size=shape).astype(np.float32)
                x[0, :100] = ((rng.integers(-300, 300, size=100) + 0.5) * np.float32(so)).astype(np.float32)
                x[0, 100:106] = (0.0, -0.0, 1e-30, -1e-30, 2.0e9 * so, -2.0e9 * so)
                s.append(x)
            ops.append(Op("QUANTIZE", [T(shape, "float32")], T(shape, dst, so, zo)))
        else:
            si, zi = qp[src]()
            info = np.iinfo(np.dtype(src))
            for s in sets:
                s.append(rng.integers(info.min, info.max, size=shape, endpoint=True).astype(src))
            ops.append(Op("QUANTIZE", [T(shape, src, si, zi)], T(shape, dst, so, zo)))
    check_built(tmp_path, ops, sets)


def test_quantize_float32_beyond_int32_matches_reference(tmp_path):
    """Where TFLM's float -> int32 conversion is undefined (|x / scale| >= 2^31, infinities, NaN;
    x86 gives INT32_MIN, Arm saturates) the kernel follows the registry reference: saturation as
    the real quotient would, NaN -> the zero point."""
    x = np.array([[np.inf, -np.inf, np.nan, -np.nan, 3e38, -3e38, 2.2e9, -2.2e9, 0.5, -0.5]], np.float32)
    ops = [Op("QUANTIZE", [T(x.shape, "float32")], T(x.shape, dst, 1.0, zp))
           for dst, zp in (("int8", -5), ("int8", 100), ("int16", 0), ("int16", -3000))]
    ours, expected = run_c(tmp_path, build_model(ops), [x] * len(ops))
    for o, e in zip(ours, expected):
        assert np.array_equal(o, e), (o, e)


def test_dequantize(tmp_path):
    """int8 (every value) and int16 -> float32, scales from 1e-6 to 10."""
    rng = np.random.default_rng(53)
    ops = [Op("DEQUANTIZE", [T((1, 256), "int8", B._scale(rng, -4, 1), B._zp(rng))], T((1, 256), "float32"))
           for _ in range(6)]
    ops += [Op("DEQUANTIZE", [T((1, 256), "int16", B._scale(rng, -6, -1), int(rng.integers(-500, 500)))],
               T((1, 256), "float32")) for _ in range(3)]
    i16 = [rng.integers(-32768, 32767, size=(1, 256), endpoint=True).astype(np.int16) for _ in range(3)]
    check_built(tmp_path, ops, [[ALL_INT8] * 6 + i16])


def test_dequantize_float32_product_equals_double_reference():
    """The kernel's float32 product scale * (x - zp) rounds like the reference's double product
    rounded to float32, for every int8 and a sweep of int16 differences over many scales."""
    rng = np.random.default_rng(54)
    scales = np.float32(10.0) ** rng.uniform(-40, 38, size=400).astype(np.float32)
    diffs = np.concatenate([np.arange(-255, 256), rng.integers(-65535, 65536, size=2000)]).astype(np.int32)
    for s in scales:
        with np.errstate(over="ignore"):
            ours = np.float32(s) * diffs.astype(np.float32)
            ref = (float(s) * diffs.astype(np.float64)).astype(np.float32)
        assert np.array_equal(ours.view(np.uint32), ref.view(np.uint32)), s


@pytest.mark.parametrize("v", [0.1, 1 / 3, 0.00390625, 1e-5, 3.0517578125e-05, 12345.678, 1e-38])
def test_float32_literal_reads_back_exactly(v):
    text = float32_literal(v)
    assert text.endswith("f")
    assert np.float32(float(text[:-1])) == np.float32(v)


# ---- in place: output over the input's first byte --------------------------------------------------

IN_PLACE_HARNESS = r"""
#include <stdio.h>
#include <string.h>
#include "mcu_kernels_c.h"

#define N 37
static _Alignas(16) uint8_t shared[4 * N];
static _Alignas(16) uint8_t apart[4 * N];
static int failures;

static void check(const char *what, size_t nbytes)
{
    if (memcmp(shared, apart, nbytes) != 0) {
        printf("%s differs in place\n", what);
        failures++;
    }
}

int main(void)
{
    static int8_t t8[256];
    static int16_t t16[256];
    static int32_t t32[256];
    int8_t x8[N];
    int16_t x16[N];
    float xf[N];
    for (int i = 0; i < 256; i++) {
        t8[i] = (int8_t)(i * 7 + 3);
        t16[i] = (int16_t)(i * 251 - 30000);
        t32[i] = i * 100003 - 7;
    }
    for (int i = 0; i < N; i++) {
        x8[i] = (int8_t)(i * 37 + 11);
        x16[i] = (int16_t)(i * 1777 - 30000);
        xf[i] = (float)(i * 13 - 200) * 0.37f;
    }
    const mcu_table_params tp = {N};
    const mcu_dequantize_params dq = {N, 5, 0.125f};
    const mcu_quantize_f32_params qf = {N, 0.5f, -3};
    const mcu_requantize_params rq = {N, 100, 1518500250, -6, 7};
    const mcu_relu6_params r6 = {N, -5, 90};

#define RUN(what, in, out_bytes, call_shared, call_apart) \
    memcpy(shared, in, sizeof(in)); call_shared; memcpy(apart, in, sizeof(in)); call_apart; check(what, out_bytes)
    RUN("quantize_s8", x8, N, mcu_quantize_s8(&tp, (const int8_t *)shared, t8, (int8_t *)shared),
        mcu_quantize_s8(&tp, (const int8_t *)apart, t8, (int8_t *)(apart + 2 * N)); memmove(apart, apart + 2 * N, N));
    RUN("quantize_s8_s16", x8, 2 * N, mcu_quantize_s8_s16(&tp, (const int8_t *)shared, t16, (int16_t *)shared),
        mcu_quantize_s8_s16(&tp, x8, t16, (int16_t *)apart));
    RUN("quantize_s8_s32", x8, 4 * N, mcu_quantize_s8_s32(&tp, (const int8_t *)shared, t32, (int32_t *)shared),
        mcu_quantize_s8_s32(&tp, x8, t32, (int32_t *)apart));
    RUN("dequantize_s8", x8, 4 * N, mcu_dequantize_s8(&dq, (const int8_t *)shared, (float *)shared),
        mcu_dequantize_s8(&dq, x8, (float *)apart));
    RUN("dequantize_s16", x16, 4 * N, mcu_dequantize_s16(&dq, (const int16_t *)shared, (float *)shared),
        mcu_dequantize_s16(&dq, x16, (float *)apart));
    RUN("quantize_f32", xf, N, mcu_quantize_f32(&qf, (const float *)shared, (int8_t *)shared),
        mcu_quantize_f32(&qf, xf, (int8_t *)apart));
    RUN("quantize_f32_s16", xf, 2 * N, mcu_quantize_f32_s16(&qf, (const float *)shared, (int16_t *)shared),
        mcu_quantize_f32_s16(&qf, xf, (int16_t *)apart));
    RUN("quantize_s16", x16, N, mcu_quantize_s16(&rq, (const int16_t *)shared, (int8_t *)shared),
        mcu_quantize_s16(&rq, x16, (int8_t *)apart));
    RUN("quantize_s16_s16", x16, 2 * N, mcu_quantize_s16_s16(&rq, (const int16_t *)shared, (int16_t *)shared),
        mcu_quantize_s16_s16(&rq, x16, (int16_t *)apart));
    RUN("relu6", x8, N, mcu_relu6_s8(&r6, (const int8_t *)shared, (int8_t *)shared),
        mcu_relu6_s8(&r6, x8, (int8_t *)apart));
    return failures;
}
"""


def test_elementwise_kernels_work_in_place(tmp_path):
    """The planner may place an element-wise op's output at its input's offset (also for QUANTIZE /
    DEQUANTIZE, whose element sizes differ): each kernel gives the same bytes in place as apart."""
    from mcuforge.host import CFLAGS

    src = tmp_path / "in_place.c"
    src.write_text(IN_PLACE_HARNESS)
    sources = [KERNELS / f"mcu_{n}.c" for n in ("quantize_s8", "quantize_s16", "quantize_f32", "dequantize_s8",
                                                "dequantize_s16", "relu6_s8")]
    exe = tmp_path / "in_place"
    cmd = ["gcc", *CFLAGS, "-I", str(KERNELS), "-I", str(ROOT / "firmware" / "include"), str(src),
           *map(str, sources), "-o", str(exe), "-lm"]
    build = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout


# ---- Cortex-M cross build ---------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="arm-none-eabi-gcc not installed")
@pytest.mark.parametrize("cpu", [["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
                                 ["-mcpu=cortex-m55", "-mfloat-abi=hard"]], ids=["m4", "m55"])
def test_kernels_cross_compile_warning_free(tmp_path, cpu):
    include = ROOT / "firmware" / "include"
    for src in ARITH_KERNELS:
        cmd = ["arm-none-eabi-gcc", *cpu, "-mthumb", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror",
               "-I", str(KERNELS), "-I", str(include), "-c", str(src), "-o", str(tmp_path / f"{src.stem}.o")]
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert r.returncode == 0, f"{src.name}:\n{r.stderr}"
