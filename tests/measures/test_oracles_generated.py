"""ndcglab's measures against other libraries on generated data (no LETOR files needed).

The same comparisons as ``test_libraries.py`` (which needs the real LETOR folders), here on
seeded random queries chosen to reach the corners: tied scores (rounded, or all equal), queries
with no relevant document, one- and two-document lists and lists shorter than the cut-off.

=============  ======================================================  =========================
library        measures                                                ndcglab side
=============  ======================================================  =========================
pytrec_eval    ndcg, ndcg_cut, map, map_cut, P, recip_rank              ``trec_eval`` preset
scikit-learn   ndcg_score, dcg_score (ties averaged)                     ``sklearn`` preset
LightGBM       its ndcg@k and map@k metrics                             ``lightgbm`` preset
ranx           ndcg, ndcg_burges, dcg, dcg_burges, map, precision, mrr  explicit conventions
=============  ======================================================  =========================

Each library reaches both measure families: the gain family (NDCG, DCG, ideal DCG) and the
relevance family (AP, P@k, RR).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ndcglab.measures import evaluate_arrays, evaluate_trec

TOL = 1e-9
KS = (1, 3, 5, 10, 20)


def generated(seed: int, n_queries: int = 50, tie_mode: str = "round1"):
    """Flat labels, scores, boundaries, doc ids and query ids of random queries.

    Lengths 1..30 with 1, 2 and 3 always present; about one query in six has no relevant
    document; labels 0..4 (integers); scores rounded to one decimal (``round1``, many ties),
    to integers (``round0``, more ties), continuous (``none``) or all equal in every third
    query (``mixed``)."""
    rng = np.random.default_rng(seed)
    sizes = np.concatenate([[1, 2, 3], rng.integers(1, 31, size=n_queries - 3)])
    rng.shuffle(sizes)
    b = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    y = rng.choice(5, size=b[-1], p=[0.5, 0.25, 0.12, 0.08, 0.05]).astype(np.float64)
    s = rng.normal(size=b[-1])
    for q in range(n_queries):
        lo, hi = b[q], b[q + 1]
        if rng.random() < 1 / 6:
            y[lo:hi] = 0.0  # an empty query
        if tie_mode == "mixed" and q % 3 == 0:
            s[lo:hi] = 0.5
    if tie_mode == "round1":
        s = np.round(s, 1)
    elif tie_mode == "round0":
        s = np.round(s)
    doc_ids = np.array(
        [f"d{q}-{i}" for q in range(n_queries) for i in range(sizes[q])], dtype=object
    )
    qids = np.array([f"q{q:03d}" for q in range(n_queries)], dtype=object)
    return y, s, b, doc_ids, qids


def _dicts(y, s, b, doc_ids, qids, keep=None):
    qrels, run = {}, {}
    for q in range(len(b) - 1):
        lo, hi = b[q], b[q + 1]
        qrels[qids[q]] = {doc_ids[i]: int(y[i]) for i in range(lo, hi)}
        run[qids[q]] = {doc_ids[i]: float(s[i]) for i in range(lo, hi) if keep is None or keep[i]}
    return qrels, run


def test_generated_data_reaches_the_corners():
    for tie_mode in ("round1", "round0", "mixed", "none"):
        y, s, b, _, _ = generated(1, tie_mode=tie_mode)
        sizes = np.diff(b)
        assert {1, 2, 3} <= set(sizes.tolist()) and (sizes < 10).sum() > 5
        empty = [q for q in range(len(b) - 1) if y[b[q] : b[q + 1]].max() == 0]
        assert len(empty) >= 3
        if tie_mode != "none":
            tied = [q for q in range(len(b) - 1) if len(np.unique(s[b[q] : b[q + 1]])) < sizes[q]]
            assert len(tied) >= 10


# ------------------------------------------------------------------------------ pytrec_eval
TREC_PAIRS = [
    ("ndcg", "ndcg"),
    ("ndcg@3", "ndcg_cut_3"),
    ("ndcg@10", "ndcg_cut_10"),
    ("ndcg@20", "ndcg_cut_20"),
    ("map", "map"),
    ("map@5", "map_cut_5"),
    ("p@1", "P_1"),
    ("p@5", "P_5"),
    ("p@20", "P_20"),
    ("mrr", "recip_rank"),
]
TREC_MEASURES = {"ndcg", "ndcg_cut.3,10,20", "map", "map_cut.5", "P.1,5,20", "recip_rank"}


@pytest.mark.parametrize("tie_mode", ["round1", "round0", "mixed", "none"])
def test_trec_eval_preset_matches_pytrec_eval(tie_mode):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    y, s, b, doc_ids, qids = generated(10, tie_mode=tie_mode)
    keep = np.random.default_rng(2).random(len(y)) < 0.7  # some judged documents unretrieved
    specs = [m for m, _ in TREC_PAIRS]
    for subset in (None, keep):
        qrels, run = _dicts(y, s, b, doc_ids, qids, subset)
        run = {q: d for q, d in run.items() if d}  # trec_eval drops queries with no ranking
        want = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
        got = evaluate_trec(qrels, run, specs)
        assert list(got.query_ids) == sorted(want)
        for ours, theirs in TREC_PAIRS:
            w = np.array([want[q][theirs] for q in got.query_ids])
            np.testing.assert_allclose(got.per_query[ours], w, rtol=0, atol=TOL, err_msg=ours)
    # the same through evaluate_arrays on flat arrays (every judged document ranked)
    qrels, run = _dicts(y, s, b, doc_ids, qids)
    want = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
    res = evaluate_arrays(y, s, b, specs, preset="trec_eval", doc_ids=doc_ids)
    for ours, theirs in TREC_PAIRS:
        w = np.array([want[q][theirs] for q in qids])
        np.testing.assert_allclose(res.per_query[ours], w, rtol=0, atol=TOL, err_msg=ours)


# ------------------------------------------------------------------------------ scikit-learn
@pytest.mark.parametrize("tie_mode", ["round1", "round0", "mixed"])
def test_sklearn_preset_matches_ndcg_score_and_dcg_score(tie_mode):
    metrics = pytest.importorskip("sklearn.metrics")
    y, s, b, _, _ = generated(20, tie_mode=tie_mode)
    specs = ["ndcg", "dcg", "idcg"] + [f"ndcg@{k}" for k in KS] + [f"dcg@{k}" for k in KS]
    res = evaluate_arrays(y, s, b, specs, preset="sklearn")
    checked = 0
    for q in range(len(b) - 1):
        lo, hi = b[q], b[q + 1]
        if hi - lo < 2:  # scikit-learn refuses one-document lists
            continue
        yy, ss = y[lo:hi][None, :], s[lo:hi][None, :]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k in (None, *KS):
                suffix = "" if k is None else f"@{k}"
                want_n = metrics.ndcg_score(yy, ss, k=k)
                want_d = metrics.dcg_score(yy, ss, k=k)
                assert res.per_query["ndcg" + suffix][q] == pytest.approx(want_n, abs=TOL)
                assert res.per_query["dcg" + suffix][q] == pytest.approx(want_d, abs=TOL)
            want_i = metrics.dcg_score(yy, yy)  # the ideal DCG: ranked by the labels
            assert res.per_query["idcg"][q] == pytest.approx(want_i, abs=TOL)
        checked += 1
    assert checked >= 40


# ------------------------------------------------------------------------------ LightGBM
def _lightgbm_metrics(y, s, b, ks):
    """LightGBM's own ndcg@k and map@k of the scores ``s`` (the booster's initial scores, no
    tree trained)."""
    lgb = pytest.importorskip("lightgbm")
    x = np.zeros((len(y), 1))
    data = lgb.Dataset(x, y, group=np.diff(b), init_score=s, free_raw_data=False)
    params = {
        "objective": "lambdarank",
        "metric": ["ndcg", "map"],
        "eval_at": list(ks),
        "verbose": -1,
        "num_threads": 1,
    }
    booster = lgb.Booster(params, data)
    return {r[1]: r[2] for r in booster.eval_train()}


@pytest.mark.parametrize("tie_mode", ["round1", "round0", "mixed"])
def test_lightgbm_preset_matches_lightgbm_metrics(tie_mode):
    pytest.importorskip("lightgbm")
    y, s, b, _, _ = generated(30, tie_mode=tie_mode)
    specs = [f"ndcg@{k}" for k in KS] + [f"map@{k}" for k in KS]
    want = _lightgbm_metrics(y, s, b, KS)
    res = evaluate_arrays(y, s, b, specs, preset="lightgbm")
    for spec in specs:
        assert res.mean[spec] == pytest.approx(want[spec], abs=TOL), spec
    # query by query on a few lists (short, empty, tied)
    for q in range(8):
        lo, hi = b[q], b[q + 1]
        one = _lightgbm_metrics(y[lo:hi], s[lo:hi], np.array([0, hi - lo]), KS)
        for spec in specs:
            assert res.per_query[spec][q] == pytest.approx(one[spec], abs=TOL), (spec, q)


# ------------------------------------------------------------------------------ ranx
def _ranx(y, s, b, doc_ids, qids, metrics):
    ranx = pytest.importorskip("ranx")
    qrels, run = _dicts(y, s, b, doc_ids, qids)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics, return_mean=False)
    order = {q: i for i, q in enumerate(sorted(qrels))}
    idx = np.array([order[q] for q in qids])
    return {m: np.asarray(v)[idx] for m, v in out.items()} if len(metrics) > 1 else out


#: ranx's name -> ndcglab's measure with the same conventions (every judged document counts for
#: the ideal DCG and AP's denominator). ranx sorts scores with an unstable sort, so the order of
#: tied scores is not defined there: it is compared on untied scores (ties are compared with the
#: three libraries above).
RANX_PAIRS = {
    "ndcg": "ndcg(gain=linear)",
    "ndcg@5": "ndcg(gain=linear)@5",
    "ndcg@20": "ndcg(gain=linear)@20",
    "ndcg_burges": "ndcg",
    "ndcg_burges@3": "ndcg@3",
    "dcg@5": "dcg(gain=linear)@5",
    "dcg_burges": "dcg",
    "dcg_burges@10": "dcg@10",
    "map": "map",
    "precision@1": "p@1",
    "precision@5": "p@5",
    "precision@20": "p@20",
    "mrr": "mrr",
}


@pytest.mark.parametrize("seed", [40, 41])
def test_explicit_conventions_match_ranx(seed):
    pytest.importorskip("ranx")
    y, s, b, doc_ids, qids = generated(seed, tie_mode="none")
    assert all(len(np.unique(s[b[q] : b[q + 1]])) == b[q + 1] - b[q] for q in range(len(b) - 1))
    want = _ranx(y, s, b, doc_ids, qids, list(RANX_PAIRS))
    res = evaluate_arrays(y, s, b, list(RANX_PAIRS.values()), preset="standard")
    for theirs, ours in RANX_PAIRS.items():
        got = res.per_query[res.names[list(RANX_PAIRS.values()).index(ours)]]
        np.testing.assert_allclose(got, want[theirs], rtol=0, atol=TOL, err_msg=theirs)


# ------------------------------------------------------------------------------ rank family
#: trec_eval's name -> ndcglab's, for the rank family (compared in depth, with its averaging
#: options, in test_trec_measures.py; here on the generated corners)
RANK_PAIRS = {
    "recall_5": "recall@5",
    "Rprec": "rprec",
    "success_1": "success@1",
    "bpref": "bpref",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
}


@pytest.mark.parametrize("tie_mode", ["round0", "mixed"])
def test_rank_family_matches_pytrec_eval(tie_mode):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    y, s, b, doc_ids, qids = generated(50, tie_mode=tie_mode)
    keep = np.random.default_rng(3).random(len(y)) < 0.8
    qrels, run = _dicts(y, s, b, doc_ids, qids, keep)
    run = {q: d for q, d in run.items() if d}
    fams = {"recall", "Rprec", "success", "bpref", "num_rel", "num_rel_ret"}
    want = pytrec_eval.RelevanceEvaluator(qrels, fams).evaluate(run)
    got = evaluate_trec(qrels, run, list(RANK_PAIRS.values()))
    for theirs, ours in RANK_PAIRS.items():
        w = np.array([want[q][theirs] for q in got.query_ids])
        np.testing.assert_allclose(got.per_query[ours], w, rtol=0, atol=TOL, err_msg=ours)


# ------------------------------------------------------------------------------ per family
#: the measures compared with a library in this file, by family
COMPARED = {
    "gain": {"ndcg", "dcg", "idcg"},
    "rel": {"map", "p", "mrr"},
    "rank": {"recall", "rprec", "success", "bpref", "num_rel", "num_rel_ret"},
}


def test_every_measure_family_meets_an_external_library():
    """Without any data folder, each family of the registry has measures compared above with
    at least one library."""
    from ndcglab.measures import REGISTRY

    families: dict[str, set[str]] = {}
    for name, info in REGISTRY.items():
        families.setdefault(info.family, set()).add(name)
    for family, names in families.items():
        assert names & COMPARED.get(family, set()), family
