"""Report folders: a self-contained HTML page, PNG plots, CSV/Markdown/LaTeX tables, results.json.

A :class:`Report` is filled in memory by an experiment (tables, figures, notes, the conventions of
every measure it printed, the datasets it read) and written at the end by :meth:`Report.write` (or
:func:`write_bundle` for several reports under an index page). Writing is **atomic**: everything
goes
into a temporary folder beside the destination, which is renamed into place only when complete, so
a run that fails leaves no half-written report behind.

Layout of a report folder::

    index.html          the page: inline CSS, <img> tags pointing at plots/*.png (relative paths)
    results.json        every number, dataset hashes, seeds, package versions, run time, conventions
    tables/NAME.csv     one table, numbers at full precision (marks in extra ``*_sig`` columns)
    tables/NAME.md      the same table as GitHub Markdown (marks and legend included)
    tables/NAME.tex     the same table as a LaTeX ``tabular`` (booktabs)
    plots/NAME.png      one figure (matplotlib, Agg)

Significance marks are plain strings attached to table cells (:class:`Cell`); every mark used in a
report must be explained by :meth:`Report.add_mark` — the legend is printed under each table that
uses a mark.
"""

from __future__ import annotations

import csv
import datetime as _dt
import html
import io
import json
import math
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import NdcglabError

__all__ = [
    "Cell",
    "Report",
    "Table",
    "package_versions",
    "write_bundle",
]

#: the packages whose versions every results.json records
VERSIONED_PACKAGES = ("ndcglab", "numpy", "scipy", "torch", "lightgbm", "matplotlib")

#: LaTeX spelling of the marks used by the experiments (anything else is escaped verbatim)
_LATEX_MARKS = {
    "▲": r"$^{\blacktriangle}$",
    "▼": r"$^{\blacktriangledown}$",
    "*": r"$^{*}$",
    "†": r"$^{\dagger}$",
    "‡": r"$^{\ddagger}$",
}


def package_versions() -> dict[str, str | None]:
    """Versions of python and of :data:`VERSIONED_PACKAGES` (``None`` when not installed).

    Read from the installed distributions' metadata, so nothing heavy is imported.
    """
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    if out.get("ndcglab") is None:  # running from a source tree without an installed distribution
        from .. import __version__

        out["ndcglab"] = __version__
    return out


def jsonable(x: Any) -> Any:
    """Turn NumPy values, tuples, paths and NaN (-> ``None``) into plain JSON values."""
    if isinstance(x, Mapping):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, Cell):
        return jsonable(x.to_dict())
    if isinstance(x, list | tuple | set | frozenset):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, np.bool_ | bool):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating | float):
        f = float(x)
        return None if math.isnan(f) or math.isinf(f) else f
    if isinstance(x, Path):
        return str(x)
    if x is None or isinstance(x, str | int):
        return x
    return str(x)


# ---------------------------------------------------------------------------------------- tables
@dataclass(frozen=True)
class Cell:
    """A table value with an optional spread (shown as ``± s``), significance mark and note.

    ``value`` is a number or text; ``spread`` a standard deviation (or any stated spread);
    ``mark`` a short symbol explained by the report's legend (e.g. ``"▲"``); ``p`` the p-value
    behind the mark, kept for results.json.
    """

    value: Any
    spread: float | None = None
    mark: str = ""
    p: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"value": self.value}
        if self.spread is not None:
            d["spread"] = self.spread
        if self.mark:
            d["mark"] = self.mark
        if self.p is not None:
            d["p"] = self.p
        return d


def _raw(c: Any) -> Any:
    return c.value if isinstance(c, Cell) else c


def _fmt_number(x: Any, digits: int) -> str:
    if x is None:
        return "—"
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, float | np.floating):
        f = float(x)
        if math.isnan(f):
            return "—"
        if f != 0 and (abs(f) >= 1e6 or abs(f) < 10 ** (-digits)):
            return f"{f:.{max(digits - 1, 1)}e}"
        return f"{f:.{digits}f}"
    return str(x)


