"""`mcuforge compile --package zephyr|platformio|arduino|cmsis-pack`: each layout built the way its
build system builds it, with plain CMake and gcc invocations that mirror that system's rules (the
systems themselves are not installed here: docs/integration.md), two models at a time, and each
manifest checked against its format's rules."""

import fnmatch
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from conftest import MLPERF_MODELS, MODELS

from mcuforge.codegen.emit import emit
from mcuforge.driver import Options, compile_model
from mcuforge.oracle import run_tflm

# two models whose kernels differ (cmsis-nn and portable), one kernel header name in common
MODEL_SET = {"ad": (MLPERF_MODELS["ad"], ("cmsis-nn", "c")), "cv": (MODELS / "mix_ds_cnn.tflite", ("c",))}


@pytest.fixture(scope="module")
def compiled():
    return {p: compile_model(m, Options(targets=t)) for p, (m, t) in MODEL_SET.items()}


def package(compiled, tmp: Path, kind: str) -> dict[str, Path]:
    return {p: emit(c, tmp / p, p, MODEL_SET[p][0].name, package=kind) for p, c in compiled.items()}


def zero_byte_output(c) -> int:
    """Output 0's first byte after an inference on all-zero input bytes (what the samples run)."""
    zeros = [np.zeros(v.type.shape, v.type.np_dtype) for v in c.imported.main.params]
    return int(run_tflm(c.blob, [zeros])[0][0][0].reshape(-1).view(np.uint8)[0])


