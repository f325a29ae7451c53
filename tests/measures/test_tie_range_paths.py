"""The tie range's fast paths on large inputs (the Numba kernels), against the slow ones.

* Which queries have tied scores (:func:`ndcglab.measures.tie_range.tied_queries`), on both
  paths — the NumPy sort of small inputs and the hashing kernel ``tied_query_kernel`` of large
  ones — against a slow reference: a query is tied when its ranked scores hold fewer distinct
  values (Python floats: -0.0 == 0.0) than documents.
* Both bounds from one pass (``rank_rel_bounds_kernel``, when ``compute_per_query`` gets the
  same measures under ``label_asc`` and ``label_desc``) against each rule evaluated alone.
* ``tie_range=True`` on the kernel path against the NumPy path, which
  ``test_tie_range.py`` checks against every permutation of the tied documents."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ndcglab.measures import _small, evaluate_arrays
from ndcglab.measures import tie_range as TR
from ndcglab.measures.compute import compute_per_query
from ndcglab.measures.registry import Measure, parse_measure


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


def _tied_data(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Lists of 0..40 documents (and two of 400 whose documents are nearly all relevant:
    too many to place by counting, so they are sorted), scores with many ties."""
    rng = np.random.default_rng(seed)
    n = rng.integers(0, 41, 300)
    n[:4] = [0, 1, 400, 400]
    b = np.concatenate([[0], np.cumsum(n)]).astype(np.int64)
    y = rng.integers(0, 5, int(b[-1])).astype(float)
    y[b[2] : b[4]] = rng.integers(1, 5, 800)
    s = rng.integers(0, 6, int(b[-1])).astype(float)
    rend = np.maximum(b[1:] - rng.integers(0, 3, len(n)), b[:-1])
    return y, s, b, rend


BOUND_MEASURES = ("ndcg@1", "ndcg@3", "ndcg@10", "map", "map@5", "p@2", "p@10", "mrr", "mrr@3")


@pytest.mark.parametrize("seed", [1, 2])
def test_both_bounds_in_one_pass_equal_each_rule_alone(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_small, "fits", lambda b: False)
    y, s, b, rend = _tied_data(seed)
    base = [_measure(m) for m in BOUND_MEASURES]
    lo = [m.with_options(ties="label_asc") for m in base]
    hi = [m.with_options(ties="label_desc") for m in base]
    for re in (None, rend):
        both = compute_per_query(lo + hi, y, s, b, ranked_end=re)
        alone = {**compute_per_query(lo, y, s, b, ranked_end=re)}
        alone.update(compute_per_query(hi, y, s, b, ranked_end=re))
        for m in lo + hi:
            np.testing.assert_array_equal(both[m].values, alone[m].values, err_msg=str(m))
            np.testing.assert_array_equal(both[m].empty, alone[m].empty, err_msg=str(m))
        assert any(  # the bounds differ somewhere: the test can tell them apart
            not np.array_equal(both[a].values, both[c].values) for a, c in zip(lo, hi)
        )


def _measure(text: str) -> Measure:
    return parse_measure(text).resolve()