@dataclass
class Table:
    """A named table: column titles, rows of cells (numbers, text, ``None`` or :class:`Cell`).

    ``name`` is the file stem under ``tables/``; ``digits`` the decimals printed (files and page;
    the CSV and results.json keep full precision); ``notes`` are printed under the table.
    """

    name: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""
    digits: int = 4
    notes: list[str] = field(default_factory=list)
    collapsed: bool = False

    def __post_init__(self) -> None:
        _check_name(self.name, "table")
        width = len(self.columns)
        for i, row in enumerate(self.rows):
            if len(row) != width:
                raise NdcglabError(
                    f"table {self.name!r}: row {i} has {len(row)} cells for {width} columns"
                )

    # -- formatting ------------------------------------------------------------------------
    def text(self, cell: Any) -> str:
        """A cell as plain text: value, ``± spread``, mark."""
        if isinstance(cell, Cell):
            s = _fmt_number(cell.value, self.digits)
            if cell.spread is not None and not _isnan(cell.spread):
                s += f" ± {float(cell.spread):.{self.digits}f}"
            return s + cell.mark
        return _fmt_number(cell, self.digits)

    def marks(self) -> list[str]:
        """The distinct marks used in the table, in order of first use."""
        seen: list[str] = []
        for row in self.rows:
            for c in row:
                if isinstance(c, Cell) and c.mark and c.mark not in seen:
                    seen.append(c.mark)
        return seen

    def to_csv(self) -> str:
        """CSV: full-precision numbers; spreads and marks in extra ``*_spread``/``*_sig``."""
        spread_cols = [
            j
            for j in range(len(self.columns))
            if any(isinstance(r[j], Cell) and r[j].spread is not None for r in self.rows)
        ]
        mark_cols = [
            j
            for j in range(len(self.columns))
            if any(isinstance(r[j], Cell) and r[j].mark for r in self.rows)
        ]
        header = list(self.columns)
        header += [f"{self.columns[j]}_spread" for j in spread_cols]
        header += [f"{self.columns[j]}_sig" for j in mark_cols]
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(header)
        for row in self.rows:
            out = [_csv_value(_raw(c)) for c in row]
            out += [
                _csv_value(row[j].spread if isinstance(row[j], Cell) else None) for j in spread_cols
            ]
            out += [row[j].mark if isinstance(row[j], Cell) else "" for j in mark_cols]
            w.writerow(out)
        return buf.getvalue()

    def to_markdown(self, legend: Mapping[str, str] | None = None) -> str:
        """A GitHub-Markdown table with title, caption, notes and the legend of its marks."""

        def esc(s: str) -> str:
            return s.replace("|", "\\|")

        lines = [f"**{esc(self.title)}**", ""]
        if self.caption:
            lines += [self.caption, ""]
        lines.append("| " + " | ".join(esc(c) for c in self.columns) + " |")
        lines.append(
            "|" + "|".join("---" if j == 0 else "---:" for j in range(len(self.columns))) + "|"
        )
        for row in self.rows:
            lines.append("| " + " | ".join(esc(self.text(c)) for c in row) + " |")
        lines += [""] + [f"- {n}" for n in self.notes]
        lines += [f"- {m}: {legend[m]}" for m in self.marks() if legend and m in legend]
        return "\n".join(lines).rstrip() + "\n"

    def to_latex(self, legend: Mapping[str, str] | None = None) -> str:
        """A ``table`` with a booktabs ``tabular`` (needs ``booktabs`` and ``amssymb``)."""

        def cell(c: Any) -> str:
            if isinstance(c, Cell):
                s = _latex_escape(_fmt_number(c.value, self.digits))
                if c.spread is not None and not _isnan(c.spread):
                    s += r" $\pm$ " + f"{float(c.spread):.{self.digits}f}"
                return s + _LATEX_MARKS.get(c.mark, _latex_escape(c.mark))
            return _latex_escape(_fmt_number(c, self.digits))

        spec = "l" + "r" * (len(self.columns) - 1)
        lines = [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{{_latex_escape(self.title)}"
            + (f". {_latex_escape(self.caption)}" if self.caption else "")
            + "}",
            rf"\label{{tab:{self.name}}}",
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            " & ".join(_latex_escape(c) for c in self.columns) + r" \\",
            r"\midrule",
        ]
        lines += [" & ".join(cell(c) for c in row) + r" \\" for row in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        foot = list(self.notes)
        foot += [f"{m}: {legend[m]}" for m in self.marks() if legend and m in legend]
        if foot:
            lines.append(r"\par\smallskip{\footnotesize ")
            for f in foot:
                text = _latex_escape(f)
                for mark, tex in _LATEX_MARKS.items():
                    text = text.replace(mark, tex)
                lines.append(text + r"\\")
            lines.append("}")
        lines.append(r"\end{table}")
        return "\n".join(lines) + "\n"

    def to_html(self, legend: Mapping[str, str] | None = None) -> str:
        e = html.escape
        parts = [
            f'<figure class="table" id="table-{e(self.name)}">',
            f"<figcaption><b>{e(self.title)}</b>"
            + (f" — {e(self.caption)}" if self.caption else "")
            + "</figcaption>",
            "<table>",
            "<thead><tr>" + "".join(f"<th>{e(c)}</th>" for c in self.columns) + "</tr></thead>",
            "<tbody>",
        ]
        for row in self.rows:
            tds = []
            for j, c in enumerate(row):
                cls = ' class="num"' if j and _is_number(_raw(c)) else ""
                title = ""
                if isinstance(c, Cell) and c.p is not None:
                    title = f' title="p = {c.p:.3g}"'
                tds.append(f"<td{cls}{title}>{e(self.text(c))}</td>")
            parts.append("<tr>" + "".join(tds) + "</tr>")
        parts.append("</tbody></table>")
        foot = [e(n) for n in self.notes]
        foot += [
            f'<span class="mark">{e(m)}</span> {e(legend[m])}'
            for m in self.marks()
            if legend and m in legend
        ]
        if foot:
            parts.append('<ul class="notes">' + "".join(f"<li>{f}</li>" for f in foot) + "</ul>")
        parts.append(
            f'<p class="files">files: <a href="tables/{e(self.name)}.csv">CSV</a> · '
            f'<a href="tables/{e(self.name)}.md">Markdown</a> · '
            f'<a href="tables/{e(self.name)}.tex">LaTeX</a></p>'
        )
        parts.append("</figure>")
        if self.collapsed:
            parts = [
                f"<details><summary>{e(self.title)} ({len(self.rows)} rows)</summary>",
                *parts,
                "</details>",
            ]
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "caption": self.caption,
            "columns": list(self.columns),
            "rows": [[c.to_dict() if isinstance(c, Cell) else c for c in row] for row in self.rows],
            "notes": list(self.notes),
        }


def _csv_value(x: Any) -> Any:
    if x is None:
        return ""
    if isinstance(x, float | np.floating):
        f = float(x)
        return "" if math.isnan(f) else repr(f)
    if isinstance(x, np.integer):
        return int(x)
    return x


def _isnan(x: Any) -> bool:
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)


