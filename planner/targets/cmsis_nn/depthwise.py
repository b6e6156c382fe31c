"""DEPTHWISE_CONV_2D on cmsis-nn: mcu_cmsis_dwconv2d_s8, any filter, stride, dilation, padding and
depth multiplier. Weights as [KH*KW][OC] taps; the layer's bias for the plain C path (TFLM's
(x + input_offset) * w, padded taps skipped) and the bias folded with the input zero point for the
DSP and Helium paths, which read padded taps as the zero point (from a line cache or a pad row in
scratch) and multiply raw int8 values. The DSP path's sweep over the output is chosen here by shape;
built for Helium, one input channel takes its path's tables laid out here (ONE_TABLE, mve_in1_tables)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from mcuforge.ir.expr import Call

from ...kernel import KernelCall, Overlap
from ...overlap import DW_COLUMNS, DW_ONE_INPUT, DW_PIXELS, DW_ROWS, first_conflict, mve_band_rows, mve_column_rows
from ...overlap import ring_lag, _line_sweep
from ...patterns import const, op, wildcard
from ...target import DEFAULT_ISA
from . import common, conv
from .common import Composite, Lowered
from .requant import acc_bounds, with_rq


def lower(call: Call, isa: str) -> Lowered:
    return lower_taps(call, call.args[1].data[0], isa)  # [1, KH, KW, OC]


def lower_taps(call: Call, w: np.ndarray, isa: str) -> Lowered:
    """The kernel call of `call` (DEPTHWISE_CONV_2D, or a CONV_2D of one input channel: the same
    arithmetic, conv.lower) with its [KH, KW, OC] weights w."""
    kh, kw, oc = w.shape
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
    fast = "rq" in consts and (params["act_min"], params["act_max"]) == (-128, 127)
    params["sweep"] = sweep(params, fast)
    params["band_rows"] = 0
    params["lag"] = 0
    if isa == "mve" and mve_in1_fits(params):  # Helium's tables laid out here: only its band in scratch
        params["sweep"] = ONE_TABLE
        consts.pop("rq", None)  # the kernel's rq argument carries the tables
        consts["in1_tables"] = mve_in1_tables(params, consts)
    return Lowered("mcu_cmsis_dwconv2d_s8", params, consts, model, scratch(params),
                   overlap=overlap(params, call.type.nbytes, isa))


# The DSP path's sweeps over the output (MCU_CMSIS_DW_SWEEP_* in mcu_kernels_cmsis_nn.h); ONE_TABLE:
# one input channel with the Helium path's tables (the plain C loop on the other builds).
ROWS, COLUMNS, PIXELS, ONE_INPUT, ONE_TABLE = DW_ROWS, DW_COLUMNS, DW_PIXELS, DW_ONE_INPUT, 4


def mve_in1_fits(p: dict) -> bool:
    """Whether Helium's one-input-channel path takes the layer (mcu_cmsis_dw_mve_in1_fits)."""
    k_h, k_w = p["k_h"], p["k_w"]
    return p["in_c"] == 1 and k_h * k_w <= 48 and k_h <= 17 and (k_w - 1) * p["dil_w"] * k_h + k_h <= 256


