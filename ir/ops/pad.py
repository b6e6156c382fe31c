"""PAD and PADV2: constant padding with static paddings [rank, 2] (before, after per axis).

TFLM (pad.cc, PadImpl) copies the input's values unchanged into the middle of the output, whatever
the input and output quantization, and fills the border with:
  - PAD: the output zero point for int8 (the real value 0), and 0 for the other types;
  - PADV2: the raw element of the constant_values operand; for int8 TFLM's Prepare requires that
    operand to have exactly the output's scale and zero point, so the raw value is used as is.
Inputs may have rank 1 to 5 (PadKernelMaxDimensionCount). Paddings are read as int32 by TFLM."""

from __future__ import annotations

import numpy as np
from mcuforge.ir.expr import Constant
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _portable

DTYPES = ("int8", "int16", "int32", "float32")
MAX_RANK = 5


def _quant_key(t) -> tuple[float, int]:
    """(scale, zero point) as TFLM sees a tensor's quantization: scale 0, zero point 0 when absent."""
    return (t.quant.scale[0], t.quant.zero_point[0]) if t.quant is not None else (0.0, 0)


def parse(ctx):
    x = ctx.inputs[0]
    if len(ctx.inputs) < 2 or ctx.inputs[1] is None:
        raise ctx.fail("missing paddings operand")
    raw = np.asarray(ctx.const(1))
    if raw.size % 2:
        raise ctx.fail(f"paddings has {raw.size} values, not a [rank, 2] table")
    pairs = raw.reshape(-1, 2)
    attrs = {
        "paddings": tuple((int(a), int(b)) for a, b in pairs),
        "paddings_dtype": str(raw.dtype),
        "pad_value": None,  # PADV2's constant (a raw element), None for PAD
        "pad_value_dtype": None,
        "pad_value_quant": None,
    }
    if ctx.name == "PADV2" and len(ctx.inputs) > 2 and ctx.inputs[2] is not None:
        cv = ctx.inputs[2]
        if not isinstance(cv, Constant):
            raise ctx.fail("constant_values must be a constant tensor")
        vals = np.asarray(cv.data).ravel()
        if vals.size != 1:
            raise ctx.fail(f"constant_values has {vals.size} elements, not 1")
        attrs["pad_value"] = vals[0].item()
        attrs["pad_value_dtype"] = cv.type.dtype
        attrs["pad_value_quant"] = _quant_key(cv.type)
    return [x], attrs


def infer(args, attrs):
    x = args[0]
    pads = attrs["paddings"]
    shape = tuple(d + lo + hi for d, (lo, hi) in zip(x.shape, pads))
    return shape, x.dtype


def fill_value(v: OpView):
    """The border value TFLM writes, as a raw element of the output type."""
    if v.attrs.get("pad_value") is not None:
        return v.attrs["pad_value"]
    if v.out.dtype == "int8" and v.out.quant is not None:
        return v.out.quant.zero_point[0]
    return 0


def reference(args, v: OpView):
    fill = np.asarray(fill_value(v)).astype(v.out.np_dtype)
    out = np.full(v.out.shape, fill, dtype=v.out.np_dtype)
    inner = tuple(slice(lo, lo + d) for (lo, _), d in zip(v.attrs["paddings"], v.args[0].shape))
    out[inner] = args[0]
    return out


# ---- support checks ------------------------------------------------------------------------------

def same_dtype(v: OpView) -> str | None:
    """Input and output must have the same element type, one of int8, int16, int32 or float32."""
    a, o = v.args[0].dtype, v.out.dtype
    if a != o:
        return f"input is {a}, output {o}"
    return None if a in DTYPES else f"got {a}"


def rank_limit(v: OpView) -> str | None:
    """The input must have rank 1 to 5."""
    r = v.args[0].rank
    return None if 1 <= r <= MAX_RANK else f"input has rank {r}"


def paddings_table(v: OpView) -> str | None:
    """Paddings must be an int32 [rank, 2] table of non-negative values."""
    pads = v.attrs["paddings"]
    if v.attrs.get("paddings_dtype", "int32") != "int32":
        return f"paddings are {v.attrs['paddings_dtype']}"
    if len(pads) != v.args[0].rank:
        return f"{len(pads)} rows for rank {v.args[0].rank}"
    if any(p < 0 for pair in pads for p in pair):
        return f"got {[list(p) for p in pads]}"
    return None


def pad_value_matches(v: OpView) -> str | None:
    """The PADV2 constant must have the input's element type and, for int8, exactly the output's
    scale and zero point (TFLM does not requantize it)."""
    if v.attrs.get("pad_value") is None:
        return None
    dt = v.attrs.get("pad_value_dtype") or v.out.dtype
    if dt != v.args[0].dtype:
        return f"constant is {dt}, input {v.args[0].dtype}"
    if v.out.dtype == "int8":
        got, want = v.attrs["pad_value_quant"], _quant_key(v.out)
        if got != want:
            return f"constant has scale {got[0]:.9g} and zero point {got[1]}, " \
                   f"the output {want[0]:.9g} and {want[1]}"
    return None


def element_bits(value: np.ndarray) -> int:
    """The bit pattern of one element as an unsigned integer (two's complement for integers, the
    IEEE-754 bits for float32), as mcu_pad's `pad_bits` takes it."""
    value = np.asarray(value)
    return int(value.reshape(1).view(np.dtype(f"u{value.dtype.itemsize}"))[0])


def lower_c(call) -> CKernel:
    """mcu_pad (element-size generic): the padded shape with unpadded inner axes folded into their
    outer neighbour ([N, H, W, C] padded on H, W -> [N, H, W*C]), rank 5, and the border element's bits."""
    x, out = call.args[0].type, call.type
    fill = np.asarray(fill_value(OpView(tuple(a.type for a in call.args), out, call.attrs))).astype(out.np_dtype)
    dims: list[int] = []
    pads: list[tuple[int, int]] = []
    for d, (lo, hi) in zip(x.shape, call.attrs["paddings"]):
        if dims and lo == 0 and hi == 0:
            dims[-1] *= d
            pads[-1] = (pads[-1][0] * d, pads[-1][1] * d)
        else:
            dims.append(d)
            pads.append((lo, hi))
    lead = MAX_RANK - len(dims)
    dims, pads = [1] * lead + dims, [(0, 0)] * lead + pads
    params = {"elem_size": _portable.elem_size(call), "in_dims": dims, "pad_before": [lo for lo, _ in pads],
              "pad_after": [hi for _, hi in pads], "pad_bits": f"0x{element_bits(fill):08X}u"}
    return CKernel("mcu_pad", "mcu_pad", "mcu_pad_params", params)


register(OpDef(
    name="pad",
    tflm="pad.cc, reference_ops::Pad",
    kind=OpKind.INJECTIVE,
    doc="Constant padding of a rank 1-5 tensor: PAD fills with the output zero point (real 0), "
        "PADV2 with its constant.",
    infer=infer,
    reference=reference,
    checks=(same_dtype, rank_limit, paddings_table, pad_value_matches),
    tflite={"PAD": parse, "PADV2": parse},
    portable=Portable(lower_c),
))
