"""Paired tests, bootstrap CIs, effect sizes, Holm, and the comparison table.

Oracles: scipy.stats (ttest_rel, permutation_test, bootstrap), a slow exact sign-flip
enumeration and a by-hand Holm written here, and coverage on simulated data.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from ndcglab.analysis.significance import (
    bootstrap_ci,
    cohens_dz,
    compare_rankers,
    holm,
    paired_t_test,
    permutation_test,
)
from ndcglab.errors import ConventionError, DataFormatError


# ----------------------------------------------------------------------------- oracles
def slow_sign_flip_p(d: np.ndarray, alternative: str = "two-sided") -> float:
    """Exact p-value of the sign-flip test by brute force over all 2^n sign vectors."""
    obs = float(np.mean(d))
    hits = 0
    total = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        t = float(np.mean(np.array(signs) * d))
        total += 1
        tol = 1e-12 * max(1.0, abs(obs))
        if alternative == "two-sided":
            hits += abs(t) >= abs(obs) - tol
        elif alternative == "greater":
            hits += t >= obs - tol
        else:
            hits += t <= obs + tol
    return hits / total


def holm_by_hand(p: list[float]) -> list[float]:
    """Holm (1979) step-down adjustment, written out loop by loop."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        value = min(1.0, (m - rank) * p[i])
        running = max(running, value)
        adjusted[i] = running
    return adjusted


def _pair(rng: np.random.Generator, n: int, shift: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    a = rng.random(n)
    return a, np.clip(a + rng.normal(shift, 0.1, n), 0, 1)


# ----------------------------------------------------------------------------- t-test
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize("n", [3, 12, 40])
def test_t_test_matches_scipy(n: int, alternative: str) -> None:
    a, b = _pair(np.random.default_rng(n), n)
    ours = paired_t_test(a, b, alternative=alternative)
    ref = stats.ttest_rel(a, b, alternative=alternative)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.n == n and ours.df == n - 1


def test_t_test_drops_nan_pairs_and_degenerate_cases() -> None:
    a = np.array([0.1, 0.5, np.nan, 0.7, 0.2])
    b = np.array([0.2, 0.4, 0.3, np.nan, 0.5])
    ours = paired_t_test(a, b)
    ref = stats.ttest_rel([0.1, 0.5, 0.2], [0.2, 0.4, 0.5])
    assert ours.n == 3 and ours.p_value == pytest.approx(ref.pvalue)
    assert paired_t_test([0.3, 0.4], [0.3, 0.4]).p_value == 1.0
    assert math.isnan(paired_t_test([0.5], [0.1]).p_value)
    const = paired_t_test([1.0, 2.0, 3.0], [0.0, 1.0, 2.0])
    with warnings.catch_warnings():  # scipy warns about the zero variance of its input
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = stats.ttest_rel([1.0, 2.0, 3.0], [0.0, 1.0, 2.0])
    assert const.statistic == ref.statistic == math.inf and const.p_value == ref.pvalue == 0.0
    assert paired_t_test([0.2, 0.3], [0.3, 0.4], alternative="greater").p_value == 1.0
    with pytest.raises(DataFormatError):
        paired_t_test([1, 2, 3], [1, 2])


# ----------------------------------------------------------------------------- permutation
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_permutation_matches_slow_enumeration(alternative: str) -> None:
    rng = np.random.default_rng(3)
    a, b = _pair(rng, 9, shift=0.03)
    ours = permutation_test(a, b, alternative=alternative)
    assert ours.exact is True
    assert ours.p_value == pytest.approx(slow_sign_flip_p(a - b, alternative), abs=1e-15)


def test_exact_permutation_matches_scipy_exact() -> None:
    rng = np.random.default_rng(4)
    a, b = _pair(rng, 12, shift=0.04)
    ref = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        vectorized=True,
    )
    ours = permutation_test(a, b)
    assert ours.exact and ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_zero_differences_do_not_change_the_exact_p_value() -> None:
    d = np.array([0.2, -0.05, 0.1, 0.3, 0.0, 0.0, 0.15])
    assert permutation_test(d).p_value == pytest.approx(slow_sign_flip_p(d))
    assert permutation_test(np.zeros(5)).p_value == 1.0


def test_random_permutation_close_to_exact_and_seeded() -> None:
    rng = np.random.default_rng(5)
    a, b = _pair(rng, 18, shift=0.03)
    exact = permutation_test(a, b, exact=True).p_value
    mc = permutation_test(a, b, exact=False, n_resamples=20_000, seed=1)
    assert mc.exact is False and mc.n_resamples == 20_000
    se = math.sqrt(exact * (1 - exact) / 20_000)
    assert abs(mc.p_value - exact) < 4 * se + 1e-4
    again = permutation_test(a, b, exact=False, n_resamples=20_000, seed=1)
    assert again.p_value == mc.p_value
    # (1 + count) / (1 + B): never zero, even when nothing is as extreme
    strong = permutation_test(np.full(40, 0.1) + rng.normal(0, 1e-3, 40), n_resamples=999)
    assert strong.p_value == pytest.approx(1 / 1000)


