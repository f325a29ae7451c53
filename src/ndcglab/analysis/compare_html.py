"""The HTML page of a comparison: :func:`comparison_page`.

One self-contained file (no script, no external resource): the table of means with marks, the
means with their intervals, the per-test table, the per-topic difference plots and the
achieved-significance-level (ASL) curves, drawn as inline SVG, and the legend with the query set.

* **Per-topic differences**: for each system tested against the baseline, one bar per topic of
  ``system − baseline``, sorted from the largest gain to the largest loss (as IR papers show
  them); bars above the axis are wins, below losses; the dashed lines mark ``±tie``.
* **ASL curves** (Sakai, "Evaluating evaluation metrics based on the bootstrap", SIGIR 2006):
  per measure, the paired-bootstrap ASL of every pair of systems, sorted ascending; the share of
  pairs below the ``alpha`` line is the measure's discriminative power.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .._tables import TextTable, counted, html_escape

if TYPE_CHECKING:
    from .comparison import ComparisonResult

__all__ = ["asl_svg", "comparison_page", "per_topic_svg"]

_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2")

_STYLE = """
body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1200px; }
table { border-collapse: collapse; margin: 8px 0 16px 0; font-size: 14px; }
th, td { border-bottom: 1px solid #ccc; padding: 4px 10px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 2px solid #444; }
p.legend { font-size: 13px; color: #444; max-width: 1100px; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
figure { margin: 0; }
figcaption { font-size: 12px; color: #444; text-align: center; }
"""


def per_topic_svg(
    diffs: Any, *, tie: float = 0.0, width: int = 360, height: int = 180, title: str = ""
) -> str:
    """Sorted bars of per-topic differences (descending) as an SVG element."""
    values = sorted((float(x) for x in diffs if math.isfinite(float(x))), reverse=True)
    pad_l, pad_r, pad_t, pad_b = 44, 8, 18, 18
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    top = max([abs(v) for v in values] + [tie, 1e-12])
    y0 = pad_t + h / 2.0

    def y(v: float) -> float:
        return y0 - v / top * (h / 2.0)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{html_escape(title)}">',
        f'<text x="{width / 2:.0f}" y="12" font-size="12" text-anchor="middle">'
        f"{html_escape(title)}</text>",
    ]
    n = len(values)
    bw = w / max(n, 1)
    for i, v in enumerate(values):
        colour = "#2ca02c" if v > tie else "#d62728" if v < -tie else "#999999"
        top_y, bottom_y = (y(v), y0) if v >= 0 else (y0, y(v))
        parts.append(
            f'<rect x="{pad_l + i * bw:.2f}" y="{top_y:.2f}" width="{max(bw - 0.5, 0.5):.2f}" '
            f'height="{max(bottom_y - top_y, 0.5):.2f}" fill="{colour}"/>'
        )
    parts.append(f'<line x1="{pad_l}" y1="{y0:.2f}" x2="{pad_l + w}" y2="{y0:.2f}" stroke="#000"/>')
    if tie > 0:
        for v in (tie, -tie):
            parts.append(
                f'<line x1="{pad_l}" y1="{y(v):.2f}" x2="{pad_l + w}" y2="{y(v):.2f}" '
                'stroke="#666" stroke-dasharray="3,3"/>'
            )
    for v in (top, 0.0, -top):
        parts.append(
            f'<text x="{pad_l - 4}" y="{y(v) + 4:.2f}" font-size="10" text-anchor="end">'
            f"{axis_label(v, top)}</text>"
        )
    parts.append(
        f'<text x="{pad_l + w / 2:.0f}" y="{height - 4}" font-size="10" text-anchor="middle">'
        f"{counted(n, 'topic')}, sorted by difference</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


def axis_label(v: float, top: float) -> str:
    """An axis value with a sign, with enough decimals to tell ``top`` from 0 (2, up to 6), and
    never ``-0.00``: a value that rounds to zero is written ``0``."""
    digits = 2
    while digits < 6 and top > 0 and round(top, digits) == 0:
        digits += 1
    text = f"{v:+.{digits}f}"
    return "0" if float(text) == 0 else text


def asl_svg(curves: dict[str, list[float]], *, alpha: float = 0.05, width: int = 480,
            height: int = 300) -> str:  # fmt: skip
    """ASL curves (one line per measure: the sorted ASLs of all system pairs) as SVG."""
    pad_l, pad_r, pad_t, pad_b = 48, 140, 16, 36
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        'aria-label="ASL curves">'
    ]
    ymax = 0.2

    def px(i: int, n: int) -> float:
        return pad_l + (i / max(n - 1, 1)) * w

    def py(v: float) -> float:
        return pad_t + h - min(v, ymax) / ymax * h

    parts.append(
        f'<rect x="{pad_l}" y="{pad_t}" width="{w}" height="{h}" fill="none" stroke="#000"/>'
    )
    for v in (0.0, 0.05, 0.1, 0.15, 0.2):
        parts.append(
            f'<text x="{pad_l - 4}" y="{py(v) + 4:.1f}" font-size="10" text-anchor="end">'
            f"{v:.2f}</text>"
        )
    parts.append(
        f'<line x1="{pad_l}" y1="{py(alpha):.1f}" x2="{pad_l + w}" y2="{py(alpha):.1f}" '
        'stroke="#888" stroke-dasharray="4,3"/>'
    )
    for k, (m, vals) in enumerate(curves.items()):
        colour = _COLOURS[k % len(_COLOURS)]
        pts = " ".join(f"{px(i, len(vals)):.1f},{py(v):.1f}" for i, v in enumerate(vals))
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"/>')
        parts.append(
            f'<text x="{pad_l + w + 8}" y="{pad_t + 14 + 16 * k}" font-size="11" '
            f'fill="{colour}">{html_escape(m)}</text>'
        )
    parts.append(
        f'<text x="{pad_l + w / 2:.0f}" y="{height - 8}" font-size="11" text-anchor="middle">'
        "system pairs sorted by ASL</text>"
    )
    parts.append(
        f'<text x="12" y="{pad_t + h / 2:.0f}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 12 {pad_t + h / 2:.0f})">ASL (bootstrap p)</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


def comparison_page(res: ComparisonResult, *, title: str | None = None) -> str:
    """The whole page (module docstring)."""
    import numpy as np

    head = title or "Comparison of systems"
    header, rows = res.table()
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html_escape(head)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{html_escape(head)}</h1>",
        TextTable(header, rows).to_html(),
        f'<p class="legend">{html_escape(res.legend)}</p>',
    ]
    if res.mean_ci:
        h1, r1 = res.means_ci()
        body += ["<h2>Means and their intervals</h2>", TextTable(h1, r1).to_html()]
    if res.tests:
        h2, r2 = res.details()
        body += ["<h2>Tests</h2>", TextTable(h2, r2, align="lll" + "r" * (len(h2) - 3)).to_html()]
    if res.per_topic:
        body.append("<h2>Per-topic differences</h2>")
        for m in res.measures:
            body.append(f"<h3>{html_escape(m)}</h3>")
            figs = []
            for t in [x for x in res.tests if x.measure == m and x.baseline == res.baseline][:12]:
                d = np.asarray(res.per_topic[t.system][m]) - np.asarray(
                    res.per_topic[t.baseline][m]
                )
                caption = (
                    f"{t.system} − {t.baseline} on {m}: W/T/L {t.wins}/{t.ties}/{t.losses}, "
                    f"mean {t.diff:+.4f}"
                )
                figs.append(
                    "<figure>"
                    + per_topic_svg(d, tie=res.tie, title=f"{t.system} − {t.baseline}, {m}")
                    + f"<figcaption>{html_escape(caption)}</figcaption></figure>"
                )
            body.append(f'<div class="plots">{"".join(figs)}</div>')
    if res.asl:
        body += [
            "<h2>Discriminative power: ASL curves</h2>",
            asl_svg(res.asl, alpha=res.alpha),
            f"<pre>{html_escape(res.asl_summary())}</pre>",
        ]
    body += ["</body></html>", ""]
    return "\n".join(body)
