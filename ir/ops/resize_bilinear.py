"""RESIZE_BILINEAR on int8: NHWC bilinear resize to a constant (height, width), TFLM's integer path.

TFLM (resize_bilinear.cc, reference_ops::ResizeBilinearInteger) works in 10-bit fixed point, with no
float and no requantization (the raw int8 values are interpolated; the quantization is not looked
at). Per axis: scale = ((1 << 10) * in + out / 2) / out, or with align_corners and out > 1
((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1) (C integer division); output index i maps to
p = i * scale, or i * scale + scale / 2 - 512 under half_pixel_centers; the taps are
lo = max(p / 1024, 0) and hi = min((p + 1023) / 1024, in - 1) (C division, truncating) with
weights 1024 - (p - 1024 lo) and p - 1024 lo. The four weighted taps are summed in 20-bit fixed
point and rounded half away from zero (double rounding build: (v +- 2^19) / 2^20, truncating).
align_corners with half_pixel_centers is refused, as TFLM refuses it."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from .resize_nearest_neighbor import infer, parse, rank4, size_vector

ONE = 1 << 10


def _cdiv(a, b):
    """C integer division (truncating toward zero), element-wise."""
    a = np.asarray(a, dtype=np.int64)
    q = np.abs(a) // b
    return np.where(a < 0, -q, q)


def axis_taps(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool):
    """Per output index: (lo, hi, weight of hi) as TFLM's ComputeInterpolationValuesInteger."""
    if align_corners and out_size > 1:
        scale = (ONE * (in_size - 1) + (out_size - 1) // 2) // (out_size - 1)
    else:
        scale = (ONE * in_size + out_size // 2) // out_size
    i = np.arange(out_size, dtype=np.int64)
    pos = i * scale + scale // 2 - (1 << 9) if half_pixel_centers else i * scale
    lo = np.maximum(_cdiv(pos, ONE), 0)
    hi = np.minimum(_cdiv(pos + ONE - 1, ONE), in_size - 1)
    return lo, hi, pos - ONE * lo


def reference(args, v: OpView):
    x = args[0].astype(np.int64)
    _, h, w, _ = x.shape
    (oh, ow), ac, hp = v.attrs["size"], v.attrs["align_corners"], v.attrs["half_pixel_centers"]
    y0, y1, wy = (a[:, None, None] for a in axis_taps(h, oh, ac, hp))
    x0, x1, wx = (a[None, :, None] for a in axis_taps(w, ow, ac, hp))
    rows0, rows1 = x[:, y0[:, 0, 0]], x[:, y1[:, 0, 0]]
    v20 = (rows0[:, :, x0[0, :, 0]] * (ONE - wy) * (ONE - wx) + rows1[:, :, x0[0, :, 0]] * wy * (ONE - wx)
           + rows0[:, :, x1[0, :, 0]] * (ONE - wy) * wx + rows1[:, :, x1[0, :, 0]] * wy * wx)
    out = _cdiv(v20 + np.where(v20 > 0, 1 << 19, -(1 << 19)), 1 << 20)
    return (((out + 128) & 0xFF) - 128).astype(np.int8)  # static_cast<int8_t>


# ---- support checks ------------------------------------------------------------------------------

def int8_data(v: OpView) -> str | None:
    """Input and output must be int8."""
    bad = {t.dtype for t in (v.args[0], v.out) if t.dtype != "int8"}
    return None if not bad else f"got {', '.join(sorted(bad))}"


def corner_mode(v: OpView) -> str | None:
    """align_corners and half_pixel_centers must not both be set (TFLM refuses it)."""
    return "both set" if v.attrs["align_corners"] and v.attrs["half_pixel_centers"] else None


def taps_inside(v: OpView) -> str | None:
    """Every output row and column must interpolate between input rows / columns that exist: the
    rounded fixed-point scale must not carry the last position past the input (TFLM reads outside
    it there)."""
    if rank4(v) is not None or size_vector(v) is not None or corner_mode(v) is not None:
        return None  # reported by those rules
    _, h, w, _ = v.args[0].shape
    for name, n_in, n_out in (("row", h, v.attrs["size"][0]), ("column", w, v.attrs["size"][1])):
        lo, _, _ = axis_taps(n_in, n_out, v.attrs["align_corners"], v.attrs["half_pixel_centers"])
        if lo.max() >= n_in:
            return f"output {name} {int(np.argmax(lo >= n_in))} reads input {name} {int(lo.max())} of {n_in}"
    return None


# ---- portable kernel -----------------------------------------------------------------------------

def taps_table(n_in: int, n_out: int, attrs) -> np.ndarray:
    """Per output index three int32 values: lo, hi and the weight of hi (TFLM's taps)."""
    lo, hi, wt = axis_taps(n_in, n_out, attrs["align_corners"], attrs["half_pixel_centers"])
    assert np.all((-ONE <= wt) & (wt <= 2 * ONE)), "bilinear weights outside what mcu_resize_bilinear_s8 sums in int32"
    return np.stack([lo, hi, wt], axis=1).reshape(-1).astype(np.int32)


def lower_c(call) -> CKernel:
    """mcu_resize_bilinear_s8: the taps of every output row and column, worked out at compile time."""
    n, h, w, ch = call.args[0].type.shape
    oh, ow = call.attrs["size"]
    params = {"batches": n, "in_h": h, "in_w": w, "channels": ch, "out_h": oh, "out_w": ow}
    consts = {"rows": taps_table(h, oh, call.attrs), "cols": taps_table(w, ow, call.attrs)}
    return CKernel("mcu_resize_bilinear_s8", "mcu_resize_bilinear_s8", "mcu_resize_bilinear_params", params, consts)


register(OpDef(
    name="resize_bilinear",
    tflm="resize_bilinear.cc, reference_ops::ResizeBilinearInteger",
    kind=OpKind.INJECTIVE,
    doc="Bilinear resize of an int8 NHWC tensor to a constant height and width (TFLM's 10-bit "
        "fixed-point path), with align_corners or half_pixel_centers.",
    infer=infer,
    reference=reference,
    checks=(int8_data, rank4, size_vector, corner_mode, taps_inside),
    tflite={"RESIZE_BILINEAR": parse},
    portable=Portable(lower_c),
))
