"""Click logs and their sufficient statistics: the types, validation, and the log files.

**A click log** (:class:`ClickLog`) has one row per *shown* document, in aligned NumPy arrays:

========== ======= ==============================================================================
column     dtype   meaning
========== ======= ==============================================================================
session    int64   the session (one query issued once, one ranking shown); ids are unique per log
query      int64   the index of the query in the :class:`~ndcglab.data.RankingDataset` (0-based)
doc        int64   the row of the document in that dataset (0-based, inside the query's block)
position   int32   the rank at which it was shown, 1-based (1 = top), at most ``k``
click      int8    1 if it was clicked, else 0
propensity float64 the logging policy's probability of showing this document at this position
                   (1 for a deterministic ranker; NaN when unknown)
========== ======= ==============================================================================

``qids`` holds the dataset's query ids (strings, one per query index), so a log can be matched to
the features again by id; ``meta`` is a JSON-serialisable dict (the click model's spec, the
policy, the seed, ``k`` and whatever the writer adds). A valid log (:func:`validate_log`) has each
session's rows contiguous and ordered by position ``1, 2, ..., m`` (``m <= k``), one query per
session, no document twice in a session, propensities in ``(0, 1]`` or NaN.

**Sufficient statistics** (:class:`ClickStats`, from :meth:`ClickLog.stats`): for every
(query, document, position) seen, the number of impressions and of clicks — what position-based
estimators and the PBM need, independent of the number of sessions.

**Files.** :func:`write_log` writes Parquet (pyarrow; ``qids`` and ``meta`` in the file's
key-value metadata under ``ndcglab.clicks``) when the name ends in ``.parquet`` or ``.pq``, and a
NumPy ``.npz`` archive when it ends in ``.npz`` (no extra dependency); :func:`read_log` recognises
either by its first bytes. Both write through :mod:`ndcglab._atomic`. Rows in messages are
counted from 1, in file order.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._atomic import atomic_write
from ..errors import DataFormatError, MissingDependencyError

__all__ = [
    "LOG_COLUMNS",
    "STATS_COLUMNS",
    "ClickLog",
    "ClickStats",
    "aligned_to",
    "concat_logs",
    "merge_stats",
    "read_log",
    "read_log_stats",
    "read_stats",
    "validate_log",
    "write_log",
    "write_stats",
]

#: the columns of a click log and their dtypes, in file order
LOG_COLUMNS: dict[str, type[np.generic]] = {
    "session": np.int64,
    "query": np.int64,
    "doc": np.int64,
    "position": np.int32,
    "click": np.int8,
    "propensity": np.float64,
}
_META_KEY = b"ndcglab.clicks"
_FORMAT_VERSION = 1


@dataclass(frozen=True)
class ClickStats:
    """Impressions and clicks per (query, document, position), sorted by query, doc, position.

    ``qids`` are the dataset's query ids (as in the log); ``k`` the number of positions shown.
    ``clicks[i] <= impressions[i]`` and ``impressions[i] >= 1`` for every row ``i``.
    """

    query: np.ndarray
    doc: np.ndarray
    position: np.ndarray
    impressions: np.ndarray
    clicks: np.ndarray
    qids: np.ndarray
    k: int

    def __len__(self) -> int:
        return len(self.query)

    def per_position(self) -> tuple[np.ndarray, np.ndarray]:
        """Impressions and clicks per position ``1..k`` (arrays of length ``k``; index 0 is
        position 1)."""
        imp = np.bincount(self.position - 1, weights=self.impressions, minlength=self.k)
        clk = np.bincount(self.position - 1, weights=self.clicks, minlength=self.k)
        return imp[: self.k].astype(np.int64), clk[: self.k].astype(np.int64)

    def click_rates(self) -> np.ndarray:
        """Clicks / impressions per position ``1..k`` (NaN where nothing was shown)."""
        imp, clk = self.per_position()
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(imp > 0, clk / np.maximum(imp, 1), np.nan)


@dataclass(frozen=True)
class ClickLog:
    """A click log: one row per shown document (see the module docstring for the columns).

    The arrays are converted to their dtypes (:data:`LOG_COLUMNS`) and must have one length;
    nothing else is checked here (:func:`validate_log` checks the rules).
    """

    session: np.ndarray
    query: np.ndarray
    doc: np.ndarray
    position: np.ndarray
    click: np.ndarray
    propensity: np.ndarray
    qids: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = None
        for name, dtype in LOG_COLUMNS.items():
            col = np.ascontiguousarray(np.asarray(getattr(self, name)), dtype=dtype).reshape(-1)
            object.__setattr__(self, name, col)
            if n is None:
                n = len(col)
            elif len(col) != n:
                raise DataFormatError(
                    f"click log column {name!r} has {len(col)} rows, {n} expected",
                    fix="give every column one value per shown document",
                )
        qids = np.asarray([str(q) for q in np.asarray(self.qids).tolist()], dtype=object)
        object.__setattr__(self, "qids", qids)
        object.__setattr__(self, "meta", dict(self.meta))

    def __len__(self) -> int:
        return len(self.session)

    @property
    def k(self) -> int:
        """The number of positions shown: ``meta['k']``, else the largest position."""
        if "k" in self.meta:
            return int(self.meta["k"])
        return int(self.position.max()) if len(self) else 0

    @property
    def n_sessions(self) -> int:
        """The number of sessions (distinct session ids)."""
        return len(self.session_starts()) - 1

    def session_starts(self) -> np.ndarray:
        """Row offsets where each session starts, plus ``len(self)`` at the end (sessions are
        contiguous in a valid log)."""
        if not len(self):
            return np.zeros(1, dtype=np.int64)
        change = np.flatnonzero(self.session[1:] != self.session[:-1]) + 1
        return np.concatenate(([0], change, [len(self)])).astype(np.int64)

    def stats(self) -> ClickStats:
        """Impressions and clicks per (query, document, position): :class:`ClickStats`."""
        k = max(self.k, 1)
        if not len(self):
            e = np.zeros(0, dtype=np.int64)
            return ClickStats(e, e, e.astype(np.int32), e, e, self.qids, k)
        n_docs = int(self.doc.max()) + 1
        key = self.doc.astype(np.int64) * k + (self.position.astype(np.int64) - 1)
        uniq, inverse = np.unique(key, return_inverse=True)
        imp = np.bincount(inverse, minlength=len(uniq)).astype(np.int64)
        clk = np.bincount(inverse, weights=self.click, minlength=len(uniq)).astype(np.int64)
        doc = uniq // k
        pos = (uniq % k + 1).astype(np.int32)
        # a document belongs to one query: take it from any of its rows
        query_of_doc = np.zeros(n_docs, dtype=np.int64)
        query_of_doc[self.doc] = self.query
        query = query_of_doc[doc]
        order = np.lexsort((pos, doc, query))
        return ClickStats(
            query[order], doc[order], pos[order], imp[order], clk[order], self.qids, k
        )

    def take(self, rows: np.ndarray) -> ClickLog:
        """A log of the given rows (indices or a boolean mask), same ``qids`` and ``meta``."""
        return ClickLog(
            **{name: getattr(self, name)[rows] for name in LOG_COLUMNS},
            qids=self.qids,
            meta=self.meta,
        )


# --------------------------------------------------------------------------- validation


def _bad(path: str | None, row: int, what: str, fix: str) -> DataFormatError:
    return DataFormatError(
        f"row {row}: {what}", path=path if path is not None else "<click log>", fix=fix
    )


def validate_log(
    log: ClickLog,
    *,
    dataset: Any = None,
    path: str | os.PathLike[str] | None = None,
) -> None:
    """Raise :class:`~ndcglab.errors.DataFormatError` at the first row that breaks a rule of a
    click log; the message names ``path`` and the row (1-based, in file order) and says the fix.

    The rules: positions in ``1..k``; a click is 0 or 1 and only on a shown document (a
    position of 0 means *not shown*, so a click there is refused); a propensity is NaN or in
    ``(0, 1]``; query indices are within ``qids``; each session is one contiguous block of one
    query, positions ``1..m`` in order, no document twice (a session id that appears again
    further on is a duplicate session). With ``dataset`` (a
    :class:`~ndcglab.data.RankingDataset`): every query id of the log is among the dataset's, and
    every document row lies within its query's block of the dataset.
    """
    where = None if path is None else os.fspath(path)
    n = len(log)
    k = log.k
    pos = log.position

    def first(mask: np.ndarray) -> int | None:
        idx = np.flatnonzero(mask)
        return int(idx[0]) if len(idx) else None

    r = first((log.click != 0) & (log.click != 1))
    if r is not None:
        raise _bad(where, r + 1, f"click {int(log.click[r])} is not 0 or 1", "write 1 for a "
                   "click and 0 for none")  # fmt: skip
    r = first((pos <= 0) & (log.click == 1))
    if r is not None:
        raise _bad(
            where,
            r + 1,
            f"a click on document {int(log.doc[r])} of session {int(log.session[r])}, which was "
            f"not shown (position {int(pos[r])})",
            "log clicks only on shown documents, at their position 1..k",
        )
    r = first((pos < 1) | (pos > k))
    if r is not None:
        raise _bad(
            where,
            r + 1,
            f"position {int(pos[r])} of session {int(log.session[r])} is outside 1..k (k={k} "
            "documents shown)",
            "keep positions from 1 (top) to k, or set meta['k'] to the number shown",
        )
    prop = log.propensity
    r = first(~np.isnan(prop) & ~((prop > 0) & (prop <= 1)))
    if r is not None:
        raise _bad(
            where,
            r + 1,
            f"propensity {float(prop[r])!r} of session {int(log.session[r])} is not in (0, 1]",
            "a shown document was shown with a probability > 0: log the logging policy's "
            "probability, or NaN when unknown",
        )
    nq = len(log.qids)
    r = first((log.query < 0) | (log.query >= nq))
    if r is not None:
        raise _bad(
            where,
            r + 1,
            f"query index {int(log.query[r])} is not one of the log's {nq} query ids",
            "give query indices from 0 to the number of query ids - 1",
        )
    if n:
        starts = log.session_starts()
        sess_of_block = log.session[starts[:-1]]
        order = np.argsort(sess_of_block, kind="stable")
        dup = np.flatnonzero(sess_of_block[order][1:] == sess_of_block[order][:-1])
        if len(dup):
            block = int(order[dup[0] + 1])
            r = int(starts[block])
            raise _bad(
                where,
                r + 1,
                f"session {int(log.session[r])} appears again (a duplicate session; its rows "
                "must be one contiguous block)",
                "give every session its own id and keep its rows together",
            )
        block_id = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
        expected = (np.arange(n) - starts[block_id] + 1).astype(np.int64)
        r = first(pos.astype(np.int64) != expected)
        if r is not None:
            raise _bad(
                where,
                r + 1,
                f"position {int(pos[r])} of session {int(log.session[r])} where {expected[r]} "
                "is due (each session lists positions 1, 2, ... once, in order)",
                "write each session's shown documents in rank order, one row per position",
            )
        r = first((log.query[1:] != log.query[:-1]) & (block_id[1:] == block_id[:-1]))
        if r is not None:
            raise _bad(
                where,
                r + 2,
                f"session {int(log.session[r + 1])} changes query (one session is one query)",
                "give each session one query",
            )
        key = block_id.astype(np.int64) * (int(log.doc.max()) + 2) + log.doc
        srt = np.argsort(key, kind="stable")
        same = np.flatnonzero(key[srt][1:] == key[srt][:-1])
        if len(same):
            r = int(max(srt[same[0]], srt[same[0] + 1]))
            raise _bad(
                where,
                r + 1,
                f"document {int(log.doc[r])} is shown twice in session {int(log.session[r])}",
                "show each document at most once per session",
            )
    if dataset is not None:
        _validate_against(log, dataset, where)


def _validate_against(log: ClickLog, dataset: Any, where: str | None) -> None:
    known = {str(q): i for i, q in enumerate(dataset.query_ids.tolist())}
    mapped = np.array([known.get(str(q), -1) for q in log.qids.tolist()], dtype=np.int64)
    if len(log) == 0:
        return
    dq = mapped[log.query]
    bad = np.flatnonzero(dq < 0)
    if len(bad):
        r = int(bad[0])
        qid = log.qids[log.query[r]]
        raise _bad(
            where,
            r + 1,
            f"query {qid!r} is missing from the features ({dataset.source or 'the dataset'} has "
            f"no such query id)",
            "simulate and evaluate the log against the dataset it was made from",
        )
    lo = dataset.boundaries[dq]
    hi = dataset.boundaries[dq + 1]
    bad = np.flatnonzero((log.doc < lo) | (log.doc >= hi))
    if len(bad):
        r = int(bad[0])
        raise _bad(
            where,
            r + 1,
            f"document row {int(log.doc[r])} is not a document of query "
            f"{log.qids[log.query[r]]!r} (its rows are {int(lo[r])}..{int(hi[r]) - 1})",
            "simulate and evaluate the log against the dataset it was made from",
        )


def aligned_to(log: ClickLog, dataset: Any) -> ClickLog:
    """The log with ``query`` re-indexed to ``dataset``'s query order (matched by query id) and
    ``qids`` set to the dataset's; unchanged when they already agree. Call
    :func:`validate_log` with ``dataset`` first (unknown ids raise there)."""
    ds_qids = np.asarray([str(q) for q in dataset.query_ids.tolist()], dtype=object)
    if len(ds_qids) == len(log.qids) and (ds_qids == log.qids).all():
        return log
    known = {q: i for i, q in enumerate(ds_qids.tolist())}
    mapped = np.array([known.get(q, -1) for q in log.qids.tolist()], dtype=np.int64)
    cols = {name: getattr(log, name) for name in LOG_COLUMNS}
    cols["query"] = mapped[log.query]
    return ClickLog(**cols, qids=ds_qids, meta=log.meta)


# --------------------------------------------------------------------------- files


def _is_parquet_name(path: str) -> bool:
    return path.lower().endswith((".parquet", ".pq"))


def _header(log: ClickLog) -> dict[str, Any]:
    return {
        "version": _FORMAT_VERSION,
        "qids": log.qids.tolist(),
        "meta": log.meta,
    }


def write_log(log: ClickLog | Iterable[ClickLog], path: str | os.PathLike[str]) -> str:
    """Write ``log`` to ``path``: Parquet for ``.parquet``/``.pq`` (needs pyarrow), otherwise a
    NumPy ``.npz`` archive; atomically (:func:`ndcglab._atomic.atomic_write`). Returns the path.

    ``log`` may also be an iterable of logs with the same ``qids`` and ``meta`` (chunks of one
    simulation, whose session ids already differ): their rows are written in order, as one
    log — to Parquet one row group per chunk, so a log larger than memory streams through.
    ``meta`` must be JSON-serialisable.
    """
    text = os.fspath(path)
    chunks = iter([log] if isinstance(log, ClickLog) else log)
    first = next(chunks, None)
    if first is None:
        raise DataFormatError("no click log to write", path=text, fix="give at least one log")
    header = json.dumps(_header(first), sort_keys=True, allow_nan=True)
    if _is_parquet_name(text):
        pa, pq = _pyarrow(text)

        def table_of(part: ClickLog) -> Any:
            t = pa.table({name: getattr(part, name) for name in LOG_COLUMNS})
            return t.replace_schema_metadata({_META_KEY: header.encode("utf-8")})

        with atomic_write(text, gz=False) as f:
            table = table_of(first)
            with pq.ParquetWriter(f, table.schema) as writer:
                writer.write_table(table)
                for part in chunks:
                    writer.write_table(table_of(part))
        return text
    parts = [first, *chunks]
    return _write_npz(
        text, {n: np.concatenate([getattr(p, n) for p in parts]) for n in LOG_COLUMNS}, header
    )


def _write_npz(path: str, columns: dict[str, Any], header: str) -> str:
    buf = io.BytesIO()
    np.savez_compressed(
        buf, **columns, header=np.frombuffer(header.encode("utf-8"), dtype=np.uint8)
    )
    with atomic_write(path, gz=False) as f:
        f.write(buf.getvalue())
    return path


#: the columns of a statistics file, in order
STATS_COLUMNS: dict[str, type[np.generic]] = {
    "query": np.int64,
    "doc": np.int64,
    "position": np.int32,
    "impressions": np.int64,
    "clicks": np.int64,
}


def merge_stats(parts: Sequence[ClickStats]) -> ClickStats:
    """The statistics of several logs of the same queries (chunks, or logs of several
    rankers) added up per (query, document, position)."""
    if not parts:
        raise DataFormatError("no statistics to merge", fix="give at least one")
    k = max(p.k for p in parts)
    cols = {n: np.concatenate([getattr(p, n) for p in parts]) for n in STATS_COLUMNS}
    key = cols["doc"].astype(np.int64) * k + (cols["position"].astype(np.int64) - 1)
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    imp = np.bincount(inverse, weights=cols["impressions"], minlength=len(uniq))
    clk = np.bincount(inverse, weights=cols["clicks"], minlength=len(uniq))
    query = cols["query"][first]
    doc, pos = uniq // k, (uniq % k + 1).astype(np.int32)
    order = np.lexsort((pos, doc, query))
    return ClickStats(
        query[order], doc[order], pos[order], imp[order].astype(np.int64),
        clk[order].astype(np.int64), parts[0].qids, k,
    )  # fmt: skip


def write_stats(stats: ClickStats, path: str | os.PathLike[str]) -> str:
    """Write sufficient statistics (columns query, doc, position, impressions, clicks; the
    query ids and ``k`` in the header) as Parquet (``.parquet``/``.pq``) or ``.npz``,
    atomically. Returns the path."""
    text = os.fspath(path)
    header = json.dumps({"version": _FORMAT_VERSION, "kind": "stats", "qids": stats.qids.tolist(),
                         "k": stats.k})  # fmt: skip
    columns = {n: np.asarray(getattr(stats, n), dtype=t) for n, t in STATS_COLUMNS.items()}
    if _is_parquet_name(text):
        pa, pq = _pyarrow(text)
        table = pa.table(columns).replace_schema_metadata({_META_KEY: header.encode("utf-8")})
        with atomic_write(text, gz=False) as f:
            pq.write_table(table, f)
        return text
    return _write_npz(text, columns, header)


def read_stats(path: str | os.PathLike[str]) -> ClickStats:
    """Read statistics written by :func:`write_stats` (Parquet or ``.npz``)."""
    text = os.fspath(path)
    with open(text, "rb") as f:
        magic = f.read(4)
    if magic == b"PAR1":
        _, pq = _pyarrow(text)
        table = pq.read_table(text)
        raw = (table.schema.metadata or {}).get(_META_KEY, b"")
        cols = {n: table.column(n).to_numpy() for n in STATS_COLUMNS if n in table.column_names}
    elif magic[:2] == b"PK":
        with np.load(text, allow_pickle=False) as z:
            raw = z["header"].tobytes() if "header" in z.files else b""
            cols = {n: z[n] for n in STATS_COLUMNS if n in z.files}
    else:
        raw = b""
        cols = {}
    header = _parse_header(raw, text) if raw else {}
    if header.get("kind") != "stats" or len(cols) != len(STATS_COLUMNS):
        raise DataFormatError(
            "not a click statistics file",
            path=text,
            fix="give a file written by 'ndcglab clicks simulate --stats' or write_stats",
        )
    return ClickStats(
        **{n: np.asarray(cols[n], dtype=t) for n, t in STATS_COLUMNS.items()},
        qids=np.asarray(header["qids"], dtype=object),
        k=int(header["k"]),
    )


def _pyarrow(path: str) -> Any:
    try:
        import importlib

        pa = importlib.import_module("pyarrow")
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise MissingDependencyError(
            f"{path}: Parquet click logs need pyarrow, which is not installed. Fix: pip install "
            "'ndcglab[clicks]', or name the log FILE.npz to use NumPy's format"
        ) from None
    return pa, pq


def read_log(
    path: str | os.PathLike[str], *, dataset: Any = None, validate: bool = True
) -> ClickLog:
    """Read a click log written by :func:`write_log` (Parquet or ``.npz``, recognised by its
    first bytes). With ``validate`` (default), :func:`validate_log` checks it, naming ``path``
    and the row of the first problem; with ``dataset`` also against the dataset."""
    text = os.fspath(path)
    with open(text, "rb") as f:
        magic = f.read(4)
    if magic == b"PAR1":
        log = _read_parquet(text)
    elif magic[:2] == b"PK":
        log = _read_npz(text)
    else:
        raise DataFormatError(
            "not a click log (neither Parquet nor a NumPy .npz archive)",
            path=text,
            token=magic.decode("latin-1"),
            fix="give a log written by 'ndcglab clicks simulate' or ndcglab.clicks.write_log",
        )
    if validate:
        validate_log(log, dataset=dataset, path=text)
    return log


def read_log_stats(
    path: str | os.PathLike[str], *, validate: bool = True, client: Any = None
) -> ClickStats:
    """The sufficient statistics of the log file ``path`` (:meth:`ClickLog.stats`), read one
    Parquet row group at a time, so a log larger than memory can be summed (an ``.npz`` log is
    read whole). With ``validate``, each row group is checked on its own (:func:`validate_log`,
    rows numbered in the whole file); a session split across row groups is not checked as a
    whole.

    ``client``: a ``distributed.Client``; each row group (a partition) is then read, checked and
    counted on a worker (which must see ``path``), and the partitions' counts are summed here
    (:func:`merge_stats`) — the same statistics as without a client."""
    text = os.fspath(path)
    with open(text, "rb") as f:
        magic = f.read(4)
    if magic != b"PAR1":
        return read_log(text, validate=validate).stats()
    _, pq = _pyarrow(text)
    try:
        pfile = pq.ParquetFile(text)
    except Exception as exc:  # pyarrow's own errors: a damaged file
        raise DataFormatError(
            f"the Parquet file cannot be read ({type(exc).__name__}: {exc})",
            path=text,
            fix="write the log again",
        ) from None
    raw = (pfile.schema_arrow.metadata or {}).get(_META_KEY)
    if raw is None:
        return read_log(text, validate=validate).stats()  # says what is missing
    header = _parse_header(raw, text)
    meta = pfile.metadata
    firsts = np.concatenate(
        ([0], np.cumsum([meta.row_group(g).num_rows for g in range(pfile.num_row_groups)]))
    ).astype(np.int64)
    groups = range(pfile.num_row_groups)
    if client is None:
        parts = [_row_group_stats(text, g, int(firsts[g]), header, validate) for g in groups]
    else:
        futures = client.map(
            _row_group_stats,
            [text] * len(groups),
            list(groups),
            [int(firsts[g]) for g in groups],
            [header] * len(groups),
            [validate] * len(groups),
            pure=False,
        )
        parts = client.gather(futures)
    if not parts:
        return _from_header({n: np.zeros(0, t) for n, t in LOG_COLUMNS.items()}, header).stats()
    return merge_stats(parts)


def _row_group_stats(
    text: str, group: int, first_row: int, header: dict[str, Any], validate: bool
) -> ClickStats:
    """The statistics of row group ``group`` of the Parquet log ``text`` (its first row is row
    ``first_row`` of the file); run here or on a Dask worker."""
    _, pq = _pyarrow(text)
    log = _table_to_log(pq.ParquetFile(text).read_row_group(group), header, text)
    if validate:
        try:
            validate_log(log, path=text)
        except DataFormatError as exc:
            if exc.line is None and exc.reason.startswith("row "):
                row, _, rest = exc.reason[4:].partition(":")
                raise DataFormatError(
                    f"row {int(row) + first_row}:{rest}", path=text, fix=exc.fix
                ) from None
            raise
    return log.stats()


def _parse_header(raw: bytes, path: str) -> dict[str, Any]:
    try:
        header = json.loads(raw.decode("utf-8"))
        if not isinstance(header, dict) or "qids" not in header:
            raise ValueError("no qids")
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataFormatError(
            f"the click log's header cannot be read ({exc})",
            path=path,
            fix="give a log written by 'ndcglab clicks simulate' or ndcglab.clicks.write_log",
        ) from None
    version = header.get("version", _FORMAT_VERSION)
    if not isinstance(version, int) or version > _FORMAT_VERSION:
        raise DataFormatError(
            f"the file is of click-log format version {version!r}; this ndcglab reads up to "
            f"{_FORMAT_VERSION}",
            path=path,
            fix="upgrade ndcglab to read it",
        )
    return header


def _columns_error(path: str, missing: list[str]) -> DataFormatError:
    return DataFormatError(
        f"the click log has no column {', '.join(missing)}",
        path=path,
        fix=f"give the columns {', '.join(LOG_COLUMNS)}",
    )


def _coerce(path: str, name: str, values: np.ndarray) -> np.ndarray:
    dtype = LOG_COLUMNS[name]
    arr = np.asarray(values)
    if np.issubdtype(dtype, np.integer):
        if arr.dtype.kind == "f":
            bad = np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)))
            if len(bad):
                raise DataFormatError(
                    f"row {int(bad[0]) + 1}: {name} {arr[bad[0]]!r} is not a whole number",
                    path=path,
                    fix=f"write {name} as whole numbers",
                )
        elif arr.dtype.kind not in "iub":
            raise DataFormatError(
                f"column {name} holds {arr.dtype} values, not numbers",
                path=path,
                fix=f"write {name} as whole numbers",
            )
        info = np.iinfo(np.dtype(dtype))
        if len(arr):
            bad = np.flatnonzero((arr < info.min) | (arr > info.max))
            if len(bad):
                raise DataFormatError(
                    f"row {int(bad[0]) + 1}: {name} {arr[bad[0]]!r} is out of range",
                    path=path,
                    fix=f"write {name} between {info.min} and {info.max}",
                )
    return arr.astype(dtype)


def _from_header(cols: dict[str, np.ndarray], header: dict[str, Any]) -> ClickLog:
    qids = np.asarray(header["qids"], dtype=object)
    return ClickLog(**cols, qids=qids, meta=header.get("meta", {}))


def _read_parquet(path: str) -> ClickLog:
    _, pq = _pyarrow(path)
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow's own errors: a damaged file
        raise DataFormatError(
            f"the Parquet file cannot be read ({type(exc).__name__}: {exc})",
            path=path,
            fix="write the log again",
        ) from None
    raw = (table.schema.metadata or {}).get(_META_KEY)
    if raw is None:
        raise DataFormatError(
            "the Parquet file has no ndcglab.clicks metadata (query ids, k)",
            path=path,
            fix="give a log written by 'ndcglab clicks simulate' or ndcglab.clicks.write_log",
        )
    header = _parse_header(raw, path)
    return _table_to_log(table, header, path)


def _table_to_log(table: Any, header: dict[str, Any], path: str) -> ClickLog:
    missing = [c for c in LOG_COLUMNS if c not in table.column_names]
    if missing:
        raise _columns_error(path, missing)
    cols: dict[str, np.ndarray] = {}
    for name in LOG_COLUMNS:
        col = table.column(name)
        if col.null_count:
            arr = col.to_numpy(zero_copy_only=False)
            bad = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
            if name == "position":
                cols[name] = arr  # a null position: the document was not shown
                continue
            raise DataFormatError(
                f"row {bad + 1}: {name} is missing (null)",
                path=path,
                fix=f"give every row a {name}",
            )
        cols[name] = col.to_numpy(zero_copy_only=False)
    pos = cols["position"]
    if pos.dtype.kind == "f" or pos.dtype == object:
        pos = np.asarray(pos, dtype=np.float64)
        cols["position"] = np.where(np.isnan(pos), 0, pos)  # null position = not shown
    cols = {name: _coerce(path, name, v) for name, v in cols.items()}
    return ClickLog(
        **cols, qids=np.asarray(header["qids"], dtype=object), meta=header.get("meta", {})
    )


def _read_npz(path: str) -> ClickLog:
    try:
        with np.load(path, allow_pickle=False) as z:
            files = set(z.files)
            if "header" not in files:
                raise DataFormatError(
                    "the .npz archive has no header (query ids, k)",
                    path=path,
                    fix="give a log written by 'ndcglab clicks simulate' or "
                    "ndcglab.clicks.write_log",
                )
            header = _parse_header(z["header"].tobytes(), path)
            missing = [c for c in LOG_COLUMNS if c not in files]
            if missing:
                raise _columns_error(path, missing)
            cols = {name: _coerce(path, name, z[name]) for name in LOG_COLUMNS}
    except (ValueError, OSError, EOFError) as exc:
        if isinstance(exc, DataFormatError):
            raise
        raise DataFormatError(
            f"the .npz archive cannot be read ({type(exc).__name__}: {exc})",
            path=path,
            fix="write the log again",
        ) from None
    return ClickLog(
        **cols, qids=np.asarray(header["qids"], dtype=object), meta=header.get("meta", {})
    )


def concat_logs(logs: list[ClickLog]) -> ClickLog:
    """One log of several (e.g. from several logging rankers, for intervention harvesting):
    the rows in order, session ids renumbered so that each log's sessions stay apart
    (``session + offset``, the offset past the previous logs' largest id). The logs must share
    their ``qids``; ``meta`` is the first log's, with ``"parts"`` listing each log's meta."""
    if not logs:
        raise DataFormatError("no click log to join", fix="give at least one log")
    qids = logs[0].qids
    for i, lg in enumerate(logs[1:], start=2):
        if len(lg.qids) != len(qids) or (lg.qids != qids).any():
            raise DataFormatError(
                f"click log {i} has other query ids than log 1",
                fix="join logs simulated on the same dataset",
            )
    cols: dict[str, list[np.ndarray]] = {name: [] for name in LOG_COLUMNS}
    offset = 0
    for lg in logs:
        for name in LOG_COLUMNS:
            col = getattr(lg, name)
            if name == "session":
                col = col - lg.session.min(initial=0) + offset
            cols[name].append(col)
        if len(lg):
            offset += int(lg.session.max() - lg.session.min()) + 1
    meta = dict(logs[0].meta)
    meta["parts"] = [lg.meta for lg in logs]
    return ClickLog(**{n: np.concatenate(v) for n, v in cols.items()}, qids=qids, meta=meta)
