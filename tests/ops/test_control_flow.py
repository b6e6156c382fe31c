"""IF against TFLite Micro on models written with devtools.tflite_writer: both branch subgraphs
imported in line and each output selected by the condition (SELECT_V2), the numpy reference and the
portable C (and the cmsis-nn target) over inputs taking both branches; a condition computed in the
model or given as an input, two outputs, a nested IF; and the rules (WHILE refused, naming it).
(The TensorFlow-made fixture if_tf_cond is checked by tests/test_host_e2e.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from elementwise_cases import check, problems
from mcuforge.frontend import load_tflite

from devtools.tflite_writer import ModelWriter
from mcuforge.errors import ModelError

Q = {"scale": 0.05, "zero_point": 3}
QO = {"scale": 0.1, "zero_point": -7}


def branch(w: ModelWriter, op: str, const: int, nested: bool = False) -> int:
    """A subgraph (x int8[2, 5]) -> (op(x, const), abs(x)), or with `nested`, an IF of its own."""
    b = ModelWriter()
    x = b.tensor((2, 5), "int8", **Q)
    c = b.tensor((), "int8", data=np.array(const), **Q)
    y1, y2 = b.tensor((2, 5), "int8", **QO), b.tensor((2, 5), "int8", **QO)
    if nested:
        cond = b.tensor((), "bool")
        zero = b.tensor((), "int8", data=np.array(3), **Q)
        first = b.tensor((1, 5), "int8", **Q)
        begin, end = (b.tensor((2,), "int32", data=np.array(v)) for v in ([0, 0], [1, 5]))
        b.op("STRIDED_SLICE", [x, begin, end, b.tensor((2,), "int32", data=np.ones(2))], [first])
        m = b.tensor((), "int8", **Q)
        b.op("REDUCE_MAX", [first, b.tensor((2,), "int32", data=np.array([0, 1]))], [m])
        b.op("LESS", [m, zero], [cond])
        inner = [branch(w, "SUB", 40), branch(w, "MAXIMUM", 10)]
        b.op("IF", [cond, x], [y1, y2], options_cls="IfOptions", ThenSubgraphIndex=inner[0], ElseSubgraphIndex=inner[1])
    else:
        b.op(op, [x, c], [y1])
        b.op("ABS", [x], [y2])
    return w.add_subgraph(b, [x], [y1, y2])


def if_model(cond_input: bool, nested: bool = False) -> tuple[bytes, int]:
    w = ModelWriter()
    x = w.tensor((2, 5), "int8", name="x", **Q)
    if cond_input:
        cond = w.tensor((1,), "bool", name="cond")
    else:
        s = w.tensor((), "int8", name="s", scale=0.5, zero_point=0)
        w.op("SUM", [x, w.tensor((2,), "int32", data=np.array([0, 1]))], [s])
        cond = w.tensor((), "bool", name="cond")
        w.op("GREATER", [s, w.tensor((), "int8", data=np.array(0), scale=0.5, zero_point=0)], [cond])
    then_k, else_k = branch(w, "ADD", 50), branch(w, "MUL", 70, nested)
    y1, y2 = w.tensor((2, 5), "int8", name="y1", **QO), w.tensor((2, 5), "int8", name="y2", **QO)
    w.op("IF", [cond, x], [y1, y2], options_cls="IfOptions", ThenSubgraphIndex=then_k, ElseSubgraphIndex=else_k)
    return w.finish([cond, x] if cond_input else [x], [y1, y2]), 0


def input_sets(rng, cond_input: bool, n: int = 8) -> list[list[np.ndarray]]:
    sets = []
    for k in range(n):
        x = rng.integers(-128, 128, (2, 5)).astype(np.int8)
        x = x // 4 + (40 if k % 2 else -40)  # sums of both signs: both branches taken
        x[0, :] = rng.integers(-20, 30, 5)  # the nested IF's condition both ways
        sets.append(([np.array([k % 2 == 0])] if cond_input else []) + [x.astype(np.int8)])
    return sets


@pytest.mark.parametrize("cond_input", [True, False], ids=["input_condition", "computed_condition"])
def test_if(tmp_path, cond_input):
    blob, _ = if_model(cond_input)
    sets = input_sets(np.random.default_rng(131), cond_input)
    check(tmp_path, blob, sets)


def test_nested_if(tmp_path):
    blob, _ = if_model(False, nested=True)
    check(tmp_path, blob, input_sets(np.random.default_rng(132), False, 12))


def test_if_on_the_cmsis_nn_target(tmp_path):
    from mcuforge.driver import Options, compile_model
    from mcuforge.verify import verify_host

    blob, _ = if_model(False)
    path = tmp_path / "if.tflite"
    path.write_bytes(blob)
    results = verify_host(compile_model(path, Options()), input_sets(np.random.default_rng(133), False), isolate=False)
    assert all(r.ok for r in results), [str(m) for r in results for m in r.mismatches]


def test_rules():
    w = ModelWriter()
    x = w.tensor((2, 5), "int8", name="x", **Q)
    cond8 = w.tensor((1,), "int8", name="cond8", **Q)
    ys = [w.tensor((2, 5), "int8", name=f"y{i}", **QO) for i in range(4)]
    opts = {"options_cls": "IfOptions"}
    k = [branch(w, "ADD", 50), branch(w, "MUL", 70)]
    w.op("IF", [cond8, x], ys[:2], ThenSubgraphIndex=k[0], ElseSubgraphIndex=k[1], **opts)
    cond = w.tensor((1,), "bool", name="cond")
    other = w.tensor((2, 5), "int8", name="x_other_q", scale=0.2, zero_point=0)
    w.op("IF", [cond, other], ys[2:], ThenSubgraphIndex=k[0], ElseSubgraphIndex=k[1], **opts)
    b = ModelWriter()
    bx, by = b.tensor((3,), "int32"), b.tensor((3,), "int32")
    b.op("ADD", [bx, bx], [by])
    k32 = w.add_subgraph(b, [bx], [by])
    x32, y32 = w.tensor((3,), "int32", name="x32"), w.tensor((3,), "int32", name="y32")
    w.op("IF", [cond, x32], [y32], ThenSubgraphIndex=k32, ElseSubgraphIndex=k32, **opts)
    found = problems(w.finish([cond8, x, cond, other, x32], [*ys, y32]))
    assert [(i, n) for i, n, _ in found] == [(0, "IF"), (1, "IF"), (2, "IF")], found
    assert found[0][2] == "the condition (input 1) must be a bool tensor of one element"
    assert found[1][2].startswith("subgraph 1 input 0 is int8[2x5] q(s=0.05, zp=3), the IF passes int8[2x5] q(s=0.2")
    assert found[2][2].startswith("its outputs are chosen with SELECT_V2: The two value inputs and the output must "
                                  "have one element type: int8, int16 or float32 (got int32)")


def test_while_is_refused(tmp_path):
    w = ModelWriter()
    body = ModelWriter()
    bx, by = body.tensor((1, 4), "int8", **Q), body.tensor((1, 4), "int8", **Q)
    body.op("ABS", [bx], [by])
    k = w.add_subgraph(body, [bx], [by])
    x, y = w.tensor((1, 4), "int8", name="x", **Q), w.tensor((1, 4), "int8", name="y", **Q)
    w.op("WHILE", [x], [y], options_cls="WhileOptions", CondSubgraphIndex=k, BodySubgraphIndex=k)
    path = tmp_path / "while.tflite"
    path.write_bytes(w.finish([x], [y]))
    with pytest.raises(ModelError, match="#0 WHILE: control flow is not supported; the model has 2 subgraphs"):
        load_tflite(path)


def test_resource_variables_in_a_branch_are_refused():
    w = ModelWriter()
    b = ModelWriter()
    bx, by = b.tensor((2, 5), "int8", **Q), b.tensor((2, 5), "int8", **Q)
    h = b.tensor((), "resource")
    b.op("VAR_HANDLE", [], [h], SharedName="v")
    b.op("ASSIGN_VARIABLE", [h, bx], [])
    b.op("ABS", [bx], [by])
    k = w.add_subgraph(b, [bx], [by])
    cond = w.tensor((1,), "bool", name="cond")
    x, y = w.tensor((2, 5), "int8", name="x", **Q), w.tensor((2, 5), "int8", name="y", **Q)
    w.op("IF", [cond, x], [y], options_cls="IfOptions", ThenSubgraphIndex=k, ElseSubgraphIndex=k)
    (found,) = problems(w.finish([cond, x], [y]))
    assert found == (0, "IF", "subgraph 1, operator #0 VAR_HANDLE: resource variables are supported in the main "
                              "subgraph only (not in an IF branch)")
