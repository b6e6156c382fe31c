"""FULLY_CONNECTED on cmsis-nn: mcu_cmsis_fully_connected_s8 over [units, depth] weights with the bias
folded with the input zero point, and the fast requantization where proven. One input row: the
group layout (group_rows), read without scratch; more rows: the pair layout (as the convolutions:
common.pair_rows), the DSP path widening the rows into scratch three at a time."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call, Expr
from mcuforge.ir.ops import _common as c

from ...kernel import KernelCall
from ...patterns import const, op, wildcard
from . import common
from .common import Composite, Lowered
from .requant import acc_bounds, with_rq


def check(caps: dict[str, Expr]) -> str | None:
    """int8 activations, symmetric int8 weights in the default format."""
    problem = common.int8_io(caps) or common.symmetric_int8_weights(caps)
    if problem:
        return problem
    return None if caps["root"].attrs.get("weights_format", "DEFAULT") == "DEFAULT" else "weights format"


def lower(call: Call) -> Lowered:
    return lower_matrix(call, call.args[1].data)


def lower_matrix(call: Call, w: np.ndarray) -> Lowered:
    """The kernel call of `call` (FULLY_CONNECTED, or a convolution that is one: conv.single_window)
    with its weights as the [units, depth] matrix w."""
    units, depth = w.shape
    params, consts = common.requant_params(call, units)
    params.update(units=units, depth=depth, rows=call.args[0].type.size // depth)
    consts["bias"] = common.folded_bias(call, w.astype(np.int64).sum(axis=1), params["input_offset"])
    rows = params["rows"]
    consts["weights"] = group_rows(w.astype(np.int8)) if rows == 1 else common.pair_rows(w.astype(np.int8))
    with_rq(consts, params, *acc_bounds(consts["bias"], w, -128, 127))
    scratch = common.scratch_size("MCU_CMSIS_FULLY_CONNECTED_S8_SCRATCH_BYTES", rows, depth)
    return Lowered("mcu_cmsis_fully_connected_s8", params, consts, model, scratch if scratch.bytes else None)


def group_rows(w: np.ndarray) -> np.ndarray:
    """[units][depth] int8 weights in the group layout of one input row (mcu_cmsis_fc_weight in
    mcu_cmsis_fully_connected_s8.c): units four at a time, a last group of the one to three left,
    depth padded with zeros to common.pair_depth (a multiple of 16); in each group, per sixteen
    inputs, its units' sixteen weights one after the other; flat int8, units * pair_depth bytes."""
    units, depth = w.shape
    k = common.pair_depth(depth)
    padded = np.zeros((units, k), np.int8)
    padded[:, :depth] = w
    return np.concatenate([padded[u:u + 4].reshape(-1, k // 16, 16).transpose(1, 0, 2).reshape(-1)
                           for u in range(0, units, 4)]) if units else padded.reshape(-1)


def ungroup_rows(flat: np.ndarray, units: int, depth: int) -> np.ndarray:
    """The [units][depth] weights back from their group layout (group_rows)."""
    k = common.pair_depth(depth)
    flat = np.asarray(flat)
    groups = [flat[u * k:min(u + 4, units) * k].reshape(k // 16, -1, 16).transpose(1, 0, 2).reshape(-1, k)
              for u in range(0, units, 4)]
    return (np.concatenate(groups) if groups else flat.reshape(0, k))[:, :depth]


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p, k = kc.params, kc.constants
    weights = (ungroup_rows if p["rows"] == 1 else common.unpair_rows)(k["weights"], p["units"], p["depth"])
    acc = c.exact_matmul(args[0].reshape(p["rows"], p["depth"]), weights.T) + k["bias"]
    return common.requantize(acc, kc).reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_fully_connected", op("fully_connected", wildcard("x"), const("weights"),
                                                  const("bias", optional=True), capture="root"), check, lower),)
