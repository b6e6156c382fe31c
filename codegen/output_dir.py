"""The output directory of `mcuforge compile`: written whole and atomically, and never over a user's files.

mcuforge writes `MARKER` (.mcuforge-output.json: its version and every file it wrote with its
SHA-256) into each output directory. It replaces only a directory it can recognise that way:

    absent, or an empty directory                      written
    mcuforge's own output, unchanged                   replaced
    a non-empty directory mcuforge did not write,      refused (one line, exit 2), unless force
      or its output with files added or changed,       replaces it whole (a link itself, never
      a regular file, a symbolic link                  what it points to)
    a device, fifo or socket, the current directory    refused, even with force
      or one holding it, the directory of the model

Writing: every file goes into a temporary sibling (`.DIR.tmp-XXXX`, normal permissions), which is
renamed into place; what it replaces is renamed aside first and put back if that fails. On any
failure the temporary directory, and parent directories created for it, are removed.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path

from mcuforge import __version__
from mcuforge.errors import McuforgeError

MARKER = ".mcuforge-output.json"
_REPLACE = "add --force to replace it and everything in it"


class OutputDirError(McuforgeError):
    """The output path is not one mcuforge may write (a user's files, a file, a device) or cannot be written."""


def marker_text(files: Mapping[str, bytes]) -> str:
    """The marker for a directory holding exactly `files` ({relative path: content})."""
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())}
    return json.dumps({"mcuforge": __version__, "files": digests}, indent=1) + "\n"


def check_target(out: str | os.PathLike, force: bool = False, keep: Sequence[str | os.PathLike] = ()) -> str:
    """What writing to `out` would replace ("absent", "empty", "ours", or with force "file", "link",
    "dir"); OutputDirError if it may not be written. `keep`: paths (the model) that must not be inside."""
    target = _absolute(out)
    kind = _kind(out, target, force)
    for k in keep:
        if kind not in ("absent", "empty") and Path(k).resolve().is_relative_to(target):
            raise OutputDirError(f"-o {out}: holds {k}, the model being compiled: give another directory")
    _probe_writable(out, target)
    return kind


def write_dir(out: str | os.PathLike, files: Mapping[str, bytes], force: bool = False) -> Path:
    """Write `files` ({relative path: content}) and the marker as directory `out`, atomically."""
    target = _absolute(out)
    kind = _kind(out, target, force)
    created = _make_parents(out, target.parent)
    tmp: Path | None = None
    try:
        tmp = _fresh_sibling(target, "tmp", mkdir=True)
        for name, data in files.items():
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        (tmp / MARKER).write_text(marker_text(files))
        _swap_in(tmp, target, kind)
    except OSError as exc:
        _clean(tmp, created)
        raise OutputDirError(f"-o {out}: cannot write the output directory ({_why(exc)})") from None
    except BaseException:
        _clean(tmp, created)
        raise
    return target


# ------------------------------------------------------------------------------------------------

def _absolute(out: str | os.PathLike) -> Path:
    """`out` made absolute without following a link at `out` itself (its parents are resolved)."""
    p = Path(out)
    if p.name in ("", ".", ".."):
        return p.resolve()
    return p.parent.resolve() / p.name


def _kind(out, target: Path, force: bool) -> str:
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return "absent"
    except NotADirectoryError:
        raise OutputDirError(f"-o {out}: {_first_file(target)} is a file, not a directory") from None
    except OSError as exc:
        raise OutputDirError(f"-o {out}: cannot look at it ({_why(exc)})") from None
    if stat.S_ISLNK(st.st_mode):
        if force:
            return "link"
        raise OutputDirError(f"-o {out}: is a symbolic link (to {os.readlink(target)}): give a real directory, "
                             "or add --force to replace the link itself (never what it points to)")
    if stat.S_ISREG(st.st_mode):
        if force:
            return "file"
        raise OutputDirError(f"-o {out}: is an existing file, not a directory: give a directory name, or add "
                             "--force to replace the file")
    if not stat.S_ISDIR(st.st_mode):
        raise OutputDirError(f"-o {out}: is a {_special(st.st_mode)}, not a directory: mcuforge never replaces "
                             "it, even with --force")
    if Path.cwd().resolve().is_relative_to(target.resolve()):
        raise OutputDirError(f"-o {out}: is the current directory or holds it, and mcuforge replaces its output "
                             f"directory whole: give a subdirectory (e.g. -o model_out), even with --force")
    try:
        return _dir_kind(out, target, force)
    except OSError as exc:
        raise OutputDirError(f"-o {out}: cannot look inside it ({_why(exc)})") from None


