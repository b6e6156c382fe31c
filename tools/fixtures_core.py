"""Fixture table "core" (issue 12): operators with several outputs and PACK, as TensorFlow graphs
convert them (tf.split, tf.split with sizes, tf.unstack, tf.stack), and the shape sub-graphs of a
dynamic batch (SHAPE -> STRIDED_SLICE -> PACK feeding RESHAPE and TRANSPOSE_CONV). Registered into
tools/gen_fixtures.py's table; manifest MANIFEST.core.json. Generate with

    /opt/venv-tf/bin/python tools/gen_fixtures.py --only core_
"""

import gen_fixtures
from gen_fixtures import fixture


@fixture("core_split_3_channels", "SPLIT into 3 equal parts along the channels, each part an output",
         [(1, 6, 6, 12)], [(-2.0, 2.0)], ["SPLIT"])
def _(W):
    return lambda x: tuple(gen_fixtures.tf.split(x, 3, axis=-1))


@fixture("core_split_v_rows", "SPLIT_V into rows of 2, 5 and 1 along H; the middle part max-pooled",
         [(1, 8, 4, 3)], [(-1.0, 3.0)], ["SPLIT_V", "MAX_POOL_2D"])
def _(W):
    def f(x):
        a, b, c = gen_fixtures.tf.split(x, [2, 5, 1], axis=1)
        return a, gen_fixtures.tf.nn.max_pool2d(b, 2, 1, "VALID"), c

    return f


@fixture("core_unpack_time", "UNPACK of a [1, 3, 8] sequence along time into three [1, 8] frames",
         [(1, 3, 8)], [(-1.0, 1.0)], ["UNPACK"])
def _(W):
    return lambda x: tuple(gen_fixtures.tf.unstack(x, axis=1))


@fixture("core_pack_slices", "PACK of three slices of the input along a new axis 1 (STRIDED_SLICE x3 -> PACK)",
         [(1, 12)], [(-4.0, 4.0)], ["PACK"])
def _(W):
    return lambda x: gen_fixtures.tf.stack([x[:, 0:4], x[:, 4:8], x[:, 8:12]], axis=1)


@fixture("core_flatten_dynamic_batch", "dynamic batch: RESHAPE to PACK(SHAPE(x)[0], 128) after a CONV_2D, as "
         "Keras' Flatten (SHAPE -> STRIDED_SLICE -> PACK, folded at compile time), then FULLY_CONNECTED",
         [(1, 4, 4, 3)], [(-1.0, 1.0)], ["SHAPE", "STRIDED_SLICE", "PACK", "RESHAPE"], dynamic_batch=True)
def _(W):
    w, b, fc = W.filt(3, 3, 3, 8), W.bias(8), W.filt(128, 10, ch_axes=(-1,))
    tf = gen_fixtures.tf

    def f(x):
        y = tf.nn.relu(tf.nn.bias_add(gen_fixtures.conv(x, w), b))
        y = tf.reshape(y, tf.stack([tf.shape(y)[0], 128]))
        return tf.matmul(y, fc)

    return f


@fixture("core_transpose_conv_dynamic_batch", "dynamic batch: TRANSPOSE_CONV whose output shape is "
         "PACK(SHAPE(x)[0], 8, 8, 4), as Keras' Conv2DTranspose", [(1, 4, 4, 6)], [(-1.0, 1.0)],
         ["SHAPE", "PACK", "TRANSPOSE_CONV"], dynamic_batch=True)
def _(W):
    w = W.filt(3, 3, 4, 6, ch_axes=(-2,))
    tf = gen_fixtures.tf

    def f(x):
        shape = tf.stack([tf.shape(x)[0], 8, 8, 4])
        return tf.nn.conv2d_transpose(x, w, shape, strides=2, padding="SAME")

    return f
