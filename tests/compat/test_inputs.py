"""Qrels and runs in the shapes the IR ecosystem holds them (data.trec_inputs), through
evaluate_trec and compare_runs: every shape gives the numbers of the dict-of-dicts."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.analysis import compare_runs
from ndcglab.data.trec_inputs import as_trec_dict
from ndcglab.errors import DataFormatError
from ndcglab.measures import evaluate_trec

from .beir_data import beir_dicts

pd = pytest.importorskip("pandas")

MEASURES = ["ndcg@10", "map", "bpref", "P_5"]


@pytest.fixture(scope="module")
def dicts():
    return beir_dicts(25, 40, judged=15, decimals=2, seed=11)


def _rows(d):
    return [(q, doc, v) for q, docs in d.items() for doc, v in docs.items()]


def _shapes(qrels, run, tmp_path):
    irm = pytest.importorskip("ir_measures")
    qf, rf = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qf.write_text("".join(f"{q} 0 {d} {v}\n" for q, d, v in _rows(qrels)))
    rf.write_text("".join(f"{q} Q0 {d} 1 {v!r} x\n" for q, d, v in _rows(run)))
    shuffled = np.random.default_rng(0).permutation(len(_rows(run)))
    run_rows = [_rows(run)[i] for i in shuffled]  # rows in any order
    return {
        "ir_measures/ranx frames": (
            pd.DataFrame(_rows(qrels), columns=["query_id", "doc_id", "relevance"]),
            pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"]),
        ),
        "PyTerrier frames": (
            pd.DataFrame(_rows(qrels), columns=["qid", "docno", "label"]),
            pd.DataFrame(run_rows, columns=["qid", "docno", "score"]),
        ),
        "ir_measures namedtuples": (
            [irm.Qrel(q, d, v) for q, d, v in _rows(qrels)],
            iter([irm.ScoredDoc(q, d, v) for q, d, v in run_rows]),
        ),
        "plain tuples": (_rows(qrels), run_rows),
        "TREC files": (str(qf), rf),
    }


def test_evaluate_trec_reads_every_shape(dicts, tmp_path):
    qrels, run = dicts
    want = evaluate_trec(qrels, run, MEASURES)
    for name, (q, r) in _shapes(qrels, run, tmp_path).items():
        got = evaluate_trec(q, r, MEASURES)
        assert list(got.query_ids) == list(want.query_ids), name
        for m in want.names:
            np.testing.assert_array_equal(got.per_query[m], want.per_query[m], err_msg=name)


def test_compare_runs_reads_frames(dicts, tmp_path):
    qrels, run = dicts
    other = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    want = compare_runs(qrels, {"a": run, "b": other}, ["ndcg@10"])
    shapes = _shapes(qrels, run, tmp_path)
    fq, fr = shapes["PyTerrier frames"]
    fo = fr.assign(score=-fr["score"])
    got = compare_runs(fq, {"a": fr, "b": fo}, ["ndcg@10"])
    assert got.to_dict()["mean"] == want.to_dict()["mean"]
    assert got.to_dict()["per_topic"] == want.to_dict()["per_topic"]


def test_frame_rules():
    frame = pd.DataFrame(
        {"qid": [1, 1, 2, 1], "docno": ["a", "b", "a", "a"], "score": [0.5, 0.25, 1, 0.75]}
    )
    # ids become text; a repeated (query, document) pair keeps its last row, as a dict does
    assert as_trec_dict(frame, what="run", value="score") == {
        "1": {"a": 0.75, "b": 0.25},
        "2": {"a": 1.0},
    }
    with pytest.raises(DataFormatError, match="qid, docno, label"):
        as_trec_dict(frame, what="qrels", value="relevance")
    bad = frame.assign(score=["x", "0.1", "0.2", "0.3"])
    with pytest.raises(DataFormatError, match="not a number"):
        as_trec_dict(bad, what="run", value="score")
    with pytest.raises(DataFormatError, match="tuples"):
        as_trec_dict([1, 2, 3], what="run", value="score")
    with pytest.raises(DataFormatError, match="cannot read the run"):
        as_trec_dict(3.5, what="run", value="score")
    assert as_trec_dict([], what="run", value="score") == {}
