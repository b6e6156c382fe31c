"""The registry references of the shape, gather and reduction ops on int32 tensors (shape and index
computations, which a constant-folding pass evaluates with these references when every input is
constant; TFLM has no int32 kernel for most of them), against numpy's own operations."""

from __future__ import annotations

import numpy as np
import pytest
from mcuforge.ir.registry import OpView, get_op
from mcuforge.ir.types import TensorType

RNG = np.random.default_rng(0)
X = RNG.integers(-2**31, 2**31, (2, 3, 4), dtype=np.int64).astype(np.int32)
SMALL = RNG.integers(-50, 50, (2, 3, 4)).astype(np.int32)


def run(op: str, args: list[np.ndarray], attrs: dict) -> np.ndarray:
    entry = get_op(op)
    types = tuple(TensorType(a.shape, str(a.dtype)) for a in args)
    shape, dtype = entry.infer(types, attrs)
    out = entry.reference(args, OpView(types, TensorType(shape, dtype), attrs))
    assert out.shape == tuple(shape) and out.dtype == np.dtype(dtype)
    return out


CASES = [
    ("slice", [X], {"begin": (1, 0, 2), "size": (1, -1, 2)}, X[1:2, :, 2:4]),
    ("broadcast_to", [X[:, :1]], {"shape": (5, 2, 3, 4)}, np.broadcast_to(X[:, :1], (5, 2, 3, 4))),
    ("tile", [X], {"multiples": (1, 2, 3)}, np.tile(X, (1, 2, 3))),
    ("mirror_pad", [X], {"paddings": ((1, 1), (0, 2), (3, 0)), "mode": "REFLECT"},
     np.pad(X, ((1, 1), (0, 2), (3, 0)), mode="reflect")),
    ("depth_to_space", [X.reshape(1, 2, 3, 4)], {"block_size": 2},
     X.reshape(1, 2, 3, 2, 2, 1).transpose(0, 1, 3, 2, 4, 5).reshape(1, 4, 6, 1)),
    ("expand_dims", [X], {"axis": -1, "axis_count": 1, "axis_rank": 0, "axis_dtype": "int32"}, X[..., None]),
    ("zeros_like", [X], {}, np.zeros_like(X)),
    ("fill", [np.array(7, np.int32)], {"shape": (2, 5), "dims": (2, 5), "dims_dtype": "int32"}, np.full((2, 5), 7, np.int32)),
    ("reduce_max", [X], {"axis": (0, 2), "keep_dims": False}, X.max(axis=(0, 2))),
    ("reduce_min", [X], {"axis": (1,), "keep_dims": True}, X.min(axis=1, keepdims=True)),
    ("sum", [SMALL], {"axis": (2,), "keep_dims": False}, SMALL.sum(axis=2)),
    ("arg_max", [X], {"axis": 1, "axis_count": 1, "axis_dtype": "int32"}, X.argmax(axis=1).astype(np.int32)),
    ("cumsum", [SMALL], {"axis": 1, "axis_count": 1, "axis_dtype": "int32", "exclusive": False, "reverse": True},
     np.flip(np.cumsum(np.flip(SMALL, 1), axis=1), 1)),
]


@pytest.mark.parametrize("op, args, attrs, want", CASES, ids=[c[0] for c in CASES])
def test_int32_reference_equals_numpy(op, args, attrs, want):
    np.testing.assert_array_equal(run(op, args, attrs), want)


def test_int32_gathers_equal_numpy():
    idx = np.array([[2, 0], [1, 1]], np.int32)
    got = run("gather", [X, idx], {"axis": 1, "batch_dims": 0, "index_range": (0, 2)})
    np.testing.assert_array_equal(got, np.take(X, idx, axis=1))
    nd = np.array([[1, 2], [0, 0]], np.int32)
    got = run("gather_nd", [X, nd], {"index_range": None})
    np.testing.assert_array_equal(got, np.stack([X[1, 2], X[0, 0]]))
