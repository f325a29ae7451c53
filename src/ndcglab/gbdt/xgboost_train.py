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
from ..training.config import default_threads
from .common import (
    EvalSetMeasure,
    best_round,
    check_train_valid,
    curve_record,
    model_metadata,
    split_engine_settings,
)
from .params import engine_refusal
from .train import _ALIASES as LIGHTGBM_ALIASES
from .train import DEFAULTS
from .xgboost_model import ENGINE, XGBoostModel, xgboost_versions
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


def _dmatrix_arrays(dmatrix: Any) -> tuple[np.ndarray, np.ndarray]:
    """Labels and query boundaries of an ``xgboost.DMatrix``."""
    return np.asarray(dmatrix.get_label(), dtype=np.float64), group_boundaries(dmatrix)


class XGBoostMeasure(EvalSetMeasure):
    """An XGBoost ``custom_metric`` for one of our measures: ``(predt, dmatrix) -> (name,
    value)``, the mean over the evaluation set's queries of ``measure`` under ``preset``
    (:class:`ndcglab.measures.MeasureScorer`, as
    :class:`~ndcglab.gbdt.common.EvalSetMeasure`); bigger is better (train with
    ``maximize=True``)."""

    def __init__(self, measure: str = "ndcg@10", preset: str | None = "letor4") -> None:
        super().__init__(measure, preset)

    def __call__(self, predt: np.ndarray, dmatrix: Any) -> tuple[str, float]:
        labels, b = self._arrays_of(dmatrix, _dmatrix_arrays)
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
    check_train_valid(train, valid)
    xgb_params = xgboost_params(
        learning_rate=learning_rate,
        num_leaves=num_leaves,
        seed=seed,
        num_threads=int(num_threads) or default_threads(train.n_docs, train.n_features),
    )
    builtin, obj, loss_label = xgboost_loss(
        loss,
        xgb_params,
        params,
        hessian=hessian,
        hess_floor=hess_floor,
        hutchinson_samples=hutchinson_samples,
        constant_lists=constant_lists,
        seed=seed,
    )

    dtrain = to_dmatrix(train)
    evals: list[tuple[Any, str]] = []
    feval: XGBoostMeasure | None = None
    if valid is not None and eval_every_round:
        evals = [(to_dmatrix(valid), "valid")]
        feval = XGBoostMeasure(measure, preset)
    history: dict[str, Any] = {}
    t0 = time.perf_counter()
    stop = int(early_stopping_rounds) if feval is not None and early_stopping_rounds else None
    try:
        booster = xgb.train(
            xgb_params,
            dtrain,
            num_boost_round=int(num_boost_round),
            evals=evals,
            obj=obj,
            custom_metric=feval,
            maximize=True if feval is not None else None,
            early_stopping_rounds=stop,
            evals_result=history,
            verbose_eval=False,
            callbacks=list(callbacks) or None,
        )
    except xgb.core.XGBoostError as exc:  # a parameter the engine refuses: one line
        raise engine_refusal(ENGINE, exc, dict(params or {})) from None
    seconds = time.perf_counter() - t0
    curve = [float(v) for v in history.get("valid", {}).get(feval.name, [])] if feval else []
    best = best_round(curve)
    training = {
        "num_boost_round": int(num_boost_round),
        "rounds_run": int(booster.num_boosted_rounds()),
        "best_iteration": best,
        "min_data_in_leaf": {"value": int(min_data_in_leaf), "applied": False},
        "early_stopping_rounds": early_stopping_rounds if feval is not None else None,
        **curve_record(curve, measure, preset, watched=feval is not None),
        "seconds": seconds,
    }
    return xgboost_model(booster, builtin, obj, loss_label, xgb_params, best, train, training, seed)


def xgboost_loss(
    loss: Any, xgb_params: dict[str, Any], params: Mapping[str, Any] | None, **options: Any
) -> tuple[str | None, XGBoostObjective | None, str]:
    """``(builtin, objective, label)`` of ``loss``: an XGBoost built-in (set as
    ``xgb_params["objective"]``, no objective object) or our loss as an
    :class:`~ndcglab.gbdt.xgboost_objective.XGBoostObjective` with the keyword ``options``; then
    the extra XGBoost ``params`` are applied over ``xgb_params`` (they win)."""
    builtin = xgboost_objective(loss)
    obj: XGBoostObjective | None = None
    if builtin is not None:
        xgb_params["objective"] = builtin
        loss_label = f"{XGBOOST_PREFIX}{builtin}"
    else:
        obj = XGBoostObjective(loss, **options)
        loss_label = obj.name
    xgb_params.update(dict(params or {}))
    return builtin, obj, loss_label


def xgboost_objective_info(builtin: str | None, obj: XGBoostObjective | None) -> dict[str, Any]:
    """The ``objective`` metadata: the built-in's name, or the settings of our objective."""
    if obj is not None:
        return obj.describe()
    return {"loss": f"{XGBOOST_PREFIX}{builtin}", "hessian": "xgboost built-in"}


def xgboost_model(
    booster: Any,
    builtin: str | None,
    obj: XGBoostObjective | None,
    loss_label: str,
    xgb_params: Mapping[str, Any],
    best: int,
    train: RankingDataset,
    training: dict[str, Any],
    seed: int,
    objective_info: dict[str, Any] | None = None,
) -> XGBoostModel:
    """The :class:`~ndcglab.gbdt.xgboost_model.XGBoostModel` of a trained ``booster`` with its
    metadata (``training`` gets ``engine = "xgboost"`` first; ``objective_info`` defaults to
    :func:`xgboost_objective_info` now)."""
    stored = {k: v for k, v in xgb_params.items() if k != "objective"}
    stored["objective"] = builtin if builtin is not None else "custom"
    meta = model_metadata(
        loss=loss_label,
        objective=xgboost_objective_info(builtin, obj)
        if objective_info is None
        else objective_info,
        params=stored,
        model={"kind": "gbdt", "engine": ENGINE, "best_iteration": best},
        feature_names=train.feature_names,
        training_data=train.source,
        training={"engine": ENGINE, **training},
        seed=seed,
        versions=xgboost_versions(),
    )
    return XGBoostModel(booster=booster, metadata=meta)


#: keys of ``fit_xgboost(params=...)`` that are our arguments rather than XGBoost parameters
_OUR_KEYS = frozenset(XGBOOST_DEFAULTS) | {"eval_every_round"}
#: the LightGBM engine's aliases and XGBoost's names of the same settings
_ALIASES = {
    **LIGHTGBM_ALIASES,
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
    from .train import check_settings

    settings = {**dict(params or {}), **kwargs}
    check_settings(ENGINE, settings, loss)
    ours, extra = split_xgboost_settings(settings)
    return train_xgboost(dataset, loss, valid=valid, params=extra, **ours)


def split_xgboost_settings(settings: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(ours, xgboost's)``: the settings of :func:`train_xgboost` (aliases resolved) and the
    XGBoost parameters passed through."""
    return split_engine_settings(settings, _OUR_KEYS, _ALIASES)
