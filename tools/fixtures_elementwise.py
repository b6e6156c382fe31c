"""Fixture table of the element-wise ops (tools/gen_fixtures.py loads it; MANIFEST.elementwise.json):
TensorFlow-made int8 models as users make them, single ops and small nets, for PRELU, SQUARED_DIFFERENCE,
DIV, ABS, RSQRT, ELU, NEG, FLOOR, ROUND (the last four come out of the converter as float32 kernels
between a DEQUANTIZE and a QUANTIZE), LOG_SOFTMAX, L2_NORMALIZATION, the comparisons, SELECT_V2, CAST and
int32 ADD / MUL, plus a LeNet ending in log_softmax and a landmark-style net with PReLU.

    /opt/venv-tf/bin/python tools/gen_fixtures.py --only elem_

(int8 SQRT, EXP and LOG are left out: the converter emits them, but TFLM has no int8 kernel for them.)
"""

from __future__ import annotations

import gen_fixtures as g
from gen_fixtures import conv, dwconv, fixture


def _prelu(W, channels: int, shared_axes=(1, 2)):
    """A Keras PReLU layer (built outside the traced function) with seeded alphas, some negative."""
    import tensorflow as tf

    alpha = W.uniform((channels,), -0.2, 0.6)
    layer = tf.keras.layers.PReLU(alpha_initializer=tf.keras.initializers.Constant(alpha),
                                  shared_axes=list(shared_axes))
    layer.build((1, 1, 1, channels))
    return layer


@fixture("elem_prelu_per_channel", "Keras PReLU (per-channel alphas shared over H and W) on [1,6,6,8]",
         [(1, 6, 6, 8)], [(-3.0, 3.0)], ["PRELU"])
def _(W):
    layer = _prelu(W, 8)
    return lambda x: layer(x)


@fixture("elem_prelu_landmark_net", "landmark-style net: conv s2 + PReLU, depthwise + PReLU, two 1x1 conv branches "
         "(one with PReLU) merged by MAXIMUM and MINIMUM, dense to 10 landmark coordinates squashed to [0, 1] by a "
         "sigmoid", [(1, 24, 24, 3)], [(0.0, 1.0)],
         ["CONV_2D", "PRELU", "DEPTHWISE_CONV_2D", "MAXIMUM", "MINIMUM", "FULLY_CONNECTED", "LOGISTIC"])
def _(W):
    tf = g.tf
    w1, b1, p1 = W.filt(3, 3, 3, 8), W.bias(8), _prelu(W, 8)
    w2, b2, p2 = W.filt(3, 3, 8, 1, ch_axes=(-2, -1)), W.bias(8), _prelu(W, 8)
    w3, b3, p3 = W.filt(1, 1, 8, 16), W.bias(16), _prelu(W, 16)
    w4, b4 = W.filt(1, 1, 8, 16), W.bias(16)
    wd, bd = W.filt(6 * 6 * 16, 10, gain=0.5), W.bias(10, 0.1)

    def f(x):
        y = p1(tf.nn.bias_add(conv(x, w1, 2), b1))
        y = p2(tf.nn.bias_add(dwconv(y, w2, 2), b2))
        a = p3(tf.nn.bias_add(conv(y, w3), b3))
        b = tf.nn.bias_add(conv(y, w4), b4)
        y = tf.maximum(a, b) - 0.5 * tf.minimum(a, b)
        y = tf.matmul(tf.reshape(y, (1, 6 * 6 * 16)), wd) + bd
        return tf.nn.sigmoid(y)

    return f


@fixture("elem_lenet_log_softmax", "LeNet-5 style classifier: conv 5x5 + relu, max pool, conv 5x5 + relu, max "
         "pool, dense 120 / 84 + relu, dense 10, tf.nn.log_softmax", [(1, 28, 28, 1)], [(0.0, 1.0)],
         ["CONV_2D", "MAX_POOL_2D", "FULLY_CONNECTED", "LOG_SOFTMAX"])
def _(W):
    tf = g.tf
    w1, b1 = W.filt(5, 5, 1, 6), W.bias(6)
    w2, b2 = W.filt(5, 5, 6, 16), W.bias(16)
    f1, c1 = W.filt(4 * 4 * 16, 120), W.bias(120)
    f2, c2 = W.filt(120, 84), W.bias(84)
    f3, c3 = W.filt(84, 10), W.bias(10)

    def f(x):
        y = tf.nn.max_pool2d(tf.nn.relu(tf.nn.bias_add(conv(x, w1, padding="VALID"), b1)), 2, 2, "VALID")
        y = tf.nn.max_pool2d(tf.nn.relu(tf.nn.bias_add(conv(y, w2, padding="VALID"), b2)), 2, 2, "VALID")
        y = tf.reshape(y, (1, 4 * 4 * 16))
        y = tf.nn.relu(tf.matmul(y, f1) + c1)
        y = tf.nn.relu(tf.matmul(y, f2) + c2)
        return tf.nn.log_softmax(tf.matmul(y, f3) + c3)

    return f


