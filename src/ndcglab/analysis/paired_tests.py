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
  error rate).

The formulas are stated in ``docs/analysis.md`` (section 1, "Comparing rankers").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConventionError, DataFormatError

__all__ = [
    "EXACT_HARD_LIMIT",
    "EXACT_MAX_N",
    "ConfidenceInterval",
    "TestResult",
    "bootstrap_ci",
    "cohens_dz",
    "holm",
    "paired_differences",
    "paired_t_test",
    "permutation_test",
]

#: largest number of non-zero differences for which ``exact="auto"`` always enumerates
EXACT_MAX_N = 16
#: enumerating more sign vectors than this is refused (``exact=True``)
EXACT_HARD_LIMIT = 2**24

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
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples, dtype=np.float64)
    batch = max(1, min(n_resamples, 4_000_000 // n))
    for start in range(0, n_resamples, batch):
        stop = min(start + batch, n_resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = d[idx].mean(axis=1)
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
