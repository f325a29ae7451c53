"""Paired tests and the comparison table on inputs where a changed operator or constant shows:
every expected value is computed here by hand, by enumeration or with a loop written here that
draws from ``numpy.random.default_rng`` as ``docs/analysis.md`` states, never with ndcglab.

Each test names the rule it pins; together they cover the rules of ``paired_tests.py`` and
``comparison.py`` that the older tests left open (found by mutation testing, see CONTRIBUTING.md).
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from ndcglab.analysis.comparison import (
    ComparisonResult,
    PairedComparison,
    significance_mark,
)
from ndcglab.analysis.paired_tests import (
    bootstrap_ci,
    cohens_dz,
    holm,
    paired_differences,
    paired_t_test,
    permutation_test,
)
from ndcglab.errors import ConventionError, DataFormatError


# ----------------------------------------------------------------------------- helpers
def _sign_flip_counts(d: list[float], observed: float) -> dict[str, int]:
    """How many of the 2^n sign vectors are at least as extreme as ``observed``, by brute force
    with the documented float tolerance 1e-12 * max(1, |T|), per alternative."""
    n = len(d)
    w = [x / n for x in d]
    tol = 1e-12 * max(1.0, abs(observed))
    out = {"two-sided": 0, "greater": 0, "less": 0}
    for signs in itertools.product((1.0, -1.0), repeat=n):
        t = float(np.dot(np.array(signs), np.array(w)))
        out["two-sided"] += abs(t) >= abs(observed) - tol
        out["greater"] += t >= observed - tol
        out["less"] += t <= observed + tol
    return out


def _random_sign_p(d: np.ndarray, n_resamples: int, seed: int, batches: list[int]) -> float:
    """The sampled sign-flip p-value: ``batches`` calls of ``rng.integers(0, 2, int8)``, one row
    per sign vector, ``p = (1 + #{|T*| >= |T|}) / (1 + B)`` (two-sided)."""
    assert sum(batches) == n_resamples
    rng = np.random.default_rng(seed)
    n = d.size
    obs = float(d.mean())
    tol = 1e-12 * max(1.0, abs(obs))
    count = 0
    for size in batches:
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8).astype(np.float64) * 2 - 1
        count += int(np.count_nonzero(np.abs(signs @ d / n) >= abs(obs) - tol))
    return (1 + count) / (1 + n_resamples)


# ----------------------------------------------------------------------------- differences
def test_paired_differences_are_float64_of_the_inputs() -> None:
    a32 = np.array([0.1, 0.7], dtype=np.float32)
    b32 = np.array([0.2, 0.3], dtype=np.float32)
    d = paired_differences(a32, b32)
    assert d.dtype == np.float64
    assert d.tolist() == [float(a32[0]) - float(b32[0]), float(a32[1]) - float(b32[1])]
    alone = paired_differences(a32)
    assert alone.dtype == np.float64 and alone.tolist() == [float(a32[0]), float(a32[1])]
    # exact rationals and numeric text are converted to float64 first (a - b is then a float)
    d2 = paired_differences([1.0, 0.5], [Fraction(1, 3), "0.25"])
    assert d2.dtype == np.float64 and d2.tolist() == [1.0 - 1 / 3, 0.25]
    d3 = paired_differences(["0.5", Fraction(1, 4)], [0.25, 0.0])
    assert d3.tolist() == [0.25, 0.25]


def test_paired_differences_length_error_says_the_fix() -> None:
    with pytest.raises(DataFormatError) as info:
        paired_differences([1.0, 2.0], [1.0])
    assert info.value.fix == (
        "give both systems' per-query values for the same queries, in the same order"
    )


def test_unknown_alternative_names_the_known_ones() -> None:
    for fn in (paired_t_test, permutation_test):
        with pytest.raises(
            ConventionError,
            match=r"^unknown alternative 'sideways'; known: two-sided, greater, less$",
        ):
            fn([0.1, 0.2], alternative="sideways")


