"""The report's values: :class:`Cell` (a value with spread and significance mark), :class:`Table`
and its four file formats, and :func:`jsonable` (the JSON form of every value in results.json).

A :class:`Table` formats its cells (numbers with ``digits`` decimals, ``± spread``, the mark) and
hands them to :class:`ndcglab._tables.TextTable`, the package's one table renderer, for
CSV (full precision; spreads and marks in extra ``*_spread``/``*_sig`` columns), Markdown, LaTeX
(booktabs; the marks spelled by :data:`LATEX_MARKS`) and HTML.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..._tables import TeX, TextTable, html_escape, latex_escape, markdown_escape
from ...errors import NdcglabError

__all__ = ["LATEX_MARKS", "Cell", "Table", "check_name", "jsonable", "legend_for_columns"]

#: LaTeX spelling of the marks used by the experiments (anything else is escaped verbatim)
LATEX_MARKS = {
    "▲": r"$^{\blacktriangle}$",
    "▼": r"$^{\blacktriangledown}$",
    "*": r"$^{*}$",
    "†": r"$^{\dagger}$",
    "‡": r"$^{\ddagger}$",
}


def jsonable(x: Any) -> Any:
    """Turn NumPy values, tuples, paths, cells and NaN/±inf (-> ``None``) into plain JSON values."""
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


def check_name(name: str, what: str) -> None:
    """Refuse a name that is not a plain file stem (letters, digits, ``-``, ``_``, ``.``)."""
    ok = name and all(ch.isalnum() or ch in "-_." for ch in name) and not name.startswith(".")
    if not ok:
        raise NdcglabError(
            f"{what} name {name!r} is not a plain file stem. Fix: use letters, digits, '-', '_'"
        )


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
    the CSV and results.json keep full precision); ``notes`` are printed under the table;
    ``legend`` is the one sentence that explains every mark used in this table (its own baseline,
    test and thresholds), printed once under it. A table without its own legend prints the
    report-wide meaning of each mark it uses (:meth:`Report.add_mark`).
    """

    name: str
    title: str
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""
    digits: int = 4
    notes: list[str] = field(default_factory=list)
    collapsed: bool = False
    legend: str = ""

    def __post_init__(self) -> None:
        check_name(self.name, "table")
        self.legend = legend_for_columns(self.legend, self.columns)
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
            return self._plain(cell) + cell.mark
        return _fmt_number(cell, self.digits)

    def _plain(self, cell: Cell) -> str:
        """A cell's value and ``± spread``, without its mark."""
        s = _fmt_number(cell.value, self.digits)
        if cell.spread is not None and not _isnan(cell.spread):
            s += f" ± {float(cell.spread):.{self.digits}f}"
        return s

    def _latex(self, cell: Any) -> str:
        """A cell for the LaTeX table: escaped text, the mark spelled by :data:`LATEX_MARKS`."""
        if isinstance(cell, Cell):
            mark = LATEX_MARKS.get(cell.mark, latex_escape(cell.mark))
            return TeX(latex_escape(self._plain(cell)) + mark)
        return _fmt_number(cell, self.digits)

    def marks(self) -> list[str]:
        """The distinct marks used in the table, in order of first use."""
        seen: list[str] = []
        for row in self.rows:
            for c in row:
                if isinstance(c, Cell) and c.mark and c.mark not in seen:
                    seen.append(c.mark)
        return seen

    def _legend_lines(self, legend: Mapping[str, str] | None) -> list[str]:
        """The table's own legend (one line), else ``"MARK: meaning"`` for each mark of the
        table that the report-wide ``legend`` explains."""
        if self.legend:
            return [self.legend]
        return [f"{m}: {legend[m]}" for m in self.marks() if legend and m in legend]

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
        rows = []
        for row in self.rows:
            out = [_csv_value(_raw(c)) for c in row]
            out += [
                _csv_value(row[j].spread if isinstance(row[j], Cell) else None) for j in spread_cols
            ]
            out += [row[j].mark if isinstance(row[j], Cell) else "" for j in mark_cols]
            rows.append(out)
        return TextTable(header, rows).to_csv()

    def to_markdown(self, legend: Mapping[str, str] | None = None) -> str:
        """A GitHub-Markdown table with title, caption, notes and the legend of its marks."""
        lines = [f"**{markdown_escape(self.title)}**", ""]
        if self.caption:
            lines += [self.caption, ""]
        body = [[self.text(c) for c in row] for row in self.rows]
        lines.append(TextTable(self.columns, body).to_markdown(padded_rule=False))
        lines += [""] + [f"- {n}" for n in self.notes]
        lines += [f"- {line}" for line in self._legend_lines(legend)]
        return "\n".join(lines).rstrip() + "\n"

    def to_latex(self, legend: Mapping[str, str] | None = None) -> str:
        """A ``table`` with a booktabs ``tabular`` (needs ``booktabs`` and ``amssymb``)."""
        body = [[self._latex(c) for c in row] for row in self.rows]
        lines = [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{{latex_escape(self.title)}"
            + (f". {latex_escape(self.caption)}" if self.caption else "")
            + "}",
            rf"\label{{tab:{self.name}}}",
            TextTable(self.columns, body).to_latex(),
        ]
        foot = list(self.notes) + self._legend_lines(legend)
        if foot:
            lines.append(r"\par\smallskip{\footnotesize ")
            for f in foot:
                text = latex_escape(f)
                for mark, tex in LATEX_MARKS.items():
                    text = text.replace(mark, tex)
                lines.append(text + r"\\")
            lines.append("}")
        lines.append(r"\end{table}")
        return "\n".join(lines) + "\n"

    def to_html(self, legend: Mapping[str, str] | None = None) -> str:
        """The table as a ``<figure>`` of the report page: caption, table, notes, legend, links
        to its files; inside ``<details>`` when ``collapsed``."""
        e = html_escape
        body = [[self.text(c) for c in row] for row in self.rows]
        attrs = [[_html_attrs(j, c) for j, c in enumerate(row)] for row in self.rows]
        parts = [
            f'<figure class="table" id="table-{e(self.name)}">',
            f"<figcaption><b>{e(self.title)}</b>"
            + (f" — {e(self.caption)}" if self.caption else "")
            + "</figcaption>",
            '<div class="wide">' + TextTable(self.columns, body).to_html(attrs) + "</div>",
        ]
        foot = [f"<li>{e(n)}</li>" for n in self.notes]
        if self.legend:
            foot.append(f'<li class="legend">{e(self.legend)}</li>')
        else:
            foot += [
                f'<li class="legend"><span class="mark">{e(m)}</span> {e(legend[m])}</li>'
                for m in self.marks()
                if legend and m in legend
            ]
        if foot:
            parts.append('<ul class="notes">' + "".join(foot) + "</ul>")
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
        """The table in results.json: title, caption, columns, rows (cells as dicts), notes."""
        return {
            "title": self.title,
            "caption": self.caption,
            "columns": list(self.columns),
            "rows": [[c.to_dict() if isinstance(c, Cell) else c for c in row] for row in self.rows],
            "notes": list(self.notes),
            "legend": self.legend,
        }


#: the clauses of a significance legend (``ComparisonResult.legend``) that explain a column, by the
#: column they explain: kept only in a table that has that column
_COLUMN_CLAUSES = {"CI:": "CI", "d_z:": "d_z"}


def legend_for_columns(legend: str, columns: list[str]) -> str:
    """``legend`` without the clauses (``"; "``-separated) that explain a column the table does
    not have — e.g. ``"CI: …"`` under a table of means with no interval column — so a legend
    describes only what is on the table."""
    if not legend or "; " not in legend:
        return legend
    parts = legend.split("; ")
    kept = [
        part
        for part in parts
        if not any(
            part.startswith(head) and not any(col in c for c in columns)
            for head, col in _COLUMN_CLAUSES.items()
        )
    ]
    if len(kept) == len(parts):
        return legend
    text = "; ".join(kept).rstrip()
    return text if text.endswith(".") else text + "."


def _html_attrs(j: int, c: Any) -> dict[str, str]:
    """The attributes of a ``<td>``: numbers (after the first column) right-aligned, text with a
    long unbreakable word (a measure spec) breakable anywhere, the p-value behind a mark as a
    tooltip."""
    attrs = {}
    raw = _raw(c)
    if j and _is_number(raw):
        attrs["class"] = "num"
    elif isinstance(raw, str) and any(len(w) > 24 for w in raw.split()):
        attrs["class"] = "long"  # a measure spec or path: may break anywhere to fit the page
    if isinstance(c, Cell) and c.p is not None:
        attrs["title"] = f"p = {c.p:.3g}"
    return attrs


def _csv_value(x: Any) -> str:
    """A value for the CSV: full precision (``repr``) for floats, empty for None and NaN."""
    if x is None:
        return ""
    if isinstance(x, float | np.floating):
        f = float(x)
        return "" if math.isnan(f) else repr(f)
    if isinstance(x, np.integer):
        return str(int(x))
    return str(x)


def _isnan(x: Any) -> bool:
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return False


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)
