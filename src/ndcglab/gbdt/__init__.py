"""Boosted trees driven by our losses: any registered differentiable listwise loss as a LightGBM
custom objective, training with early stopping on our measures, and Dask paths.

* :class:`LossObjective` — per-document gradient and Hessian diagonal of a registered loss
  (closed form where one exists, else exact by autograd on short lists or a Hutchinson estimate).
* :func:`train_gbdt` / :func:`fit_gbdt` → :class:`GBDTModel` (``predict``, ``save``;
  :func:`load_gbdt`).
* :mod:`ndcglab.gbdt.distributed` — Dask training and out-of-core evaluation (imports dask lazily).

LightGBM and torch are imported when first used, not when this package is imported.
"""

from __future__ import annotations

from .model import GBDTModel, load_gbdt
from .objective import HESSIAN_MODES, LossObjective, hessian_diagonal
from .train import DEFAULTS, LIGHTGBM_PREFIX, MeasureFeval, fit_gbdt, to_lgb_dataset, train_gbdt

__all__ = [
    "DEFAULTS",
    "HESSIAN_MODES",
    "LIGHTGBM_PREFIX",
    "GBDTModel",
    "LossObjective",
    "MeasureFeval",
    "fit_gbdt",
    "hessian_diagonal",
    "load_gbdt",
    "to_lgb_dataset",
    "train_gbdt",
]
