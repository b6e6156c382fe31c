"""LOGISTIC and TANH on int8 and int16, with TFLM's fixed-point kernels.

TFLM reference: reference_integer_ops::Logistic / Tanh (int8). Prepare turns the input scale into a
multiplier onto Q4.27 (4 integer bits): m, shift = frexp(double(s_in) * 2**27) with the significand
rounded to Q0.31 (no re-normalisation when it rounds up to 2**31, unlike QuantizeMultiplier), and an
input radius = CalculateInputRadius(4, shift). Inputs (x - zp) at or beyond +/-radius saturate;
the others go through MultiplyByQuantizedMultiplier and gemmlowp's logistic / tanh (Q0.31 out),
then a rounding shift to the fixed output quantization: LOGISTIC 1/256 with zero point -128,
TANH 1/128 with zero point 0.

int16 (reference_integer_ops::Logistic / Tanh on int16, a 256-entry table of sigmoid(i / 24) in
Q0.16 with linear interpolation; tanh(x) = 2 sigmoid(2x) - 1 reads the same table). Prepare requires
zero points 0 and an output scale of 2^-15 (CheckedLog2: log2 of the float32 scale, computed in
float32, within 1e-3 of -15). The input is brought to a scale of 1 / (3 * 4096): with an input scale
of exactly 2^-12 (LOGISTIC) or 2^-12 / 2^-11 (TANH) by multiplying with 3 << shift, otherwise by
m = int(s_in * 12288 * 2^k), k the smallest shift with m > 16383.5 (at most 31), and
v = (x * m + 2^(k-1)) >> k. Then, with a = |v|:
  LOGISTIC: h = a >> 9, t = a & 511; r = h >= 255 ? 0x7FFF << 10 : (T[h] << 9) + t * (T[h+1] - T[h]);
            out = (v >= 0 ? r + 512 : 2^25 - r + 511) >> 10
  TANH:     h = a >> 8, t = a & 255; r = h >= 255 ? 0xFFFF << 8 : (T[h] << 8) + t * (T[h+1] - T[h]);
            out = (v >= 0 ? r - 2^23 + 128 : 2^23 + 127 - r) >> 8
The table T is TFLM's sigmoid_table_uint16: its values are not round(65536 * sigmoid(i / 24)) (a
third of them are one higher), so they are held as TFLM has them, in _int16_lut.py (with the lookup,
shared with the integer LSTM); tests/ops/test_int16_unary.py reads every entry back out of TFLM's
TANH kernel and checks all 65536 inputs of both ops.
"""

from __future__ import annotations

import math

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _fixedpoint as fp
from . import _portable
from . import _s16
from ._int16_lut import SIGMOID_TABLE, logistic_s16, tanh_s16
from .add_sub import rank_at_most_6
from .softmax import calculate_input_radius

INPUT_INTEGER_BITS = 4
# op -> (output scale, output zero point, bits kept by the final rounding shift)
OUTPUT = {"logistic": (1.0 / 256, -128, 8), "tanh": (1.0 / 128, 0, 7)}


def parse(ctx):
    return [ctx.inputs[0]], {}


def infer(args, attrs):
    return args[0].shape, args[0].dtype


def input_params(s_in: float) -> tuple[int, int, int]:
    """(multiplier, left shift, input radius) as TFLM's logistic/tanh Prepare for int8."""
    real = float(np.float32(s_in)) * float(1 << (31 - INPUT_INTEGER_BITS))
    q, shift = math.frexp(real)
    mult = quant.tflite_round(q * (1 << 31))
    return mult, shift, calculate_input_radius(INPUT_INTEGER_BITS, shift, 31)


def checked_log2(x: float) -> tuple[bool, int]:
    """TFLM's CheckedLog2 in float32: (log2(x) within 1e-3 of an integer, that integer)."""
    f32 = np.float32
    x_log2 = f32(np.log(f32(x))) * f32(f32(1.0) / f32(np.log(f32(2.0))))
    rounded = f32(np.sign(x_log2) * np.floor(np.abs(x_log2) + f32(0.5)))
    return bool(abs(f32(x_log2 - rounded)) < f32(1e-3)), int(rounded)


def int16_input_params(name: str, s_in: float) -> tuple[int, int]:
    """(multiplier, right shift) that bring an int16 input onto the table's 1 / (3 * 4096) scale,
    as TFLM's Prepare and the kernel's power-of-two case derive them."""
    pot, log2 = checked_log2(s_in)
    shift = (15 - 3) + log2
    if pot and shift in ((0,) if name == "logistic" else (0, 1)):
        return 3 << shift, 0
    mult, shift = float(np.float32(s_in)) * 4096.0 * 3.0, 0
    while mult <= 32767.0 / 2.0 and shift <= 30:
        shift += 1
        mult *= 2.0
    return int(mult), shift


