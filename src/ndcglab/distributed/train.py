"""Boosted trees with our objectives on a Dask cluster (LightGBM data-parallel learning).

LightGBM's Dask estimator (:class:`lightgbm.DaskLGBMRanker`) runs one LightGBM process per Dask
worker in *data-parallel* mode: each worker holds some rows, and the workers exchange feature
histograms of gradients to grow one shared tree per round. It accepts a Python callable
objective: the estimator's parameters (the objective included) are pickled to every worker,
where LightGBM's scikit-learn wrapper calls it with the worker's **local** labels, scores and
query ``group``. A listwise loss is a sum over queries, so the local gradient of every document
is its exact global gradient **provided no query is split across workers**. We guarantee that
by cutting the data only between queries (:func:`partition_queries`) and passing ``group``
chunked exactly like the rows; the objective
(:meth:`ndcglab.gbdt.LossObjective.sklearn_objective`) then binds its padding index once per
worker.

**Choosing the number of rounds.** Early stopping is not used on Dask (each worker would judge a
different validation slice). Instead, with ``valid=``, a fixed number of rounds
(``num_boost_round``) is trained, then the validation set is cut into blocks of whole queries
(one per worker) and evaluated in **one distributed pass**: each worker adds the trees one at a
time (``booster.predict(start_iteration=t-1, num_iteration=1)``, raw scores) and records the
per-query values of ``measure`` after every round ``t``; the client averages them as
:func:`ndcglab.measures.evaluate` does and keeps the best round (the first on ties). The chosen
round is the model's ``best_iteration`` (predictions use the trees up to it) and is saved in the
metadata (``training.best_iteration``, ``training.valid_curve``, ``training.round_selection``).

**A peer that stops answering.** The workers of one training wait on each other every round; a
worker that dies or stalls would leave the others waiting (LightGBM gives up after two hours,
XGBoost never). ``network_timeout`` (seconds, default :data:`NETWORK_TIMEOUT`) bounds every such
wait: LightGBM's ``time_out`` (whole minutes, rounded up) and XGBoost's collective and tracker
timeouts. A run that reaches it fails with the engine's error instead of hanging. A ``time_out``
given in ``params`` wins for LightGBM.

Evaluating files larger than memory on Dask is :mod:`ndcglab.distributed.evaluate`. Dask is
imported when these functions run (the ``distributed`` extra); they use the active
``distributed.Client`` if there is one (pass ``client=`` to choose).
"""

from __future__ import annotations

import itertools
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._compat import broadcast, require, scatter
from ..data import RankingDataset
from ..errors import DataFormatError, SpecError
from ..gbdt.common import ROUND_SELECTION, best_round, curve_record, model_metadata
from ..gbdt.model import GBDTModel, model_versions
from ..gbdt.train import DEFAULT_LOSS, DEFAULTS, lightgbm_label, lightgbm_objective, make_objective
from .cluster import check_timeout
from .evaluate import _take

__all__ = [
    "DASK_SETTINGS",
    "NETWORK_TIMEOUT",
    "fit_gbdt_dask",
    "partition_queries",
    "select_rounds_dask",
    "train_gbdt_dask",
]

#: boosting rounds of the Dask trainers when none are given (fewer than
#: :data:`~ndcglab.gbdt.train.DEFAULTS`' for one machine: a cluster run is usually a first look)
DASK_ROUNDS = 100
#: seconds the workers of a Dask training wait for a peer before the run fails (see the module
#: docstring, "A peer that stops answering")
NETWORK_TIMEOUT = 1800.0

PathLike = str | os.PathLike[str]


# ============================================================================ partitioning
def partition_queries(
    boundaries: Sequence[int] | np.ndarray, n_parts: int
) -> list[tuple[int, int]]:
    """Cut queries into ``n_parts`` contiguous blocks of whole queries with about equal documents.

    Returns ``[(q_start, q_stop), ...]`` (query index ranges; empty blocks are dropped). A query is
    never split, so a block may exceed ``N / n_parts`` documents by up to one query.
    """
    b = np.asarray(boundaries, dtype=np.int64)
    nq = len(b) - 1
    if n_parts < 1:
        raise SpecError(f"n_parts must be at least 1, got {n_parts}")
    targets = b[-1] * np.arange(1, n_parts) / n_parts
    cuts = np.searchsorted(b[1:], targets, side="left") + 1  # query index after which to cut
    edges = np.unique(np.concatenate([[0], np.clip(cuts, 0, nq), [nq]]))
    return [(int(a), int(c)) for a, c in itertools.pairwise(edges) if c > a]


