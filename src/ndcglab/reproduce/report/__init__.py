"""Report folders: a self-contained HTML page, PNG plots, CSV/Markdown/LaTeX tables, results.json.

A :class:`Report` is filled in memory by an experiment (tables, figures, notes, the conventions of
every measure it printed, the datasets it read) and written at the end by :meth:`Report.write` (or
:func:`write_bundle` for several reports under an index page). Writing is **atomic**: everything
goes into a temporary folder beside the destination, which is renamed into place only when
complete, so a run that fails leaves no half-written report behind.

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

Modules, one job each: :mod:`.table` (cells, tables and their file formats, the JSON form of
values), :mod:`.document` (the :class:`Report` filled by an experiment), :mod:`.page` (the HTML
page), :mod:`.bundle` (writing folders atomically). Tables are laid out by
:mod:`ndcglab._tables`; package versions come from :func:`ndcglab._versions.package_versions`.
"""

from __future__ import annotations

from .bundle import write_bundle
from .document import Report
from .table import Cell, Table, jsonable

__all__ = ["Cell", "Report", "Table", "jsonable", "write_bundle"]
