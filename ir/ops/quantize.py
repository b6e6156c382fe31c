"""QUANTIZE and DEQUANTIZE, per-tensor, with TFLM's arithmetic.

QUANTIZE (TFLM EvalQuantizeReference):
* float32 -> int8/int16 (AffineQuantize): q = (int32)roundf(x / (float)scale) + zero_point, clamped.
  The division and the rounding are float32; the scale is the file's float32 scale.
* int8/int16/int32 -> int8/int16/int32 (Requantize, the pairs TFLM implements: int8 -> int8, int16,
  int32; int16 -> int8, int16, int32; int32 -> int8, int16): q = MultiplyByQuantizedMultiplier(
  x - zp_in, m, s) + zp_out, clamped, with (m, s) = QuantizeMultiplier(double(s_in) / double(s_out)).
  The subtraction and the addition are int32 arithmetic: with int32 inputs they wrap as TFLM's do.
* uint8 -> int8 and int8 -> uint8 (the uint8 model inputs and outputs of full-integer exports): the
  same Requantize. TFLM takes a fast path, x ^ 0x80, when the scales are equal (m = 2**30, s = 1)
  and the zero points differ by 128 in the right direction; for those parameters the general formula
  gives the same bytes, and the kernel takes the fast path too (mcu_quantize_u8_xor).
DEQUANTIZE (TFLM reference_ops::Dequantize): y = (float)(double(scale) * (x - zero_point)); the
product is computed in double and rounded once to float32.

Not reproduced: for |x / scale| >= 2**31 or NaN inputs, TFLM's float -> int32 conversion is undefined
behaviour in C (x86 and Arm disagree); we saturate as the real number would (NaN -> zero point).
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable
from .add_sub import rank_at_most_6

# (input dtype, output dtype) pairs TFLM's QUANTIZE kernel implements that we support.
QUANTIZE_PAIRS = {
    ("float32", "int8"), ("float32", "int16"),
    ("int8", "int8"), ("int8", "int16"), ("int8", "int32"),
    ("int16", "int8"), ("int16", "int16"), ("int16", "int32"),
    ("int32", "int8"), ("int32", "int16"),
    ("uint8", "int8"), ("int8", "uint8"),
}
DEQUANTIZE_INPUTS = ("int8", "int16", "uint8")


def parse(ctx):
    return [ctx.inputs[0]], {"out_dtype": ctx.out.dtype}


def infer_quantize(args, attrs):
    return args[0].shape, attrs["out_dtype"]


def infer_dequantize(args, attrs):
    return args[0].shape, "float32"


def affine_quantize(x: np.ndarray, scale: float, zero_point: int, dtype: str) -> np.ndarray:
    """float32 -> integer as TFLM's AffineQuantize."""
    r = np.asarray(x, dtype=np.float32) / np.float32(scale)  # float32 division
    with np.errstate(invalid="ignore"):
        r = r.astype(np.float64)
        rounded = np.sign(r) * np.floor(np.abs(r) + 0.5)  # std::round on the float32 quotient
        rounded = np.where(np.isnan(rounded), 0.0, np.clip(rounded, quant.INT32_MIN, quant.INT32_MAX))
    lo, hi = quant.dtype_range(dtype)
    return np.clip(rounded.astype(np.int64) + zero_point, lo, hi).astype(np.dtype(dtype))


def requantize_multiplier(s_in: float, s_out: float) -> tuple[int, int]:
    """The (multiplier, shift) of integer -> integer QUANTIZE: QuantizeMultiplier(double(s_in) /
    double(s_out)) of the file's float32 scales."""
    return quant.quantize_multiplier(float(np.float32(s_in)) / float(np.float32(s_out)))


def sign_flip(in_dtype: str, zp_in: int, s_in: float, s_out: float, zp_out: int, out_dtype: str) -> bool:
    """TFLM Requantize's fast path: uint8 <-> int8 with equal scales and zero points 128 apart,
    where the output is the input byte with its top bit flipped."""
    if requantize_multiplier(s_in, s_out) != (1 << 30, 1):
        return False
    return ((in_dtype, out_dtype) == ("uint8", "int8") and zp_in - zp_out == 128) or \
        ((in_dtype, out_dtype) == ("int8", "uint8") and zp_in - zp_out == -128)


