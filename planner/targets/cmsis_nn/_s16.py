"""What the cmsis-nn 16x8 composites share (conv_s16, fully_connected_s16, depthwise_s16): the check,
the output-stage records, the int32 chunk that keeps partial sums exact, the weight tiles, and the
kernel models. The C side is firmware/kernels/cmsis_nn/mcu_cmsis_s16.h, whose comment states the
layouts and the records; the arithmetic is TFLM's 16x8 (mcuforge.ir.ops._s16). Not a composite
module (the leading underscore keeps it out of the target's scan)."""

from __future__ import annotations

from typing import Any

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.expr import Call, Constant, Expr
from mcuforge.ir.ops import _common as c
from mcuforge.ir.ops import _s16

from ...kernel import KernelCall

GROUP = 8  # depth values per group of the weight rows and the columns
INT32_MAX = 2**31 - 1


# ---- checks -----------------------------------------------------------------------------------------

def int16_io(caps: dict[str, Expr]) -> str | None:
    root = caps["root"]
    found = {a.type.dtype for a in root.args[:1] if not isinstance(a, Constant)} | {root.type.dtype}
    return None if found == {"int16"} else f"types {sorted(found)}"


def symmetric_int8_weights(caps: dict[str, Expr]) -> str | None:
    w = caps["weights"].type
    ok = w.dtype == "int8" and w.quant is not None and all(z == 0 for z in w.quant.zero_point)
    return None if ok else "weights not symmetric int8"


def check_16x8(caps: dict[str, Expr]) -> str | None:
    """16x8 (int16 activations, symmetric int8 weights), batch 1."""
    root = caps["root"]
    problem = int16_io(caps) or symmetric_int8_weights(caps)
    if problem:
        return problem
    return None if root.args[0].type.shape[0] == 1 else "batch > 1"


# ---- lowering pieces --------------------------------------------------------------------------------

