"""int16 AVERAGE_POOL_2D, MAX_POOL_2D, MEAN, PAD / PADV2, CONCATENATION, RESHAPE, STRIDED_SLICE,
TRANSPOSE and QUANTIZE / DEQUANTIZE between float32, int8, int16 and int32 against the TFLite Micro
interpreter: the numpy reference and the portable C kernels (host gcc), byte for byte; and the
rules (int16 CONCATENATION zero points, the QUANTIZE pairs TFLM does not implement)."""

from __future__ import annotations

import numpy as np
from _int16 import all_int16, check_against_tflm, int16_values, kernels, refusals

from devtools.tflite_writer import ModelWriter


def pool(w, rng, op, *, hw, ch, k, stride, padding="SAME", act="NONE", q=(1e-3, 0)):
    x = w.tensor((1, *hw, ch), "int16", scale=q[0], zero_point=q[1])
    from mcuforge.ir.ops._common import out_size
    oh, ow = out_size(padding, hw[0], k[0], stride[0]), out_size(padding, hw[1], k[1], stride[1])
    y = w.tensor((1, oh, ow, ch), "int16", scale=q[0], zero_point=q[1])
    w.op(op, [x], [y], Padding=padding, StrideH=stride[0], StrideW=stride[1], FilterHeight=k[0],
         FilterWidth=k[1], FusedActivationFunction=act)
    return x, y, int16_values(rng, (1, *hw, ch))


def mean(w, rng, *, shape, axes, keep=True, q_in=(1e-3, 0), q_out=(1e-3, 0)):
    x = w.tensor(shape, "int16", scale=q_in[0], zero_point=q_in[1])
    a = w.tensor((len(axes),), "int32", data=np.array(axes))
    norm = sorted({ax % len(shape) for ax in axes})
    out = tuple(1 if i in norm else d for i, d in enumerate(shape)) if keep else \
        tuple(d for i, d in enumerate(shape) if i not in norm)
    y = w.tensor(out, "int16", scale=q_out[0], zero_point=q_out[1])
    w.op("MEAN", [x, a], [y], KeepDims=keep)
    return x, y, int16_values(rng, shape)


def build(specs, seed):
    rng = np.random.default_rng(seed)
    w = ModelWriter()
    ins, outs, data = [], [], []
    for fn, args, kwargs in specs:
        x, y, d = fn(w, rng, *args, **kwargs)
        ins.append(x)
        outs.append(y)
        data.append(d)
    return w.finish(ins, outs), data


POOLS = [
    (pool, ("AVERAGE_POOL_2D",), dict(hw=(7, 6), ch=3, k=(3, 3), stride=(2, 2))),
    (pool, ("AVERAGE_POOL_2D",), dict(hw=(5, 5), ch=2, k=(5, 5), stride=(1, 1), padding="VALID")),
    (pool, ("AVERAGE_POOL_2D",), dict(hw=(6, 8), ch=4, k=(2, 3), stride=(1, 2), act="RELU6", q=(1e-4, 5))),
    (pool, ("AVERAGE_POOL_2D",), dict(hw=(25, 5), ch=1, k=(25, 5), stride=(1, 1), padding="VALID")),  # global
    (pool, ("MAX_POOL_2D",), dict(hw=(7, 6), ch=3, k=(3, 3), stride=(2, 2))),
    (pool, ("MAX_POOL_2D",), dict(hw=(4, 9), ch=5, k=(2, 4), stride=(2, 3), padding="VALID", act="RELU")),
    (pool, ("MAX_POOL_2D",), dict(hw=(6, 6), ch=2, k=(3, 3), stride=(1, 1), act="RELU_N1_TO_1", q=(1e-4, -7))),
    (mean, (), dict(shape=(1, 5, 7, 3), axes=[1, 2])),
    (mean, (), dict(shape=(2, 6, 4), axes=[-1], keep=False, q_in=(1e-3, 11), q_out=(3e-4, -5))),
    (mean, (), dict(shape=(3, 4, 5, 6), axes=[0, 2], q_in=(2e-3, 0), q_out=(1e-3, 0))),
    (mean, (), dict(shape=(1, 300, 2), axes=[1], keep=False, q_in=(1e-3, 0), q_out=(9e-5, 0))),  # clamps
]