def test_permutation_auto_uses_exact_for_small_n() -> None:
    a, b = _pair(np.random.default_rng(6), 16)
    assert permutation_test(a, b).exact is True
    a, b = _pair(np.random.default_rng(6), 30)
    assert permutation_test(a, b).exact is False
    with pytest.raises(ConventionError):
        permutation_test(*_pair(np.random.default_rng(6), 30), exact=True)


# ----------------------------------------------------------------------------- Holm, d_z
def test_holm_textbook_example() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    assert holm(p).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])


@pytest.mark.parametrize("seed", range(5))
def test_holm_matches_by_hand(seed: int) -> None:
    p = np.random.default_rng(seed).random(7) ** 3
    assert holm(p).tolist() == pytest.approx(holm_by_hand(p.tolist()))


def test_holm_keeps_nan_out_of_the_family() -> None:
    out = holm([0.02, np.nan, 0.01])
    assert math.isnan(out[1])
    assert out[[0, 2]].tolist() == pytest.approx(holm_by_hand([0.02, 0.01]))


def test_cohens_dz_by_hand() -> None:
    a = np.array([0.5, 0.6, 0.9, 0.4])
    b = np.array([0.4, 0.6, 0.7, 0.1])
    d = [0.1, 0.0, 0.2, 0.3]
    mean = sum(d) / 4
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / 3)
    assert cohens_dz(a, b) == pytest.approx(mean / sd)
    assert cohens_dz([1, 1], [0, 0]) == math.inf
    assert math.isnan(cohens_dz([1.0], [0.0]))


# ----------------------------------------------------------------------------- bootstrap
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_matches_scipy(method: str) -> None:
    rng = np.random.default_rng(7)
    a, b = rng.exponential(1.0, 25), rng.exponential(0.8, 25)
    ours = bootstrap_ci(a, b, method=method, n_resamples=40_000, seed=0)
    ref = stats.bootstrap(
        (a - b,),
        np.mean,
        method="BCa" if method == "bca" else "percentile",
        n_resamples=40_000,
        rng=1,
    ).confidence_interval
    width = ref.high - ref.low
    assert ours.low == pytest.approx(ref.low, abs=0.03 * width)
    assert ours.high == pytest.approx(ref.high, abs=0.03 * width)
    assert ours.low < ours.estimate < ours.high


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_bootstrap_coverage_on_simulated_data(method: str) -> None:
    """A 90% interval of a skewed mean covers the true mean in roughly 90% of 300 datasets."""
    rng = np.random.default_rng(11)
    hits = 0
    reps = 300
    for i in range(reps):
        d = rng.exponential(1.0, 40) - 1.0  # true mean 0, skewed
        ci = bootstrap_ci(d, confidence=0.9, n_resamples=1000, method=method, seed=i)
        hits += ci.low <= 0.0 <= ci.high
    assert 0.83 <= hits / reps <= 0.96


def test_bootstrap_is_seeded() -> None:
    d = np.random.default_rng(1).normal(size=30)
    assert bootstrap_ci(d, seed=3) == bootstrap_ci(d, seed=3)
    with pytest.raises(ConventionError):
        bootstrap_ci(d, method="bc")


# ----------------------------------------------------------------------------- compare
def _systems(q: int = 30) -> dict[str, dict[str, np.ndarray]]:
    rng = np.random.default_rng(21)
    base = rng.random(q)
    return {
        "base": {"ndcg@10": base, "map": base * 0.8},
        "better": {
            "ndcg@10": np.clip(base + 0.08 + rng.normal(0, 0.03, q), 0, 1),
            "map": base * 0.8 + rng.normal(0, 0.05, q),
        },
        "same": {"ndcg@10": base + rng.normal(0, 0.05, q), "map": base * 0.8},
    }


@pytest.mark.parametrize("test", ["t", "permutation"])
def test_compare_marks_follow_holm_adjusted_p(test: str) -> None:
    res = compare_rankers(_systems(), test=test, n_resamples=2000, n_bootstrap=500)
    assert res.baseline == "base" and res.systems == ("base", "better", "same")
    for m in res.measures:
        tests = [t for t in res.tests if t.measure == m]
        raw = [t.p_value for t in tests]
        assert [t.p_adjusted for t in tests] == pytest.approx(holm_by_hand(raw))
        for t in tests:
            want = "‡" if t.p_adjusted < 0.01 else "†" if t.p_adjusted < 0.05 else ""
            assert t.mark == want
    assert res.mark("better", "ndcg@10") == "‡"
    assert res.mark("same", "map") == ""
    one = res.get("better", "ndcg@10")
    assert one is not None
    ref = stats.ttest_rel(_systems()["better"]["ndcg@10"], _systems()["base"]["ndcg@10"])
    if test == "t":
        assert one.p_value == pytest.approx(ref.pvalue)
    assert one.ci_low < one.diff < one.ci_high


