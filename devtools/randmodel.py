"""Random valid int8 models (seeded), for differential testing against TFLite Micro.

A model is described by a *spec*, plain JSON data:

    {"seed": 7, "input": [1, 9, 9, 4], "input_q": [0.04, -3],
     "ops": [{"op": "conv", "src": 0, "oc": 4, "k": [3, 3], "pad": "SAME", ...},
             {"op": "binary", "kind": "add", "src": 1, "src2": 0}, ...]}

Value 0 is the graph input, value k + 1 the output of op k; `src`/`src2`/`srcs` name values. `build`
turns a spec into .tflite bytes with `devtools.tflite_writer`. It adapts every op to the shapes it
actually meets and skips an op it cannot apply (its value then stands for its first source), so
every spec -- also one a shrinker has cut down -- gives a valid model.

Quantization is calibrated as a post-training quantizer would: a few random int8 inputs flow through
the graph in floating point (weights and activations fake-quantized), and each output's scale and
zero point are taken from the observed range, widened or narrowed by a per-op jitter (so some values
saturate, but not all). Weights are int8 with realistic scales per tensor or per channel; biases are
int32 at the input scale times the weight scale, with magnitudes like the accumulator's.

Graph outputs are every value no op reads (branches that are not merged become extra outputs). An
op whose output is the same for two calibration inputs is skipped too (a vacuous, saturated branch).

Sections: the builder (`build`, `GraphBuilder`); random specs (`random_spec`); a MobileNetV2 spec for
the compile-limit test and benchmark (`mobilenet_v2_spec`); the differential run (`check_models`:
compile, batched host C build, TFLM in one child process, byte comparison); shrinking a failing spec
and keeping it as a fixture (`shrink_failure`, `save_fixture`). Command line: tools/random_models.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from devtools.tflite_writer import ModelWriter
from mcuforge.oracle import run_tflm_models

N_SAMPLES = 6
MAX_ELEMS = 12288  # per tensor: keeps the numpy calibration, TFLM and the C fast


@dataclass
class Value:
    shape: tuple[int, ...]
    q: tuple[float, int]  # (scale, zero point)
    x: np.ndarray  # float samples, shape (N_SAMPLES, *shape), on the quantization grid
    tensor: int


def _fq(x: np.ndarray, q: tuple[float, int]) -> np.ndarray:
    s, zp = q
    return (np.clip(np.round(x / s) + zp, -128, 127) - zp) * s


def _calibrate(x: np.ndarray, jitter: float, zshift: int) -> tuple[float, int]:
    """Scale and zero point covering the samples' range (always including 0), times `jitter`."""
    lo, hi = min(float(np.min(x)), 0.0), max(float(np.max(x)), 0.0)
    if hi - lo < 1e-6:
        hi = lo + 1e-3
    scale = (hi - lo) / 255.0 * jitter
    zp = int(np.clip(round(-128 - lo / scale) + zshift, -128, 127))
    return float(np.float32(scale)), zp


def _act(x: np.ndarray, act: str) -> np.ndarray:
    if act == "RELU":
        return np.maximum(x, 0)
    if act == "RELU6":
        return np.clip(x, 0, 6)
    if act == "RELU_N1_TO_1":
        return np.clip(x, -1, 1)
    return x


