"""SOFTMAX on cmsis-nn (int8 in and out): TFLM's input multiplier, left shift and diff_min, and
where the layer computes at least as many exponentials as it has distinct differences to a row's
maximum, the table `exp` of those exponentials (exp[-d] for d = 0, -1, ... max(diff_min, -255): an
int8 difference takes at most 256 values), computed offline with the kernel's own arithmetic."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call, Expr
from mcuforge.ir import quant
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
    return Lowered("mcu_cmsis_softmax_s8", params, exp_table(params), model)


def exp_table(p: dict) -> dict[str, np.ndarray]:
    """{"exp": int32 Q0.31 exp of each difference d in [max(diff_min, -255), 0], index -d} when the
    layer has at least as many elements as the table has entries (its 4 bytes an entry pay for
    themselves in exponentials not computed), else {} (the kernel computes each)."""
    entries = min(256, 1 - p["diff_min"])
    if p["rows"] * p["depth"] < entries:
        return {}
    diffs = -np.arange(entries, dtype=np.int64)
    scaled = quant.multiply_by_quantized_multiplier_greater_than_one(diffs, p["input_multiplier"],
                                                                       p["input_left_shift"])
    return {"exp": fp.exp_on_negative_values(scaled, softmax.SCALED_DIFF_INTEGER_BITS).astype(np.int32)}


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    """The kernel's arithmetic on its precomputed (multiplier, left shift, diff_min)."""
    p = kc.params
    x = args[0].reshape(p["rows"], p["depth"])
    out = softmax.softmax_rows(x, p["input_multiplier"], p["input_left_shift"], p["diff_min"], "int8")
    return out.reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_softmax", op("softmax", wildcard("x"), capture="root"), check, lower),)
