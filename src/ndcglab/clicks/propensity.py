"""Position-bias propensities: the probability that a user examines each position, estimated
from clicks, relative to the top (``p_1 = 1``; clicks only fix them up to a common factor).

Under the position-based model a click at position ``r`` on document ``d`` happens with
probability ``p_r alpha_d``; inverse-propensity estimators divide each click by ``p_r``. The
methods (:func:`estimate_propensities`):

* ``truth`` — the simulator's examination probabilities (``meta['examination']`` of a simulated
  PBM or trust-bias log).
* ``randtop`` — result randomisation (RandTop-n): the top ``n`` are shuffled uniformly, so every
  position ``r <= n`` shows documents of the same expected attractiveness and
  ``p_r / p_1 = CTR_r / CTR_1`` (clicks per impression at each position).
* ``swap`` — swap interventions (Joachims, Swaminathan and Schnabel, "Unbiased learning-to-rank
  with biased feedback", WSDM 2017): the same documents are shown at position 1 and at ``r``, so
  ``p_r / p_1 = sum CTR(q, d, r) / sum CTR(q, d, 1)`` over the (query, document) pairs seen at
  both.
* ``harvest`` — intervention harvesting (Agarwal, Zaitsev, Wang, Li, Najork and Joachims,
  "Estimating position bias without intrusive interventions", WSDM 2019): logs of several
  rankers place one (query, document) at different positions. For each pair of positions
  ``(r, r')`` the ``N`` pairs seen at both give ``c_r`` and ``c_r'``, their summed click rates
  at each position. The paper's AllPairs estimate maximises, over ``p`` and one relevance mass
  ``R`` per pair of positions, the sum of ``c_r log(p_r R) + (N - c_r) log(1 - p_r R)`` and the
  same for ``r'``; it is started from the weighted least-squares fit of ``log p_r - log p_r' =
  log(c_r / c_r')`` (weights ``1 / (1/C_r + 1/C_r')``, ``C`` the clicks behind each sum).
  Positions linked to the top by no chain of pairs are NaN.
* ``trust_swap`` — the trust-bias terms from swap interventions: :func:`swap_affine_terms`
  (``estimate_propensities`` returns its ``alpha``; the offsets ``beta`` come with it there).
* ``regression_em`` — regression EM (Wang, Golbandi, Bendersky, Metzler and Najork, "Position
  bias estimation for unbiased learning to rank in personal search", WSDM 2018): the PBM's EM
  in which the relevance of a document is a logistic regression on its features, refitted in
  each M-step to the posterior relevance of its impressions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DataFormatError, SpecError
from .logs import ClickLog, ClickStats

__all__ = [
    "COUNT_METHODS",
    "PROPENSITY_METHODS",
    "estimate_propensities",
    "swap_affine_terms",
    "true_propensities",
]

PROPENSITY_METHODS = ("truth", "randtop", "swap", "harvest", "regression_em", "trust_swap")
#: the methods that read only the counts per (query, document, position) (a ClickStats will do)
COUNT_METHODS = ("swap", "harvest", "trust_swap")


def true_propensities(log: ClickLog, *, relative: bool = True) -> np.ndarray:
    """The simulator's examination probability per position ``1..k`` (``meta['examination']``);
    divided by position 1's with ``relative``."""
    exam = log.meta.get("examination")
    if exam is None:
        raise DataFormatError(
            f"the log has no true examination probabilities (click model "
            f"{log.meta.get('click_model', 'unknown')})",
            fix="simulate with pbm(...) or trust(...), or estimate them (randtop, swap, "
            "harvest, regression_em)",
        )
    p = np.asarray(exam, dtype=np.float64)
    return p / p[0] if relative else p