def _client(client: Any) -> Any:
    if client is not None:
        return client
    distributed = require("distributed")
    try:
        return distributed.get_client()
    except ValueError as exc:
        raise SpecError(
            "no Dask client. Fix: start one, e.g. distributed.Client(distributed.LocalCluster("
            "n_workers=2, threads_per_worker=1)), or pass client="
        ) from exc


# ============================================================================ training
def check_network_timeout(seconds: float) -> float:
    """``seconds`` as a float if finite and positive, else an error with the fix."""
    return check_timeout(seconds, "network_timeout", f"network_timeout={NETWORK_TIMEOUT:g}")


def lightgbm_time_out(seconds: float) -> int:
    """LightGBM's ``time_out`` (whole minutes) for a wait of at most about ``seconds``: the
    minutes rounded up, at least one."""
    return max(1, math.ceil(check_network_timeout(seconds) / 60))


def _read_part(path: str, n_features: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from ..data import read_letor

    ds = read_letor(path, n_features=n_features)
    return ds.features, ds.labels, ds.query_lengths


def train_gbdt_dask(
    train: RankingDataset | Sequence[PathLike],
    loss: Any = DEFAULT_LOSS,
    *,
    client: Any = None,
    n_partitions: int | None = None,
    n_features: int | None = None,
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
) -> GBDTModel:
    """Train boosted trees with our loss on a Dask cluster (LightGBM data-parallel learning).

    ``train`` is a :class:`~ndcglab.data.RankingDataset` (cut here into ``n_partitions`` blocks of
    whole queries, default one per worker, and sent to the workers) or a list of LETOR files, one
    partition each, read **on the workers** with :func:`ndcglab.data.read_letor` (each file must
    hold whole queries; give ``n_features`` if files may differ in their largest feature index).
    ``loss`` as in :func:`ndcglab.gbdt.train_gbdt` (``"lightgbm:lambdarank"`` for LightGBM's own).
    Returns a :class:`~ndcglab.gbdt.GBDTModel` (the booster gathered from the workers).
    With ``valid``, the round is chosen on it by ``measure`` under ``preset`` (see the module
    docstring, "Choosing the number of rounds"). ``network_timeout`` bounds, in seconds, how
    long a worker waits for a stalled peer (module docstring, "A peer that stops answering").
    """
    lgb = require("lightgbm")
    time_out = lightgbm_time_out(network_timeout)
    da = require("dask.array")
    dask = require("dask")
    client = _client(client)
    n_workers = max(1, len(client.scheduler_info()["workers"]))

    if isinstance(train, RankingDataset):
        parts = partition_queries(train.boundaries, n_partitions or n_workers)
        b = train.boundaries
        xs, ys, gs = [], [], []
        for q0, q1 in parts:
            lo, hi = int(b[q0]), int(b[q1])
            xs.append(train.features[lo:hi])
            ys.append(train.labels[lo:hi])
            gs.append(train.query_lengths[q0:q1])
        futures = scatter(
            client,
            list(zip(xs, ys, gs)),
            lambda blocks: [dask.delayed(block, traverse=False) for block in blocks],
        )
        shapes = [(len(y), len(g)) for y, g in zip(ys, gs)]
        n_feat = train.n_features
        feature_names = list(train.feature_names) if train.feature_names else None
        source = train.source
    else:
        paths = [str(p) for p in train]
        if not paths:
            raise SpecError("no training files given")
        futures = client.map(_read_part, paths, n_features=n_features, pure=False)
        meta = client.gather(client.map(lambda t: (len(t[1]), len(t[2]), t[0].shape[1]), futures))
        widths = {m[2] for m in meta}
        if len(widths) != 1:
            raise DataFormatError(
                f"the partitions have different feature counts {sorted(widths)}",
                fix="pass n_features= (the number of features of the collection)",
            )
        shapes = [(m[0], m[1]) for m in meta]
        n_feat, feature_names, source = widths.pop(), None, ",".join(paths)

    def column(i: int, shape_of: Any, dtype: Any) -> Any:
        return da.concatenate(
            [
                da.from_delayed(dask.delayed(_take)(f, i), shape=shape_of(sh), dtype=dtype)
                for f, sh in zip(futures, shapes)
            ]
        )

    X = column(0, lambda sh: (sh[0], n_feat), np.float32)
    y = column(1, lambda sh: (sh[0],), np.float64)
    g = column(2, lambda sh: (sh[1],), np.int64)

    objective: Any = lightgbm_objective(loss)
    if objective is not None:
        loss_label, objective_info = lightgbm_label(objective), {"hessian": "lightgbm built-in"}
    else:
        obj = make_objective(
            loss, hessian=hessian, hess_floor=hess_floor, constant_lists=constant_lists, seed=seed
        )
        objective = obj.sklearn_objective()
        loss_label, objective_info = obj.name, obj.describe()
    extra = {
        "verbosity": -1,
        "deterministic": True,
        "feature_pre_filter": False,
        "tree_learner": "data",
        "time_out": time_out,
        **dict(params or {}),
    }
    # LightGBM's Dask layer sets num_threads to each worker's Dask threads itself
    extra = {k: v for k, v in extra.items() if k not in ("num_threads", "n_jobs", "nthread")}
    model = lgb.DaskLGBMRanker(
        client=client,
        objective=objective,
        n_estimators=int(num_boost_round),
        learning_rate=float(learning_rate),
        num_leaves=int(num_leaves),
        min_child_samples=int(min_data_in_leaf),
        random_state=int(seed),
        **extra,
    )
    with warnings.catch_warnings():
        # LightGBM's Dask layer sets the threads per worker itself and says so about n_jobs
        warnings.filterwarnings("ignore", message="Parameter n_jobs will be ignored")
        model.fit(X, y, group=g)
    booster = model.to_local().booster_
    n_trees = int(booster.current_iteration())
    curve: list[float] = []
    if valid is not None:
        curve = select_rounds_dask(booster, valid, measure, preset, client=client)
    best = best_round(curve)
    params_out = {
        "learning_rate": learning_rate,
        "num_leaves": num_leaves,
        "min_data_in_leaf": min_data_in_leaf,
        "seed": seed,
        "objective": objective if isinstance(objective, str) else "custom",
        **extra,
    }
    meta_out = model_metadata(
        loss=loss_label,
        objective=objective_info,
        params=params_out,
        model={"kind": GBDTModel.kind, "best_iteration": best},
        feature_names=feature_names,
        training_data=source,
        training=dask_training_record(
            num_boost_round=num_boost_round,
            n_workers=n_workers,
            partition_docs=[s[0] for s in shapes],
            rounds_run=n_trees,
            curve=curve,
            measure=measure,
            preset=preset,
        ),
        seed=seed,
        versions=model_versions(),
    )
    return GBDTModel(booster=booster, metadata=meta_out)


def dask_training_record(
    *,
    num_boost_round: int,
    n_workers: int,
    partition_docs: list[int],
    rounds_run: int,
    curve: list[float],
    measure: str,
    preset: str | None,
    engine: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``training`` metadata of a model trained on Dask (either engine): the fixed rounds,
    the partitions, the round chosen on the validation ``curve`` (none without one); the
    ``engine`` entries (XGBoost's ``min_data_in_leaf`` note) follow ``best_iteration``."""
    best = best_round(curve)
    return {
        "num_boost_round": int(num_boost_round),
        "distributed": True,
        "partitions": len(partition_docs),
        "workers": n_workers,
        "partition_docs": list(partition_docs),
        "rounds_run": int(rounds_run),
        "best_iteration": best,
        **dict(engine or {}),
        **curve_record(curve, measure, preset, watched=bool(curve)),
        "round_selection": ROUND_SELECTION if curve else None,
    }


def _valid_values(
    booster: Any,
    features: np.ndarray,
    labels: np.ndarray,
    boundaries: np.ndarray,
    measure: str,
    preset: str | None,
) -> np.ndarray:
    """``(T, Q)`` per-query values (NaN where the convention skips a query) after each round."""
    from ..measures import evaluate_arrays

    n_trees = int(booster.current_iteration())
    score = np.zeros(len(labels), dtype=np.float64)
    out = np.empty((n_trees, len(boundaries) - 1), dtype=np.float64)
    for t in range(n_trees):
        score += booster.predict(features, start_iteration=t, num_iteration=1, raw_score=True)
        res = evaluate_arrays(labels, score, boundaries, [measure], preset=preset)
        out[t] = np.asarray(next(iter(res.per_query.values())), dtype=np.float64)
    return out


def select_rounds_dask(
    booster: Any,
    valid: RankingDataset,
    measure: str = DEFAULTS["measure"],
    preset: str | None = DEFAULTS["preset"],
    *,
    client: Any = None,
) -> list[float]:
    """The validation curve of ``booster``: the mean of ``measure`` (under ``preset``) on
    ``valid`` after every round ``t = 1..T``, computed in one distributed pass over blocks of
    whole queries (one per worker). Equal (to float rounding) to evaluating
    ``booster.predict(X, num_iteration=t)`` on the whole set for every ``t``."""
    from ..measures import MeasureScorer, parse_measure
    from ..measures.evaluate import mean_of

    MeasureScorer(measure, preset)  # validate before any work
    client = _client(client)
    n_workers = max(1, len(client.scheduler_info()["workers"]))
    b = valid.boundaries
    bst = broadcast(client, booster)
    futures = []
    for q0, q1 in partition_queries(b, n_workers):
        lo, hi = int(b[q0]), int(b[q1])
        futures.append(
            client.submit(
                _valid_values,
                bst,
                valid.features[lo:hi],
                np.asarray(valid.labels[lo:hi], dtype=np.float64),
                np.asarray(b[q0 : q1 + 1] - lo, dtype=np.int64),
                measure,
                preset,
                pure=False,
            )
        )
    per_query = np.concatenate(client.gather(futures), axis=1)
    m = parse_measure(measure)
    return [float(mean_of(m, row)) for row in per_query]


#: the settings of :func:`ndcglab.gbdt.fit_gbdt` that :func:`train_gbdt_dask` takes by name
DASK_SETTINGS = (
    "num_boost_round",
    "learning_rate",
    "num_leaves",
    "min_data_in_leaf",
    "hessian",
    "hess_floor",
    "constant_lists",
    "seed",
    "measure",
    "preset",
)


def dask_settings(
    split: Callable[[Mapping[str, Any]], tuple[dict[str, Any], dict[str, Any]]],
    defaults: Mapping[str, Any],
    settings: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(named, extra)``: of an engine's ``defaults`` overridden by ``settings`` and cut by its
    ``split`` (ours, the engine's), those of :data:`DASK_SETTINGS` (passed to the Dask trainer by
    name) and the engine's own parameters (passed through)."""
    ours, extra = split({**defaults, **dict(settings or {})})
    return {k: ours[k] for k in DASK_SETTINGS if k in ours}, extra


class _IgnoredParameterNote:
    """A logging filter dropping LightGBM's Dask note "Parameter X will be ignored."."""

    def filter(self, record: Any) -> bool:
        return not str(record.getMessage()).endswith("will be ignored.")


def fit_gbdt_dask(
    train: RankingDataset,
    loss: Any,
    client: Any,
    *,
    valid: RankingDataset | None = None,
    settings: Mapping[str, Any] | None = None,
) -> GBDTModel:
    """:func:`train_gbdt_dask` with the settings of :func:`ndcglab.gbdt.fit_gbdt` (what
    :func:`ndcglab.gbdt.train.settings_from_config` gives): a fixed number of rounds
    (``num_boost_round``), then the best round on ``valid``. Early stopping, the Hutchinson
    sample count and LightGBM's thread count do not apply on Dask and are left out; every other
    LightGBM parameter is passed through."""
    import logging

    from ..gbdt.train import split_settings

    # LightGBM's Dask layer prints its notes ("Finding random open ports ...") to stdout through
    # its logger: send them to Python logging (warnings reach stderr), keeping stdout the result;
    # its note that it sets the threads per worker itself ("Parameter n_jobs will be ignored") is
    # dropped: ndcglab says so in its own documentation
    logger = logging.getLogger("lightgbm")
    if not any(isinstance(f, _IgnoredParameterNote) for f in logger.filters):
        logger.addFilter(_IgnoredParameterNote())
    require("lightgbm").register_logger(logger)
    named, extra = dask_settings(split_settings, DEFAULTS, settings)
    return train_gbdt_dask(train, loss, client=client, valid=valid, params=extra, **named)
