"""SOFTMAX over the last axis: int8 input, int8 output (scale 1/256, zero point -128) or int16 output
(scale 1/65536, zero point -32768); or int16 input and output (scale 1/32768, zero points 0); any beta.

TFLM reference: reference_ops::Softmax<int8_t, OutputT>. Prepare derives the input multiplier with
PreprocessSoftmaxScaling (double arithmetic: beta * input_scale * 2**26, capped at 2**31 - 1) and the
cut-off diff_min = -CalculateInputRadius(5, left_shift) (floor in double). Each row: differences to
the row maximum below diff_min give the minimum output; the others go through gemmlowp's
exp_on_negative_values (Q5.26 in, Q0.31 out), are summed in Q12.19, and are scaled by GetReciprocal
of the sum.

With int8 output the final RoundingDivideByPOT divides by 2**(23 + floor(log2(sum))): once a row's
sum reaches 512 the exponent exceeds 31 and TFLM aborts (assert in gemmlowp's RoundingDivideByPOT;
undefined in a build without asserts). That needs 512 or more elements near the row maximum, which
no quantization parameter rules out (a row of equal values sums to its length), so long rows are
accepted (real 1001-class classifiers have peaked rows) and such a row gives -128 everywhere here.

int16 (reference_ops::SoftmaxInt16 with the two 513-entry tables softmax_common.cc's Prepare fills
with gen_lut, in float32): the input multiplier is QuantizeMultiplier(s_in * beta / (10 / 65535))
(double); each row's differences to its maximum, d in [-65535, 0], become
e = LUT_exp(clamp(MultiplyByQuantizedMultiplier(d, m, shift) + 32767, int16)), the exp table
spanning [-10, 0]; the row sum S (int32) is normalised by its leading zeros z (CountLeadingZeros):
u = ((S << (z - 1)) + 2^13) >> 14, r = LUT_1/(1+x)(clamp(u - 3 * 2^15, int16)) and each output is
clamp((e * r + 2^(30 - z)) >> (31 - z), 0, 32767). A table lookup interpolates between entry
256 + (v >> 7) and the next one with the low 7 bits of v, (slope * (v & 127) + 64) >> 7, in int16.
TFLM's Prepare requires zero points of 0 and an output scale of 1/32768 (within 0.1%).
"""

from __future__ import annotations

import math

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _fixedpoint as fp
from . import _portable
from .add_sub import rank_at_most_6

SCALED_DIFF_INTEGER_BITS = 5
ACCUMULATION_INTEGER_BITS = 12
# Output quantization TFLM requires, per output dtype: (scale, zero point, exact scale required).
OUTPUT_QUANT = {"int8": (1.0 / 256, -128, True), "int16": (1.0 / 65536, -32768, False)}
INT16_OUTPUT_QUANT = (1.0 / 32768, 0, False)  # int16 input: output scale 1/32768 (within 0.1%), zero point 0
LUT_SIZE = 513


def parse(ctx):
    o = ctx.options()
    beta = float(np.float32(o.Beta())) if o is not None else 0.0  # the schema default
    return [ctx.inputs[0]], {"beta": beta, "out_dtype": ctx.out.dtype}


def infer(args, attrs):
    return args[0].shape, attrs.get("out_dtype", args[0].dtype)


def preprocess_softmax_scaling(beta: float, input_scale: float) -> tuple[int, int]:
    """TFLM's PreprocessSoftmaxScaling for 5 integer bits: (multiplier, left shift) of
    min(beta * input_scale * 2**26, 2**31 - 1), all in double."""
    real = min(float(np.float32(beta)) * float(np.float32(input_scale)) * float(1 << (31 - SCALED_DIFF_INTEGER_BITS)),
               float((1 << 31) - 1))
    return quant.quantize_multiplier_greater_than_one(real)


def calculate_input_radius(input_integer_bits: int, input_left_shift: int, total_signed_bits: int = 31) -> int:
    """TFLM's CalculateInputRadius: floor((2**ib - 1) * 2**(total - ib) / 2**left_shift), in double."""
    rescaled = 1.0 * ((1 << input_integer_bits) - 1) * float(1 << (total_signed_bits - input_integer_bits)) \
        / float(1 << input_left_shift)
    return math.floor(rescaled)


