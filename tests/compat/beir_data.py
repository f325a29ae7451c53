"""BEIR-style generated qrels and runs: ``{query_id: {doc_id: value}}``, a few dozen graded
judgements (0-3) per query, some judged documents not retrieved, scores rounded so that ties
occur (the tie rule is exercised)."""

from __future__ import annotations

import numpy as np


def beir_dicts(
    n_queries: int, n_docs: int, *, judged: int = 50, decimals: int | None = 2, seed: int = 0
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        scores = rng.random(n_docs)
        if decimals is not None:
            scores = scores.round(decimals)
        run[qid] = {f"d{q}_{i}": float(s) for i, s in enumerate(scores.tolist())}
        n_judged = min(judged, n_docs)
        picked = rng.choice(n_docs + n_docs // 10 + 5, n_judged, replace=False)
        labels = rng.integers(0, 4, n_judged)
        qrels[qid] = {f"d{q}_{i}": int(v) for i, v in zip(picked.tolist(), labels.tolist())}
    return qrels, run