def depth8(depth: int) -> int:
    return -(-depth // GROUP) * GROUP


NARROW, WIDE, HIGH, ROUND = 0, 1, 2, 3  # the output stage's kinds (the kernels' `mode` parameter)


def records(call: Call, rows: np.ndarray, round_ok: bool = False) -> tuple[int, np.ndarray, dict[str, int]]:
    """(mode, the output-stage records int32 [channels, 4], the clamp) of a 16x8 layer whose weight rows
    are `rows` [channels, depth] (mcu_cmsis_s16.h):
      NARROW (int32 bias): {bias, multiplier, shift, 0};
      WIDE: {pre low, pre high, reduced, total}, pre = bias * reduced + 2^(total - 1), total = 15 - shift;
      HIGH, WIDE where every channel allows it: reduced and pre scaled by 2^k, k = max(0, 32 - total),
        {pre low, pre high, reduced << k, max(0, total - 32)}, so that the result is the high word of
        one SMLAL shifted right: exact when reduced << k fits in int32 and no sum overflows int64;
      ROUND (with `round_ok`; it implies one int32 chunk), HIGH with no shift right where
        32768 * sum |w| + |bias| < 2^31 (the bias joins the int32 sum) and R = reduced << k is even:
        {bias, R, R / 2, 0}, out = ((acc + bias) * R + 2^31) >> 32 (SMMULR; VQRDMULH by R / 2)."""
    x, w, out = call.args[0].type, call.args[1].type, call.type
    channels = rows.shape[0]
    mult, shift = c.per_channel_multipliers(x.quant.s, w.quant.scale, out.quant.s, channels)
    bias = call.args[2].data.astype(np.int64).reshape(channels) if len(call.args) > 2 else np.zeros(channels, np.int64)
    lo, hi = c.act_clamp(call)
    clamp = {"act_min": lo, "act_max": hi}
    if not _s16.wide_accumulator(call.args[2].type.dtype if len(call.args) > 2 else None):
        rq = np.stack([bias, mult, shift, np.zeros(channels, np.int64)], axis=1)
        return NARROW, quant.wrap_int32(rq).astype(np.int32), clamp
    reduced, total = quant.reduced_multiplier(mult), 15 - shift
    wsum = np.abs(rows.astype(np.int64)).sum(axis=1)
    wide, high, rounded = [], [], []
    for ch in range(channels):  # Python ints: exact
        red, tot, b = int(reduced[ch]), int(total[ch]), int(bias[ch])
        pre = b * red + (1 << (tot - 1))
        wide.append([pre, red, tot])
        k = max(0, 32 - tot)
        bound = ((int(wsum[ch]) << 15) + abs(b)) * (red << k) + (pre << k if pre > 0 else -pre << k)
        high.append([pre << k, red << k, max(0, tot - 32)] if (red << k) < 2**31 and bound < 2**63 else None)
        ok = round_ok and tot <= 32 and (red << k) < 2**31 and (red << k) % 2 == 0 and \
            (int(wsum[ch]) << 15) + abs(b) <= INT32_MAX
        rounded.append([b, red << k, (red << k) >> 1, 0] if ok else None)
    if all(r is not None for r in rounded):
        return ROUND, np.array(rounded, dtype=np.int64).astype(np.int32), clamp
    mode, chosen = (HIGH, high) if all(h is not None for h in high) else (WIDE, wide)
    rq = np.array([[v & 0xFFFFFFFF, (v >> 32) & 0xFFFFFFFF, r, t] for v, r, t in chosen], dtype=np.int64)
    return mode, quant.wrap_int32(rq).astype(np.int32), clamp


def chunk(rows: np.ndarray, wide: bool) -> int:
    """The depth values (a multiple of 8) the kernel may sum in int32 before int64: the longest chunk
    such that 32768 times the sum of |w| over any chunk of any row stays within int32 (so every
    partial SMLAD / VMLADAVA sum is exact). An int32 bias makes TFLM sum in int32 itself: one chunk."""
    d8 = depth8(rows.shape[1])
    if not wide:
        return d8
    a = np.abs(rows.astype(np.int64))
    a = np.pad(a, ((0, 0), (0, d8 - a.shape[1])))
    for size in range(d8, 0, -GROUP):
        n = -(-d8 // size)
        padded = np.pad(a, ((0, 0), (0, n * size - d8))).reshape(a.shape[0], n, size)
        if int(padded.sum(axis=2).max(initial=0)) * 32768 <= INT32_MAX:
            return size
    raise AssertionError("a chunk of 8 int8 weights always fits")  # 8 * 128 * 32768 < 2^31


def weight_tiles(rows: np.ndarray, tile: int) -> np.ndarray:
    """[channels, depth] int8 rows as tiles of `tile` channels (mcu_cmsis_s16.h): zero-padded to a
    multiple of `tile` channels and of 8 depth values; per tile, per group of 8, each channel's 8."""
    ch, depth = rows.shape
    d8 = depth8(depth)
    padded = np.zeros((-(-ch // tile) * tile, d8), dtype=np.int8)
    padded[:ch, :depth] = rows
    t = padded.reshape(-1, tile, d8 // GROUP, GROUP).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(t).reshape(-1)


def weight_rows(tiles: np.ndarray, tile: int, channels: int, depth: int) -> np.ndarray:
    """The inverse of weight_tiles (for the kernel models)."""
    d8 = depth8(depth)
    t = tiles.reshape(-1, d8 // GROUP, tile, GROUP).transpose(0, 2, 1, 3).reshape(-1, d8)
    return t[:channels, :depth]


def lowering(call: Call, rows: np.ndarray, tile: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The parameters (depth8, chunk, mode, clamp) and constants (weights, rq) of a 16x8 gemm layer."""
    mode, rq, clamp = records(call, rows, round_ok=True)
    params = {"depth8": depth8(rows.shape[1]), "chunk": chunk(rows, mode != NARROW), "mode": mode, **clamp}
    return params, {"weights": weight_tiles(rows, tile), "rq": rq.reshape(-1)}


# ---- kernel models ----------------------------------------------------------------------------------

def outputs(acc: np.ndarray, kc: KernelCall) -> np.ndarray:
    """Exact sums [..., channels] through the records, clamped: what the kernels do after the tiles."""
    p = kc.params
    rq = kc.constants["rq"].reshape(-1, 4).astype(np.int64)
    acc = np.asarray(acc, dtype=np.int64)
    pre = (rq[:, 0] & 0xFFFFFFFF) | (rq[:, 1] << 32)
    if p["mode"] == ROUND:
        out = (quant.wrap_int32(acc + rq[:, 0]) * rq[:, 1] + (1 << 31)) >> 32
    elif p["mode"] == HIGH:
        out = quant.wrap_int32((acc * rq[:, 2] + pre) >> 32) >> rq[:, 3]
    elif p["mode"] == WIDE:
        out = quant.wrap_int32((acc * rq[:, 2] + pre) >> rq[:, 3])
    else:
        out = quant.multiply_by_quantized_multiplier(quant.wrap_int32(acc + rq[:, 0]), rq[:, 1], rq[:, 2])
    return np.clip(out, p["act_min"], p["act_max"]).astype(np.int16)
