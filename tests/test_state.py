"""State (TFLite variable tensors: an LSTM's hidden and cell state, an SVDF's memory) through the tool:
the frontend's State nodes and what it refuses, the planner's state region outside the arena, the
generated API (<prefix>_reset, <PREFIX>_STATE_SIZE), the C harness' reset between sequences, and
`mcuforge verify` running sequences."""

import json
import re
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import MLPERF_MODELS, MODELS

from devtools.recurrent_models import LstmConfig, SvdfConfig, lstm_model, svdf_model
from devtools.tflite_writer import ModelWriter
from mcuforge.cli import check_fits
from mcuforge.codegen.emit import emit
from mcuforge.driver import Options, compile_model, compile_module
from mcuforge.errors import IRError, McuforgeError, ModelError
from mcuforge.frontend.importer import import_graph
from mcuforge.frontend.reader import read_tflite_bytes
from mcuforge.host import build_host, run_host
from mcuforge.ir.expr import State
from mcuforge.oracle import run_tflm
from mcuforge.planner.checks import check_arena
from mcuforge.verify import random_inputs

SVDF_FIXTURE = MODELS / "svdf_rank2_s8_zp.tflite"  # an int8 state with zero point 5
LSTM_FIXTURE = MODELS / "lstm_s8_units8.tflite"


# ---- frontend -----------------------------------------------------------------------------------

def test_variable_tensors_become_states_starting_as_tflm_resets_them():
    module = import_graph(read_tflite_bytes(LSTM_FIXTURE.read_bytes())).module
    states = module.main.states()
    assert [(s.type.dtype, s.fill) for s in states] == [("int8", 4), ("int16", 0)]  # hidden zp 4, cell 0
    assert all(isinstance(s, State) for s in states) and not module.main.params[1:]


def _svdf_writer(variable: bool = True, data=None):
    w = ModelWriter()
    x = w.tensor((1, 4), scale=0.05, name="x")
    wf = w.tensor((2, 4), data=np.ones((2, 4)), scale=0.01)
    wt = w.tensor((2, 3), dtype="int16", data=np.ones((2, 3)), scale=0.002)
    b = w.tensor((2,), dtype="int32", data=[1, 2], scale=float(np.float32(0.03) * np.float32(0.002)))
    st = w.tensor((1, 6), dtype="int16", scale=0.03, variable=variable, data=data, name="memory")
    return w, x, wf, wt, b, st


def test_a_variable_tensor_read_as_an_ordinary_input_is_refused():
    w, x, wf, wt, b, st = _svdf_writer()
    y = w.tensor((1, 2), scale=0.1)
    w.op("SVDF", [x, wf, wt, b, st], [y], Rank=1)
    z = w.tensor((1, 2), scale=0.1)
    fw = w.tensor((2, 6), data=np.ones((2, 6)), scale=0.01)
    w.op("FULLY_CONNECTED", [st, fw], [z])  # reads the SVDF's memory
    problems = import_graph(read_tflite_bytes(w.finish([x], [y, z]))).problems
    assert problems == [(1, "FULLY_CONNECTED", "reads variable tensor 'memory' as an ordinary input; mcuforge "
                         "supports variable tensors only as the state an LSTM or SVDF updates")]


def test_a_state_shared_by_two_operators_is_refused():
    w, x, wf, wt, b, st = _svdf_writer()
    y1, y2 = w.tensor((1, 2), scale=0.1), w.tensor((1, 2), scale=0.1)
    w.op("SVDF", [x, wf, wt, b, st], [y1], Rank=1)
    w.op("SVDF", [x, wf, wt, b, st], [y2], Rank=1)
    problems = import_graph(read_tflite_bytes(w.finish([x], [y1, y2]))).problems
    assert [p[2] for p in problems] == ["variable tensor 'memory' is already the state of operator #0"]


@pytest.mark.parametrize("case, message", [
    ("input", "model input tensor 4 'memory' is a variable tensor"),
    ("data", "variable tensor 4 'memory' has contents in the file"),
])
def test_bad_variable_tensors_are_refused(case, message):
    w, x, wf, wt, b, st = _svdf_writer(variable=case != "not_variable",
                                       data=np.zeros((1, 6)) if case == "data" else None)
    y = w.tensor((1, 2), scale=0.1)
    w.op("SVDF", [x, wf, wt, b, st], [y], Rank=1)
    blob = w.finish([x, st] if case == "input" else [x], [y])
    with pytest.raises(ModelError, match=re.escape(message)):
        import_graph(read_tflite_bytes(blob))


def test_an_svdf_state_that_is_not_a_variable_tensor_is_refused():
    w, x, wf, wt, b, st = _svdf_writer(variable=False)
    y = w.tensor((1, 2), scale=0.1)
    w.op("SVDF", [x, wf, wt, b, st], [y], Rank=1)
    problems = import_graph(read_tflite_bytes(w.finish([x, st], [y]))).problems  # here: a model input
    assert problems == [(0, "SVDF", "input 4 (the activation state) must be a variable tensor, as TFLite Micro requires")]


