"""Interpolated precision at several recall levels in one call: the measures of one ranking
share one pass per recall rule (``-m all_trec`` asks for twelve levels' worth); every value
must be the one the measure gets alone, and trec_eval's (pytrec_eval) for the levels it
prints."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.measures import evaluate_trec

pytrec_eval = pytest.importorskip("pytrec_eval")

LEVELS = [f"{i / 10:.2f}" for i in range(11)]


def _pair(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(12):
        docs = [f"d{i}" for i in range(int(rng.integers(5, 60)))]
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.7}
        run[f"q{q}"] = {d: float(np.round(rng.random(), 2)) for d in docs if rng.random() < 0.8}
    return qrels, run


@pytest.mark.parametrize("seed", [0, 1])
def test_levels_together_equal_each_alone_and_trec_eval(seed: int) -> None:
    qrels, run = _pair(seed)
    specs = [
        *(f"iprec(level={x})" for x in LEVELS),
        "iprec(level=0.35)",
        "iprec_11pt",
        "iprec(level=0.1,recall_cut=round)",
        "iprec(level=0.35,recall_cut=round)",
        "iprec_11pt(recall_cut=round)",
        "map",
    ]
    together = evaluate_trec(qrels, run, specs)
    names = {}
    for spec in specs:
        alone = evaluate_trec(qrels, run, [spec])
        (name,) = alone.per_query
        names[spec] = name
        assert np.array_equal(together.per_query[name], alone.per_query[name]), spec
        assert together.mean[name] == alone.mean[name], spec
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall", "11pt_avg"}).evaluate(run)
    qids = list(together.query_ids)
    for x in LEVELS:
        got = together.per_query[names[f"iprec(level={x})"]]
        want = [ref[q][f"iprec_at_recall_{x}"] for q in qids]
        assert got.tolist() == pytest.approx(want, abs=1e-12), x
