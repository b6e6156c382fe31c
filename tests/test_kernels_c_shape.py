"""Portable (`c` target) kernels of the data-movement family: CONCATENATION, PAD/PADV2, TRANSPOSE,
STRIDED_SLICE, RESIZE_NEAREST_NEIGHBOR (and the RESHAPE/SQUEEZE views around them).

Each case generates C, builds it with the host gcc (-Wall -Wextra -Werror), runs it and compares the
outputs with the TFLite Micro interpreter byte for byte:
- every fixture made only of these ops (plus CONV_2D);
- built multi-operator models, one per element type (int8, int16, int32, float32), holding many
  independent operators with the parameter variants the fixtures do not reach (rank 1 and 5,
  constant and repeated inputs, PADV2 extremes, negative strides, shrink axes, batches);
- models whose outputs are views (RESHAPE/SQUEEZE) of inputs or of kernel outputs, and views
  feeding kernels.
Plus unit checks of the lowering's index plans and, when arm-none-eabi-gcc is installed, a
warning-free cross build of every kernel for Cortex-M4 and M55.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import MODELS, ROOT, manifest
from mcuforge.ir.ops._portable import ELEM_SIZES, gather_plan
from mcuforge.ir.registry import get_op

from mcuforge.driver import Options, compile_model
from mcuforge.verify import random_inputs, verify_host

from devtools.tflite_writer import ModelWriter

OPS = {"CONCATENATION", "PAD", "PADV2", "TRANSPOSE", "STRIDED_SLICE", "RESIZE_NEAREST_NEIGHBOR",
       "RESHAPE", "SQUEEZE", "CONV_2D"}
KERNEL_OPS = ("concatenation", "pad", "transpose", "strided_slice", "resize_nearest_neighbor")
# one element-size generic kernel per op; TRANSPOSE and STRIDED_SLICE share the gather
SYMBOL = {"concatenation": "mcu_concatenation", "pad": "mcu_pad", "transpose": "mcu_gather",
          "strided_slice": "mcu_gather", "resize_nearest_neighbor": "mcu_resize_nearest_neighbor"}
DTYPES = ("int8", "int16", "int32", "float32")
KERNELS = ROOT / "firmware" / "kernels" / "c"
Q = (0.25, -3)  # quantization of every int8 tensor of the built models


def _fixtures() -> list[str]:
    return sorted(e["file"] for e in manifest() if set(e["ops"]) <= OPS)


def assert_host_bit_exact(path: Path, n: int = 4, seed: int = 0):
    compiled = compile_model(path, Options(targets=("c",)))
    rng = np.random.default_rng(seed)
    res = verify_host(compiled, [random_inputs(compiled.imported, rng) for _ in range(n)], isolate=False)
    bad = [f"input {r.index}: {m}" for r in res for m in r.mismatches]
    assert not bad, "\n".join(bad[:8])
    return compiled


@pytest.mark.parametrize("name", _fixtures())
def test_fixture_bit_exact_on_host(name):
    assert_host_bit_exact(MODELS / name)


def test_fixture_selection_is_complete():
    names = _fixtures()
    for op in (*KERNEL_OPS, "reshape", "squeeze"):
        assert any(op in n for n in names), op


# ---- multi-operator models -----------------------------------------------------------------------

class ModelBuilder:
    """A ModelWriter that also collects the graph inputs and outputs; int8 tensors quantized by `q`
    (scale, zero point)."""

    def __init__(self):
        self.w = ModelWriter()
        self.inputs: list[int] = []
        self.outputs: list[int] = []

    def tensor(self, shape, dtype, q=None, data=None) -> int:
        scale, zp = q if q is not None else (None, None)
        return self.w.tensor(shape, dtype, scale, zp, data=data)

    def input(self, shape, dtype, q=None) -> int:
        idx = self.tensor(shape, dtype, q)
        self.inputs.append(idx)
        return idx

    def ints(self, *values) -> int:
        arr = np.asarray(values, dtype=np.int32)
        return self.tensor(arr.shape, "int32", data=arr)

    def op(self, name: str, ins, out: int, opts=("", {})) -> int:
        cls, fields = opts
        self.w.op(name, ins, [out], cls, **fields)
        return out

    def output(self, idx: int) -> None:
        self.outputs.append(idx)

    def save(self, path: Path) -> Path:
        path.write_bytes(self.w.finish(self.inputs, self.outputs))
        return path


def opts(cls: str, **fields):
    """(options table, fields) of an operator, fields named as in the schema's builders (`NewShape`)."""
    return cls, fields