def estimate_propensities(
    log: ClickLog | ClickStats, method: str = "harvest", *, dataset: Any = None,
    n: int | None = None, iterations: int = 50,
) -> np.ndarray:  # fmt: skip
    """Propensities per position ``1..k`` relative to position 1 by ``method`` (see the module
    docstring): ``truth``, ``randtop`` (``n``: the shuffled top, default the largest position
    whose rows were all randomised), ``swap``, ``harvest``, ``regression_em`` (needs
    ``dataset``, the features; ``iterations`` of EM). NaN where the log cannot tell. ``log`` may
    be a :class:`~ndcglab.clicks.ClickStats` for ``swap`` and ``harvest`` (the same estimate as
    from the log it sums)."""
    if isinstance(log, ClickStats):
        if method not in COUNT_METHODS:
            raise SpecError(
                f"the propensity method {method!r} reads the log's rows (its propensities, "
                f"metadata or features); click counts estimate {' and '.join(COUNT_METHODS)} "
                "only. Fix: give the log itself, or use swap or harvest"
            )
        if method == "trust_swap":
            return swap_affine_terms(log)[0]
        return _harvest(log, log.k, top_only=method == "swap")
    if method == "trust_swap":
        return swap_affine_terms(log)[0]
    if method == "truth":
        return true_propensities(log)
    k = log.k
    if method == "randtop":
        return _randtop(log, k, n)
    if method == "swap":
        return _harvest(log.stats(), k, top_only=True)
    if method == "harvest":
        return _harvest(log.stats(), k, top_only=False)
    if method == "regression_em":
        if dataset is None:
            raise SpecError(
                "regression_em needs the features of the logged documents. Fix: give dataset="
            ).naming("dataset")
        return _regression_em(log, dataset, k, iterations)
    raise SpecError(
        f"unknown propensity method {method!r}. Fix: use one of {', '.join(PROPENSITY_METHODS)}"
    )


