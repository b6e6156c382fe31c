"""docs/adding-an-op.md is true: its worked example, MAXIMUM / MINIMUM, lives in exactly the three
product files it lists for the portable op and the three for the optimized kernel, and no other
product file names the op or its kernels."""

import re

from conftest import ROOT

PORTABLE = ("ir/ops/maximum_minimum.py", "firmware/kernels/c/mcu_maximum_minimum.h",
            "firmware/kernels/c/mcu_maximum_minimum.c")
OPTIMIZED = ("planner/targets/cmsis_nn/maximum_minimum.py", "firmware/kernels/cmsis_nn/mcu_cmsis_max_min_s8.h",
             "firmware/kernels/cmsis_nn/mcu_cmsis_max_min_s8.c")
PRODUCT = ("mcuforge", "ir", "frontend", "planner", "codegen", "boards", "firmware")
NAMES = re.compile(r'\bMAXIMUM\b|\bMINIMUM\b|"maximum"|"minimum"|mcu_(cmsis_)?(maximum|minimum)|max_min|maximum_minimum')


def test_the_doc_lists_the_example_files():
    doc = (ROOT / "docs" / "adding-an-op.md").read_text()
    for path in PORTABLE + OPTIMIZED:
        assert f"`{path}`" in doc and (ROOT / path).is_file(), path


def test_the_example_touches_no_other_product_file():
    naming = {str(p.relative_to(ROOT)) for d in PRODUCT for p in (ROOT / d).rglob("*")
              if p.is_file() and p.suffix in (".py", ".c", ".h", ".j2", ".txt", ".toml", ".cmake")
              and NAMES.search(p.read_text(errors="replace"))}
    assert naming == set(PORTABLE + OPTIMIZED)
