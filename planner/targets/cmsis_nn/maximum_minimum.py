"""MAXIMUM and MINIMUM on cmsis-nn: int8 operands of the output's shape, or one of them a single
element (broadcast shapes go to the portable kernel). The kernel (mcu_cmsis_max_min_s8.c) has a
Helium path (VMAX/VMIN, 16 lanes) and a DSP path (SSUB8 + SEL, 4 lanes); its call is the generic one."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call, Constant, Expr

from ...kernel import KernelCall
from ...patterns import op, wildcard
from . import common
from .common import Composite, Lowered


def check(caps: dict[str, Expr]) -> str | None:
    """int8, each operand of the output's shape or a single element."""
    root = caps["root"]
    problem = common.int8_io(caps)
    if problem:
        return problem
    types = [a.type for a in root.args]
    fits = all(t.shape == root.type.shape or t.size == 1 for t in types)
    return None if fits and any(t.shape == root.type.shape for t in types) else "broadcast"


def lower(call: Call) -> Lowered:
    a, b = (x.type for x in call.args)
    scalar = 0 if a.shape == b.shape else (1 if a.size == 1 else 2)
    params = {"size": call.type.size, "scalar": scalar}
    consts = {f"arg{i}": x.data for i, x in enumerate(call.args) if isinstance(x, Constant)}  # constant operands
    return Lowered(f"mcu_cmsis_{call.op}_s8", params, consts, model, in_place=True, source="mcu_cmsis_max_min_s8",
                   struct="mcu_cmsis_max_min_params", op_args=2)


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    a, b = (x.reshape(-1) for x in common.op_args(args, kc))
    better = np.greater if kc.info.op == "maximum" else np.less
    a, b = np.broadcast_arrays(a, b)
    return np.where(better(a, b), a, b).astype(np.int8).reshape(kc.output.shape)


COMPOSITES = tuple(Composite(f"qnn_{name}", op(name, wildcard("a"), wildcard("b"), capture="root"), check, lower)
                   for name in ("maximum", "minimum"))