# ----------------------------------------------------------------------------- t-test
def test_t_test_keeps_name_and_alternative_on_every_path() -> None:
    few = paired_t_test([0.3], alternative="less")
    assert few.test == "t" and few.df is None and math.isnan(few.p_value) and few.n == 1
    zero = paired_t_test([0.2, 0.4], [0.2, 0.4], alternative="less")
    assert (zero.test, zero.alternative, zero.p_value, zero.statistic) == ("t", "less", 1.0, 0.0)
    flat = paired_t_test([0.5, 0.5, 0.5], alternative="greater")
    assert (flat.test, flat.alternative, flat.statistic, flat.p_value) == (
        "t", "greater", math.inf, 0.0
    )  # fmt: skip
    gen = paired_t_test([0.1, 0.5, 0.2], alternative="less")
    assert gen.test == "t" and gen.alternative == "less" and gen.df == 2.0
    # by hand: mean 0.8/3, sd = sqrt(Σ (d - mean)^2 / 2), t = mean / (sd / sqrt 3)
    mean = 0.8 / 3
    sd = math.sqrt(sum((x - mean) ** 2 for x in (0.1, 0.5, 0.2)) / 2)
    assert gen.statistic == pytest.approx(mean / (sd / math.sqrt(3)), rel=1e-12)


def test_t_test_constant_differences_one_sided() -> None:
    # constant non-zero differences: t = ±inf; one-sided p = 0 in the direction of the mean,
    # 1 against it
    up = [0.25, 0.25, 0.25, 0.25]
    assert paired_t_test(up, alternative="greater").p_value == 0.0
    assert paired_t_test(up, alternative="less").p_value == 1.0
    down = [-0.25, -0.25, -0.25]
    assert paired_t_test(down, alternative="less").p_value == 0.0
    assert paired_t_test(down, alternative="greater").p_value == 1.0
    assert paired_t_test(down).statistic == -math.inf


def test_t_test_constant_rule_is_relative_to_the_scale() -> None:
    # differences of 1e6 that differ by one unit in the last place: constant up to 1e-12
    # relative, so t = +inf and p = 0 (not a finite t from a variance made of rounding)
    x = 1e6
    y = np.nextafter(x, 2e6)
    r = paired_t_test([x, y, x])
    assert r.statistic == math.inf and r.p_value == 0.0
    # tiny equal differences (1e-12 * scale underflows to 0): still the constant rule, t = inf,
    # without handing scipy data it warns about (catastrophic cancellation)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tiny = paired_t_test([1e-320, 1e-320, 1e-320])
    assert tiny.statistic == math.inf and tiny.p_value == 0.0


# ----------------------------------------------------------------------------- permutation
def test_permutation_empty_and_all_zero_results() -> None:
    empty = permutation_test([], alternative="less")
    assert math.isnan(empty.statistic) and math.isnan(empty.p_value)
    assert (empty.n, empty.alternative, empty.test) == (0, "less", "permutation")
    zero = permutation_test([0.0, 0.0, 0.0], alternative="greater")
    assert (zero.statistic, zero.p_value, zero.n, zero.exact) == (0.0, 1.0, 3, True)
    assert zero.alternative == "greater"


def test_permutation_one_non_zero_difference_one_sided() -> None:
    # d = (0.3): T = 0.3, T* ∈ {0.3, -0.3}; P(T* >= T) = 1/2, P(T* <= T) = 1
    assert permutation_test([0.3], alternative="greater").p_value == 0.5
    assert permutation_test([0.3], alternative="less").p_value == 1.0
    assert permutation_test([0.3]).p_value == 1.0
    # with zeros: T = 0.1, T* ∈ {±0.1}: the zeros change nothing
    assert permutation_test([0.3, 0.0, 0.0], alternative="greater").p_value == 0.5


def test_permutation_exact_result_fields() -> None:
    d = [1.0, 1.0, -0.5]
    obs = float(np.mean(d))
    for alt in ("two-sided", "greater", "less"):
        r = permutation_test(d, alternative=alt)
        assert (r.statistic, r.alternative, r.exact, r.n) == (obs, alt, True, 3)
        assert r.p_value == _sign_flip_counts(d, obs)[alt] / 8
    # the differences equal to 1 count as non-zero: by hand, T = 0.5 and the sign vectors with
    # |T*| >= 0.5 are (+,+,±) and (−,−,±): p = 4/8
    assert permutation_test(d).p_value == 0.5


