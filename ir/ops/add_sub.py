"""ADD and SUB: int8, int16 or int32 element-wise with numpy-style broadcasting and a fused activation.

TFLM reference: reference_integer_ops::AddFunc (and the int8 SubElementwise / BroadcastQuantSubSlow),
both computing, per element,
    a = MultiplyByQuantizedMultiplierSmallerThanOneExp((x1 - zp1) << 20, m1, s1)
    b = MultiplyByQuantizedMultiplierSmallerThanOneExp((x2 - zp2) << 20, m2, s2)
    out = MultiplyByQuantizedMultiplierSmallerThanOneExp(a +/- b, m_out, s_out) + zp_out, clamped.
The multipliers come from twice the larger input scale, computed in double from the float32
scales (CalculateOpDataAdd). Some TFLM sources of CalculateOpDataSub compute them in float32
instead; the TFLM we verify against computes SUB in double as well, and so do we (the float32
variant differs on a few input pairs for some scales; tests/ops/test_arith_ops.py checks this).
Both use the general path whatever the quantization (no "same scale" shortcut for int8 in TFLM).
A multiplier below 2**-32 is flushed to (0, 0) by QuantizeMultiplier (an input so much finer than
the other then contributes nothing, an output so much coarser is its zero point): well defined in
TFLM, and computed the same way here.

int32 tensors (no quantization; TFLM's reference_ops::Add / Sub on int32) add or subtract the raw
values, wrapping on overflow. TFLM's int32 ADD ignores the fused activation (it clamps to the whole
int32 range), its int32 SUB applies it (CalculateActivationRange: RELU [0, max], RELU6 [0, 6],
RELU_N1_TO_1 [-1, 1]). The int32 helpers here serve MUL, DIV and SQUARED_DIFFERENCE too.
int16 (TFLM's reference_ops::Add / BroadcastAdd6DSlow with pot_scale false, its Sub likewise): the
same general path with a left shift of 15 instead of 20 (the multipliers derived with 2**15), the
zero points applied (|x - zp| <= 65535, so (x - zp) << 15 fits in int32) and the int16 range.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _portable

LEFT_SHIFT = {"int8": 20, "int16": 15}  # TFLM's left shift by the output type
MAX_RANK = 6  # TFLM's RuntimeShape holds at most 6 dimensions


def parse(ctx):
    return [ctx.inputs[0], ctx.inputs[1]], {"activation": c.activation(ctx.options())}


def infer(args, attrs):
    return tuple(np.broadcast_shapes(args[0].shape, args[1].shape)), args[0].dtype


def multipliers(s1: float, s2: float, s_out: float, float32_prepare: bool = False, left_shift: int = 20):
    """((m1, sh1), (m2, sh2), (m_out, sh_out)) as TFLM's Prepare derives them (`float32_prepare`
    gives the float32-arithmetic variant of some TFLM sources, for tests only)."""
    f32 = np.float32
    if float32_prepare:  # float arithmetic, widened to double at the end (not what TFLM runs)
        twice = f32(2) * max(f32(s1), f32(s2))
        reals = (float(f32(s1) / twice), float(f32(s2) / twice),
                 float(twice / (f32(1 << left_shift) * f32(s_out))))
    else:  # TFLM (ADD and SUB): double arithmetic on the float32 scales
        twice = 2.0 * float(max(f32(s1), f32(s2)))
        reals = (float(f32(s1)) / twice, float(f32(s2)) / twice,
                 twice / ((1 << left_shift) * float(f32(s_out))))
    return tuple(quant.quantize_multiplier(r) for r in reals)


def _scale(x, mult, shift):
    """MultiplyByQuantizedMultiplierSmallerThanOneExp (shift <= 0)."""
    return quant.multiply_by_quantized_multiplier_smaller_than_one_exp(x, mult, shift)


def _binary(args, v: OpView, sign: int) -> np.ndarray:
    q1, q2, qo = v.args[0].quant, v.args[1].quant, v.out.quant
    shift = LEFT_SHIFT[v.out.dtype]
    (m1, s1), (m2, s2), (mo, so) = multipliers(q1.s, q2.s, qo.s, left_shift=shift)
    x1, x2 = np.broadcast_arrays(args[0].astype(np.int64), args[1].astype(np.int64))
    a = _scale((x1 - q1.zp) * (1 << shift), m1, s1)
    b = _scale((x2 - q2.zp) * (1 << shift), m2, s2)
    raw = _scale(a + sign * b, mo, so) + qo.zp
    lo, hi = c.act_range(v)
    return np.clip(raw, lo, hi).astype(v.out.np_dtype).reshape(v.out.shape)


def reference_add(args, v: OpView):
    if v.out.dtype == "int32":
        return int32_reference(args, v, np.add, activation=False)
    return _binary(args, v, +1)


def reference_sub(args, v: OpView):
    if v.out.dtype == "int32":
        return int32_reference(args, v, np.subtract)
    return _binary(args, v, -1)


# ---- int32: raw values, wrapping ------------------------------------------------------------------

def int32_act_range(activation: str) -> tuple[int, int]:
    """TFLM's CalculateActivationRange for int32 outputs (other activations: no clamp)."""
    return {"RELU": (0, quant.INT32_MAX), "RELU6": (0, 6), "RELU_N1_TO_1": (-1, 1)}.get(
        activation, (quant.INT32_MIN, quant.INT32_MAX))


