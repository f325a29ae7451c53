"""The tie range: how much of a result the order of tied documents decides.

Every tool breaks ties in scores its own way (input order, document id, the worst order, the
average over orders), and none reports how much that choice moves the number. The tie range is
the best and the worst value of a measure over **all** orders of the tied documents, exact per
query:

* the worst order of a tied group puts its lower gains (or non-relevant documents) first — the
  tie rule ``pessimistic`` — and the best order the higher ones first (``optimistic``). For
  every measure of ndcglab whose value never drops when a better document moves up past a
  worse one at a tie (NDCG, DCG, MeanNDCG with any gain and a non-increasing discount, by the
  rearrangement inequality; AP, P@k, RR, recall, success, ERR, RBP, ...) these two orders reach
  the minimum and the maximum, so the range is exact, and ``tests/measures/test_tie_range.py``
  checks it against every permutation of the tied documents on small lists;
* ties are judged at the preset's score precision (``trec_eval`` and the float32 tools: scores
  equal in single precision tie);
* a query without ties has a range of width 0 and is not evaluated again: finding the tied
  queries hashes each query's scores (:func:`tied_queries`, no sort), and only the queries with
  at least two equal scores among the ranked documents are evaluated under the worst and the
  best order. Where every gain and relevance rule grows with the label, the two orders are
  the tie rules ``label_asc`` and ``label_desc``, shared by all measures; when the tied
  queries hold most documents, the caller evaluates the bounds with its plain values
  (:func:`joint_bounds`), and ``compute_per_query`` computes the plain order and both bounds
  in one pass — ``rank_rel_bounds_kernel`` for the ndcg@k + map/p/mrr family (one counting
  pass places each document in the three orders; a list of equal scores is placed by counting
  its labels), ``topk_bounds_gain_kernel`` for NDCG@k alone (one selection), the ideal DCG
  once — so the range costs well under one more evaluation for those measures, and almost
  nothing when no query is tied (``benchmarks/bench_tie_range.py``); other measures get each
  bound from one more evaluation;
* judged@k and RBP's residual depend on which documents are judged, not on their labels: their
  worst and best orders put the unjudged tied documents first or last (judged@k's lowest value
  has them first, the residual's highest); bpref ignores unjudged documents, so the order by
  relevance is exact for it;
* infAP weighs judged non-relevant, pool-unjudged and unpooled documents above a relevant one
  differently, and no single order of a tied group reaches its minimum or its maximum for
  every mix: its tie rules ``pessimistic``/``optimistic`` search each group of tied documents
  for its extreme order (``_trec_kernels.infap_extreme_kernel``, exact); a query whose group
  is too large for that search (``INFAP_STATES``) gets NaN bounds, and :func:`tie_warnings`
  says so;
* measures without a tie rule (``idcg``, ``num_rel``, ...) have a range of width 0.

:class:`TieRange` holds the per-query bounds and their means; ``evaluate_arrays(...,
tie_range=True)`` and ``evaluate(...)``/``evaluate_trec(...)`` with ``tie_range=True`` put one
per measure in ``EvaluationResult.tie_range``, and :func:`tie_warnings` states when ties decide
more than a share of a mean (:data:`TIE_SHARE`, 5 % by default).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from . import _small
from ._parallel import run_kernel
from .registry import Measure

__all__ = ["TIE_SHARE", "TieRange", "joint_bounds", "tie_warnings", "tied_queries"]

#: a mean whose tie range is wider than this share of it gets a warning (:func:`tie_warnings`)
TIE_SHARE = 0.05

#: the worst and the best order of tied documents when every gain and relevance rule grows with
#: the label: lower labels first, higher labels first
LABEL_RULES = ("label_asc", "label_desc")


@dataclass(frozen=True)
class TieRange:
    """The best and the worst value of one measure over every order of the tied documents.

    ``low`` and ``high`` are per query (``(Q,)``, NaN where the measure skips the query);
    ``mean_low`` and ``mean_high`` their means (the measure's own mean: gm_map's is geometric);
    ``tied`` marks the queries with tied scores (at the preset's precision)."""

    measure: str
    low: np.ndarray
    high: np.ndarray
    mean_low: float
    mean_high: float
    tied: np.ndarray

    @property
    def width(self) -> float:
        """``mean_high - mean_low``: how much of the mean the tie order decides."""
        return self.mean_high - self.mean_low

    @property
    def n_tied(self) -> int:
        """Number of queries with tied scores."""
        return int(self.tied.sum())

    def not_found(self, mean: float) -> bool:
        """True when the bounds of some tied query could not be found (NaN bounds, e.g. infAP's
        search too large) although the measure has a ``mean``: the range is not given."""
        return bool(self.n_tied) and math.isnan(self.width) and not math.isnan(mean)

    def share(self, mean: float) -> float:
        """``width / |mean|`` (inf for a mean of 0 with a positive width, 0 for no width)."""
        if self.width == 0.0 or math.isnan(self.width):
            return 0.0
        return self.width / abs(mean) if mean else math.inf

    def to_dict(self, *, per_query: bool = False) -> dict[str, Any]:
        """The JSON shape: ``low``, ``high`` (means), ``width``, ``tied_queries``; with
        ``per_query=True`` also the per-query bounds."""
        out: dict[str, Any] = {
            "low": _num(self.mean_low),
            "high": _num(self.mean_high),
            "width": _num(self.width),
            "tied_queries": self.n_tied,
        }
        if per_query:
            out["per_query_low"] = [_num(v) for v in self.low.tolist()]
            out["per_query_high"] = [_num(v) for v in self.high.tolist()]
        return out


def _num(v: float) -> float | None:
    f = float(v)
    return None if math.isnan(f) or math.isinf(f) else f


def tied_queries(
    scores: np.ndarray, boundaries: np.ndarray, ranked_end: np.ndarray | None = None
) -> np.ndarray:
    """``(Q,)`` bool: the queries with at least two equal scores among their ranked documents
    (``ranked_end``: the end of each query's ranked part; default the whole list)."""
    nq = len(boundaries) - 1
    if len(scores) < 2 or nq == 0:
        return np.zeros(nq, dtype=bool)
    rend = np.ascontiguousarray(boundaries[1:]) if ranked_end is None else ranked_end
    s = np.ascontiguousarray(scores, dtype=np.float64)
    if _small.fits(boundaries):  # NumPy: the same flags as trec_eval's docid tie key uses
        flags = np.zeros(len(scores), dtype=bool)
        _small.tie_flags(s, boundaries, rend, flags)
        count = np.concatenate([[0], np.cumsum(flags)])
        return count[boundaries[1:]] > count[boundaries[:-1]]
    from . import _kernels as K

    tied = np.zeros(nq, dtype=bool)
    bits = (s + 0.0).view(np.uint64)  # -0.0 + 0.0 = +0.0: equal scores, equal bits
    run_kernel(K.tied_query_kernel, boundaries, bits, boundaries, rend, (tied,))
    return tied


def _subset(
    keep_q: np.ndarray, boundaries: np.ndarray, *arrays: np.ndarray | None
) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """The boundaries of the queries ``keep_q`` and the per-document ``arrays`` cut to them."""
    n = np.diff(boundaries)
    chosen = np.zeros(len(n), dtype=bool)
    chosen[keep_q] = True
    lengths = n[keep_q]
    doc = np.repeat(chosen, n)
    b = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return b, [None if a is None else a[doc] for a in arrays]


def _levels(labels: np.ndarray) -> np.ndarray:
    """The labels to check, ascending: every whole number from the lowest label to the highest
    when the labels are whole numbers in a range of at most 1,024 (a superset of the labels
    present, without a sort: a rule that fails on an absent level only costs the slower exact
    path), else the distinct labels."""
    if len(labels) == 0:
        return labels
    if len(labels) <= _small.SMALL_DOCS:  # few labels: NumPy, no compiled code to load
        lo, hi = float(labels.min()), float(labels.max())
        whole = bool((np.floor(labels) == labels).all())
    else:
        from ._kernels import label_span

        lo, hi, whole = label_span(np.ascontiguousarray(labels, dtype=np.float64))
    if hi - lo <= 1024.0 and whole:
        return np.arange(lo, hi + 1.0)
    return np.unique(labels)


def _by_label(measures: Sequence[Measure], labels: np.ndarray) -> bool:
    """True when every measure's worst order of a tied group is "lower labels first" (and its
    best "higher labels first"): each gain (ndcg family) and relevance rule is a nondecreasing
    function of the label on the labels present (:func:`_levels`), and no measure tells judged
    from unjudged documents. Then the tie rules ``label_asc``/``label_desc`` give every measure
    its bound, both from one pass (``compute_per_query``); otherwise each family orders by its
    own values (``pessimistic``/``optimistic``)."""
    from .conventions import relevance
    from .gains import get_gain

    levels = _levels(labels)
    for m in measures:
        if m.name in ("judged", "rbp_residual", "bpref", "infap"):
            return False
        if m.info.family == "gain" and m.get("gain") is not None:
            gain = get_gain(m.get("gain"))
            with np.errstate(over="ignore", invalid="ignore"):
                g = np.asarray(gain(levels), dtype=np.float64)
            if not gain.signed:
                g = np.where(levels < 0.0, 0.0, g)
            if not np.isfinite(g).all() or (np.diff(g) < 0).any():
                return False
        rel = m.get("rel")
        if rel is not None and (np.diff(relevance(str(rel), levels)) < 0).any():
            return False
    return True


def joint_bounds(
    resolved: Sequence[Measure],
    labels: np.ndarray,
    boundaries: np.ndarray,
    tied: np.ndarray,
) -> list[Measure] | None:
    """The measures whose values give the bounds when they are best computed over every query
    in the same pass as the plain values: the resolved measures with a tie rule, under
    ``label_asc`` and then under ``label_desc``. The caller evaluates them with its own and
    hands their values to :func:`compute_tie_range` (``given=``); ``compute_per_query`` then
    places every document in the plain order and both bound orders in one pass
    (``rank_rel_bounds_kernel``; ``topk_bounds_gain_kernel`` for NDCG@k alone). None when fewer
    than half the documents are in ``tied`` queries (only those are evaluated again,
    afterwards) or when a measure's worst order is not "lower labels first"
    (:func:`_by_label`)."""
    with_ties = [r for r in resolved if "ties" in r.info.params]
    if not with_ties or not tied.any():
        return None
    n_docs = np.diff(boundaries)
    if 2 * int(n_docs[tied].sum()) < int(n_docs.sum()) or not _by_label(with_ties, labels):
        return None
    return [r.with_options(ties=rule) for rule in LABEL_RULES for r in with_ties]


def compute_tie_range(
    measures: Sequence[Measure],
    resolved: Sequence[Measure],
    values: dict[str, np.ndarray],
    evaluate_rule: Callable[..., dict[Measure, np.ndarray]],
    mean: Callable[[Measure, np.ndarray], float],
    labels: np.ndarray,
    scores: np.ndarray,
    boundaries: np.ndarray,
    *,
    ranked_end: np.ndarray | None = None,
    doc_ids: np.ndarray | None = None,
    in_qrels: np.ndarray | None = None,
    query_ids: np.ndarray | None = None,
    tied: np.ndarray | None = None,
    given: dict[Measure, np.ndarray] | None = None,
) -> dict[str, TieRange]:
    """One :class:`TieRange` per measure (by printed name). ``values`` are the plain per-query
    values (printed name -> ``(Q,)``); ``evaluate_rule(measures, labels, scores, boundaries,
    ranked_end=, doc_ids=, in_qrels=, query_ids=)`` evaluates resolved measures on a subset of
    queries (the caller's pipeline, so every preset rule applies) and returns measure ->
    ``(Q',)``; ``mean(measure, values)`` is the measure's mean. ``tied``: the tied queries
    (:func:`tied_queries`, if the caller has them); ``given``: the values over all queries of
    the measures :func:`joint_bounds` named, computed by the caller with the plain values
    (then nothing is evaluated here)."""
    if tied is None:
        tied = tied_queries(scores, boundaries, ranked_end)
    lows = {str(m): values[str(m)].copy() for m in measures}
    highs = {str(m): values[str(m)].copy() for m in measures}
    with_ties = [(m, r) for m, r in zip(measures, resolved) if "ties" in r.info.params]
    if tied.any() and with_ties:
        keep = np.flatnonzero(tied)
        cut: list[np.ndarray | None]
        n_docs = np.diff(boundaries)
        whole = 2 * int(n_docs[keep].sum()) >= int(n_docs.sum())
        if whole:  # most documents are in tied queries: all of them, no copy (a query
            # without ties ranks the same under every rule: its values are the plain ones)
            b, cut, re, qids = (
                boundaries,
                [labels, scores, doc_ids, in_qrels],
                ranked_end,
                query_ids,
            )
        else:
            b, cut = _subset(keep, boundaries, labels, scores, doc_ids, in_qrels)
            re = None
            if ranked_end is not None:
                re = b[:-1] + (ranked_end - boundaries[:-1])[keep]
            qids = None if query_ids is None else np.asarray(query_ids, dtype=object)[keep]
        y, s = cast(np.ndarray, cut[0]), cast(np.ndarray, cut[1])  # always given
        d, iq = cut[2], cut[3]
        if given is not None:  # computed with the plain values (joint_bounds)
            ruled = [[r.with_options(ties=rule) for _, r in with_ties] for rule in LABEL_RULES]
            got = given
        else:
            rules: tuple[str, str] = ("pessimistic", "optimistic")
            if _by_label([r for _, r in with_ties], y):  # one order for every measure, and
                rules = LABEL_RULES  # two bounds from one pass
            ruled = [[r.with_options(ties=rule) for _, r in with_ties] for rule in rules]
            got = evaluate_rule(
                ruled[0] + ruled[1], y, s, b, ranked_end=re, doc_ids=d, in_qrels=iq,
                query_ids=qids,
            )  # fmt: skip
        for bound, store in zip(ruled, (lows, highs)):
            for (m, _), r in zip(with_ties, bound):
                store[str(m)][keep] = got[r][keep] if whole else got[r]
    out: dict[str, TieRange] = {}
    for m, r in zip(measures, resolved):
        lo, hi = lows[str(m)], highs[str(m)]
        plain = values[str(m)]
        if ((np.isnan(lo) | np.isnan(hi)) & ~np.isnan(plain)).any():  # a bound not found
            out[str(m)] = TieRange(str(m), lo, hi, math.nan, math.nan, tied)  # (tie_warnings)
            continue
        out[str(m)] = TieRange(str(m), lo, hi, mean(r, lo), mean(r, hi), tied)
    return out


def tie_warnings(
    ranges: dict[str, TieRange], means: dict[str, float], share: float = TIE_SHARE
) -> list[str]:
    """One sentence per measure whose tie range is wider than ``share`` of its mean, and one
    per measure whose range could not be found for some tied query (infAP's search)."""
    out = []
    for name, tr in ranges.items():
        m = means.get(name, math.nan)
        if tr.not_found(m):
            from ._trec_kernels import INFAP_STATES  # (only then: it loads the kernels)

            lost = int(((np.isnan(tr.low) | np.isnan(tr.high)) & tr.tied).sum())
            out.append(
                f"{name}: no tie range: for {lost} of the {tr.n_tied} queries with tied scores "
                f"a group of tied documents is too large for the exact search of infAP's worst "
                f"and best orders (more than {INFAP_STATES:,} states); the range is not given"
            )
            continue
        if math.isnan(m) or tr.share(m) <= share:
            continue
        part = f"{tr.share(m):.0%}" if math.isfinite(tr.share(m)) else "all of a mean of 0"
        out.append(
            f"{name}: ties decide {tr.width:.4f} of the mean {m:.4f} ({part} > "
            f"{share:.0%}): any order of the tied documents gives {tr.mean_low:.4f} to "
            f"{tr.mean_high:.4f} ({tr.n_tied} {'query has' if tr.n_tied == 1 else 'queries have'} "
            "tied scores)"
        )
    return out
