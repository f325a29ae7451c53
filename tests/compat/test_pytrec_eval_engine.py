"""The trec_eval measures the drop-in computes through trec_eval's engine (ndcglab.treceval):
``set_*``, ``relative_P``, ``Rprec_mult``, ``utility``, ``G``, ``binG``, ``Rndcg``, ``ndcg_rel``,
``relstring``, ``gm_bpref``, ``num_nonrel_judged_ret``. Oracle: pytrec_eval itself, per query."""

from __future__ import annotations

import math
import random

import pytest

import ndcglab.compat.pytrec_eval as drop_in

pytrec_eval = pytest.importorskip("pytrec_eval")

ENGINE = [
    "G", "Rndcg", "Rprec_mult", "binG", "gm_bpref", "ndcg_rel", "num_nonrel_judged_ret",
    "relative_P", "relstring", "set_F", "set_P", "set_map", "set_recall", "set_relative_P",
    "utility",
]  # fmt: skip


def _dicts(seed: int, n_queries: int = 40) -> tuple[dict, dict]:
    """Int labels -1..3, tied scores (two decimals), unjudged retrieved documents, judged ones
    not retrieved, a run query without judgements and a judged query the run lacks."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in range(rng.randint(1, 60))]
        judged = rng.sample(docs, rng.randint(1, len(docs)))
        qrels[f"q{q}"] = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in judged}
        retrieved = rng.sample(docs, rng.randint(0, len(docs)))
        run[f"q{q}"] = {d: round(rng.random(), 2) for d in retrieved}
    run["q_unjudged"] = {"d1": 0.5}
    del run["q0"]
    return qrels, run


def _same(want: dict, got: dict) -> None:
    assert want.keys() == got.keys()
    for q in want:
        assert want[q].keys() == got[q].keys(), q
        for m, v in want[q].items():
            assert isinstance(got[q][m], float), (q, m)
            assert math.isclose(v, got[q][m], rel_tol=0, abs_tol=1e-12), (q, m, v, got[q][m])


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"relevance_level": 2}, {"judged_docs_only_flag": True}, {"relevance_level": 3}],
)
@pytest.mark.parametrize("seed", [1, 2])
def test_each_engine_measure_equals_pytrec_eval_per_query(kwargs, seed):
    qrels, run = _dicts(seed)
    want = pytrec_eval.RelevanceEvaluator(qrels, set(ENGINE), **kwargs).evaluate(run)
    got = drop_in.RelevanceEvaluator(qrels, set(ENGINE), **kwargs).evaluate(run)
    _same(want, got)


@pytest.mark.parametrize("names", [{"all_trec"}, {"set"}, {"official", "set", "ndcg"}])
def test_nicknames_equal_pytrec_eval(names):
    qrels, run = _dicts(3)
    want = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    got = drop_in.RelevanceEvaluator(qrels, names).evaluate(run)
    _same(want, got)


def test_parameters_of_the_engine_measures():
    qrels, run = _dicts(4)
    names = {"Rprec_mult.0.5,1.5", "relative_P_7", "relative_P.3", "set_P", "ndcg_cut.3"}
    want = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    got = drop_in.RelevanceEvaluator(qrels, names).evaluate(run)
    assert {"Rprec_mult_0.50", "Rprec_mult_1.50", "relative_P_3", "relative_P_7"} <= set(
        next(iter(got.values()))
    )
    _same(want, got)


def test_supported_measures_cover_pytrec_eval():
    assert set(pytrec_eval.supported_measures) <= drop_in.supported_measures
    for name in ("official", "set", "all_trec"):
        assert set(pytrec_eval.supported_nicknames[name]) == drop_in.supported_nicknames[name]


def test_measures_already_computed_keep_their_values():
    """Adding an engine measure changes neither the fast path's nor the general path's values
    of the others."""
    qrels, run = _dicts(5)
    for base in ({"map", "ndcg_cut.10", "P_5", "bpref"}, {"infAP", "gm_map", "11pt_avg"}):
        alone = drop_in.RelevanceEvaluator(qrels, base).evaluate(run)
        mixed = drop_in.RelevanceEvaluator(qrels, base | {"set_F", "G"}).evaluate(run)
        for q, row in alone.items():
            assert {k: mixed[q][k] for k in row} == row


def test_what_the_engine_cannot_read_is_refused():
    qrels = {"q": {"a": 0.5, "b": 2}}
    with pytest.raises(ValueError, match="read integer labels"):
        drop_in.RelevanceEvaluator(qrels, {"set_P"})
    with pytest.raises(ValueError, match="tie rule only"):
        drop_in.RelevanceEvaluator({"q": {"a": 1}}, {"utility"}, ties="average")
    with pytest.raises(ValueError, match="whole relevance levels"):
        drop_in.RelevanceEvaluator({"q": {"a": 1}}, {"G"}, relevance_level=1.5)
    # the measures ndcglab computes still read float labels with the same request shape
    ev = drop_in.RelevanceEvaluator(qrels, {"ndcg"})
    assert ev.evaluate({"q": {"a": 1.0, "b": 0.0}})["q"]["ndcg"] > 0
