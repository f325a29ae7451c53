"""The binary cache of :func:`ndcglab.data.read_letor`: parsed datasets as ``.npz`` files.

An entry is named after the source file plus a hash of its absolute path, the read options and
:data:`CACHE_VERSION`; it lives in :func:`default_cache_dir` (or a folder given by the caller),
never beside the data, is written atomically and is used only when the source's size,
modification time and (unless told otherwise) sha256 match those recorded in it. The other
files the parse depends on (the query file) are recorded too, and always compared by sha256. An
unreadable or corrupt entry (a truncated zip, bad arrays, bad metadata) is rebuilt, with one
warning that says so.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._warn import warn_user
from ._files import PathLike, atomic_write, file_sha256, join_strings, open_binary, split_strings
from .dataset import RankingDataset

__all__ = ["CACHE_VERSION", "default_cache_dir", "file_identity", "read_cached"]

CACHE_VERSION = 2


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
    import hashlib  # only where a cache is used: not a start-up cost of every read

    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    name = f"{path.name}.{digest}.ndcglab-cache.npz"
    # cache=False never gets here (read_letor does not call the cache then)
    folder = default_cache_dir() if isinstance(cache, bool) else Path(cache)
    return folder / name


def read_cached(
    path: Path,
    options: dict[str, Any],
    cache: bool | PathLike,
    read: Callable[[], RankingDataset],
    *,
    verify: bool,
    depends: Sequence[Path] = (),
) -> RankingDataset:
    """The dataset of ``path`` read with ``options``: from its cache entry when that matches the
    source (size, modification time and, with ``verify``, sha256) and every file of ``depends``
    (size, modification time and sha256, always), else ``read()`` and a new entry (an entry
    that cannot be written only warns)."""
    if not path.is_file():
        open_binary(path, letor=True).close()  # raises the usual "file not found" error
    ident = file_identity(path)
    sha = file_sha256(path) if verify else None
    deps = [{**file_identity(d), "sha256": file_sha256(d)} for d in depends]
    cfile = _cache_file(path, options, cache)
    if cfile.is_file():
        hit = _load_cache(cfile, ident, sha, path, deps)
        if hit is not None:
            ds, notes = hit
            for note in notes:  # the warnings of the parse, again (never silent)
                warn_user(note, UserWarning)
            return ds
    if sha is None:
        sha = file_sha256(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = read()
    notes = []
    for w in caught:
        warn_user(w.message, w.category)
        if issubclass(w.category, UserWarning):
            notes.append(str(w.message))
    try:
        _save_cache(cfile, ds, ident, sha, deps, notes)
    except OSError as exc:  # a cache that cannot be written is not an error
        warn_user(
            f"could not write the binary cache {cfile}: {exc}; the file was read all the same. "
            "Fix: set NDCGLAB_CACHE_DIR to a writable folder"
        )
    return ds


def _save_cache(
    cfile: Path,
    ds: RankingDataset,
    ident: dict[str, Any],
    sha: str,
    deps: list[dict[str, Any]],
    notes: list[str],
) -> None:
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
        "depends": deps,
        "source": ds.source,
        "n_docs": ds.n_docs,
        "n_queries": ds.n_queries,
        "extras": keys,
        "warnings": notes,
    }
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8).copy()
    cfile.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(cfile, gz=False) as f:
        # mypy matches the **arrays values against savez's allow_pickle: bool
        np.savez(f, **arrays)  # type: ignore[arg-type]


def _load_cache(
    cfile: Path, ident: dict[str, Any], sha: str | None, path: Path, deps: list[dict[str, Any]]
) -> tuple[RankingDataset, list[str]] | None:
    """The entry's dataset and the warnings its parse gave, or ``None`` (rebuild)."""
    try:
        with open(cfile, "rb") as fh, np.load(fh, allow_pickle=False) as z:
            meta = json.loads(z["meta"].tobytes().decode())
            if (
                meta.get("version") != CACHE_VERSION
                or meta.get("size") != ident["size"]
                or meta.get("mtime_ns") != ident["mtime_ns"]
                or (sha is not None and meta.get("sha256") != sha)
                or meta.get("depends") != deps
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
            features = z["features"]
            labels = z["labels"]
            boundaries = z["boundaries"]
            if (
                features.dtype != np.float32
                or features.ndim != 2
                or len(features) != n
                or labels.shape != (n,)
                or boundaries.shape != (n_q + 1,)
                or len(qids) != n_q
            ):
                raise ValueError("arrays of the wrong shape")
            notes = meta.get("warnings", [])
            if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
                raise ValueError("bad warnings in the metadata")
            ds = RankingDataset(
                features=features,
                labels=labels,
                boundaries=boundaries,
                query_ids=np.asarray(qids, dtype=object),
                doc_ids=doc_ids,
                extras=extras,
                source=str(path),
            )
            return ds, notes
    except Exception as exc:  # any damage to the entry means: rebuild it
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        warn_user(f"the binary cache {cfile} is unreadable ({reason}); rebuilding it from {path}")
        return None
