"""The generated CMake projects in a user's firmware: any number of models, linked any way (static,
--whole-archive as Zephyr links its libraries, OBJECT libraries), share one version-checked
`mcuforge_kernels` library; -O2 unless the user says otherwise. Built with host gcc (and run,
bit-exact with TFLM) and with arm-none-eabi-gcc through the toolchain file."""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest
from conftest import MLPERF_MODELS, MODELS

from mcuforge.codegen.emit import emit
from mcuforge.driver import Options, compile_model
from mcuforge.firmware_build import TOOLCHAIN_FILE
from mcuforge.oracle import run_tflm
from mcuforge.verify import random_inputs

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None and os.environ.get("CI") != "true",
                                reason="cmake not installed (CI=true makes this a failure)")

# prefix -> (model, targets): two cmsis-nn models sharing a kernel, one portable
MODEL_SET = {"ad": (MLPERF_MODELS["ad"], ("cmsis-nn", "c")), "kws": (MLPERF_MODELS["kws"], ("cmsis-nn", "c")),
             "cv": (MODELS / "mix_ds_cnn.tflite", ("c",))}

MAIN = """#include <stdio.h>
{includes}
int main(void) {{
{body}    return 0;
}}
"""
RUN_ONE = """    if (fread({p}_input(0), 1, {P}_INPUT0_SIZE, stdin) != {P}_INPUT0_SIZE || {p}_run() != {P}_OK) return 1;
    fwrite({p}_output0(), 1, {P}_OUTPUT0_SIZE, stdout);
"""
BARE_MAIN = """{includes}
int main(void) {{ return {calls}; }}
"""


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("models")
    compiled = {p: compile_model(m, Options(targets=t)) for p, (m, t) in MODEL_SET.items()}
    for p, c in compiled.items():
        emit(c, tmp / p, p, MODEL_SET[p][0].name)
    return tmp, compiled


def app(tmp, src, prefixes, link: str, bare: bool = False, before: str = "") -> None:
    """A user's project in tmp: the generated directories copied from src, a main, and a CMakeLists."""
    for p in prefixes:
        shutil.copytree(src / p, tmp / p, dirs_exist_ok=True)
    includes = "\n".join(f'#include "{p}.h"' for p in prefixes)
    if bare:
        text = BARE_MAIN.format(includes=includes, calls=" + ".join(f"{p}_run()" for p in prefixes))
    else:
        text = MAIN.format(includes=includes, body="".join(RUN_ONE.format(p=p, P=p.upper()) for p in prefixes))
    (tmp / "main.c").write_text(text)
    subdirs = "\n".join(f"add_subdirectory({p})" for p in prefixes)
    (tmp / "CMakeLists.txt").write_text(f"cmake_minimum_required(VERSION 3.13)\nproject(app C)\n{before}\n{subdirs}\n"
                                        f"add_executable(app main.c)\ntarget_link_libraries(app PRIVATE {link})\n")


def cmake(tmp, *args, check=True):
    conf = subprocess.run(["cmake", "-S", str(tmp), "-B", str(tmp / "b"), "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", *args],
                          capture_output=True, text=True)
    if not check:
        return conf
    assert conf.returncode == 0, conf.stdout[-3000:] + conf.stderr[-3000:]
    build = subprocess.run(["cmake", "--build", str(tmp / "b"), "--", "VERBOSE=1"], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    return build


def test_three_models_static_whole_archive_and_object_run_bit_exact(models, tmp_path):
    src, compiled = models
    app(tmp_path, src, ["ad", "kws", "cv"], "ad -Wl,--whole-archive kws -Wl,--no-whole-archive cv",
        before="set(CV_LIBRARY_TYPE OBJECT)")
    cmake(tmp_path, "-DCMAKE_C_COMPILER=gcc")
    rng = np.random.default_rng(3)
    inputs = {p: random_inputs(c.imported, rng) for p, c in compiled.items()}
    out = subprocess.run([str(tmp_path / "b" / "app")], input=b"".join(inputs[p][0].tobytes() for p in compiled),
                         capture_output=True, check=True).stdout
    want = b"".join(run_tflm(c.blob, [inputs[p]])[0][0][0].tobytes() for p, c in compiled.items())
    assert out == want
    # one kernel library, each kernel compiled once although ad and kws both bring the fully connected one
    commands = json.loads((tmp_path / "b" / "compile_commands.json").read_text())
    kernels = [os.path.basename(c["file"]) for c in commands if "mcuforge_kernels.dir" in c["command"]]
    assert len(kernels) == len(set(kernels)) and "mcu_cmsis_fully_connected_s8.c" in kernels
    assert {"mcu_conv_2d_s8.c", "mcu_cmsis_conv2d_s8.c"} <= set(kernels)
    # compiled with the union of the models' kernel paths (mcu_cmsis_paths.h)
    union = {f"-DMCU_PATH_{name}=1" for p in compiled for name in json.loads((src / p / "report.json").read_text())
             ["kernel_paths"]}
    assert union  # KWS takes some
    for c in commands:
        if "mcuforge_kernels.dir" in c["command"]:
            assert "-DMCU_PATHS_SELECTED" in c["command"].split()
            assert {w for w in c["command"].split() if w.startswith("-DMCU_PATH_")} == union


@pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None and os.environ.get("CI") != "true",
                    reason="arm-none-eabi-gcc not installed")
