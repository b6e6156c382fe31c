"""The proof of every overlap a plan uses: the kernel's read/write order simulated on the planned
offsets, whatever the kernel's declaration (planner/kernel.py's Overlap) claims.

A kernel's order is modelled per build path (plain C, DSP, Helium: each path the C kernel can take)
as a sequence of blocks, each reading a range of input bytes and writing a range of output bytes;
a block is `buffered` when all its reads happen before its first write (the DSP and im2col paths
copy a block's windows to scratch first), otherwise its writes interleave with its reads. A read
range is the hull of the bytes the block reads (windows clipped to the input: padding is never
read), so the model reads at least what the kernel reads: it may refuse a safe plan, never pass an
unsafe one.

A plan with the output at `shift` = offset(out) - offset(in) is safe on a path when no block writes
a byte that a later block (or, unbuffered, the same block) still reads:
    [w_lo + shift, w_hi + shift) does not meet [lowest later read, highest later read).
`check_overlaps` runs this for every step whose output shares bytes with one of its inputs (an
element-wise kernel written exactly over its input 0, or over a view of input 0's bytes that is
another of its inputs, the InPlace rule, needs no model), and refuses
the plan when a path breaks it or the kernel has no model here.

The models follow the C kernels' loops (firmware/kernels/cmsis_nn/); a kernel whose loop order
changes must change its model here and its declaration in its lowering.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mcuforge.errors import IRError


@dataclass(frozen=True)
class Order:
    """One build path's blocks, in execution order (arrays of equal length, bytes)."""

    path: str
    read_lo: np.ndarray
    read_hi: np.ndarray  # read_lo == read_hi: the block reads nothing
    write_lo: np.ndarray
    write_hi: np.ndarray
    buffered: bool


@dataclass(frozen=True)
class ByteOrder:
    """An order whose reads and writes are not byte ranges (the DSP line sweep: four channels of a
    line at a time), byte by byte: the step of each input byte's last read and of each output
    byte's write, a step's reads all done before its writes."""

    path: str
    last_read: np.ndarray  # per input byte (-1: never read)
    written: np.ndarray  # per output byte

    def first_conflict(self, shift: int) -> int | None:
        at = np.arange(self.written.size) + shift
        inside = (at >= 0) & (at < self.last_read.size)
        bad = inside & (self.last_read[np.clip(at, 0, self.last_read.size - 1)] > self.written)
        return int(self.written[bad].min()) if bad.any() else None


def first_conflict(order: Order | ByteOrder, shift: int) -> int | None:
    """The first block whose writes, with the output `shift` bytes above the input, land on an input
    byte still to be read (None: the order is safe at that shift)."""
    if isinstance(order, ByteOrder):
        return order.first_conflict(shift)
    inf = np.iinfo(np.int64).max
    has = order.read_hi > order.read_lo
    lo = np.where(has, order.read_lo, inf)
    hi = np.where(has, order.read_hi, -inf)
    later_lo = np.minimum.accumulate(lo[::-1])[::-1]  # reads of block i and after
    later_hi = np.maximum.accumulate(hi[::-1])[::-1]
    if order.buffered:  # block i's own reads are done before its writes
        later_lo = np.append(later_lo[1:], inf)
        later_hi = np.append(later_hi[1:], -inf)
    wlo, whi = order.write_lo + shift, order.write_hi + shift
    bad = (whi > later_lo) & (wlo < later_hi) & (order.write_hi > order.write_lo)
    hits = np.flatnonzero(bad)
    return int(hits[0]) if hits.size else None


def max_safe_shift(order: Order) -> int:
    """The largest shift at which every write stays below the reads still to come (for tests: a
    declaration must not exceed it on any path)."""
    inf = np.iinfo(np.int64).max
    has = order.read_hi > order.read_lo
    later = np.minimum.accumulate(np.where(has, order.read_lo, inf)[::-1])[::-1]
    if order.buffered:
        later = np.append(later[1:], inf)
    written = order.write_hi > order.write_lo
    gaps = later[written] - order.write_hi[written]
    return int(gaps.min()) if gaps.size else int(inf)


