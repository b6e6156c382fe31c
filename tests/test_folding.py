"""Constant and shape folding (ir/fold.py), dynamic batches and the importer's problem list.

Models are built as Keras exports with a dynamic batch have them (shape signatures [-1, ...], the
shapes of RESHAPE and TRANSPOSE_CONV computed by SHAPE -> STRIDED_SLICE -> PACK / CONCATENATION
chains): every chain folds to constants at import, each folded tensor equals TFLM's run-time value
of that tensor, and the model is bit-exact with TFLM in the reference and in the generated C. The
legalization pass folds constants that appear later, to its fixpoint. A folded call is not checked
(no kernel runs it); an unsupported operator does not hide the model's other blockers.
"""

from __future__ import annotations

import numpy as np
import pytest

from devtools.tflite_writer import ModelWriter
from mcuforge.driver import Options, compile_model
from mcuforge.errors import ModelError
from mcuforge.frontend.importer import import_graph
from mcuforge.frontend.reader import read_tflite_bytes
from mcuforge.inspection import inspect_graph
from mcuforge.ir.expr import Call, Constant, Function, Module, Var
from mcuforge.ir.types import QuantParams, TensorType
from mcuforge.oracle import run_tflm
from mcuforge.planner.legalize import legalize
from mcuforge.verify import random_inputs, verify_host, verify_reference

Q = {"scale": 0.05, "zero_point": -3}


def i32(w: ModelWriter, value, name=None) -> int:
    value = np.asarray(value, dtype=np.int32)
    return w.tensor(value.shape, "int32", data=value, name=name)


def batch_of(w: ModelWriter, x: int, rank: int) -> int:
    """SHAPE(x)[0] as a scalar: the dynamic batch of a Keras export (STRIDED_SLICE with shrink)."""
    s = w.tensor((rank,), "int32")
    w.op("SHAPE", [x], [s], OutType=2)
    b = w.tensor((), "int32")
    w.op("STRIDED_SLICE", [s, i32(w, [0]), i32(w, [1]), i32(w, [1])], [b], ShrinkAxisMask=1)
    return b


def flatten_model() -> bytes:
    """x -> RELU -> RESHAPE to PACK(SHAPE(x)[0], 128), as Keras' Flatten."""
    w = ModelWriter()
    x = w.tensor((1, 4, 4, 8), name="x", signature=(-1, 4, 4, 8), **Q)
    r = w.tensor((1, 4, 4, 8), signature=(-1, 4, 4, 8), **Q)
    w.op("RELU", [x], [r])
    shape = w.tensor((2,), "int32")
    w.op("PACK", [batch_of(w, r, 4), i32(w, 128)], [shape], ValuesCount=2, Axis=0)
    y = w.tensor((1, 128), name="y", signature=(-1, -1), **Q)
    w.op("RESHAPE", [r, shape], [y])
    return w.finish([x], [y])


def concat_shape_model() -> bytes:
    """RESHAPE to CONCATENATION(SHAPE(x)[0:2], [32]) (the int32 chain of Keras' Reshape/UpSampling)."""
    w = ModelWriter()
    x = w.tensor((1, 4, 4, 8), name="x", signature=(-1, 4, 4, 8), **Q)
    r = w.tensor((1, 4, 4, 8), signature=(-1, 4, 4, 8), **Q)
    w.op("RELU", [x], [r])
    s = w.tensor((4,), "int32")
    w.op("SHAPE", [r], [s], OutType=2)
    head = w.tensor((2,), "int32")
    w.op("STRIDED_SLICE", [s, i32(w, [0]), i32(w, [2]), i32(w, [1])], [head])
    shape = w.tensor((3,), "int32")
    w.op("CONCATENATION", [head, i32(w, [32])], [shape], Axis=0)
    y = w.tensor((1, 4, 32), name="y", signature=(-1, 4, 32), **Q)
    w.op("RESHAPE", [r, shape], [y])
    return w.finish([x], [y])