def test_permutation_tolerance_boundary_exactly() -> None:
    # T = (x + y)/2 and the sign vector (+, −) gives T* = (x − y)/2 = T − y, with y chosen so
    # that T* equals T − 1e-12 (the documented tolerance, max(1, |T|) = 1) in floating point:
    # it counts as "at least as extreme"
    x, y = 0.20356005022119253, 1.0000000000000062e-12
    obs = float(np.mean([x, y]))
    assert float(np.dot([1.0, -1.0], [x / 2, y / 2])) == obs - 1e-12
    assert permutation_test([x, y]).p_value == 1.0  # all four sign vectors
    assert permutation_test([x, y], alternative="greater").p_value == 0.5  # (+,+), (+,−)
    assert permutation_test([-x, -y], alternative="less").p_value == 0.5  # (−,−)… mirrored


def test_permutation_tolerance_is_relative_above_one() -> None:
    # |T| > 1: the all-plus sign vector's T* = Σ d_i/n is below T = mean(d) by a rounding
    # error of about 1e-13; the tolerance 1e-12 * |T| keeps it "as extreme"
    d = [5853.086, 6835.972, 5349.0]
    obs = float(np.mean(d))
    assert float(np.dot(np.ones(3), np.array(d) / 3)) < obs  # the rounding the rule absorbs
    assert permutation_test(d, alternative="greater").p_value == 1 / 8
    assert permutation_test(d).p_value == 2 / 8
    # |T| < 1 and a T* below T by 1.5e-12 (more than the tolerance 1e-12): not counted
    assert permutation_test([0.5, 1.5e-12], alternative="greater").p_value == 0.25


def test_permutation_auto_exact_up_to_n_resamples() -> None:
    # m = 17 non-zero differences: exact under "auto" exactly when 2^17 <= n_resamples
    d = np.linspace(0.05, 0.9, 17)
    r = permutation_test(d, n_resamples=2**17)
    assert r.exact is True and r.n_resamples is None
    # all positive and distinct: only the all-plus and all-minus vectors reach |T|
    assert r.p_value == 2 / 2**17
    s = permutation_test(d, n_resamples=2**17 - 1)
    assert s.exact is False and s.n_resamples == 2**17 - 1


def test_permutation_exact_limit_is_24_differences() -> None:
    # exact=True enumerates up to m = 24 (2^24 sign vectors): with all d equal, only the two
    # constant sign vectors reach |T| = 1
    r = permutation_test(np.ones(24), exact=True)
    assert r.p_value == 2 / 2**24 and r.exact is True
    with pytest.raises(
        ConventionError,
        match=r"exact enumeration of 2\^25 sign vectors is too large\. Fix: use exact=False "
        r"\(random sign vectors\) or exact='auto'",
    ):
        permutation_test(np.ones(25), exact=True)


def test_permutation_argument_errors_say_what() -> None:
    with pytest.raises(ConventionError, match=r"exact must be 'auto', True or False, got 'yes'"):
        permutation_test([0.1, 0.2], exact="yes")
    with pytest.raises(ConventionError, match=r"n_resamples must be at least 1, got 0"):
        permutation_test([0.1, 0.2], exact=False, n_resamples=0)


def test_permutation_sampled_defaults_and_fields() -> None:
    d = np.random.default_rng(4).normal(0.05, 0.2, 30)
    r = permutation_test(d, exact=False, alternative="less")
    assert (r.n_resamples, r.exact, r.alternative, r.statistic) == (
        10_000, False, "less", float(d.mean())
    )  # fmt: skip


def test_permutation_sampled_p_value_from_the_documented_draws() -> None:
    rng = np.random.default_rng(7)
    d = rng.normal(0.02, 0.3, 40)
    # one batch: the n_resamples sign vectors of one call
    for b in (1, 37, 500):
        assert permutation_test(d, exact=False, n_resamples=b, seed=3).p_value == pytest.approx(
            _random_sign_p(d, b, 3, [b]), abs=0, rel=1e-15
        )
    # several batches of at most 2_000_000 // n sign vectors (n = 3000: 666 per batch)
    big = rng.normal(0.0, 0.3, 3000)
    got = permutation_test(big, exact=False, n_resamples=1000, seed=5).p_value
    assert got == _random_sign_p(big, 1000, 5, [666, 334])


