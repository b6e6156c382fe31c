"""SVDF: a rank-R singular-value-decomposition filter over a memory of the last M frames, int8 in and
out, with an int16 (or int8) activation state kept between runs (a variable tensor).

TFLM reference kernel (svdf.cc / svdf_common.cc, EvalIntegerSvdfReference<T>, T the state's type):
with B batches, I inputs, F filters (F = R * units U), M memory frames, the state [B, F, M]:

1. shift: the whole state buffer moves one element towards its start (each filter's memory ages one
   frame; the last slot of every filter is then overwritten);
2. feature matmul: dot[b, f] = sum_i wf[f, i] * (x[b, i] - x_zp) (the weights' zero point is not
   used), MultiplyByQuantizedMultiplier by scale_1 = float32(x_scale * wf_scale / state_scale),
   clamped to T's range, then + state_zp stored as T (an int8 state wraps there), in slot M - 1;
3. time matmul: t[b, f] = sum_m wt[f, m] * (state[b, f, m] - state_zp), int32 wrapping;
4. out[b, u] = bias[u] + sum_r t[b, u * R + r], MultiplyByQuantizedMultiplier by
   scale_2 = float32(state_scale * wt_scale / out_scale), + out_zp, clamped to int8.

The scales are float32 products (the C++ multiplies float params) widened to double for
QuantizeMultiplier. The fused activation is not applied by TFLM's integer kernels (only the int8
clamp), so mcuforge ignores it too. TFLM reads the bias' scale while preparing, so an int8 SVDF
without a bias crashes it: refused. The state starts (and resets) as TFLM's ResetVariableTensors
leaves it: the zero point for an int8 state, 0 for an int16 one.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import State
from mcuforge.ir.quant import multiply_by_quantized_multiplier, quantize_multiplier, wrap_int32
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from ._portable import SUFFIX

INPUT, FEATURE, TIME, BIAS, STATE = range(5)


def parse(ctx):
    if len(ctx.inputs) != 5:
        raise ctx.fail(f"SVDF takes 5 inputs, got {len(ctx.inputs)}")
    if ctx.inputs[BIAS] is None:
        raise ctx.fail("the bias is absent; TFLite Micro's int8 SVDF reads the bias scale when preparing "
                       "and crashes without one")
    for i in (FEATURE, TIME, BIAS):
        ctx.const(i)  # a clear error when one of them is not a constant
    if not isinstance(ctx.inputs[STATE], State):
        raise ctx.fail("input 4 (the activation state) must be a variable tensor, as TFLite Micro requires")
    o = ctx.options()
    attrs = {"rank": int(o.Rank()) if o is not None else 0, "activation": c.activation(o)}
    return list(ctx.inputs), attrs


def sizes(args, attrs) -> tuple[int, int, int, int, int, int]:
    """(batches, inputs, filters, memory, rank, units) from the argument shapes."""
    batches, inputs = args[INPUT].shape
    filters, memory = args[TIME].shape
    rank = attrs["rank"]
    return batches, inputs, filters, memory, rank, filters // rank


def infer(args, attrs):
    b, _, _, _, _, units = sizes(args, attrs)
    return (b, units), args[INPUT].dtype


def scales(v: OpView) -> tuple[tuple[int, int], tuple[int, int]]:
    """(multiplier, shift) of the feature and the time matmul, from TFLM's float32 expressions."""
    f32 = np.float32
    x, wf, wt, st = (v.args[i].quant.s for i in (INPUT, FEATURE, TIME, STATE))
    s1 = f32(f32(x) * f32(wf)) / f32(st)
    s2 = f32(f32(st) * f32(wt)) / f32(v.out.quant.s)
    return quantize_multiplier(float(s1)), quantize_multiplier(float(s2))


def reference(args, v: OpView):
    x, wf, wt, bias, state = args
    b, _, f, m, r, u = sizes(v.args, v.attrs)
    (m1, s1), (m2, s2) = scales(v)
    st_t = v.args[STATE]
    info = np.iinfo(st_t.np_dtype)
    st_zp = st_t.quant.zp
    flat = state.reshape(-1)
    flat[:-1] = flat[1:].copy()  # the shift, over the whole buffer as TFLM does
    mem = state.reshape(b, f, m)
    dot = c.exact_matmul(x.astype(np.int64) - v.args[INPUT].quant.zp, wf.astype(np.int64).T)
    newest = np.clip(multiply_by_quantized_multiplier(wrap_int32(dot), m1, s1), info.min, info.max) + st_zp
    mem[:, :, m - 1] = newest.astype(np.int64).astype(st_t.np_dtype)  # wraps as the C store does
    t = (mem.astype(np.int64) - st_zp) * wt.astype(np.int64)[None]
    acc = wrap_int32(bias.astype(np.int64)[None] + t.reshape(b, u, r * m).sum(axis=2))
    out = multiply_by_quantized_multiplier(acc, m2, s2) + v.out.quant.zp
    return np.clip(out, -128, 127).astype(np.int8)