def int16_reference(name: str, x: np.ndarray, s_in: float) -> np.ndarray:
    """TFLM's int16 LOGISTIC / TANH (the module docstring; the lookup is _int16_lut's)."""
    mult, shift = int16_input_params(name, s_in)
    return (logistic_s16 if name == "logistic" else tanh_s16)(x, mult, shift)


def _kernel(name: str):
    _, out_zp, out_bits = OUTPUT[name]
    fn = fp.logistic if name == "logistic" else fp.tanh

    def reference(args, v: OpView):
        if v.args[0].dtype == "int16":
            return int16_reference(name, args[0], v.args[0].quant.s)
        q = v.args[0].quant
        mult, shift, radius = input_params(q.s)
        x = args[0].astype(np.int64) - q.zp
        inside = (x > -radius) & (x < radius)
        q4 = quant.multiply_by_quantized_multiplier(np.where(inside, x, 0), mult, shift)
        y = quant.rounding_divide_by_pot(fn(q4, INPUT_INTEGER_BITS), 31 - out_bits) + out_zp
        y = np.clip(y, -128, 127)
        return np.where(x <= -radius, -128, np.where(x >= radius, 127, y)).astype(np.int8)

    return reference


def _output_quant_check(name: str):
    scale, zp, _ = OUTPUT[name]

    def check(v: OpView) -> str | None:
        q = v.out.quant
        if q is None or q.per_channel:
            return None  # reported by quantized_per_tensor_io
        if v.out.dtype == "int16":
            pot, log2 = checked_log2(q.s)
            ok = pot and log2 == -15 and q.zp == 0 and v.args[0].quant is not None and v.args[0].quant.zp == 0
            return None if ok else f"int16: input zero point {v.args[0].quant.zp}, output scale {q.s:.8g} " \
                                   f"and zero point {q.zp}"
        ok = np.float32(q.s) == np.float32(scale) and q.zp == zp
        return None if ok else f"output has scale {q.s:.8g} and zero point {q.zp}"

    check.__name__ = f"{name}_output_quant"
    check.__doc__ = (f"The output must be quantized with scale 1/{round(1 / scale)} and zero point {zp}, "
                     "the fixed output quantization of TFLM's int8 kernel; with int16, the input and output "
                     "zero points must be 0 and the output scale 2^-15 (TFLM's int16 kernel).")
    return check


def input_scale_in_range(v: OpView) -> str | None:
    """The input scale must lie in [2^-28, 16) (int16: below 5.33, where TFLM's input multiplier
    s_in * 12288 stays below 2^16 and x times it within int32, and not so small that the multiplier
    truncates to 0, which TFLM's kernel would take for its power-of-two case with a shift of 31): the
    kernel's input left shift (from TFLM's Prepare) is then in 0..31; outside it, the fixed-point
    arithmetic is undefined."""
    q = v.args[0].quant
    if q is None or q.per_channel:
        return None  # reported by quantized_per_tensor_io
    if v.args[0].dtype == "int16":
        mult, _ = int16_input_params("logistic", q.s)
        return None if 0 < mult <= 0xFFFF else f"input scale {q.s:.8g} gives an input multiplier of {mult}"
    _, shift = math.frexp(float(np.float32(q.s)) * float(1 << (31 - INPUT_INTEGER_BITS)))
    return None if 0 <= shift <= 31 else f"input scale {q.s:.8g} gives an input shift of {shift}"


def lower_c(call) -> CKernel:
    """int8: a 256-entry table of the reference (mcu_logistic_s8 / mcu_tanh_s8); int16:
    mcu_logistic_s16 / mcu_tanh_s16 with the input multiplier and shift and TFLM's sigmoid table."""
    if call.args[0].type.dtype == "int8":
        return _portable.table_kernel(call)
    mult, shift = int16_input_params(call.op, call.args[0].type.quant.s)
    return CKernel(f"mcu_{call.op}_s16", "mcu_logistic_tanh_s16", "mcu_logistic_tanh_s16_params",
                   {"size": call.type.size, "input_multiplier": mult, "input_shift": shift},
                   {"table": SIGMOID_TABLE.astype(np.uint16)})


for _name, _doc in (("logistic", "The sigmoid 1 / (1 + exp(-x)) on int8 (output scale 1/256, zero point -128) or "
                                 "int16 (output scale 2^-15, zero points 0)."),
                    ("tanh", "The hyperbolic tangent on int8 (output scale 1/128, zero point 0) or int16 (output "
                             "scale 2^-15, zero points 0).")):
    register(OpDef(
        name=_name,
        tflm=f"{_name}.cc, reference_integer_ops::{_name.capitalize()} (int8 and int16)",
        kind=OpKind.ELEMWISE,
        doc=_doc,
        infer=infer,
        reference=_kernel(_name),
        checks=(_s16.int8_or_int16_activations, c.quantized_per_tensor_io, _output_quant_check(_name),
                input_scale_in_range, rank_at_most_6),
        tflite={_name.upper(): parse},
        portable=Portable(lower_c, in_place=True),
    ))