def _latex_escape(s: str) -> str:
    from ..analysis.significance import _tex_escape

    return _tex_escape(str(s))


def _check_name(name: str, what: str) -> None:
    ok = name and all(ch.isalnum() or ch in "-_." for ch in name) and not name.startswith(".")
    if not ok:
        raise NdcglabError(
            f"{what} name {name!r} is not a plain file stem. Fix: use letters, digits, '-', '_'"
        )


# ---------------------------------------------------------------------------------------- report
@dataclass
class _Figure:
    name: str
    title: str
    caption: str
    png: bytes


@dataclass
class _Section:
    kind: str  # "text" | "table" | "figure" | "heading" | "html"
    payload: Any


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
        _check_name(experiment, "experiment")
        self.experiment = experiment
        self.title = title
        self.claim = claim
        self.quick = quick
        self.quick_note = ""
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
        self.links: list[tuple[str, str, str]] = []  # (href, text, description) for index pages
        self.files: dict[str, str] = {}  # extra text files: relative path -> content

    # -- filling -----------------------------------------------------------------------------
    def heading(self, text: str) -> None:
        """A sub-heading (``<h2>``) in the page body."""
        self.sections.append(_Section("heading", text))

    def text(self, paragraph: str) -> None:
        """A paragraph of plain text (escaped) in the page body."""
        self.sections.append(_Section("text", paragraph))

    def add_table(self, table: Table) -> Table:
        """Add a table (shown in the page and written as CSV/Markdown/LaTeX)."""
        if table.name in self.tables:
            raise NdcglabError(
                f"report {self.experiment!r} already has a table named {table.name!r}"
            )
        for m in table.marks():
            if m not in self.legend:
                raise NdcglabError(
                    f"table {table.name!r} uses the mark {m!r} with no legend. "
                    "Fix: call report.add_mark(mark, meaning) first"
                )
        self.tables[table.name] = table
        self.sections.append(_Section("table", table.name))
        return table

    def add_figure(
        self, name: str, fig: Any, *, title: str = "", caption: str = "", dpi: int = 110
    ) -> None:
        """Render a matplotlib figure to PNG now (and close it); shown in the page as ``<img>``."""
        _check_name(name, "figure")
        if name in self.figures:
            raise NdcglabError(f"report {self.experiment!r} already has a figure named {name!r}")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
        from .._compat import pyplot

        pyplot().close(fig)
        self.figures[name] = _Figure(name, title or name, caption, buf.getvalue())
        self.sections.append(_Section("figure", name))

    def add_mark(self, mark: str, meaning: str) -> None:
        """Explain a significance mark (printed under every table that uses it)."""
        self.legend[mark] = meaning

    def add_convention(self, printed_name: str, convention: Mapping[str, Any]) -> None:
        """Record a measure's printed name and its full convention dict (shown in the page)."""
        self.conventions[str(printed_name)] = dict(convention)

    def add_conventions_from(self, result: Any) -> None:
        """Record every measure of an ``EvaluationResult`` with the result's convention dict.

        The convention dict may be one dict for all measures or a mapping printed name -> dict.
        """
        from ._fit import measure_convention

        conv = getattr(result, "convention", {}) or {}
        names = [str(m) for m in getattr(result, "measures", ())] or list(
            getattr(result, "mean", {})
        )
        for name in names:
            self.add_convention(name, measure_convention(conv, name))

    def add_dataset(self, info: Mapping[str, Any]) -> None:
        """Record a dataset description (see :func:`ndcglab.reproduce._common.describe_dataset`)."""
        self.datasets.append(dict(info))

    def add_finding(self, claim: str, observed: str, agrees: bool | None) -> None:
        """A paper claim, what we observed and whether it agrees (``None``: cannot tell)."""
        verdict = None if agrees is None else bool(agrees)
        self.findings.append({"claim": claim, "observed": observed, "agrees": verdict})

    def add_file(self, relpath: str, content: str) -> None:
        """An extra text file in the report folder (e.g. ``tables/x_significance.md`` written by
        :class:`ndcglab.analysis.significance.ComparisonResult`'s exporters)."""
        parts = Path(relpath).parts
        if not parts or Path(relpath).is_absolute() or ".." in parts:
            raise NdcglabError(f"extra file {relpath!r} must be a relative path inside the report")
        for part in parts:
            _check_name(part, "file")
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
        e = html.escape
        body: list[str] = [f"<h1>{e(self.title)}</h1>"]
        meta = [f"experiment <code>{e(self.experiment)}</code>"]
        if self.seed is not None:
            meta.append(f"seed {self.seed}")
        if self.elapsed_s is not None:
            meta.append(f"run time {self.elapsed_s:.1f} s")
        meta.append("started " + e(self.started.strftime("%Y-%m-%d %H:%M:%S UTC")))
        body.append('<p class="meta">' + " · ".join(meta) + "</p>")
        if self.quick:
            body.append(
                '<p class="banner"><b>Quick run.</b> '
                + e(
                    self.quick_note
                    or "Reduced folds, epochs, repetitions and sizes; numbers are indicative only."
                )
                + "</p>"
            )
        if self.claim:
            body.append(f'<p class="claim"><b>Claim reproduced:</b> {e(self.claim)}</p>')
        if self.findings:
            body.append("<h2>Agreement with the paper</h2><ul class='findings'>")
            for f in self.findings:
                verdict = {True: "agrees", False: "disagrees", None: "inconclusive"}[f["agrees"]]
                body.append(
                    f'<li class="{verdict}"><b>{verdict}</b> — {e(f["claim"])}'
                    f'<br><span class="obs">{e(f["observed"])}</span></li>'
                )
            body.append("</ul>")
        if self.links:
            body.append("<h2>Experiments</h2><ul class='links'>")
            for href, text, desc in self.links:
                body.append(
                    f'<li><a href="{e(href)}">{e(text)}</a>'
                    + (f" — {e(desc)}" if desc else "")
                    + "</li>"
                )
            body.append("</ul>")
        for s in self.sections:
            if s.kind == "heading":
                body.append(f"<h2>{e(s.payload)}</h2>")
            elif s.kind == "text":
                body.append(f"<p>{e(s.payload)}</p>")
            elif s.kind == "table":
                body.append(self.tables[s.payload].to_html(self.legend))
            elif s.kind == "figure":
                f = self.figures[s.payload]
                body.append(
                    f'<figure class="plot"><img src="plots/{e(f.name)}.png" '
                    f'alt="{e(f.title)}"><figcaption><b>{e(f.title)}</b>'
                    + (f" — {e(f.caption)}" if f.caption else "")
                    + "</figcaption></figure>"
                )
        if self.legend:
            body.append("<h2>Significance marks</h2><ul>")
            body += [
                f'<li><span class="mark">{e(m)}</span> {e(t)}</li>' for m, t in self.legend.items()
            ]
            body.append("</ul>")
        if self.conventions:
            body.append("<h2>Measure conventions</h2>")
            body.append(
                "<p>Every measure printed in this report, with its full convention "
                "(gain, discount, cut-off, ties, empty-query rule, ...).</p><dl class='conv'>"
            )
            for name, conv in self.conventions.items():
                body.append(
                    f"<dt><code>{e(name)}</code></dt>"
                    f"<dd><pre>{e(json.dumps(jsonable(conv), indent=2, sort_keys=True))}</pre></dd>"
                )
            body.append("</dl>")
        if self.datasets:
            body.append("<h2>Data</h2>")
            for d in self.datasets:
                body.append(_dataset_html(d))
        body.append("<h2>Provenance</h2>")
        prov = {
            "command": " ".join(self.command),
            "seeds": self.seeds or {"seed": self.seed},
            "versions": package_versions(),
            "timings_s": {k: round(v, 2) for k, v in self.timings.items()},
        }
        body.append(f"<pre>{e(json.dumps(jsonable(prov), indent=2))}</pre>")
        body.append(
            '<p class="files">All numbers, hashes, seeds and versions: '
            '<a href="results.json">results.json</a>.'
            + ("".join(f' · <a href="{e(rel)}">{e(rel)}</a>' for rel in sorted(self.files)))
            + "</p>"
        )
        return _PAGE.format(title=e(self.title), css=_CSS, body="\n".join(body))

    def _write_files(self, folder: Path) -> None:
        """Write every file of the report into ``folder`` (which must exist; not atomic)."""
        if self.tables:
            (folder / "tables").mkdir(exist_ok=True)
        if self.figures:
            (folder / "plots").mkdir(exist_ok=True)
        for name, t in self.tables.items():
            (folder / "tables" / f"{name}.csv").write_text(t.to_csv(), encoding="utf-8")
            (folder / "tables" / f"{name}.md").write_text(
                t.to_markdown(self.legend), encoding="utf-8"
            )
            (folder / "tables" / f"{name}.tex").write_text(
                t.to_latex(self.legend), encoding="utf-8"
            )
        for name, f in self.figures.items():
            (folder / "plots" / f"{name}.png").write_bytes(f.png)
        for rel, content in self.files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(content, encoding="utf-8")
        (folder / "results.json").write_text(
            json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8"
        )
        (folder / "index.html").write_text(self.to_html(), encoding="utf-8")

    def write(self, out: str | os.PathLike[str], *, overwrite: bool = True) -> Path:
        """Write the report folder to ``out`` atomically; return its path."""
        return write_bundle(out, self, overwrite=overwrite)