def int32_reference(args, v: OpView, fn, activation: bool = True) -> np.ndarray:
    """fn on the int32 values (in int64, then wrapped to int32 as the C arithmetic wraps), clamped
    to the fused activation's range when the op applies it."""
    x1, x2 = np.broadcast_arrays(args[0].astype(np.int64), args[1].astype(np.int64))
    out = quant.wrap_int32(fn(x1, x2))
    lo, hi = int32_act_range(v.attrs.get("activation", "NONE") if activation else "NONE")
    return np.clip(out, lo, hi).astype(np.int32).reshape(v.out.shape)


def lower_s32(call, activation: bool = True) -> CKernel:
    """mcu_<op>_s32 (firmware/kernels/c/mcu_arith_s32.c): the broadcast walk and the clamp."""
    (a, b), out = (x.type for x in call.args), call.type
    lo, hi = int32_act_range(call.attrs.get("activation", "NONE") if activation else "NONE")
    params = {"shape": _portable.broadcast_plan(a.shape, b.shape, out.shape), "act_min": lo, "act_max": hi}
    return CKernel(f"mcu_{call.op}_s32", "mcu_arith_s32", "mcu_arith_s32_params", params)


def lower_one_multiplier(call, multiplier) -> CKernel:
    """mcu_<op>_s8 (int16: mcu_<op>_s16) of a binary op rescaled by one multiplier (MUL, DIV): the
    broadcast walk, offsets, clamp and (output_multiplier, output_shift) = multiplier(s1, s2, s_out);
    int32: mcu_<op>_s32."""
    if call.type.dtype == "int32":
        return lower_s32(call)
    (a, b), out = (x.type for x in call.args), call.type
    m, shift = multiplier(a.quant.s, b.quant.s, out.quant.s)
    params = {**_portable.binary_params(call, c.act_clamp(call)), "output_multiplier": m, "output_shift": shift}
    name = f"mcu_{call.op}_{_portable.SUFFIX[out.dtype]}"
    return CKernel(name, name, f"mcu_{call.op}_params", params)


# ---- support checks -------------------------------------------------------------------------------

def int8_or_int32(v: OpView) -> str | None:
    """All inputs and the output must be int8, or all int32."""
    found = {t.dtype for t in (*v.args, v.out)}
    return None if found in ({"int8"}, {"int32"}) else f"got {', '.join(sorted(found))}"


def int8_int16_or_int32(v: OpView) -> str | None:
    """All inputs and the output must be int8, all int16, or all int32."""
    found = {t.dtype for t in (*v.args, v.out)}
    return None if found in ({"int8"}, {"int16"}, {"int32"}) else f"got {', '.join(sorted(found))}"


