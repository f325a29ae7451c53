"""Report pages state only what holds: on constructed results (no training), a baseline that failed
to train is named and not tested against, a claim that is both equivalent and significantly worse
says both, and the sentences of a reduced run are true of it.

Oracles: NDCG@10 of constant scores under the letor3 conventions by a slow loop written from the
Eval-Score-3.0 rules (gain 2^y − 1, discount 1 at rank 1 and 1/log2(r) after, file order for ties);
the TOST interval by scipy's t quantile; every threshold from the rule's own statement.
"""

from __future__ import annotations

import math
import re
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from scipy import stats

from ndcglab.data import RankingDataset
from ndcglab.reproduce import Settings
from ndcglab.reproduce import cost_sensitive as CS
from ndcglab.reproduce._common import coverage_text, known_collection
from ndcglab.reproduce._fit import PerQueryStore, evaluate
from ndcglab.reproduce.report import Report
from ndcglab.reproduce.soundness import (
    FAR_GRAD,
    SOUND_RULE,
    failed_methods,
    far_from_converged,
    trivial_values,
    unmark_details,
)
from ndcglab.reproduce.verdicts import (
    AGREES,
    DISAGREES,
    INCONCLUSIVE,
    NOT_TESTABLE,
    ROBUST_RULE,
    Finding,
    Verdict,
    all_of,
    better_or_comparable,
    combine_protocols,
    counts_text,
    flips,
    untestable,
    verdict_counts,
)

# ---------------------------------------------------------------------------------- data


