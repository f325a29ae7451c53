"""NDCGRanker: the scikit-learn protocol."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.errors import NdcglabError, SpecError
from ndcglab.estimator import NDCGRanker

from ..training.conftest import make_ranking_data

FAST = dict(epochs=30, optimizer="gd", lr=0.5)


def test_fit_returns_self_and_learned_attributes(split) -> None:
    tr, va = split
    est = NDCGRanker(**FAST)
    assert est.fit(tr.features, tr.labels, group=tr.group) is est
    for attr in ("model_", "trained_", "history_", "best_epoch_", "n_features_in_"):
        assert hasattr(est, attr)
    assert est.n_features_in_ == tr.n_features
    assert len(est.history_) >= 1
    scores = est.predict(va.features)
    assert scores.shape == (va.n_docs,) and scores.dtype == np.float64


def test_params_are_stored_untouched_and_round_trip() -> None:
    est = NDCGRanker(loss="cs_listmle@10", hidden=[4, 2], epochs=7)
    params = est.get_params()
    assert (
        params["loss"] == "cs_listmle@10" and params["hidden"] == [4, 2] and params["epochs"] == 7
    )
    other = NDCGRanker().set_params(**params)
    assert other.get_params() == params
    with pytest.raises(SpecError, match="unknown parameter 'lrr'"):
        est.set_params(lrr=0.1)
    with pytest.raises(TypeError):
        NDCGRanker("listnet")  # keyword-only
    assert "cs_listmle@10" in repr(est)


def test_sklearn_clone() -> None:
    sklearn_base = pytest.importorskip("sklearn.base")
    est = NDCGRanker(loss="listmle", lr=0.3)
    c = sklearn_base.clone(est)
    assert c.get_params() == est.get_params() and c is not est


def test_group_and_qid_and_dataset_agree(split) -> None:
    tr, va = split
    qid = np.repeat(np.arange(tr.n_queries) * 7 + 3, tr.group)
    a = NDCGRanker(**FAST).fit(tr.features, tr.labels, group=tr.group).predict(va.features)
    b = NDCGRanker(**FAST).fit(tr.features, tr.labels, qid=qid).predict(va.features)
    c = NDCGRanker(**FAST).fit(tr).predict(va)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_eval_set_and_score(split) -> None:
    tr, va = split
    est = NDCGRanker(optimizer="adam", lr=0.1, batch_size=4, epochs=8)
    est.fit(
        tr.features,
        tr.labels,
        group=tr.group,
        eval_set=[(va.features, va.labels)],
        eval_group=[va.group],
    )
    assert est.best_score_ is not None
    assert 1 <= est.best_epoch_ <= 8
    s = est.score(va.features, va.labels, group=va.group)
    assert s == pytest.approx(est.best_score_, abs=1e-6)  # same measure (ndcg@10, letor4)
    test = make_ranking_data(20, seed=11)
    assert 0.0 <= est.score(test) <= 1.0


def test_query_minmax_needs_groups_to_predict(split) -> None:
    tr, va = split
    est = NDCGRanker(normalize="query_minmax", epochs=3).fit(tr)
    with pytest.raises(SpecError, match="boundaries"):
        est.predict(va.features)
    assert est.predict(va.features, group=va.group).shape == (va.n_docs,)


def test_errors(split) -> None:
    tr, _ = split
    with pytest.raises(NdcglabError, match="not fitted"):
        NDCGRanker().predict(tr.features)
    with pytest.raises(SpecError, match="group="):
        NDCGRanker().fit(tr.features, tr.labels)
    with pytest.raises(SpecError, match="RankingDataset"):
        NDCGRanker().fit(tr, tr.labels)


def test_gbdt_dispatch(split) -> None:
    tr, va = split
    pytest.importorskip("lightgbm")
    est = NDCGRanker(model="gbdt", gbdt_params={"num_boost_round": 5, "min_data_in_leaf": 5})
    est.fit(tr, eval_set=va)
    assert est.predict(va).shape == (va.n_docs,)


def test_load_is_the_inverse_of_save(split, tmp_path) -> None:
    train, valid = split
    ranker = NDCGRanker(
        loss="listmle", model="mlp", hidden=(8,), epochs=4, normalize="query_minmax", seed=3
    ).fit(train, eval_set=valid)
    path = tmp_path / "r.ndcglab"
    ranker.save(str(path))
    back = NDCGRanker.load(path)
    assert isinstance(back, NDCGRanker)
    assert back.get_params()["loss"] == "listmle" and back.model == "mlp"
    assert tuple(back.hidden) == (8,) and back.normalize == "query_minmax" and back.seed == 3
    assert back.n_features_in_ == train.n_features and back.best_epoch_ == ranker.best_epoch_
    np.testing.assert_array_equal(back.predict(valid), ranker.predict(valid))
    assert back.score(valid) == ranker.score(valid)
    with pytest.raises(NdcglabError):
        NDCGRanker.load(tmp_path / "missing.ndcglab")
