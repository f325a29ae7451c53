"""ndcglab's presets against the libraries whose conventions they name, on real LETOR data:
pytrec_eval (``trec_eval``), scikit-learn (``sklearn``) and LightGBM (``lightgbm``), to 1e-9."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from ndcglab.data import read_letor
from ndcglab.measures import evaluate, evaluate_arrays, evaluate_trec

TOL = 1e-9


def _load(folder: Path, part: str = "test"):
    return read_letor(folder / "Fold1" / f"{part}.txt.gz")


def _scorings(ds):
    """A few rankings: a feature, the same feature rounded (many ties), all equal, random."""
    rng = np.random.default_rng(0)
    f = ds.features[:, 0].astype(np.float64)
    return {
        "feature1": f,
        "rounded": np.round(f, 1),
        "constant": np.zeros(ds.n_docs),
        "random": rng.normal(size=ds.n_docs),
    }


def _trec_dicts(ds, scores, keep=None):
    qrels, run = {}, {}
    for q in range(ds.n_queries):
        lo, hi = ds.boundaries[q], ds.boundaries[q + 1]
        qid = str(ds.query_ids[q])
        qrels[qid] = {str(ds.doc_ids[i]): int(ds.labels[i]) for i in range(lo, hi)}
        run[qid] = {
            str(ds.doc_ids[i]): float(scores[i]) for i in range(lo, hi) if keep is None or keep[i]
        }
    return qrels, run


# ------------------------------------------------------------------------------ pytrec_eval
PAIRS = [
    ("ndcg", "ndcg"),
    ("ndcg@5", "ndcg_cut_5"),
    ("ndcg@10", "ndcg_cut_10"),
    ("ndcg@20", "ndcg_cut_20"),
    ("map", "map"),
    ("map@10", "map_cut_10"),
    ("p@5", "P_5"),
    ("p@10", "P_10"),
    ("p@30", "P_30"),
    ("mrr", "recip_rank"),
]


@pytest.mark.parametrize("which", ["mq2008", "ohsumed"])
def test_trec_eval_preset_matches_pytrec_eval(which: str, request: pytest.FixtureRequest) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ds = _load(request.getfixturevalue(which))
    # doc ids repeat across queries but never within one: the per-query dicts below keep every
    # judged document (a repeated id would silently drop one and the comparison would be wrong)
    for q in range(ds.n_queries):
        ids = [str(d) for d in ds.doc_ids[ds.boundaries[q] : ds.boundaries[q + 1]]]
        assert len(set(ids)) == len(ids), (which, ds.query_ids[q])
    for name, s in _scorings(ds).items():
        rng = np.random.default_rng(1)
        keep = rng.random(ds.n_docs) < 0.7  # a run that misses some judged documents
        for subset in (None, keep):
            qrels, run = _trec_dicts(ds, s, subset)
            ev = pytrec_eval.RelevanceEvaluator(
                qrels, {"ndcg", "ndcg_cut.5,10,20", "map", "map_cut.10", "P.5,10,30", "recip_rank"}
            )
            want = ev.evaluate(run)
            got = evaluate_trec(qrels, run, [m for m, _ in PAIRS])
            assert list(got.query_ids) == sorted(want)
            for ours, theirs in PAIRS:
                w = np.array([want[q][theirs] for q in got.query_ids])
                assert np.abs(got.per_query[ours] - w).max() < TOL, (which, name, ours)
            if subset is None:  # the same through evaluate() on the dataset (docno = docid)
                res = evaluate(ds, s, [m for m, _ in PAIRS], preset="trec_eval")
                order = np.argsort(ds.query_ids.astype(str))
                for ours, theirs in PAIRS:
                    w = np.array([want[str(q)][theirs] for q in ds.query_ids])
                    assert np.abs(res.per_query[ours] - w).max() < TOL
                    assert np.array_equal(res.per_query[ours][order], got.per_query[ours])


def test_evaluate_trec_queries_and_unretrieved() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"q1": {"a": 1, "b": 0, "c": 2, "z": 1}, "q2": {"x": 0}, "q3": {"y": 1}}
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.5}, "q2": {"x": 1.0}, "q4": {"k": 1.0}}
    res = evaluate_trec(qrels, run, ["ndcg", "ndcg@2", "map", "p@5", "mrr"])
    assert list(res.query_ids) == ["q1", "q2"]  # in both run and qrels, like trec_eval
    want = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg", "ndcg_cut.2", "map", "P.5", "recip_rank"}
    ).evaluate(run)
    for ours, theirs in [
        ("ndcg", "ndcg"),
        ("ndcg@2", "ndcg_cut_2"),
        ("map", "map"),
        ("p@5", "P_5"),
        ("mrr", "recip_rank"),
    ]:
        assert np.allclose(
            res.per_query[ours], [want[q][theirs] for q in ("q1", "q2")], rtol=0, atol=TOL
        )
    # hand check q1: ties by docno descending -> c(2), b(0), a(1), d; unretrieved z (1) counts
    assert res.per_query["map"][0] == pytest.approx((1 / 1 + 2 / 3) / 3)
    assert res.empty_queries == 1


def test_trec_eval_compares_scores_in_single_precision() -> None:
    """trec_eval keeps run scores as C float: 1 + 1e-9 and 1 tie (then docno descending)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0 + 1e-9, "b": 1.0}}
    want = pytrec_eval.RelevanceEvaluator(qrels, {"P.1"}).evaluate(run)["q"]["P_1"]
    assert want == 0.0  # tie in float32 -> docno descending -> b first
    assert evaluate_trec(qrels, run, ["p@1"]).mean["p@1"] == 0.0
    assert evaluate_trec(qrels, {"q": {"a": 1.0 + 1e-7, "b": 1.0}}, ["p@1"]).mean["p@1"] == 1.0
    res = evaluate_arrays(
        [1, 0], [1.0 + 1e-9, 1.0], [0, 2], ["p@1"], preset="trec_eval", doc_ids=["a", "b"]
    )
    assert res.mean["p@1"] == 0.0 and res.convention["score_precision"] == "float32"
    res = evaluate_arrays(
        [1, 0],
        [1.0 + 1e-9, 1.0],
        [0, 2],
        ["p@1"],
        preset="trec_eval",
        doc_ids=["a", "b"],
        score_precision="float64",
    )
    assert res.mean["p@1"] == 1.0


