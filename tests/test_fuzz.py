"""Malformed models never crash the compiler: a seeded, bounded fuzz run over mutants of the fixture
and MLPerf models, and one named regression test per crash the fuzzer found.

Every command ends with exit 0 or one clean error line and exit 2; a compile that fails leaves
its -o directory as it was. The mutants are built at test time (devtools/tflite_codec.py decodes a
fixture to plain data, the test edits it, and encodes it back), so no binary fixture is needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import MLPERF_MODELS, MODELS, ROOT
from mcuforge.frontend import read_tflite_bytes

from devtools.fuzz import (
    MEMORY_LIMIT,
    Campaign,
    Result,
    Worker,
    check_output_dir,
    judge,
    run_subprocess,
    source_models,
)
from devtools.tflite_codec import decode, encode, encode_with_vectors
from mcuforge.cli import main
from mcuforge.codegen.output_dir import MARKER
from mcuforge.inspection import inspect_graph

COMMANDS = ("inspect", "plan", "compile")


def mutated(tmp_path: Path, fixture: Path, edit) -> Path:
    """`fixture` decoded, changed by `edit(doc)`, encoded back to tmp_path/bad.tflite."""
    doc = decode(fixture.read_bytes())
    edit(doc)
    p = tmp_path / "bad.tflite"
    p.write_bytes(encode(doc))
    return p


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_refused(capsys, tmp_path: Path, model: Path, *needles: str, commands=COMMANDS, args=()) -> None:
    """Each command: exit 2, one line on stderr naming the problem, no output directory left."""
    for command in commands:
        out_dir = tmp_path / "out"
        extra = (["-o", out_dir] if command == "compile" else []) + list(args)
        code, _, err = run(capsys, command, model, *extra)
        lines = err.strip().splitlines()
        assert code == 2, (command, code, err)
        assert len(lines) == 1 and lines[0].startswith("mcuforge: error: "), (command, err)
        for n in needles:
            assert n in lines[0], (command, n, lines[0])
        assert not out_dir.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def sg(doc):
    return doc["subgraphs"][0]


# ------------------------------------------------------------------------------------------------
# the fuzz run itself
# ------------------------------------------------------------------------------------------------

def test_fuzz_mutants_end_cleanly(tmp_path):
    """Seeded mutants through inspect, plan and compile in a memory-limited worker (the CLI's
    main() in-process), every 40th rechecked through `python -m mcuforge`; a mutant that compiles
    must also be bit-exact with TFLite Micro (`verify --on reference`) or be refused by it.
    Bounded by count, never by time (about 30 s on an idle machine; the 60 s per request only stops
    a hang), so a loaded machine runs the same mutants, only slower."""
    campaign = Campaign(source_models(ROOT), seed=20261122, workdir=tmp_path, timeout=60.0, subprocess_every=40,
                        verify=True)
    report = campaign.run(count=600)
    print(report.summary())
    assert not report.failures, report.summary()
    assert report.mutants == 600, report.summary()
    for c in COMMANDS:
        assert sum(report.counts[c].values()) == report.mutants
        # The mutants exercise both sides: many refused, some accepted all the way through compile.
        assert report.counts[c]["exit 2"] >= report.mutants // 2, report.summary()
    assert report.counts["compile"]["exit 0"] >= report.mutants // 50, report.summary()
    assert sum(report.counts["verify"].values()) == report.counts["compile"]["exit 0"]
    assert report.counts["verify"]["exit 0"] >= 1, report.summary()
    assert report.subprocess_checks >= 3


def test_codec_round_trip_keeps_every_fixture_identical(tmp_path, capsys):
    """decode -> encode of every source model gives a model that inspects the same (the mutations
    start from faithful copies), and a compiled one plans the same."""
    for src in source_models(ROOT):
        blob = src.read_bytes()
        a, b = (read_tflite_bytes(x, "m") for x in (blob, encode(decode(blob))))
        assert inspect_graph(a) == inspect_graph(b), src.name
        for ta, tb in zip(a.tensors, b.tensors):
            assert (ta.data is None) == (tb.data is None) and (ta.data is None or (ta.data == tb.data).all())
        assert [(o.name, type(o.options)) for o in a.operators] == [(o.name, type(o.options)) for o in b.operators]
    for src in (MLPERF_MODELS["kws"], MODELS / "mix_residual_block.tflite"):
        copy = tmp_path / "copy.tflite"
        copy.write_bytes(encode(decode(src.read_bytes())))
        plans = [json.loads(run(capsys, "plan", p, "--json")[1]) for p in (src, copy)]
        assert plans[0]["schedule"] == plans[1]["schedule"] and plans[0]["arena_bytes"] == plans[1]["arena_bytes"]


def test_mutants_are_reproducible_from_seed_and_index(tmp_path):
    a = Campaign(source_models(ROOT), seed=7, workdir=tmp_path)
    b = Campaign(source_models(ROOT), seed=7, workdir=tmp_path)
    for i in (0, 13, 999):
        ma, mb = a.mutant(i), b.mutant(i)
        assert (ma.source, ma.data, ma.steps) == (mb.source, mb.data, mb.steps)
    assert len({a.mutant(i).data for i in range(20)}) > 15


@pytest.mark.parametrize("result, verdict", [
    (Result(0, "", 0.1), "exit 0"),
    (Result(2, "mcuforge: error: bad\n", 0.1), "exit 2"),
    (Result(2, "mcuforge: error: bad\nsecond line\n", 0.1), "FAIL"),
    (Result(2, "Traceback (most recent call last):\nmcuforge: error: x\n", 0.1), "FAIL"),
    (Result(3, "mcuforge: internal error: IndexError: list index out of range\n", 0.1), "FAIL"),
    (Result(0, "RuntimeWarning: overflow\n", 0.1), "FAIL"),
    (Result(None, "", 30.0, "no answer in 30 s (hang)"), "FAIL"),
])
def test_judge(result, verdict):
    assert judge(result)[0] == verdict


def test_output_directory_checks(tmp_path):
    out = tmp_path / "out"
    assert check_output_dir(out, "exit 2", sentinel=False) == ""
    out.mkdir()
    (out / "model.c").write_text("half")
    assert "left out/ behind" in check_output_dir(out, "exit 2", sentinel=False)
    assert "incomplete" in check_output_dir(out, "exit 0", sentinel=False)
    (out / "model.c").unlink()
    (out / "SENTINEL").write_text("x")
    assert "changed the existing output" in check_output_dir(out, "exit 2", sentinel=True)  # its marker is gone
    (out / MARKER).write_text("{}")
    assert check_output_dir(out, "exit 2", sentinel=True) == ""
    (tmp_path / ".out.tmp123").mkdir()
    assert "temporary" in check_output_dir(out, "exit 2", sentinel=True)


def test_worker_survives_a_hang_and_reports_it(tmp_path):
    """A request that outlives the timeout is a hang: the worker is killed and reported, and a new
    worker serves the next request. (The hang is simulated by a timeout shorter than the worker's
    start-up.)"""
    with Worker(timeout=0.001) as w:
        r = w.run(["inspect", str(MODELS / "relu_on_input.tflite")])
        assert r.code is None and "hang" in r.note
    with Worker(timeout=60) as w:
        assert w.run(["inspect", str(MODELS / "relu_on_input.tflite")]).code == 0
        assert w.run(["inspect", str(tmp_path / "missing.tflite")]).code == 2


# ------------------------------------------------------------------------------------------------
# regressions: each crash the fuzzer found, on a minimal mutant of a small fixture
# ------------------------------------------------------------------------------------------------

def test_model_without_outputs(tmp_path, capsys):
    """Was: IndexError in the evaluation-order search (plan, compile)."""
    for outputs in ([], None):
        def edit(doc, outputs=outputs):
            sg(doc)["outputs"] = outputs
        assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "fully_connected_relu.tflite", edit),
                       "the model has no outputs")


def test_model_output_is_a_constant(tmp_path, capsys):
    """Was: ValueError 'a model output must be computed or be an input' from the scheduler."""
    def edit(doc):
        consts = [i for i, t in enumerate(sg(doc)["tensors"]) if t["buffer"] and doc["buffers"][t["buffer"]]["data"]]
        sg(doc)["outputs"] = [consts[0]]
    assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "fully_connected_nobias.tflite", edit),
                   "model output tensor", "is a constant")


def test_model_output_is_a_model_input(tmp_path, capsys):
    """Was: IndexError in the evaluation-order search: nothing left to compute."""
    def edit(doc):
        sg(doc)["outputs"] = [sg(doc)["inputs"][0]]
    assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "depthwise_conv_2d_mult1_s1_same_relu.tflite", edit),
                   "is also a model input")


def test_model_output_never_written(tmp_path, capsys):
    def edit(doc):
        sg(doc)["operators"] = []
    assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "relu_on_input.tflite", edit),
                   "is not written by any operator")


def test_control_characters_in_a_name_stay_on_one_line(tmp_path, capsys):
    """Was: a tensor name with newlines (from a damaged file) made a 5-line error message."""
    def edit(doc):
        t = sg(doc)["tensors"][0]
        t["name"] = b"evil\nname\r\x00\x1b[31m*/"
        t["buffer"] = len(doc["buffers"]) + 3
    assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "relu_on_input.tflite", edit),
                   "'evil\\nname\\r\\x00\\x1b[31m*/' uses buffer")


@pytest.mark.parametrize("scale, needle", [
    (float("nan"), "scale nan"),
    (float("inf"), "scale inf"),
    (1.401298464324817e-45, "scale 1.4"),  # float32 denormal: 6 / scale overflows (was OverflowError)
    (-0.5, "scale -0.5"),
    (0.0, "scale 0.0"),
])
def test_activation_scale_out_of_range(tmp_path, capsys, scale, needle):
    """Was: OverflowError / ValueError converting inf or NaN to an integer while lowering."""
    def edit(doc):
        sg(doc)["tensors"][sg(doc)["outputs"][0]]["quant"]["scale"] = [scale]
    assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "conv_2d_1ch_5x5_same.tflite", edit),
                   "bad quantization", needle)


@pytest.mark.parametrize("zero_point", [[], None])
def test_quantization_without_zero_points(tmp_path, capsys, zero_point):
    """Was: read as zero point 0 and compiled, while TFLM treats such a tensor as not quantized at
    all (scale 0): the outputs differed from TFLM in every element (found by the fuzzer's verify
    step, mutant 74 of seed 9)."""
    def edit(doc):
        sg(doc)["tensors"][sg(doc)["outputs"][0]]["quant"]["zero_point"] = zero_point
    assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "transpose_conv_s2_same_bias.tflite", edit),
                   "has 1 quantization scale(s) but 0 zero point(s)")

    def dangling(doc):  # a tensor no operator uses: inspect lists it, so it is checked too
        t = dict(sg(doc)["tensors"][0], name=b"unused", quant={"scale": [0.5, 0.25], "zero_point": zero_point,
                                                                "quantized_dimension": 0})
        sg(doc)["tensors"].append(t)
    assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "relu_on_input.tflite", dangling),
                   "'unused' has 2 quantization scale(s) but 0 zero point(s)")


def test_builtin_code_and_deprecated_code_disagree(tmp_path, capsys):
    """Was: read through the `tflite` package's BuiltinCode(), which returns the deprecated byte
    for codes below 127, so a SUB (builtin_code 41) with deprecated_builtin_code 0 compiled as an
    ADD, while TFLM takes the larger field: every output differed (verify step, seed 10 mutant 1908)."""
    def edit(doc):
        doc["operator_codes"][0]["deprecated_builtin_code"] = 0
    model = mutated(tmp_path, MODELS / "sub_const_full.tflite", edit)
    info = json.loads(run(capsys, "inspect", model, "--json")[1])
    assert [op["op"] for op in info["operators"]] == ["SUB"]


def test_transpose_conv_stride_beyond_the_output(tmp_path, capsys):
    """Was: compiled, then `verify` tried to allocate 896 GiB for the reference's scratch (stride
    2^30; verify step, seed 10 mutant 1878). TFLM's int arithmetic overflows there too."""
    def edit(doc):
        sg(doc)["operators"][0]["options"]["fields"]["StrideH"] = 2**30
    assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "transpose_conv_s1_same_bias_relu.tflite", edit),
                   "#0 TRANSPOSE_CONV", "with stride 1073741824x1 reaches beyond the")


