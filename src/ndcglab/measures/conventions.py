"""The conventions of a measure, each computed by one NumPy function.

Every measure of :mod:`ndcglab.measures` — and the analysis tools built on it — takes each
convention from here (or from the :class:`~ndcglab.measures.Gain`,
:class:`~ndcglab.measures.Discount` and :class:`~ndcglab._spec.Cutoff` objects):

======================  =============================================================
convention              computed by
======================  =============================================================
gain G(y)               :class:`~ndcglab.measures.Gain` objects (``gains.py``)
discount D(r)           :class:`~ndcglab.measures.Discount` objects (``discounts.py``)
cut-off rounding        :meth:`Cutoff.k_for <ndcglab._spec.Cutoff.k_for>`, per query by
                        :func:`cutoff_k`
tie rule                :func:`tie_key` (the order); ``average`` in the kernels
relevance threshold     :func:`relevance`
k beyond the list       :func:`apply_short` (and :func:`precision_divisor` for P@k)
empty query             :func:`normalise` (which queries are empty) and :func:`apply_empty`
labels as a tool reads  :func:`read_labels` (single precision, whole labels, ignored labels)
DCG of a ranked list    :func:`cumulative_dcg` (its running sums) and :func:`dcg_at` (at
                        the cut-off; the numba kernels for whole datasets)
ideal DCG               the same sums over :func:`ideal_gains` (gains in descending order)
======================  =============================================================

The rules themselves are stated in ``docs/measures.md``.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._spec import Cutoff
from ..errors import ConventionError, EmptyQueryError
from . import _small
from ._parallel import run_kernel

if TYPE_CHECKING:  # pragma: no cover
    from .registry import Measure

__all__ = [
    "apply_empty",
    "apply_short",
    "cumulative_dcg",
    "cutoff_k",
    "dcg_at",
    "ideal_gains",
    "normalise",
    "precision_divisor",
    "read_labels",
    "relevance",
    "tie_key",
]


# ------------------------------------------------------------------------------ cut-offs
def cutoff_k(
    cutoff: Cutoff | None, rounding: str | None, n_ranked: np.ndarray, n_all: np.ndarray
) -> np.ndarray:
    """Per-query k (int64): the whole list (``n_all``) without a cut-off, ``k`` for a fixed one,
    and :meth:`Cutoff.k_for` of the ranked length (``rounding``: ceil, floor, round) for a
    fraction of the list."""
    if cutoff is None:
        return np.asarray(n_all, dtype=np.int64)
    if cutoff.k is not None:
        return np.full(len(n_all), cutoff.k, dtype=np.int64)
    if rounding is None:
        raise ConventionError(f"the fractional cut-off @{cutoff} needs a rounding rule")
    return cutoff.k_for(np.asarray(n_ranked, dtype=np.int64), rounding)


# ------------------------------------------------------------------------------ label reading
#: XGBoost's tolerance for a whole label (``kRtEps``)
XGBOOST_EPS = 1e-6
#: labels LightGBM's default ``label_gain`` (2^i - 1, i = 0..30) has a gain for
LIGHTGBM_LEVELS = 31


def _first(mask: np.ndarray, labels: np.ndarray, query_ids: Any, boundaries: np.ndarray) -> str:
    i = int(np.flatnonzero(mask)[0])
    q = int(np.searchsorted(boundaries, i, side="right")) - 1
    qid = str(query_ids[q]) if query_ids is not None else f"#{q}"
    return f"label {float(labels[i])!r} (query {qid}, document {i - int(boundaries[q]) + 1})"


#: the largest finite single-precision number (numpy.finfo(numpy.float32).max)
FLOAT32_MAX = float(np.finfo(np.float32).max)


def _kept_bounds(boundaries: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Query boundaries after dropping the documents where ``keep`` is False."""
    before = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
    return np.asarray(before[np.asarray(boundaries, dtype=np.int64)], dtype=np.int64)


