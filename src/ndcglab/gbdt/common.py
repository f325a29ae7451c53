"""What the two tree engines' trainers share (single-process and Dask alike).

* :func:`check_train_valid` — the training and validation sets are ranking datasets of the same
  width;
* :class:`EvalSetMeasure` — one of our measures on an evaluation set of the engine (the scorer,
  the name ``measure[preset]`` and the per-set cache of labels and query boundaries), the base of
  LightGBM's ``feval`` and XGBoost's ``custom_metric``;
* :func:`best_round` — the round chosen from a validation curve (the first best, 1-based);
* :func:`curve_record` and :func:`model_metadata` — the model file's ``training`` entries of a
  validation curve and the metadata every trained tree model carries;
* :func:`split_engine_settings` — our settings (aliases resolved) apart from the engine's own
  parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..data import RankingDataset
from ..errors import SpecError
from ..measures import MeasureScorer

__all__ = [
    "ROUND_SELECTION",
    "EvalSetMeasure",
    "best_round",
    "check_train_valid",
    "curve_record",
    "model_metadata",
    "split_engine_settings",
]

#: ``training.round_selection`` of a model whose round was chosen after fixed rounds (Dask)
ROUND_SELECTION = "fixed rounds, then the best round on the validation set"


def check_train_valid(train: Any, valid: RankingDataset | None) -> None:
    """Raise :class:`~ndcglab.errors.SpecError` unless ``train`` is a
    :class:`~ndcglab.data.RankingDataset` and ``valid`` (if any) has as many features."""
    if not isinstance(train, RankingDataset):
        raise SpecError(f"train must be a RankingDataset, got {type(train).__name__}")
    if valid is not None and valid.n_features != train.n_features:
        raise SpecError(
            f"the validation set has {valid.n_features} features, the training set "
            f"{train.n_features}. Fix: use the same feature set for both"
        )


class EvalSetMeasure:
    """``measure`` (a measure spec, ``"ndcg@10"``, ``"map"`` …) under ``preset`` on an engine's
    evaluation set: the mean over its queries, by the one training-time measure
    :class:`ndcglab.measures.MeasureScorer`; bigger is better. Each evaluation set's labels and
    query boundaries are computed once (:meth:`_arrays`) and cached by the set's identity."""

    def __init__(self, measure: str, preset: str | None) -> None:
        self.measure = measure
        self.preset = preset
        self.scorer = MeasureScorer(measure, preset)  # validates both now
        self.name = str(measure) if preset is None else f"{measure}[{preset}]"
        self._cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _arrays_of(
        self, eval_set: Any, make: Callable[[Any], tuple[np.ndarray, np.ndarray]]
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(labels, boundaries)`` of ``eval_set``, computed by ``make`` the first time."""
        key = id(eval_set)
        if key not in self._cache:
            self._cache[key] = make(eval_set)
        return self._cache[key]

    def value(self, labels: np.ndarray, scores: np.ndarray, boundaries: np.ndarray) -> float:
        """The mean of the measure over the queries given as flat arrays."""
        return self.scorer.mean(labels, scores, boundaries)


def best_round(curve: Sequence[float]) -> int:
    """The round (1-based) with the best value of ``curve``, the first on ties; 0 for none."""
    return int(np.argmax(curve)) + 1 if curve else 0


def curve_record(
    curve: Sequence[float], measure: str | None, preset: str | None, *, watched: bool
) -> dict[str, Any]:
    """The ``training`` entries of a validation curve: ``measure`` and ``preset`` (``None``
    unless a measure was ``watched``), ``valid_curve``, ``best_valid``, and the names the
    estimator reads (``history``, ``best_score``)."""
    values = [float(v) for v in curve]
    best = float(max(values)) if values else None
    return {
        "measure": measure if watched else None,
        "preset": preset if watched else None,
        "valid_curve": values,
        "best_valid": best,
        "history": [{"round": i + 1, "valid": v} for i, v in enumerate(values)],
        "best_score": best,
    }


def model_metadata(
    *,
    loss: str,
    objective: dict[str, Any],
    params: dict[str, Any],
    model: dict[str, Any],
    feature_names: Sequence[str] | None,
    training_data: Any,
    training: dict[str, Any],
    seed: int,
    versions: dict[str, Any],
) -> dict[str, Any]:
    """The metadata of a trained tree model (the keys the model file documents)."""
    return {
        "loss": loss,
        "objective": objective,
        "params": params,
        "model": model,
        "feature_names": list(feature_names) if feature_names else None,
        "training_data": training_data,
        "training": training,
        "seed": int(seed),
        "versions": versions,
    }


def split_engine_settings(
    settings: Mapping[str, Any], ours: frozenset[str], aliases: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(ours, the engine's)``: the ``settings`` whose name (after ``aliases``) is in ``ours``,
    and every other one, passed through to the engine under its (alias-resolved) name."""
    mine: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in settings.items():
        k = aliases.get(key, key)
        (mine if k in ours else extra)[k] = value
    return mine, extra
