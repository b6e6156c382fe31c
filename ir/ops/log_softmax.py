"""LOG_SOFTMAX over the last axis: int8 input, int8 output with scale 16/256 and zero point 127.

TFLM (log_softmax.cc, reference_ops::LogSoftmax, LogSoftmaxQuantized<int8_t>): Prepare derives the
input multiplier and left shift as SOFTMAX does for beta 1 (input_scale * 2**26 in double), the
reverse scaling divisor and shift from 2**(31 - left_shift) / multiplier, and diff_min from
CalculateInputRadius(5, left_shift). Per row, with d = x - row max:
  - the sum of exp(d) over d >= diff_min: d onto Q5.26 (MultiplyByQuantizedMultiplier), gemmlowp's
    exp_on_negative_values, each rescaled to Q12.19 and summed;
  - its log in Q5.26 (log_x_for_x_greater_than_or_equal_to_1<5, 12>);
  - an adjusted cut-off max(diff_min - 1, the log sum minus 2**31 scaled back by the reverse divisor);
  - out = RoundingDivideByPOT(d in Q5.26 - log sum, 22) + 127 clamped, for d above the cut-off,
    -128 otherwise.
TFLM requires exactly that output quantization. Rows of 4096 or more elements can overflow its
Q12.19 sum (refused), and input scales up to 2**-26 make its Prepare abort (refused).
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _fixedpoint as fp
from .add_sub import rank_at_most_6
from .softmax import calculate_input_radius, preprocess_softmax_scaling

INPUT_INTEGER_BITS = 5
ACCUMULATION_INTEGER_BITS = 12
OUTPUT_INTEGER_BITS = 4
OUTPUT_SCALE, OUTPUT_ZERO_POINT = 16.0 / 256, 127
MAX_DEPTH = 4095  # the Q12.19 sum of exps (each at most 1.0) stays below 2**31


def parse(ctx):
    return [ctx.inputs[0]], {}


def infer(args, attrs):
    return args[0].shape, args[0].dtype


def log_softmax_params(input_scale: float) -> dict[str, int]:
    """TFLM's Prepare: input multiplier and left shift (beta 1), the reverse scaling divisor and
    right shift, and diff_min."""
    mult, left_shift = preprocess_softmax_scaling(1.0, input_scale)
    divisor, reverse_shift = quant.quantize_multiplier_smaller_than_one_exp(float(1 << (31 - left_shift)) / mult)
    return {"input_multiplier": mult, "input_left_shift": left_shift, "reverse_scaling_divisor": divisor,
            "reverse_scaling_right_shift": -reverse_shift,
            "diff_min": -calculate_input_radius(INPUT_INTEGER_BITS, left_shift)}


def reference(args, v: OpView):
    p = log_softmax_params(v.args[0].quant.s)
    x = args[0].astype(np.int64)
    diff = x - x.max(axis=-1, keepdims=True)
    in_sum = diff >= p["diff_min"]
    diff_q5 = quant.multiply_by_quantized_multiplier(np.where(in_sum, diff, 0), p["input_multiplier"],
                                                     p["input_left_shift"])
    exps = fp.rescale(fp.exp_on_negative_values(diff_q5, INPUT_INTEGER_BITS), 0, ACCUMULATION_INTEGER_BITS)
    sum_of_exps = fp.wrap_int32(np.where(in_sum, exps, 0).sum(axis=-1, keepdims=True))
    log_sum = fp.log_x_for_x_greater_than_or_equal_to_1(sum_of_exps, INPUT_INTEGER_BITS, ACCUMULATION_INTEGER_BITS)
    adjusted_diff_min = np.maximum(p["diff_min"] - 1, quant.multiply_by_quantized_multiplier(
        fp.add(log_sum, quant.INT32_MIN), p["reverse_scaling_divisor"], -p["reverse_scaling_right_shift"]))
    out = quant.rounding_divide_by_pot(fp.sub(diff_q5, log_sum), 31 - INPUT_INTEGER_BITS - OUTPUT_INTEGER_BITS) + 127
    return np.where(diff > adjusted_diff_min, np.clip(out, -128, 127), -128).astype(np.int8)


# ---- support checks ------------------------------------------------------------------------------

def output_quantization(v: OpView) -> str | None:
    """The output must be quantized with scale 16/256 and zero point 127 (TFLM requires exactly these)."""
    q = v.out.quant
    if q is None or q.per_channel:
        return "output is not quantized per tensor"
    ok = np.float32(q.s) == np.float32(OUTPUT_SCALE) and q.zp == OUTPUT_ZERO_POINT
    return None if ok else f"output has scale {q.s:.8g} and zero point {q.zp}"


def input_scale_in_range(v: OpView) -> str | None:
    """The input scale must be above 2**-26 (TFLM's Prepare aborts on smaller ones)."""
    q = v.args[0].quant
    if q is None or q.per_channel:
        return "input is not quantized per tensor"
    return None if float(np.float32(q.s)) > 2.0 ** -26 else f"input scale {q.s:.6g}"


def depth_below_4096(v: OpView) -> str | None:
    """The last axis must have fewer than 4096 elements (TFLM's sum of exponentials in Q12.19 may
    overflow beyond)."""
    depth = v.args[0].shape[-1] if v.args[0].shape else 1
    return None if depth <= MAX_DEPTH else f"the last axis has {depth} elements"


def lower_c(call) -> CKernel:
    """mcu_log_softmax_s8: rows, depth and TFLM's Prepare values."""
    shape = call.args[0].type.shape
    depth = shape[-1] if shape else 1
    params = {"rows": call.type.size // depth if depth else 0, "depth": depth,
              **log_softmax_params(call.args[0].type.quant.s)}
    return CKernel("mcu_log_softmax_s8", "mcu_log_softmax_s8", "mcu_log_softmax_params", params)


register(OpDef(
    name="log_softmax",
    tflm="log_softmax.cc, reference_ops::LogSoftmax (LogSoftmaxQuantized<int8_t>)",
    kind=OpKind.REDUCTION,
    doc="log(softmax(x)) over the last axis: int8 in, int8 out with scale 16/256 and zero point 127.",
    infer=infer,
    reference=reference,
    checks=(c.int8_activations, input_scale_in_range, output_quantization, depth_below_4096, rank_at_most_6),
    tflite={"LOG_SOFTMAX": parse},
    portable=Portable(lower_c),
))
