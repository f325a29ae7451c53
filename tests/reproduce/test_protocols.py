"""Training protocols and robust verdicts: the combination rule on constructed verdicts, the page's
rendering of a claim under several protocols, and every protocol's numbers in results.json of the
learning experiments (tiny mode)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ndcglab._tables import html_escape
from ndcglab.reproduce.report import Report
from ndcglab.reproduce.verdicts import (
    AGREES,
    DISAGREES,
    INCONCLUSIVE,
    ROBUST_RULE,
    Finding,
    Verdict,
    combine_protocols,
)


def _v(kind: str, detail: str = "") -> Verdict:
    return Verdict(kind, "some rule", detail)


def test_all_agree_is_robust_agreement() -> None:
    v, robust = combine_protocols(
        {"tuned-gd": _v(AGREES), "line-search": _v(AGREES), "fixed-gd": _v(AGREES)}
    )
    assert v.verdict == AGREES and robust
    assert v.detail.startswith("agrees (robust)")
    assert "tuned-gd, line-search and fixed-gd" in v.detail
    assert v.rule == "some rule; " + ROBUST_RULE


def test_all_disagree_is_robust_disagreement() -> None:
    v, robust = combine_protocols({"a": _v(DISAGREES), "b": _v(DISAGREES)})
    assert v.verdict == DISAGREES and robust and v.detail.startswith("disagrees (robust)")


def test_one_protocol_flips_it() -> None:
    v, robust = combine_protocols(
        {"tuned-gd": _v(AGREES), "line-search": _v(AGREES), "fixed-gd": _v(DISAGREES)}
    )
    assert v.verdict == INCONCLUSIVE and not robust
    assert v.detail == "not robust: agrees under tuned-gd and line-search; disagrees under fixed-gd"
    v, robust = combine_protocols(
        {"line-search": _v(INCONCLUSIVE), "tuned-gd": _v(AGREES), "adam": _v(INCONCLUSIVE)}
    )
    assert v.verdict == INCONCLUSIVE and not robust
    assert v.detail == "not robust: agrees under tuned-gd; inconclusive under line-search and adam"
    # agreement under some protocols and nothing against it is still not robust agreement
    v, _ = combine_protocols({"a": _v(AGREES), "b": _v(INCONCLUSIVE)})
    assert v.verdict == INCONCLUSIVE


def test_all_inconclusive_and_empty() -> None:
    v, robust = combine_protocols({"a": _v(INCONCLUSIVE), "b": _v(INCONCLUSIVE)})
    assert v.verdict == INCONCLUSIVE and robust
    v, robust = combine_protocols({})
    assert v.verdict == INCONCLUSIVE and not robust


def test_report_stores_and_prints_every_protocol() -> None:
    rep = Report("cost-sensitive", "t")
    rep.add_protocol_findings(
        {
            "tuned-gd": [
                Finding("claim A", "obs A1", _v(AGREES, "d1")),
                Finding("claim B", "x", _v(AGREES)),
            ],
            "fixed-gd": [
                Finding("claim A", "obs A2", _v(DISAGREES, "d2")),
                Finding("claim B", "y", _v(AGREES)),
            ],
        }
    )
    a, b = rep.findings
    assert a["verdict"] == INCONCLUSIVE and a["agrees"] is None and a["robust"] is False
    assert a["detail"] == "not robust: agrees under tuned-gd; disagrees under fixed-gd"
    assert a["observed"] == "under tuned-gd (primary): obs A1"
    assert a["protocols"]["fixed-gd"] == {
        "verdict": DISAGREES,
        "observed": "obs A2",
        "rule": "some rule",
        "detail": "d2",
        "reason": "",
    }
    assert b["verdict"] == AGREES and b["robust"] is True
    html = rep.to_html()
    # the counts line counts the combined verdicts
    assert "1 agree, 0 disagree, 1 inconclusive" in html
    # the verdict table: claim A inconclusive, flipped by the protocols; claim B robust
    row_a = html[html.index("<td>claim A</td>") :]
    row_a = row_a[: row_a.index("</tr>")]
    assert "<b>inconclusive</b>" in row_a
    assert "agrees under tuned-gd; disagrees under fixed-gd" in row_a
    row_b = html[html.index("<td>claim B</td>") :]
    assert "<b>agrees (robust)</b>" in row_b[: row_b.index("</tr>")]
    # per-protocol detail folded; each rule once
    assert '<li class="disagrees"><b>disagrees</b> under <code>fixed-gd</code>' in html
    assert html.count(html_escape("some rule")) == 1
    assert html.count(html_escape(ROBUST_RULE)) == 1


def test_protocols_must_check_the_same_claims() -> None:
    from ndcglab.errors import NdcglabError

    rep = Report("cost-sensitive", "t")
    with pytest.raises(NdcglabError, match="same claims"):
        rep.add_protocol_findings(
            {"a": [Finding("A", "", _v(AGREES))], "b": [Finding("B", "", _v(AGREES))]}
        )


def test_protocol_descriptions() -> None:
    from ndcglab.reproduce import Settings
    from ndcglab.reproduce.protocols import experiment_protocols

    full = Settings(mode="full")
    cs = experiment_protocols("cost-sensitive", full)
    assert [p.name for p in cs] == ["tuned-gd", "line-search", "fixed-gd"]
    assert cs[0].grid_dict() == {"lr": [0.001, 0.01, 0.1, 1.0], "tol": [1e-3, 1e-4, 1e-5]}
    assert cs[0].dtype == "float64" and "float64" in cs[0].describe()
    ls = cs[1]
    assert (ls.optimizer, ls.dtype, ls.tol, ls.gtol, ls.epochs) == (
        "lbfgs",
        "float64",
        1e-10,
        1e-6,
        500,
    )
    assert "L-BFGS" in ls.describe() and "minimiser" in ls.describe()
    assert [p.name for p in experiment_protocols("consistency", full)] == [
        "line-search",
        "tuned-gd",
        "adam",
    ]
    quick = experiment_protocols("cost-sensitive", Settings(mode="quick"))
    assert quick[0].grid_dict() == {"lr": [0.001, 0.1], "tol": [1e-4, 1e-5]}
    assert quick[0].epochs == 40 and "2 × 2" in quick[0].reduced and "40 epochs" in quick[0].reduced
    assert quick[0].reduced and quick[1].reduced  # the page says what the quick run changed


pytest.importorskip("torch")
pytest.importorskip("matplotlib")


@pytest.mark.parametrize(
    "name,protocols",
    [
        ("cost-sensitive", ["tuned-gd", "line-search", "fixed-gd"]),
        ("consistency", ["line-search", "tuned-gd", "adam"]),
        ("qnorm", ["line-search", "tuned-gd", "adam"]),
    ],
)
def test_results_keep_every_protocol(name: str, protocols: list[str], tmp_path: Path) -> None:
    from ndcglab.reproduce import run_experiment

    out, _ = run_experiment(name, tmp_path / name, mode="tiny")
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    html = (out / "index.html").read_text(encoding="utf-8")
    r = res["results"]
    assert r["primary_protocol"] == protocols[0]
    assert list(r["protocols"]) == protocols
    for p in protocols:
        entry = r["protocols"][p]
        assert entry["protocol"]["name"] == p and entry["protocol"]["description"]
        assert entry["mean"] and entry["fold_means"] and entry["per_query"]
        assert entry["significance"]
        runs = entry["training"]
        assert runs and all("converged" in t and "stop_reason" in t for t in runs)
        if p == "tuned-gd":
            tuned = [t for t in runs if "adarank" not in t["loss"].lower()]
            assert all(t["chosen"] and t["trials"] for t in tuned)
        if p == "line-search":
            assert all(t["grad_norm"] is not None for t in runs if "adarank" not in t["loss"])
        assert f"Results under {p}" in html
    assert r["mean"] == r["protocols"][protocols[0]]["mean"]
    for f in res["findings"]:
        assert list(f["protocols"]) == protocols
        assert isinstance(f["robust"], bool)
        kinds = {v["verdict"] for v in f["protocols"].values()} - {"not testable"}
        if len(kinds) > 1:
            assert f["verdict"] == "inconclusive" and f["detail"].startswith("not robust")
        else:
            assert f["verdict"] == kinds.pop()
    assert (out / "tables" / "verdicts_by_protocol.csv").is_file()
    if name != "qnorm":
        assert (out / "tables" / "power.csv").is_file()
        assert "queries" in html and "95% CI" in html
    if name == "cost-sensitive":
        assert "What cannot be compared" in html and "Xia" in html
        assert (out / "tables" / "cs_vs_published.csv").is_file()
        for p in protocols:
            sfx = "" if p == protocols[0] else "_" + p.replace("-", "_")
            assert (out / "tables" / f"results{sfx}.csv").is_file()
            assert (out / "tables" / f"cs_vs_listmle{sfx}.csv").is_file()
            assert (out / "tables" / f"training{sfx}.csv").is_file()
        assert "AdaRank" in html and "boosted the same way under every protocol" in html
