"""The verdict rules, on constructed inputs whose answer is known.

Each rule is checked directly (:mod:`ndcglab.reproduce.verdicts`) and through each experiment's
own verdict logic, fed with constructed numbers instead of trained models: "comparable" needs an
equivalence test (a wide confidence interval is "inconclusive", whatever the p-value), "better"
needs significance in the claimed direction, thresholds are the stated ones.
"""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.reproduce import verdicts as V
from ndcglab.reproduce.report import Report


def _noise(n: int, sd: float, mean: float = 0.0, seed: int = 0) -> np.ndarray:
    """``n`` values with exactly the given mean and (sample) standard deviation."""
    x = np.random.default_rng(seed).standard_normal(n)
    x = (x - x.mean()) / x.std(ddof=1)
    return mean + sd * x


# ------------------------------------------------------------------------------- the rules
def test_comparable_needs_a_narrow_interval() -> None:
    # 400 queries, sd 0.05: 90% CI half-width 0.0041, well inside ±0.02
    assert V.comparable(_noise(400, 0.05, 0.001)).verdict == V.AGREES
    # mean 0.1 with a narrow interval: entirely outside the margin
    assert V.comparable(_noise(400, 0.05, 0.1)).verdict == V.DISAGREES


def test_comparable_with_a_wide_interval_is_inconclusive() -> None:
    # a difference of +0.0005 (p ≈ 1) over few, noisy queries
    d = _noise(20, 0.3, 0.0005)
    _, lo, hi = V.equivalence_ci(d)
    assert lo < -V.MARGIN and hi > V.MARGIN  # the interval is wider than the margin
    v = V.comparable(d)
    assert v.verdict == V.INCONCLUSIVE and v.agrees is None
    assert "TOST" in v.rule and "±0.02" in v.rule and "90%" in v.rule
    # and through "better or comparable", with the p-value of no difference
    assert V.better_or_comparable(d, 1.0).verdict == V.INCONCLUSIVE


def test_equivalence_ci_is_the_tost_interval() -> None:
    from scipy import stats

    d = _noise(50, 0.1, 0.01)
    mean, lo, hi = V.equivalence_ci(d, alpha=0.05)
    half = stats.t.ppf(0.95, 49) * 0.1 / np.sqrt(50)
    assert mean == pytest.approx(0.01) and lo == pytest.approx(0.01 - half)
    assert hi == pytest.approx(0.01 + half)
    # TOST: both one-sided tests reject at 0.05 exactly when the interval is inside the margin
    for margin in (0.02, 0.05, 0.1):
        p_low = stats.ttest_1samp(d, -margin, alternative="greater").pvalue
        p_high = stats.ttest_1samp(d, margin, alternative="less").pvalue
        tost = max(p_low, p_high) < 0.05
        assert tost == (V.comparable(d, margin=margin).verdict == V.AGREES)
    assert V.equivalence_ci([0.1])[1] == -np.inf  # one pair: no interval


def test_better_needs_significance_and_direction() -> None:
    assert V.better(0.05, 0.001).verdict == V.AGREES
    assert V.better(-0.05, 0.001).verdict == V.DISAGREES
    assert V.better(0.05, 0.2).verdict == V.INCONCLUSIVE
    assert V.better(0.0005, 1.0).verdict == V.INCONCLUSIVE
    assert V.better(0.05, float("nan")).verdict == V.INCONCLUSIVE
    assert "p < 0.05" in V.better(0.05, 0.001).rule


def test_better_or_comparable() -> None:
    assert V.better_or_comparable(_noise(400, 0.05, 0.001), 0.8).verdict == V.AGREES
    assert V.better_or_comparable(_noise(30, 0.3, 0.2), 0.001).verdict == V.AGREES
    assert V.better_or_comparable(_noise(30, 0.3, -0.2), 0.001).verdict == V.DISAGREES
    assert V.better_or_comparable(_noise(30, 0.3, 0.01), 0.6).verdict == V.INCONCLUSIVE


