"""The Keras-made models of tests/fixtures/keras (tools/gen_keras_models.py): the manifest describes the
committed files, and mcuforge's reader takes every one of them.

Whether TFLite Micro runs them and what mcuforge refuses of them is recorded in the manifest by
tools/check_keras_models.py; it changes as operators get implemented, so it is not asserted here.
"""

import hashlib
import json

import pytest
from conftest import FIXTURES
from mcuforge.frontend.reader import read_tflite

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
