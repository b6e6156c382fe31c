"""DEPTH_TO_SPACE and SPACE_TO_DEPTH: move blocks of block_size x block_size pixels between the
spatial axes and the channels of an NHWC tensor (TensorFlow's default DCR order).

TFLM (depth_to_space.cc / space_to_depth.cc, reference_ops::DepthToSpace / SpaceToDepth) requires a
rank-4 int8 or float32 input, copies raw elements (quantization is not looked at) and places them:
  DEPTH_TO_SPACE  out[n, h*b + i, w*b + j, c] = in[n, h, w, (i*b + j)*C_out + c]   (C_in = b*b*C_out)
  SPACE_TO_DEPTH  out[n, h, w, (i*b + j)*C_in + c] = in[n, h*b + i, w*b + j, c]    (H, W multiples of b)
Both are even walks of the input in output order (mcu_gather)."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable

DTYPES = ("int8", "float32")


def parse(ctx):
    o = ctx.options()
    return [ctx.inputs[0]], {"block_size": int(o.BlockSize()) if o is not None else 0}


def infer_d2s(args, attrs):
    (n, h, w, c), b = args[0].shape, attrs["block_size"]
    return (n, h * b, w * b, c // (b * b)), args[0].dtype


def infer_s2d(args, attrs):
    (n, h, w, c), b = args[0].shape, attrs["block_size"]
    return (n, h // b, w // b, c * b * b), args[0].dtype


def reference_d2s(args, v: OpView):
    x, b = args[0], v.attrs["block_size"]
    n, h, w, c = x.shape
    return np.ascontiguousarray(x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5)).reshape(v.out.shape)


def reference_s2d(args, v: OpView):
    x, b = args[0], v.attrs["block_size"]
    n, h, w, c = x.shape
    return np.ascontiguousarray(x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5)).reshape(v.out.shape)


# ---- support checks ------------------------------------------------------------------------------

same_dtype = c.same_dtype_rule(DTYPES)


def rank4(v: OpView) -> str | None:
    """The input must be a 4-D NHWC tensor."""
    return None if v.args[0].rank == 4 else f"input has rank {v.args[0].rank}"


def channels_divisible(v: OpView) -> str | None:
    """The block size must be at least 1 and the input channels a multiple of its square."""
    b = v.attrs["block_size"]
    if b < 1:
        return f"block size {b}"
    c = v.args[0].shape[-1] if v.args[0].rank == 4 else 0
    return None if c % (b * b) == 0 and c > 0 else f"{c} channels for block size {b}"


def spatial_divisible(v: OpView) -> str | None:
    """The block size must be at least 1 and divide the input height and width."""
    b = v.attrs["block_size"]
    if b < 1:
        return f"block size {b}"
    if v.args[0].rank != 4:
        return None  # reported by rank4
    _, h, w, _ = v.args[0].shape
    return None if h % b == 0 and w % b == 0 else f"{h}x{w} for block size {b}"


# ---- portable kernels: even walks ----------------------------------------------------------------

def lower_d2s(call) -> CKernel:
    """mcu_gather over (n, h, i, w, j, c): in[n, h, w, (i*b + j)*C_out + c]."""
    (n, h, w, c), b = call.args[0].type.shape, call.attrs["block_size"]
    oc = c // (b * b)
    return _portable.walk_kernel(call, 0, (n, h, b, w, b, oc), (h * w * c, w * c, b * oc, c, oc, 1))


def lower_s2d(call) -> CKernel:
    """mcu_gather over (n, h, w, i, j, c): in[n, h*b + i, w*b + j, c]."""
    (n, h, w, c), b = call.args[0].type.shape, call.attrs["block_size"]
    return _portable.walk_kernel(call, 0, (n, h // b, w // b, b, b, c), (h * w * c, b * w * c, b * c, w * c, c, 1))


register(OpDef(
    name="depth_to_space",
    tflm="depth_to_space.cc, reference_ops::DepthToSpace",
    kind=OpKind.INJECTIVE,
    doc="Move channel blocks into block_size x block_size spatial blocks (NHWC).",
    infer=infer_d2s,
    reference=reference_d2s,
    checks=(same_dtype, rank4, channels_divisible),
    tflite={"DEPTH_TO_SPACE": parse},
    portable=Portable(lower_d2s),
))

register(OpDef(
    name="space_to_depth",
    tflm="space_to_depth.cc, reference_ops::SpaceToDepth",
    kind=OpKind.INJECTIVE,
    doc="Move block_size x block_size spatial blocks into channels (NHWC).",
    infer=infer_s2d,
    reference=reference_s2d,
    checks=(same_dtype, rank4, spatial_divisible),
    tflite={"SPACE_TO_DEPTH": parse},
    portable=Portable(lower_s2d),
))
