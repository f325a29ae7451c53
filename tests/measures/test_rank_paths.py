"""The kernels rank a list in one of two ways — counting, for each document that matters, the
documents ranked before it (:func:`~ndcglab.measures._kernels.positions`), or sorting the whole
list (:func:`~ndcglab.measures._kernels.msort`) — and both must give the same ranking, so every
value is the same whichever one runs; the ideal ranking of whole-list NDCG is likewise counted
from the labels when the gains come from a table. Oracles: the sort (for the positions), and the
NumPy path for small inputs (``numpy.lexsort``; for the measures), bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.measures import _kernels as K
from ndcglab.measures import get_preset, parse_measures

from .test_small_path import assert_paths_equal


def _sorted_positions(s: np.ndarray, t: np.ndarray) -> np.ndarray:
    n = len(s)
    idx = np.arange(n, dtype=np.int64)
    K.msort(idx, n, s, t, np.empty(n, np.int64))
    pos = np.empty(n, np.int64)
    pos[idx] = np.arange(n)
    return pos


def _list(rng: np.random.Generator, n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    s = rng.standard_normal(n) if kind == "distinct" else rng.integers(0, 4, n).astype(float)
    if kind == "signed-zero":
        s = np.where(s == 0, -0.0, s)
        s[::3] = 0.0
    t = np.zeros(n) if rng.random() < 0.5 else rng.integers(-3, 3, n).astype(float)
    return s, t


@pytest.mark.parametrize("kind", ["distinct", "tied", "signed-zero"])
def test_counted_positions_are_the_sorted_ones(kind: str) -> None:
    rng = np.random.default_rng(3)
    for n in [1, 2, 3, 17, 64, 301]:
        for _ in range(5):
            s, t = _list(rng, n, kind)
            which = np.flatnonzero(rng.random(n) < 0.6).astype(np.int64)
            pos = np.empty(n, np.int64)
            assert K.positions(s, t, 0, n, which, len(which), pos, 1 << 40)
            np.testing.assert_array_equal(pos[: len(which)], _sorted_positions(s, t)[which])


def test_positions_work_inside_a_longer_array() -> None:
    rng = np.random.default_rng(4)
    s, t = rng.integers(0, 3, 50).astype(float), rng.integers(0, 2, 50).astype(float)
    which = np.arange(20, dtype=np.int64)
    pos = np.empty(20, np.int64)
    assert K.positions(s, t, 10, 20, which, 20, pos, 1 << 40)
    np.testing.assert_array_equal(pos, _sorted_positions(s[10:30], t[10:30]))


def test_positions_give_up_past_the_budget_and_on_nan() -> None:
    s = np.zeros(100)  # every score tied: three passes per document
    t = np.arange(100.0)[::-1].copy()  # (the tie key against the list's order: it is counted)
    which = np.arange(100, dtype=np.int64)
    pos = np.empty(100, np.int64)
    assert not K.positions(s, t, 0, 100, which, 100, pos, 150)
    assert K.positions(s, t, 0, 100, which, 100, pos, 300)
    np.testing.assert_array_equal(pos, np.arange(100)[::-1])
    s = np.array([1.0, np.nan, 0.5])
    assert not K.positions(s, np.zeros(3), 0, 3, np.arange(3), 3, np.empty(3, np.int64), 99)


def _oracle_order(s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Score descending, ``t`` ascending, index ascending (NumPy's stable lexsort)."""
    return np.lexsort((np.arange(len(s)), t, -s))


