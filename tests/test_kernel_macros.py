"""The kernels' size macros (firmware/kernels/<target>/*.h) are the one source of truth for scratch
sizes: mcuforge.firmware.macros evaluates them for the planner exactly as the C compiler does."""

import itertools
import subprocess

import pytest
from mcuforge.firmware.macros import KERNELS, header_macros, kernel_size

ARGS = (0, 1, 3, 4, 5, 27, 64, 1001, 4096)


def size_macros():
    return [(t, name, len(params)) for t in ("c", "cmsis_nn") for name, (params, _) in sorted(header_macros(t).items())
            if name.endswith("_SCRATCH_BYTES")]


def test_every_scratch_kernel_declares_its_size():
    names = {name for _, name, _ in size_macros()}
    assert {"MCU_CMSIS_CONV2D_S8_SCRATCH_BYTES", "MCU_CMSIS_CONV2D_1X1_S8_SCRATCH_BYTES",
            "MCU_CMSIS_DWCONV2D_S8_LINES_SCRATCH_BYTES", "MCU_TRANSPOSE_CONV_S8_SCRATCH_BYTES"} <= names


def test_python_evaluation_equals_the_c_compiler(tmp_path):
    cases = []
    for target, name, n in size_macros():
        for args in itertools.islice(itertools.product(ARGS, repeat=n), 0, None, max(1, len(ARGS) ** n // 40)):
            size = kernel_size(target, name, *args)
            # a kernel's scratch lives in the arena, at most 2 GiB; arguments no layer has (a filter of
            # zero taps) can make a size negative, C's int overflowing where Python's does not
            if 0 <= size.bytes < 2**31:
                cases.append((target, name, args, size))
    lines = [f'    printf("%ld\\n", (long)({c.expr}));' for *_, c in cases]
    headers = sorted(p.name for t in ("c", "cmsis_nn") for p in (KERNELS / t).glob("*.h"))  # kernels' own headers too
    src = tmp_path / "sizes.c"
    src.write_text("#include <stdio.h>\n" + "".join(f'#include "{h}"\n' for h in headers) +
                   "int main(void)\n{\n" + "\n".join(lines) + "\n    return 0;\n}\n")
    exe = tmp_path / "sizes"
    subprocess.run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(KERNELS / "c"), "-I",
                    str(KERNELS / "cmsis_nn"), "-I", str(KERNELS.parent / "include"), str(src), "-o", str(exe)],
                   check=True)
    values = [int(v) for v in subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.split()]
    assert len(cases) > 40
    assert values == [c.bytes for *_, c in cases]


def test_the_evaluator_refuses_what_it_cannot_compute():
    with pytest.raises(LookupError, match="no macro MCU_NOPE"):
        kernel_size("cmsis_nn", "MCU_NOPE", 1)
    with pytest.raises(TypeError, match="takes 2 arguments, got 3"):
        kernel_size("cmsis_nn", "MCU_CMSIS_CONV2D_S8_SCRATCH_BYTES", 1, 2, 3)
    with pytest.raises(ValueError, match="non-negative"):
        kernel_size("cmsis_nn", "MCU_CMSIS_CONV2D_S8_SCRATCH_BYTES", -7, 4)
