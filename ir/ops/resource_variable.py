"""Resource variables: READ_VARIABLE, ASSIGN_VARIABLE (with VAR_HANDLE and CALL_ONCE resolved by the
importer, frontend/resources.py), and `after`, which orders the variables' writes before a model
output.

TFLM (var_handle.cc, read_variable.cc, assign_variable.cc, call_once.cc, micro_resource_variable.cc):
VAR_HANDLE names a variable (container, shared name); its buffer is allocated at the first
ASSIGN_VARIABLE's Prepare with that value's size and filled with the value's zero point (a quantized
tensor) or 0; READ_VARIABLE copies it out, ASSIGN_VARIABLE copies a value in; CALL_ONCE runs its
initialization subgraph (usually ASSIGN_VARIABLEs of constants) at the first invoke only.

In mcuforge a variable is a State (persistent, in the state region). Its reads in a run before
any write are one `read_variable` call, a copy; a read after a write in the same run is the written
value itself; the last value written becomes one `assign_variable` call at the end of the run,
which copies it into the state (after the read, by data dependence: it takes the read as an extra
argument when its value does not already depend on it). The initialization subgraph is evaluated at
compile time: its constant value is copied into the state by the first read after startup or after
<prefix>_reset(), which a one-byte flag state records, so that a reset restores the state as at
startup. (TFLM's MicroInterpreter::Reset() instead refills resource variables with their zero
point and does not run CALL_ONCE again; a fresh TFLM interpreter is what mcuforge matches, and what
`mcuforge verify` compares each sequence with.) `assign_variable` yields a one-byte placeholder
that the model's first output takes through `after`, a view of that output: so the writes are part
of the graph and run before the model returns.
"""

from __future__ import annotations

import numpy as np
from mcuforge.ir.registry import CKernel, OpDef, OpKind, OpView, Portable, register
from mcuforge.ir.types import TensorType

DONE = TensorType((1,), "bool")  # the type of assign_variable's placeholder result


def resolved_by_importer(ctx):
    """Never called: the importer handles these operators itself (frontend/resources.py)."""
    raise ctx.fail("resource variable operators are resolved by the importer (frontend/resources.py)")


# ---- read_variable(state[, flag, init]) -------------------------------------------------------------

def read_infer(args, attrs):
    return args[0].shape, args[0].dtype


def read_reference(args, v: OpView):
    state = args[0]
    if len(args) == 3:
        flag, init = args[1], args[2]
        if not flag.reshape(-1)[0]:
            state[...] = init
            flag[...] = 1
    return np.array(state, copy=True)


def read_lower(call) -> CKernel:
    """mcu_read_variable: the state's bytes (and with an initial value, the flag that says it is
    applied)."""
    return CKernel("mcu_read_variable", "mcu_variable", "mcu_variable_params", {"bytes": call.type.nbytes}, op_args=3)


# ---- assign_variable(state, value[, after]) ---------------------------------------------------------

def assign_infer(args, attrs):
    return DONE.shape, DONE.dtype


def assign_reference(args, v: OpView):
    args[0][...] = args[1]
    return np.ones(DONE.shape, dtype=np.bool_)


def assign_lower(call) -> CKernel:
    """mcu_assign_variable: a copy of the value's bytes into the state."""
    return CKernel("mcu_assign_variable", "mcu_variable", "mcu_variable_params",
                   {"bytes": call.args[1].type.nbytes}, op_args=3)


# ---- after(x, done...) ------------------------------------------------------------------------------

def after_infer(args, attrs):
    return args[0].shape, args[0].dtype


def after_reference(args, v: OpView):
    return args[0]


register(OpDef(
    name="read_variable",
    tflm="read_variable.cc, var_handle.cc (MicroResourceVariables::Read)",
    kind=OpKind.OPAQUE,
    doc="READ_VARIABLE of a resource variable (named by its VAR_HANDLE's shared name): a copy of the state "
        "kept between runs, which CALL_ONCE's initialization subgraph (evaluated at compile time) sets at "
        "startup and on reset (TFLM's Reset() fills it with its zero point instead: mcuforge matches a fresh "
        "interpreter). The importer refuses a variable never assigned, reads and writes of another type "
        "than its first assignment's, a quantized non-int8 variable with a zero point other than 0, and a "
        "CALL_ONCE after the variable operators.",
    infer=read_infer,
    reference=read_reference,
    tflite={"READ_VARIABLE": resolved_by_importer, "VAR_HANDLE": resolved_by_importer},
    portable=Portable(read_lower),
    state_args=(0, 1),
    shares_state=True,
))

register(OpDef(
    name="assign_variable",
    tflm="assign_variable.cc, call_once.cc (MicroResourceVariables::Assign)",
    kind=OpKind.OPAQUE,
    doc="ASSIGN_VARIABLE of a resource variable: the last value a run assigns is copied into the state "
        "at the end of the run; CALL_ONCE's initialization subgraph must compute constants.",
    infer=assign_infer,
    reference=assign_reference,
    tflite={"ASSIGN_VARIABLE": resolved_by_importer, "CALL_ONCE": resolved_by_importer},
    portable=Portable(assign_lower),
    state_args=(0,),
    shares_state=True,
))

register(OpDef(
    name="after",
    kind=OpKind.OPAQUE,
    doc="Its first argument, once the others (resource variable writes) are computed: a view, no code.",
    infer=after_infer,
    reference=after_reference,
    view=True,
))
