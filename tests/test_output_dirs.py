"""`mcuforge compile -o DIR` never destroys a user's files (codegen/output_dir.py), through the real
command line: what is written, what is replaced, what is refused (one line, exit 2, everything that
was there still there byte for byte, nothing left beside it), what --force does, and where
`mcuforge build` builds (outside DIR)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest
from conftest import MODELS, run_cli
from mcuforge.codegen.output_dir import MARKER

MODEL = MODELS / "conv_2d_16ch_same_relu6.tflite"
REPLACE = "add --force to replace it and everything in it"


def compile_to(out, *extra, cwd=None):
    return run_cli("compile", MODEL, "-o", out, *extra, cwd=cwd)


def refused(proc, message: str) -> None:
    """Exit 2 and exactly this one line on stderr, nothing on stdout."""
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"mcuforge: error: {message}\n")


def snapshot(root: Path) -> dict[str, object]:
    """Everything under `root` (root itself included), without following links: bytes, link
    targets, directories, with their modes."""
    def one(p: Path) -> object:
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            return ("link", os.readlink(p))
        if stat.S_ISDIR(st.st_mode):
            return ("dir", stat.S_IMODE(st.st_mode))
        return ("file", stat.S_IMODE(st.st_mode), p.read_bytes())

    out = {".": one(root)}
    if os.path.isdir(root) and not os.path.islink(root):
        for dirpath, dirs, files in os.walk(root):
            for n in dirs + files:
                p = Path(dirpath) / n
                out[str(p.relative_to(root))] = one(p)
    return out


def leftovers(parent: Path) -> list[str]:
    """Temporary siblings (.NAME.tmp-..., .NAME.old-..., .NAME.probe-...) left in `parent`."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def user_project(root: Path) -> Path:
    """A user's source folder: files, a subdirectory, a hidden file, a link."""
    root.mkdir(parents=True)
    (root / "main.c").write_text("int main(void) { return 0; }\n")
    (root / "lib").mkdir()
    (root / "lib" / "util.h").write_bytes(bytes(range(256)))
    (root / ".config").write_text("keep me\n")
    (root / "latest").symlink_to("main.c")
    return root


@pytest.fixture(autouse=True)
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


# ---------------------------------------------------------------- written, replaced

def test_fresh_directory_with_missing_parents_gets_normal_permissions(tmp_path):
    out = tmp_path / "a" / "b" / "out"
    proc = compile_to(out)
    assert proc.returncode == 0, proc.stderr
    for d in (tmp_path / "a", tmp_path / "a" / "b", out, out / "kernels"):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o755, d
    files = [p for p in out.rglob("*") if p.is_file()]
    assert files and all(stat.S_IMODE(os.stat(p).st_mode) == 0o644 for p in files)
    marker = json.loads((out / MARKER).read_text())
    from mcuforge import __version__

    assert marker["mcuforge"] == __version__
    assert sorted(marker["files"]) == sorted(str(p.relative_to(out)) for p in files if p.name != MARKER)
    assert {"model.h", "model.c", "report.json", "CMakeLists.txt"} <= set(marker["files"])
    assert leftovers(tmp_path) == [] and leftovers(tmp_path / "a" / "b") == []


