"""EMBEDDING_LOOKUP: rows of a table picked by run-time indices.

TFLM (embedding_lookup.cc): the lookup is a 1-D int32 tensor, the table (value) has rank 2 or more
and is float32 or int8; output row i is table row lookup[i] (the rows are the table's first axis,
the rest of each row flattened). float32 -> float32 and int8 -> int8 copy the row as stored (the
int8 output's quantization is not read); int8 -> float32 (hybrid) dequantizes it,
(x - 0) * scale in float32, and needs a table zero point of 0. An index outside [0, rows) makes
TFLM stop with an error; the portable kernel writes zeros for that row instead.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register

from . import _portable

f32 = np.float32


def parse(ctx):
    # an int8 table gives an int8 or (hybrid) a float32 output: the file's output type says which
    return [ctx.inputs[0], ctx.inputs[1]], {"output_dtype": ctx.out.dtype}


def infer(args, attrs):
    lookup, value = args
    return (lookup.shape[0] if lookup.rank else 1, *value.shape[1:]), attrs["output_dtype"]


def reference(args, v: OpView):
    lookup, value = np.asarray(args[0]), np.asarray(args[1])
    rows = value.shape[0]
    if np.any((lookup < 0) | (lookup >= rows)):
        raise ValueError("EMBEDDING_LOOKUP index out of range (TFLM stops with an error)")
    picked = value[lookup]
    if v.out.dtype == "float32" and value.dtype == np.int8:
        return (picked.astype(np.int32).astype(f32) * f32(v.args[1].quant.s)).astype(f32)
    return picked.astype(v.out.np_dtype)


# ---- support checks ------------------------------------------------------------------------------

def int32_vector_lookup(v: OpView) -> str | None:
    """The lookup (input 1) must be a 1-D int32 tensor."""
    t = v.args[0]
    return None if t.dtype == "int32" and t.rank == 1 else f"got {t.dtype}{list(t.shape)}"


def supported_types(v: OpView) -> str | None:
    """The table (input 2) must have rank 2 or more and be float32 (float32 output) or int8 (int8 or
    float32 output)."""
    value, out = v.args[1], v.out
    if value.rank < 2:
        return f"table rank {value.rank}"
    ok = (value.dtype, out.dtype) in (("float32", "float32"), ("int8", "int8"), ("int8", "float32"))
    return None if ok else f"table {value.dtype}, output {out.dtype}"


def hybrid_zero_point(v: OpView) -> str | None:
    """An int8 table dequantized to a float32 output must be quantized per tensor with zero point 0."""
    value = v.args[1]
    if (value.dtype, v.out.dtype) != ("int8", "float32"):
        return None
    q = value.quant
    if q is None or q.per_channel:
        return "the table is not quantized per tensor"
    return None if q.zp == 0 else f"zero point {q.zp}"


# ---- portable kernel -----------------------------------------------------------------------------

def lower_c(call) -> CKernel:
    """mcu_embedding_lookup (a row copy) or mcu_embedding_lookup_hybrid (int8 rows dequantized)."""
    lookup, value = (a.type for a in call.args)
    columns = value.size // value.shape[0] if value.shape[0] else 0
    params = {"lookups": lookup.shape[0], "rows": value.shape[0], "columns": columns}
    if (value.dtype, call.type.dtype) == ("int8", "float32"):
        params["scale"] = _portable.float32_literal(value.quant.s)
        return CKernel("mcu_embedding_lookup_hybrid", "mcu_embedding_lookup", "mcu_embedding_lookup_params", params,
                       fails=True)
    params["scale"] = "0.0f"
    params["columns"] = columns * value.np_dtype.itemsize  # bytes per row for the copy
    return CKernel("mcu_embedding_lookup", "mcu_embedding_lookup", "mcu_embedding_lookup_params", params, fails=True)


register(OpDef(
    name="embedding_lookup",
    tflm="embedding_lookup.cc, EvalSimple / EvalHybrid",
    kind=OpKind.INJECTIVE,
    doc="Rows of a float32 or int8 table picked by run-time int32 indices, copied as stored (an int8 table "
        "may also be dequantized to a float32 output). An index out of range stops TFLM with an error, and the "
        "generated run with <PREFIX>_ERR_INDEX (-2).",
    infer=infer,
    reference=reference,
    checks=(int32_vector_lookup, supported_types, hybrid_zero_point),
    tflite={"EMBEDDING_LOOKUP": parse},
    portable=Portable(lower_c),
))
