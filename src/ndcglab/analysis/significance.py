"""Comparing rankers on the same queries: paired tests, confidence intervals, effect sizes.

All tests here are **paired**: system A and system B were evaluated on the same queries, and the
unit of analysis is the per-query difference ``d_q = A_q − B_q`` (queries where either value is
NaN — e.g. skipped by ``empty=skip`` — are dropped from that comparison and ``n`` says how many
were left).

* :func:`paired_t_test` — Student's paired t-test (``scipy.stats.ttest_rel``), two-sided by default.
* :func:`permutation_test` — the paired randomisation (sign-flip) test of the mean difference:
  under H0 each ``d_q`` is as likely to be ``+d_q`` as ``−d_q``. Exact (all ``2^n`` sign vectors)
  when ``n`` is small, else ``n_resamples`` seeded random sign vectors with the
  ``(1 + #{|T*| ≥ |T|}) / (1 + B)`` p-value (never 0).
* :func:`bootstrap_ci` — a seeded bootstrap confidence interval of the mean difference,
  ``percentile`` or ``bca`` (bias-corrected and accelerated, Efron & Tibshirani 1993 §14.3).
* :func:`cohens_dz` — Cohen's effect size for paired data, ``d_z = mean(d) / sd(d)`` with the
  sample standard deviation (``ddof = 1``) of the differences.
* :func:`holm` — Holm's step-down adjustment of a family of p-values (controls the family-wise
  error rate).
* :func:`compare_rankers` — all of the above for several systems and measures at once, returning a
  :class:`ComparisonResult` with a table and exporters to Markdown, LaTeX and CSV (atomic writes)
  that mark significant differences: ``†`` p < 0.05 and ``‡`` p < 0.01 (Holm-adjusted, two-sided,
  against the baseline). Every export states this legend.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from .._atomic import write_text_atomic
from ..errors import ConventionError, DataFormatError

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

#: largest number of non-zero differences for which ``exact="auto"`` always enumerates
EXACT_MAX_N = 16
#: enumerating more sign vectors than this is refused (``exact=True``)
EXACT_HARD_LIMIT = 2**24

_TESTS = ("t", "permutation")
_ALTERNATIVES = ("two-sided", "greater", "less")
_MARK_STRONG = "‡"
_MARK_WEAK = "†"


# ----------------------------------------------------------------------------- basics
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


# ----------------------------------------------------------------------------- many systems
@dataclass(frozen=True)
class PairedComparison:
    """One test of ``system`` against ``baseline`` on ``measure``.

    ``diff = mean(system − baseline)`` over the ``n`` queries where both have a value; ``ci_low``,
    ``ci_high`` its bootstrap interval; ``effect_size`` Cohen's d_z; ``p_value`` the raw p-value and
    ``p_adjusted`` after the family-wise correction; ``mark`` the significance mark (``‡``, ``†``
    or ``""``).
    """

    system: str
    baseline: str
    measure: str
    n: int
    mean_system: float
    mean_baseline: float
    diff: float
    ci_low: float
    ci_high: float
    effect_size: float
    statistic: float
    p_value: float
    p_adjusted: float
    mark: str
    test: str

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _mark(p_adj: float, alpha: float, alpha_strong: float) -> str:
    if not math.isfinite(p_adj):
        return ""
    if p_adj < alpha_strong:
        return _MARK_STRONG
    if p_adj < alpha:
        return _MARK_WEAK
    return ""


_TEST_WORDS = {
    "t": "two-sided paired t-test",
    "permutation": "two-sided paired randomisation (sign-flip) test",
}


@dataclass
class ComparisonResult:
    """Means of several systems and paired tests against a baseline; see :func:`compare_rankers`.

    Attributes: ``systems`` and ``measures`` (names, in order), ``baseline``, ``mean``
    (``{system: {measure: mean}}``, NaN-skipping), ``n_queries`` (``{system: {measure: count of
    non-NaN values}}``), ``tests`` (a list of :class:`PairedComparison`), ``test`` (``"t"`` or
    ``"permutation"``), ``correction``, ``family``, ``alpha``, ``alpha_strong``, ``confidence``,
    ``settings`` (every other option, for reports).
    """

    systems: tuple[str, ...]
    measures: tuple[str, ...]
    baseline: str
    mean: dict[str, dict[str, float]]
    n_queries: dict[str, dict[str, int]]
    tests: list[PairedComparison]
    test: str
    correction: str
    family: str
    alpha: float
    alpha_strong: float
    confidence: float
    settings: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ look-ups
    def get(
        self, system: str, measure: str, baseline: str | None = None
    ) -> PairedComparison | None:
        """The test of ``system`` vs ``baseline`` (default the result's baseline) on ``measure``."""
        base = self.baseline if baseline is None else baseline
        for t in self.tests:
            if t.system == system and t.measure == measure and t.baseline == base:
                return t
        return None

    def mark(self, system: str, measure: str) -> str:
        """The significance mark of ``system`` vs the baseline on ``measure`` ("" if none)."""
        t = self.get(system, measure)
        return "" if t is None else t.mark

    @property
    def legend(self) -> str:
        """One sentence that explains the marks (printed with every export)."""
        corr = {
            "holm": "Holm-adjusted",
            "none": "not adjusted for multiple comparisons",
        }[self.correction]
        fam = (
            "over the comparisons of each measure"
            if self.family == "measure"
            else "over all comparisons in the table"
        )
        if self.correction == "none":
            fam = ""
        words = _TEST_WORDS[self.test]
        extra = ""
        if self.test == "permutation":
            r = self.settings.get("n_resamples")
            extra = (
                f" (exact when at most {EXACT_MAX_N} non-zero differences, else {r} random "
                "sign vectors)"
            )
        return (
            f"{_MARK_WEAK} p < {self.alpha:g}, {_MARK_STRONG} p < {self.alpha_strong:g}: "
            f"{words}{extra} "
            f"against the baseline {self.baseline!r} on per-query values, p-values {corr}"
            + (f" {fam}" if fam else "")
            + f"; CI: {self.confidence:.0%} bootstrap ({self.settings.get('bootstrap', 'bca')}) "
            "interval of the mean difference; d_z: Cohen's d for paired data, mean(d)/sd(d)."
        )

    # ------------------------------------------------------------------ tables
    def table(
        self, *, floatfmt: str = ".4f", marks: bool = True
    ) -> tuple[list[str], list[list[str]]]:
        """The table of means as text cells: header ``["system", *measures]`` and one row per
        system, each mean followed by its mark (the baseline's row reads ``"NAME (baseline)"``)."""
        header = ["system", *self.measures]
        rows = []
        for s in self.systems:
            label = f"{s} (baseline)" if s == self.baseline else s
            cells = [label]
            for m in self.measures:
                v = self.mean[s][m]
                text = "n/a" if not math.isfinite(v) else f"{v:{floatfmt}}"
                if marks and s != self.baseline:
                    text += self.mark(s, m)
                cells.append(text)
            rows.append(cells)
        return header, rows

    def details(self, *, floatfmt: str = ".4f") -> tuple[list[str], list[list[str]]]:
        """One row per test: system, baseline, measure, n, diff, CI, d_z, p, adjusted p, mark."""
        lo = f"{self.confidence:.0%} CI"
        header = ["system", "baseline", "measure", "n", "diff", lo, "d_z", "p", "p_adj", "mark"]
        rows = []
        for t in self.tests:
            rows.append(
                [
                    t.system,
                    t.baseline,
                    t.measure,
                    str(t.n),
                    _fmt(t.diff, "+" + floatfmt),
                    f"[{_fmt(t.ci_low, '+' + floatfmt)}, {_fmt(t.ci_high, '+' + floatfmt)}]",
                    _fmt(t.effect_size, ".2f"),
                    _fmt_p(t.p_value),
                    _fmt_p(t.p_adjusted),
                    t.mark,
                ]
            )
        return header, rows

    def to_text(self, *, details: bool = True) -> str:
        """A plain-text rendering (what ``ndcglab compare`` prints)."""
        from ..cli._common import format_table

        header, rows = self.table()
        out = [format_table(header, rows)]
        if details and self.tests:
            h2, r2 = self.details()
            out += ["", format_table(h2, r2)]
        out += ["", self.legend]
        return "\n".join(out)

    def to_markdown(self, path: str | PathLike[str] | None = None, *, details: bool = False) -> str:
        """A Markdown table of means with marks, then (``details=True``) the per-test table, then
        the legend. Written atomically to ``path`` when given; the text is returned either way."""
        header, rows = self.table()
        lines = [_md_row(header), _md_row(["---"] + ["---:"] * (len(header) - 1))]
        lines += [_md_row(r) for r in rows]
        if details and self.tests:
            h2, r2 = self.details()
            lines += ["", _md_row(h2), _md_row(["---"] * 3 + ["---:"] * (len(h2) - 3))]
            lines += [_md_row(r) for r in r2]
        lines += ["", self.legend, ""]
        text = "\n".join(lines)
        if path is not None:
            write_text_atomic(path, text)
        return text

    def to_latex(
        self,
        path: str | PathLike[str] | None = None,
        *,
        caption: str | None = None,
        label: str | None = None,
    ) -> str:
        """A LaTeX ``table`` (booktabs rules) of means with ``\\dag``/``\\ddag`` marks; the legend
        is the caption (after ``caption`` if given). Written atomically to ``path`` when given."""
        header, rows = self.table(marks=False)
        cols = "l" + "r" * (len(header) - 1)
        body = []
        best = {m: _best(self, m) for m in self.measures}
        for s, cells in zip(self.systems, rows):
            out = [_tex_escape(cells[0])]
            for m, c in zip(self.measures, cells[1:]):
                mk = "" if s == self.baseline else self.mark(s, m)
                c = _tex_escape(c)
                if s == best[m]:
                    c = r"\textbf{" + c + "}"
                if mk:
                    c += r"$^{\ddag}$" if mk == _MARK_STRONG else r"$^{\dag}$"
                out.append(c)
            body.append(" & ".join(out) + r" \\")
        legend = self.legend.replace(_MARK_WEAK, r"\dag{}").replace(_MARK_STRONG, r"\ddag{}")
        legend = _tex_escape(legend, keep=(r"\dag{}", r"\ddag{}")).replace("<", "$<$")
        cap = (_tex_escape(caption) + " " if caption else "") + legend + " Bold: best mean."
        lines = [
            r"% requires \usepackage{booktabs}",
            r"\begin{table}[t]",
            r"\centering",
            r"\begin{tabular}{" + cols + "}",
            r"\toprule",
            " & ".join(_tex_escape(h) for h in header) + r" \\",
            r"\midrule",
            *body,
            r"\bottomrule",
            r"\end{tabular}",
            r"\caption{" + cap + "}",
        ]
        if label:
            lines.append(r"\label{" + label + "}")
        lines += [r"\end{table}", ""]
        text = "\n".join(lines)
        if path is not None:
            write_text_atomic(path, text)
        return text

    def to_csv(self, path: str | PathLike[str] | None = None) -> str:
        """Long CSV, one row per (system, measure): mean, n, and the test against the baseline
        (empty for the baseline itself). The first line is the legend as a ``#`` comment (read with
        ``pandas.read_csv(path, comment="#")``). Written atomically to ``path`` when given."""
        buf = io.StringIO()
        buf.write("# " + self.legend + "\n")
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(
            [
                "system",
                "measure",
                "mean",
                "n",
                "baseline",
                "diff",
                "ci_low",
                "ci_high",
                "effect_size_dz",
                "statistic",
                "p_value",
                "p_adjusted",
                "mark",
                "test",
            ]
        )
        for s in self.systems:
            for m in self.measures:
                t = self.get(s, m) if s != self.baseline else None
                row: list[Any] = [s, m, _csv_num(self.mean[s][m]), self.n_queries[s][m]]
                if t is None:
                    row += [""] * 10
                else:
                    row += [
                        t.baseline,
                        _csv_num(t.diff),
                        _csv_num(t.ci_low),
                        _csv_num(t.ci_high),
                        _csv_num(t.effect_size),
                        _csv_num(t.statistic),
                        _csv_num(t.p_value),
                        _csv_num(t.p_adjusted),
                        t.mark,
                        t.test,
                    ]
                w.writerow(row)
        text = buf.getvalue()
        if path is not None:
            write_text_atomic(path, text)
        return text

    def export(self, path: str | PathLike[str]) -> Path:
        """Write the table in the format named by the file's suffix: ``.md``, ``.tex``, ``.csv``."""
        p = Path(path)
        suffix = p.suffix.lower()
        if suffix in (".md", ".markdown"):
            self.to_markdown(p, details=True)
        elif suffix == ".tex":
            self.to_latex(p)
        elif suffix == ".csv":
            self.to_csv(p)
        else:
            raise ConventionError(
                f"cannot tell the table format of {str(path)!r}. Fix: end the file name in .md, "
                ".tex or .csv"
            )
        return p

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: ``systems`` ({name: {"mean": {...}, "n": {...}}}), ``mean``
        ({system: {measure: value}}), ``tests`` (list of dicts), ``baseline``, ``legend`` and the
        settings."""
        return {
            "baseline": self.baseline,
            "measures": list(self.measures),
            "systems": {
                s: {"mean": dict(self.mean[s]), "n": dict(self.n_queries[s])} for s in self.systems
            },
            "mean": {s: dict(self.mean[s]) for s in self.systems},
            "tests": [t.to_dict() for t in self.tests],
            "test": self.test,
            "correction": self.correction,
            "family": self.family,
            "alpha": self.alpha,
            "alpha_strong": self.alpha_strong,
            "confidence": self.confidence,
            "settings": dict(self.settings),
            "legend": self.legend,
        }


def _fmt(x: float, spec: str) -> str:
    return "n/a" if not math.isfinite(x) else format(x, spec)


def _fmt_p(p: float) -> str:
    if not math.isfinite(p):
        return "n/a"
    return "<1e-4" if p < 1e-4 else f"{p:.4f}"


def _csv_num(x: float) -> str:
    return "" if not math.isfinite(x) else repr(float(x))


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(c.replace("|", r"\|") for c in cells) + " |"


def _best(res: ComparisonResult, m: str) -> str | None:
    vals = [(res.mean[s][m], s) for s in res.systems if math.isfinite(res.mean[s][m])]
    return max(vals)[1] if vals else None


_TEX_CHARS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "±": r"$\pm$",
    "β": r"$\beta$",
    "−": "-",
    "—": "--",
    "≤": r"$\le$",
    "≥": r"$\ge$",
}


def _tex_escape(text: str, keep: Sequence[str] = ()) -> str:
    """Escape LaTeX's special characters (and write ±, β, ≤, ≥ in math mode), leaving the
    substrings in ``keep`` untouched. Also used by the reproduce reports' LaTeX tables."""
    if keep:
        parts = [text]
        for k in keep:
            parts = [piece for part in parts for piece in _split_keep(part, k)]
        return "".join(p if p in keep else _tex_escape(p) for p in parts)
    return "".join(_TEX_CHARS.get(ch, ch) for ch in text)


def _split_keep(text: str, sep: str) -> list[str]:
    pieces = text.split(sep)
    out: list[str] = []
    for i, p in enumerate(pieces):
        if i:
            out.append(sep)
        out.append(p)
    return out


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
        keys = np.array([r["measure"] for r in raw], dtype=object)
        for m in meas:
            sel = np.flatnonzero(keys == m)
            adj[sel] = holm(p[sel])
    tests = [
        PairedComparison(
            **r, p_adjusted=float(adj[i]), mark=_mark(float(adj[i]), alpha, alpha_strong)
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
