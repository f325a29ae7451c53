"""Training XGBoost rankers with our losses (or XGBoost's own ranking objectives, to compare).

:func:`train_xgboost` is the XGBoost engine's one training path, with the signature of
:func:`ndcglab.gbdt.train_gbdt` and the same meaning for every argument, and
:func:`fit_xgboost` the one-dict entry point with the signature of
:func:`ndcglab.gbdt.fit_gbdt`. ``loss`` is one of our registered differentiable losses, driven
through :class:`~ndcglab.gbdt.xgboost_objective.XGBoostObjective` (the LightGBM objective's
gradients and Hessians, unchanged), or an XGBoost built-in named ``xgboost:rank:ndcg``,
``xgboost:rank:pairwise`` or ``xgboost:rank:map`` (:func:`xgboost_objective`), trained with the
same trees, rounds and early stopping.

**The tree settings, in XGBoost's terms.** Trees grow leaf-wise like LightGBM's
(``tree_method="hist"``, ``grow_policy="lossguide"``, ``max_depth=0``) up to ``num_leaves``
leaves (``max_leaves``); ``learning_rate`` is ``eta``; ``seed`` and ``num_threads`` are
``seed`` and ``nthread`` (0: XGBoost's default). XGBoost has no minimum number of documents per
leaf: ``min_data_in_leaf`` is recorded in the metadata but not applied; the leaf's Hessian sum
must reach ``min_child_weight`` = 1e-3 (LightGBM's ``min_sum_hessian_in_leaf`` default). Every
other XGBoost parameter keeps XGBoost's default (``lambda = 1``, ``max_bin = 256``) unless
given in ``params``. Boosting starts from ``base_score = 0`` (as LightGBM's custom objectives).

**Early stopping** watches one of *our* measures on the validation set (default ``ndcg@10``
under ``letor4``), computed by :class:`ndcglab.measures.MeasureScorer` as a ``custom_metric``;
XGBoost's own metrics are switched off (``disable_default_eval_metric``), so every objective is
judged alike. The model keeps every tree and predicts with those up to the best round.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._compat import require
from ..data import RankingDataset
from ..errors import SpecError
from ..measures import MeasureScorer
from .train import DEFAULTS
from .xgboost_model import XGBoostModel, xgboost_versions
from .xgboost_objective import XGBoostObjective, group_boundaries

__all__ = [
    "XGBOOST_DEFAULTS",
    "XGBOOST_OBJECTIVES",
    "XGBOOST_PREFIX",
    "XGBoostMeasure",
    "fit_xgboost",
    "split_xgboost_settings",
    "to_dmatrix",
    "train_xgboost",
    "xgboost_objective",
    "xgboost_params",
]

#: the spelling of XGBoost's own objectives as a loss: ``xgboost:<objective>``
XGBOOST_PREFIX = "xgboost:"
#: XGBoost's built-in ranking objectives that may be named
XGBOOST_OBJECTIVES = ("rank:ndcg", "rank:pairwise", "rank:map")

#: default settings of :func:`train_xgboost`: those of the LightGBM engine
#: (:data:`ndcglab.gbdt.train.DEFAULTS`, themselves :class:`~ndcglab.training.TrainConfig`'s)
XGBOOST_DEFAULTS: dict[str, Any] = dict(DEFAULTS)
_D = XGBOOST_DEFAULTS


def xgboost_objective(loss: Any) -> str | None:
    """The XGBoost built-in objective named by ``loss`` (``"xgboost:rank:ndcg"`` →
    ``"rank:ndcg"``), or ``None`` for one of our losses. Raises :class:`SpecError` for an
    unknown ``xgboost:`` name."""
    if not isinstance(loss, str):
        return None
    text = "".join(loss.split()).lower()
    if not text.startswith(XGBOOST_PREFIX):
        return None
    name = text[len(XGBOOST_PREFIX) :]
    if name not in XGBOOST_OBJECTIVES:
        raise SpecError(
            f"unknown XGBoost ranking objective {name!r} in {loss!r}; known: "
            f"{', '.join(XGBOOST_OBJECTIVES)}. Fix: e.g. xgboost:rank:ndcg"
        )
    return name


def to_dmatrix(data: RankingDataset) -> Any:
    """An ``xgboost.DMatrix`` of ``data`` with its query groups (float32; NaN = missing)."""
    xgb = require("xgboost")
    return xgb.DMatrix(
        data.features,
        label=data.labels,
        group=data.query_lengths,
        missing=np.nan,
        feature_names=list(data.feature_names) if data.feature_names else None,
    )


class XGBoostMeasure:
    """An XGBoost ``custom_metric`` for one of our measures: ``(predt, dmatrix) -> (name,
    value)``, the mean over the evaluation set's queries of ``measure`` under ``preset``
    (:class:`ndcglab.measures.MeasureScorer`); bigger is better (train with
    ``maximize=True``)."""

    def __init__(self, measure: str = "ndcg@10", preset: str | None = "letor4") -> None:
        self.measure = measure
        self.preset = preset
        self.scorer = MeasureScorer(measure, preset)  # validates both now
        self.name = str(measure) if preset is None else f"{measure}[{preset}]"
        self._cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, predt: np.ndarray, dmatrix: Any) -> tuple[str, float]:
        key = id(dmatrix)
        if key not in self._cache:
            labels = np.asarray(dmatrix.get_label(), dtype=np.float64)
            self._cache[key] = (labels, group_boundaries(dmatrix))
        labels, b = self._cache[key]
        scores = np.asarray(predt, dtype=np.float64).ravel()
        return self.name, float(self.scorer.mean(labels, scores, b))


def xgboost_params(
    *,
    learning_rate: float,
    num_leaves: int,
    seed: int,
    num_threads: int,
    params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The XGBoost parameters of our tree settings (see the module docstring); ``params`` win."""
    out: dict[str, Any] = {
        "eta": float(learning_rate),
        "tree_method": "hist",
        "grow_policy": "lossguide",
        "max_depth": 0,
        "max_leaves": int(num_leaves),
        "min_child_weight": 1e-3,
        "base_score": 0.0,
        "disable_default_eval_metric": 1,
        "seed": int(seed),
        "verbosity": 0,
    }
    if int(num_threads) > 0:
        out["nthread"] = int(num_threads)
    out.update(dict(params or {}))
    return out


