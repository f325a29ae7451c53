"""The conformance suite's cases: small rankings that stress every convention on which NDCG
implementations disagree.

Each case is a handful of queries (flat ``labels`` and ``scores``, ``groups`` = list lengths,
``doc_ids``). :func:`generate` builds them from fixed numbers and ``numpy.random.default_rng``
with fixed seeds, so the same NumPy gives the same cases; ``regenerate.py`` writes them to
``golden/cases.json`` next to the libraries' values, and the tests read that file.

======================  ==================================================================
case                    what it stresses
======================  ==================================================================
``random``              plain integer labels 0..4, distinct scores
``ties``                scores rounded to one decimal: many tied groups mixing labels
``ties_float32``        scores that differ only below single precision (1 and 1 + 1e-9)
``constant``            every score equal: the tie rule alone decides the ranking
``empty``               queries with no relevant document (every label 0)
``short``               lists of 2 to 4 documents, shorter than the cut-offs 5 and 10
``single``              1-document lists (relevant and not)
``float_labels``        fractional labels (0.5, 1.5, 2.25)
``negative``            labels -1 and -2 beside positive ones
``large``               labels up to 40 (exp2 overflows a 32-bit gain table; LightGBM,
                        XGBoost and gdeval cap or refuse them)
``binary``              labels 0/1 only (MAP in XGBoost needs them), one query without a
                        relevant document
======================  ==================================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["generate"]


def _case(
    name: str, why: str, labels: list[float], scores: list[float], groups: list[int]
) -> dict[str, Any]:
    assert len(labels) == len(scores) == sum(groups)
    doc_ids = []
    for q, n in enumerate(groups):
        doc_ids += [f"d{q}_{i:02d}" for i in range(n)]
    return {
        "name": name,
        "why": why,
        "labels": [float(x) for x in labels],
        "scores": [float(x) for x in scores],
        "groups": [int(g) for g in groups],
        "doc_ids": doc_ids,
    }


def generate() -> list[dict[str, Any]]:
    """Every case, in a fixed order (see the module docstring)."""
    out = []
    rng = np.random.default_rng(20261127)
    groups = [7, 12, 5, 9, 10, 3]
    n = sum(groups)
    lab = rng.integers(0, 5, n).astype(float)
    out.append(
        _case("random", "integer labels 0..4, distinct scores", lab, rng.normal(size=n), groups)
    )

    rng = np.random.default_rng(1)
    groups = [8, 11, 6, 9, 12]
    n = sum(groups)
    lab = rng.integers(0, 4, n).astype(float)
    sc = np.round(rng.uniform(0, 0.4, n), 1)
    out.append(_case("ties", "scores rounded to one decimal", lab, sc, groups))

    rng = np.random.default_rng(2)
    groups = [6, 8, 7, 5]
    n = sum(groups)
    lab = rng.integers(0, 3, n).astype(float)
    base = np.round(rng.uniform(0, 1, n), 1)
    sc = base + rng.integers(0, 2, n) * 1e-9
    out.append(_case("ties_float32", "ties only at single precision", lab, sc, groups))

    rng = np.random.default_rng(3)
    groups = [10, 6, 9, 4]
    n = sum(groups)
    lab = rng.integers(0, 3, n).astype(float)
    out.append(_case("constant", "every score equal", lab, np.full(n, 0.5), groups))

    rng = np.random.default_rng(4)
    groups = [5, 6, 4, 7]
    n = sum(groups)
    lab = rng.integers(0, 3, n).astype(float)
    lab[:5] = 0.0
    lab[5 + 6 : 5 + 6 + 4] = 0.0
    out.append(
        _case("empty", "queries without a relevant document", lab, rng.normal(size=n), groups)
    )

    rng = np.random.default_rng(5)
    groups = [2, 3, 4, 2, 3]
    n = sum(groups)
    lab = rng.integers(0, 3, n).astype(float)
    lab[0] = 2.0
    out.append(_case("short", "lists shorter than k", lab, rng.normal(size=n), groups))

    out.append(
        _case(
            "single", "1-document lists", [1.0, 0.0, 3.0, 2.0], [0.3, -0.1, 0.7, 0.7], [1, 1, 1, 1]
        )
    )

    rng = np.random.default_rng(7)
    groups = [6, 8, 5]
    n = sum(groups)
    lab = rng.choice([0.0, 0.5, 1.0, 1.5, 2.25], n)
    out.append(_case("float_labels", "fractional labels", lab, rng.normal(size=n), groups))

    rng = np.random.default_rng(8)
    groups = [6, 7, 5]
    n = sum(groups)
    lab = rng.choice([-2.0, -1.0, 0.0, 1.0, 2.0], n)
    lab[0] = 2.0
    out.append(_case("negative", "labels below zero", lab, rng.normal(size=n), groups))

    rng = np.random.default_rng(9)
    groups = [6, 5, 7]
    n = sum(groups)
    lab = rng.choice([0.0, 1.0, 5.0, 12.0, 31.0, 33.0, 40.0], n)
    out.append(_case("large", "labels up to 40", lab, rng.normal(size=n), groups))

    rng = np.random.default_rng(10)
    groups = [8, 6, 9, 7]
    n = sum(groups)
    lab = rng.integers(0, 2, n).astype(float)
    lab[-7:] = 0.0  # the last query has no relevant document (map@k- against map@k)
    sc = np.round(rng.uniform(0, 1, n), 1)
    out.append(_case("binary", "labels 0/1, some tied scores, one empty query", lab, sc, groups))
    return out
