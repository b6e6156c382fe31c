"""CONV_2D on cmsis-nn: mcu_cmsis_conv2d_1x1_s8 (1x1 filters read input pixels in place) and
mcu_cmsis_conv2d_s8 (im2col), both over OHWI weight rows in the pair layout (common.pair_rows:
output channels 2j and 2j + 1 byte interleaved, what SXTB16 / SXTB16 ROR #8 and Helium's VLD2 split;
with `pair_offset` the layout common.pair_layout picks (built for the DSP ISA: the offset one,
channel 2j + 1's weights stored less 1 where channel 2j's are negative, or for small K the wide one, int16 words, which the DSP paths'
inner loop exploits)) with the bias folded with the input zero
point: acc = sum(x * w) + bias', bias' = bias + input_offset * sum(w). Exact integer algebra once
padding is filled with the input zero point (a padded tap then adds zp * w, which the fold cancels),
so the inner loops multiply raw int8 values.
Built for Helium, a convolution of one input channel (not 1x1) is the depthwise convolution it equals
(depth multiplier = output channels): depthwise.lower_taps, the one-input-channel path with its tables
laid out here (KWS's first layer 201,531 -> 102,562 M55 instructions, the arena unchanged).
The DSP paths widen three pixels (or im2col columns) into scratch; the fast requantization record
`rq` is added where it is proven."""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.expr import Call, Expr
from mcuforge.ir.ops import _common as c

from ...kernel import KernelCall, Overlap
from ...patterns import const, op, wildcard
from ...target import DEFAULT_ISA
from . import common, fully_connected
from .common import Composite, Lowered
from .requant import acc_bounds, with_rq


def check(caps: dict[str, Expr]) -> str | None:
    """int8 activations, symmetric int8 weights, batch 1."""
    root = caps["root"]
    problem = common.int8_io(caps) or common.symmetric_int8_weights(caps)
    if problem:
        return problem
    if root.args[0].type.shape[0] != 1:
        return "batch > 1"
    return None if root.attrs.get("activation") in c.QUANTIZABLE_ACTIVATIONS else "activation"


def uses_1x1(call: Call) -> bool:
    """1x1 filters read input pixels in place, no im2col (any stride: a 1x1 window is never padded)."""
    _, kh, kw, _ = call.args[1].type.shape
    return (kh, kw) == (1, 1)


def single_window(call: Call) -> bool:
    """One output pixel whose window is the whole input, no padding, no dilation: the convolution is
    a fully connected layer over the flattened input (NHWC order is the OHWI weight rows' order)."""
    _, in_h, in_w, _ = call.args[0].type.shape
    _, kh, kw, _ = call.args[1].type.shape
    g = common.geometry(call, kh, kw)
    return (g["out_h"], g["out_w"], kh, kw, g["pad_top"], g["pad_left"]) == (1, 1, in_h, in_w, 0, 0)


def lower(call: Call, isa: str) -> Lowered:
    w = call.args[1].data
    oc, kh, kw, ic = w.shape
    if single_window(call):  # e.g. a classifier head after a global pool: no im2col, no widened pixels
        return fully_connected.lower_matrix(call, w.reshape(oc, kh * kw * ic))
    if isa == "mve" and ic == 1 and not uses_1x1(call):  # one input channel: Helium's depthwise in1 path
        from . import depthwise  # (depthwise imports this module)
        low = depthwise.lower_taps(call, w[..., 0].transpose(1, 2, 0), isa)
        if low.params["sweep"] == depthwise.ONE_TABLE:
            return low
    params, consts = common.requant_params(call, oc)
    params.update(common.geometry(call, kh, kw))
    w2d = w.reshape(oc, kh * kw * ic)
    consts["bias"] = common.folded_bias(call, w2d.astype(np.int64).sum(axis=1), params["input_offset"])
    params["chunk"] = 0
    lo, hi = acc_bounds(consts["bias"], w2d, -128, 127)
    with_rq(consts, params, lo, hi)
    layout = common.pair_layout(w2d, isa)
    if layout == common.OFFSET and not common.offset_fits(consts.get("rq"), lo, hi):
        layout = common.PLAIN
    params["pair_offset"] = layout
    consts["weights"] = common.pair_rows(w2d.astype(np.int8), layout)
    if layout == common.WIDE and "rq" in consts:
        consts["rq"] = wide_records(consts["rq"], consts["bias"])
    if uses_1x1(call):  # the DSP path widens three input pixels in scratch
        # Overlap: output pixels in raster order, two at a time (plain C, Helium pairs: both
        # pixels read again for every output channel written), the DSP path's three buffered in
        # scratch first (planner/overlap.py's conv_1x1_orders).
        return Lowered("mcu_cmsis_conv2d_1x1_s8", params, consts, model,
                       common.scratch_size("MCU_CMSIS_CONV2D_1X1_S8_SCRATCH_BYTES", ic), overlap=overlap_1x1(params, isa))
    # Overlap: on every path up to three output pixels' windows are copied to scratch (im2col)
    # before their outputs are written, in raster order (the buffered form does not depend on the
    # block size).
    return Lowered("mcu_cmsis_conv2d_s8", params, consts, model,
                   common.scratch_size("MCU_CMSIS_CONV2D_S8_SCRATCH_BYTES", kh * kw * ic, ic),
                   overlap=common.raster_overlap(params, block=3, buffered=True))


