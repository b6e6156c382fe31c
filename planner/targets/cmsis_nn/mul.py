"""MUL on cmsis-nn (same-shape operands): TFLM's output multiplier on the product of the offset
operands."""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.expr import Call
from mcuforge.ir.ops import mul

from ...kernel import KernelCall
from ...patterns import op, wildcard
from . import common
from .add import same_shape_check
from .common import Composite, Lowered


def lower(call: Call) -> Lowered:
    params, consts = common.operands(call)
    m, s = mul.multiplier(call.args[0].type.quant.s, call.args[1].type.quant.s, call.type.quant.s)
    params.update(output_multiplier=m, output_shift=s)
    return Lowered("mcu_cmsis_mul_s8", params, consts, model, in_place=True)


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p = kc.params
    x1, x2 = (a.astype(np.int64).reshape(-1) for a in common.op_args(args, kc))
    prod = (x1 + p["input1_offset"]) * (x2 + p["input2_offset"])
    out = quant.multiply_by_quantized_multiplier(prod, p["output_multiplier"], p["output_shift"])
    out = out + p["output_offset"]
    return np.clip(out, p["act_min"], p["act_max"]).astype(np.int8).reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_mul", op("mul", wildcard("a"), wildcard("b"), capture="root"), same_shape_check, lower),)