def test_empty_directory_is_used(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    assert compile_to(out).returncode == 0
    assert (out / "model.c").is_file() and leftovers(tmp_path) == []


def test_recompile_replaces_its_own_output(tmp_path):
    out = tmp_path / "out"
    assert compile_to(out).returncode == 0
    proc = compile_to(out, "--prefix", "net")
    assert proc.returncode == 0, proc.stderr
    assert (out / "net.c").is_file() and not (out / "model.c").exists()  # replaced whole, nothing stale
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o755 and leftovers(tmp_path) == []


# ---------------------------------------------------------------- refused, untouched

def test_users_source_folder_is_refused_and_left_byte_for_byte(tmp_path):
    src = user_project(tmp_path / "src")
    before = snapshot(src)
    refused(compile_to(src), f"-o {src}: is not empty and was not written by mcuforge (it has no {MARKER}): give a "
                             f"new or empty directory, or {REPLACE}")
    assert snapshot(src) == before and leftovers(tmp_path) == []


@pytest.mark.parametrize("change, problem", [
    ("add a file", "holds files mcuforge did not write (notes.txt)"),
    ("add a build", "holds files mcuforge did not write (build/)"),
    ("edit model.c", "was written by mcuforge but model.c changed since"),
    ("link a kernel", "holds files mcuforge did not write (kernels/extra.c)"),
    ("break the marker", f"its {MARKER} is not mcuforge's (Expecting value: line 1 column 1 (char 0))"),
])
def test_users_change_to_an_output_is_refused(tmp_path, change, problem):
    out = tmp_path / "out"
    assert compile_to(out).returncode == 0
    if change == "add a file":
        (out / "notes.txt").write_text("mine\n")
    elif change == "add a build":
        (out / "build" / "x").mkdir(parents=True)
        (out / "build" / "x" / "app.o").write_bytes(b"\0" * 10)
    elif change == "edit model.c":
        (out / "model.c").write_text((out / "model.c").read_text() + "/* my fix */\n")
    elif change == "link a kernel":
        (out / "kernels" / "extra.c").symlink_to(tmp_path / "elsewhere.c")
    else:
        (out / MARKER).write_text("")
    before = snapshot(out)
    refused(compile_to(out), f"-o {out}: {problem}: give a new or empty directory, or {REPLACE}")
    assert snapshot(out) == before and leftovers(tmp_path) == []


def test_existing_file_is_refused_then_replaced_with_force(tmp_path):
    f = tmp_path / "out"
    f.write_text("my notes\n")
    refused(compile_to(f), f"-o {f}: is an existing file, not a directory: give a directory name, or add --force to "
                           "replace the file")
    assert f.read_text() == "my notes\n" and leftovers(tmp_path) == []
    proc = compile_to(f, "--force")
    assert proc.returncode == 0, proc.stderr
    assert (f / "model.c").is_file() and leftovers(tmp_path) == []


def test_symlink_is_refused_and_force_replaces_the_link_never_its_target(tmp_path):
    real = user_project(tmp_path / "real")
    before = snapshot(real)
    link = tmp_path / "out"
    link.symlink_to(real)
    refused(compile_to(link), f"-o {link}: is a symbolic link (to {real}): give a real directory, or add --force to "
                              "replace the link itself (never what it points to)")
    proc = compile_to(link, "--force")
    assert proc.returncode == 0, proc.stderr
    assert not link.is_symlink() and (link / "model.c").is_file()
    assert snapshot(real) == before and leftovers(tmp_path) == []


def test_link_to_a_file_with_force_leaves_the_file(tmp_path):
    target = tmp_path / "keep.txt"
    target.write_text("mine\n")
    link = tmp_path / "out"
    link.symlink_to(target)
    assert compile_to(link, "--force").returncode == 0
    assert target.read_text() == "mine\n" and (link / "model.c").is_file()


@pytest.mark.parametrize("force", [(), ("--force",)])
def test_current_directory_is_refused_even_with_force(tmp_path, force):
    project = user_project(tmp_path / "project")
    (project / "model.tflite").write_bytes(MODEL.read_bytes())
    before = snapshot(project)
    for spelling in (".", str(project), "lib/.."):
        proc = run_cli("compile", "model.tflite", "-o", spelling, *force, cwd=project)
        refused(proc, f"-o {spelling}: is the current directory or holds it, and mcuforge replaces its output "
                      "directory whole: give a subdirectory (e.g. -o model_out), even with --force")
    refused(run_cli("compile", "model.tflite", "-o", "..", *force, cwd=project),
            "-o ..: is the current directory or holds it, and mcuforge replaces its output directory whole: give a "
            "subdirectory (e.g. -o model_out), even with --force")
    assert snapshot(project) == before and leftovers(tmp_path) == []


def test_device_is_refused_even_with_force():
    for force in ((), ("--force",)):
        refused(compile_to("/dev/null", *force), "-o /dev/null: is a character device, not a directory: mcuforge "
                                                 "never replaces it, even with --force")


def test_named_pipe_is_refused_even_with_force(tmp_path):
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    refused(compile_to(fifo, "--force"), f"-o {fifo}: is a named pipe, not a directory: mcuforge never replaces it, "
                                         "even with --force")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# ---------------------------------------------------------------- cannot be written

def test_parent_that_is_a_file(tmp_path):
    (tmp_path / "notes").write_text("x\n")
    for out in (tmp_path / "notes" / "out", tmp_path / "notes" / "a" / "out"):
        refused(compile_to(out), f"-o {out}: {tmp_path / 'notes'} is a file, not a directory")
    assert (tmp_path / "notes").read_text() == "x\n" and leftovers(tmp_path) == []


@pytest.mark.parametrize("out, parent", [("/proc/mcuforge-out", "/proc"), ("/sys/mcuforge-out", "/sys"),
                                         ("/proc/self/mcuforge-out", "/proc/self")])
def test_path_in_a_filesystem_that_takes_no_directories(out, parent):
    proc = compile_to(out)
    assert proc.returncode == 2 and proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith(f"mcuforge: error: -o {out}: cannot create a directory in "), proc.stderr
    assert "Traceback" not in proc.stderr and not os.path.lexists(out)


def test_permission_denied_in_process(tmp_path, capsys, monkeypatch):
    """A read-only directory (CI runs as root, which writes anyway: the OS refusal is simulated):
    creating anything in `ro` is refused with one line naming the path and the OS's reason."""
    import errno

    from mcuforge.cli import main

    ro = tmp_path / "ro"
    ro.mkdir()
    mkdir = os.mkdir

    def denied(path, *a, **k):
        if Path(path).parent == ro:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return mkdir(path, *a, **k)

    monkeypatch.setattr(os, "mkdir", denied)
    for out, problem in ((ro / "out", f"cannot create a directory in {ro} (Permission denied)"),
                         (ro / "a" / "out", f"cannot create {ro / 'a'} (Permission denied)")):
        assert main(["compile", str(MODEL), "-o", str(out)]) == 2
        assert capsys.readouterr() == ("", f"mcuforge: error: -o {out}: {problem}\n")
    assert list(ro.iterdir()) == []


def test_disk_full_half_way_leaves_the_earlier_output_and_no_temporary(tmp_path, capsys, monkeypatch):
    import errno

    from mcuforge.cli import main

    out = tmp_path / "out"
    assert compile_to(out).returncode == 0
    before = snapshot(out)
    write_bytes, written = Path.write_bytes, []

    def full(self, data):
        if len(written) == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        written.append(self)
        return write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", full)
    assert main(["compile", str(MODEL), "-o", str(out)]) == 2
    _, err = capsys.readouterr()
    assert re.fullmatch(rf"mcuforge: error: -o {re.escape(str(out))}: cannot write the output directory \(No space "
                        rf"left on device: {re.escape(str(tmp_path))}/\.out\.tmp-[0-9a-f]{{8}}/\S+\)\n", err), err
    assert snapshot(out) == before and leftovers(tmp_path) == []


def test_failed_compile_leaves_an_earlier_output_as_it_was(tmp_path):
    out = tmp_path / "out"
    assert compile_to(out).returncode == 0
    before = snapshot(out)
    proc = compile_to(out, "--prefix", "int")
    assert proc.returncode == 2 and "not a usable C identifier" in proc.stderr
    assert snapshot(out) == before and leftovers(tmp_path) == []


# ---------------------------------------------------------------- --force

def test_force_replaces_a_users_directory_whole(tmp_path):
    src = user_project(tmp_path / "src")
    proc = compile_to(src, "--force")
    assert proc.returncode == 0, proc.stderr
    assert not (src / "main.c").exists() and (src / "model.c").is_file() and leftovers(tmp_path) == []
    assert compile_to(src).returncode == 0  # now mcuforge's own output: no --force needed


def test_force_never_replaces_the_directory_holding_the_model(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    model = models / "m.tflite"
    shutil.copy(MODEL, model)
    refused(run_cli("compile", model, "-o", models, "--force"),
            f"-o {models}: holds {model}, the model being compiled: give another directory")
    refused(run_cli("compile", model, "-o", model, "--force"),
            f"-o {model}: holds {model}, the model being compiled: give another directory")
    assert model.read_bytes() == MODEL.read_bytes() and sorted(p.name for p in models.iterdir()) == ["m.tflite"]


# ---------------------------------------------------------------- mcuforge build: outside DIR

def test_build_dir_inside_the_output_is_refused(tmp_path):
    out = tmp_path / "out"
    assert compile_to(out).returncode == 0
    before = snapshot(out)
    refused(run_cli("build", out, "--board", "mps2-an386", "--build-dir", out / "build"),
            f"build directory {out / 'build'} is inside {out}: the build would add files to the directory a "
            "firmware add_subdirectory()s; give one outside it")
    assert snapshot(out) == before


def test_default_build_dir_is_outside_the_output(tmp_path, monkeypatch):
    from mcuforge.boards import load_board

    from mcuforge.device import default_build_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    board = load_board("mps2-an386")
    a = default_build_dir(tmp_path / "out", board)
    assert a.parent == tmp_path / "cache" / "mcuforge" / "build" and a.name.endswith("-mps2_an386")
    assert default_build_dir(tmp_path / "x" / ".." / "out", board) == a  # the same directory, the same build
    assert default_build_dir(tmp_path / "other", board) != a
    assert default_build_dir(tmp_path / "out", board, guard=True) == a.with_name(a.name + "-guard")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # not absolute: ignored, as the XDG spec says
    assert default_build_dir(tmp_path / "out", board).parent == Path.home() / ".cache" / "mcuforge" / "build"


_TOOLS = [t for t in ("arm-none-eabi-gcc", "cmake", "qemu-system-arm") if shutil.which(t) is None]


@pytest.mark.slow
@pytest.mark.skipif(bool(_TOOLS) and os.environ.get("CI") != "true", reason=f"needs {', '.join(_TOOLS)}")
def test_build_leaves_the_output_directory_alone(tmp_path, monkeypatch):
    """`mcuforge build DIR` writes nothing into DIR (which a firmware may add_subdirectory()): the
    ELF is under the cache directory, and says so; DIR can be compiled over again afterwards."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out = tmp_path / "out"
    assert compile_to(out).returncode == 0
    before = snapshot(out)
    proc = run_cli("build", out, "--board", "mps2-an386")
    assert proc.returncode == 0, proc.stderr
    assert snapshot(out) == before
    elf = Path(proc.stdout.splitlines()[0].removeprefix("firmware: "))
    assert elf.is_file() and (tmp_path / "cache" / "mcuforge" / "build") in elf.parents
    assert compile_to(out).returncode == 0
