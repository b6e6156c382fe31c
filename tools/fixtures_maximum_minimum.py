"""Fixtures of MAXIMUM and MINIMUM (tools/gen_fixtures.py loads this table; MANIFEST.maximum_minimum.json):
a clamp written with tf.maximum / tf.minimum after a convolution (the converter keeps both ops), the
same-shape maximum of two branches, and a broadcast minimum against a per-channel constant."""

import gen_fixtures as g
from gen_fixtures import W, conv, fixture


@fixture("maximum_minimum_clamp_after_conv", "conv -> tf.minimum(tf.maximum(x, -0.5), 1.25): scalar operands",
         [(1, 6, 6, 3)], [(-1.0, 1.0)], ["CONV_2D", "MAXIMUM", "MINIMUM"])
def _(w: W):
    k, b = w.filt(3, 3, 3, 8), w.bias(8)
    return lambda x: g.tf.minimum(g.tf.maximum(conv(x, k) + b, -0.5), 1.25)


@fixture("maximum_two_branches", "tf.maximum of two same-shape inputs (different quantization ranges)",
         [(1, 5, 5, 4), (1, 5, 5, 4)], [(-1.0, 1.0), (-0.5, 2.0)], ["MAXIMUM"])
def _(w: W):
    return lambda x, y: g.tf.maximum(x, y)


@fixture("minimum_broadcast_channel_const", "tf.minimum of [1,4,4,8] and a constant [8] vector (broadcast)",
         [(1, 4, 4, 8)], [(-2.0, 2.0)], ["MINIMUM"])
def _(w: W):
    c = w.uniform((8,), -1.0, 1.0)
    return lambda x: g.tf.minimum(x, c)
