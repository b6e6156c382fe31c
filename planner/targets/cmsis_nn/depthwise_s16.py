"""16x8 DEPTHWISE_CONV_2D on cmsis-nn: mcu_cmsis_dwconv2d_s16 (depth multiplier 1, channels a multiple of
4), four channels per pass over pairs of taps: DSP SMLAD on [x(t+1) : x(t)] pairs against weight pairs
laid out here, Helium four channels per vector; interior pixels read the input through a tap offset
table, border pixels a zero-padded window. TFLM's int64 requantization in per-channel records (_s16.py);
one int32 chunk always suffices (fewer than 516 taps)."""

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


def weight_pairs(w: np.ndarray) -> np.ndarray:
    """[taps, channels] int8 weights as the kernel reads them (mcu_cmsis_dwconv2d_s16.h): per group of 4
    channels, per tap pair one int16 pair per channel (tap t low), an odd last tap's 4 int16 in order."""
    taps, ch = w.shape
    out = []
    for g in range(0, ch, 4):
        block = w[:, g:g + 4].astype(np.int16)
        for t in range(0, taps - 1, 2):
            out.append(block[t:t + 2].T.reshape(-1))  # channel j: w(t), w(t+1)
        if taps % 2:
            out.append(block[-1])
    return np.concatenate(out).astype(np.int16)


def lower(call: Call) -> Lowered:
    w = call.args[1].data  # [1, KH, KW, C]
    _, kh, kw, ch = w.shape
    g = c.window(call, kh, kw)
    wide, rq, clamp = _s16.records(call, ch)
    interior = [(ky * g.dil_h * g.in_w + kx * g.dil_w) * ch for ky in range(kh) for kx in range(kw)]
    params = {**g.fields("in_h", "in_w"), "channels": ch, **g.fields("out_h", "out_w", "k_h", "k_w", "stride_h",
                                                                      "stride_w", "dil_h", "dil_w", "pad_top",
                                                                      "pad_left"),
              "taps": kh * kw, "wide": int(wide), **clamp}
    consts = {"weights": weight_pairs(w.reshape(kh * kw, ch)),
              "offsets": np.array(interior + [t * ch for t in range(kh * kw)], dtype=np.int32), "rq": rq.reshape(-1)}
    return Lowered("mcu_cmsis_dwconv2d_s16", params, consts, model,
                   common.scratch_size("MCU_CMSIS_DWCONV2D_S16_SCRATCH_BYTES", kh * kw, ch),
                   struct="mcu_cmsis_dw_s16_params", op_args=1)


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    p = kc.params
    taps, ch = p["taps"], p["channels"]
    w = np.zeros((taps, ch), dtype=np.int64)  # undo weight_pairs
    flat = kc.constants["weights"].astype(np.int64)
    k = 0
    for g in range(0, ch, 4):
        for t in range(0, taps - 1, 2):
            w[t:t + 2, g:g + 4] = flat[k:k + 8].reshape(4, 2).T
            k += 8
        if taps % 2:
            w[-1, g:g + 4] = flat[k:k + 4]
            k += 4
    geom = {**p, "in_c": ch, "out_c": ch}
    windows = common.padded_windows(args[0], geom, fill=0).reshape(p["out_h"], p["out_w"], taps, ch)
    acc = (windows * w).sum(axis=2)
    return _s16.outputs(acc, kc).reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_depthwise_conv2d_s16", op("depthwise_conv_2d", wildcard("x"), const("weights"),
                                                       const("bias", optional=True), capture="root"), check, lower),)
