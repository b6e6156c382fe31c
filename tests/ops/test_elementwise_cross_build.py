"""The element-wise ops' portable kernels build warning-free for Cortex-M4 and Cortex-M55 with
arm-none-eabi-gcc -Wall -Wextra -Werror (their host builds run in the op tests)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import ROOT

KERNELS = ROOT / "firmware" / "kernels" / "c"
SOURCES = ("mcu_comparisons", "mcu_select_v2", "mcu_arith_s32", "mcu_squared_difference_s8", "mcu_div_s8",
           "mcu_prelu_s8", "mcu_lookup_s8", "mcu_unary_f32", "mcu_cast", "mcu_log_softmax_s8",
           "mcu_l2_normalization_s8", "mcu_softmax_s8",
           # ADD_N, REVERSE_V2, DYNAMIC_UPDATE_SLICE, EMBEDDING_LOOKUP, BROADCAST_ARGS, logical ops,
           # FLOOR_DIV / FLOOR_MOD, L2_POOL_2D
           "mcu_add_n", "mcu_reverse", "mcu_dynamic_update_slice", "mcu_embedding_lookup", "mcu_broadcast_args",
           "mcu_logical", "mcu_floor_div_mod", "mcu_l2_pool_2d_f32")


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="arm-none-eabi-gcc not installed")
@pytest.mark.parametrize("cpu", [["-mcpu=cortex-m4", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
                                 ["-mcpu=cortex-m55", "-mfloat-abi=hard"]], ids=["m4", "m55"])
def test_cross_compile_warning_free(tmp_path, cpu):
    for name in SOURCES:
        cmd = ["arm-none-eabi-gcc", *cpu, "-mthumb", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror",
               "-I", str(KERNELS), "-I", str(ROOT / "firmware" / "include"), "-c", str(KERNELS / f"{name}.c"),
               "-o", str(tmp_path / f"{name}.o")]
        r = subprocess.run(cmd, capture_output=True, text=True, check=False)
        assert r.returncode == 0, f"{name}.c:\n{r.stderr}"
