"""LOGISTIC and TANH on int8, with TFLM's fixed-point kernels.

TFLM reference: reference_integer_ops::Logistic / Tanh (int8). Prepare turns the input scale into a
multiplier onto Q4.27 (4 integer bits): m, shift = frexp(double(s_in) * 2**27) with the significand
rounded to Q0.31 (no re-normalisation when it rounds up to 2**31, unlike QuantizeMultiplier), and an
input radius = CalculateInputRadius(4, shift). Inputs (x - zp) at or beyond +/-radius saturate;
the others go through MultiplyByQuantizedMultiplier and gemmlowp's logistic / tanh (Q0.31 out),
then a rounding shift to the fixed output quantization: LOGISTIC 1/256 with zero point -128,
TANH 1/128 with zero point 0.
"""

from __future__ import annotations

import math

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _fixedpoint as fp
from . import _portable
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


def _kernel(name: str):
    _, out_zp, out_bits = OUTPUT[name]
    fn = fp.logistic if name == "logistic" else fp.tanh

    def reference(args, v: OpView):
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
        ok = np.float32(q.s) == np.float32(scale) and q.zp == zp
        return None if ok else f"output has scale {q.s:.8g} and zero point {q.zp}"

    check.__name__ = f"{name}_output_quant"
    check.__doc__ = (f"The output must be quantized with scale 1/{round(1 / scale)} and zero point {zp}, "
                     "the fixed output quantization of TFLM's int8 kernel.")
    return check


def input_scale_in_range(v: OpView) -> str | None:
    """The input scale must lie in [2^-28, 16): the kernel's input left shift (from TFLM's Prepare)
    is then in 0..31; outside it, the fixed-point arithmetic is undefined."""
    q = v.args[0].quant
    if q is None or q.per_channel:
        return None  # reported by quantized_per_tensor_io
    _, shift = math.frexp(float(np.float32(q.s)) * float(1 << (31 - INPUT_INTEGER_BITS)))
    return None if 0 <= shift <= 31 else f"input scale {q.s:.8g} gives an input shift of {shift}"


for _name, _doc in (("logistic", "The sigmoid 1 / (1 + exp(-x)) on int8 (output scale 1/256, zero point -128)."),
                    ("tanh", "The hyperbolic tangent on int8 (output scale 1/128, zero point 0).")):
    register(OpDef(
        name=_name,
        tflm=f"{_name}.cc, reference_integer_ops::{_name.capitalize()}",
        kind=OpKind.ELEMWISE,
        doc=_doc,
        infer=infer,
        reference=_kernel(_name),
        checks=(c.int8_activations, c.quantized_per_tensor_io, _output_quant_check(_name), input_scale_in_range,
                rank_at_most_6),
        tflite={_name.upper(): parse},
        portable=Portable(_portable.table_kernel, in_place=True),
    ))
