"""ndcglab.compat.pytrec_eval against pytrec_eval itself (the oracle), and what it adds: float
labels, a tie rule, inputs as DataFrames, ranx and ir_measures objects."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ndcglab.compat.pytrec_eval as drop_in

from .beir_data import beir_dicts

pytrec_eval = pytest.importorskip("pytrec_eval")

BEIR_MEASURES = {"map", "ndcg", "ndcg_cut_10", "recall_100", "P_5", "recip_rank", "bpref"}


def _same(a: dict, b: dict, tol: float = 1e-12) -> None:
    assert a.keys() == b.keys()
    for q in a:
        assert a[q].keys() == b[q].keys(), q
        for m in a[q]:
            assert math.isclose(a[q][m], b[q][m], rel_tol=0, abs_tol=tol), (q, m)


@pytest.fixture(scope="module")
def beir() -> tuple[dict, dict]:
    return beir_dicts(300, 300, decimals=2, seed=1)


def test_beir_measures_equal_pytrec_eval_per_query(beir):
    qrels, run = beir
    want = pytrec_eval.RelevanceEvaluator(qrels, BEIR_MEASURES).evaluate(run)
    got = drop_in.RelevanceEvaluator(qrels, BEIR_MEASURES).evaluate(run)
    _same(want, got)


@pytest.mark.parametrize(
    "kwargs", [{"relevance_level": 2}, {"judged_docs_only_flag": True}, {"relevance_level": 3}]
)
def test_options_equal_pytrec_eval(beir, kwargs):
    qrels, run = beir
    qrels = {q: qrels[q] for q in list(qrels)[:60]}
    names = {"official", "ndcg_cut.5,10", "recall.10,100", "infAP", "map_cut_20", "success"}
    want = pytrec_eval.RelevanceEvaluator(qrels, names, **kwargs).evaluate(run)
    got = drop_in.RelevanceEvaluator(qrels, names, **kwargs).evaluate(run)
    for per_query in (*want.values(), *got.values()):
        per_query.pop("iprec_at_recall_0.00", None)  # see test_empty_ranking
    _same(want, got)


@pytest.mark.parametrize(
    "names",
    [
        ["ndcg_cut.3"],
        ["ndcg_cut.1,2,3,1000"],
        ["ndcg_cut", "ndcg_cut.1,4", "ndcg_cut_20,4", "ndcg_cut_15", "recall.1000", "P"],
        ["P", "recall", "map_cut", "success", "iprec_at_recall"],
        ["official"],
        ["official", "ndcg"],
        ["map", "gm_map", "Rprec", "11pt_avg", "num_ret", "num_rel", "num_rel_ret"],
        [],
    ],
)
def test_names_give_pytrec_eval_keys(names):
    qrels = {"a": {"x": 0, "y": 1, "z": 0}, "b": {"y": 1, "z": 2}}
    run = {"a": {"x": 1.0, "y": 0.0, "z": 1.5}, "b": {"y": 0.3, "w": 0.2}}
    want = pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(run)
    got = drop_in.RelevanceEvaluator(qrels, names).evaluate(run)
    _same(want, got)


def test_empty_inputs_as_pytrec_eval():
    qrels = {"a": {"x": 0, "y": 1}, "b": {"y": 1}, "c": {}}
    run = {"a": {"x": 1.0, "y": 0.5}, "b": {}, "d": {"x": 1.0}}
    for q, r, names in [
        (qrels, {}, {"map"}),
        (qrels, run, set()),
        ({}, run, {"map", "ndcg"}),
        ({}, {}, set()),
        (qrels, run, {"map", "ndcg", "P_5"}),
    ]:
        want = pytrec_eval.RelevanceEvaluator(q, names).evaluate(r)
        assert drop_in.RelevanceEvaluator(q, names).evaluate(r) == want


def test_empty_ranking():
    """A query in the run with no document scores 0 (pytrec_eval leaves
    iprec_at_recall_0.00 undefined there: it returns nan)."""
    got = drop_in.RelevanceEvaluator({"b": {"y": 1}}, {"iprec_at_recall", "map"}).evaluate(
        {"b": {}}
    )
    assert set(got["b"].values()) == {0.0}


def test_aggregation_as_pytrec_eval(beir):
    qrels, run = beir
    names = {"map", "gm_map", "num_rel_ret", "ndcg"}
    res = drop_in.RelevanceEvaluator(qrels, names).evaluate(run)
    for m in names:
        values = [v[m] for v in res.values()]
        want = pytrec_eval.compute_aggregated_measure(m, values)
        assert drop_in.compute_aggregated_measure(m, values) == pytest.approx(want, abs=1e-12)


def test_unsupported_names_are_refused():
    with pytest.raises(ValueError, match="unsupported measure foo"):
        drop_in.RelevanceEvaluator({"a": {"x": 1}}, {"foo"})
    with pytest.raises(ValueError, match="'all_prefs' measures are not computed"):
        drop_in.RelevanceEvaluator({"a": {"x": 1}}, {"all_prefs"})
    with pytest.raises(ValueError, match="whole number"):
        drop_in.RelevanceEvaluator({"a": {"x": 1}}, {"P.2.5"})
    ev = drop_in.RelevanceEvaluator({"a": {"x": 1}}, {"all_trec"})
    assert "ndcg_cut_10" in ev.measures and "set_P" in ev.measures


def test_float_labels_closed_form():
    """pytrec_eval refuses 0.5; here a label is its own gain and relevant when >= the level."""
    qrels = {"q": {"a": 0.5, "b": 2.0, "c": 0.0}}
    with pytest.raises(TypeError):
        pytrec_eval.RelevanceEvaluator(qrels, {"ndcg"})
    ev = drop_in.RelevanceEvaluator(qrels, {"ndcg", "map", "P_2"})
    got = ev.evaluate({"q": {"a": 0.9, "b": 0.5, "c": 0.1}})["q"]
    ideal = 2.0 + 0.5 / math.log2(3)
    assert got["ndcg"] == pytest.approx((0.5 + 2.0 / math.log2(3)) / ideal, abs=1e-15)
    assert got["map"] == pytest.approx(0.5, abs=1e-15)  # b relevant (>= 1), at rank 2
    assert got["P_2"] == pytest.approx(0.5, abs=1e-15)
    half = drop_in.RelevanceEvaluator(qrels, {"map"}, relevance_level=0.5)
    assert half.evaluate({"q": {"a": 0.9, "b": 0.5, "c": 0.1}})["q"]["map"] == 1.0
    # integral floats give exactly pytrec_eval's numbers
    ints = {"q": {"a": 1, "b": 3, "c": 0}}
    floats = {"q": {"a": 1.0, "b": 3.0, "c": 0.0}}
    run = {"q": {"a": 0.9, "b": 0.5, "c": 0.1}}
    want = pytrec_eval.RelevanceEvaluator(ints, BEIR_MEASURES).evaluate(run)
    _same(want, drop_in.RelevanceEvaluator(floats, BEIR_MEASURES).evaluate(run), tol=0)


def _as_dicts(matrix: np.ndarray) -> dict[str, dict[str, float]]:
    rows = matrix.tolist()
    return {f"q{i}": {f"d{j}": v for j, v in enumerate(row)} for i, row in enumerate(rows)}


def test_ties_average_is_scikit_learns_ndcg():
    """A constant scorer (mteb issue 5092): ties=average gives the expectation over the tied
    orders, which scikit-learn's ndcg_score computes (ignore_ties=False)."""
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 4, size=(20, 12)).astype(float)
    labels[:, 0] = 2.0  # every query has a relevant document
    scores = rng.integers(0, 3, size=(20, 12)).astype(float)  # many ties
    qrels = {
        f"q{i}": {f"d{j}": float(v) for j, v in enumerate(row)} for i, row in enumerate(labels)
    }
    run = {f"q{i}": {f"d{j}": float(v) for j, v in enumerate(row)} for i, row in enumerate(scores)}
    got = drop_in.RelevanceEvaluator(qrels, {"ndcg", "ndcg_cut_5"}, ties="average").evaluate(run)
    for i in range(20):
        q = f"q{i}"
        for key, k in (("ndcg", None), ("ndcg_cut_5", 5)):
            want = sk.ndcg_score(labels[i : i + 1], scores[i : i + 1], k=k)
            assert got[q][key] == pytest.approx(want, abs=1e-12), (q, key)
    const = {q: dict.fromkeys(d, 1.0) for q, d in run.items()}
    rr = drop_in.RelevanceEvaluator(qrels, {"recip_rank"}, ties="average").evaluate(const)
    by_docid = drop_in.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(const)
    assert all(rr[q]["recip_rank"] < 1.0 for q in rr)  # no credit for a lucky docid
    assert any(by_docid[q]["recip_rank"] != rr[q]["recip_rank"] for q in rr)
    with pytest.raises(ValueError, match="ties=average"):
        drop_in.RelevanceEvaluator(qrels, {"bpref"}, ties="average").evaluate(run)