def _dataset(n_queries: int = 24, seed: int = 3) -> RankingDataset:
    """Queries of 12–20 documents, labels 0–2, at least one relevant each (no empty or short
    rule can matter for NDCG@10)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(12, 21, n_queries)
    labels = [rng.integers(0, 3, s).astype(np.float64) for s in sizes]
    for y in labels:
        y[rng.integers(0, len(y))] = 2.0
    y = np.concatenate(labels)
    x = rng.normal(size=(y.size, 3)).astype(np.float32)
    return RankingDataset.from_arrays(x, y, group=sizes)


def _ndcg10_file_order(y: np.ndarray) -> float:
    """Eval-Score-3.0 NDCG@10 of the list in file order, by hand."""

    def dcg(labels: np.ndarray) -> float:
        total = 0.0
        for r, v in enumerate(labels[:10], start=1):
            total += (2.0**v - 1.0) * (1.0 if r == 1 else 1.0 / math.log2(r))
        return total

    return dcg(y) / dcg(np.sort(y)[::-1])


def test_constant_scores_are_file_order_under_letor3() -> None:
    ds = _dataset()
    got = trivial_values([ds], ["ndcg@10"], "letor3")["ndcg@10"]
    b = ds.boundaries
    want = [_ndcg10_file_order(ds.labels[b[q] : b[q + 1]]) for q in range(ds.n_queries)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------- failed baselines


def _fit(stop: str, grad: float | None) -> Any:
    return SimpleNamespace(stop_reason=stop, grad_norm=grad)


def test_far_from_converged_needs_the_limit_and_a_large_gradient() -> None:
    assert far_from_converged(_fit("max_epochs", FAR_GRAD))
    assert far_from_converged(_fit("stalled", 150.0))
    assert not far_from_converged(_fit("max_epochs", FAR_GRAD * 0.99))
    assert not far_from_converged(_fit("converged", 1e3))  # met its rule: not "far"
    assert not far_from_converged(_fit("max_epochs", None))  # Adam: no gradient recorded
    assert not far_from_converged(_fit("rounds", None))  # AdaRank


def test_a_method_below_constant_scores_or_far_from_converged_fails() -> None:
    trivial = {"ndcg@10": np.array([0.2, 0.3, 0.4])}  # mean 0.3
    fits = [
        ("Fold1", "ListMLE", _fit("max_epochs", 130.0)),
        ("Fold2", "ListMLE", _fit("max_epochs", 170.0)),
        ("Fold1", "Slow", _fit("max_epochs", 60.0)),
        ("Fold2", "Slow", _fit("converged", 0.01)),
        ("Fold1", "Good", _fit("max_epochs", 0.5)),
    ]
    failed = failed_methods(
        {"ListMLE": 0.202, "Slow": 0.5, "Good": 0.45, "Low": 0.29}, fits, trivial
    )
    assert set(failed) == {"ListMLE", "Slow", "Low"}
    assert "0.202 below constant scores 0.300" in failed["ListMLE"]
    assert "2 of 2 folds at the epoch limit with |∇|∞ 130–170" in failed["ListMLE"]
    assert "1 of 2 folds" in failed["Slow"] and "below" not in failed["Slow"]
    assert failed["Low"].startswith("test NDCG@10 0.290 below constant scores 0.300")


def _store(ds: RankingDataset, scores: dict[str, np.ndarray]) -> PerQueryStore:
    measures = tuple(dict.fromkeys(CS.CURVE + CS.MEASURES))
    store = PerQueryStore(measures)
    for name, s in scores.items():
        store.add(name, "Fold1", evaluate(ds, s, measures, "letor3"))
    return store


def _cost_sensitive_results() -> tuple[RankingDataset, PerQueryStore, dict[str, Any]]:
    """Every method of the experiment scores the labels plus noise, except ListMLE, which ranks
    the documents in reverse order of their labels: below constant scores."""
    ds = _dataset(60)
    rng = np.random.default_rng(7)
    scores = {n: ds.labels + rng.normal(scale=0.8, size=ds.n_docs) for n, _ in CS.METHODS}
    scores["ListMLE"] = -ds.labels + rng.normal(scale=0.1, size=ds.n_docs)
    store = _store(ds, scores)
    trivial = trivial_values([ds], tuple(dict.fromkeys(CS.CURVE + CS.MEASURES)), "letor3")
    return ds, store, trivial


def test_failed_listmle_is_named_unmarked_and_its_claims_not_testable() -> None:
    _, store, trivial = _cost_sensitive_results()
    fits = [("Fold1", n, _fit("converged", 0.01)) for n, _ in CS.METHODS]
    failed = failed_methods({n: store.mean(n, "ndcg@10") for n, _ in CS.METHODS}, fits, trivial)
    assert list(failed) == ["ListMLE"]
    assert store.mean("ListMLE", "ndcg@10") < float(np.mean(trivial["ndcg@10"]))

    settings = Settings(mode="tiny")
    sig_all, sig_52, sig_curve = CS._significance(store, settings)
    # the tests alone would mark every method against the reversed ListMLE
    assert any(sig_all.mark(n, "ndcg@1") for n, _ in CS.METHODS[1:])
    report = Report("cost-sensitive", "t")
    protocol = SimpleNamespace(name="tuned-gd", slug="tuned_gd", tuned=True, select_epoch=False)
    for name, why in failed.items():
        report.add_failed_run("tuned-gd", name, why)
    CS._results_table(report, store, sig_all, "data", 1, protocol, "", failed, trivial)
    CS._curve_table(report, store, sig_curve, protocol, "", failed)
    CS._significance_tables(report, sig_all, sig_52, protocol, "", files=False, failed=failed)
    res, curve = report.tables["results"], report.tables["cs_vs_listmle"]
    assert res.marks() == [] and curve.marks() == []  # no ‡/† against a failed baseline
    assert res.rows[0][0] == "ListMLE (failed to train)"
    assert res.rows[-1][0].startswith("constant scores")
    assert not res.legend and any("no marks for or against ListMLE" in n for n in res.notes)
    details = report.tables["significance_vs_listmle"]
    assert all(r[-1] == "— (failed run)" for r in details.rows)

    claims = CS._claims(store, sig_all, sig_52, None, "data")
    checked = untestable(claims, failed)
    assert checked[0].verdict.verdict == NOT_TESTABLE  # CS-ListMLE vs ListMLE rests on ListMLE
    assert "ListMLE failed to train" in checked[0].verdict.reason
    assert checked[0].verdict.rule == SOUND_RULE
    assert all(c.verdict == f.verdict for c, f in zip(checked[1:], claims[1:]))  # others stand

    html = report.to_html()
    assert "Failed to train — not tested against." in html
    assert "<b>ListMLE</b> under <code>tuned-gd</code>" in html
    assert not re.search(r"<td[^>]*>[^<]*[†‡]</td>", html)


def test_a_claim_untestable_under_one_protocol_is_combined_over_the_others() -> None:
    rule = "some rule"
    v, robust = combine_protocols(
        {
            "tuned-gd": Verdict(NOT_TESTABLE, SOUND_RULE, "", "ListMLE failed to train (x)"),
            "line-search": Verdict(INCONCLUSIVE, rule, "", "wide CI"),
            "fixed-gd": Verdict(INCONCLUSIVE, rule, "", "wide CI"),
        }
    )
    assert v.verdict == INCONCLUSIVE and robust
    assert v.detail.endswith("not testable under tuned-gd")
    assert v.rule == rule + "; " + ROBUST_RULE
    v, _ = combine_protocols(
        {"a": Verdict(NOT_TESTABLE, SOUND_RULE), "b": Verdict(NOT_TESTABLE, SOUND_RULE)}
    )
    assert v.verdict == NOT_TESTABLE and v.agrees is None
    # agreement under the one testable protocol is its verdict, not robust, and names the other
    v, robust = combine_protocols(
        {"a": Verdict(AGREES, rule), "b": Verdict(NOT_TESTABLE, SOUND_RULE)}
    )
    assert v.verdict == AGREES and not robust and "not testable under b" in v.detail
    assert v.detail.startswith("agrees: agrees under a")
    assert flips({"a": {"verdict": AGREES}, "b": {"verdict": NOT_TESTABLE}}) == (
        "agrees under a; not testable under b"
    )
    assert flips({"a": {"verdict": AGREES}, "b": {"verdict": AGREES}}) == ""

    rep = Report("toy", "t")
    rep.add_protocol_findings(
        {
            "p1": [Finding("claim", "o", Verdict(NOT_TESTABLE, SOUND_RULE, "", "X failed"))],
            "p2": [Finding("claim", "o", Verdict(NOT_TESTABLE, SOUND_RULE, "", "X failed"))],
        }
    )
    counts = verdict_counts(rep.findings)
    assert counts[NOT_TESTABLE] == 1 and counts_text(counts).endswith(", 1 not testable")
    html = rep.to_html()
    assert '<td class="v not-testable"><b>not testable</b>' in html
    assert html.count(SOUND_RULE.replace("'", "&#x27;")) == 1  # the rule, stated once


def test_unmark_details_only_touches_failed_rows() -> None:
    header = ["system", "baseline", "measure", "mark"]
    rows = [["A", "ListMLE", "m", "‡"], ["A", "B", "m", "†"], ["ListMLE", "B", "m", "†"]]
    out = unmark_details(header, rows, {"ListMLE": "x"})
    assert [r[-1] for r in out] == ["— (failed run)", "†", "— (failed run)"]
    assert unmark_details(header, rows, {}) == rows


# -------------------------------------------------------------------- both conditions hold


def _diffs(mean: float, sd: float, n: int, seed: int = 0) -> np.ndarray:
    d = np.random.default_rng(seed).normal(size=n)
    return mean + sd * (d - d.mean()) / d.std(ddof=1)


def test_equivalent_and_significantly_worse_says_both() -> None:
    # the q-norm vs ListNet case: −0.0056, 90% CI about [−0.0097, −0.0015], p = 0.038
    d = _diffs(-0.0056, 0.0137, 30)
    half = stats.t.ppf(0.95, d.size - 1) * d.std(ddof=1) / math.sqrt(d.size)
    lo, hi = d.mean() - half, d.mean() + half
    assert -0.02 <= lo and hi <= 0.02 and hi < 0  # equivalent, and the interval excludes 0
    v = better_or_comparable(d, 0.038, what="q-norm − ListNet")
    assert v.verdict == AGREES
    assert "both hold" in v.reason and "significantly worse" in v.reason
    assert "equivalence takes precedence" in v.reason and "both hold" in v.detail
    assert "precedence" in v.rule  # the precedence is part of the printed rule
    # a claim made of such parts says so too
    assert "both equivalent and significantly worse" in all_of([v, v]).reason

    # significantly worse and not equivalent: disagrees
    w = better_or_comparable(_diffs(-0.05, 0.02, 30), 0.001)
    assert w.verdict == DISAGREES and "not equivalent" in w.reason
    # equivalent, not significant: agrees, one condition only
    e = better_or_comparable(_diffs(0.001, 0.01, 60), 0.6)
    assert e.verdict == AGREES and "both" not in e.reason


def test_both_conditions_reach_the_page() -> None:
    v = better_or_comparable(_diffs(-0.0056, 0.0137, 30), 0.038)
    rep = Report("toy", "t")
    rep.add_finding("q-norm comparable to ListNet", "obs", v)
    html = rep.to_html()
    row = html[html.index("<td>q-norm comparable to ListNet</td>") :]
    row = row[: row.index("</tr>")]
    assert "<b>agrees</b>" in row and "both hold" in row


# ------------------------------------------------------------------- quick-run sentences


def test_coverage_sentence_is_true_of_the_folds_run() -> None:
    assert "every query of the collection is tested once" in coverage_text(5)
    three = coverage_text(3)
    assert "every query" not in three and "3 of the 5 folds" in three
    assert "2 test parts are not tested" in three


def test_quick_cost_sensitive_power_text_and_index_started(tmp_path: Any) -> None:
    """A reduced run's pages: the power paragraph names the folds run, the index's start time is
    the first experiment's, not the index's own."""
    import json

    from ndcglab.reproduce import run_experiment

    folder, _ = run_experiment("all", tmp_path / "r", mode="tiny")
    res = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    started = res["started"]
    for sub in ("cost-sensitive", "limits"):
        child = json.loads((folder / sub / "results.json").read_text(encoding="utf-8"))
        assert started <= child["started"]
    assert res["finished"] >= max(
        json.loads((folder / s / "results.json").read_text(encoding="utf-8"))["finished"]
        for s in ("cost-sensitive", "limits")
    )
    html = (folder / "cost-sensitive" / "index.html").read_text(encoding="utf-8")
    assert "every query of the collection is tested once" not in html
    assert "1 of the 5 folds" in html
    data = json.loads((folder / "cost-sensitive" / "results.json").read_text(encoding="utf-8"))
    assert data["failed_runs"] is not None
    # every figure names the protocol it shows (learning experiments)
    for sub in ("cost-sensitive", "consistency", "qnorm"):
        r = json.loads((folder / sub / "results.json").read_text(encoding="utf-8"))
        primary = r["results"]["primary_protocol"]
        for fig in r["figures"].values():
            assert primary in fig["title"], (sub, fig["title"])


def test_collections_are_named_by_their_sizes_only() -> None:
    assert known_collection(106, 45) == "LETOR 3.0 OHSUMED"
    assert known_collection(784, 46) == "LETOR 4.0 MQ2008"
    assert known_collection(106, 25) is None  # LETOR 2.0's OHSUMED: not the data compared
    assert CS._paper_dataset({"sizes_match": "LETOR 3.0 OHSUMED"}) == "OHSUMED"
    # a folder called OHSUMED is not evidence
    assert CS._paper_dataset({"name": "OHSUMED", "source": "/x/OHSUMED"}) is None


@pytest.mark.parametrize("normalize", ["none", "query_minmax"])
def test_settings_take_the_normalisation(normalize: str) -> None:
    from ndcglab.reproduce.protocols import experiment_protocols

    s = Settings(mode="tiny", normalize=normalize)
    assert {p.normalize for p in experiment_protocols("qnorm", s)} == {normalize}


@pytest.mark.realdata
def test_data_are_named_by_path_sizes_and_hashes_not_by_folder_name(
    tmp_path: Any, mq2008: Any
) -> None:
    """MQ2008's folds under a folder called OHSUMED: the page names the path given, the sizes
    read and LETOR 4.0 MQ2008 (by its sizes), and sets nothing beside Lu et al.'s OHSUMED tables."""
    from ndcglab.reproduce import data_html
    from ndcglab.reproduce._common import open_source

    fake = tmp_path / "OHSUMED"
    fake.mkdir()
    for i in range(1, 6):
        (fake / f"Fold{i}").symlink_to(mq2008 / f"Fold{i}")
    source = open_source(fake)
    folds = list(source.folds(2))
    info = source.describe()
    assert info["collection"]["queries"] == 784 and info["collection"]["features"] == 46
    assert info["sizes_match"] == "LETOR 4.0 MQ2008"
    assert CS._paper_dataset(info) is None  # the name "OHSUMED" is not evidence
    assert info["queries"] == sum(f.test.n_queries for f in folds)
    assert "2 test file(s) read" in info["note"] and "not the whole collection" in info["note"]
    banner = data_html([info], Settings(data=fake, mode="quick", normalize="none"))
    assert str(fake) in banner and "784 queries" in banner and "46 features" in banner
    assert "LETOR 4.0 MQ2008" in banner and "raw features (no normalisation)" in banner
    assert "sha256" in banner