def softmax_params(beta: float, input_scale: float) -> tuple[int, int, int]:
    """(input multiplier, input left shift, diff_min) exactly as TFLM's CalculateSoftmaxParams."""
    mult, shift = preprocess_softmax_scaling(beta, input_scale)
    diff_min = int(-1.0 * calculate_input_radius(SCALED_DIFF_INTEGER_BITS, shift))
    return mult, shift, diff_min


def softmax_int8(x: np.ndarray, beta: float, input_scale: float, out_dtype: str = "int8") -> np.ndarray:
    """The int8 softmax over the last axis, for any leading shape."""
    return softmax_rows(x, *softmax_params(beta, input_scale), out_dtype)


# 512 in Q12.19: a row whose sum of exponentials reaches it makes TFLM's final RoundingDivideByPOT
# (int8 output) take an exponent above 31, where TFLM aborts (an assert; undefined without asserts).
INT8_SUM_LIMIT = 512 << (31 - ACCUMULATION_INTEGER_BITS)


def softmax_rows(x: np.ndarray, mult: int, shift: int, diff_min: int, out_dtype: str = "int8") -> np.ndarray:
    """TFLM's arithmetic on its precomputed (input multiplier, left shift, diff_min). With int8 output,
    a row whose sum of exponentials reaches 512 (TFLM aborts there) gives -128 everywhere."""
    xs = x.astype(np.int64)
    diff = xs - xs.max(axis=-1, keepdims=True)
    valid = diff >= diff_min
    # MultiplyByQuantizedMultiplierGreaterThanOne; |diff| * 2**shift stays within int32 for valid diffs.
    rescaled = quant.multiply_by_quantized_multiplier_greater_than_one(np.where(valid, diff, 0), mult, shift)
    exps = fp.exp_on_negative_values(rescaled, SCALED_DIFF_INTEGER_BITS)  # Q0.31
    acc = fp.rescale(exps, 0, ACCUMULATION_INTEGER_BITS)
    total = np.where(valid, acc, 0).sum(axis=-1, keepdims=True)  # exact (int64)
    sum_of_exps = fp.wrap_int32(total)  # TFLM's int32 sum (wraps only past 4096, on rows of 4096+)
    shifted_scale, num_bits_over_unit = fp.get_reciprocal(sum_of_exps, ACCUMULATION_INTEGER_BITS)
    bits = np.iinfo(np.dtype(out_dtype)).bits
    exponent = num_bits_over_unit + 31 - bits
    unsat = quant.rounding_divide_by_pot(fp.srdhm(shifted_scale, exps), exponent)
    lo, hi = quant.dtype_range(out_dtype)
    out = np.where(valid, np.clip(unsat + lo, lo, hi), lo)
    if out_dtype == "int8":
        out = np.where(total >= INT8_SUM_LIMIT, lo, out)
    return out.astype(np.dtype(out_dtype))


# ---- int16: TFLM's table softmax ---------------------------------------------------------------------

def _f32_exp(x: np.ndarray) -> np.ndarray:
    """expf on float32 values: exp in double, rounded once to float32 (expf's correctly rounded result
    in all but the rarest cases)."""
    return np.exp(np.asarray(x, dtype=np.float64)).astype(np.float32)


def _f32_one_over_one_plus(x: np.ndarray) -> np.ndarray:
    f32 = np.float32
    return (f32(1.0) / (f32(1.0) + np.asarray(x, dtype=np.float32))).astype(np.float32)


def _round_f32(x: np.ndarray) -> np.ndarray:
    """roundf: halves away from zero, on float32 values."""
    x = np.asarray(x, dtype=np.float32)
    return (np.sign(x) * np.floor(np.abs(x) + np.float32(0.5))).astype(np.float32)


