"""Partition, lowering, A-normal form and arena planning on real models, targets through hooks."""

import json

import numpy as np
import pytest
from conftest import MLPERF_MODELS, MODELS
from mcuforge.ir.expr import Call, Function, Module
from mcuforge.planner.kernel import KernelCall, OpInfo
from mcuforge.planner.memory import check_plan
from mcuforge.planner.patterns import PatternEntry, op, wildcard
from mcuforge.errors import McuforgeError
from mcuforge.planner.target import DEFAULT_ISA, ISAS, Target, register_target

from mcuforge.driver import Options, compile_model
from mcuforge.verify import random_inputs, verify_program

# Live-tensor lower bound in TFLite's order (shared/models/mlperf-tiny/README.md).
TFLITE_ORDER_BOUND = {"kws": 16000, "vww": 55296, "ic": 49152, "ad": 768}


@pytest.fixture(scope="module")
def compiled():
    return {name: compile_model(path) for name, path in MLPERF_MODELS.items()}


@pytest.mark.parametrize("name", sorted(TFLITE_ORDER_BOUND))
def test_mlperf_arena_within_bound_and_optimal(compiled, name):
    """Without overlap (`fast`) every plan reaches its lower bound (the largest sum of buffers live
    together); the default plan (outputs over their inputs) is never larger, and within 16 B of
    its bound (which ignores how overlap ranges chain across layers), more by the drift of the
    layers whose exact overlap balanced leaves unbought."""
    c = compiled[name]
    arena = c.arena
    fast = compile_model(MLPERF_MODELS[name], Options(memory="fast")).arena
    assert fast.arena_bytes <= TFLITE_ORDER_BOUND[name] + fast.scratch_bytes
    assert fast.plan.gap == 0, fast.plan.summary()
    assert arena.arena_bytes <= fast.arena_bytes
    # a layer whose exact overlap balanced does not buy falls back to one that drifts the chain
    # down (KWS's 1x1 layers without their chunks: 128 B each), which the bound does not see
    paid = {s for s, _ in arena.costs}
    drift = sum(-b.kernel.overlap.without.max_shift for s, b in enumerate(c.program.bindings)
                if b.kernel.overlap is not None and b.kernel.overlap.without is not None and s not in paid
                and b.kernel.overlap.max_shift == 0 and b.kernel.overlap.without.max_shift < 0)
    assert arena.plan.gap <= 16 + drift, arena.plan.summary()
    check_plan(arena.buffers, arena.constraints, arena.plan)
    inputs = [b.name for b in arena.buffers if b.name.startswith("input")]
    assert inputs and all(n in arena.plan.offsets for n in c.program.outputs)


def test_plans_are_deterministic():
    a = compile_model(MLPERF_MODELS["ic"])
    b = compile_model(MLPERF_MODELS["ic"])
    assert a.arena.plan.offsets == b.arena.plan.offsets
    assert [x.out for x in a.program.bindings] == [x.out for x in b.program.bindings]


def test_partition_tags_functions_and_main_only_calls_them(compiled):
    m = compiled["kws"].module
    calls = list(m.main.calls())
    assert calls and all(c.callee is not None for c in calls)
    lifted = {n: f for n, f in m.functions.items() if n != "main"}
    assert {f.attrs["target"] for f in lifted.values()} == {"cmsis-nn", "c"}
    comps = {f.attrs["composite"] for f in lifted.values()}
    assert {"qnn_conv2d", "qnn_depthwise_conv2d", "qnn_fully_connected", "qnn_avg_pool2d", "qnn_softmax"} <= comps


