"""Atomic file writes, used by every writer of the package (data, models, reports, tables).

A file is written to a temporary file in the target's folder and renamed over the target only
when everything was written, so a reader never sees a half-written file and a failure leaves
the target as it was (absent, or its old content).

**Temporary names.** A temporary file is named ``.NAME.PID.RANDOM.ndcglab-tmp`` beside the
target ``NAME`` (a report folder's: ``.NAME.PID.tmp-RANDOM``), so a process killed mid-write
leaves a file that the next write of the same target recognises and removes: one whose process
(``PID``) no longer runs on this machine and that has not been touched for
:data:`STALE_SECONDS`. Leftovers of the older naming ``.NAME.RANDOM.tmp`` are removed after an
hour.

**Permissions.** A file that replaces an existing one keeps that file's permission bits; a new
file gets the usual ``0666`` less the umask.

**Where the bytes land** (:func:`output_target`). Only a regular file (or a name that does not
exist yet) is replaced by rename. A symbolic link is written *through*: its final target is
written atomically and the link stays a link. A FIFO, a character or block device, ``-``
(standard output) and the process's own descriptors (``/dev/stdout``, ``/dev/stderr``,
``/dev/fd/N``, ``/proc/self/fd/N``) are *streamed*: opened for writing and written in place, never
replaced (a streamed write cannot be undone, so a failure may leave part of the output there). A
folder is refused before anything is written. :func:`check_writable` checks all this, and that
the folder can take the file, before a long job starts.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import os
import re
import stat
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ._compat import FrozenFields

__all__ = [
    "STALE_SECONDS",
    "OutputTarget",
    "atomic_write",
    "check_writable",
    "output_target",
    "remove_stale_temporaries",
    "save_figure",
    "temporary_prefix",
    "write_bytes_atomic",
    "write_text_atomic",
]

PathLike = str | os.PathLike[str]

#: a temporary file of a dead process is removed once untouched for this many seconds
STALE_SECONDS = 60.0
_LEGACY_STALE_SECONDS = 3600.0
TEMP_SUFFIX = ".ndcglab-tmp"


def temporary_prefix(name: str) -> str:
    """The prefix of this process's temporary files for the target file or folder ``name``."""
    return f".{name}.{os.getpid()}."


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists (another user's) or cannot tell: keep the file
    return True


def remove_stale_temporaries(folder: PathLike, name: str) -> list[Path]:
    """Remove the temporary files and folders that an interrupted write of ``folder/name`` left.

    Only names of ndcglab's own pattern are touched (see the module docstring); a temporary
    entry of a process that still runs, or one touched in the last :data:`STALE_SECONDS`, is
    kept. Returns the paths removed; errors are ignored (another process may race us).
    """
    folder = Path(folder)
    prefix = f".{name}."
    tail = r"(\d+)\.(?:[A-Za-z0-9_]+" + re.escape(TEMP_SUFFIX) + r"|tmp-\w+|old-\w+)$"
    own = re.compile(re.escape(prefix) + tail)
    legacy = re.compile(re.escape(prefix) + r"[a-z0-9_]{8}\.tmp$")
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(prefix)]
    except OSError:
        return removed
    now = time.time()
    for e in entries:
        m = own.match(e.name)
        try:
            age = now - e.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        if m is not None:
            if age < STALE_SECONDS or _pid_alive(int(m.group(1))):
                continue
        elif not (legacy.match(e.name) and age >= _LEGACY_STALE_SECONDS):
            continue
        p = Path(e.path)
        try:
            if e.is_dir(follow_symlinks=False):
                import shutil  # imported here: it pulls in bz2/lzma (start-up time)

                shutil.rmtree(p)
            else:
                p.unlink()
            removed.append(p)
        except OSError:
            pass
    return removed


def _target_mode(p: Path) -> int:
    """Permission bits for the file written to ``p``: the replaced file's, else 0666 - umask."""
    try:
        st = os.stat(p)
    except OSError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode):
        return stat.S_IMODE(st.st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


#: the process's own descriptors named as files: written to the descriptor, never replaced (a
#: pattern compiled on first use, not at start-up)
_OWN_FD = r"^/(?:dev/fd|proc/self/fd)/(\d+)$"
_STD_NAMES = {"-": 1, "/dev/stdout": 1, "/dev/stderr": 2}


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class OutputTarget(FrozenFields):
    """Where a write of a user-named output lands (see the module docstring).

    ``kind`` is ``"file"`` (``path`` is the file replaced atomically: the name itself, or the
    final target of a symbolic link), ``"stream"`` (``path`` is a FIFO, a device or a socket,
    written in place), ``"fd"`` (the process's descriptor ``fd``: ``-``, ``/dev/stdout`` ...)
    or ``"folder"`` (refused).
    """

    kind: Literal["file", "stream", "fd", "folder"]
    path: Path
    fd: int | None = None

    def __init__(
        self, kind: Literal["file", "stream", "fd", "folder"], path: Path, fd: int | None = None
    ) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "fd", fd)


