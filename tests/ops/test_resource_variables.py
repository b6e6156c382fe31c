"""Resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE) and CALL_ONCE against TFLite Micro,
on models written with devtools.tflite_writer: sequences of invokes with the state carried (each
sequence from startup: a fresh TFLM interpreter, mcuforge's reset), the numpy reference and the
generated C (portable and cmsis-nn targets) on the host. int8 and float32 variables, an initial
value from CALL_ONCE's subgraph (constant, or folded from constants) or none (TFLM's zero point
fill), a ring buffer, a write that does not depend on the read, a read after a write in one run,
a variable only read; and the rules. The TensorFlow-made fixtures resource_variable_* (and if_tf_cond)
are checked on the host by tests/test_host_e2e.py, and here on QEMU (slow)."""

from __future__ import annotations

import numpy as np
import pytest
from mcuforge.frontend import load_tflite
from mcuforge.ir.evaluate import evaluate, initial_states

from devtools.tflite_writer import ModelWriter
from mcuforge.driver import Options, compile_model
from mcuforge.errors import ModelError, UnsupportedError
from mcuforge.oracle import run_tflm
from mcuforge.verify import verify_host

Q = {"scale": 0.05, "zero_point": 3}


def handle(w: ModelWriter, name: str) -> int:
    h = w.tensor((), "resource", name=f"handle_{name}")
    w.op("VAR_HANDLE", [], [h], SharedName=name)
    return h


def read(w: ModelWriter, name: str, shape, dtype="int8", q=Q) -> int:
    r = w.tensor(shape, dtype, name=f"read_{name}", **(q if dtype == "int8" else {}))
    w.op("READ_VARIABLE", [handle(w, name)], [r])
    return r


def assign(w: ModelWriter, name: str, value: int) -> None:
    w.op("ASSIGN_VARIABLE", [handle(w, name), value], [])


def call_once(w: ModelWriter, inits: dict[str, tuple[np.ndarray, str, dict]]) -> None:
    """A CALL_ONCE whose subgraph assigns each variable a constant."""
    init = ModelWriter()
    for name, (value, dtype, q) in inits.items():
        c = init.tensor(value.shape, dtype, data=value, name=f"init_{name}", **q)
        assign(init, name, c)
    w.op("CALL_ONCE", [], [], InitSubgraphIndex=w.add_subgraph(init, name="init"))


def check_sequences(tmp_path, blob: bytes, sets, steps: int) -> None:
    """TFLM, the numpy reference and the generated C (both targets) agree on every set of every
    sequence of `steps` sets."""
    path = tmp_path / "m.tflite"
    path.write_bytes(blob)
    theirs = run_tflm(blob, sets, steps=steps)
    module = load_tflite(path)
    states = None
    for k, (inputs, (t_outs, _)) in enumerate(zip(sets, theirs)):
        states = initial_states(module) if k % steps == 0 else states
        ours = evaluate(module, inputs, states=states)
        for i, (o, t) in enumerate(zip(ours, t_outs)):
            assert o.dtype == t.dtype and o.tobytes() == t.tobytes(), f"set {k} output {i}: ours {o}, TFLM {t}"
    for targets in (("c",), None):
        compiled = compile_model(path, Options(targets=targets) if targets else Options())
        bad = [f"{r.index}: {m}" for r in verify_host(compiled, sets, isolate=False, steps=steps) for m in r.mismatches]
        assert not bad, bad


def accumulator(dtype_state: str = "int8", init: np.ndarray | None = None) -> bytes:
    """y = read(state) + x; state := y (an int8 variable, or a float32 one between QUANTIZE and
    DEQUANTIZE as the converter writes them)."""
    w = ModelWriter()
    if init is not None:
        call_once(w, {"acc": (init, dtype_state, Q if dtype_state == "int8" else {})})
    x = w.tensor((1, 6), "int8", name="x", **Q)
    r = read(w, "acc", (1, 6), dtype_state)
    if dtype_state == "float32":
        rq = w.tensor((1, 6), "int8", name="rq", **Q)
        w.op("QUANTIZE", [r], [rq])
        r = rq
    y = w.tensor((1, 6), "int8", name="y", **Q)
    w.op("ADD", [r, x], [y])
    if dtype_state == "float32":
        yf = w.tensor((1, 6), "float32", name="yf")
        w.op("DEQUANTIZE", [y], [yf])
        assign(w, "acc", yf)
    else:
        assign(w, "acc", y)
    return w.finish([x], [y])


def input_sets(rng, shapes, n: int) -> list[list[np.ndarray]]:
    return [[rng.integers(-20, 21, s).astype(np.int8) for s in shapes] for _ in range(n)]


@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("init", [True, False], ids=["call_once", "no_init"])
def test_accumulator(tmp_path, dtype, init):
    rng = np.random.default_rng(121)
    value = None
    if init:
        value = (rng.integers(-60, 60, (1, 6)).astype(np.int8) if dtype == "int8"
                 else rng.uniform(-2, 2, (1, 6)).astype(np.float32))
    check_sequences(tmp_path, accumulator(dtype, value), input_sets(rng, [(1, 6)], 12), steps=4)