@pytest.mark.parametrize("prefixes", [["ad", "kws"], ["ad", "kws", "cv"]], ids=["two", "three"])
def test_models_link_whole_archive_with_arm_gcc(models, tmp_path, prefixes):
    """Every model library and mcuforge_kernels inside --whole-archive, as Zephyr links: no symbol is
    defined twice. arm-none-eabi-gcc through the toolchain file, for a Cortex-M4."""
    src, _ = models
    libs = " ".join(prefixes + ["mcuforge_kernels"])
    app(tmp_path, src, prefixes, f"-Wl,--whole-archive {libs} -Wl,--no-whole-archive -Wl,--entry=main", bare=True)
    build = cmake(tmp_path, f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN_FILE}",
                  "-DMCU_CPU_FLAGS=-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
    link = [line for line in build.stdout.splitlines() if "--whole-archive" in line]
    assert link and "arm-none-eabi-gcc" in link[0] and "libmcuforge_kernels.a" in link[0]
    symbols = subprocess.run(["arm-none-eabi-nm", str(tmp_path / "b" / "app")], capture_output=True, text=True,
                             check=True).stdout
    for p in prefixes:
        assert f" T {p}_run\n" in symbols
    assert " T mcu_cmsis_fully_connected_s8\n" in symbols


def test_two_mcuforge_versions_stop_the_configure(models, tmp_path):
    src, _ = models
    app(tmp_path, src, ["ad", "kws"], "ad kws")
    helper = tmp_path / "kws" / "mcuforge_kernels.cmake"
    text = helper.read_text()
    helper.write_text(text.replace('set(_mcuforge_version "', 'set(_mcuforge_version "0.0.1-other+', 1))
    conf = cmake(tmp_path, "-DCMAKE_C_COMPILER=gcc", check=False)
    assert conf.returncode != 0
    err = " ".join(conf.stderr.split())
    assert "was generated by mcuforge 0.0.1-other+" in err and "models linked together share their kernels" in err


def test_a_differing_kernel_stops_the_configure(models, tmp_path):
    """Same version string, different kernel file (a development build): not silently shared."""
    src, _ = models
    app(tmp_path, src, ["ad", "kws"], "ad kws")
    with open(tmp_path / "kws" / "kernels" / "mcu_cmsis_fully_connected_s8.c", "a") as f:
        f.write("/* changed */\n")
    conf = cmake(tmp_path, "-DCMAKE_C_COMPILER=gcc", check=False)
    assert conf.returncode != 0
    assert "mcu_cmsis_fully_connected_s8.c differs from" in " ".join(conf.stderr.split())


@pytest.mark.parametrize("args, want, absent", [
    ((), "-O2", "-O0"),
    (("-DCMAKE_BUILD_TYPE=Debug",), "-O2", None),       # Debug's -O0 comes first: -O2 wins
    (("-DMCUFORGE_OPT=-Os",), "-Os", "-O2"),
    (("-DMCUFORGE_OPT=", "-DCMAKE_BUILD_TYPE=Release"), "-O3", "-O2"),  # "" follows the build type
], ids=["default", "debug-build", "user-Os", "follow-build-type"])
def test_optimization_level(models, tmp_path, args, want, absent):
    src, _ = models
    app(tmp_path, src, ["ad"], "ad")
    cmake(tmp_path, "-DCMAKE_C_COMPILER=gcc", *args)
    commands = json.loads((tmp_path / "b" / "compile_commands.json").read_text())
    ours = [c["command"].split() for c in commands if "main.c" not in c["file"]]
    assert len(ours) == 3  # ad.c, ad_weights.c, the kernel
    for flags in ours:
        opts = [f for f in flags if f.startswith("-O")]
        assert opts[-1] == want, flags
        assert absent is None or absent not in opts
