"""16x8 DEPTHWISE_CONV_2D on cmsis-nn: mcu_cmsis_dwconv2d_s16 (depth multiplier 1, channels a multiple of
4) over the taps of each window clipped to the input, the int16 weights laid out here in blocks of eight
channels ([ceil(channels / 8)][taps][8], zero-padded): DSP LDRD of four inputs and four weights and
SMLABB / SMLATT, Helium VMULLB / VMULLT on eight channels, sixteen per pass. TFLM's int64
requantization in per-channel records (_s16.py), ROUND records where the bias joins the int32 sum
(the Helium output stage then works on vectors); one int32 chunk always suffices (fewer than 516
taps)."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call, Expr
from mcuforge.ir.ops import _common as c

from ...kernel import KernelCall
from ...patterns import const, op, wildcard
from . import _s16, common
from .common import Composite, Lowered

MAX_TAPS = 515  # taps * 127 * 32768 < 2^31: one int32 chunk


def check(caps: dict[str, Expr]) -> str | None:
    """16x8 (int16 activations, symmetric int8 weights), batch 1, depth multiplier 1, channels a multiple
    of 4, at most 515 filter taps."""
    problem = _s16.check_16x8(caps)
    if problem:
        return problem
    root = caps["root"]
    x, w = root.args[0].type, root.args[1].type
    if w.shape[3] != x.shape[3] or x.shape[3] % 4:
        return "depth multiplier or channels"
    return None if w.shape[1] * w.shape[2] <= MAX_TAPS else "taps"


def weight_groups(w: np.ndarray) -> np.ndarray:
    """[taps, channels] int8 weights as the kernel reads them: int16 blocks of 8 channels
    [ceil(channels / 8)][taps][8], the last block zero-padded when channels % 8 == 4."""
    taps, ch = w.shape
    blocks = -(-ch // 8)
    padded = np.zeros((taps, blocks * 8), dtype=np.int16)
    padded[:, :ch] = w
    return np.ascontiguousarray(padded.reshape(taps, blocks, 8).transpose(1, 0, 2)).reshape(-1)


def weight_matrix(groups: np.ndarray, taps: int, ch: int) -> np.ndarray:
    """The inverse of weight_groups: [taps, channels]."""
    blocks = -(-ch // 8)
    return groups.reshape(blocks, taps, 8).transpose(1, 0, 2).reshape(taps, blocks * 8)[:, :ch]


def lower(call: Call) -> Lowered:
    w = call.args[1].data  # [1, KH, KW, C]
    _, kh, kw, ch = w.shape
    g = c.window(call, kh, kw)
    mode, rq, clamp = _s16.records(call, w.reshape(kh * kw, ch).T, round_ok=True)
    params = {**g.fields("in_h", "in_w"), "channels": ch, **g.fields("out_h", "out_w", "k_h", "k_w", "stride_h",
                                                                      "stride_w", "dil_h", "dil_w", "pad_top",
                                                                      "pad_left"),
              "taps": kh * kw, "mode": mode, **clamp}
    consts = {"weights": weight_groups(w.reshape(kh * kw, ch)), "rq": rq.reshape(-1)}
    return Lowered("mcu_cmsis_dwconv2d_s16", params, consts, model, struct="mcu_cmsis_dw_s16_params", op_args=1)


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p = kc.params
    taps, ch = p["taps"], p["channels"]
    w = weight_matrix(kc.constants["weights"].astype(np.int64), taps, ch)
    geom = {**p, "in_c": ch, "out_c": ch}
    windows = common.padded_windows(args[0], geom, fill=0).reshape(p["out_h"], p["out_w"], taps, ch)
    acc = (windows * w).sum(axis=2)
    return _s16.outputs(acc, kc).reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_depthwise_conv2d_s16", op("depthwise_conv_2d", wildcard("x"), const("weights"),
                                                       const("bias", optional=True), capture="root"), check, lower),)
