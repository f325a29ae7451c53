"""NDCGRanker in scikit-learn's model selection: GridSearchCV, RandomizedSearchCV,
cross_val_score and Pipeline with the query ids routed as metadata, GroupKFold keeping queries
whole, the grouped scorer ndcg_scorer; and check_estimator's verdicts, as docs/compat.md
lists them."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from ndcglab.errors import SpecError
from ndcglab.estimator import NDCGRanker, NDCGScorer, ndcg_scorer

from ..training.conftest import make_ranking_data

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.metrics import ndcg_score  # noqa: E402
from sklearn.model_selection import (  # noqa: E402
    GridSearchCV,
    GroupKFold,
    RandomizedSearchCV,
    cross_val_score,
)
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

FAST = dict(epochs=5, optimizer="gd", seed=0)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "compat.md"


@pytest.fixture(scope="module")
def folds():
    ds = make_ranking_data(24, 4, seed=3, min_len=4, max_len=10)
    qid = np.repeat(np.arange(ds.n_queries), np.diff(ds.boundaries))
    return ds.features, ds.labels, qid


@pytest.fixture(autouse=True)
def _routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _mean_ndcg10(y, scores, qid):
    """scikit-learn's ndcg_score (linear gain, ties averaged) query by query, then the mean."""
    values = []
    for q in np.unique(qid):
        at = qid == q
        values.append(ndcg_score(y[at][None, :], scores[at][None, :], k=10))
    return float(np.mean(values))


def test_grid_search_equals_a_hand_written_loop(folds):
    X, y, qid = folds
    grid = {"loss": ["listnet", "ranknet"], "lr": [0.1, 0.5]}
    search = GridSearchCV(
        NDCGRanker(**FAST).set_fit_request(qid=True),
        grid,
        cv=GroupKFold(2),
        scoring=ndcg_scorer(10, "sklearn"),
        refit=False,
    ).fit(X, y, groups=qid, qid=qid)
    splits = list(GroupKFold(2).split(X, y, qid))
    for i, params in enumerate(search.cv_results_["params"]):
        for j, (train, test) in enumerate(splits):
            assert set(qid[train]).isdisjoint(qid[test])  # queries kept whole
            ranker = NDCGRanker(**FAST, **params).fit(X[train], y[train], qid=qid[train])
            want = _mean_ndcg10(y[test], ranker.predict(X[test]), qid[test])
            got = search.cv_results_[f"split{j}_test_score"][i]
            assert got == pytest.approx(want, abs=1e-12), (params, j)
    assert search.best_params_ == search.cv_results_["params"][search.best_index_]


def test_cross_val_score_pipeline_and_randomized_search(folds):
    X, y, qid = folds
    pipe = make_pipeline(StandardScaler(), NDCGRanker(**FAST).set_fit_request(qid=True))
    scores = cross_val_score(
        pipe, X, y, cv=GroupKFold(3), params={"qid": qid, "groups": qid}, scoring=ndcg_scorer()
    )
    for s, (train, test) in zip(scores, GroupKFold(3).split(X, y, qid)):
        fitted = clone(pipe).fit(X[train], y[train], qid=qid[train])
        assert s == ndcg_scorer()(fitted, X[test], y[test], qid=qid[test])
    # the estimator's own score (NDCG@10 under its preset) through the routing
    ranker = NDCGRanker(**FAST).set_fit_request(qid=True).set_score_request(qid=True)
    own = cross_val_score(ranker, X, y, cv=GroupKFold(3), params={"qid": qid, "groups": qid})
    assert np.all((own >= 0) & (own <= 1))
    search = RandomizedSearchCV(
        ranker, {"lr": [0.05, 0.2, 0.8]}, n_iter=2, cv=GroupKFold(2), random_state=0
    ).fit(X, y, groups=qid, qid=qid)
    assert search.best_params_["lr"] in (0.05, 0.2, 0.8)


def test_scorer_with_group_sizes_and_errors(folds):
    X, y, qid = folds
    ranker = NDCGRanker(**FAST).fit(X, y, qid=qid)
    sizes = np.unique(qid, return_counts=True)[1]
    by_qid = ndcg_scorer(5, "letor4")(ranker, X, y, qid=qid)
    assert ndcg_scorer(5, "letor4")(ranker, X, y, group=sizes) == by_qid
    with pytest.raises(SpecError, match="enable_metadata_routing"):
        ndcg_scorer()(ranker, X, y)
    with pytest.raises(SpecError, match="takes no metadata sample_weight"):
        NDCGRanker().set_fit_request(sample_weight=True)
    with pytest.raises(SpecError, match="takes no metadata foo"):
        NDCGScorer().set_score_request(foo=True)
    # a query id given to the search but not requested: scikit-learn names the request to set
    with pytest.raises(ValueError, match="set_fit_request"):
        GridSearchCV(NDCGRanker(**FAST), {"lr": [0.1]}, cv=GroupKFold(2)).fit(
            X, y, groups=qid, qid=qid
        )
    requested = NDCGRanker(**FAST).set_fit_request(qid="query")
    assert clone(requested).get_metadata_routing().fit.requests["qid"] == "query"


def test_tie_averaged_scorer_is_scikit_learns_ndcg(folds):
    """ndcg_scorer(ties="average"): a constant model scores the expectation over tied orders
    (scikit-learn's ndcg_score), whatever the preset's own tie rule."""
    X, y, qid = folds

    class Constant:
        def predict(self, X):
            return np.zeros(len(X))

    got = ndcg_scorer(10, "trec_eval", ties="average")(Constant(), X, y, qid=qid)
    assert got == pytest.approx(_mean_ndcg10(y, np.zeros(len(y)), qid), abs=1e-12)
    assert "ties='average'" in repr(ndcg_scorer(ties="average"))


def _documented_failures() -> set[str]:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("### check_estimator", 1)[1].split("\n## ", 1)[0]
    section = section.split("The others fail", 1)[1]
    return set(re.findall(r"`(check_\w+)`", section))


def test_check_estimator_failures_are_the_documented_ones():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with sklearn.config_context(enable_metadata_routing=False):
            results = check_estimator(NDCGRanker(epochs=2), on_fail=None, on_skip=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    passed = {r["check_name"] for r in results if r["status"] == "passed"}
    assert failed == _documented_failures()
    assert {
        "check_get_params_invariance",
        "check_set_params",
        "check_no_attributes_set_in_init",
    } <= passed
