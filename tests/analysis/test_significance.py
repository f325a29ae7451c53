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
        # p is about 3.5e-13: a relative tolerance (approx's default absolute 1e-12 would accept
        # any p below 1e-12, i.e. a wrong t-test), and the statistic itself
        assert one.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=0)
        assert one.statistic == pytest.approx(ref.statistic, rel=1e-12)
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
        compare_rankers(sy, test="anova")
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
    assert [(t["system"], t["measure"], t["mark"]) for t in d["tests"]] == [
        ("better", "ndcg@10", "‡"),
        ("same", "ndcg@10", ""),
        ("better", "map", ""),
        ("same", "map", ""),
    ]
    for t in d["tests"]:  # the mark is the legend's rule on the Holm-adjusted p of that row
        want = "‡" if t["p_adjusted"] < 0.01 else "†" if t["p_adjusted"] < 0.05 else ""
        assert t["mark"] == want
        assert t["p_adjusted"] == pytest.approx(res.get(t["system"], t["measure"]).p_adjusted)
    assert "legend" in d and d["baseline"] == "base"


# ----------------------------------------------------------------------------- exact layouts
def _layout_systems() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    a = rng.random(30)
    return {
        "A": a,
        "B": a + 0.1 + rng.normal(0, 0.02, 30),  # p far below 1e-4
        "C": a + rng.normal(0, 0.05, 30),  # p well above 0.05
    }


def test_details_rows_are_formatted_from_the_tests() -> None:
    sy = _layout_systems()
    res = compare_rankers(sy, n_bootstrap=200)
    header, rows = res.details()
    assert header == ["system", "baseline", "measure", "n", "diff", "95% CI", "d_z", "p", "p_adj",
                      "mark"]  # fmt: skip
    assert [r[:4] for r in rows] == [["B", "A", "value", "30"], ["C", "A", "value", "30"]]
    for row, name in zip(rows, ("B", "C")):
        d = sy[name] - sy["A"]
        ref = stats.ttest_rel(sy[name], sy["A"])
        t = res.get(name, "value")
        assert t is not None
        assert row[4] == f"{d.mean():+.4f}"
        assert row[5] == f"[{t.ci_low:+.4f}, {t.ci_high:+.4f}]"
        assert row[6] == f"{d.mean() / d.std(ddof=1):.2f}"
        p_text = "<1e-4" if ref.pvalue < 1e-4 else f"{ref.pvalue:.4f}"
        assert row[7] == p_text and row[8] == (p_text if name == "C" else "<1e-4")
    assert rows[0][7] == "<1e-4" and rows[1][7] == f"{stats.ttest_rel(sy['C'], sy['A']).pvalue:.4f}"
    assert rows[0][9] == "‡" and rows[1][9] == ""
    assert res.details(floatfmt=".2f")[1][0][4] == f"{(sy['B'] - sy['A']).mean():+.2f}"
    # one pair: no p-value, no d_z ("n/a"), the CI of a single difference
    one = compare_rankers({"A": np.array([0.5, np.nan]), "B": np.array([0.6, 0.2])}, n_bootstrap=50)
    assert one.details()[1] == [
        ["B", "A", "value", "1", "+0.1000", "[+0.1000, +0.1000]", "n/a", "n/a", "n/a", ""]
    ]


def test_p_value_text_threshold() -> None:
    from ndcglab.analysis.comparison import _fmt, _fmt_p

    assert _fmt_p(3e-5) == "<1e-4" and _fmt_p(1e-4) == "0.0001" and _fmt_p(0.04567) == "0.0457"
    assert _fmt_p(float("nan")) == "n/a" and _fmt_p(1.0) == "1.0000"
    assert _fmt(float("inf"), ".2f") == "n/a" and _fmt(-1.234, "+.1f") == "-1.2"


