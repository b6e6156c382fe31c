"""Structural mutations: each changes a decoded model (a devtools.tflite_codec document) in place
and returns what it did, in a few words. `Skip` says a mutation does not apply to this model."""

from __future__ import annotations

import copy
from typing import Any, Callable

import numpy as np
import tflite

from devtools.tflite_codec import OPTION_CLASSES


class Skip(Exception):
    """This mutation does not apply to this model (e.g. it has no constant tensor)."""


I32 = [0, 1, -1, 2, 3, 7, 16, 127, -128, 255, 256, 65535, 65536, 1_000_003, 2**30, 2**31 - 1, -2**31, -7]
DIMS = [0, -1, -2, -5, 2**31 - 1, 2**30, 65536, 1_000_003, 46341, 1, 3]
U32 = [2**32 - 1, 2**31, 2**31 - 1, 65536, 1000]


def pick(rng: np.random.Generator, seq: Any) -> Any:
    seq = list(seq)
    if not seq:
        raise Skip("nothing to pick from")
    return seq[int(rng.integers(len(seq)))]


def _sg(doc: dict[str, Any]) -> dict[str, Any]:
    if not doc["subgraphs"]:
        raise Skip("no subgraph")
    return doc["subgraphs"][0]


def _const_tensors(doc: dict[str, Any]) -> list[int]:
    bufs = doc["buffers"]
    return [i for i, t in enumerate(_sg(doc)["tensors"])
            if 0 < t["buffer"] < len(bufs) and bufs[t["buffer"]]["data"]]


def _act_tensors(doc: dict[str, Any]) -> list[int]:
    const = set(_const_tensors(doc))
    return [i for i in range(len(_sg(doc)["tensors"])) if i not in const]


