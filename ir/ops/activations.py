"""Activations: RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU and HARD_SWISH, with TFLM's semantics.

RELU, RELU6 and LEAKY_RELU take int8 or int16 (TFLM's kernels are templated on the type: the same
arithmetic with the int16 range; its RELU Prepare requires int16 zero points of 0, RELU6 and
LEAKY_RELU do not). RELU_N1_TO_1 and HARD_SWISH are int8 only: TFLM has no RELU_N1_TO_1 kernel and
its HARD_SWISH Eval refuses int16.

* RELU (TFLM ReluQuantized): rescales, out = zp_out + MultiplyByQuantizedMultiplier(x - zp_in, m, s)
  clamped to [max(-128, zp_out), 127], with (m, s) from s_in / s_out.
* RELU6 (TFLM Relu6Quantized): clamps x to [zp_in, q6] in the INPUT's quantized domain, where
  q6 = round(6 / s_in) + zp_in, and does NOT rescale to the output quantization (TFLite does).
* RELU_N1_TO_1: TFLM has no kernel for it; we follow TFLite's reference ReluX (the same arithmetic as
  TFLM's RELU, clamped to the quantized [-1, 1], but with TFLite's multiplier: the float32 quotient
  s_in / s_out widened to double).
* LEAKY_RELU (TFLM QuantizeLeakyRelu): identity multiplier s_in / s_out for x >= zp_in, alpha
  multiplier s_in * alpha / s_out otherwise (a negative alpha is applied as a positive multiplier
  and a negated result, as in current TFLM).
* HARD_SWISH (TFLM reference_ops::HardSwish): TFLite's int16 fixed-point pipeline (inputs on a
  1/128-finer scale, a "reluish" multiplier onto [-3, 3] -> [0, 1], int16 Q0.15 multipliers).

Precision: the TFLM sources write the multiplier quotients as float32 expressions widened to
double, but the interpreter we verify against computes them in double (tests/ops/test_arith_ops.py
has scales where the two differ); we compute every multiplier in double from the float32 scales.
The clamp bounds (round(6 / s), roundf(bound / s_out)) are float32 divisions, as in TFLM.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, get_op, register

from . import _common as c
from . import _fixedpoint as fp
from . import _portable
from . import _s16
from .add_sub import rank_at_most_6

f32 = np.float32


def _f64(x: float) -> float:
    """A float32 value from the file, widened to double."""
    return float(f32(x))


def parse_plain(ctx):
    return [ctx.inputs[0]], {}


def parse_leaky(ctx):
    o = ctx.options()
    alpha = float(f32(o.Alpha())) if o is not None else 0.0
    return [ctx.inputs[0]], {"alpha": alpha}


def infer(args, attrs):
    return args[0].shape, args[0].dtype


def _round_half_away(x):
    """roundf / std::round on float values: halves away from zero."""
    x = np.asarray(x, dtype=np.float64)
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


# ---- RELU / RELU_N1_TO_1 (rescaling clamps) -------------------------------------------------------

def relu_x(x: np.ndarray, v: OpView, act_min: float | None, act_max: float | None,
           float32_quotient: bool = False) -> np.ndarray:
    """TFLM's ReluQuantized / TFLite's ReluX: rescale to the output quantization, then clamp to the
    quantized [act_min, act_max] (bounds computed with roundf(bound / s_out) in float32). The
    multiplier is s_in / s_out in double (TFLM), or as a float32 quotient (TFLite)."""
    qi, qo = v.args[0].quant, v.out.quant
    m, s = relu_multiplier(v, float32_quotient)
    lo, hi = quant.dtype_range(v.out.dtype)
    if act_min is not None:
        lo = max(lo, qo.zp + int(_round_half_away(f32(act_min) / f32(qo.s))))
    if act_max is not None:
        hi = min(hi, qo.zp + int(_round_half_away(f32(act_max) / f32(qo.s))))
    out = qo.zp + quant.multiply_by_quantized_multiplier(x.astype(np.int64) - qi.zp, m, s)
    return np.clip(out, lo, hi).astype(v.out.np_dtype)


def relu_bounds(v: OpView) -> tuple[int, int]:
    """RELU's clamp: [max(type min, zp_out + round(0 / s_out)), type max] (CalculateReluOpData)."""
    lo, hi = quant.dtype_range(v.out.dtype)
    return max(lo, v.out.quant.zp), hi


def relu_multiplier(v: OpView, float32_quotient: bool) -> tuple[int, int]:
    """RELU's (TFLM) or RELU_N1_TO_1's (TFLite, float32 quotient) rescaling multiplier s_in / s_out."""
    qi, qo = v.args[0].quant, v.out.quant
    real = float(f32(qi.s) / f32(qo.s)) if float32_quotient else _f64(qi.s) / _f64(qo.s)
    return quant.quantize_multiplier(real)


