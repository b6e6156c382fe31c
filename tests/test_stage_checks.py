"""The driver checks every stage's output: each check catches a corrupted result of its stage."""

import dataclasses

import pytest
from conftest import MLPERF_MODELS
from mcuforge.planner.checks import check_arena, check_kernels, check_program
from mcuforge.planner.memory import MemoryPlan

from mcuforge.driver import compile_model
from mcuforge.errors import IRError


@pytest.fixture(scope="module")
def kws():
    return compile_model(MLPERF_MODELS["kws"])


def test_the_real_stages_pass(kws):
    assert check_kernels(kws.module, kws.kernels) is kws.kernels
    assert check_program(kws.program) is kws.program
    assert check_arena(kws.program, kws.arena) is kws.arena


def test_kernels_must_be_typed_as_their_function(kws):
    name, kc = next(iter(kws.kernels.items()))
    bad = {**kws.kernels, name: dataclasses.replace(kc, output=kc.inputs[0])}
    with pytest.raises(IRError, match="the kernel call is typed"):
        check_kernels(kws.module, bad)
    missing = {k: v for k, v in kws.kernels.items() if k != name}
    with pytest.raises(IRError, match="none for"):
        check_kernels(kws.module, missing)


def test_kernel_scratch_must_cover_its_declared_need(kws):
    name, kc = next((n, k) for n, k in kws.kernels.items() if k.scratch_check)
    with pytest.raises(IRError, match="scratch of 0 B"):
        check_kernels(kws.module, {**kws.kernels, name: dataclasses.replace(kc, scratch_bytes=0)})


def test_program_order_must_respect_dependencies(kws):
    b = kws.program.bindings
    swapped = dataclasses.replace(kws.program, bindings=(b[1], b[0], *b[2:]))
    with pytest.raises(IRError, match="reads .* before they are computed"):
        check_program(swapped)
    dropped = dataclasses.replace(kws.program, bindings=b[:-1])
    with pytest.raises(IRError, match="never computed"):
        check_program(dropped)


def test_arena_plan_must_keep_live_buffers_apart(kws):
    plan = kws.arena.plan
    first = kws.program.bindings[0]
    # the first layer's output placed over its input, which is still being read
    offsets = {**plan.offsets, first.out: plan.offsets[first.args[0]]}
    bad = dataclasses.replace(kws.arena, plan=MemoryPlan(offsets, plan.arena_bytes, plan.algorithm, plan.lower_bound))
    with pytest.raises(IRError, match="the arena plan is invalid"):
        check_arena(kws.program, bad)
    no_scratch = {k: v for k, v in plan.offsets.items() if k != "scratch0"}
    bad = dataclasses.replace(kws.arena, plan=MemoryPlan(no_scratch, plan.arena_bytes, plan.algorithm,
                                                         plan.lower_bound))
    with pytest.raises(IRError, match="no offset for"):
        check_arena(kws.program, bad)