@pytest.mark.parametrize("ties", ["most", "few"])
@pytest.mark.parametrize("preset", ["standard", "trec_eval", "lightgbm", "letor4"])
def test_tie_range_on_the_kernel_path_equals_the_numpy_path(
    preset: str, ties: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    y, s, b, _ = _tied_data(3)
    if ties == "few":  # distinct scores but in every 10th query: those alone are evaluated again
        q = np.repeat(np.arange(len(b) - 1), np.diff(b))
        s = np.where(q % 10 == 0, s, np.random.default_rng(4).normal(size=len(s)))
    if preset == "letor4":  # grades 0..2
        y = np.minimum(y, 2.0)
    measures = ["ndcg@3", "ndcg@10", "ndcg", "map", "p@5", "mrr", "err@3"]
    docs = np.array([f"d{i % 97}" for i in range(len(y))], dtype=object)
    got = {}
    for path in ("numpy", "kernel"):
        monkeypatch.setattr(_small, "fits", lambda b, path=path: path == "numpy")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got[path] = evaluate_arrays(
                y, s, b, measures, preset=preset, doc_ids=docs, tie_range=True
            )
    for m in measures:
        a, k = got["numpy"].tie_range[m], got["kernel"].tie_range[m]
        np.testing.assert_allclose(k.low, a.low, rtol=0, atol=1e-12, err_msg=m)
        np.testing.assert_allclose(k.high, a.high, rtol=0, atol=1e-12, err_msg=m)
        np.testing.assert_array_equal(k.tied, a.tied)
        plain = got["kernel"].per_query[m]
        np.testing.assert_array_equal(k.low[~k.tied], plain[~k.tied])
        np.testing.assert_array_equal(k.high[~k.tied], plain[~k.tied])
        assert (k.high - k.low).max() > 0, m


def _mixed_ties(seed: int, labels: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_tied_data` with every third query's scores all equal (the counting path of
    fully tied lists) and labels that are whole numbers 0..4 (``small``), halves (``halves``:
    not whole, so the counting path does not apply) or up to 90 (``large``: beyond its 64
    levels)."""
    y, s, b, rend = _tied_data(seed)
    rng = np.random.default_rng(seed + 10)
    q = np.repeat(np.arange(len(b) - 1), np.diff(b))
    s = np.where(q % 3 == 0, 0.5, s)
    if labels == "halves":
        y = y / 2.0
    elif labels == "large":
        y = np.where(rng.random(len(y)) < 0.3, rng.integers(60, 91, len(y)), y).astype(float)
    return y, s, b, rend


#: NDCG and DCG at fixed cut-offs without a relevance measure: the bounds by one selection
GAIN_ONLY = ("ndcg@1", "ndcg@3", "ndcg@10", "dcg@5")
#: the whole list, fractional cut-offs, a discount of the list's length, MeanNDCG (not fused)
GAIN_FULL = ("ndcg", "ndcg@0.5n", "dcg@3", "ndcg(discount=linear)@4", "meanndcg")


@pytest.mark.parametrize(
    "measures", [BOUND_MEASURES, GAIN_ONLY, GAIN_FULL], ids=["with_map", "gain_only", "full"]
)
@pytest.mark.parametrize("labels", ["small", "halves", "large"])
@pytest.mark.parametrize("plain", ["input", "docid", "random:3", "pessimistic", "label_asc"])
def test_plain_and_both_bounds_in_one_pass_equal_each_rule_alone(
    plain: str, labels: str, measures: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plain ranking and both bounds from one pass (``compute_per_query`` given the
    measures under a tie rule and under ``label_asc``/``label_desc``: one counting pass with a
    relevance measure, one selection for NDCG@k alone) equal, bit for bit, each rule computed
    on its own."""
    monkeypatch.setattr(_small, "fits", lambda b: False)
    y, s, b, rend = _mixed_ties(5, labels)
    docs = np.array([f"d{(7 * i) % 13}" for i in range(len(y))], dtype=object)  # repeats
    base = [_measure(m).with_options(ties=plain) for m in measures]
    lo = [m.with_options(ties="label_asc") for m in base]
    hi = [m.with_options(ties="label_desc") for m in base]
    for re in (None, rend):
        joint = compute_per_query(base + lo + hi, y, s, b, ranked_end=re, doc_ids=docs)
        for group in (base, lo, hi):
            alone = compute_per_query(group, y, s, b, ranked_end=re, doc_ids=docs)
            for m in group:
                np.testing.assert_array_equal(joint[m].values, alone[m].values, err_msg=str(m))
                np.testing.assert_array_equal(joint[m].empty, alone[m].empty, err_msg=str(m))
        assert any(not np.array_equal(joint[a].values, joint[c].values) for a, c in zip(lo, hi))


@pytest.mark.parametrize("gain_only", [False, True])
@pytest.mark.parametrize("preset", ["standard", "trec_eval", "letor4"])
def test_the_tie_range_leaves_the_plain_values_bit_for_bit(
    preset: str, gain_only: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ties in most queries the bounds are computed in the same pass as the plain
    values (``joint_bounds``): the plain values equal those of an evaluation without the
    range, and the range equals the NumPy path's (checked against every permutation in
    ``test_tie_range.py``)."""
    y, s, b, _ = _mixed_ties(6, "small")
    if preset == "letor4":
        y = np.minimum(y, 2.0)
    measures = ["ndcg@1", "ndcg@3", "ndcg@10", "map", "p@5", "mrr", "ndcg", "err@3"]
    if gain_only:
        measures = ["ndcg@3", "ndcg@10", "ndcg", "dcg@0.5n"]
    docs = np.array([f"d{i % 97}" for i in range(len(y))], dtype=object)
    tied = TR.tied_queries(s, b)
    assert TR.joint_bounds([_measure(m).resolve(preset) for m in measures], y, b, tied)
    got = {}
    for path, rng in (("numpy", True), ("kernel", True), ("plain", False)):
        monkeypatch.setattr(_small, "fits", lambda b, path=path: path == "numpy")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got[path] = evaluate_arrays(
                y, s, b, measures, preset=preset, doc_ids=docs, tie_range=rng
            )
    for m in measures:
        np.testing.assert_array_equal(got["kernel"].per_query[m], got["plain"].per_query[m])
        a, k = got["numpy"].tie_range[m], got["kernel"].tie_range[m]
        np.testing.assert_allclose(k.low, a.low, rtol=0, atol=1e-12, err_msg=m)
        np.testing.assert_allclose(k.high, a.high, rtol=0, atol=1e-12, err_msg=m)
