"""Element-wise unary math: ABS, NEG, SQRT, RSQRT, EXP, LOG, ELU, FLOOR, ROUND, CEIL, SQUARE, SIN, COS.

TFLM's kernels and the types they take (everything else is refused, as TFLM refuses it):
- float32, all thirteen (elementwise.cc, neg.cc, exp.cc, elu.cc, floor.cc, round.cc, ceil.cc): fabsf,
  -x, sqrtf, 1.f / sqrtf, expf, logf, x < 0 ? expm1f(x) : x, floorf, ceilf, x * x, sinf, cosf, and
  ROUND's RoundToNearest (floor, then
  up when the remainder is above 1/2 or exactly 1/2 with an odd floor: half to even, except that
  values in [-1/2, 0) give +0.0). The TFLite converter emits NEG, FLOOR, ROUND and ELU in float32
  between a DEQUANTIZE and a QUANTIZE when it quantizes a model to int8.
- int8 ABS (elementwise.cc, AbsEvalQuantized): |x - zp_in|, plus zp_out when the two scales are
  equal, else MultiplyByQuantizedMultiplier(|x - zp_in|, m, s) + zp_out with m = s_in / s_out in
  double; clamped.
- int8 RSQRT (elementwise.cc, RsqrtEvalQuantized): v = x - zp_in; 127 for v = 0, else
  GetInvSqrtQuantizedMultiplierExp(v) applied to 1 << 20, then MultiplyByQuantizedMultiplier by
  1 / (sqrt(s_in) * s_out) (double) with the 20 shifted back; TFLM stops with an error on inputs
  below the zero point (rsqrt of a negative number); there the kernel gives the output of v = 1
  (what TFLM's arithmetic gives without its check).
- int8 ELU (elu.cc, PopulateLookupTable at Prepare): a 256-entry table computed in float32,
  roundf((expf(s_in * (x - zp_in)) - 1) / s_out) + zp_out for negative inputs (the input itself
  above), with 1 / s_out a float32 reciprocal; clamped.
TFLM has no int8 NEG, SQRT, EXP, LOG, FLOOR, ROUND, CEIL, SQUARE, SIN or COS (its kernels are
float32 only; the converter emits int8 SQRT, EXP and LOG, which TFLM cannot run either).

Every int8 variant depends on one int8 value: the portable kernel reads a 256-entry table made at
compile time with the numpy reference (mcu_lookup_s8). float32 kernels call the C library as TFLM
does (mcu_unary_f32.c); expf, logf, expm1f, sinf and cosf are not exactly rounded, so the numpy reference calls
the same C library functions (through ctypes) and both agree with TFLM built against that library.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from dataclasses import dataclass
from typing import Callable

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _fixedpoint as fp
from . import _portable

f32 = np.float32
RSQRT_SHIFT = 20  # TFLM's kShift: the inverse square root applied to 1 << 20
MAX_RESCALE_SHIFT = 23  # s_in / s_out below 2**23: |x - zp| * 2**shift stays in int32


def parse(ctx):
    return [ctx.inputs[0]], {}


def infer(args, attrs):
    return args[0].shape, args[0].dtype


# ---- float32: the C library's functions ------------------------------------------------------------

@functools.cache
def _libm_function(name: str) -> Callable[[float], float]:
    """The C library's float function `name` (expf, logf, expm1f): TFLM's std::exp etc. on float."""
    lib = ctypes.CDLL(ctypes.util.find_library("m") or ctypes.util.find_library("c"))
    fn = getattr(lib, name)
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


def libm(name: str, x: np.ndarray) -> np.ndarray:
    """The C library's float function applied to every element (float32 bit for bit)."""
    fn = _libm_function(name)
    flat = np.asarray(x, dtype=f32).reshape(-1)
    return np.array([fn(float(v)) for v in flat], dtype=f32).reshape(np.shape(x))


def round_to_nearest(x: np.ndarray) -> np.ndarray:
    """TFLM's RoundToNearest in float32: floor, then +1 when the remainder is above 1/2 or exactly
    1/2 with an odd floor (so [-1/2, 0) gives +0.0, and NaN stays NaN)."""
    x = np.asarray(x, dtype=f32)
    floor = np.floor(x)
    with np.errstate(invalid="ignore"):
        diff = x - floor
        keep = (diff < f32(0.5)) | ((diff == f32(0.5)) & (np.fmod(floor, f32(2)) == 0))
    return np.where(keep, floor, floor + f32(1)).astype(f32)