def _randtop(log: ClickLog, k: int, n: int | None) -> np.ndarray:
    if n is None:
        shuffled = np.bincount(log.position - 1, weights=log.propensity < 1, minlength=k)[:k]
        shown = np.bincount(log.position - 1, minlength=k)[:k]
        full = np.flatnonzero((shuffled == shown) & (shown > 0))
        n = int(full.max()) + 1 if len(full) and full[0] == 0 else k
    imp, clk = log.stats().per_position()
    out = np.full(k, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        ctr = clk / np.maximum(imp, 1)
    if ctr[0] > 0:
        out[:n] = ctr[:n] / ctr[0]
    return out


def _harvest(st: ClickStats, k: int, *, top_only: bool) -> np.ndarray:
    """Pairwise ratios of summed click rates over (query, doc) pairs seen at both positions,
    combined by weighted least squares on log p with p_1 = 1; for ``harvest`` (not
    ``top_only``) refined by the AllPairs likelihood (:func:`_all_pairs`)."""
    docs, inv = np.unique(st.doc, return_inverse=True)
    ctr_table = np.full((len(docs), k), np.nan)
    clk_table = np.zeros((len(docs), k))
    ctr_table[inv, st.position - 1] = st.clicks / st.impressions
    clk_table[inv, st.position - 1] = st.clicks
    rows: list[np.ndarray] = []
    target: list[float] = []
    weight: list[float] = []
    sums: list[tuple[int, int, float, float, float]] = []
    for r in range(k):
        for r2 in range(r + 1, k):
            if top_only and r != 0:
                continue
            both = ~np.isnan(ctr_table[:, r]) & ~np.isnan(ctr_table[:, r2])
            c1, c2 = ctr_table[both, r].sum(), ctr_table[both, r2].sum()
            n1, n2 = clk_table[both, r].sum(), clk_table[both, r2].sum()
            if c1 <= 0 or c2 <= 0:
                continue
            row = np.zeros(k)
            row[r], row[r2] = 1.0, -1.0
            rows.append(row)
            target.append(float(np.log(c1 / c2)))
            weight.append(1.0 / (1.0 / n1 + 1.0 / n2))
            sums.append((r, r2, float(c1), float(c2), float(both.sum())))
    out = np.full(k, np.nan)
    out[0] = 1.0
    if not rows:
        return out
    a = np.asarray(rows)
    # positions joined to the top through the pairs (the others are not identified)
    linked = np.zeros(k, dtype=bool)
    linked[0] = True
    changed = True
    while changed:
        changed = False
        for row in a:
            i, j = np.flatnonzero(row)
            if linked[i] != linked[j]:
                linked[i] = linked[j] = True
                changed = True
    w = np.sqrt(np.asarray(weight))
    cols = np.flatnonzero(linked)[1:]  # log p_1 = 0
    keep = np.abs(a[:, ~linked]).sum(axis=1) == 0
    if len(cols) == 0:
        return out
    sol, *_ = np.linalg.lstsq(a[keep][:, cols] * w[keep, None],
                              np.asarray(target)[keep] * w[keep], rcond=None)  # fmt: skip
    if top_only:
        out[cols] = np.exp(sol)
        return out
    pairs = [pr for pr, kept in zip(sums, keep) if kept]
    out[cols] = np.exp(_all_pairs(pairs, cols, sol))
    return out


def _all_pairs(
    pairs: list[tuple[int, int, float, float, float]], cols: np.ndarray, start: np.ndarray
) -> np.ndarray:
    """Agarwal et al.'s AllPairs estimate of log p (p_1 = 1) for the positions ``cols``: the
    maximum over p and one relevance mass R per pair of positions of the sum over pairs of
    ``c_r log(p_r R) + (N - c_r) log(1 - p_r R)`` and the same for ``r'`` (``c``: summed click
    rates of the ``N`` (query, document) pairs seen at both positions), started from ``start``
    (the least-squares estimate)."""
    from scipy.optimize import minimize

    index = {int(c): i for i, c in enumerate(cols)}
    n_p = len(cols)
    pos_a = np.array([index.get(r, -1) for r, _, _, _, _ in pairs])
    pos_b = np.array([index.get(r2, -1) for _, r2, _, _, _ in pairs])
    c_a = np.array([c for _, _, c, _, _ in pairs])
    c_b = np.array([c for _, _, _, c, _ in pairs])
    n = np.array([m for _, _, _, _, m in pairs])

    def log_p(x: np.ndarray, where: np.ndarray) -> np.ndarray:
        return np.where(where >= 0, x[np.maximum(where, 0)], 0.0)

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        lp, lr = x[:n_p], x[n_p:]
        grad = np.zeros_like(x)
        value = 0.0
        for where, c in ((pos_a, c_a), (pos_b, c_b)):
            lq = np.minimum(log_p(lp, where) + lr, -1e-12)
            q = np.exp(lq)
            value -= float((c * lq + (n - c) * np.log1p(-q)).sum())
            d = -(c - (n - c) * q / (1.0 - q))  # d(-loglik)/d(log q)
            grad[n_p:] += d
            np.add.at(grad, np.maximum(where, 0)[where >= 0], d[where >= 0])
        return value, grad

    p0 = np.exp(log_p(start, pos_a))
    r0 = np.log(np.clip(c_a / np.maximum(n * p0, 1e-300), 1e-12, 0.999))
    x0 = np.concatenate([start, r0])
    bounds = [(-30.0, 5.0)] * n_p + [(-30.0, 0.0)] * len(pairs)
    res = minimize(objective, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": 1000})  # fmt: skip
    return np.asarray(res.x[:n_p])


def _regression_em(log: ClickLog, dataset: Any, k: int, iterations: int) -> np.ndarray:
    from scipy.optimize import minimize

    st = log.stats()
    x = np.asarray(dataset.features, dtype=np.float64)[st.doc]
    mu, sd = x.mean(axis=0), x.std(axis=0)
    x = (x - mu) / np.where(sd > 0, sd, 1.0)
    x = np.hstack([x, np.ones((len(x), 1))])
    imp = st.impressions.astype(np.float64)
    clk = st.clicks.astype(np.float64)
    pos = st.position.astype(np.int64) - 1
    theta = np.full(k, 0.5)
    w = np.zeros(x.shape[1])
    rel = np.full(len(x), 0.5)
    for _ in range(iterations):
        t = theta[pos]
        den = np.maximum(1 - t * rel, 1e-12)
        skips = imp - clk
        p_exam = (clk + skips * t * (1 - rel) / den) / imp
        p_rel = (clk + skips * rel * (1 - t) / den) / imp
        theta = np.bincount(pos, weights=imp * p_exam, minlength=k)[:k] / np.maximum(
            np.bincount(pos, weights=imp, minlength=k)[:k], 1
        )

        def loss(v: np.ndarray, y: np.ndarray = p_rel) -> tuple[float, np.ndarray]:
            z = x @ v
            lp = -np.logaddexp(0.0, -z)  # log sigmoid
            lq = -np.logaddexp(0.0, z)
            value = -(imp * (y * lp + (1 - y) * lq)).sum()
            grad = -x.T @ (imp * (y - np.exp(lp)))
            return float(value), grad

        w = minimize(loss, w, jac=True, method="L-BFGS-B", options={"maxiter": 50}).x
        rel = 1.0 / (1.0 + np.exp(-(x @ w)))
    return theta / theta[0]


def swap_affine_terms(log: ClickLog | ClickStats) -> tuple[np.ndarray, np.ndarray]:
    """Trust-bias terms ``(alpha_r, beta_r)`` of ``P(click | d at r) = alpha_r g_d + beta_r`` on
    the top position's scale (``alpha_1 = 1``, ``beta_1 = 0``: ``g_d`` is the click probability
    of ``d`` at the top) from a log of swap interventions (``make_policy(..., "swap")``: each
    session swaps the top document with the one at a position drawn uniformly).

    Per query, the *top* document is the one seen at the most positions (ties: the most
    impressions at position 1, then the lowest row); for each position ``r >= 2`` it is paired
    with every other document seen at both 1 and ``r``. With ``x_j``/``y_j`` the click rates at
    position 1 / ``r`` of the top and of the other document of pair ``j``, and the sums running
    over the pairs: ``alpha_r = sum (y_top - y_other) / sum (x_top - x_other)`` and ``beta_r`` =
    the mean over the pairs' documents of ``y - alpha_r x`` (each has expectation ``beta_r``).
    Both are ratios of sums of unbiased click rates, so they converge to the truth as the
    sessions grow; the documents' relevance cancels out. NaN at a position with no pair or
    whose pairs' rates at the top do not differ. ndcglab's own closed form, in the spirit of the
    swap experiments of Agarwal, Wang, Li, Bendersky and Najork ("Addressing trust bias for
    unbiased learning-to-rank", WWW 2019)."""
    st = log if isinstance(log, ClickStats) else log.stats()
    k = max(int(st.k), 1)
    alpha = np.full(k, np.nan)
    beta = np.full(k, np.nan)
    alpha[0], beta[0] = 1.0, 0.0
    if not len(st):
        return alpha, beta
    docs, inv = np.unique(st.doc, return_inverse=True)
    ctr = np.full((len(docs), k), np.nan)
    ctr[inv, st.position - 1] = st.clicks / st.impressions
    imp1 = np.zeros(len(docs))
    imp1[inv[st.position == 1]] = st.impressions[st.position == 1]
    query = np.zeros(len(docs), dtype=np.int64)
    query[inv] = st.query
    n_pos = np.isfinite(ctr).sum(axis=1)
    # the top document of each query: most positions, then most impressions at 1, then lowest
    order = np.lexsort((docs, -imp1, -n_pos, query))
    first = np.ones(len(order), dtype=bool)
    first[1:] = query[order][1:] != query[order][:-1]
    top_of_query = dict(zip(query[order][first].tolist(), order[first].tolist()))
    top = np.array([top_of_query[int(q)] for q in query])
    other = np.arange(len(docs)) != top
    for r in range(1, k):
        pair = other & np.isfinite(ctr[:, 0]) & np.isfinite(ctr[:, r])
        pair &= np.isfinite(ctr[top, 0]) & np.isfinite(ctr[top, r])
        if not pair.any():
            continue
        t = top[pair]
        den = float((ctr[t, 0] - ctr[pair, 0]).sum())
        if den == 0:
            continue
        a = float((ctr[t, r] - ctr[pair, r]).sum()) / den
        both_y = np.concatenate([ctr[t, r], ctr[pair, r]])
        both_x = np.concatenate([ctr[t, 0], ctr[pair, 0]])
        alpha[r], beta[r] = a, float((both_y - a * both_x).mean())
    return alpha, beta