def test_within_threshold_and_all_of() -> None:
    assert V.within(0.801, 0.8, 0.01, se=0.001).verdict == V.AGREES
    assert V.within(0.85, 0.8, 0.01, se=0.001).verdict == V.DISAGREES
    assert V.within(0.805, 0.8, 0.01, se=0.01).verdict == V.INCONCLUSIVE
    assert V.threshold(True, True, "r").verdict == V.AGREES
    assert V.threshold(False, True, "r").verdict == V.DISAGREES
    assert V.threshold(None, False, "r").verdict == V.INCONCLUSIVE
    a, d, i = (V.Verdict(v, "rule") for v in (V.AGREES, V.DISAGREES, V.INCONCLUSIVE))
    assert V.all_of([a, a]).verdict == V.AGREES
    assert V.all_of([a, i]).verdict == V.INCONCLUSIVE
    assert V.all_of([a, i, d]).verdict == V.DISAGREES
    assert V.all_of([]).verdict == V.INCONCLUSIVE
    with pytest.raises(ValueError):
        V.Verdict("maybe", "rule")


def test_report_stores_verdict_rule_and_detail() -> None:
    r = Report("toy", "t")
    r.add_finding("claim", "seen", V.comparable(_noise(20, 0.3)))
    r.add_finding("claim 2", "seen", True, rule="stated rule")
    f, g = r.findings
    assert f["verdict"] == "inconclusive" and f["agrees"] is None and "TOST" in f["rule"]
    assert "90% CI" in f["detail"]
    assert g["verdict"] == "agrees" and g["agrees"] is True and g["rule"] == "stated rule"


# ------------------------------------------------------------------- each experiment's logic
def _store(values: dict[str, dict[str, np.ndarray]]):
    from ndcglab.reproduce._fit import PerQueryStore

    measures = list(next(iter(values.values())))
    store = PerQueryStore(measures)
    for s, per in values.items():
        store.values[s] = {m: [np.asarray(v, dtype=np.float64)] for m, v in per.items()}
        store.fold_means[s] = {m: [float(np.mean(v))] for m, v in per.items()}
    return store


def _verdicts(report: Report) -> list[str]:
    return [f["verdict"] for f in report.findings]


@pytest.mark.parametrize("n, sd, expect", [(600, 0.01, "agrees"), (12, 0.4, "inconclusive")])
def test_cost_sensitive_comparable_claims(n: int, sd: float, expect: str) -> None:
    from ndcglab.analysis.significance import compare_rankers
    from ndcglab.reproduce import cost_sensitive as CS

    base = np.clip(_noise(n, 0.2, 0.5, seed=1), 0, 1)
    values = {}
    for i, (name, _) in enumerate(CS.METHODS):
        shift = 0.05 if name in CS.BASELINES_52 else 0.0  # baselines clearly below on N@1
        values[name] = {
            "ndcg@1": base + _noise(n, sd, -shift, seed=10 + i),
            "map": base + _noise(n, sd, 0.0, seed=30 + i),
        }
    store = _store(values)
    sig_all = compare_rankers(
        store.as_mapping([m for m, _ in CS.METHODS]),
        baseline="ListMLE",
        test="t",
        measures=["ndcg@1"],
        seed=0,
    )
    sig_52 = compare_rankers(
        store.as_mapping(["CS-ListMLE@1", *CS.BASELINES_52]),
        baseline="CS-ListMLE@1",
        test="t",
        measures=["ndcg@1"],
        correction="none",
        seed=0,
    )
    report = Report("cost-sensitive", "t")
    CS._findings(report, store, sig_all, sig_52, None, "synthetic")
    got = _verdicts(report)
    # comparable N@1 (CS vs ListMLE) and comparable MAP: TOST decides
    assert got[0] == expect and got[3] == expect
    # higher N@1 than every baseline, significant over RankSVM and AdaRank: significance decides
    assert got[1] == got[2] == ("agrees" if expect == "agrees" else "inconclusive")