def _dtypes(op: str) -> tuple[str, ...]:
    """The element types the registry allows for `op` (each needs its kernel)."""
    return importlib.import_module(f"mcuforge.ir.ops.{op}").DTYPES


def _allowed(op: str, dtype: str) -> bool:
    return dtype in _dtypes(op)


def _kernel_sources() -> list[Path]:
    return [KERNELS / f"{s}.c" for s in sorted(set(SYMBOL.values()))]


PAD_V2_VALUES = {"int8": -128, "int16": -32768, "int32": -(2 ** 31), "float32": -np.inf}


GROUPS = {"concatenation_pad": ("concatenation", "pad"),
          "transpose_strided_slice": ("transpose", "strided_slice"),
          "resize_nearest_neighbor": ("resize_nearest_neighbor",)}


def build_family_model(dtype: str, group: str, path: Path) -> Path:
    """Several independent operators of one element type, each from its own input to its own
    output. (Kept to a handful per model: the scheduler's exact order search grows with the number
    of independent operators.)"""
    mb = ModelBuilder()
    q = Q if dtype == "int8" else None
    ops = GROUPS[group]

    def x(shape):
        return mb.input(shape, dtype, q)

    def out(shape, name, ins, o=None):
        mb.output(mb.op(name, ins, mb.tensor(shape, dtype, q), o))

    if "concatenation" in ops:
        # three inputs (one constant) on a middle axis; one input twice on the last axis; the
        # maximum of 10 inputs on the only axis of rank-1 tensors
        rng = np.random.default_rng(5)
        info = np.iinfo(dtype) if dtype != "float32" else None
        const = (rng.integers(info.min, info.max, (2, 2, 4), endpoint=True) if info else
                 rng.standard_normal((2, 2, 4))).astype(dtype)
        out((2, 6, 4), "CONCATENATION", [x((2, 3, 4)), x((2, 1, 4)), mb.tensor((2, 2, 4), dtype, q, const)],
            opts("ConcatenationOptions", Axis=1))
        a = x((3, 2))
        out((3, 4), "CONCATENATION", [a, a], opts("ConcatenationOptions", Axis=-1))
        out((55,), "CONCATENATION", [x((k,)) for k in range(1, 11)], opts("ConcatenationOptions", Axis=0))
    if "pad" in ops:
        # rank 5 with an unpadded middle axis, rank 1, every axis padded; PADV2 with an extreme value
        out((3, 3, 3, 4, 2), "PAD", [x((2, 1, 3, 2, 2)), mb.ints([0, 1], [1, 1], [0, 0], [2, 0], [0, 0])],
            opts("PadOptions"))
        out((14,), "PAD", [x((7,)), mb.ints([2, 5])], opts("PadOptions"))
        out((2, 7, 8, 7), "PAD", [x((1, 4, 5, 3)), mb.ints([1, 0], [0, 3], [2, 1], [1, 3])],
            opts("PadOptions"))
        value = mb.tensor((), dtype, q, np.array(PAD_V2_VALUES[dtype], dtype))
        out((3, 5, 4), "PADV2", [x((2, 3, 2)), mb.ints([1, 0], [0, 2], [1, 1]), value], opts("PadV2Options"))
    if "transpose" in ops and _allowed("transpose", dtype):
        # rank 5, rank 2, a perm that keeps a contiguous run (merged), rank 1
        out((5, 1, 2, 4, 3), "TRANSPOSE", [x((2, 3, 1, 4, 5)), mb.ints(4, 2, 0, 3, 1)],
            opts("TransposeOptions"))
        out((4, 3), "TRANSPOSE", [x((3, 4)), mb.ints(1, 0)], opts("TransposeOptions"))
        out((2, 5, 6, 3), "TRANSPOSE", [x((2, 3, 5, 6)), mb.ints(0, 2, 3, 1)], opts("TransposeOptions"))
        out((6,), "TRANSPOSE", [x((6,)), mb.ints(0)], opts("TransposeOptions"))
    if "strided_slice" in ops:
        # negative and positive strides with an end mask; shrink axes with a negative begin;
        # reversed rank 1; the identity slice (one contiguous copy)
        out((1, 2, 2, 3), "STRIDED_SLICE", [x((1, 5, 6, 3)), mb.ints(0, 4, 1, 0), mb.ints(1, 0, -1, 3),
                                            mb.ints(1, -2, 2, 1)], opts("StridedSliceOptions", EndMask=8))
        out((3,), "STRIDED_SLICE", [x((4, 3, 5)), mb.ints(2, 0, -1), mb.ints(0, 3, 0), mb.ints(1, 1, 1)],
            opts("StridedSliceOptions", ShrinkAxisMask=5))
        out((3,), "STRIDED_SLICE", [x((9,)), mb.ints(-1), mb.ints(0), mb.ints(-3)],
            opts("StridedSliceOptions", EndMask=1))
        out((2, 3, 4), "STRIDED_SLICE", [x((2, 3, 4)), mb.ints(0, 0, 0), mb.ints(2, 3, 4), mb.ints(1, 1, 1)],
            opts("StridedSliceOptions"))
    if "resize_nearest_neighbor" in ops and _allowed("resize_nearest_neighbor", dtype):
        # batches, every mode, up and down, a size-1 output axis
        for shape, size, ac, hp in [((2, 5, 3, 3), (8, 7), True, False),
                                    ((1, 9, 7, 2), (4, 3), False, True),
                                    ((2, 4, 4, 1), (8, 9), False, False),
                                    ((1, 3, 1, 5), (1, 4), True, False)]:
            out((shape[0], *size, shape[3]), "RESIZE_NEAREST_NEIGHBOR", [x(shape), mb.ints(*size)],
                opts("ResizeNearestNeighborOptions", AlignCorners=ac, HalfPixelCenters=hp))
    if dtype == "float32":  # mcuforge needs one quantized activation in a model: an int8 view
        v = mb.input((2, 3), "int8", Q)
        mb.output(mb.op("RESHAPE", [v, mb.ints(6)], mb.tensor((6,), "int8", Q),
                        opts("ReshapeOptions", NewShape=[6])))
    return mb.save(path)


