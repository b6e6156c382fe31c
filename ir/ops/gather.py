"""GATHER and GATHER_ND: pick slices of a tensor by int32 indices, constant or computed at run time.

GATHER (gather.cc, Gather): with batch_dims b (negative: counted from the indices' rank) and axis a
(negative: from the params' rank), params seen as [batch, outer, axis_size, inner] and indices as
[batch, coords], output [batch, outer, coords, inner] row = params[batch, outer, index, :].
GATHER_ND (gather_nd.cc, GatherNd): each index vector (the indices' last axis, depth d <= 5) picks
the slice params[i_0, .., i_{d-1}, ...]; TFLM adds up i_j times the element count below axis j in
int arithmetic and only checks that the flat position lies in the params (so [0, 5] of a 3x4 params
reads element 5). Both copy raw int8 or float32 elements (quantization is not looked at).

TFLM fails the whole invoke on an index outside the params; so does the generated run (the kernel
returns non-zero and the run returns <PREFIX>_ERR_INDEX), the slice it stopped at holding zeros (raw
0 bytes), as in the reference (which carries on). Constant indices outside the params are refused at
compile time."""

from __future__ import annotations

import math

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.expr import Constant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c

DTYPES = ("int8", "float32")
MAX_ND = 5  # gather_nd.cc MAX_INDICES_ND


def _const_indices(ctx) -> np.ndarray | None:
    idx = ctx.inputs[1]
    return np.asarray(idx.data) if isinstance(idx, Constant) else None


def parse_gather(ctx):
    o = ctx.options()
    attrs = {"axis": int(o.Axis()) if o is not None else 0, "batch_dims": int(o.BatchDims()) if o is not None else 0,
             "index_range": None}
    idx = _const_indices(ctx)
    if idx is not None and idx.size:
        attrs["index_range"] = (int(idx.min()), int(idx.max()))
    return [ctx.inputs[0], ctx.inputs[1]], attrs


def gather_layout(params_shape, indices_shape, attrs) -> tuple[int, int, int, int, int, int, int]:
    """(axis, batch_dims, batch, outer, axis_size, coords, inner) with negative axis and batch_dims
    resolved as TFLM does."""
    axis = attrs["axis"] + len(params_shape) if attrs["axis"] < 0 else attrs["axis"]
    bd = attrs["batch_dims"] + len(indices_shape) if attrs["batch_dims"] < 0 else attrs["batch_dims"]
    return (axis, bd, math.prod(params_shape[:bd]), math.prod(params_shape[bd:axis]), params_shape[axis],
            math.prod(indices_shape[bd:]), math.prod(params_shape[axis + 1:]))


def infer_gather(args, attrs):
    p, i = args[0].shape, args[1].shape
    axis, bd, *_ = gather_layout(p, i, attrs)
    return tuple(p[:axis]) + tuple(i[bd:]) + tuple(p[axis + 1:]), args[0].dtype


def reference_gather(args, v: OpView):
    x, idx = args
    _, _, batch, outer, size, coords, inner = gather_layout(x.shape, idx.shape, v.attrs)
    xv = x.reshape(batch, outer, size, inner)
    iv = idx.astype(np.int64).reshape(batch, coords)
    valid = (iv >= 0) & (iv < size)
    out = np.zeros((batch, outer, coords, inner), dtype=x.dtype)
    for b in range(batch):
        out[b][:, valid[b], :] = xv[b][:, iv[b][valid[b]], :]
    return out.reshape(v.out.shape)


def parse_gather_nd(ctx):
    attrs = {"index_range": None}
    idx = _const_indices(ctx)
    if idx is not None and idx.size and idx.ndim >= 1:
        pos = flat_positions(ctx.inputs[0].type.shape, idx)
        attrs["index_range"] = (int(pos.min()), int(pos.max()))
    return [ctx.inputs[0], ctx.inputs[1]], attrs


def nd_strides(params_shape, depth: int) -> list[int]:
    """TFLM's dims_to_count: the element count below each indexed axis."""
    return [math.prod(params_shape[j + 1:]) for j in range(depth)]


def flat_positions(params_shape, idx: np.ndarray) -> np.ndarray:
    """Each index vector's flat start position, in TFLM's wrapping int arithmetic."""
    depth = idx.shape[-1]
    vecs = idx.astype(np.int64).reshape(-1, depth)
    terms = quant.wrap_int32(vecs * np.asarray(nd_strides(params_shape, depth), dtype=np.int64))
    return quant.wrap_int32(terms.sum(axis=1))


def infer_gather_nd(args, attrs):
    p, i = args[0].shape, args[1].shape
    return tuple(i[:-1]) + tuple(p[i[-1]:]), args[0].dtype


def reference_gather_nd(args, v: OpView):
    x, idx = args
    depth = idx.shape[-1]
    slice_size = math.prod(x.shape[depth:])
    pos = flat_positions(x.shape, idx)
    valid = (pos >= 0) & (pos + slice_size <= x.size)
    flat = x.reshape(-1)
    rows = np.zeros((pos.size, slice_size), dtype=x.dtype)
    for k in np.flatnonzero(valid):
        rows[k] = flat[pos[k]:pos[k] + slice_size]
    return rows.reshape(v.out.shape)


# ---- support checks ------------------------------------------------------------------------------

params_dtype = c.same_dtype_rule(DTYPES, "params")


