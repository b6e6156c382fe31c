"""A real wheel (not only the editable install) carries everything and works from a fresh venv."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jinja2
import numpy as np
import pytest
import tflite
import tflite_micro
from conftest import MLPERF_MODELS, ROOT


@pytest.mark.slow
def test_wheel_installs_and_runs(tmp_path):
    dist = tmp_path / "dist"
    # setuptools builds in ROOT/build and keeps what an older tree put there: start clean
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist),
                    str(ROOT)], check=True, capture_output=True)
    (wheel,) = dist.glob("mcuforge-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ["mcuforge/cli.py", "mcuforge/ir/ops/conv_2d.py", "mcuforge/frontend/reader.py",
                   "mcuforge/codegen/templates/banner.j2", "mcuforge/boards/mps2_an386.toml",
                   "mcuforge/firmware/include/mcuforge_fixedpoint.h", "mcuforge/planner/__init__.py",
                   "mcuforge/planner/targets/cmsis_nn/conv.py", "mcuforge/planner/targets/c.py",
                   "mcuforge/codegen/templates/call.c.j2", "mcuforge/codegen/templates/c/concatenation.c.j2", "mcuforge/codegen/templates/cmsis_nn/qnn_conv2d.c.j2",
                   "mcuforge/firmware/kernels/c/mcu_conv_2d_s8.c", "mcuforge/firmware/host/host_main.c",
                   "mcuforge/firmware/runtime/harness.c", "mcuforge/firmware/runtime/CMakeLists.txt",
                   "mcuforge/boards/linker.ld.j2", "mcuforge/boards/toolchain-arm-none-eabi.cmake"]:
        assert needed in names, f"{needed} missing from {wheel.name}"
    dev = [n for n in names if n.startswith("devtools/") or "/fuzz/" in n or "/randmodel/" in n
           or n.endswith(("/tflite_writer.py", "/tflite_codec.py"))]
    assert not dev, f"development tools in the wheel: {dev}"
    # The venv borrows numpy/tflite/tflite-micro from this environment (a plain path entry, so this
    # environment's editable-install hook is not loaded) and gets mcuforge only from the wheel.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    venv_site = subprocess.run([str(py), "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                               capture_output=True, text=True).stdout.strip()
    deps = {os.path.dirname(os.path.dirname(m.__file__)) for m in (np, tflite, tflite_micro, jinja2)}
    (Path(venv_site) / "borrowed_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)], check=True,
                   capture_output=True)
    where = subprocess.run([str(py), "-c", "import mcuforge; print(mcuforge.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(str(venv)), where
    exe = venv / "bin" / "mcuforge"
    version = subprocess.run([str(exe), "--version"], cwd=tmp_path, capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("mcuforge "), version.stderr
    proc = subprocess.run([str(exe), "inspect", str(MLPERF_MODELS["ad"])], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "live lower bound:  768 B" in proc.stdout
    # The installed package generates, builds and runs C from its own templates and kernels.
    proc = subprocess.run([str(exe), "verify", str(MLPERF_MODELS["ad"]), "--on", "host", "--targets", "c", "-n", "2"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "verify PASS: 2/2" in proc.stdout
