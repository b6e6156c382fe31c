"""SOFTMAX on cmsis-nn (int8 in and out): TFLM's input multiplier, left shift and diff_min."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call, Expr
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
    x = args[0].reshape(p["rows"], p["depth"])
    out = softmax.softmax_rows(x, p["input_multiplier"], p["input_left_shift"], p["diff_min"], "int8")
    return out.reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_softmax", op("softmax", wildcard("x"), capture="root"), check, lower),)
