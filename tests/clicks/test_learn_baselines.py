"""The libraries' own position-debiased rankers as baselines: LightGBM's lambdarank with
positions and XGBoost's ``lambdarank_unbiased`` train on a log's impressions, the positions reach
the library, and XGBoost's estimated click-position bias falls with the position."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from ndcglab.clicks.baselines import lightgbm_position_bias, xgboost_unbiased
from ndcglab.clicks.simulate import make_policy, simulate_clicks
from ndcglab.data import load_dataset


@pytest.fixture(scope="module")
def data():
    ds = load_dataset("synthetic:default").subset(np.arange(40))
    rng = np.random.default_rng(0)
    policy = make_policy(ds.labels + rng.normal(size=ds.n_docs), "pl(temperature=1)")
    return ds, simulate_clicks(ds, "pbm(eta=1)", policy, 3000, k=5, seed=1)


def test_lightgbm_uses_the_positions(data):
    lightgbm = pytest.importorskip("lightgbm")
    ds, log = data
    booster = lightgbm_position_bias(ds, log, rounds=5, params={"min_data_in_leaf": 5})
    with_pos = booster.predict(ds.features)
    assert np.isfinite(with_pos).all() and np.ptp(with_pos) > 0
    x = ds.features[log.doc]
    plain = lightgbm.train(
        {"objective": "lambdarank", "learning_rate": 0.05, "num_leaves": 31, "seed": 0,
         "deterministic": True, "verbosity": -1, "min_data_in_leaf": 5},
        lightgbm.Dataset(x, label=log.click.astype(float), group=np.diff(log.session_starts())),
        num_boost_round=5,
    )  # fmt: skip
    assert not np.allclose(plain.predict(ds.features), with_pos)


def test_xgboost_estimates_a_falling_click_bias(data):
    xgboost = pytest.importorskip("xgboost")
    ds, log = data
    booster = xgboost_unbiased(ds, log, rounds=5)
    assert np.isfinite(booster.predict(xgboost.DMatrix(ds.features))).all()
    ti = json.loads(booster.save_config())["learner"]["objective"]["ti+"][: log.k]
    assert ti[0] == 1.0
    assert all(a > b for a, b in itertools.pairwise(ti)), ti
