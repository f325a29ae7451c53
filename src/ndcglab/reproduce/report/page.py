"""The report's HTML page: one self-contained file (inline CSS, plots as relative ``<img>``).

:func:`render_page` lays out a :class:`~.document.Report`: title and run facts, the quick-run
banner, the claim, the agreement with the paper, links (index pages), the sections in order
(headings, paragraphs, tables, figures), the significance marks, the measure conventions, the
datasets with their hashes, and the provenance (command, seeds, versions, timings). Every text
goes through :func:`ndcglab._tables.html_escape`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..._tables import html_escape
from ..._versions import package_versions
from .table import jsonable

if TYPE_CHECKING:
    from .document import Report

__all__ = ["render_page"]


def render_page(report: Report) -> str:
    """The page of ``report`` as one HTML document."""
    e = html_escape
    body: list[str] = [f"<h1>{e(report.title)}</h1>"]
    meta = [f"experiment <code>{e(report.experiment)}</code>"]
    if report.seed is not None:
        meta.append(f"seed {report.seed}")
    if report.elapsed_s is not None:
        meta.append(f"run time {report.elapsed_s:.1f} s")
    meta.append("started " + e(report.started.strftime("%Y-%m-%d %H:%M:%S UTC")))
    body.append('<p class="meta">' + " · ".join(meta) + "</p>")
    if report.quick:
        body.append(
            '<p class="banner"><b>Quick run.</b> '
            + e(
                report.quick_note
                or "Reduced folds, epochs, repetitions and sizes; numbers are indicative only."
            )
            + "</p>"
        )
    if report.claim:
        body.append(f'<p class="claim"><b>Claim reproduced:</b> {e(report.claim)}</p>')
    if report.findings:
        body.append("<h2>Agreement with the paper</h2><ul class='findings'>")
        for f in report.findings:
            verdict = {True: "agrees", False: "disagrees", None: "inconclusive"}[f["agrees"]]
            body.append(
                f'<li class="{verdict}"><b>{verdict}</b> — {e(f["claim"])}'
                f'<br><span class="obs">{e(f["observed"])}</span></li>'
            )
        body.append("</ul>")
    if report.links:
        body.append("<h2>Experiments</h2><ul class='links'>")
        for href, text, desc in report.links:
            body.append(
                f'<li><a href="{e(href)}">{e(text)}</a>'
                + (f" — {e(desc)}" if desc else "")
                + "</li>"
            )
        body.append("</ul>")
    for s in report.sections:
        if s.kind == "heading":
            body.append(f"<h2>{e(s.payload)}</h2>")
        elif s.kind == "text":
            body.append(f"<p>{e(s.payload)}</p>")
        elif s.kind == "table":
            body.append(report.tables[s.payload].to_html(report.legend))
        elif s.kind == "figure":
            fig = report.figures[s.payload]
            body.append(
                f'<figure class="plot"><img src="plots/{e(fig.name)}.png" '
                f'alt="{e(fig.title)}"><figcaption><b>{e(fig.title)}</b>'
                + (f" — {e(fig.caption)}" if fig.caption else "")
                + "</figcaption></figure>"
            )
    if report.legend:
        body.append("<h2>Significance marks</h2><ul>")
        body += [
            f'<li><span class="mark">{e(m)}</span> {e(t)}</li>' for m, t in report.legend.items()
        ]
        body.append("</ul>")
    if report.conventions:
        body.append("<h2>Measure conventions</h2>")
        body.append(
            "<p>Every measure printed in this report, with its full convention "
            "(gain, discount, cut-off, ties, empty-query rule, ...).</p><dl class='conv'>"
        )
        for name, conv in report.conventions.items():
            body.append(
                f"<dt><code>{e(name)}</code></dt>"
                f"<dd><pre>{e(json.dumps(jsonable(conv), indent=2, sort_keys=True))}</pre></dd>"
            )
        body.append("</dl>")
    if report.datasets:
        body.append("<h2>Data</h2>")
        for d in report.datasets:
            body.append(_dataset_html(d))
    body.append("<h2>Provenance</h2>")
    prov = {
        "command": " ".join(report.command),
        "seeds": report.seeds or {"seed": report.seed},
        "versions": package_versions(),
        "timings_s": {k: round(v, 2) for k, v in report.timings.items()},
    }
    body.append(f"<pre>{e(json.dumps(jsonable(prov), indent=2))}</pre>")
    body.append(
        '<p class="files">All numbers, hashes, seeds and versions: '
        '<a href="results.json">results.json</a>.'
        + ("".join(f' · <a href="{e(rel)}">{e(rel)}</a>' for rel in sorted(report.files)))
        + "</p>"
    )
    return _PAGE.format(title=e(report.title), css=_CSS, body="\n".join(body))


def _dataset_html(d: Mapping[str, Any]) -> str:
    e = html_escape
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