def _dir_kind(out, target: Path, force: bool) -> str:
    with os.scandir(target) as entries:
        if next(entries, None) is None:
            return "empty"
    problem = _not_ours(target)
    if problem is None:
        return "ours"
    if force:
        return "dir"
    raise OutputDirError(f"-o {out}: {problem}: give a new or empty directory, or {_REPLACE}")


def _not_ours(target: Path) -> str | None:
    """None if `target` holds exactly what its marker lists, unchanged; else why not."""
    try:
        marker = json.loads((target / MARKER).read_text())
        listed = marker["files"]
        if not isinstance(listed, dict) or not isinstance(marker["mcuforge"], str):
            raise ValueError("unexpected contents")
    except FileNotFoundError:
        return f"is not empty and was not written by mcuforge (it has no {MARKER})"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"its {MARKER} is not mcuforge's ({exc})"
    foreign, changed = [], []
    for root, dirs, names in os.walk(target):
        rel_root = Path(root).relative_to(target)
        for d in list(dirs):
            rel = (rel_root / d).as_posix()
            if os.path.islink(Path(root) / d) or not any(f.startswith(rel + "/") for f in listed):
                foreign.append(rel + "/")
                dirs.remove(d)
        for n in names:
            rel = (rel_root / n).as_posix()
            path = Path(root) / n
            if rel == MARKER:
                continue
            if rel not in listed or not path.is_file() or path.is_symlink():
                foreign.append(rel)
            elif hashlib.sha256(path.read_bytes()).hexdigest() != listed[rel]:
                changed.append(rel)
    if foreign:
        return f"holds files mcuforge did not write ({_some(foreign)})"
    if changed:
        return f"was written by mcuforge but {_some(changed)} changed since"
    return None


def _some(names: list[str], n: int = 3) -> str:
    names = sorted(names)
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


def _special(mode: int) -> str:
    for test, name in ((stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISFIFO, "named pipe"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "special file"


def _first_file(path: Path) -> Path:
    """The first component of `path` that exists and is not a directory."""
    for p in reversed(path.parents):
        if p.exists() and not p.is_dir():
            return p
    return path


def _why(exc: OSError) -> str:
    return f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc.strerror or exc)


def _probe_writable(out, target: Path) -> None:
    """Create and remove a sibling of `target` (and any missing parents): can the output be written?"""
    created = _make_parents(out, target.parent)
    try:
        os.rmdir(_fresh_sibling(target, "probe", mkdir=True))
    except OSError as exc:
        raise OutputDirError(f"-o {out}: cannot create a directory in {target.parent} ({exc.strerror or exc})") from None
    finally:
        _clean(None, created)


def _make_parents(out, parent: Path) -> list[Path]:
    """Create the missing parents of the output (normal permissions); the ones created, outermost first."""
    missing = [p for p in [parent, *parent.parents] if not os.path.lexists(p)][::-1]
    created = []
    try:
        for p in missing:
            os.mkdir(p)
            created.append(p)
    except OSError as exc:
        _clean(None, created)
        if isinstance(exc, (FileExistsError, NotADirectoryError)):
            raise OutputDirError(f"-o {out}: {_first_file(p)} is a file, not a directory") from None
        raise OutputDirError(f"-o {out}: cannot create {p} ({exc.strerror or exc})") from None
    return created


def _fresh_sibling(target: Path, what: str, mkdir: bool = False) -> Path:
    """A new name `.NAME.what-XXXXXXXX` beside target (created as a directory when mkdir)."""
    while True:
        p = target.with_name(f".{target.name}.{what}-{secrets.token_hex(4)}")
        if os.path.lexists(p):
            continue
        if mkdir:
            try:
                os.mkdir(p)  # mode 0777 & ~umask, like any directory the user creates
            except FileExistsError:
                continue
        return p


def _swap_in(tmp: Path, target: Path, kind: str) -> None:
    if kind == "absent":
        os.rename(tmp, target)
        return
    old = _fresh_sibling(target, "old")
    os.rename(target, old)  # the old directory, file or link itself (rename never follows a link)
    try:
        os.rename(tmp, target)
    except BaseException:
        os.rename(old, target)
        raise
    if kind in ("file", "link"):
        os.unlink(old)
    else:
        shutil.rmtree(old, ignore_errors=True)  # rmtree removes links inside, never what they point to


def _clean(tmp: Path | None, created: list[Path]) -> None:
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
    for p in reversed(created):
        try:
            os.rmdir(p)
        except OSError:
            pass