def _op(rng: np.random.Generator, doc: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    ops = _sg(doc)["operators"]
    i = int(rng.integers(len(ops))) if ops else None
    if i is None:
        raise Skip("no operator")
    return i, ops[i]


def _bad_index(rng: np.random.Generator, n: int) -> int:
    return pick(rng, [n, n + 1, n + 1000, 2**31 - 1, -2, -7, -2**31])


# Each structural mutation changes `doc` in place and returns what it did, in a few words.

def m_tensor_buffer(rng, doc):
    i = pick(rng, range(len(_sg(doc)["tensors"])))
    t = _sg(doc)["tensors"][i]
    t["buffer"] = pick(rng, [len(doc["buffers"]), len(doc["buffers"]) + 5, *U32])
    return f"tensor {i} buffer -> {t['buffer']}"


def m_op_tensor_index(rng, doc):
    i, op = _op(rng, doc)
    key = pick(rng, ["inputs", "outputs"])
    vec = op[key] or [0]
    j = int(rng.integers(len(vec)))
    vec[j] = _bad_index(rng, len(_sg(doc)["tensors"]))
    op[key] = vec
    return f"operator {i} {key}[{j}] -> {vec[j]}"


def m_graph_io(rng, doc):
    sg = _sg(doc)
    key = pick(rng, ["inputs", "outputs"])
    n = len(sg["tensors"])
    how = pick(rng, ["oob", "empty", "none", "dup", "const", "other", "absent"])
    vec = list(sg[key] or [])
    if how == "oob":
        vec = vec or [0]
        vec[int(rng.integers(len(vec)))] = _bad_index(rng, n)
    elif how == "empty":
        vec = []
    elif how == "none":
        vec = None
    elif how == "dup":
        vec = vec + vec[:1]
    elif how == "const":
        vec = [pick(rng, _const_tensors(doc))] + vec[1:]
    elif how == "other":
        vec = [int(rng.integers(n))] + vec[1:] if n else [0]
    else:
        vec = (vec or [0])[:-1] + [-1]
    sg[key] = vec
    return f"subgraph {key} {how} -> {vec}"


def m_shape(rng, doc):
    i = pick(rng, range(len(_sg(doc)["tensors"])))
    t = _sg(doc)["tensors"][i]
    shape = list(t["shape"] or [])
    how = pick(rng, ["dim", "dim", "dim", "drop", "add", "scalar", "none", "rank9", "all_huge"])
    if how == "dim" and shape:
        shape[int(rng.integers(len(shape)))] = pick(rng, DIMS)
    elif how == "drop" and shape:
        del shape[int(rng.integers(len(shape)))]
    elif how == "add":
        shape.insert(int(rng.integers(len(shape) + 1)), pick(rng, [1, 2, 3, 0, 2**31 - 1]))
    elif how == "scalar":
        shape = []
    elif how == "rank9":
        shape = [1] * 9
    elif how == "all_huge":
        shape = [2**31 - 1] * max(len(shape), 2)
    t["shape"] = None if how == "none" else shape
    return f"tensor {i} shape {how} -> {t['shape']}"


def m_shape_signature(rng, doc):
    i = pick(rng, range(len(_sg(doc)["tensors"])))
    t = _sg(doc)["tensors"][i]
    sig = list(t["shape"] or [1])
    sig[int(rng.integers(len(sig)))] = pick(rng, [-1, -2, 0, 2**31 - 1])
    if rng.random() < 0.3:
        sig.append(-1)
    t["shape_signature"] = sig
    return f"tensor {i} shape_signature -> {sig}"


def m_buffer_location(rng, doc):
    """Buffers stored outside the flatbuffer: offsets and sizes past the end or claiming gigabytes."""
    b = pick(rng, range(1, len(doc["buffers"]))) if len(doc["buffers"]) > 1 else 0
    buf = doc["buffers"][b]
    buf["offset"] = pick(rng, [2, 16, 1 << 20, 1 << 40, 2**64 - 1, 2**63])
    buf["size"] = pick(rng, [0, 1, 1 << 30, 1 << 33, 2**64 - 1, 2**63])
    if rng.random() < 0.5:
        buf["data"] = None
    return f"buffer {b} offset {buf['offset']} size {buf['size']}"


def m_buffer_data(rng, doc):
    c = pick(rng, _const_tensors(doc))
    t = _sg(doc)["tensors"][c]
    buf = doc["buffers"][t["buffer"]]
    data = buf["data"] or b""
    how = pick(rng, ["short", "long", "empty", "swap", "share"])
    if how == "short":
        buf["data"] = data[: int(rng.integers(len(data) + 1))]
    elif how == "long":
        buf["data"] = data + bytes(int(rng.integers(1, 64)))
    elif how == "empty":
        buf["data"] = b""
    elif how == "swap":
        t["buffer"] = _sg(doc)["tensors"][pick(rng, _const_tensors(doc))]["buffer"]
    else:  # an activation tensor reads a weight buffer (it becomes a constant)
        a = pick(rng, _act_tensors(doc))
        _sg(doc)["tensors"][a]["buffer"] = t["buffer"]
        return f"activation tensor {a} uses the buffer of constant {c}"
    return f"constant tensor {c} buffer data {how}"


def m_drop_constant(rng, doc):
    c = pick(rng, _const_tensors(doc))
    _sg(doc)["tensors"][c]["buffer"] = 0
    return f"constant tensor {c} loses its data"


def m_cycle(rng, doc):
    sg = _sg(doc)
    ops = sg["operators"]
    how = pick(rng, ["self", "pair", "reverse", "swap"])
    if how == "self":
        i, op = _op(rng, doc)
        if not op["inputs"] or not op["outputs"]:
            raise Skip("operator without inputs or outputs")
        op["inputs"][0] = op["outputs"][0]
        return f"operator {i} consumes its own output"
    if len(ops) < 2:
        raise Skip("fewer than two operators")
    i, j = sorted(int(x) for x in rng.choice(len(ops), 2, replace=False))
    if how == "pair":
        a, b = ops[i], ops[j]
        if not (a["inputs"] and a["outputs"] and b["inputs"] and b["outputs"]):
            raise Skip("operator without inputs or outputs")
        a["inputs"][0], b["inputs"][0] = b["outputs"][0], a["outputs"][0]
        return f"operators {i} and {j} feed each other"
    if how == "reverse":
        ops.reverse()
        return "operator order reversed"
    ops[i], ops[j] = ops[j], ops[i]
    return f"operators {i} and {j} swapped"


def m_duplicate_writer(rng, doc):
    ops = _sg(doc)["operators"]
    if len(ops) < 2:
        raise Skip("fewer than two operators")
    i, j = (int(x) for x in rng.choice(len(ops), 2, replace=False))
    if not ops[i]["outputs"] or not ops[j]["outputs"]:
        raise Skip("operator without outputs")
    ops[i]["outputs"][0] = ops[j]["outputs"][0]
    return f"operators {i} and {j} write the same tensor"


def m_subgraphs(rng, doc):
    how = pick(rng, ["none", "empty_list", "empty", "no_ops", "no_tensors", "two"])
    if how == "none":
        doc["subgraphs"] = None
    elif how == "empty_list":
        doc["subgraphs"] = []
    elif how == "empty":
        doc["subgraphs"] = [{"name": b"", "tensors": [], "operators": [], "inputs": [], "outputs": []}]
    elif how == "no_ops":
        _sg(doc)["operators"] = []
    elif how == "no_tensors":
        _sg(doc)["tensors"] = []
    else:
        sg = _sg(doc)
        doc["subgraphs"].append(copy.deepcopy(sg))
    return f"subgraphs: {how}"


def m_opcode_index(rng, doc):
    i, op = _op(rng, doc)
    op["opcode_index"] = pick(rng, [len(doc["operator_codes"]), len(doc["operator_codes"]) + 3, *U32])
    return f"operator {i} opcode index -> {op['opcode_index']}"


def m_builtin_code(rng, doc):
    if not doc["operator_codes"]:
        raise Skip("no operator codes")
    k = int(rng.integers(len(doc["operator_codes"])))
    oc = doc["operator_codes"][k]
    how = pick(rng, ["unknown", "other_op", "custom", "deprecated", "version"])
    if how == "unknown":
        oc["builtin_code"] = pick(rng, [255, 1000, 2**31 - 1, -5, -2**31])
        oc["deprecated_builtin_code"] = pick(rng, [oc["deprecated_builtin_code"], 127, -1, -128])
    elif how == "other_op":  # a known op whose inputs and options do not match what is there
        code = int(rng.integers(0, 160))
        oc["builtin_code"] = code
        oc["deprecated_builtin_code"] = min(code, 127)
    elif how == "custom":
        oc["builtin_code"] = oc["deprecated_builtin_code"] = tflite.BuiltinOperator.CUSTOM
        oc["custom_code"] = pick(rng, [None, b"", b"\xff\xfe bad utf-8", b"TFLite_Detection_PostProcess"])
    elif how == "deprecated":
        oc["deprecated_builtin_code"] = pick(rng, [-1, -128, 127, 0, 4])
    else:
        oc["version"] = pick(rng, [0, -1, 99, 2**31 - 1])
    return f"operator code {k} {how} -> {oc['builtin_code']}/{oc['deprecated_builtin_code']}"


def m_quant(rng, doc):
    sg = _sg(doc)
    cands = [i for i, t in enumerate(sg["tensors"]) if t["quant"] is not None] or list(range(len(sg["tensors"])))
    i = pick(rng, cands)
    t = sg["tensors"][i]
    q = t["quant"] or {"scale": [0.1], "zero_point": [0], "quantized_dimension": 0}
    scale, zp = list(q["scale"] or [1.0]), list(q["zero_point"] or [0])
    how = pick(rng, ["scale_len", "zp_len", "scale_val", "zp_val", "axis", "drop", "none_scale", "per_channel"])
    if how == "scale_len":
        scale = scale + scale[:1] * int(rng.integers(1, 4)) if rng.random() < 0.5 else scale[:-1]
    elif how == "zp_len":
        zp = zp + [0] * int(rng.integers(1, 4)) if rng.random() < 0.5 else zp[:-1]
    elif how == "scale_val":
        scale[int(rng.integers(len(scale)))] = pick(rng, [0.0, -1.0, float("nan"), float("inf"), 1e-45,
                                                           3e38, 1e-30, 1e30])
    elif how == "zp_val":
        zp[int(rng.integers(len(zp)))] = pick(rng, [128, -129, 1000, -1000, 2**40, -2**62, 255])
    elif how == "axis":
        q["quantized_dimension"] = pick(rng, [-1, 4, 7, 2**31 - 1, -2**31, 1, 2, 3])
    elif how == "drop":
        t["quant"] = None
        return f"tensor {i} quantization dropped"
    elif how == "none_scale":
        scale = None
    else:  # per-channel parameters where there should be one pair, or the wrong count
        n = int(rng.integers(2, 9))
        scale, zp = [0.05] * n, [0] * n
        q["quantized_dimension"] = int(rng.integers(0, 4))
    q["scale"], q["zero_point"] = scale, zp
    t["quant"] = q
    return f"tensor {i} quantization {how}"


def m_options(rng, doc):
    i, op = _op(rng, doc)
    how = pick(rng, ["drop", "wrong_type", "field", "field", "field", "type_only"])
    if how == "drop":
        op["options"], op["options_type"] = None, 0
    elif how == "wrong_type":  # the table of one kind of options read as another
        cls = pick(rng, [c for c in OPTION_CLASSES.values() if hasattr(tflite, c)])
        if op["options"] is None:
            op["options"] = {"cls": cls, "fields": {}}
        op["options_type"] = getattr(tflite.BuiltinOptions, cls)
    elif how == "type_only":
        op["options_type"] = pick(rng, [0, 200, 255])
    else:
        if op["options"] is None or not op["options"]["fields"]:
            raise Skip("operator without option fields")
        fields = op["options"]["fields"]
        f = pick(rng, sorted(fields))
        v = fields[f]
        if isinstance(v, np.ndarray):
            v = v.copy()
            choice = pick(rng, ["value", "empty", "long"])
            if choice == "value" and v.size:
                v[int(rng.integers(v.size))] = pick(rng, [0, -1, -2, 7, 127, 2**20])
            elif choice == "empty":
                v = v[:0]
            else:
                v = np.concatenate([v, np.asarray([1, 2, 3], dtype=v.dtype)])
        elif isinstance(v, bool):
            v = not v
        elif isinstance(v, bytes):
            v = pick(rng, [b"", b"another", v + b"_"])
        elif isinstance(v, float):
            v = pick(rng, [0.0, -1.0, float("nan"), float("inf"), 1e30, -1e-30])
        else:
            v = pick(rng, I32)
        fields[f] = v
        return f"operator {i} option {f} -> {v.tolist() if isinstance(v, np.ndarray) else v}"
    return f"operator {i} options {how}"


def m_tensor_type(rng, doc):
    i = pick(rng, range(len(_sg(doc)["tensors"])))
    t = _sg(doc)["tensors"][i]
    t["type"] = pick(rng, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 42, 127, -1])
    return f"tensor {i} type -> {t['type']}"


