"""Measures of ranking quality, every convention explicit.

* :func:`parse_measure` / :class:`Measure`: a measure as a value (``ndcg@10``,
  ``ndcg(gain=linear,discount=power:0.5)@0.2n``, ``map``, ``p@5``, ``mrr``, ``meanndcg``,
  ``ndcg_beta``, and the rank family: ``recall@k``, ``rprec``, ``success@k``, ``bpref``,
  ``infap``, ``gm_map``, ``iprec(level=x)``, ``iprec_11pt``, ``err@k``, ``rbp(p=…)``,
  ``rbp_residual``, ``judged@k``, ``num_rel``, ``num_ret``, ``num_rel_ret``); :data:`REGISTRY`
  lists every measure and its options. trec_eval's and ir_measures' names (``ndcg_cut_10``,
  ``P_10``, ``nDCG@10``, ``RBP(p=0.8)``) parse to the canonical measure
  (:func:`measure_aliases` maps the text as typed to it).
* :func:`get_preset`: whole conventions of other tools (``standard``, ``letor3``, ``letor4``,
  ``trec_eval``, ``trec_eval10``, ``sklearn``, ``lightgbm``, and the libraries ``xgboost``,
  ``catboost``, ``torchmetrics``, ``allrank``, ``rax``, ``ranx``, ``gdeval``), with options in
  the same grammar (``trec_eval(judged_only=yes,depth=100,rel=2)``,
  ``catboost(type=exp,denominator=position)``, ``torchmetrics(empty=skip)``).
* :func:`evaluate`, :func:`evaluate_arrays`, :func:`evaluate_trec` -> :class:`EvaluationResult`;
  with ``tie_range=True`` each measure's :class:`TieRange` (best and worst value over every
  order of the tied documents, :mod:`~ndcglab.measures.tie_range`).
* :func:`ndcg_per_query`: the fast per-query NDCG for training loops.
* :class:`MeasureScorer`: one measure under one preset, as training and boosting select models.
* :mod:`~ndcglab.measures.linear_ndcg`: NDCG^beta and Jin & Geng's weighted pairwise loss.
* :mod:`~ndcglab.measures.gains`, :mod:`~ndcglab.measures.discounts`: G(y) and D(r) objects,
  shared with the losses (NumPy and torch).
* :mod:`~ndcglab.measures.conventions`: the one NumPy function of each other convention (cut-off
  per query, tie key, relevance threshold, ``short`` and ``empty`` rules, the DCG sum).
* :mod:`~ndcglab.measures.prefixes`: the ndcg family on every prefix S_n of every list at once.

Formulas and the differences between libraries: ``docs/measures.md``.
"""

from typing import TYPE_CHECKING

from .._compat import lazy_names
from .compute import ndcg_per_query
from .discounts import Discount, get_discount
from .evaluate import EvaluationResult, evaluate, evaluate_arrays, evaluate_trec
from .gains import Gain, get_gain
from .presets import PRESETS, Preset, available_presets, get_preset
from .registry import (
    REGISTRY,
    Measure,
    MeasureInfo,
    available_measures,
    get_measure_info,
    measure_aliases,
    parse_measure,
    parse_measures,
)

if TYPE_CHECKING:  # the names loaded on first use (see _WHERE below), for type checkers
    from .linear_ndcg import linear_dcg, pairwise_loss
    from .scorer import MeasureScorer
    from .tie_range import TieRange

__all__ = [
    "PRESETS",
    "REGISTRY",
    "Discount",
    "EvaluationResult",
    "Gain",
    "Measure",
    "MeasureInfo",
    "MeasureScorer",
    "Preset",
    "TieRange",
    "available_measures",
    "available_presets",
    "evaluate",
    "evaluate_arrays",
    "evaluate_trec",
    "get_discount",
    "get_gain",
    "get_measure_info",
    "get_preset",
    "linear_dcg",
    "measure_aliases",
    "ndcg_per_query",
    "pairwise_loss",
    "parse_measure",
    "parse_measures",
]

#: names whose modules load on first use: ``evaluate --qrels --run`` needs neither the scorer of
#: training nor the tie ranges, and linear_ndcg loads the Numba kernels. ``evaluate`` stays eager:
#: it is both a function and the name of its sub-module, and the function must win.
_WHERE = {
    "MeasureScorer": "ndcglab.measures.scorer",
    "TieRange": "ndcglab.measures.tie_range",
    "linear_dcg": "ndcglab.measures.linear_ndcg",
    "pairwise_loss": "ndcglab.measures.linear_ndcg",
}

__getattr__, __dir__ = lazy_names(__name__, _WHERE, __all__)
