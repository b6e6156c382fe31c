"""L2_POOL_2D against TFLite Micro (float32 only, as TFLM's kernel): the numpy reference and the
portable C over windows, strides, SAME and VALID padding (windows clipped at the borders), the four
fused activations (NONE clamps +inf to FLT_MAX) and the IEEE specials; and the rules."""

from __future__ import annotations

import numpy as np
from elementwise_cases import F32_SPECIALS, Model, check, problems
from mcuforge.ir.ops._common import out_size

# (input shape, filter, stride, padding, activation)
CASES = [((1, 8, 8, 3), (2, 2), (2, 2), "VALID", "NONE"), ((2, 7, 9, 4), (3, 3), (1, 1), "SAME", "NONE"),
         ((1, 7, 9, 2), (3, 2), (2, 3), "SAME", "RELU"), ((1, 5, 5, 5), (5, 5), (1, 1), "VALID", "RELU6"),
         ((1, 6, 4, 3), (4, 1), (1, 2), "SAME", "RELU_N1_TO_1"), ((1, 3, 3, 1), (3, 3), (2, 2), "SAME", "NONE")]


def test_l2_pool(tmp_path):
    rng = np.random.default_rng(111)
    m = Model()
    for k, (shape, (fh, fw), (sh, sw), pad, act) in enumerate(CASES):
        x = rng.normal(0, 3 if k != 3 else 0.5, shape).astype(np.float32)
        if k == 1:
            x.reshape(-1)[::17][: F32_SPECIALS.size] = F32_SPECIALS[: x.reshape(-1)[::17].size]
        if k == 5:
            x[0, 0, 0, 0] = 3e38  # its square overflows: +inf, clamped to FLT_MAX under NONE
        out = (shape[0], out_size(pad, shape[1], fh, sh), out_size(pad, shape[2], fw, sw), shape[3])
        m.op("L2_POOL_2D", [m.input(x)], out, "float32", FilterHeight=fh, FilterWidth=fw, StrideH=sh, StrideW=sw,
             Padding=pad, FusedActivationFunction=act)
    i8 = np.zeros((1, 3), np.int8)  # an int8 operator: mcuforge refuses all-float models
    m.op("ABS", [m.input(i8, quant=(0.1, 0))], i8.shape, "int8", quant=(0.1, 0))
    check(tmp_path, m)


def test_rules():
    m = Model()
    x = np.zeros((1, 4, 4, 2), np.int8)
    opts = {"FilterHeight": 2, "FilterWidth": 2, "StrideH": 2, "StrideW": 2, "Padding": "VALID"}
    m.op("L2_POOL_2D", [m.input(x, quant=(0.1, 0))], (1, 2, 2, 2), "int8", quant=(0.1, 0), **opts)
    m.op("L2_POOL_2D", [m.input(x.astype(np.float32))], (1, 2, 2, 2), "float32", FusedActivationFunction="TANH",
         **opts)
    m.op("L2_POOL_2D", [m.input(x.astype(np.float32))], (1, 0, 0, 2), "float32",
         **{**opts, "FilterHeight": 5, "FilterWidth": 5})
    found = problems(m.finish())
    assert [p[0] for p in found] == [0, 1, 2], found
    assert found[0][2] == "Input and output must be float32 (TFLM has no quantized L2_POOL_2D) (got int8)"
    assert found[1][2] == "The fused activation must be NONE, RELU, RELU6 or RELU_N1_TO_1 (got TANH)"
    assert "the filter must fit in the input (filter 5x5 on a 4x4 input)" in found[2][2]