def wide_records(rq: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """The wide layout's `rq` (mcu_pair_rq in mcu_cmsis_pair_dsp.h): per pair of channels 2j, 2j + 1
    their biases doubled (wrapping in int32, as the LSL they spare), then their records {m, add,
    right}, so that mcu_pair_rows3_asm_wide reads a pair's from one pointer; an odd last channel's
    pair padded with zeros."""
    pairs = (bias.size + 1) // 2
    doubled = np.zeros(2 * pairs, np.int64)
    doubled[: bias.size] = 2 * bias.astype(np.int64)
    records = np.zeros(6 * pairs, np.int64)
    records[: rq.size] = rq
    rows = np.concatenate([doubled.reshape(pairs, 2), records.reshape(pairs, 6)], axis=1)
    return quant.wrap_int32(rows).astype(np.int32).reshape(-1)


def channel_records(rq: np.ndarray, channels: int, layout: int) -> np.ndarray:
    """The [channels][3] records {m, add, right} of a convolution's `rq` in the pair layout `layout`."""
    if layout == common.WIDE:
        rq = rq.reshape(-1, 8)[:, 2:]
    return rq.reshape(-1, 3)[:channels]


CHUNK = 6  # pixels the 1x1 kernel's plain C path copies to scratch at a time (its DSP scratch holds six)


def overlap_1x1(p: dict, isa: str = DEFAULT_ISA) -> Overlap | None:
    """Unbuffered pairs (plain C, Helium) keep the output two pixels below the input; with stride 1,
    input pixels copied to scratch before their outputs are written (plain C: `chunk` at a time and
    a call each; Helium: every pair, inside one call; both buffered, like the DSP path's three
    widened pixels) let it lie as high as the input (planner/overlap.py's conv_1x1_orders)."""
    free = common.raster_overlap(p, block=2, buffered=False)
    buffered = common.raster_overlap(p, block=CHUNK, buffered=True)
    if (p["stride_h"], p["stride_w"]) != (1, 1) or buffered is None or (free and free.max_shift >= buffered.max_shift):
        return free
    cost = chunk_cost(p, isa)
    return Overlap(0, buffered.max_shift, needs=(("chunk", CHUNK),), without=free, cost_instructions=cost,
                   cost=f"plain C: {CHUNK} input pixels at a time copied to scratch, Helium: two (about {cost:,} more "
                   f"instructions)")


def chunk_cost(p: dict, isa: str) -> int:
    """The instructions the copies of overlap_1x1 add on `isa` (the DSP path widens its three pixels
    into scratch anyway: none)."""
    pixels, in_c = p["out_h"] * p["out_w"], p["in_c"]
    if isa == "dsp":
        return 0
    if isa == "mve":  # per pair: a tail-predicated copy of 2 * in_c bytes, 16 a step
        return -(-pixels // 2) * (MVE_PAIR_COPY + 2 * -(-2 * in_c // 16))
    # plain C (KWS on mps2-an385: +6,040 instructions for a 25x5x64 layer's 21 chunks and its
    # 8,000 B copied): a call and a memcpy per chunk
    return -(-pixels // CHUNK) * PLAIN_CHUNK_CALL + pixels * in_c // 4


PLAIN_CHUNK_CALL = 200
# the copy's set-up and the pointer choice per pair (KWS on mps3-an547: +1,125 instructions for a
# 25x5x64 layer's 63 pairs, 18 each)
MVE_PAIR_COPY = 2


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p, k = kc.params, kc.constants
    oh, ow, oc = p["out_h"], p["out_w"], p["out_c"]
    weights = common.unpair_rows(k["weights"], oc, p["k_h"] * p["k_w"] * p["in_c"], p["pair_offset"])
    cols = common.padded_windows(args[0], p, fill=-p["input_offset"]).reshape(oh * ow, -1)
    acc = c.exact_matmul(cols, weights.T) + k["bias"]
    return common.requantize(acc, kc).reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_conv2d", op("conv_2d", wildcard("x"), const("weights"), const("bias", optional=True),
                                         capture="root"), check, lower, by_isa=True),)
