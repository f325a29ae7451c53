"""PyTerrier's pt.Experiment through the ndcglab provider (use_by_default): pure-Python
transformers over generated frames, no Java started."""

from __future__ import annotations

import pytest

from .beir_data import beir_dicts

pd = pytest.importorskip("pandas")
pt = pytest.importorskip("pyterrier")
irm = pytest.importorskip("ir_measures")
compat = pytest.importorskip("ndcglab.compat.ir_measures")

METRICS = [irm.nDCG @ 10, irm.AP, irm.RR]


def _frame(d: dict, value: str) -> object:
    rows = [(q, doc, v) for q, docs in d.items() for doc, v in docs.items()]
    return pd.DataFrame(rows, columns=["qid", "docno", value])


def test_experiment_runs_through_ndcglab():
    qrels, run = beir_dicts(30, 40, judged=15, decimals=2, seed=3)
    other = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    topics = pd.DataFrame({"qid": list(run), "query": ["text"] * len(run)})
    systems = [pt.Transformer.from_df(_frame(r, "score"), uniform=False) for r in (run, other)]
    halves = {q: {d: v / 2 for d, v in docs.items()} for q, docs in qrels.items()}
    chain = irm.DefaultPipeline.providers
    saved = list(chain)
    try:
        before = pt.Experiment(systems, topics, _frame(qrels, "label"), METRICS, names=["a", "b"])
        compat.use_by_default()
        after = pt.Experiment(systems, topics, _frame(qrels, "label"), METRICS, names=["a", "b"])
        for m in METRICS:  # the same numbers as ir_measures' pytrec_eval provider
            assert after[str(m)].tolist() == pytest.approx(before[str(m)].tolist(), abs=1e-12)
        # float labels (pytrec_eval refuses them) now go through, read as their values
        floats = pt.Experiment(
            systems, topics, _frame(halves, "label"), [irm.nDCG @ 10], names=["a", "b"]
        )
        want = [
            compat.provider.calc_aggregate([irm.nDCG @ 10], halves, r)[irm.nDCG @ 10]
            for r in (run, other)
        ]
        assert floats["nDCG@10"].tolist() == pytest.approx(want, abs=1e-12)
    finally:
        chain[:] = saved
