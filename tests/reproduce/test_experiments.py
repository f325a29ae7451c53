"""Every experiment in the test-suite's tiny mode: the files it writes, atomicity, the CLI.

The tiny mode uses minimal data and work (the numbers mean nothing); what is checked is the report
folder: HTML whose <img> tags point at existing PNGs, CSV/Markdown/LaTeX tables, results.json with
dataset hashes, seeds and package versions.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from ndcglab._tables import html_escape
from ndcglab.cli.main import main
from ndcglab.errors import NdcglabError
from ndcglab.reproduce import EXPERIMENTS, run_experiment

pytest.importorskip("torch")
pytest.importorskip("matplotlib")


def check_report(folder: Path, experiment: str) -> dict:
    """Assert the layout of one report folder; return its results.json."""
    html = (folder / "index.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<style>" in html
    imgs = re.findall(r'<img src="([^"]+)"', html)
    assert imgs, f"{experiment}: no plot in the page"
    for src in imgs:
        assert not src.startswith(("/", "http")), src  # relative paths only
        png = folder / src
        assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", src
    tables = sorted((folder / "tables").glob("*.csv"))
    tables = [t for t in tables if not t.name.endswith(".export.csv")]
    assert tables, f"{experiment}: no table"
    for t in tables:
        for ext in (".md", ".tex"):
            assert t.with_suffix(ext).is_file(), t.with_suffix(ext)
        rows = list(csv.reader(t.open(encoding="utf-8")))
        assert len(rows) >= 2 and all(len(r) == len(rows[0]) for r in rows)
        assert f'href="tables/{t.name}"' in html
        tex = t.with_suffix(".tex").read_text(encoding="utf-8")
        assert r"\begin{tabular}" in tex and r"\end{table}" in tex
    res = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    assert res["experiment"] == experiment
    assert res["quick"] is True and res["seed"] == 0 and "seed" in res["seeds"]
    for pkg in ("python", "ndcglab", "numpy", "scipy", "torch", "lightgbm"):
        assert res["versions"].get(pkg), pkg
    assert res["elapsed_s"] is not None and res["elapsed_s"] >= 0
    assert f"run time {res['elapsed_s']:.1f} s" in html
    assert res["findings"], f"{experiment}: no comparison with the paper"
    flag = {"agrees": True, "disagrees": False, "inconclusive": None, "not testable": None}
    for f in res["findings"]:
        assert f["claim"] and f["observed"]
        # every verdict is one of four words, consistent with its flag, decided by a stated rule
        assert f["verdict"] in flag, f
        assert f["agrees"] is flag[f["verdict"]], f
        assert f["rule"], f"{experiment}: verdict without a rule: {f['claim']}"
        # the rules are listed once each; a finding's own rule (without the robustness rule that
        # combines protocols) is among them
        own = f.get("base_rule") or f["rule"]
        for part in own.split(" / "):
            assert html_escape(part) in html, "the rule is printed on the page"
        # a row of the verdict table: the claim, then its verdict
        cls = f["verdict"].replace(" ", "-")
        row = f'<td>{html_escape(f["claim"])}</td><td class="v {cls}"><b>{f["verdict"]}'
        assert row in html, row
    counts = {v: sum(f["verdict"] == v for f in res["findings"]) for v in flag}
    assert (
        f"{counts['agrees']} agree, {counts['disagrees']} disagree, "
        f"{counts['inconclusive']} inconclusive" in html
    )
    real = any(d.get("kind") in ("letor-folder", "letor-file") for d in res["datasets"])
    check_page_layout(html, experiment, real=real)
    if experiment != "limits":  # the theorems use no dataset
        assert res["datasets"], f"{experiment}: no dataset description"
        for d in res["datasets"]:
            hashes = json.dumps(d.get("hashes", {}))
            assert re.search(r"[0-9a-f]{64}", hashes), f"{experiment}: no sha256 in {d}"
            if d.get("kind") == "synthetic":
                assert d.get("params"), "synthetic data: generator parameters"
    assert res["conventions"], f"{experiment}: no measure conventions"
    for name, conv in res["conventions"].items():
        assert isinstance(conv, dict) and conv, name
        assert f"<code>{name}</code>" in html or name.replace("&", "&amp;") in html
    return res


def check_page_layout(html: str, experiment: str, *, real: bool = False) -> None:
    """What the page must show: the banner of what the run can test, one legend per table,
    the measure conventions collapsed, no stray separators."""
    assert 'class="banner scope"' in html and "What this run can test" in html
    if experiment != "limits" and not real:
        assert "--data" in html  # how to run it on real data
    for fig in re.findall(r'<figure class="table".*?</figure>', html, re.S):
        assert fig.count('class="legend"') <= 1, fig[:200]
    if "Measure conventions" in html:
        assert re.search(r"<h2>Measure conventions</h2>\s*<details", html)
    assert "results.json</a>. ·" not in html and "json. ·" not in html


def table_html(html: str, name: str) -> str:
    m = re.search(rf'<figure class="table" id="table-{name}">.*?</figure>', html, re.S)
    assert m, name
    return m.group(0)


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_experiment_tiny(name: str, tmp_path: Path) -> None:
    out, _ = run_experiment(name, tmp_path / name, mode="tiny")
    assert out == (tmp_path / name).resolve()
    check_report(out, name)
    # nothing else left beside the report (no temporary folders)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_cost_sensitive_prints_the_papers_numbers(tmp_path: Path) -> None:
    from ndcglab.reproduce.cost_sensitive import PAPER

    # Lu et al. Table 1 (OHSUMED), transcribed by hand from the paper
    assert PAPER["OHSUMED"]["ListMLE"]["ndcg@1"] == 0.548
    assert PAPER["OHSUMED"]["CS-ListMLE@1"]["ndcg@1"] == 0.555
    assert PAPER["OHSUMED"]["CS-ListMLE@1"]["ndcg@10"] == 0.446
    assert PAPER["OHSUMED"]["CS-ListMLE@1"]["map"] == 0.442
    out, _ = run_experiment("cost-sensitive", tmp_path / "cs", mode="tiny")
    rows = list(csv.reader((out / "tables" / "paper_comparison.csv").open(encoding="utf-8")))
    assert rows[0][:3] == ["method", "N@1 ours", "N@1 paper"]
    listmle = next(r for r in rows if r[0] == "ListMLE")
    assert float(listmle[2]) == 0.548 and listmle[6] == ""  # N@5 not reported ("—")


def test_all_writes_an_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ndcglab.reproduce as R

    monkeypatch.setattr(R, "EXPERIMENTS", {"linear-ndcg": "linear_ndcg", "limits": "limits"})
    out, _ = run_experiment("all", tmp_path / "all", mode="tiny")
    html = (out / "index.html").read_text(encoding="utf-8")
    for sub in ("linear-ndcg", "limits"):
        assert f'href="{sub}/index.html"' in html
        check_report(out / sub, sub)
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert set(res["results"]) >= {"linear-ndcg", "limits"}
    assert (out / "tables" / "experiments.csv").is_file()


def _marks_agree_with_direction(fig: str) -> None:
    """In a table of means whose first row is the baseline, a ▲ mean is above the baseline's
    and a ▼ mean below it, column by column."""
    rows = re.findall(r"<tr>(.*?)</tr>", fig.split("<tbody>", 1)[1], re.S)
    cells = [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
             for r in rows]  # fmt: skip
    base = cells[0]
    for row in cells[1:]:
        for j in range(1, len(row)):
            value = float(re.sub(r"[^0-9.+-]", "", row[j].split("±")[0]) or "nan")
            ref = float(re.sub(r"[^0-9.+-]", "", base[j].split("±")[0]) or "nan")
            if "▲" in row[j]:
                assert value > ref, (row, base)
            if "▼" in row[j]:
                assert value < ref, (row, base)


def test_pages_name_their_own_baselines_and_link_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each table's legend names its own original loss, once; sub-pages link back to the
    index; the index counts every verdict category and carries the banner."""
    import ndcglab.reproduce as R

    monkeypatch.setattr(
        R,
        "EXPERIMENTS",
        {"consistency": "consistency", "qnorm": "qnorm", "cost-sensitive": "cost_sensitive"},
    )
    out, _ = run_experiment("all", tmp_path / "all", mode="tiny")
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'class="banner scope"' in index and "--data LETOR_DIR" in index
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for sub, r in res["results"].items():
        c = r["verdict_counts"]
        assert sum(c.values()) == len(r["findings"])
        assert (
            f"{c['agrees']} agree, {c['disagrees']} disagree, {c['inconclusive']} inconclusive"
            in index
        ), sub
        page = (out / sub / "index.html").read_text(encoding="utf-8")
        assert page.count('href="../index.html"') == 2, "a back link at the top and the bottom"
        check_report(out / sub, sub)

    html = (out / "consistency" / "index.html").read_text(encoding="utf-8")
    families = {"cosine": "cosine", "squared": "squared", "listnet": "ListNet (cross-entropy)"}
    for fam, shown in families.items():
        for name in (f"ndcg_{fam}", f"significance_{fam}_consistent_vs_original"):
            fig = table_html(html, name)
            legends = re.findall(r'<li class="legend">(.*?)</li>', fig, re.S)
            assert len(legends) == 1, name
            if name.startswith("ndcg_"):  # marks with a direction: above or below the baseline
                assert "▲ significantly higher, ▼ significantly lower" in legends[0], legends[0]
                assert legends[0].count("p &lt; 0.05") == 1
                _marks_agree_with_direction(fig)
            else:  # the per-test table: its mark column has the levels, the diff the sign
                assert legends[0].count("p &lt; 0.05") == 1
                assert legends[0].count("p &lt; 0.01") == 1
            assert f"baseline &#x27;{shown}: original&#x27;" in legends[0], legends[0]
            for other in set(families.values()) - {shown}:
                assert f"{other}: original" not in legends[0], (name, other)
        md = (out / "consistency" / "tables" / f"ndcg_{fam}.md").read_text(encoding="utf-8")
        assert md.count("p \\< 0.05") + md.count("p < 0.05") == 1, md
        assert f"{shown}: original" in md
    assert "<h2>Significance marks</h2>" not in html  # no report-wide legend left over

    html = (out / "qnorm" / "index.html").read_text(encoding="utf-8")
    legends = re.findall(r'<li class="legend">(.*?)</li>', table_html(html, "ndcg"), re.S)
    assert len(legends) == 1 and "q-norm" in legends[0]
    html = (out / "cost-sensitive" / "index.html").read_text(encoding="utf-8")
    legends = re.findall(r'<li class="legend">(.*?)</li>', table_html(html, "results"), re.S)
    assert len(legends) == 1 and "ListMLE" in legends[0]
    assert "▼ significantly lower" in legends[0]
    # the variants are named in full in the reasons: "CS-ListMLE@1 − ListMLE", never "1 − ..."
    assert "CS-ListMLE@1 − ListMLE" in html and not re.search(r"[(>; ]1 − ListMLE", html)
    # the index lists each experiment once and names the claims that disagree, if any
    for sub, r in res["results"].items():
        assert index.count(f'href="{sub}/index.html"') == 1, sub
        for f in r["findings"]:
            if f["verdict"] == "disagrees":
                assert html_escape(f["claim"]) in index, f["claim"]
    legends = re.findall(
        r'<li class="legend">(.*?)</li>', table_html(html, "significance_cs1_vs_baselines"), re.S
    )
    assert len(legends) == 1 and "CS-ListMLE@1" in legends[0]


