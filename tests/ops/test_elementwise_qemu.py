"""The element-wise fixtures end to end on QEMU mps2-an386 (Cortex-M4): the firmware built with
arm-none-eabi-gcc (float32 kernels linked with newlib's libm), run over the serial link, outputs
(int8, bool) byte for byte equal to TFLite Micro on the host. The float32 EXP/LOG/ELU kernels call
the C library, so newlib and glibc could differ there; ELU's fixture checks that they agree on its
values."""

import os
import shutil

import numpy as np
import pytest
from conftest import MODELS

from mcuforge.driver import compile_model
from mcuforge.verify import random_inputs, verify_board

TOOLS = [t for t in ("arm-none-eabi-gcc", "qemu-system-arm", "cmake") if shutil.which(t) is None]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(TOOLS) and os.environ.get("CI") != "true",
                       reason=f"needs {', '.join(TOOLS)} (CI installs them and runs these)"),
]

FIXTURES = ["elem_lenet_log_softmax", "elem_prelu_landmark_net", "elem_elu_float", "elem_neg_floor_round_float",
            "elem_compare_select", "elem_cast_int32_chain", "elem_div"]


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_on_qemu_is_bit_exact(name):
    compiled = compile_model(MODELS / f"{name}.tflite")
    rng = np.random.default_rng(13)
    sets = [random_inputs(compiled.imported, rng) for _ in range(3)]
    results = verify_board(compiled, sets, "mps2-an386", isolate=False)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad)
