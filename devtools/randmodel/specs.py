"""Specs: seeded random ones (`random_spec`) and the MobileNetV2 structure (`mobilenet_v2_spec`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from devtools.randmodel.graph import GraphBuilder

ACTS = ["NONE", "NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def _jitter(rng: np.random.Generator, op: dict) -> dict:
    r = rng.random()
    op["qj"] = 1.0 if r < 0.4 else float(round(rng.uniform(0.6, 1.6), 3))
    op["zj"] = 0 if rng.random() < 0.6 else int(rng.integers(-12, 13))
    return op


def random_spec(seed: int, max_ops: int = 8) -> dict[str, Any]:
    """A random spec: an image (or a vector) input, then 1..max_ops ops over earlier values, with
    branches, residual adds, broadcasts (squeeze-excite style) and concatenations."""
    rng = np.random.default_rng(seed)
    if rng.random() < 0.12:
        shape = [int(rng.choice([1, 1, 1, 2])), int(rng.integers(4, 96))]
    else:
        n = 1 if rng.random() < 0.9 else 2
        shape = [n, int(rng.integers(1, 17)), int(rng.integers(1, 17)), int(rng.integers(1, 17))]
    spec: dict[str, Any] = {"seed": int(seed), "input": shape,
                            "input_q": [float(np.float32(rng.uniform(0.005, 0.1))), int(rng.integers(-30, 31))],
                            "ops": []}
    g = GraphBuilder(spec)
    n_ops = int(rng.integers(1, max_ops + 1))
    tries = 0
    while len(spec["ops"]) < n_ops and tries < 6 * n_ops:
        tries += 1
        group = _random_op(rng, g)
        for op in group if isinstance(group, list) else [group] if group else []:
            if not g.apply(op):
                g.values.pop()
                g.applied.pop()
                break
            spec["ops"].append(op)
    return spec


def _pick(rng: np.random.Generator, g: GraphBuilder, rank: int | None = None) -> int | None:
    cands = [k for k, v in enumerate(g.values) if (rank is None or len(v.shape) == rank)
             and (k == 0 or g.applied[k - 1])]
    if not cands:
        return None
    if rng.random() < 0.65 and cands[-1] == len(g.values) - 1:
        return cands[-1]
    return int(rng.choice(cands))


def _random_op(rng: np.random.Generator, g: GraphBuilder) -> dict | None:
    kinds = ["conv", "conv", "conv1x1", "dwconv", "dwconv", "fc", "pool", "add", "add", "mul", "se", "concat",
             "reshape", "pad", "mean", "softmax", "unary", "unary", "transpose", "slice", "resize"]
    kind = kinds[int(rng.integers(len(kinds)))]
    wseed = int(rng.integers(2**31))
    common = {"wseed": wseed, "per_channel": bool(rng.random() < 0.6), "act": ACTS[int(rng.integers(len(ACTS)))],
              "clamp_calib": bool(rng.random() < 0.3), "bias": float(rng.choice([0.0, 1.0, 1.0, 3.0]))}
    src = _pick(rng, g, 4 if kind in ("conv", "conv1x1", "dwconv", "pool", "pad", "se") else None)
    if src is None:
        return None
    shape = g.values[src].shape
    pad = "SAME" if rng.random() < 0.55 else "VALID"
    if kind in ("conv", "conv1x1"):
        k = [1, 1] if kind == "conv1x1" else [int(rng.integers(1, 6)), int(rng.integers(1, 6))]
        stride = [1, 1] if rng.random() < 0.6 else [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
        dil = [1, 1] if rng.random() < 0.8 or kind == "conv1x1" else [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
        return _jitter(rng, {"op": "conv", "src": src, "oc": int(rng.integers(1, 25)), "k": k, "stride": stride,
                             "dil": dil, "pad": pad, **common})
    if kind == "dwconv":
        mult = 1 if rng.random() < 0.6 else int(rng.integers(2, 4))
        k = [3, 3] if rng.random() < 0.5 else [int(rng.integers(1, 6)), int(rng.integers(1, 6))]
        stride = [1, 1] if rng.random() < 0.6 else [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
        dil = [1, 1] if rng.random() < 0.75 else [int(rng.integers(1, 3)), int(rng.integers(1, 3))]
        return _jitter(rng, {"op": "dwconv", "src": src, "mult": mult, "k": k, "stride": stride, "dil": dil,
                             "pad": pad, **common})
    if kind == "fc":
        rows = bool(rng.random() < 0.3)
        return _jitter(rng, {"op": "fc", "src": src, "units": int(rng.integers(1, 33)), "rows": rows, **common})
    if kind == "pool":
        k = [int(rng.integers(1, 5)), int(rng.integers(1, 5))]
        stride = [int(rng.integers(1, 4)), int(rng.integers(1, 4))]
        act = "NONE" if rng.random() < 0.7 else common["act"]
        return {"op": "pool", "src": src, "kind": "max" if rng.random() < 0.5 else "avg", "k": k,
                "stride": stride, "pad": pad, "act": act}
    if kind in ("add", "mul") and rng.random() < 0.2:
        kind = "sub" if kind == "add" else kind
    if kind in ("add", "sub", "mul"):
        same = [k for k, v in enumerate(g.values) if v.shape == shape and k != src and (k == 0 or g.applied[k - 1])]
        bcast = [k for k, v in enumerate(g.values) if (k == 0 or g.applied[k - 1]) and v.shape != shape
                 and _broadcasts(v.shape, shape)]
        pool = same if (same and rng.random() < 0.7) or not bcast else bcast
        src2 = int(rng.choice(pool)) if pool else src  # x + x (or x * x) when nothing else fits
        act = "NONE" if rng.random() < 0.5 else common["act"]
        return _jitter(rng, {"op": "binary", "kind": kind, "src": src, "src2": src2, "act": act,
                             "clamp_calib": common["clamp_calib"]})
    if kind == "se":  # squeeze-excite: x * logistic(conv1x1(mean_hw(x))), a broadcast MUL
        m = len(g.values)
        return [{"op": "mean", "src": src, "axes": [1, 2], "keep": True},
                {"op": "conv", "src": m, "oc": shape[3], "k": [1, 1], "pad": "VALID", **common, "act": "NONE"},
                {"op": "unary", "src": m + 1, "kind": "logistic"},
                {"op": "binary", "kind": "mul", "src": src, "src2": m + 2}]
    if kind == "concat":
        rank = len(shape)
        cands = [k for k, v in enumerate(g.values) if (k == 0 or g.applied[k - 1]) and len(v.shape) == rank
                 and v.shape[:-1] == shape[:-1]]
        srcs = [int(c) for c in rng.choice(cands, size=int(rng.integers(1, min(3, len(cands)) + 1)))]
        return _jitter(rng, {"op": "concat", "src": src, "srcs": srcs, "share_q": bool(rng.random() < 0.3)})
    if kind == "reshape":
        return {"op": "reshape", "src": src, "mode": str(rng.choice(["flat", "rows", "image"]))}
    if kind == "pad":
        pads = [int(v) for v in rng.integers(0, 3, size=6)]
        if rng.random() < 0.7:
            pads[4:6] = [0, 0]
        return {"op": "pad", "src": src, "pads": pads}
    if kind == "mean":
        rank = len(shape)
        choices = [[1, 2], [2, 1], [1], [2], [3], [rank - 1]] if rank == 4 else [[rank - 1], [1]]
        axes = choices[int(rng.integers(len(choices)))]
        return _jitter(rng, {"op": "mean", "src": src, "axes": axes, "keep": bool(rng.random() < 0.6),
                             "same_q": bool(rng.random() < 0.3)})
    if kind == "softmax":
        return {"op": "softmax", "src": src, "beta": float(rng.choice([1.0, 1.0, 0.5, 2.0]))}
    if kind == "transpose":
        return {"op": "transpose", "src": src, "perm": [int(p) for p in rng.permutation(len(shape))]}
    if kind == "slice":
        axes = []
        for _ in shape:
            b = float(rng.choice([0.0, 0.0, round(float(rng.uniform(0, 0.6)), 2)]))
            e = float(rng.choice([1.0, 1.0, round(float(rng.uniform(b + 0.2, 1.0)), 2)]))
            axes.append([b, e, int(rng.choice([1, 1, 2]))])
        return {"op": "slice", "src": src, "axes": axes}
    if kind == "resize":
        flags = [(False, False), (True, False), (False, True)][int(rng.integers(3))]
        return {"op": "resize", "src": src, "scale": [float(rng.choice([0.5, 1.5, 2.0, 3.0])) for _ in range(2)],
                "align_corners": flags[0], "half_pixel_centers": flags[1]}
    unary = str(rng.choice(["logistic", "tanh", "relu", "relu6", "leaky_relu", "hard_swish", "requant", "requant"]))
    return _jitter(rng, {"op": "unary", "src": src, "kind": unary, "same_q": bool(rng.random() < 0.5),
                         "alpha": float(rng.choice([0.1, 0.2, 0.3]))})


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        return np.broadcast_shapes(a, b) == b
    except ValueError:
        return False


# ---- MobileNetV2 ------------------------------------------------------------------------------------

MOBILENET_V2_BLOCKS = [  # (expansion t, output channels c, repeats n, first stride s), as in the paper
    (1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


def mobilenet_v2_spec(size: int = 224, alpha: float = 1.0, classes: int = 1000, seed: int = 0) -> dict:
    """The MobileNetV2 layer structure (3x3 stem conv stride 2; inverted residual blocks of 1x1 expand,
    3x3 depthwise, 1x1 linear project, with a residual ADD where stride is 1 and the channels
    match; 1x1 conv to 1280; global average (MEAN); FULLY_CONNECTED to the logits) with random weights.
    At 224x224 and alpha 1.0 it holds 3.5 M int8 weights: a model of about 4 MB."""
    def ch(c: int) -> int:
        return max(8, int(c * alpha + 4) // 8 * 8)

    rng = np.random.default_rng(seed)
    ops: list[dict] = []

    def add(op: dict) -> int:
        ops.append({"wseed": int(rng.integers(2**31)), "per_channel": True, **op})
        return len(ops)  # the value index of its output

    x = add({"op": "conv", "src": 0, "oc": ch(32), "k": [3, 3], "stride": [2, 2], "pad": "SAME", "act": "RELU6"})
    cin = ch(32)
    for t, c, n, s in MOBILENET_V2_BLOCKS:
        for i in range(n):
            stride = s if i == 0 else 1
            y = x
            if t != 1:
                y = add({"op": "conv", "src": y, "oc": cin * t, "k": [1, 1], "pad": "VALID", "act": "RELU6"})
            y = add({"op": "dwconv", "src": y, "k": [3, 3], "stride": [stride, stride], "pad": "SAME",
                     "act": "RELU6"})
            y = add({"op": "conv", "src": y, "oc": ch(c), "k": [1, 1], "pad": "VALID", "act": "NONE"})
            if stride == 1 and cin == ch(c):
                y = add({"op": "binary", "kind": "add", "src": x, "src2": y})
            x, cin = y, ch(c)
    x = add({"op": "conv", "src": x, "oc": 1280 if alpha <= 1.0 else ch(1280), "k": [1, 1], "pad": "VALID",
             "act": "RELU6"})
    x = add({"op": "mean", "src": x, "axes": [1, 2], "keep": False})
    add({"op": "fc", "src": x, "units": classes, "act": "NONE"})  # logits: TFLM's int8 softmax takes < 512
    return {"seed": seed, "input": [1, size, size, 3], "input_q": [0.0078125, -1], "samples": 2,
            "max_elems": 1 << 40, "ops": ops}

