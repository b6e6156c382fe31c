"""Fixtures with control flow (tools/gen_fixtures.py loads this table; MANIFEST.control_flow.json):
tf.cond, which the converter writes as an IF with two branch subgraphs (float32 at the IF, int8
inside the branches between QUANTIZE and DEQUANTIZE)."""

import gen_fixtures as g
from gen_fixtures import W, fixture


@fixture("if_tf_cond", "tf.cond on the sign of a dense layer's sum: relu(2 x) or x - 1 (an IF with two branch "
         "subgraphs)", [(1, 8)], [(-1.0, 1.0)], ["IF", "FULLY_CONNECTED"])
def _(w: W):
    m, b = w.filt(8, 4, ch_axes=(-1,)), w.bias(4)

    def fn(x):
        h = g.tf.matmul(x, m) + b
        return g.tf.cond(g.tf.reduce_sum(h) > 0.0, lambda: g.tf.nn.relu(h * 2.0), lambda: h - 1.0)

    return fn
