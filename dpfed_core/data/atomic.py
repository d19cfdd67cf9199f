"""Output files that are either complete or absent: write a temporary file, then rename it.

A run that dies while writing (full disk, kill, power loss) leaves the previous file untouched and
no truncated JSON or 0-byte HTML behind: the data goes to a temporary file in the same directory,
is flushed and fsynced, and only then replaces the target with :func:`os.replace` (atomic on POSIX
and Windows within one file system). Every document the CLI and the dashboard write goes through
:func:`atomic_write`.
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from dpfed_core.errors import ConfigError


def check_writable(path: str | os.PathLike, flag: str = "--out",
                   suffix: str | tuple[str, ...] | None = None) -> Path:
    """Fail early — before any computation — when ``path`` cannot become an output file.

    Refused: a directory, a parent that is a file, a folder without write permission (missing
    folders are created at write time). ``suffix``: what the output holds (".json", ".html"), for the
    example names the errors give (:func:`check_suffix` checks the name itself).
    (A full disk can only show at write time; :func:`atomic_write` then keeps the old file.)
    """
    p = Path(path).expanduser()
    suffixes = (suffix,) if isinstance(suffix, str) else suffix
    suffix = suffixes[0] if suffixes else None
    if str(path).strip() == "":
        raise ConfigError(f"{flag} is empty; give a file name such as result{suffix or '.json'}", param="out")
    if str(path).endswith(("/", os.sep)):
        raise ConfigError(f"{flag} {path} names a folder (it ends with '/'); give a file name inside it, e.g. "
                          f"{Path(path) / ('result' + (suffix or '.json'))}", param="out")
    if p.is_symlink():
        raise ConfigError(f"{flag} {p} is a symbolic link (to {os.path.realpath(p)}); writing would replace the link "
                          "by a file, and a link may lead to an input: give another file name", param="out")
    if p.is_dir():
        raise ConfigError(f"{flag} {p} is a directory; give a file name inside it, e.g. "
                          f"{p / ('result' + (suffix or '.json'))}", param="out")
    _refuse_special(p, flag)
    parent = p.parent if str(p.parent) else Path(".")
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent  # missing folders are created at write time, inside this one
    if not parent.is_dir():
        raise ConfigError(f"{flag} {p}: {parent} is not a folder", param="out")
    try:  # a real probe: permissions, read-only mounts and /proc-like folders all show here
        fd, probe = tempfile.mkstemp(prefix=".dpfed-probe.", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ConfigError(f"{flag} {p}: cannot write in {parent} ({exc.strerror or exc}); choose another folder",
                          param="out") from None
    if p.exists() and not os.access(p, os.W_OK):
        raise ConfigError(f"{flag} {p} exists and is read-only; choose another file name", param="out")
    return p


def check_suffix(path: str | os.PathLike, suffix: str | tuple[str, ...], flag: str = "--out") -> None:
    """An output's name must end in what it holds (".json" for a result document, ".html" for a report):
    a JSON document named r.html would open as a page. Checked after the output is known not to be an
    input (that error says more)."""
    suffixes = (suffix,) if isinstance(suffix, str) else tuple(suffix)
    p = Path(path).expanduser()
    if not p.name.lower().endswith(suffixes):
        what = "an HTML page" if suffixes[0] == ".html" else "a JSON document"
        raise ConfigError(f"{flag} {p}: what it writes is {what}; give a file name ending in {suffixes[0]}, e.g. "
                          f"{p.with_name((p.stem or 'result') + suffixes[0])}", param="out")


def _refuse_special(p: Path, flag: str) -> None:
    """Refuse an existing target that is no regular file: the rename would replace a device such as
    /dev/null (run as root, every later write to it then filled a file) or a FIFO by a plain file."""
    if not p.exists() or p.is_file() or p.is_dir():
        return
    kind = next((what for test, what in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                                         (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"))
                 if test(p.stat().st_mode)), "not a regular file")
    raise ConfigError(f"{flag} {p} is {kind}, not a file; writing would replace it by a file: give a file name "
                      f"(leave {flag} out to write nothing)", param="out")


def check_target(path: str | os.PathLike, flag: str = "--out") -> Path:
    """The output path, refused when empty, when it names a folder, when it is a symbolic link (the
    rename would replace the link, changing an input of the user's) or a device, pipe or socket:
    checked again at write time."""
    p = Path(path).expanduser()
    if str(path).strip() == "" or str(path).endswith(("/", os.sep)) or p.is_symlink():
        check_writable(path, flag)  # raises the specific error
    _refuse_special(p, flag)
    return p


def atomic_write(path: str | os.PathLike, data: bytes | str, flag: str = "--out") -> Path:
    """Write ``data`` to ``path`` all at once: temp file in the same folder, fsync, rename.

    On any OS error (full disk, permission) the temporary file is removed, ``path`` keeps its old
    content (if any) and a :class:`ConfigError` naming ``flag`` is raised.
    """
    p = check_target(path, flag)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    parent = p.parent if str(p.parent) else Path(".")
    tmp_name = None
    try:
        parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".part", dir=parent)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        if p.exists():
            try:  # keep the target's permissions (mkstemp creates 0600)
                os.chmod(tmp_name, p.stat().st_mode & 0o777)
            except OSError:
                pass
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp_name, 0o666 & ~umask)
        os.replace(tmp_name, p)
        tmp_name = None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(f"could not write {flag} {p}: {reason}; nothing was written (any previous "
                          "file is unchanged)", param="out") from exc
    finally:
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
    return p