def test_mul_output_multiplier_overflows(tmp_path, capsys):
    """Was: compiled, and differed from TFLM in 45 of 100 outputs: an input scale of 3e38 makes
    TFLM's product shift overflow int32, undefined behaviour (verify step, seed 10 mutant 2518)."""
    def edit(doc):
        sg(doc)["tensors"][sg(doc)["inputs"][1]]["quant"]["scale"] = [3e38]
    assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "mul_broadcast_relu6.tflite", edit),
                   "#0 MUL: The output multiplier s1 * s2 / s_out must be below 2^15")


@pytest.mark.parametrize("zp", [128, -129, 2**40])
def test_zero_point_outside_int8(tmp_path, capsys, zp):
    def edit(doc):
        sg(doc)["tensors"][sg(doc)["inputs"][0]]["quant"]["zero_point"] = [zp]
    assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "relu_on_input.tflite", edit),
                   f"zero point {zp} outside the int8 range")


@pytest.mark.parametrize("scale, shift", [(1e-30, -72), (2e-9, -1), (16.0, 32)])
def test_logistic_tanh_input_scale_out_of_range(tmp_path, capsys, scale, shift):
    """Was: ValueError 'negative shift count' computing the input radius (scale 1e-30)."""
    def edit(doc):
        sg(doc)["tensors"][sg(doc)["inputs"][0]]["quant"]["scale"] = [scale]
    for fixture in ("logistic_on_input.tflite", "tanh_on_input.tflite"):
        assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / fixture, edit),
                       "unsupported operator", f"gives an input shift of {shift}")


