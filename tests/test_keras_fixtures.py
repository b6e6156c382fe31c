"""The Keras-made models of tests/fixtures/keras (tools/gen_keras_models.py): the manifest describes the
committed files, mcuforge's reader takes every one of them, and every one mcuforge accepts is
bit-exact with TFLM on the host.

Whether TFLite Micro runs them and what mcuforge refuses of them is recorded in the manifest by
tools/check_keras_models.py. What mcuforge refuses is asserted (an operator that lands must come
with `python tools/check_keras_models.py --update`, and a model that stops compiling fails here); the
host and QEMU tests take the models the manifest lists as accepted.
"""

import hashlib
import json

import numpy as np
import pytest
from conftest import FIXTURES
from mcuforge.frontend.reader import read_tflite

from mcuforge.driver import compile_model
from mcuforge.verify import random_inputs, verify_host

KERAS = FIXTURES / "keras"
MANIFEST = json.loads((KERAS / "MANIFEST.json").read_text())


def test_manifest_lists_exactly_the_files():
    listed = [e["file"] for e in MANIFEST]
    assert len(listed) == len(set(listed)), "a file is listed twice"
    assert sorted(listed) == sorted(p.name for p in KERAS.glob("*.tflite"))


def test_manifest_covers_both_issues_and_io_types():
    regimes = {(e["quantization"], e["input_dtypes"][0]) for e in MANIFEST}
    for want in [("int8", "uint8"), ("int8", "int8"), ("int16x8", "int16"), ("int16x8", "float32"),
                 ("int16x8 + float fallback", "float32")]:
        assert want in regimes, f"no {want} model"


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["name"] for e in MANIFEST])
def test_model_reads_and_matches_manifest(entry):
    path = KERAS / entry["file"]
    blob = path.read_bytes()
    assert (len(blob), hashlib.sha256(blob).hexdigest()) == (entry["bytes"], entry["sha256"])
    graph = read_tflite(path)
    ops = list(dict.fromkeys(op.name for op in graph.operators))
    assert ops == entry["ops"]
    assert [graph.tensors[i].dtype for i in graph.inputs] == entry["input_dtypes"]
    assert [graph.tensors[i].dtype for i in graph.outputs] == entry["output_dtypes"]
    assert [list(graph.tensors[i].shape) for i in graph.inputs] == entry["input_shapes"]
    assert [list(graph.tensors[i].shape) for i in graph.outputs] == entry["output_shapes"]
    if entry["input_dtypes"][0] == "uint8":  # the uint8 -> int8 input QUANTIZE users' exports have
        first = graph.operators[0]
        assert first.name == "QUANTIZE" and graph.tensors[first.outputs[0]].dtype == "int8"


COMPILED = [e for e in MANIFEST if e["tflm"]["runs"] and not e["mcuforge_blockers"]]


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["name"] for e in MANIFEST])
def test_manifest_blockers_are_what_mcuforge_refuses_today(entry):
    import sys

    from conftest import ROOT

    sys.path.insert(0, str(ROOT / "tools"))
    from check_keras_models import mcuforge_blockers

    assert mcuforge_blockers(KERAS / entry["file"]) == entry["mcuforge_blockers"], \
        "run python tools/check_keras_models.py --update"


@pytest.mark.parametrize("entry", COMPILED, ids=[e["name"] for e in COMPILED])
def test_model_mcuforge_accepts_is_bit_exact_on_host(entry):
    """Every model the manifest records as accepted (no blockers) compiles with the default targets
    and its generated C is bit-exact with TFLM on the host."""
    compiled = compile_model(KERAS / entry["file"])
    rng = np.random.default_rng(13)
    results = verify_host(compiled, [random_inputs(compiled.imported, rng) for _ in range(2)], isolate=False)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad)


@pytest.mark.slow
@pytest.mark.parametrize("entry", COMPILED, ids=[e["name"] for e in COMPILED])
def test_model_mcuforge_accepts_is_bit_exact_on_qemu(entry):
    """The same on QEMU mps2-an386 (Cortex-M4), firmware built with arm-none-eabi-gcc."""
    from mcuforge.verify import verify_board

    compiled = compile_model(KERAS / entry["file"])
    rng = np.random.default_rng(14)
    results = verify_board(compiled, [random_inputs(compiled.imported, rng)], "mps2-an386", isolate=False)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad)
