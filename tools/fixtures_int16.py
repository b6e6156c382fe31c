"""16x8 fixtures (tools/gen_fixtures.py loads this table; MANIFEST.int16.json): single operators and small
nets converted as users quantize audio models, with the op set
EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8 (int16 activations, int8 weights, int64
biases) and int16 model I/O (float32 I/O where named so). Every one is checked on the host against
TFLM by tests/test_host_e2e.py."""

import gen_fixtures as g
from gen_fixtures import W, conv, dwconv, fixture


def f16(name, covers, inputs, ranges, expect, **kw):
    return fixture(name, covers, inputs, ranges, expect, int16x8=True, **kw)


@f16("s16_conv_3x3_relu", "16x8 CONV_2D 3x3 SAME + bias + RELU", [(1, 8, 8, 3)], [(-1.0, 1.0)], ["CONV_2D"])
def _(w: W):
    k, b = w.filt(3, 3, 3, 8), w.bias(8)
    return lambda x: g.tf.nn.relu(conv(x, k) + b)


@f16("s16_conv_stride2_valid_relu6", "16x8 CONV_2D 5x3 stride 2 VALID + RELU6", [(1, 11, 9, 4)], [(-2.0, 2.0)],
     ["CONV_2D"])
def _(w: W):
    k, b = w.filt(5, 3, 4, 6), w.bias(6)
    return lambda x: g.tf.nn.relu6(conv(x, k, 2, "VALID") + b)


@f16("s16_conv_1x1_dilated", "16x8 CONV_2D 1x1 (16 -> 24), then a dilated 3x3 (dilation 2)", [(1, 7, 7, 16)],
     [(-1.0, 1.0)], ["CONV_2D"])
def _(w: W):
    k1, b1, k2, b2 = w.filt(1, 1, 16, 24), w.bias(24), w.filt(3, 3, 24, 8), w.bias(8)
    return lambda x: conv(g.tf.nn.relu(conv(x, k1) + b1), k2, dil=2) + b2


@f16("s16_conv_audio_1x16_s8", "16x8 CONV_2D (1,16) stride (1,8) on a 1x256x1 audio frame (an encoder)",
     [(1, 1, 256, 1)], [(-1.0, 1.0)], ["CONV_2D"])
def _(w: W):
    k, b = w.filt(1, 16, 1, 16), w.bias(16)
    return lambda x: g.tf.nn.relu(conv(x, k, (1, 8), "VALID") + b)


@f16("s16_depthwise_mult2_stride2", "16x8 DEPTHWISE_CONV_2D 3x3, depth multiplier 2, stride 2, RELU6",
     [(1, 9, 9, 4)], [(-1.0, 1.0)], ["DEPTHWISE_CONV_2D"])
def _(w: W):
    d, b = w.filt(3, 3, 4, 2, ch_axes=(-2, -1)), w.bias(8)
    return lambda x: g.tf.nn.relu6(dwconv(x, d, 2) + b)


@f16("s16_depthwise_3x3_dilated", "16x8 DEPTHWISE_CONV_2D 3x3 dilation 2 SAME", [(1, 8, 8, 6)], [(-2.0, 1.0)],
     ["DEPTHWISE_CONV_2D"])
def _(w: W):
    d, b = w.filt(3, 3, 6, 1, ch_axes=(-2, -1)), w.bias(6)
    return lambda x: dwconv(x, d, 1, "SAME", 2) + b


@f16("s16_fully_connected", "16x8 FULLY_CONNECTED 40 -> 12 + bias, then RELU", [(1, 40)], [(-1.0, 1.0)],
     ["FULLY_CONNECTED"])
def _(w: W):
    k, b = w.filt(40, 12), w.bias(12)
    return lambda x: g.tf.nn.relu(g.tf.matmul(x, k) + b)


@f16("s16_fully_connected_per_channel_rows", "16x8 FULLY_CONNECTED with per-channel weights, 3 rows of 24",
     [(3, 24)], [(-3.0, 3.0)], ["FULLY_CONNECTED"], per_channel_dense=True)
def _(w: W):
    k, b = w.filt(24, 10), w.bias(10)
    return lambda x: g.tf.matmul(x, k) + b


@f16("s16_transpose_conv_decoder", "16x8 TRANSPOSE_CONV (1,16) stride (1,8): overlap-add back to 1x256x1",
     [(1, 1, 31, 16)], [(-1.0, 1.0)], ["TRANSPOSE_CONV"])
def _(w: W):
    k = w.filt(1, 16, 1, 16, ch_axes=(-2,))
    return lambda x: g.tf.nn.conv2d_transpose(x, k, (1, 1, 256, 1), (1, 1, 8, 1), "VALID")


