"""Random valid int8 models (devtools.randmodel), compiled with the default targets, run as C on the
host and compared byte for byte with the TFLite Micro interpreter; the writer and the shrinker;
every kept failure (tests/fixtures/random/) replayed.

A failing seed is reproduced, shrunk and kept with
    python tools/random_models.py --seed S --count 1 --shrink
The longer run: python tools/random_models.py --seed 1000 --count 2000
"""

import json
from collections import Counter

import numpy as np
import pytest
from conftest import FIXTURES
from mcuforge.frontend.reader import read_tflite_bytes

from devtools.randmodel import build, check_models, random_spec, shrink
from devtools.tflite_writer import ModelWriter
from mcuforge.oracle import run_tflm_inprocess

CI_SEED, CI_COUNT = 0, 200
SANITIZED_COUNT = 16
DSP_SEED, DSP_COUNT = 5000, 200
RANDOM_FIXTURES = FIXTURES / "random"


def test_ci_batch_of_random_models_bit_exact_on_host(tmp_path):
    """200 seeded random models: each compiles, its generated C builds with -Wall -Wextra -Werror,
    and its outputs on 3 random inputs equal TFLM's byte for byte and vary with the input."""
    seeds = list(range(CI_SEED, CI_SEED + CI_COUNT))
    outcomes = check_models([(f"seed{s}", build(random_spec(s))) for s in seeds], tmp_path, 3, input_seeds=seeds)
    assert len(outcomes) == CI_COUNT
    bad = [str(o) for o in outcomes if not o.ok]
    assert not bad, (f"{len(bad)} of {CI_COUNT} random models fail (reproduce and shrink with "
                     f"tools/random_models.py --seed S --count 1 --shrink):\n" + "\n".join(bad[:10]))


def test_dsp_batch_of_random_models_bit_exact_on_host(tmp_path):
    """200 more seeded random models with the cmsis-nn kernels' DSP paths (instructions emulated in C,
    -DMCU_CMSIS_DSP_EMULATE): equal to TFLM byte for byte. The batch's convolutions, depthwise
    convolutions, fully connected layers and ADDs take the fast requantization records (`rq`, checked
    on the first 80 models); the general path, which random models rarely need, is covered by the
    tests/fixtures/regimes/no_proof_* models (tests/test_host_e2e.py, tests/test_regimes.py)."""
    from mcuforge.driver import compile_model

    seeds = list(range(DSP_SEED, DSP_SEED + DSP_COUNT))
    blobs = [(f"seed{s}", build(random_spec(s))) for s in seeds]
    outcomes = check_models(blobs, tmp_path / "check", 3, input_seeds=seeds, dsp=True)
    bad = [str(o) for o in outcomes if not o.ok]
    assert not bad, (f"{len(bad)} of {DSP_COUNT} random models fail with the DSP path (reproduce with "
                     f"tools/random_models.py --seed S --count 1 --dsp):\n" + "\n".join(bad[:10]))
    fast = Counter()
    for k, (_, blob) in enumerate(blobs[:80]):
        (tmp_path / f"m{k}.tflite").write_bytes(blob)
        for b in compile_model(tmp_path / f"m{k}.tflite").program.bindings:
            fast[b.kernel.info.op] += b.kernel.info.target == "cmsis-nn" and "rq" in b.kernel.constants
    assert min(fast[op] for op in ("conv_2d", "depthwise_conv_2d", "fully_connected", "add")) >= 5, dict(fast)


def test_random_models_under_address_and_undefined_behaviour_sanitizers(tmp_path):
    """A few more seeds with the host C (kernels included) built with ASan and UBSan: no kernel
    reads or writes outside its buffers or its model's arena, no signed overflow or bad shift."""
    seeds = list(range(CI_SEED + CI_COUNT, CI_SEED + CI_COUNT + SANITIZED_COUNT))
    outcomes = check_models([(f"seed{s}", build(random_spec(s))) for s in seeds], tmp_path, 2, input_seeds=seeds,
                            sanitize=True)
    bad = [str(o) for o in outcomes if not o.ok]
    assert not bad, "\n".join(bad)


