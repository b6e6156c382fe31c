#!/usr/bin/env python3
"""Generate the models of the per-layer benchmark (benchmarks/layers.py) in benchmarks/models/.

Real architectures beyond MLPerf Tiny that exercise the depthwise kernels' cases, built and
converted exactly like the Keras fixtures (tools/gen_keras_models.py: seeded weights made to look
trained, seeded calibration, TFLiteConverter with full int8 and int8 I/O), with one difference: a
fixed batch of 1 (``keras.Input(..., batch_size=1)``), so that the converter folds the shape
sub-graphs a dynamic batch leaves (SHAPE / PACK, which mcuforge does not take yet).

    /opt/venv-tf/bin/python benchmarks/gen_layer_models.py [--only NAME] [--list]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))
import gen_keras_models as g  # noqa: E402  (TensorFlow is imported in main)

OUT = HERE / "models"
MODELS: list[g.Arch] = []


def model(name, architecture, inputs, expect):
    def deco(build):
        MODELS.append(g.Arch(name, 16, architecture, inputs, build, [g.I8], list(expect)))
        return build

    return deco


def inp(k, shape):
    return k.Input(shape=shape, batch_size=1)


def dw(k, x, kernel=3, strides=1, mult=1, act="relu6"):
    x = k.layers.DepthwiseConv2D(kernel, strides=strides, padding="same", depth_multiplier=mult, use_bias=False)(x)
    x = k.layers.BatchNormalization()(x)
    return k.layers.ReLU(6.0)(x) if act == "relu6" else k.layers.Activation(act)(x)


def pw(k, x, filters, act="relu6"):
    x = k.layers.Conv2D(filters, 1, use_bias=False)(x)
    x = k.layers.BatchNormalization()(x)
    if act is None:
        return x
    return k.layers.ReLU(6.0)(x) if act == "relu6" else k.layers.Activation(act)(x)


def head(k, x, classes):
    x = k.layers.GlobalAveragePooling2D()(x)
    return k.layers.Dense(classes, name="logits")(x)


@model("mobilenet_v1_025_96", "keras.applications.MobileNet(alpha=0.25), 96x96x3, batch 1, 2 classes",
       [((96, 96, 3), "image", -1.0, 1.0)], ["DEPTHWISE_CONV_2D", "CONV_2D"])
def _(k):
    return k.applications.MobileNet(input_tensor=inp(k, (96, 96, 3)), alpha=0.25, weights=None, classes=2,
                                    classifier_activation=None)


@model("dscnn_dw1ch_kws", "DS-CNN keyword model whose first layer is a depthwise 10x4 stride 2 over the one MFCC "
       "channel with depth multiplier 8, then 1x1 to 64 and four 3x3 depthwise-separable blocks",
       [((49, 10, 1), "features", -2.0, 2.0)], ["DEPTHWISE_CONV_2D", "CONV_2D", "FULLY_CONNECTED"])
def _(k):
    x0 = inp(k, (49, 10, 1))
    x = dw(k, x0, (10, 4), 2, mult=8, act="relu")
    x = pw(k, x, 64, "relu")
    for _ in range(4):
        x = pw(k, dw(k, x, 3, act="relu"), 64, "relu")
    return k.Model(x0, head(k, x, 12))


@model("person_gray_dw1ch", "grayscale person detector: a depthwise 3x3 stride 2 with depth multiplier 8 on the "
       "96x96 image, then MobileNetV1 blocks (16 to 128 channels)",
       [((96, 96, 1), "image", -1.0, 1.0)], ["DEPTHWISE_CONV_2D", "CONV_2D"])
def _(k):
    x0 = inp(k, (96, 96, 1))
    x = dw(k, x0, 3, 2, mult=8)
    for filters, s in ((16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1)):
        x = pw(k, dw(k, x, 3, s), filters)
    return k.Model(x0, head(k, x, 2))


@model("tcn_kws_kx1", "temporal-convolution keyword model on 98 MFCC frames as a 98x1 map of 40 channels: "
       "1x1 to 64, then separable blocks of a 9x1 depthwise (stride 2 in two) and a 1x1, residual where shapes allow",
       [((98, 1, 40), "features", -2.0, 2.0)], ["DEPTHWISE_CONV_2D", "CONV_2D", "ADD"])
def _(k):
    x0 = inp(k, (98, 1, 40))
    x = pw(k, x0, 64, "relu")
    for s in (1, 2, 1, 2, 1):
        y = pw(k, dw(k, x, (9, 1), s, act="relu"), 64, None)  # TensorFlow takes equal strides only
        x = k.layers.ReLU()(k.layers.Add()([x, y]) if s == 1 else y)
    return k.Model(x0, head(k, x, 12))


@model("factorized_kx1_2d", "factorized depthwise on 2D maps: 5x1 then 1x5 depthwise pairs between 1x1s "
       "(32x32x24 to 16x16x48)", [((32, 32, 3), "image", -1.0, 1.0)], ["DEPTHWISE_CONV_2D", "CONV_2D"])
def _(k):
    x0 = inp(k, (32, 32, 3))
    x = k.layers.ReLU(6.0)(k.layers.BatchNormalization()(k.layers.Conv2D(24, 3, padding="same", use_bias=False)(x0)))
    for filters, s in ((24, 1), (48, 2), (48, 1)):
        x = dw(k, x, (5, 1), s)  # TensorFlow takes equal strides only
        x = dw(k, x, (1, 5), 1)
        x = pw(k, x, filters)
    return k.Model(x0, head(k, x, 10))


@model("mnas_5x5", "MnasNet-like blocks with 5x5 and 3x3 depthwise (expansion 3), 64x64x3 input",
       [((64, 64, 3), "image", -1.0, 1.0)], ["DEPTHWISE_CONV_2D", "CONV_2D", "ADD"])
def _(k):
    x0 = inp(k, (64, 64, 3))
    x = k.layers.ReLU()(k.layers.BatchNormalization()(k.layers.Conv2D(16, 3, 2, padding="same", use_bias=False)(x0)))
    for filters, kern, s in ((16, 3, 1), (24, 5, 2), (24, 5, 1), (40, 3, 2), (40, 5, 1)):
        y = pw(k, x, 3 * x.shape[-1], "relu")
        y = pw(k, dw(k, y, kern, s, act="relu"), filters, None)
        x = k.layers.Add()([x, y]) if s == 1 and x.shape[-1] == filters else y
    return k.Model(x0, head(k, x, 10))


@model("dw_mult_net", "depth multipliers above 1: a 3x3 depthwise with multiplier 4 on the RGB image, then "
       "blocks with multiplier 2 (48x48)", [((48, 48, 3), "image", -1.0, 1.0)], ["DEPTHWISE_CONV_2D", "CONV_2D"])
def _(k):
    x0 = inp(k, (48, 48, 3))
    x = dw(k, x0, 3, 1, mult=4)
    x = pw(k, x, 16)
    for filters, s in ((32, 2), (32, 1), (64, 2)):
        x = pw(k, dw(k, x, 3, s, mult=2), filters)
    return k.Model(x0, head(k, x, 4))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=None)
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    chosen = [a for a in MODELS if args.only is None or args.only in a.name]
    if args.list:
        for a in chosen:
            print(f"{a.name:24s} {a.architecture}")
        return 0
    import tensorflow as tf

    g.tf = tf
    tf.get_logger().setLevel("ERROR")
    tf.config.experimental.enable_op_determinism()
    OUT.mkdir(exist_ok=True)
    for a in chosen:
        blob = g.convert(a, g.build_model(a), g.I8)
        ops = g.op_names(blob)
        missing = [op for op in a.expect if op not in ops]
        if missing:
            print(f"{a.name}: the converted file lacks {missing}", file=sys.stderr)
            return 1
        (OUT / f"{a.name}_i8.tflite").write_bytes(blob)
        print(f"{a.name}_i8.tflite: {len(blob):,} bytes, {' '.join(ops)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
