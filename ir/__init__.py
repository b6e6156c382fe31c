"""The QNN-dialect IR: tensor types with quantization, immutable expressions, functions, modules,
the op registry, the verifier and the text printer."""

from .expr import Call, Constant, Function, Module, OpSource, State, Tuple, Var, post_order
from .registry import OpDef, OpKind, all_ops, get_op
from .types import QuantParams, TensorType

__all__ = [
    "QuantParams", "TensorType", "Var", "Constant", "State", "Call", "Tuple", "Function", "Module", "OpSource",
    "post_order", "OpKind", "OpDef", "get_op", "all_ops",
]