def tconv_model(rng) -> bytes:
    """TRANSPOSE_CONV whose output shape is PACK(SHAPE(x)[0], 8, 8, 4), as Keras' Conv2DTranspose."""
    w = ModelWriter()
    x = w.tensor((1, 4, 4, 8), name="x", signature=(-1, 4, 4, 8), scale=0.1, zero_point=2)
    shape = w.tensor((4,), "int32")
    w.op("PACK", [batch_of(w, x, 4), i32(w, 8), i32(w, 8), i32(w, 4)], [shape], ValuesCount=4, Axis=0)
    k = w.tensor((4, 3, 3, 8), data=rng.integers(-127, 128, (4, 3, 3, 8)), scale=[0.01, 0.02, 0.015, 0.012])
    b = w.tensor((4,), "int32", data=rng.integers(-500, 500, 4), scale=[0.001, 0.002, 0.0015, 0.0012])
    y = w.tensor((1, 8, 8, 4), name="y", signature=(-1, 8, 8, 4), scale=0.3, zero_point=-5)
    w.op("TRANSPOSE_CONV", [shape, k, x, b], [y], Padding="SAME", StrideW=2, StrideH=2)
    return w.finish([x], [y])


def product_model() -> bytes:
    """RESHAPE to PACK(SHAPE(x)[0], SHAPE(x)[1] * SHAPE(x)[2], SHAPE(x)[3]): an int32 MUL in the chain."""
    w = ModelWriter()
    x = w.tensor((1, 4, 4, 8), name="x", signature=(-1, 4, 4, 8), **Q)
    r = w.tensor((1, 4, 4, 8), signature=(-1, 4, 4, 8), **Q)
    w.op("RELU", [x], [r])
    s = w.tensor((4,), "int32")
    w.op("SHAPE", [r], [s], OutType=2)

    def dim(i):
        t = w.tensor((), "int32")
        w.op("STRIDED_SLICE", [s, i32(w, [i]), i32(w, [i + 1]), i32(w, [1])], [t], ShrinkAxisMask=1)
        return t

    hw = w.tensor((), "int32")
    w.op("MUL", [dim(1), dim(2)], [hw], FusedActivationFunction="NONE")
    shape = w.tensor((3,), "int32")
    w.op("PACK", [dim(0), hw, dim(3)], [shape], ValuesCount=3, Axis=0)
    y = w.tensor((1, 16, 8), name="y", signature=(-1, -1, 8), **Q)
    w.op("RESHAPE", [r, shape], [y])
    return w.finish([x], [y])


MODELS = {"flatten": lambda rng: flatten_model(), "concat_shape": lambda rng: concat_shape_model(),
          "tconv": tconv_model, "product": lambda rng: product_model()}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_shape_chains_fold_and_match_tflm(name, tmp_path):
    blob = MODELS[name](np.random.default_rng(90))
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(blob)
    graph = read_tflite_bytes(blob)
    res = import_graph(graph)
    assert not res.problems, res.problems
    ops = {c.op for c in res.module.main.calls()}
    assert not ops & {"shape", "pack", "strided_slice", "concatenation", "mul"}, ops
    # every folded tensor is the value TFLM computes for it at run time
    rng = np.random.default_rng(91)
    sets = [random_inputs(res.module, rng) for _ in range(2)]
    ((_, theirs), _) = run_tflm(blob, sets, sorted(res.folded), isolate=False)
    assert len(res.folded) >= 3
    for t, const in res.folded.items():
        assert const.data.dtype == theirs[t].dtype and (const.data == theirs[t]).all(), (t, const.data, theirs[t])
    compiled = compile_model(path, Options(targets=("c",)))
    bad = [str(m) for r in verify_reference(compiled.imported, blob, sets, intermediates=True, isolate=False)
           for m in r.mismatches]
    bad += [str(m) for r in verify_host(compiled, sets, isolate=False) for m in r.mismatches]
    assert not bad, "\n".join(bad)