# ---- support checks -------------------------------------------------------------------------------

def int8_io(v: OpView) -> str | None:
    """Input and output must be int8 (TFLM's integer SVDF; float SVDF is not supported)."""
    bad = sorted({t.dtype for t in (v.args[INPUT], v.out) if t.dtype != "int8"})
    return f"got {', '.join(bad)}" if bad else None


def operand_types(v: OpView) -> str | None:
    """Feature weights must be int8; the time weights and the state both int16 or both int8; the bias
    int32 (TFLM picks the kernel by the time weights' type and reads the state as that type)."""
    wf, wt, bias, st = (v.args[i] for i in (FEATURE, TIME, BIAS, STATE))
    if wf.dtype != "int8":
        return f"feature weights are {wf.dtype}"
    if wt.dtype not in ("int8", "int16") or st.dtype != wt.dtype:
        return f"time weights are {wt.dtype}, the state {st.dtype}"
    return None if bias.dtype == "int32" else f"bias is {bias.dtype}"


def per_tensor_quantized(v: OpView) -> str | None:
    """Input, output, both weights and the state must be quantized per tensor."""
    names = {INPUT: "input", FEATURE: "feature weights", TIME: "time weights", STATE: "state"}
    for i, what in names.items():
        q = v.args[i].quant
        if q is None or q.per_channel:
            return f"{what} {'is not quantized' if q is None else 'is quantized per channel'}"
    return None if v.out.quant is not None and not v.out.quant.per_channel else "output is not quantized per tensor"


def shapes(v: OpView) -> str | None:
    """Shapes must be TFLM's: input [batches, inputs], feature weights [filters, inputs], time weights
    [filters, memory], bias [units], state [batches, memory * filters], with rank >= 1 dividing the
    filters (units = filters / rank)."""
    x, wf, wt, bias, st = (v.args[i].shape for i in range(5))
    rank = v.attrs["rank"]
    if len(x) != 2 or len(wf) != 2 or len(wt) != 2 or len(st) != 2 or len(bias) != 1:
        return f"input {list(x)}, feature weights {list(wf)}, time weights {list(wt)}, state {list(st)}"
    if rank < 1 or wf[0] % rank:
        return f"rank {rank} for {wf[0]} filters"
    if wf[1] != x[1] or wt[0] != wf[0] or bias[0] != wf[0] // rank or st != (x[0], wt[1] * wf[0]):
        return (f"input {list(x)}, feature weights {list(wf)}, time weights {list(wt)}, bias {list(bias)}, "
                f"state {list(st)}, rank {rank}")
    return None


def bias_scale(v: OpView) -> str | None:
    """The bias scale must equal state scale * time weight scale to within 1e-5, as TFLM checks."""
    bq, st, wt = v.args[BIAS].quant, v.args[STATE].quant, v.args[TIME].quant
    b_s = float(np.float32(bq.scale[0])) if bq is not None else 0.0
    prod = float(np.float32(st.s) * np.float32(wt.s)) if st and wt else 0.0
    return None if abs(b_s - prod) < 1e-5 else f"bias scale {b_s:.6g}, state * time weight scale {prod:.6g}"


# ---- the portable kernel -------------------------------------------------------------------------

def lower_c(call) -> CKernel:
    """mcu_svdf_s8_<state>: sizes, offsets and both (multiplier, shift) pairs; no scratch (each
    unit sums its rank's time products straight into its accumulator)."""
    v = OpView(tuple(a.type for a in call.args), call.type, call.attrs)
    b, i, f, m, r, u = sizes(v.args, v.attrs)
    (m1, s1), (m2, s2) = scales(v)
    st = v.args[STATE]
    params = {"batches": b, "inputs": i, "filters": f, "memory": m, "rank": r, "units": u,
              "input_offset": -v.args[INPUT].quant.zp, "state_zero_point": st.quant.zp,
              "output_offset": v.out.quant.zp, "feature_multiplier": m1, "feature_shift": s1,
              "time_multiplier": m2, "time_shift": s2}
    suffix = SUFFIX[st.dtype]
    return CKernel(f"mcu_svdf_s8_{suffix}", "mcu_svdf_s8", "mcu_svdf_params", params)


def macs(v: OpView) -> int:
    b, i, f, m, _, _ = sizes(v.args, v.attrs)
    return b * f * (i + m)


register(OpDef(
    name="svdf",
    tflm="svdf.cc / svdf_common.cc, EvalIntegerSvdfReference (int8 and int16 state)",
    kind=OpKind.OPAQUE,
    doc="Singular value decomposition filter: int8 feature matmul into a memory of the last frames "
        "(an int16 or int8 state kept between runs), time matmul, rank reduction, bias, int8 output. "
        "The fused activation is not applied, as TFLM's integer kernel does not apply it.",
    infer=infer,
    reference=reference,
    checks=(int8_io, operand_types, per_tensor_quantized, shapes, bias_scale),
    tflite={"SVDF": parse},
    portable=Portable(lower_c),
    macs=macs,
    state_args=(STATE,),
))
