"""Paired tests of two rankers on the same queries: t-test, randomisation test, bootstrap
confidence interval, effect size, and Holm's adjustment of a family of p-values.

All tests here are **paired**: system A and system B were evaluated on the same queries, and the
unit of analysis is the per-query difference ``d_q = A_q − B_q`` (queries where either value is
NaN — e.g. skipped by ``empty=skip`` — are dropped from that comparison and ``n`` says how many
were left). Every function takes either both systems' values ``(a, b)`` or the differences
``a`` alone (``b=None``).

* :func:`paired_t_test` — Student's paired t-test (``scipy.stats.ttest_rel``), two-sided by default.
* :func:`permutation_test` — the paired randomisation (sign-flip) test of the mean difference:
  under H0 each ``d_q`` is as likely to be ``+d_q`` as ``−d_q``. Exact (all ``2^n`` sign vectors)
  when ``n`` is small, else ``n_resamples`` seeded random sign vectors with the
  ``(1 + #{|T*| ≥ |T|}) / (1 + B)`` p-value (never 0).
* :func:`bootstrap_ci` — a seeded bootstrap confidence interval of the mean difference,
  ``percentile`` or ``bca`` (bias-corrected and accelerated; Efron & Tibshirani, "An
  Introduction to the Bootstrap", Chapman & Hall 1993, §14.3).
* :func:`cohens_dz` — Cohen's effect size for paired data, ``d_z = mean(d) / sd(d)`` with the
  sample standard deviation (``ddof = 1``) of the differences.
* :func:`holm` — Holm's step-down adjustment of a family of p-values (controls the family-wise
  error rate); :func:`adjust_p` — every correction (``holm``, ``bonferroni``, ``bh``, ``by``,
  ``none``).
* :func:`wilcoxon_test` — the Wilcoxon signed-rank test: zeros dropped (Wilcoxon's method) or
  kept in the ranking (Pratt's), tied ``|d|`` given their average rank; the exact null
  distribution of ``W+`` when at most 50 differences are left and none is tied, else the normal
  approximation with the tie-corrected variance and no continuity correction
  (``scipy.stats.wilcoxon(..., correction=False)``).
* :func:`sign_test` — the sign test: ``|d| <= tie`` counts as a tie and is dropped, the number
  of positive differences is Binomial(wins + losses, 1/2) under H0 (two-sided p = twice the
  smaller tail, at most 1, as ``scipy.stats.binomtest``).
* :func:`bootstrap_test` — Sakai's paired bootstrap test (studentised, shifted to the null):
  ``ASL = #{|t*_b| >= |t|} / B`` with ``t*_b = (mean(d*_b) − mean(d)) / (sd(d*_b)/√n)``
  (T. Sakai, "Evaluating evaluation metrics based on the bootstrap", SIGIR 2006).

The formulas are stated in ``docs/analysis.md`` (section 1, "Comparing rankers").
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConventionError, DataFormatError

__all__ = [
    "CORRECTIONS",
    "EXACT_HARD_LIMIT",
    "EXACT_MAX_N",
    "WILCOXON_EXACT_MAX_N",
    "ConfidenceInterval",
    "TestResult",
    "adjust_p",
    "bootstrap_ci",
    "bootstrap_test",
    "cohens_dz",
    "holm",
    "paired_differences",
    "paired_t_test",
    "permutation_test",
    "resample_indices",
    "sign_test",
    "wilcoxon_test",
]

#: largest number of non-zero differences for which ``exact="auto"`` always enumerates
EXACT_MAX_N = 16
#: enumerating more sign vectors than this is refused (``exact=True``)
EXACT_HARD_LIMIT = 2**24

#: largest number of differences for which the Wilcoxon test uses its exact null distribution
WILCOXON_EXACT_MAX_N = 50
#: the multiple-comparison corrections of :func:`adjust_p`
CORRECTIONS = ("holm", "bonferroni", "bh", "by", "none")

_ALTERNATIVES = ("two-sided", "greater", "less")


def paired_differences(a: Any, b: Any | None = None) -> np.ndarray:
    """``a − b`` as float64 without the pairs that hold a NaN (``a`` itself when ``b`` is None)."""
    x = np.asarray(a, dtype=np.float64).ravel()
    if b is None:
        d = x
    else:
        y = np.asarray(b, dtype=np.float64).ravel()
        if x.shape != y.shape:
            raise DataFormatError(
                f"paired values differ in length: {x.size} and {y.size}",
                fix="give both systems' per-query values for the same queries, in the same order",
            )
        d = x - y
    return d[~np.isnan(d)]


def _check_alternative(alternative: str) -> None:
    if alternative not in _ALTERNATIVES:
        raise ConventionError(
            f"unknown alternative {alternative!r}; known: {', '.join(_ALTERNATIVES)}"
        )


@dataclass(frozen=True)
class TestResult:
    """The outcome of one paired test.

    ``statistic`` is the t statistic for the t-test and the mean difference for the permutation
    test; ``n`` the number of query pairs used; ``exact`` whether the permutation distribution was
    enumerated (None for the t-test); ``n_resamples`` the random sign vectors drawn (None if exact).
    """

    __test__ = False  # not a pytest test class

    test: str
    statistic: float
    p_value: float
    n: int
    alternative: str = "two-sided"
    df: float | None = None
    exact: bool | None = None
    n_resamples: int | None = None


def paired_t_test(a: Any, b: Any | None = None, *, alternative: str = "two-sided") -> TestResult:
    """Student's paired t-test of ``mean(a − b) = 0`` (``scipy.stats.ttest_rel``).

    With ``b=None``, ``a`` holds the differences. Pairs with a NaN are dropped. Fewer than two
    pairs give ``p_value = NaN``; differences that are all zero give ``p = 1``; differences that
    are all equal and non-zero (zero variance, up to 1e-12 relative) give ``t = ±inf`` and
    ``p = 0`` (two-sided), as scipy does.
    """
    from scipy import stats

    _check_alternative(alternative)
    d = paired_differences(a, b)
    n = int(d.size)
    if n < 2:
        return TestResult("t", math.nan, math.nan, n, alternative, df=None)
    scale = float(np.max(np.abs(d)))
    if scale == 0.0:
        return TestResult("t", 0.0, 1.0, n, alternative, df=float(n - 1))
    if float(np.ptp(d)) <= 1e-12 * scale:
        # (numerically) constant non-zero differences: no variance, t = ±inf (as scipy)
        mean = float(d.mean())
        if alternative == "two-sided":
            p = 0.0
        else:
            p = 0.0 if (mean > 0) == (alternative == "greater") else 1.0
        t_inf = math.copysign(math.inf, mean)
        return TestResult("t", t_inf, p, n, alternative, df=float(n - 1))
    res = stats.ttest_1samp(d, 0.0, alternative=alternative)
    return TestResult("t", float(res.statistic), float(res.pvalue), n, alternative, df=float(n - 1))


def _count_extreme(null: np.ndarray, observed: float, alternative: str) -> int:
    """How many null statistics are at least as extreme as ``observed`` (float-tolerant)."""
    tol = 1e-12 * max(1.0, abs(observed))
    if alternative == "two-sided":
        return int(np.count_nonzero(np.abs(null) >= abs(observed) - tol))
    if alternative == "greater":
        return int(np.count_nonzero(null >= observed - tol))
    return int(np.count_nonzero(null <= observed + tol))


def _exact_sign_flip(weights: np.ndarray, observed: float, alternative: str) -> tuple[int, int]:
    """Count the sign vectors ε (all ``2^m``, chunked) with ``Σ ε_i w_i`` at least as extreme as
    ``observed``; returns (count, total)."""
    n = weights.size
    total = 1 << n
    count = 0
    chunk = 1 << min(n, 16)
    bits = np.arange(n, dtype=np.int64)
    for start in range(0, total, chunk):
        codes = np.arange(start, min(start + chunk, total), dtype=np.int64)
        signs = 1.0 - 2.0 * ((codes[:, None] >> bits[None, :]) & 1)
        count += _count_extreme(signs @ weights, observed, alternative)
    return count, total


def permutation_test(
    a: Any,
    b: Any | None = None,
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    exact: bool | str = "auto",
    alternative: str = "two-sided",
) -> TestResult:
    """The paired randomisation (sign-flip) test of the mean difference.

    Under H0 the sign of each per-query difference is a fair coin. The statistic is
    ``T = mean(a − b)``; the two-sided p-value is ``P(|T*| ≥ |T|)``.

    ``exact``: ``"auto"`` enumerates all ``2^m`` sign vectors (``m`` = number of non-zero
    differences; zeros do not change T) when ``m ≤ 16`` or ``2^m ≤ n_resamples``, which gives the
    exact p-value; otherwise ``n_resamples`` random sign vectors from
    ``numpy.random.default_rng(seed)`` and ``p = (1 + #{T* as extreme}) / (1 + n_resamples)``.
    ``True`` forces enumeration (up to ``m = 24``), ``False`` forces sampling.
    """
    _check_alternative(alternative)
    d = paired_differences(a, b)
    n = int(d.size)
    if n == 0:
        return TestResult("permutation", math.nan, math.nan, 0, alternative)
    observed = float(d.mean())
    nz = d[d != 0.0]
    m = int(nz.size)
    if m == 0:
        return TestResult("permutation", observed, 1.0, n, alternative, exact=True)
    if exact not in ("auto", True, False):
        raise ConventionError(f"exact must be 'auto', True or False, got {exact!r}")
    use_exact = exact is True or (exact == "auto" and (m <= EXACT_MAX_N or 2.0**m <= n_resamples))
    if use_exact:
        if 2.0**m > EXACT_HARD_LIMIT:
            raise ConventionError(
                f"exact enumeration of 2^{m} sign vectors is too large. Fix: use exact=False "
                "(random sign vectors) or exact='auto'"
            )
        # T* = (Σ of the signed non-zero differences) / n; zeros add nothing whatever their sign
        count, total = _exact_sign_flip(nz / n, observed, alternative)
        return TestResult("permutation", observed, count / total, n, alternative, exact=True)
    if n_resamples < 1:
        raise ConventionError(f"n_resamples must be at least 1, got {n_resamples}")
    rng = np.random.default_rng(seed)
    count = 0
    done = 0
    batch = max(1, min(n_resamples, 2_000_000 // max(n, 1)))
    while done < n_resamples:
        size = min(batch, n_resamples - done)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
        count += _count_extreme((signs @ d) / n, observed, alternative)
        done += size
    p = (1 + count) / (1 + n_resamples)
    return TestResult(
        "permutation", observed, float(p), n, alternative, exact=False, n_resamples=n_resamples
    )


def cohens_dz(a: Any, b: Any | None = None) -> float:
    """Cohen's effect size for paired data: ``d_z = mean(d) / sd(d)``, ``d = a − b``.

    ``sd`` is the sample standard deviation of the differences (``ddof = 1``). NaN when fewer than
    two pairs; ``±inf`` when all differences are equal and non-zero; 0 when all are zero.
    """
    d = paired_differences(a, b)
    if d.size < 2:
        return math.nan
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    return mean / sd


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap interval ``[low, high]`` for the mean difference ``estimate``."""

    low: float
    high: float
    estimate: float
    confidence: float
    method: str
    n_resamples: int
    n: int


def bootstrap_ci(
    a: Any,
    b: Any | None = None,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    method: str = "bca",
    seed: int | None = 0,
) -> ConfidenceInterval:
    """A bootstrap confidence interval of the mean of ``d = a − b`` (pairs resampled together).

    ``method="percentile"``: the ``(1−confidence)/2`` and ``(1+confidence)/2`` quantiles of the
    bootstrap means. ``method="bca"``: bias-corrected and accelerated percentiles — the bias
    correction ``z0 = Φ⁻¹(share of bootstrap means below the estimate, ties counted half)`` and the
    acceleration ``a = Σ U³ / (6 (Σ U²)^{3/2})`` from the jackknife ``U_i = (n−1)(θ̄_(·) − θ_(i))``
    (the same formulas as ``scipy.stats.bootstrap``). Resampling uses
    ``numpy.random.default_rng(seed)``.
    """
    from scipy.special import ndtr, ndtri

    if not 0.0 < confidence < 1.0:
        raise ConventionError(f"confidence must lie in (0, 1), got {confidence}")
    if method not in ("percentile", "bca"):
        raise ConventionError(f"unknown bootstrap method {method!r}; known: percentile, bca")
    if n_resamples < 1:
        raise ConventionError(f"n_resamples must be at least 1, got {n_resamples}")
    d = paired_differences(a, b)
    n = int(d.size)
    if n == 0:
        return ConfidenceInterval(math.nan, math.nan, math.nan, confidence, method, n_resamples, 0)
    estimate = float(d.mean())
    if n == 1 or np.all(d == d[0]):
        return ConfidenceInterval(estimate, estimate, estimate, confidence, method, n_resamples, n)
    means = np.empty(n_resamples, dtype=np.float64)
    for start, idx in resample_indices(n, n_resamples, seed):
        means[start : start + len(idx)] = d[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    if method == "percentile":
        q_lo, q_hi = alpha, 1.0 - alpha
    else:
        share = (np.count_nonzero(means < estimate) + np.count_nonzero(means <= estimate)) / (
            2.0 * n_resamples
        )
        z0 = float(ndtri(share))
        jack = (d.sum() - d) / (n - 1)
        u = (n - 1) * (jack.mean() - jack)
        den = float(np.sum(u**2))
        acc = float(np.sum(u**3)) / (6.0 * den**1.5) if den > 0 else 0.0
        z_lo, z_hi = float(ndtri(alpha)), float(ndtri(1.0 - alpha))
        q_lo = float(ndtr(z0 + (z0 + z_lo) / (1.0 - acc * (z0 + z_lo))))
        q_hi = float(ndtr(z0 + (z0 + z_hi) / (1.0 - acc * (z0 + z_hi))))
        if not (math.isfinite(q_lo) and math.isfinite(q_hi)):
            q_lo, q_hi = alpha, 1.0 - alpha
    low, high = np.quantile(means, [q_lo, q_hi])
    return ConfidenceInterval(float(low), float(high), estimate, confidence, method, n_resamples, n)


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (same order as the input).

    With the ``m`` finite p-values sorted ascending,
    ``p̃_(i) = max_{j ≤ i} min(1, (m − j + 1) p_(j))``.
    NaN entries stay NaN and do not count in ``m``. Reject H0_i at level α when ``p̃_i < α``.
    """
    p = np.asarray(p_values, dtype=np.float64).ravel()
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out[order] = np.maximum.accumulate(scaled)
    return out


def resample_indices(
    n: int, n_resamples: int, seed: int | None
) -> Iterator[tuple[int, np.ndarray]]:
    """The bootstrap resamples of ``n`` paired values: ``(first resample, (b, n) indices)``
    blocks drawn from ``numpy.random.default_rng(seed)`` (at most 4 million indices a block).
    Every bootstrap of this package draws its resamples here, so the same seed gives the same
    resamples to every pair of systems with the same number of queries."""
    rng = np.random.default_rng(seed)
    batch = max(1, min(n_resamples, 4_000_000 // max(n, 1)))
    for start in range(0, n_resamples, batch):
        stop = min(start + batch, n_resamples)
        yield start, rng.integers(0, n, size=(stop - start, n))


def studentised_asl(
    t_obs: float | np.ndarray, t_null: np.ndarray, axis: int = 0
) -> float | np.ndarray:
    """Sakai's achieved significance level: the share of bootstrap statistics ``t_null`` (along
    ``axis``) with ``|t*| >= |t_obs|`` (float-tolerant, as the randomisation test)."""
    t_obs = np.asarray(t_obs, dtype=np.float64)
    tol = 1e-12 * np.maximum(1.0, np.abs(t_obs))
    hits = np.abs(t_null) >= np.abs(t_obs) - tol
    return hits.mean(axis=axis)


def _t_stat(mean: np.ndarray, sd: np.ndarray, n: int) -> np.ndarray:
    """``mean / (sd / √n)`` with 0 for ``0/0`` and ``±inf`` for a non-zero mean over sd 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / math.sqrt(n))
    t = np.where((sd == 0.0) & (mean == 0.0), 0.0, t)
    return np.where((sd == 0.0) & (mean != 0.0), np.copysign(np.inf, mean), t)


