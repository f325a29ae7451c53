"""Significance testing of several rankers at once: :func:`compare_rankers`.

``compare_rankers`` takes every system's per-query values, tests each system against a baseline
(or several, or every pair) on every measure with one of the tests of
:mod:`ndcglab.analysis.paired_tests` and :mod:`ndcglab.analysis.multi_tests`, adjusts the
p-values for multiple comparisons (Holm, Bonferroni, Benjamini–Hochberg, Benjamini–Yekutieli or
none) and returns a
:class:`~ndcglab.analysis.comparison.ComparisonResult`, whose table marks significant differences
(``†`` p < 0.05, ``‡`` p < 0.01 by default) and exports to text, Markdown, LaTeX, CSV and HTML.
:func:`compare_runs` does the same for TREC runs and qrels (files, dicts or DataFrames) on one
stated query set (:mod:`ndcglab.analysis.runs`).

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
    CORRECTIONS,
    EXACT_MAX_N,
    ConfidenceInterval,
    TestResult,
    adjust_p,
    bootstrap_ci,
    bootstrap_test,
    cohens_dz,
    holm,
    paired_differences,
    paired_t_test,
    permutation_test,
    sign_test,
    wilcoxon_test,
)

__all__ = [
    "TESTS",
    "ComparisonResult",
    "ConfidenceInterval",
    "PairedComparison",
    "TestResult",
    "adjust_p",
    "bootstrap_ci",
    "bootstrap_test",
    "cohens_dz",
    "compare_rankers",
    "compare_runs",
    "holm",
    "paired_differences",
    "paired_t_test",
    "permutation_test",
    "sign_test",
    "wilcoxon_test",
]

#: the tests compare_rankers can run (``fisher`` and ``randomisation`` name ``permutation``)
TESTS = ("t", "wilcoxon", "sign", "permutation", "bootstrap", "tukey")
_TEST_ALIASES = {"fisher": "permutation", "randomisation": "permutation",
                 "randomization": "permutation", "student": "t", "hsd": "tukey"}  # fmt: skip


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


def _canonical_test(test: str) -> str:
    t = _TEST_ALIASES.get(str(test).lower(), str(test).lower())
    if t not in TESTS:
        raise ConventionError(f"unknown test {test!r}; known: {', '.join(TESTS)}")
    return t


def _pair_list(systems: tuple[str, ...], bases: list[str], pairs: str) -> list[tuple[str, str]]:
    """(system, baseline) pairs: each system against each baseline, or every pair (a pair with
    the first baseline tested against it; otherwise the later system against the earlier)."""
    if pairs == "baseline":
        out: list[tuple[str, str]] = []
        for b in bases:
            out += [(s, b) for s in systems if s != b and (s, b) not in out and (b, s) not in out]
        return out
    base = bases[0]
    out = []
    for i, x in enumerate(systems):
        for y in systems[i + 1 :]:
            if base in (x, y):
                out.append((y if x == base else x, base))
            else:
                out.append((y, x))
    return out


def compare_rankers(
    per_query: Mapping[str, Any],
    *,
    baseline: str | Sequence[str] | None = None,
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
    tie: float = 0.0,
    zero_method: str = "wilcox",
    power: float = 0.8,
    asl: bool = False,
    topics: Sequence[str] | None = None,
    query_set: Any = None,
    tie_range: bool | Mapping[str, Mapping[str, Any]] = False,
    tie_share: float | None = None,
) -> ComparisonResult:
    """Compare several systems evaluated on the same queries.

    ``per_query`` maps each system's name to its per-query values: a ``(Q,)`` array (one measure,
    named ``measure``), a mapping ``{measure name: (Q,) array}``, or an ``EvaluationResult`` (its
    ``.per_query`` is used). All systems must share the queries, in the same order.

    Every system other than the ``baseline`` (default: the first; a list names several
    baselines) is tested against it on every measure (``pairs="baseline"``); ``pairs="all"``
    tests every pair. ``test``: ``"t"`` (paired t-test), ``"wilcoxon"`` (signed-rank,
    ``zero_method``), ``"sign"`` (``|d| <= tie`` is a tie), ``"permutation"`` (Fisher's
    randomisation, sign-flip; exact for small n), ``"bootstrap"`` (Sakai's paired bootstrap
    test), ``"tukey"`` (two-way ANOVA system × topic and Tukey's HSD; its p-values already
    control the family-wise error over all pairs of systems of a measure, so ``correction``
    does not apply). p-values are adjusted by ``correction`` (``holm``, ``bonferroni``, ``bh``,
    ``by``, ``none``) within each measure (``family="measure"``) or over the whole table
    (``family="all"``); a difference is marked ``‡`` when the adjusted p < ``alpha_strong`` and
    ``†`` when < ``alpha``. Each test also reports a bootstrap CI of the mean difference
    (``bootstrap="bca"`` or ``"percentile"``, ``n_bootstrap`` resamples, seeded), Cohen's d_z,
    the per-topic wins/ties/losses (``|d| <= tie`` is a tie) and the topics a paired t-test
    needs to detect the difference with probability ``power`` at level ``alpha``.
    ``asl=True`` adds Sakai's achieved significance levels of every pair of systems (paired
    bootstrap) per measure, for the discriminative-power curves.

    ``topics`` names the queries (in the values' order); with it the tables also show each
    mean's Student-t interval, the wins/ties/losses and the topics needed, and the HTML page the
    per-topic plots (:func:`compare_runs` and ``ndcglab compare`` always name them).
    ``query_set`` (a :class:`~ndcglab.analysis.runs.QuerySet`) is stated under every table.

    ``tie_range``: each system's worst and best mean over every order of its tied documents
    (:mod:`ndcglab.measures.tie_range`), shown beside its row; ``True`` takes them from the
    ``EvaluationResult`` values (evaluated with ``tie_range=True``), or give ``{system:
    {measure: TieRange}}``. The range's means are taken as the table's (NaN-skipping), a
    warning names each system and measure whose range is wider than ``tie_share`` (default
    :data:`~ndcglab.measures.tie_range.TIE_SHARE`) of its mean, and the tests stay on the
    values under the preset's tie rule.
    """
    from .multi_tests import bootstrap_many, sign_flip_pvalues, tukey_hsd
    from .power import queries_needed

    test = _canonical_test(test)
    if pairs not in ("baseline", "all"):
        raise ConventionError(f"unknown pairs {pairs!r}; known: baseline, all")
    if correction not in CORRECTIONS:
        raise ConventionError(f"unknown correction {correction!r}; known: {', '.join(CORRECTIONS)}")
    if family not in ("measure", "all"):
        raise ConventionError(f"unknown family {family!r}; known: measure, all")
    if not (0.0 < alpha_strong <= alpha < 1.0):
        raise ConventionError(
            f"need 0 < alpha_strong <= alpha < 1, got alpha={alpha}, alpha_strong={alpha_strong}"
        )
    if not tie >= 0.0:
        raise ConventionError(f"the tie threshold must be >= 0, got {tie}")
    table = _per_query_table(per_query, measure)
    systems = tuple(table)
    if len(systems) < 2:
        raise ConventionError(
            f"a comparison needs at least two systems, got {len(systems)} "
            f"({', '.join(systems)}). Fix: give two runs or more"
        )
    if baseline is None:
        bases = [systems[0]]
    elif isinstance(baseline, str):
        bases = [baseline]
    else:
        bases = [str(b) for b in baseline] or [systems[0]]
    for name in bases:
        if name not in table:
            raise ConventionError(
                f"unknown baseline {name!r}; systems: {', '.join(systems)}. "
                "Fix: pass one of these names"
            )
    base = bases[0]
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
    mean_ci: dict[str, dict[str, tuple[float, float]]] = {}
    for s in systems:
        mean[s], counts[s], mean_ci[s] = {}, {}, {}
        for m in meas:
            v = table[s][m]
            ok = ~np.isnan(v)
            counts[s][m] = int(ok.sum())
            mean[s][m] = float(v[ok].mean()) if ok.any() else math.nan
            mean_ci[s][m] = _t_interval(v[ok], confidence)

    pair_list = _pair_list(systems, bases, pairs)
    raw: list[dict[str, Any]] = []
    asl_curves: dict[str, list[float]] = {}
    anova: dict[str, Any] = {}
    for m in meas:
        cols = {s: table[s][m] for s in systems}
        full = np.ones(len(cols[systems[0]]), dtype=bool)
        for v in cols.values():
            full &= ~np.isnan(v)
        batch = bool(full.all()) and full.size >= 2
        diffs = np.stack([cols[a] - cols[b] for a, b in pair_list], axis=1) if pair_list else None
        p_batch = ci_lo = ci_hi = t_batch = None
        if batch and diffs is not None:
            bm = bootstrap_many(
                diffs, n_resamples=n_bootstrap, seed=seed, confidence=confidence, method=bootstrap
            )
            ci_lo, ci_hi = bm.low, bm.high
            if test == "permutation":
                p_batch = sign_flip_pvalues(diffs, n_resamples=n_resamples, seed=seed)
            elif test == "bootstrap":
                bt = bootstrap_many(diffs, n_resamples=n_resamples, seed=seed)
                p_batch, t_batch = bt.asl, bt.t
        tk = None
        if test == "tukey":
            x = np.stack([cols[s][full] for s in systems])
            pv, qv, an = tukey_hsd(x)
            anova[m] = an.to_dict()
            tk = (pv, qv, int(full.sum()))
        for j, (sys_a, sys_b) in enumerate(pair_list):
            a, b = cols[sys_a], cols[sys_b]
            d = paired_differences(a, b)
            degenerate = d.size < 2 or bool(np.all(d == d[0]))
            if test == "t":
                tr = paired_t_test(a, b)
            elif test == "wilcoxon":
                tr = wilcoxon_test(a, b, zero_method=zero_method)
            elif test == "sign":
                tr = sign_test(a, b, tie=tie)
            elif test == "permutation":
                nz = int(np.count_nonzero(d))
                exact = nz <= EXACT_MAX_N or 2.0**nz <= n_resamples
                if p_batch is not None and not exact:
                    tr = TestResult("permutation", float(d.mean()), float(p_batch[j]), int(d.size),
                                    exact=False, n_resamples=n_resamples)  # fmt: skip
                else:
                    tr = permutation_test(a, b, n_resamples=n_resamples, seed=seed)
            elif test == "bootstrap":
                if p_batch is not None and t_batch is not None and not degenerate and np.any(d):
                    tr = TestResult("bootstrap", float(t_batch[j]), float(p_batch[j]),
                                    int(d.size), n_resamples=n_resamples)  # fmt: skip
                else:
                    tr = bootstrap_test(a, b, n_resamples=n_resamples, seed=seed)
            else:
                assert tk is not None
                i1, i2 = systems.index(sys_a), systems.index(sys_b)
                tr = TestResult("tukey", float(tk[1][i1, i2]), float(tk[0][i1, i2]), tk[2])
            if ci_lo is not None and ci_hi is not None and not degenerate:
                lo, hi = float(ci_lo[j]), float(ci_hi[j])
            else:
                ci = bootstrap_ci(
                    a, b, confidence=confidence, n_resamples=n_bootstrap, method=bootstrap,
                    seed=seed,
                )  # fmt: skip
                lo, hi = ci.low, ci.high
            diff = float(d.mean()) if d.size else math.nan
            sd = float(d.std(ddof=1)) if d.size >= 2 else math.nan
            raw.append(
                dict(
                    system=sys_a,
                    baseline=sys_b,
                    measure=m,
                    n=tr.n if test != "sign" else int(d.size),
                    mean_system=mean[sys_a][m],
                    mean_baseline=mean[sys_b][m],
                    diff=diff,
                    ci_low=lo,
                    ci_high=hi,
                    effect_size=cohens_dz(a, b),
                    statistic=tr.statistic,
                    p_value=tr.p_value,
                    test=test,
                    wins=int(np.count_nonzero(d > tie)),
                    ties=int(np.count_nonzero(np.abs(d) <= tie)),
                    losses=int(np.count_nonzero(d < -tie)),
                    n_needed=queries_needed(sd, diff, alpha=alpha, power=power)
                    if math.isfinite(sd) and math.isfinite(diff)
                    else None,
                )
            )
        if asl and batch:
            every = _pair_list(systems, [base], "all")
            dd = np.stack([cols[a] - cols[b] for a, b in every], axis=1)
            asl_curves[m] = sorted(
                float(x) for x in bootstrap_many(dd, n_resamples=n_bootstrap, seed=seed).asl
            )
    p = np.array([r["p_value"] for r in raw], dtype=np.float64)
    if test == "tukey" or correction == "none":
        adj = p.copy()
    elif family == "all":
        adj = adjust_p(p, correction)
    else:
        adj = np.full(p.shape, np.nan)
        for m in meas:  # names compared as Python strings (NumPy's drop trailing NULs)
            sel = [i for i, r in enumerate(raw) if r["measure"] == m]
            adj[sel] = adjust_p(p[sel], correction)
    tests = [
        PairedComparison(
            **r,
            p_adjusted=float(adj[i]),
            mark=significance_mark(float(adj[i]), alpha, alpha_strong),
        )
        for i, r in enumerate(raw)
    ]
    settings: dict[str, Any] = {
        "pairs": pairs,
        "bootstrap": bootstrap,
        "n_bootstrap": n_bootstrap,
        "n_resamples": n_resamples,
        "seed": seed,
    }
    if len(bases) > 1:
        settings["baselines"] = list(bases)
    if tie:
        settings["tie"] = tie
    if test == "wilcoxon":
        settings["zero_method"] = zero_method
    n_rows = len(next(iter(table[systems[0]].values())))
    few = too_few_topics(test, n_rows, alpha)
    if few:
        from .._warn import warn_user

        warn_user(few)
    ranges = _tie_ranges(tie_range, per_query, table, systems, meas, mean, tie_share)
    rich = topics is not None  # the per-topic columns and plots need the topics named
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
        settings=settings,
        baselines=tuple(bases),
        mean_ci=mean_ci if rich else {},
        per_topic={s: {m: table[s][m] for m in meas} for s in systems} if rich else {},
        topics=tuple(str(t) for t in topics)
        if topics is not None
        else tuple(str(i) for i in range(n_rows)),
        query_set=query_set,
        asl=asl_curves,
        anova=anova,
        tie=tie,
        power=power,
        tie_range=ranges,
    )


def too_few_topics(test: str, n: int, alpha: float = 0.05) -> str:
    """A sentence when ``n`` topics are too few for ``test`` to mark a difference at ``alpha``
    (two-sided), else ``""``:

    * the sign, Wilcoxon signed-rank and randomisation tests: their smallest p-value is
      ``2 / 2^n`` (every difference of one sign; the exact null distributions put ``1/2^n`` on
      each sign vector), so at ``n`` with ``2^(1-n) >= alpha`` nothing can be significant;
    * the paired bootstrap: ``n`` topics have ``C(2n-1, n)`` distinct resamples, and when
      their number is below ``1 / alpha`` the p-value is too coarse to compare with ``alpha``;
    * the t-test and Tukey's HSD need a variance: at least 2 topics."""
    from .._tables import counted

    name = {"sign": "sign test", "wilcoxon": "Wilcoxon signed-rank test",
            "permutation": "randomisation test", "bootstrap": "paired bootstrap test",
            "t": "paired t-test", "tukey": "Tukey's HSD"}.get(test, test)  # fmt: skip
    topics = counted(n, "topic")
    if test in ("sign", "wilcoxon", "permutation"):
        smallest = 2.0 ** (1 - n) if n >= 1 else 1.0
        if smallest >= alpha:
            need = next(k for k in range(1, 64) if 2.0 ** (1 - k) < alpha)
            return (
                f"with {topics} the {name} cannot reach p < {alpha:g}: its smallest two-sided "
                f"p-value is 2/2^{n} = {smallest:.4g}, so no difference can be marked. Fix: "
                f"compare on {need} topics or more, or use the paired t-test"
            )
    elif test == "bootstrap":
        distinct = math.comb(2 * n - 1, n) if n >= 1 else 0
        if distinct * alpha < 1:
            need = next(k for k in range(1, 64) if math.comb(2 * k - 1, k) * alpha >= 1)
            return (
                f"with {topics} the {name} has only C(2n-1, n) = {distinct} distinct "
                f"resamples, too few for a p-value at {alpha:g}. Fix: compare on {need} topics "
                "or more, or use the paired t-test"
            )
    elif n < 2:
        return (
            f"with {topics} the {name} has no variance to test with: no p-value. Fix: compare "
            "on 2 topics or more"
        )
    return ""


def _tie_ranges(
    tie_range: bool | Mapping[str, Mapping[str, Any]],
    per_query: Mapping[str, Any],
    per_query_sizes: Mapping[str, Mapping[str, np.ndarray]],
    systems: tuple[str, ...],
    meas: tuple[str, ...],
    mean: dict[str, dict[str, float]],
    share: float | None,
) -> dict[str, dict[str, Any]]:
    """``{system: {measure: TieRange}}`` with the table's means (NaN-skipping) of each
    system's per-topic bounds, and a warning per system and measure whose range is wider than
    ``share`` of its mean (``{}`` when ``tie_range`` is false)."""
    from .._warn import warn_user
    from ..measures.tie_range import TIE_SHARE, TieRange, tie_warnings

    if tie_range is False or tie_range is None:
        return {}
    given: Mapping[str, Mapping[str, Any]]
    if tie_range is True:
        given = {str(k): getattr(v, "tie_range", None) or {} for k, v in per_query.items()}
    else:
        given = {str(k): v for k, v in tie_range.items()}
    out: dict[str, dict[str, Any]] = {}
    for s in systems:
        got = given.get(s) or {}
        missing = [m for m in meas if m not in got]
        if missing:
            raise ConventionError(
                f"system {s!r} has no tie range for {', '.join(missing)}. Fix: evaluate it "
                "with tie_range=True (evaluate, evaluate_trec) and pass the EvaluationResult, "
                "or pass tie_range={system: {measure: TieRange}}"
            )
        out[s] = {}
        for m in meas:
            tr = got[m]
            if np.asarray(tr.low).size != np.asarray(per_query_sizes[s][m]).size:
                raise DataFormatError(
                    f"system {s!r}'s tie range of {m} has {np.asarray(tr.low).size} topics, its "
                    f"values {np.asarray(per_query_sizes[s][m]).size}",
                    fix="pass the tie ranges of the same evaluation as the values",
                )
            low = np.asarray(tr.low, dtype=np.float64)
            high = np.asarray(tr.high, dtype=np.float64)
            tied = np.asarray(tr.tied, dtype=bool)
            if ((np.isnan(low) | np.isnan(high)) & tied).any():  # a bound not found: no
                out[s][m] = TieRange(m, low, high, math.nan, math.nan, tied)  # mean of the rest
                continue
            out[s][m] = TieRange(m, low, high, _nanmean(low), _nanmean(high), tied)
        named = {f"{m} of {s}": out[s][m] for m in meas}
        means = {f"{m} of {s}": mean[s][m] for m in meas}
        for line in tie_warnings(named, means, TIE_SHARE if share is None else share):
            warn_user(line)
    return out


def _nanmean(v: np.ndarray) -> float:
    ok = ~np.isnan(v)
    return float(v[ok].mean()) if ok.any() else math.nan


def _t_interval(v: np.ndarray, confidence: float) -> tuple[float, float]:
    """The Student-t ``confidence`` interval of the mean of ``v`` (``mean ± t·sd/√n``, sd with
    ddof = 1); NaN for fewer than two values."""
    from scipy import stats

    n = v.size
    if n < 2:
        return (math.nan, math.nan)
    mu = float(v.mean())
    half = float(stats.t.ppf(0.5 + confidence / 2.0, n - 1)) * float(v.std(ddof=1)) / math.sqrt(n)
    return (mu - half, mu + half)


def compare_runs(
    qrels: Any,
    runs: Any,
    measures: Any = None,
    *,
    preset: Any = "trec_eval",
    complete: bool = False,
    topics: Any = None,
    judged_only: bool | None = None,
    depth: int | None = None,
    score_precision: str | None = None,
    tie_range: bool = False,
    **options: Any,
) -> ComparisonResult:
    """Compare TREC runs on one qrels: :func:`ndcglab.analysis.runs.evaluate_runs` (files,
    dict-of-dicts or DataFrames; the query set stated and what it drops warned about), then
    :func:`compare_rankers` on the per-topic values with ``options`` (``baseline``, ``test``,
    ``pairs``, ``correction``, …). The result carries the query set
    (``result.query_set``) and the convention of the measures (``result.settings``).
    ``tie_range=True`` adds each run's tie range (:func:`compare_rankers`)."""
    from .runs import evaluate_runs

    rs = evaluate_runs(
        qrels,
        runs,
        measures,
        preset=preset,
        complete=complete,
        topics=topics,
        judged_only=judged_only,
        depth=depth,
        score_precision=score_precision,
        tie_range=tie_range,
    )
    res = compare_rankers(
        rs.per_query(),
        topics=rs.query_set.topics,
        query_set=rs.query_set,
        tie_range={n: r.tie_range for n, r in rs.results.items()} if tie_range else False,
        **options,
    )
    first = next(iter(rs.results.values()))
    res.settings["convention"] = first.convention
    return res