def test_ring_buffer_and_ordering(tmp_path):
    """Three variables in one model: a ring buffer of the last three frames (STRIDED_SLICE +
    CONCATENATION, initial value from an ADD of two constants in the initialization subgraph); a
    'previous input' variable whose write does not depend on its read (so it must be ordered after
    it); and a variable written then read in the same run (the read is the written value)."""
    w = ModelWriter()
    init = ModelWriter()
    a = init.tensor((1, 3, 4), "int8", data=np.arange(12).reshape(1, 3, 4) - 6, name="a", **Q)
    b = init.tensor((1, 3, 4), "int8", data=np.full((1, 3, 4), 5), name="b", **Q)
    s = init.tensor((1, 3, 4), "int8", name="s", **Q)
    init.op("ADD", [a, b], [s])
    assign(init, "ring", s)
    w.op("CALL_ONCE", [], [], InitSubgraphIndex=w.add_subgraph(init, name="init"))
    x = w.tensor((1, 1, 4), "int8", name="x", **Q)
    ring = read(w, "ring", (1, 3, 4))
    tail = w.tensor((1, 2, 4), "int8", name="tail", **Q)
    begin, end = (w.tensor((3,), "int32", data=np.array(v)) for v in ([0, 1, 0], [1, 3, 4]))
    strides = w.tensor((3,), "int32", data=np.ones(3))
    w.op("STRIDED_SLICE", [ring, begin, end, strides], [tail])
    frames = w.tensor((1, 3, 4), "int8", name="frames", **Q)
    w.op("CONCATENATION", [tail, x], [frames], Axis=1)
    assign(w, "ring", frames)
    prev = read(w, "prev", (1, 1, 4))  # the previous run's input (zero point at first)
    assign(w, "prev", x)
    delta = w.tensor((1, 1, 4), "int8", name="delta", **Q)
    w.op("SUB", [x, prev], [delta])
    assign(w, "echo", delta)
    echo = read(w, "echo", (1, 1, 4))  # read after the write: this run's delta
    twice = w.tensor((1, 1, 4), "int8", name="twice", **{"scale": 0.1, "zero_point": 0})
    w.op("ADD", [echo, delta], [twice])
    blob = w.finish([x], [frames, twice])
    check_sequences(tmp_path, blob, input_sets(np.random.default_rng(122), [(1, 1, 4)], 10), steps=5)


def test_read_only_variable(tmp_path):
    """A variable the main subgraph only reads: its CALL_ONCE value, every run."""
    w = ModelWriter()
    call_once(w, {"bias": (np.array([[7, -9, 30, 0]], np.int8), "int8", Q)})
    x = w.tensor((1, 4), "int8", name="x", **Q)
    y = w.tensor((1, 4), "int8", name="y", **Q)
    w.op("ADD", [read(w, "bias", (1, 4)), x], [y])
    check_sequences(tmp_path, w.finish([x], [y]), input_sets(np.random.default_rng(123), [(1, 4)], 6), steps=3)


def test_reset_restores_the_initial_value():
    """mcuforge's <prefix>_reset() (verify's start of a sequence) puts the CALL_ONCE value back, as a
    fresh TFLM interpreter has it, and the oracle compares each sequence with a fresh interpreter:
    TFLM's own Reset() refills the variable with its zero point and does not run CALL_ONCE again
    (what this test shows, so that the difference stays documented)."""
    from tflite_micro import runtime

    init = np.array([[40, -40, 20, -20, 10, -10]], np.int8)
    blob = accumulator("int8", init)
    x = np.full((1, 6), 3, np.int8)  # the zero point: y = the state
    (fresh_first, _), (fresh_second, _) = run_tflm(blob, [[x], [x]], steps=1)
    assert fresh_first[0].tolist() == fresh_second[0].tolist() == init.tolist()
    interp = runtime.Interpreter.from_bytes(blob, arena_size=1 << 16)
    interp.set_input(x, 0)
    interp.invoke()
    assert interp.get_output(0).tolist() == init.tolist()
    interp.reset()
    interp.set_input(x, 0)
    interp.invoke()
    assert interp.get_output(0).tolist() == [[3] * 6]  # the zero point: CALL_ONCE did not run again


def problems(blob: bytes) -> list[tuple[int, str, str]]:
    from mcuforge.frontend.importer import import_graph
    from mcuforge.frontend.reader import read_tflite_bytes

    return import_graph(read_tflite_bytes(blob)).problems


