"""A readable text form of a Module, for `--print-ir`, debugging and tests."""

from __future__ import annotations

from .expr import Call, Constant, Function, Module, State, Tuple, Var, post_order


def _attr(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def print_function(name: str, fn: Function) -> str:
    names: dict[int, str] = {}
    lines = []
    params = []
    for p in fn.params:
        names[id(p)] = f"%{p.name}"
        params.append(f"%{p.name}: {p.type}")
    tags = "".join(f" {k}={v!r}" for k, v in fn.attrs.items())
    lines.append(f"def @{name}({', '.join(params)}){tags} {{")
    counter = 0
    for node in post_order(fn.body):
        if isinstance(node, Constant):
            names[id(node)] = f"${node.name}"
        elif isinstance(node, State):
            names[id(node)] = f"&{node.name}"
        elif isinstance(node, Call):
            ref = f"%{counter}"
            counter += 1
            names[id(node)] = ref
            args = ", ".join(names[id(a)] for a in node.args)
            attrs = ", ".join(f"{k}={_attr(v)}" for k, v in node.attrs.items())
            src = ", ".join(str(s) for s in node.sources)
            comment = "  # " + " ".join(x for x in (src, repr(node.name) if node.name else "") if x)
            lines.append(f"  {ref} = {node.op}({args}){' {' + attrs + '}' if attrs else ''}: {node.type}"
                         f"{comment if src or node.name else ''}")
        elif isinstance(node, Tuple):
            names[id(node)] = "(" + ", ".join(names[id(f)] for f in node.fields) + ")"
        elif isinstance(node, Var):
            names.setdefault(id(node), f"%{node.name}")
    lines.append(f"  return {names[id(fn.body)]}")
    consts = [n for n in post_order(fn.body) if isinstance(n, Constant)]
    if consts:
        lines.append("  // constants: " + ", ".join(f"${c.name}: {c.type}" for c in consts))
    states = fn.states()
    if states:
        lines.append("  // states (updated in place): " + ", ".join(f"&{s.name}: {s.type} = {s.fill}" for s in states))
    lines.append("}")
    return "\n".join(lines)


def print_module(module: Module) -> str:
    order = sorted(module.functions, key=lambda n: (n != "main", n))
    return "\n\n".join(print_function(n, module.functions[n]) for n in order) + "\n"
