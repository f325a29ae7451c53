"""Choosing training hyper-parameters on a validation set: :func:`tune`.

The protocol of Lu, Xie, Wang, Liu, Huang, "Cost-Sensitive Listwise Ranking Approach" (PAKDD 2010):
train by gradient descent with a learning rate η until the objective changes by less than a
tolerance ε, and choose η and ε on the validation set. :func:`tune` does this for any optimiser and
any :class:`~ndcglab.training.TrainConfig` fields:

* ``grid`` maps option names to the values tried (default :data:`DEFAULT_GRIDS` of the optimiser);
  every combination is one trial, in the order of the grid (first option outermost);
* the **target measure** is the measure the method optimises (:func:`target_measure`): NDCG@k for a
  loss written with a cut-off ``@k`` (CS-ListMLE@k, LambdaRank@k, …), otherwise the configuration's
  ``validation_measure``; measured under the configuration's ``preset``;
* ``select_epoch=False`` (the paper's protocol): each trial trains to its own stopping rule without
  looking at the validation set, and its final weights are scored once on the validation target;
  ``select_epoch=True``: each trial keeps its best epoch on the validation target and is scored by
  it;
* the chosen trial is the one with the highest validation target (ties: the first in grid order); a
  trial whose training diverges is recorded as failed and never chosen; if every trial fails the
  first failure is raised;
* the chosen configuration is trained once more and returned (the same weights as its trial: the
  training is deterministic), with ``metadata["tuning"]`` holding the grid, the target, every trial
  and the chosen values.

For ``optimizer="gd"`` with ``select_epoch=False``, the trials that differ only in ``tol`` and
``epochs`` are run as one training with the smallest tolerance and the largest cap: full-batch
gradient descent follows the same path whatever ε and the cap are, and the run with a larger ε (or
a smaller cap) is the same run stopped earlier — at the first epoch where the objective changed by
less than that ε, or at the cap — so its weights are scored there. The result is the same as
separate runs (tested), at the cost of one.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..data.dataset import RankingDataset
from ..errors import SpecError
from .config import TrainConfig, TrainingDivergedError, TrainResult, config_with

__all__ = ["DEFAULT_GRIDS", "TuneResult", "format_grid", "parse_grid", "target_measure", "tune"]

#: the grid tried by ``tune`` (and ``--tune``) when none is given, per optimiser
DEFAULT_GRIDS: dict[str, dict[str, tuple[float, ...]]] = {
    "gd": {"lr": (0.001, 0.01, 0.1), "epochs": (30, 100, 300)},
    "adam": {"lr": (1e-4, 1e-3, 1e-2)},
    "lbfgs": {"l2": (0.0, 1e-4, 1e-2)},
}

#: options a grid may vary, with the type of their values
_TUNABLE: dict[str, type] = {
    "lr": float,
    "tol": float,
    "gtol": float,
    "l2": float,
    "C": float,
    "epochs": int,
    "batch_size": int,
    "dropout": float,
    "patience": int,
    "rounds": int,
}


@dataclass
class TuneResult:
    """What :func:`tune` returns.

    ``result`` is the chosen configuration's :class:`~ndcglab.training.TrainResult` (its
    ``best_score``/``measure`` are the validation target of the chosen trial);
    ``chosen`` the chosen grid values; ``trials`` one dict per grid point (``params``, ``score``
    — None for a failed trial —, ``stop_reason``, ``epochs_run``, ``converged``, ``seconds``,
    ``error``); ``target`` the measure's printed name; ``select_epoch`` the rule used.
    """

    result: TrainResult
    chosen: dict[str, Any]
    trials: list[dict[str, Any]] = field(default_factory=list)
    target: str = ""
    select_epoch: bool = False
    grid: dict[str, list[Any]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The tuning record stored in the model's metadata and printed by ``--format json``."""
        return {
            "target": self.target,
            "select_epoch": self.select_epoch,
            "grid": self.grid,
            "chosen": self.chosen,
            "trials": self.trials,
            "rule": "highest validation target; ties: first grid point; failed trials never chosen",
        }


def target_measure(loss: str, default: str) -> str:
    """The measure a loss targets: ``ndcg@k`` for a loss spec with a cut-off ``@k`` (e.g.
    ``cs_listmle@1`` → ``ndcg@1``), otherwise ``default`` (the validation measure)."""
    from ..losses import get_loss

    cutoff = getattr(get_loss(loss), "cutoff", None)
    return f"ndcg@{cutoff}" if cutoff is not None else default