def write_bundle(
    out: str | os.PathLike[str],
    report: Report,
    children: Iterable[tuple[str, Report]] = (),
    *,
    overwrite: bool = True,
) -> Path:
    """Write ``report`` to ``out`` with each child report in ``out/<sub>/``, atomically.

    Everything is written into a temporary folder beside ``out`` and renamed into place at the end.
    An existing ``out`` is replaced only when it is empty or an earlier report (it holds a
    ``results.json``) and ``overwrite`` is true; any other existing folder is left alone and an
    error is raised.
    """
    dest = Path(out).resolve()
    if dest.exists():
        if not dest.is_dir():
            raise NdcglabError(f"--out {dest} exists and is not a folder. Fix: choose another path")
        if any(dest.iterdir()) and not ((dest / "results.json").exists() and overwrite):
            raise NdcglabError(
                f"--out {dest} exists and is not an earlier ndcglab report; refusing to replace "
                "it. "
                "Fix: choose a new or empty folder"
            )
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        for sub, child in children:
            _check_name(sub, "sub-report")
            (tmp / sub).mkdir()
            child._write_files(tmp / sub)
        report._write_files(tmp)
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
        if dest.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
            old.rmdir()
            dest.rename(old)
            tmp.rename(dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest


def _dataset_html(d: Mapping[str, Any]) -> str:
    e = html.escape
    rows = []
    for key in (
        "name",
        "source",
        "kind",
        "description",
        "queries",
        "docs",
        "features",
        "labels",
        "list_length",
        "empty_queries",
        "folds",
        "params",
    ):
        if key in d and d[key] is not None:
            v = d[key]
            text = v if isinstance(v, str) else json.dumps(jsonable(v))
            rows.append(f"<tr><th>{e(key)}</th><td>{e(text)}</td></tr>")
    if d.get("hashes"):
        rows.append(
            f"<tr><th>sha256</th><td><pre class='hash'>{e(_hash_text(d['hashes']))}</pre></td></tr>"
        )
    return '<table class="data">' + "".join(rows) + "</table>"


def _hash_text(h: Any) -> str:
    """Hashes one per line: ``name  sha256`` (and an indented ``uncompressed`` line for .gz)."""
    if not isinstance(h, Mapping):
        return str(h)
    lines = []
    for name, v in h.items():
        if isinstance(v, Mapping):
            lines.append(f"{name}  {v.get('sha256', '')}")
            lines += [f"  {k}: {x}" for k, x in v.items() if k != "sha256"]
        else:
            lines.append(f"{name}  {v}")
    return "\n".join(lines)


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
{body}
</body>
</html>
"""

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; max-width: 1100px;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: .2em; }
h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.meta { color: #666; font-size: .9em; }
.banner { background: #fff4d6; border: 1px solid #e8c55c; padding: .5em .8em; }
.claim { background: #eef4fb; border-left: 4px solid #4a7ab8; padding: .5em .8em; }
table { border-collapse: collapse; margin: .5em 0; font-size: .92em; }
th, td { border-bottom: 1px solid #e3e3e3; padding: .25em .6em; text-align: left;
         vertical-align: top; }
thead th { border-bottom: 2px solid #888; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure { margin: 1.2em 0; }
figure.plot img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: .92em; color: #333; margin-bottom: .3em; }
ul.notes { font-size: .85em; color: #444; margin: .2em 0; }
.files { font-size: .85em; color: #666; }
.mark { font-weight: bold; }
pre { background: #f6f6f6; padding: .5em; overflow-x: auto; font-size: .85em; }
dl.conv dt { margin-top: .6em; }
dl.conv dd { margin-left: 1em; }
table.data th { width: 9em; color: #555; }
pre.hash { white-space: pre-wrap; word-break: break-all; margin: 0; }
ul.findings li { margin: .4em 0; }
li.agrees b { color: #1b7a2e; }
li.disagrees b { color: #b3261e; }
li.inconclusive b { color: #8a6d00; }
.obs { color: #444; font-size: .92em; }
details { margin: .6em 0; }
summary { cursor: pointer; color: #2a5590; }
"""
