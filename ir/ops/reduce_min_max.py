"""REDUCE_MAX and REDUCE_MIN: the largest / smallest int8 value over constant axes, keep_dims or not.

TFLM (reduce_common.cc, EvalMaxHelper / EvalMinHelper -> reference_ops::ReduceGeneric) compares the
raw int8 values, starting from -128 (127 for the minimum), and requires the output to have exactly
the input's scale and zero point (it does not requantize). Its axis tensor is int32, negative axes
count from the end and repeated axes count once; any rank and number of axes. No axes copies the
input. The portable kernel walks the input once, in order, folding each element into its output."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _common as c
from .mean import infer, parse

REDUCE_RANK = 6  # MCU_REDUCE_RANK: alternating runs of kept and reduced axes the kernel walks


def runs(shape, axes) -> list[tuple[int, bool]]:
    """The input as runs of consecutive axes of one kind: (size, reduced), size-1 axes dropped."""
    out: list[tuple[int, bool]] = []
    for i, d in enumerate(shape):
        if d == 1:
            continue
        red = i in axes
        if out and out[-1][1] == red:
            out[-1] = (out[-1][0] * d, red)
        else:
            out.append((int(d), red))
    return out


def _reference(fold):
    def reference(args, v: OpView):
        x = args[0]
        return fold(x, axis=tuple(v.attrs["axis"])).astype(v.out.np_dtype).reshape(v.out.shape)
    return reference


# ---- support checks ------------------------------------------------------------------------------

def same_quantization(v: OpView) -> str | None:
    """The output must have exactly the input's scale and zero point (TFLM does not requantize)."""
    a, o = v.args[0].quant, v.out.quant
    if a is None or o is None:
        return "not quantized"
    if (a.scale[0], a.zero_point[0]) != (o.scale[0], o.zero_point[0]):
        return f"input scale {a.scale[0]:.9g} zero point {a.zero_point[0]}, output {o.scale[0]:.9g} {o.zero_point[0]}"
    return None


def run_limit(v: OpView) -> str | None:
    """The reduced and kept axes (consecutive ones of a kind merged, size-1 ones dropped) must form at
    most 6 runs, as every input of rank up to 6 does."""
    n = len(runs(v.args[0].shape, v.attrs["axis"]))
    return None if n <= REDUCE_RANK else f"{n} runs"


def nonempty(v: OpView) -> str | None:
    """The input must not be empty."""
    return None if v.args[0].size > 0 else f"input shape {list(v.args[0].shape)}"


def lower_c(call) -> CKernel:
    """mcu_reduce_max_s8 / mcu_reduce_min_s8: the runs, each kept run's output stride (0 for a
    reduced one), left-padded to 6."""
    x = call.args[0].type
    rs = runs(x.shape, call.attrs["axis"])
    strides, acc = [], 1
    for size, red in reversed(rs):
        strides.append(0 if red else acc)
        acc *= 1 if red else size
    strides.reverse()
    lead = REDUCE_RANK - len(rs)
    params = {"dims": [1] * lead + [n for n, _ in rs], "out_stride": [0] * lead + strides, "out_size": call.type.size}
    return CKernel(f"mcu_{call.op}_s8", "mcu_reduce_min_max", "mcu_reduce_params", params)


for _name, _fold, _doc in (
    ("reduce_max", np.max, "The largest int8 value over constant axes, keep_dims or not (no requantization)."),
    ("reduce_min", np.min, "The smallest int8 value over constant axes, keep_dims or not (no requantization)."),
):
    register(OpDef(
        name=_name,
        tflm="reduce.cc, reference_ops::ReduceGeneric",
        kind=OpKind.REDUCTION,
        doc=_doc,
        infer=infer,
        reference=_reference(_fold),
        checks=(c.int8_activations, c.quantized_per_tensor_io, same_quantization, run_limit, nonempty),
        tflite={_name.upper(): parse},
        portable=Portable(lower_c),
    ))
