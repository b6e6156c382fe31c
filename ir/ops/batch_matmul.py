"""BATCH_MATMUL: int8 matrix products over broadcast batch axes, adj_x / adj_y transposing the last
two axes of either operand, requantized to the int8 output.

TFLM (batch_matmul.cc, reference_ops::BatchMatMul with FullyConnectedParams) accepts operands of rank
2 to 5 whose leading (batch) axes broadcast, accumulates in int32 (wrapping)
sum_k (lhs[i, k] - lhs_zp) * (rhs[k, j] - rhs_zp), and requantizes with QuantizeMultiplier of
double(lhs_scale) * double(rhs_scale) / double(output_scale) (the product in double, not float32:
tests/ops/test_batch_matmul.py pins cases where the two differ), double rounding, plus the output
zero point, clamped to int8. There is no bias and no fused activation. Either operand may be constant."""

from __future__ import annotations

import math

import numpy as np
from mcuforge.firmware.macros import kernel_size
from mcuforge.ir import quant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

BATCH_RANK = 3  # batch axes of TFLM's 5-D extended shapes


def parse(ctx):
    o = ctx.options()
    attrs = {"adj_x": bool(o.AdjX()) if o else False, "adj_y": bool(o.AdjY()) if o else False}
    return [ctx.inputs[0], ctx.inputs[1]], attrs


def matrix_dims(lhs, rhs, attrs) -> tuple[int, int, int, int]:
    """(rows, lhs depth, rhs depth, cols) after adj_x / adj_y."""
    rows, ldepth = (lhs[-1], lhs[-2]) if attrs["adj_x"] else (lhs[-2], lhs[-1])
    rdepth, cols = (rhs[-1], rhs[-2]) if attrs["adj_y"] else (rhs[-2], rhs[-1])
    return rows, ldepth, rdepth, cols


def batch_shape(lhs, rhs) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(tuple(lhs[:-2]), tuple(rhs[:-2])))


def infer(args, attrs):
    lhs, rhs = args[0].shape, args[1].shape
    rows, _, _, cols = matrix_dims(lhs, rhs, attrs)
    return batch_shape(lhs, rhs) + (rows, cols), args[0].dtype


def multiplier(v_lhs, v_rhs, v_out) -> tuple[int, int]:
    product = np.float64(v_lhs.quant.s) * np.float64(v_rhs.quant.s)
    return quant.quantize_multiplier(float(product / np.float64(v_out.quant.s)))


def reference(args, v: OpView):
    lhs, rhs = (a.astype(np.int64) - t.quant.zp for a, t in zip(args, v.args))
    if v.attrs["adj_x"]:
        lhs = np.swapaxes(lhs, -1, -2)
    if v.attrs["adj_y"]:
        rhs = np.swapaxes(rhs, -1, -2)
    acc = quant.wrap_int32(np.matmul(lhs, rhs))
    mult, shift = multiplier(*v.args, v.out)
    out = quant.multiply_by_quantized_multiplier(acc, mult, shift) + v.out.quant.zp
    return np.clip(out, -128, 127).astype(np.int8).reshape(v.out.shape)


def macs(v: OpView) -> int:
    rows, depth, _, cols = matrix_dims(v.args[0].shape, v.args[1].shape, v.attrs)
    return math.prod(batch_shape(v.args[0].shape, v.args[1].shape)) * rows * depth * cols


# ---- support checks ------------------------------------------------------------------------------

def int8_operands(v: OpView) -> str | None:
    """Both operands and the output must be int8, quantized per tensor."""
    for what, t in (("lhs", v.args[0]), ("rhs", v.args[1]), ("output", v.out)):
        if t.dtype != "int8":
            return f"{what} is {t.dtype}"
        if t.quant is None or t.quant.per_channel:
            return f"{what} is not quantized per tensor"
    return None


def shapes(v: OpView) -> str | None:
    """Both operands must have rank 2 to 5, batch axes that broadcast against each other, and the
    same depth (lhs columns, or rows with adj_x; rhs rows, or columns with adj_y)."""
    lhs, rhs = v.args[0].shape, v.args[1].shape
    if not (2 <= len(lhs) <= 5 and 2 <= len(rhs) <= 5):
        return f"lhs {list(lhs)}, rhs {list(rhs)}"
    try:
        batch_shape(lhs, rhs)
    except ValueError:
        return f"batch axes {list(lhs[:-2])} and {list(rhs[:-2])} do not broadcast"
    _, ld, rd, _ = matrix_dims(lhs, rhs, v.attrs)
    return None if ld == rd else f"depths {ld} and {rd}"


# ---- portable kernel -----------------------------------------------------------------------------

def operand_steps(shape, batch) -> list[int]:
    """An operand's element step per output batch axis (left-padded to 3; 0 where it broadcasts)."""
    ext = (1,) * (len(batch) - (len(shape) - 2)) + tuple(shape[:-2])
    matrix = shape[-1] * shape[-2]
    steps = [m * matrix if d != 1 else 0 for d, m in zip(ext, _strides(ext))]
    return [0] * (BATCH_RANK - len(steps)) + steps


def _strides(dims) -> list[int]:
    out, acc = [], 1
    for d in reversed(dims):
        out.append(acc)
        acc *= d
    return out[::-1]


def lower_c(call) -> CKernel:
    """mcu_batch_matmul_s8: batch steps per operand, row / depth / column steps (adj_x, adj_y), the
    zero-point offsets and the output multiplier; a scratch column of int16."""
    lt, rt = call.args[0].type, call.args[1].type
    lhs, rhs = lt.shape, rt.shape
    rows, depth, _, cols = matrix_dims(lhs, rhs, call.attrs)
    batch = batch_shape(lhs, rhs)
    if len(batch) > BATCH_RANK:  # unreachable: ranks are at most 5
        raise ValueError(f"{len(batch)} batch axes")
    mult, shift = multiplier(lt, rt, call.type)
    params = {
        "batch": [1] * (BATCH_RANK - len(batch)) + list(batch),
        "lhs_batch_step": operand_steps(lhs, batch), "rhs_batch_step": operand_steps(rhs, batch),
        "rows": rows, "cols": cols, "depth": depth,
        "lhs_row_step": 1 if call.attrs["adj_x"] else lhs[-1], "lhs_depth_step": lhs[-1] if call.attrs["adj_x"] else 1,
        "rhs_depth_step": 1 if call.attrs["adj_y"] else rhs[-1], "rhs_col_step": rhs[-1] if call.attrs["adj_y"] else 1,
        "lhs_offset": -lt.quant.zp, "rhs_offset": -rt.quant.zp, "output_offset": call.type.quant.zp,
        "multiplier": mult, "shift": shift,
    }
    return CKernel("mcu_batch_matmul_s8", "mcu_batch_matmul_s8", "mcu_batch_matmul_params", params,
                   scratch=kernel_size("c", "MCU_BATCH_MATMUL_S8_SCRATCH_BYTES", depth))


register(OpDef(
    name="batch_matmul",
    tflm="batch_matmul.cc, reference_ops::BatchMatMul (int8)",
    kind=OpKind.COMPLEX,
    doc="int8 matrix products over broadcast batch axes (ranks 2-5), adj_x / adj_y, requantized.",
    infer=infer,
    reference=reference,
    checks=(int8_operands, shapes),
    tflite={"BATCH_MATMUL": parse},
    macs=macs,
    portable=Portable(lower_c),
))
