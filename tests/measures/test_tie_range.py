"""The tie range (``tie_range=True``): the best and the worst value over every order of the
tied documents, checked against brute force — every permutation of each small list, ranked
with ties in input order, so that every order of the tied documents is met — for NDCG@k, AP,
P@k and RR (and DCG, ERR) under several presets; and the OHSUMED example: constant scores."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

from ndcglab.data import read_letor
from ndcglab.measures import evaluate, evaluate_arrays, evaluate_trec
from ndcglab.measures.tie_range import TieRange, tied_queries

MEASURES = ("ndcg@3", "ndcg", "map", "map@3", "p@2", "mrr", "dcg@3", "err@3")
PRESETS = ("standard", "letor4", "trec_eval", "lightgbm", "xgboost(exp_gain=false)", "catboost")


def _with_input_ties(measure: str) -> str:
    name, at, cut = measure.partition("@")
    return f"{name}(ties=input){at}{cut}"


def _brute(labels: np.ndarray, scores: np.ndarray, measure: str, preset: str) -> tuple:
    """min and max of ``measure`` over every permutation of the list (ties in input order)."""
    n = len(labels)
    perms = list(itertools.permutations(range(n)))
    y = np.concatenate([labels[list(p)] for p in perms])
    s = np.concatenate([scores[list(p)] for p in perms])
    d = np.concatenate([np.array([f"d{i}" for i in p], dtype=object) for p in perms])
    b = np.arange(len(perms) + 1) * n
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = evaluate_arrays(y, s, b, [_with_input_ties(measure)], preset=preset, doc_ids=d)
    v = next(iter(r.per_query.values()))
    return float(np.nanmin(v)), float(np.nanmax(v))


@pytest.mark.parametrize("preset", PRESETS)
def test_tie_range_equals_brute_force_over_every_order(preset: str) -> None:
    rng = np.random.default_rng(35)
    checked = 0
    for _ in range(12):
        n = int(rng.integers(1, 7))
        top = 2 if preset.startswith("xgboost") else 3  # XGBoost's map takes 0/1 only
        labels = rng.integers(0, top, n).astype(float)
        scores = rng.integers(0, 3, n).astype(float)
        docs = np.array([f"d{i}" for i in range(n)], dtype=object)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = evaluate_arrays(
                labels, scores, [0, n], list(MEASURES), preset=preset, doc_ids=docs,
                tie_range=True,
            )  # fmt: skip
        for m in MEASURES:
            tr = res.tie_range[m]
            lo, hi = _brute(labels, scores, m, preset)
            assert math.isclose(tr.low[0], lo, abs_tol=1e-12), (preset, m, labels, scores)
            assert math.isclose(tr.high[0], hi, abs_tol=1e-12), (preset, m, labels, scores)
            assert tr.low[0] <= res.per_query[m][0] + 1e-12 <= tr.high[0] + 2e-12
            checked += 1
    assert checked == 12 * len(MEASURES)


def test_untied_queries_have_width_zero_and_are_flagged() -> None:
    y = np.array([1.0, 0.0, 2.0, 1.0, 0.0, 2.0])
    s = np.array([0.3, 0.2, 0.1, 0.5, 0.5, 0.1])
    b = np.array([0, 3, 6])
    assert tied_queries(s, b).tolist() == [False, True]
    res = evaluate_arrays(y, s, b, ["ndcg@2"], tie_range=True)
    tr = res.tie_range["ndcg@2"]
    assert isinstance(tr, TieRange)
    assert tr.low[0] == tr.high[0] == res.per_query["ndcg@2"][0]
    assert tr.low[1] < tr.high[1]
    assert tr.n_tied == 1


def test_ties_at_single_precision_count_for_float32_presets() -> None:
    y = np.array([0.0, 2.0])
    s = np.array([1.0, 1.0 + 1e-9])  # tied in float32 only
    plain = evaluate_arrays(y, s, [0, 2], ["ndcg@1"], preset="rax(scores=float64)", tie_range=True)
    f32 = evaluate_arrays(y, s, [0, 2], ["ndcg@1"], preset="torchmetrics", tie_range=True)
    assert plain.tie_range["ndcg@1"].width == 0.0
    assert f32.tie_range["ndcg@1"].mean_low == 0.0
    assert f32.tie_range["ndcg@1"].mean_high == 1.0


def test_trec_runs_and_complete_queries() -> None:
    qrels = {"1": {"a": 1, "b": 0, "c": 2}, "2": {"x": 1}}
    run = {"1": {"a": 1.0, "b": 1.0, "c": 0.5}}
    res = evaluate_trec(qrels, run, ["ndcg@1", "p@1"], complete=True, tie_range=True)
    tr = res.tie_range["p@1"]
    assert tr.low.tolist() == [0.0, 0.0] and tr.high.tolist() == [1.0, 0.0]
    assert res.to_dict()["tie_range"]["p@1"]["high"] == 0.5


def test_wide_tie_range_warns() -> None:
    with pytest.warns(UserWarning, match="ties decide"):
        evaluate_arrays([1.0, 0.0], [0.0, 0.0], [0, 2], ["ndcg@1"], tie_range=True)


@pytest.mark.realdata
def test_ohsumed_constant_scores(ohsumed) -> None:
    """Constant scores on OHSUMED's Fold1 validation file: file order gives NDCG@10 0.456
    under the LETOR presets, random scores about 0.21, and the tie range spans 0 to 1."""
    ds = read_letor(ohsumed / "Fold1" / "vali.txt.gz")
    for preset in ("letor3", "letor4"):
        with pytest.warns(UserWarning, match="ties decide"):
            res = evaluate(ds, np.zeros(ds.n_docs), ["ndcg@10"], preset=preset, tie_range=True)
        assert abs(res["ndcg@10"] - 0.456) < 5e-4
        tr = res.tie_range["ndcg@10"]
        assert tr.mean_low == 0.0 and tr.mean_high == 1.0
        assert tr.n_tied == ds.n_queries
        rand = [
            evaluate(ds, np.random.default_rng(s).random(ds.n_docs), ["ndcg@10"], preset=preset)[
                "ndcg@10"
            ]
            for s in range(20)
        ]
        assert abs(float(np.mean(rand)) - 0.209) < 0.01


def test_cli_tie_range(tmp_path) -> None:
    f = tmp_path / "d.txt"
    f.write_text(
        "2 qid:1 1:0.5 #docid = a\n0 qid:1 1:0.5 #docid = b\n1 qid:2 1:0.1 #docid = c\n"
        "0 qid:2 1:0.9 #docid = d\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "ndcglab", "evaluate", str(f), "--feature", "1",
         "--measure", "ndcg@1", "--tie-range", "--format", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    import json

    got = json.loads(r.stdout)["tie_range"]["ndcg@1"]
    assert got["low"] == 0.0 and got["high"] == 0.5
    assert "ties decide" in r.stderr
