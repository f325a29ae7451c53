"""The tie range (``tie_range=True``): the best and the worst value over every order of the
tied documents, checked against brute force — every permutation of each small list, ranked
with ties in input order, so that every order of the tied documents is met — for NDCG@k, AP,
P@k and RR (and DCG, ERR) under several presets; and the OHSUMED example: constant scores."""

from __future__ import annotations

import itertools
import json
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


#: measures that tell judged documents from unjudged ones, or read the whole ranking
TREC_MEASURES = (
    "judged@3", "rbp_residual", "bpref", "infap", "rbp", "recall@3", "success@2", "rprec",
    "err@3",
    "iprec(level=0.5)", "ndcg", "map", "num_rel_ret",
)  # fmt: skip


def _brute_trec(qrels: dict, docs: list[str], scores: list[float], measure: str) -> tuple:
    """min and max of ``measure`` over every order of the documents within equal scores: each
    permutation of the run is evaluated with scores replaced by distinct ranks that keep the
    order of unequal scores (so the permutation decides only the order of tied documents)."""
    lo, hi = math.inf, -math.inf
    for perm in itertools.permutations(range(len(docs))):
        ordered = sorted(perm, key=lambda i: -scores[i])  # stable: the permutation's order
        run = {"q": {docs[i]: float(len(docs) - r) for r, i in enumerate(ordered)}}
        v = evaluate_trec(qrels, run, [measure], preset="trec_eval(scores=float64)")
        x = float(next(iter(v.per_query.values()))[0])
        lo, hi = min(lo, x), max(hi, x)
    return lo, hi


def test_trec_tie_range_equals_brute_force_for_judged_aware_measures() -> None:
    """The tie range of measures that tell judged from unjudged documents (judged@k, RBP's
    residual, bpref, infAP) and of the rest of the rank family, on TREC runs with unjudged
    documents (not in the qrels) and documents in the pool but unjudged (relevance -1),
    against every order of the tied documents."""
    rng = np.random.default_rng(36)
    checked = 0
    for _ in range(14):
        n = int(rng.integers(2, 7))
        docs = [f"d{i}" for i in range(n)]
        qrels = {"q": {}}
        for d in docs:
            kind = rng.integers(0, 4)  # 0: not in the qrels; -1: pool-unjudged; 1, 2: judged
            if kind:
                qrels["q"][d] = {1: -1, 2: 0, 3: int(rng.integers(1, 3))}[int(kind)]
        qrels["q"]["extra"] = 1  # a relevant document the run misses
        scores = rng.integers(0, 2, n).astype(float).tolist()
        run = {"q": dict(zip(docs, scores))}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = evaluate_trec(
                qrels, run, list(TREC_MEASURES), preset="trec_eval(scores=float64)",
                tie_range=True,
            )  # fmt: skip
        for m in TREC_MEASURES:
            tr = res.tie_range[m]
            lo, hi = _brute_trec(qrels, docs, scores, m)
            assert math.isclose(tr.low[0], lo, abs_tol=1e-12), (m, qrels, scores, lo, hi)
            assert math.isclose(tr.high[0], hi, abs_tol=1e-12), (m, qrels, scores, lo, hi)
            checked += 1
    assert checked == 14 * len(TREC_MEASURES)


def test_infap_range_needs_a_search_no_single_order_gives_it() -> None:
    """infAP: on this query neither the relevance order nor its reverse reaches both extremes
    (brute force), yet the tie range finds them (``infap_extreme_kernel``'s search)."""
    qrels = {"q": {"d0": -1, "d1": 2, "d2": -1, "extra": 1}}
    docs, scores = ["d0", "d1", "d2", "d3", "d4"], [0.0, 0.0, 1.0, 0.0, 0.0]
    lo, hi = _brute_trec(qrels, docs, scores, "infap")
    run = {"q": dict(zip(docs, scores))}
    by_order = []
    for key in ("label_asc", "label_desc"):  # the two orders by relevance
        one = evaluate_trec(qrels, run, [f"infap(ties={key})"], preset="trec_eval(scores=float64)")
        by_order.append(float(next(iter(one.per_query.values()))[0]))
    assert not (math.isclose(min(by_order), lo) and math.isclose(max(by_order), hi))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = evaluate_trec(
            qrels, run, ["infap"], preset="trec_eval(scores=float64)", tie_range=True
        )
    tr = res.tie_range["infap"]
    assert lo < hi and tr.low[0] == pytest.approx(lo, abs=1e-15)
    assert tr.high[0] == pytest.approx(hi, abs=1e-15)


def test_too_large_a_search_gives_no_range_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """A group of tied documents too large for infAP's exact search: the bounds of that query
    are NaN, the means too (never a mean over the other queries alone), and a warning says so."""
    from ndcglab.measures import _trec_kernels

    monkeypatch.setattr(_trec_kernels, "INFAP_STATES", 3)  # read at compile time: pure Python
    monkeypatch.setattr(
        _trec_kernels, "infap_extreme_kernel", _trec_kernels.infap_extreme_kernel.py_func
    )
    qrels = {"q": {"a": 1, "b": 0, "c": 1}, "r": {"x": 1, "y": 0}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}, "r": {"x": 2.0, "y": 1.0}}
    with pytest.warns(UserWarning, match="infap: no tie range: for 1 of the 1 queries"):
        res = evaluate_trec(qrels, run, ["infap", "map"], tie_range=True)
    tr = res.tie_range["infap"]
    assert math.isnan(tr.low[0]) and math.isnan(tr.mean_low) and math.isnan(tr.mean_high)
    assert tr.low[1] == tr.high[1] == res.per_query["infap"][1]
    assert res.to_dict()["tie_range"]["infap"]["low"] is None
    from ndcglab.analysis import compare_runs

    runs = {"A": run, "B": {"q": {"a": 3.0, "b": 2.0, "c": 1.0}, "r": {"x": 2.0, "y": 1.0}}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = compare_runs(qrels, runs, ["infap"], tie_range=True, baseline="B")
    rows = {r[0].split()[0]: r for r in cmp.table()[1]}
    assert "not given" in rows["A"] and "not given" not in rows["B"]


def test_cli_prints_infap_tie_range(tmp_path) -> None:
    """infAP's range on the command line: one relevant, one judged non-relevant, one
    pool-unjudged and one unpooled document, all tied — brute force over the 24 orders."""
    q, r = tmp_path / "qrels", tmp_path / "run"
    q.write_text("101 0 d1 1\n101 0 d2 0\n101 0 d3 -1\n")
    r.write_text("".join(f"101 Q0 d{i} {i} 1.0 x\n" for i in range(1, 5)))
    lo, hi = _brute_trec(
        {"q": {"d1": 1, "d2": 0, "d3": -1}}, ["d1", "d2", "d3", "d4"], [1.0] * 4, "infap"
    )
    out = subprocess.run(
        [sys.executable, "-m", "ndcglab", "evaluate", "--qrels", str(q), "--run", str(r),
         "-m", "infap", "--tie-range", "--format", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)["tie_range"]["infap"]
    assert got["low"] == pytest.approx(lo, abs=1e-12) and got["high"] == pytest.approx(
        hi, abs=1e-12
    )
    assert lo < hi and "Traceback" not in out.stderr
