"""L2_POOL_2D: 2-D L2 pooling of a float32 NHWC tensor, sqrt(mean of the squares) per window.

TFLM (l2_pool_2d.cc, reference_ops::L2Pool; float32 only): each window is clipped to the input
(padding is never read); in float32, sum = 0, then sum += v * v over the window row by row, and
the output is sqrtf(sum / count), then clamped to the fused activation's float range
(CalculateActivationRange: NONE is [-FLT_MAX, FLT_MAX], so +inf becomes FLT_MAX; RELU [0, FLT_MAX],
RELU6 [0, 6], RELU_N1_TO_1 [-1, 1]; NaN passes). Window geometry as the other pooling ops.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _nn
from . import _portable
from . import pool_2d

f32 = np.float32
FLT_MAX = float(np.finfo(f32).max)
FLOAT_RANGES = {"NONE": (-FLT_MAX, FLT_MAX), "RELU": (0.0, FLT_MAX), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}


def _windows(x: np.ndarray, v: OpView):
    n, oh, ow, _ = v.out.shape
    k, s = v.attrs["filter"], v.attrs["stride"]
    return _nn.taps(_nn.padded(x, k, s, (1, 1), (oh, ow), 0), k, s, (1, 1), (oh, ow))


def reference(args, v: OpView):
    x = np.asarray(args[0], f32)
    with np.errstate(all="ignore"):
        total = np.zeros(v.out.shape, f32)
        for _, _, tap in _windows(x, v):  # row by row; a padded tap adds 0, which changes no sum of squares
            total = (total + tap * tap).astype(f32)
        count = np.zeros(v.out.shape[:3] + (1,), np.int64)
        for _, _, tap in _windows(np.ones(x.shape[:3] + (1,), np.int64), v):
            count = count + tap
        result = np.sqrt((total / count.astype(f32)).astype(f32)).astype(f32)
    lo, hi = (f32(b) for b in FLOAT_RANGES[v.attrs["activation"]])
    result = np.where(result < lo, lo, result)
    return np.where(hi < result, hi, result).astype(f32)


def float32_io(v: OpView) -> str | None:
    """Input and output must be float32 (TFLM has no quantized L2_POOL_2D)."""
    found = sorted({v.args[0].dtype, v.out.dtype})
    return None if found == ["float32"] else f"got {', '.join(found)}"


def lower_c(call) -> CKernel:
    """mcu_l2_pool_2d_f32: the window geometry and the activation's float range."""
    fh, fw = call.attrs["filter"]
    g = c.window(call, fh, fw)
    lo, hi = FLOAT_RANGES[call.attrs["activation"]]
    params = {**g.fields("batches", "in_h", "in_w"), "channels": g.in_c, **g.fields("out_h", "out_w"),
              "filter_h": fh, "filter_w": fw, **g.fields("stride_h", "stride_w", "pad_top", "pad_left"),
              "act_min": _portable.float32_literal(lo), "act_max": _portable.float32_literal(hi)}
    return CKernel("mcu_l2_pool_2d_f32", "mcu_l2_pool_2d_f32", "mcu_l2_pool_2d_params", params)


register(OpDef(
    name="l2_pool_2d",
    tflm="l2_pool_2d.cc, reference_ops::L2Pool (float32 only)",
    kind=OpKind.REDUCTION,
    doc="2-D L2 pooling (the square root of the mean of the squares over each window), float32 NHWC, any "
        "window, stride and SAME/VALID padding.",
    infer=pool_2d.infer,
    reference=reference,
    checks=(float32_io, c.rank4_input, pool_2d.positive_window, pool_2d.window_not_absurd,
            pool_2d.valid_window_fits, c.supported_fused_activation),
    tflite={"L2_POOL_2D": pool_2d.parse},
    portable=Portable(lower_c),
))