def elu_float(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=f32)
    return np.where(x < f32(0), libm("expm1f", x), x).astype(f32)


FLOAT32 = {
    "abs": np.abs,
    "neg": np.negative,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: f32(1) / np.sqrt(x),
    "exp": lambda x: libm("expf", x),
    "log": lambda x: libm("logf", x),
    "elu": elu_float,
    "floor": np.floor,
    "round": round_to_nearest,
    "ceil": np.ceil,
    "square": lambda x: x * x,
    "sin": lambda x: libm("sinf", x),
    "cos": lambda x: libm("cosf", x),
}


# ---- int8 ---------------------------------------------------------------------------------------------

def abs_int8(x: np.ndarray, v: OpView) -> np.ndarray:
    qi, qo = v.args[0].quant, v.out.quant
    value = np.abs(x.astype(np.int64) - qi.zp)
    if f32(qi.s) != f32(qo.s):
        value = quant.multiply_by_quantized_multiplier(value, *rescale_multiplier(v))
    return np.clip(value + qo.zp, -128, 127).astype(np.int8)


def rescale_multiplier(v: OpView) -> tuple[int, int]:
    """ABS's QuantizeMultiplier(double(s_in) / double(s_out))."""
    return quant.quantize_multiplier(float(f32(v.args[0].quant.s)) / float(f32(v.out.quant.s)))


def rsqrt_multiplier(v: OpView) -> tuple[int, int]:
    """RSQRT's QuantizeMultiplier(1 / (sqrt(double(s_in)) * double(s_out)))."""
    return quant.quantize_multiplier(1.0 / (np.sqrt(float(f32(v.args[0].quant.s))) * float(f32(v.out.quant.s))))


def rsqrt_int8(x: np.ndarray, v: OpView) -> np.ndarray:
    qi, qo = v.args[0].quant, v.out.quant
    value = x.astype(np.int64) - qi.zp
    inv, inv_shift = fp.inv_sqrt_multiplier_exp(value)
    data = quant.multiply_by_quantized_multiplier(1, inv, inv_shift + RSQRT_SHIFT)
    m, s = rsqrt_multiplier(v)
    out = quant.multiply_by_quantized_multiplier(data, m, s - RSQRT_SHIFT) + qo.zp
    return np.where(value == 0, 127, np.clip(out, -128, 127)).astype(np.int8)


def round_half_away(x: np.ndarray) -> np.ndarray:
    """roundf on float32 values (exact through float64)."""
    x = np.asarray(x, dtype=np.float64)
    return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(f32)


def elu_int8(x: np.ndarray, v: OpView) -> np.ndarray:
    qi, qo = v.args[0].quant, v.out.quant
    dequantized = f32(qi.s) * (x.astype(np.int64) - qi.zp).astype(f32)
    transformed = np.where(dequantized < 0, libm("expf", dequantized) - f32(1), dequantized).astype(f32)
    rescaled = round_half_away(transformed * (f32(1) / f32(qo.s)))
    quantized = (rescaled + f32(qo.zp)).astype(np.float64)  # a float32 sum, then truncated (integral)
    return np.clip(quantized, -128, 127).astype(np.int8)


INT8 = {"abs": abs_int8, "rsqrt": rsqrt_int8, "elu": elu_int8}


# ---- the entries ----------------------------------------------------------------------------------

def _reference(name: str):
    def reference(args, v: OpView):
        x = args[0]
        if v.out.dtype == "int8":
            return INT8[name](x, v).reshape(v.out.shape)
        with np.errstate(all="ignore"):
            return np.asarray(FLOAT32[name](x), dtype=f32).reshape(v.out.shape)
    return reference


def _types_check(name: str):
    int8 = name in INT8

    def supported_type(v: OpView) -> str | None:
        found = {v.args[0].dtype, v.out.dtype}
        ok = found == {"float32"} or (int8 and found == {"int8"})
        return None if ok else f"got {', '.join(sorted(found))}"

    supported_type.__doc__ = ("Input and output must both be int8 or both float32." if int8 else
                              f"Input and output must be float32 (TFLM's {name.upper()} kernel has no int8 variant).")
    return supported_type


def int8_quantized(v: OpView) -> str | None:
    """int8 input and output must carry per-tensor quantization parameters."""
    if v.out.dtype != "int8":
        return None
    for what, t in (("input", v.args[0]), ("output", v.out)):
        if t.quant is None or t.quant.per_channel:
            return f"{what} is not quantized per tensor"
    return None


