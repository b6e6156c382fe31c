#!/usr/bin/env python3
"""Generate the committed "as users make them" Keras models in ``tests/fixtures/keras``.

Where ``tools/gen_fixtures.py`` makes one tiny ``tf.function`` per operator, this script builds the
small, whole architectures people deploy on microcontrollers with Keras layers and converts them the
way the TensorFlow Lite documentation tells users to (issue 12 item 3, issue 15 item 4)::

    model = keras.Model(keras.Input(shape=(96, 96, 3)), ...)   # dynamic batch: no batch_size
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = <seeded generator>
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.uint8      # or tf.int8
    converter.inference_output_type = tf.uint8     # or tf.int8

and, for the int16-activation models, ``supported_ops = [EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_
INT16_WEIGHTS_INT8]`` with int16 or float32 model I/O.  No private converter flag is set: what the
default converter makes of a Keras model (shape sub-graphs from the dynamic batch, per-channel
FULLY_CONNECTED weights, ...) is exactly what mcuforge must handle.

Weights are the layers' seeded initializers, then perturbed deterministically so that the quantized
model is not trivial: biases, batch-norm gamma/beta and PReLU slopes random, every kernel's output
channels scaled differently (different per-channel scales), the batch-norm statistics set from one
forward pass over seeded calibration data (momentum 0) so that activations are normalised as in a
trained network, and the final classifier rescaled to logits of a trained-like spread.  Seeds come from the CRC32 of the architecture name (the uint8 and int8 variants
of an architecture are the same network).  Calibration data are seeded smooth random images, sensor
traces or audio features.

The LSTM models are built with ``tf_keras`` (Keras 2): Keras 3's LSTM has no fused-op annotation,
so the converter turns it into a WHILE loop (and, full-integer, fails); see README.md beside the
models.  ``pip install tf-keras==<your TensorFlow version>`` for them.

Writes ``MANIFEST.json`` (one entry per model: architecture, regime, I/O dtypes, the operators in
the file, size, sha256, notes).  The TFLite Micro result and mcuforge's blockers of each model are
filled in by ``tools/check_keras_models.py --update`` (run in the project's venv, no TensorFlow);
entries of unchanged files keep them.  Regenerate::

    /opt/venv-tf/bin/python tools/gen_keras_models.py            # all models
    /opt/venv-tf/bin/python tools/gen_keras_models.py --only lstm
    /opt/venv-tf/bin/python tools/gen_keras_models.py --list
    python tools/check_keras_models.py --update                  # TFLM + mcuforge columns
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_fixtures import op_names  # noqa: E402  (same directory; imports no TensorFlow)

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "tests" / "fixtures" / "keras"
N_CALIB = 32  # representative-dataset samples per model
N_BN = 16  # samples of the batch-norm statistics pass

tf = None  # imported in main(): --help and --list work without TensorFlow


# --------------------------------------------------------------------------------------------
# variants: how a model is converted
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    suffix: str
    regime: str  # "int8", "int16x8", "int16x8 + float fallback"
    io: str  # "uint8", "int8", "int16", "float32"


U8 = Variant("u8", "int8", "uint8")
I8 = Variant("i8", "int8", "int8")
I16 = Variant("i16", "int16x8", "int16")
F32_16 = Variant("f32_16x8", "int16x8", "float32")
MIXED = Variant("16x8_float_fallback", "int16x8 + float fallback", "float32")


@dataclass
class Arch:
    name: str
    issue: int
    architecture: str
    inputs: list  # per input: (shape without batch, data kind, lo, hi)
    build: Callable  # build(k) -> keras.Model, k the keras module
    variants: list
    expect: list  # TFLite builtin ops the file must contain (checked after conversion)
    notes: str = ""
    keras: str = "keras"  # or "tf_keras"
    absent: list = field(default_factory=list)


ARCHS: list[Arch] = []


def arch(name, issue, architecture, inputs, variants, expect, **kw):
    def deco(build):
        if any(a.name == name for a in ARCHS):
            raise ValueError(f"duplicate architecture {name}")
        ARCHS.append(Arch(name, issue, architecture, inputs, build, list(variants), list(expect), **kw))
        return build

    return deco


# --------------------------------------------------------------------------------------------
# building blocks
# --------------------------------------------------------------------------------------------


def conv_bn(k, x, filters, kernel=3, strides=1, act="relu"):
    x = k.layers.Conv2D(filters, kernel, strides=strides, padding="same", use_bias=False)(x)
    x = k.layers.BatchNormalization()(x)
    return k.layers.Activation(act)(x) if act else x


def dw_sep(k, x, filters, strides=1):
    """MobileNetV1 depthwise-separable block."""
    x = k.layers.DepthwiseConv2D(3, strides=strides, padding="same", use_bias=False)(x)
    x = k.layers.BatchNormalization()(x)
    x = k.layers.ReLU(6.0)(x)
    return conv_bn(k, x, filters, 1, act="relu6")


def res_block(k, x, filters, strides):
    """CIFAR ResNet v1 basic block, 1x1 conv projection when the shape changes."""
    y = conv_bn(k, x, filters, 3, strides)
    y = conv_bn(k, y, filters, 3, 1, act=None)
    if strides != 1 or x.shape[-1] != filters:
        x = k.layers.Conv2D(filters, 1, strides=strides, padding="same")(x)
    return k.layers.Activation("relu")(k.layers.Add()([x, y]))


def cifar_resnet(k, blocks_per_stage):
    x = inp = k.Input(shape=(32, 32, 3))
    x = conv_bn(k, x, 16)
    for stage, filters in enumerate((16, 32, 64)):
        for b in range(blocks_per_stage):
            x = res_block(k, x, filters, 2 if stage > 0 and b == 0 else 1)
    x = k.layers.AveragePooling2D(pool_size=8)(x)
    x = k.layers.Flatten()(x)
    return k.Model(inp, k.layers.Dense(10, activation="softmax", name="logits")(x))


def fire(k, x, squeeze, expand):
    s = k.layers.Conv2D(squeeze, 1, activation="relu")(x)
    e1 = k.layers.Conv2D(expand, 1, activation="relu")(s)
    e3 = k.layers.Conv2D(expand, 3, padding="same", activation="relu")(s)
    return k.layers.Concatenate(axis=-1)([e1, e3])


# --------------------------------------------------------------------------------------------
# issue 12: int8 models, uint8 and int8 I/O
# --------------------------------------------------------------------------------------------

IMG01 = "image", 0.0, 1.0  # pixels / 255
IMG11 = "image", -1.0, 1.0  # MobileNet preprocessing: pixels / 127.5 - 1


@arch("mobilenet_v1_025_96", 12, "keras.applications.MobileNet(alpha=0.25, 96x96x3, weights=None, classes=2), "
      "as the visual-wake-words person detector", [((96, 96, 3), *IMG11)], [U8, I8],
      ["CONV_2D", "DEPTHWISE_CONV_2D", "MEAN", "SHAPE", "STRIDED_SLICE", "PACK", "RESHAPE", "SOFTMAX"])
def _(k):
    return k.applications.MobileNet(input_shape=(96, 96, 3), alpha=0.25, weights=None, classes=2)


@arch("mobilenet_v2_035_96", 12, "keras.applications.MobileNetV2(alpha=0.35, 96x96x3, weights=None, classes=2)",
      [((96, 96, 3), *IMG11)], [U8], ["CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "MEAN", "FULLY_CONNECTED", "SOFTMAX"],
      notes="uint8 I/O only, to keep the set small (the int8-I/O file is the same network without the two "
            "QUANTIZE ops)")
def _(k):
    return k.applications.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, weights=None, classes=2)


@arch("squeezenet_64", 12, "SqueezeNet 1.1-style (fire modules: 1x1 squeeze, 1x1 and 3x3 expand, concatenation), "
      "64x64x3, 10 classes, conv10 + global average pooling", [((64, 64, 3), *IMG01)], [U8, I8],
      ["CONV_2D", "MAX_POOL_2D", "CONCATENATION", "MEAN", "SOFTMAX"])
def _(k):
    x = inp = k.Input(shape=(64, 64, 3))
    x = k.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = k.layers.MaxPooling2D(3, strides=2)(x)
    x = fire(k, fire(k, x, 8, 32), 8, 32)
    x = k.layers.MaxPooling2D(3, strides=2)(x)
    x = fire(k, fire(k, x, 16, 64), 16, 64)
    x = k.layers.MaxPooling2D(3, strides=2)(x)
    x = fire(k, fire(k, x, 24, 96), 32, 128)
    x = k.layers.Dropout(0.5)(x)
    x = k.layers.Conv2D(10, 1, activation="relu")(x)
    x = k.layers.GlobalAveragePooling2D()(x)
    return k.Model(inp, k.layers.Activation("softmax")(x))


@arch("resnet8_cifar", 12, "ResNet-8 as in MLPerf Tiny image classification (3 stages of one basic block, "
      "16/32/64 filters), 32x32x3, 10 classes", [((32, 32, 3), *IMG01)], [U8, I8],
      ["CONV_2D", "ADD", "AVERAGE_POOL_2D", "SHAPE", "PACK", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"])
def _(k):
    return cifar_resnet(k, 1)


@arch("resnet32_cifar", 12, "ResNet-32 for CIFAR-10 (He et al. 2016: 3 stages of 5 basic blocks, 16/32/64 "
      "filters), 32x32x3, 10 classes", [((32, 32, 3), *IMG01)], [U8],
      ["CONV_2D", "ADD", "AVERAGE_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"],
      notes="uint8 I/O only, to keep the set small (resnet8_cifar has both I/O types and the same blocks)")
def _(k):
    return cifar_resnet(k, 5)


@arch("ssd_head_96", 12, "small SSD-style detector: depthwise-separable backbone to 12x12 and 6x6 maps, FPN-style "
      "UpSampling2D(bilinear) + concatenation, box and class conv heads per scale reshaped to [boxes, 4] / "
      "[boxes, 3] and concatenated over scales (540 anchors); outputs boxes and class softmax",
      [((96, 96, 3), *IMG01)], [U8, I8],
      ["CONV_2D", "DEPTHWISE_CONV_2D", "RESIZE_BILINEAR", "CONCATENATION", "RESHAPE", "SOFTMAX"])
def _(k):
    x = inp = k.Input(shape=(96, 96, 3))
    x = conv_bn(k, x, 16, 3, 2, "relu6")  # 48
    x = dw_sep(k, x, 32, 2)  # 24
    x = dw_sep(k, x, 48, 2)  # 12
    c12 = dw_sep(k, x, 64)
    c6 = dw_sep(k, dw_sep(k, c12, 96, 2), 96)  # 6
    up = k.layers.UpSampling2D(2, interpolation="bilinear")(conv_bn(k, c6, 64, 1))
    p12 = conv_bn(k, k.layers.Concatenate()([c12, up]), 64, 3)
    boxes, scores = [], []
    for f in (p12, c6):
        boxes.append(k.layers.Reshape((-1, 4))(k.layers.Conv2D(3 * 4, 3, padding="same")(f)))
        scores.append(k.layers.Reshape((-1, 3))(k.layers.Conv2D(3 * 3, 3, padding="same")(f)))
    boxes = k.layers.Concatenate(axis=1, name="boxes")(boxes)
    scores = k.layers.Softmax(name="scores")(k.layers.Concatenate(axis=1)(scores))
    return k.Model(inp, [boxes, scores])


def tiny_yolo(k, upsample):
    def cbl(x, f, kernel=3):
        x = k.layers.Conv2D(f, kernel, padding="same", use_bias=False)(x)
        return k.layers.LeakyReLU(negative_slope=0.1)(k.layers.BatchNormalization()(x))

    x = inp = k.Input(shape=(96, 96, 3))
    for f in (8, 16, 32):
        x = k.layers.MaxPooling2D(2)(cbl(x, f))  # 48, 24, 12
    c12 = cbl(x, 48)
    x = cbl(k.layers.MaxPooling2D(2)(c12), 96)  # 6
    r = cbl(x, 48, 1)
    head6 = k.layers.Conv2D(3 * 8, 1)(cbl(r, 64))
    up = upsample(cbl(r, 32, 1))
    head12 = k.layers.Conv2D(3 * 8, 1)(cbl(k.layers.Concatenate()([up, c12]), 48))
    rows = [k.layers.Reshape((-1, 8))(h) for h in (head6, head12)]
    return k.Model(inp, k.layers.Activation("sigmoid")(k.layers.Concatenate(axis=1)(rows)))


YOLO = ("tiny-YOLO-style detector: conv + max-pool backbone with LeakyReLU(0.1), two heads (6x6 and 12x12) joined by "
        "a 2x nearest upsampling + concatenation, each head reshaped to [cells*3, 5+3] and concatenated (540 rows), "
        "logistic on everything; ")


@arch("yolo_head_96", 12, YOLO + "upsampling with keras.layers.Resizing(12, 12, 'nearest')", [((96, 96, 3), *IMG01)],
      [U8, I8], ["CONV_2D", "LEAKY_RELU", "MAX_POOL_2D", "RESIZE_NEAREST_NEIGHBOR", "CONCATENATION", "RESHAPE",
                 "LOGISTIC"])
def _(k):
    return tiny_yolo(k, k.layers.Resizing(12, 12, interpolation="nearest"))


@arch("yolo_upsampling2d_96", 12, YOLO + "upsampling with keras.layers.UpSampling2D(2), which Keras 3 implements "
      "with repeat: EXPAND_DIMS -> TILE -> RESHAPE on the int8 feature map", [((96, 96, 3), *IMG01)], [I8],
      ["CONV_2D", "LEAKY_RELU", "MAX_POOL_2D", "EXPAND_DIMS", "TILE", "CONCATENATION", "RESHAPE", "LOGISTIC"],
      notes="TFLite Micro has no TILE kernel, so TFLM cannot run this file; yolo_head_96 is the same head with "
            "RESIZE_NEAREST_NEIGHBOR")
def _(k):
    return tiny_yolo(k, k.layers.UpSampling2D(2))


@arch("har_cnn1d", 12, "human-activity-recognition 1-D CNN (UCI-HAR-like: 128 time steps x 9 sensor channels): "
      "Conv1D x2, MaxPooling1D, Conv1D, GlobalMaxPooling1D, Dense, softmax over 6 activities",
      [((128, 9), "signal", -2.0, 2.0)], [I8, U8], ["CONV_2D", "MAX_POOL_2D", "REDUCE_MAX", "FULLY_CONNECTED",
                                                   "SOFTMAX"])
def _(k):
    x = inp = k.Input(shape=(128, 9))
    x = k.layers.Conv1D(32, 5, activation="relu")(x)
    x = k.layers.Conv1D(32, 5, activation="relu")(x)
    x = k.layers.MaxPooling1D(2)(x)
    x = k.layers.Conv1D(64, 3, activation="relu")(x)
    x = k.layers.GlobalMaxPooling1D()(x)
    x = k.layers.Dense(32, activation="relu")(x)
    return k.Model(inp, k.layers.Dense(6, activation="softmax", name="logits")(x))


@arch("lenet5_logsoftmax", 12, "LeNet-5 on 28x28x1 (conv 5x5 6, avg-pool, conv 5x5 16, avg-pool, Flatten, "
      "Dense 120/84/10) ending in Activation('log_softmax') (tf.nn.log_softmax), as PyTorch-style MNIST models do",
      [((28, 28, 1), *IMG01)], [U8, I8], ["CONV_2D", "AVERAGE_POOL_2D", "RESHAPE", "FULLY_CONNECTED",
                                          "LOG_SOFTMAX"])
def _(k):
    x = inp = k.Input(shape=(28, 28, 1))
    x = k.layers.Conv2D(6, 5, padding="same", activation="relu")(x)
    x = k.layers.AveragePooling2D(2)(x)
    x = k.layers.Conv2D(16, 5, activation="relu")(x)
    x = k.layers.AveragePooling2D(2)(x)
    x = k.layers.Flatten()(x)
    x = k.layers.Dense(120, activation="relu")(x)
    x = k.layers.Dense(84, activation="relu")(x)
    return k.Model(inp, k.layers.Activation("log_softmax")(k.layers.Dense(10, name="logits")(x)))


@arch("landmark_prelu_48", 12, "face-landmark regressor (MTCNN O-Net-like, 48x48x3): conv + PReLU (shared over "
      "H, W), a max-feature-map layer (tf.maximum of the two channel halves, LightCNN-style), max-pooling, "
      "Flatten, Dense + PReLU, 10 outputs (5 x,y points) clipped to [0, 1] with tf.minimum / tf.maximum",
      [((48, 48, 3), *IMG01)], [U8, I8], ["CONV_2D", "PRELU", "MAXIMUM", "MINIMUM", "MAX_POOL_2D",
                                          "FULLY_CONNECTED"])
def _(k):
    def prelu(x):
        return k.layers.PReLU(shared_axes=[1, 2] if len(x.shape) == 4 else None)(x)

    def mfm(x):  # max-feature-map: elementwise max of the two channel halves
        c = x.shape[-1] // 2
        return k.layers.Lambda(lambda t: tf.maximum(t[..., :c], t[..., c:]), output_shape=x.shape[1:-1] + (c,))(x)

    x = inp = k.Input(shape=(48, 48, 3))
    x = k.layers.MaxPooling2D(3, 2, padding="same")(prelu(k.layers.Conv2D(16, 3)(x)))  # 23
    x = k.layers.MaxPooling2D(3, 2)(mfm(k.layers.Conv2D(64, 3)(x)))  # 10
    x = k.layers.MaxPooling2D(2)(prelu(k.layers.Conv2D(48, 3)(x)))  # 4
    x = prelu(k.layers.Conv2D(64, 2)(x))  # 3
    x = prelu(k.layers.Dense(64)(k.layers.Flatten()(x)))
    pts = k.layers.Dense(10)(x)
    return k.Model(inp, k.layers.Lambda(lambda t: tf.minimum(tf.maximum(t, 0.0), 1.0), name="landmarks")(pts))


@arch("tconv_decoder_dynbatch", 12, "convolutional autoencoder / segmentation decoder: Conv2D s2 x2, then "
      "Conv2DTranspose s2 x2 and a 1x1 conv + sigmoid mask (32x32x3 -> 32x32x1). Keras' Conv2DTranspose builds "
      "its output shape from tf.shape(x)[0], so the dynamic batch gives SHAPE -> STRIDED_SLICE -> PACK feeding "
      "TRANSPOSE_CONV's output-shape input", [((32, 32, 3), *IMG01)], [U8, I8],
      ["CONV_2D", "SHAPE", "STRIDED_SLICE", "PACK", "TRANSPOSE_CONV", "LOGISTIC"])
def _(k):
    x = inp = k.Input(shape=(32, 32, 3))
    x = k.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    x = k.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu")(x)
    x = k.layers.Conv2DTranspose(16, 3, strides=2, padding="same", activation="relu")(x)
    x = k.layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu")(x)
    return k.Model(inp, k.layers.Conv2D(1, 1, activation="sigmoid")(x))


@arch("reshape_flatten_dynbatch", 12, "conv features reshaped to tokens (Reshape((64, 16))), a token-wise "
      "Conv1D(8, 1), Flatten and a Dense classifier: with the dynamic batch, Reshape and Flatten each become a "
      "SHAPE -> STRIDED_SLICE -> PACK chain feeding RESHAPE", [((16, 16, 3), *IMG01)], [U8, I8],
      ["CONV_2D", "SHAPE", "STRIDED_SLICE", "PACK", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"], absent=["REDUCE_PROD"])
def _(k):
    x = inp = k.Input(shape=(16, 16, 3))
    x = k.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)  # 8x8x16
    x = k.layers.Reshape((64, 16))(x)
    x = k.layers.Conv1D(8, 1, activation="relu")(x)
    x = k.layers.Flatten()(x)
    return k.Model(inp, k.layers.Dense(10, activation="softmax", name="logits")(x))


@arch("dense_rank3_dynbatch", 12, "the same tokens model with a Dense(8) on the rank-3 token tensor instead of the "
      "Conv1D: Keras' Dense on rank 3 is a tensordot, and with the dynamic batch its shapes come from a "
      "SHAPE -> GATHER -> REDUCE_PROD -> CONCATENATION / PACK chain around the FULLY_CONNECTED",
      [((16, 16, 3), *IMG01)], [I8],
      ["CONV_2D", "SHAPE", "GATHER", "REDUCE_PROD", "CONCATENATION", "PACK", "RESHAPE", "FULLY_CONNECTED"],
      notes="TFLite Micro has no REDUCE_PROD kernel, so TFLM cannot run this file (with all shapes folded "
            "it is an ordinary graph); users who target TFLM fix the batch (Input(batch_size=1)), as in "
            "svdf_style_kws")
def _(k):
    x = inp = k.Input(shape=(16, 16, 3))
    x = k.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    x = k.layers.Reshape((64, 16))(x)
    x = k.layers.Dense(8, activation="relu")(x)
    x = k.layers.Flatten()(x)
    return k.Model(inp, k.layers.Dense(10, activation="softmax", name="logits")(x))


@arch("classifier_1001_64", 12, "MobileNet-like tiny body (64x64x3, depthwise-separable blocks to 128 channels, "
      "global average pooling) ending in a 1001-way Dense + softmax, the ImageNet head size", [((64, 64, 3), *IMG11)],
      [I8], ["CONV_2D", "DEPTHWISE_CONV_2D", "MEAN", "FULLY_CONNECTED", "SOFTMAX"])
def _(k):
    x = inp = k.Input(shape=(64, 64, 3))
    x = conv_bn(k, x, 16, 3, 2, "relu6")
    for f, s in ((32, 1), (64, 2), (64, 1), (128, 2), (128, 1)):
        x = dw_sep(k, x, f, s)
    x = k.layers.GlobalAveragePooling2D()(x)
    x = k.layers.Dropout(0.2)(x)
    return k.Model(inp, k.layers.Dense(1001, activation="softmax", name="logits")(x))


# --------------------------------------------------------------------------------------------
# issue 15: 16x8 (int16 activations, int8 weights), LSTM, SVDF-style
# --------------------------------------------------------------------------------------------

MFCC = "features", -3.0, 3.0  # 49 frames x 10 MFCC, normalised


@arch("kws_dscnn_16x8", 15, "keyword-spotting DS-CNN (49x10x1 MFCC: conv 10x4 s2 + BN + ReLU, two depthwise-"
      "separable blocks, average pooling, Flatten, Dense, softmax over 12 words) in 16x8",
      [((49, 10, 1), *MFCC)], [I16, F32_16],
      ["CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"])
def _(k):
    x = inp = k.Input(shape=(49, 10, 1))
    x = conv_bn(k, x, 32, (10, 4), 2)
    for _ in range(2):
        x = k.layers.DepthwiseConv2D(3, padding="same", use_bias=False)(x)
        x = k.layers.Activation("relu")(k.layers.BatchNormalization()(x))
        x = conv_bn(k, x, 32, 1)
    x = k.layers.AveragePooling2D(pool_size=(25, 5))(x)
    x = k.layers.Flatten()(x)
    return k.Model(inp, k.layers.Dense(12, activation="softmax", name="logits")(x))


@arch("tasnet_tconv_16x8", 15, "streaming speech-enhancement frame (Conv-TasNet-like, a 256-sample audio frame as a "
      "1x256x1 image): Conv2D (1,16) stride (1,8) encoder, conv mask net with sigmoid, mask * encoding (MUL), "
      "Conv2DTranspose (1,16) stride (1,8) decoder (overlap-add) back to 1x256x1, in 16x8",
      [((1, 256, 1), "audio", -1.0, 1.0)], [I16, F32_16],
      ["CONV_2D", "LOGISTIC", "MUL", "TRANSPOSE_CONV"])
def _(k):
    x = inp = k.Input(shape=(1, 256, 1))
    enc = k.layers.Conv2D(32, (1, 16), strides=(1, 8), padding="same", activation="relu")(x)  # 1x32x32
    m = k.layers.Conv2D(32, (1, 3), padding="same", activation="relu")(enc)
    m = k.layers.Conv2D(32, (1, 3), padding="same", activation="sigmoid")(m)
    y = k.layers.Multiply()([enc, m])
    return k.Model(inp, k.layers.Conv2DTranspose(1, (1, 16), strides=(1, 8), padding="same")(y))


@arch("lstm_kws", 15, "keyword-spotting LSTM: 49 frames x 10 MFCC -> LSTM(32) -> Dense(12) softmax, int8 with "
      "the converter's integer LSTM (int16 gates and cell state). Built with tf_keras (Keras 2) and "
      "Input(batch_size=1) as the TFLite LSTM guide does: the fused UNIDIRECTIONAL_SEQUENCE_LSTM comes only from "
      "Keras 2's LSTM, and only with a static batch", [((49, 10), *MFCC)], [I8],
      ["UNIDIRECTIONAL_SEQUENCE_LSTM", "FULLY_CONNECTED", "SOFTMAX"], keras="tf_keras",
      notes="no 16x8 variant: the converter refuses it ('Quantization to 16x8-bit not yet supported for op: "
            "UNIDIRECTIONAL_SEQUENCE_LSTM'); with the float fallback op set it writes a model whose float LSTM has "
            "an int8 output and a non-variable state, which TFLM refuses")
def _(k):
    x = inp = k.Input(shape=(49, 10), batch_size=1)
    x = k.layers.LSTM(32)(x)
    return k.Model(inp, k.layers.Dense(12, activation="softmax", name="logits")(x))


@arch("svdf_style_kws", 15, "SVDF-style keyword model as Keras users write one (kws_streaming's SVDF: a per-frame "
      "Dense feature filter, then a DepthwiseConv1D over the time memory, bias + ReLU), two such layers, Flatten, "
      "Dense(12) softmax, batch fixed to 1 as streaming models are. The converter does not fuse this into SVDF",
      [((49, 10), *MFCC)], [I8, I16], ["FULLY_CONNECTED", "DEPTHWISE_CONV_2D", "SOFTMAX"],
      absent=["SVDF", "REDUCE_PROD"],
      notes="no converter path makes the SVDF op from TensorFlow / Keras (tensorflow/tensorflow#63035, "
            "tflite-micro#2529): an SVDF model has to be built by hand")
def _(k):
    x = inp = k.Input(shape=(49, 10), batch_size=1)
    for units, memory in ((32, 8), (32, 8)):
        x = k.layers.Dense(units, use_bias=False)(x)  # feature filter, rank 1
        x = k.layers.DepthwiseConv1D(memory, activation="relu")(x)  # time filter + bias
    x = k.layers.Flatten()(x)
    return k.Model(inp, k.layers.Dense(12, activation="softmax", name="logits")(x))


@arch("speaker_embedding", 15, "mixed int16 / float model: a small speaker-embedding conv net (49x10x1 MFCC, "
      "conv + depthwise-separable block, global average pooling, Dense(32) embedding) in 16x8, ending in "
      "tf.math.l2_normalize, which the 16x8 quantizer refuses, so with the float fallback op set it stays float "
      "behind a DEQUANTIZE", [((49, 10, 1), *MFCC)], [MIXED],
      ["QUANTIZE", "CONV_2D", "DEPTHWISE_CONV_2D", "MEAN", "FULLY_CONNECTED", "DEQUANTIZE", "L2_NORMALIZATION"],
      notes="the converter makes no model with both int8 and int16 activations (no per-layer activation type); "
            "an int8 / int16 mix has to be built by hand")
def _(k):
    x = inp = k.Input(shape=(49, 10, 1))
    x = conv_bn(k, x, 24, (10, 4), 2)
    x = k.layers.DepthwiseConv2D(3, padding="same", use_bias=False)(x)
    x = conv_bn(k, k.layers.Activation("relu")(k.layers.BatchNormalization()(x)), 32, 1)
    x = k.layers.Dense(32)(k.layers.GlobalAveragePooling2D()(x))
    return k.Model(inp, k.layers.Lambda(lambda t: tf.math.l2_normalize(t, axis=-1), name="embedding")(x))


# --------------------------------------------------------------------------------------------
# weights and data
# --------------------------------------------------------------------------------------------


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


def sample(kind: str, shape: tuple, lo: float, hi: float, rng: np.random.Generator) -> np.ndarray:
    """One seeded input of the given kind, in [lo, hi]."""
    if kind == "image":  # smooth blobs (low-resolution noise upsampled) plus fine noise
        h, w, c = shape
        coarse = rng.uniform(0.0, 1.0, size=((h + 7) // 8, (w + 7) // 8, c))
        img = np.repeat(np.repeat(coarse, 8, axis=0), 8, axis=1)[:h, :w]
        x = 0.8 * img + 0.2 * rng.uniform(0.0, 1.0, size=shape)
    elif kind in ("signal", "audio"):  # a few sinusoids per channel plus noise
        t = np.arange(shape[-2] if kind == "audio" else shape[0])[:, None]
        n_ch = shape[-1]
        f = rng.uniform(0.01, 0.2, size=(1, n_ch))
        ph = rng.uniform(0, 2 * np.pi, size=(1, n_ch))
        x = np.sin(2 * np.pi * f * t + ph) + 0.3 * rng.normal(size=(t.shape[0], n_ch))
        x = (x - x.min()) / (x.max() - x.min())
        x = x.reshape(shape)
    else:  # features: roughly normal, clipped
        x = np.clip(rng.normal(0.5, 0.2, size=shape), 0.0, 1.0)
    return (lo + (hi - lo) * x).astype(np.float32)


def calib_set(a: Arch, n: int, salt: int) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed_of(a.name) ^ salt)
    out = []
    for i in range(n):
        s = []
        for shape, kind, lo, hi in a.inputs:
            x = sample(kind, shape, lo, hi, rng)
            if i == 0:  # the calibrated input range spans exactly [lo, hi]
                x.reshape(-1)[0], x.reshape(-1)[-1] = lo, hi
            s.append(x[None])
        out.append(s)
    return out


OUT_AXIS = {"Dense": -1, "Conv1D": -1, "Conv2D": -1, "DepthwiseConv2D": -2, "DepthwiseConv1D": -2,
            "Conv2DTranspose": -2}


def perturb(model, rng: np.random.Generator) -> None:
    """Make a freshly initialised model look trained: random biases, BN affine and PReLU slopes,
    kernels with a different scale per output channel."""
    for layer in model.layers:
        kind = type(layer).__name__
        ws = layer.get_weights()
        if not ws:
            continue
        if kind == "BatchNormalization":  # gamma, beta, moving mean, moving variance
            g, b, m, v = ws
            layer.set_weights([rng.uniform(0.6, 1.6, g.shape).astype(np.float32),
                               rng.normal(0.0, 0.2, b.shape).astype(np.float32), m, v])
        elif kind == "PReLU":
            layer.set_weights([rng.uniform(0.05, 0.35, ws[0].shape).astype(np.float32)])
        elif kind in OUT_AXIS:
            w = ws[0]
            axis = OUT_AXIS[kind] % w.ndim
            shape = [w.shape[d] if d == axis else 1 for d in range(w.ndim)]
            new = [w * rng.uniform(0.5, 1.5, shape).astype(np.float32)]
            new += [rng.normal(0.0, 0.1, b.shape).astype(np.float32) for b in ws[1:]]
            layer.set_weights(new)
        elif kind == "LSTM":  # kernel, recurrent kernel, bias (unit forget bias kept)
            new = ws[:2] + [(ws[2] + rng.normal(0.0, 0.1, ws[2].shape)).astype(np.float32)]
            layer.set_weights(new)


def set_bn_statistics(model, batch: list[np.ndarray]) -> None:
    """Batch-norm moving statistics from one forward pass in training mode with momentum 0, so the
    folded convolutions normalise their outputs as trained ones do."""
    bns = [l for l in model.layers if type(l).__name__ == "BatchNormalization"]
    if not bns:
        return
    saved = [l.momentum for l in bns]
    for l in bns:
        l.momentum = 0.0
    model(batch if len(batch) > 1 else batch[0], training=True)
    for l, m in zip(bns, saved):
        l.momentum = m


LOGITS = ("logits", "predictions", "conv_preds")  # final classifier layers (ours, keras.applications')


def calibrate_logits(k, model, batch: list[np.ndarray], rng: np.random.Generator, std: float = 1.5) -> None:
    """Rescale the final classifier layer so that its logits on calibration data are centred per class
    with spread `std` (plus a small random offset per class), as in a trained classifier: with random
    weights they are far too large and every softmax output would be 0 or 1."""
    for layer in model.layers:
        if layer.name not in LOGITS or len(layer.get_weights()) != 2:
            continue
        w, b = layer.get_weights()
        feats = k.Model(model.inputs, layer.input)(batch if len(batch) > 1 else batch[0])
        x = np.asarray(feats).reshape(-1, w.shape[-2] if w.ndim == 4 else w.shape[0])
        z = x @ w.reshape(x.shape[1], -1) + b
        s = std / max(float(z.std()), 1e-6)
        offset = rng.normal(0.0, 0.3 * std, size=b.shape)
        layer.set_weights([(w * s).astype(np.float32), ((b - z.mean(axis=0)) * s + offset).astype(np.float32)])


def keras_module(a: Arch):
    if a.keras == "tf_keras":
        try:
            import tf_keras
        except ImportError:
            raise RuntimeError(f"{a.name} needs tf_keras: pip install tf-keras=={tf.__version__}") from None
        return tf_keras
    import keras

    return keras


def build_model(a: Arch):
    k = keras_module(a)
    k.backend.clear_session()  # layer and tensor names (kept in the file) restart for every model
    k.utils.set_random_seed(seed_of(a.name) & 0x7FFFFFFF)
    model = a.build(k)
    perturb(model, np.random.default_rng(seed_of(a.name) ^ 0xB1A5))
    bn = calib_set(a, N_BN, 0xB0B)
    batch = [np.concatenate([s[i] for s in bn]) for i in range(len(a.inputs))]
    set_bn_statistics(model, batch)
    calibrate_logits(k, model, batch, np.random.default_rng(seed_of(a.name) ^ 0x1061))
    return model


# --------------------------------------------------------------------------------------------
# conversion
# --------------------------------------------------------------------------------------------

REGIME_OPS = {  # quantization regime -> converter.target_spec.supported_ops (tf.lite.OpsSet names)
    "int8": ["TFLITE_BUILTINS_INT8"],
    "int16x8": ["EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8"],
    # 16x8 where possible, float kernels for the ops the 16x8 quantizer refuses
    "int16x8 + float fallback": ["EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8", "TFLITE_BUILTINS"],
}


def convert(a: Arch, model, v: Variant) -> bytes:
    c = tf.lite.TFLiteConverter.from_keras_model(model)
    c.optimizations = [tf.lite.Optimize.DEFAULT]
    calib = calib_set(a, N_CALIB, 0x5EED)
    c.representative_dataset = lambda: iter(calib)
    c.target_spec.supported_ops = [getattr(tf.lite.OpsSet, n) for n in REGIME_OPS[v.regime]]
    if v.io != "float32":
        c.inference_input_type = getattr(tf, v.io)
        c.inference_output_type = getattr(tf, v.io)
    return bytes(c.convert())


def converter_settings(v: Variant) -> dict:
    s = {"optimizations": ["DEFAULT"], "representative_dataset": f"{N_CALIB} seeded samples",
         "supported_ops": REGIME_OPS[v.regime]}
    if v.io != "float32":
        s["inference_input_type"] = s["inference_output_type"] = v.io
    return s


def describe(blob: bytes) -> dict:
    """Operators (all subgraphs, execution order, deduplicated) and the I/O tensors of a model."""
    from tensorflow.lite.python import schema_py_generated as schema

    type2name = {v: k.lower() for k, v in vars(schema.TensorType).items() if not k.startswith("_")}
    m = schema.Model.GetRootAsModel(blob, 0)
    sg = m.Subgraphs(0)

    def io(ix):
        t = sg.Tensors(int(ix))
        return {"dtype": type2name[t.Type()], "shape": [int(d) for d in t.ShapeAsNumpy()],
                "shape_signature": [int(d) for d in t.ShapeSignatureAsNumpy()] if t.ShapeSignatureLength() else None}

    return {"ops": op_names(blob), "subgraphs": m.SubgraphsLength(), "inputs": [io(i) for i in sg.InputsAsNumpy()],
            "outputs": [io(i) for i in sg.OutputsAsNumpy()]}


def entry_for(a: Arch, v: Variant, fname: str, blob: bytes, info: dict, k_version: str) -> dict:
    return {
        "name": f"{a.name}_{v.suffix}", "file": fname, "issue": a.issue, "architecture": a.architecture,
        "keras": k_version, "quantization": v.regime, "converter": converter_settings(v),
        "input_dtypes": [t["dtype"] for t in info["inputs"]], "output_dtypes": [t["dtype"] for t in info["outputs"]],
        "input_shapes": [t["shape"] for t in info["inputs"]], "output_shapes": [t["shape"] for t in info["outputs"]],
        "input_signatures": [t["shape_signature"] for t in info["inputs"]], "subgraphs": info["subgraphs"],
        "ops": info["ops"], "bytes": len(blob), "sha256": hashlib.sha256(blob).hexdigest(), "notes": a.notes,
        "tflm": None, "mcuforge_blockers": None,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="output directory (default: tests/fixtures/keras)")
    ap.add_argument("--only", default=None, help="only architectures whose name contains this substring")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    args = ap.parse_args(argv)

    selected = [a for a in ARCHS if args.only is None or args.only in a.name]
    if args.list:
        for a in selected:
            print(f"{a.name:28s} issue {a.issue}  {' '.join(v.suffix for v in a.variants):24s} {a.architecture[:70]}")
        return 0
    if not selected:
        print(f"no architecture matches {args.only!r}", file=sys.stderr)
        return 2

    global tf
    import tensorflow as _tf

    tf = _tf
    tf.get_logger().setLevel("ERROR")
    tf.config.experimental.enable_op_determinism()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "MANIFEST.json"
    old = {e["name"]: e for e in json.loads(manifest_path.read_text())} if manifest_path.exists() else {}
    entries = dict(old) if args.only is not None else {}

    failures, t0 = [], time.time()
    for a in selected:
        new, failed = generate(a, out, old)
        entries.update(new)
        failures += failed
    manifest = write_manifest(out, entries)
    total = sum((out / e["file"]).stat().st_size for e in manifest if (out / e["file"]).exists())
    print(f"{len(manifest)} models in the manifest, {total / 1024:.0f} KiB; {time.time() - t0:.0f}s. "
          f"Now run: python tools/check_keras_models.py --update")
    for f in failures:
        print("FAILED:", f, file=sys.stderr)
    return 1 if failures else 0


def generate(a: Arch, out: Path, old: dict) -> tuple[dict, list[str]]:
    """Build one architecture, convert and write each of its variants: ({name: manifest entry}, failures).
    An entry whose file did not change keeps the TFLM / mcuforge results of `old`."""
    t = time.time()
    try:
        model = build_model(a)
        k_version = f"{a.keras} {keras_module(a).__version__}"
    except Exception as e:  # noqa: BLE001 - reported per architecture, the others still run
        print(f"FAIL {a.name}: build failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
        return {}, [f"{a.name}: build failed: {type(e).__name__}: {str(e)[:300]}"]
    entries, failures = {}, []
    for v in a.variants:
        name = f"{a.name}_{v.suffix}"
        try:
            blob = convert(a, model, v)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{name}: conversion failed: {type(e).__name__}: {str(e)[-300:]}")
            print("FAIL", failures[-1], flush=True)
            continue
        info = describe(blob)
        missing = [o for o in a.expect + (["QUANTIZE"] if v.io == "uint8" else []) if o not in info["ops"]]
        present = [o for o in a.absent if o in info["ops"]]
        if missing or present:  # written all the same, to look at
            failures.append(f"{name}: ops {info['ops']}; missing expected {missing}; unexpected {present}")
        fname = f"{name}.tflite"
        (out / fname).write_bytes(blob)
        e = entry_for(a, v, fname, blob, info, k_version)
        prev = old.get(name)
        if prev is not None and prev.get("sha256") == e["sha256"]:
            e["tflm"], e["mcuforge_blockers"] = prev.get("tflm"), prev.get("mcuforge_blockers")
        entries[name] = e
        status = "FAIL" if missing or present else "ok  "
        print(f"{status} {name:40s} {len(blob):8d} B  {time.time() - t:5.1f}s  {' '.join(info['ops'])}", flush=True)
    return entries, failures


def write_manifest(out: Path, entries: dict) -> list[dict]:
    """MANIFEST.json in the order of the architecture table; warns about files no model makes."""
    order = {f"{a.name}_{v.suffix}": i for i, (a, v) in enumerate((a, v) for a in ARCHS for v in a.variants)}
    manifest = sorted(entries.values(), key=lambda e: (order.get(e["name"], len(order)), e["name"]))
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    stale = sorted(p.name for p in out.glob("*.tflite") if p.stem not in order)
    if stale:
        print(f"warning: files in {out} not produced by any model: {stale}", file=sys.stderr)
    return manifest


if __name__ == "__main__":
    sys.exit(main())
