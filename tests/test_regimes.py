"""Models at the edges of what TensorFlow Lite Micro defines (tests/fixtures/regimes, made by
tools/gen_regimes.py; each MANIFEST.json entry says what it exercises and what is expected):

- mcuforge refuses exactly the operators TFLM leaves undefined (a requantization left shift of 31 or
  more, an activation bound beyond int32), naming the registry rule whose sentence `inspect` and
  SUPPORTED_OPS.md show, while the twin just inside the limit compiles and is bit-exact with TFLM;
- it accepts what TFLM defines (ADD/SUB multipliers flushed to zero, int8 SOFTMAX over 1001
  elements) and is bit-exact there; on the SOFTMAX rows TFLM aborts on, it gives -128;
- TFLM's own behaviour on each model is what the manifest claims (it refuses, or it runs);
- the no-proof fixtures really lower without a fast requantization record (`rq`), so the DSP
  kernels' general path stays covered (tests/test_host_e2e.py runs them with the DSP path emulated);
- `inspect` lists every operator when one of them has a non-constant input that must be constant.

The bit-exact fixtures run as C on the host, plain and DSP, in tests/test_host_e2e.py.
"""

import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from conftest import REGIMES, regimes
from mcuforge.frontend.importer import load_tflite
from mcuforge.frontend.reader import read_tflite_bytes
from mcuforge.ir.evaluate import evaluate
from mcuforge.ir.registry import check_rule, op_for_tflite

from mcuforge.driver import compile_model
from mcuforge.errors import UnsupportedError
from mcuforge.inspection import inspect_graph
from mcuforge.oracle import OracleError, run_tflm
from mcuforge.verify import random_inputs, verify_program, verify_reference

ENTRIES = regimes()
REFUSED = [e for e in ENTRIES if e["mcuforge"] == "refuses"]
EXACT = [e for e in ENTRIES if e["mcuforge"] == "bit-exact"]


def ids(entries):
    return [e["name"] for e in entries]


def expected_reason(entry) -> str:
    """The sentence the refusal must carry: the named registry check's docstring (which must exist
    on the op), or the frontend's literal reason."""
    if entry["rule"] is None:
        return entry["reason"]
    checks = {c.__name__: c for c in op_for_tflite(entry["op"]).checks}
    assert entry["rule"] in checks, f"{entry['op']} has no check {entry['rule']}"
    return check_rule(checks[entry["rule"]]).rstrip(".")


