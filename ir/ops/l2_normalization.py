"""L2_NORMALIZATION over the last axis: int8 input, int8 output with scale 1/128 and zero point 0,
or float32.

TFLM (l2norm.cc, reference_integer_ops::L2Normalization): per row, with a = x - zp_in,
    acc = sum(a * a)                                          (int32)
    (m, s) = GetInvSqrtQuantizedMultiplierExp(acc, -1)        (1 / sqrt(acc))
    out = MultiplyByQuantizedMultiplier(a, m, s + 7)          clamped to int8,
i.e. a / |a| in units of 1/128, whatever the output tensor's quantization says (TFLM does not read
it; TFLite requires 1/128 and 0, and so do we). TFLM requires at most 4 dimensions and no fused
activation. Rows of more than 33025 elements could overflow the int32 sum (refused).
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from . import _fixedpoint as fp

OUTPUT_SCALE_SHIFT = 7  # the output is in units of 1/128
MAX_RANK = 4
MAX_DEPTH = 33025  # 255**2 * depth < 2**31


def parse(ctx):
    return [ctx.inputs[0]], {"activation": c.activation(ctx.options())}


def infer(args, attrs):
    return args[0].shape, args[0].dtype


FLOAT_EPSILON = np.float32(1e-6)


def reference_float(x: np.ndarray) -> np.ndarray:
    """TFLM's float path: a sequential float32 sum of squares per row (numpy's float32 operations
    round each step, as C without contraction does), its square root floored at epsilon."""
    x = x.astype(np.float32)
    acc = np.zeros(x.shape[:-1], np.float32)
    with np.errstate(all="ignore"):
        for c in range(x.shape[-1]):
            acc = acc + x[..., c] * x[..., c]
        norm = np.sqrt(acc)
        norm = np.where(norm < FLOAT_EPSILON, FLOAT_EPSILON, norm).astype(np.float32)  # std::max keeps NaN
        return (x / norm[..., None]).astype(np.float32)


def reference(args, v: OpView):
    if v.out.dtype == "float32":
        return reference_float(args[0])
    a = args[0].astype(np.int64) - v.args[0].quant.zp
    acc = (a * a).sum(axis=-1, keepdims=True)
    m, s = fp.inv_sqrt_multiplier_exp(acc)
    out = quant.multiply_by_quantized_multiplier(a, m, s + OUTPUT_SCALE_SHIFT)
    return np.clip(out, -128, 127).astype(np.int8)


def supported_types(v: OpView) -> str | None:
    """Input and output must both be int8 or both float32."""
    found = {v.args[0].dtype, v.out.dtype}
    return None if found in ({"int8"}, {"float32"}) else f"got {', '.join(sorted(found))}"


def int8_quantized_io(v: OpView) -> str | None:
    """int8 input and output must carry per-tensor quantization parameters."""
    return None if v.out.dtype != "int8" else c.quantized_per_tensor_io(v)


def output_quantization(v: OpView) -> str | None:
    """An int8 output must be quantized with scale 1/128 and zero point 0 (TFLM writes values in
    that quantization whatever the tensor says)."""
    if v.out.dtype != "int8":
        return None
    q = v.out.quant
    if q is None or q.per_channel:
        return "output is not quantized per tensor"
    return None if np.float32(q.s) == np.float32(1 / 128) and q.zp == 0 else \
        f"output has scale {q.s:.8g} and zero point {q.zp}"


def rank_and_depth(v: OpView) -> str | None:
    """The input must have 1 to 4 dimensions (TFLM's limit) and, for int8, at most 33025 elements
    on the last axis (so that the sum of squares fits int32)."""
    shape = v.args[0].shape
    if not 1 <= len(shape) <= MAX_RANK:
        return f"rank {len(shape)}"
    return None if shape[-1] <= MAX_DEPTH or v.out.dtype != "int8" else f"the last axis has {shape[-1]} elements"


def no_activation(v: OpView) -> str | None:
    """The fused activation must be NONE (TFLM's kernel supports no other)."""
    act = v.attrs.get("activation", "NONE")
    return None if act == "NONE" else f"got {act}"


def lower_c(call) -> CKernel:
    """mcu_l2_normalization_s8 (rows, depth and the input offset) or mcu_l2_normalization_f32."""
    depth = call.args[0].type.shape[-1]
    rows = call.type.size // depth if depth else 0
    if call.type.dtype == "float32":
        return CKernel("mcu_l2_normalization_f32", "mcu_l2_normalization_s8", "mcu_l2_normalization_params",
                       {"rows": rows, "depth": depth, "input_offset": 0})
    params = {"rows": rows, "depth": depth, "input_offset": -call.args[0].type.quant.zp}
    return CKernel("mcu_l2_normalization_s8", "mcu_l2_normalization_s8", "mcu_l2_normalization_params", params)


register(OpDef(
    name="l2_normalization",
    tflm="l2norm.cc, reference_integer_ops::L2Normalization (float32: reference_ops::L2Normalization)",
    kind=OpKind.REDUCTION,
    doc="x / sqrt(sum(x**2)) over the last axis: int8 in, int8 out with scale 1/128 and zero point 0; or float32.",
    infer=infer,
    reference=reference,
    checks=(supported_types, int8_quantized_io, output_quantization, rank_and_depth, no_activation),
    tflite={"L2_NORMALIZATION": parse},
    portable=Portable(lower_c),
))
