"""Comparing TREC runs: every test and correction against an independent implementation.

Oracles: scipy.stats (``wilcoxon``, ``binomtest``, ``studentized_range``, ``ttest_rel``,
``bootstrap``), statsmodels (``multipletests``; an OLS fit of ``value ~ C(system) + C(topic)``
and ``anova_lm``), ranx's ``compare`` on the same runs (Student's t exactly, Fisher's
randomisation within Monte-Carlo error), pytrec_eval for the per-topic values, and Sakai's
paired bootstrap test written here as a slow loop over the same resamples.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ndcglab.analysis.multi_tests import (
    anova_two_way,
    bootstrap_many,
    sign_flip_pvalues,
    studentized_range_sf,
    tukey_hsd,
)
from ndcglab.analysis.paired_tests import (
    adjust_p,
    bootstrap_ci,
    bootstrap_test,
    permutation_test,
    resample_indices,
    sign_test,
    wilcoxon_test,
)
from ndcglab.analysis.runs import evaluate_runs
from ndcglab.analysis.significance import compare_rankers, compare_runs
from ndcglab.errors import ConventionError


# ----------------------------------------------------------------------------- generated runs
def make_trec(n_topics: int = 30, n_docs: int = 40, seed: int = 0, skills=(0.2, 0.6, 1.0)):
    """Qrels (graded 0..2) and one run per skill: score = skill·label + N(0, 1)."""
    rng = np.random.default_rng(seed)
    qrels = {
        f"t{i:03d}": {f"d{j}": int(rng.integers(0, 3)) for j in range(n_docs)}
        for i in range(n_topics)
    }
    runs = {}
    for k, skill in enumerate(skills):
        runs[f"sys{k}"] = {
            q: {d: float(skill * r + rng.normal()) for d, r in docs.items()}
            for q, docs in qrels.items()
        }
    return qrels, runs


# ----------------------------------------------------------------------------- single tests
@pytest.mark.parametrize("n", [6, 15, 40, 80])
@pytest.mark.parametrize("zero_method", ["wilcox", "pratt"])
def test_wilcoxon_equals_scipy(n: int, zero_method: str) -> None:
    rng = np.random.default_rng(n)
    a, b = np.round(rng.random(n), 1), np.round(rng.random(n), 1)  # zeros and ties
    got = wilcoxon_test(a, b, zero_method=zero_method, method="asymptotic")
    ref = stats.wilcoxon(a, b, zero_method=zero_method, method="asymptotic", correction=False)
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    c, d = rng.random(n), rng.random(n)  # no ties, no zeros: the exact distribution
    got = wilcoxon_test(c, d)
    ref = stats.wilcoxon(c, d, method="exact")
    assert got.exact is (n <= 50)
    if n <= 50:
        assert got.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    for alt in ("greater", "less"):
        ref = stats.wilcoxon(c, d, method="exact", alternative=alt)
        assert wilcoxon_test(c, d, method="exact", alternative=alt).p_value == pytest.approx(
            ref.pvalue, rel=1e-12
        )


@pytest.mark.parametrize("tie", [0.0, 0.05])
def test_sign_test_equals_binomtest(tie: float) -> None:
    rng = np.random.default_rng(3)
    a, b = rng.random(50), rng.random(50) * 0.9
    d = a - b
    wins, losses = int((d > tie).sum()), int((d < -tie).sum())
    got = sign_test(a, b, tie=tie)
    assert (got.statistic, got.n) == (wins, wins + losses)
    assert got.p_value == pytest.approx(stats.binomtest(wins, wins + losses).pvalue, rel=1e-12)


@pytest.mark.parametrize(
    "ours,theirs", [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh"),
                    ("by", "fdr_by")]
)  # fmt: skip
def test_corrections_equal_statsmodels(ours: str, theirs: str) -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(7)
    for m in (1, 5, 37):
        p = rng.random(m) ** 3
        assert adjust_p(p, ours) == pytest.approx(multipletests(p, method=theirs)[1], rel=1e-12)
    assert np.array_equal(adjust_p([0.2, 0.01], "none"), [0.2, 0.01])
    with pytest.raises(ConventionError, match="known: holm, bonferroni, bh, by, none"):
        adjust_p([0.1], "sidak")


def _anova_statsmodels(x: np.ndarray):
    import pandas as pd
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    k, n = x.shape
    df = pd.DataFrame(
        {
            "value": x.ravel(),
            "system": np.repeat([f"s{i}" for i in range(k)], n),
            "topic": np.tile([f"t{j}" for j in range(n)], k),
        }
    )
    return anova_lm(smf.ols("value ~ C(system) + C(topic)", data=df).fit())


def test_two_way_anova_equals_statsmodels_ols() -> None:
    rng = np.random.default_rng(11)
    x = rng.random((5, 25)) + rng.random((1, 25)) + np.arange(5)[:, None] * 0.02
    an = anova_two_way(x)
    ref = _anova_statsmodels(x)
    assert an.ss_system == pytest.approx(ref.loc["C(system)", "sum_sq"], rel=1e-10)
    assert an.ss_topic == pytest.approx(ref.loc["C(topic)", "sum_sq"], rel=1e-10)
    assert an.ss_error == pytest.approx(ref.loc["Residual", "sum_sq"], rel=1e-10)
    assert an.df_error == ref.loc["Residual", "df"]
    assert an.f_system == pytest.approx(ref.loc["C(system)", "F"], rel=1e-10)
    assert an.p_system == pytest.approx(ref.loc["C(system)", "PR(>F)"], rel=1e-8)


@pytest.mark.parametrize("k,df", [(2, 5), (3, 20), (6, 120), (10, 1000)])
def test_studentized_range_equals_scipy(k: int, df: int) -> None:
    q = np.array([0.3, 1.5, 3.0, 4.5, 6.0])
    ref = stats.studentized_range.sf(q, k, df)
    assert studentized_range_sf(q, k, df) == pytest.approx(ref, rel=1e-6, abs=1e-12)


def test_tukey_hsd_equals_the_studentized_range_of_the_ols_residual_mean_square() -> None:
    rng = np.random.default_rng(5)
    x = rng.random((4, 20)) * 0.3 + rng.random((1, 20)) + np.array([[0], [0.05], [0.1], [0.2]])
    p, q, _an = tukey_hsd(x)
    ref = _anova_statsmodels(x)
    mse = ref.loc["Residual", "sum_sq"] / ref.loc["Residual", "df"]
    means = x.mean(axis=1)
    for i in range(4):
        for j in range(i + 1, 4):
            qv = abs(means[i] - means[j]) / math.sqrt(mse / 20)
            assert q[i, j] == pytest.approx(qv, rel=1e-10)
            want = stats.studentized_range.sf(qv, 4, ref.loc["Residual", "df"])
            assert p[i, j] == pytest.approx(want, rel=1e-6, abs=1e-12)


def test_sakai_bootstrap_test_equals_a_slow_loop_over_the_same_resamples() -> None:
    rng = np.random.default_rng(2)
    d = rng.normal(0.03, 0.2, 25)
    b = 3000
    t_obs = d.mean() / (d.std(ddof=1) / math.sqrt(25))
    hits = 0
    for _, idx in resample_indices(25, b, 4):
        for row in idx:
            w = d[row] - d.mean()  # shifted to the null hypothesis (Sakai 2006, Fig. 2)
            t_b = w.mean() / (w.std(ddof=1) / math.sqrt(25))
            hits += abs(t_b) >= abs(t_obs)
    got = bootstrap_test(d, n_resamples=b, seed=4)
    assert got.p_value == hits / b
    assert got.statistic == pytest.approx(stats.ttest_1samp(d, 0.0).statistic, rel=1e-12)


def test_batched_tests_equal_the_pairwise_functions_and_scipy_bootstrap() -> None:
    rng = np.random.default_rng(9)
    d = rng.normal(0.01, 0.2, (60, 7))
    p = sign_flip_pvalues(d, n_resamples=3000, seed=1)
    bm = bootstrap_many(d, n_resamples=4000, seed=1, method="percentile")
    for j in range(7):
        assert p[j] == permutation_test(d[:, j], n_resamples=3000, seed=1).p_value
        ci = bootstrap_ci(d[:, j], n_resamples=4000, seed=1, method="percentile")
        assert (bm.low[j], bm.high[j]) == pytest.approx((ci.low, ci.high), rel=1e-12)
        assert bm.asl[j] == bootstrap_test(d[:, j], n_resamples=4000, seed=1).p_value
        ref = stats.bootstrap(
            (d[:, j],), np.mean, n_resamples=4000, method="percentile", random_state=0
        ).confidence_interval
        se = d[:, j].std(ddof=1) / math.sqrt(60)
        assert abs(bm.low[j] - ref.low) < 0.15 * se and abs(bm.high[j] - ref.high) < 0.15 * se


# ----------------------------------------------------------------------------- runs and ranx
def test_per_topic_values_equal_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, runs = make_trec()
    rs = evaluate_runs(qrels, runs, ["ndcg_cut_10", "map"])
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map"})
    for name, run in runs.items():
        ref = ev.evaluate(run)
        got = rs.results[name]
        assert list(got.query_ids) == sorted(ref)
        want = np.array([ref[q]["ndcg_cut_10"] for q in got.query_ids])
        assert got.per_query["ndcg@10"] == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("test", ["student", "fisher"])
def test_p_values_equal_ranx_compare(test: str) -> None:
    ranx = pytest.importorskip("ranx")
    qrels, runs = make_trec(n_topics=40, skills=(0.3, 0.4, 0.9, 0.45))
    rq = ranx.Qrels(qrels)
    rr = [ranx.Run(r, name=n) for n, r in runs.items()]
    rep = ranx.compare(rq, rr, ["map", "ndcg@10"], stat_test=test, n_permutations=20_000,
                       max_p=0.05)  # fmt: skip
    ours = compare_runs(
        qrels, runs, ["map", "ndcg@10"], test="t" if test == "student" else "fisher",
        pairs="all", correction="none", n_resamples=20_000, n_bootstrap=200,
    )  # fmt: skip
    names = list(runs)
    for m, om in (("map", "map"), ("ndcg@10", "ndcg@10")):
        for s in names:
            assert ours.mean[s][om] == pytest.approx(rep.results[s][m], rel=1e-9)
        for t in ours.tests:
            if t.measure != om:
                continue
            theirs = rep.comparisons[t.system, t.baseline][m]["p_value"]
            if test == "student":
                assert t.p_value == pytest.approx(theirs, rel=1e-9)
            else:  # two Monte-Carlo estimates of one p: within 5 standard errors of each other
                se = math.sqrt(max(theirs * (1 - theirs), 1e-4) / 20_000)
                assert abs(t.p_value - theirs) < 5 * math.sqrt(2) * se + 1e-4
        if test == "student":  # the same letters as ranx's table (p < 0.05, larger mean)
            from ndcglab.analysis.comparison import superscript

            for s in names:
                assert superscript(ours.better_than(s, om)) == rep.get_superscript_for_table(s, m)


def test_compare_runs_takes_files_dicts_and_dataframes(tmp_path) -> None:
    pd = pytest.importorskip("pandas")
    qrels, runs = make_trec(n_topics=12)
    qpath = tmp_path / "qrels.txt"
    qpath.write_text(
        "".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items())
    )
    paths = {}
    for n, r in runs.items():
        p = tmp_path / f"{n}.run"
        lines = []
        for q, docs in r.items():
            for k, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1])):
                lines.append(f"{q} Q0 {d} {k + 1} {s!r} {n}\n")
        p.write_text("".join(lines))
        paths[n] = str(p)
    frames = {
        n: pd.DataFrame(
            [(q, d, s) for q, docs in r.items() for d, s in docs.items()],
            columns=["query_id", "doc_id", "score"],
        )
        for n, r in runs.items()
    }
    a = compare_runs(qrels, runs, "ndcg@10", n_bootstrap=100)
    b = compare_runs(str(qpath), list(paths.values()), "ndcg@10", n_bootstrap=100)
    c = compare_runs(qrels, frames, "ndcg@10", n_bootstrap=100)
    assert a.systems == b.systems == c.systems == tuple(runs)
    assert a.tests == b.tests == c.tests


def test_query_set_policies_and_warnings() -> None:
    qrels, runs = make_trec(n_topics=10)
    del runs["sys1"]["t003"]
    runs["sys2"]["zzz"] = {"d1": 1.0}
    with pytest.warns(UserWarning) as rec:
        res = compare_runs(qrels, runs, "map", n_bootstrap=50)
    text = " | ".join(str(w.message) for w in rec)
    assert "t003 (missing from sys1)" in text and "zzz" in text
    assert res.query_set.policy == "intersection" and "t003" not in res.query_set.topics
    assert len(res.topics) == 9 and "Query set: 9 topics" in res.legend
    with pytest.warns(UserWarning, match="sys1: t003"):
        full = compare_runs(qrels, runs, "map", complete=True, n_bootstrap=50)
    i = full.topics.index("t003")
    assert full.per_topic["sys1"]["map"][i] == 0.0 and len(full.topics) == 10
    with pytest.warns(UserWarning, match="listed but not in the qrels"):
        sub = compare_runs(qrels, runs, "map", topics=["t001", "t002", "nope"], n_bootstrap=50)
    assert sub.topics == ("t001", "t002")


def test_tukey_in_compare_equals_the_ols_route() -> None:
    qrels, runs = make_trec(n_topics=25, skills=(0.3, 0.5, 0.9, 0.35))
    res = compare_runs(qrels, runs, "map", test="tukey", pairs="all", n_bootstrap=50)
    x = np.stack([res.per_topic[s]["map"] for s in res.systems])
    ref = _anova_statsmodels(x)
    mse = ref.loc["Residual", "sum_sq"] / ref.loc["Residual", "df"]
    for t in res.tests:
        qv = abs(t.diff) / math.sqrt(mse / 25)
        want = stats.studentized_range.sf(qv, 4, ref.loc["Residual", "df"])
        assert t.p_value == pytest.approx(want, rel=1e-6, abs=1e-12)
        assert t.p_adjusted == t.p_value  # HSD is its own correction
    assert res.anova["map"]["f_system"] == pytest.approx(ref.loc["C(system)", "F"], rel=1e-10)


def test_rows_state_wins_ties_losses_power_and_several_baselines() -> None:
    from ndcglab.analysis.power import queries_needed

    rng = np.random.default_rng(1)
    base = rng.random(30)
    sy = {"A": base, "B": base + rng.normal(0.05, 0.1, 30), "C": np.round(base, 1)}
    res = compare_rankers(sy, baseline=["A", "B"], tie=0.02, topics=[str(i) for i in range(30)])
    assert {(t.system, t.baseline) for t in res.tests} == {("B", "A"), ("C", "A"), ("C", "B")}
    for t in res.tests:
        d = sy[t.system] - sy[t.baseline]
        assert (t.wins, t.ties, t.losses) == (
            int((d > 0.02).sum()), int((abs(d) <= 0.02).sum()), int((d < -0.02).sum())
        )  # fmt: skip
        assert t.n_needed == queries_needed(d.std(ddof=1), d.mean())
    assert res.mark_style == "letters"
    lo, hi = res.mean_ci["A"]["value"]
    half = stats.t.ppf(0.975, 29) * base.std(ddof=1) / math.sqrt(30)
    assert (lo, hi) == pytest.approx((base.mean() - half, base.mean() + half), rel=1e-12)


def test_latex_markdown_csv_html_outputs(tmp_path) -> None:
    qrels, runs = make_trec(n_topics=20)
    res = compare_runs(qrels, runs, ["map", "ndcg@10"], pairs="all", asl=True, n_bootstrap=300)
    tex = res.to_latex()
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"\textbf{" in tex
    best = max(res.systems, key=lambda s: res.mean[s]["map"])
    assert r"\textbf{" + f"{res.mean[best]['map']:.4f}" + "}" in tex
    assert "$^{" in tex and r"\footnotesize" in tex and "Query set: 20 topics" in tex
    md = res.to_markdown(details=True)
    assert "W/T/L" in md and "Query set" in md
    import csv as _csv

    rows = list(_csv.DictReader(x for x in res.to_csv().splitlines() if not x.startswith("#")))
    assert {"wins", "ties", "losses", "topics_needed", "mean_ci_low"} <= set(rows[0])
    html = res.to_html()
    assert html.count("<svg") == len([t for t in res.tests if t.baseline == res.baseline]) + 1
    assert "<script" not in html and "ASL" in html
    assert len(res.asl["map"]) == 3 and res.asl["map"] == sorted(res.asl["map"])
    for suffix in ("md", "tex", "csv", "html", "json"):
        assert res.export(tmp_path / f"t.{suffix}").stat().st_size > 0


def test_real_runs_mq2008_features_as_systems(mq2008) -> None:
    """Real data: MQ2008 Fold1 test (real judgements), five LETOR features as five systems;
    every test's p-value against scipy on the per-topic values, and Student's t against ranx's
    compare."""
    ranx = pytest.importorskip("ranx")
    from ndcglab.data import load_dataset
    from ndcglab.data.trec import dataset_to_qrels, document_names

    ds = load_dataset(str(mq2008 / "Fold1" / "test.txt.gz"), missing="zero")
    names = document_names(ds)
    qrels = dataset_to_qrels(ds, integer=True)
    runs = {}
    for f in (1, 5, 20, 39, 45):
        col = ds.features[:, f - 1].astype(float)
        run: dict[str, dict[str, float]] = {}
        for qi in range(ds.n_queries):
            lo, hi = int(ds.boundaries[qi]), int(ds.boundaries[qi + 1])
            # the feature's order with ties broken by document position, as distinct integer
            # scores: ranx and trec_eval break score ties differently, the tests are the subject
            order = np.lexsort((np.arange(hi - lo), col[lo:hi]))
            score = np.empty(hi - lo)
            score[order] = np.arange(hi - lo)
            run[str(ds.query_ids[qi])] = {names[lo + i]: float(score[i]) for i in range(hi - lo)}
        runs[f"f{f}"] = run
    for test in ("t", "wilcoxon", "sign"):
        res = compare_runs(qrels, runs, "map", test=test, pairs="all", correction="none",
                           n_bootstrap=200)  # fmt: skip
        for t in res.tests:
            a, b = res.per_topic[t.system]["map"], res.per_topic[t.baseline]["map"]
            if test == "t":
                want = stats.ttest_rel(a, b).pvalue
            elif test == "wilcoxon":  # the stated rule: exact when <= 50 non-zero, untied |d|
                nz = np.abs((a - b)[a != b])
                exact = nz.size <= 50 and np.unique(nz).size == nz.size
                method = "exact" if exact else "asymptotic"
                want = stats.wilcoxon(a, b, method=method, correction=False).pvalue
            else:
                d = a - b
                want = stats.binomtest(int((d > 0).sum()), int((d != 0).sum())).pvalue
            assert t.p_value == pytest.approx(want, rel=1e-9), (test, t.system, t.baseline)
    rep = ranx.compare(ranx.Qrels(qrels), [ranx.Run(r, name=n) for n, r in runs.items()],
                       ["map"], stat_test="student")  # fmt: skip
    res = compare_runs(qrels, runs, "map", pairs="all", correction="none", n_bootstrap=200)
    for t in res.tests:
        assert res.mean[t.system]["map"] == pytest.approx(rep.results[t.system]["map"], rel=1e-9)
        theirs = rep.comparisons[t.system, t.baseline]["map"]["p_value"]
        assert t.p_value == pytest.approx(theirs, rel=1e-9)
