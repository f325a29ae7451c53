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
from .._tables import TeX, TextTable, format_table, latex_escape, markdown_text_escape
from ..errors import ConventionError
from .paired_tests import EXACT_MAX_N

__all__ = ["MARK_STRONG", "MARK_WEAK", "ComparisonResult", "PairedComparison", "significance_mark"]

#: the mark of a difference significant at ``alpha_strong`` (default p < 0.01)
MARK_STRONG = "‡"
#: the mark of a difference significant at ``alpha`` (default p < 0.05)
MARK_WEAK = "†"


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
}


@dataclass
class ComparisonResult:
    """Means of several systems and paired tests against a baseline; see
    :func:`ndcglab.analysis.significance.compare_rankers`.

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
            f"{MARK_WEAK} p < {self.alpha:g}, {MARK_STRONG} p < {self.alpha_strong:g}: "
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
        lines = [TextTable(header, rows).to_markdown()]
        if details and self.tests:
            h2, r2 = self.details()
            lines += ["", TextTable(h2, r2, align="lll" + "r" * (len(h2) - 3)).to_markdown()]
        lines += ["", markdown_text_escape(self.legend), ""]
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
        for s, cells in zip(self.systems, rows):
            out: list[str] = [cells[0]]
            for m, c in zip(self.measures, cells[1:]):
                mk = "" if s == self.baseline else self.mark(s, m)
                c = latex_escape(c)
                if s == best[m]:
                    c = r"\textbf{" + c + "}"
                if mk:
                    c += r"$^{\ddag}$" if mk == MARK_STRONG else r"$^{\dag}$"
                out.append(TeX(c))
            body.append(out)
        legend = self.legend.replace(MARK_WEAK, r"\dag{}").replace(MARK_STRONG, r"\ddag{}")
        legend = latex_escape(legend, keep=(r"\dag{}", r"\ddag{}")).replace("<", "$<$")
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
        rows: list[list[str]] = []
        for s in self.systems:
            for m in self.measures:
                t = self.get(s, m) if s != self.baseline else None
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
                rows.append(row)
        text = TextTable(header, rows).to_csv(comment=self.legend)
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