# ---- planner -------------------------------------------------------------------------------------

def test_states_live_in_their_own_region_shown_in_the_report(tmp_path):
    compiled = compile_model(MODELS / "svdf_kws_two_layers.tflite")
    arena = compiled.arena
    assert arena.state_bytes == 2 * 32 * 8 + 2 * 64 * 4  # two int16 memories: 32 filters x 8, 64 x 4
    assert not set(arena.states) & set(arena.plan.offsets)  # nothing of the state in the arena
    report = json.loads((emit(compiled, tmp_path / "m", "m") / "report.json").read_text())
    assert report["state_bytes"] == arena.state_bytes
    assert [(s["dtype"], s["size"], s["initial"]) for s in report["states"]] == [("int16", 512, 0), ("int16", 512, 0)]
    assert "state:        1,024 B in 2 state(s) kept between runs" in (tmp_path / "m" / "report.txt").read_text()


def test_overlapping_states_fail_the_stage_check():
    compiled = compile_model(MODELS / "svdf_kws_two_layers.tflite")
    bad = replace(compiled.arena, states={n: 0 for n in compiled.arena.states})
    with pytest.raises(IRError, match="overlaps"):
        check_arena(compiled.program, bad)


def test_board_ram_check_counts_the_state():
    compiled = compile_model(MODELS / "svdf_kws_two_layers.tflite")
    need = compiled.arena.arena_bytes + compiled.arena.state_bytes + 1024
    board = SimpleNamespace(name="tiny", stack_size=1024, ram=SimpleNamespace(size=need - 1),
                            flash=SimpleNamespace(size=1 << 20), flash_capacity=1 << 20)
    with pytest.raises(McuforgeError, match=f"arena \\+ {compiled.arena.state_bytes:,} B of state"):
        check_fits(compiled, board)
    check_fits(compiled, replace_ram(board, need))


def replace_ram(board, size):
    return SimpleNamespace(**{**vars(board), "ram": SimpleNamespace(size=size)})


# ---- generated C ---------------------------------------------------------------------------------

def test_generated_api_exposes_reset_and_state_size(tmp_path):
    compiled = compile_model(SVDF_FIXTURE, Options(targets=("c",)))
    out = emit(compiled, tmp_path / "svdf", "svdf")
    h, c = (out / "svdf.h").read_text(), (out / "svdf.c").read_text()
    assert f"#define SVDF_STATE_SIZE {compiled.arena.state_bytes}" in h and "void svdf_reset(void);" in h
    assert "memset(svdf_state + 0, 5, 18);" in c  # the int8 memory starts at its zero point, as in TFLM
    assert "#define MCU_MODEL_RESET svdf_reset" in (out / "mcuforge_model.h").read_text()


def test_stateless_model_has_an_empty_reset_and_no_state(tmp_path):
    out = emit(compile_model(MLPERF_MODELS["ad"], Options(targets=("c",))), tmp_path / "ad", "ad")
    assert "#define AD_STATE_SIZE 0" in (out / "ad.h").read_text()
    c = (out / "ad.c").read_text()
    assert "void ad_reset(void)\n{\n}" in c and "ad_state" not in c


@pytest.mark.parametrize("steps", [0, 1, 2, 5])
def test_host_harness_resets_between_sequences(tmp_path, steps):
    """The same five input sets, the harness resetting after every `steps` of them (0: never):
    equal to TFLM reset at the same points; the outputs depend on where the resets fall."""
    blob = lstm_model(LstmConfig(steps=1, units=6, inputs=4), seed=3)
    module = import_graph(read_tflite_bytes(blob)).module
    compiled = compile_module(module, blob, Options(targets=("c",)))
    exe = build_host(emit(compiled, tmp_path / "m", "m"))
    rng = np.random.default_rng(5)
    sets = [random_inputs(module, rng) for _ in range(5)]
    ours = run_host(exe, sets, [compiled.program.buffers[o].type for o in compiled.program.outputs], steps=steps)
    theirs = run_tflm(blob, sets, steps=steps or len(sets), isolate=False)
    assert [o[0].tobytes() for o in ours] == [t[0][0].tobytes() for t in theirs]


# ---- verify ----------------------------------------------------------------------------------------

def test_verify_runs_sequences_of_n_steps(cli):
    proc = cli("verify", SVDF_FIXTURE, "--on", "reference", "-n", "3", "--sequences", "3")
    assert proc.returncode == 0, proc.stderr
    assert "verify PASS: 9/9 inputs bit-exact" in proc.stdout and "3 sequence(s) of 3 step(s), state carried" in proc.stdout


def test_verify_sequences_must_be_positive(cli):
    proc = cli("verify", SVDF_FIXTURE, "--sequences", "0")
    assert proc.returncode == 2 and "--sequences must be at least 1" in proc.stderr