def output_target(path: PathLike) -> OutputTarget:
    """Classify the output ``path`` (symbolic links followed): see :class:`OutputTarget`."""
    text = os.fspath(path)
    if text in _STD_NAMES:
        return OutputTarget("fd", Path(text), _STD_NAMES[text])
    m = re.match(_OWN_FD, text)
    if m is not None:
        return OutputTarget("fd", Path(text), int(m.group(1)))
    try:
        st: os.stat_result | None = os.stat(text)  # follows links
    except (OSError, ValueError):
        st = None  # absent (or a dangling link): a new file; other errors show when writing
    if st is not None:
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            return OutputTarget("folder", Path(text))
        if not stat.S_ISREG(mode):
            return OutputTarget("stream", Path(text))
    if os.path.islink(text):
        return OutputTarget("file", Path(os.path.realpath(text)))
    return OutputTarget("file", Path(text))


def _folder_error(path: PathLike) -> IsADirectoryError:
    return IsADirectoryError(
        errno.EISDIR, "the output is a folder, not a file (nothing was written)", os.fspath(path)
    )


class _TextSink(io.RawIOBase):
    """Bytes written to a text stream that has no binary buffer (decoded as UTF-8)."""

    def __init__(self, text: Any) -> None:
        self._text = text

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        data = bytes(b)
        self._text.write(data.decode("utf-8", "replace"))
        return len(data)

    def flush(self) -> None:
        self._text.flush()


@contextlib.contextmanager
def _stream_handle(target: OutputTarget) -> Iterator[Any]:
    """A binary handle on a streamed output: the process's descriptor or the special file."""
    if target.kind == "fd":
        assert target.fd is not None
        std = {1: sys.stdout, 2: sys.stderr}.get(target.fd)
        if std is not None:
            std.flush()  # what the command printed before comes first
            raw = getattr(std, "buffer", None)
            handle = raw if raw is not None else _TextSink(std)
            yield handle
            handle.flush()
            return
        try:
            fd = os.dup(target.fd)
        except OSError as exc:
            exc.filename = str(target.path)
            raise
    else:
        fd = os.open(target.path, os.O_WRONLY | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "wb") as handle:
        yield handle


@contextlib.contextmanager
def _maybe_gzip(
    raw: io.BufferedIOBase, gz: bool, compresslevel: int
) -> Iterator[io.BufferedIOBase]:
    """``raw`` itself, or a gzip stream into it (``mtime=0``: the same content, the same bytes)."""
    if gz:
        with gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, compresslevel=compresslevel, mtime=0
        ) as f:
            yield f
    else:
        yield raw


@contextlib.contextmanager
def _streamed(target: OutputTarget, *, gz: bool, compresslevel: int) -> Iterator[io.BufferedIOBase]:
    try:
        with _stream_handle(target) as raw, _maybe_gzip(raw, gz, compresslevel) as f:
            yield f
    except OSError as exc:
        if exc.filename is None:
            exc.filename = str(target.path)
        raise