def train_xgboost(
    train: RankingDataset,
    loss: Any = "listnet",
    *,
    valid: RankingDataset | None = None,
    num_boost_round: int = _D["num_boost_round"],
    learning_rate: float = _D["learning_rate"],
    num_leaves: int = _D["num_leaves"],
    min_data_in_leaf: int = _D["min_data_in_leaf"],
    early_stopping_rounds: int | None = _D["early_stopping_rounds"],
    measure: str = _D["measure"],
    preset: str | None = _D["preset"],
    hessian: str = _D["hessian"],
    hess_floor: float = _D["hess_floor"],
    hutchinson_samples: int = _D["hutchinson_samples"],
    constant_lists: str = _D["constant_lists"],
    seed: int = _D["seed"],
    num_threads: int = _D["num_threads"],
    params: Mapping[str, Any] | None = None,
    callbacks: Sequence[Any] = (),
    eval_every_round: bool = True,
) -> XGBoostModel:
    """Train an XGBoost ranker whose gradients come from one of our listwise losses.

    The arguments are those of :func:`ndcglab.gbdt.train_gbdt`, with the same meaning (the
    tree settings mapped to XGBoost's as the module docstring says); ``loss`` may also name an
    XGBoost built-in (``"xgboost:rank:ndcg"``). ``params`` are extra XGBoost parameters
    (``lambda``, ``colsample_bytree`` …) and win over the arguments; ``callbacks`` are
    ``xgboost.callback.TrainingCallback`` objects. Returns an
    :class:`~ndcglab.gbdt.xgboost_model.XGBoostModel`.
    """
    xgb = require("xgboost")
    if not isinstance(train, RankingDataset):
        raise SpecError(f"train must be a RankingDataset, got {type(train).__name__}")
    if valid is not None and valid.n_features != train.n_features:
        raise SpecError(
            f"the validation set has {valid.n_features} features, the training set "
            f"{train.n_features}. Fix: use the same feature set for both"
        )
    xgb_params = xgboost_params(
        learning_rate=learning_rate,
        num_leaves=num_leaves,
        seed=seed,
        num_threads=num_threads,
    )
    builtin = xgboost_objective(loss)
    obj: XGBoostObjective | None = None
    if builtin is not None:
        xgb_params["objective"] = builtin
        loss_label = f"{XGBOOST_PREFIX}{builtin}"
        objective_info: dict[str, Any] = {"loss": loss_label, "hessian": "xgboost built-in"}
    else:
        obj = XGBoostObjective(
            loss,
            hessian=hessian,
            hess_floor=hess_floor,
            hutchinson_samples=hutchinson_samples,
            constant_lists=constant_lists,
            seed=seed,
        )
        loss_label = obj.name
    xgb_params.update(dict(params or {}))

    dtrain = to_dmatrix(train)
    evals: list[tuple[Any, str]] = []
    feval: XGBoostMeasure | None = None
    if valid is not None and eval_every_round:
        evals = [(to_dmatrix(valid), "valid")]
        feval = XGBoostMeasure(measure, preset)
    history: dict[str, Any] = {}
    t0 = time.perf_counter()
    booster = xgb.train(
        xgb_params,
        dtrain,
        num_boost_round=int(num_boost_round),
        evals=evals,
        obj=obj,
        custom_metric=feval,
        maximize=True if feval is not None else None,
        early_stopping_rounds=int(early_stopping_rounds)
        if feval is not None and early_stopping_rounds
        else None,
        evals_result=history,
        verbose_eval=False,
        callbacks=list(callbacks) or None,
    )
    seconds = time.perf_counter() - t0
    if obj is not None:
        objective_info = obj.describe()
    curve = [float(v) for v in history.get("valid", {}).get(feval.name, [])] if feval else []
    best = int(np.argmax(curve)) + 1 if curve else 0
    stored = {k: v for k, v in xgb_params.items() if k != "objective"}
    stored["objective"] = builtin if builtin is not None else "custom"
    meta: dict[str, Any] = {
        "loss": loss_label,
        "objective": objective_info,
        "params": stored,
        "model": {"kind": "gbdt", "engine": "xgboost", "best_iteration": best},
        "feature_names": list(train.feature_names) if train.feature_names else None,
        "training_data": train.source,
        "training": {
            "engine": "xgboost",
            "num_boost_round": int(num_boost_round),
            "rounds_run": int(booster.num_boosted_rounds()),
            "best_iteration": best,
            "min_data_in_leaf": {"value": int(min_data_in_leaf), "applied": False},
            "early_stopping_rounds": early_stopping_rounds if feval is not None else None,
            "measure": measure if feval is not None else None,
            "preset": preset if feval is not None else None,
            "valid_curve": curve,
            "best_valid": float(max(curve)) if curve else None,
            "history": [{"round": i + 1, "valid": v} for i, v in enumerate(curve)],
            "best_score": float(max(curve)) if curve else None,
            "seconds": seconds,
        },
        "seed": int(seed),
        "versions": xgboost_versions(),
    }
    return XGBoostModel(booster=booster, metadata=meta)


