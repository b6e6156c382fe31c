"""Which of the cmsis-nn kernels' run-time paths a program takes (mcu_cmsis_paths.h): the build
compiles only those (MCU_PATHS_SELECTED, MCU_PATH_<name>=1), the linker dropping the others.

Each kernel with selectable paths has a function here from its final call (parameters and
constants, as the C reads them) to the paths it takes, on every ISA's code (the DSP paths', and
Helium's, MVE_*): C lowered for one core stays exact on another. A fused step (planner/fusion.py)
runs its parts on row bands, so each part there counts every path of its kernel."""

from __future__ import annotations

from collections.abc import Iterable

from ...kernel import KernelCall
from . import depthwise
from .common import OFFSET, PLAIN, WIDE

_PAIR = ("PAIR_C", "PAIR_PLAIN", "PAIR_RELU", "PAIR_SIGNED", "MVE_WIDE")
_CONV = ("CONV_3X3X3", "CONV_OFFSET", "CONV_COLUMN", *_PAIR)
# Every selectable path (MCU_PATH_<name> in mcu_cmsis_paths.h), by kernel.
PATHS = {
    "mcu_cmsis_dwconv2d_s8": ("DW_PIX3", "DW_MAP3", "DW_MAP3_S2", "DW_IN1", "DW_PAIRS_S1", "DW_PAIRS_S2",
                              "DW_K3S1", "DW_K3S2", "DW_ANY_FAST", "MVE_DW_IN1", "MVE_DW_LINES", "MVE_DW_COLUMNS",
                              "MVE_DW_M4", "MVE_DW_GATHER"),
    "mcu_cmsis_conv2d_s8": _CONV,
    "mcu_cmsis_conv2d_add_s8": _CONV,
    "mcu_cmsis_conv2d_1x1_s8": ("PAIR_SMALL", "PAIR_SMALL8", "PAIR_SMALL16", "PAIR_SMALL24", "PAIR_SMALL32",
                                *_PAIR),
    "mcu_cmsis_fully_connected_s8": ("FC_ROWS", "FC_DOT", *_PAIR),
}
FC_PAD_MAX = 64  # mcu_cmsis_fully_connected_s8.c: the longest one-row depth padded for the group loop


def _full_range(p: dict) -> bool:
    return (p["act_min"], p["act_max"]) == (-128, 127)


def _relu_path(p: dict) -> str:
    """The pair routines' requantization (mcu_pair_relu): without the negative accumulators' rounding
    correction where the output offset is at or below the clamp's minimum."""
    return "PAIR_RELU" if p["output_offset"] <= p["act_min"] else "PAIR_SIGNED"


def _pair_gemm(p: dict, rows: int, has_rq: bool) -> set[str]:
    """A pair product's paths (mcu_pair_gemm_init): the assembly for proven records, the whole int8
    range and an even row count (the plain layout's own routine; the offset layout's with or without
    the rounding correction of negative accumulators, mcu_pair_relu), else the C loops (which an odd
    row count's pairs leave to the assembly too)."""
    layout = p.get("pair_offset", PLAIN)
    taken = {"MVE_WIDE"} if layout == WIDE else set()  # Helium's plain loops read it
    if layout == OFFSET and has_rq and _full_range(p) and rows >= 2:
        taken.add(_relu_path(p))
    if has_rq and _full_range(p) and rows > 0 and rows % 2 == 0:
        return taken | ({"PAIR_PLAIN"} if layout == PLAIN else set())
    return taken | {"PAIR_C"}


def _conv(p: dict, has_rq: bool) -> set[str]:
    """mcu_cmsis_conv2d_s8 (and the residual composite calling it): the column builder of its
    layout, the 3x3 three-channel blocks of the wide one, the pair product."""
    taken = _pair_gemm(p, p["out_c"], has_rq)
    layout = p.get("pair_offset", PLAIN)
    taken.add("CONV_OFFSET" if layout == OFFSET else "CONV_COLUMN")
    if p["in_c"] == 3 and (p["k_h"], p["k_w"]) == (3, 3) and layout == WIDE:
        taken.add("CONV_3X3X3")
        if has_rq and _full_range(p):  # its own routine (mcu_cmsis_conv3_dsp.h), with or without the correction
            taken.add(_relu_path(p))
    return taken


def _conv_1x1(p: dict, has_rq: bool) -> set[str]:
    """mcu_cmsis_conv2d_1x1_s8: the pair product, and for a dense run (stride 1, at least one whole
    block of three pixels) of the wide layout's assembly with in_c a multiple of four up to
    SMALL_K the small-K routine (mcu_cmsis_pair_small_dsp.h: PAIR_SMALL8 ... PAIR_SMALL32 for in_c 8, 16,
    24, 32, PAIR_SMALL for the others; without it the wide routine's run)."""
    taken = _pair_gemm(p, p["out_c"], has_rq)
    fast = has_rq and _full_range(p) and p["out_c"] > 0 and p["out_c"] % 2 == 0
    dense = (p["stride_h"], p["stride_w"]) == (1, 1) and p["in_w"] == p["out_w"] and p["out_h"] * p["out_w"] >= 3
    ic = p["in_c"]
    if fast and dense and p.get("pair_offset", PLAIN) == WIDE and 0 < ic <= SMALL_K and ic % 4 == 0:
        taken |= {_small_path(ic), _relu_path(p)}
    return taken


SMALL_K = 32  # 2 * MCU_PAIR_SMALL_STEPS


def _small_path(ic: int) -> str:
    """The small-K run's routine (mcu_pair_small_run): specialised for in_c 8, 16, 24, 32, the generic
    one for the other multiples of four."""
    return f"PAIR_SMALL{ic}" if ic % 8 == 0 else "PAIR_SMALL"


def _fully_connected(p: dict, has_rq: bool) -> set[str]:
    """More rows (or depth 0): fc_rows, the plain pair layout's product (whose assembly pairs leave
    an odd last unit to C); one row: the group loop where it takes the layer, fc_dot for the rest."""
    if p["rows"] != 1 or p["depth"] <= 0:
        return {"FC_ROWS", "PAIR_C", "PAIR_PLAIN"}
    grouped = has_rq and p["units"] >= 4 and (p["depth"] % 16 == 0 or p["depth"] <= FC_PAD_MAX)
    return set() if grouped and p["units"] % 4 == 0 else {"FC_DOT"}


def _taken(kc: KernelCall) -> frozenset[str]:
    p, has_rq = kc.params, "rq" in kc.constants
    if kc.function == "mcu_cmsis_dwconv2d_s8":
        return depthwise.dsp_paths(p, has_rq) | depthwise.mve_paths(p)
    if kc.function in ("mcu_cmsis_conv2d_s8", "mcu_cmsis_conv2d_add_s8"):
        return frozenset(_conv(p, has_rq))
    if kc.function == "mcu_cmsis_conv2d_1x1_s8":
        return frozenset(_conv_1x1(p, has_rq))
    if kc.function == "mcu_cmsis_fully_connected_s8":
        return frozenset(_fully_connected(p, has_rq))
    return frozenset()


def kernel_paths(kernels: Iterable[KernelCall]) -> tuple[str, ...]:
    """The selectable paths the kernel calls take, sorted."""
    taken: set[str] = set()
    for kc in kernels:
        parts = getattr(kc, "parts", None)
        if parts is not None:  # a fused step: its parts run on bands
            taken.update(name for part in parts for name in PATHS.get(part.function, ()))
        else:
            taken |= _taken(kc)
    return tuple(sorted(taken))
