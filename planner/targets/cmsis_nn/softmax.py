"""SOFTMAX on cmsis-nn (int8 in and out): TFLM's input multiplier, left shift and diff_min."""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.expr import Call, Expr
from mcuforge.ir.ops import _fixedpoint as fp
from mcuforge.ir.ops import softmax

from ...kernel import KernelCall
from ...patterns import op, wildcard
from . import common
from .common import Composite, Lowered


def check(caps: dict[str, Expr]) -> str | None:
    """int8 in and out."""
    return common.int8_io(caps)


def lower(call: Call) -> Lowered:
    depth = call.type.shape[-1]
    mult, shift, diff_min = softmax.softmax_params(call.attrs["beta"], call.args[0].type.quant.s)
    params = {"rows": call.type.size // depth, "depth": depth, "input_multiplier": mult, "input_left_shift": shift,
              "diff_min": diff_min}
    return Lowered("mcu_cmsis_softmax_s8", params, {}, model)


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    """The kernel's arithmetic on its precomputed (multiplier, left shift, diff_min)."""
    p = kc.params
    x = args[0].astype(np.int64).reshape(p["rows"], p["depth"])
    diff = x - x.max(axis=-1, keepdims=True)
    valid = diff >= p["diff_min"]
    rescaled = quant.multiply_by_quantized_multiplier_greater_than_one(np.where(valid, diff, 0),
                                                                      p["input_multiplier"], p["input_left_shift"])
    exps = fp.exp_on_negative_values(rescaled, softmax.SCALED_DIFF_INTEGER_BITS)
    acc = fp.rescale(exps, 0, softmax.ACCUMULATION_INTEGER_BITS)
    total = fp.wrap_int32(np.where(valid, acc, 0).sum(axis=-1, keepdims=True))
    scale, bits_over_unit = fp.get_reciprocal(total, softmax.ACCUMULATION_INTEGER_BITS)
    unsat = quant.rounding_divide_by_pot(fp.srdhm(scale, exps), bits_over_unit + 31 - 8)
    out = np.where(valid, np.clip(unsat - 128, -128, 127), -128)
    return out.astype(np.int8).reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_softmax", op("softmax", wildcard("x"), capture="root"), check, lower),)