def bootstrap_test(
    a: Any, b: Any | None = None, *, n_resamples: int = 10_000, seed: int | None = 0
) -> TestResult:
    """Sakai's paired bootstrap test of ``mean(a − b) = 0`` (two-sided).

    The ``B = n_resamples`` resamples ``d*_b`` of the ``n`` differences (pairs resampled together,
    :func:`resample_indices`) give ``t*_b = (mean(d*_b) − mean(d)) / (sd(d*_b)/√n)`` (the
    bootstrap distribution shifted to the null hypothesis); the achieved significance level is
    ``#{|t*_b| >= |t|} / B`` with ``t = mean(d) / (sd(d)/√n)`` (``sd`` with ``ddof = 1``;
    ``0/0`` counts as 0). ``statistic`` is ``t``. Fewer than two pairs give NaN; all-zero
    differences give 1.
    """
    if n_resamples < 1:
        raise ConventionError(f"n_resamples must be at least 1, got {n_resamples}")
    d = paired_differences(a, b)
    n = int(d.size)
    if n < 2:
        return TestResult("bootstrap", math.nan, math.nan, n, n_resamples=n_resamples)
    if not np.any(d):
        return TestResult("bootstrap", 0.0, 1.0, n, n_resamples=n_resamples)
    mean = float(d.mean())
    t_obs = float(_t_stat(np.array(mean), np.array(float(d.std(ddof=1))), n))
    t_null = np.empty(n_resamples)
    for start, idx in resample_indices(n, n_resamples, seed):
        x = d[idx]
        t_null[start : start + len(idx)] = _t_stat(x.mean(axis=1) - mean, x.std(axis=1, ddof=1), n)
    p = float(studentised_asl(t_obs, t_null))
    return TestResult("bootstrap", t_obs, p, n, n_resamples=n_resamples)