def test_pools_and_mean(tmp_path):
    compiled = check_against_tflm(tmp_path, *build(POOLS, 1))
    assert kernels(compiled) == {
        "mcu_average_pool_2d_s16", "mcu_max_pool_2d_s16", "mcu_mean_s16"}


def data_movement(w, rng, op, *, shape, q=(1e-3, 0)):
    """One data-movement op on an int16 tensor of `shape`."""
    x = w.tensor(shape, "int16", scale=q[0], zero_point=q[1])
    if op == "PAD":
        pads = np.array([[0, 0], [1, 2], [3, 0], [0, 1]][:len(shape)])
        p = w.tensor(pads.shape, "int32", data=pads)
        y = w.tensor(tuple(d + a + b for d, (a, b) in zip(shape, pads)), "int16", scale=q[0], zero_point=q[1])
        w.op("PAD", [x, p], [y])
    elif op == "PADV2":
        pads = np.array([[1, 1]] * len(shape))
        p = w.tensor(pads.shape, "int32", data=pads)
        cv = w.tensor((1,), "int16", data=np.array([-12345]), scale=q[0] * 2, zero_point=0)
        y = w.tensor(tuple(d + 2 for d in shape), "int16", scale=q[0], zero_point=q[1])
        w.op("PADV2", [x, p, cv], [y])
    elif op == "STRIDED_SLICE":
        n = len(shape)
        begin = w.tensor((n,), "int32", data=np.array([0] + [1] * (n - 1)))
        end = w.tensor((n,), "int32", data=np.array(shape))
        strides = w.tensor((n,), "int32", data=np.array([1] + [2] * (n - 1)))
        out = (shape[0],) + tuple(len(range(1, d, 2)) for d in shape[1:])
        y = w.tensor(out, "int16", scale=q[0], zero_point=q[1])
        w.op("STRIDED_SLICE", [x, begin, end, strides], [y])
    elif op == "TRANSPOSE":
        perm = np.arange(len(shape))[::-1].copy()
        pt = w.tensor((len(shape),), "int32", data=perm)
        y = w.tensor(tuple(shape[i] for i in perm), "int16", scale=q[0], zero_point=q[1])
        w.op("TRANSPOSE", [x, pt], [y])
    elif op == "RESHAPE":
        new = (int(np.prod(shape)) // shape[-1], shape[-1])
        s = w.tensor((2,), "int32", data=np.array(new))
        y = w.tensor(new, "int16", scale=q[0], zero_point=q[1])
        w.op("RESHAPE", [x, s], [y], NewShape=list(new))
    return x, y, int16_values(rng, shape)


def concat(w, rng, *, shapes, axis, scales):
    xs = [w.tensor(s, "int16", scale=sc) for s, sc in zip(shapes, scales)]
    out = list(shapes[0])
    out[axis] = sum(s[axis] for s in shapes)
    y = w.tensor(tuple(out), "int16", scale=scales[0])
    w.op("CONCATENATION", xs, [y], Axis=axis)
    return xs, y, [int16_values(rng, s) for s in shapes]


def test_data_movement(tmp_path):
    rng = np.random.default_rng(2)
    w = ModelWriter()
    ins, outs, data = [], [], []
    for op, shape, q in [("PAD", (1, 4, 5, 3), (1e-3, 0)), ("PAD", (2, 3), (1e-3, 9)),  # int16 PAD fills with 0
                         ("PADV2", (2, 3, 4), (1e-3, 0)), ("STRIDED_SLICE", (2, 7, 6), (1e-3, 0)),
                         ("TRANSPOSE", (2, 3, 4, 5), (1e-3, 0)), ("RESHAPE", (2, 3, 4), (1e-3, 0))]:
        x, y, d = data_movement(w, rng, op, shape=shape, q=q)
        ins.append(x)
        outs.append(y)
        data.append(d)
    for shapes, axis, scales in [(((1, 2, 3), (1, 4, 3)), 1, (1e-3, 1e-3)), (((2, 3), (2, 1), (2, 5)), -1,
                                                                                (1e-3, 2e-3, 5e-4))]:
        xs, y, ds = concat(w, rng, shapes=shapes, axis=axis, scales=scales)
        ins += xs
        outs.append(y)
        data += ds
    check_against_tflm(tmp_path, w.finish(ins, outs), data)


# (input dtype, output dtype, input (scale, zero point), output (scale, zero point))
QUANTIZE_CASES = [
    ("float32", "int16", None, (1e-3, 0)),
    ("float32", "int16", None, (3e-4, 17)),
    ("int16", "int8", (1e-3, 0), (0.05, -3)),
    ("int16", "int16", (1e-3, 5), (2.5e-4, -9)),
    ("int16", "int16", (1e-3, 0), (1e-3 * 2 ** 20, 0)),  # everything to (almost) zero
    ("int16", "int32", (1e-3, 0), (1e-5, 7)),
    ("int8", "int16", (0.02, 4), (1e-4, 0)),
    ("int32", "int16", (1e-6, 0), (1e-3, 0)),
    ("int32", "int8", (1e-6, 3), (0.01, -5)),  # x - 3 wraps at the bottom of int32
    ("int32", "int16", (1e-6, -2), (1e-6 * 0.75, 30000)),  # + 30000 wraps at the top
]


def quantize_data(rng, dtype):
    if dtype == "int16":
        return all_int16()
    if dtype == "int8":
        return np.arange(-128, 128, dtype=np.int8)
    if dtype == "int32":
        info = np.iinfo(np.int32)
        edges = np.array([info.min, info.min + 1, info.min + 2, -1, 0, 1, info.max - 1, info.max], np.int64)
        return np.concatenate([edges, rng.integers(info.min, info.max, 4000, endpoint=True)]).astype(np.int32)
    x = rng.normal(0, 20, 4000).astype(np.float32)
    # halves, signed zeros, saturation (quotients beyond 2^31 are undefined in TFLM: see quantize.py)
    x[:8] = [0.0, -0.0, 0.0005, -0.0005, 0.0015, 500.0, -500.0, 32.7675]
    return x


def test_quantize_dequantize(tmp_path):
    rng = np.random.default_rng(3)
    w = ModelWriter()
    ins, outs, data = [], [], []
    for src, dst, qi, qo in QUANTIZE_CASES:
        d = quantize_data(rng, src)
        x = w.tensor(d.shape, src, **({} if qi is None else {"scale": qi[0], "zero_point": qi[1]}))
        y = w.tensor(d.shape, dst, scale=qo[0], zero_point=qo[1])
        w.op("QUANTIZE", [x], [y])
        ins.append(x)
        outs.append(y)
        data.append(d)
    for q in ((1e-3, 0), (7e-5, -123)):
        x = w.tensor((65536,), "int16", scale=q[0], zero_point=q[1])
        y = w.tensor((65536,), "float32")
        w.op("DEQUANTIZE", [x], [y])
        ins.append(x)
        outs.append(y)
        data.append(all_int16())
    compiled = check_against_tflm(tmp_path, w.finish(ins, outs), data)
    fns = kernels(compiled)
    assert {"mcu_quantize_s16_s32", "mcu_quantize_s32", "mcu_quantize_s32_s16", "mcu_dequantize_s16"} <= fns, fns


def test_rules(tmp_path):
    w = ModelWriter()
    ins, outs = [], []
    a = w.tensor((1, 2), "int16", scale=1e-3, zero_point=0)
    b = w.tensor((1, 2), "int16", scale=1e-3, zero_point=3)  # TFLM refuses any int16 zero point
    y = w.tensor((1, 4), "int16", scale=1e-3)
    w.op("CONCATENATION", [a, b], [y], Axis=1)
    ins += [a, b]
    outs.append(y)
    x = w.tensor((4,), "int32", scale=1e-3)
    y2 = w.tensor((4,), "int32", scale=2e-3)
    w.op("QUANTIZE", [x], [y2])  # TFLM has no int32 -> int32 QUANTIZE
    ins.append(x)
    outs.append(y2)
    why = [r for _, r in refusals(tmp_path, w.finish(ins, outs))]
    assert len(why) == 2, why
    assert "must have zero point 0" in why[0] and "input 1 has zero point 3" in why[0]
    assert "int32 to int32" in why[1]