def parse_grid(text: str) -> dict[str, list[Any]]:
    """A grid from ``"lr=0.01,0.1;tol=1e-3,1e-5"`` (options separated by ``;``, values by ``,``).

    Option names are :class:`TrainConfig` fields that may be tuned (``lr``, ``tol``, ``gtol``,
    ``l2``, ``C``, ``epochs``, ``batch_size``, ``dropout``, ``patience``, ``rounds``).
    """
    grid: dict[str, list[Any]] = {}
    for part in (p.strip() for p in str(text).split(";") if p.strip()):
        name, eq, values = part.partition("=")
        name = name.strip()
        if not eq or not values.strip():
            raise SpecError(
                f"cannot read the grid part {part!r}. Fix: write NAME=V1,V2 (e.g. "
                "'lr=0.01,0.1;tol=1e-3,1e-5')"
            )
        kind = _TUNABLE.get(name)
        if kind is None:
            raise SpecError(
                f"{name!r} cannot be tuned. Fix: use one of {', '.join(_TUNABLE)} (e.g. "
                "'lr=0.01,0.1;tol=1e-3,1e-5')"
            )
        out: list[Any] = []
        for tok in (t.strip() for t in values.split(",")):
            try:
                out.append(kind(float(tok)) if kind is int else kind(tok))
            except ValueError:
                raise SpecError(
                    f"grid value {tok!r} of {name!r} is not a number. Fix: e.g. '{name}=0.01,0.1'"
                ) from None
        if name in grid:
            raise SpecError(f"{name!r} appears twice in the grid. Fix: give each option once")
        grid[name] = out
    if not grid:
        raise SpecError("the grid is empty. Fix: write NAME=V1,V2, e.g. 'lr=0.01,0.1'")
    return grid


def format_grid(grid: Mapping[str, Sequence[Any]]) -> str:
    """The grid as ``--tune-grid`` writes it (``"lr=0.01,0.1;tol=0.001"``)."""
    return ";".join(f"{k}={','.join(f'{v:g}' for v in vs)}" for k, vs in grid.items())


def _check_grid(grid: Mapping[str, Sequence[Any]], config: TrainConfig) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for name, values in grid.items():
        if name not in _TUNABLE:
            raise SpecError(f"{name!r} cannot be tuned. Fix: use one of {', '.join(_TUNABLE)}")
        vals = list(values)
        if not vals:
            raise SpecError(f"the grid gives no value for {name!r}. Fix: give at least one")
        for v in vals:  # validate each value by building a configuration with it
            config_with(config, **{name: v})
        out[name] = vals
    return out


def _score(scorer: Any, data: RankingDataset, scores: Any) -> float:
    return float(scorer.mean(data.labels, scores, data.boundaries))


def tune(
    train_data: RankingDataset,
    config: TrainConfig | None = None,
    *,
    validation: RankingDataset,
    grid: Mapping[str, Sequence[Any]] | None = None,
    target: str | None = None,
    select_epoch: bool = False,
    progress: bool | None = None,
    log: Any = None,
    **options: Any,
) -> TuneResult:
    """Choose hyper-parameters on ``validation`` and train with them (see the module docstring).

    ``config``/``options`` as for :func:`~ndcglab.training.train`; ``log(message)`` receives one
    line per trial.
    """
    from ..measures.scorer import MeasureScorer
    from .trainer import train

    cfg = config_with(config, **options)
    if validation is None:
        raise SpecError(
            "tuning chooses hyper-parameters on a validation set and none was given. Fix: give "
            "one (a fold folder's vali file, or validation=)"
        ).naming("validation")
    from ..losses import get_loss
    from .kinds import get_kind

    assert cfg.loss is not None
    loss_kind = getattr(get_loss(cfg.loss), "kind", "differentiable")
    if not get_kind(cfg.model).tunable or loss_kind != "differentiable":
        raise SpecError(
            f"model {cfg.model!r} with loss {cfg.loss!r} has no gradient hyper-parameters to "
            "tune (its rounds are chosen on validation already). Fix: train it without tuning, "
            "or tune a linear or MLP model with a differentiable loss"
        )
    the_grid = _check_grid(grid if grid is not None else DEFAULT_GRIDS[cfg.optimizer], cfg)
    assert cfg.loss is not None
    target_name = target or target_measure(cfg.loss, cfg.validation_measure)
    scorer = MeasureScorer(target_name, cfg.preset)
    names = list(the_grid)
    points = [dict(zip(names, combo)) for combo in itertools.product(*the_grid.values())]
    trials: list[dict[str, Any] | None] = [None] * len(points)

    stop_keys = {"tol", "epochs"} & set(the_grid)
    shared = cfg.optimizer == "gd" and not select_epoch and cfg.patience is None and stop_keys
    if shared:
        groups: dict[tuple[Any, ...], list[int]] = {}
        for i, pt in enumerate(points):
            key = tuple((k, v) for k, v in pt.items() if k not in stop_keys)
            groups.setdefault(key, []).append(i)
        for idx in groups.values():
            _run_stop_group(
                train, train_data, validation, cfg, points, idx, scorer, trials, progress
            )
    else:
        for i, pt in enumerate(points):
            trials[i] = _run_one(
                train, train_data, validation, cfg, pt, scorer, target_name, select_epoch, progress
            )
    done = [t for t in trials if t is not None]
    for t in done:
        if log is not None:
            params = ", ".join(f"{k}={v:g}" for k, v in t["params"].items())
            what = "failed" if t["score"] is None else f"{target_name} {t['score']:.4f}"
            log(f"tune {params}: {what} ({t['stop_reason']}, {t['epochs_run']} epochs)")
    ok = [i for i, t in enumerate(done) if t["score"] is not None]
    if not ok:
        raise TrainingDivergedError(
            "every grid point diverged while tuning: "
            + "; ".join(f"{t['params']}: {t['error']}" for t in done),
            epoch=int(done[0].get("epoch") or 0),
            value=float("nan"),
        )
    best = max(ok, key=lambda i: (done[i]["score"], -i))
    chosen = dict(points[best])
    final_cfg = config_with(cfg, **chosen)
    if select_epoch:
        final_cfg = config_with(final_cfg, validation_measure=target_name)
        result = train(train_data, final_cfg, validation=validation, progress=progress)
    else:
        result = train(train_data, final_cfg, progress=progress)
        result.best_score = _score(scorer, validation, result.trained.predict(validation))
        result.measure = scorer.name
    out = TuneResult(
        result=result,
        chosen=chosen,
        trials=done,
        target=scorer.name,
        select_epoch=select_epoch,
        grid={k: list(v) for k, v in the_grid.items()},
    )
    result.trained.metadata["tuning"] = out.to_dict()
    result.trained.metadata["training"] = final_cfg.to_dict()
    return out


