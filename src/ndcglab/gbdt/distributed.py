"""Beyond one machine: boosted trees with our objectives on Dask, and evaluation of big files.

Training (:func:`train_gbdt_dask`)
    LightGBM's Dask estimator (:class:`lightgbm.DaskLGBMRanker`) runs one LightGBM process per
    Dask worker in *data-parallel* mode: each worker holds some rows, and the workers exchange
    feature histograms of gradients to grow one shared tree per round. It accepts a Python
    callable objective: the estimator's parameters (the objective included) are pickled to every
    worker, where LightGBM's scikit-learn wrapper calls it with the worker's **local** labels,
    scores and query ``group``. A listwise loss is a sum over queries, so the local gradient of
    every document is its exact global gradient **provided no query is split across workers**.
    We guarantee that by cutting the data only between queries (:func:`partition_queries`) and
    passing ``group`` chunked exactly like the rows; the objective
    (:meth:`ndcglab.gbdt.LossObjective.sklearn_objective`) then binds its padding index once per
    worker. Early stopping is not used on Dask (each worker would judge a different validation
    slice); train a fixed number of rounds and choose the round afterwards if needed.

Evaluation (:func:`evaluate_letor_dask`, :func:`evaluate_trec_dask`)
    Per-query measures are computed by :mod:`ndcglab.measures` on partitions that never split a
    query, then concatenated — so the numbers are exactly those of the single-process path.

    * LETOR file + one score per line (``evaluate_letor_dask``): the file is cut into byte blocks
      at line ends (``dask.bytes.read_bytes``). A first pass counts each block's lines (to align
      the scores); a second pass reads, per block, only the label, ``qid`` and ``#docid`` of each
      line and evaluates every query that starts and ends inside the block; the first and last
      query of a block (which may continue in the neighbouring block) are returned as fragments,
      glued together in file order and evaluated at the end. Memory per task: one block.
    * TREC run + qrels (``evaluate_trec_dask``): a run file need not keep a query's lines together,
      so rows are **hash-partitioned by query id** (CRC-32, stable across processes): every block
      sends each row to partition ``crc32(qid) mod P``; each partition gathers its rows (in file
      order) and calls :func:`ndcglab.measures.evaluate_trec` with its queries' qrels.

Dask is imported when these functions run (the ``distributed`` extra); they use the active
``distributed.Client`` if there is one (pass ``client=`` to choose), else Dask's default scheduler.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import warnings
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._compat import require
from ..data.dataset import RankingDataset
from ..errors import DataFormatError, SpecError
from .model import GBDTModel, _versions
from .train import LIGHTGBM_PREFIX, make_objective

__all__ = [
    "evaluate_letor_dask",
    "evaluate_trec_dask",
    "partition_queries",
    "train_gbdt_dask",
]

PathLike = str | os.PathLike[str]


# ============================================================================ partitioning
def partition_queries(
    boundaries: Sequence[int] | np.ndarray, n_parts: int
) -> list[tuple[int, int]]:
    """Cut queries into ``n_parts`` contiguous blocks of whole queries with about equal documents.

    Returns ``[(q_start, q_stop), ...]`` (query index ranges; empty blocks are dropped). A query is
    never split, so a block may exceed ``N / n_parts`` documents by up to one query.
    """
    b = np.asarray(boundaries, dtype=np.int64)
    nq = len(b) - 1
    if n_parts < 1:
        raise SpecError(f"n_parts must be at least 1, got {n_parts}")
    targets = b[-1] * np.arange(1, n_parts) / n_parts
    cuts = np.searchsorted(b[1:], targets, side="left") + 1  # query index after which to cut
    edges = np.unique(np.concatenate([[0], np.clip(cuts, 0, nq), [nq]]))
    return [(int(a), int(c)) for a, c in itertools.pairwise(edges) if c > a]


def _client(client: Any) -> Any:
    if client is not None:
        return client
    distributed = require("distributed")
    try:
        return distributed.get_client()
    except ValueError as exc:
        raise SpecError(
            "no Dask client. Fix: start one, e.g. distributed.Client(distributed.LocalCluster("
            "n_workers=2, threads_per_worker=1)), or pass client="
        ) from exc


# ============================================================================ training
def _read_part(path: str, n_features: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from ..data import read_letor

    ds = read_letor(path, n_features=n_features)
    return ds.features, ds.labels, ds.query_lengths


def train_gbdt_dask(
    train: RankingDataset | Sequence[PathLike],
    loss: Any = "listnet",
    *,
    client: Any = None,
    n_partitions: int | None = None,
    n_features: int | None = None,
    num_boost_round: int = 100,
    learning_rate: float = 0.05,
    num_leaves: int = 31,
    min_data_in_leaf: int = 20,
    hessian: str = "auto",
    hess_floor: float = 1e-6,
    constant_lists: str = "keep",
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
) -> GBDTModel:
    """Train boosted trees with our loss on a Dask cluster (LightGBM data-parallel learning).

    ``train`` is a :class:`~ndcglab.data.RankingDataset` (cut here into ``n_partitions`` blocks of
    whole queries, default one per worker, and sent to the workers) or a list of LETOR files, one
    partition each, read **on the workers** with :func:`ndcglab.data.read_letor` (each file must
    hold whole queries; give ``n_features`` if files may differ in their largest feature index).
    ``loss`` as in :func:`ndcglab.gbdt.train_gbdt` (``"lightgbm:lambdarank"`` for LightGBM's own).
    Returns a :class:`~ndcglab.gbdt.GBDTModel` (the booster gathered from the workers).
    """
    lgb = require("lightgbm")
    da = require("dask.array")
    dask = require("dask")
    client = _client(client)
    n_workers = max(1, len(client.scheduler_info()["workers"]))

    if isinstance(train, RankingDataset):
        parts = partition_queries(train.boundaries, n_partitions or n_workers)
        b = train.boundaries
        xs, ys, gs = [], [], []
        for q0, q1 in parts:
            lo, hi = int(b[q0]), int(b[q1])
            xs.append(train.features[lo:hi])
            ys.append(train.labels[lo:hi])
            gs.append(train.query_lengths[q0:q1])
        futures = client.scatter(list(zip(xs, ys, gs)))
        shapes = [(len(y), len(g)) for y, g in zip(ys, gs)]
        n_feat = train.n_features
        feature_names = list(train.feature_names) if train.feature_names else None
        source = train.source
    else:
        paths = [str(p) for p in train]
        if not paths:
            raise SpecError("no training files given")
        futures = client.map(_read_part, paths, n_features=n_features, pure=False)
        meta = client.gather(client.map(lambda t: (len(t[1]), len(t[2]), t[0].shape[1]), futures))
        widths = {m[2] for m in meta}
        if len(widths) != 1:
            raise DataFormatError(
                f"the partitions have different feature counts {sorted(widths)}",
                fix="pass n_features= (the number of features of the collection)",
            )
        shapes = [(m[0], m[1]) for m in meta]
        n_feat, feature_names, source = widths.pop(), None, ",".join(paths)

    def column(i: int, shape_of: Any, dtype: Any) -> Any:
        return da.concatenate(
            [
                da.from_delayed(dask.delayed(_take)(f, i), shape=shape_of(sh), dtype=dtype)
                for f, sh in zip(futures, shapes)
            ]
        )

    X = column(0, lambda sh: (sh[0], n_feat), np.float32)
    y = column(1, lambda sh: (sh[0],), np.float64)
    g = column(2, lambda sh: (sh[1],), np.int64)

    if isinstance(loss, str) and loss.strip().lower().startswith(LIGHTGBM_PREFIX):
        objective: Any = loss.strip().lower()[len(LIGHTGBM_PREFIX) :]
        loss_label, objective_info = (
            f"{LIGHTGBM_PREFIX}{objective}",
            {"hessian": "lightgbm built-in"},
        )
    else:
        obj = make_objective(
            loss, hessian=hessian, hess_floor=hess_floor, constant_lists=constant_lists, seed=seed
        )
        objective = obj.sklearn_objective()
        loss_label, objective_info = obj.name, obj.describe()
    extra = {
        "verbosity": -1,
        "deterministic": True,
        "feature_pre_filter": False,
        "tree_learner": "data",
        **dict(params or {}),
    }
    # LightGBM's Dask layer sets num_threads to each worker's Dask threads itself
    extra = {k: v for k, v in extra.items() if k not in ("num_threads", "n_jobs", "nthread")}
    model = lgb.DaskLGBMRanker(
        client=client,
        objective=objective,
        n_estimators=int(num_boost_round),
        learning_rate=float(learning_rate),
        num_leaves=int(num_leaves),
        min_child_samples=int(min_data_in_leaf),
        random_state=int(seed),
        **extra,
    )
    with warnings.catch_warnings():
        # LightGBM's Dask layer sets the threads per worker itself and says so about n_jobs
        warnings.filterwarnings("ignore", message="Parameter n_jobs will be ignored")
        model.fit(X, y, group=g)
    booster = model.to_local().booster_
    params_out = {
        "learning_rate": learning_rate,
        "num_leaves": num_leaves,
        "min_data_in_leaf": min_data_in_leaf,
        "seed": seed,
        "objective": objective if isinstance(objective, str) else "custom",
        **extra,
    }
    meta_out: dict[str, Any] = {
        "loss": loss_label,
        "objective": objective_info,
        "params": params_out,
        "model": {"kind": "gbdt", "best_iteration": 0},
        "feature_names": feature_names,
        "training_data": source,
        "training": {
            "num_boost_round": int(num_boost_round),
            "distributed": True,
            "partitions": len(shapes),
            "workers": n_workers,
            "partition_docs": [s[0] for s in shapes],
        },
        "seed": int(seed),
        "versions": _versions(),
    }
    return GBDTModel(booster=booster, metadata=meta_out)


def _take(t: Sequence[Any], i: int) -> Any:
    return t[i]


# ============================================================================ LETOR + scores
_Q = b"qid:"
_DOCID = b"#docid"


def _parse_lines(block: bytes, where: str) -> tuple[np.ndarray, list[str], list[str | None]]:
    """Labels, qids and docids (``#docid = X`` comments; None when absent) of a block of lines."""
    labels: list[float] = []
    qids: list[str] = []
    docs: list[str | None] = []
    for k, raw in enumerate(block.splitlines()):
        line = raw.strip()
        if not line or line.startswith(b"#"):
            qids.append("\0")  # a blank/comment line: no document (dropped below)
            labels.append(math.nan)
            docs.append(None)
            continue
        head = line.split(None, 2)
        if len(head) < 2 or not head[1].startswith(_Q):
            raise DataFormatError(
                f"line {k + 1} of the block at {where} has no 'qid:' after the label",
                token=line[:60].decode("utf-8", "replace"),
                fix="give a LETOR/SVMlight file with qid: on every line",
            )
        try:
            labels.append(float(head[0]))
        except ValueError:
            raise DataFormatError(
                f"label of line {k + 1} of the block at {where} is not a number",
                token=head[0].decode("utf-8", "replace"),
            ) from None
        qids.append(head[1][4:].decode("utf-8", "replace"))
        pos = line.find(_DOCID)
        doc = None
        if pos >= 0:
            tail = line[pos + len(_DOCID) :].lstrip()
            if tail.startswith(b"="):
                tail = tail[1:].lstrip()
            tok = tail.split(None, 1)
            doc = tok[0].decode("utf-8", "replace") if tok else None
        docs.append(doc)
    return np.asarray(labels, dtype=np.float64), qids, docs


def _count_lines(block: bytes) -> int:
    return len(block.splitlines())


def _scores_slice(scores: Any, start: int, stop: int) -> np.ndarray:
    if isinstance(scores, np.ndarray):
        return np.asarray(scores[start:stop], dtype=np.float64)
    arr = np.load(scores, mmap_mode="r")
    return np.asarray(arr[start:stop], dtype=np.float64)


def _eval_rows(labels, scores, qids, docs, measures, preset, first_lines):
    """Evaluate rows (whole queries, contiguous) → (first line of each query, EvaluationResult)."""
    from ..measures import evaluate_arrays

    q = np.asarray(qids, dtype=object)
    if len(q) == 0:
        return np.zeros(0, dtype=np.int64), None
    change = np.flatnonzero(q[1:] != q[:-1]) + 1
    b = np.concatenate([[0], change, [len(q)]]).astype(np.int64)
    doc_ids = None if any(d is None for d in docs) else np.asarray(docs, dtype=object)
    res = evaluate_arrays(
        labels, scores, b, measures, preset=preset, doc_ids=doc_ids, query_ids=q[b[:-1]]
    )
    return np.asarray(first_lines, dtype=np.int64)[b[:-1]], res


def _letor_block(block: bytes, line0: int, scores: Any, measures: Any, preset: Any, where: str):
    labels, qids, docs = _parse_lines(block, where)
    n = len(labels)
    s = _scores_slice(scores, line0, line0 + n)
    lines = np.arange(line0, line0 + n, dtype=np.int64)
    keep = np.asarray([qq != "\0" for qq in qids], dtype=bool)
    labels, s, lines = labels[keep], s[keep], lines[keep]
    qids = [qq for qq, k in zip(qids, keep) if k]
    docs = [d for d, k in zip(docs, keep) if k]
    if not qids:
        return {"interior": (np.zeros(0, np.int64), None), "edges": []}
    q = np.asarray(qids, dtype=object)
    change = np.flatnonzero(q[1:] != q[:-1]) + 1
    starts = np.concatenate([[0], change]).astype(np.int64)
    ends = np.concatenate([change, [len(q)]]).astype(np.int64)
    edge_ids = {0, len(starts) - 1}
    edges = []
    for e in sorted(edge_ids):
        a, c = int(starts[e]), int(ends[e])
        edges.append((qids[a], labels[a:c], s[a:c], docs[a:c], lines[a:c]))
    if len(starts) > 2:
        a, c = int(ends[0]), int(starts[-1])
        interior = _eval_rows(
            labels[a:c], s[a:c], qids[a:c], docs[a:c], measures, preset, lines[a:c]
        )
    else:
        interior = (np.zeros(0, np.int64), None)
    return {"interior": interior, "edges": edges}


def _combine(pieces: list[tuple[np.ndarray, Any]], order: str) -> Any:
    """Concatenate partition results (each: first lines, EvaluationResult) into one result."""
    from ..measures import EvaluationResult

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
    for name in ref.per_query:
        v = np.concatenate([r.per_query[name] for _, r in pieces])[perm]
        per_query[name] = v
        ok = ~np.isnan(v)
        mean[name] = float(v[ok].mean()) if ok.any() else float("nan")
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
    return (
        dataclasses.replace(
            ref,
            per_query=per_query,
            mean=mean,
            query_ids=qids[perm],
            empty_queries=int(sum(r.empty_queries for _, r in pieces)),
            empty_by_measure=empty_by,
            convention=conv,
        )
        if isinstance(ref, EvaluationResult)
        else None
    )


def _glue(glued: list, qid, lab, sc, docs, lines, *, may_continue: bool) -> None:
    if may_continue and glued and glued[-1][0] == qid:
        g = glued[-1]
        g[1].append(lab)
        g[2].append(sc)
        g[3].extend(docs)
        g[4].append(lines)
    else:
        glued.append((qid, [lab], [sc], list(docs), [lines]))


def _scores_to_npy(path: Path, target: Path, chunk_lines: int = 1 << 20) -> Path:
    """Stream a score file (one number per line) into a ``.npy`` file, chunk by chunk."""
    from numpy.lib.format import open_memmap

    from ..data._io import open_binary

    n = 0
    with open_binary(path) as f:
        for _ in f:
            n += 1
    out = open_memmap(target, mode="w+", dtype=np.float64, shape=(n,))
    with open_binary(path) as f:
        i = 0
        buf: list[bytes] = []
        for raw in f:
            buf.append(raw)
            if len(buf) >= chunk_lines:
                out[i : i + len(buf)] = _parse_scores(buf, path, i)
                i += len(buf)
                buf = []
        if buf:
            out[i : i + len(buf)] = _parse_scores(buf, path, i)
    out.flush()
    del out
    return target


def _parse_scores(lines: list[bytes], path: Path, offset: int) -> np.ndarray:
    try:
        return np.asarray([float(x) for x in lines], dtype=np.float64)
    except ValueError:
        for k, x in enumerate(lines):
            try:
                float(x)
            except ValueError:
                raise DataFormatError(
                    "not a number",
                    path=path,
                    line=offset + k + 1,
                    token=x.decode("utf-8", "replace").strip(),
                    fix="one score per line, in the data file's order",
                ) from None
        raise


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
    """Evaluate a LETOR file with one score per line, block by block on Dask.

    ``scores``: an ``(N,)`` array, a ``.npy`` file (memory-mapped by each task), or a text file
    with one score per line (streamed once into a ``.npy`` in ``workdir``, default next to it).
    ``measures``/``preset`` as in :func:`ndcglab.measures.evaluate`. ``blocksize``: bytes per
    task (gzip files cannot be cut and are read as one block). Returns an
    :class:`~ndcglab.measures.EvaluationResult` equal to
    ``evaluate(read_letor(path), scores, measures, preset=preset)`` (queries in file order).
    """
    dask = require("dask")
    from dask.bytes import read_bytes

    p = Path(path)
    if not p.exists():
        raise DataFormatError("file not found", path=p, fix="check the path")
    if isinstance(scores, str | os.PathLike):
        sp = Path(scores)
        if sp.suffix != ".npy":
            target = Path(workdir or sp.parent) / (sp.name + ".npy")
            scores = str(_scores_to_npy(sp, target))
        else:
            scores = str(sp)
    else:
        scores = np.asarray(scores, dtype=np.float64).ravel()
    gz = p.suffix == ".gz"
    _, blocks = read_bytes(
        str(p),
        delimiter=b"\n",
        blocksize=None if gz else blocksize,
        compression="gzip" if gz else None,
        sample=False,
    )
    blocks = list(blocks[0])
    sched = {} if client is None else {"scheduler": client}
    counts = dask.compute(*[dask.delayed(_count_lines)(b) for b in blocks], **sched)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    n_lines = int(offsets[-1])
    n_scores = (
        len(scores) if isinstance(scores, np.ndarray) else len(np.load(scores, mmap_mode="r"))
    )
    if n_scores != n_lines:
        raise DataFormatError(
            f"{n_scores} scores for {n_lines} lines",
            path=p,
            fix="give exactly one score per line of the data file, in its order",
        )
    if isinstance(scores, np.ndarray) and client is not None:
        scores = client.scatter(scores, broadcast=True)
    tasks = [
        dask.delayed(_letor_block)(b, int(offsets[i]), scores, measures, preset, f"{p}:block {i}")
        for i, b in enumerate(blocks)
    ]
    parts = dask.compute(*tasks, **sched)
    # glue the edge fragments (file order) into whole queries and evaluate them: a block's first
    # query continues the previous block's last one when their ids match (nothing lies between)
    glued: list[tuple[str, list, list, list, list]] = []
    for part in parts:
        for k, (qid, lab, sc, docs, lines) in enumerate(part["edges"]):
            _glue(glued, qid, lab, sc, docs, lines, may_continue=k == 0)
    pieces = [part["interior"] for part in parts]
    if glued:
        lab = np.concatenate([np.concatenate(g[1]) for g in glued])
        sc = np.concatenate([np.concatenate(g[2]) for g in glued])
        lines = np.concatenate([np.concatenate(g[4]) for g in glued])
        qids = [g[0] for g in glued for _ in range(sum(len(x) for x in g[1]))]
        docs = [d for g in glued for d in g[3]]
        # consecutive glued queries may share an id only if the file repeats it; keep them apart
        sep = np.repeat(np.arange(len(glued)), [sum(len(x) for x in g[1]) for g in glued])
        tagged = [f"{q}\0{k}" for q, k in zip(qids, sep)]
        first, res = _eval_rows(lab, sc, tagged, docs, measures, preset, lines)
        if res is not None:
            res = dataclasses.replace(
                res,
                query_ids=np.asarray([str(x).split("\0")[0] for x in res.query_ids], dtype=object),
            )
        pieces.append((first, res))
    return _combine(pieces, order="line")


# ============================================================================ TREC runs
def _trec_block(block: bytes, n_parts: int, where: str) -> list[list[tuple[str, str, float]]]:
    out: list[list[tuple[str, str, float]]] = [[] for _ in range(n_parts)]
    for k, raw in enumerate(block.splitlines()):
        tok = raw.split()
        if not tok:
            continue
        if len(tok) != 6:
            raise DataFormatError(
                f"{len(tok)} fields, expected 6 (line {k + 1} of the block at {where})",
                token=raw.decode("utf-8", "replace").strip(),
                fix="run lines are 'QID Q0 DOCNO RANK SCORE TAG'",
            )
        try:
            score = float(tok[4])
        except ValueError:
            raise DataFormatError(
                f"score is not a number (line {k + 1} of the block at {where})",
                token=tok[4].decode("utf-8", "replace"),
                fix="run lines are 'QID Q0 DOCNO RANK SCORE TAG'",
            ) from None
        qid, doc = tok[0], tok[2].decode("utf-8", "replace")
        out[zlib.crc32(qid) % n_parts].append((qid.decode("utf-8", "replace"), doc, score))
    return out


def _trec_reduce(
    rows_lists: list[list[tuple[str, str, float]]],
    qrels: Mapping[str, Any],
    measures: Any,
    preset: Any,
) -> tuple[np.ndarray, Any]:
    from ..measures import evaluate_trec

    run: dict[str, dict[str, float]] = {}
    seen: set[tuple[str, str]] = set()
    for rows in rows_lists:  # in block order = file order
        for qid, doc, score in rows:
            if (qid, doc) in seen:
                raise DataFormatError(
                    f"document {doc!r} appears twice in the ranking of query {qid!r}",
                    fix="list each document once per query",
                )
            seen.add((qid, doc))
            run.setdefault(qid, {})[doc] = score
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
    from dask.bytes import read_bytes

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
    gz = p.suffix == ".gz"
    _, blocks = read_bytes(
        str(p),
        delimiter=b"\n",
        blocksize=None if gz else blocksize,
        compression="gzip" if gz else None,
        sample=False,
    )
    blocks = list(blocks[0])
    mapped = [
        dask.delayed(_trec_block, nout=None)(b, n_partitions, f"{p}:block {i}")
        for i, b in enumerate(blocks)
    ]
    qd = (
        dask.delayed(dict(qrels)) if client is None else client.scatter(dict(qrels), broadcast=True)
    )
    reduced = []
    for j in range(n_partitions):
        rows = [dask.delayed(_take)(m, j) for m in mapped]
        reduced.append(dask.delayed(_trec_reduce)(rows, qd, measures, preset))
    sched = {} if client is None else {"scheduler": client}
    pieces = list(dask.compute(*reduced, **sched))
    return _combine(pieces, order="qid")
