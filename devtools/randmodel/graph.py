"""The spec builder: applies a spec's ops one by one to a ModelWriter, adapting each to the shapes it
meets, with the float calibration alongside (see the package docstring for the spec format)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from devtools.tflite_writer import ModelWriter

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

    @staticmethod
    def _window_taps(op, v: Value):
        """A convolution's kernel size, its window options and the input taps (or _Skip)."""
        if len(v.shape) != 4:
            raise _Skip
        kh, kw = op["k"]
        sh, sw = op.get("stride", [1, 1])
        dh, dw = op.get("dil", [1, 1])
        taps = _patches(v.x, kh, kw, sh, sw, dh, dw, op["pad"])
        if taps is None:
            raise _Skip
        return kh, kw, dict(Padding=op["pad"], StrideW=sw, StrideH=sh, DilationWFactor=dw, DilationHFactor=dh), taps

    def _op_conv(self, op, vs):
        (v,) = vs
        kh, kw, opts, taps = self._window_taps(op, v)
        ic, oc = v.shape[3], int(op["oc"])
        wi, scales, wf = self._weights(op, (oc, kh, kw, ic), 0, kh * kw * ic)
        acc = sum(np.einsum("snhwc,oc->snhwo", p, wf[:, i, j, :]) for i, j, p in taps)
        return self._weighted(op, "CONV_2D", v, acc, wi, scales, 0, (oc,), acc.shape[1:], opts,
                              op.get("per_channel", False))

    def _op_dwconv(self, op, vs):
        (v,) = vs
        kh, kw, opts, taps = self._window_taps(op, v)
        m = int(op.get("mult", 1))
        c = v.shape[3] * m
        wi, scales, wf = self._weights(op, (1, kh, kw, c), 3, kh * kw)
        acc = sum(np.repeat(p, m, axis=-1) * wf[0, i, j, :] for i, j, p in taps)
        opts = dict(opts, DepthMultiplier=m)
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

