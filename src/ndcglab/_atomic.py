"""Atomic file writes, used by every writer of the package (data, models, reports, tables).

A file is written to a temporary file in the target's folder and renamed over the target only
when everything was written, so a reader never sees a half-written file and a failure leaves
the target as it was (absent, or its old content).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_write", "write_bytes_atomic", "write_text_atomic"]

PathLike = str | os.PathLike[str]


@contextlib.contextmanager
def atomic_write(
    path: PathLike, *, gz: bool | None = None, compresslevel: int = 6, fsync: bool = False
) -> Iterator[io.BufferedIOBase]:
    """A binary file handle whose content replaces ``path`` on success.

    ``gz=None`` compresses when the name ends in ``.gz`` (with ``mtime=0``: the same content
    gives the same bytes). ``fsync=True`` flushes the data to disk before the rename (model
    files and checkpoints). The file gets the usual permissions (0666 less the umask).
    """
    p = Path(path)
    if gz is None:
        gz = p.name.endswith(".gz")
    folder = p.parent if str(p.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=folder)
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
        umask = os.umask(0)  # mkstemp creates 0600
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_bytes_atomic(path: PathLike, data: bytes, *, fsync: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically (flushed to disk by default). Returns the path."""
    with atomic_write(path, gz=False, fsync=fsync) as f:
        f.write(data)
    return Path(path)


def write_text_atomic(path: PathLike, text: str) -> Path:
    """Write ``text`` as UTF-8 (newlines as given) to ``path`` atomically. Returns the path."""
    return write_bytes_atomic(path, text.encode("utf-8"), fsync=False)