def test_a_folded_call_is_not_checked():
    """TRANSPOSE has no int32 kernel (its rule refuses int32); on constants it folds, on an
    activation it is refused."""
    def model(const: bool) -> bytes:
        w = ModelWriter()
        x = w.tensor((1, 4), name="x", **Q)
        src = i32(w, [[1, 2, 3], [4, 5, 6]]) if const else w.tensor((2, 3), "int32", name="idx")
        t = w.tensor((3, 2), "int32")
        w.op("TRANSPOSE", [src, i32(w, [1, 0])], [t])
        flat = w.tensor((6,), "int32", name="flat")
        w.op("RESHAPE", [t, i32(w, [6])], [flat])
        y = w.tensor((1, 4), name="y", **Q)
        w.op("RELU", [x], [y])
        return w.finish([x] if const else [x, src], [y, flat] if not const else [y])

    folded = import_graph(read_tflite_bytes(model(True)))
    assert not folded.problems
    (flat,) = [c for c in folded.folded.values() if c.name == "flat"]
    assert flat.data.tolist() == [1, 4, 2, 5, 3, 6]
    refused = import_graph(read_tflite_bytes(model(False)))
    assert refused.problems and "int8, int16 or float32" in refused.problems[0][2], refused.problems


def test_legalize_folds_constants_to_a_fixpoint():
    """Constants that appear after import (here built by hand) fold in the legalization pass, chains
    of them in one pass: concatenation(x, strided_slice(pack(3, 4))) -> concatenation(x, [4])."""
    i32t = TensorType((), "int32")
    c3, c4 = (Constant(f"c{v}", i32t, np.int32(v)) for v in (3, 4))
    pack = Call("pack", (c3, c4), TensorType((2,), "int32"), {"axis": 0})
    sl = Call("strided_slice", (pack,), TensorType((1,), "int32"),
              {"begin": (1,), "end": (2,), "strides": (1,), "begin_mask": 0, "end_mask": 0, "shrink_axis_mask": 0,
               "ellipsis_mask": 0, "new_axis_mask": 0, "offset": False, "index_dtype": "int32"})
    x = Var("x", TensorType((2,), "int32"))
    cat = Call("concatenation", (x, sl), TensorType((3,), "int32"), {"axis": 0, "activation": "NONE"})
    out = legalize(Module({"main": Function((x,), cat)})).main.body
    assert out.op == "concatenation" and isinstance(out.args[1], Constant)
    assert out.args[1].data.tolist() == [4]


def test_dynamic_batch_accepted_other_unknown_dimensions_refused():
    def model(sig) -> bytes:
        w = ModelWriter()
        x = w.tensor((1, 5, 8), name="x", signature=sig, **Q)
        y = w.tensor((1, 5, 8), name="y", signature=sig, **Q)
        w.op("RELU", [x], [y])
        return w.finish([x], [y])

    assert not import_graph(read_tflite_bytes(model((-1, 5, 8)))).problems
    with pytest.raises(ModelError, match=r"dynamic shape \[1, -1, 8\].*fixed input size"):
        import_graph(read_tflite_bytes(model((1, -1, 8))))


def test_intermediate_shape_the_inputs_contradict_is_refused_like_tflm():
    """A RESHAPE whose file shape is a converter placeholder ([1, 1], signature [-1, -1]) that its
    folded shape contradicts: TFLM sizes it from the file and fails too."""
    w = ModelWriter()
    x = w.tensor((1, 4, 4, 8), name="x", signature=(-1, 4, 4, 8), **Q)
    shape = w.tensor((2,), "int32")
    w.op("PACK", [batch_of(w, x, 4), i32(w, 128)], [shape], ValuesCount=2, Axis=0)
    y = w.tensor((1, 1), name="y", signature=(-1, -1), **Q)
    w.op("RESHAPE", [x, shape], [y])
    blob = w.finish([x], [y])
    res = import_graph(read_tflite_bytes(blob))
    assert [(p[1], "in the file, but the inputs give int8[1, 128]" in p[2]) for p in res.problems] == \
        [("RESHAPE", True)], res.problems
    with pytest.raises(Exception):
        run_tflm(blob, [[np.zeros((1, 4, 4, 8), np.int8)]])


