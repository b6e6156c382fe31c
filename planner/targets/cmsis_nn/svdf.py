"""SVDF with an int16 state on cmsis-nn: mcu_cmsis_svdf_s8_s16, TFLM's integer SVDF with the feature
matmul four filters at a time (mcu_cmsis_rows4_dot: DSP inline assembly, Helium VMLADAVA) and the
time matmul two int16 pairs per SMLAD. Precomputed: the feature weights zero-padded to a multiple of
four with the input offset folded into a per-filter bias, the state offset folded into a per-filter
time bias, the feature requantization's fast record where proven. An int8 state keeps the portable
kernel. The model is the registry reference."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call, Expr
from mcuforge.ir.ops import svdf as op_svdf
from mcuforge.ir.registry import OpView

from ...patterns import const, op, wildcard
from ._recurrent import padded, record, reference_model
from .common import Composite, Lowered, scratch_size
from .requant import acc_bounds


def check(caps: dict[str, Expr]) -> str | None:
    """An int16 state (an int8 one keeps the portable kernel)."""
    return None if caps["state"].type.dtype == "int16" else "int8 state"


def lower(call: Call) -> Lowered:
    v = OpView(tuple(a.type for a in call.args), call.type, call.attrs)
    b, i, f, m, r, u = op_svdf.sizes(v.args, v.attrs)
    (m1, s1), (m2, s2) = op_svdf.scales(v)
    wf = call.args[op_svdf.FEATURE].data.astype(np.int64)
    wt = call.args[op_svdf.TIME].data.astype(np.int64)
    x_zp, st_zp = v.args[op_svdf.INPUT].quant.zp, v.args[op_svdf.STATE].quant.zp
    feature_bias = -x_zp * wf.sum(axis=1)
    lo, hi = acc_bounds(feature_bias, wf, -128, 127)
    consts = {
        "arg1": padded(wf.astype(np.int8)),
        "arg2": call.args[op_svdf.TIME].data,
        "arg3": call.args[op_svdf.BIAS].data,
        "feature_bias": feature_bias.astype(np.int32),
        "time_bias": (-st_zp * wt.sum(axis=1)).astype(np.int32),  # wraps in int32 as the C sums do
        "feature_rq": np.array(record(int(lo.min()), int(hi.max()), m1, s1, 0, -32768, 32767), dtype=np.int32),
    }
    stride = consts["arg1"].shape[1]
    params = {"batches": b, "inputs": i, "input_stride": stride, "filters": f, "memory": m, "rank": r, "units": u,
              "state_zero_point": st_zp, "output_offset": v.out.quant.zp, "feature_multiplier": m1,
              "feature_shift": s1, "time_multiplier": m2, "time_shift": s2}
    return Lowered("mcu_cmsis_svdf_s8_s16", params, consts, reference_model(call),
                   scratch=scratch_size("MCU_CMSIS_SVDF_S8_SCRATCH_BYTES", stride), source="mcu_cmsis_svdf_s8",
                   struct="mcu_cmsis_svdf_params", op_args=5)


PATTERN = op("svdf", wildcard("x"), const("feature"), const("time"), const("bias"), wildcard("state"), capture="root")
COMPOSITES = (Composite("qnn_svdf", PATTERN, check, lower),)
