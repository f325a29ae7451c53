"""The rank family (recall, R-precision, success, bpref, infAP, gm_map, interpolated precision,
num_*), trec_eval's averaging options (-c, -J, -M, -l), negative relevance labels, score
precision and the names of other tools, against pytrec_eval (which compiles trec_eval 9);
ERR, RBP and judged@k against slow loops written from their papers' formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ndcglab.errors import ConventionError, SpecError
from ndcglab.measures import evaluate_arrays, evaluate_trec, get_preset, parse_measure
from ndcglab.measures.registry import measure_aliases

pytrec_eval = pytest.importorskip("pytrec_eval")


def make(seed: int, nq: int = 40) -> tuple[dict, dict]:
    """Random qrels and run: ties (scores on a grid of 6 values), labels -1..3, documents the run
    retrieves without a judgement, judged documents it misses, queries without a relevant
    document, queries with an empty ranking and queries absent from the run."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(nq):
        qid = f"q{q:03d}"
        n = int(rng.integers(0, 30))
        docs = [f"d{int(x)}" for x in rng.choice(1000, size=n + 10, replace=False)]
        judged: dict[str, int] = {}
        for d in docs[:n]:
            if rng.random() < 0.7:
                judged[d] = int(rng.choice([-1, 0, 0, 1, 2, 3], p=[0.1, 0.3, 0.2, 0.2, 0.1, 0.1]))
        if q % 7 == 0:
            judged = {d: min(v, 0) for d, v in judged.items()}
        for d in docs[n : n + int(rng.integers(0, 5))]:
            judged[d] = int(rng.integers(0, 3))
        if not judged:
            judged[docs[-1]] = 1
        qrels[qid] = judged
        if q % 11 != 5:
            run[qid] = {d: float(rng.integers(0, 6)) / 4 for d in docs[:n]}
    return qrels, run


#: trec_eval name -> ndcglab spec
PAIRS = {
    "recall_5": "recall@5",
    "recall_10": "recall@10",
    "recall_1000": "recall@1000",
    "Rprec": "rprec",
    "success_1": "success@1",
    "success_5": "success@5",
    "success_10": "success@10",
    "bpref": "bpref",
    "infAP": "infap",
    "num_rel": "num_rel",
    "num_ret": "num_ret",
    "num_rel_ret": "num_rel_ret",
    "map_cut_5": "map@5",
    "map_cut_10": "map@10",
    "ndcg_cut_5": "ndcg@5",
    "ndcg_cut_10": "ndcg@10",
    "ndcg": "ndcg",
    "map": "map",
    "P_5": "p@5",
    "recip_rank": "mrr",
    "gm_map": "gm_map",
    "11pt_avg": "iprec_11pt",
    **{f"iprec_at_recall_{lv / 10:.2f}": f"iprec(level={lv / 10:g})" for lv in range(11)},
}
FAMILIES = {
    "recall", "Rprec", "success", "bpref", "infAP", "num_rel", "num_ret", "num_rel_ret",
    "map_cut", "ndcg_cut", "ndcg", "map", "P", "recip_rank", "gm_map", "11pt_avg",
    "iprec_at_recall",
}  # fmt: skip