def _window(size: int, k: int, stride: int, dil: int, padding: str) -> tuple[int, int] | None:
    """(output size, padding before) as TFLite computes them, or None when VALID does not fit."""
    eff = (k - 1) * dil + 1
    if padding == "VALID":
        if eff > size:
            return None
        return (size - eff) // stride + 1, 0
    out = -(-size // stride)
    total = max((out - 1) * stride + eff - size, 0)
    return out, total // 2


def _patches(x: np.ndarray, kh: int, kw: int, sh: int, sw: int, dh: int, dw: int, padding: str,
             fill: float = 0.0):
    """Yield (i, j, patch) for every kernel tap: patch[s, n, oh, ow, c] is the input under tap (i, j)."""
    _, _, H, W, _ = x.shape
    gh, gw = _window(H, kh, sh, dh, padding), _window(W, kw, sw, dw, padding)
    if gh is None or gw is None:
        return None
    (oh, ph), (ow, pw) = gh, gw
    need_h, need_w = (oh - 1) * sh + (kh - 1) * dh + 1, (ow - 1) * sw + (kw - 1) * dw + 1
    xp = np.full(x.shape[:2] + (max(need_h, ph + H), max(need_w, pw + W), x.shape[4]), fill, dtype=np.float64)
    xp[:, :, ph:ph + H, pw:pw + W, :] = x
    out = []
    for i in range(kh):
        for j in range(kw):
            out.append((i, j, xp[:, :, i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw, :]))
    return out


class GraphBuilder:
    """Applies spec ops one by one to a ModelWriter, with the float calibration alongside."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.w = ModelWriter("mcuforge.randmodel")  # the description the kept fixtures carry
        self.rng = np.random.default_rng(spec.get("seed", 0))
        self.samples = int(spec.get("samples", N_SAMPLES))
        self.max_elems = int(spec.get("max_elems", MAX_ELEMS))
        shape = tuple(int(d) for d in spec["input"])
        q = (float(np.float32(spec["input_q"][0])), int(spec["input_q"][1]))
        ints = self.rng.integers(-128, 127, size=(self.samples, *shape), endpoint=True)
        t = self.w.tensor(shape, scale=q[0], zero_point=q[1], name="input")
        self.values = [Value(shape, q, (ints - q[1]) * q[0], t)]
        self.read: set[int] = set()  # values some applied op reads
        self.applied: list[bool] = []

    # ---- helpers ---------------------------------------------------------------------------------

    def _out(self, op: dict, x: np.ndarray, shape: tuple[int, ...], q: tuple[float, int] | None = None,
             pre: np.ndarray | None = None) -> Value:
        """A new activation tensor for samples `x`; quantization calibrated unless `q` is given
        (`pre`: calibrate on these samples instead, e.g. before a fused activation so it clamps)."""
        if q is None:
            q = _calibrate(x if pre is None else pre, float(op.get("qj", 1.0)), int(op.get("zj", 0)))
        t = self.w.tensor(shape, scale=q[0], zero_point=q[1], name=f"v{len(self.values)}_{op['op']}")
        return Value(shape, q, _fq(x, q), t)

    def _weights(self, op: dict, shape: tuple[int, ...], axis: int, fan_in: int):
        """int8 weights, their scales (per channel along `axis` or one) and the float weights."""
        rng = np.random.default_rng(op.get("wseed", 0))
        n = shape[axis]
        wi = np.clip(np.round(rng.normal(0, 40, size=shape)), -127, 127).astype(np.int8)
        base = 1.0 / (40.0 * math.sqrt(max(fan_in, 1)))
        if op.get("per_channel", False):
            scales = (base * rng.uniform(0.4, 2.5, size=n)).astype(np.float32)
        else:
            scales = np.full(n, np.float32(base * rng.uniform(0.5, 2.0)), dtype=np.float32)
        bshape = [1] * len(shape)
        bshape[axis] = n
        wf = wi.astype(np.float64) * scales.astype(np.float64).reshape(bshape)
        return wi, scales, wf

    def _bias(self, op: dict, acc: np.ndarray, s_in: float, scales: np.ndarray):
        """int32 bias at scale s_in * s_w, sized like the accumulator's spread; (tensor data, float)."""
        rng = np.random.default_rng(op.get("wseed", 0) + 1)
        n = scales.size
        spread = float(np.std(acc)) or 1.0
        real = rng.normal(0, 0.5 * spread, size=n) * float(op.get("bias", 1.0))
        bscale = (np.float64(s_in) * scales.astype(np.float64)).astype(np.float32)
        bi = np.clip(np.round(real / bscale), -(2**31), 2**31 - 1).astype(np.int64)
        return bi.astype(np.int32), bscale, bi * bscale.astype(np.float64)

    def _weighted(self, op: dict, name: str, v: Value, acc: np.ndarray, wi, scales, axis: int, bias_shape,
                  out_shape, options: dict[str, Any], per_channel: bool) -> Value:
        act = op.get("act", "NONE")
        bi, bscale, bf = self._bias(op, acc, v.q[0], scales)
        y = acc + bf
        pre = y if op.get("clamp_calib") else None
        out = self._out(op, _act(y, act), out_shape, pre=pre)
        sc = scales if per_channel else scales[:1]
        wt = self.w.tensor(wi.shape, data=wi, scale=list(sc), zero_point=[0] * len(sc), axis=axis)
        bsc = bscale if per_channel else bscale[:1]
        bt = self.w.tensor(bias_shape, dtype="int32", data=bi, scale=list(bsc), zero_point=[0] * len(bsc), axis=0)
        self.w.op(name, [v.tensor, wt, bt], [out.tensor], FusedActivationFunction=act, **options)
        return out

    # ---- ops -------------------------------------------------------------------------------------

    def apply(self, op: dict) -> bool:
        srcs = [op["src"]] + ([op["src2"]] if "src2" in op else []) + list(op.get("srcs", []))
        if any(not (0 <= s < len(self.values)) for s in srcs):
            ok = False
        else:
            n_tensors, n_ops = len(self.w.tensors), len(self.w.operators)
            try:
                new = getattr(self, "_op_" + op["op"])(op, [self.values[s] for s in srcs])
            except _Skip:
                new = None
            ok = new is not None and int(np.prod(new.shape)) <= self.max_elems and not _constant(new)
            if not ok:  # undo whatever it wrote
                del self.w.tensors[n_tensors:], self.w.operators[n_ops:]
        if ok:
            self.read.update(srcs)
            self.values.append(new)
        else:
            first = self.values[srcs[0]] if srcs and 0 <= srcs[0] < len(self.values) else self.values[-1]
            self.values.append(first)
        self.applied.append(ok)
        return ok

    def _op_conv(self, op, vs):
        (v,) = vs
        if len(v.shape) != 4:
            raise _Skip
        kh, kw = op["k"]
        sh, sw = op.get("stride", [1, 1])
        dh, dw = op.get("dil", [1, 1])
        ic, oc = v.shape[3], int(op["oc"])
        taps = _patches(v.x, kh, kw, sh, sw, dh, dw, op["pad"])
        if taps is None:
            raise _Skip
        wi, scales, wf = self._weights(op, (oc, kh, kw, ic), 0, kh * kw * ic)
        acc = sum(np.einsum("snhwc,oc->snhwo", p, wf[:, i, j, :]) for i, j, p in taps)
        opts = dict(Padding=op["pad"], StrideW=sw, StrideH=sh, DilationWFactor=dw, DilationHFactor=dh)
        return self._weighted(op, "CONV_2D", v, acc, wi, scales, 0, (oc,), acc.shape[1:], opts,
                              op.get("per_channel", False))

    def _op_dwconv(self, op, vs):
        (v,) = vs
        if len(v.shape) != 4:
            raise _Skip
        kh, kw = op["k"]
        sh, sw = op.get("stride", [1, 1])
        dh, dw = op.get("dil", [1, 1])
        m = int(op.get("mult", 1))
        c = v.shape[3] * m
        taps = _patches(v.x, kh, kw, sh, sw, dh, dw, op["pad"])
        if taps is None:
            raise _Skip
        wi, scales, wf = self._weights(op, (1, kh, kw, c), 3, kh * kw)
        acc = sum(np.repeat(p, m, axis=-1) * wf[0, i, j, :] for i, j, p in taps)
        opts = dict(Padding=op["pad"], StrideW=sw, StrideH=sh, DilationWFactor=dw, DilationHFactor=dh,
                    DepthMultiplier=m)
        return self._weighted(op, "DEPTHWISE_CONV_2D", v, acc, wi, scales, 3, (c,), acc.shape[1:], opts,
                              op.get("per_channel", False))

    def _op_fc(self, op, vs):
        (v,) = vs
        units = int(op["units"])
        depth = v.shape[-1] if op.get("rows", False) else int(np.prod(v.shape))
        rows = v.x.reshape(self.samples, -1, depth)
        wi, scales, wf = self._weights(op, (units, depth), 0, depth)
        acc = np.einsum("srd,ud->sru", rows, wf)
        per_channel = op.get("per_channel", False)
        return self._weighted(op, "FULLY_CONNECTED", v, acc, wi, scales, 0, (units,), acc.shape[1:],
                              dict(KeepNumDims=False), per_channel)

    def _op_pool(self, op, vs):
        (v,) = vs
        if len(v.shape) != 4:
            raise _Skip
        kh, kw = op["k"]
        sh, sw = op.get("stride", [1, 1])
        taps = _patches(v.x, kh, kw, sh, sw, 1, 1, op["pad"], fill=np.nan)
        if taps is None:
            raise _Skip
        stack = np.stack([p for _, _, p in taps])
        y = np.nanmax(stack, axis=0) if op["kind"] == "max" else np.nanmean(stack, axis=0)
        act = op.get("act", "NONE")
        out = self._out(op, _act(y, act), y.shape[1:], q=v.q)
        self.w.op("MAX_POOL_2D" if op["kind"] == "max" else "AVERAGE_POOL_2D", [v.tensor], [out.tensor],
                  Padding=op["pad"], StrideW=sw, StrideH=sh, FilterWidth=kw, FilterHeight=kh,
                  FusedActivationFunction=act)
        return out

    def _op_binary(self, op, vs):
        a, b = vs
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise _Skip from None
        if len(shape) > 4:
            raise _Skip
        ax = a.x.reshape((self.samples,) + (1,) * (len(shape) - len(a.shape)) + a.shape)
        bx = b.x.reshape((self.samples,) + (1,) * (len(shape) - len(b.shape)) + b.shape)
        y = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op["kind"]](ax, bx)
        act = op.get("act", "NONE")
        pre = y if op.get("clamp_calib") else None
        out = self._out(op, _act(y, act), tuple(shape), pre=pre)
        self.w.op(op["kind"].upper(), [a.tensor, b.tensor], [out.tensor], FusedActivationFunction=act)
        return out

    def _op_concat(self, op, vs):
        rank = len(vs[0].shape)
        if any(len(v.shape) != rank or v.shape[:-1] != vs[0].shape[:-1] for v in vs) or len(vs) > 10:
            raise _Skip
        x = np.concatenate([v.x for v in vs], axis=-1)
        q = _calibrate(x, float(op.get("qj", 1.0)), int(op.get("zj", 0)))
        if op.get("share_q", False):
            q = vs[0].q
        ins = []
        for v in vs:  # TFLM's concatenation does not rescale: requantize inputs to the output's quantization
            if v.q == q:
                ins.append(v.tensor)
            else:
                r = self._out({"op": "requant_in"}, v.x, v.shape, q=q)
                self.w.op("QUANTIZE", [v.tensor], [r.tensor])
                ins.append(r.tensor)
        shape = vs[0].shape[:-1] + (sum(v.shape[-1] for v in vs),)
        out = self._out(op, x, shape, q=q)
        self.w.op("CONCATENATION", ins, [out.tensor], Axis=rank - 1, FusedActivationFunction="NONE")
        return out

    def _op_reshape(self, op, vs):
        (v,) = vs
        n = int(np.prod(v.shape))
        if op.get("mode") == "rows" and len(v.shape) == 4:
            shape = (v.shape[0], v.shape[1] * v.shape[2], v.shape[3])
        elif op.get("mode") == "image" and len(v.shape) == 2 and v.shape[1] % 4 == 0:
            shape = (v.shape[0], 2, v.shape[1] // 4, 2)
        else:
            shape = (v.shape[0], n // v.shape[0])
        out = self._out(op, v.x.reshape((self.samples,) + shape), shape, q=v.q)
        shape_t = self.w.tensor((len(shape),), dtype="int32", data=np.asarray(shape, dtype=np.int32))
        self.w.op("RESHAPE", [v.tensor, shape_t], [out.tensor], NewShape=list(shape))
        return out

    def _op_pad(self, op, vs):
        (v,) = vs
        if len(v.shape) != 4:
            raise _Skip
        pads = np.zeros((4, 2), dtype=np.int32)
        pads[1:4] = np.asarray(op["pads"], dtype=np.int32).reshape(3, 2)
        y = np.pad(v.x, [(0, 0)] + [tuple(p) for p in pads])
        out = self._out(op, y, y.shape[1:], q=v.q)
        pt = self.w.tensor((4, 2), dtype="int32", data=pads)
        self.w.op("PAD", [v.tensor, pt], [out.tensor])
        return out

    def _op_mean(self, op, vs):
        (v,) = vs
        axes = [a for a in op["axes"] if a < len(v.shape)]
        if not axes or len(v.shape) < 2:
            raise _Skip
        keep = bool(op.get("keep", True))
        y = v.x.mean(axis=tuple(a + 1 for a in axes), keepdims=keep)
        q = v.q if op.get("same_q", False) else None
        out = self._out(op, y, y.shape[1:], q=q)
        at = self.w.tensor((len(axes),), dtype="int32", data=np.asarray(axes, dtype=np.int32))
        self.w.op("MEAN", [v.tensor, at], [out.tensor], KeepDims=keep)
        return out

    def _op_softmax(self, op, vs):
        (v,) = vs
        if len(v.shape) < 1 or not 2 <= v.shape[-1] < 512:
            raise _Skip
        beta = float(op.get("beta", 1.0))
        z = v.x * beta
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        y = e / e.sum(axis=-1, keepdims=True)
        out = self._out(op, y, v.shape, q=(1 / 256, -128))
        self.w.op("SOFTMAX", [v.tensor], [out.tensor], Beta=beta)
        return out

    def _op_unary(self, op, vs):
        (v,) = vs
        kind = op["kind"]
        if kind == "logistic":
            y, q = 1 / (1 + np.exp(-v.x)), (1 / 256, -128)
        elif kind == "tanh":
            y, q = np.tanh(v.x), (1 / 128, 0)
        elif kind == "relu":
            y, q = np.maximum(v.x, 0), (v.q if op.get("same_q", True) else None)
        elif kind == "relu6":
            y, q = np.clip(v.x, 0, 6), v.q  # TFLM clamps in the input's quantized domain
        elif kind == "leaky_relu":
            y, q = np.where(v.x >= 0, v.x, float(op.get("alpha", 0.2)) * v.x), None
        elif kind == "hard_swish":
            y, q = v.x * np.clip(v.x + 3, 0, 6) / 6, None
        else:  # requantize (int8 -> int8 QUANTIZE)
            y, q = v.x, None
        out = self._out(op, y, v.shape, q=q)
        if kind == "hard_swish" and not v.q[0] < 128 * out.q[0]:
            raise _Skip  # TFLM's output multiplier exponent must be <= 0
        name = {"logistic": "LOGISTIC", "tanh": "TANH", "relu": "RELU", "relu6": "RELU6", "leaky_relu": "LEAKY_RELU",
                "hard_swish": "HARD_SWISH"}.get(kind, "QUANTIZE")
        opts = {"Alpha": float(op.get("alpha", 0.2))} if kind == "leaky_relu" else {}
        self.w.op(name, [v.tensor], [out.tensor], **opts)
        return out

    def _op_transpose(self, op, vs):
        (v,) = vs
        perm = [p for p in op["perm"] if p < len(v.shape)]
        if len(perm) != len(v.shape) or not 1 <= len(perm) <= 5:
            raise _Skip
        y = np.transpose(v.x, [0] + [p + 1 for p in perm])
        out = self._out(op, y, y.shape[1:], q=v.q)
        pt = self.w.tensor((len(perm),), dtype="int32", data=np.asarray(perm, dtype=np.int32))
        self.w.op("TRANSPOSE", [v.tensor, pt], [out.tensor])
        return out

    def _op_slice(self, op, vs):
        """STRIDED_SLICE with positive strides; begin/end given as fractions of each axis."""
        (v,) = vs
        if not 1 <= len(v.shape) <= 4:
            raise _Skip
        begin, end, strides = [], [], []
        for d, (fb, fe, st) in zip(v.shape, op["axes"] + [[0.0, 1.0, 1]] * (len(v.shape) - len(op["axes"]))):
            b = min(int(fb * d), d - 1)
            begin.append(b)
            end.append(max(int(math.ceil(fe * d)), b + 1))
            strides.append(int(st))
        y = v.x[(slice(None),) + tuple(slice(b, e, st) for b, e, st in zip(begin, end, strides))]
        out = self._out(op, y, y.shape[1:], q=v.q)
        ts = [self.w.tensor((len(begin),), dtype="int32", data=np.asarray(a, dtype=np.int32))
              for a in (begin, end, strides)]
        self.w.op("STRIDED_SLICE", [v.tensor, *ts], [out.tensor], BeginMask=0, EndMask=0, EllipsisMask=0,
                  NewAxisMask=0, ShrinkAxisMask=0)
        return out

    def _op_resize(self, op, vs):
        from mcuforge.ir.ops.resize_nearest_neighbor import source_index

        (v,) = vs
        if len(v.shape) != 4:
            raise _Skip
        _, h, w, _ = v.shape
        oh, ow = max(1, int(round(h * op["scale"][0]))), max(1, int(round(w * op["scale"][1])))
        ac, hp = bool(op.get("align_corners", False)), bool(op.get("half_pixel_centers", False))
        if ac and hp:
            raise _Skip  # TFLite rejects the combination
        y = v.x[:, :, source_index(h, oh, ac, hp)][:, :, :, source_index(w, ow, ac, hp)]
        out = self._out(op, y, y.shape[1:], q=v.q)
        st = self.w.tensor((2,), dtype="int32", data=np.asarray([oh, ow], dtype=np.int32))
        self.w.op("RESIZE_NEAREST_NEIGHBOR", [v.tensor, st], [out.tensor], AlignCorners=ac, HalfPixelCenters=hp)
        return out

    # ---- the model -------------------------------------------------------------------------------

    def finish(self) -> bytes:
        outputs = [v.tensor for k, v in enumerate(self.values)
                   if k > 0 and k not in self.read and self.applied[k - 1]]
        if not outputs:  # nothing applied: the identity would have no operator; add a requantize
            v = self.values[0]
            out = self._out({"op": "requant", "qj": 1.0}, v.x, v.shape, q=(v.q[0] * 1.5, v.q[1]))
            self.w.op("QUANTIZE", [v.tensor], [out.tensor])
            outputs = [out.tensor]
        # each value is one tensor; a skipped op's alias repeats its source's tensor: outputs unique
        return self.w.finish([self.values[0].tensor], list(dict.fromkeys(outputs)))


def _constant(v: Value) -> bool:
    """Two calibration inputs give the same value: a (nearly) vacuous branch, e.g. softmax over one
    element or a chain that saturates, whose output would test little."""
    flat = v.x.reshape(v.x.shape[0], -1)
    return len({row.tobytes() for row in flat}) < v.x.shape[0]


class _Skip(Exception):
    """The op does not apply to the shapes it meets."""


def build(spec: dict[str, Any]) -> bytes:
    """The .tflite bytes of a spec (deterministic)."""
    g = GraphBuilder(spec)
    for op in spec["ops"]:
        g.apply(op)
    return g.finish()


# ---- random specs ----------------------------------------------------------------------------------

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


# ---- differential run: compile, host C, TFLM ------------------------------------------------------

@dataclass
class Outcome:
    """What happened to one model: ok, or the first problem in one line (`stage`: compile, tflm,
    host, mismatch, degenerate)."""

    name: str
    stage: str = "ok"
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.stage == "ok"

    def __str__(self) -> str:
        return f"{self.name}: {self.stage}" + (f": {self.detail}" if self.detail else "")


SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"]


def run_host_batch(compiled: list[Any], input_sets: list[list[list[np.ndarray]]], work: Path,
                   sanitize: bool = False, dsp: bool = False):
    """Emit every compiled model with its own prefix and run them all in one host executable
    (mcuforge.host: kernels compiled once, cached beside `work`); the outputs per model and input
    set (or raise). With `sanitize`, everything is built with AddressSanitizer and UBSan: a kernel
    reading or writing outside its buffers, or past its model's arena, stops the run. With `dsp`, the
    cmsis-nn kernels take their DSP paths, the instructions emulated in C (-DMCU_CMSIS_DSP_EMULATE)."""
    from mcuforge.codegen.emit import emit

    from mcuforge.host import DSP_EMULATE, build_host, run_host_models

    extra = (*(SANITIZE if sanitize else ()), *((DSP_EMULATE,) if dsp else ()))
    work.mkdir(parents=True, exist_ok=True)
    dirs = [emit(c, work / f"r{k}", f"r{k}") for k, c in enumerate(compiled)]
    exe = build_host(dirs, work / "batch", extra_cflags=extra, cache_dir=work.parent / "kernel_objs")
    types = [[c.program.buffers[n].type for n in c.program.outputs] for c in compiled]
    return run_host_models(exe, input_sets, types)


def degenerate(outputs_per_set: list[list[np.ndarray]]) -> str | None:
    """Why TFLM's outputs make a vacuous test (an output equal for every input set, or a single
    value everywhere), or None."""
    for i in range(len(outputs_per_set[0])):
        vals = [np.asarray(outs[i]) for outs in outputs_per_set]
        if all(np.array_equal(vals[0], v) for v in vals[1:]):
            return f"output {i} is the same for every input"
        if len(np.unique(np.concatenate([v.ravel() for v in vals]))) < 2:
            return f"output {i} takes a single value"
    return None


def check_models(named_blobs: list[tuple[str, bytes]], work: Path, n_sets: int = 3,
                 input_seeds: list[int] | None = None, batch: int = 40, sanitize: bool = False,
                 dsp: bool = False) -> list[Outcome]:
    """Compile each model with the default targets, run it on the host C path (models batched into
    one executable) and in TFLM on `n_sets` random inputs (seeded by `input_seeds`, default the
    model's position); compare byte for byte. `sanitize`, `dsp`: see `run_host_batch`."""
    from mcuforge.driver import compile_model
    from mcuforge.errors import McuforgeError
    from mcuforge.verify import compare, random_inputs

    work.mkdir(parents=True, exist_ok=True)
    outcomes = [Outcome(name) for name, _ in named_blobs]
    compiled: dict[int, Any] = {}
    inputs: dict[int, list[list[np.ndarray]]] = {}
    for k, (name, blob) in enumerate(named_blobs):
        path = work / f"m{k}.tflite"
        path.write_bytes(blob)
        try:
            c = compile_model(path)
        except Exception as e:  # a refusal or an internal error: both are failures on a valid model
            outcomes[k] = Outcome(name, "compile", f"{type(e).__name__}: {(str(e).splitlines() or [''])[0]}")
            continue
        compiled[k] = c
        rng = np.random.default_rng(input_seeds[k] if input_seeds else k)
        inputs[k] = [random_inputs(c.imported, rng) for _ in range(n_sets)]
    keys = sorted(compiled)
    theirs = dict(zip(keys, run_tflm_models([named_blobs[k][1] for k in keys], [inputs[k] for k in keys])))
    ours: dict[int, Any] = {}
    for start in range(0, len(keys), batch):
        part = keys[start:start + batch]
        try:
            ours.update(zip(part, run_host_batch([compiled[k] for k in part], [inputs[k] for k in part],
                                                 work / f"batch{start}", sanitize, dsp)))
        except McuforgeError:  # find the model(s) that break the batch: one by one
            for k in part:
                try:
                    ours[k] = run_host_batch([compiled[k]], [inputs[k]], work / f"single{k}", sanitize, dsp)[0]
                except McuforgeError as e:
                    ours[k] = f"{type(e).__name__}: {str(e).splitlines()[0]} {' '.join(str(e).splitlines()[1:3])}"
    for k in keys:
        name = named_blobs[k][0]
        if isinstance(theirs[k], str):
            outcomes[k] = Outcome(name, "tflm", theirs[k])
        elif isinstance(ours[k], str):
            outcomes[k] = Outcome(name, "host", ours[k])
        else:
            bad = []
            for s, (o_set, t_set) in enumerate(zip(ours[k], theirs[k])):
                if len(o_set) != len(t_set):
                    bad.append(f"input set {s}: mcuforge gives {len(o_set)} outputs, TFLM {len(t_set)}")
                for i, (o, t) in enumerate(zip(o_set, t_set)):
                    m = compare(f"input set {s} output {i}", o, t)
                    if m:
                        bad.append(str(m))
            if bad:
                outcomes[k] = Outcome(name, "mismatch", bad[0])
            elif (why := degenerate(theirs[k])) is not None:
                outcomes[k] = Outcome(name, "degenerate", why)
    return outcomes


# ---- shrinking -------------------------------------------------------------------------------------

def _drop_op(spec: dict, k: int) -> dict:
    """The spec without op k: readers of its value read its first source instead."""
    ops = [dict(o) for o in spec["ops"]]
    gone = ops.pop(k)
    v = k + 1

    def remap(r: int) -> int:
        return gone["src"] if r == v else r - 1 if r > v else r

    for o in ops[k:]:
        for key in ("src", "src2"):
            if key in o:
                o[key] = remap(o[key])
        if "srcs" in o:
            o["srcs"] = [remap(r) for r in o["srcs"]]
    return {**spec, "ops": ops}


_SIMPLER = {  # op field -> simpler values to try, simplest first
    "per_channel": [False], "act": ["NONE"], "qj": [1.0], "zj": [0], "clamp_calib": [False], "bias": [0.0, 1.0],
    "stride": [[1, 1]], "dil": [[1, 1]], "k": [[1, 1], [3, 3]], "mult": [1, 2], "share_q": [True],
    "same_q": [True], "keep": [True], "pads": [[0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0]],
}


def _candidates(spec: dict):
    """Smaller or simpler specs, the biggest cuts first."""
    for k in reversed(range(len(spec["ops"]))):
        yield _drop_op(spec, k)
    for d, n in enumerate(spec["input"]):
        for m in sorted({1, n // 2, n - 1}):
            if 1 <= m < n:
                yield {**spec, "input": spec["input"][:d] + [m] + spec["input"][d + 1:]}
    if spec["input_q"][1] != 0:
        yield {**spec, "input_q": [spec["input_q"][0], 0]}
    for k, op in enumerate(spec["ops"]):
        for key in ("oc", "units"):
            if key in op and op[key] > 1:
                for m in sorted({1, op[key] // 2, op[key] - 1}):
                    yield {**spec, "ops": spec["ops"][:k] + [{**op, key: m}] + spec["ops"][k + 1:]}
        for key, simpler in _SIMPLER.items():
            if key not in op:
                continue
            # only values before the current one in the list: a strict order, so shrinking cannot cycle
            for val in simpler[:simpler.index(op[key])] if op[key] in simpler else simpler:
                    yield {**spec, "ops": spec["ops"][:k] + [{**op, key: val}] + spec["ops"][k + 1:]}


def shrink(spec: dict, still_fails, budget: int = 200, progress=lambda msg: None) -> dict:
    """Greedy reduction: apply the first candidate that still fails (`still_fails(spec) -> bool`),
    start over, until no candidate fails or `budget` checks are spent."""
    checks = 0
    improved = True
    while improved and checks < budget:
        improved = False
        for cand in _candidates(spec):
            if checks >= budget:
                break
            checks += 1
            if still_fails(cand):
                spec, improved = cand, True
                progress(f"shrunk to {len(spec['ops'])} ops, input {spec['input']} ({checks} checks)")
                break
    return spec


def check_spec(spec: dict, work: Path, n_sets: int = 3) -> Outcome:
    """One spec through `check_models`."""
    return check_models([(f"seed{spec.get('seed', 0)}", build(spec))], work, n_sets, [spec.get("seed", 0)])[0]


def shrink_failure(spec: dict, outcome: Outcome, work: Path, budget: int = 200, progress=lambda m: None):
    """Shrink a failing spec while it fails at the same stage; (small spec, its outcome)."""
    counter = [0]

    def still_fails(cand: dict) -> bool:
        counter[0] += 1
        return check_spec(cand, work / f"shrink{counter[0] % 4}").stage == outcome.stage

    small = shrink(spec, still_fails, budget, progress)
    return small, check_spec(small, work / "final")


def save_fixture(directory: Path, spec: dict, outcome: Outcome, origin: str) -> Path:
    """Keep a (shrunk) failing case: NAME.tflite (the reproducer) and NAME.json (its spec, where it
    came from and how it failed)."""
    import json

    directory.mkdir(parents=True, exist_ok=True)
    name = f"seed{spec.get('seed', 0)}_{outcome.stage}"
    (directory / f"{name}.tflite").write_bytes(build(spec))
    (directory / f"{name}.json").write_text(json.dumps(
        {"origin": origin, "failure": str(outcome), "spec": spec}, indent=1) + "\n")
    return directory / f"{name}.tflite"
