"""The boosting libraries' own position-debiased rankers, as baselines for the learners of
:mod:`ndcglab.clicks.learn`.

Both train LambdaMART on the log's **impressions** (one row per shown document: the document's
features, the click as the label, one group per session) and estimate the position bias
themselves while boosting, following Hu, Wang, Peng and Li ("Unbiased LambdaMART: an unbiased
pairwise learning-to-rank algorithm", WWW 2019):

* :func:`lightgbm_position_bias` — LightGBM's ``lambdarank`` objective with the positions given
  to the dataset (``Dataset(position=…)``, 0-based); the learned position factors are a
  generalised additive term (regularised by ``lambdarank_position_bias_regularization``).
* :func:`xgboost_unbiased` — XGBoost's ``rank:ndcg`` with ``lambdarank_unbiased=True``, which
  reads a document's position from its order inside its group (the rows are passed in position
  order).

Both use ndcglab's thread rule (:func:`ndcglab.training.config.default_threads` of the
impressions) unless ``params`` sets the threads. They need the whole log in memory (not its
sufficient statistics) and use their own NDCG conventions (LightGBM's and XGBoost's label gain
``2^y − 1`` on 0/1 clicks). The models are the libraries' boosters; :func:`baseline_scores`
scores new data with either.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..data.dataset import RankingDataset
from ..training.config import default_threads
from .logs import ClickLog, aligned_to, validate_log

__all__ = ["baseline_scores", "lightgbm_position_bias", "xgboost_unbiased"]


def _impressions(log: ClickLog, dataset: RankingDataset) -> tuple[Any, ...]:
    validate_log(log, dataset=dataset)
    log = aligned_to(log, dataset)
    x = np.asarray(dataset.features, dtype=np.float32)[log.doc]
    y = log.click.astype(np.float64)
    starts = log.session_starts()
    group = np.diff(starts)
    position = log.position.astype(np.int32) - 1
    return x, y, group, position, starts


def lightgbm_position_bias(
    dataset: RankingDataset,
    log: ClickLog,
    *,
    rounds: int = 100,
    lr: float = 0.05,
    num_leaves: int = 31,
    seed: int = 0,
    params: dict[str, Any] | None = None,
) -> Any:
    """A LightGBM ``lambdarank`` booster trained on the impressions of ``log`` with their
    positions (LightGBM's position-bias correction); ``params`` adds LightGBM parameters."""
    from .._compat import lightgbm

    lgb = lightgbm()
    x, y, group, position, _ = _impressions(log, dataset)
    train = lgb.Dataset(x, label=y, group=group, position=position)
    settings = {
        "objective": "lambdarank",
        "learning_rate": float(lr),
        "num_leaves": int(num_leaves),
        "seed": int(seed),
        "deterministic": True,
        "verbosity": -1,
        "num_threads": default_threads(*x.shape),
        **(params or {}),
    }
    return lgb.train(settings, train, num_boost_round=int(rounds))


def xgboost_unbiased(
    dataset: RankingDataset,
    log: ClickLog,
    *,
    rounds: int = 100,
    lr: float = 0.05,
    seed: int = 0,
    params: dict[str, Any] | None = None,
) -> Any:
    """An XGBoost ``rank:ndcg`` booster with ``lambdarank_unbiased=True`` trained on the
    impressions of ``log`` (each session a group, its rows in position order);
    ``params`` adds XGBoost parameters."""
    from .._compat import require

    xgb = require("xgboost")
    x, y, _, _, starts = _impressions(log, dataset)
    qid = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
    train = xgb.DMatrix(x, label=y, qid=qid)
    settings = {
        "objective": "rank:ndcg",
        "lambdarank_unbiased": True,
        "eta": float(lr),
        "seed": int(seed),
        "tree_method": "hist",
        "verbosity": 0,
        "nthread": default_threads(*x.shape),
        **(params or {}),
    }
    return xgb.train(settings, train, num_boost_round=int(rounds))


def baseline_scores(booster: Any, data: Any) -> np.ndarray:
    """Float64 scores of ``data`` (a :class:`~ndcglab.data.RankingDataset` or an ``(N, F)``
    feature matrix) by a booster of :func:`lightgbm_position_bias` or :func:`xgboost_unbiased`
    (all its trees)."""
    x = np.asarray(getattr(data, "features", data), dtype=np.float32)
    if type(booster).__module__.startswith("xgboost"):
        from .._compat import require

        xgb = require("xgboost")
        return np.asarray(booster.predict(xgb.DMatrix(x)), dtype=np.float64)
    return np.asarray(booster.predict(x), dtype=np.float64)