def mve_in1_tables(p: dict, k: dict[str, np.ndarray]) -> np.ndarray:
    """Helium's one-input-channel tables as int32 words (mcu_cmsis_dw_mve_in1_tables lays out the
    same in scratch): per group of four channels the folded biases, left shifts, multipliers and
    right shifts (four words each; channels past out_c zero), then per channel its weights in the
    window's order, column by column, in span = taps rounded up to sixteen bytes (zero past them)."""
    k_h, k_w, oc = p["k_h"], p["k_w"], p["out_c"]
    groups, span = -(-oc // 4), -(-(k_h * k_w) // 16) * 16
    prm = np.zeros((4, groups * 4), np.int32)
    shift = k["shift"].astype(np.int32)
    prm[:, :oc] = [k["folded_bias"], np.maximum(shift, 0), k["multiplier"], np.minimum(shift, 0)]
    prm = prm.reshape(4, groups, 4).transpose(1, 0, 2)
    wt = np.zeros((groups * 4, span), np.int8)
    wt[:oc, :k_h * k_w] = k["weights"].reshape(k_h, k_w, oc).transpose(2, 1, 0).reshape(oc, k_h * k_w)
    return np.concatenate([prm.reshape(-1), wt.reshape(-1).view("<i4")]).astype(np.int32)
BAND_ROWS = 8  # rows of the Helium column path's bands (after a first one of four) when it overlaps


def overlap(p: dict, out_bytes: int, isa: str = DEFAULT_ISA) -> Overlap | None:
    """How far the output may overlap the input (planner/overlap.py's depthwise_orders): output
    pixels one at a time in raster order, each pixel's channels written while its taps are read,
    on the plain C path, the DSP pixel sweep and Helium's pixel paths. The DSP line sweeps go over
    the whole map per group of four channels, so an overlap needs the pixel sweep (where it has
    the 3x3 pixel kernel: 3x3, depth multiplier 1, no dilation); Helium's
    column path reads the whole map before its last write unless it runs in bands (band_rows: a
    column set-up per band), which then write a band of rows while reading its windows. The one
    input channel paths are not modelled: no overlap."""
    base = common.raster_overlap(p, block=1, buffered=False)
    if base is None or p["in_c"] == 1:
        return None
    lagged = in_place(p, isa)
    if lagged is not None and base.max_shift < 0 and lagged.scratch_bytes - scratch(p).bytes < -base.max_shift:
        free = p["sweep"] == PIXELS and not mve_band_rows(p)  # the raster overlap needs nothing here
        return replace(lagged, without=base) if free else lagged
    needs, costs, cost, shift = [], [], 0, base.max_shift
    pixels = None
    if p["sweep"] != PIXELS:
        if (p["k_h"], p["k_w"], p["dil_h"], p["dil_w"], p["depth_multiplier"]) != (3, 3, 1, 1, 1):
            return None
        needs.append(("sweep", PIXELS))
        extra = pixel_sweep_cost(p)
        cost = max(cost, extra if isa == "dsp" else 0)
        costs.append(f"DSP pixel sweep (about {extra:,} more instructions)")
        pixels = scratch({**p, "sweep": PIXELS})
    if mve_band_rows(p):
        banded = {**p, "band_rows": BAND_ROWS}
        shift = min(shift, mve_band_shift(banded))
        extra = band_cost(banded)
        cost = max(cost, extra if isa == "mve" else 0)
        needs.append(("band_rows", BAND_ROWS))
        costs.append(f"Helium column path in bands of {BAND_ROWS} rows (about {extra:,} more instructions)")
    if shift <= -out_bytes:
        return None
    return Overlap(0, shift, needs=tuple(needs), cost="; ".join(costs), cost_instructions=cost,
                   scratch_bytes=pixels.bytes if pixels else None, scratch_check=pixels.expr if pixels else "")


def in_place(p: dict, isa: str = DEFAULT_ISA) -> Overlap | None:
    """The output exactly over the input (depth multiplier 1), row-lagged: the pixel paths (plain C,
    the DSP pixel sweep, Helium's pixels, which then take the column path's rows too) keep the last
    `lag` output pixels in a ring in scratch (lag: ring_lag, (pad_top * in_w + pad_left + 1 pixels
    for a stride-1 same-padded layer); the DSP line sweeps need nothing: a group of four channels
    reads each input line into its line cache before it writes the output line over it."""
    if p["depth_multiplier"] != 1 or p["in_c"] == 1:
        return None
    lag = ring_lag(p)
    if lag is None or (p["sweep"] != PIXELS and _line_sweep(p).first_conflict(0) is not None):
        return None
    lagged = {**p, "lag": lag}
    cost = lag_cost(lagged, isa)
    size = scratch(lagged)
    return Overlap(0, 0, min_shift=0, needs=(("lag", lag),), cost=f"a ring of {lag} output pixels (about {cost:,} more "
                   f"instructions{'; Helium: the pixel path for the column rows' if mve_column_rows(p) else ''})",
                   cost_instructions=cost, scratch_bytes=size.bytes, scratch_check=size.expr)


def lag_cost(p: dict, isa: str = DEFAULT_ISA) -> int:
    """Instructions the ring adds, an upper estimate over the paths: each pixel copied once (a
    call and its words, LAG_PIXEL + out_c / 4) and, on Helium, the column path's rows
    pixel by pixel (MVE_PIXEL_MAC per multiply-accumulate more), on the paths of `isa` (the C is
    built for that ISA's core; it stays exact, only slower, on another)."""
    if isa == "dsp" and p["sweep"] != PIXELS:
        return 0  # the DSP line sweeps read each input line into their cache first: no ring
    pixels = p["out_h"] * p["out_w"]
    copies = pixels * (LAG_PIXEL + p["out_c"] // 4)
    rows = mve_column_rows(p) if isa == "mve" else None
    mve = 0 if rows is None else (rows[1] - rows[0]) * p["out_w"] * p["out_c"] * p["k_h"] * p["k_w"] * MVE_PIXEL_MAC
    return int(copies + mve)


LAG_PIXEL, MVE_PIXEL_MAC = 20, 0.13


def pixel_sweep_cost(p: dict) -> int:
    """Instructions the DSP pixel sweep adds over the line sweep, an upper estimate: PIXEL_SWEEP_MAC
    per multiply-accumulate and PIXEL_SWEEP_PIXEL per output pixel (its set-up: nine tap pointers,
    border checks). Measured on QEMU mps2-an386: VWW's 48x48x8 layer +103 per pixel, its 24x24x32
    layer +38, its 24x24x16 stride-2 layer and KWS's 25x5x64 layers cheaper with pixels (-46, -67)."""
    return int(PIXEL_SWEEP_MAC * p["out_h"] * p["out_w"] * p["out_c"] * p["k_h"] * p["k_w"]
               + PIXEL_SWEEP_PIXEL * p["out_h"] * p["out_w"])


PIXEL_SWEEP_MAC, PIXEL_SWEEP_PIXEL = 0.15, 100


def band_cost(p: dict) -> int:
    """Instructions the bands add on Helium, roughly: per extra band and channel, the channel's
    set-up (~40), each inner column's call (~30) and each edge column's weights (~250): measured
    on KWS's and VWW's depthwise layers (QEMU mps3-an547) within about 10%."""
    edges = sum(1 for ox in range(p["out_w"]) if not 0 <= ox * p["stride_w"] - p["pad_left"] <= p["in_w"] - 3)
    per_band = p["out_c"] * (40 + 30 * (p["out_w"] - edges) + 250 * edges)
    return (len(mve_band_rows(p)) - 1) * per_band


def mve_band_shift(p: dict) -> int:
    """The Helium column path's limit: a band's writes reach its last row, while the input rows
    from its first window row on are still to be read (its own and those of the rows after)."""
    row_in, row_out = p["in_w"] * p["in_c"], p["out_w"] * p["out_c"]
    return min(max(0, r0 * p["stride_h"] - p["pad_top"]) * row_in - r1 * row_out for r0, r1 in mve_band_rows(p))


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
    """The kernel's scratch, from the header's macro for the sweep (lines in their orientation);
    with a lag, the larger of that and a pixel path's ring after its own bytes."""
    if p.get("lag", 0):
        sweep = scratch({**p, "lag": 0})
        own = sweep.bytes if p["sweep"] == PIXELS else 8 * p["k_h"] * p["k_w"] + p["in_c"]
        ring = common.scratch_size("MCU_CMSIS_DWCONV2D_S8_RING_SCRATCH_BYTES", own, p["lag"], p["out_c"])
        big, small = (sweep, ring) if sweep.bytes >= ring.bytes else (ring, sweep)
        return common.KernelSize(big.bytes, f"({big.expr} > {small.expr} ? {big.expr} : {small.expr})")
    if p["sweep"] == PIXELS:
        return common.scratch_size("MCU_CMSIS_DWCONV2D_S8_PIXELS_SCRATCH_BYTES", p["k_h"], p["k_w"], p["out_c"],
                                   p["in_c"])
    if p["sweep"] == ONE_TABLE:
        return common.scratch_size("MCU_CMSIS_DWCONV2D_S8_BAND_SCRATCH_BYTES", p["k_h"], p["k_w"], p["out_w"],
                                   p["stride_w"], p["dil_w"])
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
                                                   const("bias", optional=True), capture="root"), conv.check, lower,
                        by_isa=True),)


