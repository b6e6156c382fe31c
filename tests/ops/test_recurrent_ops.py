"""SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM against TFLite Micro on multi-step sequences: the state
(variable tensors) carried from invoke to invoke within a sequence, reset between sequences, on the
numpy reference and on the generated C (host gcc). Models are built with devtools/recurrent_models.py
(no converter makes SVDF), over many configurations and seeds; the LSTM variants TFLM's integer
kernel refuses are refused by both."""

import numpy as np
import pytest

from devtools.recurrent_models import LstmConfig, SvdfConfig, lstm_model, svdf_kws_model, svdf_model
from mcuforge.driver import Options, compile_module
from mcuforge.frontend.importer import import_graph
from mcuforge.frontend.reader import read_tflite_bytes
from mcuforge.oracle import OracleError, run_tflm
from mcuforge.verify import random_inputs, verify_host, verify_reference

STEPS = 4  # steps per sequence
SEQUENCES = 2


def module_of(blob: bytes):
    result = import_graph(read_tflite_bytes(blob))
    assert not result.problems, result.problems
    return result.module


def sequences(module, seed: int, steps: int = STEPS, count: int = SEQUENCES) -> list:
    rng = np.random.default_rng(seed)
    return [random_inputs(module, rng) for _ in range(steps * count)]


def assert_reference_matches(blob: bytes, seed: int, steps: int = STEPS) -> None:
    module = module_of(blob)
    results = verify_reference(module, blob, sequences(module, seed, steps), intermediates=True, isolate=False,
                               steps=steps)
    bad = [f"step {r.index % steps} of sequence {r.index // steps}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad[:5])


SVDF_CONFIGS = {
    "rank1_s16": SvdfConfig(),
    "rank2_s16_mem8": SvdfConfig(inputs=12, filters=16, memory=8, rank=2),
    "rank3_batch2_s8_zp5": SvdfConfig(batches=2, inputs=5, filters=6, memory=4, rank=3, state_dtype="int8",
                                      state_zero_point=5),
    "s8_zp_neg_mem1": SvdfConfig(inputs=7, filters=4, memory=1, rank=1, state_dtype="int8", state_zero_point=-3),
    "s16_zp7": SvdfConfig(inputs=4, filters=6, memory=3, rank=2, state_zero_point=7),
    "batch3_rank1": SvdfConfig(batches=3, inputs=4, filters=3, memory=3, rank=1),
    "relu_ignored": SvdfConfig(activation="RELU", output_zero_point=-60),
    "relu6_ignored_s8": SvdfConfig(activation="RELU6", state_dtype="int8", output_zero_point=40),
    "wide_kws": SvdfConfig(inputs=40, filters=64, memory=8, rank=1),
    "tiny": SvdfConfig(inputs=1, filters=1, memory=1, rank=1),
    "input_zp_edge": SvdfConfig(inputs=9, filters=8, memory=2, rank=4, input_zero_point=127, output_zero_point=-128),
}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(SVDF_CONFIGS))
def test_svdf_reference_matches_tflm_on_sequences(name, seed):
    assert_reference_matches(svdf_model(SVDF_CONFIGS[name], seed=seed), seed)


LSTM_CONFIGS = {
    "default": LstmConfig(),
    "time_major_batch2": LstmConfig(batches=2, steps=2, time_major=True),
    "batch3_one_step": LstmConfig(batches=3, steps=1),
    "cell_clip": LstmConfig(cell_clip=0.5),
    "cell_2e-15": LstmConfig(cell_scale_power=-15),
    "cell_2e-8_saturating": LstmConfig(cell_scale_power=-8, bias_range=40000),
    "zero_points_edge": LstmConfig(cell_scale_power=-13, hidden_zero_point=-100, input_zero_point=127,
                                   hidden_scale=0.02),
    "one_unit": LstmConfig(units=1, inputs=1),
    "wide": LstmConfig(units=20, inputs=33, steps=2, cell_clip=3.0),
    "cell_scale_limits_hi": LstmConfig(cell_scale_power=2),
    "cell_scale_limits_lo": LstmConfig(cell_scale_power=-30),
    "cell_clip_saturates": LstmConfig(cell_clip=100.0, cell_scale_power=-11),
    # 16x8: int16 activations, int64 biases (TFLM runs it; the converter refuses to make one)
    "16x8": LstmConfig(activations="int16", input_zero_point=0, hidden_zero_point=0),
    "16x8_time_major_clip": LstmConfig(activations="int16", input_zero_point=0, hidden_zero_point=0, batches=2,
                                       steps=2, time_major=True, cell_clip=0.5),
    "16x8_saturating": LstmConfig(activations="int16", input_zero_point=0, hidden_zero_point=0, cell_scale_power=-15,
                                  bias_range=40000),
    "16x8_zero_points": LstmConfig(activations="int16", input_zero_point=5, hidden_zero_point=-3, units=5, inputs=7),
}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(LSTM_CONFIGS))
def test_lstm_reference_matches_tflm_on_sequences(name, seed):
    assert_reference_matches(lstm_model(LSTM_CONFIGS[name], seed=seed), seed)


