"""Portable (`c` target) kernels of the nn family, end to end on the host: every fixture made only of
ops with portable kernels (the nn family, CONV_2D, views) is compiled to C for target `c`, built with
host gcc -Wall -Wextra -Werror, run, and compared byte for byte with TFLite Micro; plus the MLPerf
Tiny anomaly detection model (FULLY_CONNECTED only), single-op edge cases the fixtures miss (built
with the model builders of tests/ops/test_nn_ops.py: depth multipliers 3/8, uneven dilation, FC
weight zero points and rank-4 keep_num_dims, windows larger than the input, rank-5 and split-axis
MEAN, transpose convolutions with gaps and bias-only borders) and unit checks of the MEAN layout."""

import numpy as np
import pytest
from conftest import MLPERF_MODELS, MODELS, manifest
from mcuforge.ir.ops.mean import mean_dims

from mcuforge.driver import Options, compile_model
from mcuforge.verify import random_inputs, verify_host

OPS = {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "AVERAGE_POOL_2D", "MAX_POOL_2D",
       "MEAN", "RESHAPE", "SQUEEZE"}
FIXTURES = [f for f in manifest() if set(f["ops"]) <= OPS]


def check_host(path, n: int = 4, seed: int = 3):
    compiled = compile_model(path, Options(targets=("c",)))
    rng = np.random.default_rng(seed)
    results = verify_host(compiled, [random_inputs(compiled.imported, rng) for _ in range(n)], isolate=False)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches if not r.ok]
    assert all(r.ok for r in results), "\n".join(bad[:10]) or "host run failed"
    return compiled


def test_fixture_selection_covers_every_nn_op():
    covered = {op for f in FIXTURES for op in f["ops"]}
    assert OPS - {"CONV_2D", "RESHAPE", "SQUEEZE"} <= covered


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f["name"] for f in FIXTURES])
def test_fixture_host_bit_exact(fixture):
    check_host(MODELS / fixture["file"])


def test_mlperf_anomaly_detection_host_bit_exact():
    check_host(MLPERF_MODELS["ad"], n=3, seed=7)


@pytest.mark.parametrize("shape, axes, dims", [
    ((1, 5, 5, 8), (1, 2), (1, 25, 8, 1, 1)),
    ((1, 3, 5, 7), (3,), (15, 7, 1, 1, 1)),
    ((1, 8, 6), (1,), (1, 8, 6, 1, 1)),
    ((2, 3, 4, 5), (0, 2), (1, 2, 3, 4, 5)),
    ((2, 3, 4, 5), (1, 3), (2, 3, 4, 5, 1)),
    ((2, 3, 4, 5, 6), (0, 4), (1, 2, 60, 6, 1)),
    ((4, 6), (), (24, 1, 1, 1, 1)),
])
def test_mean_dims(shape, axes, dims):
    assert mean_dims(shape, axes) == dims
    assert int(np.prod(dims)) == int(np.prod(shape))


# ---- edge cases the fixtures do not cover, built with the single-op model builders of the op tests --

