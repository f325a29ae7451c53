"""The result of comparing several rankers (:class:`ComparisonResult`) and its exports.

A :class:`ComparisonResult` holds each system's mean per measure and one
:class:`PairedComparison` per test against the baseline (made by
:func:`ndcglab.analysis.significance.compare_rankers`). It renders the table of means as text,
Markdown, LaTeX and CSV (through :mod:`ndcglab._tables`; files written atomically) and marks the
significant differences: ``†`` p < 0.05 and ``‡`` p < 0.01 (adjusted p-values, two-sided,
against the baseline, by default). Every export states this legend
(:attr:`ComparisonResult.legend`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from .._atomic import write_text_atomic
from .._tables import (
    TeX,
    TextTable,
    counted,
    format_table,
    latex_escape,
    markdown_text_escape,
)
from ..errors import ConventionError
from .paired_tests import EXACT_MAX_N

__all__ = [
    "MARK_HIGHER",
    "MARK_LOWER",
    "MARK_STRONG",
    "MARK_WEAK",
    "ComparisonResult",
    "PairedComparison",
    "significance_mark",
]

#: the mark of a difference significant at ``alpha_strong`` (default p < 0.01)
MARK_STRONG = "‡"
#: the mark of a difference significant at ``alpha`` (default p < 0.05)
MARK_WEAK = "†"
#: the directional marks (:meth:`ComparisonResult.direction_mark`): significantly higher than
#: the baseline, significantly lower (adjusted p < ``alpha``)
MARK_HIGHER = "▲"
MARK_LOWER = "▼"


@dataclass(frozen=True)
class PairedComparison:
    """One test of ``system`` against ``baseline`` on ``measure``.

    ``diff = mean(system − baseline)`` over the ``n`` queries where both have a value; ``ci_low``,
    ``ci_high`` its bootstrap interval; ``effect_size`` Cohen's d_z; ``p_value`` the raw p-value and
    ``p_adjusted`` after the family-wise correction; ``mark`` the significance mark (``‡``, ``†``
    or ``""``); ``wins``/``ties``/``losses`` the per-topic counts of ``d > tie``, ``|d| <= tie``,
    ``d < −tie``; ``n_needed`` the topics a two-sided paired t-test needs to detect ``diff`` with
    the result's power at level ``alpha`` (:func:`ndcglab.analysis.power.queries_needed`; None:
    not detectable).
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
    wins: int = 0
    ties: int = 0
    losses: int = 0
    n_needed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def significance_mark(p_adj: float, alpha: float, alpha_strong: float) -> str:
    """``‡`` when ``p_adj < alpha_strong``, ``†`` when ``p_adj < alpha``, else ``""`` (and for
    NaN)."""
    if not math.isfinite(p_adj):
        return ""
    if p_adj < alpha_strong:
        return MARK_STRONG
    if p_adj < alpha:
        return MARK_WEAK
    return ""


_TEST_WORDS = {
    "t": "two-sided paired t-test",
    "permutation": "two-sided paired randomisation (sign-flip) test",
    "wilcoxon": "two-sided Wilcoxon signed-rank test",
    "sign": "two-sided sign test",
    "bootstrap": "two-sided paired bootstrap test (Sakai, studentised, shifted to the null)",
    "tukey": "Tukey's HSD after a two-way ANOVA (system x topic), studentized range with the "
    "ANOVA's residual mean square",
}

#: the tests' short names, for sentences
_TEST_SHORT = {
    "t": "paired t-test",
    "permutation": "randomisation test",
    "wilcoxon": "Wilcoxon test",
    "sign": "sign test",
    "bootstrap": "studentised bootstrap test",
    "tukey": "Tukey HSD",
}

_CORRECTION_WORDS = {
    "holm": "Holm-adjusted",
    "bonferroni": "Bonferroni-adjusted",
    "bh": "Benjamini-Hochberg-adjusted (false discovery rate)",
    "by": "Benjamini-Yekutieli-adjusted (false discovery rate, any dependence)",
    "none": "not adjusted for multiple comparisons",
}