def test_manifest_covers_every_regime_of_the_issue():
    shifted = {e["op"] for e in REFUSED if e["name"].startswith("shift3")}
    assert {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "LEAKY_RELU", "MEAN", "QUANTIZE",
            "RELU"} <= shifted
    assert {e["op"] for e in REFUSED if e["name"].startswith("bound_")} >= {"CONV_2D", "AVERAGE_POOL_2D",
                                                                          "MAX_POOL_2D", "ADD"}
    assert {e["op"] for e in EXACT if e["name"].startswith("flush_")} == {"ADD", "SUB"}
    assert {op for e in EXACT for op in e["no_rq"]} == {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD"}
    assert sorted(p.name for p in REGIMES.glob("*.tflite")) == sorted(e["file"] for e in ENTRIES)


@pytest.mark.parametrize("entry", REFUSED, ids=ids(REFUSED))
def test_refused_with_the_rule_sentence(entry):
    """`inspect` marks the operator with the rule's sentence; compiling refuses with it."""
    path = REGIMES / entry["file"]
    reason = expected_reason(entry)
    info = inspect_graph(read_tflite_bytes(path.read_bytes()))
    bad = [op for op in info["operators"] if op["op"] == entry["op"] and not op["supported"]]
    assert bad and reason in bad[0]["reason"], (reason, info["unsupported"])
    with pytest.raises(UnsupportedError, match=re.escape(reason)):
        load_tflite(path)


def _inputs(blob: bytes, seed: int = 0) -> list[np.ndarray]:
    graph = read_tflite_bytes(blob)
    rng = np.random.default_rng(seed)
    out = []
    for t in (graph.tensors[i] for i in graph.inputs):
        info = np.iinfo(np.dtype(t.dtype))
        out.append(rng.integers(info.min, info.max, size=t.shape, endpoint=True).astype(t.dtype))
    return out


CHECKED = [e for e in ENTRIES if e["tflm"] in ("refuses", "runs")]


@pytest.mark.parametrize("entry", CHECKED, ids=ids(CHECKED))
def test_tflm_does_what_the_manifest_says(entry):
    """TFLM refuses the model (Prepare fails), or runs it (for a model mcuforge refuses: computing
    with an undefined shift or an unset bound)."""
    blob = (REGIMES / entry["file"]).read_bytes()
    if entry["tflm"] == "refuses":
        with pytest.raises(OracleError):
            run_tflm(blob, [_inputs(blob)])
    else:
        (outs, _), = run_tflm(blob, [_inputs(blob)])
        assert len(outs) == len(read_tflite_bytes(blob).outputs)


@pytest.mark.parametrize("entry", EXACT, ids=ids(EXACT))
def test_accepted_regime_bit_exact_with_tflm(entry):
    """The numpy reference and the lowered program (every kernel model with its constants) equal TFLM
    on every tensor, on random inputs."""
    compiled = compile_model(REGIMES / entry["file"])
    rng = np.random.default_rng(3)
    sets = [random_inputs(compiled.imported, rng) for _ in range(4)]
    if entry["op"] == "SOFTMAX":  # keep to rows TFLM computes (see the test below for the others)
        sets = [[np.clip(x, -100, 100).astype(np.int8) for x in s] for s in sets]
    for what, results in (
        ("imported", verify_reference(compiled.imported, compiled.blob, sets, intermediates=True)),
        ("lowered", verify_program(compiled, sets, intermediates=True)),
    ):
        bad = [f"{what} input {r.index}: {m}" for r in results for m in r.mismatches]
        assert not bad, "\n".join(bad[:10])


NO_RQ = [e for e in EXACT if e["no_rq"]]


@pytest.mark.parametrize("entry", NO_RQ, ids=ids(NO_RQ))
def test_no_proof_fixture_takes_the_general_requantization(entry):
    """Every layer of the named operators lowers to a cmsis-nn kernel without `rq`: the DSP build runs
    the kernels' general requantization (if a planner change ever proves these layers, this fails and
    the fixture must be made harder)."""
    compiled = compile_model(REGIMES / entry["file"])
    layers = [b.kernel for b in compiled.program.bindings
              if any(s.name in entry["no_rq"] for s in b.kernel.info.sources)]
    assert layers and all(k.info.target == "cmsis-nn" for k in layers), [(k.symbol, k.info.target) for k in layers]
    assert all("rq" not in k.constants for k in layers), [k.symbol for k in layers if "rq" in k.constants]
    assert all("multiplier" in k.constants or "output_multiplier" in k.params for k in layers)


# ---- SOFTMAX over 1001 elements: the rows TFLM aborts on ---------------------------------------------

SOFTMAX = REGIMES / "softmax_1001_rows.tflite"


def _host_outputs(compiled, x: np.ndarray, dsp: bool) -> np.ndarray:
    from mcuforge.codegen.emit import emit
    from mcuforge.host import DSP_EMULATE, build_host, run_host

    with tempfile.TemporaryDirectory(prefix="mcuforge-regime-") as tmp:
        exe = build_host(emit(compiled, Path(tmp) / "model", "model"), extra_cflags=(DSP_EMULATE,) if dsp else ())
        out = compiled.program.outputs[0]
        (ours,), = run_host(exe, [[x]], [compiled.program.buffers[out].type])
    return ours


def _rows(*rows) -> np.ndarray:
    return np.stack(rows).astype(np.int8)


def test_softmax_row_sum_512_is_where_tflm_aborts():
    """The boundary: 511 values at the row maximum (the rest far below) sum to just under 512 and TFLM
    computes the row; 512 values at the maximum reach 512 and TFLM aborts."""
    blob = SOFTMAX.read_bytes()
    low = np.full(1001, -128)
    below, at = low.copy(), low.copy()
    below[:511], at[:512] = 100, 100
    other = np.random.default_rng(1).integers(-100, 100, 1001)
    (outs, _), = run_tflm(blob, [[_rows(other, below)]])
    compiled = compile_model(SOFTMAX)
    (ours,) = evaluate(compiled.imported, [_rows(other, below)])
    assert np.array_equal(ours, outs[0]) and outs[0][1, 0] > -128
    with pytest.raises(OracleError, match="signal 6"):
        run_tflm(blob, [[_rows(other, at)]])


def test_softmax_rows_tflm_aborts_on_give_minus_128():
    """A row of 1001 equal values (sum of exponentials 1001): TFLM aborts; mcuforge's numpy reference,
    kernel model and C (plain and DSP) give -128 for that row and, for the other row, exactly what
    TFLM gives for it (rows are independent: checked on an input where TFLM runs)."""
    rng = np.random.default_rng(2)
    r0, r1 = (rng.integers(-128, 128, 1001) for _ in range(2))
    equal = np.full(1001, 37)
    blob = SOFTMAX.read_bytes()
    with pytest.raises(OracleError):
        run_tflm(blob, [[_rows(r0, equal)]])
    (theirs, _), = run_tflm(blob, [[_rows(r0, r1)]])
    compiled = compile_model(SOFTMAX)
    x = _rows(r0, equal)
    results = {"reference": evaluate(compiled.imported, [x])[0], "kernel model": compiled.program.evaluate([x])[0],
               "C": _host_outputs(compiled, x, False), "C (DSP)": _host_outputs(compiled, x, True)}
    for what, ours in results.items():
        assert np.array_equal(ours[0], theirs[0][0]), what
        assert np.all(ours[1] == -128), what


def test_softmax_1001_class_classifier_bit_exact():
    """A TensorFlow-converted 1001-class classifier (tests/fixtures/models/softmax_1001_classes): its
    rows stay far below 512, TFLM runs it, and mcuforge compiles it (no refusal) bit-exactly, also
    on the host (tests/test_host_e2e.py, plain and DSP)."""
    from conftest import MODELS

    compiled = compile_model(MODELS / "softmax_1001_classes.tflite")
    assert any(b.kernel.info.op == "softmax" and b.kernel.output.shape[-1] == 1001 for b in compiled.program.bindings)
    rng = np.random.default_rng(5)
    sets = [random_inputs(compiled.imported, rng) for _ in range(4)]
    results = verify_program(compiled, sets, intermediates=True)
    assert not [m for r in results for m in r.mismatches]


# ---- inspect with a non-constant input ---------------------------------------------------------------

def test_inspect_lists_every_operator_when_an_input_is_not_constant(cli):
    """MEAN #0 reads its axis from a model input: one problem row, and the table still shows MEAN #1
    (three axes: refused by its own rule) and the ADD, which is fine; exit code 2, one line on stderr."""
    res = cli("inspect", REGIMES / "nonconstant_mean_axis.tflite")
    rows = [ln for ln in res.stdout.splitlines() if re.match(r"\s+\d+\s{2}[A-Z]", ln)]
    assert len(rows) == 3, res.stdout
    assert "UNSUPPORTED: input 1 ('axis') must be a constant tensor" in rows[0]
    assert "UNSUPPORTED: At most 2 distinct axes" in rows[1] and rows[2].rstrip().endswith("ok")
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "#0 MEAN" in res.stderr and "#1 MEAN" in res.stderr


def test_depthwise_bias_written_as_absent_is_refused(tmp_path):
    """TFLM crashes on a DEPTHWISE_CONV_2D whose bias input is -1 (it runs one without a third
    input): mcuforge refuses the first with its rule and compiles the second bit-exact."""
    from devtools.tflite_writer import ModelWriter

    def model(inputs_after_weights):
        w = ModelWriter()
        x = w.tensor((1, 5, 5, 4), "int8", scale=0.1, zero_point=2)
        k = w.tensor((1, 3, 3, 4), "int8", scale=[0.02, 0.03, 0.01, 0.05], axis=3,
                     data=np.arange(36).reshape(1, 3, 3, 4) % 7 - 3)
        y = w.tensor((1, 5, 5, 4), "int8", scale=0.05, zero_point=-3)
        w.op("DEPTHWISE_CONV_2D", [x, k, *inputs_after_weights], [y], Padding="SAME", StrideW=1, StrideH=1,
             DepthMultiplier=1)
        return w.finish([x], [y])

    marked, omitted = tmp_path / "marked.tflite", tmp_path / "omitted.tflite"
    marked.write_bytes(model([-1]))
    omitted.write_bytes(model([]))
    data = [np.arange(100, dtype=np.int8).reshape(1, 5, 5, 4)]
    with pytest.raises(OracleError, match="signal"):
        run_tflm(marked.read_bytes(), [data])
    with pytest.raises(UnsupportedError) as e:
        load_tflite(marked)
    assert e.value.problems[0][2].startswith("A bias must be given or left out, not written as an absent input")
    compiled = compile_model(omitted)
    (res,) = verify_program(compiled, [data], isolate=True)
    assert res.ok, [str(m) for m in res.mismatches]
