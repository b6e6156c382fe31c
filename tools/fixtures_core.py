"""Fixture table "core" (issue 12): operators with several outputs and PACK, as TensorFlow graphs
convert them (tf.split, tf.split with sizes, tf.unstack, tf.stack). Registered into
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
