"""The report machinery: files written, atomicity, formats (no experiment involved)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from ndcglab._versions import package_versions
from ndcglab.errors import NdcglabError
from ndcglab.reproduce.report import Cell, Report, Table, write_bundle


def _report(name: str = "toy") -> Report:
    from ndcglab._compat import pyplot

    plt = pyplot()
    r = Report(name, "Toy report", claim="a beats b", quick=True, seed=3)
    r.add_mark("▲", "significantly better than b (paired t-test, p < 0.05)")
    r.add_table(
        Table(
            "scores",
            "Scores",
            ["method", "N@1", "MAP"],
            [["a", Cell(0.5, 0.01, "▲", 0.012), 0.3], ["b_x", 0.4, None]],
            notes=["a note"],
        )
    )
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4], label="x")
    ax.legend()
    r.add_figure("curve", fig, title="A curve")
    r.add_convention("ndcg@1", {"gain": "exp2", "discount": "log"})
    r.add_finding("a beats b", "0.5 vs 0.4", True)
    r.finish(1.5)
    return r


def test_files_and_formats(tmp_path: Path) -> None:
    out = _report().write(tmp_path / "rep")
    html = (out / "index.html").read_text(encoding="utf-8")
    imgs = re.findall(r'<img src="([^"]+)"', html)
    assert imgs == ["plots/curve.png"]
    assert (out / imgs[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<style>" in html and "<link" not in html  # inline CSS, self-contained
    assert "significantly better than b" in html and "ndcg@1" in html and "Quick run" in html
    for ext in ("csv", "md", "tex"):
        assert (out / "tables" / f"scores.{ext}").exists()
    rows = list(csv.reader((out / "tables" / "scores.csv").open(encoding="utf-8")))
    assert rows[0] == ["method", "N@1", "MAP", "N@1_spread", "N@1_sig"]
    assert float(rows[1][1]) == 0.5 and rows[1][4] == "▲" and rows[2][2] == ""
    md = (out / "tables" / "scores.md").read_text(encoding="utf-8")
    assert "| b\\_x |" not in md and "| b_x | 0.4000 | — |" in md and "▲: significantly" in md
    tex = (out / "tables" / "scores.tex").read_text(encoding="utf-8")
    assert r"b\_x" in tex and r"\blacktriangle" in tex and r"\toprule" in tex
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["seed"] == 3 and res["quick"] is True and res["elapsed_s"] == 1.5
    assert set(package_versions()) <= set(res["versions"])
    for pkg in ("python", "ndcglab", "numpy", "scipy", "torch", "lightgbm"):
        assert res["versions"][pkg]
    assert res["tables"]["scores"]["rows"][0][1] == {
        "value": 0.5,
        "spread": 0.01,
        "mark": "▲",
        "p": 0.012,
    }
    assert res["tables"]["scores"]["rows"][1][2] is None
    assert res["conventions"]["ndcg@1"]["gain"] == "exp2"


def test_mark_needs_legend() -> None:
    r = Report("toy", "t")
    with pytest.raises(NdcglabError, match="legend"):
        r.add_table(Table("t", "t", ["a"], [[Cell(1.0, mark="†")]]))


def test_ragged_table_rejected() -> None:
    with pytest.raises(NdcglabError, match="row 0"):
        Table("t", "t", ["a", "b"], [[1]])


def test_atomic_failure_leaves_nothing(tmp_path: Path) -> None:
    class Boom(Report):
        def _write_files(self, folder: Path) -> None:
            (folder / "half.txt").write_text("x")
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_bundle(tmp_path / "rep", Boom("toy", "t"))
    assert list(tmp_path.iterdir()) == []


def test_replaces_earlier_report_but_not_other_folders(tmp_path: Path) -> None:
    out = _report().write(tmp_path / "rep")
    (out / "stale.txt").write_text("old")
    out = _report().write(tmp_path / "rep")
    assert not (out / "stale.txt").exists() and (out / "index.html").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    with pytest.raises(NdcglabError, match="refusing"):
        _report().write(other)
    assert (other / "notes.txt").read_text() == "keep"


def test_bundle_with_children(tmp_path: Path) -> None:
    index = Report("all", "index")
    index.add_link("a/index.html", "A")
    out = write_bundle(tmp_path / "all", index, [("a", _report("a")), ("b", _report("b"))])
    for sub in ("a", "b"):
        assert (out / sub / "index.html").exists() and (out / sub / "plots" / "curve.png").exists()
    assert 'href="a/index.html"' in (out / "index.html").read_text(encoding="utf-8")


def test_table_legend_once_and_conventions_collapsed(tmp_path: Path) -> None:
    r = Report("toy", "t")
    legend = "† p < 0.05, ‡ p < 0.01: paired t-test against the baseline 'b'"
    rows = [["a", Cell(0.5, mark="†"), Cell(0.6, mark="‡")], ["b", 0.4, 0.5]]
    r.add_table(Table("x", "X", ["m", "N@1", "N@3"], rows, legend=legend, notes=["a note"]))
    r.add_table(Table("y", "Y", ["m", "N@1"], [["a", Cell(0.1, mark="†")]], legend="† other"))
    with pytest.raises(NdcglabError, match="legend"):
        r.add_table(Table("z", "Z", ["m", "N@1"], [["a", Cell(0.1, mark="*")]], legend="† x"))
    r.add_convention("ndcg@1", {"gain": "exp2", "discount": "log2", "k": 1})
    r.add_convention("ndcg@3", {"gain": "exp2", "discount": "log2", "k": 3})
    r.add_file("tables/extra.md", "x")
    out = r.write(tmp_path / "rep")
    html = (out / "index.html").read_text(encoding="utf-8")
    fig = re.search(r'<figure class="table" id="table-x">.*?</figure>', html, re.S).group(0)
    assert fig.count('class="legend"') == 1 and fig.count("p &lt; 0.05") == 1
    assert "baseline &#x27;b&#x27;" in fig and "other" not in fig
    md = (out / "tables" / "x.md").read_text(encoding="utf-8")
    assert md.count("p < 0.05") == 1 and "- a note" in md
    tex = (out / "tables" / "x.tex").read_text(encoding="utf-8")
    assert tex.count(r"p $<$ 0.05") + tex.count("p < 0.05") + tex.count(r"p \textless{} 0.05") <= 1
    assert "<h2>Significance marks</h2>" not in html  # no report-wide marks
    # the shared convention once, then only the differing key, inside a closed <details>
    conv = html[html.index("<h2>Measure conventions</h2>") :]
    conv = conv[: conv.index("</details>")]
    assert "<details" in conv and "<details open" not in conv
    assert conv.count("exp2") == 1 and conv.count("log2") == 1
    assert "k = 1" in conv and "k = 3" in conv
    # the files line: no stray separator after results.json
    assert "results.json</a>; further files: " in html and "json. ·" not in html
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["tables"]["x"]["legend"] == legend


def test_back_link_scope_banner_and_verdicts() -> None:
    r = Report("toy", "t")
    r.scope = "synthetic data: <code>--data LETOR_DIR</code>"
    r.parent_href = "../index.html"
    r.add_finding("c1", "o1", True, rule="rule one")
    r.add_finding("c2", "o2", None, rule="rule two")
    html = r.to_html()
    assert html.count('href="../index.html"') == 2
    assert 'class="banner scope"' in html and "<code>--data LETOR_DIR</code>" in html
    assert "1 agree, 0 disagree, 1 inconclusive" in html
    # the verdict table leads; each rule is listed once, numbered, inside a closed <details>
    assert html.index('<table class="verdicts">') < html.index('<details class="rules">')
    assert '<li id="rule-1">rule one</li>' in html and '<li id="rule-2">rule two</li>' in html
    assert html.count("rule one") == 1
    assert Report("toy", "t").to_html().count("../index.html") == 0