def test_csv_markdown_and_dict_layouts(tmp_path) -> None:
    sy = _layout_systems()
    res = compare_rankers(sy, n_bootstrap=200)
    lines = res.to_csv().splitlines()
    assert lines[0] == "# " + res.legend
    assert lines[1] == (
        "system,measure,mean,n,baseline,diff,ci_low,ci_high,effect_size_dz,statistic,p_value,"
        "p_adjusted,mark,test"
    )
    assert lines[2] == f"A,value,{float(sy['A'].mean())!r},30" + "," * 10
    b = next(t for t in res.tests if t.system == "B")
    assert lines[3].split(",") == [
        "B", "value", repr(float(sy["B"].mean())), "30", "A", repr(b.diff), repr(b.ci_low),
        repr(b.ci_high), repr(b.effect_size), repr(b.statistic), repr(b.p_value),
        repr(b.p_adjusted), "‡", "t",
    ]  # fmt: skip
    # Markdown: the per-test table only with details=True (the default for export)
    plain = res.to_markdown()
    full = res.to_markdown(details=True)
    assert "p_adj" not in plain and "| system | baseline | measure | n |" in full
    assert full.startswith(plain.split("\n\n")[0] + "\n\n")
    assert full.count("\n\n") == 2 and full.endswith("\n") and not full.endswith("\n\n")
    for suffix in (".markdown", ".MD"):
        text = res.export(tmp_path / f"t{suffix}").read_text(encoding="utf-8")
        assert text == full
    with pytest.raises(ConventionError) as e:
        res.export(tmp_path / "t.xlsx")
    assert str(tmp_path / "t.xlsx") in str(e.value) and ".tex, .csv, .html or .json" in str(e.value)
    d = res.to_dict()
    assert list(d) == [
        "baseline", "measures", "systems", "mean", "tests", "test", "correction", "family",
        "alpha", "alpha_strong", "confidence", "settings", "legend",
    ]  # fmt: skip
    assert d["measures"] == ["value"] and d["test"] == "t" and d["correction"] == "holm"
    assert d["family"] == "measure" and (d["alpha"], d["alpha_strong"]) == (0.05, 0.01)
    assert d["confidence"] == 0.95 and d["settings"]["n_bootstrap"] == 200
    assert d["systems"]["B"] == {"mean": {"value": sy["B"].mean()}, "n": {"value": 30}}


# ----------------------------------------------------------------------------- degenerate inputs
def test_degenerate_tests_keep_their_settings() -> None:
    one = paired_t_test([0.3], [0.1], alternative="greater")  # fewer than two pairs
    assert (one.test, one.n, one.alternative, one.df) == ("t", 1, "greater", None)
    assert math.isnan(one.statistic) and math.isnan(one.p_value)
    const = paired_t_test([0.3, 0.4], [0.1, 0.2], alternative="less")  # zero variance, d > 0
    assert (const.statistic, const.p_value) == (math.inf, 1.0)
    assert (const.alternative, const.df) == ("less", 1.0)
    empty = permutation_test([], [])
    assert (empty.test, empty.n) == ("permutation", 0) and math.isnan(empty.p_value)
    small = permutation_test([0.3, 0.5, 0.2], [0.1, 0.2, 0.3])
    assert (small.test, small.exact, small.n) == ("permutation", True, 3)
    assert small.p_value == pytest.approx(slow_sign_flip_p(np.array([0.2, 0.3, -0.1])))


def test_bootstrap_degenerate_intervals() -> None:
    single = bootstrap_ci([0.3], [0.1], n_resamples=50, confidence=0.9)
    assert single.low == single.high == single.estimate == pytest.approx(0.2)
    assert (single.n, single.n_resamples, single.confidence) == (1, 50, 0.9)
    none = bootstrap_ci([], [], n_resamples=50, confidence=0.9)
    assert (none.n, none.n_resamples, none.confidence, none.method) == (0, 50, 0.9, "bca")
    assert math.isnan(none.low) and math.isnan(none.high) and math.isnan(none.estimate)
    const = bootstrap_ci([0.2] * 3, [0.1] * 3, n_resamples=50, method="percentile")
    assert const.low == const.high == pytest.approx(0.1)
    assert (const.n, const.n_resamples, const.method) == (3, 50, "percentile")