def _compare(res, ref, pairs, run) -> None:
    for tname, ours in pairs.items():
        got = res.per_query[ours]
        want = np.array([ref[q][tname] for q in res.query_ids])
        if tname.startswith(("iprec", "11pt")):
            # trec_eval divides by the ranking's length: nan (or 0) for an empty ranking;
            # ndcglab gives 0
            empty_run = np.array([len(run[q]) == 0 for q in res.query_ids])
            w = want[empty_run]
            assert (np.isnan(w) | (w == 0)).all() and (got[empty_run] == 0).all()
            got, want = got[~empty_run], want[~empty_run]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=f"{tname} / {ours}")


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("level", [1, 2])
def test_rank_family_matches_pytrec_eval(seed: int, level: int) -> None:
    """Every new measure (and the old ones) per query, with -l 1 and -l 2 (rel=)."""
    qrels, run = make(seed)
    ref = pytrec_eval.RelevanceEvaluator(qrels, FAMILIES, relevance_level=level).evaluate(run)
    res = evaluate_trec(qrels, run, list(PAIRS.values()), preset=f"trec_eval(rel={level})")
    assert sorted(res.query_ids) == sorted(q for q in run if q in qrels)
    _compare(res, ref, PAIRS, run)
    # gm_map's mean is the geometric mean of the per-query AP (floored at 1e-5)
    want = math.exp(np.mean([ref[q]["gm_map"] for q in res.query_ids]))
    assert res.mean["gm_map"] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_judged_only_matches_pytrec_eval(seed: int) -> None:
    """trec_eval -J: only documents with a relevance >= 0 are ranked."""
    qrels, run = make(seed)
    fams = {"bpref", "infAP", "map", "ndcg", "P", "recip_rank", "num_ret", "recall", "Rprec"}
    ref = pytrec_eval.RelevanceEvaluator(qrels, fams, judged_docs_only_flag=True).evaluate(run)
    pairs = {
        "bpref": "bpref",
        "infAP": "infap",
        "map": "map",
        "ndcg": "ndcg",
        "P_5": "p@5",
        "recip_rank": "mrr",
        "num_ret": "num_ret",
        "recall_10": "recall@10",
        "Rprec": "rprec",
    }
    a = evaluate_trec(qrels, run, list(pairs.values()), preset="trec_eval(judged_only=yes)")
    b = evaluate_trec(qrels, run, list(pairs.values()), judged_only=True)
    _compare(a, ref, pairs, run)
    for name in pairs.values():
        np.testing.assert_array_equal(a.per_query[name], b.per_query[name])


@pytest.mark.parametrize("depth", [1, 5])
def test_depth_matches_pytrec_eval_on_the_cut_run(depth: int) -> None:
    """trec_eval -M N: the first N documents by (score as C float, docno) descending."""
    qrels, run = make(4)
    cut = {
        q: dict(
            sorted(r.items(), key=lambda t: (float(np.float32(t[1])), t[0]), reverse=True)[:depth]
        )
        for q, r in run.items()
    }
    pairs = {k: v for k, v in PAIRS.items() if not k.startswith(("iprec", "11pt"))}
    ref = pytrec_eval.RelevanceEvaluator(qrels, FAMILIES).evaluate(cut)
    res = evaluate_trec(qrels, run, list(pairs.values()), preset=f"trec_eval(depth={depth})")
    _compare(res, ref, pairs, cut)
    res2 = evaluate_trec(qrels, run, list(pairs.values()), depth=depth)
    assert res2.mean == res.mean


def test_complete_averages_over_every_qrels_query() -> None:
    """trec_eval -c: queries of the qrels missing from the run score 0 (gm_map: log 1e-5)."""
    qrels, run = make(5)
    missing = sorted(q for q in qrels if q not in run)
    assert missing
    ref = pytrec_eval.RelevanceEvaluator(qrels, FAMILIES).evaluate(run)
    specs = ["map", "ndcg@10", "recall@10", "bpref", "num_rel", "gm_map", "mrr"]
    res = evaluate_trec(qrels, run, specs, complete=True)
    assert list(res.query_ids) == sorted(qrels)
    for tname, ours in [
        ("map", "map"),
        ("ndcg_cut_10", "ndcg@10"),
        ("recall_10", "recall@10"),
        ("bpref", "bpref"),
        ("num_rel", "num_rel"),
        ("recip_rank", "mrr"),
    ]:
        want = sum(ref[q][tname] for q in ref) / len(qrels)
        assert res.mean[ours] == pytest.approx(want, abs=1e-12), tname
        for q in missing:
            assert res.per_query[ours][list(res.query_ids).index(q)] == 0.0
    logs = [ref[q]["gm_map"] for q in ref] + [math.log(1e-5)] * len(missing)
    assert res.mean["gm_map"] == pytest.approx(math.exp(np.mean(logs)), rel=1e-12)
    plain = evaluate_trec(qrels, run, specs)
    assert plain.n_queries == len(qrels) - len(missing)


