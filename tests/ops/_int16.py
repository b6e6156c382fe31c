"""Shared pieces of the 16x8 (int16 activation) op tests: int16 inputs over the whole range with
their edges, and one check that the numpy reference and the portable C (host gcc) equal TFLM."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from mcuforge.frontend import load_tflite
from mcuforge.ir.evaluate import evaluate
from mcuforge.ir.ops._common import out_size

from devtools.tflite_writer import ModelWriter

from mcuforge.driver import Options, compile_model
from mcuforge.errors import UnsupportedError
from mcuforge.oracle import run_tflm
from mcuforge.verify import verify_host

EDGES16 = np.array([-32768, -32767, -1, 0, 1, 32766, 32767], dtype=np.int16)


def int16_values(rng: np.random.Generator, shape, lo: int = -32768, hi: int = 32767) -> np.ndarray:
    """Uniform over [lo, hi] with the int16 edges inside that range planted at the start."""
    x = rng.integers(lo, hi, shape, endpoint=True).astype(np.int16)
    flat = x.reshape(-1)
    edges = EDGES16[(EDGES16 >= lo) & (EDGES16 <= hi)]
    n = min(flat.size, edges.size)
    flat[:n] = edges[:n]
    return x


def all_int16() -> np.ndarray:
    return np.arange(-32768, 32768, dtype=np.int64).astype(np.int16)


def same_bytes(ours, theirs) -> list[str]:
    """The outputs that differ (dtype or bytes), with their first mismatching indices."""
    bad = []
    for k, (o, t) in enumerate(zip(ours, theirs)):
        o, t = np.asarray(o), np.asarray(t)
        if o.dtype != t.dtype or o.shape != t.shape:
            bad.append(f"output {k}: ours {o.dtype}{list(o.shape)}, TFLM {t.dtype}{list(t.shape)}")
        elif not np.array_equal(o.view(np.uint8), t.view(np.uint8)):
            idx = np.argwhere(o != t)[:5]
            bad.append(f"output {k}: {int(np.sum(o != t))} differ, first at {idx.tolist()}: "
                       f"ours {[o[tuple(i)] for i in idx]}, TFLM {[t[tuple(i)] for i in idx]}")
    return bad


def check_against_tflm(tmp_path: Path, blob: bytes, data: list[np.ndarray], targets=("c",), host: bool = True,
                       name: str = "m", dsp: bool = False) -> object:
    """The numpy reference and (with `host`) the generated C built with gcc -Werror equal TFLM byte
    for byte (`dsp`: the cmsis-nn kernels' DSP paths, emulated). Returns the compiled model."""
    path = tmp_path / f"{name}.tflite"
    path.write_bytes(blob)
    (theirs, _), = run_tflm(blob, [data])
    ours = evaluate(load_tflite(path), data)
    assert len(ours) == len(theirs)
    bad = same_bytes(ours, theirs)
    assert not bad, bad
    compiled = compile_model(path, Options(targets=tuple(targets)))
    if host:
        (res,) = verify_host(compiled, [data], isolate=False, dsp=dsp)
        assert res.ok, [str(m) for m in res.mismatches][:5]
    return compiled


# ---- 16x8 layers written with devtools/tflite_writer.py -------------------------------------------

def out_scale(x_scale: float, w_scales: np.ndarray, taps: int, spread: float = 1.0) -> float:
    """An output scale that puts a typical accumulator (uniform int16 x int8 over `taps` products)
    near `spread` times the int16 range, so the clamp is exercised."""
    typical = np.sqrt(taps) * 18918 * 73 * float(np.mean(w_scales)) * x_scale  # std of uniform int16 / int8
    return float(typical / (32767 * 0.5 * spread))


def bias_values(rng, dtype, n, x_scale, w_scales):
    """A bias as a converter writes it (real bias / (x_scale * w_scale)), sometimes large."""
    if dtype is None:
        return None
    real = rng.normal(0, 2.0, n)
    q = np.round(real / (x_scale * np.asarray(w_scales)))
    lim = 2**31 - 1 if dtype == "int32" else 2**40
    return np.clip(q, -lim, lim).astype(dtype)


def add_conv(w, rng, *, ic, oc, k, stride=(1, 1), dil=(1, 1), padding="SAME", hw=(7, 6), bias="int64", act="NONE",
             per_channel=True, zps=(0, 0), spread=1.0, depthwise=False, strong=False, scales=None, bias_data=None):
    """One CONV_2D (or DEPTHWISE_CONV_2D, oc = ic * multiplier) on its own input; returns (input
    tensor, output tensor, input data). `scales` = (input, weight, output) and `bias_data` pin what
    is drawn."""
    kh, kw = k
    x_s = float(rng.uniform(1e-4, 1e-3))
    n_w = oc
    w_s = rng.uniform(0.002, 0.02, n_w) if per_channel else np.full(n_w, rng.uniform(0.002, 0.02))
    shape = (1, kh, kw, oc) if depthwise else (oc, kh, kw, ic)
    W = (rng.choice([-127, 127], shape) if strong else rng.integers(-127, 128, shape)).astype(np.int8)
    taps = kh * kw * (1 if depthwise else ic)
    y_s = out_scale(x_s, w_s, taps, spread)
    if scales is not None:
        x_s, y_s = scales[0], scales[2]
        w_s = np.full(n_w, scales[1])
    x = w.tensor((1, *hw, ic), "int16", scale=x_s, zero_point=zps[0])
    wt = w.tensor(shape, "int8", data=W, scale=list(w_s) if per_channel else float(w_s[0]),
                  axis=3 if depthwise else 0)
    ins = [x, wt]
    b = bias_values(rng, bias, oc, x_s, w_s) if bias_data is None else np.asarray(bias_data, dtype=bias)
    if b is not None:
        ins.append(w.tensor((oc,), bias, data=b, scale=list(x_s * w_s), axis=0))
    oh = out_size(padding, hw[0], kh, stride[0], dil[0])
    ow = out_size(padding, hw[1], kw, stride[1], dil[1])
    y = w.tensor((1, oh, ow, oc), "int16", scale=y_s, zero_point=zps[1])
    opts = dict(Padding=padding, StrideH=stride[0], StrideW=stride[1], DilationHFactor=dil[0],
                DilationWFactor=dil[1], FusedActivationFunction=act)
    if depthwise:
        w.op("DEPTHWISE_CONV_2D", ins, [y], DepthMultiplier=oc // ic, **opts)
    else:
        w.op("CONV_2D", ins, [y], **opts)
    return x, y, int16_values(rng, (1, *hw, ic))


def build(cases, fn, seed: int):
    rng = np.random.default_rng(seed)
    w = ModelWriter()
    xs, ys, data = [], [], []
    for case in cases:
        x, y, d = fn(w, rng, **case)
        xs.append(x)
        ys.append(y)
        data.append(d)
    return w.finish(xs, ys), data


def add_fc(w, rng, *, depth, units, rows=1, bias="int64", act="NONE", per_channel=True, w_zp=0, zps=(0, 0),
           spread=1.0, keep_dims=False, scales=None, bias_data=None, strong=False):
    """One FULLY_CONNECTED; `scales` = (input, weight, output) and `bias_data` pin what is drawn."""
    x_s = float(rng.uniform(1e-4, 1e-3))
    w_s = rng.uniform(0.002, 0.02, units) if per_channel else np.full(units, rng.uniform(0.002, 0.02))
    W = (rng.choice([-127, 127], (units, depth)) if strong else rng.integers(-127, 128, (units, depth))).astype(np.int8)
    y_s = out_scale(x_s, w_s, depth, spread)
    if scales is not None:
        x_s, y_s = scales[0], scales[2]
        w_s = np.full(units, scales[1])
    in_shape = (rows, 2, depth) if keep_dims else (rows, depth)
    x = w.tensor(in_shape, "int16", scale=x_s, zero_point=zps[0])
    wt = w.tensor(W.shape, "int8", data=W, scale=list(w_s) if per_channel else float(w_s[0]),
                  zero_point=0 if per_channel else w_zp)
    ins = [x, wt]
    b = bias_values(rng, bias, units, x_s, w_s) if bias_data is None else np.asarray(bias_data, dtype=bias)
    if b is not None:
        ins.append(w.tensor((units,), bias, data=b, scale=list(x_s * w_s) if per_channel else float(x_s * w_s[0])))
    out_shape = (rows, 2, units) if keep_dims else (rows, units)
    y = w.tensor(out_shape, "int16", scale=y_s, zero_point=zps[1])
    w.op("FULLY_CONNECTED", ins, [y], FusedActivationFunction=act, KeepNumDims=keep_dims)
    return x, y, int16_values(rng, in_shape)


def add_tconv(w, rng, *, ic, oc, k, stride, hw, out_hw, padding="SAME", bias="int64", act="NONE",
              per_channel=True, zps=(0, 0), spread=1.0):
    x_s = float(rng.uniform(1e-4, 1e-3))
    w_s = rng.uniform(0.002, 0.02, oc) if per_channel else np.full(oc, rng.uniform(0.002, 0.02))
    W = rng.integers(-127, 128, (oc, *k, ic)).astype(np.int8)
    overlap = max(1, (k[0] // stride[0]) * (k[1] // stride[1]))
    y_s = out_scale(x_s, w_s, ic * overlap, spread)
    shape = w.tensor((4,), "int32", data=np.array([1, *out_hw, oc]))
    wt = w.tensor(W.shape, "int8", data=W, scale=list(w_s) if per_channel else float(w_s[0]), axis=0)
    x = w.tensor((1, *hw, ic), "int16", scale=x_s, zero_point=zps[0])
    ins = [shape, wt, x]
    b = bias_values(rng, bias, oc, x_s, w_s)
    if b is not None:
        ins.append(w.tensor((oc,), bias, data=b, scale=list(x_s * w_s), axis=0))
    y = w.tensor((1, *out_hw, oc), "int16", scale=y_s, zero_point=zps[1])
    w.op("TRANSPOSE_CONV", ins, [y], Padding=padding, StrideH=stride[0], StrideW=stride[1],
         FusedActivationFunction=act)
    return x, y, int16_values(rng, (1, *hw, ic))


def refusals(tmp_path: Path, blob: bytes) -> list[tuple[int, str]]:
    """(operator index, reason) of every refusal mcuforge reports for a model that must not load."""
    path = tmp_path / "bad.tflite"
    path.write_bytes(blob)
    try:
        load_tflite(path)
    except UnsupportedError as e:
        return [(i, why) for i, _, why in e.problems]
    raise AssertionError("the model loaded")


def kernels(compiled) -> set[str]:
    """The C functions a compiled model calls (views, which run no kernel, left out)."""
    return {b.kernel.function for b in compiled.program.bindings if not b.kernel.view}
def edge_scales(real: float) -> tuple[float, float, float]:
    """(input, weight, output) float32 scales whose effective multiplier, computed as TFLM does
    (double products of the float32 scales), is `real` to float32 precision."""
    x_s, w_s = 2.0 ** -12, 2.0 ** -7
    return x_s, w_s, float(np.float32(x_s * w_s / real))
