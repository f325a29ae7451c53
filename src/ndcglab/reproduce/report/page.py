"""The report's HTML page: one self-contained file (inline CSS, plots as relative ``<img>``).

:func:`render_page` lays out a :class:`~.document.Report`: title and run facts, the banners (what
the run can test, the data given, the quick run), the claim, then the verdict table — one row per
claim: verdict, a one-line reason, the protocols that flip it — with the runs that failed to train
named above it; the rules (each stated once) and every claim's observations per protocol are
folded (``<details>``). Then links (index pages), the sections in order (headings, paragraphs,
tables, figures, folded groups), the significance marks, the measure conventions, the datasets
with their hashes, and the provenance (command, seeds, versions, timings). Every text goes through
:func:`ndcglab._tables.html_escape`. The verdict vocabulary and counts are
:mod:`ndcglab.reproduce.verdicts`'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..._tables import html_escape
from ..._versions import package_versions
from ..verdicts import (
    INCONCLUSIVE,
    ROBUST_RULE,
    VERDICTS,
    counts_text,
    flips,
    verdict_counts,
    verdict_of,
)
from .table import jsonable

if TYPE_CHECKING:
    from .document import Report

__all__ = ["render_page"]


def render_page(report: Report) -> str:
    """The page of ``report`` as one HTML document."""
    e = html_escape
    body: list[str] = []
    back = _back_link(report)
    body.append(back)
    body.append(f"<h1>{e(report.title)}</h1>")
    meta = [f"experiment <code>{e(report.experiment)}</code>"]
    if report.seed is not None:
        meta.append(f"seed {report.seed}")
    if report.elapsed_s is not None:
        meta.append(f"run time {report.elapsed_s:.1f} s")
    meta.append("started " + e(report.started.strftime("%Y-%m-%d %H:%M:%S UTC")))
    if report.finished is not None:
        meta.append("finished " + e(report.finished.strftime("%Y-%m-%d %H:%M:%S UTC")))
    body.append('<p class="meta">' + " · ".join(meta) + "</p>")
    if report.scope:
        # the scope is HTML written by the experiment modules (it names commands in <code>)
        body.append(
            f'<div class="banner scope"><b>What this run can test.</b> {report.scope}</div>'
        )
    if report.data_note:
        # written by ndcglab.reproduce.data_html from the dataset descriptions (escaped there)
        body.append(f'<div class="banner data"><b>Data.</b> {report.data_note}</div>')
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
        body.append(_findings_html(report))
    elif report.failed_runs:
        body.append(_failed_html(report))
    if report.links:
        body.append("<h2>Experiments</h2><ul class='links'>")
        for href, text, desc in report.links:
            body.append(
                f'<li><a href="{e(href)}">{e(text)}</a>'
                + (f" — {e(desc)}" if desc else "")
                + "</li>"
            )
        body.append("</ul>")
    open_details = 0
    for s in report.sections:
        if s.kind == "details":
            body.append(f'<details class="group"><summary>{e(s.payload)}</summary>')
            open_details += 1
        elif s.kind == "end-details" and open_details:
            body.append("</details>")
            open_details -= 1
        elif s.kind == "heading":
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
    body += ["</details>"] * open_details
    if report.legend:
        body.append("<h2>Significance marks</h2><ul>")
        body += [
            f'<li><span class="mark">{e(m)}</span> {e(t)}</li>' for m, t in report.legend.items()
        ]
        body.append("</ul>")
    if report.conventions:
        body.append(_conventions_html(report.conventions))
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
    body.append(
        '<table class="data">'
        + "".join(f"<tr><th>{e(k)}</th><td>{e(readable(v))}</td></tr>" for k, v in prov.items())
        + "</table>"
    )
    files = (
        '<p class="files">All numbers, hashes, seeds and versions: '
        '<a href="results.json">results.json</a>'
    )
    if report.files:
        files += "; further files: " + ", ".join(
            f'<a href="{e(rel)}">{e(rel)}</a>' for rel in sorted(report.files)
        )
    body.append(files + ".</p>")
    body.append(back)
    return _PAGE.format(title=e(report.title), css=_CSS, body="\n".join(b for b in body if b))


def _back_link(report: Report) -> str:
    """The link back to the index page (sub-pages of ``reproduce all``), or ``""``."""
    if not report.parent_href:
        return ""
    return (
        f'<p class="nav"><a class="back" href="{html_escape(report.parent_href)}">'
        "← all experiments (index)</a></p>"
    )


def _findings_html(report: Report) -> str:
    """The verdicts: counts, the runs that failed to train, one table row per claim (verdict,
    one-line reason, the protocols that flip it), then folded: the rules, each stated once and
    numbered, and every claim's observations and tests per protocol."""
    e = html_escape
    findings = report.findings
    out = ["<h2>Verdicts</h2>"]
    out.append(f'<p class="counts">{e(counts_text(verdict_counts(findings)))}.</p>')
    out.append(_failed_html(report))
    rules = _rules(findings)
    number = {r: i + 1 for i, r in enumerate(rules)}
    with_flips = any(f.get("protocols") for f in findings)
    head = ["claim", "verdict", "reason"] + (["where the protocols differ"] if with_flips else [])
    rows = []
    for f in findings:
        verdict = verdict_of(f)
        refs = [number[r] for r in _finding_rules(f) if r in number]
        ref = " ".join(f'<a href="#rule-{n}">R{n}</a>' for n in refs)
        label = verdict + (" (robust)" if f.get("robust") and verdict in VERDICTS[:2] else "")
        cells = [
            f"<td>{e(f['claim'])}</td>",
            f'<td class="v {_css(verdict)}"><b>{e(label)}</b> <sup>{ref}</sup></td>',
            f'<td class="reason">{e(f.get("reason") or f.get("detail") or "")}</td>',
        ]
        if with_flips:
            cells.append(f"<td>{e(flips(f.get('protocols') or {})) or '—'}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    out.append(
        '<div class="wide"><table class="verdicts"><thead><tr>'
        + "".join(f"<th>{e(h)}</th>" for h in head)
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div>"
    )
    out.append(
        f'<details class="rules"><summary>How each verdict is decided ({len(rules)} '
        f"rule{'s' if len(rules) != 1 else ''}, each stated once)</summary>"
    )
    if report.verdict_note:
        out.append(f'<p class="rules">{report.verdict_note}</p>')
    out.append(
        '<ol class="rules">'
        + "".join(f'<li id="rule-{number[r]}">{e(r)}</li>' for r in rules)
        + "</ol></details>"
    )
    summary = (
        "What was observed for each claim, under each protocol"
        if with_flips
        else "What was observed for each claim, and the test"
    )
    out.append(f'<details class="claims"><summary>{e(summary)}</summary><ol class="findings">')
    for f in findings:
        verdict = verdict_of(f)
        extra = ""
        if f.get("protocols"):
            extra += _protocols_html(f["protocols"])
        else:
            extra += f'<br><span class="obs">{e(f["observed"])}</span>'
            if f.get("detail"):
                extra += f'<br><span class="obs">test: {e(f["detail"])}</span>'
        out.append(f'<li class="{_css(verdict)}"><b>{e(verdict)}</b> — {e(f["claim"])}{extra}</li>')
    out.append("</ol></details>")
    return "\n".join(out)


