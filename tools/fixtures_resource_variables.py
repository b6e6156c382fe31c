"""Fixtures with resource variables (tools/gen_fixtures.py loads this table;
MANIFEST.resource_variables.json): streaming models that keep their state in a tf.Variable updated
on every call, as Keras streaming layers do. The converter emits VAR_HANDLE / READ_VARIABLE /
ASSIGN_VARIABLE in the main subgraph and a CALL_ONCE whose initialization subgraph assigns the
variable's initial value; the variable itself stays float32, between a QUANTIZE and a DEQUANTIZE."""

import gen_fixtures as g
from gen_fixtures import W, fixture


@fixture("resource_variable_streaming_conv",
         "a streaming 1-D convolution: the last two frames in a tf.Variable (zeros at start), concatenated "
         "with the new frame, convolved, and shifted back into the variable",
         [(1, 1, 8)], [(-1.0, 1.0)], ["CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CONV_2D"],
         resource_variables=True)
def _(w: W):
    k, b = w.filt(1, 3, 8, 6), w.bias(6)
    state = g.tf.Variable(g.tf.zeros((1, 2, 8)), trainable=False)

    def fn(x):
        frames = g.tf.concat([state, x], axis=1)
        state.assign(frames[:, 1:, :])
        y = g.tf.nn.conv2d(frames[:, None, :, :], k, strides=1, padding="VALID") + b
        return g.tf.nn.relu(g.tf.reshape(y, (1, 6)))

    return fn


@fixture("resource_variable_leaky_accumulator",
         "a leaky accumulator: state = 0.5 * state + dense(x) in a tf.Variable with a non-zero initial value, "
         "the new state also the output",
         [(1, 6)], [(-1.0, 1.0)], ["CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "FULLY_CONNECTED"],
         resource_variables=True)
def _(w: W):
    m, b = w.filt(6, 4, ch_axes=(-1,)), w.bias(4)
    state = g.tf.Variable(w.uniform((1, 4), -1.0, 1.0), trainable=False)

    def fn(x):
        new = state * 0.5 + (g.tf.matmul(x, m) + b)
        state.assign(new)
        return new

    return fn
