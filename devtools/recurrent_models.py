"""Hand-built stateful models (no TensorFlow): SVDF, which no converter produces, and
UNIDIRECTIONAL_SEQUENCE_LSTM in every layout TFLM's integer kernels take (8x8->16, and 16x8->16,
which the converter refuses to make), each with the variable tensors (state kept between
invocations) TFLite Micro requires.

    blob = svdf_model(SvdfConfig(batches=1, inputs=10, filters=8, memory=4, rank=2), seed=3)
    blob = lstm_model(LstmConfig(batches=2, steps=3, inputs=6, units=8, time_major=True), seed=5)

Weights are seeded random over the whole int8 (or int16) range, biases wide enough to push the
gates into saturation now and then, quantization parameters as the converter chooses them (an
LSTM's cell state on a power-of-two scale, symmetric weights) or as a config says. `variant` adds
the LSTM inputs TFLM's integer kernel refuses (CIFG, peephole, projection, layer norm), for the
tests that check mcuforge refuses them too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from devtools.tflite_writer import ModelWriter


@dataclass(frozen=True)
class SvdfConfig:
    batches: int = 1
    inputs: int = 8
    filters: int = 8  # rank * units
    memory: int = 4
    rank: int = 1
    state_dtype: str = "int16"  # the state's and the time weights' type: int16 or int8
    state_zero_point: int = 0
    activation: str = "NONE"  # TFLM's integer kernel ignores it
    input_zero_point: int = 3
    output_zero_point: int = -2
    state_scale: float = 0.03
    with_bias: bool = True


def svdf_model(cfg: SvdfConfig, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    w = ModelWriter("mcuforge devtools.recurrent_models: SVDF")
    x = w.tensor((cfg.batches, cfg.inputs), scale=0.05, zero_point=cfg.input_zero_point, name="input")
    y = add_svdf(w, x, cfg, rng, 0.05)
    return w.finish(inputs=[x], outputs=[y])


def add_svdf(w: ModelWriter, x: int, cfg: SvdfConfig, rng: np.random.Generator, x_scale: float,
             name: str = "svdf") -> int:
    """An SVDF reading tensor `x` (its scale `x_scale`) into a new int8 output tensor; returns it."""
    b, i, f, m, r = cfg.batches, cfg.inputs, cfg.filters, cfg.memory, cfg.rank
    units = f // r
    wf_scale = 0.004 * (1 + rng.random())
    wf = w.tensor((f, i), data=rng.integers(-127, 128, (f, i)), scale=wf_scale, name=f"{name}/weights_feature")
    big = 32767 if cfg.state_dtype == "int16" else 127
    wt_scale = 0.002 * (1 + rng.random())
    wt = w.tensor((f, m), dtype=cfg.state_dtype, data=rng.integers(-big, big + 1, (f, m)), scale=wt_scale,
                  name=f"{name}/weights_time")
    bias_scale = float(np.float32(cfg.state_scale) * np.float32(wt_scale))
    bias = w.tensor((units,), dtype="int32", data=rng.integers(-20000, 20001, units), scale=bias_scale,
                    name=f"{name}/bias") if cfg.with_bias else -1
    state = w.tensor((b, m * f), dtype=cfg.state_dtype, scale=cfg.state_scale, zero_point=cfg.state_zero_point,
                     variable=True, name=f"{name}/activation_state")
    y = w.tensor((b, units), scale=svdf_output_scale(cfg, x_scale, wf_scale, wt_scale),
                 zero_point=cfg.output_zero_point, name=f"{name}/output")
    w.op("SVDF", [x, wf, wt, bias, state], [y], Rank=r, FusedActivationFunction=cfg.activation)
    return y


def svdf_kws_model(seed: int = 0) -> bytes:
    """A streaming keyword model as TFLM's SVDF examples build one: a frame of 40 features, two SVDF
    layers with int16 memories (8 and 4 frames, rank 1 and 2), a 12-way FULLY_CONNECTED, SOFTMAX."""
    rng = np.random.default_rng(seed)
    w = ModelWriter("mcuforge devtools.recurrent_models: SVDF keyword model")
    x = w.tensor((1, 40), scale=0.05, zero_point=-10, name="features")
    first = SvdfConfig(inputs=40, filters=32, memory=8, rank=1, input_zero_point=-10, output_zero_point=-3)
    h1 = add_svdf(w, x, first, rng, 0.05, "svdf_1")
    h1_scale = w.tensors[h1].scale[0]
    second = SvdfConfig(inputs=32, filters=64, memory=4, rank=2, input_zero_point=-3, output_zero_point=5)
    h2 = add_svdf(w, h1, second, rng, h1_scale, "svdf_2")
    h2_scale = w.tensors[h2].scale[0]
    fw_scale = 0.4 / (42 * 74 * np.sqrt(32) * h2_scale)  # logits of standard deviation ~0.4
    fw = w.tensor((12, 32), data=rng.integers(-127, 128, (12, 32)), scale=fw_scale, name="dense/weights")
    fb = w.tensor((12,), dtype="int32", data=rng.integers(-3000, 3001, 12), scale=h2_scale * fw_scale,
                  name="dense/bias")
    logits = w.tensor((1, 12), scale=3 * 0.4 / 127, zero_point=2, name="logits")
    w.op("FULLY_CONNECTED", [h2, fw, fb], [logits])
    probs = w.tensor((1, 12), scale=1 / 256, zero_point=-128, name="probabilities")
    w.op("SOFTMAX", [logits], [probs], Beta=1.0)
    return w.finish(inputs=[x], outputs=[probs])


def svdf_output_scale(cfg: SvdfConfig, x_scale: float, wf_scale: float, wt_scale: float) -> float:
    """An output scale that spreads random inputs over the int8 range (some saturating): three
    standard deviations of the output, estimated from uniform inputs and weights."""
    big = 32767 if cfg.state_dtype == "int16" else 127
    state_std = min(np.sqrt(cfg.inputs) * 74.0 * 74.0 * x_scale * wf_scale / cfg.state_scale, big / 2)
    out_std = np.sqrt(cfg.rank * cfg.memory) * (big / np.sqrt(3)) * state_std * cfg.state_scale * wt_scale
    return float(3 * out_std / 127)


@dataclass(frozen=True)
class LstmConfig:
    batches: int = 1
    steps: int = 3
    inputs: int = 6
    units: int = 8
    time_major: bool = False
    cell_clip: float = 0.0
    cell_scale_power: int = -11  # the cell state's scale is 2^power
    input_zero_point: int = -3
    hidden_zero_point: int = 4
    hidden_scale: float = 1 / 128
    bias_range: int = 4000  # int32 biases in [-range, range]
    activation: str = "TANH"
    variant: str = ""  # "", or one TFLM refuses: "cifg", "peephole", "projection", "layer_norm"
    activations: str = "int8"  # int16: the 16x8 LSTM (int16 input, hidden and output, int64 biases)


def lstm_model(cfg: LstmConfig, seed: int = 0, with_tail: bool = False) -> bytes:
    """A one-LSTM model (its output the whole sequence); `with_tail` adds a FULLY_CONNECTED on the
    last frame's flattened states, as a keyword model does (kept simple: on the whole sequence)."""
    rng = np.random.default_rng(seed)
    b, t, i, s = cfg.batches, cfg.steps, cfg.inputs, cfg.units
    w = ModelWriter("mcuforge devtools.recurrent_models: UNIDIRECTIONAL_SEQUENCE_LSTM")
    seq = (t, b) if cfg.time_major else (b, t)
    act = cfg.activations
    wide = act == "int16"
    x_scale = 0.02 * (1 + rng.random()) / (256 if wide else 1)
    x = w.tensor((*seq, i), dtype=act, scale=x_scale, zero_point=cfg.input_zero_point, name="input")

    def weights(rows: int, cols: int, name: str) -> int:
        return w.tensor((rows, cols), data=rng.integers(-127, 128, (rows, cols)), scale=0.003 * (1 + rng.random()),
                        name=name)

    def bias(name: str) -> int:
        span = cfg.bias_range * (256 if wide else 1)
        return w.tensor((s,), dtype="int64" if wide else "int32", data=rng.integers(-span, span + 1, s),
                        scale=x_scale * 0.003, name=name)

    ins = [-1] * 24
    ins[0] = x
    gates = ("input", "forget", "cell", "output")
    for k, g in enumerate(gates):
        ins[1 + k] = weights(s, i, f"input_to_{g}_weights")
        ins[5 + k] = weights(s, s, f"recurrent_to_{g}_weights")
        ins[12 + k] = bias(f"{g}_gate_bias")
    cell_scale = 2.0 ** cfg.cell_scale_power
    if cfg.variant == "cifg":
        ins[1] = ins[5] = ins[12] = -1
    elif cfg.variant == "peephole":
        for k in (9, 10, 11):
            ins[k] = w.tensor((s,), dtype="int16", data=rng.integers(-3000, 3001, s), scale=0.001, name=f"peephole{k}")
    elif cfg.variant == "projection":
        ins[16] = weights(s, s, "projection_weights")
    elif cfg.variant == "layer_norm":
        for k in (20, 21, 22, 23):
            ins[k] = w.tensor((s,), dtype="int16", data=rng.integers(1000, 30000, s), scale=1e-4, name=f"layer_norm{k}")
    h_scale = cfg.hidden_scale / (256 if wide else 1)
    ins[18] = w.tensor((b, s), dtype=act, scale=h_scale, zero_point=cfg.hidden_zero_point, variable=True,
                       name="output_state")
    ins[19] = w.tensor((b, s), dtype="int16", scale=cell_scale, variable=True, name="cell_state")
    y = w.tensor((*seq, s), dtype=act, scale=h_scale, zero_point=cfg.hidden_zero_point, name="output")
    w.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y], FusedActivationFunction=cfg.activation, CellClip=cfg.cell_clip,
         ProjClip=0.0, TimeMajor=cfg.time_major)
    outputs = [y]
    if with_tail:
        units = 5
        z = w.tensor((b * t, units), scale=0.1, zero_point=-7, name="logits")
        fw = weights(units, s, "dense_weights")
        fb = w.tensor((units,), dtype="int32", data=rng.integers(-500, 501, units),
                      scale=h_scale * 0.003, name="dense_bias")
        w.op("FULLY_CONNECTED", [y, fw, fb], [z])
        outputs = [z]
    return w.finish(inputs=[x], outputs=outputs)
