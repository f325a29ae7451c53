"""The ir_measures provider ``ndcglab`` against ir_measures' own providers (pytrec_eval,
judged, msmarco) on generated qrels and runs."""

from __future__ import annotations

import math

import pytest

from .beir_data import beir_dicts

irm = pytest.importorskip("ir_measures")
pytest.importorskip("pytrec_eval")
compat = pytest.importorskip("ndcglab.compat.ir_measures")

PYTREC_MEASURES = [
    irm.nDCG @ 10,
    irm.nDCG,
    irm.nDCG(judged_only=True) @ 10,
    irm.nDCG(gains={0: 1, 1: 4, 2: 5}) @ 5,
    irm.AP,
    irm.AP(rel=2),
    irm.AP @ 20,
    irm.P @ 5,
    irm.P(rel=2, judged_only=True) @ 10,
    irm.R @ 50,
    irm.R(rel=3) @ 100,
    irm.RR,
    irm.RR(rel=2),
    irm.Rprec,
    irm.Bpref,
    irm.Bpref(rel=2),
    irm.infAP,
    irm.Success @ 5,
    irm.IPrec @ 0.3,
    irm.IPrec(rel=2) @ 0.5,
    irm.NumRet,
    irm.NumRet(rel=2),
    irm.NumRel,
    irm.NumQ,
]


def _key(m):
    return (m.query_id, str(m.measure))


@pytest.fixture(scope="module")
def data():
    qrels, run = beir_dicts(120, 150, judged=40, decimals=2, seed=5)
    del run["q7"]  # a query of the qrels the run misses: DEFAULT, as every provider
    run["q9"] = dict(list(run["q9"].items())[:6])  # a short list
    return qrels, run


def test_registered_by_import():
    assert irm.providers.registry["ndcglab"] is compat.provider


def test_per_query_and_means_equal_pytrec_eval_provider(data):
    qrels, run = data
    ours = compat.provider
    want = sorted(irm.pytrec_eval.iter_calc(PYTREC_MEASURES, qrels, run), key=_key)
    got = sorted(ours.iter_calc(PYTREC_MEASURES, qrels, run), key=_key)
    assert [_key(m) for m in got] == [_key(m) for m in want]
    for a, b in zip(want, got):
        assert math.isclose(a.value, b.value, rel_tol=0, abs_tol=1e-12), (a, b)
    agg_want = irm.pytrec_eval.calc_aggregate(PYTREC_MEASURES, qrels, run)
    ev = ours.evaluator(PYTREC_MEASURES, qrels)
    for agg in (ours.calc_aggregate(PYTREC_MEASURES, qrels, run), ev.calc_aggregate(run)):
        for m in PYTREC_MEASURES:
            assert agg[m] == pytest.approx(agg_want[m], abs=1e-12), m
    calc = ev.calc(run)  # ir_measures' own calc over our iter_calc
    assert calc.aggregated[irm.AP] == pytest.approx(agg_want[irm.AP], abs=1e-12)


def test_judged_and_rr_at_k_equal_their_providers(data):
    """Judged@k (ir_measures' judged provider) and RR@k (its msmarco provider) on scores
    without ties (those providers break ties by document id ascending, trec_eval descending)."""
    qrels, _ = data
    _, run = beir_dicts(120, 150, judged=40, decimals=None, seed=5)
    run["q9"] = dict(list(run["q9"].items())[:6])
    for provider, measures in (
        (irm.judged, [irm.Judged @ 10, irm.Judged @ 100, irm.Judged]),
        (irm.msmarco, [irm.RR @ 10, irm.RR(rel=2) @ 5]),
    ):
        want = sorted(provider.iter_calc(measures, qrels, run), key=_key)
        got = sorted(compat.provider.iter_calc(measures, qrels, run), key=_key)
        assert [_key(m) for m in got] == [_key(m) for m in want]
        for a, b in zip(want, got):
            assert math.isclose(a.value, b.value, abs_tol=1e-12), (a, b)


def test_rbp_closed_form():
    """RBP(rel=1, p=0.5): (1 - p) * sum of p^(r-1) over the relevant ranks."""
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    run = {"q": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}}
    got = compat.provider.calc_aggregate([irm.RBP(rel=1, p=0.5)], qrels, run)
    assert got[irm.RBP(rel=1, p=0.5)] == pytest.approx(0.5 * (1 + 0.25), abs=1e-15)


def test_unsupported_measures_fall_back():
    assert not compat.provider.supports(irm.SetP)
    assert not compat.provider.supports(irm.RBP)  # graded RBP (no rel=) is cwl_eval's
    assert compat.provider.supports(irm.nDCG(dcg="exp-log2") @ 10)
    assert compat.provider.supports(irm.ERR @ 20)