def test_bca_interval_is_scale_equivariant() -> None:
    """The BCa acceleration Σu³ / (6 (Σu²)^1.5) does not depend on the scale of the differences:
    the interval of c·d is c times the interval of d (same seed, same resamples), for small
    differences (Σu² < 1) as for large ones."""
    rng = np.random.default_rng(4)
    d = rng.exponential(0.05, 25) - 0.02  # skewed: the acceleration is not 0
    base = bootstrap_ci(d, n_resamples=2000, seed=1)
    for c in (0.01, 100.0):
        scaled = bootstrap_ci(c * d, n_resamples=2000, seed=1)
        assert scaled.low == pytest.approx(c * base.low, rel=1e-9)
        assert scaled.high == pytest.approx(c * base.high, rel=1e-9)
    pct = bootstrap_ci(d, n_resamples=2000, seed=1, method="percentile")
    assert (pct.low, pct.high) != (base.low, base.high)  # BCa moved the percentile interval


def test_text_rendering_has_means_details_and_legend() -> None:
    res = compare_rankers(_layout_systems(), n_bootstrap=200)
    text = res.to_text()
    blocks = text.split("\n\n")
    assert len(blocks) == 3 and blocks[-1] == res.legend
    assert blocks[0].splitlines()[0].split() == ["system", "value"]
    head = blocks[1].splitlines()[0].split()
    assert head[:5] == ["system", "baseline", "measure", "n", "diff"] and head[-1] == "mark"
    assert "B" in blocks[1] and "<1e-4" in blocks[1] and "‡" in blocks[1]
    short = res.to_text(details=False).split("\n\n")
    assert short == [blocks[0], res.legend]


def test_bca_matches_scipy_on_strongly_skewed_differences() -> None:
    """A large acceleration: both ends of the BCa interval depend on its sign and size."""
    d = np.random.default_rng(11).exponential(1.0, 30) ** 3
    ours = bootstrap_ci(d, n_resamples=40_000, seed=0)
    ref = stats.bootstrap((d,), np.mean, method="BCa", n_resamples=40_000, rng=1)
    ci = ref.confidence_interval
    width = ci.high - ci.low
    assert ours.low == pytest.approx(ci.low, abs=0.03 * width)
    assert ours.high == pytest.approx(ci.high, abs=0.03 * width)


def test_default_seeds_are_zero() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.random(40), rng.random(40)
    assert bootstrap_ci(a, b, n_resamples=500) == bootstrap_ci(a, b, n_resamples=500, seed=0)
    p0 = permutation_test(a, b, exact=False, n_resamples=500, seed=0)
    assert permutation_test(a, b, exact=False, n_resamples=500) == p0
    assert (p0.test, p0.exact, p0.n_resamples, p0.n) == ("permutation", False, 500, 40)
    assert p0.statistic == pytest.approx(float(np.mean(a - b)))
    zero = permutation_test([0.2, 0.3], [0.2, 0.3], alternative="less")
    assert (zero.test, zero.p_value, zero.alternative, zero.exact) == ("permutation", 1.0,
                                                                      "less", True)  # fmt: skip
    flat = paired_t_test([0.2, 0.3, 0.4], [0.2, 0.3, 0.4])
    assert (flat.test, flat.statistic, flat.p_value, flat.n, flat.df) == ("t", 0.0, 1.0, 3, 2.0)


def test_means_table_labels_the_baseline_and_appends_marks() -> None:
    sy = _layout_systems()
    res = compare_rankers(sy, n_bootstrap=200)
    header, rows = res.table()
    assert header == ["system", "value"]
    assert rows == [
        ["A (baseline)", f"{sy['A'].mean():.4f}"],
        ["B", f"{sy['B'].mean():.4f}‡"],
        ["C", f"{sy['C'].mean():.4f}"],
    ]
    assert res.table(marks=False)[1][1] == ["B", f"{sy['B'].mean():.4f}"]


