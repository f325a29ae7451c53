"""Tests over many pairs of systems at once, and the tests of all systems together.

The paired tests of :mod:`ndcglab.analysis.paired_tests` take one pair of systems. Comparing
``k`` runs pair by pair repeats the same random draws ``k(k−1)/2`` times; here the draws are made
once and applied to every pair as one matrix product:

* :func:`sign_flip_pvalues` — the paired randomisation test of every column of a matrix of
  per-query differences ``D`` (``n`` queries × ``P`` pairs) with the **same** sign vectors that
  :func:`~ndcglab.analysis.paired_tests.permutation_test` draws for the same seed (so each
  column's p-value is that function's, up to the order of the floating-point sums);
* :func:`bootstrap_many` — the bootstrap confidence interval of the mean difference
  (percentile or BCa) and Sakai's studentised bootstrap ASL of every column, with the resamples
  of :func:`~ndcglab.analysis.paired_tests.resample_indices`;
* :func:`anova_two_way` — the two-way analysis of variance without replication (system ×
  topic: ``x_ij = μ + α_i + β_j + ε_ij``) of a ``k × n`` matrix;
* :func:`tukey_hsd` — Tukey's honestly significant difference test over all pairs of the ``k``
  systems with the ANOVA's residual mean square (Carterette, "Multiple testing in statistical
  analysis of systems-based information retrieval experiments", ACM TOIS 2012):
  ``q_ij = |x̄_i − x̄_j| / √(MSE/n)`` and ``p_ij = P(Q_{k, df} >= q_ij)`` with ``df = (k−1)(n−1)``;
* :func:`studentized_range_sf` — that tail probability of the studentized range distribution,
  by Gauss–Legendre quadrature of its integral (the same values as
  ``scipy.stats.studentized_range.sf`` to about 1e-9, vectorised over ``q``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..errors import ConventionError
from .paired_tests import _t_stat, resample_indices, studentised_asl

__all__ = [
    "AnovaResult",
    "BootstrapMany",
    "anova_two_way",
    "bootstrap_many",
    "sign_flip_pvalues",
    "studentized_range_sf",
    "tukey_hsd",
]


def _count_extreme_cols(null: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Per column, how many two-sided null statistics are at least as extreme as ``observed``
    (the tolerance of :func:`~ndcglab.analysis.paired_tests.permutation_test`)."""
    tol = 1e-12 * np.maximum(1.0, np.abs(observed))
    return np.count_nonzero(np.abs(null) >= (np.abs(observed) - tol)[None, :], axis=0)


