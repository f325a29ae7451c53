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

**Reading is checked before anything is built.** :func:`read_model_metadata` refuses (with
:class:`~ndcglab.errors.DataFormatError` naming the file and the field) a file that is not a
readable zip, metadata that is not a JSON object of the known shape (:func:`check_header`:
``n_features`` a positive integer of at most :data:`MAX_MODEL_FEATURES`, ``feature_names``
null or one string per feature), and :func:`read_member` refuses a damaged member. Each model
family then checks its own ``model`` keys before allocating anything.

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
import zlib
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
    "MAX_MODEL_FEATURES",
    "METADATA_MEMBER",
    "check_header",
    "file_header",
    "json_default",
    "member_size",
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

#: the largest feature count a model file may declare (a sanity bound checked on reading)
MAX_MODEL_FEATURES = 10_000_000
#: the largest metadata.json member read (bytes)
_MAX_METADATA_BYTES = 256 << 20

#: what can go wrong reading a damaged zip archive
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,
    RuntimeError,
    zlib.error,
)

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
    """The JSON metadata of a model file (any kind), checked for format, version and the shape
    of the keys every kind shares (:func:`check_header`).

    Raises :class:`~ndcglab.errors.DataFormatError` for a missing file, a file that is not an
    ndcglab model file or is damaged, or a format version newer than this ndcglab understands.
    """
    p = Path(path)
    if not p.is_file():
        what = "is a directory, not a model file" if p.is_dir() else "model file not found"
        raise DataFormatError(what, path=path, fix="check the path")
    try:
        with zipfile.ZipFile(p) as zf:
            info = zf.getinfo(METADATA_MEMBER)
            if info.file_size > _MAX_METADATA_BYTES:
                raise DataFormatError(
                    f"metadata.json is {info.file_size} bytes, more than a model file holds",
                    path=path,
                    fix=_WRITTEN_BY,
                )
            meta = json.loads(zf.read(METADATA_MEMBER).decode("utf-8"))
    except DataFormatError:
        raise
    except KeyError:
        raise DataFormatError(
            "not an ndcglab model file (no metadata.json)", path=path, fix=_WRITTEN_BY
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise DataFormatError(
            f"the model file's metadata.json is not valid JSON ({exc})", path=path, fix=_WRITTEN_BY
        ) from None
    except _ZIP_ERRORS as exc:
        raise _damaged(path, "not an ndcglab model file, or a damaged one", exc) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        shown = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise DataFormatError(
            f"not an ndcglab model file (format {shown!r})",
            path=path,
            fix=_WRITTEN_BY,
        )
    version = meta.get("format_version", 0)
    if not _is_int(version) or version < 0:
        raise DataFormatError(
            f"format_version must be a non-negative integer, got {version!r}",
            path=path,
            fix=_WRITTEN_BY,
        )
    if version > FORMAT_VERSION:
        raise DataFormatError(
            f"model file format version {meta['format_version']} is newer than this ndcglab "
            f"understands ({FORMAT_VERSION})",
            path=path,
            fix="upgrade ndcglab",
        )
    check_header(meta, path)
    return meta


def _is_int(x: Any) -> bool:
    """A JSON integer (``bool`` is not one); also used by :mod:`.io`."""
    return isinstance(x, int) and not isinstance(x, bool)


def _damaged(
    path: Any,
    what: str,
    exc: BaseException,
    *,
    fix: str = _WRITTEN_BY + " (copy it again if it was damaged)",
) -> DataFormatError:
    """``what (ExcType: message)``: a model file the zip or zlib reader could not read."""
    return DataFormatError(f"{what} ({type(exc).__name__}: {exc})", path=path, fix=fix)


def _bad(path: Any, field_name: str, what: str, got: Any) -> DataFormatError:
    shown = repr(got)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return DataFormatError(
        f"metadata field {field_name} must be {what}, got {shown}",
        path=path,
        fix=_WRITTEN_BY + " (the file was edited or damaged)",
    )


def check_header(meta: Mapping[str, Any], path: Any = None) -> None:
    """Check the keys every model file shares: ``model`` (an object with a string ``kind``),
    ``n_features`` (where present: an integer in 1..:data:`MAX_MODEL_FEATURES`, equal to
    ``model.n_features`` where that is present) and ``feature_names`` (null or one string per
    feature). Raises :class:`DataFormatError` naming the field."""
    model = meta.get("model")
    if not isinstance(model, dict):
        raise _bad(path, "model", "an object with a 'kind'", model)
    if not isinstance(model.get("kind"), str):
        raise _bad(path, "model.kind", "a string", model.get("kind"))
    counts: list[int] = []
    for key, holder in (("n_features", meta), ("model.n_features", model)):
        if "n_features" not in holder:
            continue
        value = holder["n_features"]
        if not _is_int(value) or not 1 <= value <= MAX_MODEL_FEATURES:
            raise _bad(path, key, f"an integer from 1 to {MAX_MODEL_FEATURES}", value)
        counts.append(value)
    if len(set(counts)) > 1:
        raise _bad(path, "n_features", f"equal to model.n_features={counts[1]}", counts[0])
    names = meta.get("feature_names")
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _bad(path, "feature_names", "null or a list of strings", names)
        if counts and len(names) != counts[0]:
            raise _bad(path, "feature_names", f"a list of {counts[0]} names", f"{len(names)} names")


def model_kind(metadata: Mapping[str, Any]) -> str | None:
    """The model family recorded in a model file's metadata (``metadata["model"]["kind"]``)."""
    model = metadata.get("model")
    kind = model.get("kind") if isinstance(model, dict) else None
    return kind if isinstance(kind, str) else None


def member_size(path: str | os.PathLike[str], name: str) -> int | None:
    """The uncompressed size of one member of a model file (``None`` when it has none)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return zf.getinfo(name).file_size
    except KeyError:
        return None
    except _ZIP_ERRORS as exc:
        raise _damaged(path, "damaged model file", exc, fix=_WRITTEN_BY) from None


def read_member(path: str | os.PathLike[str], name: str) -> bytes:
    """The bytes of one member of a model file (``KeyError`` when it has none;
    :class:`DataFormatError` when the archive or the member is damaged)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return zf.read(name)
    except KeyError:
        raise
    except _ZIP_ERRORS as exc:
        raise _damaged(path, f"the member {name} of the model file is damaged", exc) from None