def int32_indices(v: OpView) -> str | None:
    """The indices must be int32."""
    return None if v.args[1].dtype == "int32" else f"got {v.args[1].dtype}"


def gather_axes(v: OpView) -> str | None:
    """The axis must be an axis of the params (negative counts from the end) and batch_dims
    (negative counts from the indices' rank) at least 0, at most the axis, below the params' rank and
    at most the indices' rank, with those leading axes equal in params and indices."""
    p, i = v.args[0].shape, v.args[1].shape
    axis = v.attrs["axis"] + len(p) if v.attrs["axis"] < 0 else v.attrs["axis"]
    bd = v.attrs["batch_dims"] + len(i) if v.attrs["batch_dims"] < 0 else v.attrs["batch_dims"]
    if not 0 <= axis < len(p):
        return f"axis {v.attrs['axis']} of a rank-{len(p)} params"
    if not (0 <= bd <= axis and bd < len(p) and bd <= len(i)) or tuple(p[:bd]) != tuple(i[:bd]):
        return f"batch_dims {v.attrs['batch_dims']}, axis {v.attrs['axis']}, params {list(p)}, indices {list(i)}"
    return None


def constant_gather_indices(v: OpView) -> str | None:
    """Constant indices must lie in [0, size of the axis) (TFLM fails the invoke otherwise)."""
    rng = v.attrs["index_range"]
    if rng is None or gather_axes(v) is not None:
        return None
    size = v.args[0].shape[gather_layout(v.args[0].shape, v.args[1].shape, v.attrs)[0]]
    return None if 0 <= rng[0] and rng[1] < size else f"indices from {rng[0]} to {rng[1]} for size {size}"


def nd_shapes(v: OpView) -> str | None:
    """The params and indices must have rank at least 1, and the indices' last axis (the index depth)
    must be from 1 to 5 and at most the params' rank."""
    p, i = v.args[0].shape, v.args[1].shape
    if not p or not i:
        return f"params {list(p)}, indices {list(i)}"
    return None if 1 <= i[-1] <= min(MAX_ND, len(p)) else f"index depth {i[-1]} for params of rank {len(p)}"


def constant_nd_indices(v: OpView) -> str | None:
    """Constant index vectors must start a slice inside the params: TFLM checks the flat position
    (sum of index times the element count below its axis), failing the invoke otherwise."""
    rng = v.attrs["index_range"]
    if rng is None or nd_shapes(v) is not None:
        return None
    p, depth = v.args[0], v.args[1].shape[-1]
    slice_size = math.prod(p.shape[depth:])
    ok = rng[0] >= 0 and rng[1] + slice_size <= p.size
    return None if ok else f"flat positions from {rng[0]} to {rng[1]} in {p.size} elements"


# ---- portable kernels ----------------------------------------------------------------------------

def elem(call) -> int:
    return call.args[0].type.np_dtype.itemsize


def lower_gather(call) -> CKernel:
    """mcu_gather_axis: [batch, outer, axis, inner] rows picked by the indices (constant or not)."""
    _, _, batch, outer, size, coords, inner = gather_layout(call.args[0].type.shape, call.args[1].type.shape,
                                                            call.attrs)
    params = {"elem_size": elem(call), "batches": batch, "outer": outer, "axis_size": size, "coords": coords,
              "inner": inner}
    return CKernel("mcu_gather_axis", "mcu_gather_indexed", "mcu_gather_axis_params", params,
                   fails=not isinstance(call.args[1], Constant))  # constant indices: checked when compiling


def lower_gather_nd(call) -> CKernel:
    """mcu_gather_nd: per index vector, the slice at its flat position."""
    p, i = call.args[0].type, call.args[1].type
    depth = i.shape[-1]
    strides = nd_strides(p.shape, depth)
    params = {"elem_size": elem(call), "slices": math.prod(i.shape[:-1]), "depth": depth,
              "slice_size": math.prod(p.shape[depth:]), "params_size": p.size,
              "stride": strides + [0] * (MAX_ND - depth)}
    return CKernel("mcu_gather_nd", "mcu_gather_indexed", "mcu_gather_nd_params", params,
                   fails=not isinstance(call.args[1], Constant))


register(OpDef(
    name="gather",
    tflm="gather.cc, Gather",
    kind=OpKind.INJECTIVE,
    doc="Slices along one axis picked by int32 indices (constant or computed), with batch_dims; an "
        "index outside the axis stops the run with <PREFIX>_ERR_INDEX (-2), as TFLM fails the invoke.",
    infer=infer_gather,
    reference=reference_gather,
    checks=(params_dtype, int32_indices, gather_axes, constant_gather_indices),
    tflite={"GATHER": parse_gather},
    portable=Portable(lower_gather),
))

register(OpDef(
    name="gather_nd",
    tflm="gather_nd.cc, GatherNd",
    kind=OpKind.INJECTIVE,
    doc="Slices picked by int32 index vectors of depth 1-5 (constant or computed); an index vector "
        "outside the params stops the run with <PREFIX>_ERR_INDEX (-2), as TFLM fails the invoke.",
    infer=infer_gather_nd,
    reference=reference_gather_nd,
    checks=(params_dtype, int32_indices, nd_shapes, constant_nd_indices),
    tflite={"GATHER_ND": parse_gather_nd},
    portable=Portable(lower_gather_nd),
))