@contextlib.contextmanager
def atomic_write(
    path: PathLike, *, gz: bool | None = None, compresslevel: int = 6, fsync: bool = False
) -> Iterator[io.BufferedIOBase]:
    """A binary file handle whose content replaces ``path`` on success.

    ``gz=None`` compresses when the name ends in ``.gz`` (with ``mtime=0``: the same content
    gives the same bytes). ``fsync=True`` flushes the data to disk before the rename (model
    files and checkpoints). A replaced file's permission bits are kept; a new file gets 0666
    less the umask. Stale temporary files of earlier interrupted writes of ``path`` are
    removed first.

    ``path`` is classified by :func:`output_target`: a symbolic link is written through (its
    target replaced atomically), a FIFO, a device, ``-`` or ``/dev/stdout`` is streamed (never
    replaced), and a folder raises :class:`IsADirectoryError` before anything is written.
    """
    target = output_target(path)
    if gz is None:
        gz = Path(path).name.endswith(".gz")
    if target.kind == "folder":
        raise _folder_error(path)
    if target.kind != "file":
        with _streamed(target, gz=gz, compresslevel=compresslevel) as f:
            yield f
        return
    p = target.path
    folder = p.parent if str(p.parent) else Path(".")
    created = _make_folders(folder)
    try:
        remove_stale_temporaries(folder, p.name)
        import tempfile

        fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(p.name), suffix=TEMP_SUFFIX, dir=folder)
    except BaseException:
        _remove_folders(created)
        raise
    try:
        with os.fdopen(fd, "wb") as raw:
            with _maybe_gzip(raw, gz, compresslevel) as f:
                yield f
            raw.flush()
            if fsync:
                os.fsync(raw.fileno())
        os.chmod(tmp, _target_mode(p))  # mkstemp creates 0600
        os.replace(tmp, p)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _remove_folders(created)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)  # a failed write (disk full, EFBIG) names the target
        raise


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; return those created, deepest first."""
    missing: list[Path] = []
    here = folder
    while not os.path.lexists(here) and here != here.parent:
        missing.append(here)
        here = here.parent
    folder.mkdir(parents=True, exist_ok=True)
    return missing


def _remove_folders(created: list[Path]) -> None:
    """Remove the folders a failed write created (deepest first), if they are still empty."""
    for d in created:
        try:
            os.rmdir(d)
        except OSError:
            return


def check_writable(path: PathLike, *, folder: bool = False) -> None:
    """Raise the :class:`OSError` that writing ``path`` would raise, before any work is done.

    For a file output (``folder=False``): a folder is refused; a streamed output (FIFO, device,
    ``-``) must be open for writing; otherwise the folder that will hold the file (a symbolic
    link's target's) must take a new file — tried by creating and removing a temporary file
    there, or, when the folder does not exist yet, the nearest existing ancestor must be a
    writable folder. ``folder=True`` checks a folder that is written as a whole (a report):
    it must be a folder if it exists, and its parent must take a new entry. Nothing is left
    behind.
    """
    target = output_target(path)
    shown = os.fspath(path)
    if folder:
        if target.kind not in ("folder", "file") or (
            target.kind == "file" and os.path.exists(target.path)
        ):
            raise NotADirectoryError(
                errno.ENOTDIR, "the output must be a folder, and this is a file", shown
            )
        _check_new_entry(Path(os.path.realpath(shown)).parent, shown)
        return
    if target.kind == "folder":
        raise _folder_error(path)
    if target.kind == "fd":
        assert target.fd is not None
        try:
            os.fstat(target.fd)
        except OSError as exc:
            exc.filename = shown
            raise
        return
    if target.kind == "stream":
        if not os.access(target.path, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), shown)
        return
    _check_new_entry(target.path.parent if str(target.path.parent) else Path("."), shown)


def _check_new_entry(parent: Path, shown: str) -> None:
    """Raise unless ``parent`` (created when missing) can take a new file."""
    ancestor = parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not os.path.isdir(ancestor):
        raise NotADirectoryError(
            errno.ENOTDIR, f"{ancestor} is a file, so it cannot hold the output", shown
        )
    if ancestor != parent:
        if not os.access(ancestor, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), shown)
        return
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(prefix=temporary_prefix("probe"), suffix=TEMP_SUFFIX, dir=parent)
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, shown) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def save_figure(fig: Any, path: PathLike, **savefig_options: Any) -> Path:
    """Save a matplotlib figure to ``path`` through :func:`atomic_write`, in the image type its
    suffix names (PNG when it has none, e.g. ``-``); an unknown suffix is an error."""
    from .errors import NdcglabError

    suffix = Path(os.fspath(path)).suffix.lower().lstrip(".")
    fmt = suffix or "png"
    supported = fig.canvas.get_supported_filetypes()
    if fmt not in supported:
        raise NdcglabError(
            f"cannot save a figure as {os.fspath(path)}: .{fmt} is not an image type. Fix: end "
            f"the file name in one of {', '.join('.' + k for k in sorted(supported))}"
        )
    with atomic_write(path, gz=False) as f:
        fig.savefig(f, format=fmt, **savefig_options)
    return Path(path)


def write_bytes_atomic(path: PathLike, data: bytes, *, fsync: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically (flushed to disk by default). Returns the path."""
    with atomic_write(path, gz=False, fsync=fsync) as f:
        f.write(data)
    return Path(path)


def write_text_atomic(path: PathLike, text: str) -> Path:
    """Write ``text`` as UTF-8 (newlines as given) to ``path`` atomically. Returns the path."""
    return write_bytes_atomic(path, text.encode("utf-8"), fsync=False)
