"""File helpers shared by the readers and writers: gzip detection, atomic writes, hashing, and
newline-joined string blobs (token columns, cached id columns)."""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
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
    "open_bytes",
    "split_lines",
    "split_strings",
]

PathLike = str | os.PathLike[str]


def is_gzip(path: PathLike) -> bool:
    """True when the file starts with the gzip magic bytes (whatever its name)."""
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


_GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)


class _CheckedGzipFile(gzip.GzipFile):
    """A :class:`gzip.GzipFile` whose reads raise :class:`DataFormatError` (naming the file)
    for a truncated or corrupt stream, instead of ``EOFError``/``zlib.error``/``BadGzipFile``."""

    def _fail(self, exc: BaseException) -> DataFormatError:
        what = "truncated" if isinstance(exc, EOFError) else "corrupt"
        kind = "zlib.error" if isinstance(exc, zlib.error) else type(exc).__name__
        return DataFormatError(
            f"the gzip data is {what} ({kind}: {exc})",
            path=self.name,
            fix="re-download or re-compress the file (`gzip -t FILE` checks it)",
        )

    def read(self, size: int | None = -1) -> bytes:
        try:
            return super().read(-1 if size is None else size)
        except _GZIP_ERRORS as exc:
            raise self._fail(exc) from None

    def read1(self, size: int = -1) -> bytes:
        try:
            return super().read1(size)
        except _GZIP_ERRORS as exc:
            raise self._fail(exc) from None

    def readinto(self, b: Any) -> int:
        try:
            return super().readinto(b)
        except _GZIP_ERRORS as exc:
            raise self._fail(exc) from None

    def readline(self, size: int | None = -1) -> bytes:
        try:
            return super().readline(-1 if size is None else size)
        except _GZIP_ERRORS as exc:
            raise self._fail(exc) from None

    def peek(self, n: int) -> bytes:
        try:
            return super().peek(n)
        except _GZIP_ERRORS as exc:
            raise self._fail(exc) from None


def open_binary(path: PathLike, *, letor: bool = False) -> io.BufferedIOBase:
    """Open a data file for binary reading, decompressing gzip transparently.

    Raises :class:`DataFormatError` (not ``FileNotFoundError``) when the file is missing, so the
    CLI reports it as a data problem with a fix; a truncated or corrupt gzip stream also raises
    :class:`DataFormatError` (when it is read), as does a file that cannot be opened. With
    ``letor=True`` (the LETOR readers) the fixes also point to the ``Fold1..Fold5`` layout.
    """
    p = Path(path)
    if not p.exists():
        gz = p.with_name(p.name + ".gz")
        if gz.is_file():  # a compressed copy beside it: the likeliest meaning
            raise DataFormatError("file not found", path=p, fix=f"did you mean {gz}?")
        hint = " (LETOR folds live in Fold1..Fold5)" if letor else ""
        raise DataFormatError("file not found", path=p, fix=f"check the path{hint}")
    if p.is_dir():
        tree = ", or use load_letor_folder() for a Fold1..Fold5 tree" if letor else ""
        raise DataFormatError("is a directory, not a data file", path=p, fix=f"give a file{tree}")
    try:
        if is_gzip(p):
            return _CheckedGzipFile(p, "rb")
        return open(p, "rb")
    except PermissionError as exc:
        raise DataFormatError(
            f"cannot open the file ({exc.strerror})", path=p, fix="check the file's permissions"
        ) from None


def open_bytes(data: bytes, name: PathLike) -> io.BufferedIOBase:
    """:func:`open_binary` for bytes already in memory: a binary stream over ``data``,
    decompressed when it starts with the gzip magic bytes; a truncated or corrupt gzip stream
    raises :class:`DataFormatError` naming ``name`` (the file the bytes stand for)."""
    raw = io.BytesIO(data)
    if data[:2] == b"\x1f\x8b":
        return _CheckedGzipFile(filename=os.fspath(name), mode="rb", fileobj=raw)
    return raw


def file_sha256(path: PathLike, *, uncompressed: bool = False, chunk: int = 1 << 22) -> str:
    """Hex sha256 of a file's bytes; with ``uncompressed=True`` of its gunzipped content."""
    import hashlib  # here, not at import: reading files needs no hash (a few ms of start-up)

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


def split_lines(text: str) -> list[str]:
    """The lines of ``text``, ended by LF, CRLF or CR only (not by the other separators of
    :meth:`str.splitlines`: vertical tab, form feed, ``\\x1c``-``\\x1e``, NEL, U+2028/9); no
    empty last line for a text that ends with a line end."""
    lines = _LINE_ENDS.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_LINE_ENDS = re.compile(r"\r\n|\r|\n")


def split_strings(blob: np.ndarray, n: int) -> list[str]:
    """The ``n`` newline-separated strings of a uint8 ``blob`` (``[]`` when ``n == 0``)."""
    if n == 0:
        return []
    return blob.tobytes().decode("utf-8", "surrogateescape").split("\n")