def map3_stride(p: dict, has_rq: bool) -> int:
    """The stride of a 3x3 output map the pixel sweep's map path takes (mcu_cmsis_dw3x3_map3, with
    the fast requantization and the whole int8 range: stride 1 over 3x3 padded one line on each
    side, stride 2 over 6x6 padded one line after; whole groups of four channels), else 0. The
    kernel also needs the output clear of the input or exactly over it (checked at run time)."""
    s = p["stride_h"]
    fast = has_rq and (p["act_min"], p["act_max"]) == (-128, 127)
    shape = (p["in_h"], p["in_w"], p["out_h"], p["out_w"], p["stride_w"], p["pad_top"], p["pad_left"])
    ok = fast and s in (1, 2) and shape == (3 * s, 3 * s, 3, 3, s, 2 - s, 2 - s) and p["out_c"] % 4 == 0
    return s if ok else 0


def relu_path(p: dict) -> str:
    """The requantization of the pair routines (1x1, im2col: mcu_pair_relu) and of the depthwise pair
    layout, 3x3 output maps, group sweep bands and fast 3x3 pixels: without the negative accumulators'
    rounding correction where the output offset is at or below the clamp's minimum (PAIR_RELU), else
    with it (PAIR_SIGNED)."""
    return "PAIR_RELU" if p["output_offset"] <= p["act_min"] else "PAIR_SIGNED"


