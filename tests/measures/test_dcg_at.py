"""DCG@k and the ideal order of measures.conventions (dcg_at, ideal_gains) against slow loops
written from the formulas of docs/measures.md §2."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ndcglab.measures.conventions import dcg_at, ideal_gains
from ndcglab.measures.discounts import get_discount


def _dcg(gains: list[float], k: int) -> float:
    """Σ_{r ≤ min(k, n)} G_r / log2(1 + r), one term at a time."""
    total = 0.0
    for r, g in enumerate(gains[:k], start=1):
        total += g / math.log2(1 + r)
    return total


def test_one_list_every_cutoff_including_beyond_its_end() -> None:
    gains = [3.0, 0.0, 7.0, 1.0]
    table = get_discount("log").table(4)
    for k in range(1, 8):
        assert dcg_at(np.array(gains), table, k, 4) == pytest.approx(_dcg(gains, k), rel=1e-15)


def test_rows_with_several_cutoffs_and_lengths() -> None:
    rng = np.random.default_rng(3)
    lengths = np.array([5, 1, 3, 0])
    width = 5
    g = np.zeros((4, width))
    for q, n in enumerate(lengths):
        g[q, :n] = rng.integers(0, 8, n)
    ks = np.array([[1, 3, 9], [1, 2, 5], [2, 3, 4], [1, 1, 1]])
    got = dcg_at(g, get_discount("log").table(width), ks, lengths)
    assert got.shape == (4, 3)
    for q in range(4):
        for j in range(3):
            want = _dcg(list(g[q, : lengths[q]]), int(ks[q, j]))
            assert got[q, j] == pytest.approx(want, rel=1e-15, abs=0.0)
    one_k = dcg_at(g, get_discount("log").table(width), np.full(4, 2), lengths)
    assert one_k.shape == (4,)
    for q in range(4):
        assert one_k[q] == pytest.approx(_dcg(list(g[q, : lengths[q]]), 2), rel=1e-15, abs=0.0)


def test_the_ideal_sorts_by_gain_descending() -> None:
    g = np.array([[0.0, 3.0, 1.0, 3.0], [2.0, 0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(ideal_gains(g), [[3.0, 3.0, 1.0, 0.0], [2.0, 0.0, 0.0, 0.0]])
    assert dcg_at(ideal_gains(g[0]), get_discount("log").table(4), 2, 4) == pytest.approx(
        3.0 + 3.0 / math.log2(3)
    )
