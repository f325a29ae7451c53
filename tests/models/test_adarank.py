"""AdaRank: boosting over single features beats every single feature when they must combine."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.data import RankingDataset
from ndcglab.models import AdaRank
from ndcglab.training import train


def _combination_data(n_queries: int, seed: int) -> RankingDataset:
    """Relevance needs x0 AND x1 large; x2..x4 are noise; no single feature ranks well."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(15, 30, size=n_queries)
    n = int(lengths.sum())
    x = rng.random((n, 5)).astype(np.float32)
    s = x[:, 0] + x[:, 1]
    labels = (s > 1.2).astype(float) + (s > 1.6).astype(float)
    return RankingDataset.from_arrays(x, labels, group=lengths)


def _ndcg(ds: RankingDataset, scores: np.ndarray) -> float:
    from ndcglab.measures import evaluate

    return next(iter(evaluate(ds, scores, ["ndcg@10"], preset="letor4").mean.values()))


def test_adarank_beats_the_best_single_feature() -> None:
    tr, va, te = (_combination_data(40, s) for s in (0, 1, 2))
    r = train(tr, validation=va, loss="adarank(rounds=60)@10", normalize="none")
    model = r.model
    assert isinstance(model, AdaRank)
    best_single = max(_ndcg(te, te.features[:, k].astype(float)) for k in range(te.n_features))
    got = _ndcg(te, r.trained.predict(te))
    assert got > best_single + 0.05, (got, best_single)
    w = model.weight.numpy()
    assert w[0] > 0 and w[1] > 0  # both needed features are used
    assert r.history and r.best_epoch >= 1
    assert r.history[0]["feature"] in (0, 1)


def test_adarank_weights_follow_the_algorithm() -> None:
    """One round by hand: the best weighted feature and α = ½ ln(Σ P(1+E) / Σ P(1−E))."""
    from ndcglab.measures import MeasureScorer

    ds = _combination_data(10, 3)
    m = AdaRank(ds.n_features, measure="ndcg@10", rounds=1, patience=5)
    m.fit(ds.features, ds.labels, ds.boundaries)
    sc = MeasureScorer("ndcg@10", "letor4")
    e = np.stack(
        [sc.per_query(ds.labels, ds.features[:, k].astype(float), ds.boundaries) for k in range(5)],
        1,
    )
    p = np.full(ds.n_queries, 1 / ds.n_queries)
    k = int(np.argmax(p @ e))
    alpha = 0.5 * np.log((p @ (1 + e[:, k])) / (p @ (1 - e[:, k])))
    expected = np.zeros(5)
    expected[k] = alpha
    np.testing.assert_allclose(m.weight.numpy(), expected, rtol=1e-12)


def test_adarank_with_map_and_model_option() -> None:
    tr = _combination_data(20, 4)
    r = train(tr, model="adarank", loss="adarank(measure=map,rounds=5)")
    assert r.trained.metadata["adarank_measure"] == "map"
    assert 1 <= len(r.history) <= 5
    with pytest.raises(Exception, match="boosting"):
        train(tr, model="adarank", loss="listnet")