def run(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert proc.returncode == 0, " ".join(map(str, cmd))[:300] + "\n" + proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def simple_yaml(text: str) -> dict:
    """The nested mappings and lists of the manifests written here (indentation, `key: value`, `- item`)."""
    root: dict = {}
    stack = [(-1, root)]
    for raw in text.splitlines():
        line = raw.split(" #")[0].rstrip() if not raw.lstrip().startswith("-") else raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        item = line.strip()
        if item.startswith("- "):
            value = item[2:].strip().strip('"')
            parent.append(value)
            continue
        key, _, value = item.partition(":")
        if value.strip():
            parent[key] = value.strip().strip('"')
        else:
            nxt = [ln for ln in text.splitlines()[text.splitlines().index(raw) + 1:] if ln.strip()]
            child: list | dict = [] if nxt and nxt[0].strip().startswith("- ") else {}
            parent[key] = child
            stack.append((indent, child))
    return root


# ---------------------------------------------------------------- Zephyr

# What Zephyr's cmake/modules/extensions.cmake and kernel.cmake do for a module, and nothing more: every
# zephyr_library is a static library linked --whole-archive into the image; zephyr_interface carries
# Zephyr's own flags (-Os: CONFIG_SIZE_OPTIMIZATIONS); zephyr_library_compile_options come after them
# (an interface library linked after zephyr_interface); CONFIG_* symbols are CMake variables.
ZEPHYR_SHIM = r"""
cmake_minimum_required(VERSION 3.20)
project(zephyr_shim C)
add_library(zephyr_interface INTERFACE)
target_compile_options(zephyr_interface INTERFACE -Os)
target_include_directories(zephyr_interface INTERFACE ${ZEPHYR_STUBS})
macro(zephyr_library_named name)
  set(ZEPHYR_CURRENT_LIBRARY ${name})
  add_library(${name} STATIC "")
  set_property(GLOBAL APPEND PROPERTY ZEPHYR_LIBS ${name})
  target_link_libraries(${name} PUBLIC zephyr_interface)
endmacro()
function(zephyr_library_sources)
  target_sources(${ZEPHYR_CURRENT_LIBRARY} PRIVATE ${ARGN})
endfunction()
function(zephyr_include_directories)
  target_include_directories(zephyr_interface INTERFACE ${ARGN})
endfunction()
function(zephyr_library_include_directories)
  target_include_directories(${ZEPHYR_CURRENT_LIBRARY} PRIVATE ${ARGN})
endfunction()
function(zephyr_library_compile_options)
  string(MD5 unique "${ARGV}")
  if(NOT TARGET options_interface_lib_${unique})
    add_library(options_interface_lib_${unique} INTERFACE)
    target_compile_options(options_interface_lib_${unique} INTERFACE ${ARGV})
  endif()
  target_link_libraries(${ZEPHYR_CURRENT_LIBRARY} PRIVATE options_interface_lib_${unique})
endfunction()
foreach(dir IN LISTS ZEPHYR_MODULE_CMAKE_DIRS)
  get_filename_component(name ${dir} DIRECTORY)
  get_filename_component(name ${name} NAME)
  add_subdirectory(${dir} modules/${name})
endforeach()
get_property(libs GLOBAL PROPERTY ZEPHYR_LIBS)
foreach(sample IN LISTS SAMPLES)
  get_filename_component(name ${sample} NAME_WE)
  add_executable(${name} ${sample})
  target_link_libraries(${name} PRIVATE zephyr_interface -Wl,--whole-archive ${libs} -Wl,--no-whole-archive)
endforeach()
"""
ZEPHYR_STUBS = {"zephyr/kernel.h": "#include <stdint.h>\nstatic inline uint32_t k_cycle_get_32(void) { return 0; }\n",
                "zephyr/sys/printk.h": "#include <stdio.h>\n#define printk printf\n"}


def kconfig(path: Path) -> dict[str, str]:
    """config symbol -> its default ('' when none) from a Kconfig file."""
    out, current = {}, None
    for line in path.read_text().splitlines():
        if m := re.match(r"config (\w+)$", line):
            current = m.group(1)
            out[current] = ""
        elif current and (m := re.match(r"\s+default \"?([^\"]*)\"?$", line)):
            out[current] = m.group(1)
    return out


def test_zephyr_modules_build_and_run_as_zephyr_links_them(compiled, tmp_path):
    pkgs = package(compiled, tmp_path, "zephyr")
    defines, dirs, samples, regexes = [], [], [], {}
    for p, root in pkgs.items():
        module = simple_yaml((root / "zephyr" / "module.yml").read_text())
        assert module["name"] == f"mcuforge-{p}" and module["samples"] == [f"samples/{p}"]
        assert (root / module["build"]["kconfig"]).is_file() and (root / module["build"]["cmake"] / "CMakeLists.txt").is_file()
        symbols = kconfig(root / module["build"]["kconfig"])
        assert set(symbols) == {f"MCUFORGE_{p.upper()}", f"MCUFORGE_{p.upper()}_OPT"}
        sample = root / module["samples"][0]
        conf = dict(line.split("=", 1) for line in (sample / "prj.conf").read_text().split())
        assert conf[f"CONFIG_MCUFORGE_{p.upper()}"] == "y"
        defines += [f"-DCONFIG_{k}={conf.get('CONFIG_' + k, v)}" for k, v in symbols.items()]
        dirs.append(str(root / module["build"]["cmake"]))
        twister = simple_yaml((sample / "sample.yaml").read_text())
        test = twister["tests"][f"sample.mcuforge.{p}"]
        assert {"mps2/an386", "mps3/corstone300/an547", "mps2_an386", "mps3_an547"} == set(test["platform_allow"])
        assert twister["common"]["harness"] == "console" and twister["common"]["harness_config"]["type"] == "one_line"
        regexes[p] = twister["common"]["harness_config"]["regex"][0]
        assert "find_package(Zephyr" in (sample / "CMakeLists.txt").read_text()
        shutil.copy(sample / "src" / "main.c", tmp_path / f"sample_{p}.c")
        samples.append(str(tmp_path / f"sample_{p}.c"))
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "CMakeLists.txt").write_text(ZEPHYR_SHIM)
    for name, text in ZEPHYR_STUBS.items():
        (shim / "stubs" / name).parent.mkdir(parents=True, exist_ok=True)
        (shim / "stubs" / name).write_text(text)
    build = tmp_path / "build"
    run(["cmake", "-S", shim, "-B", build, "-DCMAKE_C_COMPILER=gcc", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON",
         f"-DZEPHYR_STUBS={shim / 'stubs'}", f"-DZEPHYR_MODULE_CMAKE_DIRS={';'.join(dirs)}",
         f"-DSAMPLES={';'.join(samples)}", *defines])
    link = run(["cmake", "--build", build, "--", "VERBOSE=1"]).stdout
    assert "--whole-archive" in link and "libmcuforge_kernels.a" in link
    for p, c in compiled.items():
        out = run([build / f"sample_{p}"]).stdout
        assert re.search(regexes[p], out), out
        assert f"output 0 byte 0 = {zero_byte_output(c)}," in out or f"output 0 byte 0 = {zero_byte_output(c)}\n" in out
    commands = json.loads((build / "compile_commands.json").read_text())
    for cmd in commands:  # the model's and the kernels' -O2 come after Zephyr's -Os
        if "/kernels/" in cmd["file"] or Path(cmd["file"]).name in ("ad.c", "ad_weights.c", "cv.c", "cv_weights.c"):
            opts = [f for f in cmd["command"].split() if f.startswith("-O")]
            assert opts[-1] == "-O2" and "-Os" in opts, cmd["command"]