def test_failure_leaves_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ndcglab.reproduce.limits as L

    def boom(report, settings):
        report.text("half done")
        raise RuntimeError("simulated failure in the middle of an experiment")

    monkeypatch.setattr(L, "run", boom)
    with pytest.raises(RuntimeError, match="simulated failure"):
        run_experiment("limits", tmp_path / "rep", mode="tiny")
    assert list(tmp_path.iterdir()) == []

    import ndcglab.reproduce as R

    monkeypatch.setattr(R, "EXPERIMENTS", {"linear-ndcg": "linear_ndcg", "limits": "limits"})
    with pytest.raises(RuntimeError):
        run_experiment("all", tmp_path / "all", mode="tiny")
    assert list(tmp_path.iterdir()) == []


def test_unknown_experiment_and_bad_data(tmp_path: Path) -> None:
    with pytest.raises(NdcglabError, match="unknown experiment"):
        run_experiment("nope", tmp_path / "x")
    with pytest.raises(NdcglabError, match="no such file"):
        run_experiment("linear-ndcg", tmp_path / "x", data=tmp_path / "missing", mode="tiny")
    (tmp_path / "empty").mkdir()
    with pytest.raises(NdcglabError, match="Fold1"):
        run_experiment("linear-ndcg", tmp_path / "x", data=tmp_path / "empty", mode="tiny")
    assert not (tmp_path / "x").exists()


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "lin"
    rc = main(
        [
            "reproduce",
            "linear-ndcg",
            "--mode",
            "tiny",
            "--out",
            str(out),
            "--format",
            "json",
            "--quiet",
        ]
    )
    assert rc == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["experiment"] == "linear-ndcg" and Path(payload["out"]) == out.resolve()
    assert payload["findings"] and (out / "index.html").is_file()
    check_report(out, "linear-ndcg")
    # text output, and a library error becomes exit status 2 with a message
    rc = main(["reproduce", "linear-ndcg", "--mode", "tiny", "--out", str(out), "--quiet"])
    assert rc == 0 and "report written to" in capsys.readouterr().out
    rc = main(
        ["reproduce", "linear-ndcg", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "x")]
    )
    assert rc == 2 and "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["reproduce", "nope", "--out", str(tmp_path / "y")])


@pytest.mark.realdata
def test_linear_ndcg_on_a_real_file(tmp_path: Path, mq2008: Path) -> None:
    out, report = run_experiment(
        "linear-ndcg", tmp_path / "r", mode="tiny", data=mq2008 / "Fold1" / "test.txt.gz"
    )
    res = check_report(out, "linear-ndcg")
    assert report.results["largest_gap"]["trained ListNet scores / input"] == 0.0
    hashes = res["datasets"][0]["hashes"]["test.txt.gz"]
    # the uncompressed hash is the one the data folder's MANIFEST.tsv lists
    manifest = (mq2008.parent / "MANIFEST.tsv").read_text().splitlines()
    row = next(line.split("\t") for line in manifest if line.startswith("MQ2008/Fold1/test.txt\t"))
    assert hashes["sha256_uncompressed"] == row[2] and hashes["sha256"] == row[6]
