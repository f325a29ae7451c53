"""Counterfactual DCG@k and NDCG@k of a new ranker, estimated from the click log of a stochastic
logging policy: IPS, SNIPS, doubly robust and the click-model (direct) estimate, each with a
confidence interval.

**What is estimated.** Clicks follow a position-based model with an affine trust-bias term: a
document ``d`` shown at position ``j`` is clicked with probability ``α_j·r_d + β_j``, where
``r_d`` in ``[0, 1]`` is its *click relevance* (the probability of a click once examined, for the
PBM ``α_j = θ_j`` is the examination probability and ``β_j = 0``). The new ranker orders each
query's documents by descending score (ties: the dataset's row order). Its DCG@k on query ``q``
is ``Σ_{j ≤ k} D(j)·r_{π(j)}`` with ``π(j)`` the document it puts at position ``j`` and ``D`` the
measure's discount (``log``: ``1/log2(j + 1)``); the *gain is the click relevance itself* (linear
— a non-linear gain of an estimated relevance would be biased, so ``gain=`` is refused). The value
reported is the mean over the log's **sessions** (each session weighs its query once: the query
distribution is the logged one).

**NDCG conventions.** NDCG@k of a session is its query's DCG@k divided by a normaliser ``Z_q``
that does not depend on the clicks (so the estimate stays unbiased): ``normaliser="max"`` (the
default) is the DCG@k of a list whose every document is fully relevant, ``Σ_{j ≤ min(k, n_q)}
D(j)``; an array of per-document relevances (one per dataset row, for instance the simulator's
true click relevances) gives ``Z_q`` = the ideal DCG@k of those relevances. A query whose ``Z_q``
is 0 is *empty*: ``empty="skip"`` (default) leaves its sessions out of the mean, ``"zero"``
counts them as 0.

**The estimators** (one value ``V_s`` per session; the estimate is their mean). ``x̂ = (c −
β_j)/α_j`` is a shown document's de-biased click; ``w = 1[π(j) = d] / p`` its item-position
importance weight, ``p`` the logging policy's probability of showing ``d`` at ``j`` (the log's
``propensity``).

* ``ips`` — item-position inverse propensity scoring (Li et al., "Offline evaluation of ranking
  policies with click models", KDD 2018): ``V_s = Σ_{j ≤ k} D(j)·w_{sj}·x̂_{sj}``. Unbiased when
  every document the new ranker puts at ``j ≤ k`` could be shown there by the logging policy.
* ``snips`` — the self-normalised version: per position the weighted clicks are divided by the
  weights' sum instead of the number of sessions (``Σ_j D(j)·Σ_s w x̂ / Σ_s w``); consistent, not
  unbiased; lower variance when weights are large. Interval by the delta method.
* ``dr`` — doubly robust: a relevance model ``r̂`` gives the direct term ``Σ_j D(j)·r̂_{π(j)}``,
  corrected by ``Σ_j D(j)·w_{sj}·(x̂_{sj} − r̂_{d_{sj}})``; unbiased for any ``r̂`` fixed apart
  from the session, with less variance when ``r̂`` is close to ``r``. ``r̂`` is given
  (``relevance_model``), or else **cross-fitted**: each query's sessions are split in two halves
  by a seeded draw (alternately, in a random order) and each half uses the click-model estimate
  (``cm``) of the other half.
* ``cm`` — the click-model (direct) estimate ``Σ_j D(j)·r̂_{π(j)}`` with ``r̂_d = Σ (c − β_j) /
  Σ α_j`` over the impressions of ``d`` (clipped to ``[0, 1]``; a document never shown has
  ``r̂ = 0``), or the given ``relevance_model`` (for instance the attractiveness of a click model
  fitted by :func:`ndcglab.clicks.click_models.fit_click_model`; NaN counts as 0). Biased when
  documents the new ranker promotes were rarely shown; smallest variance. Interval: the basic
  bootstrap over sessions (Poisson weights; ``[2v − q_hi, 2v − q_lo]`` with ``q`` the bootstrap
  quantiles, which carries the estimate's own small-sample bias into the interval).

Intervals of ``ips`` and ``dr`` are ``mean ± z·sd/√n`` over the sessions' values (central limit
theorem; ``z`` the normal quantile of ``level``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConventionError, DataFormatError, SpecError
from .logs import ClickLog

__all__ = [
    "ESTIMATORS",
    "CounterfactualEstimate",
    "counterfactual_estimate",
    "new_ranks",
    "relevance_from_clicks",
]

#: the estimators of :func:`counterfactual_estimate`, each with a one-line summary
ESTIMATORS: dict[str, str] = {
    "ips": "item-position inverse propensity scoring (unbiased)",
    "snips": "self-normalised item-position IPS (consistent, lower variance)",
    "dr": "doubly robust: click-model estimate + IPS correction (unbiased)",
    "cm": "click-model (direct) estimate (biased, lowest variance)",
}


@dataclass(frozen=True)
class CounterfactualEstimate:
    """An estimate of a new ranker's DCG@k or NDCG@k from clicks.

    ``value`` the estimate, ``stderr`` its standard error, ``low``/``high`` the interval at
    ``level``; ``n_sessions`` the sessions averaged (after the empty rule) and ``n_queries`` their
    distinct queries; ``per_session`` the sessions' values (``ips``, ``dr``, ``cm``) or their
    influence values (``snips``), whose mean and spread give the interval.
    """

    estimator: str
    measure: str
    value: float
    stderr: float
    low: float
    high: float
    level: float
    n_sessions: int
    n_queries: int
    per_session: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimator": self.estimator,
            "measure": self.measure,
            "value": self.value,
            "stderr": self.stderr,
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "n_sessions": self.n_sessions,
            "n_queries": self.n_queries,
        }


def new_ranks(scores: np.ndarray, boundaries: np.ndarray) -> np.ndarray:
    """The 1-based rank of every row within its query under descending ``scores``; ties keep the
    rows' order (the ``input`` tie rule)."""
    scores = np.asarray(scores, dtype=np.float64)
    b = np.asarray(boundaries, dtype=np.int64)
    n = len(scores)
    qid = np.repeat(np.arange(len(b) - 1), np.diff(b))
    order = np.lexsort((np.arange(n), -scores, qid))
    ranks = np.empty(n, dtype=np.int64)
    ranks[order] = np.arange(n) - b[qid[order]] + 1
    return ranks


