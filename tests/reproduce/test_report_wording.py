"""Issue 44, item 11: the wording of the report pages.

Reasons cut at a clause never leave a parenthesis open; values are shown as a reader reads
them, not as JSON; significance marks say which way (▲ above the baseline, ▼ below); the index
lists every experiment once and names the claims that disagree; a table of NDCG@k under a LETOR
preset says why its means drop where k passes the lists' lengths."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ndcglab.analysis.comparison import MARK_HIGHER, MARK_LOWER
from ndcglab.analysis.significance import compare_rankers
from ndcglab.reproduce._fit import PerQueryStore
from ndcglab.reproduce.report.document import Report, first_clause
from ndcglab.reproduce.report.page import readable
from ndcglab.reproduce.verdicts import threshold


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


@pytest.mark.parametrize(
    "observed",
    [
        "informative 0.9649, random 0.9416 at n = 10^5 (gaps -0.0351, -0.0584; random ranker's "
        "gap was -0.2108 at n = 10): both climb towards 1",
        "80 queries, largest |gap| = 0 (exact integer arithmetic; largest R(f) = 271)",
        "a; b (c; d)",
    ],
)
def test_a_reason_keeps_its_parentheses_closed(observed: str) -> None:
    clause = first_clause(observed)
    assert _balanced(clause) and observed.startswith(clause), clause
    rep = Report("toy", "Toy")
    rep.add_finding("a claim", observed, threshold(True, False, rule="a rule"))
    reason = rep.findings[0]["reason"]
    assert _balanced(reason) and clause in reason, reason


def test_values_read_as_text_not_json() -> None:
    assert readable({"0": 4778, "1": 2429}) == "0: 4778, 1: 2429"
    assert readable({"min": 20, "median": 38.0, "max": 60}) == "min: 20, median: 38, max: 60"
    assert readable({"a": [20, 60], "b": None, "c": True}) == "a: (20, 60), b: none, c: yes"
    rep = Report("toy", "Toy")
    rep.add_dataset({"name": "d", "labels": {"0": 3, "2": 1}, "params": {"seed": 0}})
    page = rep.to_html()
    data = page.split("<h2>Data</h2>", 1)[1].split("<h2>Provenance</h2>")[0]
    prov = page.split("<h2>Provenance</h2>", 1)[1]
    assert "0: 3, 2: 1" in data and "{" not in data and "&quot;" not in data, data
    assert "<pre>{" not in prov and "{&quot;" not in prov, prov[:400]


def test_marks_say_which_way() -> None:
    rng = np.random.default_rng(0)
    base = rng.random(60)
    noise = rng.normal(0, 0.01, (3, 60))
    systems = {"base": base, "up": base + 0.1 + noise[0], "down": base - 0.1 + noise[1],
               "same": base + noise[2]}  # fmt: skip
    res = compare_rankers(systems, n_bootstrap=100)
    assert res.direction_mark("up", "value") == MARK_HIGHER
    assert res.direction_mark("down", "value") == MARK_LOWER
    assert res.mark("down", "value") == res.mark("up", "value") != ""  # levels: no direction
    assert res.direction_mark("same", "value") in ("", MARK_HIGHER, MARK_LOWER)
    if res.get("same", "value").p_adjusted >= 0.05:
        assert res.direction_mark("same", "value") == ""
    legend = res.legend_for(tests=False, directional=True)
    assert legend.startswith(
        f"{MARK_HIGHER} significantly higher, {MARK_LOWER} significantly lower"
    )
    assert legend.count("'base'") == 1, legend


def test_the_index_lists_experiments_once_and_names_the_disagreeing_claim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ndcglab.reproduce as R

    def build(name: str, settings, log=None) -> Report:
        rep = Report(name, f"Title of {name}")
        rep.add_finding(f"claim A of {name}", "observed a", threshold(True, False, rule="r"))
        rep.add_finding(f"claim B of {name}", "observed b", threshold(False, True, rule="r"))
        rep.finish(0.1)
        return rep

    monkeypatch.setattr(R, "EXPERIMENTS", {"one": "x", "two": "y"})
    monkeypatch.setattr(R, "build_report", build)
    out, _ = R.run_experiment("all", tmp_path / "all", mode="tiny")
    index = (out / "index.html").read_text(encoding="utf-8")
    for sub in ("one", "two"):
        assert index.count(f"Title of {sub}") == 1, index
        assert f"claim B of {sub}" in index and f"claim A of {sub}" not in index
    assert "The claims that disagree" in index
    assert (out / "tables" / "experiments.csv").is_file()  # the table's files are still written


def test_letor_short_list_note_counts_the_short_queries() -> None:
    store = PerQueryStore(["ndcg@1"])
    store.conventions["ndcg@1"] = {"short": "zero", "preset": "letor4"}
    # 10 test queries: 3 with 8 documents, 1 with 5, the rest with 40
    store.list_lengths["Fold1"] = np.array([8, 8, 8, 5, 40, 40, 40, 40, 40, 40])
    note = store.short_list_note(range(1, 11))
    assert "NDCG@k of a query with fewer than k documents counts as 0" in note
    assert "of 10: k = 6: 1, k = 7: 1, k = 8: 1, k = 9: 4, k = 10: 4" in note, note
    assert "3 queries, between N@8 and N@9" in note
    store.conventions["ndcg@1"] = {"short": "clip", "preset": "standard"}
    assert store.short_list_note(range(1, 11)) == ""


@pytest.mark.slow
def test_the_letor4_table_of_real_data_has_the_note(tmp_path: Path, mq2008: Path) -> None:
    """On MQ2008 (LETOR 4.0: many lists of 8 documents or fewer) the NDCG@1..10 table says why
    its means drop after N@8."""
    from ndcglab.reproduce import run_experiment

    out, _ = run_experiment("qnorm", tmp_path / "q", mode="tiny", data=mq2008)
    md = (out / "tables" / "ndcg.md").read_text(encoding="utf-8")
    assert re.search(r"LETOR's short-list rule \(letor4", md), md[-800:]