def test_cost_sensitive_worse_is_disagreement() -> None:
    from ndcglab.analysis.significance import compare_rankers
    from ndcglab.reproduce import cost_sensitive as CS

    n = 500
    base = _noise(n, 0.2, 0.5, seed=1)
    values = {
        name: {
            "ndcg@1": base + _noise(n, 0.01, 0.1 if name == "RankSVM" else 0.0, seed=i),
            "map": base + _noise(n, 0.01, seed=40 + i),
        }
        for i, (name, _) in enumerate(CS.METHODS)
    }
    store = _store(values)
    sig_all = compare_rankers(
        store.as_mapping([m for m, _ in CS.METHODS]), baseline="ListMLE", test="t", seed=0
    )
    sig_52 = compare_rankers(
        store.as_mapping(["CS-ListMLE@1", *CS.BASELINES_52]),
        baseline="CS-ListMLE@1",
        test="t",
        measures=["ndcg@1"],
        correction="none",
        seed=0,
    )
    report = Report("cost-sensitive", "t")
    CS._findings(report, store, sig_all, sig_52, None, "synthetic")
    # RankSVM significantly above CS-ListMLE@1: "higher than every baseline" and "significant
    # gain over RankSVM and AdaRank" disagree
    assert _verdicts(report)[1:3] == ["disagrees", "disagrees"]


def test_qnorm_claims() -> None:
    from ndcglab.analysis.significance import compare_rankers
    from ndcglab.reproduce import qnorm as Q

    names = [n for n, _ in Q.LOSSES]

    def run(n: int, sd: float, shift_cos: float) -> list[str]:
        base = _noise(n, 0.2, 0.5, seed=3)
        store = _store(
            {
                names[0]: {"ndcg@10": base},
                names[1]: {"ndcg@10": base + _noise(n, sd, -shift_cos, seed=4)},
                names[2]: {"ndcg@10": base + _noise(n, sd, 0.0005, seed=5)},
            }
        )
        sig = compare_rankers(
            store.as_mapping(names),
            baseline=names[0],
            test="permutation",
            measures=["ndcg@10"],
            n_resamples=2000,
            n_bootstrap=200,
            seed=0,
        )
        report = Report("qnorm", "t")
        Q._findings(report, store, sig, names)
        return _verdicts(report)

    # q-norm much better than cosine; equivalent to cross-entropy within a narrow interval
    assert run(500, 0.01, 0.1) == ["agrees", "agrees"]
    # few noisy queries, a difference of +0.0005: not significant and not equivalent
    assert run(15, 0.3, 0.0) == ["inconclusive", "inconclusive"]
    # q-norm significantly worse than cosine
    assert run(500, 0.01, -0.1)[0] == "disagrees"


def _consistency_rows(changes: list[tuple[str, float, float]]) -> list[list]:
    """Summary rows: (family, relative change %, Holm p)."""
    return [
        [fam, f"{fam}: consistent {i}", 0.5, 0.5 * (1 + rel / 100), rel, p, 0, 0]
        for i, (fam, rel, p) in enumerate(changes)
    ]


def _listnet_tests(diff: float, p: float) -> dict:
    return {
        "listnet": {
            f"ListNet: consistent {z}": {"diffs": None, "diff": diff, "p": p, "p_adjusted": p}
            for z in ("Z_1", "Z_10", "Z")
        }
    }


def test_consistency_claims() -> None:
    from ndcglab.reproduce import consistency as C

    def run(changes: list[tuple[str, float, float]], diff: float, p: float) -> list[str]:
        report = Report("consistency", "t")
        C._findings(report, _consistency_rows(changes), _listnet_tests(diff, p))
        return _verdicts(report)

    # a significant +5% change, one small significant loss, ListNet helped
    assert run(
        [("cosine", 5.0, 0.001), ("squared", 1.0, 0.01), ("listnet", -1.0, 0.02)], 0.02, 0.001
    ) == ["agrees", "agrees", "agrees"]
    # large changes that are not significant say nothing; nothing significant: inconclusive
    assert run([("cosine", 5.0, 0.3), ("listnet", -4.0, 0.4)], 0.0, 0.9) == [
        "inconclusive",
        "inconclusive",
        "inconclusive",
    ]
    # a significant −5% degradation; every consistent ListNet significantly worse
    assert run([("listnet", -5.0, 0.001)], -0.02, 0.001) == ["disagrees", "disagrees", "disagrees"]


