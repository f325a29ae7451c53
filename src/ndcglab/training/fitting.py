"""The one front door for training: :func:`fit` trains any model kind, :func:`load_trained` reads
any model file back.

:func:`fit` looks the configuration's ``model`` up in :data:`ndcglab.training.kinds.KINDS` and
hands the work to that kind's route:

* ``"gradient"`` and ``"boosting"`` — :func:`ndcglab.training.train` (the gradient loop, or
  AdaRank's boosting; checkpoints and resume for the gradient loop);
* ``"trees"`` — the tree engine named by ``config.trees.engine`` (:mod:`ndcglab.gbdt`), with the
  options mapped once by :func:`ndcglab.gbdt.train.settings_from_config`; given a Dask ``client``,
  the same trees are grown on the cluster (:mod:`ndcglab.distributed`), a fixed number of rounds
  and then the best round on validation, since early stopping does not apply there.

Every route returns a :class:`~ndcglab.training.TrainResult`; for trees ``best_epoch`` is the
chosen round, ``epochs_run`` the rounds grown and ``stop_reason`` ``early_stopping`` or
``rounds``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..data.dataset import RankingDataset
from ..errors import SpecError
from .config import TrainConfig, TrainResult, config_with
from .kinds import KINDS, ModelKind, get_kind

__all__ = ["fit", "load_trained", "tree_result"]


def fit(
    train: RankingDataset,
    config: TrainConfig | None = None,
    *,
    validation: RankingDataset | None = None,
    client: Any = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    resume: bool = False,
    progress: bool | None = None,
    callback: Callable[[dict[str, Any]], None] | None = None,
    **options: Any,
) -> TrainResult:
    """Train the model ``config`` describes on ``train`` (``validation``: model selection).

    ``config`` (default ``TrainConfig()``) with keyword ``options`` replacing its fields.
    ``client``: a ``distributed.Client`` to train on (kinds marked ``distributed`` only).
    ``checkpoint_dir``/``resume``/``progress``/``callback``: as for
    :func:`ndcglab.training.train` (``checkpoint_dir`` and ``resume`` for kinds marked
    ``checkpoints`` only). Unknown options, and options the kind cannot honour, are a
    :class:`~ndcglab.errors.SpecError` before any training.
    """
    cfg = config_with(config, **options)
    kind = get_kind(cfg.model)
    if client is not None and not kind.distributed:
        able = [k.name for k in KINDS.values() if k.distributed]
        raise SpecError(
            f"a Dask client trains {', '.join(able)} only, not model {kind.name!r}. Fix: "
            f"model={able[0]!r}, or train without client"
        )
    if (checkpoint_dir is not None or resume) and not kind.checkpoints:
        raise SpecError(
            f"checkpoint_dir/resume apply to models trained epoch by epoch, not model "
            f"{kind.name!r}. Fix: drop checkpoint_dir and resume (use patience for early stopping)"
        )
    route = _ROUTES[kind.route]
    if int(cfg.ensemble) > 1:
        return _fit_ensemble(
            train,
            cfg,
            kind,
            validation=validation,
            checkpoint_dir=checkpoint_dir,
            resume=resume,
            progress=progress,
            callback=callback,
        )
    return route(
        train,
        cfg,
        kind,
        validation=validation,
        client=client,
        checkpoint_dir=checkpoint_dir,
        resume=resume,
        progress=progress,
        callback=callback,
    )


def _fit_torch(train: RankingDataset, cfg: TrainConfig, kind: ModelKind, **how: Any) -> TrainResult:
    """The gradient loop or AdaRank: :func:`ndcglab.training.train`."""
    from .trainer import train as run

    how.pop("client")
    return run(train, cfg, **how)


def _fit_ensemble(
    train: RankingDataset,
    cfg: TrainConfig,
    kind: ModelKind,
    *,
    validation: RankingDataset | None,
    checkpoint_dir: str | os.PathLike[str] | None,
    **how: Any,
) -> TrainResult:
    """``cfg.ensemble`` models of the gradient loop with the seeds ``seed, seed + 1, ...``
    (checkpoints of member ``i`` in ``checkpoint_dir/seed-<i>``), averaged into one
    :class:`~ndcglab.models.ensemble.SeedEnsemble`. The result's ``history`` holds every
    member's epochs (with a ``member`` key); ``best_epoch``, ``epochs_run`` and ``stop_reason``
    are the first member's; ``best_score`` is the ensemble's validation value."""
    import dataclasses

    from ..measures.scorer import MeasureScorer
    from ..models import TrainedModel
    from ..models.ensemble import SeedEnsemble

    if kind.route != "gradient":
        able = [k.name for k in KINDS.values() if k.route == "gradient"]
        raise SpecError(
            f"ensemble applies to models trained by the gradient loop ({', '.join(able)}), not "
            f"model {kind.name!r}. Fix: ensemble=1"
        )
    k = int(cfg.ensemble)
    results = []
    for i in range(k):
        member_cfg = dataclasses.replace(cfg, seed=int(cfg.seed) + i, ensemble=1)
        where = None if checkpoint_dir is None else os.path.join(checkpoint_dir, f"seed-{i}")
        results.append(
            _fit_torch(
                train,
                member_cfg,
                kind,
                validation=validation,
                client=None,
                checkpoint_dir=where,
                **how,
            )
        )
    first = results[0]
    model = SeedEnsemble([r.trained.model for r in results])
    meta = {
        **first.trained.metadata,
        "training": cfg.to_dict(),
        "seed": cfg.seed,
        "ensemble_seeds": [int(cfg.seed) + i for i in range(k)],
        "ensemble_best_epochs": [r.best_epoch for r in results],
    }
    trained = TrainedModel(model=model, normalizer=first.trained.normalizer, metadata=meta)
    best = None
    if validation is not None:
        scorer = MeasureScorer(cfg.validation_measure, cfg.preset)
        best = scorer.mean(validation.labels, trained.predict(validation), validation.boundaries)
        meta["best_score"] = best
    history = [{**entry, "member": i} for i, r in enumerate(results) for entry in r.history]
    return dataclasses.replace(first, trained=trained, history=history, best_score=best)


def _fit_trees(train: RankingDataset, cfg: TrainConfig, kind: ModelKind, **how: Any) -> TrainResult:
    """Boosted trees, on one machine or on the Dask client."""
    from ..gbdt.train import settings_from_config

    settings = settings_from_config(cfg)
    client = how["client"]
    local, on_dask = _TREE_ENGINES[cfg.trees.engine]
    if client is None:
        model = local()(train, cfg.loss, valid=how["validation"], params=settings)
    else:
        if cfg.patience is not None:
            raise SpecError(
                "patience does not apply on Dask: boosting there trains `rounds` rounds, then "
                "keeps the best round on the validation set. Fix: drop patience (set rounds)"
            )
        model = on_dask()(train, cfg.loss, client, valid=how["validation"], settings=settings)
    return tree_result(model)


def _lightgbm() -> Callable[..., Any]:
    from ..gbdt.train import fit_gbdt

    return fit_gbdt


def _lightgbm_dask() -> Callable[..., Any]:
    from ..distributed.train import fit_gbdt_dask

    return fit_gbdt_dask


def _xgboost() -> Callable[..., Any]:
    from ..gbdt.xgboost_train import fit_xgboost

    return fit_xgboost


def _xgboost_dask() -> Callable[..., Any]:
    from ..distributed.xgboost_train import fit_xgboost_dask

    return fit_xgboost_dask


#: each tree engine of :data:`~ndcglab.training.config.TREE_ENGINES`: (the trainer on one
#: machine, the trainer on a Dask client), each taking the settings of
#: :func:`ndcglab.gbdt.train.settings_from_config` and imported only when used
_TREE_ENGINES: dict[
    str, tuple[Callable[[], Callable[..., Any]], Callable[[], Callable[..., Any]]]
] = {
    "lightgbm": (_lightgbm, _lightgbm_dask),
    "xgboost": (_xgboost, _xgboost_dask),
}


def tree_result(model: Any) -> TrainResult:
    """A :class:`~ndcglab.training.TrainResult` of a boosted-trees model (its metadata's
    ``training`` entry): the chosen round, the rounds grown, why it stopped, the best validation
    value and its measure."""
    tr = model.metadata.get("training") or {}
    rounds = tr.get("rounds_run")
    grown_all = rounds is None or rounds >= int(tr.get("num_boost_round") or 0)
    return TrainResult(
        trained=model,
        history=list(tr.get("history") or []),
        best_epoch=model.best_iteration,
        best_score=tr.get("best_valid"),
        stop_reason="rounds" if grown_all else "early_stopping",
        epochs_run=int(rounds) if rounds is not None else 0,
        measure=tr.get("measure"),
    )


_ROUTES: dict[str, Callable[..., TrainResult]] = {
    "gradient": _fit_torch,
    "boosting": _fit_torch,
    "trees": _fit_trees,
}


def load_trained(
    path: str | os.PathLike[str], *, n_features: int | None = None, map_location: str = "cpu"
) -> Any:
    """Load any model file ndcglab writes, whatever its kind.

    Torch models (kinds marked ``torch`` in :data:`~ndcglab.training.kinds.KINDS`: linear, MLP,
    AdaRank) come back as a :class:`~ndcglab.models.TrainedModel`; boosted trees as a
    :class:`ndcglab.gbdt.GBDTModel` (read by the tree engine's reader, which needs LightGBM,
    imported only then). Each has ``predict(data)``, ``n_features`` and ``metadata``. With
    ``n_features`` given, a model with another feature count is refused at once
    (:class:`~ndcglab.errors.ModelMismatchError`).
    """
    from ..models.file_format import model_kind, read_model_metadata

    kind = KINDS.get(str(model_kind(read_model_metadata(path))))
    if kind is not None and kind.route == "trees":
        from ..gbdt import load_gbdt
        from ..models.file_format import register_model_loader

        register_model_loader(kind.name, load_gbdt)
    from ..models import load_model

    return load_model(path, n_features=n_features, map_location=map_location)
