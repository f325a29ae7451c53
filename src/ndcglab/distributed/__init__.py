"""Dask in one place: reaching a cluster, evaluating files larger than memory, growing boosted
trees on the cluster.

* :mod:`ndcglab.distributed.cluster` — the address grammar (``tcp://host:8786``, ``local:N``),
  :func:`~ndcglab.distributed.cluster.dask_client` (a checked connection, the whole handshake
  within the timeout) and its progress bar;
* :mod:`ndcglab.distributed.evaluate` — :func:`evaluate_letor_dask` (a LETOR file with a score
  file) and :func:`evaluate_trec_dask` (a TREC run and qrels), block by block, the numbers of the
  single-process path;
* :mod:`ndcglab.distributed.train` — :func:`train_gbdt_dask` (LightGBM's data-parallel learning
  with our objectives, queries never split across workers, the round chosen on validation in one
  distributed pass); :func:`ndcglab.training.fit` reaches it when given a client;
* :mod:`ndcglab.distributed.xgboost_train` — :func:`train_xgboost_dask`, the same through
  ``xgboost.dask`` for the XGBoost engine.

Dask is imported when these functions run (the ``distributed`` extra), never on import.
"""

from __future__ import annotations

from .._compat import lazy_names

__all__ = [
    "dask_client",
    "evaluate_letor_dask",
    "evaluate_trec_dask",
    "parse_address",
    "partition_queries",
    "train_gbdt_dask",
    "train_xgboost_dask",
]

_WHERE = {
    "dask_client": "ndcglab.distributed.cluster",
    "parse_address": "ndcglab.distributed.cluster",
    "evaluate_letor_dask": "ndcglab.distributed.evaluate",
    "evaluate_trec_dask": "ndcglab.distributed.evaluate",
    "partition_queries": "ndcglab.distributed.train",
    "train_gbdt_dask": "ndcglab.distributed.train",
    "train_xgboost_dask": "ndcglab.distributed.xgboost_train",
}

__getattr__, __dir__ = lazy_names(__name__, _WHERE, __all__)