def reference_relu(args, v: OpView):
    return relu_x(args[0], v, 0.0, None)


def reference_relu_n1_to_1(args, v: OpView):
    return relu_x(args[0], v, -1.0, 1.0, float32_quotient=True)


# ---- RELU6 (clamp in the input domain) ------------------------------------------------------------

def relu6_bounds(s_in: float, zp_in: int, dtype: str = "int8") -> tuple[int, int]:
    """TFLM's Relu6Prepare: (zero, six) = (zp_in, FloatToQuantizedType<T>(6.0f, s_in, zp_in))."""
    six = int(_round_half_away(f32(6.0) / f32(s_in))) + zp_in
    lo, hi = quant.dtype_range(dtype)
    return zp_in, min(max(six, lo), hi)


def reference_relu6(args, v: OpView):
    zero, six = relu6_bounds(v.args[0].quant.s, v.args[0].quant.zp, v.args[0].dtype)
    return np.clip(args[0], zero, six).astype(v.out.np_dtype)


# ---- LEAKY_RELU -----------------------------------------------------------------------------------

def leaky_relu_multipliers(s_in: float, alpha: float, s_out: float):
    """((identity mult, shift), (|alpha| mult, shift)) as TFLM's CalculateOpDataLeakyRelu."""
    identity = quant.quantize_multiplier(_f64(s_in) / _f64(s_out))
    am, ashift = quant.quantize_multiplier(abs(_f64(s_in) * _f64(alpha) / _f64(s_out)))
    return identity, (am, ashift)


def reference_leaky_relu(args, v: OpView):
    qi, qo = v.args[0].quant, v.out.quant
    alpha = v.attrs["alpha"]
    (mi, si), (ma, sa) = leaky_relu_multipliers(qi.s, alpha, qo.s)
    x = args[0].astype(np.int64) - qi.zp
    pos = quant.multiply_by_quantized_multiplier(x, mi, si)
    negative = quant.multiply_by_quantized_multiplier(x, ma, sa)
    if alpha < 0:
        negative = -negative
    out = qo.zp + np.where(x >= 0, pos, negative)
    lo, hi = quant.dtype_range(v.out.dtype)
    return np.clip(out, lo, hi).astype(v.out.np_dtype)


# ---- HARD_SWISH -----------------------------------------------------------------------------------

def hard_swish_params(s_in: float, s_out: float) -> dict[str, int]:
    """TFLM's HardSwishPrepare (int8): multipliers (s_in / 128) / s_out and (s_in / 128) / (3 / 32768)
    (both scalings by constants are exact), quantized, then rounded from Q0.31 to Q0.15."""
    hires_input_scale = _f64(s_in) / 128.0
    out_m, out_e = quant.quantize_multiplier(hires_input_scale / _f64(s_out))
    rel_m, rel_e = quant.quantize_multiplier(hires_input_scale / (3.0 / 32768.0))
    return {
        "output_multiplier": fp.downscale_int32_to_int16_multiplier(out_m),
        "output_exponent": out_e,
        "reluish_multiplier": fp.downscale_int32_to_int16_multiplier(rel_m),
        "reluish_exponent": rel_e,
    }


def hard_swish_int8(x: np.ndarray, zp_in: int, zp_out: int, p: dict[str, int]) -> np.ndarray:
    value = fp.wrap_int16(x.astype(np.int64) - zp_in)
    hires = fp.wrap_int16(value * (1 << 7))
    preshift_output = fp.srdhm_16(hires, p["output_multiplier"])
    reluish = hires
    e = p["reluish_exponent"]
    if e > 0:
        reluish = fp.saturating_left_shift_16(reluish, e - 1)
    reluish = fp.srdhm_16(reluish, p["reluish_multiplier"])
    if e > 0:
        reluish = fp.saturating_left_shift_16(reluish, 1)
    if e < 0:
        reluish = fp.rdbpot_16(reluish, -e)
    reluish = fp.wrap_int16((reluish + (1 << 15)) >> 1)
    out = fp.saturating_doubling_high_mul_16(reluish, preshift_output)
    out = fp.rdbpot_16(out, -p["output_exponent"])
    out = fp.wrap_int16(out + zp_out)
    return np.clip(out, -128, 127).astype(np.int8)


def reference_hard_swish(args, v: OpView):
    qi, qo = v.args[0].quant, v.out.quant
    return hard_swish_int8(args[0], qi.zp, qo.zp, hard_swish_params(qi.s, qo.s))


# ---- support checks -------------------------------------------------------------------------------

