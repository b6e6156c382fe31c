"""Every fixture end to end on the host with the default targets (cmsis-nn first, portable
fallback): generated C built with gcc -Wall -Wextra -Werror, outputs byte for byte equal to TFLM.
Each model twice: the plain C build, and the cmsis-nn kernels' DSP paths with their instructions
emulated in C (-DMCU_CMSIS_DSP_EMULATE: the fast requantization records and, on the
tests/fixtures/regimes/no_proof_* models, the general requantization the DSP build takes without
them). The fixtures are the TensorFlow-converted models, the accepted regime models
(tests/fixtures/regimes) and the MLPerf Tiny models.
A model with state (LSTM, SVDF) runs two sequences of three steps: the state carried within a
sequence, the generated <prefix>_reset() between them."""

import numpy as np
import pytest
from conftest import MLPERF_MODELS, MODELS, REGIMES, manifest, regimes

from mcuforge.driver import compile_model
from mcuforge.verify import random_inputs, verify_host

CASES = ([(f["name"], MODELS / f["file"]) for f in manifest()]
         + [(f"regime_{r['name']}", REGIMES / r["file"]) for r in regimes() if r["mcuforge"] == "bit-exact"]
         + [(n, p) for n, p in sorted(MLPERF_MODELS.items())])


@pytest.mark.parametrize("dsp", [False, True], ids=["plain", "dsp"])
@pytest.mark.parametrize("name, path", CASES, ids=[c[0] for c in CASES])
def test_generated_c_bit_exact_on_host(name, path, dsp):
    compiled = compile_model(path)
    rng = np.random.default_rng(21)
    steps = 3 if compiled.program.states else 1
    sets = [random_inputs(compiled.imported, rng) for _ in range(6 if compiled.program.states else 3)]
    results = verify_host(compiled, sets, isolate=False, dsp=dsp, steps=steps)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad)