def _trial(params: Mapping[str, Any], **fields: Any) -> dict[str, Any]:
    base = {
        "params": dict(params),
        "score": None,
        "stop_reason": "",
        "epochs_run": 0,
        "converged": None,
        "seconds": 0.0,
        "error": None,
    }
    base.update(fields)
    return base


def _run_one(
    train: Any,
    data: RankingDataset,
    validation: RankingDataset,
    cfg: TrainConfig,
    point: Mapping[str, Any],
    scorer: Any,
    target: str,
    select_epoch: bool,
    progress: bool | None,
) -> dict[str, Any]:
    t0 = time.perf_counter()
    trial_cfg = config_with(cfg, **point)
    try:
        if select_epoch:
            trial_cfg = config_with(trial_cfg, validation_measure=target)
            res = train(data, trial_cfg, validation=validation, progress=progress)
            score = res.best_score
        else:
            res = train(data, trial_cfg, progress=progress)
            score = _score(scorer, validation, res.trained.predict(validation))
    except TrainingDivergedError as exc:
        return _trial(
            point,
            stop_reason="diverged",
            epochs_run=exc.epoch,
            epoch=exc.epoch,
            error=str(exc),
            seconds=time.perf_counter() - t0,
        )
    return _trial(
        point,
        score=None if score is None else float(score),
        stop_reason=res.stop_reason,
        epochs_run=res.epochs_run,
        best_epoch=res.best_epoch,
        converged=res.converged,
        seconds=time.perf_counter() - t0,
    )


def _run_stop_group(
    train: Any,
    data: RankingDataset,
    validation: RankingDataset,
    cfg: TrainConfig,
    points: Sequence[Mapping[str, Any]],
    idx: Sequence[int],
    scorer: Any,
    trials: list[dict[str, Any] | None],
    progress: bool | None,
) -> None:
    """The trials ``idx`` (same options but ``tol`` and ``epochs``) as one gradient-descent run
    with the smallest tolerance and the largest epoch cap; each trial is scored where its own
    stopping rule fires: the first epoch whose objective changed by less than its ``tol``, or its
    ``epochs``-th epoch."""
    t0 = time.perf_counter()
    tols = {i: float(points[i].get("tol", cfg.tol)) for i in idx}
    caps = {i: int(points[i].get("epochs", cfg.n_epochs)) for i in idx}
    run_over = {"tol": min(tols.values()), "epochs": max(caps.values())}
    pending = set(idx)
    prev: list[float] = []

    def observer(entry: dict[str, Any], predict: Any) -> None:
        loss, epoch = float(entry["loss"]), int(entry["epoch"])
        change = abs(loss - prev[0]) if prev else None
        fired = []
        for i in sorted(pending):
            if change is not None and change < tols[i]:
                fired.append((i, "converged"))
            elif epoch >= caps[i]:
                fired.append((i, "max_epochs"))
        if fired:
            score = _score(scorer, validation, predict(validation))
            for i, why in fired:
                pending.discard(i)
                trials[i] = _trial(
                    points[i],
                    score=score,
                    stop_reason=why,
                    epochs_run=epoch,
                    best_epoch=epoch,
                    converged=why == "converged",
                    seconds=time.perf_counter() - t0,
                )
        prev[:] = [loss]

    run_cfg = config_with(cfg, **{**points[idx[0]], **run_over})
    try:
        train(data, run_cfg, progress=progress, observer=observer)
    except TrainingDivergedError as exc:
        for i in idx:
            if trials[i] is None:
                trials[i] = _trial(
                    points[i],
                    stop_reason="diverged",
                    epochs_run=exc.epoch,
                    epoch=exc.epoch,
                    error=str(exc),
                    seconds=time.perf_counter() - t0,
                )
        return
    if pending:  # pragma: no cover - the run's own stopping point fires every trial
        raise AssertionError(f"tuning trials {sorted(pending)} were never scored")
