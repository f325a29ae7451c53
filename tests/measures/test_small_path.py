"""The NumPy path for small inputs and the Numba kernels give the same numbers, bit for bit, and
the docid tie keys kept per ``doc_ids`` array change no value."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.measures import _small, evaluate_arrays, get_preset, parse_measures
from ndcglab.measures.compute import check_inputs, compute_per_query

SPECS = [
    "ndcg@1",
    "ndcg@5",
    "ndcg@10",
    "ndcg",
    "ndcg@0.5n",
    "dcg@3",
    "idcg@5",
    "ndcg(discount=linear)@5",
    "ndcg(gain=linear)",
    "ndcg(ties=pessimistic)@5",
    "ndcg(ties=random:3)@3",
    "map",
    "map@10",
    "map(ties=optimistic)",
    "p@5",
    "p@200",
    "mrr",
    "mrr@3",
]


def _case(rng: np.random.Generator, trial: int):
    nq = int(rng.integers(1, 30))
    lens = rng.integers(0, 50, nq)
    lens[0] = max(int(lens[0]), 1)
    b = np.concatenate([[0], np.cumsum(lens)])
    n = int(b[-1])
    y = rng.integers(0, 5, n).astype(float)
    if trial % 3 == 0:
        y[rng.random(n) < 0.1] = -1.0
    if trial % 5 == 1:  # labels outside the kernels' gain table: the per-document gains
        y[rng.random(n) < 0.1] = rng.choice([0.5, 70.0])
    scale = 3.0 if trial % 2 else 1000.0
    s = np.round(rng.random(n) * scale, 0 if trial % 2 else 3)  # many ties, or few
    ids = np.array([f"d{rng.integers(0, 10**6)}" for _ in range(n)], dtype=object)
    ranked_end = b[:-1] + (lens * rng.random(nq)).astype(np.int64) if trial % 4 == 0 else None
    return y, s, b, ids, ranked_end


def assert_paths_equal(
    monkeypatch: pytest.MonkeyPatch, measures: list, y, s, b, rend, ids, trial: int
) -> None:
    """The NumPy path and the kernels give the same values, bit for bit, and empty flags."""
    yy, ss, bb, rr = check_inputs(y, s, b, rend)
    monkeypatch.setattr(_small, "SMALL_DOCS", 10**9)
    small = compute_per_query(measures, yy, ss, bb, ranked_end=rr, doc_ids=ids)
    monkeypatch.setattr(_small, "SMALL_DOCS", 0)
    kernels = compute_per_query(measures, yy, ss, bb, ranked_end=rr, doc_ids=ids)
    for m in measures:
        assert small[m].values.tobytes() == kernels[m].values.tobytes(), (trial, str(m))
        assert np.array_equal(small[m].empty, kernels[m].empty)


@pytest.mark.parametrize("preset", ["standard", "trec_eval", "letor4"])
def test_numpy_path_equals_kernels(preset: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    measures = [m.resolve(get_preset(preset)) for m in parse_measures(SPECS)]
    for trial in range(12):
        y, s, b, ids, rend = _case(rng, trial)
        assert_paths_equal(monkeypatch, measures, y, s, b, rend, ids, trial)


def test_docid_keys_kept_per_array_change_nothing() -> None:
    rng = np.random.default_rng(5)
    for _ in range(10):
        nq = int(rng.integers(1, 20))
        b = np.concatenate([[0], np.cumsum(rng.integers(1, 60, nq))])
        n = int(b[-1])
        y = rng.integers(0, 4, n).astype(float)
        s = np.round(rng.random(n) * 5, 1)
        ids = np.array([f"d{rng.integers(0, 40)}" for _ in range(n)], dtype=object)
        spec = ["map", "ndcg@5", "ndcg", "p@3", "mrr", "recall@5", "bpref"]
        runs = [
            evaluate_arrays(y, s, b, spec, preset="trec_eval", doc_ids=ids).per_query
            for _ in range(3)
        ]
        fresh = evaluate_arrays(y, s, b, spec, preset="trec_eval", doc_ids=ids.copy()).per_query
        for k in runs[0]:
            assert runs[0][k].tobytes() == runs[1][k].tobytes() == runs[2][k].tobytes()
            assert runs[2][k].tobytes() == fresh[k].tobytes()


@pytest.mark.parametrize("preset", ["standard", "trec_eval"])
def test_ndcg_at_k_read_off_the_map_sort_equals_ndcg_alone(
    preset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NDCG@1..10 asked with MAP take their top-k gains from MAP's sort (one sort per query);
    asked alone they use top-k selection. Both paths, on the NumPy side and in the kernels, give
    the same numbers bit for bit."""
    rng = np.random.default_rng(23)
    pre = get_preset(preset)
    ndcgs = [m.resolve(pre) for m in parse_measures([f"ndcg@{k}" for k in range(1, 11)])]
    rel = [m.resolve(pre) for m in parse_measures(["map", "p@5"])]
    for trial in range(8):
        y, s, b, ids, rend = _case(rng, trial)
        yy, ss, bb, rr = check_inputs(y, s, b, rend)
        runs = []
        for limit in (10**9, 0):  # the NumPy path, then the kernels
            monkeypatch.setattr(_small, "SMALL_DOCS", limit)
            runs.append(compute_per_query(rel + ndcgs, yy, ss, bb, ranked_end=rr, doc_ids=ids))
            alone = compute_per_query(ndcgs, yy, ss, bb, ranked_end=rr, doc_ids=ids)
            for m in ndcgs:
                assert runs[-1][m].values.tobytes() == alone[m].values.tobytes(), (trial, str(m))
        for m in rel + ndcgs:
            assert runs[0][m].values.tobytes() == runs[1][m].values.tobytes(), (trial, str(m))