def _op_tests():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent / "ops" / "test_nn_ops.py"
    spec = importlib.util.spec_from_file_location("_mcuforge_test_nn_ops_builders", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _edge_cases():
    t = _op_tests()
    return {
        # depthwise: hw, ic, mult, k, stride, dilation, padding, act, per_channel, bias
        "dw_m3_k3x2_s21_relu_n1_nobias": lambda s: t.depthwise_model(s, (7, 8), 2, 3, (3, 2), (2, 1), (1, 1),
                                                                      "SAME", "RELU_N1_TO_1", True, False),
        "dw_m3_dil23_valid_relu": lambda s: t.depthwise_model(s, (11, 9), 2, 3, (3, 3), (1, 1), (2, 3), "VALID",
                                                               "RELU", True, True),
        "dw_m8_5x5_s2_per_tensor": lambda s: t.depthwise_model(s, (10, 10), 1, 8, (5, 5), (2, 2), (1, 1), "SAME",
                                                                "NONE", False, True),
        # fully connected: in_shape, units, keep_num_dims, per_channel, bias, act, weight zero point
        "fc_weight_zp7": lambda s: t.fc_model(s, (1, 24), 10, False, False, True, "NONE", 7),
        "fc_batch2_weight_zp-5_relu": lambda s: t.fc_model(s, (2, 24), 10, False, False, True, "RELU", -5),
        "fc_rank4_keep_pc_nobias": lambda s: t.fc_model(s, (1, 2, 3, 12), 4, True, True, False, "NONE", 0),
        "fc_rows3_pc_nobias_relu6": lambda s: t.fc_model(s, (3, 16), 9, False, True, False, "RELU6", 0),
        # pooling: op, hw, ch, filter, stride, padding, act
        "avgpool_window_larger_than_input": lambda s: t.pool_model(s, "AVERAGE_POOL_2D", (3, 3), 4, (6, 6),
                                                                   (1, 1), "SAME"),
        "maxpool_window_larger_than_input": lambda s: t.pool_model(s, "MAX_POOL_2D", (3, 3), 4, (6, 6), (1, 1),
                                                                   "SAME"),
        # mean: shape, axes, keep_dims, input and output quantization
        "mean_rank5_axes41": lambda s: t.mean_model((2, 3, 4, 5, 6), [4, 1], False, (0.05, -7), (0.02, 11)),
        "mean_axes0_last_keep_expand": lambda s: t.mean_model((3, 4, 5), [0, -1], True, (0.03, 0), (0.012, -60)),
        "mean_48x48_shrink": lambda s: t.mean_model((1, 48, 48, 2), [1, 2], True, (0.01, 5), (0.1, -2)),
        "mean_rank1_zp_min": lambda s: t.mean_model((9,), [0], False, (0.3, -128), (0.3, -128)),
        "mean_spatial_four_channel_blocks_and_tail": lambda s: t.mean_model((2, 3, 3, 11), [1, 2], True, (0.04, -3),
                                                                           (0.011, 9)),
        "mean_two_reduced_runs_blocks": lambda s: t.mean_model((2, 3, 4, 5, 8), [1, 3], False, (0.05, 4), (0.02, -5)),
        # transpose conv: hw, ic, oc, k, stride, padding, out_hw, act, per_channel, bias
        "tconv_valid_bias_only_edge": lambda s: t.transpose_conv_model(s, (5, 5), 4, 3, (3, 3), (2, 2), "VALID",
                                                                       (12, 12), "NONE", True, True),
        "tconv_kernel_below_stride": lambda s: t.transpose_conv_model(s, (3, 4), 3, 2, (2, 2), (3, 3), "SAME",
                                                                      (9, 12), "NONE", True, True),
        "tconv_5x3_s21_relu_nobias": lambda s: t.transpose_conv_model(s, (4, 4), 3, 4, (5, 3), (2, 1), "SAME",
                                                                      (8, 4), "RELU", True, False),
        "tconv_bias_minus1_relu6": lambda s: t.transpose_conv_model(s, (6, 5), 2, 3, (3, 3), (2, 2), "SAME",
                                                                    (12, 10), "RELU6", True, None),
    }


EDGE_NAMES = ["dw_m3_k3x2_s21_relu_n1_nobias", "dw_m3_dil23_valid_relu", "dw_m8_5x5_s2_per_tensor",
              "fc_weight_zp7", "fc_batch2_weight_zp-5_relu", "fc_rank4_keep_pc_nobias",
              "fc_rows3_pc_nobias_relu6", "avgpool_window_larger_than_input",
              "maxpool_window_larger_than_input", "mean_rank5_axes41", "mean_axes0_last_keep_expand",
              "mean_48x48_shrink", "mean_rank1_zp_min", "mean_spatial_four_channel_blocks_and_tail",
              "mean_two_reduced_runs_blocks", "tconv_valid_bias_only_edge",
              "tconv_kernel_below_stride", "tconv_5x3_s21_relu_nobias", "tconv_bias_minus1_relu6"]


@pytest.fixture(scope="module")
def edge_cases():
    return _edge_cases()


@pytest.mark.parametrize("name", EDGE_NAMES)
def test_edge_case_host_bit_exact(name, edge_cases, tmp_path):
    import zlib

    path = tmp_path / f"{name}.tflite"
    path.write_bytes(edge_cases[name](zlib.crc32(name.encode())))
    compiled = check_host(path, n=4, seed=zlib.crc32(name.encode()))
    op = compiled.imported.main.body.op
    symbols = [b.kernel.function for b in compiled.program.bindings if not b.kernel.view]
    assert symbols and all(s.startswith("mcu_") and s.endswith("_s8") for s in symbols), (op, symbols)


# ---- scratch: the portable kernels write nothing past the size their header declares --------------

GUARD = 64
SCRATCH_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mcu_kernels_c.h"
{constants}
static uint8_t guard_byte(uint32_t i) {{ return (uint8_t)(0x5a + 37u * i); }}
int main(void)
{{
    static const {struct} params = {params};
    static {ctype} input[{in_n}], output[{out_n}];
    const uint32_t scratch_n = {scratch_n};
    uint8_t *scratch = malloc(scratch_n + {guard});
    if (scratch == NULL || fread(input, 1, sizeof input, stdin) != sizeof input) return 4;
    for (uint32_t i = 0; i < scratch_n + {guard}; i++) scratch[i] = guard_byte(i);
    {function}(&params, input, {args}, (void *)scratch, output);
    for (uint32_t i = scratch_n; i < scratch_n + {guard}; i++) {{
        if (scratch[i] != guard_byte(i)) return 6;
    }}
    fwrite(output, 1, sizeof output, stdout);
    return 0;
}}
"""


def scratch_driver(kc) -> str:
    """A C program calling the kernel of `kc` (one int8 or int16 input) on stdin with exactly its
    planned scratch and guard bytes behind it; exit code 6 when the guard is touched."""
    from mcuforge.codegen.emit import C_TYPES, _c_array, c_value

    consts, names = [], []
    for role, data in kc.constants.items():
        consts.append(f"static const {C_TYPES[str(data.dtype)]} c_{role}[] = {{\n{_c_array(data)}\n}};")
        names.append(f"c_{role}")
    n_args = sum(r.startswith("arg") for r in kc.constants)  # the op's constant arguments come first
    names[n_args:n_args] = ["NULL"] * (kc.op_args - 1 - n_args)  # an absent bias
    return SCRATCH_DRIVER.format(constants="\n".join(consts), struct=kc.struct, params=c_value(kc.params),
                                 in_n=kc.inputs[0].size, out_n=kc.output.size, scratch_n=kc.scratch_bytes,
                                 guard=GUARD, function=kc.function, args=", ".join(names),
                                 ctype=C_TYPES[kc.inputs[0].dtype])


@pytest.mark.parametrize("fixture", [f for f in FIXTURES if "TRANSPOSE_CONV" in f["ops"]],
                         ids=lambda f: f["name"])
def test_portable_scratch_stays_in_its_declared_size(fixture, tmp_path):
    """TRANSPOSE_CONV (the portable kernels with scratch, int8 and 16x8) writes only inside the scratch size its
    header macro declares (the size the planner gives it), and computes the kernel model's output."""
    import subprocess

    from mcuforge.codegen.emit import kernel_files

    compiled = compile_model(MODELS / fixture["file"], Options(targets=("c",)))
    (kc,) = [b.kernel for b in compiled.program.bindings if b.kernel.scratch_bytes]
    assert kc.scratch_check.startswith(("MCU_TRANSPOSE_CONV_S8_SCRATCH_BYTES(", "MCU_TRANSPOSE_CONV_S16_SCRATCH_BYTES("))
    (tmp_path / "driver.c").write_text(scratch_driver(kc))
    sources, _ = kernel_files(compiled)
    kernels = sources[f"{kc.source}.c"].parent
    exe = tmp_path / "driver"
    subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(kernels), "-I",
                    str(kernels.parent.parent / "include"), str(tmp_path / "driver.c"), str(sources[f"{kc.source}.c"]),
                    "-o", str(exe)], check=True)
    dtype = np.dtype(kc.inputs[0].dtype)  # int8, or int16 for 16x8
    x = np.random.default_rng(5).integers(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, kc.inputs[0].shape).astype(dtype)
    proc = subprocess.run([str(exe)], input=x.tobytes(), capture_output=True, check=False)
    assert proc.returncode != 6, "the kernel wrote past the scratch size its header declares"
    assert proc.returncode == 0, proc.stderr
    assert np.array_equal(np.frombuffer(proc.stdout, dtype).reshape(kc.output.shape), kc.run([x]))