def test_generator_covers_the_operators_and_their_variants():
    """The CI seeds exercise the supported ops (all but TRANSPOSE_CONV, DEQUANTIZE, PADV2, SQUEEZE,
    RELU_N1_TO_1 as an op) in their interesting variants."""
    seen: Counter = Counter()
    for s in range(CI_SEED, CI_SEED + CI_COUNT):
        g = read_tflite_bytes(build(random_spec(s)))
        t = g.tensors
        for op in g.operators:
            seen[op.name] += 1
            o = op.options
            if op.name == "CONV_2D":
                w = t[op.inputs[1]]
                seen["conv 1x1" if w.shape[1:3] == (1, 1) else "conv kxk"] += 1
                seen["conv strided"] += max(o.StrideH(), o.StrideW()) > 1
                seen["conv dilated"] += max(o.DilationHFactor(), o.DilationWFactor()) > 1
                seen["per-channel weights"] += len(w.quant.scale) > 1
                seen["per-tensor weights"] += len(w.quant.scale) == 1
            if op.name == "DEPTHWISE_CONV_2D":
                seen["dw multiplier>1"] += o.DepthMultiplier() > 1
                seen["dw dilated"] += max(o.DilationHFactor(), o.DilationWFactor()) > 1
            if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D"):
                seen[f"padding {o.Padding()}"] += 1
            if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "MUL"):
                seen[f"fused activation {o.FusedActivationFunction()}"] += 1
            if op.name in ("ADD", "MUL"):
                a, b = (t[i].shape for i in op.inputs)
                seen[f"{op.name} broadcast" if a != b else f"{op.name} same shape"] += 1
                seen["residual (two different tensors)"] += op.inputs[0] != op.inputs[1] and a == b
        seen["several outputs"] += len(g.outputs) > 1
        seen["nonzero input zero point"] += t[g.inputs[0]].quant.zero_point[0] != 0
    want = ["CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D", "MAX_POOL_2D", "ADD", "MUL",
            "CONCATENATION", "RESHAPE", "PAD", "MEAN", "SOFTMAX", "LOGISTIC", "TANH", "RELU", "RELU6", "QUANTIZE",
            "SUB", "LEAKY_RELU", "HARD_SWISH", "TRANSPOSE", "STRIDED_SLICE", "RESIZE_NEAREST_NEIGHBOR",
            "conv 1x1", "conv kxk", "conv strided", "conv dilated", "per-channel weights", "per-tensor weights",
            "dw multiplier>1", "dw dilated", "padding 0", "padding 1", "fused activation 0", "fused activation 1",
            "fused activation 2", "fused activation 3", "ADD broadcast", "MUL broadcast", "ADD same shape",
            "residual (two different tensors)", "several outputs", "nonzero input zero point"]
    missing = [w for w in want if seen[w] < 3]
    assert not missing, f"rare or missing in {CI_COUNT} models: {missing}; seen {dict(seen)}"


def test_generator_is_deterministic():
    assert random_spec(12345) == random_spec(12345)
    assert build(random_spec(12345)) == build(random_spec(12345))
    assert random_spec(1) != random_spec(2)