_SUPERSCRIPT = dict(zip("abcdefghijklmnopqrstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ𐞥ʳˢᵗᵘᵛʷˣʸᶻ"))


def system_letter(i: int) -> str:
    """The letter of the ``i``-th system (0-based): ``a`` … ``z``, then ``A`` … ``Z``, then
    ``a1``, ``b1`` …"""
    if i < 26:
        return chr(97 + i)
    if i < 52:
        return chr(65 + i - 26)
    return chr(97 + i % 26) + str(i // 52)


def superscript(letters: list[str]) -> str:
    """Letters as Unicode superscripts where one exists (``a`` … ``z``), else ``^X``."""
    return "".join(_SUPERSCRIPT.get(c, "^" + c) for c in letters)


@dataclass
class ComparisonResult:
    """Means of several systems and paired tests against a baseline; see
    :func:`ndcglab.analysis.significance.compare_rankers`.

    Attributes: ``systems`` and ``measures`` (names, in order), ``baseline``, ``mean``
    (``{system: {measure: mean}}``, NaN-skipping), ``n_queries`` (``{system: {measure: count of
    non-NaN values}}``), ``tests`` (a list of :class:`PairedComparison`), ``test`` (``"t"`` or
    ``"permutation"``), ``correction``, ``family``, ``alpha``, ``alpha_strong``, ``confidence``,
    ``settings`` (every other option, for reports), ``tie_range`` (``{system: {measure:
    TieRange}}``, :mod:`ndcglab.measures.tie_range`; empty unless asked): the worst and the
    best mean over every order of each system's tied documents, its ``mean_low`` and
    ``mean_high`` taken as ``mean`` is (NaN-skipping, over the same topics).
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
    baselines: tuple[str, ...] = ()
    mean_ci: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    per_topic: dict[str, dict[str, Any]] = field(default_factory=dict)
    topics: tuple[str, ...] = ()
    query_set: Any = None
    asl: dict[str, list[float]] = field(default_factory=dict)
    anova: dict[str, dict[str, Any]] = field(default_factory=dict)
    tie: float = 0.0
    power: float = 0.8
    tie_range: dict[str, dict[str, Any]] = field(default_factory=dict)

    # ------------------------------------------------------------------ look-ups
    @property
    def mark_style(self) -> str:
        """``"baseline"`` (``†``/``‡`` against the one baseline) when every test has the
        baseline as its reference, else ``"letters"``: a mean carries the letters of the systems
        it is significantly better than (adjusted p < ``alpha``), as ranx prints them."""
        if self.settings.get("pairs", "baseline") == "all" or len(self.baselines) > 1:
            return "letters"
        return "baseline"

    @property
    def letters(self) -> dict[str, str]:
        """System -> its letter (``a``, ``b``, … in the systems' order)."""
        return {s: system_letter(i) for i, s in enumerate(self.systems)}

    def better_than(self, system: str, measure: str) -> list[str]:
        """Letters of the systems ``system`` is significantly better than on ``measure``
        (adjusted p < ``alpha`` and a larger mean)."""
        out = []
        let = self.letters
        for t in self.tests:
            if t.measure != measure or not (t.p_adjusted < self.alpha):
                continue
            if t.system == system and t.diff > 0:
                out.append(let[t.baseline])
            elif t.baseline == system and t.diff < 0:
                out.append(let[t.system])
        return sorted(out, key=lambda c: list(let.values()).index(c))

    def cell_mark(self, system: str, measure: str) -> str:
        """The text mark after a mean: ``†``/``‡`` (baseline style) or superscript letters."""
        if self.mark_style == "baseline":
            return "" if system == self.baseline else self.mark(system, measure)
        return superscript(self.better_than(system, measure))

    def get(
        self, system: str, measure: str, baseline: str | None = None
    ) -> PairedComparison | None:
        """The test of ``system`` vs ``baseline`` (default the result's baseline) on ``measure``."""
        base = self.baseline if baseline is None else baseline
        for t in self.tests:
            if t.system == system and t.measure == measure and t.baseline == base:
                return t
        return None

    def direction_mark(self, system: str, measure: str) -> str:
        """:data:`MARK_HIGHER` when ``system`` is significantly above the baseline on
        ``measure`` (adjusted p < ``alpha``), :data:`MARK_LOWER` when significantly below, else
        ``""``: a mark that says which way, for tables where a mean beside its baseline's must
        not read as "better" when it is lower (:meth:`legend_for` with ``directional=True``)."""
        t = self.get(system, measure)
        if t is None or not (math.isfinite(t.p_adjusted) and t.p_adjusted < self.alpha):
            return ""
        return MARK_HIGHER if t.diff > 0 else MARK_LOWER if t.diff < 0 else ""

    def mark(self, system: str, measure: str) -> str:
        """The significance mark of ``system`` vs the baseline on ``measure`` ("" if none)."""
        t = self.get(system, measure)
        return "" if t is None else t.mark

    @property
    def legend(self) -> str:
        """The sentences that explain the marks and every column of the text output (the
        table of means, the means with their intervals and the per-test table):
        :meth:`legend_for` with everything."""
        return self.legend_for(tests=True, mean_ci=True)

    def legend_for(self, *, tests: bool, mean_ci: bool = False, directional: bool = False) -> str:
        """The legend of an output: the marks, the test, the correction and the query set
        always; the per-test columns (CI, d_z, W/T/L, topics needed) and why an interval and a
        mark can disagree only with ``tests`` (the output has the per-test table); the means'
        Student-t interval only with ``mean_ci``. A LaTeX table of means gets neither, so its
        legend describes no column it does not have. ``directional=True`` explains the marks of
        :meth:`direction_mark` (above / below the baseline) instead of the levels."""
        corr = _CORRECTION_WORDS[self.correction]
        if self.test == "tukey":
            corr = (
                "not adjusted further (Tukey's HSD controls the family-wise error over all pairs)"
            )
        fam = (
            "over the comparisons of each measure"
            if self.family == "measure"
            else "over all comparisons in the table"
        )
        if self.correction == "none":
            fam = ""
        words = _TEST_WORDS[self.test]
        if self.test == "wilcoxon":
            zm = self.settings.get("zero_method", "wilcox")
            words += (
                " (zero differences "
                + ("dropped (Wilcoxon)" if zm == "wilcox" else "ranked, then dropped (Pratt)")
                + "; tied |d| get their average rank; exact distribution when at most 50 "
                "differences and no ties, else normal approximation with tie correction, no "
                "continuity correction)"
            )
        elif self.test == "sign":
            words += f" (|d| <= {self.tie:g} is a tie and is dropped; binomial, p = 1/2)"
        elif self.test == "bootstrap":
            words += f" ({self.settings.get('n_resamples')} resamples)"
        extra = ""
        if self.test == "permutation":
            r = self.settings.get("n_resamples")
            extra = (
                f" (exact when at most {EXACT_MAX_N} non-zero differences, else {r} random "
                "sign vectors)"
            )
        if directional:
            head = (
                f"{MARK_HIGHER} significantly higher, {MARK_LOWER} significantly lower than the "
                f"baseline {self.baseline!r} (p < {self.alpha:g}): "
            )
            against = ""  # the head names the baseline
        elif self.mark_style == "baseline":
            head = f"{MARK_WEAK} p < {self.alpha:g}, {MARK_STRONG} p < {self.alpha_strong:g}: "
            against = f"against the baseline {self.baseline!r}"
        else:
            head = (
                f"a letter after a mean: significantly better (p < {self.alpha:g}) than the "
                "system of that letter: "
            )
            against = (
                "between every pair of systems"
                if self.settings.get("pairs") == "all"
                else "against the baselines " + ", ".join(repr(b) for b in self.baselines)
            )
        text = f"{head}{words}{extra}{' ' + against if against else ''} on per-query values, "
        text += f"p-values {corr}" + (f" {fam}" if fam and self.test != "tukey" else "")
        if tests:
            text += (
                f"; CI: {self.confidence:.0%} bootstrap ({self.settings.get('bootstrap', 'bca')}) "
                "interval of the mean difference; d_z: Cohen's d for paired data, mean(d)/sd(d)."
            )
        else:
            text += "."
        if tests and self.per_topic:
            text += (
                " W/T/L: topics with "
                + (
                    f"d > {self.tie:g}, |d| <= {self.tie:g}, d < -{self.tie:g}"
                    if self.tie
                    else "d > 0, d = 0, d < 0"
                )
                + " (d = system - reference); topics needed: for a two-sided paired t-test at "
                f"{self.alpha:g} to detect the difference with power {self.power:g}."
            )
        if mean_ci and self.mean_ci:
            text += " Mean CI: Student-t interval of each mean."
        if tests:
            text += self._disagreement()
        if self.tie_range:
            text += (
                " Tie range: [worst, best] mean over every order of the system's documents with "
                "tied scores (exact per topic: the pessimistic and the optimistic tie order), "
                "with the number of topics that have ties; the means and the tests use the "
                "values under the preset's tie rule."
            )
        if self.query_set is not None:
            text += " " + self.query_set.statement[0].upper() + self.query_set.statement[1:]
        return text

    def _disagreement(self) -> str:
        """A sentence where an interval and a mark disagree (the interval excludes 0 and the
        difference is not marked, or the reverse): they come from different procedures."""
        odd = [
            t
            for t in self.tests
            if math.isfinite(t.ci_low)
            and math.isfinite(t.ci_high)
            and math.isfinite(t.p_adjusted)
            and ((t.ci_low > 0 or t.ci_high < 0) != (t.p_adjusted < self.alpha))
        ]
        if not odd:
            return ""
        t = odd[0]
        adjusted = "" if self.correction == "none" or self.test == "tukey" else "adjusted "
        return (
            f" For {counted(len(odd), 'test')} (e.g. {t.system} vs {t.baseline} on {t.measure}: "
            f"CI [{t.ci_low:+.4f}, {t.ci_high:+.4f}], {adjusted}p {_fmt_p(t.p_adjusted)}) the "
            "interval and the mark disagree: the interval is a bootstrap interval of the mean "
            "difference, one comparison at a time, while the mark follows the "
            f"{_TEST_SHORT[self.test]}'s "
            + ("p-value after the multiple-comparison adjustment" if adjusted else "p-value")
            + "; different procedures on different statistics, which can fall on either side of "
            "the threshold."
        )

    # ------------------------------------------------------------------ tables
    def table(
        self, *, floatfmt: str = ".4f", marks: bool = True
    ) -> tuple[list[str], list[list[str]]]:
        """The table of means as text cells: header ``["system", *measures]`` and one row per
        system, each mean followed by its mark (the baseline's row reads ``"NAME (baseline)"``)."""
        header = ["system", *self.measures, *self._tie_header()]
        rows = []
        letters = self.mark_style == "letters"
        for s in self.systems:
            named = self.settings.get("pairs", "baseline") == "baseline"
            label = f"{s} (baseline)" if named and s in (self.baselines or (self.baseline,)) else s
            if letters:
                label = f"({self.letters[s]}) {label}"
            cells = [label]
            for m in self.measures:
                v = self.mean[s][m]
                text = "n/a" if not math.isfinite(v) else f"{v:{floatfmt}}"
                if marks:
                    text += self.cell_mark(s, m)
                cells.append(text)
            rows.append(cells + self._tie_cells(s, floatfmt))
        return header, rows

    def _tie_header(self) -> list[str]:
        """The tie-range columns: one ``tie range`` per measure (named after it when there are
        several) and ``tied topics``; none unless the result has tie ranges."""
        if not self.tie_range:
            return []
        if len(self.measures) == 1:
            return ["tie range", "tied topics"]
        return [f"tie range {m}" for m in self.measures] + ["tied topics"]

    def _tie_cells(self, system: str, floatfmt: str) -> list[str]:
        """``[low, high]`` per measure and the number of topics with ties, for ``system``."""
        if not self.tie_range:
            return []
        got = self.tie_range.get(system, {})
        cells, n_tied = [], 0
        for m in self.measures:
            tr = got.get(m)
            if tr is None:
                cells.append("n/a")
                continue
            n_tied = max(n_tied, tr.n_tied)
            if tr.not_found(self.mean[system][m]):
                cells.append("not given")  # a tied query's bounds were not found (a warning)
                continue
            cells.append(f"[{_fmt(tr.mean_low, floatfmt)}, {_fmt(tr.mean_high, floatfmt)}]")
        return [*cells, str(n_tied)]

    def means_ci(self, *, floatfmt: str = ".4f") -> tuple[list[str], list[list[str]]]:
        """Each mean with its Student-t interval: ``mean [low, high]`` per system and measure."""
        header = ["system", *(f"{m} ({self.confidence:.0%} CI)" for m in self.measures)]
        rows = []
        for s in self.systems:
            cells = [s]
            for m in self.measures:
                lo, hi = self.mean_ci.get(s, {}).get(m, (math.nan, math.nan))
                mu = _fmt(self.mean[s][m], floatfmt)
                cells.append(f"{mu} [{_fmt(lo, floatfmt)}, {_fmt(hi, floatfmt)}]")
            rows.append(cells)
        return header, rows

    def details(self, *, floatfmt: str = ".4f") -> tuple[list[str], list[list[str]]]:
        """One row per test: system, baseline, measure, n, diff, CI, d_z, p, adjusted p, mark."""
        lo = f"{self.confidence:.0%} CI"
        header = ["system", "baseline", "measure", "n", "diff", lo, "d_z", "p", "p_adj", "mark"]
        more = bool(self.per_topic)
        if more:
            header += ["W/T/L", "topics needed"]
        rows = []
        for t in self.tests:
            row = [
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
            if more:
                row += [
                    f"{t.wins}/{t.ties}/{t.losses}",
                    "n/a" if t.n_needed is None else str(t.n_needed),
                ]
            rows.append(row)
        return header, rows

    def to_text(self, *, details: bool = True) -> str:
        """A plain-text rendering (what ``ndcglab compare`` prints)."""
        header, rows = self.table()
        out = [format_table(header, rows)]
        if details and self.mean_ci:
            h1, r1 = self.means_ci()
            out += ["", format_table(h1, r1)]
        if details and self.tests:
            h2, r2 = self.details()
            out += ["", format_table(h2, r2)]
        if details and self.asl:
            out += ["", self.asl_summary()]
        out += ["", self.legend]
        return "\n".join(out)

    def discriminative_power(self, measure: str) -> float:
        """The share of system pairs whose bootstrap ASL is below ``alpha`` (Sakai)."""
        v = self.asl.get(measure, [])
        return float(sum(x < self.alpha for x in v)) / len(v) if v else math.nan

    def asl_summary(self) -> str:
        """One line per measure: the discriminative power (pairs with ASL < alpha)."""
        lines = [
            f"discriminative power (paired bootstrap ASL < {self.alpha:g}, "
            f"{self.settings.get('n_bootstrap')} resamples, all "
            f"{len(next(iter(self.asl.values())))} "
            "pairs of systems):"
        ]
        for m, v in self.asl.items():
            k = sum(x < self.alpha for x in v)
            lines.append(f"  {m}: {k} of {len(v)} pairs ({self.discriminative_power(m):.1%})")
        return "\n".join(lines)

    def to_markdown(self, path: str | PathLike[str] | None = None, *, details: bool = False) -> str:
        """A Markdown table of means with marks, then (``details=True``) the per-test table, then
        the legend. Written atomically to ``path`` when given; the text is returned either way."""
        header, rows = self.table()
        lines = [TextTable(header, rows).to_markdown()]
        if details and self.tests:
            h2, r2 = self.details()
            lines += ["", TextTable(h2, r2, align="lll" + "r" * (len(h2) - 3)).to_markdown()]
        lines += ["", markdown_text_escape(self.legend_for(tests=details)), ""]
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
        body: list[list[str]] = []
        best = {m: _best(self, m) for m in self.measures}
        letters = self.mark_style == "letters"
        for s, cells in zip(self.systems, rows):
            out: list[str] = [cells[0]]
            for m, c in zip(self.measures, cells[1:]):
                c = latex_escape(c)
                if s == best[m]:
                    c = r"\textbf{" + c + "}"
                if letters:
                    lt = self.better_than(s, m)
                    if lt:
                        c += "$^{" + "".join(lt) + "}$"
                else:
                    mk = "" if s == self.baseline else self.mark(s, m)
                    if mk:
                        c += r"$^{\ddag}$" if mk == MARK_STRONG else r"$^{\dag}$"
                out.append(TeX(c))
            out += [TeX(latex_escape(c)) for c in cells[1 + len(self.measures) :]]
            body.append(out)
        legend = self.legend_for(tests=False)  # the table shows the means and marks only
        legend = legend.replace(MARK_WEAK, r"\dag{}").replace(MARK_STRONG, r"\ddag{}")
        legend = latex_escape(legend, keep=(r"\dag{}", r"\ddag{}"))
        if self.per_topic:  # the legend as a table note under the table, the caption short
            cap = latex_escape(caption) if caption else "Comparison of systems."
            lines = [
                r"% requires \usepackage{booktabs}",
                r"\begin{table}[t]",
                r"\centering",
                r"\caption{" + cap + "}",
            ]
            if label:
                lines.append(r"\label{" + label + "}")
            lines += [
                TextTable(header, body).to_latex(),
                r"\par\smallskip",
                r"\parbox{\linewidth}{\footnotesize " + legend + " Bold: best mean.}",
                r"\end{table}",
                "",
            ]
        else:
            cap = (latex_escape(caption) + " " if caption else "") + legend + " Bold: best mean."
            lines = [
                r"% requires \usepackage{booktabs}",
                r"\begin{table}[t]",
                r"\centering",
                TextTable(header, body).to_latex(),
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
        header = [
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
        more = bool(self.per_topic)
        if more:
            header += ["mean_ci_low", "mean_ci_high", "wins", "ties", "losses", "topics_needed"]
        if self.tie_range:
            header += ["tie_low", "tie_high", "tie_width", "tied_topics"]
        rows: list[list[str]] = []
        for s in self.systems:
            for m in self.measures:
                found = [t for t in self.tests if t.measure == m and t.system == s]
                if not more:
                    found = found[:1] if s != self.baseline else []
                    found = [t for t in found if t.baseline == self.baseline]
                for t in found or [None]:  # type: ignore[list-item]
                    rows.append(self._csv_row(s, m, t, more))
        text = TextTable(header, rows).to_csv(comment=self.legend)
        if path is not None:
            write_text_atomic(path, text)
        return text

    def _csv_row(self, s: str, m: str, t: PairedComparison | None, more: bool) -> list[str]:
        row = [s, m, _csv_num(self.mean[s][m]), str(self.n_queries[s][m])]
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
        if more:
            lo, hi = self.mean_ci.get(s, {}).get(m, (math.nan, math.nan))
            row += [_csv_num(lo), _csv_num(hi)]
            if t is None:
                row += [""] * 4
            else:
                row += [str(t.wins), str(t.ties), str(t.losses),
                        "" if t.n_needed is None else str(t.n_needed)]  # fmt: skip
        if self.tie_range:
            tr = self.tie_range.get(s, {}).get(m)
            if tr is None:
                row += [""] * 4
            else:
                row += [_csv_num(tr.mean_low), _csv_num(tr.mean_high), _csv_num(tr.width),
                        str(tr.n_tied)]  # fmt: skip
        return row

    def export(self, path: str | PathLike[str]) -> Path:
        """Write the table in the format named by the file's suffix: ``.md``, ``.tex``, ``.csv``,
        ``.html``, ``.json``."""
        p = Path(path)
        suffix = p.suffix.lower()
        if suffix in (".md", ".markdown"):
            self.to_markdown(p, details=True)
        elif suffix == ".tex":
            self.to_latex(p)
        elif suffix == ".csv":
            self.to_csv(p)
        elif suffix in (".html", ".htm"):
            self.to_html(p)
        elif suffix == ".json":
            import json

            write_text_atomic(p, json.dumps(_plain(self.to_dict()), indent=2) + "\n")
        else:
            raise ConventionError(
                f"cannot tell the table format of {str(path)!r}. Fix: end the file name in .md, "
                ".tex, .csv, .html or .json"
            )
        return p

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape: ``systems`` ({name: {"mean": {...}, "n": {...}}}), ``mean``
        ({system: {measure: value}}), ``tests`` (list of dicts), ``baseline``, ``legend`` and the
        settings."""
        return (
            {
                "baseline": self.baseline,
                "measures": list(self.measures),
                "systems": {
                    s: {"mean": dict(self.mean[s]), "n": dict(self.n_queries[s])}
                    for s in self.systems
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
            | self._more_dict()
            | self._tie_dict()
        )

    def _tie_dict(self) -> dict[str, Any]:
        if not self.tie_range:
            return {}
        return {
            "tie_range": {
                s: {m: tr.to_dict() for m, tr in d.items()} for s, d in self.tie_range.items()
            }
        }

    def _more_dict(self) -> dict[str, Any]:
        if not self.per_topic:
            return {}
        out: dict[str, Any] = {
            "baselines": list(self.baselines),
            "mark_style": self.mark_style,
            "letters": self.letters,
            "mean_ci": {s: {m: list(v) for m, v in d.items()} for s, d in self.mean_ci.items()},
            "tie": self.tie,
            "power": self.power,
            "topics": list(self.topics),
            "per_topic": {
                s: {m: [float(x) for x in v] for m, v in d.items()}
                for s, d in self.per_topic.items()
            },
        }
        if self.query_set is not None:
            out["query_set"] = self.query_set.to_dict()
        if self.asl:
            out["asl"] = {m: list(v) for m, v in self.asl.items()}
            out["discriminative_power"] = {m: self.discriminative_power(m) for m in self.asl}
        if self.anova:
            out["anova"] = dict(self.anova)
        return out

    def to_html(self, path: str | PathLike[str] | None = None, *, title: str | None = None) -> str:
        """A self-contained HTML page: the table, the per-topic difference plots (sorted bars)
        and the ASL curves, as inline SVG (:mod:`ndcglab.analysis.compare_html`). Written
        atomically to ``path`` when given."""
        from .compare_html import comparison_page

        text = comparison_page(self, title=title)
        if path is not None:
            write_text_atomic(path, text)
        return text


def _plain(x: Any) -> Any:
    """``x`` as JSON values: NaN and infinities as ``null``, NumPy numbers as Python's."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if hasattr(x, "tolist") and not isinstance(x, str):
        return _plain(x.tolist())
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    return x


def _fmt(x: float, spec: str) -> str:
    """``x`` formatted with ``spec``; ``n/a`` when not finite."""
    return "n/a" if not math.isfinite(x) else format(x, spec)


def _fmt_p(p: float) -> str:
    """A p-value with four decimals; ``<1e-4`` below that, ``n/a`` when not finite."""
    if not math.isfinite(p):
        return "n/a"
    return "<1e-4" if p < 1e-4 else f"{p:.4f}"


def _csv_num(x: float) -> str:
    """Full precision (``repr``) for the CSV; empty when not finite."""
    return "" if not math.isfinite(x) else repr(float(x))


def _best(res: ComparisonResult, m: str) -> str | None:
    """The system with the largest finite mean on ``m`` (bold in LaTeX)."""
    vals = [(res.mean[s][m], s) for s in res.systems if math.isfinite(res.mean[s][m])]
    return max(vals)[1] if vals else None