def test_generic_pass_never_enters_lifted_functions():
    """The generic pass of the pipeline (legalization, whose rules rewrite any registry op they meet)
    over a module whose main holds an int8 QUANTIZE and calls a lifted function holding another one:
    the rule fires on main's (-> requantize) and the lifted function stays exactly as it was. Were the
    pass to walk into lifted functions, their QUANTIZE would be rewritten too."""
    from mcuforge.ir.expr import Var
    from mcuforge.ir.types import QuantParams, TensorType
    from mcuforge.planner.legalize import legalize

    def t(scale):
        return TensorType((1, 4), "int8", QuantParams((scale,), (0,)))

    p = Var("p", t(0.1))
    lifted = Function((p,), Call("quantize", (p,), t(0.2), {"out_dtype": "int8"}), {"target": "c", "composite": "op"})
    x = Var("x", t(0.1))
    direct = Call("quantize", (x,), t(0.2), {"out_dtype": "int8"}, name="direct")
    body = Call("@lifted", (direct,), t(0.2), name="via_lifted")
    out = legalize(Module({"main": Function((x,), body), "lifted": lifted}))
    assert [c.op for c in out.main.calls()] == ["requantize", "@lifted"]  # the rule does fire on main
    assert out.functions["lifted"] is lifted and [c.op for c in lifted.calls()] == ["quantize"]


def test_kernel_calls_keep_op_info(compiled):
    prog = compiled["kws"].program
    first = prog.bindings[0].kernel
    assert first.info.op == "conv_2d" and first.info.kind.value == "complex"
    assert [(s.index, s.name) for s in first.info.sources] == [(0, "CONV_2D")]
    assert first.info.attrs["stride"] == (2, 2) and first.info.target == "cmsis-nn"
    srcs = sorted(s.index for b in prog.bindings for s in b.kernel.info.sources)
    assert srcs == list(range(13))
    # Precomputed constants: per-channel multipliers and shifts, folded bias.
    assert first.constants["multiplier"].shape == (64,) and first.constants["shift"].dtype == np.int32


def test_schedule_is_topological_and_reports_peaks(compiled):
    for c in compiled.values():
        prog = c.program
        done = set(prog.inputs)
        for b in prog.bindings:
            assert set(b.args) <= done, b
            done.add(b.out)
        assert prog.order.peak <= prog.file_order_peak


def test_branchy_fixture_order_is_no_worse_than_file_order():
    c = compile_model(MODELS / "mix_branchy_concat.tflite")
    assert c.program.order.peak <= c.program.file_order_peak
    assert c.arena.plan.gap == 0


# ---- a third target, defined entirely outside the package ---------------------------------------------

def _toy_add_check(caps):
    """Only same-shape int8 adds."""
    root = caps["root"]
    return None if root.args[0].type.shape == root.args[1].type.shape == root.type.shape else "broadcast"


def test_third_target_from_outside_the_package(tmp_path):
    from mcuforge.planner.targets import c as portable

    templates = tmp_path / "templates"
    sources = tmp_path / "sources"
    templates.mkdir()
    sources.mkdir()
    # The toy kernel reuses the portable add's arithmetic through its params, but is its own C symbol.
    (sources / "toy_add_s8.c").write_text(
        '#include "toy_kernels.h"\n'
        "void toy_add_s8(void (*impl)(void), int calls) { (void)impl; (void)calls; }\n")
    (sources / "toy_kernels.h").write_text("void toy_add_s8(void (*impl)(void), int calls);\n")
    lowered = []

    def lower(fn, isa):
        base = portable.lower(fn, isa)
        lowered.append(fn.attrs["composite"])
        info = OpInfo(base.info.op, base.info.kind, base.info.attrs, base.info.sources, "toy", "toy_add")
        return KernelCall("toy_add_s8", "toy_add_s8", "toy_add.c.j2", base.inputs, base.output, base.params, base.constants, 0,
                          info, base.evaluate, arg_map=base.arg_map)

    register_target(Target("toy", (PatternEntry("toy_add", op("add", wildcard("a"), wildcard("b"),
                                                                  capture="root"), _toy_add_check),),
                           lower, templates, sources))
    c = compile_model(MODELS / "add_same_shape.tflite", Options(targets=("toy", "c")))
    tags = {f.attrs["target"] for n, f in c.module.functions.items() if n != "main"}
    assert tags == {"toy"} and lowered == ["toy_add"]
    rng = np.random.default_rng(3)
    res = verify_program(c, [random_inputs(c.imported, rng) for _ in range(3)], intermediates=True, isolate=False)
    assert all(r.ok for r in res), [str(m) for r in res for m in r.mismatches]
    # Its template and C source come from the toy target's own directories.
    (templates / "toy_add.c.j2").write_text("    toy_add_s8((void (*)(void))0, {{ p|length }}); /* {{ k.function }} */\n")
    from mcuforge.codegen.emit import kernel_files, render

    texts = render(c, "toy_model", "add_same_shape.tflite")
    assert "toy_add_s8((void (*)(void))0, 9); /* toy_add_s8 */" in texts["toy_model.c"]
    assert "toy_add_s8.c" in kernel_files(c)[0]