def sign_flip_pvalues(d: np.ndarray, *, n_resamples: int = 10_000, seed: int | None = 0) -> Any:
    """Two-sided p-values of the paired randomisation test of every column of ``d`` (``n × P``
    per-query differences, no NaN), from ``n_resamples`` random sign vectors:
    ``p = (1 + #{|T*| >= |T|}) / (1 + B)`` with ``T`` the column's mean. The sign vectors are
    those :func:`~ndcglab.analysis.paired_tests.permutation_test` draws for ``seed`` (one
    matrix for all columns)."""
    d = np.asarray(d, dtype=np.float64)
    n, _ = d.shape
    observed = d.mean(axis=0)
    rng = np.random.default_rng(seed)
    count = np.zeros(d.shape[1], dtype=np.int64)
    done = 0
    batch = max(1, min(n_resamples, 2_000_000 // max(n, 1)))
    while done < n_resamples:
        size = min(batch, n_resamples - done)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
        count += _count_extreme_cols((signs.astype(np.float64) @ d) / n, observed)
        done += size
    return (1 + count) / (1 + n_resamples)


@dataclass(frozen=True)
class BootstrapMany:
    """Per column: the interval ``low``–``high`` of the mean difference and Sakai's ASL."""

    low: np.ndarray
    high: np.ndarray
    asl: np.ndarray
    t: np.ndarray  #: the observed studentised statistic mean/(sd/√n)


def bootstrap_many(
    d: np.ndarray,
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    confidence: float = 0.95,
    method: str = "bca",
) -> BootstrapMany:
    """The bootstrap of every column of ``d`` (``n × P`` differences, no NaN, ``n >= 2``) with
    one set of resamples: each resample is a row of counts ``c`` (how often each query was
    drawn), so the resampled means are ``c·D / n`` and the sums of squares about the mean
    ``c·(D − D̄)²``. The interval follows
    :func:`~ndcglab.analysis.paired_tests.bootstrap_ci` (``percentile`` or ``bca``, the same
    formulas); the ASL is :func:`~ndcglab.analysis.paired_tests.bootstrap_test`'s."""
    from scipy.special import ndtr, ndtri

    d = np.asarray(d, dtype=np.float64)
    n, p = d.shape
    est = d.mean(axis=0)
    dc = d - est[None, :]
    shifted = np.empty((n_resamples, p))  # mean* − mean
    ss = np.empty((n_resamples, p))  # Σ (x* − mean)²
    for start, idx in resample_indices(n, n_resamples, seed):
        b = len(idx)
        flat = (idx + (np.arange(b, dtype=np.int64) * n)[:, None]).ravel()
        counts = np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)
        shifted[start : start + b] = counts @ dc / n
        ss[start : start + b] = counts @ (dc * dc)
    var = np.maximum(ss - n * shifted**2, 0.0) / (n - 1)
    t_null = _t_stat(shifted, np.sqrt(var), n)
    t_obs = _t_stat(est, d.std(axis=0, ddof=1), n)
    asl = np.asarray(studentised_asl(t_obs[None, :], t_null, axis=0))
    means = np.sort(shifted + est[None, :], axis=0)
    alpha = (1.0 - confidence) / 2.0
    q_lo = np.full(p, alpha)
    q_hi = np.full(p, 1.0 - alpha)
    if method == "bca":
        below = np.count_nonzero(means < est[None, :], axis=0)
        at_or_below = np.count_nonzero(means <= est[None, :], axis=0)
        z0 = ndtri((below + at_or_below) / (2.0 * n_resamples))
        jack = (d.sum(axis=0)[None, :] - d) / (n - 1)
        u = (n - 1) * (jack.mean(axis=0)[None, :] - jack)
        den = np.sum(u**2, axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            acc = np.where(den > 0, np.sum(u**3, axis=0) / (6.0 * den**1.5), 0.0)
            z_lo, z_hi = float(ndtri(alpha)), float(ndtri(1.0 - alpha))
            lo = ndtr(z0 + (z0 + z_lo) / (1.0 - acc * (z0 + z_lo)))
            hi = ndtr(z0 + (z0 + z_hi) / (1.0 - acc * (z0 + z_hi)))
        ok = np.isfinite(lo) & np.isfinite(hi)
        q_lo = np.where(ok, lo, alpha)
        q_hi = np.where(ok, hi, 1.0 - alpha)
    elif method != "percentile":
        raise ConventionError(f"unknown bootstrap method {method!r}; known: percentile, bca")
    return BootstrapMany(_quantile_cols(means, q_lo), _quantile_cols(means, q_hi), asl, t_obs)


def _quantile_cols(sorted_cols: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``numpy.quantile`` (linear interpolation) of each sorted column at its own level."""
    b = sorted_cols.shape[0]
    h = (b - 1) * np.clip(q, 0.0, 1.0)
    lo = np.floor(h).astype(np.int64)
    hi = np.minimum(lo + 1, b - 1)
    cols = np.arange(sorted_cols.shape[1])
    x0, x1 = sorted_cols[lo, cols], sorted_cols[hi, cols]
    frac = h - lo
    return x0 + frac * (x1 - x0)


@dataclass(frozen=True)
class AnovaResult:
    """The two-way ANOVA without replication of ``k`` systems × ``n`` topics."""

    k: int
    n: int
    ss_system: float
    ss_topic: float
    ss_error: float
    df_system: int
    df_topic: int
    df_error: int
    ms_error: float
    f_system: float
    p_system: float
    f_topic: float
    p_topic: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def anova_two_way(x: Any) -> AnovaResult:
    """The two-way ANOVA of ``x`` (``k`` systems × ``n`` topics, one value per cell, no NaN):
    ``SS_system = n Σ_i (x̄_i· − x̄)²``, ``SS_topic = k Σ_j (x̄_·j − x̄)²``, ``SS_error = SS_total
    − SS_system − SS_topic`` with ``(k−1)(n−1)`` degrees of freedom; ``F = MS / MS_error``,
    ``p = P(F_{df, df_error} >= F)``. The same as an OLS fit of ``value ~ C(system) + C(topic)``
    (``statsmodels.stats.anova.anova_lm``)."""
    from scipy import stats

    x = np.asarray(x, dtype=np.float64)
    k, n = x.shape
    if k < 2 or n < 2:
        raise ConventionError(
            f"the two-way ANOVA needs at least 2 systems and 2 topics, got {k} and {n}"
        )
    grand = float(x.mean())
    sys_means = x.mean(axis=1)
    top_means = x.mean(axis=0)
    ss_sys = float(n * np.sum((sys_means - grand) ** 2))
    ss_top = float(k * np.sum((top_means - grand) ** 2))
    resid = x - sys_means[:, None] - top_means[None, :] + grand
    ss_err = float(np.sum(resid**2))
    df_s, df_t, df_e = k - 1, n - 1, (k - 1) * (n - 1)
    mse = ss_err / df_e
    with np.errstate(divide="ignore", invalid="ignore"):
        f_s = (ss_sys / df_s) / mse if mse > 0 else math.inf
        f_t = (ss_top / df_t) / mse if mse > 0 else math.inf
    return AnovaResult(
        k, n, ss_sys, ss_top, ss_err, df_s, df_t, df_e, mse,
        float(f_s), float(stats.f.sf(f_s, df_s, df_e)),
        float(f_t), float(stats.f.sf(f_t, df_t, df_e)),
    )  # fmt: skip


_Z_NODES = 128
_S_NODES = 64


def studentized_range_sf(q: Any, k: int, df: float) -> np.ndarray:
    """``P(Q >= q)`` for the studentized range ``Q`` of ``k`` normal means with ``df`` degrees
    of freedom (``df = inf``: known variance).

    ``P(Q >= q) = ∫ f_s(s) R(q s) ds`` with ``R(w) = k ∫ φ(z) (Φ(z)^{k−1} − (Φ(z) −
    Φ(z − w))^{k−1}) dz`` (the range of ``k`` standard normals exceeds ``w``; written as a
    difference of powers, so small tails keep their relative precision) and ``s = √(χ²_df/df)``;
    both integrals by Gauss–Legendre quadrature (128 nodes over ``z ∈ [−9, 9]``, 64 over the
    ``s`` range between the χ² quantiles 1e-15 and 1 − 1e-15)."""
    from scipy import special, stats

    q = np.atleast_1d(np.asarray(q, dtype=np.float64))
    zx, zw = np.polynomial.legendre.leggauss(_Z_NODES)
    z = 9.0 * zx
    wz = 9.0 * zw * np.exp(-0.5 * z**2) / math.sqrt(2.0 * math.pi)
    phi_z = special.ndtr(z)
    log_phi = np.log(phi_z)

    def tail(w: np.ndarray) -> np.ndarray:
        b = special.ndtr(z - w[..., None])
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.log1p(-np.minimum(b / phi_z, 1.0))
        diff = -np.expm1((k - 1) * ratio) * np.exp((k - 1) * log_phi)
        return k * np.sum(wz * np.nan_to_num(diff, nan=0.0), axis=-1)

    if not math.isfinite(df):
        out = tail(np.maximum(q, 0.0))
    else:
        lo = math.sqrt(float(stats.chi2.ppf(1e-15, df)) / df)
        hi = math.sqrt(float(stats.chi2.isf(1e-15, df)) / df)
        sx, sw = np.polynomial.legendre.leggauss(_S_NODES)
        s = lo + (hi - lo) * (sx + 1.0) / 2.0
        ws = sw * (hi - lo) / 2.0
        dens = np.exp(np.log(2.0 * df * s) + stats.chi2.logpdf(df * s * s, df))
        out = tail(np.maximum(q, 0.0)[:, None] * s[None, :]) @ (dens * ws)
    out = np.where(q <= 0.0, 1.0, out)
    return np.clip(out, 0.0, 1.0)


def tukey_hsd(x: Any) -> tuple[np.ndarray, np.ndarray, AnovaResult]:
    """Tukey's HSD over all pairs of the ``k`` systems of ``x`` (``k × n``, no NaN) with the
    two-way ANOVA's ``MSE``: ``(p, q, anova)`` where ``q[i, j] = |x̄_i − x̄_j| / √(MSE/n)`` and
    ``p[i, j] = P(Q_{k, (k−1)(n−1)} >= q[i, j])`` (1 on the diagonal)."""
    x = np.asarray(x, dtype=np.float64)
    an = anova_two_way(x)
    means = x.mean(axis=1)
    diff = np.abs(means[:, None] - means[None, :])
    se = math.sqrt(an.ms_error / an.n) if an.ms_error > 0 else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        qv = np.where(diff == 0.0, 0.0, diff / se if se > 0 else np.inf)
    iu = np.triu_indices(an.k, 1)
    pv = np.ones_like(qv)
    vals = studentized_range_sf(qv[iu], an.k, an.df_error)
    pv[iu] = vals
    pv[(iu[1], iu[0])] = vals
    return pv, qv, an