def test_rules():
    w = ModelWriter()
    x = w.tensor((1, 4), "int8", name="x", **Q)
    r = read(w, "early", (1, 4))  # read before CALL_ONCE
    call_once(w, {"early": (np.zeros((1, 4), np.int8), "int8", Q)})
    y0 = w.tensor((1, 4), "int8", name="y0", **Q)
    w.op("ADD", [r, x], [y0])
    assign(w, "early", y0)
    never = read(w, "never", (1, 4))  # never assigned anywhere
    y1 = w.tensor((1, 4), "int8", name="y1", **Q)
    w.op("ADD", [never, x], [y1])
    wide = w.tensor((1, 4), "int16", name="wide", scale=0.05, zero_point=0)
    w.op("CAST", [x], [wide])  # int8 -> int16 (the assignment's type then differs from the first one)
    assign(w, "early", wide)
    v16 = w.tensor((1, 4), "int16", name="v16", scale=0.05, zero_point=5)
    w.op("CAST", [x], [v16])
    assign(w, "zp16", v16)
    r16 = read(w, "zp16", (1, 4), "int16", {"scale": 0.05, "zero_point": 5})
    y2 = w.tensor((1, 4), "int16", name="y2", scale=0.05, zero_point=5)
    w.op("MAXIMUM", [r16, v16], [y2])
    found = problems(w.finish([x], [y0, y1, y2]))
    whys = {(i, name): why for i, name, why in found}
    assert whys[(2, "CALL_ONCE")] == "CALL_ONCE must come before the resource variable operators"
    assert "resource variable 'never' is never assigned (TFLM cannot allocate it)" in whys[(7, "READ_VARIABLE")]
    assert whys[(11, "ASSIGN_VARIABLE")] == \
        "assigns int16[1, 4] to resource variable 'early' of int8[1, 4]"
    assert "which mcuforge supports for int8 only" in whys[(14, "ASSIGN_VARIABLE")]


def test_initialization_subgraph_must_fold():
    w = ModelWriter()
    init = ModelWriter()
    c = init.tensor((1, 4), "float32", data=np.ones((1, 4)), name="c")
    s = init.tensor((1, 4), "float32", name="s")
    init.op("SIGN", [c], [s])  # no TFLM kernel: not foldable either
    assign(init, "v", s)
    w.op("CALL_ONCE", [], [], InitSubgraphIndex=w.add_subgraph(init))
    x = w.tensor((1, 4), "int8", name="x", **Q)
    xf = w.tensor((1, 4), "float32", name="xf")
    w.op("DEQUANTIZE", [x], [xf])
    assign(w, "v", xf)
    y = w.tensor((1, 4), "int8", name="y", **Q)
    w.op("QUANTIZE", [read(w, "v", (1, 4), "float32")], [y])
    (found,) = problems(w.finish([x], [y]))
    assert found[:2] == (0, "CALL_ONCE")
    assert found[2] == "initialization subgraph 1, operator #0 SIGN: operator not supported"


def test_other_subgraphs_are_refused(tmp_path):
    """A subgraph that no CALL_ONCE initializes with and no IF branches to is refused (WHILE's: see
    tests/ops/test_control_flow.py)."""
    w = ModelWriter()
    w.add_subgraph(ModelWriter())
    x = w.tensor((1, 4), "int8", name="x", **Q)
    y = w.tensor((1, 4), "int8", name="y", **Q)
    w.op("ABS", [x], [y])
    path = tmp_path / "two.tflite"
    path.write_bytes(w.finish([x], [y]))
    with pytest.raises(ModelError, match="the model has 2 subgraphs; only single-subgraph models are supported, "
                                         "besides CALL_ONCE initialization subgraphs and IF branches"):
        load_tflite(path)


def test_unsupported_error_lists_resource_problems(tmp_path):
    w = ModelWriter()
    x = w.tensor((1, 4), "int8", name="x", **Q)
    y = w.tensor((1, 4), "int8", name="y", **Q)
    w.op("ADD", [read(w, "never", (1, 4)), x], [y])
    path = tmp_path / "m.tflite"
    path.write_bytes(w.finish([x], [y]))
    with pytest.raises(UnsupportedError, match="#1 READ_VARIABLE: resource variable 'never' is never assigned"):
        load_tflite(path)


QEMU = [("resource_variable_streaming_conv", "mps2-an386"), ("resource_variable_leaky_accumulator", "mps3-an547"),
        ("if_tf_cond", "mps2-an386")]


@pytest.mark.slow
@pytest.mark.parametrize("model, board", QEMU, ids=[f"{m}-{b}" for m, b in QEMU])
def test_fixtures_on_qemu(model, board):
    """The TensorFlow-made fixtures on QEMU (Cortex-M4, Cortex-M55): two sequences of three steps,
    the firmware's reset between them, against a fresh TFLM interpreter per sequence."""
    import shutil

    from conftest import MODELS
    from mcuforge.verify import random_inputs, verify_board

    if not all(shutil.which(t) for t in ("arm-none-eabi-gcc", "qemu-system-arm", "cmake")):
        pytest.skip("needs arm-none-eabi-gcc, qemu-system-arm and cmake")
    compiled = compile_model(MODELS / f"{model}.tflite")
    rng = np.random.default_rng(7)
    sets = [random_inputs(compiled.imported, rng) for _ in range(6)]
    results = verify_board(compiled, sets, board, isolate=False, steps=3 if compiled.program.states else 1)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad)
