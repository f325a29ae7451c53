"""Evaluate rankings: :func:`evaluate` (a dataset and scores), :func:`evaluate_arrays` (flat
arrays), :func:`evaluate_trec` (TREC qrels and run dicts), all returning an
:class:`EvaluationResult`.

Every result states its whole convention (``result.convention``): the preset, every option of
every measure after resolution, what was done with duplicated document ids, where the ideal
ranking comes from, and the number of *empty* queries (no relevant document / IDCG = 0), which is
always reported because the conventions disagree on what such a query is worth.
"""

from __future__ import annotations

import functools
import io
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .._atomic import write_text_atomic
from .._compat import FrozenFields
from .._warn import warn_user
from ..data.dataset import boundaries_from_group
from ..data.trec_inputs import as_trec_dict
from ..data.validate import check_not_empty
from ..errors import ConventionError, DataFormatError
from ._rank import MIN_GEO_MEAN
from .compute import check_inputs, compute_per_query
from .conventions import read_labels
from .label_range import warn_beyond_grades
from .presets import Preset, canonical_precision, get_preset
from .registry import Measure, measure_aliases, parse_measures

if TYPE_CHECKING:
    from ..data.trec_columns import TrecColumns
    from .tie_range import TieRange

__all__ = [
    "MISSING_DOCNO",
    "MISSING_RULES",
    "EvaluationResult",
    "check_negative",
    "evaluate",
    "evaluate_arrays",
    "evaluate_trec",
    "mean_of",
]