@pytest.mark.parametrize("dtype,group", [(d, g) for d in DTYPES for g in sorted(GROUPS)
                                         if any(_allowed(op, d) for op in GROUPS[g])])
def test_built_models_every_dtype_bit_exact_on_host(dtype, group, tmp_path):
    path = build_family_model(dtype, group, tmp_path / f"{group}_{dtype}.tflite")
    compiled = assert_host_bit_exact(path, n=3, seed=1)
    symbols = {k.function for k in compiled.kernels.values() if not k.view}
    assert symbols == {SYMBOL[op] for op in GROUPS[group] if _allowed(op, dtype)}


def test_views_around_kernels_bit_exact_on_host(tmp_path):
    """Outputs that are views of a model input, of a view, and of a kernel output; views feeding
    kernels (one view read by two kernels, and by a kernel together with its own source)."""
    mb = ModelBuilder()

    def t(shape):
        return mb.tensor(shape, "int8", Q)

    def reshape(src, shape):
        return mb.op("RESHAPE", [src, mb.ints(*shape)], t(shape),
                     opts("ReshapeOptions", NewShape=list(shape)))

    x = mb.input((1, 4, 6), "int8", Q)
    mb.output(reshape(x, (24,)))  # output = view of an input
    y = mb.input((1, 2, 3, 4), "int8", Q)
    mb.output(reshape(reshape(y, (6, 4)), (4, 6)))  # output = view of a view of an input
    z = mb.input((1, 3, 4), "int8", Q)
    zt = mb.op("TRANSPOSE", [z, mb.ints(0, 2, 1)], t((1, 4, 3)), opts("TransposeOptions"))
    mb.output(reshape(zt, (12,)))  # output = view of a kernel output
    w = mb.input((1, 1, 5, 2), "int8", Q)
    ws = mb.op("SQUEEZE", [w], t((5, 2)), opts("SqueezeOptions", SqueezeDims=[0, 1]))
    # a view feeding a kernel, and another
    mb.output(mb.op("PAD", [ws, mb.ints([1, 0], [0, 2])], t((6, 4)), opts("PadOptions")))
    mb.output(mb.op("CONCATENATION", [ws, ws], t((5, 4)), opts("ConcatenationOptions", Axis=1)))
    u = mb.input((2, 6), "int8", Q)
    ur = reshape(u, (2, 2, 3))
    # a view of a view read together with its source
    mb.output(mb.op("CONCATENATION", [reshape(ur, (2, 6)), u], t((4, 6)),
                    opts("ConcatenationOptions", Axis=0)))
    assert_host_bit_exact(mb.save(tmp_path / "views.tflite"), n=3, seed=2)


