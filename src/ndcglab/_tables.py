"""Tables as text: one model (:class:`TextTable`) and its renderers, with the one LaTeX escape and
the one HTML escape of the package.

Every table ndcglab prints or writes is laid out here: the command line's aligned text tables,
the significance tables of :mod:`ndcglab.analysis` (Markdown, LaTeX, CSV exports) and the tables
of the :mod:`ndcglab.reproduce` reports (Markdown, LaTeX, CSV, HTML). Callers turn their values
into text cells (numbers formatted, significance marks attached); this module only lays the cells
out and escapes them for the target format.

Conventions
-----------
* **Alignment**: one letter per column, ``l`` (left) or ``r`` (right). By default the first
  column is left-aligned and the others right-aligned (a label, then numbers).
* **Text**: columns padded to their widest cell and separated by two spaces, a rule of ``-``
  under the header; the header is always left-aligned.
* **Markdown** (GitHub): ``|`` inside a cell is written ``\\|``; the rule under the header is
  ``---`` (left) or ``---:`` (right).
* **LaTeX**: a booktabs ``tabular`` (``\\toprule``, ``\\midrule``, ``\\bottomrule``). A plain
  ``str`` cell is escaped by :func:`latex_escape`; a :class:`TeX` cell is LaTeX source and is
  written unchanged.
* **HTML**: every cell and attribute value goes through :func:`html_escape`.
* **CSV**: the :mod:`csv` module's quoting, ``\\n`` line ends, an optional first line
  ``# comment`` (read with ``pandas.read_csv(path, comment="#")``). A text cell that a
  spreadsheet would run as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a
  carriage return and is not a number) is written with a leading ``'`` (:func:`csv_cell`).
* **Markdown**: every cell goes through :func:`markdown_escape` (``|``, ``\\``, ``[``, ``]``
  escaped, a ``<`` that opens a tag and an ``&`` that starts an entity written as entities, line
  breaks as spaces), so a name can neither break the table nor inject HTML or links; running
  text goes through :func:`markdown_text_escape`.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._compat import FrozenFields
from .errors import NdcglabError

__all__ = [
    "TeX",
    "TextTable",
    "counted",
    "csv_cell",
    "format_table",
    "html_escape",
    "latex_escape",
    "markdown_escape",
    "markdown_row",
    "markdown_text_escape",
]


class TeX(str):
    """LaTeX source: written unchanged by :func:`latex_escape` and the LaTeX renderer."""

    __slots__ = ()


#: LaTeX spelling of the characters that are special to LaTeX or outside its default input
#: encoding (±, β, ≤, ≥ in math mode; the Unicode minus and the em dash as ASCII).
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
    "<": r"$<$",
    ">": r"$>$",
    "|": r"$|$",
    "^": r"\textasciicircum{}",
    "±": r"$\pm$",
    "β": r"$\beta$",
    "−": "-",
    "—": "--",
    "≤": r"$\le$",
    "≥": r"$\ge$",
}


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number it takes: ``1 topic``, ``0 topics``, ``3 queries``
    (``plural`` for an irregular one; default the noun plus ``s``)."""
    word = noun if n == 1 else (plural or noun + "s")
    return f"{n} {word}"


def latex_escape(text: Any, keep: Sequence[str] = ()) -> str:
    """``text`` as LaTeX source: special characters escaped, ±, β, ≤, ≥, <, >, | in math mode
    (the text fonts of plain LaTeX print ``<`` as ¡ and ``>`` as ¿).

    The substrings in ``keep`` are left untouched (e.g. ``\\dag{}`` already written into a
    sentence). A :class:`TeX` value is already LaTeX and is returned unchanged.
    """
    if isinstance(text, TeX):
        return text
    text = str(text)
    if keep:
        parts = [text]
        for k in keep:
            parts = [piece for part in parts for piece in _split_keep(part, k)]
        return "".join(p if p in keep else latex_escape(p) for p in parts)
    text = text.replace("<=", "≤").replace(">=", "≥")
    return "".join(_TEX_CHARS.get(ch, ch) for ch in text)


def _split_keep(text: str, sep: str) -> list[str]:
    """``text`` split around ``sep``, the separators kept as pieces of their own."""
    pieces = text.split(sep)
    out: list[str] = []
    for i, p in enumerate(pieces):
        if i:
            out.append(sep)
        out.append(p)
    return out


def html_escape(text: Any) -> str:
    """``text`` as HTML: ``&``, ``<``, ``>`` and both quotes escaped (:func:`html.escape`)."""
    import html  # (imported when needed: the command line's start-up does without)

    return html.escape(str(text))


# patterns compiled on first use (``re``'s cache), not at the command line's start-up
_TAG_START = r"<(?=[A-Za-z/!?])"
_ENTITY = r"&(?=#?\w+;)"


def markdown_text_escape(text: Any) -> str:
    """``text`` as Markdown running text that shows literally: a ``<`` that would open an HTML
    tag (``<img``, ``</``, ``<!``) written ``&lt;``, an ``&`` that would start an entity written
    ``&amp;`` (so no raw HTML gets through; ``p < 0.05`` stays as it is), ``\\``, ``[`` and
    ``]`` backslash-escaped (no links), line breaks as spaces."""
    t = " ".join(str(text).splitlines())
    t = t.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return re.sub(_TAG_START, "&lt;", re.sub(_ENTITY, "&amp;", t))


