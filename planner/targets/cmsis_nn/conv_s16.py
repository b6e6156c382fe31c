"""16x8 CONV_2D on cmsis-nn: mcu_cmsis_conv2d_s16, two output pixels (im2col columns in scratch) against
two output channels per pass, DSP SMLAD on int16 pairs and Helium VMLADAVA.S16 (mcu_cmsis_s16.h); the
output stage is TFLM's int64 (or, with an int32 bias, int32) requantization folded into one record per
channel (_s16.py)."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call

from ...kernel import KernelCall
from ...patterns import const, op, wildcard
from . import _s16, common
from .common import Composite, Lowered


def lower(call: Call) -> Lowered:
    w = call.args[1].data
    oc, kh, kw, ic = w.shape
    rows = w.reshape(oc, kh * kw * ic)
    params, consts = _s16.lowering(call, rows, 2)
    params = {**common.geometry(call, kh, kw), **params}
    return Lowered("mcu_cmsis_conv2d_s16", params, consts, model,
                   common.scratch_size("MCU_CMSIS_CONV2D_S16_SCRATCH_BYTES", params["depth8"]),
                   struct="mcu_cmsis_conv_s16_params", op_args=1)


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p = kc.params
    oh, ow, oc = p["out_h"], p["out_w"], p["out_c"]
    depth = p["k_h"] * p["k_w"] * p["in_c"]
    rows = _s16.weight_rows(kc.constants["weights"], 2, oc, depth)
    cols = common.padded_windows(args[0], p, fill=0).reshape(oh * ow, depth)
    return _s16.outputs(cols.astype(np.int64) @ rows.T.astype(np.int64), kc).reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_conv2d_s16", op("conv_2d", wildcard("x"), const("weights"), const("bias", optional=True),
                                             capture="root"), _s16.check_16x8, lower),)
