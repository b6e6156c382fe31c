"""BATCH_TO_SPACE_ND and SPACE_TO_BATCH_ND on 3-D (N, H, C) and 4-D (N, H, W, C) tensors, with
constant int32 block shapes and crops / paddings (a 3-D tensor is TFLM's N, H, 1, C: one block
size, one crop or padding pair).

TFLM (batch_to_space_nd.cc / space_to_batch_nd.cc, reference_ops::BatchToSpaceND / SpaceToBatchND)
copies raw elements (quantization is not looked at) of int8 or float32 tensors:
  BATCH_TO_SPACE_ND  out[b, y, x, c] = in[((y + top) % bh * bw + (x + left) % bw) * B + b,
                                          (y + top) / bh, (x + left) / bw, c]        (B output batches)
  SPACE_TO_BATCH_ND  out[(i * bw + j) * N + n, y, x, c] = in[n, y*bh + i - top, x*bw + j - left, c]
The output shape follows from the input, block shape and crops / paddings; the batch (and, for
SPACE_TO_BATCH_ND, the height and width) must divide evenly. SPACE_TO_BATCH_ND's padding is refused:
TFLM fills it with SpaceToBatchParams.output_offset, which its kernel never sets (the bytes are
whatever the arena held: 0 in one run, 112 in the next on the same model). BATCH_TO_SPACE_ND is a
table gather (the crops break the even walk); SPACE_TO_BATCH_ND an even walk."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable

DTYPES = ("int8", "float32")


def parse(ctx):
    block, pads = np.asarray(ctx.const(1)), np.asarray(ctx.const(2))
    attrs = {"block": tuple(int(b) for b in block.ravel()),
             "pads": tuple((int(a), int(b)) for a, b in pads.reshape(-1, 2)) if pads.size % 2 == 0 else (),
             "index_shapes": (tuple(block.shape), tuple(pads.shape)),
             "index_dtypes": (str(block.dtype), str(pads.dtype))}
    return [ctx.inputs[0]], attrs


def geometry(shape, attrs) -> tuple[int, list[int], int, list[int], list[tuple[int, int]]]:
    """(batch, spatial dims, channels, block sizes, crop or padding pairs) of a 3-D or 4-D tensor."""
    return shape[0], list(shape[1:-1]), shape[-1], list(attrs["block"]), list(attrs["pads"])


def infer_b2s(args, attrs):
    n, spatial, c, block, crops = geometry(args[0].shape, attrs)
    out = [d * b - lo - hi for d, b, (lo, hi) in zip(spatial, block, crops)]
    return (n // int(np.prod(block)), *out, c), args[0].dtype


def infer_s2b(args, attrs):
    n, spatial, c, block, pads = geometry(args[0].shape, attrs)
    out = [(d + lo + hi) // b for d, b, (lo, hi) in zip(spatial, block, pads)]
    return (n * int(np.prod(block)), *out, c), args[0].dtype


def b2s_tables(in_shape, out_shape, attrs) -> list[np.ndarray]:
    """Per output axis (batch, spatial..., channel), the input element offset it contributes."""
    n, spatial, c, block, crops = geometry(in_shape, attrs)
    st = _portable.row_major_strides(in_shape)
    out_batch = out_shape[0]
    tables = [np.arange(out_batch) * st[0]]
    inner_blocks = [int(np.prod(block[k + 1:])) for k in range(len(block))]  # block index weight per axis
    for k, (size, b, (lo, _)) in enumerate(zip(out_shape[1:-1], block, crops)):
        pos = np.arange(size) + lo
        tables.append((pos % b) * inner_blocks[k] * out_batch * st[0] + (pos // b) * st[k + 1])
    tables.append(np.arange(c))
    return tables


def reference_b2s(args, v: OpView):
    x = args[0]
    tables = b2s_tables(x.shape, v.out.shape, v.attrs)
    flat = sum(np.ix_(*tables))
    return x.reshape(-1)[flat].reshape(v.out.shape)


def reference_s2b(args, v: OpView):
    x = args[0]
    n, spatial, c, block, pads = geometry(x.shape, v.attrs)
    padded = np.pad(x, [(0, 0), *pads, (0, 0)])  # only ever (0, 0): see no_padding
    r = len(spatial)
    split = [n] + [s for d, b in zip(padded.shape[1:-1], block) for s in (d // b, b)] + [c]
    # (n, y0, i0, y1, i1, c) -> (i0, i1, n, y0, y1, c)
    order = [2 + 2 * k for k in range(r)] + [0] + [1 + 2 * k for k in range(r)] + [2 * r + 1]
    return np.ascontiguousarray(padded.reshape(split).transpose(order)).reshape(v.out.shape)


# ---- support checks ------------------------------------------------------------------------------

same_dtype = c.same_dtype_rule(DTYPES)


def rank3_or_4(v: OpView) -> str | None:
    """The input must have rank 3 (N, H, C) or 4 (N, H, W, C)."""
    return None if v.args[0].rank in (3, 4) else f"input has rank {v.args[0].rank}"


def index_tensors(v: OpView) -> str | None:
    """The block shape must be an int32 vector of positive sizes, one per spatial axis, and the
    crops or paddings an int32 [spatial axes, 2] table of non-negative values."""
    a, r = v.attrs, v.args[0].rank - 2
    if a["index_dtypes"] != ("int32", "int32"):
        return f"got {a['index_dtypes'][0]} and {a['index_dtypes'][1]}"
    if a["index_shapes"] != ((r,), (r, 2)):
        return f"shapes {[list(s) for s in a['index_shapes']]} for {r} spatial axes"
    if min(a["block"]) < 1 or min(p for pair in a["pads"] for p in pair) < 0:
        return f"block shape {list(a['block'])}, {[list(p) for p in a['pads']]}"
    return None


def b2s_divides(v: OpView) -> str | None:
    """The input batch must be a multiple of the block size product, and the crops must leave at
    least one element on every spatial axis."""
    if rank3_or_4(v) or index_tensors(v):
        return None  # reported by those rules
    n, spatial, _, block, crops = geometry(v.args[0].shape, v.attrs)
    if n % int(np.prod(block)):
        return f"batch {n} for block shape {block}"
    if any(d * b - lo - hi < 1 for d, b, (lo, hi) in zip(spatial, block, crops)):
        return f"crops {[list(p) for p in crops]} of {spatial} x {block}"
    return None


def no_padding(v: OpView) -> str | None:
    """The paddings must be 0: TFLM fills padding with a value its kernel never initializes."""
    pads = v.attrs["pads"]
    return None if all(p == (0, 0) for p in pads) else f"got {[list(p) for p in pads]}"


def s2b_divides(v: OpView) -> str | None:
    """Each spatial size must be a multiple of its block size."""
    if rank3_or_4(v) or index_tensors(v):
        return None  # reported by those rules
    _, spatial, _, block, pads = geometry(v.args[0].shape, v.attrs)
    padded = [d + lo + hi for d, (lo, hi) in zip(spatial, pads)]
    return None if all(p % b == 0 for p, b in zip(padded, block)) else f"{padded}, block {block}"


# ---- portable kernels ----------------------------------------------------------------------------

def lower_b2s(call) -> CKernel:
    """mcu_gather_table: per output row and column the input batch, row and column they read."""
    x = call.args[0].type
    return _portable.gather_table_kernel(call, call.type.shape, b2s_tables(x.shape, call.type.shape, call.attrs))


def lower_s2b(call) -> CKernel:
    """mcu_gather over (i0, i1, n, y0, y1, c): in[n, y0*bh + i0, y1*bw + i1, c]."""
    x = call.args[0].type
    n, spatial, c, block, _ = geometry(x.shape, call.attrs)
    st = _portable.row_major_strides(x.shape)
    counts = [*block, n, *(d // b for d, b in zip(spatial, block)), c]
    steps = [*st[1:-1], st[0], *(b * s for b, s in zip(block, st[1:-1])), 1]
    return _portable.walk_kernel(call, 0, counts, steps)


register(OpDef(
    name="batch_to_space_nd",
    tflm="batch_to_space_nd.cc, reference_ops::BatchToSpaceND",
    kind=OpKind.INJECTIVE,
    doc="Move batch blocks back into the spatial axes of a 3-D or 4-D tensor, with constant block "
        "shape and crops.",
    infer=infer_b2s,
    reference=reference_b2s,
    checks=(same_dtype, rank3_or_4, index_tensors, b2s_divides),
    tflite={"BATCH_TO_SPACE_ND": parse},
    portable=Portable(lower_b2s),
))

register(OpDef(
    name="space_to_batch_nd",
    tflm="space_to_batch_nd.cc, reference_ops::SpaceToBatchND",
    kind=OpKind.INJECTIVE,
    doc="Move spatial blocks of a 3-D or 4-D tensor into the batch, with a constant block shape (no "
        "padding: TFLM leaves its fill value uninitialized).",
    infer=infer_s2b,
    reference=reference_s2b,
    checks=(same_dtype, rank3_or_4, index_tensors, no_padding, s2b_divides),
    tflite={"SPACE_TO_BATCH_ND": parse},
    portable=Portable(lower_s2b),
))