def requantize(x: np.ndarray, s_in: float, zp_in: int, s_out: float, zp_out: int, dtype: str) -> np.ndarray:
    """integer -> integer as TFLM's Requantize."""
    if sign_flip(str(x.dtype), zp_in, s_in, s_out, zp_out, dtype):
        return (x.view(np.uint8) ^ 0x80).view(np.dtype(dtype))
    m, s = requantize_multiplier(s_in, s_out)
    shifted = quant.wrap_int32(x.astype(np.int64) - zp_in)
    out = quant.wrap_int32(quant.multiply_by_quantized_multiplier(shifted, m, s) + zp_out)
    lo, hi = quant.dtype_range(dtype)
    return np.clip(out, lo, hi).astype(np.dtype(dtype))


def reference_quantize(args, v: OpView):
    qo = v.out.quant
    if v.args[0].dtype == "float32":
        return affine_quantize(args[0], qo.s, qo.zp, v.out.dtype)
    qi = v.args[0].quant
    return requantize(args[0], qi.s, qi.zp, qo.s, qo.zp, v.out.dtype)


def reference_dequantize(args, v: OpView):
    q = v.args[0].quant
    prod = float(np.float32(q.s)) * (args[0].astype(np.float64) - q.zp)  # exact operands, one rounding
    return prod.astype(np.float32)


# ---- support checks -------------------------------------------------------------------------------

def quantize_types(v: OpView) -> str | None:
    """QUANTIZE must go from float32 to int8 or int16, between int8, int16 and int32 (all but int32 to
    int32), or uint8 to or from int8."""
    pair = (v.args[0].dtype, v.out.dtype)
    return None if pair in QUANTIZE_PAIRS else f"{pair[0]} to {pair[1]}"


def quantized_output(v: OpView) -> str | None:
    """The output must carry per-tensor quantization parameters."""
    q = v.out.quant
    if q is None:
        return "output is not quantized"
    return "output is quantized per channel" if q.per_channel else None


def quantized_integer_input(v: OpView) -> str | None:
    """An integer input must carry per-tensor quantization parameters."""
    t = v.args[0]
    if t.dtype == "float32":
        return None
    if t.quant is None:
        return "input is not quantized"
    return "input is quantized per channel" if t.quant.per_channel else None


def requantize_below_2_30(v: OpView) -> str | None:
    """From an integer input, the rescaling multiplier, input scale / output scale, must be below
    2^30: TFLM shifts the input left by the multiplier's exponent in int32, which is undefined from a
    shift of 31."""
    qi, qo = v.args[0].quant, v.out.quant
    if v.args[0].dtype == "float32" or qi is None or qo is None or qi.per_channel or qo.per_channel:
        return None
    return c.left_shift_detail(requantize_multiplier(qi.s, qo.s)[1])


def dequantize_types(v: OpView) -> str | None:
    """DEQUANTIZE must go from int8, int16 or uint8 to float32."""
    if v.args[0].dtype in DEQUANTIZE_INPUTS and v.out.dtype == "float32":
        return None
    return f"{v.args[0].dtype} to {v.out.dtype}"


def quantized_input(v: OpView) -> str | None:
    """The input must carry per-tensor quantization parameters."""
    q = v.args[0].quant
    if q is None:
        return "input is not quantized"
    return "input is quantized per channel" if q.per_channel else None


def integer_quantize_as_requantize(call, ctx):
    """int8 -> int8 QUANTIZE -> REQUANTIZE (the same integer rescale, named for what it does)."""
    if call.args[0].type.dtype != "int8" or call.type.dtype != "int8":
        return None
    from dataclasses import replace

    return replace(call, op="requantize", attrs={})