def test_plan_cli_json_and_pictures(cli, tmp_path):
    proc = cli("plan", MLPERF_MODELS["kws"], "--json", "--picture", tmp_path / "kws.svg", "--memory", "min")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["scratch_bytes"] > 0 and len(info["schedule"]) == 13
    assert info["arena_bytes"] == info["lower_bound_bytes"] <= 16000 + info["scratch_bytes"]
    assert info["gap_bytes"] == 0
    assert info["schedule"][0]["tflite"] == [{"index": 0, "op": "CONV_2D"}]
    svg = (tmp_path / "kws.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<rect") >= 14
    proc = cli("plan", MLPERF_MODELS["ic"], "--picture", tmp_path / "ic.png")
    assert proc.returncode == 0, proc.stderr
    assert "gap:          0 B" in proc.stdout and "arena bytes:  " in proc.stdout
    assert (tmp_path / "ic.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = cli("plan", MLPERF_MODELS["ic"], "--picture", tmp_path / "ic.gif")
    assert bad.returncode == 2 and ".svg or .png" in bad.stderr


def _partitioned_calls(body, params) -> list[str]:
    """The composites main calls after partition (cmsis-nn, then the portable target)."""
    from mcuforge.ir.expr import post_order
    from mcuforge.planner.partition import partition
    from mcuforge.planner.target import get_target

    module = partition(Module({"main": Function(tuple(params), body, {})}), [get_target("cmsis-nn"), get_target("c")])
    return [module.functions[c.callee].attrs["composite"] for c in post_order(module.main.body)
            if isinstance(c, Call)]


def test_partition_fuses_a_convolution_into_its_residual_add_only_where_it_has_no_other_user():
    """A composite of several ops (CONV_2D + ADD, mcu_cmsis_conv2d_add_s8) takes the convolution
    only when the ADD is its one user; a 1x1 convolution (its own kernel) is never fused; of two
    convolutions into one ADD, one is."""
    from mcuforge.ir.expr import Tuple
    from test_kernels_cmsis_nn import conv, conv_add

    rng = np.random.default_rng(5)
    fused = conv_add(rng, (6, 7), 8, 8, (3, 3))
    x, r = fused.args[0].args[0], fused.args[1]
    assert _partitioned_calls(fused, [x, r]) == ["qnn_conv2d_add"]
    mirrored = conv_add(rng, (6, 7), 8, 8, (3, 3), conv_first=False)
    assert _partitioned_calls(mirrored, [mirrored.args[0], mirrored.args[1].args[0]]) == ["qnn_add_conv2d"]
    # the convolution is also a model output: it must be stored, no fusion
    both = Tuple((fused, fused.args[0]))
    assert sorted(_partitioned_calls(both, [x, r])) == ["qnn_add", "qnn_conv2d"]
    one_by_one = conv_add(rng, (6, 7), 8, 8, (1, 1))
    assert sorted(_partitioned_calls(one_by_one, [one_by_one.args[0].args[0], one_by_one.args[1]])) == \
        ["qnn_add", "qnn_conv2d"]
    # ADD(conv(x), conv(y)): the first convolution fused, the second lifted on its own
    a = fused.args[0]
    b = conv(rng, (6, 7), 8, 8, (3, 3))
    b = Call(b.op, b.args, a.type, b.attrs, name="b")
    two = Call("add", (a, b), fused.type, fused.attrs, name="out")
    assert sorted(_partitioned_calls(two, [x, b.args[0]])) == ["qnn_conv2d", "qnn_conv2d_add"]


def test_a_constant_residual_is_not_fused():
    """ADD(conv(x), constant): the constant stays in flash, the convolution is lifted on its own."""
    from mcuforge.ir.expr import Constant
    from test_kernels_cmsis_nn import conv_add

    fused = conv_add(np.random.default_rng(6), (5, 6), 4, 4, (3, 3))
    cv, r = fused.args
    const = Constant("c", r.type, np.random.default_rng(7).integers(-128, 128, r.type.shape))
    body = Call("add", (cv, const), fused.type, fused.attrs, name="out")
    assert sorted(_partitioned_calls(body, [cv.args[0]])) == ["qnn_add", "qnn_conv2d"]


def _offset_layers(compiled) -> list[int]:
    return [b.kernel.params["pair_offset"] for b in compiled.program.bindings if "pair_offset" in b.kernel.params]


def test_the_isa_reaches_the_lowering():
    """Options.isa reaches the cmsis-nn lowering: only the DSP ISA (the default) takes the offset
    and wide pair layouts, Helium and plain C keep the plain one (Helium takes KWS's one-input-channel
    first conv through the depthwise kernel's table path instead); an unknown ISA is refused."""
    compiled = {isa: compile_model(MLPERF_MODELS["kws"], Options(isa=isa)) for isa in ISAS}
    flags = {isa: _offset_layers(c) for isa, c in compiled.items()}
    assert DEFAULT_ISA == "dsp" and _offset_layers(compile_model(MLPERF_MODELS["kws"])) == flags["dsp"]
    assert flags["dsp"] == [2, 1, 1, 1, 1]  # the first conv (K = 40 < 48) wide, the 1x1 layers offset
    assert flags["plain"] == [0] * 5 and flags["mve"] == [0] * 4
    first = {isa: c.program.bindings[0].kernel.function for isa, c in compiled.items()}
    assert first == {"dsp": "mcu_cmsis_conv2d_s8", "plain": "mcu_cmsis_conv2d_s8", "mve": "mcu_cmsis_dwconv2d_s8"}
    with pytest.raises(McuforgeError, match="unknown ISA 'neon'"):
        compile_model(MLPERF_MODELS["ad"], Options(isa="neon"))


def test_the_board_decides_the_isa(cli, tmp_path, monkeypatch):
    """`compile --board` lays the weights out for the board's core (the generated parameters say
    which layout); bench compiles for its board's ISA."""
    texts = {}
    for board in ("mps3-an547", "mps2-an386", None):
        out = tmp_path / str(board)
        proc = cli("compile", MLPERF_MODELS["kws"], "-o", out, *(("--board", board) if board else ()))
        assert proc.returncode == 0, proc.stderr
        texts[board] = (out / "model.c").read_text()
    # on the M55 the first conv (one input channel) takes the depthwise kernel: four pair layers
    assert ".pair_offset = 1" not in texts["mps3-an547"] and texts["mps3-an547"].count(".pair_offset = 0") == 4
    assert texts["mps2-an386"].count(".pair_offset = 1") == 4 and texts[None] == texts["mps2-an386"]

    import mcuforge.driver
    from mcuforge.bench import bench

    seen = []

    def stop(model, options):
        seen.append(options.isa)
        raise McuforgeError("stop")

    monkeypatch.setattr(mcuforge.driver, "compile_model", stop)
    for board in ("mps3-an547", "mps2-an505", "mps2-an385"):
        with pytest.raises(McuforgeError, match="stop"):
            bench(MLPERF_MODELS["ad"], board)
    assert seen == ["mve", "dsp", "plain"]
