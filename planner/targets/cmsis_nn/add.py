"""ADD on cmsis-nn (same-shape operands; broadcasting goes to the portable kernel): TFLM's three
multipliers, and for the DSP path `table`, each input's rescaled value for all 256 int8 values (the
rescale depends on one int8), and `rq`, the fast requantization of their sum where proven."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.expr import Call, Expr
from mcuforge.ir.ops import add_sub

from ...kernel import KernelCall
from ...patterns import op, wildcard
from . import common
from .common import Composite, Lowered
from .requant import requant_records


def same_shape_check(caps: dict[str, Expr]) -> str | None:
    """int8, both operands of the output's shape (broadcasting goes to the portable kernels)."""
    root = caps["root"]
    problem = common.int8_io(caps)
    if problem:
        return problem
    return None if {a.type.shape for a in root.args} == {root.type.shape} else "broadcast"


def lower(call: Call) -> Lowered:
    params, consts = common.operands(call)
    q1, q2, qo = call.args[0].type.quant, call.args[1].type.quant, call.type.quant
    (m1, s1), (m2, s2), (mo, so) = add_sub.multipliers(q1.s, q2.s, qo.s)
    params.update(left_shift=add_sub.LEFT_SHIFT["int8"], input1_multiplier=m1, input1_shift=s1,
                  input2_multiplier=m2, input2_shift=s2, output_multiplier=mo, output_shift=so)
    consts.update(tables(params))
    return Lowered("mcu_cmsis_add_s8", params, consts, model, in_place=True)


def tables(p: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """`table`: 256 rescaled values of input 1 then 256 of input 2 (index x + 128); `rq`, when
    proven, the fast requantization record of their sum, whose bounds the tables give."""
    small = quant.multiply_by_quantized_multiplier_smaller_than_one_exp
    x = np.arange(-128, 128, dtype=np.int64)
    t1 = small((x + p["input1_offset"]) << p["left_shift"], p["input1_multiplier"], p["input1_shift"])
    t2 = small((x + p["input2_offset"]) << p["left_shift"], p["input2_multiplier"], p["input2_shift"])
    out = {"table": np.concatenate([t1, t2]).astype(np.int32)}
    lo, hi = np.array([t1.min() + t2.min()]), np.array([t1.max() + t2.max()])
    rq = requant_records(lo, hi, np.array([p["output_multiplier"]]), np.array([p["output_shift"]]),
                         p["output_offset"], p["act_min"], p["act_max"])
    if rq is not None:
        out["rq"] = rq
    return out


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    x1, x2 = common.op_args(args, kc)
    return added(x1, x2, kc.params).reshape(kc.output.shape)


def added(x1: np.ndarray, x2: np.ndarray, p: Mapping[str, Any]) -> np.ndarray:
    """The kernel's x1 + x2 (same shape) with the parameters p of `lower`."""
    x1, x2 = x1.astype(np.int64), x2.astype(np.int64)
    small = quant.multiply_by_quantized_multiplier_smaller_than_one_exp
    a = small((x1 + p["input1_offset"]) << p["left_shift"], p["input1_multiplier"], p["input1_shift"])
    b = small((x2 + p["input2_offset"]) << p["left_shift"], p["input2_multiplier"], p["input2_shift"])
    out = small(a + b, p["output_multiplier"], p["output_shift"]) + p["output_offset"]
    return np.clip(out, p["act_min"], p["act_max"]).astype(np.int8)


COMPOSITES = (Composite("qnn_add", op("add", wildcard("a"), wildcard("b"), capture="root"), same_shape_check, lower),)
