"""Evaluate rankings: :func:`evaluate` (a dataset and scores), :func:`evaluate_arrays` (flat
arrays), :func:`evaluate_trec` (TREC qrels and run dicts), all returning an
:class:`EvaluationResult`.

Every result states its whole convention (``result.convention``): the preset, every option of
every measure after resolution, what was done with duplicated document ids, where the ideal
ranking comes from, and the number of *empty* queries (no relevant document / IDCG = 0), which is
always reported because the conventions disagree on what such a query is worth.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._atomic import write_text_atomic
from ..data.dataset import boundaries_from_group
from ..errors import ConventionError, DataFormatError
from .compute import check_inputs, compute_per_query
from .presets import Preset, get_preset
from .registry import Measure, parse_measures

__all__ = ["EvaluationResult", "evaluate", "evaluate_arrays", "evaluate_trec"]


@dataclass(frozen=True)
class EvaluationResult:
    """Per-query values and means of several measures, with the convention that produced them.

    * ``measures``: the measures as requested (their printed names key everything below);
    * ``resolved``: the same measures with every option filled in by the preset;
    * ``per_query``: printed name -> ``(Q,)`` float64 (NaN where ``empty=skip`` skipped a query);
    * ``mean``: printed name -> mean over the queries not skipped (NaN if all were skipped);
    * ``query_ids``: ``(Q,)`` query ids; ``n_queries``;
    * ``empty_queries``: queries empty for at least one measure (IDCG = 0 or no relevant
      document); ``empty_by_measure`` gives the count per measure;
    * ``convention``: ``preset``, ``duplicates`` (and how many lines were dropped), ``ideal``
      (where the ideal ranking and AP's denominator come from), and ``measures``: printed name ->
      every option of the resolved measure.
    """

    measures: tuple[Measure, ...]
    resolved: tuple[Measure, ...]
    per_query: dict[str, np.ndarray]
    mean: dict[str, float]
    query_ids: np.ndarray
    empty_queries: int
    empty_by_measure: dict[str, int]
    convention: dict[str, Any] = field(default_factory=dict)

    @property
    def n_queries(self) -> int:
        """Number of queries evaluated."""
        return len(self.query_ids)

    @property
    def names(self) -> list[str]:
        """Printed names of the measures, in order."""
        return [str(m) for m in self.measures]

    def __getitem__(self, name: str | Measure) -> float:
        """The mean of one measure (by printed name or :class:`Measure`)."""
        return self.mean[str(name)]

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """The JSON shape: ``mean`` (printed name -> mean), ``queries`` (count), ``empty_queries``,
        ``convention``; with ``per_query=True`` also ``query_ids`` and ``per_query`` values."""
        out: dict[str, Any] = {
            "mean": {k: _num(v) for k, v in self.mean.items()},
            "queries": self.n_queries,
            "empty_queries": self.empty_queries,
            "convention": self.convention,
        }
        if per_query:
            out["query_ids"] = [str(q) for q in self.query_ids]
            out["per_query"] = {k: [_num(x) for x in v.tolist()] for k, v in self.per_query.items()}
        return out

    def to_csv(self, path: str | os.PathLike[str]) -> Path:
        """Write per-query values: a ``query_id`` column then one column per measure (empty cell
        where skipped). Written atomically (temporary file + rename)."""
        buf = io.StringIO(newline="")
        w = csv.writer(buf)
        w.writerow(["query_id", *self.names])
        cols = [self.per_query[n] for n in self.names]
        for i, q in enumerate(self.query_ids.tolist()):
            w.writerow([q, *("" if math.isnan(c[i]) else repr(float(c[i])) for c in cols)])
        target = write_text_atomic(path, buf.getvalue())
        return target

    def table(self, digits: int = 4) -> str:
        """A plain text table of the means plus the convention line."""
        width = max([len("measure"), *(len(n) for n in self.names)])
        lines = [f"{'measure'.ljust(width)}  mean", f"{'-' * width}  {'-' * (digits + 2)}"]
        for n in self.names:
            v = self.mean[n]
            lines.append(f"{n.ljust(width)}  {'nan' if math.isnan(v) else f'{v:.{digits}f}'}")
        lines.append(convention_line(self))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _num(v: float) -> float | None:
    f = float(v)
    return None if math.isnan(f) or math.isinf(f) else f


def convention_line(res: EvaluationResult) -> str:
    """One line stating the convention and the number of empty queries."""
    conv = res.convention
    opts: dict[str, dict[str, None]] = {}
    for m in res.measures:
        c = conv.get("measures", {}).get(str(m), {})
        for k, v in c.items():
            if k in ("cutoff", "resolved", "empty_queries"):
                continue
            key = "short(p)" if (k == "short" and m.name == "p") else k
            opts.setdefault(key, {})[str(v)] = None
    parts = [f"{k}={'|'.join(v)}" for k, v in sorted(opts.items())]
    dup = conv.get("duplicates", "keep")
    extra = f"; duplicated docids within a query: {dup}" if dup != "keep" else ""
    if conv.get("duplicates_dropped"):
        extra += f" ({conv['duplicates_dropped']} lines dropped)"
    return (
        f"convention: preset {conv.get('preset')} ({', '.join(parts)}){extra}; "
        f"{res.empty_queries} of {res.n_queries} queries empty (no relevant document)"
    )


# ------------------------------------------------------------------------------ helpers
def _last_occurrence_mask(doc_ids: np.ndarray, boundaries: np.ndarray) -> np.ndarray:
    """True for documents to keep when a doc id repeated within a query keeps only its last line."""
    n = len(doc_ids)
    _, codes = np.unique(np.asarray(doc_ids).astype(str), return_inverse=True)
    qidx = np.repeat(np.arange(len(boundaries) - 1, dtype=np.int64), np.diff(boundaries))
    key = qidx * (int(codes.max(initial=0)) + 1) + codes.astype(np.int64)
    rev = key[::-1]
    _, first_in_rev = np.unique(rev, return_index=True)
    keep = np.zeros(n, dtype=bool)
    keep[n - 1 - first_in_rev] = True
    return keep


def _finish(
    measures: tuple[Measure, ...],
    preset: Preset,
    labels: np.ndarray,
    scores: np.ndarray,
    boundaries: np.ndarray,
    *,
    ranked_end: np.ndarray | None,
    doc_ids: np.ndarray | None,
    query_ids: np.ndarray,
    duplicates: str,
    ideal: str,
    score_precision: str | None = None,
) -> EvaluationResult:
    precision = score_precision or preset.score_precision
    conv: dict[str, Any] = {
        "preset": preset.name,
        "duplicates": duplicates,
        "ideal": ideal,
        "score_precision": precision,
    }
    if precision == "float32":
        scores = scores.astype(np.float32).astype(np.float64)
        if not np.isfinite(scores).all():
            raise DataFormatError(
                "a score is too large for single precision (score_precision=float32)",
                fix="rescale the scores or use score_precision='float64'",
            )
    elif precision != "float64":
        raise ConventionError(f"unknown score_precision {precision!r}; known: float64, float32")
    if duplicates == "last" and doc_ids is not None and len(doc_ids):
        keep = _last_occurrence_mask(doc_ids, boundaries)
        dropped = int((~keep).sum())
        if dropped:
            if ranked_end is not None:  # pragma: no cover - evaluate_trec has unique docnos
                raise ConventionError(
                    "duplicates=last cannot be combined with unretrieved documents"
                )
            labels, scores, doc_ids = labels[keep], scores[keep], doc_ids[keep]
            nq = len(boundaries) - 1
            qidx = np.repeat(np.arange(nq, dtype=np.int64), np.diff(boundaries))
            lengths = np.bincount(qidx[keep], minlength=nq)
            boundaries = boundaries_from_group(lengths)
        conv["duplicates_dropped"] = dropped
    elif duplicates not in ("keep", "last"):
        raise ConventionError(f"unknown duplicates rule {duplicates!r}; known: keep, last")
    resolved = tuple(m.resolve(preset) for m in measures)
    values = compute_per_query(
        resolved,
        labels,
        scores,
        boundaries,
        ranked_end=ranked_end,
        doc_ids=doc_ids,
        query_ids=[str(q) for q in query_ids],
    )
    per_query: dict[str, np.ndarray] = {}
    mean: dict[str, float] = {}
    empty_any = np.zeros(len(boundaries) - 1, dtype=bool)
    empty_by: dict[str, int] = {}
    conv_m: dict[str, dict[str, Any]] = {}
    for m, r in zip(measures, resolved):
        pq = values[r]
        name = str(m)
        per_query[name] = pq.values
        ok = ~np.isnan(pq.values)
        mean[name] = float(pq.values[ok].mean()) if ok.any() else float("nan")
        empty_any |= pq.empty
        empty_by[name] = int(pq.empty.sum())
        c = m.convention(preset)
        c["resolved"] = str(r)
        c["empty_queries"] = empty_by[name]
        conv_m[name] = c
    conv["measures"] = conv_m
    return EvaluationResult(
        measures=measures,
        resolved=resolved,
        per_query=per_query,
        mean=mean,
        query_ids=np.asarray(query_ids, dtype=object),
        empty_queries=int(empty_any.sum()),
        empty_by_measure=empty_by,
        convention=conv,
    )


def _measures_for(measures: Any, preset: Preset) -> tuple[Measure, ...]:
    ms = parse_measures(measures)
    return ms if ms else parse_measures(preset.measures)


# ------------------------------------------------------------------------------ public API
def evaluate_arrays(
    labels: Any,
    scores: Any,
    boundaries: Any,
    measures: Any = None,
    *,
    preset: str | Preset | None = None,
    doc_ids: Sequence[str] | np.ndarray | None = None,
    query_ids: Sequence[Any] | np.ndarray | None = None,
    duplicates: str | None = None,
    score_precision: str | None = None,
) -> EvaluationResult:
    """Evaluate flat per-document ``labels`` and ``scores`` grouped by ``boundaries``.

    ``measures``: a spec string, a :class:`Measure`, or a sequence of them; ``None`` = the
    preset's usual set. ``preset`` fills every unset option (default ``standard``). ``doc_ids``
    are needed for ``ties=docid`` and for the LETOR presets' duplicated-docid rule
    (``duplicates``: ``keep`` or ``last``; default from the preset). ``score_precision``:
    ``float64``, or ``float32`` to compare scores in single precision as trec_eval does (default
    from the preset).
    """
    p = get_preset(preset)
    ms = _measures_for(measures, p)
    y, s, b, _ = check_inputs(labels, scores, boundaries)
    d = None if doc_ids is None else np.asarray(doc_ids, dtype=object)
    if d is not None and len(d) != len(y):
        raise DataFormatError(f"{len(d)} doc ids for {len(y)} documents")
    nq = len(b) - 1
    qids = (
        np.array([str(i) for i in range(nq)], dtype=object)
        if query_ids is None
        else (np.asarray([str(q) for q in query_ids], dtype=object))
    )
    if len(qids) != nq:
        raise DataFormatError(f"{len(qids)} query ids for {nq} queries")
    return _finish(
        ms,
        p,
        y,
        s,
        b,
        ranked_end=None,
        doc_ids=d,
        query_ids=qids,
        duplicates=duplicates or p.duplicates,
        ideal="documents of the list",
        score_precision=score_precision,
    )


def evaluate(
    dataset: Any,
    scores: Any,
    measures: Any = None,
    *,
    preset: str | Preset | None = None,
    duplicates: str | None = None,
    score_precision: str | None = None,
) -> EvaluationResult:
    """Evaluate ``scores`` (one per document, in the dataset's order) on a
    :class:`~ndcglab.data.RankingDataset` (see :func:`evaluate_arrays`)."""
    s = dataset.check_scores(scores, source=None)
    return evaluate_arrays(
        dataset.labels,
        s,
        dataset.boundaries,
        measures,
        preset=preset,
        doc_ids=dataset.doc_ids,
        query_ids=dataset.query_ids,
        duplicates=duplicates,
        score_precision=score_precision,
    )


def evaluate_trec(
    qrels: Mapping[str, Mapping[str, float]],
    run: Mapping[str, Mapping[str, float]],
    measures: Any = None,
    *,
    preset: str | Preset | None = "trec_eval",
) -> EvaluationResult:
    """Evaluate a TREC run against qrels (pytrec_eval's dict shapes: ``{qid: {docno: value}}``).

    Like trec_eval without ``-c``: the queries evaluated are those present in both the run and
    the qrels (sorted by query id). A retrieved document missing from the qrels has label 0. The
    ideal DCG and AP's denominator use every judged document of the query, retrieved or not;
    judged documents the run did not retrieve never enter the ranking. Default preset
    ``trec_eval`` (linear gain, log2 discount, ties by docno descending, scores compared in
    single precision).
    """
    p = get_preset(preset)
    ms = _measures_for(measures, p)
    qids = sorted(q for q in run if q in qrels)
    labels: list[float] = []
    scores: list[float] = []
    docs: list[str] = []
    bnd = [0]
    rend: list[int] = []
    for q in qids:
        judged = qrels[q]
        ranked = run[q]
        for d, sc in ranked.items():
            labels.append(float(judged.get(d, 0.0)))
            scores.append(float(sc))
            docs.append(str(d))
        rend.append(bnd[-1] + len(ranked))
        for d, rel in judged.items():
            if d not in ranked:
                labels.append(float(rel))
                scores.append(0.0)
                docs.append(str(d))
        bnd.append(len(labels))
    y, s, b, re = check_inputs(labels, scores, bnd, rend if qids else np.zeros(0, np.int64))
    return _finish(
        ms,
        p,
        y,
        s,
        b,
        ranked_end=re,
        doc_ids=np.asarray(docs, dtype=object),
        query_ids=np.asarray(qids, dtype=object),
        duplicates="keep",
        ideal="all judged documents of the query (qrels), retrieved or not",
    )
