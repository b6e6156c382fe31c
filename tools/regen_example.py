"""Regenerate the checked-in example examples/kws/ (the C mcuforge makes for the bundled KWS model):

    python tools/regen_example.py

tests/test_codegen.py diffs fresh output against it, so a change to the generated C shows up in
review as a diff of this directory."""

from pathlib import Path

from mcuforge.codegen.emit import emit

from mcuforge.driver import compile_model

ROOT = Path(__file__).resolve().parent.parent
model = ROOT / "examples" / "kws_ref_model.tflite"
target = ROOT / "examples" / "kws"
readme = (target / "README.md").read_text() if (target / "README.md").exists() else None
emit(compile_model(model), target, "kws", model.name, force=True)  # its README.md is ours, not mcuforge's
if readme is not None:
    (target / "README.md").write_text(readme)
print(f"wrote {target}")
