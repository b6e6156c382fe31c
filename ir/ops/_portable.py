"""Shared pieces of the ops' portable lowerings (the `c` target's kernel calls, `OpDef.portable`).

A portable lowering works out at compile time everything its C kernel (firmware/kernels/c/) would
otherwise derive at run time, with the registry reference's own derivations, and returns a
`CKernel`: the function, its parameter struct's fields and precomputed constant arrays. Here:
C type names and literals, the 256-entry lookup tables of unary int8 ops, the broadcast walk of
ADD/SUB/MUL and the output-order gather of TRANSPOSE/STRIDED_SLICE. Not an op module (the leading
underscore keeps it out of the registry scan).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mcuforge.ir.registry import CKernel, OpView, get_op

from mcuforge.errors import McuforgeError

C_TYPES = {"int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t", "int32": "int32_t", "float32": "float"}
SUFFIX = {"int8": "s8", "uint8": "u8", "int16": "s16", "int32": "s32", "float32": "f32"}
ELEM_SIZES = {"int8": 1, "int16": 2, "int32": 4, "float32": 4}
ALL_INT8 = np.arange(-128, 128, dtype=np.int8)
BROADCAST_RANK = 6  # MCU_BROADCAST_RANK: TFLM's RuntimeShape limit
GATHER_RANK = 5  # MCU_GATHER_RANK


def where(call) -> str:
    """The TFLite operator(s) a call came from, for messages."""
    return ", ".join(str(s) for s in call.sources) or call.op


def typed_function(base: str, call) -> str:
    """`<base>_<input>` for an int8 (or float32) output, `<base>_<input>_<output>` otherwise: the C
    function of a kernel whose output type varies (mcu_quantize_s8_s16)."""
    out = call.type.dtype
    name = f"{base}_{SUFFIX[call.args[0].type.dtype]}"
    return name if out in ("int8", "float32") else f"{name}_{SUFFIX[out]}"


def float32_literal(v: float) -> str:
    """A C float literal that reads back as exactly float32(v): the shortest decimal of the float32
    value widened to double, which lies far within half a float32 ulp of it."""
    f = float(np.float32(v))
    if not np.isfinite(f):
        raise ValueError(f"scale {v} is not finite")
    return f"{f!r}f"


def elem_size(call) -> int:
    """The element size in bytes of an element-size generic kernel's tensors."""
    dtype = call.args[0].type.dtype
    if dtype not in ELEM_SIZES:  # the registry checks already refuse these; be explicit anyway
        raise McuforgeError(f"{where(call)}: the portable target has no {call.op} kernel for {dtype} "
                            f"(supported: {', '.join(ELEM_SIZES)})")
    return ELEM_SIZES[dtype]


def row_major_strides(shape: Sequence[int]) -> list[int]:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= int(d)
    return out[::-1]


# ---- unary int8 ops: lookup tables ----------------------------------------------------------------

def int8_table(call) -> np.ndarray:
    """The op's registry reference on every int8 input: entry i is the output for input i - 128."""
    x = call.args[0].type
    v = OpView((x.with_shape((256,)),), call.type.with_shape((256,)), call.attrs)
    table = np.asarray(get_op(call.op).reference([ALL_INT8], v))
    assert table.shape == (256,) and table.dtype == call.type.np_dtype, (call.op, table.shape, table.dtype)
    return table


def table_kernel(call, base: str | None = None) -> CKernel:
    """An int8 -> int8/int16/int32 elementwise op through a 256-entry table (bit-exact with the
    reference by construction): mcu_<op>_s8(params, input, table, output)."""
    if call.args[0].type.dtype != "int8":
        raise McuforgeError(f"{where(call)}: no table kernel for {call.args[0].type.dtype} input")
    base = base or f"mcu_{call.op}"
    return CKernel(typed_function(base, call), f"{base}_s8", "mcu_table_params", {"size": call.type.size},
                   {"table": int8_table(call)})


# ---- ADD / SUB / MUL: the broadcast walk ----------------------------------------------------------

def broadcast_walk(shapes: Sequence[Sequence[int]], out_shape: Sequence[int],
                   rank: int = BROADCAST_RANK) -> tuple[list[int], list[list[int]]]:
    """The output as a row-major walk over `dims`; along axis k input i moves `strides[i][k]`
    elements (0 where it is broadcast). Size-1 axes are dropped, neighbouring axes that walk every
    input evenly are merged, and the result is left-padded with size-1 axes (stride 0) to `rank`."""
    r = len(out_shape)
    padded = [[1] * (r - len(s)) + [int(d) for d in s] for s in shapes]
    strides = [row_major_strides(s) for s in padded]
    merged: list[tuple[int, tuple[int, ...]]] = []
    for k, n in enumerate(out_shape):
        if n == 1:
            continue
        steps = tuple(st[k] if s[k] != 1 else 0 for s, st in zip(padded, strides))
        if merged and all(prev == n * step for prev, step in zip(merged[-1][1], steps)):
            merged[-1] = (merged[-1][0] * n, steps)
        else:
            merged.append((int(n), steps))
    if len(merged) > rank:
        raise NotImplementedError(f"a broadcast over {len(merged)} axes (at most {rank})")
    merged = [(1, (0,) * len(shapes))] * (rank - len(merged)) + merged
    return [m[0] for m in merged], [[m[1][i] for m in merged] for i in range(len(shapes))]