def _failed_html(report: Report) -> str:
    """The banner naming the runs that failed to train (``""`` when none did)."""
    e = html_escape
    if not report.failed_runs:
        return ""
    return (
        '<div class="banner failed"><b>Failed to train — not tested against.</b><ul>'
        + "".join(
            f"<li><b>{e(r['method'])}</b> under <code>{e(r['protocol'])}</code>: "
            f"{e(r['reason'])}</li>"
            for r in report.failed_runs
        )
        + "</ul>Claims resting on these runs are <i>not testable</i> under that protocol; "
        "no significance mark is set for or against them.</div>"
    )


def _css(verdict: str) -> str:
    """The CSS class of a verdict (``not testable`` -> ``not-testable``)."""
    return verdict.replace(" ", "-")


def _finding_rules(f: Mapping[str, Any]) -> list[str]:
    """The rules a finding's verdict rests on, each once: its own (without the robustness rule),
    the rules of protocols where it was not testable, and the robustness rule."""
    out: list[str] = []
    if f.get("protocols"):
        base = str(f.get("base_rule") or f.get("rule", "")).removesuffix("; " + ROBUST_RULE)
        out += [r for r in base.split(" / ") if r]
        out += [str(p.get("rule", "")) for p in f["protocols"].values() if p.get("rule")]
        out.append(ROBUST_RULE)
    elif f.get("rule"):
        out.append(str(f["rule"]))
    return list(dict.fromkeys(out))


def _rules(findings: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every rule the page's verdicts rest on, each once, in order of first use."""
    return list(dict.fromkeys(r for f in findings for r in _finding_rules(f)))


def _protocols_html(protocols: Mapping[str, Mapping[str, Any]]) -> str:
    """The verdict under each training protocol, one line each (observation and test)."""
    e = html_escape
    items = []
    for name, p in protocols.items():
        v = str(p.get("verdict", INCONCLUSIVE))
        v = v if v in VERDICTS else INCONCLUSIVE
        why = p.get("reason") or p.get("detail") or ""
        test = f"; {e(why)}" if why else ""
        items.append(
            f'<li class="{_css(v)}"><b>{e(v)}</b> under <code>{e(name)}</code>: '
            f'<span class="obs">{e(str(p.get("observed", "")))}{test}</span></li>'
        )
    return '<ul class="protocols">' + "".join(items) + "</ul>"


def _value_text(v: Any) -> str:
    return readable(v)


def readable(v: Any) -> str:
    """A value as a reader reads it, not as JSON: a mapping as ``key: value, ...`` (a nested
    one in brackets), a sequence as ``a, b``, None as ``none``, booleans as ``yes``/``no``,
    numbers as written (``:g`` for a float). What a page shows of a dataset, a convention or
    the provenance; results.json keeps the JSON."""
    v = jsonable(v)
    if isinstance(v, str):
        return v
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, Mapping):
        parts = []
        for k, x in v.items():
            text = readable(x)
            if isinstance(x, Mapping | list | tuple) and len(x) > 1:
                text = f"({text})"
            parts.append(f"{k}: {text}")
        return ", ".join(parts) if parts else "—"
    if isinstance(v, list | tuple):
        return ", ".join(readable(x) for x in v) if v else "—"
    return str(v)