def warn_float32_gains(
    preset: Any,
    measures: Sequence[Measure],
    labels: np.ndarray,
    boundaries: np.ndarray,
    query_ids: Any = None,
) -> None:
    """Warn where a tool that computes NDCG in single precision (the preset's
    ``gain_precision=float32``: rax) returns NaN: its gain ``2^y - 1`` is ``inf`` in float32 for
    a label >= 128, and a DCG then sums ``inf`` (or ``0 * inf`` for a document past the cutoff),
    so the query's NDCG is ``inf / inf`` or ``NaN``, and so is the mean. A query whose gains are
    finite but whose ideal DCG (all documents, log2 discount) exceeds float32's largest number
    gets NaN or 0 from the tool. Only measures of the ndcg family with the gain ``exp2``
    count; ndcglab's own values keep the exact (double precision) gain."""
    from .._warn import warn_user

    exp = [m for m in measures if m.info.family == "gain" and str(m.get("gain")) == "exp2"]
    if not exp or labels.size == 0:
        return
    tool = str(getattr(preset, "title", preset)).split(" ")[0]
    name = getattr(preset, "name", "?")
    with np.errstate(over="ignore"):
        gain32 = np.power(np.float32(2.0), labels.astype(np.float32)) - np.float32(1.0)
    over = ~np.isfinite(gain32)
    starts = np.asarray(boundaries[:-1], dtype=np.int64)
    nq = len(starts)
    if nq == 0:
        return
    sizes = np.diff(boundaries)
    bad_q = np.add.reduceat(over.astype(np.int64), np.minimum(starts, labels.size - 1)) > 0
    bad_q &= sizes > 0
    measures_txt = "NDCG (gain 2^y - 1)"
    if bad_q.any():
        warn_user(
            f"preset {name}: {int(over.sum())} label(s) >= 128 (first "
            f"{_first(over, labels, query_ids, boundaries)}) give a gain 2^y - 1 beyond single "
            f"precision: {tool} computes it in float32 and returns NaN for {measures_txt} on "
            f"{int(bad_q.sum())} of {nq} queries, and a NaN mean; the values printed use the "
            "exact gain"
        )
    gains = np.where(labels > 0, np.exp2(np.minimum(labels, 1023.0)) - 1.0, 0.0)
    big = np.zeros(nq, dtype=bool)
    # the ideal DCG is at most (largest gain) x (list size): only those lists can overflow
    top = np.maximum.reduceat(gains, np.minimum(starts, labels.size - 1))
    maybe = ~bad_q & (sizes > 0) & (top * sizes > FLOAT32_MAX)
    for q in np.flatnonzero(maybe).tolist():
        g = np.sort(gains[boundaries[q] : boundaries[q + 1]])[::-1]
        ideal = float(np.sum(g / np.log2(np.arange(2, len(g) + 2))))
        big[q] = ideal > FLOAT32_MAX
    if big.any():
        q = int(np.flatnonzero(big)[0])
        qid = str(query_ids[q]) if query_ids is not None else f"#{q}"
        warn_user(
            f"preset {name}: the ideal DCG of {int(big.sum())} of {nq} queries (first query "
            f"{qid}) exceeds single precision ({FLOAT32_MAX:.3g}): {tool} computes it in float32 "
            f"and returns NaN or 0 for {measures_txt} there; the values printed use the exact "
            "gain"
        )


