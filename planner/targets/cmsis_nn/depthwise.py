"""DEPTHWISE_CONV_2D on cmsis-nn: mcu_cmsis_dwconv2d_3x3_s8 (3x3, depth multiplier 1, no dilation:
the usual MobileNet / DS-CNN layer) and mcu_cmsis_dwconv2d_s8 (the rest). Weights as [KH*KW][OC]
taps; the layer's bias is kept (not folded) and the kernels compute TFLM's (x + input_offset) * w:
their DSP path adds the offset for free (SXTAB16) and border pixels skip padded taps without a padded
copy of the window in RAM."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call

from ...kernel import KernelCall
from ...patterns import const, op, wildcard
from . import common, conv
from .common import Composite, Lowered
from .requant import acc_bounds, with_rq


def uses_3x3(call: Call) -> bool:
    """3x3 filters, depth multiplier 1, no dilation: the fast path (any stride and padding, border
    pixels take the general tap loop)."""
    _, kh, kw, oc = call.args[1].type.shape
    in_c = call.args[0].type.shape[3]
    return (kh, kw) == (3, 3) and oc == in_c and tuple(call.attrs.get("dilation", (1, 1))) == (1, 1)


def lower(call: Call) -> Lowered:
    w = call.args[1].data  # [1, KH, KW, OC]
    _, kh, kw, oc = w.shape
    params, consts = common.requant_params(call, oc)
    params.update(common.geometry(call, kh, kw))
    params["depth_multiplier"] = oc // params["in_c"]
    bias = call.args[2].data.reshape(oc) if len(call.args) > 2 else np.zeros(oc)
    consts["bias"] = bias.astype(np.int32)  # not folded: border pixels skip their padded taps
    consts["weights"] = w.reshape(kh * kw, oc).astype(np.int8)
    off = params["input_offset"]
    with_rq(consts, params, *acc_bounds(consts["bias"], consts["weights"].T, off - 128, off + 127))
    # Overlap: output pixels one at a time in raster order (mcu_cmsis_dw_pixel, the DSP and plain
    # 3x3 pixels), each pixel's channels written while its taps are read; none when the Helium
    # column path runs (one channel over every row first: it reads the whole input before the end).
    overlap = None if mve_columns(params) else common.raster_overlap(params, block=1, buffered=False)
    if uses_3x3(call):
        return Lowered("mcu_cmsis_dwconv2d_3x3_s8", params, consts, model,
                       common.scratch_size("MCU_CMSIS_DWCONV2D_3X3_S8_SCRATCH_BYTES", oc), overlap=overlap)
    return Lowered("mcu_cmsis_dwconv2d_s8", params, consts, model, overlap=overlap)


def mve_columns(p: dict) -> bool:
    """Whether the Helium build takes the column path (mcu_cmsis_dwconv_s8_mve's own test): depth
    multiplier 1, a 3x3 filter and at least eight output rows whose windows are inside vertically."""
    span = (p["k_h"] - 1) * p["dil_h"]
    oy0 = -(-p["pad_top"] // p["stride_h"])
    top = p["in_h"] - 1 - span + p["pad_top"]
    oy1 = min(top // p["stride_h"] + 1 if top >= 0 else 0, p["out_h"])
    return p["depth_multiplier"] == 1 and (p["k_h"], p["k_w"]) == (3, 3) and oy1 - oy0 >= 8


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    """TFLM's form: bias + sum over the taps inside the input of (x + input_offset) * w (padded
    taps, filled with the zero point here, add 0)."""
    p, k = kc.params, kc.constants
    oc = p["out_c"]
    cols = common.padded_windows(args[0], p, fill=-p["input_offset"]) + p["input_offset"]
    cols = cols[..., np.arange(oc) // p["depth_multiplier"]]
    taps = k["weights"].reshape(p["k_h"], p["k_w"], oc).astype(np.int64)
    acc = (cols * taps).sum(axis=(3, 4)) + k["bias"]
    return common.requantize(acc, kc)


COMPOSITES = (Composite("qnn_depthwise_conv2d", op("depthwise_conv_2d", wildcard("x"), const("weights"),
                                                   const("bias", optional=True), capture="root"), conv.check, lower),)
