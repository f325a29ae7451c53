"""Evaluation of files larger than memory on Dask: a LETOR file with a score file, a TREC run.

Per-query measures are computed by :mod:`ndcglab.measures` on partitions that never split a
query, then concatenated — so the numbers are exactly those of the single-process path. Every
line is read by the data package's own readers, one block of whole lines at a time and in memory
(:func:`ndcglab.data.read_letor_bytes`, :func:`ndcglab.data.read_run_bytes`: the parsers of
:func:`~ndcglab.data.read_letor` and :func:`~ndcglab.data.read_run` fed the block's bytes, no
temporary file), so the file formats and their error messages are those of :mod:`ndcglab.data`.

* LETOR file + one score per document (:func:`evaluate_letor_dask`): the file is cut into byte
  blocks at line ends (``dask.bytes.read_bytes``). Each task reads its block (labels, query ids,
  ``docid`` comments), the block's document counts give each block its first score, and each
  task then evaluates every query that starts and ends inside its block; the first and last query
  of a block (which may continue in the neighbouring block) are returned as fragments, glued
  together in file order and evaluated at the end. Memory per task: one block.
* TREC run + qrels (:func:`evaluate_trec_dask`): a run file need not keep a query's lines
  together, so each block's rows are **hash-partitioned by query id** (CRC-32, stable across
  processes) into ``P`` partitions; each partition gathers its rows (in file order) and calls
  :func:`ndcglab.measures.evaluate_trec` with its queries' qrels.

Dask is imported when these functions run (the ``distributed`` extra); they use the given
``distributed.Client`` (``client=``), else Dask's default scheduler.
"""

from __future__ import annotations

import dataclasses
import os
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .._compat import broadcast, require
from ..data import boundaries_from_group
from ..errors import DataFormatError

__all__ = ["evaluate_letor_dask", "evaluate_trec_dask"]

PathLike = str | os.PathLike[str]


# ============================================================================ reading blocks
def _has_data(block: bytes) -> bool:
    """Whether a block holds a line that is neither blank nor a ``#`` comment."""
    return any(line.strip() and not line.lstrip().startswith(b"#") for line in block.splitlines())


def _read_block(
    block: bytes, reader: Callable[..., Any], path: Path, where: str, **options: Any
) -> Any:
    """``reader(block, name=path, **options)`` (a :mod:`ndcglab.data` reader of bytes in
    memory) applied to one block of whole lines; an error names the original file and where the
    line lies in it (``where``: which block)."""
    try:
        return reader(block, name=path, **options)
    except DataFormatError as exc:
        at = f" (line {exc.line} of {where})" if exc.line is not None else f" ({where})"
        raise DataFormatError(exc.reason + at, path=path, token=exc.token, fix=exc.fix) from None


@dataclasses.dataclass
class _Rows:
    """The documents of one block of a LETOR file: labels, query ids and doc ids (None when a
    document has no ``#docid``)."""

    labels: np.ndarray
    qids: np.ndarray
    docs: list[str | None]

    def __len__(self) -> int:
        return len(self.labels)


def _letor_rows(block: bytes, path: Path, where: str) -> _Rows:
    from ..data import read_letor_bytes

    if not _has_data(block):
        return _Rows(np.zeros(0), np.zeros(0, dtype=object), [])
    ds = _read_block(block, read_letor_bytes, path, where)
    qids = np.repeat(np.asarray(ds.query_ids, dtype=object), ds.query_lengths)
    if ds.doc_ids is None:
        docs: list[str | None] = [None] * ds.n_docs
    else:
        docs = [d if d else None for d in ds.doc_ids.tolist()]
    return _Rows(np.asarray(ds.labels, dtype=np.float64), qids, docs)


def _count(rows: _Rows) -> int:
    return len(rows)


def _take(t: Any, i: int) -> Any:
    return t[i]


def _scores_slice(scores: Any, start: int, stop: int) -> np.ndarray:
    arr = scores if isinstance(scores, np.ndarray) else np.load(scores, mmap_mode="r")
    if stop > len(arr):
        raise DataFormatError(
            f"only {len(arr)} scores for a file with more documents",
            fix="give exactly one score per document of the data file, in its order",
        )
    return np.asarray(arr[start:stop], dtype=np.float64)


