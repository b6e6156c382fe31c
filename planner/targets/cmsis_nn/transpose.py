"""int8 TRANSPOSE on cmsis-nn: mcu_cmsis_transpose_s8, the portable kernel's output-order walk (axes
merged at compile time by _portable.gather_plan: at most five) with faster planes of the two
innermost axes: Helium VLDRB gathers of eight elements, on the DSP path 4x4 byte blocks transposed
in registers when the input is contiguous along the output rows (NHWC <-> NCHW) and four strided
bytes packed per word otherwise. Other element types keep the portable kernel."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call, Expr
from mcuforge.ir.ops import _portable

from ...kernel import KernelCall
from ...patterns import op, wildcard
from . import common
from .common import Composite, Lowered


def check(caps: dict[str, Expr]) -> str | None:
    """int8 (int16 and float32 transposes keep the portable kernel)."""
    return common.int8_io(caps)


def lower(call: Call) -> Lowered:
    x = call.args[0].type
    perm = call.attrs["perm"]
    strides = _portable.row_major_strides(x.shape)
    plan = _portable.gather_plan(0, [x.shape[p] for p in perm], [strides[p] for p in perm])
    params = {"start": plan["start"], **{f"count{k}": n for k, n in enumerate(plan["count"])},
              **{f"step{k}": s for k, s in enumerate(plan["step"])}}
    return Lowered("mcu_cmsis_transpose_s8", params, {}, model, struct="mcu_cmsis_transpose_params", op_args=1)


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    """Output element (i0, .., i4) is input element start + sum(i_k * step_k)."""
    p = kc.params
    index = np.full([p[f"count{k}"] for k in range(5)], p["start"], dtype=np.int64)
    for k in range(5):
        shape = [1] * 5
        shape[k] = p[f"count{k}"]
        index = index + (np.arange(p[f"count{k}"], dtype=np.int64) * p[f"step{k}"]).reshape(shape)
    return args[0].reshape(-1)[index.reshape(-1)].reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_transpose", op("transpose", wildcard("x"), capture="root"), check, lower),)
