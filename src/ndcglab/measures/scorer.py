"""The measure used inside training and boosting: validation, model selection, AdaRank's E(π, y).

A thin wrapper over :func:`ndcglab.measures.evaluate_arrays` so that training uses exactly the
conventions of the evaluation library (the preset fills every unset option, e.g. ``letor4``: LETOR
gain table, LETOR discount, ties in input order, NDCG@k = 0 when k exceeds the list).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .evaluate import EvaluationResult

__all__ = ["MeasureScorer"]


@dataclass(frozen=True)
class MeasureScorer:
    """Per-query values and means of one measure under one preset (``None``: library default)."""

    measure: str = "ndcg@10"
    preset: str | None = "letor4"

    def __post_init__(self) -> None:
        # validate early: an unknown measure or preset fails before any training happens
        from . import parse_measure

        parse_measure(self.measure)
        if self.preset is not None:
            from . import get_preset

            get_preset(self.preset)

    @property
    def name(self) -> str:
        """The measure's printed name, as :func:`~ndcglab.measures.evaluate` keys its means."""
        res = self._eval(np.zeros(1), np.zeros(1), np.array([0, 1]))
        return str(res.measures[0])

    def _eval(
        self, labels: np.ndarray, scores: np.ndarray, boundaries: np.ndarray
    ) -> EvaluationResult:
        from .evaluate import evaluate_arrays

        return evaluate_arrays(
            np.asarray(labels, dtype=np.float64),
            np.asarray(scores, dtype=np.float64),
            np.asarray(boundaries, dtype=np.int64),
            [self.measure],
            preset=self.preset,
        )

    def per_query(
        self, labels: np.ndarray, scores: np.ndarray, boundaries: np.ndarray
    ) -> np.ndarray:
        """``(Q,)`` float64 values, 0 where the convention skips a query (NaN)."""
        res = self._eval(labels, scores, boundaries)
        values = np.asarray(next(iter(res.per_query.values())), dtype=np.float64)
        return np.nan_to_num(values, nan=0.0)

    def mean(self, labels: np.ndarray, scores: np.ndarray, boundaries: np.ndarray) -> float:
        """The mean over queries, as the evaluation library reports it."""
        res = self._eval(labels, scores, boundaries)
        return float(next(iter(res.mean.values())))