def hard_swish_output_scale(v: OpView) -> str | None:
    """The input scale must be smaller than 128 times the output scale (TFLM requires an output
    multiplier exponent of at most 0)."""
    if c.quantized_per_tensor_io(v) is not None:
        return None
    e = hard_swish_params(v.args[0].quant.s, v.out.quant.s)["output_exponent"]
    return None if e <= 0 else f"input scale {v.args[0].quant.s:.6g}, output scale {v.out.quant.s:.6g}"


def _quantized(v: OpView) -> bool:
    return c.quantized_per_tensor_io(v) is None


def relu_rescale_below_2_30(v: OpView) -> str | None:
    """The rescaling multiplier, input scale / output scale, must be below 2^30: TFLM shifts the input
    left by the multiplier's exponent in int32, which is undefined from a shift of 31."""
    return c.left_shift_detail(relu_multiplier(v, False)[1]) if _quantized(v) else None


def relu_n1_to_1_rescale_below_2_30(v: OpView) -> str | None:
    """The rescaling multiplier, input scale / output scale (a float32 quotient, as TFLite), must be
    below 2^30: the input is shifted left by the multiplier's exponent in int32, which is undefined
    from a shift of 31."""
    return c.left_shift_detail(relu_multiplier(v, True)[1]) if _quantized(v) else None


def relu_n1_to_1_bounds_fit(v: OpView) -> str | None:
    """The clamp bounds, the output zero point plus round(+-1 / output scale), must fit in int32 (the
    conversion to int32 is undefined beyond)."""
    return c.clamp_detail("RELU_N1_TO_1", v.out.quant.s, v.out.quant.zp) if _quantized(v) else None


def relu6_bound_fits(v: OpView) -> str | None:
    """The clamp bound, the input zero point plus round(6 / input scale), must fit in int32: TFLM's
    conversion of it to int32 is undefined beyond."""
    q = v.args[0].quant
    return c.clamp_detail("RELU6", q.s, q.zp) if _quantized(v) else None


def leaky_relu_rescale_below_2_30(v: OpView) -> str | None:
    """Both rescaling multipliers, input scale / output scale and input scale x |alpha| / output
    scale, must be below 2^30: TFLM shifts the input left by their exponents in int32, which is
    undefined from a shift of 31."""
    if not _quantized(v):
        return None
    (_, si), (_, sa) = leaky_relu_multipliers(v.args[0].quant.s, v.attrs["alpha"], v.out.quant.s)
    return c.left_shift_detail(si, "s_in / s_out") or c.left_shift_detail(sa, "s_in x |alpha| / s_out")


def hard_swish_reluish_shift(v: OpView) -> str | None:
    """The input scale must be below 3 x 2^23 (about 2.5e7): TFLM's "reluish" multiplier, input
    scale / 128 / (3 / 32768), then has an exponent of at most 31; its left shift by the exponent
    minus one is undefined from 31."""
    if not _quantized(v):
        return None
    e = hard_swish_params(v.args[0].quant.s, v.out.quant.s)["reluish_exponent"]
    return None if e <= quant.MAX_LEFT_SHIFT + 1 else f"input scale {v.args[0].quant.s:.6g} gives exponent {e}"


def relu_int16_zero_points(v: OpView) -> str | None:
    """int16 input and output must have zero point 0 (TFLM's RELU Prepare requires it)."""
    if v.args[0].dtype != "int16" or not _quantized(v):
        return None
    zps = (v.args[0].quant.zp, v.out.quant.zp)
    return None if zps == (0, 0) else f"input zero point {zps[0]}, output {zps[1]}"


_CHECKS = (c.quantized_per_tensor_io, rank_at_most_6)
_INT8 = (c.int8_activations,)
_INT8_OR_16 = (_s16.int8_or_int16_activations,)

# A fused activation followed by a standalone one (in the same quantization) is one fused activation.
_COMBINED = {("NONE", "RELU"): "RELU", ("NONE", "RELU6"): "RELU6", ("RELU", "RELU"): "RELU",
             ("RELU", "RELU6"): "RELU6", ("RELU6", "RELU"): "RELU6", ("RELU6", "RELU6"): "RELU6"}


def fold_into_producer(call, ctx):
    """RELU / RELU6 whose input and output quantization are equal, after an op with a fused
    activation that nothing else reads -> that op with the combined activation (the standalone op's
    clamp, zp .. zp + round(6 / s), is exactly the fused activation's range in the same quantization)."""
    from dataclasses import replace

    from mcuforge.ir.expr import Call

    x = call.args[0]
    if not isinstance(x, Call) or x.callee is not None or ctx.user_count(x) != 1:
        return None
    if not get_op(x.op).fuses_activation:
        return None
    if x.type.quant is None or x.type.quant != call.type.quant or x.type.dtype not in ("int8", "int16"):
        return None
    act = _COMBINED.get((x.attrs.get("activation", "NONE"), get_op(call.op).folds_as))
    if act is None:
        return None
    return replace(x, attrs={**x.attrs, "activation": act}, name=call.name, tensor=call.tensor,
                   sources=x.sources + call.sources)