def lower_quantize(call) -> CKernel:
    """int8 input: a 256-entry table (mcu_quantize_s8[_s16|_s32]); float32: the scale as a float
    literal (mcu_quantize_f32[_s16]); int16: the requantization multiplier (mcu_quantize_s16[_s16])."""
    x, out = call.args[0].type, call.type
    if "uint8" in (x.dtype, out.dtype):
        return lower_uint8(call)
    if x.dtype == "int8":
        return _portable.table_kernel(call, "mcu_quantize")
    function = _portable.typed_function("mcu_quantize", call)
    source = f"mcu_quantize_{_portable.SUFFIX[x.dtype]}"
    if x.dtype == "float32":
        params = {"size": out.size, "scale": _portable.float32_literal(out.quant.s), "output_offset": out.quant.zp}
        return CKernel(function, source, "mcu_quantize_f32_params", params)
    m, s = requantize_multiplier(x.quant.s, out.quant.s)
    params = {"size": out.size, "input_offset": -x.quant.zp, "multiplier": m, "shift": s,
              "output_offset": out.quant.zp}
    return CKernel(function, source, "mcu_requantize_params", params)


def lower_uint8(call) -> CKernel:
    """uint8 <-> int8: a byte flip where TFLM takes its fast path (mcu_quantize_u8_xor,
    mcu_quantize_s8_u8_xor), else a 256-entry table indexed by the input byte (mcu_quantize_u8,
    mcu_quantize_s8_u8) computed with the reference."""
    x, out = call.args[0].type, call.type
    function = "mcu_quantize_u8" if x.dtype == "uint8" else "mcu_quantize_s8_u8"
    params = {"size": out.size}
    if sign_flip(x.dtype, x.quant.zp, x.quant.s, out.quant.s, out.quant.zp, out.dtype):
        return CKernel(f"{function}_xor", "mcu_quantize_u8", "mcu_quantize_u8_params", params)
    # entry k: the input byte k (uint8) or k - 128 (int8), the order the kernels index the table
    inputs = np.arange(256, dtype=np.uint8) if x.dtype == "uint8" else _portable.ALL_INT8
    table = reference_quantize([inputs], OpView((x.with_shape((256,)),), out.with_shape((256,)), call.attrs))
    return CKernel(function, "mcu_quantize_u8", "mcu_quantize_u8_params", params, {"table": table})


def lower_dequantize(call) -> CKernel:
    """mcu_dequantize_s8 / _s16 / _u8: the zero point and the scale as a float literal."""
    x = call.args[0].type
    function = _portable.typed_function("mcu_dequantize", call)
    params = {"size": call.type.size, "zero_point": x.quant.zp, "scale": _portable.float32_literal(x.quant.s)}
    return CKernel(function, function, "mcu_dequantize_params", params)


QUANTIZE = Portable(lower_quantize, in_place=True)  # every kernel walks so that it works in place


def infer_requantize(args, attrs):
    return args[0].shape, "int8"


register(OpDef(
    name="quantize",
    tflm="quantize.cc, AffineQuantize / Requantize",
    kind=OpKind.ELEMWISE,
    doc="Quantize float32 to int8/int16, or requantize between int8, int16 and int32 quantizations.",
    infer=infer_quantize,
    reference=reference_quantize,
    checks=(quantize_types, quantized_output, quantized_integer_input, rank_at_most_6, requantize_below_2_30),
    tflite={"QUANTIZE": parse},
    legalize=(integer_quantize_as_requantize,),
    portable=QUANTIZE,
))

register(OpDef(
    name="requantize",
    tflm="quantize.cc, Requantize",
    kind=OpKind.ELEMWISE,
    doc="int8 -> int8 rescale between two quantizations (what int8 QUANTIZE legalizes to).",
    infer=infer_requantize,
    reference=reference_quantize,
    portable=QUANTIZE,
))

register(OpDef(
    name="dequantize",
    tflm="dequantize.cc, reference_ops::Dequantize",
    kind=OpKind.ELEMWISE,
    doc="Dequantize int8/int16/uint8 to float32: scale * (x - zero_point).",
    infer=infer_dequantize,
    reference=reference_dequantize,
    checks=(dequantize_types, quantized_input, rank_at_most_6),
    tflite={"DEQUANTIZE": parse},
    portable=Portable(lower_dequantize, in_place=True),
))
