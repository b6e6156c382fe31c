#!/usr/bin/env python3
"""Write the committed stateful fixtures (SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM) into
tests/fixtures/models with MANIFEST.recurrent.json, built by devtools/recurrent_models.py (no
TensorFlow: the converter makes no SVDF at all, and its fused LSTM only from Keras 2 with a fixed
batch; the Keras-made LSTM keyword model is tests/fixtures/keras/lstm_kws_i8.tflite).

Every fixture has variable tensors (the state TFLite Micro keeps between invocations): the tests
run them in multi-step sequences against TFLM (tests/test_host_e2e.py, tests/test_bitexact.py).

    python tools/gen_recurrent_fixtures.py            # (re)write the fixtures and the manifest
    python tools/gen_recurrent_fixtures.py --check    # fail if a committed file differs

Deterministic: each fixture has its own seed, so the files repeat byte for byte.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.recurrent_models import LstmConfig, SvdfConfig, lstm_model, svdf_kws_model, svdf_model  # noqa: E402
from mcuforge.frontend.reader import read_tflite_bytes  # noqa: E402

MODELS = ROOT / "tests" / "fixtures" / "models"
MANIFEST = MODELS / "MANIFEST.recurrent.json"

FIXTURES = [
    ("svdf_rank1_s16", lambda: svdf_model(SvdfConfig(inputs=10, filters=8, memory=4, rank=1), seed=1),
     "SVDF rank 1, memory 4, int16 state and time weights"),
    ("svdf_rank2_s16_mem8", lambda: svdf_model(SvdfConfig(inputs=12, filters=16, memory=8, rank=2), seed=2),
     "SVDF rank 2 (8 units), memory 8, int16 state"),
    ("svdf_rank2_s8_zp", lambda: svdf_model(SvdfConfig(inputs=6, filters=6, memory=3, rank=2, state_dtype="int8",
                                                       state_zero_point=5), seed=3),
     "SVDF rank 2, int8 state with zero point 5 (its initial value, and the wrap of the stored feature)"),
    ("svdf_relu_batch2", lambda: svdf_model(SvdfConfig(batches=2, inputs=8, filters=6, memory=5, rank=3,
                                                       activation="RELU"), seed=4),
     "SVDF batch 2, rank 3, fused RELU (not applied by TFLM's integer kernel)"),
    ("svdf_kws_two_layers", lambda: svdf_kws_model(seed=5),
     "streaming keyword model: two SVDF layers (memory 8 rank 1, memory 4 rank 2), FULLY_CONNECTED, SOFTMAX"),
    ("lstm_s8_units8", lambda: lstm_model(LstmConfig(steps=3, inputs=6, units=8), seed=6),
     "integer LSTM, batch 1, 3 time steps per run, 8 units, hidden zero point 4, cell state 2^-11"),
    ("lstm_s8_time_major_batch2", lambda: lstm_model(LstmConfig(batches=2, steps=2, inputs=5, units=6,
                                                                time_major=True), seed=7),
     "integer LSTM, time-major, batch 2"),
    ("lstm_s8_cell_clip", lambda: lstm_model(LstmConfig(steps=4, inputs=4, units=10, cell_clip=0.75,
                                                        cell_scale_power=-12, bias_range=20000), seed=8),
     "integer LSTM with cell clip 0.75 (cell state 2^-12), large biases driving the gates into saturation"),
    ("lstm_s8_dense_tail", lambda: lstm_model(LstmConfig(batches=1, steps=2, inputs=8, units=12,
                                                         cell_scale_power=-15), seed=9, with_tail=True),
     "integer LSTM (cell state 2^-15) followed by FULLY_CONNECTED over its output sequence"),
    ("lstm_16x8", lambda: lstm_model(LstmConfig(steps=3, inputs=6, units=8, activations="int16", input_zero_point=0,
                                                hidden_zero_point=0), seed=10),
     "16x8 integer LSTM: int16 input, hidden state and output, int64 biases (TFLM runs it, the converter refuses "
     "to make it)"),
]


def entry(name: str, blob: bytes, covers: str) -> dict:
    graph = read_tflite_bytes(blob)
    ops = list(dict.fromkeys(op.name for op in graph.operators))
    return {"name": name, "file": f"{name}.tflite", "ops": ops, "covers": covers}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a committed fixture differs")
    args = parser.parse_args()
    manifest, stale = [], []
    for name, build, covers in FIXTURES:
        blob = build()
        path = MODELS / f"{name}.tflite"
        if args.check:
            if not path.is_file() or path.read_bytes() != blob:
                stale.append(path.name)
        else:
            path.write_bytes(blob)
        manifest.append(entry(name, blob, covers))
    text = json.dumps(manifest, indent=1) + "\n"
    if args.check:
        if not MANIFEST.is_file() or MANIFEST.read_text() != text:
            stale.append(MANIFEST.name)
        if stale:
            print(f"stale: {', '.join(stale)}: run python tools/gen_recurrent_fixtures.py", file=sys.stderr)
            return 1
        print(f"{len(FIXTURES)} recurrent fixtures current")
        return 0
    MANIFEST.write_text(text)
    print(f"wrote {len(FIXTURES)} fixtures and {MANIFEST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