def test_compare_accepts_arrays_and_evaluation_like_objects() -> None:
    class Fake:
        def __init__(self, v: np.ndarray) -> None:
            self.per_query = {"ndcg": v}

    rng = np.random.default_rng(2)
    a = rng.random(20)
    res = compare_rankers({"A": Fake(a), "B": Fake(a + 0.1)}, n_bootstrap=200)
    assert res.measures == ("ndcg",)
    res2 = compare_rankers({"A": a, "B": a + 0.1}, n_bootstrap=200, measure="score")
    assert res2.measures == ("score",) and res2.mean["B"]["score"] == pytest.approx(a.mean() + 0.1)


def test_compare_baseline_pairs_and_errors() -> None:
    sy = _systems()
    res = compare_rankers(sy, baseline="same", pairs="all", n_bootstrap=200)
    assert res.baseline == "same"
    assert len(res.tests) == 2 * 3  # 3 pairs x 2 measures
    assert {(t.system, t.baseline) for t in res.tests} == {
        ("base", "same"),
        ("better", "same"),
        ("better", "base"),
    }
    with pytest.raises(ConventionError, match="unknown baseline"):
        compare_rankers(sy, baseline="nope")
    with pytest.raises(ConventionError, match="unknown test"):
        compare_rankers(sy, test="wilcoxon")
    with pytest.raises(DataFormatError):
        compare_rankers({"A": np.zeros(3), "B": np.zeros(4)})


def test_compare_nan_queries_are_dropped_pairwise() -> None:
    a = np.array([0.2, 0.4, np.nan, 0.8, 0.5])
    b = np.array([0.3, 0.5, 0.1, np.nan, 0.6])
    res = compare_rankers({"A": a, "B": b}, n_bootstrap=100)
    t = res.get("B", "value")
    assert t is not None and t.n == 3
    assert res.n_queries["A"]["value"] == 4
    assert res.mean["A"]["value"] == pytest.approx(np.nanmean(a))


def test_exports_state_the_legend_and_write_atomically(tmp_path) -> None:
    res = compare_rankers(_systems(), n_bootstrap=300)
    md = res.export(tmp_path / "t.md").read_text(encoding="utf-8")
    tex = res.export(tmp_path / "t.tex").read_text(encoding="utf-8")
    csv_text = res.export(tmp_path / "t.csv").read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv", "t.md", "t.tex"]
    for text in (md, csv_text):
        assert "† p < 0.05" in text and "‡ p < 0.01" in text and "Holm" in text
    assert r"\dag{} p $<$ 0.05" in tex and r"\ddag{} p $<$ 0.01" in tex
    better_row = next(line for line in md.splitlines() if line.startswith("| better |"))
    assert "‡" in better_row
    assert r"$^{\ddag}$" in tex and r"\begin{tabular}{lrr}" in tex
    rows = list(csv.DictReader(line for line in csv_text.splitlines() if not line.startswith("#")))
    assert len(rows) == 3 * 2
    better = next(r for r in rows if r["system"] == "better" and r["measure"] == "ndcg@10")
    assert better["mark"] == "‡" and float(better["p_adjusted"]) < 0.01
    base = next(r for r in rows if r["system"] == "base" and r["measure"] == "map")
    assert base["p_value"] == "" and float(base["mean"]) == pytest.approx(res.mean["base"]["map"])
    with pytest.raises(ConventionError, match="end the file name"):
        res.export(tmp_path / "t.xlsx")


def test_latex_escapes_names(tmp_path) -> None:
    a = np.random.default_rng(0).random(10)
    res = compare_rankers({"list_net": a, "rank&svm": a + 0.01}, n_bootstrap=100)
    tex = res.to_latex()
    assert r"list\_net" in tex and r"rank\&svm" in tex


def test_to_dict_shape_is_json_ready() -> None:
    from ndcglab.cli._common import to_json

    res = compare_rankers(_systems(), n_bootstrap=200)
    d = json.loads(to_json(res.to_dict()))
    assert set(d["mean"]) == {"base", "better", "same"}
    means = d["systems"]["better"]["mean"]
    assert means["ndcg@10"] == pytest.approx(d["mean"]["better"]["ndcg@10"])
    assert d["tests"][0]["mark"] in ("", "†", "‡")
    assert "legend" in d and d["baseline"] == "base"
