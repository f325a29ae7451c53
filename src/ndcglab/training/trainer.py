"""Training a ranking model on a :class:`~ndcglab.data.RankingDataset`.

:func:`train` minimises the mean over training queries of a registered loss (one value per list,
:func:`ndcglab.losses.get_loss`) plus an optional L2 penalty ``l2 · ‖w‖²`` on the weights (not the
biases), with one of two optimisers:

* ``"gd"`` — full-batch gradient descent, the protocol of Lu, Xie, Wang, Liu, Huang,
  "Cost-Sensitive Listwise Ranking Approach" (PAKDD 2010) and Ravikumar, Tewari, Yang, "On NDCG
  Consistency of Listwise Ranking Methods" (AISTATS 2011): one step per epoch on the gradient of
  the whole training objective; stops when the objective changes by less than ``tol`` between two
  epochs (``|L_t − L_{t−1}| < tol``), or after ``epochs`` epochs;
* ``"adam"`` — minibatch Adam over batches of ``batch_size`` queries (see
  :mod:`ndcglab.training.batching`); ``tol`` is not used (use ``patience``);
* ``"lbfgs"`` — full-batch L-BFGS with a strong-Wolfe line search (no step size to choose), one
  iteration per epoch, run until the gradient's max-norm is at most ``gtol`` or the objective's
  relative change is at most ``tol`` (:mod:`ndcglab.training.loop`); for convex losses and the
  linear model this reaches the loss's minimiser, the protocol "run each loss to its minimum".
  ``TrainResult.converged`` says whether it got there; use ``dtype="float64"`` for tight
  tolerances.

Model selection: with a validation set, the model is scored after every epoch by
``validation_measure`` under ``preset`` (:func:`ndcglab.measures.evaluate_arrays`, so exactly the
evaluation library's conventions); the best epoch's weights are kept (ties: the earlier epoch) and,
with ``patience``, training stops after that many epochs without improvement. Without a validation
set the last epoch's weights are kept.

Conventions stated once:

* features are normalised by ``normalize`` (``none``, ``query_minmax``, ``zscore``; statistics from
  the training data); NaN features are filled with 0 after normalisation;
* with ``skip_uninformative=True`` (default), training queries whose documents all share one label
  are left out of training (they carry no ranking information; e.g. MQ2008's queries without any
  relevant document) — never out of validation or evaluation;
* RankSVM (``loss="ranksvm(l2=...)"``): mean over lists of the mean pairwise hinge plus
  ``l2 · ‖w‖²`` with ``l2`` read from the loss spec (default 0.001), which is the SVM
  ``½‖w‖² + C Σ_q hinge_q`` with ``C = 1/(2·l2·Q)``; the ``l2`` option overrides it and the ``C``
  option sets ``l2 = 1/(2·C·Q)`` (Q = training queries used);
* randomness — initialisation, batch order, dropout and the loss's ``torch.Generator`` (ListMLE's
  random tie-breaking) — is drawn from seeds derived from ``(seed, epoch)`` inside
  ``torch.random.fork_rng`` (the caller's global RNG is left untouched): two runs with the same seed
  give identical weights, and a run resumed from a checkpoint gives the same weights as an
  uninterrupted one;
* memory does not grow with epochs: the history holds floats, the best weights one copy;
* torch CPU threads: ``num_threads``, else :func:`~ndcglab.training.config.auto_threads` (one
  thread for small data; for large data the idle cores, at most torch's current count;
  docs/training.md, "Threads"); the caller's thread count is restored afterwards.

AdaRank (``model="adarank"`` or ``loss="adarank"``) is trained by its own boosting algorithm
(:class:`ndcglab.models.AdaRank`) with ``validation_measure`` selecting the round.

Where each part lives: the options and their defaults in :mod:`ndcglab.training.config`, the
queries kept and the normalisation in :mod:`ndcglab.training.prepare`, the gradient loop in
:mod:`ndcglab.training.loop`, AdaRank in :mod:`ndcglab.training.adarank_fit`, the run's fingerprint
in :mod:`ndcglab.training.fingerprint` and checkpoints in :mod:`ndcglab.training.checkpoint`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .._compat import torch as _torch
from .._compat import torch_threads
from ..data.dataset import RankingDataset
from ..data.normalize import Normalizer
from ..errors import NdcglabError, SpecError
from .adarank_fit import fit_adarank
from .config import (
    DEFAULT_EPOCHS,
    DEFAULT_LR,
    TrainConfig,
    TrainResult,
    auto_threads,
    available_cores,
    config_with,
)
from .device import resolve_device
from .fingerprint import run_fingerprint
from .kinds import KINDS, get_kind
from .loop import GradientRun
from .prepare import prepare_data

torch = _torch()

__all__ = ["DEFAULT_EPOCHS", "DEFAULT_LR", "TrainConfig", "TrainResult", "resolve_device", "train"]


def train(
    train_data: RankingDataset,
    config: TrainConfig | None = None,
    *,
    validation: RankingDataset | None = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    resume: bool = False,
    progress: bool | None = None,
    callback: Callable[[dict[str, Any]], None] | None = None,
    observer: Callable[[dict[str, Any], Callable[[RankingDataset], Any]], None] | None = None,
    **options: Any,
) -> TrainResult:
    """Train a model on ``train_data``; see the module docstring.

    ``config`` holds the options (:class:`TrainConfig`); keyword ``options`` override its fields.
    ``checkpoint_dir`` writes an atomic checkpoint after every epoch; ``resume=True`` continues
    from it (a run's checkpoint only: options and data are fingerprinted). ``progress``: a tqdm
    bar on stderr (``None`` = only when stderr is a terminal). ``callback(info)`` is called after
    every epoch (after the checkpoint) with that epoch's history entry; ``observer(entry,
    predict)`` after it, with a function scoring a dataset by the current weights (gradient
    models only).
    """
    cfg = config_with(config, **options)
    if not isinstance(train_data, RankingDataset):
        raise SpecError("train_data must be a RankingDataset. Fix: see ndcglab.data.load_dataset")
    if validation is not None and validation.n_features != train_data.n_features:
        raise NdcglabError(
            f"the validation set has {validation.n_features} features but the training set has "
            f"{train_data.n_features}. Fix: use files of the same collection"
        )
    from ..losses import get_loss
    from ..measures.scorer import MeasureScorer

    assert cfg.loss is not None  # TrainConfig.__post_init__ fills in the default loss
    loss = get_loss(cfg.loss)
    device = resolve_device(cfg.device)
    loss_kind = getattr(loss, "kind", "differentiable")
    kind = get_kind(cfg.model)
    if loss_kind not in kind.loss_kinds or kind.route == "trees":
        able = [k.name for k in KINDS.values() if loss_kind in k.loss_kinds and k.torch]
        raise SpecError(
            f"model {cfg.model!r} is not trained with the loss {cfg.loss!r} (a {loss_kind} "
            f"loss) by this function. Fix: model={' or '.join(map(repr, able))}, or another "
            f"loss (model {kind.name!r} trains {' or '.join(kind.loss_kinds)} losses; "
            "ndcglab.training.fit trains every model kind)"
        )
    boosting = loss_kind == "boosting"
    scorer = MeasureScorer(cfg.validation_measure, cfg.preset)
    normalizer = Normalizer.fit(cfg.normalize, train_data.features)
    work = prepare_data(
        train_data, normalizer, validation, skip_uninformative=cfg.skip_uninformative
    )
    meta: dict[str, Any] = {
        "loss": str(getattr(loss, "name", cfg.loss)),
        "training": cfg.to_dict(),
        "seed": cfg.seed,
        "feature_names": train_data.feature_names,
        "training_data": train_data.source or f"{train_data.n_queries} queries",
        "validation_data": None
        if validation is None
        else (validation.source or f"{validation.n_queries} queries"),
        "n_train_queries_used": work.n_queries,
        "training_measure": scorer.name,
    }
    if boosting:
        return fit_adarank(cfg, loss, scorer, work, validation, meta, callback)

    fingerprint = run_fingerprint(cfg, train_data, validation)
    threads = cfg.num_threads
    if threads is None:
        threads = auto_threads(
            train_data.n_docs,
            train_data.n_features,
            available=min(torch.get_num_threads(), available_cores()),
        )
    with torch_threads(int(threads)):
        run = GradientRun(cfg, loss, scorer, work, validation, meta, device)
        return run.fit(
            fingerprint=fingerprint,
            checkpoint_dir=checkpoint_dir,
            resume=resume,
            progress=progress,
            callback=callback,
            observer=observer,
        )