def test_latex_table_exact_layout() -> None:
    sy = _layout_systems()
    res = compare_rankers(sy, n_bootstrap=200)
    legend = (
        r"\dag{} p $<$ 0.05, \ddag{} p $<$ 0.01: two-sided paired t-test against the baseline 'A' "
        "on per-query values, p-values Holm-adjusted over the comparisons of each measure."
    )  # the LaTeX table shows means and marks: no CI or d_z in its legend (issue 44)
    a, b, c = (f"{sy[s].mean():.4f}" for s in "ABC")
    body = [
        r"\begin{tabular}{lr}",
        r"\toprule",
        r"system & value \\",
        r"\midrule",
        f"A (baseline) & {a} \\\\",
        f"B & \\textbf{{{b}}}$^{{\\ddag}}$ \\\\",
        f"C & {c} \\\\",
        r"\bottomrule",
        r"\end{tabular}",
    ]
    head = [r"% requires \usepackage{booktabs}", r"\begin{table}[t]", r"\centering"]
    assert res.to_latex(caption="Run a_b", label="tab:x").split("\n") == [
        *head,
        *body,
        r"\caption{Run a\_b " + legend + " Bold: best mean.}",
        r"\label{tab:x}",
        r"\end{table}",
        "",
    ]
    assert res.to_latex().split("\n") == [
        *head, *body, r"\caption{" + legend + " Bold: best mean.}", r"\end{table}", ""
    ]  # fmt: skip
    # a weak mark (†) and a baseline that is also the best mean (bold, never marked)
    rng = np.random.default_rng(9)
    base = rng.random(40)
    weak = compare_rankers({"A": base + 0.006, "W": base + rng.normal(0, 0.05, 40)})
    assert weak.mark("W", "value") == "†"  # adjusted p = 0.034
    row_a, row_w = weak.to_latex().split("\n")[7:9]
    assert row_a == f"A (baseline) & \\textbf{{{(base + 0.006).mean():.4f}}} \\\\"
    assert row_w == f"W & {weak.mean['W']['value']:.4f}$^{{\\dag}}$ \\\\"


