"""AVERAGE_POOL_2D and MAX_POOL_2D on cmsis-nn: the window geometry and the activation clamp; the
kernels clip each window to the input (padding is never read)."""

from __future__ import annotations

from typing import Any

import numpy as np
from mcuforge.ir.expr import Call, Expr
from mcuforge.ir.ops import _common as c

from ...kernel import KernelCall
from ...patterns import op, wildcard
from . import common
from .common import Composite, Lowered


def check(caps: dict[str, Expr]) -> str | None:
    """int8, batch 1."""
    problem = common.int8_io(caps)
    if problem:
        return problem
    return None if caps["root"].args[0].type.shape[0] == 1 else "batch > 1"


def _params(call: Call) -> dict[str, Any]:
    fh, fw = call.attrs["filter"]
    params = common.geometry(call, fh, fw)
    params["act_min"], params["act_max"] = c.act_clamp(call)
    return params


def lower_avg(call: Call) -> Lowered:
    # Overlap: one output pixel at a time in raster order, its channels written as they are summed.
    params = _params(call)
    return Lowered("mcu_cmsis_avg_pool2d_s8", params, {}, model_avg,
                   overlap=common.raster_overlap(params, block=1, buffered=False))


def lower_max(call: Call) -> Lowered:
    # Overlap: as the average pool, one output pixel at a time in raster order.
    params = _params(call)
    return Lowered("mcu_cmsis_max_pool2d_s8", params, {}, model_max,
                   overlap=common.raster_overlap(params, block=1, buffered=False))


def model_avg(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p = kc.params
    total = common.padded_windows(args[0], p, 0).sum(axis=(3, 4))
    count = common.padded_windows(np.ones(args[0].shape[:3] + (1,), dtype=np.int64), p, 0).sum(axis=(3, 4))
    half = count // 2
    avg = np.where(total > 0, (total + half) // count, -((half - total) // count))  # C division
    return np.clip(avg, p["act_min"], p["act_max"]).astype(np.int8)


def model_max(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p = kc.params
    top = common.padded_windows(args[0], p, -128).max(axis=(3, 4))
    return np.clip(top, p["act_min"], p["act_max"]).astype(np.int8)


COMPOSITES = (
    Composite("qnn_avg_pool2d", op("average_pool_2d", wildcard("x"), capture="root"), check, lower_avg),
    Composite("qnn_max_pool2d", op("max_pool_2d", wildcard("x"), capture="root"), check, lower_max),
)