# ------------------------------------------------------------------------------ scikit-learn
@pytest.mark.parametrize("which", ["mq2008", "ohsumed"])
def test_sklearn_preset_matches_ndcg_score(which: str, request: pytest.FixtureRequest) -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    ds = _load(request.getfixturevalue(which))
    for name, s in _scorings(ds).items():
        res = evaluate(ds, s, ["ndcg", "ndcg@1", "ndcg@5", "ndcg@10", "ndcg@50"], preset="sklearn")
        for q in range(ds.n_queries):
            lo, hi = ds.boundaries[q], ds.boundaries[q + 1]
            if hi - lo < 2:  # sklearn refuses 1-document lists
                continue
            y, sc = ds.labels[lo:hi][None, :], s[lo:hi][None, :]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for k in (None, 1, 5, 10, 50):
                    want = metrics.ndcg_score(y, sc, k=k)
                    key = "ndcg" if k is None else f"ndcg@{k}"
                    assert abs(res.per_query[key][q] - want) < TOL, (which, name, key, q)


def test_sklearn_refuses_one_document_lists_we_do_not() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    with pytest.raises(ValueError):
        metrics.ndcg_score([[1.0]], [[0.5]])
    res = evaluate_arrays([1.0], [0.5], [0, 1], ["ndcg"], preset="sklearn")
    assert res.mean["ndcg"] == 1.0


# ------------------------------------------------------------------------------ LightGBM
@pytest.mark.parametrize("which", ["mq2008", "ohsumed"])
def test_lightgbm_preset_matches_lightgbm_metrics(
    which: str, request: pytest.FixtureRequest
) -> None:
    lgb = pytest.importorskip("lightgbm")
    folder = request.getfixturevalue(which)
    train, test = _load(folder, "train"), _load(folder, "test")
    ks = [1, 3, 5, 10, 20]
    params = {
        "objective": "lambdarank",
        "metric": ["ndcg", "map"],
        "eval_at": ks,
        "num_leaves": 4,
        "learning_rate": 0.1,
        "min_data_in_leaf": 50,
        "verbose": -1,
        "num_threads": 1,
        "deterministic": True,
    }
    dtrain = lgb.Dataset(train.features, train.labels, group=train.query_lengths)
    dtest = lgb.Dataset(test.features, test.labels, group=test.query_lengths, reference=dtrain)
    for rounds in (1, 3):
        evals: dict = {}
        booster = lgb.train(
            params,
            dtrain,
            num_boost_round=rounds,
            valid_sets=[dtest],
            valid_names=["test"],
            callbacks=[lgb.record_evaluation(evals)],
        )
        pred = booster.predict(test.features)
        n_distinct = len(np.unique(pred))
        assert n_distinct < test.n_docs  # few rounds of a small tree: many tied scores
        res = evaluate(
            test, pred, [f"ndcg@{k}" for k in ks] + [f"map@{k}" for k in ks], preset="lightgbm"
        )
        for k in ks:
            assert abs(res.mean[f"ndcg@{k}"] - evals["test"][f"ndcg@{k}"][-1]) < TOL, (which, k)
            assert abs(res.mean[f"map@{k}"] - evals["test"][f"map@{k}"][-1]) < TOL, (which, k)