# ------------------------------------------------------------------------ negative labels
def test_negative_label_issue_example() -> None:
    """A negative relevance is judged but worth nothing: pytrec_eval gives 0 here."""
    qrels, run = {"q": {"x": 0, "y": -1}}, {"q": {"x": 1.0, "y": 2.0}}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg"}).evaluate(run)
    res = evaluate_trec(qrels, run, ["ndcg", "ndcg@10"])
    assert res.mean["ndcg"] == ref["q"]["ndcg"] == 0.0
    assert res.mean["ndcg@10"] == 0.0


@pytest.mark.parametrize("preset", ["standard", "trec_eval", "letor4"])
def test_ndcg_stays_in_unit_interval_with_negative_labels(preset: str) -> None:
    rng = np.random.default_rng(7)
    y = rng.integers(-2, 4, 600).astype(float)
    s = np.round(rng.normal(size=600), 1)
    b = np.arange(0, 601, 20)
    ids = np.array([f"d{i}" for i in range(600)])
    specs = ["ndcg", "ndcg@5", "ndcg@0.5n", "meanndcg", "err(max_grade=3)@5"]
    res = evaluate_arrays(y, s, b, specs, preset=preset, doc_ids=ids)
    for name, v in res.per_query.items():
        assert ((v >= 0.0) & (v <= 1.0 + 1e-12)).all(), name
    # a negative label counts exactly as a label 0 for the gain family
    y0 = np.maximum(y, 0.0)
    res0 = evaluate_arrays(y0, s, b, ["ndcg", "ndcg@5"], preset=preset, doc_ids=ids)
    for name in ("ndcg", "ndcg@5"):
        np.testing.assert_array_equal(res.per_query[name], res0.per_query[name])


@pytest.mark.parametrize("preset", ["sklearn", "lightgbm"])
def test_presets_that_refuse_negative_labels(preset: str) -> None:
    y = np.array([1.0, -1.0, 0.0])
    with pytest.raises(ConventionError, match=r"label -1 \(query 0, document 2\)"):
        evaluate_arrays(y, [0.3, 0.2, 0.1], [0, 3], ["ndcg"], preset=preset)
    ok = evaluate_arrays(y, [0.3, 0.2, 0.1], [0, 3], ["ndcg"], preset=f"{preset}(negative=zero)")
    assert 0.0 <= ok.mean["ndcg"] <= 1.0


def test_gain_overflow_names_the_label() -> None:
    with pytest.raises(ConventionError, match="label 1100"):
        evaluate_arrays([1100.0, 1.0], [0.2, 0.1], [0, 2], ["ndcg"])
    with pytest.raises(ConventionError, match="overflows"):
        evaluate_arrays([1023.0] * 4, [0.4, 0.3, 0.2, 0.1], [0, 4], ["ndcg"])


# ------------------------------------------------------------------------ score precision
def test_score_precision_trec_eval9_and_10() -> None:
    """Scores 1 and 1 + 1e-9 tie as C floats (trec_eval 9, pytrec_eval), not as doubles."""
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 1.0 + 1e-9}}  # docno descending puts b first on a tie
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    t9 = evaluate_trec(qrels, run, ["mrr"])
    assert t9.mean["mrr"] == ref["q"]["recip_rank"] == 0.5
    run2 = {"q": {"a": 1.0 + 1e-9, "b": 1.0}}
    assert evaluate_trec(qrels, run2, ["mrr"]).mean["mrr"] == 0.5  # still a tie: b first
    assert evaluate_trec(qrels, run2, ["mrr"], preset="trec_eval10").mean["mrr"] == 1.0
    for spec in ("trec_eval(scores=trec_eval10)", "trec_eval(scores=float64)"):
        assert evaluate_trec(qrels, run2, ["mrr"], preset=spec).mean["mrr"] == 1.0
    assert evaluate_trec(qrels, run2, ["mrr"], score_precision="trec_eval10").mean["mrr"] == 1.0
    assert get_preset("trec_eval(scores=trec_eval9)").score_precision == "float32"
    p = get_preset("trec_eval(depth=100,judged_only=yes,scores=trec_eval10)")
    assert get_preset(p.name) == p


