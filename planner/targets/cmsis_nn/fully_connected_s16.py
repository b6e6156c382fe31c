"""16x8 FULLY_CONNECTED on cmsis-nn: mcu_cmsis_fully_connected_s16, each input row against four units per
pass, DSP SMLAD on int16 pairs and Helium VMLADAVA.S16 (mcu_cmsis_s16.h); TFLM's int64 (or int32)
requantization folded into one record per unit (_s16.py). Symmetric weights only: a per-tensor weight
zero point (which TFLM applies) stays with the portable kernel."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call, Expr

from ...kernel import KernelCall
from ...patterns import const, op, wildcard
from . import _s16, common
from .common import Composite, Lowered


def check(caps: dict[str, Expr]) -> str | None:
    """16x8 (int16 activations, symmetric int8 weights) in the default weights format."""
    layout = caps["root"].attrs.get("weights_format", "DEFAULT")
    return (_s16.int16_io(caps) or _s16.symmetric_int8_weights(caps)
            or (None if layout == "DEFAULT" else "weights format"))


def lower(call: Call) -> Lowered:
    w = call.args[1].data  # [units, depth]
    units, depth = w.shape
    params, consts = _s16.lowering(call, w, 4)
    params = {"rows": call.args[0].type.size // depth, "depth": depth, "units": units, **params}
    return Lowered("mcu_cmsis_fully_connected_s16", params, consts, model,
                   common.scratch_size("MCU_CMSIS_FULLY_CONNECTED_S16_SCRATCH_BYTES", params["depth8"]),
                   struct="mcu_cmsis_fc_s16_params", op_args=1)


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p = kc.params
    rows = _s16.weight_rows(kc.constants["weights"], 4, p["units"], p["depth"])
    x = args[0].reshape(p["rows"], p["depth"]).astype(np.int64)
    return _s16.outputs(x @ rows.T.astype(np.int64), kc).reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_fully_connected_s16", op("fully_connected", wildcard("x"), const("weights"),
                                                      const("bias", optional=True), capture="root"), check, lower),)
