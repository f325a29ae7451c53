"""Limits of Wang et al. (2013), Theorems 1, 3, 5-13, against closed forms derived by hand.

Hand derivations used below (s uniform on [0, 1]):

* ybar(s) = s: p = 1/2; ∫₀¹ s(1−s)^−β ds = B(2, 1−β) = 1/((1−β)(2−β)), so Thm 3 gives
  2^(1−β)/(2−β). ∫_{1−c}^1 s(1−s)^−β ds = c^(1−β)/(1−β) − c^(2−β)/(2−β) (u = 1 − s), so for
  c ≤ p Thm 9 gives 1 − (1−β)c/(2−β); P[Y=1 | s ≥ 1−c] = 1 − c/2, so Thm 8 gives 1 − c/2 for
  c ≤ p and (c/p)(1 − c/2) for c > p.
* ybar(s) = s²: p = 1/3; ∫₀¹ s²(1−s)^−β ds = B(3, 1−β) = 2/((1−β)(2−β)(3−β)), Thm 3:
  2·3^(1−β)/((2−β)(3−β)).
* ybar ≡ q (a random ranker): Thm 3: q^β; Thm 8: q·c/min(c, q); Thm 9: q·(c/min(c, q))^(1−β).
* ybar = 1[s > 1 − p] (the perfect ranker; discontinuous): every limit is 1.
* Graded, labels 0, 1, 2 with P(2|s) = P(1|s) = s/2, P(0|s) = 1 − s and exp2 gains (0, 1, 3):
  E[G|s] = 2s; P(Y=2) = P(Y=1) = 1/4; levels 𝔶 = (3, 1, 0), R = (1/4, 1/2, 1).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ndcglab.analysis.limits import (
    GradedModel,
    limit_graded_log_cutoff,
    limit_graded_power,
    limit_graded_power_cutoff,
    limit_graded_sublinear_cutoff,
    limit_log,
    limit_log_cutoff,
    limit_power,
    limit_power_cutoff,
    limit_sublinear_cutoff,
    limit_zipf,
    positive_rate,
    theoretical_limit,
)
from ndcglab.errors import ConventionError, SpecError


def ident(s):
    return np.asarray(s, dtype=float)


def square(s):
    return np.asarray(s, dtype=float) ** 2


BETAS = [0.1, 0.25, 0.5, 0.75, 0.9]


@pytest.mark.parametrize("beta", BETAS)
def test_theorem3_closed_forms(beta: float) -> None:
    assert limit_power(ident, beta) == pytest.approx(2 ** (1 - beta) / (2 - beta), rel=1e-10)
    want = 2 * 3 ** (1 - beta) / ((2 - beta) * (3 - beta))
    assert limit_power(square, beta) == pytest.approx(want, rel=1e-10)
    assert limit_power(lambda s: 0.3 + 0 * np.asarray(s), beta) == pytest.approx(0.3**beta)


def test_theorems_1_5_7() -> None:
    assert limit_log(ident) == 1.0
    assert limit_zipf(ident) == 1.0  # ybar(1)
    assert limit_zipf(lambda s: 0.2 + 0.6 * np.asarray(s)) == pytest.approx(0.8)
    assert limit_sublinear_cutoff(square) == 1.0
    assert positive_rate(ident) == pytest.approx(0.5)


@pytest.mark.parametrize("c", [0.1, 0.2, 0.5, 0.8, 1.0])
def test_theorem8_closed_forms(c: float) -> None:
    p = 0.5
    want = (1 - c / 2) * c / min(c, p)
    assert limit_log_cutoff(ident, c) == pytest.approx(want, rel=1e-10)
    q = 0.3
    flat = lambda s: q + 0 * np.asarray(s)  # noqa: E731
    assert limit_log_cutoff(flat, c) == pytest.approx(q * c / min(c, q), rel=1e-10)


@pytest.mark.parametrize("beta", [0.25, 0.5, 0.75])
@pytest.mark.parametrize("c", [0.1, 0.2, 0.5, 0.8])
def test_theorem9_closed_forms(beta: float, c: float) -> None:
    p = 0.5
    integral = c ** (1 - beta) / (1 - beta) - c ** (2 - beta) / (2 - beta)
    want = (1 - beta) / min(c, p) ** (1 - beta) * integral
    assert limit_power_cutoff(ident, beta, c) == pytest.approx(want, rel=1e-10)
    if c <= p:
        assert want == pytest.approx(1 - (1 - beta) * c / (2 - beta))
    q = 0.3
    flat = lambda s: q + 0 * np.asarray(s)  # noqa: E731
    want_flat = q * (c / min(c, q)) ** (1 - beta)
    assert limit_power_cutoff(flat, beta, c) == pytest.approx(want_flat, rel=1e-10)


@pytest.mark.parametrize("p", [0.1, 0.3, 0.7])
def test_perfect_ranker_scores_one_everywhere(p: float) -> None:
    step = lambda s: (np.asarray(s) > 1 - p).astype(float)  # noqa: E731
    assert limit_power(step, 0.5) == pytest.approx(1.0, abs=1e-7)
    for c in (0.05, 0.5, 0.9):
        assert limit_log_cutoff(step, c) == pytest.approx(1.0, abs=1e-7)
        assert limit_power_cutoff(step, 0.5, c) == pytest.approx(1.0, abs=1e-7)


def test_limits_are_at_most_one_and_order_rankers() -> None:
    good, bad = ident, lambda s: 1 - np.asarray(s)
    for beta in BETAS:
        assert limit_power(good, beta) > limit_power(bad, beta)
        assert 0 < limit_power(bad, beta) < limit_power(good, beta) <= 1


def test_p_is_fixed_by_ybar() -> None:
    assert limit_power(ident, 0.5, p=0.5) == pytest.approx(limit_power(ident, 0.5))
    with pytest.raises(ConventionError, match="does not match"):
        limit_power(ident, 0.5, p=0.4)
    with pytest.raises(ConventionError, match="0 < β < 1"):
        limit_power(ident, 1.0)
    with pytest.raises(ConventionError, match="c must lie"):
        limit_log_cutoff(ident, 0.0)


# ----------------------------------------------------------------------------- graded
def graded() -> GradedModel:
    half = lambda s: np.asarray(s, dtype=float) / 2  # noqa: E731
    return GradedModel(labels=(0, 1, 2), probabilities=[lambda s: 1 - np.asarray(s), half, half])


def test_graded_model_basics() -> None:
    m = graded()
    np.testing.assert_allclose(m.marginal(), [0.5, 0.25, 0.25], atol=1e-12)
    levels, R = m.gain_levels("exp2")
    np.testing.assert_allclose(levels, [3, 1, 0])
    np.testing.assert_allclose(R, [0.25, 0.5, 1.0], atol=1e-12)
    assert m.expected_gain("exp2")(0.3) == pytest.approx(0.6)
    with pytest.raises(ConventionError, match="sum to 1"):
        GradedModel(labels=(0, 1), probabilities=[lambda s: 0.5 + 0 * s, lambda s: 0.6 + 0 * s])


@pytest.mark.parametrize("beta", [0.25, 0.5, 0.75])
def test_theorem10_by_hand(beta: float) -> None:
    a = 1 - beta
    num = a * 2 / (a * (2 - beta))  # (1−β) ∫ 2s (1−s)^−β ds
    den = 3 * 0.25**a + 1 * (0.5**a - 0.25**a) + 0 * (1 - 0.5**a)
    assert limit_graded_power(graded(), beta) == pytest.approx(num / den, rel=1e-10)


def test_theorem11_by_hand() -> None:
    assert limit_graded_sublinear_cutoff(graded()) == pytest.approx(2 / 3)  # E[G|1] / 𝔶_1


@pytest.mark.parametrize("c", [0.2, 0.4, 0.7, 1.0])
def test_theorem12_by_hand(c: float) -> None:
    num = 1 - (1 - c) ** 2  # ∫_{1−c}^1 2s ds
    if c <= 0.25:  # t = 0
        den = 3 * c
    elif c <= 0.5:  # t = 1
        den = 3 * 0.25 + 1 * (c - 0.25)
    else:  # t = 2
        den = 3 * 0.25 + 1 * 0.25 + 0 * (c - 0.5)
    assert limit_graded_log_cutoff(graded(), c) == pytest.approx(num / den, rel=1e-10)


@pytest.mark.parametrize("c", [0.2, 0.4, 0.7])
def test_theorem13_by_hand(c: float) -> None:
    beta, a = 0.5, 0.5
    num = a * 2 * (c**a / a - c ** (2 - beta) / (2 - beta))
    if c <= 0.25:
        den = 3 * c**a
    elif c <= 0.5:
        den = 3 * 0.25**a + (c**a - 0.25**a)
    else:
        den = 3 * 0.25**a + (0.5**a - 0.25**a)
    assert limit_graded_power_cutoff(graded(), beta, c) == pytest.approx(num / den, rel=1e-10)


@pytest.mark.parametrize("ybar", [ident, square, lambda s: 0.2 + 0.6 * np.asarray(s)])
def test_graded_theorems_reduce_to_the_binary_ones(ybar) -> None:
    m = GradedModel.binary(ybar)
    for beta in (0.3, 0.6):
        assert limit_graded_power(m, beta) == pytest.approx(limit_power(ybar, beta), rel=1e-9)
        for c in (0.2, 0.9):
            assert limit_graded_power_cutoff(m, beta, c) == pytest.approx(
                limit_power_cutoff(ybar, beta, c), rel=1e-9
            )
    for c in (0.2, 0.45, 0.9):
        assert limit_graded_log_cutoff(m, c) == pytest.approx(limit_log_cutoff(ybar, c), rel=1e-9)
    assert limit_graded_sublinear_cutoff(m) == pytest.approx(limit_sublinear_cutoff(ybar))


# ----------------------------------------------------------------------------- dispatcher
@pytest.mark.parametrize(
    ("spec", "theorem", "value"),
    [
        ("ndcg", "1", 1.0),
        ("ndcg(discount=log:10)", "1", 1.0),
        ("ndcg(discount=power:0.5)", "3", 2**0.5 / 1.5),
        ("ndcg(discount=zipf)", "5", 1.0),
        ("ndcg(discount=power:1)", "5", 1.0),
        ("ndcg@0.2n", "8", 0.9),
        ("ndcg(discount=power:0.5)@0.2n", "9", 1 - 0.5 * 0.2 / 1.5),
        ("ndcg(discount=exp:2)", "6", math.nan),
        ("ndcg(discount=power:1.5)", "6", math.nan),
        ("ndcg@10", "6", math.nan),
    ],
)
def test_theoretical_limit_dispatch(spec: str, theorem: str, value: float) -> None:
    lim = theoretical_limit(spec, ident)
    assert lim.theorem == theorem
    assert lim.converges == (not math.isnan(value))
    if lim.converges:
        assert lim.value == pytest.approx(value, rel=1e-9)
    else:
        assert math.isnan(lim.value)


def test_theoretical_limit_graded_and_unsupported() -> None:
    g = graded()
    assert theoretical_limit("ndcg(discount=power:0.5)", g).theorem == "10"
    assert theoretical_limit("ndcg@0.4n", g).value == pytest.approx(0.64 / 0.9)
    assert theoretical_limit("ndcg(discount=power:0.5)@0.4n", g).theorem == "13"
    assert theoretical_limit("ndcg", g, cutoff="sublinear").value == pytest.approx(2 / 3)
    assert theoretical_limit("ndcg", ident, cutoff="sublinear").theorem == "7"
    # linear gain changes the levels: 𝔶 = (2, 1, 0), E[G|s] = 1.5 s
    lin = theoretical_limit("ndcg(gain=linear)@0.2n", g).value
    assert lin == pytest.approx((1.5 * (1 - 0.64) / 2) / (2 * 0.2))
    with pytest.raises(ConventionError, match="binary labels only"):
        theoretical_limit("ndcg(discount=zipf)", g)
    with pytest.raises(ConventionError, match="no theorem"):
        theoretical_limit("ndcg(discount=zipf)@0.2n", ident)
    with pytest.raises(ConventionError, match="about NDCG"):
        theoretical_limit("map", ident)
    with pytest.raises(SpecError):
        theoretical_limit("ndcg(", ident)


# ----------------------------------------------------------------------------- measure strings
@pytest.mark.parametrize(
    ("spec", "error", "needle"),
    [
        ("ndcg(gian=linear,discount=power:0.5)", SpecError, "unknown parameter 'gian'"),
        ("ndcg(ties=bogus)", ConventionError, "unknown tie rule 'bogus'"),
        ("ndcg(discount=power:x)", ConventionError, "discount"),
        ("ndgc", SpecError, "unknown measure"),
    ],
)
def test_theoretical_limit_reads_measures_with_parse_measure(spec: str, error, needle) -> None:
    """A misspelt option or a bad value is an error, never a silently ignored option."""
    with pytest.raises(error, match=needle):
        theoretical_limit(spec, ident)


def test_theoretical_limit_defaults_come_from_the_standard_preset() -> None:
    from ndcglab.analysis.limits import DEFAULT_GAIN
    from ndcglab.measures import get_preset, parse_measure

    assert DEFAULT_GAIN == get_preset("standard").default("ndcg", "gain")
    g = graded()
    explicit = theoretical_limit(f"ndcg(gain={DEFAULT_GAIN},discount=power:0.5)@0.4n", g)
    assert theoretical_limit("ndcg(discount=power:0.5)@0.4n", g).value == explicit.value
    m = parse_measure("ndcg(discount=power:0.5)")
    assert theoretical_limit(m, ident).value == theoretical_limit(str(m), ident).value
