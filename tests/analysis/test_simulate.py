"""The simulator of the i.i.d. model against an independent slow implementation, and the limits
of Wang et al. (2013) against simulation (fixed seeds).

Convergence rates matter for the tolerances: r^−β (0<β<1) and the cut-off versions with
power discounts settle at rate ~n^−(1−β); anything with a log discount or 1/r settles like
1/log n (for ybar(s) = s and 1/r the exact finite-n mean is (H_n − 1)/H_{n/2}, 0.978 at
n = 10^6 against the limit 1).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ndcglab.analysis.limits import GradedModel, limit_power
from ndcglab.analysis.simulate import (
    convergence_table,
    simulate_ndcg,
    uniform_order_statistics,
)
from ndcglab.errors import ConventionError


def ident(s):
    return np.asarray(s, dtype=float)


def middling(s):
    """Bounded away from 0 and 1, as Theorem 6 requires: 0.2 + 0.6 s (p = 1/2, ybar(1) = 0.8)."""
    return 0.2 + 0.6 * np.asarray(s, dtype=float)


def concave(s):
    """1 − (1 − s)^3: relevant documents concentrate at the top (ybar(1) = 1, p = 3/4)."""
    return 1.0 - (1.0 - np.asarray(s, dtype=float)) ** 3


def graded() -> GradedModel:
    half = lambda s: np.asarray(s, dtype=float) / 2  # noqa: E731
    return GradedModel(labels=(0, 1, 2), probabilities=[lambda s: 1 - np.asarray(s), half, half])


def harmonic(n: int) -> float:
    return float(np.sum(1.0 / np.arange(1, n + 1)))


# ----------------------------------------------------------------------------- the simulator
def test_uniform_order_statistics() -> None:
    u = uniform_order_statistics(4000, np.random.default_rng(0))
    assert np.all(np.diff(u) <= 0) and 0 < u[-1] and u[0] < 1
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    asc = uniform_order_statistics(10, np.random.default_rng(1), descending=False)
    assert np.all(np.diff(asc) >= 0)


def _slow_ndcg(labels_by_score: list[float], gain, disc) -> float:
    """NDCG of a list given in ranked order, the textbook way."""
    dcg = sum(gain(y) * disc(r) for r, y in enumerate(labels_by_score, start=1))
    ideal = sorted(labels_by_score, key=gain, reverse=True)
    idcg = sum(gain(y) * disc(r) for r, y in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


@pytest.mark.parametrize(
    ("model", "spec", "gain", "disc"),
    [
        (ident, "ndcg(discount=power:0.5)", lambda y: 2**y - 1, lambda r: r**-0.5),
        (graded(), "ndcg", lambda y: 2**y - 1, lambda r: 1 / np.log2(1 + r)),
        (graded(), "ndcg(gain=linear,discount=zipf)", lambda y: y, lambda r: 1 / r),
    ],
)
def test_simulator_distribution_matches_a_slow_independent_one(model, spec, gain, disc) -> None:
    """Mean and sd of NDCG over many lists of size 6: the simulator against a slow sampler
    written here (uniform scores, sort, categorical labels, textbook NDCG)."""
    n, draws = 6, 4000
    res = simulate_ndcg(model, [n], spec, draws=draws, seed=1)
    rng = np.random.default_rng(123)
    labels = np.array(model.labels) if isinstance(model, GradedModel) else np.array([0.0, 1.0])
    slow = []
    for _ in range(draws):
        s = np.sort(rng.random(n))[::-1]
        if isinstance(model, GradedModel):
            probs = model.probs(s)
            y = [labels[rng.choice(len(labels), p=row)] for row in probs]
        else:
            y = [1.0 if rng.random() < model(si) else 0.0 for si in s]
        slow.append(_slow_ndcg(y, gain, disc))
    slow = np.array(slow)
    se = np.sqrt(res.values.var() / draws + slow.var() / draws)
    assert abs(res.mean[0] - slow.mean()) < 4 * se
    assert res.std[0] == pytest.approx(slow.std(), rel=0.1)


def test_simulator_is_seeded_and_nested_prefixes() -> None:
    a = simulate_ndcg(ident, [50, 500], "ndcg", draws=3, seed=4)
    b = simulate_ndcg(ident, [50, 500], "ndcg", draws=3, seed=4)
    np.testing.assert_array_equal(a.values, b.values)
    nested = simulate_ndcg(ident, [1, 10, 100, 1000], "ndcg@0.2n", draws=2, seed=4, nested=True)
    assert nested.nested and nested.values.shape == (2, 4)
    perfect = simulate_ndcg(lambda s: (np.asarray(s) > 0.5) * 1.0, [10, 1000], "ndcg", draws=5)
    np.testing.assert_allclose(perfect.values[perfect.values > 0], 1.0)
    import math

    scalar_only = simulate_ndcg(lambda s: math.sqrt(s), [200], "ndcg", draws=2, seed=1)
    vectorised = simulate_ndcg(np.sqrt, [200], "ndcg", draws=2, seed=1)
    np.testing.assert_array_equal(scalar_only.values, vectorised.values)
    with pytest.raises(ConventionError, match="lie in"):
        simulate_ndcg(lambda s: 2 * np.asarray(s), [10], "ndcg")
    with pytest.raises(ConventionError):
        simulate_ndcg(ident, [10], "map")
    with pytest.raises(ConventionError):
        simulate_ndcg(ident, [0], "ndcg")


# ----------------------------------------------------------------------------- the theorems
def test_theorem3_power_half_within_001_at_a_million() -> None:
    """r^−1/2, binary labels, ybar(s) = s: simulated NDCG at n = 10^6 within 0.01 of the limit
    2^(1/2)/1.5 = 0.9428 (observed: ~0.9429)."""
    res = simulate_ndcg(ident, [10**6], "ndcg(discount=power:0.5)", draws=1, seed=0)
    assert res.limit is not None and res.limit.theorem == "3"
    assert res.limit.value == pytest.approx(2**0.5 / 1.5)
    assert abs(res.values[0, 0] - res.limit.value) < 0.01
    assert abs(res.values[0, 0] - res.limit.value) < 0.002  # it is in fact much closer


def test_theorem5_zipf_within_001_at_a_million() -> None:
    """1/r, binary labels, ybar(s) = 1 − (1 − s)^3: within 0.01 of the limit ybar(1) = 1."""
    res = simulate_ndcg(concave, [10**6], "ndcg(discount=zipf)", draws=2, seed=0)
    assert res.limit is not None and res.limit.theorem == "5" and res.limit.value == 1.0
    assert abs(res.mean[0] - 1.0) < 0.01


def test_theorem5_zipf_converges_like_one_over_log_n() -> None:
    """For ybar(s) = s the exact finite-n mean is (H_n − 1)/H_{n/2} (E[Y_(r)] = (n+1−r)/(n+1)):
    0.966, 0.973, 0.978 at 10^4, 10^5, 10^6 — the gap to the limit 1 closes only like 1/log n."""
    sizes = [10**4, 10**5, 10**6]
    res = simulate_ndcg(ident, sizes, "ndcg(discount=zipf)", draws=2, seed=3)
    want = [(harmonic(n) - 1) / harmonic(n // 2) for n in sizes]
    np.testing.assert_allclose(res.mean, want, atol=0.004)
    gap = 1.0 - res.mean
    assert gap[0] > gap[1] > gap[2] > 0.015


def test_theorem6_exp2_does_not_settle() -> None:
    """2^−r with ybar bounded away from 0 and 1: the spread across draws does not shrink from
    n = 10^2 to 10^4, while r^−1/2's shrinks by about 10 (≈ √100)."""
    sizes = [100, 10_000]
    fast = simulate_ndcg(middling, sizes, "ndcg(discount=exp:2)", draws=40, seed=5)
    slow = simulate_ndcg(middling, sizes, "ndcg(discount=power:0.5)", draws=40, seed=5)
    assert fast.limit is not None and not fast.limit.converges and fast.limit.theorem == "6"
    ratio_fast = fast.std[1] / fast.std[0]
    ratio_slow = slow.std[1] / slow.std[0]
    assert ratio_fast > 0.6
    assert ratio_slow < 0.25
    assert fast.std[1] > 0.1  # NDCG keeps jumping by a tenth or more