@pytest.mark.parametrize("kind", ["distinct", "tied", "signed-zero"])
def test_lists_already_in_order_are_ranked_as_they_stand(kind: str) -> None:
    """A list in the ranking's order (a TREC run listed by score) is found so in one pass:
    :func:`~ndcglab.measures._kernels.positions` gives every index as its position whatever its
    budget (0 here: counting would give up), and the sort leaves it as it is; a list with one
    pair out of order, or a NaN, is counted or sorted as before. Oracle: ``numpy.lexsort``."""
    rng = np.random.default_rng(11)
    for n in [1, 2, 3, 17, 64, 301]:
        for _ in range(5):
            s0, t0 = _list(rng, n, kind)
            order = _oracle_order(s0, t0)
            s, t = s0[order].copy(), t0[order].copy()  # in order
            np.testing.assert_array_equal(_oracle_order(s, t), np.arange(n))
            which = np.flatnonzero(rng.random(n) < 0.6).astype(np.int64)
            pos = np.empty(n, np.int64)
            assert K.positions(s, t, 0, n, which, len(which), pos, 0)
            np.testing.assert_array_equal(pos[: len(which)], which)
            idx = np.arange(n, dtype=np.int64)
            K.msort(idx, n, s, t, np.empty(n, np.int64))
            np.testing.assert_array_equal(idx, np.arange(n))
            if n < 3 or s[0] == s[-1]:
                continue
            i = int(rng.integers(0, n - 1))  # one pair out of order (when they differ)
            s[[i, i + 1]], t[[i, i + 1]] = s[[i + 1, i]], t[[i + 1, i]]
            want = _oracle_order(s, t)
            idx = np.arange(n, dtype=np.int64)
            K.msort(idx, n, s, t, np.empty(n, np.int64))
            np.testing.assert_array_equal(idx, want)
            if not np.array_equal(want, np.arange(n)):  # counted now: no pass left
                assert not K.positions(s, t, 0, n, which, len(which), pos, 0) or not len(which)
    s = np.array([3.0, 2.0, np.nan, 1.0])  # in order but for the NaN: left to the sort
    idx = np.arange(4, dtype=np.int64)
    assert not K.positions(s, np.zeros(4), 0, 4, idx, 4, np.empty(4, np.int64), 99)
    # an index list that is not the identity, already in order, stays as it is
    s = np.array([0.5, 3.0, 1.0, 3.0])
    idx = np.array([1, 3, 2, 0], dtype=np.int64)
    K.msort(idx, 4, s, np.zeros(4), np.empty(4, np.int64))
    assert idx.tolist() == [1, 3, 2, 0]


def test_count_budget_grows_with_the_log_of_the_length() -> None:
    got = [K.count_budget(n) for n in (1, 2, 3, 4, 5, 1024, 1025, 2**31 - 1, 2**31)]
    assert got == [32, 32, 64, 64, 96, 320, 352, 992, -1]  # past int32: always sorted


SPECS = [
    "map",
    "map@100",
    "p@5",
    "mrr",
    "ndcg@3",
    "ndcg@10",
    "ndcg",
    "ndcg@0.5n",
    "ndcg(gain=table:0=0;1=3;2=1;3=3;4=-1)",  # a table out of order, tied and negative
]


@pytest.mark.parametrize("preset", ["standard", "trec_eval", "letor4"])
def test_long_lists_same_values_by_counting_or_sorting(
    preset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lists long enough that the kernels sort some (many relevant documents, or tied scores past
    the budget) and count in others (few relevant documents, distinct scores)."""
    rng = np.random.default_rng(17)
    lens = np.array([1, 2, 40, 300, 700, 1500, 2500, 3000])
    b = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    n = int(b[-1])
    measures = [m.resolve(get_preset(preset)) for m in parse_measures(SPECS)]
    for trial in range(4):
        rel_frac = np.repeat(rng.choice([0.02, 0.3, 0.9], len(lens)), lens)
        y = np.where(rng.random(n) < rel_frac, rng.integers(1, 5, n), 0).astype(float)
        s = rng.standard_normal(n) if trial % 2 == 0 else rng.integers(0, 6, n).astype(float)
        ids = np.array([f"d{i % 997}" for i in range(n)], dtype=object)
        rend = b[:-1] + (lens * 0.8).astype(np.int64) if trial == 3 else None
        assert_paths_equal(monkeypatch, measures, y, s, b, rend, ids, trial)


def test_the_ideal_gains_are_the_gains_sorted_descending() -> None:
    """The ideal ranking's gains without a gain table: the non-zero gains sorted, the zeros
    between the positive and the negative ones — NumPy's sort of all of them, descending
    (zeros of either sign compare equal); a NaN gain is left to the whole-list sort."""
    from ndcglab.measures import _gain_kernels as GK

    rng = np.random.default_rng(5)
    for n in [1, 2, 3, 16, 17, 200, 1001]:
        for kind in ["positive", "signed", "all-zero", "signed-zero"]:
            gq = rng.choice([0.0, 0.0, 0.0, 1.0, 3.0, 7.5], n)
            if kind == "signed":
                gq = gq * rng.choice([-1.0, 1.0], n)
            elif kind == "all-zero":
                gq = np.zeros(n)
            elif kind == "signed-zero":
                gq = np.where(rng.random(n) < 0.5, -0.0, gq)
            g = np.full(n + 3, 99.0)
            assert GK._gains_descending(gq, n, np.empty(n, np.int64), g)
            np.testing.assert_array_equal(g[:n], np.sort(gq)[::-1])
            assert (g[n:] == 99.0).all()  # nothing beyond the list is written
    gq = np.array([1.0, np.nan, 0.0, 2.0])
    assert not GK._gains_descending(gq, 4, np.empty(4, np.int64), np.empty(4))
