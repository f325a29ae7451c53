"""Boosted trees driven by our losses: any registered differentiable listwise loss as a LightGBM
custom objective, training with early stopping on our measures, and training on Dask.

* :class:`LossObjective` — per-document gradient and Hessian diagonal of a registered loss
  (the loss's own closed form where it has one, else exact by autograd on short lists or a
  Hutchinson estimate: :func:`hessian_diagonal`).
* :func:`train_gbdt` / :func:`fit_gbdt` → :class:`GBDTModel` (``predict``, ``save``;
  :func:`load_gbdt`); LightGBM's own objectives for comparison as
  ``lightgbm(objective=lambdarank)`` or ``lightgbm:lambdarank`` (:func:`lightgbm_objective`).
* training on a Dask cluster is :mod:`ndcglab.distributed.train`; evaluating
  files larger than memory is :mod:`ndcglab.distributed.evaluate`.
* XGBoost as a second engine: :class:`XGBoostObjective` (the same gradients and Hessians as an
  XGBoost custom objective), :func:`train_xgboost` / :func:`fit_xgboost` →
  :class:`XGBoostModel` (same signatures as :func:`train_gbdt` / :func:`fit_gbdt`; XGBoost's own
  ``xgboost:rank:ndcg`` for comparison); on Dask through :mod:`ndcglab.distributed.xgboost_train`.
* :func:`export_lightgbm` / :func:`export_boosted` — the trees as LightGBM's (or XGBoost's) own
  model file, which the library loads and predicts with without ndcglab.

LightGBM, XGBoost and torch are imported when first used, not when this package is imported.
"""

from __future__ import annotations

from .export import export_boosted, export_lightgbm
from .hessian import hessian_diagonal
from .model import GBDTModel, load_gbdt
from .objective import HESSIAN_MODES, LossObjective
from .train import (
    DEFAULTS,
    LIGHTGBM_PREFIX,
    MeasureFeval,
    fit_gbdt,
    lightgbm_objective,
    to_lgb_dataset,
    train_gbdt,
)
from .xgboost_model import XGBoostModel
from .xgboost_objective import XGBoostObjective
from .xgboost_train import fit_xgboost, train_xgboost

__all__ = [
    "DEFAULTS",
    "HESSIAN_MODES",
    "LIGHTGBM_PREFIX",
    "GBDTModel",
    "LossObjective",
    "MeasureFeval",
    "XGBoostModel",
    "XGBoostObjective",
    "export_boosted",
    "export_lightgbm",
    "fit_gbdt",
    "fit_xgboost",
    "hessian_diagonal",
    "lightgbm_objective",
    "load_gbdt",
    "to_lgb_dataset",
    "train_gbdt",
    "train_xgboost",
]
