"""The generated directory as a package of a firmware build system (`mcuforge compile --package`).

    zephyr      a Zephyr module: zephyr/module.yml, zephyr/CMakeLists.txt (a zephyr_library; the kernels
                in the shared mcuforge_kernels library), zephyr/Kconfig (CONFIG_MCUFORGE_<P>), and a
                twister sample in samples/<p>/ (sample.yaml for mps2/an386 and mps3/corstone300/an547)
    platformio  a PlatformIO library: library.json (sources, include paths, -O2, archived) and an example
    arduino     an Arduino library (1.5 format): library.properties, the sources flattened into src/,
                an example sketch in examples/<p>_run/
    cmsis-pack  a CMSIS-Pack: mcuforge.<p>.pdsc with two components, the model and the kernels of this
                mcuforge version (all of them, so that any number of models share one), which the
                model's condition requires at exactly that version

Each adds to (or rearranges) the files `emit` is about to write, so the package is written
atomically with the rest. The layouts and manifests are tested by building them the way each system
does (tests/test_packages.py); docs/integration.md says what could not be run here.
"""

from __future__ import annotations

from typing import Any, Callable

PACKAGES = ("zephyr", "platformio", "arduino", "cmsis-pack")


def write_package(files: dict[str, bytes], kind: str, ctx: dict[str, Any], render: Callable[..., str]) -> None:
    """Turn the generated files {relative path: bytes} into package `kind`; render(template name)
    renders a template of codegen/templates/packages with the model's context `ctx`."""
    {"zephyr": _zephyr, "platformio": _platformio, "arduino": _arduino, "cmsis-pack": _cmsis_pack}[kind](
        files, ctx, render)


def _zephyr(files: dict[str, bytes], ctx: dict[str, Any], render) -> None:
    p = ctx["p"]
    for template, name in (("zephyr_module.yml.j2", "zephyr/module.yml"),
                           ("zephyr_CMakeLists.txt.j2", "zephyr/CMakeLists.txt"),
                           ("zephyr_Kconfig.j2", "zephyr/Kconfig"),
                           ("zephyr_sample_CMakeLists.txt.j2", f"samples/{p}/CMakeLists.txt"),
                           ("zephyr_prj.conf.j2", f"samples/{p}/prj.conf"),
                           ("zephyr_sample.yaml.j2", f"samples/{p}/sample.yaml"),
                           ("zephyr_main.c.j2", f"samples/{p}/src/main.c")):
        files[name] = render(template).encode()


def _platformio(files: dict[str, bytes], ctx: dict[str, Any], render) -> None:
    files["library.json"] = render("library.json.j2").encode()
    files[f"examples/{ctx['p']}_run/main.c"] = render("pio_main.c.j2").encode()


def _arduino(files: dict[str, bytes], ctx: dict[str, Any], render) -> None:
    """Arduino compiles src/ (and its subfolders) with only src/ on the include path: the model and
    its kernels go to src/ side by side. No CMake files: the IDE does not read them."""
    p = ctx["p"]
    for name in (f"{p}.h", f"{p}.c", f"{p}_weights.h", f"{p}_weights.c"):
        files[f"src/{name}"] = files.pop(name)
    for name in [n for n in files if n.startswith("kernels/")]:
        files["src/" + name.removeprefix("kernels/")] = files.pop(name)
    for name in ("CMakeLists.txt", "mcuforge_kernels.cmake", "mcuforge_model.h"):
        del files[name]
    files["library.properties"] = render("library.properties.j2").encode()
    files[f"examples/{p}_run/{p}_run.ino"] = render("arduino_example.ino.j2").encode()


def _cmsis_pack(files: dict[str, bytes], ctx: dict[str, Any], render) -> None:
    """The kernels component carries every kernel of this mcuforge version: two models' packs then
    provide the same component, and one copy serves both."""
    from mcuforge.codegen.emit import all_kernel_files

    sources, headers = all_kernel_files()
    for name, path in sorted({**sources, **headers}.items()):
        files[f"kernels/{name}"] = path.read_bytes()
    files[f"mcuforge.{ctx['p']}.pdsc"] = render("pdsc.j2", {**ctx, "all_kernel_sources": sorted(sources)}).encode()