def _ratio_shift(v: OpView, numerator: float) -> int:
    return quant.quantize_multiplier(float(f32(numerator)) / float(f32(v.out.quant.s)))[1]


def rescale_in_range(v: OpView) -> str | None:
    """For int8, s_in / s_out must be below 2**23 (TFLM's rescaled |x - zp_in| overflows int32 beyond)."""
    if v.out.dtype != "int8" or int8_quantized(v) is not None:
        return None
    ok = _ratio_shift(v, v.args[0].quant.s) <= MAX_RESCALE_SHIFT
    return None if ok else f"s_in / s_out = {v.args[0].quant.s / v.out.quant.s:.6g}"


def elu_in_range(v: OpView) -> str | None:
    """For int8, s_in / s_out and 1 / s_out must be below 2**23 (beyond, TFLM's table entries
    overflow its float-to-int32 conversion)."""
    if v.out.dtype != "int8" or int8_quantized(v) is not None:
        return None
    ok = max(_ratio_shift(v, v.args[0].quant.s), _ratio_shift(v, 1.0)) <= MAX_RESCALE_SHIFT
    return None if ok else f"s_in = {v.args[0].quant.s:.6g}, s_out = {v.out.quant.s:.6g}"


def lower_c(call) -> CKernel:
    """int8: mcu_lookup_s8 through the op's 256-entry table; float32: mcu_<op>_f32."""
    if call.type.dtype == "int8":
        return _portable.table_kernel(call, "mcu_lookup")
    return CKernel(f"mcu_{call.op}_f32", "mcu_unary_f32", "mcu_unary_f32_params", {"size": call.type.size})


@dataclass(frozen=True)
class Unary:
    name: str
    doc: str
    tflm: str
    int8_checks: tuple = ()  # the int8 variant's rules, for the ops that have one


OPS = (
    Unary("abs", "|x| element-wise (int8: rescaled to the output quantization; float32).",
          "elementwise.cc, AbsEvalQuantized (float32: std::abs)", (int8_quantized, rescale_in_range)),
    Unary("neg", "-x element-wise (float32; TFLM has no int8 NEG).", "neg.cc, reference_ops::Negate (float32 only)"),
    Unary("sqrt", "sqrt(x) element-wise (float32; TFLM has no int8 SQRT).", "elementwise.cc, SqrtEval (float32 only)"),
    Unary("rsqrt", "1 / sqrt(x) element-wise (int8: TFLM's fixed-point inverse square root; float32).",
          "elementwise.cc, RsqrtEvalQuantized (float32: 1.f / std::sqrt)", (int8_quantized,)),
    Unary("exp", "exp(x) element-wise (float32; TFLM has no int8 EXP).", "exp.cc, reference_ops::Exp (float32 only)"),
    Unary("log", "log(x) element-wise (float32; TFLM has no int8 LOG).", "elementwise.cc, LogEval (float32 only)"),
    Unary("elu", "x for x >= 0, exp(x) - 1 otherwise (int8: TFLM's float32 lookup table; float32).",
          "elu.cc, PopulateLookupTable (float32: reference_ops::Elu)", (int8_quantized, elu_in_range)),
    Unary("floor", "floor(x) element-wise (float32; TFLM has no int8 FLOOR).",
          "floor.cc, reference_ops::Floor (float32 only)"),
    Unary("round", "x rounded to the nearest integer, halves to even (float32; TFLM has no int8 ROUND).",
          "round.cc, reference_ops::Round (float32 only)"),
    Unary("ceil", "ceil(x) element-wise (float32; TFLM has no int8 CEIL).", "ceil.cc, reference_ops::Ceil (float32 only)"),
    Unary("square", "x * x element-wise (float32; TFLM has no int8 SQUARE).",
          "elementwise.cc, SquareEval (float32 only)"),
    Unary("sin", "sin(x) element-wise (float32; TFLM has no int8 SIN).", "elementwise.cc, SinEval (float32 only)"),
    Unary("cos", "cos(x) element-wise (float32; TFLM has no int8 COS).", "elementwise.cc, CosEval (float32 only)"),
)

for _op in OPS:
    register(OpDef(
        name=_op.name,
        tflm=_op.tflm,
        kind=OpKind.ELEMWISE,
        doc=_op.doc,
        infer=infer,
        reference=_reference(_op.name),
        checks=(_types_check(_op.name), *_op.int8_checks),
        tflite={_op.name.upper(): parse},
        portable=Portable(lower_c, in_place=True),
    ))
