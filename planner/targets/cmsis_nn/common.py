"""What the cmsis-nn composites share: the shape of a lowering's result, the requantization
parameters of conv-like layers, the folded bias, and the pieces of the kernel models."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from mcuforge.firmware.macros import KernelSize, kernel_size
from mcuforge.ir import quant
from mcuforge.ir.expr import Call, Constant, Expr
from mcuforge.ir.ops import _common as c
from mcuforge.ir.ops.conv_2d import windows

from ...kernel import KernelCall, Overlap, raster_overlap  # noqa: F401 (raster_overlap: for the lowerings)
from ...patterns import Pattern

# The window geometry a cmsis-nn kernel reads (batch 1: the patterns only take batch-1 layers).
GEOMETRY = ("in_h", "in_w", "in_c", "out_h", "out_w", "out_c", "k_h", "k_w", "stride_h", "stride_w", "dil_h",
            "dil_w", "pad_top", "pad_left")


@dataclass(frozen=True)
class Lowered:
    """What a composite's lowering decides: the kernel variant and everything it reads.

    A kernel with a parameter `struct` is rendered by the generic call template (call.c.j2:
    function(&params, <op arguments>, <constants>, [scratch], output)) and needs no template of its
    own; the others by the composite's template, `<name>.c.j2`."""

    function: str
    params: dict[str, Any]
    constants: dict[str, np.ndarray]
    model: Callable[[list[np.ndarray], KernelCall], np.ndarray]
    scratch: KernelSize | None = None  # from the kernel header (scratch_size)
    in_place: bool = False
    in_place_arg: int = 0  # the root call's argument the output may be placed exactly over
    overlap: Overlap | None = None  # how far the output may overlap input 0 (the kernel's loop order)
    source: str = ""  # the kernel's file stem, when it is not the function's name
    struct: str = ""  # the parameter struct of a generic call
    op_args: int | None = None


@dataclass(frozen=True)
class Composite:
    """One composite of the cmsis-nn target: its name (also its template, `<name>.c.j2`), the pattern
    it matches, the check that admits a match (its docstring is the rule) and its lowering: called
    lower(call), or lower(call, isa) when `by_isa` (its constants depend on the kernel paths the C
    is built with, planner/target.py ISAS)."""

    name: str
    pattern: Pattern
    check: Callable[[dict[str, Expr]], "str | None"]
    lower: Callable[..., Lowered]
    by_isa: bool = False


def scratch_size(macro: str, *args: int) -> KernelSize:
    """A kernel's scratch size, from its macro in mcu_kernels_cmsis_nn.h."""
    return kernel_size("cmsis_nn", macro, *args)


# ---- the pair layout of the matrix products' weights ------------------------------------------------

def pair_depth(k: int) -> int:
    """K of a row pair in the pair layout, padded as the kernels read it (MCU_CMSIS_PAIR_DEPTH)."""
    return kernel_size("cmsis_nn", "MCU_CMSIS_PAIR_DEPTH", k).bytes


# The pair layouts (a convolution's `pair_offset` parameter, MCU_CMSIS_PAIR_* in mcu_kernels_cmsis_nn.h).
PLAIN, OFFSET, WIDE = 0, 1, 2