# ---------------------------------------------------------------- PlatformIO

def pio_sources(lib: Path, build: dict) -> list[Path]:
    """PlatformIO's srcFilter over srcDir: '+<glob>' adds, '-<glob>' removes, in order."""
    src = lib / build.get("srcDir", "src")
    files = [f for f in sorted(src.rglob("*")) if f.suffix in (".c", ".cpp", ".S")]
    chosen: set[Path] = set()
    for rule in build.get("srcFilter", ["+<*>"]):
        sign, pattern = rule[0], rule[2:-1]
        matched = {f for f in files if fnmatch.fnmatch(f.relative_to(src).as_posix(), pattern)}
        chosen = chosen | matched if sign == "+" else chosen - matched
    return sorted(chosen)


def pio_flags(lib: Path, flags: list[str]) -> list[str]:
    """Library build flags, a relative -I resolved against the library's folder (as PlatformIO does)."""
    out = []
    for f in flags:
        if f.startswith("-I"):
            out.append(f"-I{(lib / f[2:].strip()).resolve()}")
        else:
            out.append(f)
    return out


def test_platformio_libraries_build_as_archives_and_link(compiled, tmp_path):
    pkgs = package(compiled, tmp_path, "platformio")
    archives, includes = [], []
    for p, lib in pkgs.items():
        manifest = json.loads((lib / "library.json").read_text())
        assert manifest["name"] == p and re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])
        assert manifest["headers"] == f"{p}.h" and manifest["build"]["libArchive"] is True
        build = manifest["build"]
        inc = [f"-I{(lib / build['includeDir']).resolve()}", f"-I{(lib / build.get('srcDir', 'src')).resolve()}"]
        includes += inc
        objects = []
        for src in pio_sources(lib, build):
            obj = tmp_path / "obj" / p / (src.relative_to(lib).as_posix().replace("/", "_") + ".o")
            obj.parent.mkdir(parents=True, exist_ok=True)
            run(["gcc", "-Os", "-Wall", *inc, *pio_flags(lib, build["flags"]), "-c", src, "-o", obj])
            objects.append(obj)
        assert {o.name for o in objects} >= {f"{p}.c.o", f"{p}_weights.c.o"}
        archive = tmp_path / f"lib{p}.a"
        run(["ar", "rcs", archive, *objects])
        archives.append(archive)
        example = manifest["examples"][0]
        assert (lib / example["base"] / example["files"][0]).is_file()
    for p, lib in pkgs.items():  # each example in a project that uses both libraries
        exe = tmp_path / f"example_{p}"
        run(["gcc", "-Os", *includes, lib / "examples" / f"{p}_run" / "main.c", *archives, "-o", exe])
        run([exe])


# ---------------------------------------------------------------- Arduino

ARDUINO_H = r"""
#include <stdio.h>
struct SerialStub {
  void begin(unsigned long) {}
  void print(const char *s) { fputs(s, stdout); }
  void print(int v) { printf("%d", v); }
  void println(unsigned long v) { printf("%lu\n", v); }
};
static SerialStub Serial;
static unsigned long micros() { return 0; }
static void delay(unsigned long) {}
"""
LIBRARY_PROPERTIES = ("name", "version", "author", "maintainer", "sentence", "paragraph", "category", "url",
                      "architectures")
ARDUINO_CATEGORIES = ("Display", "Communication", "Signal Input/Output", "Sensors", "Device Control", "Timing",
                      "Data Storage", "Data Processing", "Other")