def test_inspect_names_every_blocker_at_once():
    """An unsupported operator in the shape chain of a TRANSPOSE_CONV, and an unrelated refused
    SOFTMAX later: all three are listed, the TRANSPOSE_CONV naming the operator that blocks it."""
    rng = np.random.default_rng(92)
    w = ModelWriter()
    x = w.tensor((1, 4, 4, 8), name="x", **Q)
    shape = w.tensor((4,), "int32")
    w.op("HASHTABLE_LOOKUP", [i32(w, [1, 8, 8, 4]), i32(w, [0]), i32(w, [0])], [shape])
    k = w.tensor((4, 3, 3, 8), data=rng.integers(-127, 128, (4, 3, 3, 8)), scale=0.01)
    y = w.tensor((1, 8, 8, 4), name="y", scale=0.3, zero_point=-5)
    w.op("TRANSPOSE_CONV", [shape, k, x], [y], Padding="SAME", StrideW=2, StrideH=2)
    z = w.tensor((1, 8, 8, 4), name="z", scale=0.5, zero_point=0)  # int8 SOFTMAX needs 1/256, -128
    w.op("SOFTMAX", [y, ], [z], Beta=1.0)
    info = inspect_graph(read_tflite_bytes(w.finish([x], [z])))
    reasons = {u["op"]: u["reason"] for u in info["unsupported"]}
    assert list(reasons) == ["HASHTABLE_LOOKUP", "TRANSPOSE_CONV", "SOFTMAX"], reasons
    assert "must be a constant tensor; it is the output of #0 HASHTABLE_LOOKUP" in reasons["TRANSPOSE_CONV"]


def test_an_output_computed_from_constants_only_is_refused():
    w = ModelWriter()
    x = w.tensor((1, 4), name="x", **Q)
    s = w.tensor((2,), "int32", name="s")
    w.op("SHAPE", [x], [s], OutType=2)
    with pytest.raises(ModelError, match="'s' is computed from constants only"):
        import_graph(read_tflite_bytes(w.finish([x], [s])))


def test_shape_value_and_types():
    """SHAPE folds to the static shape, int32 or int64 (TFLM's kernel has int32 only)."""
    for dtype, code in (("int32", 2), ("int64", 4)):
        w = ModelWriter()
        x = w.tensor((2, 3, 5), name="x", **Q)
        s = w.tensor((3,), dtype, name="s")
        w.op("SHAPE", [x], [s], OutType=code)
        y = w.tensor((2, 3, 5), name="y", **Q)
        w.op("RELU", [x], [y])
        res = import_graph(read_tflite_bytes(w.finish([x], [y])))
        (c,) = res.folded.values()
        assert c.data.dtype == np.dtype(dtype) and c.data.tolist() == [2, 3, 5]


def test_quant_params_survive_folding():
    """A folded int8 tensor keeps the file's quantization (here a RESHAPE of int8 weights)."""
    w = ModelWriter()
    x = w.tensor((1, 6), name="x", **Q)
    c = w.tensor((2, 3), data=np.arange(6).reshape(2, 3), scale=0.5, zero_point=1)
    r = w.tensor((1, 6), scale=0.5, zero_point=1, name="r")
    w.op("RESHAPE", [c, i32(w, [1, 6])], [r])
    y = w.tensor((1, 6), name="y", **Q)
    w.op("ADD", [x, r], [y])
    res = import_graph(read_tflite_bytes(w.finish([x], [y])))
    add = res.module.main.body
    assert isinstance(add.args[1], Constant) and add.args[1].type.quant == QuantParams((0.5,), (1,))
