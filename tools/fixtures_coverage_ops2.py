"""Fixtures of ADD_N, REVERSE_V2, DYNAMIC_UPDATE_SLICE, EMBEDDING_LOOKUP, BROADCAST_ARGS, the logical
ops, REDUCE_ALL, CEIL, SQUARE, SIN, COS, FLOOR_DIV, FLOOR_MOD and L2_POOL_2D (tools/gen_fixtures.py
loads this table; MANIFEST.coverage_ops2.json). The converter keeps the float-only ops (CEIL, SQUARE,
SIN, COS, FLOOR_DIV, FLOOR_MOD) in float32 between a DEQUANTIZE and a QUANTIZE, as TFLM runs them."""

import gen_fixtures as g
from gen_fixtures import W, _drop_unused_tensors, _ops_named, fixture


def _set_opcode(model, op, name: str) -> None:
    """Give `op` a new operator code `name` (a code of its own, so other ops keep theirs)."""
    from tensorflow.lite.python import schema_py_generated as schema

    oc = schema.OperatorCodeT()
    oc.builtinCode = getattr(schema.BuiltinOperator, name)
    oc.deprecatedBuiltinCode = min(oc.builtinCode, 127)
    oc.version = 1
    model.operatorCodes.append(oc)
    op.opcodeIndex = len(model.operatorCodes) - 1


def patch_gather_to_embedding_lookup(model):
    """The converter writes tf.nn.embedding_lookup as GATHER (axis 0, 1-D indices); EMBEDDING_LOOKUP is
    the same row copy with the inputs swapped (lookup, table) and no options."""
    (op,) = _ops_named(model, "GATHER")
    _set_opcode(model, op, "EMBEDDING_LOOKUP")
    op.inputs = [op.inputs[1], op.inputs[0]]
    op.builtinOptionsType, op.builtinOptions = 0, None


def patch_square_pool_sqrt_to_l2_pool(model):
    """DEQUANTIZE -> SQUARE -> QUANTIZE -> AVERAGE_POOL_2D -> SQRT (what the converter makes of
    sqrt(avg_pool(x^2)); TFLM cannot run its int8 SQRT) becomes DEQUANTIZE -> L2_POOL_2D (float32, the
    pool's options) -> QUANTIZE into the SQRT's output."""
    from tensorflow.lite.python import schema_py_generated as schema
    import copy

    sg = model.subgraphs[0]
    (square,), (pool,), (sqrt,) = (list(_ops_named(model, n)) for n in ("SQUARE", "AVERAGE_POOL_2D", "SQRT"))
    quantize = next(op for op in sg.operators if square.outputs[0] in op.inputs)
    pooled = copy.deepcopy(sg.tensors[pool.outputs[0]])
    pooled.type, pooled.quantization, pooled.name = schema.TensorType.FLOAT32, None, b"l2_pool"
    sg.tensors.append(pooled)
    pool.inputs = [square.inputs[0]]
    pool.outputs = [len(sg.tensors) - 1]
    _set_opcode(model, pool, "L2_POOL_2D")
    quantize.inputs, quantize.outputs = [pool.outputs[0]], list(sqrt.outputs)
    sg.operators = [op for op in sg.operators if op is not square and op is not sqrt]
    sg.operators.remove(quantize)
    sg.operators.insert(sg.operators.index(pool) + 1, quantize)
    _drop_unused_tensors(model)


@fixture("add_n_three", "tf.math.add_n of three branches of one quantization", [(1, 4, 4, 3)], [(-1.0, 1.0)],
         ["ADD_N"])
def _(w: W):
    return lambda x: g.tf.math.add_n([x, x * 0.5, g.tf.nn.relu(x)])


@fixture("reverse_v2_axis1", "tf.reverse along axis 1 (int8, a copy)", [(1, 5, 4, 3)], [(-1.0, 1.0)], ["REVERSE_V2"])
def _(w: W):
    return lambda x: g.tf.reverse(x, axis=[1]) * 2.0


@fixture("logical_select", "not ((x > 0) and (y < 0.5)), or (x < -0.5), selecting x or 0 (LOGICAL_AND / OR / "
         "NOT, broadcast SELECT_V2)", [(1, 6, 4), (1, 6, 4)], [(-1.0, 1.0), (-1.0, 1.0)],
         ["LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT", "SELECT_V2"])
