"""EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL: element-wise comparisons with numpy
broadcasting and a bool output.

TFLM (comparisons.cc, reference_ops::<Op>WithScaling / <Op>NoScaling and their Broadcast forms):
- int8 inputs are compared after moving both onto one fine scale (ComparisonsPrepare): per input,
      v = MultiplyByQuantizedMultiplierSmallerThanOneExp((x - zp) * 2**8, m, s)
  with (m, s) = QuantizeMultiplierSmallerThanOneExp(double(scale)), the input's own scale (which
  TFLM requires to be below 1: it aborts otherwise). The rounding can make close but different
  real values compare equal, exactly as in TFLM.
- int32, float32 (and bool for EQUAL / NOT_EQUAL) compare the raw values (IEEE for floats: NaN is
  unequal to everything, -0.0 == 0.0).
TFLM reads both inputs as input 1's type, so the two must have one type. Shapes broadcast over at
most 6 dimensions; the output quantization is irrelevant (bool).
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _portable
from .add_sub import broadcastable

LEFT_SHIFT = 8
RAW_DTYPES = ("int32", "float32")
OPS = {  # op -> (numpy comparison, what it computes)
    "equal": (np.equal, "x1 == x2"),
    "not_equal": (np.not_equal, "x1 != x2"),
    "less": (np.less, "x1 < x2"),
    "less_equal": (np.less_equal, "x1 <= x2"),
    "greater": (np.greater, "x1 > x2"),
    "greater_equal": (np.greater_equal, "x1 >= x2"),
}
WITH_BOOL = ("equal", "not_equal")  # TFLM compares bool tensors for these two only


def parse(ctx):
    return [ctx.inputs[0], ctx.inputs[1]], {}


def infer(args, attrs):
    return tuple(np.broadcast_shapes(args[0].shape, args[1].shape)), "bool"


def input_multiplier(scale: float) -> tuple[int, int]:
    """TFLM's QuantizeMultiplierSmallerThanOneExp(double(scale)) of one input's float32 scale."""
    return quant.quantize_multiplier_smaller_than_one_exp(float(np.float32(scale)))


def rescaled(x: np.ndarray, q) -> np.ndarray:
    """An int8 input on the comparison's common scale: ((x - zp) << 8) times the input's scale."""
    m, s = input_multiplier(q.s)
    return quant.multiply_by_quantized_multiplier_smaller_than_one_exp(
        (x.astype(np.int64) - q.zp) * (1 << LEFT_SHIFT), m, s)


def _reference(compare):
    def reference(args, v: OpView):
        a, b = args
        if v.args[0].dtype == "int8":
            a, b = rescaled(a, v.args[0].quant), rescaled(b, v.args[1].quant)
        a, b = np.broadcast_arrays(a, b)
        return compare(a, b).astype(np.bool_).reshape(v.out.shape)
    return reference


# ---- support checks ------------------------------------------------------------------------------

def _types_check(op: str):
    dtypes = ("int8", *RAW_DTYPES) + (("bool",) if op in WITH_BOOL else ())

    def same_supported_dtype(v: OpView) -> str | None:
        found = {t.dtype for t in v.args}
        if len(found) > 1:
            return f"got {', '.join(sorted(found))}"
        return None if found <= set(dtypes) else f"got {found.pop()}"

    names = ", ".join(dtypes[:-1]) + " or " + dtypes[-1]
    same_supported_dtype.__doc__ = f"Both inputs must have one element type: {names}."
    return same_supported_dtype


def bool_output(v: OpView) -> str | None:
    """The output must be bool."""
    return None if v.out.dtype == "bool" else f"got {v.out.dtype}"


def int8_scales_below_one(v: OpView) -> str | None:
    """int8 inputs must carry per-tensor quantization with scales below 1 (TFLM's comparison moves
    each input onto a finer scale with a multiplier below one, and aborts otherwise)."""
    for what, t in (("input 1", v.args[0]), ("input 2", v.args[1])):
        if t.dtype != "int8":
            continue
        if t.quant is None or t.quant.per_channel:
            return f"{what} is not quantized per tensor"
        if not float(np.float32(t.quant.s)) < 1.0:
            return f"{what} has scale {t.quant.s:.6g}"
    return None


# ---- portable kernel -----------------------------------------------------------------------------

def lower_c(call) -> CKernel:
    """mcu_<op>_<type>: the broadcast walk (and, for int8, each input's offset and multiplier)."""
    (a, b), out = (x.type for x in call.args), call.type
    shape = _portable.broadcast_plan(a.shape, b.shape, out.shape)
    function = f"mcu_{call.op}_{_portable.c_suffix(a.dtype)}"
    if a.dtype != "int8":
        return CKernel(function, "mcu_comparisons", "mcu_broadcast_params", shape)
    (m1, s1), (m2, s2) = input_multiplier(a.quant.s), input_multiplier(b.quant.s)
    params = {"shape": shape, "left_shift": LEFT_SHIFT, "input1_offset": -a.quant.zp, "input1_multiplier": m1,
              "input1_shift": s1, "input2_offset": -b.quant.zp, "input2_multiplier": m2, "input2_shift": s2}
    return CKernel(function, "mcu_comparisons", "mcu_comparison_s8_params", params)


for _name, (_compare, _what) in OPS.items():
    register(OpDef(
        name=_name,
        tflm=f"comparisons.cc, reference_ops::{''.join(w.title() for w in _name.split('_'))}WithScaling / NoScaling",
        kind=OpKind.BROADCAST,
        doc=(f"{_what} element-wise, broadcasting, as bool (int8 inputs compared on TFLM's common rescaled "
             "scale, other types by value)."),
        infer=infer,
        reference=_reference(_compare),
        checks=(_types_check(_name), bool_output, int8_scales_below_one, broadcastable),
        tflite={_name.upper(): parse},
        portable=Portable(lower_c),
    ))
