"""DEPTHWISE_CONV_2D on cmsis-nn: mcu_cmsis_dwconv2d_3x3_s8 (3x3, depth multiplier 1, no dilation:
the usual MobileNet / DS-CNN layer) and mcu_cmsis_dwconv2d_s8 (the rest). Weights as [KH*KW][OC]
taps; the layer's bias is kept (not folded) and the kernels compute TFLM's (x + input_offset) * w:
their DSP path adds the offset for free (SXTAB16) and border pixels skip padded taps without a padded
copy of the window in RAM."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call

from ...kernel import KernelCall, Overlap
from ...overlap import mve_band_rows
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
    # 3x3 pixels), each pixel's channels written while its taps are read. Helium's column path
    # reads the whole map before its last write unless it runs in bands (band_rows: costs a column
    # set-up per band), which then write a band of rows while reading its windows (mve_band_shift).
    params["band_rows"] = 0
    overlap = common.raster_overlap(params, block=1, buffered=False)
    if overlap is not None and mve_band_rows(params):
        shift = min(overlap.max_shift, mve_band_shift({**params, "band_rows": BAND_ROWS}))
        extra = band_cost({**params, "band_rows": BAND_ROWS})
        overlap = Overlap(0, shift, needs=(("band_rows", BAND_ROWS),), cost_instructions=extra,
                          cost=f"Helium column path in bands of {BAND_ROWS} rows (about {extra:,} more instructions)"
                          ) if shift > -call.type.nbytes else None
    if uses_3x3(call):
        return Lowered("mcu_cmsis_dwconv2d_3x3_s8", params, consts, model,
                       common.scratch_size("MCU_CMSIS_DWCONV2D_3X3_S8_SCRATCH_BYTES", oc), overlap=overlap)
    return Lowered("mcu_cmsis_dwconv2d_s8", params, consts, model, overlap=overlap)


BAND_ROWS = 8  # rows of the Helium column path's bands (after a first one of four) when it overlaps


def band_cost(p: dict) -> int:
    """Instructions the bands add on Helium, roughly: per extra band and channel, the channel's
    set-up (~40), each inner column's call (~30) and each edge column's weights (~250): measured
    on KWS's and VWW's depthwise layers (QEMU mps3-an547) within about 10%."""
    edges = sum(1 for ox in range(p["out_w"]) if not 0 <= ox * p["stride_w"] - p["pad_left"] <= p["in_w"] - 3)
    per_band = p["out_c"] * (40 + 30 * (p["out_w"] - edges) + 250 * edges)
    return (len(mve_band_rows(p)) - 1) * per_band


def mve_band_shift(p: dict) -> int | None:
    """The Helium column path's limit: a band's writes reach its last row, while the input rows
    from its first window row on are still to be read (its own and those of the rows after)."""
    bands = mve_band_rows(p)  # the order planner/overlap.py checks
    if not bands:
        return None
    row_in, row_out = p["in_w"] * p["in_c"], p["out_w"] * p["out_c"]
    return min(max(0, r0 * p["stride_h"] - p["pad_top"]) * row_in - r1 * row_out for r0, r1 in bands)


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
