"""``bootstrap_ci`` against ``scipy.stats.bootstrap`` drawing from the same generator, so the two
must agree to float rounding (not only to Monte-Carlo error), and the edge rules of
``docs/analysis.md``: the number of resamples used, two-document samples, several resampling
batches, one resample, bad arguments.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

stats = pytest.importorskip("scipy.stats")

from ndcglab.analysis import bootstrap_ci  # noqa: E402
from ndcglab.errors import ConventionError  # noqa: E402


def _scipy(d: np.ndarray, method: str, n_resamples: int, seed: int, confidence: float) -> Any:
    kw = {
        "n_resamples": n_resamples,
        "method": "BCa" if method == "bca" else "percentile",
        "confidence_level": confidence,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's standard error of 1 resample
        try:
            res = stats.bootstrap((d,), np.mean, rng=np.random.default_rng(seed), **kw)
        except TypeError:  # scipy < 1.15 spells it random_state
            res = stats.bootstrap((d,), np.mean, random_state=np.random.default_rng(seed), **kw)
    return res.confidence_interval


def _skewed(n: int, seed: int = 5) -> np.ndarray:
    return np.random.default_rng(seed).exponential(size=n) - 0.4


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize(("n", "n_resamples"), [(25, 2000), (2, 500), (7, 1), (1000, 10_000)])
def test_same_draws_as_scipy(method: str, n: int, n_resamples: int) -> None:
    """Same seed, same draws: every resample must be used (none skipped or left unset) and the
    BCa acceleration must be the jackknife one (skewed data, so it is not 0). n = 2 has a
    one-value jackknife; n = 1000 with 10 000 resamples spans several internal batches."""
    if n_resamples == 1 and method == "bca":
        pytest.skip("scipy's BCa is undefined with one resample (see the test below)")
    d = _skewed(n)
    ours = bootstrap_ci(d, n_resamples=n_resamples, method=method, seed=3, confidence=0.9)
    ref = _scipy(d, method, n_resamples, 3, 0.9)
    assert ours.low == pytest.approx(float(ref.low), rel=1e-12, abs=1e-14)
    assert ours.high == pytest.approx(float(ref.high), rel=1e-12, abs=1e-14)
    assert ours.estimate == pytest.approx(float(d.mean()), rel=1e-15)
    assert ours.n_resamples == n_resamples and ours.n == n
    assert ours.method == method and ours.confidence == 0.9


def test_percentile_interval_from_resample_means_computed_here() -> None:
    """An independent loop: draw the resample indices with the same generator, take the means
    and the percentile quantiles; the first resample counts like every other."""
    d = np.array([0.3, -0.1, 0.8, 0.05, -0.6, 0.2, 0.9, -0.2])
    rng = np.random.default_rng(11)
    idx = rng.integers(0, d.size, size=(300, d.size))
    means = np.array([d[row].mean() for row in idx])
    lo, hi = np.quantile(means, [0.025, 0.975])
    ours = bootstrap_ci(d, n_resamples=300, method="percentile", seed=11)
    assert ours.low == pytest.approx(lo, rel=1e-12) and ours.high == pytest.approx(hi, rel=1e-12)


def test_default_number_of_resamples_is_ten_thousand() -> None:
    d = _skewed(10)
    ours = bootstrap_ci(d, seed=1)
    assert ours.n_resamples == 10_000 and ours.method == "bca"
    ref = _scipy(d, "bca", 10_000, 1, 0.95)
    assert ours.low == pytest.approx(float(ref.low), rel=1e-12)


def test_one_resample_bca_falls_back_to_that_resample() -> None:
    """With one resample the BCa bias correction is infinite; the interval is then the percentile
    one, i.e. the single resample mean at both ends."""
    d = np.array([0.1, 0.7, -0.4, 0.25, 0.6])
    seed = next(
        s
        for s in range(100)
        if d[np.random.default_rng(s).integers(0, d.size, size=(1, d.size))].mean() != d.mean()
    )
    only = float(d[np.random.default_rng(seed).integers(0, d.size, size=(1, d.size))].mean())
    ci = bootstrap_ci(d, n_resamples=1, method="bca", seed=seed)
    assert ci.low == pytest.approx(only, rel=1e-15) and ci.high == pytest.approx(only, rel=1e-15)


def test_two_different_values_give_a_real_interval() -> None:
    ci = bootstrap_ci(np.array([0.0, 1.0]), n_resamples=400, method="percentile", seed=0)
    assert ci.low == 0.0 and ci.high == 1.0 and ci.estimate == 0.5


def test_constant_differences_give_a_point_interval() -> None:
    d = np.full(7, 0.1)
    for method in ("percentile", "bca"):
        ci = bootstrap_ci(d, n_resamples=50, method=method, seed=0)
        assert ci.low == ci.high == ci.estimate == float(d.mean())


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 1.5}, "confidence"),
        ({"confidence": 0.0}, "confidence"),
        ({"method": "basic"}, "method"),
        ({"n_resamples": 0}, "n_resamples"),
    ],
)
def test_bad_arguments_say_which(kwargs: dict, word: str) -> None:
    with pytest.raises(ConventionError, match=word):
        bootstrap_ci(_skewed(5), **kwargs)
