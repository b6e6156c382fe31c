"""firmware/include/mcuforge_gemmlowp.h equals its numpy model (ir/ops/_fixedpoint.py) bit for bit on
the whole input ranges the kernels use, beyond what the op tests reach: GetReciprocal of 0 to 2**31
- 1, exp_on_negative_values on Q5.26, the log of Q12.19 values from 1 up, and the inverse square
root of every int32 magnitude (host gcc, -Wall -Wextra -Werror)."""

import shutil
import subprocess

import numpy as np
import pytest
from conftest import ROOT
from mcuforge.ir.ops import _fixedpoint as fp

PROGRAM = r"""
#include <stdio.h>
#include "mcuforge_gemmlowp.h"
int main(void) {
    long x;
    while (scanf("%ld", &x) == 1) {
        int recip_bits, inv_shift;
        int32_t inv;
        const int32_t recip = mcu_get_reciprocal((int32_t)x, 31, &recip_bits);
        mcu_inv_sqrt_multiplier_exp((int32_t)x, -1, &inv, &inv_shift);
        const int32_t e = mcu_exp_on_negative_values(x > 0 ? (int32_t)-x : (int32_t)x, 5);
        const int32_t lg = x >= (1 << 19) ? mcu_log_x_for_x_greater_than_or_equal_to_1((int32_t)x, 5, 12) : 0;
        printf("%d %d %d %d %d %d\n", (int)recip, recip_bits, (int)inv, inv_shift, (int)e, (int)lg);
    }
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="host gcc not installed")
def test_c_helpers_match_numpy(tmp_path):
    src, exe = tmp_path / "t.c", tmp_path / "t"
    src.write_text(PROGRAM)
    subprocess.run(["gcc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(ROOT / "firmware/include"),
                    str(src), "-o", str(exe)], check=True)
    rng = np.random.default_rng(5)
    x = np.concatenate([np.arange(0, 600), 2 ** np.arange(0, 31), 2 ** np.arange(1, 32) - 1,
                        rng.integers(0, 2**31, 6000), rng.integers(1 << 19, 1 << 31, 2000)]).astype(np.int64)
    out = subprocess.run([str(exe)], input="\n".join(map(str, x)), capture_output=True, text=True, check=True)
    got = np.array([[int(v) for v in line.split()] for line in out.stdout.splitlines()])
    recip, recip_bits = fp.get_reciprocal(x, 31)
    inv, inv_shift = fp.inv_sqrt_multiplier_exp(x)
    e = fp.exp_on_negative_values(-x, 5)
    big = x >= 1 << 19
    lg = np.where(big, fp.log_x_for_x_greater_than_or_equal_to_1(np.where(big, x, 1 << 19), 5, 12), 0)
    for k, (name, want) in enumerate([("reciprocal", recip), ("reciprocal bits", recip_bits), ("inv sqrt", inv),
                                      ("inv sqrt shift", inv_shift), ("exp", e), ("log", lg)]):
        bad = np.argwhere(got[:, k] != want)
        assert not bad.size, f"{name}: x = {x[bad[:5, 0]]}: C {got[bad[:5, 0], k]}, numpy {want[bad[:5, 0]]}"
