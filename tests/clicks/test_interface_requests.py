"""The small requests of the clicks interface: the baselines module loads lazily, the library's
click errors read as command-line options, and ``simulate_clicks`` takes the Plackett-Luce
position marginals from its caller (the same log, without recomputing them)."""

from __future__ import annotations

import numpy as np
import pytest

import ndcglab.clicks as clicks
from ndcglab.cli.main import error_text
from ndcglab.data import load_dataset
from ndcglab.errors import NdcglabError


def test_baselines_is_a_lazy_module():
    mod = clicks.baselines
    assert mod.__name__ == "ndcglab.clicks.baselines"
    assert hasattr(mod, "lightgbm_position_bias")


@pytest.mark.parametrize(
    ("call", "option"),
    [
        ({"estimator": "nope"}, "--estimator dr"),
        ({"empty": "nope"}, "--empty skip or --empty zero"),
        ({"normaliser": "nope"}, "--normaliser max"),
    ],
)
def test_evaluate_errors_name_the_options(call, option):
    from ndcglab.clicks.estimators import counterfactual_estimate
    from ndcglab.clicks.simulate import make_policy, simulate_clicks

    ds = load_dataset("synthetic:default").subset(np.arange(3))
    log = simulate_clicks(ds, "pbm(eta=1)", make_policy(ds.labels, "pl"), 20, k=3)
    with pytest.raises(NdcglabError) as info:
        counterfactual_estimate(log, ds.labels, ds.boundaries, measure="ndcg@3", **call)
    text = error_text(info.value)
    assert option in text, text
    assert f"{next(iter(call))}=" not in text


def test_learn_errors_name_the_options():
    from ndcglab.clicks.learn import click_labels, click_statistics
    from ndcglab.clicks.simulate import simulate_clicks

    ds = load_dataset("synthetic:default").subset(np.arange(3))
    log = simulate_clicks(ds, "pbm(eta=1)", None, 20, k=3)
    stats = click_statistics(log, ds)
    with pytest.raises(NdcglabError) as info:
        click_labels(stats, estimator="affine")
    text = error_text(info.value)
    assert "give --trust-offset (β per position)" in text and "trust_offset=" not in text


def test_given_marginals_give_the_same_log_and_bad_ones_are_refused():
    from ndcglab.clicks.simulate import make_policy, pl_position_marginals, simulate_clicks

    ds = load_dataset("synthetic:default")
    scores = ds.labels + np.random.default_rng(1).normal(0, 1, ds.n_docs)
    policy = make_policy(scores, "pl(temperature=0.5)")
    marg = pl_position_marginals(scores, ds.boundaries, 5, 0.5)
    own = simulate_clicks(ds, "dbn(gamma=0.9)", policy, 300, k=5, seed=4)
    given = simulate_clicks(ds, "dbn(gamma=0.9)", policy, 300, k=5, seed=4, marginals=marg)
    for col in clicks.LOG_COLUMNS:
        np.testing.assert_array_equal(getattr(own, col), getattr(given, col))
    # the logged propensities are read from the given table (here: scaled by 1/2)
    half = simulate_clicks(ds, "pbm(eta=1)", policy, 50, k=5, seed=4, marginals=marg / 2)
    full = simulate_clicks(ds, "pbm(eta=1)", policy, 50, k=5, seed=4)
    np.testing.assert_allclose(half.propensity, full.propensity / 2)
    with pytest.raises(NdcglabError, match=r"marginals has shape"):
        simulate_clicks(ds, "pbm(eta=1)", policy, 5, k=5, marginals=marg[:, :4])