# ---- the kernels' orders -----------------------------------------------------------------------

def _window_hulls(p: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Per output pixel (raster order): the hull [lo, hi) of the input bytes its window reads."""
    oy, ox = np.divmod(np.arange(p["out_h"] * p["out_w"], dtype=np.int64), p["out_w"])
    y0 = oy * p["stride_h"] - p["pad_top"]
    x0 = ox * p["stride_w"] - p["pad_left"]
    y1 = y0 + (p["k_h"] - 1) * p["dil_h"]
    x1 = x0 + (p["k_w"] - 1) * p["dil_w"]
    ylo, yhi = np.maximum(y0, 0), np.minimum(y1, p["in_h"] - 1)
    xlo, xhi = np.maximum(x0, 0), np.minimum(x1, p["in_w"] - 1)
    empty = (ylo > yhi) | (xlo > xhi)
    w, c = p["in_w"], p["in_c"]
    lo = (ylo * w + xlo) * c
    hi = (yhi * w + xhi + 1) * c
    return np.where(empty, 0, lo), np.where(empty, 0, hi)


def _blocks(p: Mapping[str, Any], seq: np.ndarray, starts: np.ndarray, path: str, buffered: bool) -> Order:
    """An order over the output pixels `seq` (in execution order) cut into blocks at `starts`."""
    lo, hi = _window_hulls(p)
    oc = p["out_c"]
    seq, starts = seq.astype(np.int64), starts.astype(np.int64)
    return Order(path, np.minimum.reduceat(lo[seq], starts), np.maximum.reduceat(hi[seq], starts),
                 np.minimum.reduceat(seq, starts) * oc, (np.maximum.reduceat(seq, starts) + 1) * oc, buffered)


def _singles(p: Mapping[str, Any], path: str, buffered: bool) -> Order:
    px = _all(p)
    return _blocks(p, px, px, path, buffered)


def _pairs(p: Mapping[str, Any], path: str, buffered: bool) -> Order:
    """Pixels two at a time; an odd last pixel alone (the DSP paths compute it twice over itself)."""
    px = _all(p)
    return _blocks(p, px, px[::2], path, buffered)


def _all(p: Mapping[str, Any]) -> np.ndarray:
    return np.arange(p["out_h"] * p["out_w"])


def _triples(p: Mapping[str, Any], path: str, buffered: bool) -> Order:
    """Pixels three at a time; a short last block alone (the DSP path computes its last pixel again
    over itself)."""
    px = _all(p)
    return _blocks(p, px, px[::3], path, buffered)


def conv_orders(p: Mapping[str, Any]) -> list[Order]:
    """mcu_cmsis_conv2d_s8: DSP: three pixels' columns (im2col, widened) then their outputs; plain
    and Helium: two pixels' columns then their outputs, or one pixel's column then its outputs."""
    return [_triples(p, "DSP", True), _pairs(p, "plain, Helium pairs", True), _singles(p, "Helium pixels", True)]


def pixel_orders(p: Mapping[str, Any]) -> list[Order]:
    """Pools: one output pixel at a time, its channels written as they are computed."""
    return [_singles(p, "every path", False)]


def conv_1x1_orders(p: Mapping[str, Any]) -> list[Order]:
    """mcu_cmsis_conv2d_1x1_s8: DSP: three pixels widened into scratch, then their outputs; plain
    and Helium pairs: two pixels read again for every output channel written; Helium pixels (and a
    Helium odd last pixel): one. With a chunk (stride 1), plain C copies chunk pixels to scratch,
    then writes their outputs, and Helium does so two pixels at a time."""
    chunk = p.get("chunk", 0)
    if chunk:
        px = _all(p)
        return [_triples(p, "DSP", True), _blocks(p, px, px[::chunk], "plain chunks", True),
                _pairs(p, "Helium pairs copied", True)]
    return [_triples(p, "DSP", True), _pairs(p, "plain, Helium pairs", False), _singles(p, "Helium pixels", False)]


# The DSP path's sweeps of mcu_cmsis_dwconv2d_s8 (MCU_CMSIS_DW_SWEEP_* in mcu_kernels_cmsis_nn.h).
DW_ROWS, DW_COLUMNS, DW_PIXELS, DW_ONE_INPUT = 0, 1, 2, 3


def _everything(p: Mapping[str, Any], path: str) -> Order:
    """One block reading the whole input (every batch) while it writes the whole output: no
    overlap passes."""
    batches = p.get("batches", 1)
    return Order(path, np.array([0]), np.array([batches * p["in_h"] * p["in_w"] * p["in_c"]]), np.array([0]),
                 np.array([batches * p["out_h"] * p["out_w"] * p["out_c"]]), False)


def _lagged(p: Mapping[str, Any], lag: int, path: str) -> Order:
    """Output pixels in raster order, each computed into a ring and written to its place `lag`
    pixels later (before the pixel `lag` on reads its window), the last `lag` at the end
    (mcu_cmsis_dw_lag_out)."""
    lo, hi = _window_hulls(p)
    n, oc = lo.size, p["out_c"]
    tail = np.zeros(lag, np.int64)
    q = np.arange(n + lag) - lag  # the pixel each block writes (< 0: none)
    return Order(path, np.concatenate([lo, tail]), np.concatenate([hi, tail]), np.maximum(q, 0) * oc,
                 np.where(q >= 0, q + 1, 0) * oc, False)


def ring_lag(p: Mapping[str, Any]) -> int | None:
    """The smallest lag at which the lagged pixel order writes the output exactly over the input
    (None: none does)."""
    n = p["out_h"] * p["out_w"]
    if first_conflict(_lagged(p, n, ""), 0) is not None:
        return None
    lo, hi = 1, n
    while lo < hi:  # a longer lag is never less safe
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if first_conflict(_lagged(p, mid, ""), 0) is None else (mid + 1, hi)
    return lo


def _line_sweep(p: Mapping[str, Any]) -> ByteOrder:
    """The DSP line sweep (depth multiplier 1): per group of four channels, output lines (rows, or
    columns) in order, each after the input lines its windows span that its line cache does not
    hold are read (built) into it: the cache's slot r % slots for line r (padding too), as the
    kernel keeps it (mcu_cmsis_dw_line). Only the group's channels are read and written."""
    rows = p["sweep"] == DW_ROWS
    k, stride, dil, pad, lines = ((p["k_h"], p["stride_h"], p["dil_h"], p["pad_top"], p["in_h"]) if rows else
                                  (p["k_w"], p["stride_w"], p["dil_w"], p["pad_left"], p["in_w"]))
    out_lines = p["out_h"] if rows else p["out_w"]
    slots = (k - 1) * dil + 1
    tag, read = [None] * slots, np.full(lines, -1, np.int64)
    for ol in range(out_lines):
        for r in range(ol * stride - pad, ol * stride - pad + k * dil, dil):
            if tag[r % slots] != r:  # lines of padding take slots too
                tag[r % slots] = r
                if 0 <= r < lines:
                    read[r] = ol

    def steps(h: int, w: int, c: int, line_step: np.ndarray) -> np.ndarray:
        y, x = np.divmod(np.arange(h * w), w)
        s = line_step[y if rows else x][:, None]
        return np.where(s >= 0, s + np.arange(c)[None, :] // 4 * out_lines, -1).reshape(-1)

    return ByteOrder("DSP line sweep", steps(p["in_h"], p["in_w"], p["in_c"], read),
                     steps(p["out_h"], p["out_w"], p["out_c"], np.arange(out_lines)))


def mve_column_rows(p: Mapping[str, Any]) -> tuple[int, int] | None:
    """The output rows [oy0, oy1) the Helium column path of mcu_cmsis_dwconv_s8_mve takes (3x3,
    depth multiplier 1, the rows whose windows lie inside vertically when there are many of them),
    None when it is not taken."""
    span = (p["k_h"] - 1) * p["dil_h"]
    oy0 = -(-p["pad_top"] // p["stride_h"])
    top = p["in_h"] - 1 - span + p["pad_top"]
    oy1 = min(top // p["stride_h"] + 1 if top >= 0 else 0, p["out_h"])
    rows = oy1 - oy0
    many = rows >= 16 or (rows >= 8 and p["out_c"] <= 32 and p["out_w"] >= 8)
    if p["in_c"] == 1 or p["depth_multiplier"] != 1 or (p["k_h"], p["k_w"]) != (3, 3) or not many:
        return None
    return oy0, oy1


def mve_band_rows(p: Mapping[str, Any]) -> list[tuple[int, int]]:
    """The Helium column path's bands of output rows [r0, r1), top to bottom: four rows, then
    band_rows at a time, or all in one band when band_rows is 0; [] when that path is not taken."""
    rows = mve_column_rows(p)
    if rows is None:
        return []
    oy0, oy1 = rows
    band_rows = p.get("band_rows", 0)
    if band_rows <= 0:
        return [(oy0, oy1)]
    bands, r, band = [], oy0, 4
    while r < oy1:
        bands.append((r, min(r + band, oy1)))
        r, band = r + band, band_rows
    return bands


def depthwise_orders(p: Mapping[str, Any]) -> list[Order]:
    """mcu_cmsis_dwconv2d_s8. Plain C, the DSP pixel sweep (mcu_cmsis_dw3x3_dsp.h or the plain
    pixels) and the Helium pixel paths: one output pixel at a time, its channels written as they
    are computed. The DSP line sweeps go over the whole map once per group of four channels, and
    the one-input-channel paths (DSP and Helium) are not modelled: no overlap. Helium's column
    path: the rows above pixel by pixel, each band of rows channel by channel over every column
    (one block reading all its windows and writing all its pixels, interleaved), the rows below
    pixel by pixel. With a lag (row-lagged in place): the pixel paths through their ring, Helium's
    column path not taken; the DSP line sweeps byte by byte (_line_sweep). Helium's line path (K x 1
    and 1 x K filters) needs no order here: the kernel takes it only for an output apart from the
    input or, with a lag, exactly over it (each channel's input copied, or its output lines held,
    in scratch until no later line reads the input under them), and checks that at run time."""
    if p["in_c"] == 1:
        return [_everything(p, "one input channel")]
    lag = p.get("lag", 0)
    if lag:  # every path but the DSP line sweeps goes pixel by pixel through the ring
        orders = [_lagged(p, lag, "pixels, lagged")]
        if p["sweep"] != DW_PIXELS:
            orders.append(_line_sweep(p) if p["depth_multiplier"] == 1 else _everything(p, "DSP line sweep"))
        return orders
    orders = [_singles(p, "pixels", False)]
    if p["sweep"] != DW_PIXELS:
        orders.append(_everything(p, "DSP line sweep"))
    bands = mve_band_rows(p)
    if bands:
        w = p["out_w"]
        oy0, oy1 = bands[0][0], bands[-1][1]
        seq = np.arange(p["out_h"] * w)  # raster order; blocks: pixels, bands, pixels
        starts = np.concatenate([np.arange(oy0 * w), [r0 * w for r0, _ in bands], np.arange(oy1 * w, len(seq))])
        orders.append(_blocks(p, seq, starts, "Helium columns", False))
    return orders


def portable_geometry(p: Mapping[str, Any]) -> dict[str, Any]:
    """The window geometry of a portable kernel's parameters (firmware/kernels/c: the pools name
    theirs `channels` and `filter_h/w`, the depthwise its multiplier `ch_mult`)."""
    g = dict(p)
    if "channels" in p:
        g.update(in_c=p["channels"], out_c=p["channels"], k_h=p["filter_h"], k_w=p["filter_w"], dil_h=1, dil_w=1)
    return g


def portable_pixel_orders(p: Mapping[str, Any]) -> list[Order]:
    """The portable int8 conv, depthwise and pools (firmware/kernels/c): for each batch, output
    pixels in raster order, each pixel's channels written as they are computed. Modelled for one
    batch only (a plan overlapping a batched layer is refused: an order reading everything)."""
    g = portable_geometry(p)
    if g.get("batches", 1) != 1:
        return [_everything(g, "batched")]
    return pixel_orders(g)


ORDERS: dict[str, Callable[[Mapping[str, Any]], list[Order]]] = {
    "mcu_conv_2d_s8": portable_pixel_orders,
    "mcu_depthwise_conv_2d_s8": portable_pixel_orders,
    "mcu_average_pool_2d_s8": portable_pixel_orders,
    "mcu_max_pool_2d_s8": portable_pixel_orders,
    "mcu_cmsis_conv2d_s8": conv_orders,
    "mcu_cmsis_conv2d_1x1_s8": conv_1x1_orders,
    "mcu_cmsis_dwconv2d_s8": depthwise_orders,
    "mcu_cmsis_avg_pool2d_s8": pixel_orders,
    "mcu_cmsis_max_pool2d_s8": pixel_orders,
}


def orders(kernel) -> list[Order | ByteOrder]:
    """The modelled orders of a KernelCall (IRError when its kernel has no model)."""
    model = ORDERS.get(kernel.function)
    if model is None and hasattr(kernel, "orders"):  # a fused step (planner/fusion.py) models its own
        return kernel.orders()
    if model is None:
        raise IRError(f"{kernel.function} ({kernel.info.tflite}) has no read/write order model to prove an overlap")
    return model(kernel.params)


# ---- the check ----------------------------------------------------------------------------------

def overlapping_steps(program, offsets: Mapping[str, int]) -> list[tuple[int, str, int]]:
    """(step, input buffer, shift) for every kernel whose output shares bytes with an input."""
    found = []
    for step, b in enumerate(program.bindings):
        if b.kernel.view or b.out not in offsets:
            continue
        out_lo = offsets[b.out]
        out_hi = out_lo + b.kernel.output.nbytes
        for arg in dict.fromkeys(b.args):
            if arg not in offsets:  # a state: outside the arena
                continue
            lo = offsets[arg]
            hi = lo + program.buffers[arg].type.nbytes
            if lo < out_hi and out_lo < hi and hi > lo and out_hi > out_lo:
                found.append((step, arg, out_lo - lo))
    return found


def check_overlaps(program, offsets: Mapping[str, int]) -> list[tuple[int, str, int]]:
    """Refuse (IRError) a plan where a kernel would overwrite input it still reads; returns the
    overlapping steps (step, input, shift)."""
    steps = overlapping_steps(program, offsets)
    for step, arg, shift in steps:
        b = program.bindings[step]
        k = b.kernel
        first = b.args[k.in_place_input] if k.in_place else b.args[0]
        same = arg == first or (offsets.get(first) == offsets[arg] and first in offsets
                                and program.buffers[first].type.nbytes == program.buffers[arg].type.nbytes)
        if k.in_place and shift == 0 and same:
            continue  # element-wise, exactly over its in-place input (or a view of its bytes): each element read, then written
        where = f"step {step} ({b.out} = {k.function}({', '.join(b.args)}), {k.info.tflite})"
        if b.args.count(arg) != 1 or (k.overlap is not None and b.args.index(arg) != k.overlap.input):
            raise IRError(f"{where}: the output overlaps '{arg}', which the kernel does not declare")
        for order in orders(k):
            bad = first_conflict(order, shift)
            if bad is not None:
                raise IRError(f"{where}: with the output {shift:+} B from '{arg}', block {bad} of the "
                              f"{order.path} order writes input bytes a later block still reads")
    return steps
