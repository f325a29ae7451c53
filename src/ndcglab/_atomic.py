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
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import stat
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "STALE_SECONDS",
    "atomic_write",
    "remove_stale_temporaries",
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
    """
    p = Path(path)
    if gz is None:
        gz = p.name.endswith(".gz")
    folder = p.parent if str(p.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(folder, p.name)
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=temporary_prefix(p.name), suffix=TEMP_SUFFIX, dir=folder)
    try:
        with os.fdopen(fd, "wb") as raw:
            if gz:
                with gzip.GzipFile(
                    filename="", mode="wb", fileobj=raw, compresslevel=compresslevel, mtime=0
                ) as f:
                    yield f
            else:
                yield raw
            raw.flush()
            if fsync:
                os.fsync(raw.fileno())
        os.chmod(tmp, _target_mode(p))  # mkstemp creates 0600
        os.replace(tmp, p)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(p)  # a failed write (disk full, EFBIG) names the target
        raise


def write_bytes_atomic(path: PathLike, data: bytes, *, fsync: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically (flushed to disk by default). Returns the path."""
    with atomic_write(path, gz=False, fsync=fsync) as f:
        f.write(data)
    return Path(path)


def write_text_atomic(path: PathLike, text: str) -> Path:
    """Write ``text`` as UTF-8 (newlines as given) to ``path`` atomically. Returns the path."""
    return write_bytes_atomic(path, text.encode("utf-8"), fsync=False)