@pytest.mark.parametrize("alpha", [float("inf"), float("nan")])
def test_leaky_relu_alpha_not_finite(tmp_path, capsys, alpha):
    """Was: OverflowError converting an infinite multiplier to an integer."""
    def edit(doc):
        sg(doc)["operators"][0]["options"]["fields"]["Alpha"] = alpha
    assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "leaky_relu_0p3.tflite", edit),
                   "operator #0 LEAKY_RELU: option alpha is")


def test_arena_beyond_the_address_space(tmp_path, capsys):
    """Shapes that agree with each other but need more arena than a Cortex-M can address: refused
    by plan and compile in every memory mode (nothing is allocated for them); inspect still
    describes the model. Element-wise layers only: planning the windowed kernels of a map this
    large (their overlap models) would take gigabytes of the test machine's memory."""
    def edit(doc):
        for t in sg(doc)["tensors"]:
            if not (t["buffer"] and doc["buffers"][t["buffer"]]["data"]) and len(t["shape"]) == 4:
                t["shape"][1] *= 2300  # the float32 tensors just under the reader's 1 GiB limit
                t["shape"][2] *= 2300
    model = mutated(tmp_path, MODELS / "add_n_three.tflite", edit)
    assert run(capsys, "inspect", model)[0] == 0
    for mode in ("fast", "balanced", "min"):  # 3.05 GB in every mode
        assert_refused(capsys, tmp_path, model, "needs an arena of 3,047,040,000 B", "more than a Cortex-M can address",
                       commands=("plan", "compile"), args=("--memory", mode))


