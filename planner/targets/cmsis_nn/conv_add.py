"""CONV_2D (through im2col) whose only user is an ADD with another tensor of its shape (a residual
connection): one kernel, mcu_cmsis_conv2d_add_s8, computes the convolution a block of output pixels
at a time into a small stage in scratch and adds the other tensor's same pixels into the output.
The convolution's output tensor never exists, and the output may be placed exactly over the other
operand (each element read, then written): a residual block then needs its input and its inner
tensor, not a third tensor as well. The arithmetic is the two kernels' own, unchanged."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from mcuforge.firmware.macros import KernelSize
from mcuforge.ir.expr import Call, Constant, Expr

from ...kernel import KernelCall
from ...patterns import const, op, wildcard
from . import add, conv
from .common import Composite, Lowered

# The stage holds this many bytes of output at most (and a multiple of six pixels: the DSP path's
# three-column blocks and Helium's pixel pairs then divide it), at least six pixels.
STAGE_BYTES = 256


def check(caps: dict[str, Expr]) -> str | None:
    """The convolution is one the im2col kernel takes (not 1x1, not a single window over the whole
    input), the ADD one of same-shape int8 operands, the other operand a tensor computed at run time
    (not a constant)."""
    cv = caps["conv"]
    problem = conv.check({**caps, "root": cv}) or add.same_shape_check(caps)
    if problem:
        return problem
    if isinstance(caps["residual"], Constant):
        return "constant residual"
    if conv.single_window(cv):
        return "one output pixel (a fully connected layer)"
    return "1x1 convolution" if conv.uses_1x1(cv) else None


def block_pixels(out_w: int, out_h: int, out_c: int) -> int:
    """Output pixels per block: a multiple of six within STAGE_BYTES (six at least), at most all."""
    return min(out_h * out_w, max(6, STAGE_BYTES // out_c // 6 * 6))


def lower(call: Call, isa: str) -> Lowered:
    conv_first = isinstance(call.args[0], Call)
    cv = call.args[0 if conv_first else 1]
    low_conv, low_add = conv.lower(cv, isa), add.lower(call)
    p = low_conv.params
    block = block_pixels(p["out_w"], p["out_h"], p["out_c"])
    stage_offset = -(-low_conv.scratch.bytes // 4) * 4
    stage = -(-block * p["out_c"] // 4) * 4
    params = {**p, "conv_first": int(conv_first), "block": block, "stage_offset": stage_offset,
              **{f"add_{k}": v for k, v in low_add.params.items() if k != "size"}}
    consts = {**low_conv.constants, **{f"add_{k}": v for k, v in low_add.constants.items()}}
    # the convolution's scratch (its header's macro, checked in the generated C), then the stage
    scratch = KernelSize(stage_offset + stage, f"{low_conv.scratch.expr} + {stage}")
    residual = 1 if conv_first else 0

    def model(args: list[np.ndarray], kc: KernelCall) -> np.ndarray:
        x, r = args[1 - kc.in_place_input], args[kc.in_place_input]
        inner = low_conv.model([x], SimpleNamespace(params=low_conv.params, constants=low_conv.constants,
                                                    output=cv.type))
        pair = (inner, r) if conv_first else (r, inner)
        return add.added(*pair, low_add.params).reshape(kc.output.shape)

    return Lowered("mcu_cmsis_conv2d_add_s8", params, consts, model, scratch, in_place=True, in_place_arg=residual)


_CONV = op("conv_2d", wildcard("x"), const("weights"), const("bias", optional=True), capture="conv")
COMPOSITES = (Composite("qnn_conv2d_add", op("add", _CONV, wildcard("residual"), capture="root"), check, lower,
                        by_isa=True),
              Composite("qnn_add_conv2d", op("add", wildcard("residual"), _CONV, capture="root"), check, lower,
                        by_isa=True))