def m_arity(rng, doc):
    i, op = _op(rng, doc)
    how = pick(rng, ["drop_input", "extra_input", "absent_input", "no_outputs", "extra_output", "no_inputs"])
    n = len(_sg(doc)["tensors"])
    ins, outs = list(op["inputs"] or []), list(op["outputs"] or [])
    if how == "drop_input" and ins:
        del ins[int(rng.integers(len(ins)))]
    elif how == "extra_input" and n:
        ins.append(int(rng.integers(n)))
    elif how == "absent_input" and ins:
        ins[int(rng.integers(len(ins)))] = -1
    elif how == "no_outputs":
        outs = []
    elif how == "extra_output" and n:
        outs.append(int(rng.integers(n)))
    elif how == "no_inputs":
        ins = []
    op["inputs"], op["outputs"] = ins, outs
    return f"operator {i} {how}"


def m_remove_or_duplicate_op(rng, doc):
    i, op = _op(rng, doc)
    ops = _sg(doc)["operators"]
    if rng.random() < 0.5:
        del ops[i]
        return f"operator {i} removed"
    ops.insert(i, copy.deepcopy(op))
    return f"operator {i} duplicated"


def m_versions(rng, doc):
    doc["version"] = pick(rng, [0, 1, 2, 4, 2**31 - 1])
    return f"model version -> {doc['version']}"