def test_model_of_views_only_bit_exact_on_host(tmp_path):
    """No kernel at all: two outputs that are both views of the one input."""
    mb = ModelBuilder()
    x = mb.input((1, 4, 6), "int8", Q)
    for shape in ((24,), (4, 6)):
        mb.output(mb.op("RESHAPE", [x, mb.ints(*shape)], mb.tensor(shape, "int8", Q),
                        opts("ReshapeOptions", NewShape=list(shape))))
    compiled = assert_host_bit_exact(mb.save(tmp_path / "views_only.tflite"), n=2, seed=3)
    assert all(k.view for k in compiled.kernels.values())


# ---- the lowering's index plans --------------------------------------------------------------

def _gather(x: np.ndarray, plan: dict) -> np.ndarray:
    flat = x.reshape(-1)
    idx = np.full(plan["count"], plan["start"], dtype=np.int64)
    for ax, (n, s) in enumerate(zip(plan["count"], plan["step"])):
        shape = [1] * len(plan["count"])
        shape[ax] = n
        idx = idx + (np.arange(n) * s).reshape(shape)
    return flat[idx].reshape(-1)


@pytest.mark.parametrize("shape,perm", [
    ((2, 3, 4), (0, 1, 2)), ((2, 3, 4, 5, 6), (4, 3, 2, 1, 0)), ((1, 5, 1, 4), (3, 2, 0, 1)),
    ((2, 3, 4, 5), (0, 2, 3, 1)), ((7,), (0,)), ((3, 1, 2, 1, 4), (1, 3, 0, 4, 2)),
])
def test_transpose_plan_matches_numpy(shape, perm):
    x = np.arange(int(np.prod(shape)))
    strides = [int(np.prod(shape[k + 1:])) for k in range(len(shape))]
    plan = gather_plan(0, [shape[p] for p in perm], [strides[p] for p in perm])
    assert len(plan["count"]) == 5
    np.testing.assert_array_equal(_gather(x, plan), np.transpose(x.reshape(shape), perm).reshape(-1))
    if list(perm) == sorted(perm):
        assert plan["count"][:4] == [1, 1, 1, 1] and plan["step"][4] == 1  # one contiguous copy


def test_pad_lowering_folds_unpadded_inner_axes():
    from mcuforge.ir.expr import Call, Var
    from mcuforge.ir.ops.pad import lower_c as lower_pad
    from mcuforge.ir.types import QuantParams, TensorType

    q = QuantParams((0.5,), (7,))
    x = Var("x", TensorType((1, 4, 5, 3), "int8", q))
    attrs = {"paddings": ((0, 0), (1, 2), (2, 1), (0, 0)), "paddings_dtype": "int32", "pad_value": None,
             "pad_value_dtype": None, "pad_value_quant": None}
    call = Call("pad", (x,), TensorType((1, 7, 8, 3), "int8", q), attrs)
    k = lower_pad(call)
    params = k.params
    assert params["in_dims"] == [1, 1, 1, 4, 15] and params["pad_before"] == [0, 0, 0, 1, 6]
    assert params["pad_after"] == [0, 0, 0, 2, 3] and params["pad_bits"] == "0x00000007u" and params["elem_size"] == 1
    assert not k.constants


def test_every_registry_dtype_has_a_kernel():
    for op in KERNEL_OPS:
        assert get_op(op).name == op
        assert set(_dtypes(op)) <= set(ELEM_SIZES), op  # every allowed type has an element size
    missing = [p.name for p in _kernel_sources() if not p.exists()]
    assert not missing and len(_kernel_sources()) == 4, missing
    stale = [f"mcu_{op}_{t}.c" for op in KERNEL_OPS for t in ("s8", "s16", "s32", "f32")]
    assert not [n for n in stale if (KERNELS / n).exists()]  # the per-type copies are gone


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None, reason="arm-none-eabi-gcc not installed")
@pytest.mark.parametrize("cpu", [["-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16"], ["-mcpu=cortex-m55"]])
def test_kernels_cross_compile_warning_free(cpu, tmp_path):
    sources = [str(p) for p in _kernel_sources()]
    cmd = ["arm-none-eabi-gcc", *cpu, "-mthumb", "-mfloat-abi=hard", "-std=c11", "-O2", "-Wall", "-Wextra",
           "-Werror", "-I", str(KERNELS), "-I", str(ROOT / "firmware" / "include"), "-c", *sources]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
