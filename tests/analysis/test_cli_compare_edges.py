"""Issue 44, item 10: ``ndcglab compare``'s edges, through the command line.

A dangling symbolic link in a runs folder is named; a warning every run shares is printed once;
counts agree with their noun ("1 topic"); too few topics for the chosen test are stated, with
the closed-form smallest p-value (2/2^n for the sign, Wilcoxon and randomisation tests;
C(2n-1, n) distinct bootstrap resamples); an interval that excludes 0 beside an unmarked
difference gets a sentence on why; the HTML axes never read "-0.00" and the per-topic grids
have measure headings; the LaTeX legend escapes < and > and describes only the columns the
LaTeX table has.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from ndcglab.analysis.compare_html import per_topic_svg
from ndcglab.analysis.significance import too_few_topics

from .test_compare_runs import make_trec


def _write(tmp_path, n_topics: int, extra_topic: bool = False) -> tuple[str, str]:
    qrels, runs = make_trec(n_topics=n_topics)
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"{t} 0 {d} {r}\n" for t, docs in qrels.items() for d, r in docs.items()))
    folder = tmp_path / "runs"
    folder.mkdir()
    for n, r in runs.items():
        lines = [
            f"{t} Q0 {d} {k + 1} {s!r} {n}\n"
            for t, docs in r.items()
            for k, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]))
        ]
        if extra_topic:
            lines.append(f"zz99 Q0 dx 1 1.0 {n}\n")
        (folder / f"{n}.run").write_text("".join(lines))
    return str(q), str(folder)


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [sys.executable, "-m", "ndcglab", "compare", *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in out.stderr, out.stderr
    return out


def _warnings(err: str) -> list[str]:
    return [x for x in err.splitlines() if x.startswith("ndcglab: warning: ")]


def test_a_dangling_link_is_named_and_a_shared_warning_printed_once(tmp_path) -> None:
    qrels, folder = _write(tmp_path, 15, extra_topic=True)
    os.symlink(tmp_path / "gone.run", os.path.join(folder, "dangling.run"))
    out = _cli("--qrels", qrels, folder, "-m", "map", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert set(json.loads(out.stdout)["systems"]) == {"sys0", "sys1", "sys2"}
    w = _warnings(out.stderr)
    link = [x for x in w if "dangling.run" in x]
    assert len(link) == 1 and "symbolic link to a missing file" in link[0], w
    shared = [x for x in w if "zz99" in x]
    assert len(shared) == 1, w  # once for the three runs, not once per run
    assert "runs 'sys0', 'sys1', 'sys2': 1 topic without judgements" in shared[0], shared
    assert " is ignored" in shared[0] and "1 topics" not in out.stderr


@pytest.mark.parametrize(
    ("test", "n", "warned"),
    [("wilcoxon", 3, True), ("sign", 5, True), ("permutation", 5, True), ("wilcoxon", 6, False),
     ("bootstrap", 3, True), ("bootstrap", 4, False), ("t", 1, True), ("t", 3, False),
     ("tukey", 2, False)],
)  # fmt: skip
def test_too_few_topics_closed_forms(test, n, warned) -> None:
    few = too_few_topics(test, n, 0.05)
    assert bool(few) is warned, few
    if warned and test in ("wilcoxon", "sign", "permutation"):
        # the exact null distribution puts 1/2^n on each sign vector: smallest p = 2/2^n
        assert f"2/2^{n} = {2.0 ** (1 - n):.4g}" in few, few
        assert "6 topics or more" in few  # 2/2^6 = 0.03125 < 0.05 <= 2/2^5
    if warned and test == "bootstrap":
        assert f"C(2n-1, n) = {math.comb(2 * n - 1, n)} distinct" in few, few


def test_too_few_topics_and_a_disagreeing_interval_are_stated(tmp_path) -> None:
    qrels, folder = _write(tmp_path, 3)
    out = _cli("--qrels", qrels, folder, "-m", "map", "--test", "wilcoxon")
    assert out.returncode == 0, out.stderr
    few = [x for x in _warnings(out.stderr) if "with 3 topics" in x]
    assert len(few) == 1 and "cannot reach p < 0.05" in few[0], out.stderr
    assert "Query set: 3 topics," in out.stdout
    rows = [r.split() for r in out.stdout.splitlines() if re.match(r"sys\d +sys0 +map ", r)]
    odd = 0
    for r in rows:  # system baseline measure n diff [lo, hi] d_z p p_adj ...
        lo, hi = float(r[5].strip("[,")), float(r[6].strip("],"))
        odd += (lo > 0 or hi < 0) != (float(r[9]) < 0.05)
    assert odd, rows  # this data has one: an interval above 0, Wilcoxon p >= 0.25
    assert f"For {odd} test" in out.stdout and "the interval and the mark disagree" in out.stdout
    assert "multiple-comparison adjustment" in out.stdout
    one = tmp_path / "one"
    one.mkdir()
    qrels1, folder1 = _write(one, 1)
    out = _cli("--qrels", qrels1, folder1, "-m", "map")
    assert "Query set: 1 topic," in out.stdout and "1 topics" not in out.stdout + out.stderr
    assert any("with 1 topic the paired t-test" in x for x in _warnings(out.stderr))


def test_html_axes_and_grid_headings(tmp_path) -> None:
    svg = per_topic_svg(np.zeros(5), title="same")
    labels = re.findall(r'text-anchor="end">([^<]*)<', svg)
    assert labels and "-0.00" not in labels and "+0.00" not in labels, labels
    svg = per_topic_svg(np.array([0.004, -0.003]), title="small")
    labels = re.findall(r'text-anchor="end">([^<]*)<', svg)
    assert labels == ["+0.004", "0", "-0.004"], labels
    assert "2 topics, sorted" in svg and "1 topics" not in per_topic_svg([0.1])
    qrels, folder = _write(tmp_path, 4)
    page = tmp_path / "c.html"
    out = _cli("--qrels", qrels, folder, "-m", "map", "-m", "P_5", "--export", str(page))
    assert out.returncode == 0, out.stderr
    html = page.read_text(encoding="utf-8")
    grid = html.split("<h2>Per-topic differences</h2>", 1)[1]
    assert grid.index("<h3>map</h3>") < grid.index("<h3>p@5</h3>"), grid[:300]


def test_latex_legend_is_escaped_and_describes_only_its_columns(tmp_path) -> None:
    qrels, folder = _write(tmp_path, 15)
    tex = tmp_path / "t.tex"
    out = _cli("--qrels", qrels, folder, "-m", "map", "--test", "sign", "--tie-threshold",
               "0.01", "--export", str(tex))  # fmt: skip
    assert out.returncode == 0, out.stderr
    text = tex.read_text(encoding="utf-8")
    # outside math mode, < > and | print as other glyphs in LaTeX's default text font
    outside_math = re.sub(r"\$[^$]*\$", "", text)
    assert not re.search(r"[<>|]", outside_math), outside_math
    assert r"$\le$" in text  # "|d| <= 0.01" of the sign test's rule
    legend = text.split(r"\parbox", 1)[1]
    for column in ("W/T/L", "d\\_z", "topics needed", "CI:"):
        assert column not in legend, legend
    header = text.split(r"\midrule", 1)[0]
    assert "W/T/L" not in header and "d\\_z" not in header