def test_writer_round_trip_through_the_reader_and_tflm():
    """Shapes, types, per-tensor and per-channel quantization, constant data and options survive
    the writer; TFLM runs the model and a fused RELU clamps at the output zero point."""
    rng = np.random.default_rng(3)
    w = ModelWriter()
    x = w.tensor((1, 5, 6, 3), scale=0.05, zero_point=-7, name="x")
    wdata = rng.integers(-127, 128, size=(4, 3, 3, 3)).astype(np.int8)
    k = w.tensor((4, 3, 3, 3), data=wdata, scale=[0.01, 0.02, 0.03, 0.04], axis=0)
    b = w.tensor((4,), dtype="int32", data=[100, -200, 300, -400], scale=[5e-4, 1e-3, 1.5e-3, 2e-3])
    y = w.tensor((1, 3, 3, 4), scale=0.08, zero_point=-128, name="y")
    w.op("CONV_2D", [x, k, b], [y], Padding="SAME", StrideW=2, StrideH=2, FusedActivationFunction="RELU")
    blob = w.finish(inputs=[x], outputs=[y])
    g = read_tflite_bytes(blob)
    assert [t.shape for t in g.tensors] == [(1, 5, 6, 3), (4, 3, 3, 3), (4,), (1, 3, 3, 4)]
    assert g.tensors[1].quant.scale == pytest.approx([0.01, 0.02, 0.03, 0.04])
    assert g.tensors[1].quant.axis == 0 and tuple(g.tensors[0].quant.zero_point) == (-7,)
    assert np.array_equal(np.asarray(g.tensors[1].data).reshape(4, 3, 3, 3), wdata)
    assert np.asarray(g.tensors[2].data).ravel().tolist() == [100, -200, 300, -400]
    (op,) = g.operators
    assert (op.name, op.options.StrideW(), op.options.Padding(), op.options.FusedActivationFunction()) == \
        ("CONV_2D", 2, 0, 1)
    (outs, _), = run_tflm_inprocess(blob, [[rng.integers(-128, 128, size=(1, 5, 6, 3)).astype(np.int8)]])
    assert outs[0].shape == (1, 3, 3, 4) and outs[0].min() == -128 and len(np.unique(outs[0])) > 3


def test_writer_rejects_data_of_the_wrong_size_and_unknown_ops():
    w = ModelWriter()
    with pytest.raises(ValueError, match="elements"):
        w.tensor((2, 2), data=[1, 2, 3])
    with pytest.raises(ValueError, match="operator"):
        w.op("NOT_AN_OP", [0], [1])


def test_shrink_removes_ops_and_shrinks_shapes_while_the_predicate_holds():
    """A predicate standing for a bug in depthwise convolutions with a multiplier: the shrinker keeps
    one such op and cuts everything else down."""
    spec = {"seed": 5, "input": [1, 12, 10, 6], "input_q": [0.05, 9], "ops": [
        {"op": "conv", "src": 0, "oc": 8, "k": [3, 3], "pad": "SAME", "per_channel": True, "act": "RELU"},
        {"op": "dwconv", "src": 1, "mult": 2, "k": [3, 3], "pad": "VALID", "per_channel": True, "act": "RELU6"},
        {"op": "pool", "src": 2, "kind": "max", "k": [2, 2], "stride": [2, 2], "pad": "VALID"},
        {"op": "binary", "kind": "add", "src": 3, "src2": 3}]}

    def still_fails(s):
        g = read_tflite_bytes(build(s))
        return any(op.name == "DEPTHWISE_CONV_2D" and op.options.DepthMultiplier() > 1 for op in g.operators)

    small = shrink(spec, still_fails)
    assert still_fails(small)
    assert [o["op"] for o in small["ops"]] == ["dwconv"]
    assert np.prod(small["input"]) <= 2 and small["input_q"][1] == 0  # (one element may calibrate as constant)
    assert small["ops"][0]["act"] == "NONE" and small["ops"][0]["k"] == [1, 1]


def _fixtures():
    return sorted(RANDOM_FIXTURES.glob("*.json"))


@pytest.mark.parametrize("meta", _fixtures(), ids=[p.stem for p in _fixtures()])
def test_kept_random_fixture_replays_bit_exact(meta, tmp_path, request):
    """Every kept (shrunk) failing case: compiles and is bit-exact now. Cases whose bug lives in
    files owned elsewhere carry an `xfail` reason (strict: fixing the bug makes the test fail until
    the mark is removed)."""
    info = json.loads(meta.read_text())
    if info.get("xfail"):
        request.applymarker(pytest.mark.xfail(reason=info["xfail"], strict=True))
    blob = meta.with_suffix(".tflite").read_bytes()
    (outcome,) = check_models([(meta.stem, blob)], tmp_path, 3, input_seeds=[info["spec"].get("seed", 0)])
    assert outcome.ok, str(outcome)


@pytest.mark.parametrize("meta", _fixtures(), ids=[p.stem for p in _fixtures()])
def test_kept_random_fixture_is_its_spec(meta):
    """The kept .tflite is what its recorded spec builds (else the generator changed: re-save it)."""
    info = json.loads(meta.read_text())
    assert meta.with_suffix(".tflite").read_bytes() == build(info["spec"])