#: the document trec_eval 10 ranks, alone, for a query of the qrels missing from the run
#: under ``-c`` (trec_eval.c's ``bogus_ranking``; the preset rule ``missing=unjudged``)
MISSING_DOCNO = "ceci_nest_pas_un_docno"
#: a preset's ``missing`` rules: what ``-c`` does with a query the run misses
MISSING_RULES = ("zero", "unjudged")
#: measures trec_eval 10 sets to 0 after evaluating that one-document ranking
_RESET_WHEN_MISSING = frozenset({"num_ret", "rbp_residual"})


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class EvaluationResult(FrozenFields):
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
      every option of the resolved measure;
    * ``aliases``: each measure name as typed (``ndcg_cut_10``, ``AP``) -> its canonical printed
      name (``ndcg@10``, ``map``), for the names that differ; ``result["ndcg_cut_10"]`` works;
    * ``tie_range``: printed name -> :class:`~ndcglab.measures.tie_range.TieRange`, the best and
      the worst value over every order of the tied documents (when asked for with
      ``tie_range=True``; empty otherwise).

    ``gm_map``'s per-query values are log(max(AP, 1e-5)) and its mean is exp(mean of the logs),
    as trec_eval's; every other mean is the arithmetic mean.
    """

    measures: tuple[Measure, ...]
    resolved: tuple[Measure, ...]
    per_query: dict[str, np.ndarray]
    mean: dict[str, float]
    query_ids: np.ndarray
    empty_queries: int
    empty_by_measure: dict[str, int]
    convention: dict[str, Any] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    tie_range: dict[str, TieRange] = field(default_factory=dict)

    def __init__(
        self,
        measures: tuple[Measure, ...],
        resolved: tuple[Measure, ...],
        per_query: dict[str, np.ndarray],
        mean: dict[str, float],
        query_ids: np.ndarray,
        empty_queries: int,
        empty_by_measure: dict[str, int],
        convention: dict[str, Any] | None = None,
        aliases: dict[str, str] | None = None,
        tie_range: dict[str, TieRange] | None = None,
    ) -> None:
        object.__setattr__(self, "measures", measures)
        object.__setattr__(self, "resolved", resolved)
        object.__setattr__(self, "per_query", per_query)
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "query_ids", query_ids)
        object.__setattr__(self, "empty_queries", empty_queries)
        object.__setattr__(self, "empty_by_measure", empty_by_measure)
        object.__setattr__(self, "convention", {} if convention is None else convention)
        object.__setattr__(self, "aliases", {} if aliases is None else aliases)
        object.__setattr__(self, "tie_range", {} if tie_range is None else tie_range)

    @property
    def n_queries(self) -> int:
        """Number of queries evaluated."""
        return len(self.query_ids)

    @property
    def names(self) -> list[str]:
        """Printed names of the measures, in order."""
        return [str(m) for m in self.measures]

    def __getitem__(self, name: str | Measure) -> float:
        """The mean of one measure (by printed name, alias as typed, or :class:`Measure`)."""
        key = str(name)
        return self.mean[self.aliases.get(key.strip(), key)]

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """The JSON shape: ``mean`` (printed name -> mean), ``queries`` (count), ``empty_queries``,
        ``convention``; with ``per_query=True`` also ``query_ids`` and ``per_query`` values."""
        out: dict[str, Any] = {
            "mean": {k: _num(v) for k, v in self.mean.items()},
            "queries": self.n_queries,
            "empty_queries": self.empty_queries,
            "convention": self.convention,
        }
        if self.aliases:
            out["aliases"] = dict(self.aliases)
        if self.tie_range:
            out["tie_range"] = {
                k: v.to_dict(per_query=per_query) for k, v in self.tie_range.items()
            }
        if per_query:
            out["query_ids"] = [str(q) for q in self.query_ids]
            out["per_query"] = {k: [_num(x) for x in v.tolist()] for k, v in self.per_query.items()}
        return out

    def to_csv(self, path: str | os.PathLike[str]) -> Path:
        """Write per-query values: a ``query_id`` column then one column per measure (empty cell
        where skipped). Written atomically (temporary file + rename)."""
        buf = io.StringIO(newline="")
        import csv  # here: only a CSV export needs it

        w = csv.writer(buf)
        w.writerow(["query_id", *self.names])
        cols = [self.per_query[n] for n in self.names]
        for i, q in enumerate(self.query_ids.tolist()):
            w.writerow([q, *("" if math.isnan(c[i]) else repr(float(c[i])) for c in cols)])
        target = write_text_atomic(path, buf.getvalue())
        return target

    def display_names(self) -> dict[str, str]:
        """Printed name -> the name to show: ``alias = canonical[preset]`` where the measure was
        asked for by another tool's name (``ndcg_cut_10 = ndcg@10[trec_eval]``), else the
        printed name."""
        preset = self.convention.get("preset", "")
        back = {canon: typed for typed, canon in self.aliases.items()}
        return {n: (f"{back[n]} = {n}[{preset}]" if n in back else n) for n in self.names}

    def table(self, digits: int = 4) -> str:
        """A plain text table of the means plus the convention line."""
        shown = self.display_names()
        width = max([len("measure"), *(len(shown[n]) for n in self.names)])

        def fmt(v: float) -> str:
            return "nan".ljust(digits + 2) if math.isnan(v) else f"{v:.{digits}f}"

        head = f"{'measure'.ljust(width)}  mean"
        rule = f"{'-' * width}  {'-' * (digits + 2)}"
        if self.tie_range:
            head += f"{'':{digits - 2}}  tie range (worst .. best order of tied documents)"
            rule += "  " + "-" * (2 * digits + 8)
        lines = [head, rule]
        for n in self.names:
            row = f"{shown[n].ljust(width)}  {fmt(self.mean[n])}"
            tr = self.tie_range.get(n)
            if tr is not None and tr.not_found(self.mean[n]):
                row += "  not given (see the warning)"
            elif tr is not None:
                row += f"  {fmt(tr.mean_low)} .. {fmt(tr.mean_high)}"
            lines.append(row.rstrip())
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
def _no_relevant(r: Measure, labels: np.ndarray, boundaries: np.ndarray) -> np.ndarray:
    """The queries with no relevant document for a measure without an ``empty`` rule (P@k,
    DCG, ERR, ...), so that the count of empty queries is the same whichever measures are
    asked: relevant is the measure's ``rel`` rule where it has one, else a positive label."""
    rel = r.get("rel")
    if rel is None:
        hit = labels > 0
    elif str(rel) == "letor":
        hit = (labels == 1.0) | (labels == 2.0)
    else:  # relevance(rel, labels) > 0, without its float64 array
        hit = labels >= float(rel)
    at = np.flatnonzero(hit)  # (the relevant documents' positions: no per-document count)
    return np.diff(np.searchsorted(at, boundaries)) == 0


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
    in_qrels: np.ndarray | None = None,
    aliases: dict[str, str] | None = None,
    tie_range: bool = False,
    warn_ties: bool = True,
    narrowed: bool = False,
) -> EvaluationResult:
    """The result of resolved ``measures`` on validated arrays (the common end of
    :func:`evaluate_arrays` and :func:`evaluate_trec`). ``narrowed``: the scores are already
    rounded to float32 where that precision applies (a score beyond float32's range is still
    reported)."""
    precision = canonical_precision(score_precision or preset.score_precision)
    labels, keep = read_labels(
        preset, tuple(m.resolve(preset) for m in measures), labels, boundaries, query_ids
    )
    if keep is not None:
        if ranked_end is not None:
            raise ConventionError(
                f"preset {preset.name} drops documents by label (ignore_index), which applies to "
                "arrays, not TREC runs. Fix: use evaluate_arrays, or drop ignore_index"
            )
        labels, scores, boundaries = labels[keep], scores[keep], _kept(boundaries, keep)
        doc_ids = None if doc_ids is None else doc_ids[keep]
        if in_qrels is not None:  # pragma: no cover - TREC runs are refused above
            in_qrels = in_qrels[keep]
    check_negative(preset, labels, boundaries, query_ids)
    conv: dict[str, Any] = {
        "preset": preset.name,
        "duplicates": duplicates,
        "ideal": ideal,
        "score_precision": precision,
    }
    if precision == "float32" and not (narrowed and _fits_float32(scores)):
        with np.errstate(over="ignore"):  # reported below, with the query and the document
            narrow = scores.astype(np.float32).astype(np.float64)
        if not np.isfinite(narrow).all():
            i = int(np.flatnonzero(~np.isfinite(narrow))[0])
            q, pos = _document_at(boundaries, i)
            name = doc_ids[i] if doc_ids is not None else None
            if isinstance(name, bytes):  # (TREC columns hold docnos as ASCII bytes)
                name = name.decode("ascii")
            doc = f"document {name!r}" if doc_ids is not None else f"document {pos}"
            raise DataFormatError(
                f"score {float(scores[i])!r} of {doc} in query {str(query_ids[q])!r} is too "
                "large for single precision (score_precision=float32, as trec_eval 9 compares "
                "scores)",
                fix="rescale the scores or use score_precision='float64'",
            )
        scores = narrow
    if duplicates == "last" and doc_ids is not None and len(doc_ids):
        keep = _last_occurrence_mask(doc_ids, boundaries)
        dropped = int((~keep).sum())
        if dropped:
            if ranked_end is not None:  # pragma: no cover - evaluate_trec has unique docnos
                raise ConventionError(
                    "duplicates=last cannot be combined with unretrieved documents"
                )
            labels, scores, doc_ids = labels[keep], scores[keep], doc_ids[keep]
            boundaries = _kept(boundaries, keep)
        conv["duplicates_dropped"] = dropped
    elif duplicates not in ("keep", "last"):
        raise ConventionError(f"unknown duplicates rule {duplicates!r}; known: keep, last")
    resolved = tuple(_signed(m.resolve(preset), preset) for m in measures)
    warn_beyond_grades(preset.name, resolved, labels, boundaries, query_ids)

    run = functools.partial(_values, preset)  # per-query values under this preset
    # what a run of the measures reads beside labels, scores and boundaries
    where = {
        "ranked_end": ranked_end,
        "doc_ids": doc_ids,
        "in_qrels": in_qrels,
        "query_ids": query_ids,
    }
    tied = joint = None
    if tie_range:  # (only then: the tie ranges' module)
        from .tie_range import joint_bounds, tied_queries

        tied = tied_queries(scores, boundaries, ranked_end)
        joint = joint_bounds(resolved, labels, boundaries, tied)
    # with ties in most queries, the bounds come from the same pass as the plain values
    values = run((*resolved, *(joint or ())), labels, scores, boundaries, **where)
    per_query: dict[str, np.ndarray] = {}
    mean: dict[str, float] = {}
    empty_any = np.zeros(len(boundaries) - 1, dtype=bool)
    empty_by: dict[str, int] = {}
    conv_m: dict[str, dict[str, Any]] = {}
    no_relevant: dict[str, np.ndarray] = {}
    for m, r in zip(measures, resolved):
        pq = values[r]
        name = str(m)
        per_query[name] = pq.values
        mean[name] = mean_of(r, pq.values)
        if "empty" in r.options:
            empty = pq.empty
        else:  # (one pass over the documents per relevance rule)
            rule = str(r.get("rel"))
            if rule not in no_relevant:
                no_relevant[rule] = _no_relevant(r, labels, boundaries)
            empty = no_relevant[rule]
        empty_any |= empty
        empty_by[name] = int(empty.sum())
        c = m.convention(preset)
        c["resolved"] = str(r)
        c["empty_queries"] = empty_by[name]
        conv_m[name] = c
    conv["measures"] = conv_m
    ranges: dict[str, TieRange] = {}
    if tie_range:
        from .tie_range import compute_tie_range

        ranges = compute_tie_range(
            measures,
            resolved,
            per_query,
            lambda ms, *a, **kw: {m: pq.values for m, pq in run(ms, *a, **kw).items()},
            mean_of,
            labels,
            scores,
            boundaries,
            **where,
            tied=tied,
            given=None if joint is None else {r: values[r].values for r in joint},
        )
        if warn_ties:
            _warn_ties(ranges, mean)
    return EvaluationResult(
        measures=measures,
        resolved=resolved,
        per_query=per_query,
        mean=mean,
        query_ids=np.asarray(query_ids, dtype=object),
        empty_queries=int(empty_any.sum()),
        empty_by_measure=empty_by,
        convention=conv,
        aliases=dict(aliases or {}),
        tie_range=ranges,
    )