def lower_relu6(call) -> CKernel:
    """mcu_relu6_s8 / mcu_relu6_s16: a clamp to TFLM's two bounds in the input domain."""
    x = call.args[0].type
    lo, hi = relu6_bounds(x.quant.s, x.quant.zp, x.dtype)
    if x.dtype == "int16":
        return CKernel("mcu_relu6_s16", "mcu_activations_s16", "mcu_relu6_params",
                       {"size": call.type.size, "act_min": lo, "act_max": hi})
    return CKernel("mcu_relu6_s8", "mcu_relu6_s8", "mcu_relu6_params",
                   {"size": call.type.size, "act_min": lo, "act_max": hi})


def lower_relu(call) -> CKernel:
    """int8: a 256-entry table; int16: mcu_relu_s16, TFLM's rescale and clamp."""
    x, out = call.args[0].type, call.type
    if x.dtype == "int8":
        return _portable.table_kernel(call)
    v = OpView((x,), out, call.attrs)
    m, s = relu_multiplier(v, False)
    lo, hi = relu_bounds(v)
    return CKernel("mcu_relu_s16", "mcu_activations_s16", "mcu_rescale_s16_params",
                   {"size": out.size, "input_offset": -x.quant.zp, "multiplier": m, "shift": s,
                    "output_offset": out.quant.zp, "act_min": lo, "act_max": hi})


def lower_leaky_relu(call) -> CKernel:
    """int8: a 256-entry table; int16: mcu_leaky_relu_s16 with TFLM's two multipliers."""
    x, out = call.args[0].type, call.type
    if x.dtype == "int8":
        return _portable.table_kernel(call)
    (mi, si), (ma, sa) = leaky_relu_multipliers(x.quant.s, call.attrs["alpha"], out.quant.s)
    return CKernel("mcu_leaky_relu_s16", "mcu_activations_s16", "mcu_leaky_relu_s16_params",
                   {"size": out.size, "input_offset": -x.quant.zp, "output_offset": out.quant.zp,
                    "identity_multiplier": mi, "identity_shift": si, "alpha_multiplier": ma, "alpha_shift": sa,
                    "alpha_negative": int(call.attrs["alpha"] < 0)})


TABLE = Portable(_portable.table_kernel, in_place=True)

TFLM = {"relu": "activations.cc, ReluQuantized", "relu6": "activations.cc, Relu6Quantized",
        "relu_n1_to_1": "none (TFLM has no RELU_N1_TO_1 kernel): TFLite's reference ReluX",
        "leaky_relu": "leaky_relu.cc, QuantizeLeakyRelu", "hard_swish": "hard_swish.cc, reference_ops::HardSwish"}

for _name, _doc, _ref, _parse, _extra, _portable_kernel, _folds_as in (
    ("relu", "max(x, 0), rescaled to the output quantization; int8 or int16.", reference_relu, parse_plain,
     _INT8_OR_16 + (relu_int16_zero_points, relu_rescale_below_2_30), Portable(lower_relu, in_place=True), "RELU"),
    ("relu6", "min(max(x, 0), 6), clamped in the input's quantized domain (as TFLM: no rescaling); int8 or int16.",
     reference_relu6, parse_plain, _INT8_OR_16 + (relu6_bound_fits,), Portable(lower_relu6, in_place=True), "RELU6"),
    ("relu_n1_to_1", ("min(max(x, -1), 1), rescaled to the output quantization (TFLM has no kernel for "
                      "this op; TFLite's reference semantics)."), reference_relu_n1_to_1, parse_plain,
     _INT8 + (relu_n1_to_1_rescale_below_2_30, relu_n1_to_1_bounds_fit), TABLE, None),
    ("leaky_relu", "x for x >= 0, alpha * x otherwise, rescaled to the output quantization; int8 or int16.",
     reference_leaky_relu, parse_leaky, _INT8_OR_16 + (leaky_relu_rescale_below_2_30,),
     Portable(lower_leaky_relu, in_place=True), None),
    ("hard_swish", "x * relu6(x + 3) / 6 in TFLM's int16 fixed-point pipeline; int8 (TFLM has no int16 kernel).",
     reference_hard_swish, parse_plain, _INT8 + (hard_swish_output_scale, hard_swish_reluish_shift), TABLE, None),
):
    register(OpDef(
        name=_name,
        tflm=TFLM[_name],
        kind=OpKind.ELEMWISE,
        doc=_doc,
        infer=infer,
        reference=_ref,
        checks=_extra[:1] + _CHECKS + _extra[1:],
        tflite={_name.upper(): _parse},
        legalize=(fold_into_producer,) if _folds_as else (),
        portable=_portable_kernel,
        folds_as=_folds_as,
    ))