def test_use_by_default_routes_the_pipeline(data):
    """After use_by_default, ir_measures.calc_aggregate (what PyTerrier's pt.Experiment calls)
    computes with ndcglab: float labels, which pytrec_eval refuses, go through."""
    qrels, run = data
    floats = {q: {d: v + 0.5 for d, v in docs.items()} for q, docs in qrels.items()}
    chain = irm.DefaultPipeline.providers
    saved = list(chain)
    try:
        with pytest.raises(TypeError):
            irm.calc_aggregate([irm.nDCG @ 10], floats, run)
        compat.use_by_default()
        compat.use_by_default()  # once
        assert chain[0] is compat.provider and chain.count(compat.provider) == 1
        got = irm.calc_aggregate([irm.nDCG @ 10], floats, run)
        assert got[irm.nDCG @ 10] == pytest.approx(
            compat.provider.calc_aggregate([irm.nDCG @ 10], floats, run)[irm.nDCG @ 10]
        )
        both = irm.calc_aggregate([irm.nDCG @ 10, irm.SetP], qrels, run)
        assert both[irm.SetP] == irm.pytrec_eval.calc_aggregate([irm.SetP], qrels, run)[irm.SetP]
    finally:
        chain[:] = saved


def test_pyterrier_frames(data):
    """pt.Experiment's frames (qid, docno, score / label) and ir_measures' (query_id, doc_id)."""
    pd = pytest.importorskip("pandas")
    qrels, run = data
    qf = pd.DataFrame(
        [(q, d, v) for q, ds in qrels.items() for d, v in ds.items()],
        columns=["qid", "docno", "label"],
    )
    rf = pd.DataFrame(
        [(q, d, v) for q, ds in run.items() for d, v in ds.items()],
        columns=["qid", "docno", "score"],
    )
    ms = [irm.nDCG @ 10, irm.AP, irm.RR]
    want = compat.provider.calc_aggregate(ms, qrels, run)
    assert compat.provider.calc_aggregate(ms, qf, rf) == want
    renamed = (
        qf.rename(columns={"qid": "query_id", "docno": "doc_id", "label": "relevance"}),
        rf.rename(columns={"qid": "query_id", "docno": "doc_id"}),
    )
    assert compat.provider.calc_aggregate(ms, *renamed) == want
    items = list(
        irm.read_trec_run(
            "".join(f"{q} Q0 {d} 0 {s!r} r\n" for q, ds in run.items() for d, s in ds.items())
        )
    )
    assert compat.provider.calc_aggregate(ms, qrels, iter(items)) == pytest.approx(want)


def test_tie_averaged_provider_is_scikit_learns_ndcg():
    """NdcglabProvider(ties="average"): a constant scorer gets the expected NDCG over the tied
    orders (scikit-learn's ndcg_score), not the lucky order of document ids."""
    sk = pytest.importorskip("sklearn.metrics")
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 4, size=(10, 8)).astype(float)
    labels[:, 3] = 1.0
    qrels = {f"q{i}": {f"d{j}": int(v) for j, v in enumerate(r)} for i, r in enumerate(labels)}
    const = {q: dict.fromkeys(docs, 1.0) for q, docs in qrels.items()}
    avg = compat.NdcglabProvider(ties="average")
    got = sorted(avg.iter_calc([irm.nDCG @ 5], qrels, const), key=_key)
    for metric in got:
        row = labels[int(metric.query_id[1:])]
        want = sk.ndcg_score(row[None, :], np.ones((1, 8)), k=5)
        assert metric.value == pytest.approx(want, abs=1e-12)
    with pytest.raises(ValueError, match="ties=average"):
        avg.calc_aggregate([irm.Bpref], qrels, const)


def test_gdeval_measures_closed_form():
    """ERR@k and nDCG(dcg=exp-log2)@k follow gdeval.pl (gain 2^y - 1, g_max = 4): worked by
    hand on one ranking b (0), c (1), a (2), d (unjudged)."""
    qrels = {"q": {"a": 2, "b": 0, "c": 1}}
    run = {"q": {"a": 0.5, "b": 0.9, "c": 0.7, "d": 0.1}}
    err, ndcg = irm.ERR @ 3, irm.nDCG(dcg="exp-log2") @ 3
    got = compat.provider.calc_aggregate([err, ndcg], qrels, run)
    # ERR = sum_r 1/r R_r prod_{i<r} (1 - R_i), R = (2^g - 1) / 16
    assert got[err] == pytest.approx(0.5 * (1 / 16) + (1 / 3) * (3 / 16) * (15 / 16), abs=1e-15)
    l3 = math.log2(3)
    assert got[ndcg] == pytest.approx((1 / l3 + 3 / 2) / (3 + 1 / l3), abs=1e-15)