def test_keras_lstm_keyword_model_matches_tflm(request):
    """The Keras-made LSTM keyword model (49 frames per run), every tensor, over a sequence."""
    blob = (request.config.rootpath / "tests" / "fixtures" / "keras" / "lstm_kws_i8.tflite").read_bytes()
    assert_reference_matches(blob, seed=4, steps=3)


def test_svdf_keyword_model_matches_tflm():
    assert_reference_matches(svdf_kws_model(seed=11), seed=11, steps=6)


@pytest.mark.parametrize("blob", [svdf_model(SvdfConfig(memory=3), seed=5), lstm_model(LstmConfig(steps=1), seed=5)],
                         ids=["svdf", "lstm"])
def test_the_sequences_exercise_the_state(blob):
    """The same input twice in a row gives another output the second time, in TFLM and in mcuforge's
    reference, and the first output again after a reset: the tests above see the state at work."""
    module = module_of(blob)
    x = random_inputs(module, np.random.default_rng(3))
    theirs = [outs[0] for outs, _ in run_tflm(blob, [x, x, x], steps=2, isolate=False)]
    assert not np.array_equal(theirs[0], theirs[1]) and np.array_equal(theirs[0], theirs[2])
    results = verify_reference(module, blob, [x, x, x], isolate=False, steps=2)
    assert all(r.ok for r in results)


HOST_MODELS = {
    "svdf_s16": svdf_model(SvdfConfig(inputs=10, filters=8, memory=4, rank=2), seed=21),
    "svdf_s8_zp": svdf_model(SvdfConfig(batches=2, inputs=6, filters=6, memory=3, rank=3, state_dtype="int8",
                                        state_zero_point=-7), seed=22),
    "svdf_kws": svdf_kws_model(seed=23),
    "lstm": lstm_model(LstmConfig(steps=3, units=9, inputs=5, cell_clip=1.5), seed=24),
    "lstm_time_major": lstm_model(LstmConfig(batches=2, steps=2, time_major=True, hidden_zero_point=-20), seed=25),
    "lstm_dense": lstm_model(LstmConfig(steps=2, cell_scale_power=-14), seed=26, with_tail=True),
    "lstm_16x8": lstm_model(LstmConfig(activations="int16", input_zero_point=2, hidden_zero_point=-1, cell_clip=2.0),
                            seed=27),
    # units not a multiple of 4 (a tile straddles two gates), depth not a multiple of 8, two batches
    "lstm_16x8_wide": lstm_model(LstmConfig(activations="int16", batches=2, inputs=37, units=21, input_zero_point=-4,
                                            hidden_zero_point=5), seed=28),
    # 1100 inputs: 32768 * sum |w| passes 2^31, so the input products are summed in int32 chunks, then int64
    "lstm_16x8_chunked": lstm_model(LstmConfig(activations="int16", steps=2, inputs=1100, units=5), seed=29),
}


@pytest.mark.parametrize("targets", [("c",), ("cmsis-nn", "c"), ("cmsis-nn-dsp", "c")],
                         ids=["c", "cmsis-nn", "cmsis-nn-dsp-emulated"])
@pytest.mark.parametrize("name", sorted(HOST_MODELS))
def test_generated_c_matches_tflm_on_sequences(name, targets):
    """Host gcc, -Wall -Wextra -Werror: two sequences of four steps, the harness resetting the state
    (the generated <prefix>_reset) between them; the first sequence starts from the startup state.
    cmsis-nn-dsp: the cmsis-nn kernels' DSP paths with the instructions emulated in C (the fast
    requantization records; the inline-assembly product loop itself runs on QEMU, test_qemu_e2e)."""
    dsp = targets[0] == "cmsis-nn-dsp"
    targets = ("cmsis-nn", "c") if dsp else targets
    blob = HOST_MODELS[name]
    module = module_of(blob)
    compiled = compile_module(module, blob, Options(targets=targets))
    assert compiled.program.states and compiled.arena.state_bytes > 0
    kernels = {b.kernel.function for b in compiled.program.bindings}
    if targets[0] == "cmsis-nn":  # the optimized kernels take both LSTMs and SVDF with an int16 state
        assert kernels & {"mcu_cmsis_lstm_s8", "mcu_cmsis_lstm_s16", "mcu_cmsis_svdf_s8_s16", "mcu_svdf_s8_s8"}, kernels
    results = verify_host(compiled, sequences(module, 7), isolate=False, steps=STEPS, dsp=dsp)
    bad = [f"input {r.index}: {m}" for r in results for m in r.mismatches]
    assert not bad, "\n".join(bad[:5])


