"""ADD_N: the element-wise sum of two or more tensors of one shape (int8 or float32).

TFLM (add_n.cc, reference_ops::AddN):
- float32: per element x = 0.f, then x += input_j in input order (float32 additions, so the order
  matters for rounding).
- int8: every input must have the first input's scale and zero point. Per element, in int32,
      acc = r(-zp) + sum_j r(x_j - zp),   r(v) = MultiplyByQuantizedMultiplierSmallerThanOneExp(v << 20, m_in, s_in)
  with (m_in, s_in) from s / (2 s) = 1/2 (so r(v) = v * 2**19 exactly), then
      out = MultiplyByQuantizedMultiplierSmallerThanOneExp(acc, m_out, s_out) + zp_out, clamped to int8,
  (m_out, s_out) = QuantizeMultiplierSmallerThanOneExp(2 s / (2**20 s_out)) in double. The leading
  r(-zp) is TFLM's (its accumulator starts from the offset of a zero input value, not from 0).
  TFLM aborts when that output multiplier is not below one; the int32 accumulator overflows (C
  undefined behaviour) when many inputs at the extremes add up: both are refused.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

LEFT_SHIFT = 20  # TFLM's kAddNIntegerShift
DTYPES = ("int8", "float32")
f32 = np.float32


def parse(ctx):
    return list(ctx.inputs), {}


def infer(args, attrs):
    return args[0].shape, args[0].dtype


def multipliers(s_in: float, s_out: float) -> tuple[tuple[int, int], tuple[int, int]]:
    """((m_in, s_in), (m_out, s_out)) as TFLM's Prepare derives them (double arithmetic on the
    float32 scales)."""
    twice = 2.0 * float(f32(s_in))
    return (quant.quantize_multiplier(float(f32(s_in)) / twice),
            quant.quantize_multiplier(twice / ((1 << LEFT_SHIFT) * float(f32(s_out)))))


def _rescaled(v, m: int, s: int) -> np.ndarray:
    return quant.multiply_by_quantized_multiplier_smaller_than_one_exp(np.asarray(v, np.int64) * (1 << LEFT_SHIFT),
                                                                       m, s)


def reference(args, v: OpView):
    if v.out.dtype == "float32":
        acc = np.zeros(v.out.shape, dtype=f32)
        with np.errstate(all="ignore"):
            for a in args:
                acc = (acc + np.asarray(a, dtype=f32)).astype(f32)
        return acc
    qi, qo = v.args[0].quant, v.out.quant
    (mi, si), (mo, so) = multipliers(qi.s, qo.s)
    acc = np.broadcast_to(_rescaled(-qi.zp, mi, si), v.out.shape).astype(np.int64)
    for a in args:
        acc = acc + _rescaled(a.astype(np.int64) - qi.zp, mi, si)
    if np.any(acc != quant.wrap_int32(acc)):  # the checks refuse a configuration where this can happen
        raise ValueError("ADD_N's int32 accumulator overflows")
    out = quant.multiply_by_quantized_multiplier_smaller_than_one_exp(acc, mo, so) + qo.zp
    return np.clip(out, -128, 127).astype(np.int8)


# ---- support checks ------------------------------------------------------------------------------

def two_or_more(v: OpView) -> str | None:
    """ADD_N needs at least two inputs."""
    return None if len(v.args) >= 2 else f"got {len(v.args)}"


def same_dtype(v: OpView) -> str | None:
    """All inputs and the output must be int8, or all float32."""
    found = sorted({t.dtype for t in (*v.args, v.out)})
    return None if len(found) == 1 and found[0] in DTYPES else f"got {', '.join(found)}"


def same_shapes(v: OpView) -> str | None:
    """All inputs must have the same shape (no broadcasting)."""
    bad = next((i for i, t in enumerate(v.args) if t.shape != v.args[0].shape), None)
    return None if bad is None else f"input {bad} is {list(v.args[bad].shape)}, input 0 is {list(v.args[0].shape)}"


def _int8_quantized(v: OpView) -> bool:
    return v.out.dtype == "int8" and all(t.quant is not None and not t.quant.per_channel for t in (*v.args, v.out))


def same_quantization(v: OpView) -> str | None:
    """int8 inputs and output must be quantized per tensor, every input with the first input's
    scale and zero point."""
    if v.out.dtype != "int8" or same_dtype(v) is not None:
        return None
    if not _int8_quantized(v):
        return "a tensor is not quantized per tensor"
    q0 = v.args[0].quant
    bad = next((i for i, t in enumerate(v.args) if (f32(t.quant.s), t.quant.zp) != (f32(q0.s), q0.zp)), None)
    return None if bad is None else (f"input {bad} has scale {v.args[bad].quant.s:.9g} zero point "
                                     f"{v.args[bad].quant.zp}, input 0 {q0.s:.9g} {q0.zp}")


def output_multiplier_below_one(v: OpView) -> str | None:
    """For int8, twice the input scale must be smaller than 2**20 times the output scale (TFLM
    requires an output rescaling multiplier below one)."""
    if v.out.dtype != "int8" or same_quantization(v) is not None:
        return None
    _, (_, shift) = multipliers(v.args[0].quant.s, v.out.quant.s)
    return None if shift <= 0 else "the output scale is too small for the input scale"


def accumulator_fits(v: OpView) -> str | None:
    """For int8, the sum of the rescaled inputs (each input minus the zero point, times 2**19, plus
    TFLM's extra -zero point term) must fit in int32 for every input value: about 15 inputs at
    most (TFLM's int32 accumulator overflows beyond)."""
    if v.out.dtype != "int8" or same_quantization(v) is not None:
        return None
    zp, n = v.args[0].quant.zp, len(v.args)
    lo, hi = (-zp + n * (-128 - zp)) << (LEFT_SHIFT - 1), (-zp + n * (127 - zp)) << (LEFT_SHIFT - 1)
    ok = quant.INT32_MIN <= lo and hi <= quant.INT32_MAX
    return None if ok else f"{n} inputs with zero point {zp}"


# ---- portable kernel -----------------------------------------------------------------------------

def lower_c(call) -> CKernel:
    """mcu_add_n_s8 / mcu_add_n_f32 over an array of input pointers (concatenation.c.j2's call)."""
    out = call.type
    params = {"num_inputs": len(call.args), "size": out.size}
    if out.dtype == "float32":
        return CKernel("mcu_add_n_f32", "mcu_add_n", "mcu_add_n_f32_params", params, template="concatenation.c.j2")
    qi, qo = call.args[0].type.quant, out.quant
    (mi, si), (mo, so) = multipliers(qi.s, qo.s)
    params.update(input_offset=-qi.zp, left_shift=LEFT_SHIFT, input_multiplier=mi, input_shift=si,
                  output_multiplier=mo, output_shift=so, output_offset=qo.zp)
    return CKernel("mcu_add_n_s8", "mcu_add_n", "mcu_add_n_s8_params", params, template="concatenation.c.j2")


register(OpDef(
    name="add_n",
    tflm="add_n.cc, reference_ops::AddN",
    kind=OpKind.ELEMWISE,
    doc="The element-wise sum of two or more same-shape int8 or float32 tensors (int8: TFLM's rescaled "
        "integer sum, all inputs in one quantization).",
    infer=infer,
    reference=reference,
    checks=(two_or_more, same_dtype, same_shapes, same_quantization, output_multiplier_below_one, accumulator_fits),
    tflite={"ADD_N": parse},
    portable=Portable(lower_c, in_place=True),
))