# ============================================================================ LETOR + scores
def _eval_rows(
    labels: np.ndarray,
    scores: np.ndarray,
    qids: np.ndarray,
    docs: list[str | None],
    measures: Any,
    preset: Any,
    first_docs: np.ndarray,
) -> tuple[np.ndarray, Any]:
    """Evaluate rows (whole queries, contiguous) → (first document of each query, result)."""
    from ..data import boundaries_from_qids
    from ..measures.evaluate import evaluate_arrays

    q = np.asarray(qids, dtype=object)
    if len(q) == 0:
        return np.zeros(0, dtype=np.int64), None
    b = boundaries_from_qids(q, contiguous=False)
    doc_ids = None if any(d is None for d in docs) else np.asarray(docs, dtype=object)
    res = evaluate_arrays(
        labels, scores, b, measures, preset=preset, doc_ids=doc_ids, query_ids=q[b[:-1]]
    )
    return np.asarray(first_docs, dtype=np.int64)[b[:-1]], res


def _letor_block(
    rows: _Rows, offsets: np.ndarray, i: int, scores: Any, measures: Any, preset: Any
) -> dict[str, Any]:
    n = len(rows)
    if n == 0:
        return {"interior": (np.zeros(0, np.int64), None), "edges": []}
    doc0 = int(offsets[i])
    s = _scores_slice(scores, doc0, doc0 + n)
    first = np.arange(doc0, doc0 + n, dtype=np.int64)
    labels, qids, docs = rows.labels, rows.qids, rows.docs
    change = np.flatnonzero(qids[1:] != qids[:-1]) + 1
    starts = np.concatenate([[0], change]).astype(np.int64)
    ends = np.concatenate([change, [n]]).astype(np.int64)
    edges = []
    for e in sorted({0, len(starts) - 1}):
        a, c = int(starts[e]), int(ends[e])
        edges.append((qids[a], labels[a:c], s[a:c], docs[a:c], first[a:c]))
    interior: tuple[np.ndarray, Any] = (np.zeros(0, np.int64), None)
    if len(starts) > 2:
        a, c = int(ends[0]), int(starts[-1])
        interior = _eval_rows(
            labels[a:c], s[a:c], qids[a:c], docs[a:c], measures, preset, first[a:c]
        )
    return {"interior": interior, "edges": edges}


def _combine(pieces: list[tuple[np.ndarray, Any]], order: str) -> Any:
    """Concatenate partition results (each: first documents, EvaluationResult) into one."""
    from ..measures.evaluate import EvaluationResult, mean_of

    pieces = [(f, r) for f, r in pieces if r is not None]
    if not pieces:
        raise DataFormatError("no queries to evaluate", fix="check the input files")
    ref = pieces[0][1]
    key = np.concatenate([f for f, _ in pieces])
    qids = np.concatenate([np.asarray(r.query_ids, dtype=object) for _, r in pieces])
    if order == "line":
        perm = np.argsort(key, kind="stable")
    else:  # query id, as evaluate_trec sorts
        perm = np.asarray(sorted(range(len(qids)), key=lambda i: qids[i]), dtype=np.int64)
    per_query: dict[str, np.ndarray] = {}
    mean: dict[str, float] = {}
    by_name = {str(m): m for m in ref.measures}
    for name in ref.per_query:
        v = np.concatenate([r.per_query[name] for _, r in pieces])[perm]
        per_query[name] = v
        mean[name] = mean_of(by_name[name], v)  # gm_map: the geometric mean
    empty_by = {
        name: int(sum(r.empty_by_measure[name] for _, r in pieces)) for name in ref.per_query
    }
    conv = dict(ref.convention)
    conv["measures"] = {
        name: {**c, "empty_queries": empty_by[name]}
        for name, c in ref.convention.get("measures", {}).items()
    }
    if "duplicates_dropped" in conv:
        conv["duplicates_dropped"] = int(
            sum(r.convention.get("duplicates_dropped", 0) for _, r in pieces)
        )
    conv["partitions"] = len(pieces)
    if not isinstance(ref, EvaluationResult):  # pragma: no cover - defensive
        return None
    return dataclasses.replace(
        ref,
        per_query=per_query,
        mean=mean,
        query_ids=qids[perm],
        empty_queries=int(sum(r.empty_queries for _, r in pieces)),
        empty_by_measure=empty_by,
        convention=conv,
    )