def gen_lut(func, input_min: float, input_max: float) -> np.ndarray:
    """TFLM's gen_lut<float, int16_t, int16_t> onto [-1, 1]: 512 steps over [input_min, input_max],
    each entry the sampled value in Q0.15 minus half the error its linear interpolation makes at the
    midpoint, then the value at input_max; all arithmetic in float32."""
    f32 = np.float32
    lo, hi = f32(input_min), f32(input_max)
    step = f32((hi - lo) / f32(512))
    half = f32(step / f32(2))
    scaling = f32(f32(65536) / (f32(1) - f32(-1)))
    i = np.arange(512, dtype=np.float32)
    x0 = (lo + i * step).astype(np.float32)
    val, mid, nxt = func(x0), func((x0 + half).astype(np.float32)), func((lo + (i + f32(1)) * step).astype(np.float32))
    sample = _round_f32(val * scaling)
    interp = _round_f32(((nxt * scaling).astype(np.float32) + sample) / f32(2))
    bias = _round_f32((interp - _round_f32(mid * scaling)) / f32(2))
    table = np.clip(sample - bias, -32768, 32767)
    last = np.clip(_round_f32(func(np.array([hi], dtype=np.float32)) * scaling), -32768, 32767)
    return np.concatenate([table, last]).astype(np.int16)


EXP_LUT = gen_lut(_f32_exp, -10.0, 0.0)
ONE_OVER_ONE_PLUS_X_LUT = gen_lut(_f32_one_over_one_plus, 0.0, 1.0)


def lut_lookup(value: np.ndarray, lut: np.ndarray) -> np.ndarray:
    """TFLM's generic_int16_table_lookup: interpolation in a 513-entry table, in int16."""
    v = np.asarray(value, dtype=np.int64)
    index = 256 + (v >> 7)
    base = lut[index].astype(np.int64)
    slope = fp.wrap_int16(lut[index + 1].astype(np.int64) - base)
    delta = (slope * (v & 0x7F) + 64) >> 7
    return fp.wrap_int16(base + delta)


def int16_params(beta: float, input_scale: float) -> tuple[int, int]:
    """(input multiplier, shift) of the int16 softmax: QuantizeMultiplier(s_in * beta / (10 / 65535))."""
    return quant.quantize_multiplier(float(np.float32(input_scale)) * float(np.float32(beta)) / (10.0 / 65535.0))


def softmax_int16(x: np.ndarray, beta: float, input_scale: float) -> np.ndarray:
    """TFLM's SoftmaxInt16 over the last axis (the module docstring)."""
    mult, shift = int16_params(beta, input_scale)
    xs = x.astype(np.int64)
    diff = xs - xs.max(axis=-1, keepdims=True)
    scaled = quant.multiply_by_quantized_multiplier(diff, mult, shift)
    exps = lut_lookup(np.clip(scaled + 32767, -32768, 32767), EXP_LUT)
    total = exps.sum(axis=-1, keepdims=True)  # below 2^31: the depth is limited (depth_below_65539)
    clz = fp.count_leading_zeros32(total)
    shifted = ((total << (clz - 1)) + (1 << 13)) >> 14
    recip = lut_lookup(np.clip(shifted - ((1 << 15) + (1 << 16)), -32768, 32767), ONE_OVER_ONE_PLUS_X_LUT)
    right = 31 - clz
    out = (exps * recip + (np.int64(1) << (right - 1))) >> right
    return np.clip(out, 0, 32767).astype(np.int16)


def reference(args, v: OpView):
    if v.args[0].dtype == "int16":
        return softmax_int16(args[0], v.attrs["beta"], v.args[0].quant.s)
    return softmax_int8(args[0], v.attrs["beta"], v.args[0].quant.s, v.out.dtype)


# ---- support checks -------------------------------------------------------------------------------

def int8_input(v: OpView) -> str | None:
    """The input must be int8 or int16 (TFLM's float32 softmax kernel is not implemented)."""
    return None if v.args[0].dtype in ("int8", "int16") else f"input is {v.args[0].dtype}"


def int8_or_int16_output(v: OpView) -> str | None:
    """The output must be int8 or int16 (int16 for an int16 input)."""
    if v.args[0].dtype == "int16" and v.out.dtype != "int16":
        return f"int16 input, {v.out.dtype} output"
    return None if v.out.dtype in OUTPUT_QUANT else f"output is {v.out.dtype}"