# ------------------------------------------------------------------------ ERR, RBP, judged
def _ranked(labels, scores, judged=None):
    order = sorted(range(len(labels)), key=lambda i: -scores[i])  # stable: input order on ties
    lab = [labels[i] for i in order]
    jud = [True] * len(lab) if judged is None else [judged[i] for i in order]
    return lab, jud


def _err_ref(labels, scores, k, gmax):
    """Chapelle, Metzler, Zhang, Grinspan (CIKM 2009), Algorithm 2."""
    lab, _ = _ranked(labels, scores)
    p, err = 1.0, 0.0
    for r, g in enumerate(lab[:k], start=1):
        stop = (2.0 ** max(g, 0.0) - 1.0) / 2.0**gmax
        err += p * stop / r
        p *= 1.0 - stop
    return err


def _rbp_ref(labels, scores, k, p, judged, rel=1.0):
    """Moffat & Zobel (ACM TOIS 2008): RBP = (1 - p) sum p^(i-1) r_i, residual p^d + unjudged."""
    lab, jud = _ranked(labels, scores, judged)
    top = list(zip(lab, jud))[:k]
    rbp = sum((1 - p) * p**i for i, (g, j) in enumerate(top) if j and g >= rel)
    resid = sum((1 - p) * p**i for i, (g, j) in enumerate(top) if not j) + p ** len(top)
    return rbp, resid


def test_err_rbp_judged_against_reference_loops() -> None:
    rng = np.random.default_rng(3)
    sizes = rng.integers(0, 25, 60)
    sizes[5] = 0
    b = np.concatenate([[0], np.cumsum(sizes)])
    y = rng.integers(-1, 5, b[-1]).astype(float)
    s = rng.integers(0, 5, b[-1]).astype(float)  # many ties: input order breaks them
    specs = ["err@5", "err", "err(max_grade=6)@10", "rbp(p=0.5)", "rbp@10"]
    specs += ["rbp_residual(p=0.95)@10", "rbp_residual", "judged@5", "judged(short=clip)@5"]
    res = evaluate_arrays(y, s, b, specs, preset="standard")
    for q in range(len(sizes)):
        lo, hi = b[q], b[q + 1]
        yl, sl = list(y[lo:hi]), list(s[lo:hi])
        judged = [v >= 0 for v in yl]
        n = hi - lo
        want = {
            "err@5": _err_ref(yl, sl, 5, 4),
            "err": _err_ref(yl, sl, n, 4),
            "err(max_grade=6)@10": _err_ref(yl, sl, 10, 6),
            "rbp(p=0.5)": _rbp_ref(yl, sl, n, 0.5, judged)[0],
            "rbp@10": _rbp_ref(yl, sl, 10, 0.8, judged)[0],
            "rbp_residual(p=0.95)@10": _rbp_ref(yl, sl, 10, 0.95, judged)[1],
            "rbp_residual": _rbp_ref(yl, sl, n, 0.8, judged)[1],
            "judged@5": sum(_ranked(yl, sl, judged)[1][:5]) / 5,
            "judged(short=clip)@5": (sum(_ranked(yl, sl, judged)[1][:5]) / min(5, n)) if n else 0,
        }
        for name, w in want.items():
            assert res.per_query[name][q] == pytest.approx(w, abs=1e-12), (name, q)


def test_err_refuses_labels_above_max_grade() -> None:
    with pytest.raises(ConventionError, match=r"label 5 \(query 0\) exceeds max_grade=4"):
        evaluate_arrays([5.0, 1.0], [0.2, 0.1], [0, 2], ["err@2"])
    # the LETOR presets' labels run 0..2
    assert parse_measure("err").resolve("letor4").get("max_grade") == "2"