def _conventions_html(conventions: Mapping[str, Mapping[str, Any]]) -> str:
    """The measures' conventions, collapsed: the keys every measure shares once, then for each
    measure only the keys where it differs."""
    e = html_escape
    names = list(conventions)
    texts = {n: {k: _value_text(v) for k, v in conventions[n].items()} for n in names}
    keys = list(dict.fromkeys(k for n in names for k in texts[n]))
    first = texts[names[0]]
    shared = {
        k: first[k]
        for k in keys
        if len(names) > 1 and all(k in texts[n] and texts[n][k] == first.get(k) for n in names)
    }
    out = [
        "<h2>Measure conventions</h2>",
        f"<details class='conv'><summary>{len(names)} measure(s): the convention they share, "
        "and where each differs (gain, discount, cut-off, ties, empty-query rule, ...)</summary>",
    ]
    if shared:
        out.append("<p>Shared by every measure in this report:</p>")
        out.append(
            '<table class="data">'
            + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in shared.items())
            + "</table>"
        )
        out.append("<p>Differences (only the keys not shared):</p>")
    rows = []
    for n in names:
        diff = [f"{k} = {v}" for k, v in texts[n].items() if k not in shared]
        rows.append(f"<tr><th><code>{e(n)}</code></th><td>{e('; '.join(diff)) or '—'}</td></tr>")
    out.append('<table class="conv">' + "".join(rows) + "</table>")
    out.append("</details>")
    return "\n".join(out)


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
            text = readable(v)
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
.nav { font-size: .9em; margin: 0; }
.banner { background: #fff4d6; border: 1px solid #e8c55c; padding: .5em .8em; margin: .6em 0; }
.banner.scope { background: #eef7ee; border-color: #7fb77f; }
.claim { background: #eef4fb; border-left: 4px solid #4a7ab8; padding: .5em .8em; }
div.wide { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: .5em 0; font-size: .92em; }
th, td { border-bottom: 1px solid #e3e3e3; padding: .25em .6em; text-align: left;
         vertical-align: top; }
td.long { overflow-wrap: anywhere; min-width: 8em; }
thead th { border-bottom: 2px solid #888; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure { margin: 1.2em 0; }
figure.plot img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: .92em; color: #333; margin-bottom: .3em; }
ul.notes { font-size: .85em; color: #444; margin: .2em 0; }
ul.notes li.legend { list-style: none; margin-left: -1em; }
.files { font-size: .85em; color: #666; }
.mark { font-weight: bold; }
pre { background: #f6f6f6; padding: .5em; font-size: .85em; white-space: pre-wrap;
      overflow-wrap: anywhere; }
table.data th { width: 9em; color: #555; }
table.conv th { font-weight: normal; }
table.conv td, table.data td { overflow-wrap: anywhere; }
pre.hash { white-space: pre-wrap; word-break: break-all; margin: 0; }
ol.findings li { margin: .5em 0; }
ul.protocols { margin: .2em 0 .2em 0; padding-left: 1.2em; font-size: .9em; }
ul.protocols li { margin: .15em 0; }
li.agrees b, td.agrees b { color: #1b7a2e; }
li.disagrees b, td.disagrees b { color: #b3261e; }
li.inconclusive b, td.inconclusive b { color: #8a6d00; }
li.not-testable b, td.not-testable b { color: #6b3fa0; }
table.verdicts td { font-size: .95em; }
table.verdicts td.v { white-space: nowrap; }
table.verdicts td.reason { color: #333; min-width: 16em; }
table.verdicts sup a { color: #777; font-size: .8em; text-decoration: none; }
ol.rules li { font-size: .88em; color: #444; margin: .3em 0; }
.banner.failed { background: #fbe9e7; border-color: #d9776a; }
.banner.failed ul { margin: .3em 0; }
.banner.data { background: #f3f3f3; border-color: #bbb; }
details.group { border-left: 3px solid #d7e1ee; padding-left: .8em; }
details.group > summary { font-weight: bold; }
.obs { color: #444; font-size: .92em; }
.rule { color: #666; font-size: .85em; }
.rules, .counts { font-size: .92em; }
details { margin: .6em 0; }
summary { cursor: pointer; color: #2a5590; }
"""
