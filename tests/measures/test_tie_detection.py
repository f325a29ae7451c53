"""Which queries have tied scores (:func:`ndcglab.measures.tie_range.tied_queries`), on both
paths — the NumPy sort of small inputs and the hashing kernel ``tied_query_kernel`` of large
ones — against a slow reference: a query is tied when its ranked scores hold fewer distinct
values (Python floats: -0.0 == 0.0) than documents."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.measures import _small
from ndcglab.measures import tie_range as TR


def _reference(scores: np.ndarray, b: np.ndarray, rend: np.ndarray) -> list[bool]:
    return [len(set(scores[b[q] : rend[q]].tolist())) < rend[q] - b[q] for q in range(len(b) - 1)]


def _cases() -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    out = []
    for draw in ("normal", "few", "signed_zero", "constant", "huge"):
        n = rng.integers(0, 60, 400)
        n[:5] = [0, 1, 2, 0, 1]
        b = np.concatenate([[0], np.cumsum(n)]).astype(np.int64)
        size = int(b[-1])
        if draw == "normal":
            s = rng.normal(size=size)
        elif draw == "few":
            s = rng.integers(0, 40, size).astype(float)
        elif draw == "signed_zero":  # -0.0 and 0.0 tie
            s = np.where(rng.random(size) < 0.03, 0.0, rng.normal(size=size))
            s[rng.random(size) < 0.5] *= -1.0
        elif draw == "constant":
            s = np.full(size, 0.25)
        else:  # values whose bit patterns differ in the low bits only
            s = 1e300 * (1.0 + rng.integers(0, 2000, size) * np.finfo(float).eps)
        cut = np.maximum(b[1:] - rng.integers(0, 3, len(n)), b[:-1])
        out += [(s, b, np.ascontiguousarray(b[1:])), (s, b, cut)]
    return out


@pytest.mark.parametrize("path", ["numpy", "kernel"])
def test_tied_queries_match_a_slow_reference(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_small, "fits", lambda b: path == "numpy")
    checked = 0
    for s, b, rend in _cases():
        ref = _reference(s, b, rend)
        assert TR.tied_queries(s, b, rend).tolist() == ref
        checked += 1
    assert checked == 10
