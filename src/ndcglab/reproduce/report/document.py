"""The report document: :class:`Report`, filled in memory by an experiment and written at the end.

An experiment adds tables, figures, paragraphs, significance marks with their meaning, the
conventions of every measure it printed, the datasets it read and its findings (a paper's claim,
what was observed, whether they agree). :meth:`Report.to_dict` is the content of results.json,
:meth:`Report.to_html` the page (:mod:`.page`), :meth:`Report.write` the atomic folder
(:mod:`.bundle`).
"""

from __future__ import annotations

import datetime as _dt
import io
import os
import platform
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..._versions import package_versions
from ...errors import NdcglabError
from .bundle import write_bundle, write_report_files
from .page import render_page
from .table import Table, check_name, jsonable

__all__ = ["Report"]


@dataclass
class _Figure:
    name: str
    title: str
    caption: str
    png: bytes


@dataclass
class _Section:
    kind: str  # "text" | "table" | "figure" | "heading" | "details" | "end-details"
    payload: Any


def _reason_with(verdict: Any, observed: str) -> str:
    """A verdict's one-line reason; a rule that states only which condition held (no numbers of
    its own, :func:`ndcglab.reproduce.verdicts.threshold` without a detail) is followed by the
    first clause of what was observed, so the reason says why."""
    reason = str(getattr(verdict, "reason", "") or "")
    if reason and not getattr(verdict, "detail", "") and observed and "(" not in reason:
        return f"{reason}: {first_clause(observed)}"  # the rest is folded
    return reason


