"""The cmsis-nn int8 TRANSPOSE (mcu_cmsis_transpose_s8) against the TFLite Micro interpreter: its kernel
model, the C on the host (plain and DSP-emulated paths) and, as slow tests, on QEMU (Cortex-M4 DSP,
Cortex-M55 Helium gathers). One model holds a TRANSPOSE per case: NHWC <-> NCHW with plane sizes on
and off the 4x4 blocks, 2-D, rank 3 and 5 permutations, an identity (merged into one copy) and a
plane whose stride is too wide for the Helium gather's 16-bit offsets; int16 transposes stay on the
portable kernel."""

from __future__ import annotations

import numpy as np
import pytest

from devtools.tflite_writer import ModelWriter
from mcuforge.driver import compile_model
from mcuforge.verify import verify_board, verify_host, verify_program

CASES = [  # (shape, perm)
    ((1, 16, 16, 32), (0, 3, 1, 2)),
    ((1, 32, 16, 16), (0, 2, 3, 1)),
    ((1, 7, 5, 9), (0, 3, 1, 2)),
    ((1, 6, 5, 3), (0, 2, 3, 1)),
    ((64, 48), (1, 0)),
    ((37, 19), (1, 0)),
    ((4, 6, 10), (1, 0, 2)),
    ((2, 3, 5), (2, 0, 1)),
    ((2, 3, 4, 5, 3), (4, 2, 0, 3, 1)),
    ((3, 4, 5), (0, 1, 2)),
    ((2, 3, 6000), (2, 1, 0)),
]


def build(cases, dtype: str = "int8", seed: int = 5) -> tuple[bytes, list[np.ndarray]]:
    """One model with a TRANSPOSE per case (shape, perm), each on its own input; one input set."""
    w, ins, outs, data = ModelWriter(), [], [], []
    rng = np.random.default_rng(seed)
    q = {"scale": 0.05, "zero_point": 3} if dtype == "int8" else {"scale": 0.001}
    for k, (shape, perm) in enumerate(cases):
        x = w.tensor(shape, dtype, name=f"x{k}", **q)
        p = w.tensor((len(perm),), "int32", data=np.array(perm, np.int32), name=f"perm{k}")
        y = w.tensor(tuple(shape[i] for i in perm), dtype, name=f"y{k}", **q)
        w.op("TRANSPOSE", [x, p], [y])
        ins.append(x)
        outs.append(y)
        info = np.iinfo(np.dtype(dtype))
        data.append(rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype))
    return w.finish(ins, outs), data


def compiled_cases(tmp_path, dtype: str = "int8"):
    blob, data = build(CASES, dtype)
    path = tmp_path / f"transpose_{dtype}.tflite"
    path.write_bytes(blob)
    return compile_model(path), data


def test_int8_goes_to_cmsis_nn_and_other_types_stay_portable(tmp_path):
    compiled, _ = compiled_cases(tmp_path)
    assert [b.kernel.function for b in compiled.program.bindings] == ["mcu_cmsis_transpose_s8"] * len(CASES)
    compiled, _ = compiled_cases(tmp_path, "int16")
    assert {b.kernel.function for b in compiled.program.bindings} == {"mcu_gather"}


def test_kernel_model_equals_tflm(tmp_path):
    compiled, data = compiled_cases(tmp_path)
    for res in verify_program(compiled, [data], isolate=False):
        assert res.ok, [str(m) for m in res.mismatches][:5]


def test_c_kernel_equals_tflm_on_host(tmp_path):
    """Both host builds: the plain C path and the DSP path (its instructions emulated)."""
    compiled, data = compiled_cases(tmp_path)
    for dsp in (False, True):
        (res,) = verify_host(compiled, [data], isolate=False, dsp=dsp)
        assert res.ok, (dsp, [str(m) for m in res.mismatches][:5])


@pytest.mark.slow
def test_c_kernel_equals_tflm_on_qemu(tmp_path):
    """Cortex-M4 (DSP) and Cortex-M55 (Helium gathers and scatters)."""
    compiled, data = compiled_cases(tmp_path)
    for board in ("mps2-an386", "mps3-an547"):
        (res,) = verify_board(compiled, [data], board)
        assert res.ok, (board, [str(m) for m in res.mismatches][:5])
