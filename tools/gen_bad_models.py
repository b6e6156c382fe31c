"""Generate the committed bad-input fixture models in tests/fixtures/bad/ (needs tensorflow:
`pip install .[fixtures]`, then `python tools/gen_bad_models.py`). Each file is a well-formed
.tflite that mcuforge must refuse with one clear error:

  unsupported_ops.tflite   int8 model with operators mcuforge does not support (several of them)
  float_model.tflite       a float32 model (float activations)
  dynamic_shape.tflite     an input whose shape signature has an unknown non-batch dimension
  two_subgraphs.tflite     control flow (WHILE) that keeps a second subgraph
Truncated and garbage files are made by the tests themselves.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def rep(shape, seed=0):
    rng = np.random.default_rng(seed)

    def gen():
        for _ in range(20):
            yield [rng.uniform(-2, 2, size=shape).astype(np.float32)]

    return gen


def convert(fn_or_model, shape, mode: str) -> bytes:
    if isinstance(fn_or_model, tf.keras.Model):
        conv = tf.lite.TFLiteConverter.from_keras_model(fn_or_model)
    else:
        conv = tf.lite.TFLiteConverter.from_concrete_functions([fn_or_model.get_concrete_function()], fn_or_model)
    if mode == "int8":
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep(shape)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.int8
        conv.inference_output_type = tf.int8
    elif mode == "float_dynamic":
        pass
    return conv.convert()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "tests/fixtures/bad"))
    out = Path(ap.parse_args().out)
    out.mkdir(parents=True, exist_ok=True)
    tf.random.set_seed(0)

    # Unsupported ops: an int8 EXP (TFLM has float32 only) and SIGN (no TFLM kernel), between supported ones.
    inp = tf.keras.Input((8, 8, 4), batch_size=1)
    x = tf.keras.layers.Conv2D(4, 3, padding="same")(inp)
    x = tf.keras.layers.Lambda(tf.math.exp)(x)
    x = tf.keras.layers.Conv2D(4, 1)(x)
    x = tf.keras.layers.Lambda(tf.math.sign)(x)
    model = tf.keras.Model(inp, x)
    (out / "unsupported_ops.tflite").write_bytes(convert(model, (1, 8, 8, 4), "int8"))

    inp = tf.keras.Input((8, 8, 4), batch_size=1)
    model = tf.keras.Model(inp, tf.keras.layers.Conv2D(4, 3, padding="same")(inp))
    (out / "float_model.tflite").write_bytes(convert(model, (1, 8, 8, 4), "float"))

    inp = tf.keras.Input((None, 4), batch_size=1)
    model = tf.keras.Model(inp, tf.keras.layers.Dense(4)(inp))
    (out / "dynamic_shape.tflite").write_bytes(convert(model, (1, 5, 4), "float"))

    @tf.function(input_signature=[tf.TensorSpec((1, 4), tf.float32)])
    def loop(x):
        i = tf.constant(0)
        _, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * 2.0 + 1.0), [i, x])
        return y

    conv = tf.lite.TFLiteConverter.from_concrete_functions([loop.get_concrete_function()], loop)
    (out / "two_subgraphs.tflite").write_bytes(conv.convert())
    for f in sorted(out.glob("*.tflite")):
        print(f"{f.name}: {f.stat().st_size} bytes")


if __name__ == "__main__":
    main()