def _(w: W):
    def fn(x, y):
        c = g.tf.logical_or(g.tf.logical_not(g.tf.logical_and(x > 0.0, y < 0.5)), x < -0.5)
        return g.tf.where(c, x, g.tf.zeros((1, 1, 4)))
    return fn


@fixture("reduce_all_rows", "tf.reduce_all(x > 0) over the last axis, keepdims, selecting x or -x",
         [(1, 5, 6)], [(-1.0, 1.0)], ["REDUCE_ALL"])
def _(w: W):
    return lambda x: g.tf.where(g.tf.reduce_all(x > -0.8, axis=-1, keepdims=True), x, -x)


@fixture("float_unary_ceil_square_sin_cos", "tf.math.ceil, square, sin, cos (float32 between DEQUANTIZE and "
         "QUANTIZE)", [(1, 4, 8)], [(-3.0, 3.0)], ["CEIL", "SQUARE", "SIN", "COS"])
def _(w: W):
    return lambda x: g.tf.math.ceil(x) * 0.25 + g.tf.math.square(x) * 0.1 + g.tf.math.sin(x) - g.tf.math.cos(x * 2.0)


@fixture("floor_div_mod", "tf.math.floordiv and floormod by a constant (float32)", [(1, 4, 8)], [(-4.0, 4.0)],
         ["FLOOR_DIV", "FLOOR_MOD"])
def _(w: W):
    d = w.uniform((8,), 0.4, 1.5)
    return lambda x: g.tf.math.floordiv(x, d) * 0.5 + g.tf.math.floormod(x, d)


@fixture("l2_pool_sqrt_avg_square", "sqrt(avg_pool(x^2)) over 2x2 windows, patched into a float32 L2_POOL_2D "
         "(no TensorFlow op converts to it)", [(1, 6, 6, 3)], [(-1.0, 1.0)], ["L2_POOL_2D"],
         patch=patch_square_pool_sqrt_to_l2_pool, absent=["SQRT", "AVERAGE_POOL_2D"])
def _(w: W):
    return lambda x: g.tf.sqrt(g.tf.nn.avg_pool2d(g.tf.math.square(x), 2, 2, "VALID"))


@fixture("embedding_lookup_argmax", "rows of an int8 table picked by the argmax of each input row (the "
         "converter's GATHER patched into the EMBEDDING_LOOKUP it stands for)", [(1, 4, 6)], [(-1.0, 1.0)],
         ["EMBEDDING_LOOKUP"], patch=patch_gather_to_embedding_lookup, absent=["GATHER"])
def _(w: W):
    table = w.uniform((6, 8), -1.0, 1.0)
    return lambda x: g.tf.nn.embedding_lookup(table, g.tf.reshape(g.tf.argmax(x, axis=-1, output_type=g.tf.int32), (4,)))


@fixture("dynamic_update_slice_argmax", "xla dynamic_update_slice of a row into x at an index computed from x",
         [(1, 6, 4)], [(-1.0, 1.0)], ["DYNAMIC_UPDATE_SLICE"])
def _(w: W):
    from tensorflow.compiler.tf2xla.python import xla

    row = w.uniform((1, 1, 4), -1.0, 1.0)

    def fn(x):
        i = g.tf.argmax(g.tf.reduce_sum(x, axis=-1)[0], output_type=g.tf.int32)
        return xla.dynamic_update_slice(x, row, g.tf.stack([0, i, 0]))
    return fn


@fixture("broadcast_args_shape_values", "tf.broadcast_dynamic_shape of the input's shape and a constant shape "
         "(dynamic batch: SHAPE -> BROADCAST_ARGS, folded by mcuforge), its values added to the input",
         [(1, 4, 6)], [(-1.0, 1.0)], ["SHAPE", "BROADCAST_ARGS"], dynamic_batch=True)
def _(w: W):
    def fn(x):
        s = g.tf.broadcast_dynamic_shape(g.tf.shape(x), g.tf.constant([1, 4, 1]))
        return x * 0.5 + g.tf.reduce_sum(g.tf.cast(s, g.tf.float32)) * 0.05
    return fn
