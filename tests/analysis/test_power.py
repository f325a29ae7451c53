"""The confidence interval and the queries-needed numbers of ndcglab.analysis.power, checked
against independent computations: the closed form written out here, scipy's one-sample t-test,
scipy's noncentral t written differently, and a simulation of paired t-tests."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ndcglab.analysis.power import paired_power, queries_needed
from ndcglab.errors import NdcglabError


def test_normal_approximation_is_the_closed_form() -> None:
    # n = ((z_{0.975} + z_{0.8}) · sd / δ)², rounded up: 1.959964 + 0.841621 = 2.801585
    for sd, delta in ((0.3, 0.05), (0.25, 0.007), (0.1, 0.1), (0.4, 0.02)):
        expect = math.ceil((2.8015852 * sd / delta) ** 2)
        assert queries_needed(sd, delta, exact=False) == expect
    # the textbook value: a standardised effect of 0.5 needs 32 pairs (normal) and 34 (exact t)
    assert queries_needed(1.0, 0.5, exact=False) == 32
    assert queries_needed(1.0, 0.5) == 34


def _power_by_nct(n: int, effect: float, alpha: float = 0.05) -> float:
    # written independently: 1 − P(−c ≤ T ≤ c), T ~ nct(n − 1, effect·√n)
    c = stats.t.isf(alpha / 2, n - 1)
    dist = stats.nct(n - 1, effect * math.sqrt(n))
    return 1.0 - (dist.cdf(c) - dist.cdf(-c))


@pytest.mark.parametrize("sd,delta", [(1.0, 0.5), (0.3, 0.1), (0.25, 0.04), (2.0, 3.0)])
def test_exact_n_is_the_smallest_with_enough_power(sd: float, delta: float) -> None:
    n = queries_needed(sd, delta)
    assert n is not None and n >= 2
    assert _power_by_nct(n, delta / sd) >= 0.8
    if n > 2:
        assert _power_by_nct(n - 1, delta / sd) < 0.8
    normal = queries_needed(sd, delta, exact=False)
    assert normal is not None and 0 <= n - normal <= 3


def test_exact_n_by_simulation() -> None:
    """Paired t-tests on simulated normal differences reject at the planned rate."""
    sd, delta = 0.3, 0.1
    n = queries_needed(sd, delta)
    assert n is not None
    rng = np.random.default_rng(0)
    reps = 20_000
    d = rng.normal(delta, sd, size=(reps, n))
    p = stats.ttest_1samp(d, 0.0, axis=1).pvalue
    rate = float((p < 0.05).mean())
    # the exact n has power ≥ 0.8 (and n − 1 has less): the simulated rate is close to 0.8
    assert 0.79 <= rate <= 0.84, rate
    d = rng.normal(delta, sd, size=(reps, n - 3))
    assert float((stats.ttest_1samp(d, 0.0, axis=1).pvalue < 0.05).mean()) < 0.8


def test_confidence_interval_is_the_t_interval() -> None:
    rng = np.random.default_rng(1)
    d = rng.normal(0.02, 0.3, size=106)
    d[5] = np.nan  # dropped
    res = paired_power(d, 0.007)
    ref = stats.ttest_1samp(d[~np.isnan(d)], 0.0).confidence_interval(0.95)
    assert res.n == 105
    assert res.ci_low == pytest.approx(ref.low, abs=1e-12)
    assert res.ci_high == pytest.approx(ref.high, abs=1e-12)
    assert res.mean == pytest.approx(np.nanmean(d))
    assert res.sd == pytest.approx(np.nanstd(d, ddof=1))
    assert res.n_needed == queries_needed(res.sd, 0.007)
    assert res.n_needed_normal == queries_needed(res.sd, 0.007, exact=False)
    assert res.n_needed is not None and res.n_needed > res.n and not res.detectable
    assert res.min_detectable == pytest.approx(2.8015852 * res.sd / math.sqrt(105), rel=1e-6)
    assert res.to_dict()["detectable"] is False


def test_edge_cases() -> None:
    assert queries_needed(0.3, 0.0) is None
    assert queries_needed(float("nan"), 0.1) is None
    assert queries_needed(0.0, 0.1) == 2
    assert queries_needed(0.3, -0.1) == queries_needed(0.3, 0.1)  # |δ|
    one = paired_power([0.1], 0.1)
    assert one.n == 1 and one.n_needed is None and math.isinf(one.ci_high)
    with pytest.raises(NdcglabError, match="alpha"):
        queries_needed(0.3, 0.1, alpha=1.5)
    with pytest.raises(NdcglabError, match="power"):
        paired_power([0.1, 0.2], 0.1, power=0.0)