def pair_rows(w: np.ndarray, layout: int = PLAIN) -> np.ndarray:
    """[rows][K] int8 weights in the pair layout of mcu_kernels_cmsis_nn.h: rows 2j and 2j + 1 byte
    interleaved (w[2j][0], w[2j + 1][0], w[2j][1], ...), each pair padded with zeros to
    pair_depth(K) columns, an odd last row paired with a row of zeros; flat int8. OFFSET: row 2j + 1's
    values stored less 1 where row 2j's is negative (its zero row's too), so each int16 lane of a
    weight word reads exactly a + 256 b (the low byte a as uint8 is a + 256 when a < 0; pair_layout
    takes it only where no such b is -128). WIDE: int16
    little-endian and doubled, the columns of K rounded up to four in each group of four taken in the
    order 0, 2, 1, 3 (wide_order: as SXTB16 / SXTB16 ROR #8 split an input word), per pair and two
    columns c, c' of that order the word (2 w[2j][c], 2 w[2j][c']) then the word
    (2 w[2j + 1][c], 2 w[2j + 1][c'])."""
    rows, k = w.shape
    if layout == WIDE:
        k4, pairs = -(-k // 4) * 4, (rows + 1) // 2
        padded = np.zeros((2 * pairs, k4), "<i2")
        padded[:rows, :k] = 2 * w.astype(np.int16)
        ordered = padded[:, wide_order(k4)]
        return ordered.reshape(pairs, 2, k4 // 2, 2).transpose(0, 2, 1, 3).reshape(-1).view(np.int8)
    out = np.zeros(((rows + 1) // 2, pair_depth(k), 2), np.int8)
    first = w[0::2].astype(np.int8)
    out[:, :k, 0] = first
    out[: rows // 2, :k, 1] = w[1::2]
    if layout == OFFSET:
        out[:, :k, 1] = (out[:, :k, 1].astype(np.int16) - (first < 0)).astype(np.int8)
    return out.reshape(-1)


def wide_order(k4: int) -> np.ndarray:
    """The wide layout's column order over K4 columns: each group of four as 0, 2, 1, 3 (its own
    inverse)."""
    return (np.arange(k4).reshape(-1, 4)[:, [0, 2, 1, 3]]).reshape(-1)


def unpair_rows(flat: np.ndarray, rows: int, k: int, layout: int = PLAIN) -> np.ndarray:
    """The [rows][K] weights back from their pair layout (pair_rows)."""
    pairs = (rows + 1) // 2
    if layout == WIDE:
        k4 = -(-k // 4) * 4
        wide = np.ascontiguousarray(flat).view("<i2").reshape(pairs, k4 // 2, 2, 2).transpose(0, 2, 1, 3)
        return (wide.reshape(2 * pairs, k4)[:, wide_order(k4)][:rows, :k] // 2).astype(np.int8)
    out = np.asarray(flat).reshape(pairs, pair_depth(k), 2)[:, :k].copy()
    if layout == OFFSET:
        out[:, :, 1] = (out[:, :, 1].astype(np.int16) + (out[:, :, 0] < 0)).astype(np.int8)
    return out.transpose(0, 2, 1).reshape(-1, k)[:rows]


# The DSP paths' one-SXTB16 inner loop (mcu_cmsis_pair_dsp.h) pays off from this K on.
PAIR_OFFSET_MIN_K = 48


def pair_layout(w: np.ndarray, isa: str) -> int:
    """The pair layout of a [rows][K] convolution's weights. Built for the DSP paths (the only ones
    the other layouts speed up: Helium pays a VSHR and a VADD per second-row vector for the offset
    one, plain C a compare per second-row weight): below PAIR_OFFSET_MIN_K the wide one (int16 words, no split in the inner
    step; twice the bytes of weights that are few), from it on the offset one where, for every
    pair's second row b, |sum(x * b)| < 2^23 for all int8 inputs x (128 * sum|b| < 2^23), so the DSP
    paths recover that sum exactly from the raw weight word's product (mcu_cmsis_pair_dsp.h; the
    caller checks offset_fits too, once the requantization is proven), and no pair has b = -128
    where a < 0 (pair_rows stores b - 1 there); otherwise, and for the other ISAs, the plain one."""
    if isa != "dsp":
        return PLAIN
    rows, k = w.shape
    if k < PAIR_OFFSET_MIN_K:
        return WIDE
    b = np.abs(w[1::2].astype(np.int64)).sum(axis=1)
    pairs = rows // 2
    stored = (w[1 : 2 * pairs : 2] == -128) & (w[0 : 2 * pairs : 2] < 0)  # b - 1 would leave int8 (pair_rows)
    return OFFSET if (b.size == 0 or 128 * int(b.max()) < 2**23) and not stored.any() else PLAIN


def offset_fits(rq: np.ndarray | None, lo: np.ndarray, hi: np.ndarray) -> bool:
    """Whether the offset layout's assembly (mcu_pair_rows3_asm_offset, run with the fast
    requantization records `rq` only) may take each pair's second row from 256 times its
    accumulator (in [lo, hi] per row): every such row's output constant (its record's m 0: the
    accumulator is not read) or its accumulator in [-2^23, 2^23), so 256 times it is an int32."""
    if rq is None:
        return True
    m = rq.reshape(-1, 3)[1::2, 0]
    b_lo, b_hi = lo[1 : 2 * (len(lo) // 2) : 2], hi[1 : 2 * (len(hi) // 2) : 2]
    return bool(((m[: len(b_lo)] == 0) | ((b_lo >= -(2**23)) & (b_hi < 2**23))).all())


# ---- checks -----------------------------------------------------------------------------------------

def int8_io(caps: dict[str, Expr]) -> str | None:
    root = caps["root"]
    bad = {a.type.dtype for a in root.args if not isinstance(a, Constant)} | {root.type.dtype}
    return None if bad == {"int8"} else f"types {sorted(bad)}"


def symmetric_int8_weights(caps: dict[str, Expr]) -> str | None:
    w = caps["weights"].type
    ok = w.dtype == "int8" and w.quant is not None and all(z == 0 for z in w.quant.zero_point)
    return None if ok else "weights not symmetric int8"


# ---- lowering pieces --------------------------------------------------------------------------------

def requant_params(call: Call, channels: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Zero points, activation clamp and per-channel (multiplier, shift) of a conv-like op."""
    x, w = call.args[0].type, call.args[1].type
    mult, shift = c.per_channel_multipliers(x.quant.s, w.quant.scale, call.type.quant.s, channels)
    lo, hi = c.act_clamp(call)
    params = {"input_offset": -x.quant.zp, "output_offset": call.type.quant.zp, "act_min": lo, "act_max": hi}
    return params, {"multiplier": mult.astype(np.int32), "shift": shift.astype(np.int32)}


def geometry(call: Call, kh: int, kw: int) -> dict[str, int]:
    return c.window(call, kh, kw).fields(*GEOMETRY)


def folded_bias(call: Call, wsum: np.ndarray, input_offset: int) -> np.ndarray:
    """bias + input_offset * sum(weights) per output channel, as int32 (wrapping like the C sums)."""
    bias = call.args[2].data.astype(np.int64).reshape(wsum.shape) if len(call.args) > 2 else 0
    return quant.wrap_int32(bias + input_offset * wsum).astype(np.int32)


def operands(call: Call) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Size, offsets and clamp of an element-wise binary op; its constant operands as `arg<i>`."""
    (q1, q2), qo = (a.type.quant for a in call.args), call.type.quant
    lo, hi = c.act_clamp(call)
    params = {"size": call.type.size, "input1_offset": -q1.zp, "input2_offset": -q2.zp,
              "output_offset": qo.zp, "act_min": lo, "act_max": hi}
    consts = {f"arg{i}": a.data for i, a in enumerate(call.args) if isinstance(a, Constant)}
    return params, consts


# ---- model pieces -----------------------------------------------------------------------------------

def requantize(acc: np.ndarray, kc: KernelCall) -> np.ndarray:
    p, k = kc.params, kc.constants
    return c.requantize_clamp(acc, k["multiplier"].astype(np.int64), k["shift"].astype(np.int64),
                              p["output_offset"], p["act_min"], p["act_max"])


def padded_windows(x: np.ndarray, p: Mapping[str, Any], fill: int) -> np.ndarray:
    """[1, OH, OW, KH, KW, C] windows of x with out-of-input taps set to `fill`."""
    attrs = {"stride": (p["stride_h"], p["stride_w"]), "dilation": (p["dil_h"], p["dil_w"])}
    return windows(x.astype(np.int64), p["k_h"], p["k_w"], attrs, (p["out_h"], p["out_w"]), fill=fill)


def op_args(args: list[np.ndarray], kc: KernelCall) -> list[np.ndarray]:
    """The op's operands from the kernel inputs and constants (x * x has one input twice)."""
    return [kc.constants[f"arg{i}"] if slot is None else args[slot] for i, slot in enumerate(kc.arg_map)]