def _glue(
    glued: list[tuple[str, list, list, list, list]],
    qid: str,
    lab: np.ndarray,
    sc: np.ndarray,
    docs: Any,
    first: np.ndarray,
    *,
    may_continue: bool,
) -> None:
    if may_continue and glued and glued[-1][0] == qid:
        g = glued[-1]
        g[1].append(lab)
        g[2].append(sc)
        g[3].extend(docs)
        g[4].append(first)
    else:
        glued.append((qid, [lab], [sc], list(docs), [first]))


def _blocks(path: Path, blocksize: int | str) -> list[Any]:
    """The file as delayed byte blocks of whole lines (a gzip file is one block)."""
    from dask.bytes import read_bytes

    gz = path.suffix == ".gz"
    _, blocks = read_bytes(
        str(path),
        delimiter=b"\n",
        blocksize=None if gz else blocksize,
        compression="gzip" if gz else None,
        sample=False,
    )
    return list(blocks[0])


def evaluate_letor_dask(
    path: PathLike,
    scores: np.ndarray | PathLike,
    measures: Any = None,
    *,
    preset: Any = None,
    client: Any = None,
    blocksize: int | str = "64MiB",
    workdir: PathLike | None = None,
) -> Any:
    """Evaluate a LETOR file with one score per document, block by block on Dask.

    ``scores``: an ``(N,)`` array, a ``.npy`` file (memory-mapped by each task), or a score file
    with one score per line (read once by :func:`ndcglab.data.read_scores` and saved as a
    ``.npy`` in ``workdir``, default next to it). ``measures``/``preset`` as in
    :func:`ndcglab.measures.evaluate`. ``blocksize``: bytes per task (gzip files cannot be cut
    and are read as one block). Returns an :class:`~ndcglab.measures.EvaluationResult` equal to
    ``evaluate(read_letor(path), scores, measures, preset=preset)`` (queries in file order).
    """
    dask = require("dask")
    p = Path(path)
    if not p.exists():
        raise DataFormatError("file not found", path=p, fix="check the path")
    if isinstance(scores, str | os.PathLike):
        sp = Path(scores)
        if sp.suffix != ".npy":
            from ..data import read_scores

            target = Path(workdir or sp.parent) / (sp.name + ".npy")
            np.save(target, read_scores(sp))
            scores = str(target)
        else:
            scores = str(sp)
        n_scores = len(np.load(scores, mmap_mode="r"))
    else:
        scores = np.asarray(scores, dtype=np.float64).ravel()
        n_scores = len(scores)
        if client is not None:
            scores = broadcast(client, scores)
    delayed = dask.delayed
    rows = [
        delayed(_letor_rows)(b, p, f"block {i} of the file")
        for i, b in enumerate(_blocks(p, blocksize))
    ]
    # the documents per block, as boundaries: block i's first document is offsets[i]
    offsets = delayed(boundaries_from_group)([delayed(_count)(r) for r in rows])
    tasks = [
        delayed(_letor_block)(r, offsets, i, scores, measures, preset) for i, r in enumerate(rows)
    ]
    sched = {} if client is None else {"scheduler": client}
    parts, offs = dask.compute(tasks, offsets, **sched)
    n_docs = int(offs[-1])
    if n_scores != n_docs:
        raise DataFormatError(
            f"{n_scores} scores for {n_docs} documents",
            path=p,
            fix="give exactly one score per document of the data file, in its order",
        )
    # glue the edge fragments (file order) into whole queries and evaluate them: a block's first
    # query continues the previous block's last one when their ids match (nothing lies between)
    glued: list[tuple[str, list, list, list, list]] = []
    for part in parts:
        for k, (qid, lab, sc, docs, first) in enumerate(part["edges"]):
            _glue(glued, qid, lab, sc, docs, first, may_continue=k == 0)
    pieces = [part["interior"] for part in parts]
    if glued:
        sizes = [sum(len(x) for x in g[1]) for g in glued]
        lab = np.concatenate([np.concatenate(g[1]) for g in glued])
        sc = np.concatenate([np.concatenate(g[2]) for g in glued])
        first = np.concatenate([np.concatenate(g[4]) for g in glued])
        docs = [d for g in glued for d in g[3]]
        # consecutive glued queries may share an id only if the file repeats it: keep them apart
        tags = np.repeat(np.arange(len(glued)), sizes)
        qids = np.asarray([f"{g[0]}\0{k}" for k, g in enumerate(glued)], dtype=object)[tags]
        first_docs, res = _eval_rows(lab, sc, qids, docs, measures, preset, first)
        if res is not None:
            plain = [str(x).split("\0")[0] for x in res.query_ids]
            res = dataclasses.replace(res, query_ids=np.asarray(plain, dtype=object))
        pieces.append((first_docs, res))
    return _combine(pieces, order="line")


