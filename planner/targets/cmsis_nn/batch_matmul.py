"""BATCH_MATMUL on cmsis-nn: mcu_cmsis_batch_matmul_s8, every int8 case the registry admits (ranks 2
to 5, broadcast batch axes, adj_x / adj_y, either operand constant or both activations).

The kernel reads lhs as [rows][depth] and rhs as [cols][depth]: a constant operand is stored that way
(transposed here, at compile time); an activation stored the other way is transposed by the kernel,
per batch, into its scratch. The fast requantization record (requant.py) comes from the accumulator
bounds: per column of a constant rhs, else the product of the two operands' ranges."""

from __future__ import annotations

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.expr import Call, Constant, Expr
from mcuforge.ir.ops import _common as c
from mcuforge.ir.ops import batch_matmul as bmm

from ...kernel import KernelCall
from ...patterns import op, wildcard
from . import common
from .common import Composite, Lowered, scratch_size
from .requant import acc_bounds, requant_records


def check(caps: dict[str, Expr]) -> str | None:
    """int8 operands and output (the registry's rules otherwise: the kernel takes every shape)."""
    return common.int8_io(caps)


def kernel_layout(call: Call) -> tuple[dict[str, np.ndarray], bool, bool]:
    """The constant operands as the kernel reads them (arg0 [.., rows, depth], arg1 [.., cols, depth])
    and whether the kernel transposes the lhs / rhs activation."""
    (lhs, rhs), adj_x, adj_y = call.args, call.attrs["adj_x"], call.attrs["adj_y"]
    consts = {}
    for i, (a, swap) in enumerate(((lhs, adj_x), (rhs, not adj_y))):
        if isinstance(a, Constant):
            consts[f"arg{i}"] = np.ascontiguousarray(np.swapaxes(a.data, -1, -2) if swap else a.data)
    return consts, adj_x and "arg0" not in consts, (not adj_y) and "arg1" not in consts


def bounds(call: Call, consts: dict[str, np.ndarray], lo: int, ro: int) -> tuple[int, int]:
    """The smallest and largest accumulator sum_k (lhs + lo) * (rhs + ro) the kernel can produce."""
    depth = bmm.matrix_dims(call.args[0].type.shape, call.args[1].type.shape, call.attrs)[1]
    if "arg1" in consts:  # per column of the constant rhs, over every lhs value
        cols = consts["arg1"].astype(np.int64).reshape(-1, depth) + ro
        l, h = acc_bounds(np.zeros(cols.shape[0], np.int64), cols, -128 + lo, 127 + lo)
        return int(l.min()), int(h.max())
    corners = [a * b for a in (-128 + lo, 127 + lo) for b in (-128 + ro, 127 + ro)]
    return depth * min(min(corners), 0), depth * max(max(corners), 0)


def lower(call: Call) -> Lowered:
    lt, rt = call.args[0].type, call.args[1].type
    rows, depth, _, cols = bmm.matrix_dims(lt.shape, rt.shape, call.attrs)
    batch = bmm.batch_shape(lt.shape, rt.shape)
    batch3 = [1] * (bmm.BATCH_RANK - len(batch)) + list(batch)
    lsteps, rsteps = bmm.operand_steps(lt.shape, batch), bmm.operand_steps(rt.shape, batch)
    consts, t_lhs, t_rhs = kernel_layout(call)
    mult, shift = bmm.multiplier(lt, rt, call.type)
    lo, ro, out_zp = -lt.quant.zp, -rt.quant.zp, call.type.quant.zp
    rq = requant_records(*(np.array([v]) for v in bounds(call, consts, lo, ro)), np.array([mult]),
                         np.array([shift]), out_zp, -128, 127)
    m, add, right = (int(v) for v in rq) if rq is not None else (0, 0, 0)
    params = {f"batch{i}": batch3[i] for i in range(3)}
    params |= {f"lhs_step{i}": lsteps[i] for i in range(3)} | {f"rhs_step{i}": rsteps[i] for i in range(3)}
    params |= {"rows": rows, "cols": cols, "depth": depth, "transpose_lhs": int(t_lhs),
               "transpose_rhs": int(t_rhs), "lhs_offset": lo, "rhs_offset": ro, "output_offset": out_zp,
               "multiplier": mult, "shift": shift, "rq_m": m, "rq_add": add, "rq_right": right}
    scratch = scratch_size("MCU_CMSIS_BATCH_MATMUL_S8_SCRATCH_BYTES", rows, cols, depth, int(t_lhs),
                           int(t_rhs))
    return Lowered("mcu_cmsis_batch_matmul_s8", params, consts, model, scratch=scratch,
                   struct="mcu_cmsis_batch_matmul_params", op_args=2)


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    """sum_k (lhs[i, k] + lhs_offset) * (rhs[j, k] + rhs_offset) over the kernel's layouts, wrapped
    to int32, requantized."""
    p = kc.params
    lhs, rhs = (x.astype(np.int64) for x in common.op_args(args, kc))
    lhs = np.swapaxes(lhs, -1, -2) if p["transpose_lhs"] else lhs  # [.., rows, depth]
    rhs = rhs if p["transpose_rhs"] else np.swapaxes(rhs, -1, -2)  # [.., depth, cols]
    acc = quant.wrap_int32(c.exact_matmul(lhs + p["lhs_offset"], rhs + p["rhs_offset"]))
    out = c.requantize_clamp(acc, p["multiplier"], p["shift"], p["output_offset"], -128, 127)
    return out.reshape(kc.output.shape)


PATTERN = op("batch_matmul", wildcard("lhs"), wildcard("rhs"), capture="root")
COMPOSITES = (Composite("qnn_batch_matmul", PATTERN, check, lower),)
