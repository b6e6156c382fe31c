"""The op registry covers the required operator set, and SUPPORTED_OPS.md is generated from it."""

from conftest import ROOT
from mcuforge.ir.registry import all_ops, check_rule, tflite_builtins

from mcuforge.supported_ops import render

REQUIRED = """CONV_2D DEPTHWISE_CONV_2D FULLY_CONNECTED AVERAGE_POOL_2D MAX_POOL_2D ADD SUB MUL SOFTMAX RESHAPE
SQUEEZE CONCATENATION PAD MEAN RELU RELU6 LEAKY_RELU LOGISTIC TANH HARD_SWISH QUANTIZE DEQUANTIZE TRANSPOSE
STRIDED_SLICE TRANSPOSE_CONV RESIZE_NEAREST_NEIGHBOR MAXIMUM MINIMUM
EQUAL NOT_EQUAL LESS LESS_EQUAL GREATER GREATER_EQUAL SELECT_V2 SQUARED_DIFFERENCE DIV PRELU
ABS NEG SQRT RSQRT EXP LOG ELU FLOOR ROUND CAST LOG_SOFTMAX L2_NORMALIZATION
SHAPE PACK SPLIT SPLIT_V UNPACK
MIRROR_PAD TILE SLICE BROADCAST_TO DEPTH_TO_SPACE SPACE_TO_DEPTH BATCH_TO_SPACE_ND SPACE_TO_BATCH_ND GATHER GATHER_ND
REDUCE_MAX REDUCE_MIN SUM ARG_MAX ARG_MIN CUMSUM BATCH_MATMUL FILL ZEROS_LIKE EXPAND_DIMS RESIZE_BILINEAR
SVDF UNIDIRECTIONAL_SEQUENCE_LSTM
ADD_N REVERSE_V2 DYNAMIC_UPDATE_SLICE EMBEDDING_LOOKUP BROADCAST_ARGS
LOGICAL_AND LOGICAL_OR LOGICAL_NOT REDUCE_ALL CEIL SQUARE SIN COS FLOOR_DIV FLOOR_MOD L2_POOL_2D
VAR_HANDLE READ_VARIABLE ASSIGN_VARIABLE CALL_ONCE IF""".split()


def test_required_ops_are_registered():
    missing = [op for op in REQUIRED if op not in tflite_builtins()]
    assert not missing


def test_every_op_entry_is_complete():
    for op in all_ops():
        assert op.doc and op.infer and op.reference, op.name
        assert op.tflm or not op.tflite, f"{op.name}: say which TFLM kernel it matches (OpDef.tflm)"
        for chk in op.checks:
            assert chk.__doc__ and check_rule(chk).endswith("."), f"{op.name}: {chk.__name__} needs a sentence docstring"


def test_supported_ops_md_is_current():
    committed = (ROOT / "SUPPORTED_OPS.md").read_text()
    assert committed == render(), "SUPPORTED_OPS.md is stale: run python tools/gen_supported_ops.py"