def test_permutation_sampled_counts_every_resample() -> None:
    # T = 0: every sign vector is at least as extreme, so p = (1 + B) / (1 + B) = 1 exactly
    for b in (1, 10, 2500):
        r = permutation_test([0.5, -0.5, 0.25, -0.25], exact=False, n_resamples=b)
        assert r.p_value == 1.0 and r.n_resamples == b


def test_permutation_batches_are_of_two_million_over_n() -> None:
    # n = 3: batches of 2_000_000 // 3 = 666_666 sign vectors, then 1 (a batch of 666_667 would
    # draw another stream: the generator's bytes are used in groups of four)
    d = np.array([0.4, -0.1, 0.25])
    got = permutation_test(d, exact=False, n_resamples=666_667, seed=1).p_value
    assert got == _random_sign_p(d, 666_667, 1, [666_666, 1])
    # n beyond 2_000_000: one sign vector per batch
    huge = np.random.default_rng(8).normal(0.0, 1.0, 2_000_001)
    got = permutation_test(huge, exact=False, n_resamples=2, seed=4).p_value
    assert got == _random_sign_p(huge, 2, 4, [1, 1]) == 2 / 3  # one of the two is as extreme


# ----------------------------------------------------------------------------- effect size
def test_cohens_dz_all_zero_differences_is_zero() -> None:
    assert cohens_dz([0.3, 0.5], [0.3, 0.5]) == 0.0
    assert cohens_dz([0.0, 0.0, 0.0]) == 0.0
    assert cohens_dz([-0.2, -0.2]) == -math.inf


# ----------------------------------------------------------------------------- bootstrap
def test_bca_with_underflowing_jackknife_is_percentile_like() -> None:
    # differences of 1e-200: the jackknife U_i are about 1e-200, U² underflows to 0, so the
    # acceleration is 0 by the rule "a = 0 when Σ U² = 0" (no division by zero)
    d = np.array([1e-200, 2e-200, 4e-200, 3e-200])
    ci = bootstrap_ci(d, method="bca", n_resamples=2000, seed=1)
    assert math.isfinite(ci.low) and math.isfinite(ci.high)
    # by hand: with a = 0 the BCa percentiles are Φ(2 z0 ± 1.96); z0 from the bootstrap means
    from scipy.special import ndtr, ndtri

    rng = np.random.default_rng(1)
    means = d[rng.integers(0, 4, size=(2000, 4))].mean(axis=1)
    est = float(d.mean())
    share = (np.count_nonzero(means < est) + np.count_nonzero(means <= est)) / 4000
    z0 = float(ndtri(share))
    q = [float(ndtr(z0 + (z0 + z))) for z in (float(ndtri(0.025)), float(ndtri(0.975)))]
    lo, hi = np.quantile(means, q)
    assert (ci.low, ci.high) == (float(lo), float(hi))


# ----------------------------------------------------------------------------- Holm
def test_holm_computes_in_float64_whatever_the_input_dtype() -> None:
    p32 = np.array([0.013, 0.021, 0.04], dtype=np.float32)
    got = holm(p32)
    assert got.dtype == np.float64
    f = [float(v) for v in p32]
    a1 = min(1.0, 3 * f[0])
    a2 = max(a1, min(1.0, 2 * f[1]))
    a3 = max(a2, min(1.0, 1 * f[2]))
    assert got.tolist() == [a1, a2, a3]
    # exact rationals are converted to float64 first
    rationals: list = [Fraction(1, 100), Fraction(1, 50)]
    assert holm(rationals).tolist() == [0.02, 0.02]


# ----------------------------------------------------------------------------- comparison
def test_significance_mark_thresholds_are_strict() -> None:
    assert significance_mark(0.05, 0.05, 0.01) == ""
    assert significance_mark(0.01, 0.05, 0.01) == "†"
    assert significance_mark(0.0099, 0.05, 0.01) == "‡"
    assert significance_mark(math.nan, 0.05, 0.01) == ""


