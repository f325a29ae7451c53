"""BEIR's EvaluateRetrieval.evaluate fed through the drop-in (runs where beir is installed; it
imports without its model dependencies, ``pip install --no-deps beir``)."""

from __future__ import annotations

import copy

import pytest

import ndcglab.compat.pytrec_eval as drop_in

from .beir_data import beir_dicts

evaluation = pytest.importorskip("beir.retrieval.evaluation")


def test_beir_evaluate_through_the_drop_in(monkeypatch):
    qrels, run = beir_dicts(80, 120, judged=30, decimals=3, seed=2)
    k_values = [1, 3, 5, 10, 100]
    want = evaluation.EvaluateRetrieval.evaluate(qrels, copy.deepcopy(run), k_values)
    monkeypatch.setattr(evaluation, "pytrec_eval", drop_in)  # the one-line change
    got = evaluation.EvaluateRetrieval.evaluate(qrels, copy.deepcopy(run), k_values)
    assert got == want  # NDCG@k, MAP@k, Recall@k, P@k (BEIR rounds to 5 decimals)
    # LLM-judged (float) labels, which pytrec_eval refuses, go through
    graded = {q: {d: v / 2 for d, v in docs.items()} for q, docs in qrels.items()}
    ndcg, _, _, _ = evaluation.EvaluateRetrieval.evaluate(graded, copy.deepcopy(run), k_values)
    assert 0.0 < ndcg["NDCG@10"] < 1.0
