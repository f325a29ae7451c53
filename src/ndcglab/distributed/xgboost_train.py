"""XGBoost rankers with our objectives on a Dask cluster (``xgboost.dask``).

XGBoost's Dask interface trains one booster over the workers' rows: each worker builds the
gradient histograms of its rows and the workers combine them (allreduce) to grow one shared tree
per round. A custom objective is pickled to every worker and called there with the worker's
**local** scores and ``DMatrix``. A listwise loss is a sum over queries, so each document's local
gradient is its exact global gradient **provided no query is split across workers**. As for
LightGBM on Dask (:mod:`ndcglab.distributed.train`), the data are cut only between queries
(:func:`ndcglab.distributed.train.partition_queries`), and every document carries its query's
index as ``qid``; XGBoost (3.0 and later) sorts each worker's rows by ``qid``, so the local
``group_ptr`` the objective reads (:func:`~ndcglab.gbdt.xgboost_objective.group_boundaries`)
holds whole queries.

**Choosing the number of rounds.** As on LightGBM's Dask path, no early stopping:
``num_boost_round`` trees are trained, and with ``valid=`` the validation curve (``measure``
under ``preset`` after every round) is computed on the client and the best round (the first
on ties) becomes the model's ``best_iteration``.

Dask and XGBoost are imported when these functions run (the ``distributed`` and ``xgboost``
extras); the active ``distributed.Client`` is used unless ``client=`` is given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._compat import require
from ..data import RankingDataset
from ..gbdt.common import check_train_valid
from ..gbdt.train import DEFAULT_LOSS, DEFAULTS
from ..gbdt.xgboost_model import XGBoostModel
from ..gbdt.xgboost_train import (
    xgboost_loss,
    xgboost_model,
    xgboost_objective_info,
    xgboost_params,
)
from .train import (
    DASK_ROUNDS,
    NETWORK_TIMEOUT,
    _client,
    check_network_timeout,
    dask_settings,
    dask_training_record,
    partition_queries,
)

__all__ = ["fit_xgboost_dask", "train_xgboost_dask", "xgboost_valid_curve"]


def xgboost_valid_curve(
    booster: Any,
    valid: RankingDataset,
    measure: str = DEFAULTS["measure"],
    preset: str | None = DEFAULTS["preset"],
) -> list[float]:
    """The mean of ``measure`` (under ``preset``) on ``valid`` after every round ``t = 1..T``
    of ``booster`` (the margin of the trees of rounds ``1..t``)."""
    from ..measures import MeasureScorer

    scorer = MeasureScorer(measure, preset)
    x = np.asarray(valid.features, dtype=np.float32)
    curve = []
    for t in range(1, int(booster.num_boosted_rounds()) + 1):
        score = booster.inplace_predict(x, iteration_range=(0, t), predict_type="margin")
        s = np.asarray(score, dtype=np.float64).ravel()
        curve.append(float(scorer.mean(valid.labels, s, valid.boundaries)))
    return curve


def train_xgboost_dask(
    train: RankingDataset,
    loss: Any = DEFAULT_LOSS,
    *,
    client: Any = None,
    n_partitions: int | None = None,
    num_boost_round: int = DASK_ROUNDS,
    learning_rate: float = DEFAULTS["learning_rate"],
    num_leaves: int = DEFAULTS["num_leaves"],
    min_data_in_leaf: int = DEFAULTS["min_data_in_leaf"],
    hessian: str = DEFAULTS["hessian"],
    hess_floor: float = DEFAULTS["hess_floor"],
    constant_lists: str = DEFAULTS["constant_lists"],
    seed: int = DEFAULTS["seed"],
    params: Mapping[str, Any] | None = None,
    valid: RankingDataset | None = None,
    measure: str = DEFAULTS["measure"],
    preset: str | None = DEFAULTS["preset"],
    network_timeout: float = NETWORK_TIMEOUT,
) -> XGBoostModel:
    """Train an XGBoost ranker with our loss on a Dask cluster (see the module docstring).

    The arguments are those of :func:`ndcglab.distributed.train.train_gbdt_dask` for a
    :class:`~ndcglab.data.RankingDataset` (cut here into ``n_partitions`` blocks of whole
    queries, default one per worker); ``loss`` may name an XGBoost built-in
    (``"xgboost:rank:ndcg"``). Returns an :class:`~ndcglab.gbdt.xgboost_model.XGBoostModel`.
    ``network_timeout`` (seconds, whole seconds rounded up) is XGBoost's timeout of every
    collective operation and of the tracker's wait for the workers: a stalled peer fails the
    run instead of hanging it.
    """
    dxgb = require("xgboost.dask")
    collective = require("xgboost.collective")
    wait = max(1, math.ceil(check_network_timeout(network_timeout)))
    da = require("dask.array")
    check_train_valid(train, None)
    client = _client(client)
    n_workers = max(1, len(client.scheduler_info()["workers"]))
    parts = partition_queries(train.boundaries, n_partitions or n_workers)
    b = train.boundaries
    rows = tuple(int(b[q1]) - int(b[q0]) for q0, q1 in parts)
    qid = np.repeat(np.arange(train.n_queries, dtype=np.int64), train.query_lengths)
    X = da.from_array(train.features, chunks=(rows, train.n_features))
    y = da.from_array(np.asarray(train.labels, dtype=np.float32), chunks=(rows,))
    q = da.from_array(qid, chunks=(rows,))
    dtrain = dxgb.DaskDMatrix(client, X, y, qid=q, missing=np.nan)

    xgb_params = xgboost_params(
        learning_rate=learning_rate, num_leaves=num_leaves, seed=seed, num_threads=0
    )
    # the objective's settings that apply on Dask (no Hutchinson sample count)
    options = {"hessian": hessian, "hess_floor": hess_floor, "constant_lists": constant_lists}
    builtin, obj, loss_label = xgboost_loss(loss, xgb_params, params, seed=seed, **options)
    objective_info = xgboost_objective_info(builtin, obj)  # the client's objective, before training
    coll_cfg = collective.Config(timeout=wait, tracker_timeout=wait)
    out = dxgb.train(
        client,
        xgb_params,
        dtrain,
        num_boost_round=int(num_boost_round),
        obj=obj,
        coll_cfg=coll_cfg,
    )
    booster = out["booster"]
    curve = xgboost_valid_curve(booster, valid, measure, preset) if valid is not None else []
    training = dask_training_record(
        num_boost_round=num_boost_round,
        n_workers=n_workers,
        partition_docs=list(rows),
        rounds_run=int(booster.num_boosted_rounds()),
        curve=curve,
        measure=measure,
        preset=preset,
        engine={"min_data_in_leaf": {"value": int(min_data_in_leaf), "applied": False}},
    )
    return xgboost_model(
        booster,
        builtin,
        obj,
        loss_label,
        xgb_params,
        training["best_iteration"],
        train,
        training,
        seed,
        objective_info=objective_info,
    )


def fit_xgboost_dask(
    train: RankingDataset,
    loss: Any,
    client: Any,
    *,
    valid: RankingDataset | None = None,
    settings: Mapping[str, Any] | None = None,
) -> XGBoostModel:
    """:func:`train_xgboost_dask` with the settings of :func:`ndcglab.gbdt.fit_xgboost` (what
    :func:`ndcglab.gbdt.train.settings_from_config` gives), as
    :func:`ndcglab.distributed.train.fit_gbdt_dask` for LightGBM: a fixed number of rounds, then
    the best round on ``valid``; early stopping, the Hutchinson sample count and the thread count
    do not apply on Dask and are left out; every other XGBoost parameter is passed through."""
    from ..gbdt.xgboost_train import XGBOOST_DEFAULTS, split_xgboost_settings

    named, extra = dask_settings(split_xgboost_settings, XGBOOST_DEFAULTS, settings)
    return train_xgboost_dask(train, loss, client=client, valid=valid, params=extra, **named)