def test_arduino_libraries_build_like_the_arduino_ide(compiled, tmp_path):
    """Arduino (1.5 library format): every file under src/ compiled with only src/ on the include
    path, archived (dot_a_linkage); the sketch is C++ with Arduino.h included first."""
    pkgs = package(compiled, tmp_path, "arduino")
    archives, includes = [], []
    for p, lib in pkgs.items():
        props = dict(line.split("=", 1) for line in (lib / "library.properties").read_text().splitlines() if line)
        assert set(LIBRARY_PROPERTIES) <= set(props) and props["name"] == p
        assert props["category"] in ARDUINO_CATEGORIES and props["dot_a_linkage"] == "true"
        assert props["includes"] == f"{p}.h" and (lib / "src" / props["includes"]).is_file()
        assert not (lib / "kernels").exists() and not (lib / "CMakeLists.txt").exists()
        objects = []
        for src in sorted((lib / "src").rglob("*.c")):
            obj = tmp_path / "obj" / p / (src.name + ".o")
            obj.parent.mkdir(parents=True, exist_ok=True)
            run(["gcc", "-Os", "-w", "-I", lib / "src", "-c", src, "-o", obj])
            objects.append(obj)
        archive = tmp_path / f"{p}.a"
        run(["ar", "rcs", archive, *objects])
        archives.append(archive)
        includes += ["-I", lib / "src"]
    (tmp_path / "Arduino.h").write_text(ARDUINO_H)
    for p, lib in pkgs.items():
        sketch = (lib / "examples" / f"{p}_run" / f"{p}_run.ino").read_text()
        cpp = tmp_path / f"{p}_run.ino.cpp"
        cpp.write_text("#include <Arduino.h>\n" + sketch + "\nint main() { setup(); loop(); return 0; }\n")
        exe = tmp_path / f"sketch_{p}"
        run(["g++", "-Os", "-Wall", "-Werror", "-I", tmp_path, *includes, cpp, *archives, "-o", exe])
        assert run([exe]).stdout == f"{p}: status 0, us 0\n"


# ---------------------------------------------------------------- CMSIS-Pack

# PACK.xsd (schema 1.7.32) rules for what the .pdsc uses
RESTRICTED = r"[\-_A-Za-z0-9]+"
SIMPLE_VERSION = r"[0-9]+\.[0-9]+(\.[0-9]+)?"
SEMVER_QUALITY = r"(\-((0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
COMPONENT_VERSION = r"(0|[1-9]\d*)\.([0-9]+)(\.([0-9]+))?" + SEMVER_QUALITY
PACK_VERSION = r"[0-9]+\.[0-9]+\.[0-9]+" + SEMVER_QUALITY + r"(\+([0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*))?"
CONDITION_VERSION = rf"[0-9]+\.[0-9]+\.[0-9]+{SEMVER_QUALITY}(:[0-9]+\.[0-9]+\.[0-9]+{SEMVER_QUALITY})?"
FILE_CATEGORIES = {"doc", "header", "include", "library", "object", "source", "sourceC", "sourceCpp", "sourceAsm",
                   "linkerScript", "utility", "image", "other", "preIncludeGlobal", "preIncludeLocal", "genSource",
                   "genHeader", "genParams", "genAsset"}
PACKAGE_CHILDREN = {"name", "vendor", "description", "url", "dominate", "repository", "supportContact", "license",
                    "licenseSets", "requirements", "releases", "changelogs", "keywords", "generators", "devices",
                    "boards", "parts", "taxonomy", "part-taxonomy", "apis", "conditions", "examples", "clayers",
                    "components"}
FILTER_ATTRIBUTES = {"Dvendor", "Dname", "Dcore", "Dfpu", "Ddsp", "Dmve", "Cvendor", "Cbundle", "Cclass", "Cgroup",
                     "Csub", "Cvariant", "Cversion", "Capiversion", "Tcompiler", "condition"}


def check_pdsc(path: Path) -> ET.Element:
    """The .pdsc against PACK.xsd's structure: the root and its (xs:all, once each) children, the
    required ones present, names and versions in their patterns, components with a description and
    files of known categories that exist, conditions that exist and filter on known attributes."""
    root = ET.parse(path).getroot()
    assert root.tag == "package" and re.fullmatch(SIMPLE_VERSION, root.get("schemaVersion", ""))
    tags = [c.tag for c in root]
    assert len(tags) == len(set(tags)) and set(tags) <= PACKAGE_CHILDREN
    assert {"name", "vendor", "description", "url", "releases"} <= set(tags)
    assert re.fullmatch(RESTRICTED, root.findtext("name")) and re.fullmatch(RESTRICTED, root.findtext("vendor"))
    assert path.name == f"{root.findtext('vendor')}.{root.findtext('name')}.pdsc"
    releases = root.findall("releases/release")
    assert releases and all(re.fullmatch(PACK_VERSION, r.get("version")) for r in releases)
    conditions = {c.get("id"): c for c in root.findall("conditions/condition")}
    for c in conditions.values():
        for f in c:
            if f.tag in ("accept", "require", "deny"):
                assert set(f.attrib) <= FILTER_ATTRIBUTES and re.fullmatch(CONDITION_VERSION, f.get("Cversion", "0.0.0"))
    for comp in root.findall("components/component"):
        assert {"Cclass", "Cgroup", "Cversion"} <= set(comp.attrib)
        assert re.fullmatch(COMPONENT_VERSION, comp.get("Cversion"))
        assert all(2 <= len(comp.get(a)) <= 32 for a in ("Cclass", "Cgroup", "Csub") if comp.get(a))
        assert comp.get("condition") is None or comp.get("condition") in conditions
        assert comp.findtext("description")
        for f in comp.findall("files/file"):
            assert f.get("category") in FILE_CATEGORIES and (path.parent / f.get("name")).exists(), f.attrib
    return root


