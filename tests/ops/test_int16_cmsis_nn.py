"""The cmsis-nn target's 16x8 kernels (mcu_cmsis_conv2d_s16, mcu_cmsis_fully_connected_s16,
mcu_cmsis_dwconv2d_s16) against the TFLite Micro interpreter: their kernel models (verify --on
reference), the C on the host with the plain path and with the DSP path (its instructions emulated),
and, as slow tests, on QEMU with the real DSP instructions (Cortex-M4) and Helium (Cortex-M55). The
cases reach the layouts' edges (odd channel and pixel counts, depths that are not multiples of 8,
the 1x1 direct path), both output stages (int64 / int32 bias), and layers whose weights need several
int32 chunks."""

from __future__ import annotations

import numpy as np
import pytest
from _int16 import add_conv, add_fc, build, edge_scales, kernels
from mcuforge.planner.targets.cmsis_nn import _s16

from mcuforge.driver import compile_model
from mcuforge.verify import verify_board, verify_host, verify_program

# biases near 2^31: the int32 sum cannot take them (HIGH records, not ROUND)
BIG_BIAS = [2_140_000_000 * (-1) ** i for i in range(20)]
CONV = [
    dict(ic=3, oc=5, k=(3, 3)),  # depth 27 (not a multiple of 8), odd channels
    dict(ic=16, oc=8, k=(1, 1), hw=(5, 3)),  # the 1x1 direct path, an odd pixel count
    dict(ic=13, oc=6, k=(1, 1), stride=(2, 2), hw=(7, 9), bias="int32"),  # 1x1 through im2col, int32 bias
    dict(ic=1, oc=16, k=(10, 4), stride=(2, 2), hw=(25, 10), act="RELU"),  # the KWS front end
    dict(ic=1, oc=16, k=(1, 16), stride=(1, 8), padding="VALID", hw=(1, 64), bias=None),  # an audio encoder
    dict(ic=4, oc=3, k=(3, 3), dil=(2, 2), act="RELU6", per_channel=False),
    dict(ic=2, oc=4, k=(5, 7), hw=(2, 2), act="RELU"),  # windows much wider than the input: clipped rows
    dict(ic=3, oc=2, k=(2, 3), stride=(1, 3), hw=(4, 7), dil=(1, 2)),  # dilation across
    dict(ic=64, oc=4, k=(3, 3), hw=(4, 4), strong=True, spread=8.0),  # 576 weights of +-127: several chunks
    dict(ic=40, oc=3, k=(3, 3), hw=(3, 3), strong=True, bias="int32", spread=8.0),  # one int32 chunk, wrapping
    dict(ic=8, oc=4, k=(3, 3), hw=(4, 4), scales=edge_scales(2.0 ** -17), bias_data=BIG_BIAS[:4]),  # HIGH
]
FC = [
    dict(depth=40, units=12),
    dict(depth=13, units=5, rows=3, act="RELU", bias=None),  # depth 13, units 5 (a partial tile), 3 rows
    dict(depth=64, units=4, bias="int32"),
    dict(depth=700, units=6, strong=True, spread=6.0),  # several chunks
    dict(depth=9, units=1, act="RELU_N1_TO_1", spread=4.0),
    dict(depth=12, units=3, scales=edge_scales(0.75 * 2.0 ** 12)),  # shift 13: WIDE records (no HIGH form)
    dict(depth=700, units=2, strong=True, scales=edge_scales(0.75 * 2.0)),  # WIDE records, several chunks
    dict(depth=16, units=4, scales=edge_scales(2.0 ** -17), bias_data=BIG_BIAS[:4]),  # HIGH, one chunk
]
DW = [
    dict(ic=8, oc=8, k=(3, 3), depthwise=True),
    dict(ic=4, oc=4, k=(3, 3), stride=(2, 2), depthwise=True, act="RELU6", bias=None),
    dict(ic=5, oc=5, k=(3, 3), depthwise=True),  # odd channels: the portable kernel
    dict(ic=4, oc=8, k=(3, 3), depthwise=True),  # depth multiplier 2: the portable kernel
    dict(ic=12, oc=12, k=(5, 3), dil=(2, 1), depthwise=True, hw=(9, 8)),
    dict(ic=16, oc=16, k=(1, 10), padding="VALID", hw=(1, 49), depthwise=True, strong=True),  # a time filter
    dict(ic=28, oc=28, k=(3, 3), depthwise=True, hw=(4, 5), act="RELU"),  # 16 channels per pass, then 8, then 4
    dict(ic=20, oc=20, k=(3, 3), depthwise=True, hw=(4, 4), scales=edge_scales(2.0 ** -17), bias_data=BIG_BIAS),
]
MODELS = {"conv": (CONV, add_conv, 21), "fc": (FC, add_fc, 22), "dw": (DW, add_conv, 23)}
KERNELS = {"conv": {"mcu_cmsis_conv2d_s16"}, "fc": {"mcu_cmsis_fully_connected_s16"},
           "dw": {"mcu_cmsis_dwconv2d_s16", "mcu_depthwise_conv_2d_s16"}}


def compiled_model(tmp_path, name):
    cases, fn, seed = MODELS[name]
    blob, data = build(cases, fn, seed)
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(blob)
    compiled = compile_model(path)
    assert kernels(compiled) == KERNELS[name]
    return compiled, blob, data


def test_chunks_are_exercised():
    """The strong-weight cases need several int32 chunks (else the int64 path would be untested)."""
    big = np.full((1, 576), 127, np.int8)
    assert _s16.chunk(big, True) == 512 and _s16.chunk(big, False) == 576
    assert _s16.chunk(np.full((2, 700), -127, np.int8), True) < 700


def test_every_output_stage_is_exercised(tmp_path):
    """The cases reach the four kinds of records (ROUND, HIGH, WIDE, NARROW), one and several chunks;
    each kernel both of its one-chunk fast paths (ROUND, HIGH)."""
    seen = set()
    for name in MODELS:
        compiled, _, _ = compiled_model(tmp_path, name)
        modes = set()
        for b in compiled.program.bindings:
            p = b.kernel.params
            if b.kernel.info.target == "cmsis-nn":
                seen.add((p["mode"], p.get("chunk", 0) < p.get("depth8", 0)))
                modes.add((p["mode"], p.get("chunk", 0) < p.get("depth8", 0)))
        assert {(_s16.ROUND, False), (_s16.HIGH, False)} <= modes, name
    assert {(_s16.ROUND, False), (_s16.HIGH, False), (_s16.HIGH, True), (_s16.WIDE, False), (_s16.WIDE, True),
            (_s16.NARROW, False)} <= seen


@pytest.mark.parametrize("name", sorted(MODELS))
def test_kernel_models_equal_tflm(tmp_path, name):
    compiled, blob, data = compiled_model(tmp_path, name)
    for res in verify_program(compiled, [data]):
        assert res.ok, [str(m) for m in res.mismatches][:5]


@pytest.mark.parametrize("dsp", [False, True], ids=["plain", "dsp"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_c_kernels_equal_tflm_on_host(tmp_path, name, dsp):
    compiled, blob, data = compiled_model(tmp_path, name)
    (res,) = verify_host(compiled, [data], isolate=False, dsp=dsp)
    assert res.ok, [str(m) for m in res.mismatches][:5]


@pytest.mark.slow
@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_c_kernels_equal_tflm_on_qemu(tmp_path, name, board):
    compiled, blob, data = compiled_model(tmp_path, name)
    (res,) = verify_board(compiled, [data], board)
    assert res.ok, [str(m) for m in res.mismatches][:5]
