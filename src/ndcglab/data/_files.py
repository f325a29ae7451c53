"""File helpers shared by the readers and writers: gzip detection, atomic writes, hashing, and
newline-joined string blobs (token columns, cached id columns)."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from .._atomic import atomic_write
from ..errors import DataFormatError

__all__ = [
    "atomic_write",
    "file_sha256",
    "is_gzip",
    "join_strings",
    "open_binary",
    "split_strings",
]

PathLike = str | os.PathLike[str]


def is_gzip(path: PathLike) -> bool:
    """True when the file starts with the gzip magic bytes (whatever its name)."""
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def open_binary(path: PathLike) -> io.BufferedIOBase:
    """Open a data file for binary reading, decompressing gzip transparently.

    Raises :class:`DataFormatError` (not ``FileNotFoundError``) when the file is missing, so the
    CLI reports it as a data problem with a fix.
    """
    p = Path(path)
    if not p.exists():
        raise DataFormatError(
            "file not found", path=p, fix="check the path (LETOR folds live in Fold1..Fold5)"
        )
    if p.is_dir():
        raise DataFormatError(
            "is a directory, not a data file",
            path=p,
            fix="give a file, or use load_letor_folder() for a Fold1..Fold5 tree",
        )
    if is_gzip(p):
        return gzip.open(p, "rb")
    return open(p, "rb")


def file_sha256(path: PathLike, *, uncompressed: bool = False, chunk: int = 1 << 22) -> str:
    """Hex sha256 of a file's bytes; with ``uncompressed=True`` of its gunzipped content."""
    h = hashlib.sha256()
    opener = open_binary if uncompressed else (lambda p: open(p, "rb"))
    with opener(path) as f:
        while True:
            block = f.read(chunk)
            if not block:
                break
            h.update(block)
    return h.hexdigest()


def join_strings(strings: Any) -> np.ndarray:
    """Strings joined by newlines as a uint8 array (UTF-8, surrogateescape); the inverse of
    :func:`split_strings`."""
    return np.frombuffer(
        "\n".join(strings).encode("utf-8", "surrogateescape"), dtype=np.uint8
    ).copy()


def split_strings(blob: np.ndarray, n: int) -> list[str]:
    """The ``n`` newline-separated strings of a uint8 ``blob`` (``[]`` when ``n == 0``)."""
    if n == 0:
        return []
    return blob.tobytes().decode("utf-8", "surrogateescape").split("\n")