def test_failed_compile_leaves_an_existing_output_alone(tmp_path, capsys):
    out = tmp_path / "out"
    assert run(capsys, "compile", MODELS / "relu_on_input.tflite", "-o", out)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}

    def edit(doc):
        sg(doc)["outputs"] = []
    bad = mutated(tmp_path, MODELS / "relu_on_input.tflite", edit)
    assert run(capsys, "compile", bad, "-o", out)[0] == 2
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.tflite", "out"]


# ------------------------------------------------------------------------------------------------
# models that claim gigabytes: refused before anything is allocated, under a 1 GiB address space
# ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def limited():
    """mcuforge's main() in a child process limited to 1 GiB of address space (MEMORY_LIMIT)."""
    with Worker(timeout=120) as w:
        yield w

def _patched(tmp_path: Path, fixture: Path, kind: str, length: int, which: int = 0) -> Path:
    """`fixture` re-encoded with the length prefix of its `which`-th vector of `kind` set to `length`."""
    blob, vectors = encode_with_vectors(decode(fixture.read_bytes()))
    pos = [p for k, p in vectors if k == kind][which]
    data = bytearray(blob)
    data[pos:pos + 4] = length.to_bytes(4, "little")
    p = tmp_path / "huge.tflite"
    p.write_bytes(bytes(data))
    return p