def _fits_float32(scores: np.ndarray) -> bool:
    """Whether every score lies within float32's range (no array made)."""
    top = float(np.finfo(np.float32).max)
    return not len(scores) or (float(scores.max()) <= top and float(scores.min()) >= -top)


def _values(
    preset: Preset,
    resolved: Sequence[Measure],
    labels: np.ndarray,
    scores: np.ndarray,
    boundaries: np.ndarray,
    ranked_end: np.ndarray | None,
    doc_ids: np.ndarray | None,
    in_qrels: np.ndarray | None,
    query_ids: Any,
) -> dict[Measure, Any]:
    """Per-query values (:class:`~ndcglab.measures.compute.PerQuery`) of resolved measures
    under every evaluation-level rule of the preset (the empty rule of signed gains)."""
    later = preset.negative == "gain" and preset.empty_when != "idcg=0"
    computed = tuple(  # the empty rule applied by _empty_when below
        r.with_options(empty="skip") if later and r.name == "ndcg" else r for r in resolved
    )
    where = dict(ranked_end=ranked_end, doc_ids=doc_ids, query_ids=query_ids, in_qrels=in_qrels)

    def compute(ms: Sequence[Measure]) -> dict[Measure, Any]:
        """The per-query values of resolved measures ``ms`` on these documents."""
        return compute_per_query(ms, labels, scores, boundaries, **where)

    values = compute(computed)
    values = {r: values[c] for r, c in zip(resolved, computed)}
    if later:
        _empty_when(
            preset, tuple(resolved), values, compute, labels, boundaries, query_ids, ranked_end
        )
    return values


