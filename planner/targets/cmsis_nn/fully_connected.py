"""FULLY_CONNECTED on cmsis-nn: mcu_cmsis_fully_connected_s8 over [units, depth] weights in the pair
layout (as the convolutions: common.pair_rows) with the bias folded with the input zero point, and
the fast requantization where proven. The DSP path widens each input row into scratch."""

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
    w = call.args[1].data  # [units, depth]
    units, depth = w.shape
    params, consts = common.requant_params(call, units)
    params.update(units=units, depth=depth, rows=call.args[0].type.size // depth)
    consts["bias"] = common.folded_bias(call, w.astype(np.int64).sum(axis=1), params["input_offset"])
    consts["weights"] = common.pair_rows(w.astype(np.int8))
    with_rq(consts, params, *acc_bounds(consts["bias"], w, -128, 127))
    return Lowered("mcu_cmsis_fully_connected_s8", params, consts, model,
                   common.scratch_size("MCU_CMSIS_FULLY_CONNECTED_S8_SCRATCH_BYTES", params["rows"], depth))


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p, k = kc.params, kc.constants
    weights = common.unpair_rows(k["weights"], p["units"], p["depth"])
    acc = c.exact_matmul(args[0].reshape(p["rows"], p["depth"]), weights.T) + k["bias"]
    return common.requantize(acc, kc).reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_fully_connected", op("fully_connected", wildcard("x"), const("weights"),
                                                  const("bias", optional=True), capture="root"), check, lower),)