@f16("s16_transpose_conv_3x3_s2", "16x8 TRANSPOSE_CONV 3x3 stride 2 SAME (4 -> 3 channels)", [(1, 4, 5, 4)],
     [(-1.0, 1.0)], ["TRANSPOSE_CONV"])
def _(w: W):
    k = w.filt(3, 3, 3, 4, ch_axes=(-2,))
    return lambda x: g.tf.nn.conv2d_transpose(x, k, (1, 8, 10, 3), (1, 2, 2, 1), "SAME")


@f16("s16_add_sub_mul", "16x8 ADD, SUB and MUL of two inputs with different ranges, with a broadcast constant",
     [(1, 6, 6, 4), (1, 6, 6, 4)], [(-1.0, 1.0), (-3.0, 2.0)], ["ADD", "SUB", "MUL"])
def _(w: W):
    c = w.uniform((4,), 0.2, 1.5)
    return lambda x, y: g.tf.concat([x + y, (x - y) * c, x * y], axis=-1)


@f16("s16_activations", "16x8 RELU, RELU6, LEAKY_RELU (alpha 0.1), LOGISTIC and TANH after a conv",
     [(1, 6, 6, 3)], [(-1.0, 1.0)], ["CONV_2D", "LEAKY_RELU", "LOGISTIC", "TANH"])
def _(w: W):
    k, b = w.filt(3, 3, 3, 10), w.bias(10)

    def fn(x):
        y = conv(x, k) + b * 4.0
        return g.tf.concat([g.tf.nn.relu(y), g.tf.nn.relu6(y), g.tf.nn.leaky_relu(y, 0.1), g.tf.sigmoid(y),
                            g.tf.tanh(y)], axis=-1)

    return fn


@f16("s16_softmax", "16x8 SOFTMAX over 12 logits after a dense layer", [(1, 20)], [(-2.0, 2.0)],
     ["FULLY_CONNECTED", "SOFTMAX"])
def _(w: W):
    k, b = w.filt(20, 12, gain=3.0), w.bias(12)
    return lambda x: g.tf.nn.softmax(g.tf.matmul(x, k) + b)


@f16("s16_pools_mean", "16x8 AVERAGE_POOL_2D 3x3 s2, MAX_POOL_2D 2x2 SAME and MEAN over H, W", [(1, 9, 8, 5)],
     [(-1.0, 2.0)], ["AVERAGE_POOL_2D", "MAX_POOL_2D", "MEAN"])
def _(w: W):
    def fn(x):
        a = g.tf.nn.avg_pool2d(x, 3, 2, "VALID")
        m = g.tf.nn.max_pool2d(x, 2, 2, "SAME")
        return g.tf.concat([g.tf.reduce_mean(a, axis=[1, 2]), g.tf.reduce_mean(m, axis=[1, 2])], axis=-1)

    return fn


@f16("s16_pad_slice_transpose", "16x8 PAD, STRIDED_SLICE, TRANSPOSE, RESHAPE and CONCATENATION",
     [(1, 6, 5, 4)], [(-1.0, 1.0)], ["PAD", "STRIDED_SLICE", "TRANSPOSE", "RESHAPE", "CONCATENATION"])
def _(w: W):
    def fn(x):
        p = g.tf.pad(x, [[0, 0], [1, 1], [2, 0], [0, 0]])
        s = p[:, 1:7:2, ::2, :]
        t = g.tf.transpose(s, (0, 2, 1, 3))
        return g.tf.concat([g.tf.reshape(t, (1, -1)), g.tf.reshape(s, (1, -1))], axis=1)

    return fn


@f16("s16_float_io_cnn", "16x8 with float32 I/O: QUANTIZE -> conv -> depthwise -> mean -> dense -> DEQUANTIZE",
     [(1, 10, 8, 1)], [(-1.0, 1.0)], ["QUANTIZE", "CONV_2D", "DEPTHWISE_CONV_2D", "MEAN", "FULLY_CONNECTED",
                                       "DEQUANTIZE"], float_io=True)
def _(w: W):
    k, b = w.filt(3, 3, 1, 8), w.bias(8)
    d, db = w.filt(3, 3, 8, 1, ch_axes=(-2, -1)), w.bias(8)
    f, fb = w.filt(8, 5), w.bias(5)

    def fn(x):
        y = g.tf.nn.relu(conv(x, k, 2) + b)
        y = g.tf.nn.relu(dwconv(y, d) + db)
        return g.tf.matmul(g.tf.reduce_mean(y, axis=[1, 2]), f) + fb

    return fn