@pytest.mark.parametrize("kind, length", [
    ("tensor shape", 2**31 - 1),          # a shape vector claiming 2^31 dimensions
    ("buffer data", 2**31),               # a weight buffer claiming 2 GiB
    ("buffer data", 2**32 - 1),
    ("subgraph tensors", 2**30),          # a billion tensors
    ("model buffers", 2**31 - 1),
    ("operator inputs", 2**31 - 1),
])
def test_vector_claiming_gigabytes(tmp_path, limited, kind, length):
    model = _patched(tmp_path, MODELS / "conv_2d_3x3_same_s1_relu.tflite", kind, length,
                     which=1 if kind == "buffer data" else 0)
    for command in ("inspect", "compile"):
        argv = [command, str(model)] + (["-o", str(tmp_path / "out")] if command == "compile" else [])
        r = limited.run(argv)
        assert judge(r) == ("exit 2", ""), (command, r)
        assert not (tmp_path / "out").exists()


def test_vector_claiming_gigabytes_through_the_entry_point(tmp_path):
    """The same through `python -m mcuforge` in a fresh process under the address-space limit."""
    model = _patched(tmp_path, MODELS / "conv_2d_3x3_same_s1_relu.tflite", "buffer data", 2**31, which=1)
    r = run_subprocess(["plan", str(model)], timeout=120)
    assert judge(r) == ("exit 2", ""), r
    assert "corrupt or truncated" in r.stderr


@pytest.mark.parametrize("shape", [[1, 65536, 65536, 4], [2**31 - 1, 2**31 - 1], [1] * 8 + [2**31 - 1]])
def test_tensor_claiming_gigabytes(tmp_path, limited, shape):
    """A constant or an activation whose shape claims gigabytes: refused by the reader before any
    buffer is read, in a process limited to 1 GiB of address space."""
    for pick in ("const", "activation"):
        def edit(doc, pick=pick):
            ts = sg(doc)["tensors"]
            consts = [i for i, t in enumerate(ts) if t["buffer"] and doc["buffers"][t["buffer"]]["data"]]
            i = consts[0] if pick == "const" else sg(doc)["inputs"][0]
            ts[i]["shape"] = shape
        model = mutated(tmp_path, MODELS / "conv_2d_3x3_same_s1_relu.tflite", edit)
        r = limited.run(["plan", str(model)])
        assert judge(r) == ("exit 2", ""), r
        assert f"claims shape {shape}" in r.stderr and "over 1 GiB" in r.stderr


def test_worker_runs_under_the_address_space_limit(limited):
    assert limited.run(["inspect", str(MODELS / "relu_on_input.tflite")]).code == 0
    limits = Path(f"/proc/{limited.proc.pid}/limits").read_text()
    line = next(x for x in limits.splitlines() if x.startswith("Max address space"))
    assert line.split()[3:5] == [str(MEMORY_LIMIT), str(MEMORY_LIMIT)], line


def test_pool_window_near_2_to_31(tmp_path, capsys):
    """Was: compiled, then `verify --on reference` tried to allocate 192 GiB of padding, and TFLM's
    int window arithmetic gave undefined results (FilterWidth 2^31 - 1; verify step, seed 11 mutant
    948). The numpy references now pad only for taps that read real elements, and such windows are
    refused."""
    def edit(doc):
        sg(doc)["operators"][0]["options"]["fields"]["FilterWidth"] = 2**31 - 1
    assert_refused(capsys, tmp_path, mutated(tmp_path, MODELS / "average_pool_2d_2x2_s2_same_odd.tflite", edit),
                   "#0 AVERAGE_POOL_2D", "beyond 32768")
