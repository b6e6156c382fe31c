"""The command line as a user runs it: inspect (text and JSON) and verify."""

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import MLPERF_MODELS

# Figures computed independently from the files (shared/models/mlperf-tiny/README.md).
EXPECTED = {
    "kws": (16000, 24376),
    "vww": (55296, 219072),
    "ic": (49152, 78752),
    "ad": (768, 270880),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_inspect_json_figures(cli, name):
    proc = cli("inspect", MLPERF_MODELS[name], "--json")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    bound, weights = EXPECTED[name]
    assert info["activation_lower_bound_bytes"] == bound
    assert info["weight_bytes"] == weights
    assert info["unsupported"] == []
    assert all(op["supported"] for op in info["operators"])


def test_inspect_text_table(cli):
    proc = cli("inspect", MLPERF_MODELS["kws"])
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "  0  CONV_2D" in out and " 12  SOFTMAX" in out
    assert "RELU" in out and "per-channel(64, axis 0)" in out
    assert "live lower bound:  16,000 B" in out
    assert "weight bytes:      24,376" in out
    assert "unsupported ops:   0" in out


def test_verify_passes_and_prints_one_summary_line(cli):
    proc = cli("verify", MLPERF_MODELS["kws"], "--on", "reference", "-n", "2", "--seed", "3", "--intermediates")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("verify PASS: 2/2 inputs bit-exact with TFLite Micro (outputs and intermediates)")


def test_verify_with_input_file(cli, tmp_path):
    x = np.random.default_rng(5).integers(-128, 128, (1, 640), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    proc = cli("verify", MLPERF_MODELS["ad"], "--input", tmp_path / "x.npy")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1/1 inputs bit-exact" in proc.stdout


def test_verify_reports_a_mismatch(cli, tmp_path):
    """A deliberately broken reference must make verify fail with exit 1 and name the tensor."""
    script = tmp_path / "broken.py"
    script.write_text(
        "import sys, numpy as np\n"
        "from mcuforge.ir import registry\n"
        "op = registry.get_op('softmax')\n"
        "orig = op.reference\n"
        "object.__setattr__(op, 'reference', lambda a, v: (orig(a, v).astype(np.int16) + 1).clip(-128, 127).astype(np.int8))\n"
        "from mcuforge.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    import subprocess
    import sys

    # The portable target's kernel models evaluate the registry references, so the patch reaches them.
    proc = subprocess.run([sys.executable, str(script), "verify", str(MLPERF_MODELS["kws"]), "-n", "2",
                           "--intermediates", "--targets", "c"], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "input 0: MISMATCH" in proc.stdout and "from #12 SOFTMAX" in proc.stdout
    assert "verify FAIL: 0/2 inputs bit-exact" in proc.stdout


def test_version(cli):
    from mcuforge import __version__

    proc = cli("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"mcuforge {__version__}"


def test_toolchain_file(cli):
    """A wheel user finds the CMake toolchain file (and a board's CPU flags) without knowing the package layout."""
    proc = cli("toolchain-file")
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert path.is_file() and path.name == "toolchain-arm-none-eabi.cmake" and "MCU_CPU_FLAGS" in path.read_text()
    proc = cli("toolchain-file", "--board", "microbit")
    assert proc.returncode == 0 and proc.stdout.strip() == (
        f'-DCMAKE_TOOLCHAIN_FILE={path} "-DMCU_CPU_FLAGS=-mcpu=cortex-m0 -mthumb -mfloat-abi=soft"')
    proc = cli("toolchain-file", "--board", "nope")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "unknown board 'nope'" in proc.stderr