def test_while_numba_is_not_loaded_larger_inputs_take_the_numpy_path() -> None:
    """300,000 documents: above ``SMALL_DOCS`` but within ``COLD_FACTOR`` times it. A fresh
    process evaluates them without loading Numba; once Numba is loaded, the kernels run."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from ndcglab.measures import evaluate_arrays\n"
        "n = 300_000; rng = np.random.default_rng(0)\n"
        "y = rng.integers(0, 3, n).astype(float); s = rng.random(n)\n"
        "b = np.arange(0, n + 1, 100)\n"
        "a = evaluate_arrays(y, s, b, ['ndcg@10', 'map']).per_query\n"
        "print('numba' in sys.modules)\n"
        "import numba\n"
        "k = evaluate_arrays(y, s, b, ['ndcg@10', 'map']).per_query\n"
        "print('ndcglab.measures._rel_kernels' in sys.modules)\n"
        "print(all(a[m].tobytes() == k[m].tobytes() for m in a))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    ).stdout.split()
    assert out == ["False", "True", "True"]


def test_the_cold_numpy_path_stops_once_it_has_cost_what_loading_numba_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ski rental: an input above the NumPy path's limits takes it while Numba is not loaded,
    until the time spent so reaches ``NUMBA_LOAD_SECONDS``; then the kernels run. Inputs within
    the limits always take it; Numba loaded, the limits are the plain ones."""
    big = np.arange(0, 300_001, 100)  # 300,000 documents: over SMALL_DOCS, within 10x
    small = np.arange(0, 1_001, 100)
    monkeypatch.setattr(_small, "_numba_loaded", lambda: False)
    monkeypatch.setattr(_small, "cold_seconds", 0.0)
    assert _small.fits(small) and not _small.cold_extension(small)
    assert _small.fits(big) and _small.cold_extension(big)
    assert not _small.fits(np.arange(0, 3_000_001, 100))  # over 10x the limit
    rng = np.random.default_rng(0)
    y, s = rng.integers(0, 3, 300_000).astype(float), rng.random(300_000)
    measures = [m.resolve(get_preset("standard")) for m in parse_measures(["ndcg@10"])]
    monkeypatch.setattr(_small, "NUMBA_LOAD_SECONDS", 1e-9)
    compute_per_query(measures, *check_inputs(y, s, big)[:3])
    assert _small.cold_seconds > 0  # the time was counted ...
    assert not _small.fits(big)  # ... and the budget is spent: the kernels from now on
    assert _small.fits(small)
    monkeypatch.setattr(_small, "cold_seconds", 0.0)
    monkeypatch.setattr(_small, "_numba_loaded", lambda: True)
    assert not _small.fits(big) and _small.fits(small)