def test_rbp_and_judged_with_unjudged_trec_documents() -> None:
    qrels, run = make(6)
    res = evaluate_trec(qrels, run, ["rbp(p=0.5)@10", "rbp_residual(p=0.5)@10", "judged@10"],
                        preset="trec_eval")  # fmt: skip
    for i, q in enumerate(res.query_ids):
        items = sorted(run[q].items(), key=lambda t: (float(np.float32(t[1])), t[0]), reverse=True)
        lab = [qrels[q].get(d, 0) for d, _ in items]
        jud = [d in qrels[q] and qrels[q][d] >= 0 for d, _ in items]
        scores = list(range(len(lab), 0, -1))
        rbp, resid = _rbp_ref(lab, scores, 10, 0.5, jud)
        assert res.per_query["rbp(p=0.5)@10"][i] == pytest.approx(rbp, abs=1e-12)
        assert res.per_query["rbp_residual(p=0.5)@10"][i] == pytest.approx(resid, abs=1e-12)
        assert res.per_query["judged@10"][i] == pytest.approx(sum(jud[:10]) / 10, abs=1e-12)


def test_average_ties_refused_for_the_rank_family() -> None:
    with pytest.raises(ConventionError, match="ties=average"):
        evaluate_arrays([1.0, 0.0], [0.1, 0.1], [0, 2], ["recall@1"], preset="sklearn")


# ------------------------------------------------------------------------ names
@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("ndcg_cut_10", "ndcg@10"),
        ("P_10", "p@10"),
        ("P.5", "p@5"),
        ("recip_rank", "mrr"),
        ("map_cut_10", "map@10"),
        ("Rprec", "rprec"),
        ("recall_100", "recall@100"),
        ("success_1", "success@1"),
        ("bpref", "bpref"),
        ("infAP", "infap"),
        ("gm_map", "gm_map"),
        ("num_rel_ret", "num_rel_ret"),
        ("iprec_at_recall_0.10", "iprec(level=0.1)"),
        ("11pt_avg", "iprec_11pt"),
        ("nDCG@10", "ndcg@10"),
        ("AP", "map"),
        ("RR@10", "mrr@10"),
        ("P@10", "p@10"),
        ("R@100", "recall@100"),
        ("Judged@10", "judged@10"),
        ("ERR@20", "err@20"),
        ("RBP(p=0.8)", "rbp(p=0.8)"),
        ("IPrec@0.2", "iprec(level=0.2)"),
        ("Success@1", "success@1"),
        ("Bpref", "bpref"),
        ("NumRelRet", "num_rel_ret"),
        ("AP@10", "map@10"),
        ("precision@10", "p@10"),
        ("r-precision", "rprec"),
        ("hit_rate@1", "success@1"),
        ("ndcg_burges@10", "ndcg(gain=exp2)@10"),
    ],
)
def test_other_tools_names(typed: str, canonical: str) -> None:
    m = parse_measure(typed)
    assert str(m) == canonical
    assert parse_measure(str(m)) == m


def test_results_show_the_canonical_name_beside_the_alias() -> None:
    qrels, run = make(0)
    res = evaluate_trec(qrels, run, ["ndcg_cut_10", "map", "Rprec"])
    assert res.aliases == {"ndcg_cut_10": "ndcg@10", "Rprec": "rprec"}
    assert res["ndcg_cut_10"] == res["ndcg@10"]
    text = res.table()
    assert "ndcg_cut_10 = ndcg@10[trec_eval]" in text and "Rprec = rprec[trec_eval]" in text
    assert res.to_dict()["aliases"] == res.aliases
    assert measure_aliases(["map", "AP"]) == {"AP": "map"}


def test_bad_options_of_new_measures() -> None:
    with pytest.raises(ConventionError, match="strictly between 0 and 1"):
        parse_measure("rbp(p=1)")
    with pytest.raises(SpecError, match="needs level="):
        parse_measure("iprec")
    with pytest.raises(SpecError, match="takes no cut-off"):
        parse_measure("bpref@10")
    with pytest.raises(SpecError, match="unknown preset option"):
        get_preset("trec_eval(bogus=1)")
    with pytest.raises(ConventionError, match="TREC runs"):
        evaluate_arrays([1.0], [0.1], [0, 1], ["map"], preset="trec_eval(depth=5)")