def _dist_summary(gap_mid: float, gap_end: float, stable: float = 1.0) -> dict:
    def entry(gap_final: float, sd: tuple[float, float]) -> dict:
        return {
            "final": {"RankSVM": 0.8, "ListNet": 0.81, "random": 0.8 - gap_final},
            "at_mid": {"RankSVM": 0.7, "ListNet": 0.7, "random": 0.7 - gap_mid},
            "n_mid": 500,
            "trained_vs_random": {"10": stable, "100": stable, "1000": stable},
            "svm_vs_listnet": {"10": 0.2, "100": 0.6, "1000": 1.0},
            "trained_vs_random_stable_from": 3,
            "sd_probe": {"RankSVM": sd[0], "ListNet": sd[0], "random": sd[0]},
            "sd_fifth": {"RankSVM": sd[1], "ListNet": sd[1], "random": sd[1]},
            "n_probe": 100,
            "n_fifth": 1000,
        }

    s = {
        "log": entry(gap_end, (0.02, 0.01)),
        "power": entry(0.4, (0.02, 0.01)),
        "exp": entry(0.6, (0.03, 0.03)),
        "cut": entry(0.5, (0.02, 0.01)),
    }
    s["exp"]["svm_vs_listnet"] = {"10": 0.0, "100": 0.2, "1000": 0.5}
    return s


def test_distinguishability_claims() -> None:
    from ndcglab.reproduce import distinguishability as D

    def run(gap_mid: float, gap_end: float, stable: float = 1.0) -> list[str]:
        report = Report("distinguishability", "t")
        D._findings(report, _dist_summary(gap_mid, gap_end, stable), None, 5000)
        return _verdicts(report)

    # Fig. 1: a gap of 0.25 that is still shrinking is not "close": inconclusive, never agrees
    got = run(0.31, 0.25)
    assert got[0] == "inconclusive"
    report = Report("distinguishability", "t")
    D._findings(report, _dist_summary(0.31, 0.25), None, 5000)
    assert "not close" in report.findings[0]["observed"]
    assert f"at most {D.CLOSE:g}" in report.findings[0]["rule"]
    assert run(0.04, 0.03)[0] == "agrees"  # close by the stated threshold
    assert run(0.2, 0.25)[0] == "disagrees"  # far apart and not shrinking
    # the other claims on these numbers: distinguishes (100%), r^−1/2 apart, 2^−r does not
    # settle, random not close under 2^−r (gap 0.6), 2^−r distinguishes the similar rankers worse
    assert got[1:] == ["agrees", "agrees", "agrees", "disagrees", "agrees", "agrees"]
    # an order final in only 30% of repetitions: does not distinguish
    assert run(0.31, 0.25, stable=0.3)[1] == "disagrees"


def test_limits_verdict_does_not_refute_a_limit_while_the_gap_shrinks() -> None:
    from ndcglab.reproduce.limits import limit_verdict

    assert limit_verdict(0.801, 0.8, 0.001, first_gap=0.2, tol=0.01, n_first=10).verdict == (
        "agrees"
    )
    # beyond the tolerance but much closer than at n = 10: inconclusive
    v = limit_verdict(0.584, 0.55, 0.007, first_gap=0.14, tol=0.01, n_first=10)
    assert v.verdict == "inconclusive" and "n = 10" in v.rule
    # beyond the tolerance and not closer than at the start: disagrees
    assert limit_verdict(0.7, 0.55, 0.001, first_gap=0.1, tol=0.01, n_first=10).verdict == (
        "disagrees"
    )