def first_clause(text: str) -> str:
    """``text`` up to its first ``"; "`` outside brackets: a clause never ends inside a
    parenthesis it opened (``a (b; c); d`` -> ``a (b; c)``)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(depth - 1, 0)
        elif ch == ";" and depth == 0 and text[i + 1 : i + 2] == " ":
            return text[:i]
    return text


class Report:
    """One experiment's report, filled in memory and written atomically by :meth:`write`.

    Parameters
    ----------
    experiment:
        the experiment's registered name (``"cost-sensitive"`` ...).
    title:
        the page title.
    claim:
        what the paper claims, in one or two sentences (printed at the top).
    quick:
        whether a reduced run (``--quick``); the page says so in a banner with ``quick_note``.
    seed:
        the master seed of the run.
    """

    def __init__(
        self,
        experiment: str,
        title: str,
        *,
        claim: str = "",
        quick: bool = False,
        seed: int | None = None,
        command: Sequence[str] | None = None,
    ) -> None:
        check_name(experiment, "experiment")
        self.experiment = experiment
        self.title = title
        self.claim = claim
        self.quick = quick
        self.quick_note = ""
        #: what this run can and cannot test (synthetic vs real data), shown in a banner at the top
        self.scope = ""
        #: how the verdicts are decided, shown with the rules under the verdict table
        self.verdict_note = ""
        #: the data this run read (HTML: path, sizes, hashes), shown in a banner at the top
        self.data_note = ""
        #: the index page this report belongs to (``"../index.html"`` under ``reproduce all``)
        self.parent_href: str | None = None
        self.seed = seed
        self.seeds: dict[str, Any] = {}
        self.command = list(command) if command is not None else list(sys.argv)
        self.sections: list[_Section] = []
        self.tables: dict[str, Table] = {}
        self.figures: dict[str, _Figure] = {}
        self.legend: dict[str, str] = {}
        self.conventions: dict[str, dict[str, Any]] = {}
        self.datasets: list[dict[str, Any]] = []
        self.results: dict[str, Any] = {}
        self.findings: list[dict[str, Any]] = []
        self.timings: dict[str, float] = {}
        self.started = _dt.datetime.now(_dt.timezone.utc)
        self.finished: _dt.datetime | None = None
        self.elapsed_s: float | None = None
        #: methods that failed to train (:mod:`ndcglab.reproduce.soundness`), named on the page
        self.failed_runs: list[dict[str, str]] = []
        self.links: list[tuple[str, str, str]] = []  # (href, text, description) for index pages
        self.files: dict[str, str] = {}  # extra text files: relative path -> content

    # -- filling -----------------------------------------------------------------------------
    def heading(self, text: str) -> None:
        """A sub-heading (``<h2>``) in the page body."""
        self.sections.append(_Section("heading", text))

    def text(self, paragraph: str) -> None:
        """A paragraph of plain text (escaped) in the page body."""
        self.sections.append(_Section("text", paragraph))

    def begin_details(self, summary: str) -> None:
        """Fold what follows (until :meth:`end_details`) into a closed ``<details>`` whose
        ``<summary>`` is ``summary`` (plain text)."""
        self.sections.append(_Section("details", summary))

    def end_details(self) -> None:
        """Close the ``<details>`` opened by :meth:`begin_details`."""
        self.sections.append(_Section("end-details", None))

    def add_failed_run(self, protocol: str, method: str, reason: str) -> None:
        """Name a method that failed to train under ``protocol`` and why (shown above the
        verdicts; see :mod:`ndcglab.reproduce.soundness`)."""
        entry = {"protocol": protocol, "method": method, "reason": reason}
        if entry not in self.failed_runs:
            self.failed_runs.append(entry)

    def add_table(self, table: Table, *, shown: bool = True) -> Table:
        """Add a table (shown in the page and written as CSV/Markdown/LaTeX); ``shown=False``
        writes its files and results.json entry only (the page says the same another way)."""
        if table.name in self.tables:
            raise NdcglabError(
                f"report {self.experiment!r} already has a table named {table.name!r}"
            )
        for m in table.marks():
            if m not in self.legend and m not in table.legend:
                raise NdcglabError(
                    f"table {table.name!r} uses the mark {m!r} with no legend. "
                    "Fix: give the table a legend that explains it (Table(..., legend=...)) or "
                    "call report.add_mark(mark, meaning) first"
                )
        self.tables[table.name] = table
        if shown:
            self.sections.append(_Section("table", table.name))
        return table

    def add_figure(
        self, name: str, fig: Any, *, title: str = "", caption: str = "", dpi: int = 110
    ) -> None:
        """Render a matplotlib figure to PNG now (and close it); shown in the page as ``<img>``."""
        check_name(name, "figure")
        if name in self.figures:
            raise NdcglabError(f"report {self.experiment!r} already has a figure named {name!r}")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
        from ..._compat import pyplot

        pyplot().close(fig)
        self.figures[name] = _Figure(name, title or name, caption, buf.getvalue())
        self.sections.append(_Section("figure", name))

    def add_mark(self, mark: str, meaning: str) -> None:
        """Explain a significance mark for the whole report (printed under every table that uses
        it and has no legend of its own). Marks whose meaning depends on the table (a different
        baseline per table) belong in the table's own ``legend`` instead."""
        self.legend[mark] = meaning

    def add_convention(self, printed_name: str, convention: Mapping[str, Any]) -> None:
        """Record a measure's printed name and its full convention dict (shown in the page)."""
        self.conventions[str(printed_name)] = dict(convention)

    def add_conventions(self, conventions: Mapping[str, Mapping[str, Any]]) -> None:
        """Record several measures at once: ``{printed name: convention dict}``."""
        for printed_name, convention in conventions.items():
            self.add_convention(printed_name, convention)

    def add_conventions_from(self, result: Any) -> None:
        """Record every measure of an ``EvaluationResult`` with the result's convention dict.

        The convention dict may be one dict for all measures or a mapping printed name -> dict.
        """
        conv = getattr(result, "convention", {}) or {}
        names = [str(m) for m in getattr(result, "measures", ())] or list(
            getattr(result, "mean", {})
        )
        for name in names:
            self.add_convention(name, measure_convention(conv, name))

    def add_dataset(self, info: Mapping[str, Any]) -> None:
        """Record a dataset description (see :func:`ndcglab.reproduce._common.describe_dataset`)."""
        self.datasets.append(dict(info))

    def add_finding(
        self,
        claim: str,
        observed: str,
        agrees: Any,
        *,
        rule: str = "",
        detail: str = "",
        protocols: Mapping[str, Mapping[str, Any]] | None = None,
        robust: bool | None = None,
    ) -> None:
        """A paper claim, what we observed and the verdict.

        ``agrees`` is a :class:`ndcglab.reproduce.verdicts.Verdict` (its verdict, rule, detail and
        reason are kept) or ``True``/``False``/``None`` (agrees / disagrees / inconclusive) with the
        ``rule`` that decided it. The finding stores ``agrees`` (``True``/``False``/``None``),
        ``verdict`` (one of :data:`ndcglab.reproduce.verdicts.VERDICTS`), ``rule``, ``detail`` and
        ``reason`` (one line, for the verdict table); a claim checked under several training
        protocols also stores ``base_rule`` (the rule without the robustness rule), ``protocols``
        (protocol name -> ``{"verdict", "observed", "rule", "detail", "reason"}``) and ``robust``
        (see :meth:`add_protocol_findings`).
        """
        from ..verdicts import AGREES, DISAGREES, INCONCLUSIVE

        reason = ""
        if hasattr(agrees, "verdict") and hasattr(agrees, "rule"):
            flag = agrees.agrees
            verdict = agrees.verdict
            rule = rule or agrees.rule
            reason = _reason_with(agrees, observed)
            detail = detail or getattr(agrees, "detail", "")
        else:
            flag = None if agrees is None else bool(agrees)
            verdict = {True: AGREES, False: DISAGREES, None: INCONCLUSIVE}[flag]
        self.findings.append(
            {
                "claim": claim,
                "observed": observed,
                "agrees": flag,
                "verdict": verdict,
                "rule": rule,
                "detail": detail,
                "reason": reason,
                **(
                    {}
                    if protocols is None
                    else {"protocols": {k: dict(v) for k, v in protocols.items()}}
                ),
                **({} if robust is None else {"robust": bool(robust)}),
            }
        )

    def add_protocol_findings(self, per_protocol: Mapping[str, Sequence[Any]]) -> None:
        """Findings checked under several training protocols: ``{protocol: [Finding, ...]}``
        (:class:`ndcglab.reproduce.verdicts.Finding`; the first protocol is the primary one, and
        every protocol lists the same claims in the same order).

        Each claim becomes one finding whose verdict combines the protocols' verdicts by
        :data:`ndcglab.reproduce.verdicts.ROBUST_RULE` (agrees only if it agrees under every
        protocol; protocols that disagree make it inconclusive, and the detail names them); its
        ``observed`` text is the primary protocol's, and ``protocols`` keeps every protocol's
        verdict, observation, rule, detail and reason. A protocol under which the claim is not
        testable (a method it rests on failed to train) is left out of the combination and named.
        """
        from ..verdicts import ROBUST_RULE, combine_protocols

        names = list(per_protocol)
        if not names:
            return
        claims = [f.claim for f in per_protocol[names[0]]]
        for name in names[1:]:
            if [f.claim for f in per_protocol[name]] != claims:
                raise NdcglabError(
                    f"protocol {name!r} checked other claims than {names[0]!r}; every protocol "
                    "must check the same claims in the same order"
                )
        for i, claim in enumerate(claims):
            verdicts = {
                n: replace(
                    per_protocol[n][i].verdict,
                    reason=_reason_with(per_protocol[n][i].verdict, per_protocol[n][i].observed),
                )
                for n in names
            }
            combined, robust = combine_protocols(verdicts)
            self.add_finding(
                claim,
                f"under {names[0]} (primary): {per_protocol[names[0]][i].observed}",
                combined,
                protocols={
                    n: {
                        "verdict": per_protocol[n][i].verdict.verdict,
                        "observed": per_protocol[n][i].observed,
                        "rule": per_protocol[n][i].verdict.rule,
                        "detail": per_protocol[n][i].verdict.detail,
                        "reason": verdicts[n].reason,
                    }
                    for n in names
                },
                robust=robust,
            )
            self.findings[-1]["base_rule"] = combined.rule.removesuffix("; " + ROBUST_RULE)

    def add_file(self, relpath: str, content: str) -> None:
        """An extra text file in the report folder (e.g. ``tables/x_significance.md`` written by
        :class:`ndcglab.analysis.comparison.ComparisonResult`'s exporters)."""
        parts = Path(relpath).parts
        if not parts or Path(relpath).is_absolute() or ".." in parts:
            raise NdcglabError(f"extra file {relpath!r} must be a relative path inside the report")
        for part in parts:
            check_name(part, "file")
        self.files[Path(relpath).as_posix()] = content

    def add_link(self, href: str, text: str, description: str = "") -> None:
        """A link (used by the index page of ``reproduce all``)."""
        self.links.append((href, text, description))

    def finish(self, elapsed_s: float) -> None:
        """Stamp the run time (called by the runner just before writing)."""
        self.elapsed_s = float(elapsed_s)
        self.finished = _dt.datetime.now(_dt.timezone.utc)

    # -- output ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The content of results.json."""
        return jsonable(
            {
                "experiment": self.experiment,
                "title": self.title,
                "claim": self.claim,
                "quick": self.quick,
                "quick_note": self.quick_note,
                "scope": self.scope,
                "verdict_note": self.verdict_note,
                "data_note": self.data_note,
                "seed": self.seed,
                "seeds": self.seeds,
                "command": self.command,
                "started": self.started.isoformat(timespec="seconds"),
                "finished": None
                if self.finished is None
                else self.finished.isoformat(timespec="seconds"),
                "elapsed_s": self.elapsed_s,
                "timings_s": self.timings,
                "versions": package_versions(),
                "platform": {"system": platform.platform(), "cpus": os.cpu_count()},
                "datasets": self.datasets,
                "conventions": self.conventions,
                "legend": self.legend,
                "findings": self.findings,
                "failed_runs": self.failed_runs,
                "tables": {name: t.to_dict() for name, t in self.tables.items()},
                "figures": {
                    name: {"file": f"plots/{name}.png", "title": f.title, "caption": f.caption}
                    for name, f in self.figures.items()
                },
                "results": self.results,
                "links": [{"href": h, "text": t, "description": d} for h, t, d in self.links],
                "files": sorted(self.files),
            }
        )

    def to_html(self) -> str:
        """The self-contained page (inline CSS; plots referenced as ``plots/NAME.png``)."""
        return render_page(self)

    def _write_files(self, folder: Path) -> None:
        """Write every file of the report into ``folder`` (which must exist; not atomic)."""
        write_report_files(self, folder)

    def write(self, out: str | os.PathLike[str], *, overwrite: bool = True) -> Path:
        """Write the report folder to ``out`` atomically; return its path."""
        return write_bundle(out, self, overwrite=overwrite)


def measure_convention(conv: Any, printed: str) -> dict[str, Any]:
    """One measure's full convention from an ``EvaluationResult.convention`` (its per-measure entry
    plus the result-wide keys such as the preset)."""
    if not isinstance(conv, Mapping):
        return {"convention": str(conv)}
    per = conv.get("measures")
    if isinstance(per, Mapping) and isinstance(per.get(printed), Mapping):
        top = {k: v for k, v in conv.items() if k != "measures"}
        return {**top, **per[printed]}
    if isinstance(conv.get(printed), Mapping):
        return dict(conv[printed])
    return dict(conv)
