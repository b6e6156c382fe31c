"""IF in the importer: both branch subgraphs imported in line, the output chosen with SELECT_V2.

TFLM (if.cc) copies the IF's inputs (after the bool condition, which must hold one element) into the
chosen branch subgraph's inputs, runs that subgraph and copies its outputs into the IF's outputs,
byte for byte. Branches are pure (no resource variables here), so computing both and selecting by
the condition gives the same bytes: each output is select_v2(condition, then, else) (SELECT_V2's
rules apply: int8, int16 or float32 values). A branch input must have the IF input's type and
quantization, a branch output the IF output's type and shape. WHILE (a loop) is refused.
"""

from __future__ import annotations

from typing import Any, Callable

from mcuforge.ir.expr import Call, OpSource
from mcuforge.ir.registry import OpView, get_op

OPS = ("IF",)


def subgraph_indices(op) -> tuple[int, ...]:
    o = op.options
    return (int(o.ThenSubgraphIndex()), int(o.ElseSubgraphIndex())) if o is not None else ()


def used_subgraphs(graph) -> set[int]:
    """The subgraphs IF operators branch to, nested ones included."""
    used: set[int] = set()
    todo = [graph]
    while todo:
        for op in todo.pop().operators:
            for k in subgraph_indices(op) if op.name == "IF" else ():
                if k not in used and 1 <= k <= len(graph.subgraphs):
                    used.add(k)
                    todo.append(graph.subgraphs[k - 1])
    return used


def import_if(imp, op, make_importer: Callable[[Any], Any], problem: Callable[[Any, str], Exception]) -> None:
    """Import one IF operator of `imp`'s subgraph: its outputs into imp.env (raises the importer's
    problem)."""
    from .importer import tensor_type

    branches = subgraph_indices(op)
    if len(branches) != 2 or not all(1 <= k <= len(imp.graph.subgraphs) for k in branches):
        raise problem(op, f"its branch subgraphs {list(branches)} do not exist")
    cond = imp.expr_for(op.inputs[0], op.index, op.name) if op.inputs else None
    if cond is None or cond.type.dtype != "bool" or cond.type.size != 1:
        raise problem(op, "the condition (input 1) must be a bool tensor of one element")
    args = [imp.expr_for(t, op.index, op.name) for t in op.inputs[1:]]
    results = [_branch(imp, op, k, args, make_importer, problem) for k in branches]
    select = get_op("select_v2")
    for j, t in enumerate(op.outputs):
        out_t = imp.graph.tensors[t]
        out = tensor_type(out_t)
        then_e, else_e = results[0][j], results[1][j]
        for name, e in (("then", then_e), ("else", else_e)):
            if (e.type.dtype, e.type.shape) != (out.dtype, out.shape):
                raise problem(op, f"output {j} is {out.dtype}{list(out.shape)}, its {name} branch gives "
                                  f"{e.type.dtype}{list(e.type.shape)}")
        view = OpView((cond.type, then_e.type, else_e.type), out, {})
        issues = select.check(view)
        shape, _ = select.infer(view.args, {})
        if not issues and tuple(shape) != out.shape:
            issues = [f"the condition's shape {list(cond.type.shape)} does not broadcast to {list(out.shape)}"]
        if issues:
            raise problem(op, "its outputs are chosen with SELECT_V2: " + "; ".join(issues))
        imp.env[t] = Call("select_v2", (cond, then_e, else_e), out, {}, out_t.name, out_t.index,
                          (OpSource(op.index, op.name),))


def _branch(imp, op, k: int, args: list, make_importer, problem) -> list:
    """The outputs of branch subgraph k imported in line, its inputs bound to `args`."""
    from .importer import tensor_type

    sub_graph = imp.graph.subgraphs[k - 1]
    if len(sub_graph.inputs) != len(args) or len(sub_graph.outputs) != len(op.outputs):
        raise problem(op, f"subgraph {k} takes {len(sub_graph.inputs)} inputs and gives {len(sub_graph.outputs)} "
                          f"outputs, the IF passes {len(args)} and takes {len(op.outputs)}")
    sub_graph.subgraphs = imp.graph.subgraphs  # nested IFs name subgraphs of the whole model
    sub = make_importer(sub_graph, within=OpSource(op.index, f"IF subgraph {k}"))
    for i, (t, a) in enumerate(zip(sub_graph.inputs, args)):
        typ = tensor_type(sub_graph.tensors[t])
        if typ != a.type:
            raise problem(op, f"subgraph {k} input {i} is {typ}, the IF passes {a.type}")
        sub.env[t] = a
    for sop in sub_graph.operators:
        sub.operator(sop)
        if sub.problems:
            raise problem(op, f"subgraph {k}, operator #{sop.index} {sop.name}: {sub.problems[0][2]}")
    return [sub.expr_for(t, op.index, op.name) for t in sub_graph.outputs]