def _position_params(examination: Any, trust_offset: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``α_1..α_k`` and ``β_1..β_k`` (index 0 = position 1)."""
    alpha = np.ones(k) if examination is None else np.asarray(examination, dtype=np.float64)
    beta = np.zeros(k) if trust_offset is None else np.asarray(trust_offset, dtype=np.float64)
    for name, arr in (("examination", alpha), ("trust_offset", beta)):
        if arr.ndim != 1 or len(arr) < k:
            raise SpecError(
                f"{name}= needs one value per shown position 1..{k}, got shape {arr.shape}. "
                f"Fix: give {name}= as a list of {k} numbers"
            ).naming(name)
    alpha, beta = alpha[:k], beta[:k]
    if not (np.all(np.isfinite(alpha)) and np.all(alpha > 0)):
        raise SpecError(
            "examination= must be positive at every position (a position never examined gives "
            "no information on relevance). Fix: give examination probabilities in (0, 1]"
        ).naming("examination")
    return alpha, beta


def relevance_from_clicks(
    log: ClickLog,
    n_docs: int,
    *,
    examination: Any = None,
    trust_offset: Any = None,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """The click-model estimate of every document's click relevance: ``r̂_d = Σ (c − β_j) /
    Σ α_j`` over the rows of ``log`` that show ``d`` (optionally weighted per row), clipped to
    ``[0, 1]``; 0 for a document never shown. Under the model ``P(c) = α_j·r_d + β_j`` it is the
    method-of-moments estimate (the PBM's maximum-likelihood estimate when ``α`` is known and
    every impression is at one position)."""
    k = max(log.k, 1)
    alpha, beta = _position_params(examination, trust_offset, k)
    j = log.position.astype(np.int64) - 1
    w = np.ones(len(log)) if weights is None else weights
    num = np.bincount(log.doc, weights=w * (log.click - beta[j]), minlength=n_docs)
    den = np.bincount(log.doc, weights=w * alpha[j], minlength=n_docs)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    return np.clip(r, 0.0, 1.0)


def _measure(spec: str, k_shown: int) -> tuple[str, bool, int, np.ndarray]:
    """(canonical name, is NDCG, k, discounts D(1..k))."""
    from ..measures import get_discount, parse_measure

    m = parse_measure(spec)
    if m.name not in ("dcg", "ndcg"):
        raise SpecError(
            f"counterfactual estimates exist for dcg@k and ndcg@k, not {spec!r}. "
            "Fix: measure='dcg@5' or 'ndcg@10'"
        ).naming("measure")
    if "gain" in m.options:
        raise SpecError(
            f"{spec!r}: the gain of a counterfactual estimate is the click relevance itself (a "
            "non-linear gain of an estimate is biased). Fix: drop gain="
        ).naming("measure")
    cut = m.cutoff
    if cut is None:
        k = k_shown
    elif cut.k is None:
        raise SpecError(
            f"{spec!r}: a fractional cut-off is not supported for clicks. Fix: a whole k, e.g. @5"
        ).naming("measure")
    else:
        k = int(cut.k)
    if k > k_shown:
        raise SpecError(
            f"{spec!r}: cut-off {k} is beyond the {k_shown} positions the log shows (nothing is "
            f"known of clicks there). Fix: a cut-off of at most {k_shown}"
        ).naming("measure")
    disc = np.asarray(get_discount(str(m.options.get("discount", "log"))).table(k), float)
    return str(m), m.name == "ndcg", k, disc


def _normalisers(
    normaliser: Any, ranks_ideal_d: np.ndarray, boundaries: np.ndarray, k: int
) -> np.ndarray:
    """``Z_q`` per query: ``"max"`` or the ideal DCG@k of per-row relevances."""
    b = boundaries
    nq = len(b) - 1
    lengths = np.diff(b)
    cum = np.concatenate(([0.0], np.cumsum(ranks_ideal_d)))
    if isinstance(normaliser, str):
        if normaliser != "max":
            raise ConventionError(
                f"unknown normaliser {normaliser!r}. Fix: normaliser='max' or an array of "
                "per-document relevances"
            ).naming("normaliser")
        return np.asarray(cum[np.minimum(lengths, k)], dtype=np.float64)
    rel = np.asarray(normaliser, dtype=np.float64)
    if rel.shape != (int(b[-1]),):
        raise ConventionError(
            f"normaliser= has shape {rel.shape}; one relevance per dataset row "
            f"({int(b[-1])}) is needed. Fix: give the rows' relevances, or normaliser='max'"
        ).naming("normaliser")
    qid = np.repeat(np.arange(nq), lengths)
    ideal = new_ranks(rel, b)
    disc = np.zeros(int(b[-1]))
    top = ideal <= k
    disc[top] = ranks_ideal_d[ideal[top] - 1]
    return np.bincount(qid, weights=rel * disc, minlength=nq)


def counterfactual_estimate(
    log: ClickLog,
    scores: Any,
    boundaries: Any,
    *,
    measure: str = "dcg@5",
    estimator: str = "ips",
    examination: Any = None,
    trust_offset: Any = None,
    relevance_model: Any = None,
    normaliser: Any = "max",
    empty: str = "skip",
    level: float = 0.95,
    n_bootstrap: int = 200,
    seed: int = 0,
) -> CounterfactualEstimate:
    """Estimate the DCG@k or NDCG@k of the ranker that gave ``scores`` from ``log``.

    ``log`` (:class:`~ndcglab.clicks.ClickLog`, aligned to the dataset: ``doc`` is a row of
    ``scores``), ``scores`` one per dataset row and ``boundaries`` the dataset's query boundaries;
    ``examination`` ``α_1..α_k`` and ``trust_offset`` ``β_1..β_k`` per position (default 1 and 0:
    clicks taken as relevance); the conventions and the estimators are in the module docstring.
    ``ips``, ``snips`` and ``dr`` need the log's propensities (no NaN).
    """
    if estimator not in ESTIMATORS:
        raise SpecError(
            f"unknown estimator {estimator!r}; known: {', '.join(ESTIMATORS)}. Fix: estimator='dr'"
        ).naming("estimator")
    if empty not in ("skip", "zero"):
        raise ConventionError(
            f"unknown empty rule {empty!r}. Fix: empty='skip' or empty='zero'"
        ).naming("empty")
    if not 0 < level < 1:
        raise SpecError(f"level must be in (0, 1), got {level}").naming("level")
    b = np.asarray(boundaries, dtype=np.int64)
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    n_docs = int(b[-1])
    if len(s) != n_docs:
        raise DataFormatError(
            f"{len(s)} scores for {n_docs} documents",
            fix="give one score per document of the dataset the log was made from",
        )
    if len(log) == 0:
        raise DataFormatError("the click log has no rows", fix="give a log with sessions")
    k_shown = max(log.k, int(log.position.max()))
    name, is_ndcg, k, disc = _measure(measure, k_shown)
    alpha, beta = _position_params(examination, trust_offset, k_shown)
    if estimator in ("ips", "snips", "dr"):
        bad = np.flatnonzero(~(log.propensity > 0))
        if len(bad):
            raise DataFormatError(
                f"row {int(bad[0]) + 1}: propensity {float(log.propensity[bad[0]])!r} unknown or "
                f"not positive; estimator {estimator!r} divides by it",
                path="<click log>",
                fix="log the logging policy's probabilities, or use estimator='cm'",
            )

    ranks = new_ranks(s, b)
    nq = len(b) - 1
    qid_row = np.repeat(np.arange(nq), np.diff(b))
    # the rows each query's new ranking puts at positions 1..k: top[q, j] (−1 when short)
    top = np.full((nq, k), -1, dtype=np.int64)
    in_top = ranks <= k
    top[qid_row[in_top], ranks[in_top] - 1] = np.flatnonzero(in_top)

    starts = log.session_starts()
    n_sess = len(starts) - 1
    sess = np.repeat(np.arange(n_sess), np.diff(starts))
    sess_query = log.query[starts[:-1]]
    j = log.position.astype(np.int64) - 1
    d_j = np.where(j < k, disc[np.minimum(j, k - 1)], 0.0)
    x_hat = (log.click - beta[j]) / alpha[j]
    match = (ranks[log.doc] == j + 1) & (j < k)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(match, 1.0 / log.propensity, 0.0)

    # normaliser per session and the empty rule
    if is_ndcg:
        z = _normalisers(normaliser, disc, b, k)[sess_query]
        empty_s = z <= 0
        scale = np.where(empty_s, 0.0, 1.0 / np.where(empty_s, 1.0, z))
    else:
        empty_s = np.zeros(n_sess, dtype=bool)
        scale = np.ones(n_sess)
    keep = ~empty_s if empty == "skip" else np.ones(n_sess, dtype=bool)
    if not keep.any():
        raise ConventionError(
            "every logged query is empty (normaliser 0): nothing to average. Fix: "
            "normaliser='max', or empty='zero'"
        ).naming("normaliser", "empty")

    z_level = _normal_quantile(0.5 + level / 2)

    def direct(rel: np.ndarray) -> np.ndarray:
        """Σ_j D(j)·rel[π(j)] per query."""
        vals = np.where(top >= 0, rel[np.maximum(top, 0)], 0.0)
        return np.asarray(vals @ disc, dtype=np.float64)

    if estimator == "ips":
        v: np.ndarray = np.bincount(sess, weights=d_j * w * x_hat, minlength=n_sess) * scale
        return _mean_ci(estimator, name, v[keep], sess_query[keep], level, z_level)
    if estimator == "snips":
        return _snips(
            name, sess, j, k, d_j * w * x_hat * scale[sess], w, keep, sess_query, level, z_level
        )
    if estimator == "dr":
        dm: np.ndarray
        corr: np.ndarray
        if relevance_model is not None:
            r_hat = _relevance_array(relevance_model, n_docs)
            dm = direct(r_hat)[sess_query]
            corr = np.bincount(sess, weights=d_j * w * (x_hat - r_hat[log.doc]), minlength=n_sess)
        else:
            # each query's sessions, in a seeded random order, alternately in halves 0 and 1
            draw = np.random.default_rng([seed, 0xC11C]).random(n_sess)
            fold = np.empty(n_sess, dtype=np.int64)
            fold[np.lexsort((draw, sess_query))] = np.arange(n_sess) % 2
            dm = np.zeros(n_sess)
            corr = np.zeros(n_sess)
            for f in (0, 1):
                half = (fold != f)[sess].astype(np.float64)
                r_hat = relevance_from_clicks(
                    log, n_docs, examination=alpha, trust_offset=beta, weights=half
                )
                mine = fold == f
                dm[mine] = direct(r_hat)[sess_query[mine]]
                rows = mine[sess]
                corr += np.bincount(
                    sess[rows],
                    weights=(d_j * w * (x_hat - r_hat[log.doc]))[rows],
                    minlength=n_sess,
                )
        v = (dm + corr) * scale
        return _mean_ci(estimator, name, v[keep], sess_query[keep], level, z_level)
    # cm: the direct estimate, interval by the basic bootstrap over sessions
    if relevance_model is not None:
        r_hat = _relevance_array(relevance_model, n_docs)
        v = direct(r_hat)[sess_query] * scale
        return _mean_ci(estimator, name, v[keep], sess_query[keep], level, z_level)
    r_hat = relevance_from_clicks(log, n_docs, examination=alpha, trust_offset=beta)
    v = direct(r_hat)[sess_query] * scale
    value = float(v[keep].mean())
    rng = np.random.default_rng([seed, 0xB007])
    boots = np.empty(n_bootstrap)
    kept_sessions = np.flatnonzero(keep)
    for i in range(n_bootstrap):
        ws = rng.poisson(1.0, n_sess).astype(np.float64)
        rb = relevance_from_clicks(
            log, n_docs, examination=alpha, trust_offset=beta, weights=ws[sess]
        )
        vb = direct(rb)[sess_query[kept_sessions]] * scale[kept_sessions]
        wk = ws[kept_sessions]
        boots[i] = float(vb @ wk / max(wk.sum(), 1.0))
    q_lo, q_hi = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
    lo, hi = 2 * value - q_hi, 2 * value - q_lo  # the basic (reverse percentile) interval
    return CounterfactualEstimate(
        estimator,
        name,
        value,
        float(boots.std(ddof=1)) if n_bootstrap > 1 else float("nan"),
        float(lo),
        float(hi),
        level,
        int(keep.sum()),
        len(np.unique(sess_query[keep])),
        v[keep],
    )


def _relevance_array(relevance_model: Any, n_docs: int) -> np.ndarray:
    """One relevance per row; NaN (a document a fitted click model never saw) counts as 0."""
    r = np.nan_to_num(np.asarray(relevance_model, dtype=np.float64).reshape(-1), nan=0.0)
    if len(r) != n_docs:
        raise SpecError(
            f"relevance_model= has {len(r)} values for {n_docs} documents. Fix: one estimated "
            "click relevance per dataset row"
        ).naming("relevance_model")
    return r


def _normal_quantile(p: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(p))


def _mean_ci(
    estimator: str,
    name: str,
    v: np.ndarray,
    queries: np.ndarray,
    level: float,
    z: float,
) -> CounterfactualEstimate:
    n = len(v)
    mean = float(v.mean())
    se = float(v.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    return CounterfactualEstimate(
        estimator, name, mean, se, mean - z * se, mean + z * se, level, n,
        len(np.unique(queries)), v,
    )  # fmt: skip


def _snips(
    name: str,
    sess: np.ndarray,
    j: np.ndarray,
    k: int,
    x: np.ndarray,
    w: np.ndarray,
    keep: np.ndarray,
    sess_query: np.ndarray,
    level: float,
    z: float,
) -> CounterfactualEstimate:
    """Σ_j Σ_s x_sj / Σ_s w_sj over the kept sessions, with the delta-method interval."""
    rows = keep[sess]
    n = int(keep.sum())
    jj = np.minimum(j[rows], k - 1)
    num = np.bincount(jj, weights=x[rows], minlength=k)
    den = np.bincount(jj, weights=w[rows], minlength=k)
    ratio = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    value = float(ratio.sum())
    wbar = den / n
    # influence of each session: Σ_j (x_sj − ratio_j·w_sj) / w̄_j, plus the value
    contrib = np.where(wbar[jj] > 0, (x[rows] - ratio[jj] * w[rows]) / np.where(
        wbar[jj] > 0, wbar[jj], 1.0), 0.0)  # fmt: skip
    idx = np.cumsum(keep) - 1
    infl = np.bincount(idx[sess[rows]], weights=contrib, minlength=n) + value
    se = float(infl.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
    return CounterfactualEstimate(
        "snips", name, value, se, value - z * se, value + z * se, level, n,
        len(np.unique(sess_query[keep])), infl,
    )  # fmt: skip
