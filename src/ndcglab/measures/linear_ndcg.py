"""Linear NDCG (NDCG^β) and the label-gap-weighted pairwise loss of Jin & Geng, "Linear NDCG
and Pair-wise Loss" (ECML/PKDD Discovery Challenge 2010).

For one query with ``n = |S|`` documents ranked by a scoring function f::

    DCG^β_f      = Σ_{i=1..n} y_(i) (n − i)              (y_(i): label at position i)
    R(f)         = Σ_{a<b} Σ_{i∈S_b} Σ_{j∈S_a} (b − a) · I[f(x_i) < f(x_j)]
    Theorem      DCG^β_ideal − DCG^β_f = R(f)

i.e. every pair ranked against its labels costs exactly its label gap. :func:`pairwise_loss`
computes R(f) in O(n log n): documents are visited in ranking order while a Fenwick tree over the
distinct label values accumulates the count and the label sum of the documents ranked above.

**Ties in scores** need the same rule on both sides for the identity to hold exactly:

* an order-based rule (``input`` — file order —, ``docid``, ``pessimistic``, ``optimistic``,
  ``random:<seed>``) turns the scores into one strict order, used by DCG^β and by R (a tied pair
  counts as inverted exactly when that order puts the worse document first);
* ``average``: DCG^β gives each tied group its mean label times the sum of the group's
  discounts, and R counts a tied pair with different labels as *half* an inversion; both are the
  expectation over the orders of the tied group, so the identity still holds exactly.

The paper's indicator ``I[f(x_i) < f(x_j)]`` alone (ties never counted) matches the ``optimistic``
rule. The registered measure ``ndcg_beta`` is ``ndcg`` with ``gain=linear, discount=linear``.
Labels may be any real numbers (the proof only uses label differences).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _kernels as K
from ._parallel import run_kernel
from .compute import check_inputs, compute_per_query
from .conventions import tie_key
from .presets import get_preset
from .registry import Measure, canonical_ties

__all__ = ["ideal_linear_dcg", "linear_dcg", "linear_ndcg", "pairwise_loss"]

#: defaults: the ``standard`` preset's tie and empty-query rules
_TIES = get_preset().default("ndcg_beta", "ties")
_EMPTY = get_preset().default("ndcg_beta", "empty")


def _dcg_measure(name: str, ties: str) -> Measure:
    if name == "idcg":
        return Measure.create("idcg", gain="linear", discount="linear")
    return Measure.create(name, gain="linear", discount="linear", ties=ties)


def linear_dcg(
    labels: Any, scores: Any, boundaries: Any, *, ties: str = _TIES, doc_ids: Any = None
) -> np.ndarray:
    """DCG^β = Σ_i y_(i) (n − i) of every query, ``(Q,)``."""
    y, s, b, _ = check_inputs(labels, scores, boundaries)
    m = _dcg_measure("dcg", ties)
    return compute_per_query([m], y, s, b, doc_ids=_ids(doc_ids))[m].values


def ideal_linear_dcg(labels: Any, boundaries: Any) -> np.ndarray:
    """DCG^β of the ideal order of every query, ``(Q,)`` (``m·n + m(m−1)/2`` for ``m`` positives
    and ``n`` negatives with labels 0/1)."""
    y = np.asarray(labels, dtype=np.float64)
    y, s, b, _ = check_inputs(y, np.zeros_like(y), boundaries)
    m = _dcg_measure("idcg", _TIES)
    return compute_per_query([m], y, s, b)[m].values


def linear_ndcg(
    labels: Any,
    scores: Any,
    boundaries: Any,
    *,
    ties: str = _TIES,
    empty: str = _EMPTY,
    doc_ids: Any = None,
) -> np.ndarray:
    """NDCG^β = DCG^β_f / DCG^β_ideal of every query (the registered measure ``ndcg_beta``)."""
    y, s, b, _ = check_inputs(labels, scores, boundaries)
    m = Measure.create("ndcg_beta", ties=ties, empty=empty)
    return compute_per_query([m], y, s, b, doc_ids=_ids(doc_ids))[m].values


def pairwise_loss(
    labels: Any, scores: Any, boundaries: Any, *, ties: str = _TIES, doc_ids: Any = None
) -> np.ndarray:
    """Jin & Geng's R(f) of every query, ``(Q,)``, in O(n log n) per query (see the module
    docstring for the tie rules; with the same ``ties``,
    ``ideal_linear_dcg − linear_dcg == pairwise_loss``)."""
    rule = canonical_ties(ties)
    y, s, b, _ = check_inputs(labels, scores, boundaries)
    vals = y if rule in ("pessimistic", "optimistic") else None
    tkey, average = tie_key(rule, s, b, doc_ids=_ids(doc_ids), values=vals)
    out = np.zeros(len(b) - 1)
    run_kernel(K.pairwise_kernel, b, y, s, tkey, b, average, (out,))
    return out


def _ids(doc_ids: Any) -> np.ndarray | None:
    return None if doc_ids is None else np.asarray(doc_ids, dtype=object)