def dsp_paths(p: dict, has_rq: bool) -> frozenset[str]:
    """The DSP paths of mcu_cmsis_dwconv_dsp a layer takes (MCU_PATH_DW_* in mcu_cmsis_paths.h),
    as the dispatcher chooses them from the final parameters (after the planner's overlaps set
    the sweep): the pixel sweep's 3x3 path, one input channel, the 3x3 pair layout (it always fits
    the lane pairs' scratch for an undilated 3x3 filter; not proven for lines dilated across, so
    the lane pairs stay too), the 3x3 lane pairs, any filter with the fast requantization. The
    general line sweep and the plain pixel loop are always built."""
    s = p["sweep"]
    if s == ONE_TABLE:
        return frozenset()
    if s == ONE_INPUT:
        return frozenset({"DW_IN1"})
    if s == PIXELS:
        k3 = (p["k_h"], p["k_w"], p["dil_h"], p["dil_w"], p["depth_multiplier"]) == (3, 3, 1, 1, 1)
        if not k3:
            return frozenset()
        stride = map3_stride(p, has_rq)
        fast = has_rq and (p["act_min"], p["act_max"]) == (-128, 127)
        # the fast pixel's, the group sweep's band routine's and the maps' requantization, by the clamp
        rq = {relu_path(p)} if fast else set()
        return frozenset({"DW_PIX3", *rq, *([{1: "DW_MAP3", 2: "DW_MAP3_S2"}[stride]] if stride else [])})
    a, b = ("h", "w") if s == ROWS else ("w", "h")  # lines along a, positions along b
    k_l, k_p, stride_p, dil_l, dil_p = p[f"k_{a}"], p[f"k_{b}"], p[f"stride_{b}"], p[f"dil_{a}"], p[f"dil_{b}"]
    fast = has_rq and (p["act_min"], p["act_max"]) == (-128, 127)
    k3 = k_l == 3 and k_p == 3 and dil_p == 1
    paths = set()
    if k3 and fast and stride_p <= 2 and p["depth_multiplier"] == 1 and p[f"out_{b}"] >= 4:
        paths |= {f"DW_PAIRS_S{stride_p}", relu_path(p)}
        if dil_l == 1:
            return frozenset(paths)
    if k3 and fast and stride_p <= 2:
        paths.add(f"DW_K3S{stride_p}")
    elif fast:
        paths.add("DW_ANY_FAST")
    return frozenset(paths)


def mve_paths(p: dict) -> frozenset[str]:
    """The Helium paths of mcu_cmsis_dwconv_s8_mve a layer may take (MCU_PATH_MVE_DW_* in
    mcu_cmsis_paths.h): one input channel where its tables fit, else K x 1 / 1 x K lines (the
    kernel checks the rest at run time), 3x3 columns with depth multiplier 1 and no ring (where
    enough rows: checked at run time), depth multipliers of four, the gathered others."""
    if mve_in1_fits(p):
        return frozenset({"MVE_DW_IN1"})
    paths = set()
    if p["k_h"] == 1 or p["k_w"] == 1:
        paths.add("MVE_DW_LINES")
    mult = p["depth_multiplier"]
    if mult == 1 and (p["k_h"], p["k_w"]) == (3, 3) and p["lag"] == 0:
        paths.add("MVE_DW_COLUMNS")
    if mult != 1:
        paths.add("MVE_DW_M4" if mult % 4 == 0 else "MVE_DW_GATHER")
    return frozenset(paths)
