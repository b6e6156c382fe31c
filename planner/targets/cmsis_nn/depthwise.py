"""DEPTHWISE_CONV_2D on cmsis-nn: mcu_cmsis_dwconv2d_s8, any filter, stride, dilation, padding and
depth multiplier. Weights as [KH*KW][OC] taps; the layer's bias for the plain C path (TFLM's
(x + input_offset) * w, padded taps skipped) and the bias folded with the input zero point for the
DSP and Helium paths, which read padded taps as the zero point (from a line cache or a pad row in
scratch) and multiply raw int8 values. The DSP path's sweep over the output is chosen here by shape."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call

from ...kernel import KernelCall
from ...patterns import const, op, wildcard
from . import common, conv
from .common import Composite, Lowered
from .requant import acc_bounds, with_rq


def lower(call: Call) -> Lowered:
    w = call.args[1].data  # [1, KH, KW, OC]
    _, kh, kw, oc = w.shape
    params, consts = common.requant_params(call, oc)
    params.update(common.geometry(call, kh, kw))
    params["depth_multiplier"] = oc // params["in_c"]
    bias = call.args[2].data.reshape(oc) if len(call.args) > 2 else np.zeros(oc)
    consts["bias"] = bias.astype(np.int32)  # the plain C path skips padded taps
    consts["weights"] = w.reshape(kh * kw, oc).astype(np.int8)
    # the SIMD paths read padded taps as the zero point, whose x * w the fold cancels
    consts["folded_bias"] = common.folded_bias(call, consts["weights"].astype(np.int64).sum(axis=0),
                                               params["input_offset"])
    off = params["input_offset"]
    with_rq(consts, params, *acc_bounds(consts["bias"], consts["weights"].T, off - 128, off + 127))
    params["sweep"] = sweep(params, "rq" in consts and (params["act_min"], params["act_max"]) == (-128, 127))
    # No overlap declared: the one depthwise kernel's sweeps (a line cache that reads input lines
    # ahead, pixel, column and band paths) have no read/write order model in planner/overlap.py yet.
    return Lowered("mcu_cmsis_dwconv2d_s8", params, consts, model, scratch(params))


# The DSP path's sweeps over the output (MCU_CMSIS_DW_SWEEP_* in mcu_kernels_cmsis_nn.h).
ROWS, COLUMNS, PIXELS, ONE_INPUT = 0, 1, 2, 3


def sweep(p: dict, fast: bool) -> int:
    """How the DSP path goes over the output. With one input channel, pixel by pixel as dot products
    of tap pairs (every output channel reads the same taps; measured cheaper on the M4 than this
    layer lowered as the convolution it is). Pixel by pixel on small maps of 3x3 filters (depth
    multiplier 1, no dilation, `fast`: the fast requantization proven and no clamp inside the int8
    range; under 64 output pixels, where the line sweep's set-up per group of channels and output
    line outweighs its faster blocks). Else by lines: along the longer filter axis when the filter
    is not square (K x 1 filters by columns), else columns when that costs less, counting per
    output line a fixed cost (its line cache, about two pixels' work) and each pixel past the
    line's last block of four at about 1.4 pixels (narrow maps)."""
    if p["in_c"] == 1:
        return ONE_INPUT
    if ((p["k_h"], p["k_w"], p["dil_h"], p["dil_w"], p["depth_multiplier"]) == (3, 3, 1, 1, 1)
            and p["out_h"] * p["out_w"] < 64 and fast):
        return PIXELS
    if p["k_h"] != p["k_w"]:  # the longer filter axis along the lines: its taps at constant offsets
        return COLUMNS if p["k_h"] > p["k_w"] else ROWS

    def cost(lines: int, pos: int) -> float:
        return lines * (2 + pos // 4 * 4 + pos % 4 * 1.4)

    return COLUMNS if cost(p["out_w"], p["out_h"]) < cost(p["out_h"], p["out_w"]) else ROWS


def scratch(p: dict) -> common.KernelSize:
    """The kernel's scratch, from the header's macro for the sweep (lines in their orientation)."""
    if p["sweep"] == PIXELS:
        return common.scratch_size("MCU_CMSIS_DWCONV2D_S8_PIXELS_SCRATCH_BYTES", p["k_h"], p["k_w"], p["out_c"],
                                   p["in_c"])
    if p["sweep"] == ONE_INPUT:
        return common.scratch_size("MCU_CMSIS_DWCONV2D_S8_ONE_SCRATCH_BYTES", p["k_h"], p["k_w"], p["out_w"],
                                   p["stride_w"], p["dil_w"], p["out_c"])
    h, w = ("h", "w") if p["sweep"] == ROWS else ("w", "h")
    return common.scratch_size("MCU_CMSIS_DWCONV2D_S8_LINES_SCRATCH_BYTES", p[f"k_{h}"], p[f"k_{w}"], p[f"dil_{h}"],
                               p[f"out_{w}"], p[f"stride_{w}"], p[f"dil_{w}"], p["in_c"])


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    """The SIMD paths' form: folded_bias + sum over every tap of x * w, padded taps reading the
    zero point (TFLM's bias + sum over the taps inside the input of (x + input_offset) * w, which
    the plain C path computes, is the same integer; the bias is checked against it there)."""
    p, k = kc.params, kc.constants
    oc = p["out_c"]
    cols = common.padded_windows(args[0], p, fill=-p["input_offset"])
    cols = cols[..., np.arange(oc) // p["depth_multiplier"]]
    taps = k["weights"].reshape(p["k_h"], p["k_w"], oc).astype(np.int64)
    acc = (cols * taps).sum(axis=(3, 4)) + k["folded_bias"]
    return common.requantize(acc, kc)


COMPOSITES = (Composite("qnn_depthwise_conv2d", op("depthwise_conv_2d", wildcard("x"), const("weights"),
                                                   const("bias", optional=True), capture="root"), conv.check, lower),)