def component(root: ET.Element, csub: str) -> ET.Element:
    return next(c for c in root.findall("components/component") if c.get("Csub") == csub)


def test_cmsis_packs_are_valid_and_build_from_their_components(compiled, tmp_path):
    """Two packs: one copy of their (identical) kernels component and both model components, built
    as a CMSIS project is: every source file of the selected components, include paths from their
    include and header files."""
    pkgs = package(compiled, tmp_path, "cmsis-pack")
    roots = {p: check_pdsc(d / f"mcuforge.{p}.pdsc") for p, d in pkgs.items()}
    kernels = {p: component(r, "kernels") for p, r in roots.items()}
    lists = {p: [(f.get("category"), f.get("name")) for f in k.findall("files/file")] for p, k in kernels.items()}
    assert lists["ad"] == lists["cv"]  # the same component: one serves both models
    for category, name in lists["ad"]:
        if category == "source":
            assert (pkgs["ad"] / name).read_bytes() == (pkgs["cv"] / name).read_bytes()
    for p, r in roots.items():
        model = component(r, p)
        require = r.find(f"conditions/condition[@id='{model.get('condition')}']/require")
        assert (require.get("Csub"), require.get("Cversion")) == ("kernels", f"{kernels[p].get('Cversion')}:"
                                                                            f"{kernels[p].get('Cversion')}")
    selected = [(pkgs["ad"], kernels["ad"]), *((pkgs[p], component(roots[p], p)) for p in pkgs)]
    sources, includes = [], []
    for base, comp in selected:
        for f in comp.findall("files/file"):
            path = base / f.get("name")
            if f.get("category") == "source":
                sources.append(path)
            elif f.get("category") in ("include", "header"):
                includes += ["-I", path if f.get("category") == "include" else path.parent]
    main = tmp_path / "main.c"
    main.write_text('#include <stdio.h>\n#include "ad.h"\n#include "cv.h"\nint main(void) {\n'
                    "  if (fread(ad_input(0), 1, AD_INPUT0_SIZE, stdin) != AD_INPUT0_SIZE) return 1;\n"
                    "  if (fread(cv_input(0), 1, CV_INPUT0_SIZE, stdin) != CV_INPUT0_SIZE) return 1;\n"
                    "  if (ad_run() != AD_OK || cv_run() != CV_OK) return 2;\n"
                    "  fwrite(ad_output(0), 1, AD_OUTPUT0_SIZE, stdout);\n"
                    "  fwrite(cv_output(0), 1, CV_OUTPUT0_SIZE, stdout);\n  return 0;\n}\n")
    exe = tmp_path / "app"
    run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-ffunction-sections", "-Wl,--gc-sections", *includes,
         *sources, main, "-o", exe])
    rng = np.random.default_rng(9)
    xs = {p: [rng.integers(-128, 128, v.type.shape, dtype=np.int8) for v in c.imported.main.params]
          for p, c in compiled.items()}
    out = subprocess.run([str(exe)], input=b"".join(x[0].tobytes() for x in xs.values()), capture_output=True,
                         check=True).stdout
    assert out == b"".join(run_tflm(c.blob, [xs[p]])[0][0][0].tobytes() for p, c in compiled.items())


def test_packages_from_the_command_line(cli, tmp_path):
    proc = cli("compile", MLPERF_MODELS["ad"], "-o", tmp_path / "pack", "--prefix", "ad", "--package", "cmsis-pack")
    assert proc.returncode == 0 and "as a CMSIS-Pack" in proc.stdout and (tmp_path / "pack" / "mcuforge.ad.pdsc").is_file()
    proc = cli("compile", MLPERF_MODELS["ad"], "-o", tmp_path / "out", "--package", "yocto")
    assert proc.returncode == 2 and "invalid choice: 'yocto'" in proc.stderr and not (tmp_path / "out").exists()
