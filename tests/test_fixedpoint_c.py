"""The firmware's C fixed-point header equals ir/quant.py bit for bit (host gcc, -Werror)."""

import shutil
import subprocess

import numpy as np
import pytest
from conftest import ROOT
from mcuforge.ir import quant

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include "mcuforge_fixedpoint.h"
int main(void) {
    long x, m; int s;
    while (scanf("%ld %ld %d", &x, &m, &s) == 3) {
        printf("%d %d\n", (int)mcu_requantize((int32_t)x, (int32_t)m, s), (int)mcu_srdhm((int32_t)x, (int32_t)m));
    }
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="host gcc not installed")
def test_c_requantize_matches_reference(tmp_path):
    src = tmp_path / "t.c"
    src.write_text(PROGRAM)
    exe = tmp_path / "t"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(ROOT / "firmware/include"),
                    str(src), "-o", str(exe)], check=True)
    rng = np.random.default_rng(0)
    n = 4000
    xs = np.concatenate([rng.integers(-(2**31), 2**31, n), [-(2**31), 2**31 - 1, 0, -1, 1]])
    reals = rng.uniform(1e-6, 0.99, xs.size)
    pairs = [quant.quantize_multiplier(float(r)) for r in reals]
    ms = np.array([p[0] for p in pairs])
    ss = np.array([p[1] for p in pairs])
    ms[-5:] = [-(2**31), 2**31 - 1, 1 << 30, -(2**31), 12345]
    # Accumulators that make sense with a left shift stay within int32 after shifting.
    small = rng.integers(-(2**20), 2**20, xs.size)
    lefts = rng.integers(0, 8, xs.size)
    xs = np.concatenate([xs, small])
    ms = np.concatenate([ms, ms])
    ss = np.concatenate([ss, lefts])
    stdin = "\n".join(f"{x} {m} {s}" for x, m, s in zip(xs, ms, ss))
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.split("\n")
    got = np.array([[int(v) for v in line.split()] for line in out if line])
    want_rq = quant.multiply_by_quantized_multiplier(xs, ms, ss)
    want_hm = quant.saturating_rounding_doubling_high_mul(xs, ms)
    assert np.array_equal(got[:, 1], want_hm), np.argwhere(got[:, 1] != want_hm)[:5]
    assert np.array_equal(got[:, 0], want_rq), np.argwhere(got[:, 0] != want_rq)[:5]


PROGRAM_S64 = r"""
#include <stdio.h>
#include "mcuforge_fixedpoint.h"
int main(void) {
    long long x; long m; int s;
    while (scanf("%lld %ld %d", &x, &m, &s) == 3) {
        printf("%d\n", (int)mcu_requantize_s64((int64_t)x, (int32_t)m, s));
    }
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="host gcc not installed")
def test_c_requantize_s64_matches_reference(tmp_path):
    """The 16x8 layers' int64 requantization (TFLM's MultiplyByQuantizedMultiplier(int64_t, ...)):
    accumulators over the whole +-2^47 range, multipliers up to the 0x7FFF0000 cut, every shift
    from -31 to 14, and results that overflow int32 (truncated as TFLM's cast)."""
    src = tmp_path / "t.c"
    src.write_text(PROGRAM_S64)
    exe = tmp_path / "t"
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(ROOT / "firmware/include"),
                    str(src), "-o", str(exe)], check=True)
    rng = np.random.default_rng(1)
    n = 6000
    xs = np.concatenate([rng.integers(-(2**47) + 1, 2**47, n // 2), rng.integers(-(2**24), 2**24, n // 2),
                         [2**47 - 1, -(2**47) + 1, 0, -1, 1]])
    ms = rng.integers(1 << 30, 2**31, xs.size)
    ms[:50] = 0x7FFF0000 + rng.integers(-3, 3, 50)
    ms[-5:] = [0, 2**31 - 1, 1 << 30, 0x7FFEFFFF, 0x7FFF0000]
    ss = rng.integers(-31, 15, xs.size)
    stdin = "\n".join(f"{x} {m} {s}" for x, m, s in zip(xs, ms, ss))
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout.split()
    got = np.array([int(v) for v in out])
    want = quant.multiply_by_quantized_multiplier_int64(xs, ms, ss)
    assert np.array_equal(got, want), np.argwhere(got != want)[:5]
    with pytest.raises(ValueError):
        quant.multiply_by_quantized_multiplier_int64(1, 1 << 30, 15)
    with pytest.raises(ValueError):
        quant.multiply_by_quantized_multiplier_int64(2**47, 1 << 30, 0)