# ------------------------------------------------------- compare_rankers, rule by rule
# Each test below pins one rule of compare_rankers with an independent expectation (the paired
# tests called directly, Holm by hand, the messages in full), so that changing the rule fails.
def _three(q: int = 30, seed: int = 5) -> dict[str, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    base = rng.random(q)
    return {
        "A": {"ndcg": base, "map": base * 0.7},
        "B": {
            "ndcg": base + rng.normal(0.02, 0.05, q),
            "map": base * 0.7 + rng.normal(0.01, 0.04, q),
        },
        "C": {"ndcg": base + rng.normal(0.0, 0.05, q), "map": base * 0.7 + rng.normal(0, 0.04, q)},
    }


def _error_text(call, kind: type[Exception]) -> str:
    with pytest.raises(kind) as info:
        call()
    return str(info.value)


def test_compare_refuses_what_is_not_a_non_empty_mapping_in_full() -> None:
    want = (
        "compare_rankers needs a non-empty mapping {system name: per-query values}. Fix: pass "
        "e.g. {'A': evaluate(ds, a).per_query, 'B': evaluate(ds, b).per_query}"
    )
    assert _error_text(lambda: compare_rankers({}), DataFormatError) == want
    assert _error_text(lambda: compare_rankers([[0.1, 0.2]]), DataFormatError) == want


def test_compare_option_errors_in_full() -> None:
    sy = _three()
    cases = [
        (
            dict(test="anova"),
            "unknown test 'anova'; known: t, wilcoxon, sign, permutation, bootstrap, tukey",
        ),
        (dict(pairs="every"), "unknown pairs 'every'; known: baseline, all"),
        (
            dict(correction="hommel"),
            "unknown correction 'hommel'; known: holm, bonferroni, bh, by, none",
        ),
        (dict(family="system"), "unknown family 'system'; known: measure, all"),
        (
            dict(alpha_strong=0.0),
            "need 0 < alpha_strong <= alpha < 1, got alpha=0.05, alpha_strong=0.0",
        ),
        (dict(alpha=1.0), "need 0 < alpha_strong <= alpha < 1, got alpha=1.0, alpha_strong=0.01"),
        (dict(alpha=1.5), "need 0 < alpha_strong <= alpha < 1, got alpha=1.5, alpha_strong=0.01"),
        (
            dict(baseline="Z"),
            "unknown baseline 'Z'; systems: A, B, C. Fix: pass one of these names",
        ),
        (
            dict(measures=["ndcg", "p@5", "err"]),
            "system 'A' has no values for p@5, err; it has ndcg, map",
        ),
    ]
    for kwargs, want in cases:
        got = _error_text(
            lambda kw=kwargs: compare_rankers(sy, n_bootstrap=50, **kw), ConventionError
        )
        assert got == want, kwargs


def test_compare_data_errors_in_full() -> None:
    got = _error_text(
        lambda: compare_rankers({"A": {"ndcg": np.zeros(3)}, "B": {"map": np.zeros(3)}}),
        DataFormatError,
    )
    assert got == "the systems share no measure. Fix: evaluate every system with the same measures"
    got = _error_text(
        lambda: compare_rankers({"A": np.zeros(3), "B": np.zeros(4)}), DataFormatError
    )
    assert got == (
        "systems have different numbers of per-query values for value: A=3, B=4. Fix: evaluate "
        "every system on the same dataset (same queries, same order)"
    )


def test_compare_alpha_strong_may_equal_alpha() -> None:
    res = compare_rankers(_three(), alpha=0.05, alpha_strong=0.05, n_bootstrap=50)
    assert res.alpha == res.alpha_strong == 0.05
    # one threshold: every significant difference gets the strong mark
    assert {t.mark for t in res.tests} <= {"", "‡"}


def test_compare_shared_measures_in_the_first_systems_order() -> None:
    sy = {
        "A": {"ndcg": np.zeros(4), "map": np.ones(4), "p@5": np.ones(4)},
        "B": {"map": np.ones(4), "ndcg": np.zeros(4)},  # lacks p@5
        "C": {"p@5": np.ones(4), "map": np.ones(4), "ndcg": np.zeros(4)},
    }
    assert compare_rankers(sy, n_bootstrap=20).measures == ("ndcg", "map")
    sy2 = {"A": sy["A"], "C": sy["C"], "B": sy["B"]}  # the one without p@5 last
    assert compare_rankers(sy2, n_bootstrap=20).measures == ("ndcg", "map")
    sy3 = {"B": sy["B"], "A": sy["A"]}
    assert compare_rankers(sy3, n_bootstrap=20).measures == ("map", "ndcg")


def test_compare_measures_argument_selects_and_orders() -> None:
    res = compare_rankers(_three(), measures=["map"], n_bootstrap=50)
    assert res.measures == ("map",) and {t.measure for t in res.tests} == {"map"}
    res = compare_rankers(_three(), measures=("map", "ndcg"), n_bootstrap=50)
    assert res.measures == ("map", "ndcg")


def test_compare_values_are_converted_to_float64() -> None:
    """Exact fractions (or other numbers NumPy converts) are per-query values like floats."""
    from fractions import Fraction

    a = [Fraction(1, 2), Fraction(1, 3), Fraction(3, 4), Fraction(1, 5)]
    b = [Fraction(2, 3), Fraction(1, 2), Fraction(3, 4), Fraction(2, 5)]
    res = compare_rankers({"A": a, "B": b}, n_bootstrap=50)
    fa = np.array([float(x) for x in a])
    fb = np.array([float(x) for x in b])
    assert res.mean["A"]["value"] == pytest.approx(fa.mean(), rel=1e-15)
    t = res.get("B", "value")
    assert t is not None and t.diff == pytest.approx((fb - fa).mean(), rel=1e-15)
    res = compare_rankers({"A": {"m": a}, "B": {"m": b}}, n_bootstrap=50)
    assert res.mean["B"]["m"] == pytest.approx(fb.mean(), rel=1e-15)


def test_compare_pairs_all_with_the_first_system_as_baseline() -> None:
    res = compare_rankers(_three(), pairs="all", n_bootstrap=50)
    assert [(t.system, t.baseline) for t in res.tests if t.measure == "ndcg"] == [
        ("B", "A"),
        ("C", "A"),
        ("C", "B"),
    ]


@pytest.mark.parametrize("test", ["t", "permutation"])
def test_compare_numbers_are_those_of_the_paired_tests_called_directly(test: str) -> None:
    """Every number of a row equals the paired test, bootstrap and effect size called by hand
    with the options compare_rankers was given (not their defaults)."""
    sy = _three(q=40)
    opts = dict(confidence=0.9, n_bootstrap=700, bootstrap="percentile", seed=11)
    res = compare_rankers(sy, test=test, n_resamples=3000, correction="none", **opts)
    for t in res.tests:
        a, b = sy[t.system][t.measure], sy[t.baseline][t.measure]
        if test == "t":
            ref = paired_t_test(a, b)
        else:
            ref = permutation_test(a, b, n_resamples=3000, seed=11)
            assert ref.exact is False  # 40 differences: sampled, so n_resamples and seed count
        ci = bootstrap_ci(a, b, confidence=0.9, n_resamples=700, method="percentile", seed=11)
        assert (t.p_value, t.statistic, t.n) == (ref.p_value, ref.statistic, ref.n)
        assert t.p_adjusted == t.p_value  # correction="none"
        # the same resamples for every pair at once (a matrix product): equal up to the order
        # of the floating-point sums
        assert (t.ci_low, t.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12, abs=1e-15)
        assert t.effect_size == cohens_dz(a, b)
        assert t.mean_system == float(np.mean(a)) and t.mean_baseline == float(np.mean(b))
        assert t.diff == float(np.mean(a - b)) and t.test == test
    assert res.settings == {
        "pairs": "baseline",
        "bootstrap": "percentile",
        "n_bootstrap": 700,
        "n_resamples": 3000,
        "seed": 11,
    }


def test_compare_defaults_are_the_documented_ones() -> None:
    sy = _three(q=40)
    res = compare_rankers(sy, test="permutation")
    ref = compare_rankers(
        sy,
        test="permutation",
        n_resamples=10_000,
        n_bootstrap=10_000,
        seed=0,
        bootstrap="bca",
        confidence=0.95,
        correction="holm",
        family="measure",
    )
    assert res.tests == ref.tests
    assert res.settings == {
        "pairs": "baseline",
        "bootstrap": "bca",
        "n_bootstrap": 10_000,
        "n_resamples": 10_000,
        "seed": 0,
    }
    a, b = sy["B"]["ndcg"], sy["A"]["ndcg"]
    one = res.get("B", "ndcg")
    assert one is not None
    assert one.p_value == permutation_test(a, b, n_resamples=10_000, seed=0).p_value
    ci = bootstrap_ci(a, b, n_resamples=10_000, seed=0)
    assert (one.ci_low, one.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("family", ["measure", "all"])
def test_compare_holm_family(family: str) -> None:
    res = compare_rankers(_three(), family=family, n_bootstrap=50)
    assert res.family == family
    raw = [t.p_value for t in res.tests]
    # the two families give different adjusted values here (else this test could not tell them)
    assert holm_by_hand(raw) != holm_by_hand(raw[:2]) + holm_by_hand(raw[2:])
    if family == "all":
        assert [t.p_adjusted for t in res.tests] == pytest.approx(holm_by_hand(raw), rel=1e-12)
    else:
        for m in res.measures:
            idx = [i for i, t in enumerate(res.tests) if t.measure == m]
            want = holm_by_hand([raw[i] for i in idx])
            assert [res.tests[i].p_adjusted for i in idx] == pytest.approx(want, rel=1e-12)
    assert all(isinstance(t.p_adjusted, float) for t in res.tests)


def test_compare_correction_none_keeps_the_raw_p_values() -> None:
    res = compare_rankers(_three(), correction="none", family="all", n_bootstrap=50)
    assert [t.p_adjusted for t in res.tests] == [t.p_value for t in res.tests]
    assert res.correction == "none"


def test_compare_a_measure_without_values_warns_nothing() -> None:
    """A system whose values are all NaN has mean NaN and an empty difference: no NumPy
    'mean of empty slice' warning escapes (those means are taken only where values exist)."""
    a = np.array([np.nan, np.nan, np.nan])
    b = np.array([0.1, 0.2, 0.3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = compare_rankers({"A": a, "B": b}, n_bootstrap=50)
    assert math.isnan(res.mean["A"]["value"]) and res.n_queries["A"]["value"] == 0
    t = res.get("B", "value")
    assert t is not None and t.n == 0 and math.isnan(t.diff)


def test_compare_holm_families_keep_names_apart_exactly() -> None:
    """Measure names are compared as the strings they are: a name that differs from another
    only by a trailing NUL (which NumPy's string arrays and scalars drop) is its own family."""
    sy = _three()
    odd = {s: {"ndcg": v["ndcg"], "ndcg\x00": v["map"]} for s, v in sy.items()}
    res = compare_rankers(odd, n_bootstrap=50)
    plain = compare_rankers(sy, n_bootstrap=50)
    assert [t.p_adjusted for t in res.tests] == [t.p_adjusted for t in plain.tests]
