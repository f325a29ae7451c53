"""Linear NDCG^β and the weighted pairwise loss of Jin & Geng, "Linear NDCG and Pair-wise Loss"
(ECML/PKDD Discovery Challenge 2010).

The paper's two worked examples are figures whose rankings are not in the text; the text gives
their totals: bipartite ideal 12, ranking 8, R = 4; three-level ideal 21, ranking 18, R = 3. The
bipartite ideal ``m·n + m(m−1)/2 = 12`` fixes m = n = 3 (six documents); the three-level ideal 21
is met by the label sets {2,2,1,0,0,0} and {2,1,1,0,0,0,0}. The tests check every ranking of
those sets that reaches the paper's totals, plus the identity on random lists.
"""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcglab.measures import evaluate_arrays, pairwise_loss, parse_measure
from ndcglab.measures.linear_ndcg import ideal_linear_dcg, linear_dcg, linear_ndcg

from . import oracle_measures as ref


def _one(labels, order_scores, **kw):
    y = np.asarray(labels, float)
    s = np.asarray(order_scores, float)
    b = np.array([0, len(y)])
    return (
        ideal_linear_dcg(y, b)[0],
        linear_dcg(y, s, b, **kw)[0],
        pairwise_loss(y, s, b, **kw)[0],
    )


def test_bipartite_example_ideal_12_ranking_8_loss_4() -> None:
    labels = [1, 1, 1, 0, 0, 0]
    m, n = 3, 3
    assert m * n + m * (m - 1) // 2 == 12
    found = 0
    for perm in set(itertools.permutations(labels)):
        scores = -np.arange(6.0)  # ranked in the given order
        ideal, dcg, loss = _one(perm, scores)
        assert ideal == 12
        assert ideal - dcg == loss == ref.pairwise_loss_bruteforce(list(perm), list(scores))
        if dcg == 8:
            assert loss == 4
            found += 1
    assert found > 0  # e.g. + - + - - + : DCG 5 + 3 + 0 = 8, four inverted pairs
    ideal, dcg, loss = _one([1, 0, 1, 0, 0, 1], -np.arange(6.0))
    assert (ideal, dcg, loss) == (12, 8, 4)


def test_three_level_example_ideal_21_ranking_18_loss_3() -> None:
    for labels in ([2, 2, 1, 0, 0, 0], [2, 1, 1, 0, 0, 0, 0]):
        found = 0
        for perm in set(itertools.permutations(labels)):
            scores = -np.arange(float(len(perm)))
            ideal, dcg, loss = _one(perm, scores)
            assert ideal == 21
            assert ideal - dcg == loss
            if dcg == 18:
                assert loss == 3
                found += 1
        assert found > 0
    ideal, dcg, loss = _one([2, 0, 2, 1, 0, 0], -np.arange(6.0))
    assert (ideal, dcg, loss) == (21, 18, 3)


def test_ndcg_beta_is_registered_ndcg_with_linear_gain_and_discount() -> None:
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 60).astype(float)
    s = rng.normal(size=60)
    b = np.array([0, 10, 25, 25, 60])
    a = evaluate_arrays(y, s, b, ["ndcg_beta"]).per_query["ndcg_beta"]
    c = evaluate_arrays(y, s, b, ["ndcg(gain=linear,discount=linear)"]).per_query[
        "ndcg(discount=linear,gain=linear)"
    ]
    assert np.array_equal(a, c)
    assert np.allclose(a, linear_ndcg(y, s, b))
    assert parse_measure("ndcg_beta").convention()["discount"] == "linear"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 0.5]), min_size=0, max_size=9),
    st.data(),
    st.sampled_from(["input", "average", "optimistic", "pessimistic", "docid"]),
)
def test_identity_and_bruteforce(labels, data, ties) -> None:
    n = len(labels)
    scores = data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=n, max_size=n))
    ids = [f"x{i}" for i in range(n)]
    y = np.array(labels, float)
    s = np.array(scores, float)
    b = np.array([0, n])
    loss = pairwise_loss(y, s, b, ties=ties, doc_ids=ids)[0]
    gap = ideal_linear_dcg(y, b)[0] - linear_dcg(y, s, b, ties=ties, doc_ids=ids)[0]
    assert abs(gap - loss) < 1e-9
    if ties in ("input", "average"):
        assert abs(loss - ref.pairwise_loss_bruteforce(labels, scores, ties)) < 1e-9
    if ties == "optimistic":  # ties never counted: the paper's strict indicator
        assert abs(loss - ref.pairwise_loss_bruteforce(labels, scores, "strict")) < 1e-9


def test_many_queries_and_long_lists() -> None:
    rng = np.random.default_rng(3)
    sizes = rng.integers(0, 300, 40)
    b = np.concatenate([[0], np.cumsum(sizes)])
    y = rng.integers(0, 5, b[-1]).astype(float)
    s = rng.integers(0, 20, b[-1]).astype(float)  # many ties
    for ties in ("input", "average"):
        loss = pairwise_loss(y, s, b, ties=ties)
        gap = ideal_linear_dcg(y, b) - linear_dcg(y, s, b, ties=ties)
        assert np.allclose(loss, gap, rtol=0, atol=1e-6)
        for q in range(0, 40, 9):
            lo, hi = b[q], b[q + 1]
            assert (
                abs(loss[q] - ref.pairwise_loss_bruteforce(list(y[lo:hi]), list(s[lo:hi]), ties))
                < 1e-6
            )