def _pc(system: str, baseline: str, measure: str, p: float, mark: str) -> PairedComparison:
    return PairedComparison(
        system=system, baseline=baseline, measure=measure, n=3, mean_system=0.5,
        mean_baseline=0.4, diff=0.1, ci_low=0.05, ci_high=0.15, effect_size=1.25,
        statistic=2.0, p_value=p, p_adjusted=p, mark=mark, test="t",
    )  # fmt: skip


def _result() -> ComparisonResult:
    """Three systems, two measures; C's mean on ``m2`` and every mean on ``m3`` are NaN."""
    nan = math.nan
    return ComparisonResult(
        systems=("A", "B", "C"),
        measures=("m1", "m2", "m3"),
        baseline="A",
        mean={
            "A": {"m1": 0.4, "m2": 0.3, "m3": nan},
            "B": {"m1": 0.5, "m2": 0.2, "m3": nan},
            "C": {"m1": 0.45, "m2": nan, "m3": nan},
        },
        n_queries={s: {"m1": 3, "m2": 3, "m3": 0} for s in "ABC"},
        tests=[
            _pc("B", "A", "m1", 0.004, "‡"),
            _pc("C", "A", "m1", 0.03, "†"),
            _pc("B", "C", "m1", 0.2, ""),
        ],
        test="t",
        correction="holm",
        family="measure",
        alpha=0.05,
        alpha_strong=0.01,
        confidence=0.95,
        settings={"bootstrap": "bca"},
    )


def test_get_and_mark_with_other_baselines_and_missing_tests() -> None:
    res = _result()
    got = res.get("B", "m1", baseline="C")
    assert got is not None and got.baseline == "C" and got.p_value == 0.2
    assert res.get("B", "m1").p_value == 0.004  # type: ignore[union-attr]
    assert res.get("B", "m2", baseline="C") is None
    assert res.mark("B", "m2") == ""  # no test on m2
    assert res.mark("nobody", "m1") == ""


def test_table_writes_n_a_for_missing_means() -> None:
    header, rows = _result().table()
    assert header == ["system", "m1", "m2", "m3"]
    assert rows == [
        ["A (baseline)", "0.4000", "0.3000", "n/a"],
        ["B", "0.5000‡", "0.2000", "n/a"],
        ["C", "0.4500†", "n/a", "n/a"],
    ]


def test_markdown_details_alignment() -> None:
    lines = _result().to_markdown(details=True).split("\n")
    # means table: first column left, the others right; details: three text columns left
    assert lines[1] == "| --- | ---: | ---: | ---: |"
    rule = [ln for ln in lines if ln.startswith("| --- | --- |")]
    assert rule == ["| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]


def test_latex_with_a_measure_where_every_mean_is_missing() -> None:
    tex = _result().to_latex()
    rows = [ln for ln in tex.split("\n") if ln.endswith(r"\\") and not ln.startswith("system")]
    assert rows == [
        r"A (baseline) & 0.4000 & \textbf{0.3000} & n/a \\",
        r"B & \textbf{0.5000}$^{\ddag}$ & 0.2000 & n/a \\",
        r"C & 0.4500$^{\dag}$ & n/a & n/a \\",
    ]


def test_csv_leaves_missing_numbers_empty() -> None:
    lines = _result().to_csv().split("\n")
    assert lines[0].startswith("# ")
    body = [ln for ln in lines[2:] if ln]
    assert body[2] == "A,m3,,0,,,,,,,,,,"
    assert body[4] == "B,m2,0.2,3,,,,,,,,,,"  # B has no test on m2
    assert body[7] == "C,m2,,3,,,,,,,,,,"
    assert body[3] == "B,m1,0.5,3,A,0.1,0.05,0.15,1.25,2.0,0.004,0.004,‡,t"


def test_export_refuses_an_unknown_suffix_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(
        ConventionError,
        match=r"cannot tell the table format of '.*t\.txt'\. Fix: end the file name in \.md, "
        r"\.tex, \.csv, \.html or \.json$",
    ):
        _result().export(tmp_path / "t.txt")
