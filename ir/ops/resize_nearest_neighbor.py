"""RESIZE_NEAREST_NEIGHBOR: NHWC nearest-neighbour resize to a constant (height, width).

The source index of each output row/column is computed as TFLM's GetNearestNeighbor does, in
float32: scale = in / out (or (in - 1) / (out - 1) with align_corners and out > 1), then
(index + offset) * scale with offset 0.5 under half_pixel_centers, rounded half away from zero
(align_corners) or floored, capped at in - 1 and, under half_pixel_centers, at least 0.
Desktop TFLite's optimized kernel uses 16.16 fixed point for the plain case instead, which can
pick another source pixel; TFLM is the target. Quantization is not looked at: values are copied."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _portable

DTYPES = ("int8", "int16", "float32")


def parse(ctx):
    o = ctx.options()
    raw = np.asarray(ctx.const(1))
    return [ctx.inputs[0]], {
        "size": tuple(int(s) for s in raw.ravel()),
        "size_dtype": str(raw.dtype),
        "align_corners": bool(o.AlignCorners()) if o is not None else False,
        "half_pixel_centers": bool(o.HalfPixelCenters()) if o is not None else False,
    }


def infer(args, attrs):
    n, _, _, ch = args[0].shape
    oh, ow = attrs["size"]
    return (n, oh, ow, ch), args[0].dtype


def source_index(in_size: int, out_size: int, align_corners: bool, half_pixel_centers: bool) -> np.ndarray:
    """For each output position 0..out_size-1, the input position TFLM copies from (float32 math)."""
    f32 = np.float32
    if align_corners and out_size > 1:
        scale = f32(in_size - 1) / f32(out_size - 1)
    else:
        scale = f32(in_size) / f32(out_size)
    offset = f32(0.5) if half_pixel_centers else f32(0.0)
    pos = (np.arange(out_size).astype(f32) + offset) * scale  # float32 throughout
    if align_corners:
        fl = np.floor(pos)
        idx = fl + (pos - fl >= f32(0.5))  # std::round: half away from zero (pos >= 0)
    else:
        idx = np.floor(pos)
    idx = np.minimum(idx.astype(np.int64), in_size - 1)
    if half_pixel_centers:
        idx = np.maximum(idx, 0)
    return idx


def reference(args, v: OpView):
    x = args[0]
    _, h, w, _ = x.shape
    oh, ow = v.attrs["size"]
    ac, hp = v.attrs["align_corners"], v.attrs["half_pixel_centers"]
    iy = source_index(h, oh, ac, hp)
    ix = source_index(w, ow, ac, hp)
    return np.ascontiguousarray(x[:, iy[:, None], ix[None, :], :])


# ---- support checks ------------------------------------------------------------------------------

def same_dtype(v: OpView) -> str | None:
    """Input and output must have the same element type, one of int8, int16 or float32."""
    a, o = v.args[0].dtype, v.out.dtype
    if a != o:
        return f"input is {a}, output {o}"
    return None if a in DTYPES else f"got {a}"


def rank4(v: OpView) -> str | None:
    """The input must be a 4-D NHWC tensor."""
    r = v.args[0].rank
    return None if r == 4 else f"input has rank {r}"


def size_vector(v: OpView) -> str | None:
    """The size must be a constant int32 vector of two positive values (height, width)."""
    size = v.attrs["size"]
    if v.attrs.get("size_dtype", "int32") != "int32":
        return f"size is {v.attrs['size_dtype']}"
    if len(size) != 2 or any(s <= 0 for s in size):
        return f"got {list(size)}"
    return None


def lower_c(call) -> CKernel:
    """mcu_resize_nearest_neighbor (element-size generic): the source row of every output row and
    the source column of every output column, as int32 tables (float32 math as the reference)."""
    n, h, w, ch = call.args[0].type.shape
    _, oh, ow, _ = call.type.shape
    ac, hp = call.attrs["align_corners"], call.attrs["half_pixel_centers"]
    params = {"elem_size": _portable.elem_size(call), "batches": n, "in_h": h, "in_w": w, "channels": ch,
              "out_h": oh, "out_w": ow}
    consts = {"src_y": source_index(h, oh, ac, hp).astype(np.int32), "src_x": source_index(w, ow, ac, hp).astype(np.int32)}
    return CKernel("mcu_resize_nearest_neighbor", "mcu_resize_nearest_neighbor", "mcu_resize_nearest_neighbor_params",
                   params, consts)


register(OpDef(
    name="resize_nearest_neighbor",
    tflm="resize_nearest_neighbor.cc, reference_ops::ResizeNearestNeighbor",
    kind=OpKind.INJECTIVE,
    doc="Nearest-neighbour resize of an NHWC tensor to a constant height and width, with "
        "align_corners and half_pixel_centers.",
    infer=infer,
    reference=reference,
    checks=(same_dtype, rank4, size_vector),
    tflite={"RESIZE_NEAREST_NEIGHBOR": parse},
    portable=Portable(lower_c),
))
