"""IF: control flow resolved by the importer (frontend/control_flow.py). This entry documents it
(SUPPORTED_OPS.md); no IF call ever reaches the IR: both branch subgraphs are imported in line and
each output is a SELECT_V2 of the condition between them. WHILE stays unsupported."""

from __future__ import annotations

from mcuforge.ir.registry import OpDef, OpKind, register


def resolved_by_importer(ctx):
    """Never called: the importer handles IF itself (frontend/control_flow.py)."""
    raise ctx.fail("IF is resolved by the importer (frontend/control_flow.py)")


def _not_an_ir_op(*_):
    raise NotImplementedError("IF never reaches the IR: the importer selects between its branches")


register(OpDef(
    name="if",
    tflm="if.cc (runs the chosen branch subgraph)",
    kind=OpKind.OPAQUE,
    doc="IF on a one-element bool condition: both branch subgraphs are imported in line (they must be pure: "
        "no resource variables) and each output is SELECT_V2(condition, then, else), the same bytes as TFLM's "
        "copy of the chosen branch's outputs; SELECT_V2's rules apply (int8, int16 or float32 outputs), and "
        "branch inputs must have the IF inputs' types and quantization. WHILE is not supported.",
    infer=_not_an_ir_op,
    reference=_not_an_ir_op,
    tflite={"IF": resolved_by_importer},
))
