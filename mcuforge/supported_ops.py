"""SUPPORTED_OPS.md, generated from the op registry (`python tools/gen_supported_ops.py`).
A test fails when the committed file is stale."""

from __future__ import annotations

from mcuforge.ir.registry import all_ops, check_rule


def render() -> str:
    ops = all_ops()
    lines = [
        "# Supported operators",
        "",
        "<!-- Generated from the op registry by tools/gen_supported_ops.py: do not edit by hand. -->",
        "",
        "mcuforge compiles int8-quantized TensorFlow Lite models. Every operator below is bit-exact with the",
        "TensorFlow Lite Micro reference kernels, except where its entry says TFLM has no kernel for it. An",
        "operator that breaks one of its rules is reported by `mcuforge inspect` and refused by the compiler",
        "with that rule's sentence. Rewrites are the legalization rules the compiler applies to it.",
        "",
        "An operator whose inputs are all constants is evaluated at compile time (constant folding, with",
        "its reference: TFLite's semantics) and runs no kernel, so its rules do not apply to it: the shape",
        "sub-graphs of Keras exports (SHAPE -> STRIDED_SLICE -> PACK feeding RESHAPE or TRANSPOSE_CONV)",
        "become constants.",
        "",
        "| TFLite operator | mcuforge op | kind |",
        "|---|---|---|",
    ]
    for op in ops:
        for builtin in sorted(op.tflite):
            lines.append(f"| {builtin} | `{op.name}` | {op.kind.value} |")
    lines.append("")
    for op in ops:
        if not op.tflite:
            continue
        lines.append(f"## {', '.join(sorted(op.tflite))}")
        lines.append("")
        lines.append(op.doc)
        lines.append("")
        if op.tflm:
            lines.append(f"Matches TFLM: {op.tflm}")
            lines.append("")
        for chk in op.checks:
            lines.append(f"- {check_rule(chk)}")
        if op.legalize:
            lines.append("")
            lines.append("Rewrites:")
            lines.append("")
            for rule in op.legalize:
                lines.append(f"- {check_rule(rule)}")
        lines.append("")
    return "\n".join(lines)
