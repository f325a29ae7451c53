"""The binary cache of :func:`ndcglab.data.read_letor`: parsed datasets as ``.npz`` files.

An entry is named after the source file plus a hash of its absolute path, the read options and
:data:`CACHE_VERSION`; it lives in :func:`default_cache_dir` (or a folder given by the caller),
never beside the data, is written atomically and is used only when the source's size,
modification time and (unless told otherwise) sha256 match those recorded in it. An unreadable
entry is ignored with a warning.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ._files import PathLike, atomic_write, file_sha256, join_strings, open_binary, split_strings
from .dataset import RankingDataset

__all__ = ["CACHE_VERSION", "default_cache_dir", "file_identity", "read_cached"]

CACHE_VERSION = 1


def default_cache_dir() -> Path:
    """``$NDCGLAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/ndcglab``, else ``~/.cache/ndcglab``."""
    env = os.environ.get("NDCGLAB_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ndcglab"


def file_identity(p: Path) -> dict[str, Any]:
    st = p.stat()
    return {"path": str(p.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _cache_file(path: Path, options: dict[str, Any], cache: bool | PathLike) -> Path:
    key = json.dumps(
        {"source": str(path.resolve()), "options": options, "version": CACHE_VERSION},
        sort_keys=True,
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    name = f"{path.name}.{digest}.ndcglab-cache.npz"
    folder = default_cache_dir() if cache is True else Path(cache)  # type: ignore[arg-type]
    return folder / name


def read_cached(
    path: Path,
    options: dict[str, Any],
    cache: bool | PathLike,
    read: Callable[[], RankingDataset],
    *,
    verify: bool,
) -> RankingDataset:
    """The dataset of ``path`` read with ``options``: from its cache entry when that matches the
    source (size, modification time and, with ``verify``, sha256), else ``read()`` and a new
    entry (an entry that cannot be written only warns)."""
    if not path.is_file():
        open_binary(path).close()  # raises the usual "file not found" error
    ident = file_identity(path)
    sha = file_sha256(path) if verify else None
    cfile = _cache_file(path, options, cache)
    if cfile.is_file():
        ds = _load_cache(cfile, ident, sha, path)
        if ds is not None:
            return ds
    if sha is None:
        sha = file_sha256(path)
    ds = read()
    try:
        _save_cache(cfile, ds, ident, sha)
    except OSError as exc:  # a cache that cannot be written is not an error
        warnings.warn(f"could not write the binary cache {cfile}: {exc}", stacklevel=3)
    return ds


def _save_cache(cfile: Path, ds: RankingDataset, ident: dict[str, Any], sha: str) -> None:
    arrays: dict[str, np.ndarray] = {
        "features": ds.features,
        "labels": ds.labels,
        "boundaries": ds.boundaries,
        "query_ids": join_strings(ds.query_ids.tolist()),
    }
    if ds.doc_ids is not None:
        arrays["doc_ids"] = join_strings(ds.doc_ids.tolist())
    keys = []
    for i, (k, v) in enumerate(ds.extras.items()):
        if v.dtype == object:
            arrays[f"extra_{i}"] = join_strings(v.tolist())
            keys.append([k, "str"])
        else:
            arrays[f"extra_{i}"] = v
            keys.append([k, "float"])
    meta = {
        "version": CACHE_VERSION,
        "size": ident["size"],
        "mtime_ns": ident["mtime_ns"],
        "sha256": sha,
        "source": ds.source,
        "n_docs": ds.n_docs,
        "n_queries": ds.n_queries,
        "extras": keys,
    }
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8).copy()
    cfile.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(cfile, gz=False) as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]


def _load_cache(
    cfile: Path, ident: dict[str, Any], sha: str | None, path: Path
) -> RankingDataset | None:
    try:
        with np.load(cfile, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode())
            if (
                meta.get("version") != CACHE_VERSION
                or meta.get("size") != ident["size"]
                or meta.get("mtime_ns") != ident["mtime_ns"]
                or (sha is not None and meta.get("sha256") != sha)
            ):
                return None
            n_q, n = int(meta["n_queries"]), int(meta["n_docs"])
            qids = split_strings(z["query_ids"], n_q)
            doc_ids = None
            if "doc_ids" in z.files:
                doc_ids = np.empty(n, dtype=object)
                doc_ids[:] = split_strings(z["doc_ids"], n)
            extras: dict[str, np.ndarray] = {}
            for i, (k, kind) in enumerate(meta["extras"]):
                if kind == "str":
                    col = np.empty(n, dtype=object)
                    col[:] = split_strings(z[f"extra_{i}"], n)
                    extras[k] = col
                else:
                    extras[k] = z[f"extra_{i}"]
            return RankingDataset(
                features=z["features"],
                labels=z["labels"],
                boundaries=z["boundaries"],
                query_ids=np.asarray(qids, dtype=object),
                doc_ids=doc_ids,
                extras=extras,
                source=str(path),
            )
    except (OSError, ValueError, KeyError) as exc:
        warnings.warn(f"ignoring unreadable binary cache {cfile}: {exc}", stacklevel=4)
        return None