def m_rewire(rng, doc):
    """An operator reads a random existing tensor: wrong shapes and types, but every index valid."""
    i, op = _op(rng, doc)
    if not op["inputs"] or not _sg(doc)["tensors"]:
        raise Skip("operator without inputs or model without tensors")
    j = int(rng.integers(len(op["inputs"])))
    op["inputs"][j] = int(rng.integers(len(_sg(doc)["tensors"])))
    return f"operator {i} input {j} -> tensor {op['inputs'][j]}"


def m_resize_graph(rng, doc):
    """Every 4-D activation's height and width changed the same way: the shapes often still agree,
    so the model reaches lowering with edge cases (1x1 maps, windows larger than the input)."""
    how = pick(rng, ["x2", "half", "one", "x3+1", "width_one"])
    f = {"x2": lambda d: d * 2, "half": lambda d: max(d // 2, 1), "one": lambda d: 1,
         "x3+1": lambda d: d * 3 + 1, "width_one": None}[how]
    for i in _act_tensors(doc):
        t = _sg(doc)["tensors"][i]
        if t["shape"] and len(t["shape"]) == 4:
            if f is None:
                t["shape"][2] = 1
            else:
                t["shape"][1], t["shape"][2] = f(t["shape"][1]), f(t["shape"][2])
            t["shape_signature"] = None
    return f"activations' height and width {how}"


# Mutations that keep most of the model plausible reach shape inference, legalization, lowering
# and planning; the others are mostly refused by the reader. The first kind is drawn more often.
DEEP = {"shape", "shape_signature", "buffer_data", "drop_constant", "cycle", "duplicate_writer", "builtin_code",
        "quant", "options", "tensor_type", "arity", "remove_or_duplicate_op", "rewire", "graph_io", "resize_graph"}

STRUCTURAL: dict[str, Callable[[np.random.Generator, dict[str, Any]], str]] = {
    "tensor_buffer": m_tensor_buffer,
    "op_tensor_index": m_op_tensor_index,
    "graph_io": m_graph_io,
    "shape": m_shape,
    "shape_signature": m_shape_signature,
    "buffer_location": m_buffer_location,
    "buffer_data": m_buffer_data,
    "drop_constant": m_drop_constant,
    "cycle": m_cycle,
    "duplicate_writer": m_duplicate_writer,
    "subgraphs": m_subgraphs,
    "opcode_index": m_opcode_index,
    "builtin_code": m_builtin_code,
    "quant": m_quant,
    "options": m_options,
    "tensor_type": m_tensor_type,
    "arity": m_arity,
    "remove_or_duplicate_op": m_remove_or_duplicate_op,
    "versions": m_versions,
    "rewire": m_rewire,
    "resize_graph": m_resize_graph,
}

