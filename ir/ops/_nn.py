"""Shared pieces of the neural-network op entries (depthwise convolution, pooling, fully connected,
transpose convolution, mean): sliding-window padding and taps, and the details behind their weight
and quantization support checks. Not an op module itself (the leading underscore keeps it out
of the registry scan)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np
from mcuforge.ir.registry import OpView
from mcuforge.ir.types import TensorType

from . import _common as c


@dataclass(frozen=True)
class Padded:
    """An input padded for the taps that read at least one real element: `x` [N,H',W',C] and, per
    axis, the first and last such tap and the index in `x` that tap 0 reads for output 0 (which may
    lie outside `x` when the leading taps read padding only)."""
    x: np.ndarray
    rows: tuple[int, int, int]  # first tap, last tap, base index
    cols: tuple[int, int, int]


def _axis(size: int, k: int, stride: int, dil: int, out: int, fill_before: int) -> tuple[int, int, int, int]:
    """For one axis: the first and last tap reading a real element, and the padding those taps need
    before and after the input. Taps reading padding only are left out, so a window of 2^31 taps
    over a small input costs what the input costs."""
    lo = max(0, -(-(fill_before - (out - 1) * stride) // dil))
    hi = min(k - 1, (fill_before + size - 1) // dil)
    if lo > hi:
        return lo, hi, 0, 0
    before = max(0, fill_before - lo * dil)
    after = max(0, hi * dil + (out - 1) * stride - fill_before - (size - 1))
    return lo, hi, before, after


def padded(x: np.ndarray, k: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int],
           out_hw: tuple[int, int], fill: int = 0) -> Padded:
    """x [N,H,W,C] padded with `fill` the way TFLite places SAME padding (before: total // 2), as
    far as the taps that read real elements need."""
    _, h, w, _ = x.shape
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = k, stride, dilation, out_hw
    pt = c.pad_before(sh, dh, h, kh, oh)
    pl = c.pad_before(sw, dw, w, kw, ow)
    i0, i1, bt, bb = _axis(h, kh, sh, dh, oh, pt)
    j0, j1, bl, br = _axis(w, kw, sw, dw, ow, pl)
    xp = np.pad(x, ((0, 0), (bt, bb), (bl, br), (0, 0)), constant_values=fill)
    return Padded(xp, (i0, i1, bt - pt), (j0, j1, bl - pl))


def taps(xp: Padded, k: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int],
         out_hw: tuple[int, int]) -> Iterator[tuple[int, int, np.ndarray]]:
    """For each filter tap (i, j) that reads a real element: the [N,OH,OW,C] view of the padded
    input it reads in every output window (strided slices, no copies). Taps reading padding only
    are skipped: they add the fill, which every caller's fill makes neutral."""
    (sh, sw), (dh, dw), (oh, ow) = stride, dilation, out_hw
    (i0, i1, by), (j0, j1, bx) = xp.rows, xp.cols
    for i in range(i0, i1 + 1):
        for j in range(j0, j1 + 1):
            y0, x0 = i * dh + by, j * dw + bx
            yield i, j, xp.x[:, y0:y0 + (oh - 1) * sh + 1:sh, x0:x0 + (ow - 1) * sw + 1:sw, :]


def weight_quant(v: OpView, axis: int, channels: int) -> str | None:
    """The detail of what is wrong with int8 weights quantized per tensor or per channel on `axis`
    with `channels` scales (None when fine). Zero points must all be 0."""
    w = v.args[1]
    if w.dtype != "int8":
        return f"weights are {w.dtype}"
    if w.quant is None:
        return "weights are not quantized"
    q = w.quant
    if q.per_channel and (q.axis != axis or len(q.scale) != channels):
        return f"{len(q.scale)} scales on axis {q.axis}, expected 1 or {channels} on axis {axis}"
    if any(z != 0 for z in q.zero_point):
        return "a weight zero point is not 0"
    return None


def positive(*values: int) -> bool:
    return all(int(x) >= 1 for x in values)


def same_quant_within(a: TensorType, b: TensorType, tol: float = 1e-6) -> bool:
    """TFLM's pooling rule: |scale_in - scale_out| <= tol (as doubles) and equal zero points."""
    if a.quant is None or b.quant is None:
        return False
    return abs(float(a.quant.s) - float(b.quant.s)) <= tol and a.quant.zp == b.quant.zp
