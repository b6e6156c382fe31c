"""int8 TRANSPOSE_CONV on cmsis-nn: mcu_cmsis_transpose_conv_s8, output-stationary per stride phase.

TFLM scatters every input pixel through the whole kernel into an int32 image; output (oy, ox) thus
sums the taps ky = ry, ry + stride_h, ... (ry = (oy + pad_top) % stride_h) of the input rows
(oy + pad_top) // stride_h - j, likewise along x. So each of the stride_h * stride_w phases is a plain
convolution with a sub-kernel, computed here as a matrix product per output pixel: weights re-laid
at compile time per phase as [out_c][taps_y][taps_x][in_c_pad] rows (in_c zero-padded to a multiple of
4, the DSP path's group), the input offset folded into a per-phase bias (exact: taps outside the input
read the input zero point). The fast requantization record `rq` is added where it is proven over
every phase's accumulator range. The model computes exactly that from the constants."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Call, Expr
from mcuforge.ir.ops import _common as c
from mcuforge.ir.ops import transpose_conv as op_tconv
from mcuforge.ir.registry import OpView

from ...kernel import KernelCall
from ...patterns import const, op, wildcard
from . import common
from .common import Composite, Lowered
from .requant import acc_bounds, with_rq


def check(caps: dict[str, Expr]) -> str | None:
    """int8 activations and symmetric int8 weights (16x8 keeps the portable kernel)."""
    root = caps["root"]
    problem = common.int8_io(caps) or common.symmetric_int8_weights(caps)
    if problem:
        return problem
    return None if root.attrs.get("activation") in c.QUANTIZABLE_ACTIVATIONS else "activation"


def phase_taps(r: int, k: int, s: int) -> range:
    """Kernel offsets of phase r along one axis (as tconv_taps in the kernel)."""
    return range(r, k, s)


def phase_rows(w: np.ndarray, stride: tuple[int, int], in_c_pad: int) -> list[np.ndarray]:
    """Per phase (ry, rx) row-major: its weights [out_c, taps_y * taps_x * in_c_pad]."""
    oc, kh, kw, ic = w.shape
    rows = []
    for ry in range(stride[0]):
        for rx in range(stride[1]):
            sub = w[:, list(phase_taps(ry, kh, stride[0]))][:, :, list(phase_taps(rx, kw, stride[1]))]
            sub = np.pad(sub, ((0, 0), (0, 0), (0, 0), (0, in_c_pad - ic)))
            rows.append(sub.reshape(oc, -1))
    return rows


def lower(call: Call) -> Lowered:
    x, w = call.args[0].type, call.args[1].data
    oc, kh, kw, ic = w.shape
    n, h, wd, _ = x.shape
    _, oh, ow, _ = call.type.shape
    pt, pl = op_tconv.padding_hw(OpView(tuple(a.type for a in call.args), call.type, call.attrs))
    stride = call.attrs["stride"]
    in_c_pad = -(-ic // 4) * 4
    params, consts = common.requant_params(call, oc)
    params = {"batches": n, "in_h": h, "in_w": wd, "in_c": ic, "out_h": oh, "out_w": ow, "out_c": oc, "k_h": kh,
              "k_w": kw, "stride_h": stride[0], "stride_w": stride[1], "pad_top": pt, "pad_left": pl,
              "in_c_pad": in_c_pad, **params}
    rows = phase_rows(w, stride, in_c_pad)
    biases = [common.folded_bias(call, r.astype(np.int64).sum(axis=1), params["input_offset"]) for r in rows]
    consts = {"weights": np.concatenate([r.reshape(-1) for r in rows]).astype(np.int8),
              "bias": np.concatenate(biases).astype(np.int32), **consts}
    bounds = [acc_bounds(b, r, -128, 127) for b, r in zip(biases, rows)]
    with_rq(consts, params, np.min([b[0] for b in bounds], axis=0), np.max([b[1] for b in bounds], axis=0))
    k_max = len(phase_taps(0, kh, stride[0])) * len(phase_taps(0, kw, stride[1])) * in_c_pad
    return Lowered("mcu_cmsis_transpose_conv_s8", params, consts, model,
                   common.scratch_size("MCU_CMSIS_TRANSPOSE_CONV_S8_SCRATCH_BYTES", k_max, oc))


def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
    """Each phase's output pixels: their zero-point-filled columns times the phase rows, + folded bias."""
    p, k = kc.params, kc.constants
    x = args[0].astype(np.int64)
    n, oh, ow, oc = kc.output.shape
    sh, sw, pt, pl, icp = p["stride_h"], p["stride_w"], p["pad_top"], p["pad_left"], p["in_c_pad"]
    zp = -p["input_offset"]
    xp = np.full((n, p["in_h"], p["in_w"], icp), 0, np.int64)
    xp[..., :p["in_c"]] = x
    acc = np.zeros((n, oh, ow, oc), np.int64)
    offset = 0
    for ry in range(sh):
        ty = phase_taps(ry, p["k_h"], sh)
        for rx in range(sw):
            tx = phase_taps(rx, p["k_w"], sw)
            depth = len(ty) * len(tx) * icp
            rows = k["weights"][offset:offset + oc * depth].reshape(oc, depth).astype(np.int64)
            bias = k["bias"][(ry * sw + rx) * oc:(ry * sw + rx + 1) * oc].astype(np.int64)
            offset += oc * depth
            oys = np.array([oy for oy in range(oh) if (oy + pt) % sh == ry], dtype=np.int64)
            oxs = np.array([ox for ox in range(ow) if (ox + pl) % sw == rx], dtype=np.int64)
            if not len(oys) or not len(oxs):
                continue
            iy = (oys + pt)[:, None] // sh - np.arange(len(ty))[None, :]  # [rows, taps_y]
            ix = (oxs + pl)[:, None] // sw - np.arange(len(tx))[None, :]
            inside = ((iy >= 0) & (iy < p["in_h"]))[:, None, :, None] & ((ix >= 0) & (ix < p["in_w"]))[None, :, None, :]
            g = xp[:, np.clip(iy, 0, p["in_h"] - 1)[:, None, :, None], np.clip(ix, 0, p["in_w"] - 1)[None, :, None, :]]
            fill = np.zeros(icp, np.int64)
            fill[:p["in_c"]] = zp
            cols = np.where(inside[None, ..., None], g, fill)  # [n, rows, cols, taps_y, taps_x, icp]
            sums = c.exact_matmul(cols.reshape(n * len(oys) * len(oxs), depth), rows.T).reshape(n, len(oys), len(oxs), oc) + bias
            acc[:, oys[:, None], oxs[None, :]] = sums
    return common.requantize(acc, kc).reshape(kc.output.shape)


COMPOSITES = (Composite("qnn_transpose_conv", op("transpose_conv", wildcard("x"), const("weights"),
                                                 const("bias", optional=True), capture="root"), check, lower),)
