"""Significance testing of several rankers at once: :func:`compare_rankers`.

``compare_rankers`` takes every system's per-query values, tests each system against a baseline
on every measure with one of the paired tests of :mod:`ndcglab.analysis.paired_tests`, adjusts
the p-values for multiple comparisons (Holm) and returns a
:class:`~ndcglab.analysis.comparison.ComparisonResult`, whose table marks significant differences
(``†`` p < 0.05, ``‡`` p < 0.01 by default) and exports to text, Markdown, LaTeX and CSV.

This module is also the one place to import the whole toolbox from: it re-exports the paired
tests (:mod:`~ndcglab.analysis.paired_tests`) and the result classes
(:mod:`~ndcglab.analysis.comparison`). The conventions are stated in ``docs/analysis.md``
(section 1, "Comparing rankers").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import ConventionError, DataFormatError
from .comparison import ComparisonResult, PairedComparison, significance_mark
from .paired_tests import (
    ConfidenceInterval,
    TestResult,
    bootstrap_ci,
    cohens_dz,
    holm,
    paired_differences,
    paired_t_test,
    permutation_test,
)

__all__ = [
    "ComparisonResult",
    "ConfidenceInterval",
    "PairedComparison",
    "TestResult",
    "bootstrap_ci",
    "cohens_dz",
    "compare_rankers",
    "holm",
    "paired_differences",
    "paired_t_test",
    "permutation_test",
]

#: the paired tests compare_rankers can run
_TESTS = ("t", "permutation")


def _per_query_table(
    per_query: Mapping[str, Any], measure: str
) -> dict[str, dict[str, np.ndarray]]:
    """Normalise the accepted inputs to ``{system: {measure: (Q,) float64}}``."""
    if not isinstance(per_query, Mapping) or not per_query:
        raise DataFormatError(
            "compare_rankers needs a non-empty mapping {system name: per-query values}",
            fix="pass e.g. {'A': evaluate(ds, a).per_query, 'B': evaluate(ds, b).per_query}",
        )
    table: dict[str, dict[str, np.ndarray]] = {}
    for name, value in per_query.items():
        inner = getattr(value, "per_query", value)  # an EvaluationResult works too
        if isinstance(inner, Mapping):
            table[str(name)] = {
                str(k): np.asarray(v, dtype=np.float64).ravel() for k, v in inner.items()
            }
        else:
            table[str(name)] = {measure: np.asarray(inner, dtype=np.float64).ravel()}
    return table


def compare_rankers(
    per_query: Mapping[str, Any],
    *,
    baseline: str | None = None,
    test: str = "t",
    measures: Sequence[str] | None = None,
    pairs: str = "baseline",
    correction: str = "holm",
    family: str = "measure",
    alpha: float = 0.05,
    alpha_strong: float = 0.01,
    confidence: float = 0.95,
    bootstrap: str = "bca",
    n_resamples: int = 10_000,
    n_bootstrap: int = 10_000,
    seed: int | None = 0,
    measure: str = "value",
) -> ComparisonResult:
    """Compare several systems evaluated on the same queries.

    ``per_query`` maps each system's name to its per-query values: a ``(Q,)`` array (one measure,
    named ``measure``), a mapping ``{measure name: (Q,) array}``, or an ``EvaluationResult`` (its
    ``.per_query`` is used). All systems must share the queries, in the same order.

    Every system other than the ``baseline`` (default: the first) is tested against it on every
    measure (``pairs="baseline"``); ``pairs="all"`` tests every pair (the table's marks still refer
    to the baseline). ``test="t"`` is the paired t-test, ``"permutation"`` the paired sign-flip test
    (seeded; exact for small n). p-values are adjusted by ``correction="holm"`` (or ``"none"``)
    within each measure (``family="measure"``) or over the whole table (``family="all"``); a
    difference is marked ``‡`` when the adjusted p < ``alpha_strong`` and ``†`` when < ``alpha``.
    Each test also reports a bootstrap CI of the mean difference (``bootstrap="bca"`` or
    ``"percentile"``, ``n_bootstrap`` resamples, seeded) and Cohen's d_z.
    """
    if test not in _TESTS:
        raise ConventionError(f"unknown test {test!r}; known: {', '.join(_TESTS)}")
    if pairs not in ("baseline", "all"):
        raise ConventionError(f"unknown pairs {pairs!r}; known: baseline, all")
    if correction not in ("holm", "none"):
        raise ConventionError(f"unknown correction {correction!r}; known: holm, none")
    if family not in ("measure", "all"):
        raise ConventionError(f"unknown family {family!r}; known: measure, all")
    if not (0.0 < alpha_strong <= alpha < 1.0):
        raise ConventionError(
            f"need 0 < alpha_strong <= alpha < 1, got alpha={alpha}, alpha_strong={alpha_strong}"
        )
    table = _per_query_table(per_query, measure)
    systems = tuple(table)
    base = systems[0] if baseline is None else str(baseline)
    if base not in table:
        raise ConventionError(
            f"unknown baseline {base!r}; systems: {', '.join(systems)}. "
            "Fix: pass one of these names"
        )
    if measures is None:
        names = list(table[systems[0]])
        for s in systems[1:]:
            names = [m for m in names if m in table[s]]
        if not names:
            raise DataFormatError(
                "the systems share no measure",
                fix="evaluate every system with the same measures",
            )
        meas = tuple(names)
    else:
        meas = tuple(str(m) for m in measures)
        for s in systems:
            missing = [m for m in meas if m not in table[s]]
            if missing:
                raise ConventionError(
                    f"system {s!r} has no values for {', '.join(missing)}; it has "
                    f"{', '.join(table[s])}"
                )
    for m in meas:
        sizes = {s: table[s][m].size for s in systems}
        if len(set(sizes.values())) > 1:
            raise DataFormatError(
                f"systems have different numbers of per-query values for {m}: "
                + ", ".join(f"{s}={k}" for s, k in sizes.items()),
                fix="evaluate every system on the same dataset (same queries, same order)",
            )

    mean: dict[str, dict[str, float]] = {}
    counts: dict[str, dict[str, int]] = {}
    for s in systems:
        mean[s], counts[s] = {}, {}
        for m in meas:
            v = table[s][m]
            ok = ~np.isnan(v)
            counts[s][m] = int(ok.sum())
            mean[s][m] = float(v[ok].mean()) if ok.any() else math.nan

    if pairs == "baseline":
        pair_list = [(s, base) for s in systems if s != base]
    else:
        pair_list = []
        for i, x in enumerate(systems):
            for y in systems[i + 1 :]:
                if base in (x, y):
                    pair_list.append((y if x == base else x, base))
                else:
                    pair_list.append((y, x))

    raw: list[dict[str, Any]] = []
    for m in meas:
        for sys_a, sys_b in pair_list:
            a, b = table[sys_a][m], table[sys_b][m]
            if test == "t":
                tr = paired_t_test(a, b)
            else:
                tr = permutation_test(a, b, n_resamples=n_resamples, seed=seed)
            ci = bootstrap_ci(
                a, b, confidence=confidence, n_resamples=n_bootstrap, method=bootstrap, seed=seed
            )
            d = paired_differences(a, b)
            raw.append(
                dict(
                    system=sys_a,
                    baseline=sys_b,
                    measure=m,
                    n=tr.n,
                    mean_system=mean[sys_a][m],
                    mean_baseline=mean[sys_b][m],
                    diff=float(d.mean()) if d.size else math.nan,
                    ci_low=ci.low,
                    ci_high=ci.high,
                    effect_size=cohens_dz(a, b),
                    statistic=tr.statistic,
                    p_value=tr.p_value,
                    test=test,
                )
            )
    p = np.array([r["p_value"] for r in raw], dtype=np.float64)
    if correction == "none":
        adj = p.copy()
    elif family == "all":
        adj = holm(p)
    else:
        adj = np.full(p.shape, np.nan)
        for m in meas:  # names compared as Python strings (NumPy's drop trailing NULs)
            sel = [i for i, r in enumerate(raw) if r["measure"] == m]
            adj[sel] = holm(p[sel])
    tests = [
        PairedComparison(
            **r,
            p_adjusted=float(adj[i]),
            mark=significance_mark(float(adj[i]), alpha, alpha_strong),
        )
        for i, r in enumerate(raw)
    ]
    return ComparisonResult(
        systems=systems,
        measures=meas,
        baseline=base,
        mean=mean,
        n_queries=counts,
        tests=tests,
        test=test,
        correction=correction,
        family=family,
        alpha=alpha,
        alpha_strong=alpha_strong,
        confidence=confidence,
        settings={
            "pairs": pairs,
            "bootstrap": bootstrap,
            "n_bootstrap": n_bootstrap,
            "n_resamples": n_resamples,
            "seed": seed,
        },
    )