# ============================================================================ TREC runs
def _trec_block(
    block: bytes, n_parts: int, path: Path, where: str
) -> list[list[tuple[str, dict[str, float]]]]:
    """The rows of one block of a run, read by :func:`ndcglab.data.read_run_bytes`, as
    ``(qid, {docno: score})`` per partition ``crc32(qid) mod n_parts``."""
    from ..data import read_run_bytes

    out: list[list[tuple[str, dict[str, float]]]] = [[] for _ in range(n_parts)]
    if not block.strip():
        return out
    run = _read_block(block, read_run_bytes, path, where, allow_empty=True)
    for qid, docs in run.items():
        out[zlib.crc32(qid.encode("utf-8")) % n_parts].append((qid, docs))
    return out


def _trec_reduce(
    rows_lists: list[list[tuple[str, dict[str, float]]]],
    qrels: Mapping[str, Any],
    measures: Any,
    preset: Any,
) -> tuple[np.ndarray, Any]:
    from ..measures.evaluate import evaluate_trec

    run: dict[str, dict[str, float]] = {}
    for rows in rows_lists:  # in block order = file order
        for qid, docs in rows:
            ranked = run.setdefault(qid, {})
            for doc, score in docs.items():
                if doc in ranked:
                    raise DataFormatError(
                        f"document {doc!r} appears twice in the ranking of query {qid!r}",
                        fix="list each document once per query",
                    )
                ranked[doc] = score
    sub = {q: qrels[q] for q in run if q in qrels}
    if not sub:
        return np.zeros(0, np.int64), None
    res = evaluate_trec(sub, run, measures, preset=preset)
    return np.zeros(res.n_queries, np.int64), res


def evaluate_trec_dask(
    qrels: Mapping[str, Mapping[str, float]] | PathLike,
    run: PathLike,
    measures: Any = None,
    *,
    preset: Any = "trec_eval",
    client: Any = None,
    blocksize: int | str = "64MiB",
    n_partitions: int | None = None,
) -> Any:
    """Evaluate a TREC run file (possibly larger than memory) against qrels, on Dask.

    Rows are hash-partitioned by query id into ``n_partitions`` (default: 4 per worker, at least
    2) so that no query is split, and each partition is evaluated by
    :func:`ndcglab.measures.evaluate_trec`. The result equals
    ``evaluate_trec(read_qrels(qrels), read_run(run), measures, preset=preset)`` (queries sorted by
    id). ``qrels`` (small) is a dict or a qrels file path.
    """
    dask = require("dask")
    if not isinstance(qrels, Mapping):
        from ..data import read_qrels

        qrels = read_qrels(qrels)
    p = Path(run)
    if not p.exists():
        raise DataFormatError("file not found", path=p, fix="check the path")
    if n_partitions is None:
        workers = (
            len(client.scheduler_info()["workers"]) if client is not None else (os.cpu_count() or 2)
        )
        n_partitions = max(2, 4 * workers)
    delayed = dask.delayed
    mapped = [
        delayed(_trec_block, nout=None)(b, n_partitions, p, f"block {i} of the file")
        for i, b in enumerate(_blocks(p, blocksize))
    ]
    qd = delayed(dict(qrels)) if client is None else broadcast(client, dict(qrels), delayed)
    reduced = []
    for j in range(n_partitions):
        rows = [delayed(_take)(m, j) for m in mapped]
        reduced.append(delayed(_trec_reduce)(rows, qd, measures, preset))
    sched = {} if client is None else {"scheduler": client}
    pieces = list(dask.compute(*reduced, **sched))
    return _combine(pieces, order="qid")