def test_cli_takes_normalize_as_cv_does(tmp_path: Any) -> None:
    import json
    import subprocess
    import sys

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ndcglab", "reproduce", *args],
            capture_output=True,
            text=True,
            timeout=600,
        )

    bad = run("linear-ndcg", "--normalize", "bogus", "--out", str(tmp_path / "x"))
    assert bad.returncode == 2 and bad.stdout == ""
    lines = bad.stderr.strip().splitlines()
    assert lines[-1].startswith("ndcglab: error:") and "zscore" in lines[-1]
    assert not (tmp_path / "x").exists()
    out = tmp_path / "r"
    ok = run("linear-ndcg", "--mode", "tiny", "--normalize", "none", "-q", "--out", str(out))
    assert ok.returncode == 0, ok.stderr
    res = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert res["command"][-4:-2] == ["--normalize", "none"]
    assert "raw features (no normalisation)" in res["data_note"]


def test_a_collection_folder_above_the_folds_points_at_them(tmp_path: Any) -> None:
    import subprocess
    import sys

    top = tmp_path / "COLL"
    for sub in ("QueryLevelNorm", "Feature-null"):
        (top / sub / "Fold1").mkdir(parents=True)
    args = ["reproduce", "linear-ndcg", "-q", "--data", str(top), "--out", str(tmp_path / "out")]
    r = subprocess.run(
        [sys.executable, "-m", "ndcglab", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2 and not (tmp_path / "out").exists()
    line = r.stderr.strip().splitlines()[-1]
    assert line.startswith("ndcglab: error:") and "no Fold1..Fold5" in line
    assert "Feature-null, QueryLevelNorm have them" in line


def test_data_banner_states_only_what_the_data_have() -> None:
    from ndcglab.reproduce import data_html

    gen = {"kind": "synthetic", "source": "draws", "hashes": {"distributions_sha256": "ab" * 32}}
    text = data_html([gen], Settings(mode="quick"))
    assert "None" not in text and "trained model" not in text and "abababab" in text
    syn = {**gen, "queries": 3, "docs": 30, "features": 5, "hashes": {"arrays_sha256": "cd" * 32}}
    text = data_html([syn], Settings(mode="quick", normalize="query_minmax"))
    assert "3 queries, 30 documents, 5 features" in text
    assert "scaled to [0, 1] within each query" in text
    assert data_html([], Settings()) == ""