#: keys of ``fit_xgboost(params=...)`` that are our arguments rather than XGBoost parameters
_OUR_KEYS = frozenset(XGBOOST_DEFAULTS) | {"eval_every_round"}
_ALIASES = {
    "n_estimators": "num_boost_round",
    "num_iterations": "num_boost_round",
    "num_rounds": "num_boost_round",
    "min_child_samples": "min_data_in_leaf",
    "random_state": "seed",
    "eta": "learning_rate",
    "max_leaves": "num_leaves",
    "nthread": "num_threads",
    "n_jobs": "num_threads",
}


def fit_xgboost(
    dataset: RankingDataset,
    loss: Any = "listnet",
    valid: RankingDataset | None = None,
    params: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> XGBoostModel:
    """:func:`train_xgboost` with settings in one dict, like :func:`ndcglab.gbdt.fit_gbdt`:
    ``params`` (and ``kwargs``, which win) mix our settings (the keys of
    :data:`XGBOOST_DEFAULTS`, and the aliases ``n_estimators``, ``eta``, ``max_leaves``,
    ``random_state`` …) with any XGBoost parameter, passed through."""
    ours, extra = split_xgboost_settings({**dict(params or {}), **kwargs})
    return train_xgboost(dataset, loss, valid=valid, params=extra, **ours)


def split_xgboost_settings(settings: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(ours, xgboost's)``: the settings of :func:`train_xgboost` (aliases resolved) and the
    XGBoost parameters passed through."""
    ours: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in settings.items():
        k = _ALIASES.get(key, key)
        (ours if k in _OUR_KEYS else extra)[k] = value
    return ours, extra