def all_quantized_per_tensor(v: OpView) -> str | None:
    """int8 and int16 inputs and outputs must carry per-tensor quantization parameters."""
    if v.out.dtype == "int32":
        return None
    for what, t in (("input 1", v.args[0]), ("input 2", v.args[1]), ("output", v.out)):
        if t.quant is None:
            return f"{what} is not quantized"
        if t.quant.per_channel:
            return f"{what} is quantized per channel"
        if not t.quant.s > 0:
            return f"{what} has scale {t.quant.s}"
    return None


def broadcastable(v: OpView) -> str | None:
    """The input shapes must be equal or broadcast against each other (numpy rules), with at most 6
    dimensions (TFLM's limit)."""
    return c.broadcast_problem((v.args[0].shape, v.args[1].shape), v.out.rank, MAX_RANK)


def rank_at_most_6(v: OpView) -> str | None:
    """Tensors must have at most 6 dimensions (TFLM's RuntimeShape limit)."""
    rank = max(t.rank for t in (*v.args, v.out))
    return None if rank <= MAX_RANK else f"rank {rank}"


def output_multiplier_below_one(v: OpView) -> str | None:
    """Twice the larger input scale must be smaller than 2**20 (int16: 2**15) times the output scale
    (TFLM requires an output rescaling multiplier below one). A multiplier below 2**-32 is flushed to
    zero, as TFLM does."""
    if v.out.dtype not in LEFT_SHIFT or all_quantized_per_tensor(v) is not None:
        return None
    *_, (_, shift) = multipliers(v.args[0].quant.s, v.args[1].quant.s, v.out.quant.s,
                                 left_shift=LEFT_SHIFT[v.out.dtype])
    return None if shift <= 0 else "the output scale is too small for the input scales"


def lower_c(call) -> CKernel:
    """mcu_add_s8 / mcu_sub_s8 (mcu_add_s16 / mcu_sub_s16 in mcu_add_sub_s16.c): the broadcast walk,
    offsets, clamp, the left shift and the three multipliers (int32: mcu_add_s32 / mcu_sub_s32)."""
    if call.type.dtype == "int32":
        return lower_s32(call, activation=call.op != "add")
    (a, b), out = (x.type for x in call.args), call.type
    shift = LEFT_SHIFT[out.dtype]
    (m1, s1), (m2, s2), (mo, so) = multipliers(a.quant.s, b.quant.s, out.quant.s, left_shift=shift)
    params = {**_portable.binary_params(call, c.act_clamp(call)), "left_shift": shift,
              "input1_multiplier": m1, "input1_shift": s1, "input2_multiplier": m2, "input2_shift": s2,
              "output_multiplier": mo, "output_shift": so}
    if out.dtype == "int16":
        return CKernel(f"mcu_{call.op}_s16", "mcu_add_sub_s16", f"mcu_{call.op}_params", params)
    name = f"mcu_{call.op}_{_portable.SUFFIX[out.dtype]}"
    return CKernel(name, name, f"mcu_{call.op}_params", params)


PORTABLE = Portable(lower_c)

CHECKS = (int8_int16_or_int32, all_quantized_per_tensor, broadcastable, c.supported_fused_activation,
          output_multiplier_below_one, c.fused_clamp_fits_int32)

register(OpDef(
    name="add",
    tflm="add.cc, reference_integer_ops::Add / BroadcastAdd6DSlow; int16: reference_ops::Add (general path); "
         "int32: reference_ops::Add",
    kind=OpKind.BROADCAST,
    doc=("Element-wise addition of two int8 (or two int16) tensors with broadcasting and a fused activation "
         "(int32: raw values, wrapping, the fused activation ignored as in TFLM)."),
    infer=infer,
    reference=reference_add,
    checks=CHECKS,
    tflite={"ADD": parse},
    portable=PORTABLE,
    fuses_activation=True,
))

register(OpDef(
    name="sub",
    tflm="sub.cc, SubElementwise / BroadcastQuantSubSlow (int8 and int16); int32: reference_ops::Sub",
    kind=OpKind.BROADCAST,
    doc=("Element-wise subtraction of two int8 (or two int16) tensors with broadcasting and a fused "
         "activation (int32: raw values, wrapping)."),
    infer=infer,
    reference=reference_sub,
    checks=CHECKS,
    tflite={"SUB": parse},
    portable=PORTABLE,
    fuses_activation=True,
))
