"""Compiling a large model: a MobileNetV2 1.0 224x224 int8 model of about 4 MB (random weights, the
real layer structure, built here with devtools.tflite_writer) compiles with `mcuforge compile`
within a bounded memory, its arena is the checked plan, and the generated C is bit-exact with TFLM.

The compile time is a benchmark, not a test: python benchmarks/compile_time.py.
"""

import re
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from mcuforge.frontend.reader import read_tflite_bytes
from mcuforge.planner.fusion import fused_steps
from mcuforge.planner.memory import check_plan

from devtools.randmodel import MOBILENET_V2_BLOCKS, build, mobilenet_v2_spec
from mcuforge.driver import compile_model
from mcuforge.oracle import run_tflm
from mcuforge.verify import random_inputs, verify_host

# The compile in a child that reports its own peak resident set size (KiB) on its last stderr line:
# VmHWM, the high-water mark of the child's own image (getrusage's ru_maxrss survives exec on Linux and
# would report the size of the pytest process the child was forked from).
RSS_CHILD = ("import re, sys\nfrom mcuforge.cli import main\nrc = main(sys.argv[1:])\n"
             "hwm = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)\n"
             "print('maxrss_kib', hwm, file=sys.stderr)\nsys.exit(rc)\n")
RSS_LIMIT_KIB = 1 << 20  # 1 GiB; about 175 MiB measured


@pytest.fixture(scope="module")
def mobilenet(tmp_path_factory):
    path = tmp_path_factory.mktemp("mnv2") / "mobilenet_v2_224.tflite"
    path.write_bytes(build(mobilenet_v2_spec()))
    return path


def test_mobilenet_v2_has_the_real_structure_and_size(mobilenet):
    g = read_tflite_bytes(mobilenet.read_bytes())
    ops = Counter(op.name for op in g.operators)
    blocks = sum(n for _, _, n, _ in MOBILENET_V2_BLOCKS)
    expands = sum(n for t, _, n, _ in MOBILENET_V2_BLOCKS if t != 1)
    residuals = sum(n - 1 for _, _, n, _ in MOBILENET_V2_BLOCKS)  # every repeat after a block's first
    assert (blocks, expands, residuals) == (17, 16, 10)
    assert ops == {"CONV_2D": 1 + expands + blocks + 1, "DEPTHWISE_CONV_2D": blocks, "ADD": residuals,
                   "MEAN": 1, "FULLY_CONNECTED": 1}
    assert g.tensors[g.inputs[0]].shape == (1, 224, 224, 3)
    assert g.tensors[g.outputs[0]].shape == (1, 1000)
    weights = sum(t.nbytes for t in g.tensors if t.is_const and t.dtype == "int8")
    assert 3_400_000 < weights < 3_600_000  # MobileNetV2 1.0 has 3.5 M weights
    assert 3_800_000 < mobilenet.stat().st_size < 4_400_000


def test_mobilenet_v2_compiles_from_the_command_line_within_bounded_memory(mobilenet, tmp_path):
    out = tmp_path / "mnv2"
    proc = subprocess.run([sys.executable, "-c", RSS_CHILD, "compile", str(mobilenet), "-o", str(out),
                           "--prefix", "mnv2"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    rss = int(re.search(r"maxrss_kib (\d+)", proc.stderr).group(1))
    assert rss < RSS_LIMIT_KIB, f"the compile peaked at {rss / 1024:.0f} MiB"
    header = (out / "mnv2.h").read_text()
    arena = int(re.search(r"#define MNV2_ARENA_SIZE (\d+)", header).group(1))
    compiled = compile_model(mobilenet)
    assert arena == compiled.arena.arena_bytes
    assert (out / "mnv2_weights.c").stat().st_size > 3_500_000  # every weight made it into the C


def test_mobilenet_v2_arena_is_the_checked_plan_and_host_c_is_bit_exact(mobilenet, tmp_path):
    compiled = compile_model(mobilenet)
    a = compiled.arena
    check_plan(a.buffers, a.constraints, a.plan)  # raises on any overlap of live buffers
    assert max(a.offset(b.name) + b.size for b in a.buffers) == a.arena_bytes
    # block 2's stride-2 depthwise reads 112x112x96 while writing 56x56x96: the classic live-tensor
    # bound counts both; balanced fuses the high-resolution chains (planner/fusion.py), so that
    # tensor never exists and the arena is below it
    assert a.live_bound >= 112 * 112 * 96 + 56 * 56 * 96 > 112 * 112 * 96 > a.arena_bytes
    assert fused_steps(compiled.program) and max(b.size for b in a.buffers) < 112 * 112 * 96
    inputs = random_inputs(compiled.imported, np.random.default_rng(224))
    (res,) = verify_host(compiled, [inputs], work_dir=tmp_path, isolate=False)
    assert res.ok, "\n".join(str(m) for m in res.mismatches)
    ((logits,), _), = run_tflm(compiled.blob, [inputs], isolate=False)
    assert len(np.unique(logits)) > 50, "degenerate: the logits barely vary"