def test_ndcglab_specs_by_name(beir):
    qrels, run = beir
    qrels = {q: qrels[q] for q in list(qrels)[:20]}
    names = ["ndcg(ties=average)@10", "ndcg_cut_10"]
    got = drop_in.RelevanceEvaluator(qrels, names).evaluate(run)
    assert set(next(iter(got.values()))) == set(names)
    avg = drop_in.RelevanceEvaluator(qrels, ["ndcg_cut_10"], ties="average").evaluate(run)
    for q in got:
        assert got[q]["ndcg(ties=average)@10"] == avg[q]["ndcg_cut_10"]


def test_repeated_evaluations_agree(beir):
    """pytrec_eval issue 57: the same inputs give the same numbers every time."""
    qrels, run = beir
    ev = drop_in.RelevanceEvaluator(qrels, BEIR_MEASURES)
    assert ev.evaluate(run) == ev.evaluate(run)


def test_inputs_in_other_shapes(beir, tmp_path):
    pd = pytest.importorskip("pandas")
    qrels, run = beir
    qrels = {q: qrels[q] for q in list(qrels)[:15]}
    run = {q: run[q] for q in qrels}
    want = drop_in.RelevanceEvaluator(qrels, BEIR_MEASURES).evaluate(run)
    qrows = [(q, d, v) for q, ds in qrels.items() for d, v in ds.items()]
    rrows = [(q, d, v) for q, ds in run.items() for d, v in ds.items()]
    frames = [
        (
            pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"]),
            pd.DataFrame(rrows, columns=["query_id", "doc_id", "score"]),
        ),
        (
            pd.DataFrame(qrows[::-1], columns=["qid", "docno", "label"]),
            pd.DataFrame(rrows[::-1], columns=["qid", "docno", "score"]),
        ),
    ]
    for fq, fr in frames:
        _same(want, drop_in.RelevanceEvaluator(fq, BEIR_MEASURES).evaluate(fr), tol=0)
    irm = pytest.importorskip("ir_measures")
    q_nt = [irm.Qrel(q, d, v) for q, d, v in qrows]
    r_nt = (irm.ScoredDoc(q, d, v) for q, d, v in rrows)
    _same(want, drop_in.RelevanceEvaluator(q_nt, BEIR_MEASURES).evaluate(r_nt), tol=0)
    qf, rf = tmp_path / "qrels", tmp_path / "run"
    qf.write_text("".join(f"{q} 0 {d} {v}\n" for q, d, v in qrows))
    rf.write_text("".join(f"{q} Q0 {d} 1 {v!r} x\n" for q, d, v in rrows))
    _same(want, drop_in.RelevanceEvaluator(str(qf), BEIR_MEASURES).evaluate(str(rf)), tol=0)
    with qf.open() as fq, rf.open() as fr:
        want2 = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(fq), BEIR_MEASURES)
        assert drop_in.parse_qrel(qf.open()) == pytrec_eval.parse_qrel(qf.open())
        assert drop_in.parse_run(fr) == pytrec_eval.parse_run(rf.open())
    _same(want2.evaluate(run), want)


@pytest.mark.slow  # ranx compiles its Numba code on first use (seconds to a minute)
def test_ranx_objects(beir):
    ranx = pytest.importorskip("ranx")
    qrels, run = beir
    qrels = {q: qrels[q] for q in list(qrels)[:5]}
    run = {q: run[q] for q in qrels}
    want = drop_in.RelevanceEvaluator(qrels, BEIR_MEASURES).evaluate(run)
    got = drop_in.RelevanceEvaluator(ranx.Qrels(qrels), BEIR_MEASURES).evaluate(ranx.Run(run))
    _same(want, got, tol=0)


def test_the_calls_beir_and_mteb_make(beir):
    """The measure strings BEIR's and MTEB's retrieval evaluators build for k = 1, 3, 5, 10,
    100, 1000 (map_cut, ndcg_cut, recall, P, success with a list of cut-offs)."""
    qrels, run = beir
    ks = ",".join(str(k) for k in (1, 3, 5, 10, 100, 1000))
    names = {f"{m}.{ks}" for m in ("map_cut", "ndcg_cut", "recall", "P", "success")}
    want = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    _same(want, drop_in.RelevanceEvaluator(qrels, names).evaluate(run))