def broadcast_plan(shape1: Sequence[int], shape2: Sequence[int], out_shape: Sequence[int],
                   rank: int = BROADCAST_RANK) -> dict[str, list[int]]:
    """The broadcast walk of two inputs (mcu_broadcast_params): dims, stride1, stride2."""
    dims, (stride1, stride2) = broadcast_walk((shape1, shape2), out_shape, rank)
    return {"dims": dims, "stride1": stride1, "stride2": stride2}


def binary_params(call, act: tuple[int, int]) -> dict[str, Any]:
    """The broadcast walk, zero-point offsets and activation clamp of a quantized binary op."""
    (a, b), out = (x.type for x in call.args), call.type
    return {"shape": broadcast_plan(a.shape, b.shape, out.shape), "input1_offset": -a.quant.zp,
            "input2_offset": -b.quant.zp, "output_offset": out.quant.zp, "act_min": act[0], "act_max": act[1]}


# ---- TRANSPOSE / STRIDED_SLICE: an output-order gather ------------------------------------------

def gather_plan(start: int, counts, steps, rank: int = GATHER_RANK) -> dict[str, Any]:
    """Parameters of an output-order gather: output element (i0, .., i4) (row-major) reads input
    element start + sum(i_k * step_k). Size-1 axes are dropped, and an axis whose step equals the
    next axis' count times step is merged into it (the pair walks memory evenly); the result is
    left-padded with size-1 axes to `rank`."""
    axes = [(int(n), int(s)) for n, s in zip(counts, steps) if n != 1]
    merged: list[tuple[int, int]] = []
    for n, s in axes:
        if merged and merged[-1][1] == n * s:
            merged[-1] = (merged[-1][0] * n, s)
        else:
            merged.append((n, s))
    if len(merged) > rank:  # unreachable: the registry limits TRANSPOSE and STRIDED_SLICE to rank 5
        raise McuforgeError(f"a gather over {len(merged)} axes (the portable kernels walk at most {rank})")
    merged = [(1, 0)] * (rank - len(merged)) + merged
    return {"start": int(start), "count": [n for n, _ in merged], "step": [s for _, s in merged]}


def gather_kernel(call, start: int, counts, steps) -> CKernel:
    """mcu_gather (shared by TRANSPOSE and STRIDED_SLICE) over the given walk of the input."""
    return CKernel("mcu_gather", "mcu_gather", "mcu_gather_params",
                   {"elem_size": elem_size(call), **gather_plan(start, counts, steps)})


# ---- bool tensors ---------------------------------------------------------------------------------

def c_suffix(dtype: str) -> str:
    """The C function suffix of an element type: SUFFIX's, and b8 for bool (one byte, 0 or 1)."""
    return "b8" if dtype == "bool" else SUFFIX[dtype]


# ---- table-driven gather: per output axis, an offset table -----------------------------------------

GATHER_TABLE_RANK = 6  # MCU_GATHER_TABLE_RANK


def axis_table(count: int, step: int) -> np.ndarray:
    """The offset table of an axis that walks the input evenly."""
    return np.arange(int(count), dtype=np.int64) * int(step)


def gather_table_plan(counts, tables, start: int = 0, rank: int = GATHER_TABLE_RANK) -> tuple[dict[str, Any], np.ndarray]:
    """Parameters and offset tables of mcu_gather_table: output element (i0, .., i_{r-1}) (row-major)
    reads input element start + sum(tables[k][i_k]). Size-1 axes fold into `start`; innermost axes
    that continue the run contiguously become the run; the rest is left-padded with size-1 axes to
    `rank`. Returns (params without elem_size, the concatenated int32 tables)."""
    start = int(start)
    kept: list[np.ndarray] = []
    for n, t in zip(counts, tables):
        t = np.asarray(t, dtype=np.int64).reshape(-1)
        assert t.size == int(n), (n, t.size)
        if t.size == 1:
            start += int(t[0])
        else:
            kept.append(t)
    run = 1
    while kept and np.array_equal(kept[-1] - kept[-1][0], np.arange(kept[-1].size) * run):
        t = kept.pop()
        start += int(t[0])
        run *= t.size
    if len(kept) > rank:  # unreachable: the registry limits these ops' ranks
        raise McuforgeError(f"a table gather over {len(kept)} axes (the portable kernel walks at most {rank})")
    kept = [np.zeros(1, dtype=np.int64)] * (rank - len(kept)) + kept
    offsets = np.concatenate(kept)
    assert start >= 0 and offsets.min() >= 0 and start + offsets.max() < 2**31, "table gather offsets"
    params = {"start": start, "count": [int(t.size) for t in kept], "run": run}
    return params, offsets.astype(np.int32)


def gather_table_kernel(call, counts, tables, start: int = 0) -> CKernel:
    """mcu_gather_table over per-axis offset tables (constant `offsets`, after the op's input)."""
    params, offsets = gather_table_plan(counts, tables, start)
    return CKernel("mcu_gather_table", "mcu_gather_table", "mcu_gather_table_params",
                   {"elem_size": elem_size(call), **params}, {"offsets": offsets})


def walk_kernel(call, start: int, counts, steps) -> CKernel:
    """An even walk of the input: mcu_gather when its merged axes fit, else the table gather."""
    merged = gather_plan(start, counts, steps, rank=len(counts) or 1)
    if sum(1 for n in merged["count"] if n != 1) <= GATHER_RANK:
        return gather_kernel(call, start, counts, steps)
    return gather_table_kernel(call, counts, [axis_table(n, s) for n, s in zip(counts, steps)], start)
