"""The compat layer's fast path (:mod:`ndcglab.compat._trec_fast`) against pytrec_eval (the
oracle, 1e-12 per query) and against the general path of the same evaluator (the same numbers,
bit for bit), on inputs made to hit its corners: many tied scores (ids break them), short runs,
queries without a relevant document, judged documents the run misses, relevance levels."""

from __future__ import annotations

import math

import pytest

import ndcglab.compat.pytrec_eval as drop_in

from .beir_data import beir_dicts

pytrec_eval = pytest.importorskip("pytrec_eval")

FAST = [
    "map", "ndcg", "ndcg_cut_10", "ndcg_cut_3", "recall_100", "recall_5", "P_5", "P_1000",
    "recip_rank", "bpref", "Rprec", "num_ret", "num_rel", "num_rel_ret", "map_cut_10",
    "success_1", "success_10", "num_q", "runid",
]  # fmt: skip


def _corners(seed: int) -> tuple[dict, dict]:
    qrels, run = beir_dicts(120, 150, judged=30, decimals=None, seed=seed)
    for i, q in enumerate(list(run)):
        if i % 2:  # ties everywhere: two decimals
            run[q] = {d: round(s, 2) for d, s in run[q].items()}
        if i % 5 == 0:  # every score equal: the ids alone rank
            run[q] = dict.fromkeys(run[q], 0.5)
        if i % 7 == 0:  # a short run
            run[q] = dict(list(run[q].items())[:3])
        if i % 11 == 0:  # judged, nothing relevant
            qrels[q] = dict.fromkeys(qrels[q], 0)
        if i % 13 == 0:  # equal in single precision only
            run[q] = {d: 0.1 + (j % 3) * 1e-12 for j, d in enumerate(run[q])}
    qrels["only_in_qrels"] = {"x": 2}
    run["only_in_run"] = {"x": 1.0}
    run["q1"] = {}
    return qrels, run


def _general(ev: drop_in.RelevanceEvaluator, run: dict) -> dict:
    fast, ev._fast = ev._fast, None
    try:
        return ev.evaluate(run)
    finally:
        ev._fast = fast


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("seed", [0, 1])
def test_fast_path_equals_pytrec_eval_and_the_general_path(seed, level):
    qrels, run = _corners(seed)
    want = pytrec_eval.RelevanceEvaluator(qrels, FAST, relevance_level=level).evaluate(run)
    ev = drop_in.RelevanceEvaluator(qrels, FAST, relevance_level=level)
    assert ev._fast is not None
    got = ev.evaluate(run)
    assert got == _general(ev, run)  # same keys, same order, same bits
    assert list(got) == sorted(want) and list(got["q3"]) == ev.measures
    for q in want:
        for m in want[q]:
            assert math.isclose(got[q][m], want[q][m], rel_tol=0, abs_tol=1e-12), (q, m)


def test_ties_broken_by_document_id_descending():
    qrels = {"q": {"a": 1, "c": 0, "b": 2}}
    run = {"q": {"a": 0.5, "b": 0.5, "c": 0.5, "z": 0.5, "y": 0.9}}
    names = ["map", "ndcg_cut_2", "P_2", "recip_rank", "bpref"]
    want = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    got = drop_in.RelevanceEvaluator(qrels, names).evaluate(run)
    assert got == want  # order y, z, c, b, a: b at 4, a at 5, c (non-relevant) at 3
    assert got["q"]["recip_rank"] == 0.25


def test_float_labels_on_the_fast_path_equal_the_general_path():
    qrels, run = _corners(3)
    qrels = {q: {d: v * 0.75 for d, v in docs.items()} for q, docs in qrels.items()}
    ev = drop_in.RelevanceEvaluator(qrels, FAST, relevance_level=1.5)
    assert ev._fast is not None
    assert ev.evaluate(run) == _general(ev, run)


@pytest.mark.parametrize(
    "kwargs, qrels_change",
    [
        ({"judged_docs_only_flag": True}, None),
        ({"ties": "average"}, None),
        ({}, -1),  # a negative label
        ({}, math.nan),
    ],
)
def test_what_the_fast_path_does_not_take_goes_to_the_general_path(kwargs, qrels_change):
    qrels, run = beir_dicts(5, 20, judged=8, seed=2)
    if qrels_change is not None:
        qrels["q0"][next(iter(qrels["q0"]))] = qrels_change
    kwargs_pt = {k: v for k, v in kwargs.items() if k != "ties"}
    ev = drop_in.RelevanceEvaluator(qrels, ["map", "P_5"], **kwargs)
    assert ev._fast is None
    if qrels_change is None:  # pytrec_eval reads these qrels: the general path's numbers
        want = pytrec_eval.RelevanceEvaluator(qrels, ["map", "P_5"], **kwargs_pt).evaluate(run)
        if not kwargs.get("ties"):
            got = ev.evaluate(run)
            assert got.keys() == want.keys()
            assert all(got[q] == pytest.approx(want[q], abs=1e-12) for q in want)
    assert drop_in.RelevanceEvaluator(qrels, ["map", "gm_map"])._fast is None


@pytest.mark.parametrize("bad", [math.inf, math.nan, 1e300])
def test_a_bad_score_gives_the_general_paths_error(bad):
    qrels, run = beir_dicts(4, 10, judged=5, seed=4)
    run["q2"]["d2_3"] = bad
    ev = drop_in.RelevanceEvaluator(qrels, ["map"])
    assert ev._fast is not None
    with pytest.raises(Exception) as fast_err:
        ev.evaluate(run)
    ev._fast = None
    with pytest.raises(Exception) as general_err:
        ev.evaluate(run)
    assert str(fast_err.value) == str(general_err.value)


def test_provider_fast_path_equals_the_general_path_and_pytrec_eval():
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, RR, Bpref, NumQ, NumRel, NumRet, P, R, Rprec, Success, nDCG

    import ndcglab.compat.ir_measures as nim

    qrels, run = _corners(4)
    sets = [
        [nDCG @ 10, nDCG, AP, AP @ 10, R @ 100, P @ 5, RR, Bpref, Rprec, Success @ 10],
        [NumRet, NumRel, NumRet(rel=1), NumQ],
        [P(rel=2) @ 5, AP(rel=2), nDCG @ 5, Bpref(rel=2)],
    ]
    for measures in sets:
        ev = nim.provider.evaluator(measures, qrels)
        assert ev._fast
        got = list(ev.iter_calc(run))
        agg = ev.calc_aggregate(run)
        ev._fast.clear()
        assert got == list(ev.iter_calc(run))
        assert agg == ev.calc_aggregate(run)
        ref = {
            (m.query_id, str(m.measure)): m.value
            for m in ir_measures.pytrec_eval.iter_calc(measures, qrels, run)
        }
        for m in got:
            want = ref[(m.query_id, str(m.measure))]
            assert math.isclose(m.value, want, rel_tol=0, abs_tol=1e-12), m
    assert not nim.NdcglabProvider(ties="average").evaluator([AP, P @ 5], qrels)._fast
    assert not nim.provider.evaluator([AP], {**qrels, "judged_by_nothing": {}})._fast