def test_order_based_tie_rules_bound_the_rank_family() -> None:
    """Tied scores: pessimistic <= any order <= optimistic, for measures that grow with the
    relevant documents ranked early."""
    rng = np.random.default_rng(11)
    b = np.arange(0, 401, 20)
    y = rng.integers(0, 3, 400).astype(float)
    s = rng.integers(0, 3, 400).astype(float)
    specs = ["recall@5", "success@1", "rprec", "bpref", "rbp(p=0.5)", "iprec(level=0.3)"]
    lo, mid, hi = (
        evaluate_arrays(y, s, b, [parse_measure(x).with_options(ties=t) for x in specs])
        for t in ("pessimistic", "input", "optimistic")
    )
    for a, m, c in zip(lo.names, mid.names, hi.names):
        assert (lo.per_query[a] <= mid.per_query[m] + 1e-12).all(), a
        assert (mid.per_query[m] <= hi.per_query[c] + 1e-12).all(), c
    assert any((lo.per_query[a] < hi.per_query[c]).any() for a, c in zip(lo.names, hi.names))


def test_values_and_names_of_any_type_are_converted_as_float_and_str() -> None:
    """evaluate_trec takes pytrec_eval's dicts as users build them: integer relevance, NumPy
    scores, integer document names. Each is converted with ``float`` / ``str``, so the result
    equals that of the same dicts written with floats and strings (ties by docno compare the
    names as text: "9" before "10"), and a label given as text is read as ``float`` reads it."""
    qrels = {"1": {9: 1, 10: 0, 3: 0, 4: "2"}, "2": {5: 1}}
    run = {
        "1": {9: np.float32(0.5), 10: np.float32(0.5), 3: 2, 7: 0.1},
        "2": {5: np.float64(1.0), 6: 0.3},
    }
    as_text = {q: {str(d): float(v) for d, v in docs.items()} for q, docs in qrels.items()}
    run_text = {q: {str(d): float(v) for d, v in docs.items()} for q, docs in run.items()}
    spec = ["map", "p@2", "ndcg", "ndcg@2", "mrr"]
    got = evaluate_trec(qrels, run, spec)
    want = evaluate_trec(as_text, run_text, spec)
    assert got.mean == want.mean
    for name in got.per_query:
        assert np.array_equal(got.per_query[name], want.per_query[name])
    # the tie between 9 and 10 is broken by docno as text, descending: "9" > "10" (as numbers,
    # 10 would come first and the first relevant document would sit at rank 3)
    assert got.per_query["mrr"][0] == 1.0 / 2  # doc 3 first (score 2), then "9" (relevant)


@pytest.mark.parametrize("preset", ["trec_eval", "trec_eval10"])
def test_interpolated_precision_in_one_pass_equals_each_level_alone(preset: str) -> None:
    """all_trec's eleven iprec levels and iprec_11pt share one pass over the rankings: each
    level's values are those of the level evaluated alone, and iprec_11pt is, bit for bit, the
    mean of the eleven levels evaluated alone (NumPy's mean of each query's eleven values); the
    levels against pytrec_eval as in the test above."""
    qrels, run = make(7, nq=60)
    levels = [f"iprec(level={lv / 10:g})" for lv in range(11)]
    together = evaluate_trec(qrels, run, [*levels, "iprec_11pt", "map"], preset=preset)
    alone = np.stack(
        [evaluate_trec(qrels, run, [m], preset=preset).per_query[m] for m in levels], axis=1
    )
    for i, m in enumerate(levels):
        np.testing.assert_array_equal(together.per_query[m], alone[:, i], err_msg=m)
    want = np.array([np.mean(row) for row in alone])
    np.testing.assert_array_equal(together.per_query["iprec_11pt"], want)
    if preset == "trec_eval":  # (trec_eval 9's recall cut: pytrec_eval)
        ref = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall", "11pt_avg"}).evaluate(run)
        pairs = {k: v for k, v in PAIRS.items() if k.startswith(("iprec", "11pt"))}
        _compare(together, ref, pairs, run)