def test_theorem1_log_tends_to_one_slowly() -> None:
    res = simulate_ndcg(ident, [10**3, 10**4, 10**5], "ndcg", draws=2, seed=6)
    assert res.limit is not None and res.limit.value == 1.0 and res.limit.theorem == "1"
    gap = 1.0 - res.mean
    assert gap[0] > gap[1] > gap[2] > 0
    assert res.mean[-1] > 0.97


def test_theorem7_sublinear_cutoff() -> None:
    res = simulate_ndcg(
        middling, [10**3, 10**6], "ndcg", cutoff=lambda n: int(n**0.5), draws=4, seed=7
    )
    assert res.limit is not None and res.limit.theorem == "7"
    assert abs(res.mean[-1] - 0.8) < 0.03


@pytest.mark.parametrize(
    ("spec", "theorem", "tol"),
    [
        ("ndcg@0.2n", "8", 0.015),
        ("ndcg@0.8n", "8", 0.02),
        ("ndcg(discount=power:0.5)@0.2n", "9", 0.005),
        ("ndcg(discount=power:0.5)@0.8n", "9", 0.005),
    ],
)
def test_theorems_8_9_cutoff_fraction(spec: str, theorem: str, tol: float) -> None:
    res = simulate_ndcg(ident, [10**5], spec, draws=2, seed=8)
    assert res.limit is not None and res.limit.theorem == theorem
    assert abs(res.mean[0] - res.limit.value) < tol