def _empty_when(
    preset: Preset,
    resolved: tuple[Measure, ...],
    values: dict[Measure, Any],
    compute: Callable[[Sequence[Measure]], dict[Measure, Any]],
    labels: np.ndarray,
    boundaries: np.ndarray,
    query_ids: Any,
    ranked_end: np.ndarray | None,
) -> None:
    """The preset's ``empty_when`` rule for NDCG with signed gains (negative labels), in place:
    ``idcg<=0`` (XGBoost, CatBoost: an ideal DCG at or below 0 makes the query empty),
    ``label_sum=0`` (TorchMetrics: labels adding up to 0 make it empty; an ideal DCG of 0
    otherwise gives 0), ``idcg=0:dcg`` (rax: the DCG divided by 1)."""
    from .compute import PerQuery
    from .conventions import apply_empty, apply_short

    for r in resolved:
        if r.name != "ndcg":
            continue
        opts = {k: r.get(k) for k in ("gain", "discount", "rounding") if r.get(k) is not None}
        if r.cutoff is not None and r.cutoff.k is not None:
            opts["short"] = "clip"  # the measure's own short rule is applied below
        dcg = Measure.create("dcg", r.cutoff, **opts, ties=r.get("ties")).resolve(preset)
        opts.pop("short", None)
        ideal = Measure.create("idcg", r.cutoff, **opts)
        extra = compute([ideal.resolve(preset), dcg])  # gain measures: in_qrels plays no part
        z = extra[ideal.resolve(preset)].values
        v = np.where(z == 0.0, 0.0, extra[dcg].values / np.where(z == 0.0, 1.0, z))
        n_ranked = np.diff(boundaries) if ranked_end is None else ranked_end - boundaries[:-1]
        v = apply_short(r, v, n_ranked)
        if preset.empty_when == "idcg=0:dcg":
            zero = z == 0.0
            v[zero] = extra[dcg].values[zero]
            values[r] = PerQuery(v, values[r].empty)
            continue
        if preset.empty_when == "idcg<=0":
            empty = z <= 0.0
        else:  # label_sum=0
            sums = np.add.reduceat(labels, boundaries[:-1]) if len(labels) else np.zeros(0)
            sums = np.where(np.diff(boundaries) > 0, sums, 0.0)
            empty = sums == 0.0
            v[(z == 0.0) & ~empty] = 0.0
        v = np.where(empty, 0.0, v)
        values[r] = PerQuery(apply_empty(r, v, empty, query_ids), empty)


