"""Constant folding: a call whose arguments are all constants is evaluated at compile time.

With static shapes, the shape sub-graphs converters write (SHAPE -> STRIDED_SLICE -> PACK feeding
RESHAPE's shape or TRANSPOSE_CONV's output shape, as Keras exports with a dynamic batch have them)
compute constants. Folding them turns the model into an ordinary graph:

* the importer folds each call as it builds it (so that a parser that needs a constant input sees
  one when a chain computed it), before running the op's support checks: a folded call runs no
  kernel, so the kernel's limits (element types, ranks) do not apply to it;
* the legalization pass folds the calls whose arguments became constant later, to its fixpoint.

The value is the op's registry reference (TFLite's semantics; for the shape ops the same as
TFLM's kernels). SHAPE takes no arguments (its result is the static shape), so it always folds.
A call whose reference cannot evaluate its constants is left alone: its support checks then say
what is wrong with it.
"""

from __future__ import annotations

import numpy as np

from .expr import Call, Constant
from .registry import OpView, find_op


def fold(call: Call) -> Constant | None:
    """The call's value as a Constant (its name, type and TFLite tensor), or None when an argument
    is not constant or the reference cannot evaluate it."""
    if call.callee is not None or not all(isinstance(a, Constant) for a in call.args):
        return None
    opdef = find_op(call.op)
    if opdef is None:
        return None
    view = OpView(tuple(a.type for a in call.args), call.type, call.attrs)
    try:
        value = np.asarray(opdef.reference([a.data for a in call.args], view))
    except Exception:  # noqa: BLE001 - any failure means "not foldable"; the checks report why
        return None
    if value.dtype != call.type.np_dtype or value.shape != call.type.shape:
        return None
    return Constant(call.name or call.op, call.type, value, call.tensor)