@pytest.mark.parametrize(
    ("spec", "theorem", "n", "tol", "cut"),
    [
        ("ndcg(discount=power:0.5)", "10", 10**6, 0.004, None),  # observed gap ~0.0005
        ("ndcg(discount=power:0.5)@0.4n", "13", 10**6, 0.004, None),  # ~0.0005
        ("ndcg@0.4n", "12", 10**5, 0.02, None),  # ~0.009: log discount, 1/log n
        ("ndcg", "11", 10**5, 0.04, "sqrt"),  # k = 316: noise ~0.016
    ],
)
def test_graded_theorems_10_to_13(spec: str, theorem: str, n: int, tol: float, cut) -> None:
    res = simulate_ndcg(
        graded(),
        [n],
        spec,
        draws=1 if n > 10**5 else 3,
        seed=9,
        cutoff=(lambda n: int(n**0.5)) if cut else None,
    )
    assert res.limit is not None and res.limit.theorem == theorem
    assert abs(res.mean[0] - res.limit.value) < tol


def test_convergence_table_and_plot(tmp_path) -> None:
    rows = convergence_table(
        ident, ["ndcg(discount=power:0.5)", "ndcg(discount=exp:2)"], sizes=[100, 1000], draws=2
    )
    assert rows[0]["theorem"] == "3"
    assert rows[0]["limit"] == pytest.approx(limit_power(ident, 0.5))
    assert np.isnan(rows[1]["limit"]) and rows[1]["theorem"] == "6"
    pytest.importorskip("matplotlib")
    res = simulate_ndcg(ident, [100, 1000, 10_000], "ndcg(discount=power:0.5)", draws=3)
    ax = res.plot()
    assert ax.get_xscale() == "log" and "limit (Thm 3)" in ax.get_legend().get_texts()[1].get_text()
    ax.figure.savefig(tmp_path / "sim.png")
    import matplotlib.pyplot as plt

    plt.close("all")


# ----------------------------------------------------------------------------- measure strings
@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("ndcg(gian=linear)", "unknown parameter 'gian'"),
        ("ndcg(ties=bogus)", "unknown tie rule 'bogus'"),
        ("ndcg(rounding=up)@0.2n", "unknown rounding rule"),
    ],
)
def test_simulator_reads_measures_with_parse_measure(spec: str, needle: str) -> None:
    """A misspelt option or a bad value is an error (SpecError / ConventionError)."""
    from ndcglab.errors import NdcglabError

    with pytest.raises(NdcglabError, match=needle):
        simulate_ndcg(ident, [10], spec)


def test_simulator_follows_the_measure_conventions() -> None:
    """Defaults from the standard preset; short=zero and empty=one act as in the library."""
    from ndcglab.measures import get_preset

    std = get_preset("standard")
    a = simulate_ndcg(ident, [20, 200], "ndcg", draws=2, seed=3, with_limit=False)
    b = simulate_ndcg(
        ident,
        [20, 200],
        f"ndcg(gain={std.default('ndcg', 'gain')},discount={std.default('ndcg', 'discount')})",
        draws=2,
        seed=3,
        with_limit=False,
    )
    np.testing.assert_array_equal(a.values, b.values)
    short = simulate_ndcg(ident, [5, 50], "ndcg(short=zero)@10", draws=2, seed=1)
    assert (short.values[:, 0] == 0.0).all() and (short.values[:, 1] > 0.0).all()
    clip = simulate_ndcg(ident, [5], "ndcg@10", draws=2, seed=1)
    whole = simulate_ndcg(ident, [5], "ndcg", draws=2, seed=1)
    np.testing.assert_array_equal(clip.values, whole.values)
    never = simulate_ndcg(lambda s: 0.0 * np.asarray(s), [7], "ndcg(empty=one)", draws=2)
    np.testing.assert_array_equal(never.values, 1.0)
    zero = simulate_ndcg(lambda s: 0.0 * np.asarray(s), [7], "ndcg", draws=2)
    np.testing.assert_array_equal(zero.values, 0.0)