def test_16x8_lstm_lowering_chunks_only_where_int32_could_overflow():
    """The chunked model's input products leave one int32 sum (its chunk is shorter than the padded
    depth: the int64 path runs); its recurrent products and the small models' stay in one chunk."""
    def params(name):
        compiled = compile_module(module_of(HOST_MODELS[name]), HOST_MODELS[name], Options(targets=("cmsis-nn", "c")))
        (kc,) = [b.kernel for b in compiled.program.bindings if b.kernel.function == "mcu_cmsis_lstm_s16"]
        return kc.params

    p = params("lstm_16x8_chunked")
    assert p["input_depth8"] == 1104 and 0 < p["input_chunk"] < 1104 and p["input_chunk"] % 8 == 0
    assert p["recurrent_chunk"] == p["recurrent_depth8"] == 8
    p = params("lstm_16x8_wide")
    assert (p["input_chunk"], p["input_depth8"], p["recurrent_chunk"], p["recurrent_depth8"]) == (40, 40, 24, 24)


# ---- what TFLM's integer kernels refuse, or leave undefined, mcuforge refuses -------------------------

@pytest.mark.parametrize("variant", ["cifg", "peephole", "projection", "layer_norm"])
def test_lstm_variants_refused_as_by_tflm(variant):
    blob = lstm_model(LstmConfig(variant=variant), seed=1)
    problems = import_graph(read_tflite_bytes(blob)).problems
    assert problems and "Only the standard LSTM" in problems[0][2]
    with pytest.raises(OracleError):
        run_tflm(blob, [[np.zeros((1, 3, 6), np.int8)]])


@pytest.mark.parametrize("cfg, rule", [
    (LstmConfig(activation="NONE"), "The cell gate's activation must be TANH"),  # TFLM: TFLITE_ASSERT_FALSE
    (LstmConfig(activation="RELU"), "The cell gate's activation must be TANH"),
    (LstmConfig(cell_scale_power=-31), "must round to a power of two 2^k with -30 <= k <= 2"),  # int32 overflow
    (LstmConfig(cell_scale_power=3), "must round to a power of two 2^k with -30 <= k <= 2"),
], ids=["act_none", "act_relu", "cell_2e-31", "cell_2e3"])
def test_lstm_undefined_in_tflm_refused(cfg, rule):
    problems = import_graph(read_tflite_bytes(lstm_model(cfg, seed=1))).problems
    assert problems and rule in problems[0][2]


def test_svdf_without_bias_refused():
    """TFLM reads the absent bias' scale while preparing (it crashes); mcuforge says why instead."""
    blob = svdf_model(SvdfConfig(with_bias=False), seed=1)
    problems = import_graph(read_tflite_bytes(blob)).problems
    assert len(problems) == 1 and "the bias is absent" in problems[0][2]
    with pytest.raises(OracleError):
        run_tflm(blob, [[np.zeros((1, 8), np.int8)]])


@pytest.mark.parametrize("cpu", ["cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"])
def test_cmsis_nn_recurrent_kernels_build_at_every_optimization_level(cpu, tmp_path):
    """Their DSP product loop (mcu_cmsis_rows4.h) is inline assembly needing 13 registers: every -O level
    and core must build them (-Werror), the assembly where optimizing, the C loop at -O0."""
    import shutil
    import subprocess

    from mcuforge.firmware.macros import KERNELS

    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc not installed")
    for src in (KERNELS / "cmsis_nn" / "mcu_cmsis_lstm_s8.c", KERNELS / "cmsis_nn" / "mcu_cmsis_svdf_s8.c",
                KERNELS / "cmsis_nn" / "mcu_cmsis_lstm_s16.c"):
        for opt in ("-O0", "-O1", "-O2", "-O3", "-Os", "-Og"):
            proc = subprocess.run(["arm-none-eabi-gcc", f"-mcpu={cpu}", "-mthumb", opt, "-std=c11", "-Wall", "-Wextra",
                                   "-Werror", "-I", str(KERNELS.parent / "include"), "-I", str(KERNELS / "cmsis_nn"),
                                   "-c", str(src), "-o", str(tmp_path / "k.o")], capture_output=True, text=True)
            assert proc.returncode == 0, f"{src.name} {cpu} {opt}: {proc.stderr[:500]}"