def _wilcoxon_exact_sf(n: int) -> np.ndarray:
    """``counts[w]`` = number of sign vectors of ranks 1..n with ``W+ = w`` (the exact null
    distribution times ``2^n``)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[:-r].copy()
    return counts


def wilcoxon_test(
    a: Any,
    b: Any | None = None,
    *,
    zero_method: str = "wilcox",
    method: str = "auto",
    alternative: str = "two-sided",
) -> TestResult:
    """The Wilcoxon signed-rank test of the paired differences ``d = a − b``.

    ``zero_method="wilcox"`` drops zero differences before ranking (Wilcoxon's method);
    ``"pratt"`` ranks them with the others and then drops their ranks (Pratt's method, with
    Cureton's adjustment of the mean and variance). Tied ``|d|`` get their average rank. The
    statistic is ``W+``, the sum of the ranks of the positive differences.

    ``method="auto"`` is ``"exact"`` when no zero is ranked, no ``|d|`` is tied and at most
    :data:`WILCOXON_EXACT_MAX_N` differences are ranked, else ``"asymptotic"``: ``z = (W+ −
    μ)/σ`` with ``μ = n(n+1)/4``, ``σ² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48`` over the groups of
    ``t`` tied ``|d|`` (Pratt: ``μ``, ``σ²`` less the zeros' share), no continuity correction.
    The exact two-sided p is twice the smaller tail of the enumerated distribution of ``W+``.
    Equal to ``scipy.stats.wilcoxon(a, b, zero_method=..., method=..., correction=False)``.
    """
    from scipy.special import ndtr
    from scipy.stats import rankdata

    _check_alternative(alternative)
    if zero_method not in ("wilcox", "pratt"):
        raise ConventionError(f"unknown zero_method {zero_method!r}; known: wilcox, pratt")
    if method not in ("auto", "exact", "asymptotic"):
        raise ConventionError(f"unknown method {method!r}; known: auto, exact, asymptotic")
    d = paired_differences(a, b)
    n_all = int(d.size)
    zeros = d == 0.0
    if zero_method == "wilcox":
        d = d[~zeros]
        zeros = np.zeros(d.size, dtype=bool)
    n = int(d.size)
    n_zero = int(zeros.sum())
    if n - n_zero == 0:
        return TestResult("wilcoxon", math.nan, math.nan, n_all, alternative)
    absd = np.abs(d)
    r = rankdata(absd)
    w_plus = float(r[d > 0].sum())
    _, ties = np.unique(absd[~zeros], return_counts=True)
    tied = bool(np.any(ties > 1))
    use = method
    if method == "auto":
        use = "exact" if (n_zero == 0 and not tied and n <= WILCOXON_EXACT_MAX_N) else "asymptotic"
    if use == "exact":
        if n > 2_000:
            raise ConventionError(
                f"the exact Wilcoxon distribution of {n} differences is too large. Fix: "
                "method='asymptotic'"
            )
        counts = _wilcoxon_exact_sf(n)
        total = counts.sum()
        cdf = np.cumsum(counts) / total
        sf = 1.0 - np.concatenate(([0.0], cdf[:-1]))  # P(W >= w)
        lo = math.ceil(w_plus)
        hi = math.floor(w_plus)
        p = _from_tails(float(cdf[min(lo, len(cdf) - 1)]), float(sf[hi]), alternative)
        return TestResult("wilcoxon", w_plus, p, n_all, alternative, exact=True)
    mu = n * (n + 1) * 0.25
    var = n * (n + 1) * (2 * n + 1.0)
    if zero_method == "pratt":
        mu -= n_zero * (n_zero + 1) * 0.25
        var -= n_zero * (n_zero + 1) * (2 * n_zero + 1.0)
    var = (var - float(np.sum(ties.astype(np.float64) ** 3 - ties)) / 2.0) / 24.0
    z = (w_plus - mu) / math.sqrt(var) if var > 0 else 0.0
    if alternative == "two-sided":
        p = float(2.0 * ndtr(-abs(z)))
    elif alternative == "greater":
        p = float(ndtr(-z))
    else:
        p = float(ndtr(z))
    return TestResult("wilcoxon", w_plus, min(1.0, p), n_all, alternative, exact=False)


def sign_test(
    a: Any, b: Any | None = None, *, tie: float = 0.0, alternative: str = "two-sided"
) -> TestResult:
    """The sign test: each difference with ``|d| > tie`` is a win (``d > 0``) or a loss; ties
    (``|d| <= tie``) are dropped. Under H0 the wins are Binomial(wins + losses, 1/2); the
    two-sided p-value is ``min(1, 2·min(P(X <= wins), P(X >= wins)))`` (``scipy.stats.binomtest``
    for p = 1/2). ``statistic`` is the number of wins, ``n`` the wins plus losses."""
    from scipy.stats import binom

    _check_alternative(alternative)
    if not tie >= 0.0:
        raise ConventionError(f"the tie threshold must be >= 0, got {tie}")
    d = paired_differences(a, b)
    wins = int(np.count_nonzero(d > tie))
    losses = int(np.count_nonzero(d < -tie))
    m = wins + losses
    if m == 0:
        return TestResult("sign", 0.0, 1.0, 0, alternative)
    p = _from_tails(float(binom.cdf(wins, m, 0.5)), float(binom.sf(wins - 1, m, 0.5)), alternative)
    return TestResult("sign", float(wins), p, m, alternative, exact=True)


def _from_tails(p_less: float, p_greater: float, alternative: str) -> float:
    """The p-value of an exact test from its two one-sided tails: ``less`` or ``greater`` that
    tail, ``two-sided`` twice the smaller tail, at most 1."""
    if alternative == "less":
        return p_less
    if alternative == "greater":
        return p_greater
    return min(1.0, 2.0 * min(p_less, p_greater))


def adjust_p(p_values: Sequence[float] | np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjusted p-values of one family (same order; NaN entries stay NaN and are not counted).

    With the ``m`` finite p-values sorted ascending ``p_(1) <= … <= p_(m)``:

    * ``bonferroni``: ``min(1, m·p)`` (family-wise error rate);
    * ``holm``: :func:`holm`, step-down (family-wise error rate);
    * ``bh`` (Benjamini–Hochberg): ``p̃_(i) = min_{j >= i} min(1, m·p_(j)/j)`` (false discovery
      rate, independent or positively dependent tests);
    * ``by`` (Benjamini–Yekutieli): ``bh`` times ``c(m) = Σ_{i<=m} 1/i`` (false discovery rate
      under any dependence);
    * ``none``: the p-values as they are.

    The same as ``statsmodels.stats.multitest.multipletests`` with ``holm``, ``bonferroni``,
    ``fdr_bh``, ``fdr_by``.
    """
    if method not in CORRECTIONS:
        raise ConventionError(f"unknown correction {method!r}; known: {', '.join(CORRECTIONS)}")
    p = np.asarray(p_values, dtype=np.float64).ravel()
    if method == "none":
        return p.copy()
    if method == "holm":
        return holm(p)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    if method == "bonferroni":
        out[ok] = np.minimum(1.0, m * p[ok])
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    scale = m / np.arange(1, m + 1)
    if method == "by":
        scale = scale * float(np.sum(1.0 / np.arange(1, m + 1)))
    stepped = np.minimum.accumulate((scale * p[order])[::-1])[::-1]
    out[order] = np.minimum(1.0, stepped)
    return out
