"""Learning from clicks: each estimator's label re-derived from the papers' formulas by slow loops
over the raw log rows, unbiasedness of the IPS, affine and DR labels over seeds, DLA's propensity
step against a numerical minimiser of its softmax loss, and the front door."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from ndcglab.clicks.learn import (
    click_dataset,
    click_labels,
    click_loss,
    click_statistics,
    dla_propensities,
    fit_clicks,
    statistics_from_counts,
)
from ndcglab.data import RankingDataset
from ndcglab.errors import SpecError
from ndcglab.losses import get_loss

from .oracle_logging import make_world, simulate

THETA = np.array([1.0, 0.5, 0.3])


def _dataset(world, seed=0):
    rng = np.random.default_rng(seed)
    n = len(world.relevance)
    x = np.column_stack([world.relevance + rng.normal(0, 0.2, n), rng.normal(size=(n, 2))])
    return RankingDataset.from_arrays(x, np.zeros(n), group=np.diff(world.boundaries))


def _loop_labels(world, log, estimator, alpha, beta, tau=0.0, r_tilde=None):
    """Labels from the raw rows, one document at a time (the formulas of the papers)."""
    n = len(world.relevance)
    b = world.boundaries
    n_sessions = {}
    for i in range(len(log)):
        if log.position[i] == 1:
            q = int(log.query[i])
            n_sessions[q] = n_sessions.get(q, 0) + 1
    out = np.zeros(n)
    for d in range(n):
        q = int(np.searchsorted(b, d, side="right") - 1)
        nq = n_sessions.get(q, 0)
        rows = [i for i in range(len(log)) if log.doc[i] == d]
        clicks = sum(int(log.click[i]) for i in rows)
        if estimator == "naive":
            out[d] = clicks / nq if nq else 0.0
            continue
        if estimator == "snips":
            den = sum(alpha[log.position[i] - 1] for i in rows)
            out[d] = clicks / den if den else 0.0
            continue
        # the logging policy's expected examination: Σ_j P(d at j)·α_j (exact placement)
        rho = max(sum(world.placement[d, j] * alpha[j] for j in range(len(alpha))), tau)
        resid = sum(int(log.click[i]) - beta[log.position[i] - 1] for i in rows)
        if estimator in ("ips", "affine"):
            out[d] = resid / (nq * rho) if nq else 0.0
        else:  # dr
            exam = sum(alpha[log.position[i] - 1] for i in rows)
            out[d] = r_tilde[d] + ((resid - exam * r_tilde[d]) / (nq * rho) if nq else 0.0)
    return out


@pytest.mark.parametrize("estimator", ["naive", "ips", "snips", "affine", "dr"])
def test_labels_equal_slow_loops(estimator):
    world = make_world(4)
    alpha, beta = np.array([0.9, 0.5, 0.3]), np.array([0.1, 0.06, 0.04])
    log = simulate(world, 300, np.random.default_rng(4), alpha, beta)
    ds = _dataset(world)
    stats = click_statistics(log, ds)
    r_tilde = np.linspace(0.1, 0.9, len(world.relevance))
    got = click_labels(
        stats, estimator=estimator, examination=alpha, trust_offset=beta, tau=0.05,
        regression=r_tilde,
    )  # fmt: skip
    want_beta = beta if estimator in ("affine", "dr") else np.zeros(3)
    want = _loop_labels(world, log, estimator, alpha, want_beta, tau=0.05, r_tilde=r_tilde)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("estimator", "trust"), [("ips", False), ("affine", True), ("dr", False), ("dr", True)]
)
def test_labels_unbiased_over_seeds(estimator, trust):
    """E[label_d] = r_d: the mean over 200 seeds of (label − r) within 4 standard errors for
    every document (the world fixed, the log redrawn)."""
    world = make_world(9)
    alpha = np.array([0.9, 0.5, 0.3]) if trust else THETA
    beta = np.array([0.1, 0.06, 0.04]) if trust else None
    ds = _dataset(world)
    r_tilde = np.full(len(world.relevance), 0.5)  # a poor regression: DR stays unbiased
    labels = []
    for seed in range(200):
        log = simulate(world, 400, np.random.default_rng(seed), alpha, beta)
        stats = click_statistics(log, ds)
        labels.append(
            click_labels(
                stats,
                estimator=estimator,
                examination=alpha,
                trust_offset=beta,
                regression=r_tilde,
            )
        )
    lab = np.array(labels)
    err = lab.mean(0) - world.relevance
    se = lab.std(0, ddof=1) / math.sqrt(len(lab))
    assert np.all(np.abs(err) <= 4 * se), np.max(np.abs(err) / se)


def test_naive_labels_are_biased_under_position_bias():
    world = make_world(9)
    ds = _dataset(world)
    lab = np.mean(
        [
            click_labels(
                click_statistics(simulate(world, 400, np.random.default_rng(s), THETA), ds),
                estimator="naive",
            )
            for s in range(50)
        ],
        axis=0,
    )
    # E[naive] = r_d·Σ_j P(d at j)·θ_j, a closed form
    expected = world.relevance * (world.placement @ THETA)
    np.testing.assert_allclose(lab, expected, atol=0.03)
    assert np.max(np.abs(lab - world.relevance)) > 0.2


def test_dla_propensity_step_minimises_its_softmax_loss():
    """α̂ from :func:`dla_propensities` equals the minimiser of DLA's propensity loss
    −Σ_clicks (1/r̂_d)·log softmax(g)_{position}, found numerically, normalised by α̂_1."""
    world = make_world(3)
    log = simulate(world, 2000, np.random.default_rng(3), THETA)
    ds = _dataset(world)
    stats = click_statistics(log, ds)
    rng = np.random.default_rng(0)
    r_hat = rng.uniform(0.2, 1.0, len(world.relevance))
    got = dla_propensities(stats, r_hat)
    weights = np.zeros(3)
    for i in range(len(log)):
        if log.click[i]:
            weights[log.position[i] - 1] += 1.0 / r_hat[log.doc[i]]

    def loss(g):
        return -float(weights @ (g - np.log(np.exp(g).sum())))

    g = minimize(loss, np.zeros(3), method="BFGS", options={"gtol": 1e-10}).x
    p = np.exp(g) / np.exp(g).sum()
    np.testing.assert_allclose(got, p / p[0], rtol=1e-5)


def test_dla_propensities_recover_theta_with_true_relevance():
    """With the true relevances (each query scaled arbitrarily, as a softmax would) and a large
    log, the propensity step returns θ_j/θ_1."""
    world = make_world(6, n_queries=20)
    log = simulate(world, 60_000, np.random.default_rng(6), THETA)
    stats = click_statistics(log, _dataset(world))
    scale = np.repeat(np.random.default_rng(1).uniform(0.5, 2.0, 20), 5)
    got = dla_propensities(stats, world.relevance * scale)
    np.testing.assert_allclose(got, THETA / THETA[0], atol=0.03)


def test_front_door_equals_fit_on_click_dataset():
    from ndcglab.training import fit

    world = make_world(8, n_queries=12)
    log = simulate(world, 600, np.random.default_rng(8), THETA)
    ds = _dataset(world)
    opts = {"model": "linear", "loss": "squared", "epochs": 5, "seed": 1}
    via = fit_clicks(ds, log, estimator="ips", examination=THETA, **opts)
    opts["loss"] = "squared(gain=linear)"  # fit_clicks gives a loss its linear gain
    direct = fit(click_dataset(ds, log, estimator="ips", examination=THETA), **opts)
    np.testing.assert_array_equal(via.predict(ds), direct.predict(ds))
    assert via.examination.tolist() == THETA.tolist()


def test_dla_trains_and_learns_decreasing_propensities():
    world = make_world(5, n_queries=30)
    log = simulate(world, 6000, np.random.default_rng(5), THETA)
    ds = _dataset(world)
    res = fit_clicks(
        ds, log, estimator="dla", model="linear", loss="softmax_ce", epochs=30, dla_rounds=2
    )
    assert res.examination[0] == 1.0
    assert res.examination[1] < 0.9 and res.examination[2] < res.examination[1] + 0.1


def test_click_loss_gives_a_linear_gain_unless_named():
    assert click_loss("squared") == "squared(gain=linear)"
    assert click_loss("lambdarank(sigma=2)@5") == get_loss("lambdarank(sigma=2,gain=linear)@5").name
    assert click_loss("squared(gain=exp2)") == "squared"  # named: kept (exp2 is the default)
    assert click_loss("ranksvm") == "ranksvm"  # no gain parameter


def test_errors():
    world = make_world(1)
    log = simulate(world, 50, np.random.default_rng(1), THETA)
    ds = _dataset(world)
    stats = click_statistics(log, ds)
    with pytest.raises(SpecError, match="unknown label estimator"):
        click_labels(stats, estimator="magic")
    with pytest.raises(SpecError, match="trust_offset="):
        click_labels(stats, estimator="affine")
    with pytest.raises(SpecError, match="tau"):
        click_labels(stats, estimator="ips", tau=1.5)
    with pytest.raises(SpecError, match="features="):
        click_labels(stats, estimator="dr")
    with pytest.raises(SpecError, match="examination="):
        click_labels(stats, estimator="ips", examination=[1.0])
    with pytest.raises(SpecError, match="unknown estimator"):
        fit_clicks(ds, log, estimator="magic")


def test_given_placement_is_used_and_checked():
    world = make_world(12, n_docs=6)
    log = simulate(world, 40, np.random.default_rng(12), THETA)  # few sessions: pairs unseen
    ds = _dataset(world)
    stats = click_statistics(log, ds, placement=world.placement)
    np.testing.assert_array_equal(stats.placement, world.placement)
    got = click_labels(stats, estimator="ips", examination=THETA)
    want = _loop_labels(world, log, "ips", THETA, np.zeros(3))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(SpecError, match="placement="):
        click_statistics(log, ds, placement=world.placement[:, :2])


def test_boosted_trees_train_on_click_labels_through_the_front_door():
    pytest.importorskip("lightgbm")
    from ndcglab.training import fit

    world = make_world(13, n_queries=12)
    log = simulate(world, 400, np.random.default_rng(13), THETA)
    ds = _dataset(world)
    opts = {"model": "gbdt", "loss": "listnet", "rounds": 3, "trees": {"min_data_in_leaf": 2}}
    via = fit_clicks(ds, log, estimator="snips", examination=THETA, **opts)
    direct = fit(click_dataset(ds, log, estimator="snips", examination=THETA), **opts)
    np.testing.assert_array_equal(via.predict(ds), direct.predict(ds))
    assert np.ptp(via.predict(ds)) > 0


def test_statistics_from_counts_equal_the_log_s():
    """The learners' statistics from a log's counts (ClickStats) equal those from the log, when
    the log carries no propensities (both then use the observed exposure)."""
    world = make_world(14)
    log = simulate(world, 300, np.random.default_rng(14), THETA)
    ds = _dataset(world)
    blind = log.take(np.arange(len(log)))
    blind.propensity[:] = np.nan
    from_log = click_statistics(blind, ds)
    from_counts = statistics_from_counts(log.stats(), ds)
    for name in ("impressions", "clicks", "placement", "sessions"):
        np.testing.assert_allclose(getattr(from_counts, name), getattr(from_log, name))
    for est in ("naive", "ips", "snips", "affine"):
        np.testing.assert_allclose(
            click_labels(from_counts, estimator=est, examination=THETA, trust_offset=[0, 0, 0]),
            click_labels(from_log, estimator=est, examination=THETA, trust_offset=[0, 0, 0]),
        )
    exact = statistics_from_counts(log.stats(), ds, placement=world.placement)
    np.testing.assert_array_equal(exact.placement, world.placement)