def read_labels(
    preset: Any,
    measures: Sequence[Measure],
    labels: np.ndarray,
    boundaries: np.ndarray,
    query_ids: Any = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The labels as the preset's tool reads them: ``(labels, keep)``, ``keep`` the documents
    left after ``ignore_label`` (None: all).

    * ``ignore_label`` (TorchMetrics' ``ignore_index``, allRank's padding label -1): documents
      with that label are dropped, with a warning saying how many;
    * ``labels=float32`` (TorchMetrics, allRank, rax) and ``xgboost``: each label rounded to single
      precision, with a warning naming the first label whose value this changes;
    * ``xgboost``: where a measure of the ndcg family has the gain ``exp2`` (ndcg_exp_gain=true)
      every label must be whole (within XGBoost's 1e-6), >= 0 and <= 31, and where ``map`` is
      asked for every label 0 or 1 — otherwise :class:`ConventionError`, as XGBoost stops;
    * ``gdeval``: every label must be a whole number <= 4 (gdeval.pl stops otherwise);
    * ``lightgbm``: single precision, and for the ndcg family whole labels below 31 (its default
      ``label_gain`` table; LightGBM stops otherwise);
    * ``int`` (trec_eval, which reads a relevance with ``atol``; ranx, whose qrels hold
      integers): each label truncated toward zero (1.5 -> 1, 0.5 -> 0);
    * ``gain_precision=float32`` (rax): the tool computes the gain and the DCG in single
      precision, so a gain ``2^y - 1`` beyond float32's range (a label >= 128) or an ideal DCG
      beyond it makes its NDCG NaN: a warning names the first such label and what the tool
      returns (:func:`warn_float32_gains`); ndcglab's values keep the exact gain.

    Warnings name the first changed label and its query (:func:`ndcglab._warn.warn_user`)."""
    from .._warn import warn_user

    rule = getattr(preset, "labels", "float64")
    keep: np.ndarray | None = None
    name = getattr(preset, "name", "?")
    ignore = getattr(preset, "ignore_label", None)
    if ignore is not None:
        drop = labels == ignore
        if drop.any():
            keep = ~drop
            warn_user(
                f"preset {name}: {int(drop.sum())} document(s) with label {ignore:g} dropped "
                "before evaluation, as the tool does (ignore_index / padding label)"
            )
    if rule == "int":
        whole = np.trunc(labels)
        changed = whole != labels
        if changed.any():
            warn_user(
                f"preset {name} reads labels as whole numbers, as the tool does (trec_eval's atol, "
                f"ranx's integer qrels): {int(changed.sum())} label(s) change, first "
                f"{_first(changed, labels, query_ids, boundaries)} -> "
                f"{float(whole[np.flatnonzero(changed)[0]])!r}"
            )
            labels = whole
        del whole, changed  # (whole labels: the same array, no copy held)
    if rule in ("float32", "xgboost", "lightgbm"):
        narrow = labels.astype(np.float32).astype(np.float64)
        changed = narrow != labels
        if changed.any():
            warn_user(
                f"preset {name} reads labels in single precision, as the tool does: "
                f"{int(changed.sum())} label(s) change, first "
                f"{_first(changed, labels, query_ids, boundaries)} "
                f"-> {float(narrow[np.flatnonzero(changed)[0]])!r}"
            )
        labels = narrow
    check = labels if keep is None else labels[keep]
    if getattr(preset, "gain_precision", "float64") == "float32":
        bounds = boundaries if keep is None else _kept_bounds(boundaries, keep)
        warn_float32_gains(preset, measures, check, bounds, query_ids)
    if rule == "xgboost":
        exp = any(m.info.family == "gain" and str(m.get("gain")) == "exp2" for m in measures)
        if exp:
            bad = (np.abs(np.floor(check) - check) > XGBOOST_EPS) | (check < 0.0) | (check > 31.0)
            if bad.any():
                raise ConventionError(
                    f"preset {name}: {_first(bad, check, query_ids, boundaries)} is not a whole "
                    "number in 0..31, which XGBoost refuses for NDCG with ndcg_exp_gain=true. "
                    "Fix: whole labels 0..31, or xgboost(exp_gain=false) for a linear gain"
                )
        if any(m.name == "map" for m in measures):
            binary = (np.abs(check - 1.0) < XGBOOST_EPS) | (np.abs(check) < XGBOOST_EPS)
            if not binary.all():
                raise ConventionError(
                    f"preset {name}: {_first(~binary, check, query_ids, boundaries)} is not 0 or "
                    "1, and XGBoost's map takes binary labels only. Fix: labels 0/1 (e.g. "
                    "label >= 1 as 1), or another preset"
                )
    elif rule == "lightgbm" and any(m.info.family == "gain" for m in measures):
        bad = (check != np.trunc(check)) | (check >= LIGHTGBM_LEVELS)
        if bad.any():
            raise ConventionError(
                f"preset {name}: {_first(bad, check, query_ids, boundaries)} is not a whole "
                f"number below {LIGHTGBM_LEVELS}, which LightGBM's ndcg refuses with its default "
                "label_gain (2^i - 1 for i < 31). Fix: whole labels 0..30, or a preset that "
                "reads labels as numbers (standard: the same gain 2^y - 1)"
            )
    elif rule == "gdeval":
        bad = (np.floor(check) != check) | (check > 4.0)
        if bad.any():
            raise ConventionError(
                f"preset {name}: {_first(bad, check, query_ids, boundaries)} is not a whole "
                "number <= 4, and gdeval.pl stops on it (format error). Fix: whole labels up "
                "to 4, or another preset (ranx's ndcg_burges has the same gain)"
            )
    return labels, keep


# ------------------------------------------------------------------------------ relevance
def relevance(rel: str, labels: np.ndarray) -> np.ndarray:
    """Binary relevance (0.0 / 1.0) of each label for AP, P@k and RR: ``rel=letor`` counts labels
    1 and 2 only (the LETOR scripts); a number ``t`` counts labels ``>= t``."""
    if rel == "letor":
        return ((labels == 1.0) | (labels == 2.0)).astype(np.float64)
    return (labels >= float(rel)).astype(np.float64)


# ------------------------------------------------------------------------------ ties
def tie_key(
    ties: str,
    scores: np.ndarray,
    boundaries: np.ndarray,
    *,
    ranked_end: np.ndarray | None = None,
    doc_ids: np.ndarray | None = None,
    values: np.ndarray | None = None,
) -> tuple[np.ndarray, bool]:
    """The tie rule ``ties`` (canonical text) as ``(key, average)``.

    Documents are ranked by score descending, then ``key`` ascending, then their order in the
    input; ``average`` is True for ``ties=average`` (each group of tied scores shares its mean;
    the kernels compute the expectation). ``values`` are the per-document gains (ndcg family) or
    relevance (map, p, mrr) that ``pessimistic`` (worse first) and ``optimistic`` (better first)
    need; ``label_asc`` / ``label_desc`` order tied documents by their label (``values`` are then
    the labels), one order shared by every measure — the worst and the best order wherever the
    gain and the relevance rule grow with the label (:mod:`.tie_range`). ``docid`` (docno
    descending, as trec_eval) ranks the ids of the documents whose score
    is tied within their query only (ranking millions of strings would cost seconds, and untied
    documents never reach the tie-breaker); ``random:<seed>`` draws one uniform number per
    document from ``numpy.random.default_rng(seed)``.
    """
    n_docs = len(scores)
    if ties in ("input", "average"):
        return np.zeros(n_docs), ties == "average"
    if ties == "docid":
        if doc_ids is None:
            raise ConventionError(
                "ties=docid (trec_eval: docno descending) needs document ids. Fix: pass doc_ids= "
                "(read_letor keeps '#docid = ...'), or use ties=input"
            )
        given = _DOCID_KEYS.get(id(doc_ids))
        if given is not None and given[0]() is doc_ids:
            return given[1], False
        ranks = _docid_ranks(doc_ids)
        if ranks is not None:
            return -ranks, False
        key = np.zeros(n_docs)
        rend = np.ascontiguousarray(boundaries[1:]) if ranked_end is None else ranked_end
        tied = np.zeros(n_docs, dtype=bool)
        if _small.fits(boundaries):
            _small.tie_flags(scores, boundaries, rend, tied)
        else:
            from . import _kernels as K

            run_kernel(K.tie_flags_kernel, boundaries, scores, key, boundaries, rend, (tied,))
        if tied.any():
            sel = np.flatnonzero(tied)
            _, inv = np.unique(np.asarray(doc_ids)[sel].astype(str), return_inverse=True)
            key[sel] = -inv.astype(np.float64)
        return key, False
    if ties in ("label_asc", "label_desc"):
        if values is None:  # pragma: no cover - internal use
            raise ConventionError(f"ties={ties} needs the documents' labels")
        return (values if ties == "label_asc" else -values).astype(np.float64), False
    if ties in ("pessimistic", "optimistic"):
        if values is None:  # pragma: no cover - internal use
            raise ConventionError(f"ties={ties} needs the documents' gains or relevance")
        return (values if ties == "pessimistic" else -values).astype(np.float64), False
    if ties.startswith("random:"):
        seed = int(ties.split(":", 1)[1])
        return np.random.default_rng(seed).random(n_docs), False
    raise ConventionError(f"unknown tie rule {ties!r}")  # pragma: no cover - validated earlier


#: id(doc_ids) -> (weak reference to the array, its length, rank of every id or None)
_DOCID_RANKS: dict[int, tuple[weakref.ref[np.ndarray], int, np.ndarray | None]] = {}


#: id(doc_ids) -> (weak reference to the array, its docid tie key), given by the caller that
#: made both (:func:`give_docid_key`)
_DOCID_KEYS: dict[int, tuple[weakref.ref[np.ndarray], np.ndarray]] = {}


def give_docid_key(doc_ids: np.ndarray, key: np.ndarray) -> None:
    """Make ``key`` the ``ties=docid`` key :func:`tie_key` returns for ``doc_ids`` (the same
    array object, while it lives): ``evaluate_trec`` computes it per query with the documents
    themselves. Any key that orders the tied ranked documents of each query by docno
    descending (smaller key first) does."""
    k = id(doc_ids)

    def forget(ref: weakref.ref[np.ndarray], k: int = k) -> None:
        entry = _DOCID_KEYS.get(k)
        if entry is not None and entry[0] is ref:
            del _DOCID_KEYS[k]

    _DOCID_KEYS[k] = (weakref.ref(doc_ids, forget), key)


def _text_ranks(ids: np.ndarray) -> np.ndarray:
    """Dense 0-based rank of each id in ascending text order (as ``np.unique(ids.astype(str),
    return_inverse=True)``), float64; ASCII ids are compared as bytes, which is faster."""
    try:
        keys = ids.astype("S")
    except (UnicodeEncodeError, ValueError, TypeError):
        keys = ids.astype(str)
    order = np.argsort(keys, kind="stable")
    srt = keys[order]
    new = np.ones(len(srt), dtype=np.int64)
    if len(srt) > 1:
        new[1:] = srt[1:] != srt[:-1]
    ranks = np.empty(len(srt))
    ranks[order] = np.cumsum(new) - 1
    return ranks


def _docid_ranks(doc_ids: Any) -> np.ndarray | None:
    """The rank (0-based, ascending text order, equal ids equal ranks) of every document id, once
    per ``doc_ids`` array: None the first time an array is seen (the caller then ranks only the
    ids of tied documents, cheaper for one call), the ranks of all ids, computed once and kept
    while the array lives, from the second time on. The array is identified by its identity, so
    it must not be changed in place between calls (a dataset's ``doc_ids`` never is)."""
    if not isinstance(doc_ids, np.ndarray):
        return None
    k = id(doc_ids)
    hit = _DOCID_RANKS.get(k)
    if hit is not None and hit[0]() is doc_ids and hit[1] == len(doc_ids):
        if hit[2] is None:
            hit = (hit[0], hit[1], _text_ranks(doc_ids))
            _DOCID_RANKS[k] = hit
        return hit[2]

    def forget(ref: weakref.ref[np.ndarray], k: int = k) -> None:
        entry = _DOCID_RANKS.get(k)
        if entry is not None and entry[0] is ref:
            del _DOCID_RANKS[k]

    try:
        _DOCID_RANKS[k] = (weakref.ref(doc_ids, forget), len(doc_ids), None)
    except TypeError:  # pragma: no cover - arrays take weak references
        pass
    return None


# ------------------------------------------------------------------------------ short lists
def apply_short(m: Measure, values: np.ndarray, n_ranked: np.ndarray) -> np.ndarray:
    """The ``short`` rule of a fixed cut-off k larger than the ranked list's length n:
    ``zero`` gives 0 there; ``clip`` (the ndcg family: NDCG@k = NDCG@n, since DCG and ideal DCG
    stop at the list's end) and ``pad`` (P@k divides by k, :func:`precision_divisor`) change
    nothing here. ``n_ranked`` broadcasts against ``values``."""
    if m.cutoff is not None and m.cutoff.k is not None and m.get("short") == "zero":
        values = np.where(m.cutoff.k > n_ranked, 0.0, values)
    return values


def precision_divisor(m: Measure, k: np.ndarray, n_ranked: np.ndarray) -> np.ndarray:
    """What P@k divides the number of relevant documents in the top k by: ``k`` (``short=pad``,
    and ``zero`` before :func:`apply_short`), or ``min(k, n)`` (``short=clip``, a fraction of
    the list, or no cut-off: the whole list)."""
    if m.cutoff is None or m.cutoff.k is None or m.get("short") == "clip":
        return np.minimum(k, n_ranked)
    return k


# ------------------------------------------------------------------------------ empty queries
def normalise(dcg: np.ndarray, idcg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(DCG / ideal DCG, empty)``: a query is *empty* when its ideal DCG is 0 (no document with
    a non-zero gain); its value is left as DCG / 1 for :func:`apply_empty` to set."""
    empty = idcg == 0.0
    return dcg / np.where(empty, 1.0, idcg), empty


def apply_empty(
    m: Measure,
    values: np.ndarray,
    empty: np.ndarray,
    query_ids: Sequence[str] | np.ndarray | None,
    *,
    where: str = "",
) -> np.ndarray:
    """Set the value of the empty queries by the measure's ``empty`` rule, in place: ``zero``,
    ``one``, ``skip`` (NaN, left out of means) or ``error`` (:class:`EmptyQueryError` naming the
    first queries; ``where`` adds context to the message, e.g. which prefix). Returns
    ``values``."""
    if not empty.any():
        return values
    rule = m.get("empty")
    if rule == "zero":
        values[empty] = 0.0
    elif rule == "one":
        values[empty] = 1.0
    elif rule == "skip":
        values[empty] = np.nan
    else:
        idx = np.flatnonzero(empty)
        names = [str(query_ids[i]) if query_ids is not None else f"#{i}" for i in idx[:5]]
        more = f" and {len(idx) - 5} more" if len(idx) > 5 else ""
        what = (
            "no document with a positive gain (IDCG = 0)"
            if m.info.family == "gain"
            else "no relevant document"
        )
        raise EmptyQueryError(
            f"{m}: {len(idx)} quer{'y has' if len(idx) == 1 else 'ies have'} {what}{where}: "
            f"query {', '.join(names)}{more} (empty=error). Fix: remove such queries or choose "
            "empty=zero, one or skip"
        )
    return values


# ------------------------------------------------------------------------------ DCG
def cumulative_dcg(ranked_gains: np.ndarray, discounts: Any) -> np.ndarray:
    """DCG of every leading part of ranked lists: ``out[..., r] = Σ_{p ≤ r} G_p D(p)`` for
    r = 0..m (``out[..., 0] = 0``), from gains in ranking order ``(..., m)`` and the discount
    table ``D(1..m)`` (:meth:`Discount.table`; one row per list where it depends on the list).
    The ideal DCG is the same sum over :func:`ideal_gains`. Summed left to right, as the kernels
    do. A sum that overflows becomes inf silently: the caller reports it (which query, and the
    fix), as the compiled kernels do."""
    g = np.asarray(ranked_gains, dtype=np.float64)
    d = np.asarray(discounts, dtype=np.float64)
    prod = g * d
    out = np.empty((*prod.shape[:-1], prod.shape[-1] + 1))
    out[..., 0] = 0.0
    with np.errstate(over="ignore"):
        np.cumsum(prod, axis=-1, out=out[..., 1:])
    return out


def dcg_at(ranked_gains: np.ndarray, discounts: Any, k: Any, n: Any) -> np.ndarray:
    """DCG@k of ranked lists, ``Σ_{p ≤ min(k, n)} G_p D(p)`` (:func:`cumulative_dcg`).

    ``ranked_gains``: one list ``(m,)`` or rows ``(Q, m)`` of gains in ranking order, holding
    at least the first ``min(k, n)`` of each list (what lies beyond is never read);
    ``discounts``: the table ``D(1..m)``, or one row per list; ``k``: the cut-off (a number, one
    per list ``(Q,)``, or several per list ``(Q, J)``; the whole list is ``k = n``, see
    :func:`cutoff_k`); ``n``: the length of each list. A cut-off beyond the list stops at its end
    (the ``clip`` rule: DCG@k = DCG@n; ``short=zero`` is :func:`apply_short`). The ideal DCG@k
    is ``dcg_at(ideal_gains(gains), discounts, k, N)``. Returns one value per cut-off, in the
    shape of ``k`` broadcast against the lists."""
    cum = cumulative_dcg(ranked_gains, discounts)
    k = np.asarray(k, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    if cum.ndim == 1:
        return np.asarray(cum[np.minimum(k, n)])
    rows = np.arange(cum.shape[0])
    if k.ndim == 2:
        return np.asarray(cum[rows[:, None], np.minimum(k, n.reshape(-1, 1) if n.ndim else n)])
    return np.asarray(cum[rows, np.minimum(k, n)])


def ideal_gains(gains: np.ndarray) -> np.ndarray:
    """The gains of the ideal ranking: each list's gains (the last axis) in descending order.
    The ideal sorts by gain, not by label; equal gains are interchangeable."""
    return -np.sort(-np.asarray(gains, dtype=np.float64), axis=-1)