def _kept(boundaries: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The boundaries of the documents left where ``keep`` is True (queries may become empty)."""
    nq = len(boundaries) - 1
    qidx = np.repeat(np.arange(nq, dtype=np.int64), np.diff(boundaries))
    return boundaries_from_group(np.bincount(qidx[keep], minlength=nq))


def _signed(m: Measure, preset: Preset) -> Measure:
    """``m`` with its gain applied to negative labels too where the preset says
    ``negative=gain`` (the ``signed:`` gains)."""
    if preset.negative != "gain" or m.info.family != "gain" or "gain" in m.info.fixed:
        return m
    gain = m.get("gain")
    if gain is None or str(gain).startswith("signed:") or not isinstance(gain, str):
        return m
    return m.with_options(gain=f"signed:{gain}")


def mean_of(m: Measure, values: np.ndarray) -> float:
    """The mean over the queries not skipped (NaN if none): arithmetic, except gm_map's
    geometric mean exp(mean of the per-query logs)."""
    ok = ~np.isnan(values)
    if not ok.any():
        return float("nan")
    v = float(values[ok].mean())
    return math.exp(v) if m.name == "gm_map" else v


def _document_at(boundaries: np.ndarray, i: int) -> tuple[int, int]:
    """``(query index, 1-based position in its list)`` of the flat document ``i``, for error
    messages."""
    q = int(np.searchsorted(boundaries, i, side="right")) - 1
    return q, i - int(boundaries[q]) + 1


def check_negative(
    preset: Preset, labels: np.ndarray, boundaries: np.ndarray, query_ids: Any
) -> None:
    """The preset's rule for labels below 0: ``zero`` (trec_eval's: gain 0, never relevant, left
    out of the ideal ranking) lets them through; ``error`` raises :class:`ConventionError`
    naming the first such label and its query."""
    if preset.negative in ("zero", "gain") or not len(labels):
        return
    neg = labels < 0.0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        q, pos = _document_at(boundaries, i)
        raise ConventionError(
            f"label {labels[i]:g} (query {query_ids[q]}, document {pos}) "
            f"is negative, which preset {preset.name} refuses (as the tool it reproduces does). "
            "Fix: labels >= 0, or a preset that reads a negative label as 'judged, gain 0, not "
            "relevant' (standard, trec_eval, or "
            f"{preset.name.split('(')[0]}(negative=zero))"
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
    tie_range: bool = False,
) -> EvaluationResult:
    """Evaluate flat per-document ``labels`` and ``scores`` grouped by ``boundaries``.

    ``measures``: a spec string, a :class:`Measure`, or a sequence of them; ``None`` = the
    preset's usual set. ``preset`` fills every unset option (default ``standard``). ``doc_ids``
    are needed for ``ties=docid`` and for the LETOR presets' duplicated-docid rule
    (``duplicates``: ``keep`` or ``last``; default from the preset). ``score_precision``:
    ``float64`` (as trec_eval 10), or ``float32`` to compare scores in single precision as
    trec_eval 9 and pytrec_eval do (also written ``trec_eval10``, ``trec_eval9``; default from
    the preset). Every document has a judgement here (its label); a negative label follows the
    preset's ``negative`` rule. The TREC-run options ``judged_only`` and ``depth`` belong to
    :func:`evaluate_trec`. ``tie_range=True`` adds, per measure, the best and the worst value
    over every order of the tied documents (``result.tie_range``,
    :mod:`ndcglab.measures.tie_range`), with a warning where ties decide more than 5 % of a
    mean.
    """
    p = get_preset(preset)
    if p.judged_only or p.depth is not None:
        raise ConventionError(
            f"preset {p.name}: judged_only= and depth= (trec_eval -J, -M) apply to TREC runs. "
            "Fix: use evaluate_trec, or drop these options for arrays (every document here has "
            "a label, so every document is judged)"
        )
    ms = _measures_for(measures, p)
    y, s, b, _ = check_inputs(labels, scores, boundaries)
    check_not_empty(len(y), len(b) - 1)
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
        aliases=measure_aliases(measures),
        tie_range=tie_range,
    )


def evaluate(
    dataset: Any,
    scores: Any,
    measures: Any = None,
    *,
    preset: str | Preset | None = None,
    duplicates: str | None = None,
    score_precision: str | None = None,
    tie_range: bool = False,
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
        tie_range=tie_range,
    )


def evaluate_trec(
    qrels: Any,
    run: Any,
    measures: Any = None,
    *,
    preset: str | Preset | None = "trec_eval",
    complete: bool = False,
    judged_only: bool | None = None,
    depth: int | None = None,
    score_precision: str | None = None,
    tie_range: bool = False,
) -> EvaluationResult:
    """Evaluate a TREC run against qrels (pytrec_eval's dict shapes: ``{qid: {docno: value}}``;
    also TREC file paths, pandas DataFrames with ``query_id, doc_id, relevance|score`` or
    PyTerrier's ``qid, docno, label|score``, ranx ``Qrels``/``Run`` and ir_measures' namedtuples:
    :func:`ndcglab.data.trec_inputs.as_trec_dict`).

    Like trec_eval: the queries evaluated are those present in both the run and the qrels
    (sorted by query id); with ``complete=True`` (trec_eval ``-c``) every query of the qrels
    counts, and a query missing from the run follows the preset's ``missing`` rule: ``zero``
    (trec_eval 9, the ``trec_eval`` preset) scores 0 in every measure (gm_map: log(1e-5));
    ``unjudged`` (trec_eval 10, the ``trec_eval10`` preset) evaluates it against a ranking of
    one unjudged document (:data:`MISSING_DOCNO`, score 1) and then sets its ``num_ret`` and
    ``rbp_residual`` to 0, as trec_eval 10 does: its num_rel and idcg keep their values, the
    measures of the ranking are 0. A
    retrieved document missing from the qrels has label 0 and is unjudged. The ideal DCG and
    AP's denominator use every judged document of the query, retrieved or not; judged documents
    the run did not retrieve never enter the ranking. A negative qrels relevance follows the
    preset's ``negative`` rule (``trec_eval``: gain 0, not relevant, "in the pool but unjudged").

    ``judged_only`` (trec_eval ``-J``) ranks only the judged documents (a qrels line with a
    relevance >= 0); ``depth`` (``-M N``) keeps the first N documents of each ranking, ranked
    by score then docno descending (trec_eval's order) at the score precision. Both default to
    the preset's (``trec_eval(judged_only=yes,depth=100)``). ``score_precision`` overrides the
    preset's (``float32`` = ``trec_eval9``, ``float64`` = ``trec_eval10``: the score precision
    only; ``preset="trec_eval10"`` has trec_eval 10's other rules too). Default preset
    ``trec_eval`` (linear gain, log2 discount, ties by docno descending, scores compared in
    single precision).
    """
    from ..data.trec_columns import TrecColumns

    if not isinstance(qrels, TrecColumns):  # columns stay columns (read_trec_columns)
        qrels = as_trec_dict(qrels, what="qrels", value="relevance")
    if not isinstance(run, TrecColumns):
        run = as_trec_dict(run, what="run", value="score")
    p = get_preset(preset)
    ms = _measures_for(measures, p)
    only_judged = p.judged_only if judged_only is None else bool(judged_only)
    max_docs = p.depth if depth is None else depth
    if max_docs is not None and int(max_docs) < 1:
        raise ConventionError(f"depth={max_docs} must be a positive integer (trec_eval -M N)")
    precision = canonical_precision(score_precision or p.score_precision)
    if p.missing not in MISSING_RULES:
        raise ConventionError(
            f"preset {p.name}: unknown missing rule {p.missing!r}; known: "
            f"{', '.join(MISSING_RULES)}"
        )
    columns = _columns_pair(qrels, run)
    if columns is not None and not (only_judged or max_docs is not None or p.missing == "unjudged"):
        res = _evaluate_columns(*columns, ms, p, precision, measures, tie_range)
        res.convention["judged_only"] = only_judged
        res.convention["depth"] = max_docs
        res.convention["missing"] = p.missing
        res.convention["queries"] = "in both the run and the qrels"
        if complete:
            in_run = set(columns[1].queries)
            res = _complete(res, sorted(q for q in columns[0].queries if q not in in_run))
        _warn_ties(res.tie_range, res.mean)  # on the query set of the means
        return res
    if columns is not None:  # the cuts and stand-ins work per query on the dictionaries
        qrels, run = columns[0].to_dict(), columns[1].to_dict()
    qrels, run = cast(Mapping[str, Mapping[str, float]], qrels), cast(Mapping[str, Any], run)
    missing = sorted(q for q in qrels if q not in run) if complete else []
    stand_in = missing if p.missing == "unjudged" else []
    if stand_in:  # trec_eval 10's bogus ranking for a query missing from the run
        run = {**run, **{q: {MISSING_DOCNO: 1.0} for q in stand_in}}
    qids = sorted(q for q in run if q in qrels)
    labels: list[Any] = []
    scores: list[Any] = []
    docs: list[Any] = []
    known: list[bool] = []
    bnd = [0]
    rend: list[int] = []
    for q in qids:
        judged = qrels[q]
        ranked = run[q]
        if only_judged or max_docs is not None:
            ranked = _trec_cut(ranked, judged, only_judged, max_docs, precision)
        _gather_query(judged, ranked, labels, scores, docs, known)
        rend.append(bnd[-1] + len(ranked))
        bnd.append(len(labels))
    y, s, b, re = check_inputs(labels, scores, bnd, rend if qids else np.zeros(0, np.int64))
    res = _finish(
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
        score_precision=precision,
        in_qrels=np.asarray(known, dtype=bool),
        aliases=measure_aliases(measures),
        tie_range=tie_range,
        warn_ties=False,  # below, on the query set of the means (-c adds the missing queries)
    )
    res.convention["judged_only"] = only_judged
    res.convention["depth"] = max_docs
    res.convention["missing"] = p.missing
    res.convention["queries"] = "in both the run and the qrels"
    if stand_in:
        res = _unjudged(res, stand_in)
    elif complete:
        res = _complete(res, missing)
    _warn_ties(res.tie_range, res.mean)
    return res


def _columns_pair(qrels: Any, run: Any) -> tuple[TrecColumns, TrecColumns] | None:
    """``(qrels, run)`` when both are :class:`~ndcglab.data.trec_columns.TrecColumns`; one of
    them alone is turned into the dictionaries of the other."""
    from ..data.trec_columns import TrecColumns

    q_cols, r_cols = isinstance(qrels, TrecColumns), isinstance(run, TrecColumns)
    if q_cols and r_cols:
        return qrels, run
    if q_cols or r_cols:
        raise ConventionError(
            "evaluate_trec takes qrels and run of one kind: both dictionaries or both "
            "TrecColumns (read_trec_columns). Fix: read both files the same way"
        )
    return None


def _evaluate_columns(
    qrels: TrecColumns,
    run: TrecColumns,
    ms: tuple[Measure, ...],
    p: Preset,
    precision: str,
    measures: Any,
    tie_range: bool,
) -> EvaluationResult:
    """:func:`evaluate_trec` of columns (no ``-J``, ``-M`` or stand-in rankings): the same
    documents in the same order as :func:`_gather_query` makes them from the dictionaries: a
    query's ranked documents first, in run order, then its judged documents the run did not
    retrieve, in qrels order. Long columns are joined by the kernels of :mod:`._trec_join`
    (per query, no array of one entry per line beyond the results); short ones with NumPy
    (:func:`_numpy_join`), without loading Numba."""
    qids = sorted(set(run.queries) & set(qrels.queries))
    compiled = len(run) >= _COMPILED_JOIN or _numba_loaded()
    if compiled:
        labels, scores, docs, known, bnd, rend = _compiled_join(qrels, run, qids, precision)
    else:
        labels, scores, docs, known, bnd, rend = _numpy_join(qrels, run, qids)
    if run.disposable:  # the caller handed the columns over: free them before the measures
        run.release()
        qrels.release()
    y, s, b, re = check_inputs(labels, scores, bnd, rend if qids else np.zeros(0, np.int64))
    del labels, scores
    return _finish(
        ms,
        p,
        y,
        s,
        b,
        ranked_end=re,
        doc_ids=docs,
        query_ids=np.asarray(qids, dtype=object),
        duplicates="keep",
        ideal="all judged documents of the query (qrels), retrieved or not",
        score_precision=precision,
        in_qrels=known,
        aliases=measure_aliases(measures),
        tie_range=tie_range,
        warn_ties=False,  # by the caller, on the query set of the means (-c adds queries)
        narrowed=compiled,
    )


#: runs of at least this many lines are joined to their qrels by the kernels of ``_trec_join``
_COMPILED_JOIN = 200_000


def _numba_loaded() -> bool:
    import sys

    return "numba" in sys.modules


def _query_spans(cols: TrecColumns, qids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)``: the lines ``lo[e]:hi[e]`` of ``cols`` of query ``qids[e]`` (the columns
    list each query's lines together, the queries in sorted order)."""
    off = np.zeros(len(cols.queries) + 1, dtype=np.int64)
    np.cumsum(np.bincount(cols.query, minlength=len(cols.queries)), out=off[1:])
    at = {q: i for i, q in enumerate(cols.queries)}
    idx = np.array([at[q] for q in qids], dtype=np.int64)
    return off[idx], off[idx + 1]


def _compiled_join(
    qrels: TrecColumns, run: TrecColumns, qids: list[str], precision: str
) -> tuple[np.ndarray, ...]:
    """The evaluated documents through :mod:`._trec_join`: ``(labels, scores, docs, known,
    boundaries, ranked_end)``; the scores already at ``precision``, and the docno tie key
    handed to :func:`~.conventions.tie_key` for ``docs`` (:func:`.conventions.give_docid_key`).
    Columns the caller handed over (:attr:`~ndcglab.data.trec_columns.TrecColumns.disposable`)
    are freed as soon as they are read: the query column after the spans, the run's values
    after the scores, the rest after the documents."""
    from ._parallel import run_kernel
    from ._trec_join import fill_kernel, match_kernel, scores_kernel
    from .conventions import give_docid_key

    rlo, rhi = _query_spans(run, qids)
    jlo, jhi = _query_spans(qrels, qids)
    drop = run.disposable and qrels.disposable
    if drop:
        run.query = run.query[:0].copy()
        qrels.query = qrels.query[:0].copy()
    rrows = run.doc.view(np.uint8).reshape(len(run.doc), run.doc.dtype.itemsize)
    jrows = qrels.doc.view(np.uint8).reshape(len(qrels.doc), qrels.doc.dtype.itemsize)
    n_ranked = rhi - rlo
    rb = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(n_ranked, out=rb[1:])
    found = np.zeros(len(qids), dtype=np.int64)
    small = len(jrows) < 2**31  # each run line's qrels line (-1: none)
    hit = np.empty(len(rrows), dtype=np.int32 if small else np.int64)
    run_kernel(match_kernel, rb, rrows, jrows, rlo, rhi, jlo, jhi, (found, hit))
    bnd = np.zeros(len(qids) + 1, dtype=np.int64)
    np.cumsum(n_ranked + (jhi - jlo) - found, out=bnd[1:])
    n = int(bnd[-1])
    scores = np.empty(n)
    narrow = precision == "float32"
    run_kernel(scores_kernel, bnd, run.value, rlo, rhi, bnd, narrow, (scores,))
    if drop:
        run.value = run.value[:0].copy()
    w = max(rrows.shape[1], jrows.shape[1])
    labels = np.empty(n)
    known = np.empty(n, dtype=bool)
    docs = np.empty(n, dtype=f"S{w}")
    key = np.zeros(n)  # (pages never written stay unmapped: most documents have no tie)
    run_kernel(
        fill_kernel, bnd, rrows, jrows, qrels.value, hit, rlo, rhi, jlo, jhi, bnd, scores,
        (labels, known, docs.view(np.uint8).reshape(n, w), key),
    )  # fmt: skip
    del hit
    give_docid_key(docs, key)
    return labels, scores, docs, known, bnd, bnd[:-1] + n_ranked


def _numpy_join(qrels: TrecColumns, run: TrecColumns, qids: list[str]) -> tuple[np.ndarray, ...]:
    """The evaluated documents found with NumPy: ``(labels, scores, docs, known, boundaries,
    ranked_end)``. Each (query, docno) pair is one key (:func:`_match_pairs`); the run's keys
    are looked up among the sorted qrels keys for their labels."""
    # memory: each array below is made when needed and dropped when used
    pos = {q: i for i, q in enumerate(qids)}
    w = max(run.doc.dtype.itemsize, qrels.doc.dtype.itemsize)
    rq, rdoc, rs = _evaluated_lines(run, pos, w)
    jq, jdoc, jv = _evaluated_lines(qrels, pos, w)
    line, found = _match_pairs(rq, rdoc, jq, jdoc)  # the qrels line of each run line
    label = jv[line]
    label[~found] = 0.0
    rest = np.ones(len(jq), dtype=bool)
    rest[line[found]] = False  # judged and retrieved
    del line
    n_rest = int(np.count_nonzero(rest))
    bnd = np.zeros(len(qids) + 1, dtype=np.int64)
    rend = np.bincount(rq, minlength=len(qids))
    if n_rest:
        jq, jdoc, jv = jq[rest], jdoc[rest], jv[rest]
        rq = np.concatenate([rq, jq])
        label = np.concatenate([label, jv])
        rs = np.concatenate([rs, np.zeros(n_rest)])
        rdoc = np.concatenate([rdoc, jdoc])
        found = np.concatenate([found, np.ones(n_rest, dtype=bool)])
    del jq, jdoc, jv, rest
    np.cumsum(np.bincount(rq, minlength=len(qids)), out=bnd[1:])
    rend += bnd[:-1]
    if len(rq) > 1 and (rq[1:] < rq[:-1]).any():  # per query: ranked in run order, then the rest
        order = np.argsort(rq, kind="stable")
        del rq
        label, rs, rdoc, found = label[order], rs[order], rdoc[order], found[order]
        del order
    else:
        del rq
    return label, rs, rdoc, found, bnd, rend


def _match_pairs(
    rq: np.ndarray, rdoc: np.ndarray, jq: np.ndarray, jdoc: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each run line ``(rq, rdoc)``: the qrels line with the same pair (``line``, 0 where
    none) and whether there is one (``found``). The pairs are compared by their 64-bit keys
    (:func:`~ndcglab.data.trec_columns.pair_hashes`: query, then a hash of the docno; sorted
    and searched as integers, each query's search within its own part), then in full; two qrels
    pairs of one key (a hash collision within a query) send the search to the pairs' bytes
    instead (:func:`~ndcglab.data.trec_columns.pair_keys`)."""
    from ..data.trec_columns import pair_hashes, pair_keys

    key = pair_hashes(jq, jdoc)
    jorder = np.argsort(key)
    jsorted = key[jorder]
    if len(jsorted) > 1 and (jsorted[1:] == jsorted[:-1]).any():
        key = pair_keys(jq, jdoc)
        jorder = np.argsort(key, kind="stable")
        jsorted = key[jorder]
        key = pair_keys(rq, rdoc)
    else:
        key = pair_hashes(rq, rdoc)
    line = np.searchsorted(jsorted, key)
    del key, jsorted
    found = line < len(jorder)
    line[~found] = 0
    np.take(jorder, line, out=line, mode="clip")
    del jorder
    if len(jq):
        found &= (jq[line] == rq) & (jdoc[line] == rdoc)
    return line, found


def _evaluated_lines(
    cols: TrecColumns, pos: Mapping[str, int], width: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lines of ``cols`` whose query is evaluated: the query's position in ``pos``, the
    docno (as ``S<width>``) and the value; the columns themselves where every line is kept."""
    where = np.array([pos.get(q, -1) for q in cols.queries], dtype=np.int32)
    q = where[cols.query]
    keep = q >= 0
    doc, value = cols.doc, cols.value
    if not keep.all():
        q, doc, value = q[keep], doc[keep], value[keep]
    return q, doc.astype(f"S{width}", copy=False), value


def _gather_query(
    judged: Mapping[str, Any],
    ranked: Mapping[str, Any],
    labels: list[Any],
    scores: list[Any],
    docs: list[Any],
    known: list[bool],
) -> None:
    """Append one query's documents to the columns of :func:`evaluate_trec`: the ranked ones
    in run order (label from the qrels, 0 when unjudged), then the judged ones the run did not
    retrieve (score 0), in qrels order. Values and names are appended as given: NumPy converts
    the values to float64 afterwards (:func:`~ndcglab.measures.compute.check_inputs`, the same
    numbers as ``float``), and the docno tie key compares the names as text
    (:func:`~ndcglab.measures.conventions.tie_key`). Whole-column ``map`` calls, no
    per-document Python loop."""
    from itertools import repeat

    rest = [d for d in judged if d not in ranked]
    labels += map(judged.get, ranked, repeat(0.0))
    labels += map(judged.__getitem__, rest)
    scores += ranked.values()
    scores += repeat(0.0, len(rest))
    docs += ranked
    docs += rest
    known += map(judged.__contains__, ranked)
    known += repeat(True, len(rest))


def _trec_cut(
    ranked: Mapping[str, float],
    judged: Mapping[str, float],
    only_judged: bool,
    max_docs: int | None,
    precision: str,
) -> dict[str, float]:
    """trec_eval's ``-M N`` and ``-J`` on one query's run: the first ``max_docs`` documents by
    score (at ``precision``) then docno, both descending; then, with ``only_judged``, only
    documents with a qrels relevance >= 0. The documents keep their order in the run."""
    items = list(ranked.items())
    if max_docs is not None and len(items) > max_docs:
        cast = np.float32 if precision == "float32" else np.float64
        top = sorted(items, key=lambda t: (float(cast(t[1])), str(t[0])), reverse=True)
        keep = {d for d, _ in top[: int(max_docs)]}
        items = [(d, sc) for d, sc in items if d in keep]
    if only_judged:
        items = [(d, sc) for d, sc in items if d in judged and float(judged[d]) >= 0.0]
    return dict(items)


def _unjudged(res: EvaluationResult, missing: list[str]) -> EvaluationResult:
    """trec_eval 10's ``-c``: the queries of the qrels missing from the run were evaluated
    against one unjudged document (:data:`MISSING_DOCNO`); as trec_eval 10 "cleans up the
    leftovers" of that ranking, their ``num_ret`` and ``rbp_residual`` become 0 (per query, in
    the mean and in the tie range)."""
    conv = dict(res.convention)
    conv["queries"] = (
        f"every query of the qrels (trec_eval 10 -c): {len(missing)} missing from the run "
        f"evaluated against one unjudged document ({MISSING_DOCNO}), num_ret and rbp_residual "
        "then set to 0"
    )
    at = np.isin(res.query_ids.astype(str), np.asarray(missing, dtype=str))
    per_query = dict(res.per_query)
    mean = dict(res.mean)
    ranges = dict(res.tie_range)
    for m, r in zip(res.measures, res.resolved):
        if r.name not in _RESET_WHEN_MISSING:
            continue
        name = str(m)
        v = per_query[name].copy()
        v[at] = 0.0
        per_query[name] = v
        mean[name] = mean_of(r, v)
        tr = ranges.get(name)
        if tr is not None:
            lo, hi = tr.low.copy(), tr.high.copy()
            lo[at] = 0.0
            hi[at] = 0.0
            ranges[name] = replace(tr, low=lo, high=hi, mean_low=mean_of(r, lo),
                                   mean_high=mean_of(r, hi))  # fmt: skip
    return replace(res, per_query=per_query, mean=mean, convention=conv, tie_range=ranges)


def _warn_ties(ranges: dict[str, TieRange], mean: dict[str, float]) -> None:
    """Warn where ties decide much of a mean (:func:`~ndcglab.measures.tie_range.tie_warnings`);
    without tie ranges the module of the tie ranges is not even imported."""
    if not ranges:
        return
    from .tie_range import tie_warnings

    for line in tie_warnings(ranges, mean):
        warn_user(line)


def _complete(res: EvaluationResult, missing: list[str]) -> EvaluationResult:
    """trec_eval 9's ``-c`` (the preset rule ``missing=zero``): the queries of the qrels
    missing from the run join the result with the value 0 in every measure (gm_map: log(1e-5),
    i.e. AP floored), and every mean is taken over all queries of the qrels."""
    conv = dict(res.convention)
    conv["queries"] = (
        f"every query of the qrels (trec_eval 9 -c): {len(missing)} missing from the run score 0"
    )
    if not missing:
        return replace(res, convention=conv)
    qids = np.concatenate([res.query_ids, np.asarray(missing, dtype=object)])
    order = np.argsort(qids.astype(str), kind="stable")
    per_query: dict[str, np.ndarray] = {}
    mean: dict[str, float] = {}
    ranges: dict[str, TieRange] = {}
    for m, r in zip(res.measures, res.resolved):
        name = str(m)
        fill = math.log(MIN_GEO_MEAN) if r.name == "gm_map" else 0.0
        v = np.concatenate([res.per_query[name], np.full(len(missing), fill)])[order]
        per_query[name] = v
        mean[name] = mean_of(r, v)
        tr = res.tie_range.get(name)
        if tr is not None:
            lo = np.concatenate([tr.low, np.full(len(missing), fill)])[order]
            hi = np.concatenate([tr.high, np.full(len(missing), fill)])[order]
            tied = np.concatenate([tr.tied, np.zeros(len(missing), dtype=bool)])[order]
            from .tie_range import TieRange

            ranges[name] = TieRange(name, lo, hi, mean_of(r, lo), mean_of(r, hi), tied)
    return replace(
        res,
        per_query=per_query,
        mean=mean,
        query_ids=qids[order],
        convention=conv,
        tie_range=ranges,
    )