def required_output_quant(v: OpView) -> str | None:
    """The output must be quantized as TFLM requires: scale 1/256 and zero point -128 for int8,
    scale 1/65536 (within 0.1%) and zero point -32768 for int16; with an int16 input, scale 1/32768
    (within 0.1%) and zero point 0, the input's zero point 0 too."""
    if v.out.dtype not in OUTPUT_QUANT or v.out.quant is None or v.out.quant.per_channel:
        return None  # reported by other checks
    scale, zp, exact = OUTPUT_QUANT[v.out.dtype]
    if v.args[0].dtype == "int16":
        scale, zp, exact = INT16_OUTPUT_QUANT
        if v.args[0].quant is not None and v.args[0].quant.zp != 0:
            return f"input zero point {v.args[0].quant.zp}"
    s, z = v.out.quant.s, v.out.quant.zp
    f32 = np.float32
    ok_scale = (f32(s) == f32(scale)) if exact else abs(f32(s) - f32(scale)) <= f32(0.001) * f32(scale)
    return None if (ok_scale and z == zp) else f"output has scale {s:.8g} and zero point {z}"


def at_least_1d(v: OpView) -> str | None:
    """The input must have at least one dimension."""
    return None if v.args[0].rank >= 1 else "the input is a scalar"


def multiplier_above_one(v: OpView) -> str | None:
    """beta * input scale * 2**26 must exceed 1 (TFLM's PreprocessSoftmaxScaling aborts otherwise);
    with an int16 input, beta * input scale * 65535 / 10 must be below 2^15 (TFLM shifts the
    differences, down to -65535, left by its exponent in int32) and rows have at most 65538
    elements (the int32 sum of their exponentials, each at most 32767)."""
    q = v.args[0].quant
    if q is None:
        return None
    if v.args[0].dtype == "int16":
        _, shift = int16_params(v.attrs["beta"], q.s)
        if shift > 15:
            return f"beta {v.attrs['beta']:.6g} and input scale {q.s:.6g} give exponent {shift}"
        depth = v.args[0].shape[-1] if v.args[0].rank else 1
        return None if depth <= 65538 else f"rows of {depth} elements"
    real = float(np.float32(v.attrs["beta"])) * float(np.float32(q.s)) * float(1 << 26)
    return None if real > 1.0 else f"beta {v.attrs['beta']:.6g} and input scale {q.s:.6g} give {real:.3g}"


def lower_c(call) -> CKernel:
    """mcu_softmax_s8[_s16]: rows, depth, and TFLM's input multiplier, left shift and diff_min;
    int16 input: mcu_softmax_s16 with its multiplier, shift and the two tables."""
    x = call.args[0].type
    depth = int(x.shape[-1])
    if x.dtype == "int16":
        mult, shift = int16_params(call.attrs["beta"], x.quant.s)
        return CKernel("mcu_softmax_s16", "mcu_softmax_s16", "mcu_softmax_s16_params",
                       {"rows": x.size // depth, "depth": depth, "input_multiplier": mult, "input_shift": shift},
                       {"exp_lut": EXP_LUT, "one_over_one_plus_x_lut": ONE_OVER_ONE_PLUS_X_LUT})
    mult, shift, diff_min = softmax_params(call.attrs["beta"], x.quant.s)
    params = {"rows": x.size // depth, "depth": depth, "input_multiplier": mult, "input_left_shift": shift,
              "diff_min": diff_min}
    return CKernel(_portable.typed_function("mcu_softmax", call), "mcu_softmax_s8", "mcu_softmax_params", params)


register(OpDef(
    name="softmax",
    tflm="softmax.cc, reference_ops::Softmax<int8_t, OutputT>; int16: reference_ops::SoftmaxInt16",
    kind=OpKind.COMPLEX,
    doc="Softmax over the last axis with a beta factor; int8 input, int8 (or int16) output, or int16 input and "
        "output (TFLM's table kernel). With int8 "
        "output, a row whose sum of exponentials reaches 512 (only possible on rows of 512 or more "
        "elements, e.g. 512 equal values) makes TFLM abort; mcuforge outputs -128 for that whole row "
        "(every probability in it is then at most 1/512), and is bit-exact on every other row.",
    infer=infer,
    reference=reference,
    checks=(int8_input, int8_or_int16_output, c.quantized_per_tensor_io, required_output_quant,
            at_least_1d, multiplier_above_one, rank_at_most_6),
    tflite={"SOFTMAX": parse},
    portable=Portable(lower_c),
))