@fixture("elem_log_softmax_rank3", "tf.nn.log_softmax over the last axis of a [2,5,12] tensor", [(2, 5, 12)],
         [(-4.0, 4.0)], ["LOG_SOFTMAX"])
def _(W):
    return lambda x: g.tf.nn.log_softmax(x)


@fixture("elem_l2_normalization", "tf.math.l2_normalize over the channels of [1,4,4,8]", [(1, 4, 4, 8)],
         [(-2.0, 2.0)], ["L2_NORMALIZATION"])
def _(W):
    return lambda x: g.tf.math.l2_normalize(x, axis=-1)


@fixture("elem_squared_difference", "tf.math.squared_difference of [1,4,4,8] and a [1,1,1,8] input (broadcast)",
         [(1, 4, 4, 8), (1, 1, 1, 8)], [(-2.0, 2.0), (-1.0, 1.0)], ["SQUARED_DIFFERENCE"])
def _(W):
    return lambda x, y: g.tf.math.squared_difference(x, y)


@fixture("elem_div", "x / (|y| + 1) on [1,4,4,8] (ABS, ADD, DIV)", [(1, 4, 4, 8), (1, 4, 4, 8)],
         [(-3.0, 3.0), (-3.0, 3.0)], ["ABS", "DIV"])
def _(W):
    tf = g.tf
    return lambda x, y: x / (tf.abs(y) + 1.0)


@fixture("elem_abs_rsqrt", "tf.math.rsqrt(|x| + 0.1) (ABS, ADD, RSQRT)", [(1, 4, 4, 8)], [(-3.0, 3.0)],
         ["ABS", "RSQRT"])
def _(W):
    tf = g.tf
    return lambda x: tf.math.rsqrt(tf.abs(x) + 0.1)


@fixture("elem_elu_float", "tf.nn.elu after a conv (the converter keeps ELU in float32 between DEQUANTIZE and "
         "QUANTIZE)", [(1, 6, 6, 3)], [(-1.0, 1.0)], ["CONV_2D", "DEQUANTIZE", "ELU", "QUANTIZE"])
def _(W):
    tf = g.tf
    w, b = W.filt(3, 3, 3, 8), W.bias(8)
    return lambda x: tf.nn.elu(tf.nn.bias_add(conv(x, w), b))


@fixture("elem_neg_floor_round_float", "-x, and floor(3x) + round(2x) (NEG, FLOOR, ROUND in float32 between "
         "DEQUANTIZE and QUANTIZE)", [(1, 4, 4, 8)], [(-2.0, 2.0)], ["NEG", "FLOOR", "ROUND"])
def _(W):
    tf = g.tf
    return lambda x: (tf.negative(x), tf.floor(x * 3.0) + tf.round(x * 2.0))


@fixture("elem_compare_select", "tf.where(x[..., :1] > 0.2, x, 0.5 y) with a broadcast condition (GREATER, "
         "SELECT_V2), and x <= y, x == y as bool outputs", [(1, 4, 4, 8), (1, 4, 4, 8)], [(-1.0, 1.0), (-1.0, 1.0)],
         ["GREATER", "SELECT_V2", "LESS_EQUAL", "EQUAL"])
def _(W):
    tf = g.tf
    return lambda x, y: (tf.where(x[..., :1] > 0.2, x, y * 0.5), tf.less_equal(x, y), tf.equal(x, y))


@fixture("elem_compare_cast", "cast(x >= reversed x) * x + cast(x < y) * y, and cast(relu(x) != 0) (GREATER_EQUAL, "
         "LESS, NOT_EQUAL, CAST bool -> float32)", [(1, 16), (1, 16)], [(-2.0, 2.0), (-2.0, 2.0)],
         ["GREATER_EQUAL", "LESS", "NOT_EQUAL", "CAST"])
def _(W):
    tf = g.tf

    def f(x, y):
        a = tf.cast(tf.math.greater_equal(x, x[:, ::-1]), tf.float32) * x
        b = tf.cast(tf.math.less(x, y), tf.float32) * y
        return a + b, tf.cast(tf.math.not_equal(tf.nn.relu(x), 0.0), tf.float32)

    return f


@fixture("elem_cast_int32_chain", "cast(x > 0.3, int32) * 3 + 1, cast to float32, times x (CAST bool -> int32 -> "
         "float32, int32 MUL and ADD)", [(1, 4, 4, 8)], [(-1.0, 1.0)], ["GREATER", "CAST", "MUL", "ADD"])
def _(W):
    tf = g.tf
    return lambda x: tf.cast(tf.cast(x > 0.3, tf.int32) * 3 + 1, tf.float32) * x