def markdown_escape(text: Any) -> str:
    """``text`` as the content of a Markdown table cell: :func:`markdown_text_escape`, and
    ``|`` written ``\\|``."""
    return markdown_text_escape(text).replace("|", "\\|")


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A CSV cell that no spreadsheet runs as a formula: text starting with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return gets a leading ``'`` unless it is a number
    (``-0.25`` stays as it is)."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value


def markdown_row(cells: Sequence[Any]) -> str:
    """One Markdown table row: ``| a | b |`` with each cell escaped."""
    return "| " + " | ".join(markdown_escape(c) for c in cells) + " |"


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class TextTable(FrozenFields):
    """A table of text cells: ``header``, ``rows`` of the same width, and each column's
    alignment (``align``: one ``l``/``r`` per column; empty means ``l`` then ``r``\\ s).

    The renderers below are the only place where a table becomes text, Markdown, LaTeX, CSV
    or HTML; see the module's conventions.
    """

    header: Sequence[str]
    rows: Sequence[Sequence[str]]
    align: str = ""

    def __init__(
        self, header: Sequence[str], rows: Sequence[Sequence[str]], align: str = ""
    ) -> None:
        object.__setattr__(self, "header", header)
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "align", align)
        self.__post_init__()

    def __post_init__(self) -> None:
        width = len(self.header)
        for i, row in enumerate(self.rows):
            if len(row) != width:
                raise NdcglabError(
                    f"table row {i} has {len(row)} cells for {width} columns. Fix: give every "
                    "row one cell per column"
                )
        if self.align and (len(self.align) != width or set(self.align) - {"l", "r"}):
            raise NdcglabError(
                f"table alignment {self.align!r} does not fit {width} columns. Fix: one 'l' or "
                "'r' per column"
            )

    @property
    def alignment(self) -> str:
        """``align``, or the default: first column left, the others right."""
        return self.align or "l" + "r" * (len(self.header) - 1)

    def to_text(self) -> str:
        """Aligned plain text: header, a rule of ``-``, then the rows (no final newline)."""
        widths = [
            max(len(h), *(len(r[i]) for r in self.rows)) if self.rows else len(h)
            for i, h in enumerate(self.header)
        ]
        lines = ["  ".join(h.ljust(w) for h, w in zip(self.header, widths))]
        lines.append("  ".join("-" * w for w in widths))
        for r in self.rows:
            lines.append(
                "  ".join(
                    c.rjust(w) if a == "r" else c.ljust(w)
                    for c, w, a in zip(r, widths, self.alignment)
                )
            )
        return "\n".join(lines)

    def to_markdown(self, *, padded_rule: bool = True) -> str:
        """A GitHub-Markdown table (no final newline). ``padded_rule`` writes the rule under the
        header as ``| --- | ---: |``; otherwise as ``|---|---:|``."""
        rule = ["---" if a == "l" else "---:" for a in self.alignment]
        lines = [
            markdown_row(self.header),
            markdown_row(rule) if padded_rule else "|" + "|".join(rule) + "|",
        ]
        lines += [markdown_row(r) for r in self.rows]
        return "\n".join(lines)

    def to_latex(self) -> str:
        """A booktabs ``tabular`` (no final newline); plain cells escaped, :class:`TeX` cells
        written as they are."""
        lines = [
            r"\begin{tabular}{" + self.alignment + "}",
            r"\toprule",
            " & ".join(latex_escape(h) for h in self.header) + r" \\",
            r"\midrule",
        ]
        lines += [" & ".join(latex_escape(c) for c in r) + r" \\" for r in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        return "\n".join(lines)

    def to_html(self, attrs: Sequence[Sequence[Mapping[str, str]]] | None = None) -> str:
        """An HTML ``<table>`` with ``<thead>`` and ``<tbody>`` (no final newline).

        ``attrs[i][j]`` are the attributes of row ``i``'s ``j``-th ``<td>`` (name -> value, in
        order; values escaped)."""
        lines = [
            "<table>",
            "<thead><tr>"
            + "".join(f"<th>{html_escape(h)}</th>" for h in self.header)
            + "</tr></thead>",
            "<tbody>",
        ]
        for i, row in enumerate(self.rows):
            tds = []
            for j, c in enumerate(row):
                at = attrs[i][j] if attrs is not None else {}
                a = "".join(f' {k}="{html_escape(v)}"' for k, v in at.items())
                tds.append(f"<td{a}>{html_escape(c)}</td>")
            lines.append("<tr>" + "".join(tds) + "</tr>")
        lines.append("</tbody></table>")
        return "\n".join(lines)

    def to_csv(self, *, comment: str | None = None) -> str:
        """CSV text with a final newline; ``comment`` becomes a first line ``# comment``."""
        import csv

        buf = io.StringIO()
        if comment is not None:
            buf.write("# " + comment + "\n")
        w = csv.writer(buf, lineterminator="\n")
        w.writerow([csv_cell(c) for c in self.header])
        w.writerows([csv_cell(c) for c in row] for row in self.rows)
        return buf.getvalue()


def format_table(
    header: Sequence[str], rows: Sequence[Sequence[Any]], floatfmt: str = ".4f"
) -> str:
    """A plain aligned text table of any values: floats formatted with ``floatfmt``, everything
    else with ``str``; first column left-aligned, the others right-aligned."""
    cells = [[f"{c:{floatfmt}}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    return TextTable(list(header), cells).to_text()
