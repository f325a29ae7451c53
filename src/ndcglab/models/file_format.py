"""The model-file container every kind of trained model shares: the one writer and reader.

A model file is a zip archive, stored (not compressed), whose first member is ``metadata.json``
and whose other members are the model's own payload (``weights.pt`` for torch models,
``lightgbm.txt`` for boosted trees). The metadata always holds:

* ``format`` — ``"ndcglab-model"``; ``format_version`` — :data:`FORMAT_VERSION` (a reader refuses
  a newer version);
* ``model`` — a dict whose ``kind`` names the model family (``linear``, ``mlp``, ``adarank``,
  ``gbdt``); ``n_features``; ``feature_names`` (or ``null``);
* ``versions`` — Python and the package versions that can change a number
  (:func:`ndcglab._versions.package_versions`); ``created`` — UTC time, ISO 8601, seconds.

Files are written atomically (a temporary file in the same folder, then ``os.replace``), so an
interrupted save never leaves a half-written model behind. NumPy scalars and arrays, tuples and
sets in the metadata are written as JSON numbers and lists. This module imports neither torch nor
LightGBM.
"""

from __future__ import annotations

import datetime as _dt
import io
import json
import os
import zipfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._atomic import write_bytes_atomic
from .._versions import package_versions
from ..errors import DataFormatError

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "METADATA_MEMBER",
    "file_header",
    "json_default",
    "model_kind",
    "read_member",
    "read_model_metadata",
    "register_model_loader",
    "registered_loader",
    "write_model_file",
]

FORMAT = "ndcglab-model"
FORMAT_VERSION = 1
METADATA_MEMBER = "metadata.json"

_WRITTEN_BY = "give a file written by `ndcglab train --out` or ndcglab.models.save_model"

#: loaders of the model families defined above the models package, by ``model.kind``
_LOADERS: dict[str, Callable[[str | os.PathLike[str]], Any]] = {}


def register_model_loader(kind: str, loader: Callable[[str | os.PathLike[str]], Any]) -> None:
    """Let :func:`ndcglab.models.load_model` read model files of ``model.kind == kind`` with
    ``loader``.

    For model families that live in higher packages: :mod:`ndcglab.gbdt` registers ``gbdt`` when
    imported. ``loader(path)`` returns an object with ``predict(data)``, ``n_features`` and
    ``metadata``. Importing this module imports neither torch nor LightGBM.
    """
    _LOADERS[str(kind)] = loader


def registered_loader(kind: str | None) -> Callable[[str | os.PathLike[str]], Any] | None:
    """The loader registered for ``kind`` (None when there is none)."""
    return None if kind is None else _LOADERS.get(kind)


def file_header(packages: Iterable[str]) -> dict[str, Any]:
    """The metadata keys every model file carries: ``format``, ``format_version``, ``versions``
    (Python plus ``packages``) and ``created``."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "versions": package_versions(tuple(packages)),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def json_default(x: Any) -> Any:
    """``json.dumps(default=...)`` for metadata: NumPy values, tuples and sets; else ``str``."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, tuple | set):
        return list(x)
    return str(x)


def write_model_file(
    path: str | os.PathLike[str], metadata: Mapping[str, Any], members: Mapping[str, bytes]
) -> Path:
    """Write ``metadata`` (as ``metadata.json``, first) and ``members`` (name → bytes) into one
    stored zip archive at ``path``, atomically; return the path written."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(METADATA_MEMBER, json.dumps(dict(metadata), indent=2, default=json_default))
        for name, data in members.items():
            zf.writestr(name, data)
    return write_bytes_atomic(path, buf.getvalue())


def read_model_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON metadata of a model file (any kind), checked for format and version.

    Raises :class:`~ndcglab.errors.DataFormatError` for a missing file, a file that is not an
    ndcglab model file, or a format version newer than this ndcglab understands.
    """
    try:
        with zipfile.ZipFile(path) as zf:
            meta = json.loads(zf.read(METADATA_MEMBER))
    except FileNotFoundError:
        raise DataFormatError("model file not found", path=path, fix="check the path") from None
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError) as exc:
        raise DataFormatError(
            f"not an ndcglab model file ({exc})", path=path, fix=_WRITTEN_BY
        ) from None
    if meta.get("format") != FORMAT:
        raise DataFormatError(
            f"not an ndcglab model file (format {meta.get('format')!r})",
            path=path,
            fix=_WRITTEN_BY,
        )
    if int(meta.get("format_version", 0)) > FORMAT_VERSION:
        raise DataFormatError(
            f"model file format version {meta['format_version']} is newer than this ndcglab "
            f"understands ({FORMAT_VERSION})",
            path=path,
            fix="upgrade ndcglab",
        )
    return meta


def model_kind(metadata: Mapping[str, Any]) -> str | None:
    """The model family recorded in a model file's metadata (``metadata["model"]["kind"]``)."""
    return (metadata.get("model") or {}).get("kind")


def read_member(path: str | os.PathLike[str], name: str) -> bytes:
    """The bytes of one member of a model file."""
    with zipfile.ZipFile(path) as zf:
        return zf.read(name)
