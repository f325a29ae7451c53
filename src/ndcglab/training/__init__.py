"""Training: full-batch gradient descent and minibatch Adam over registered losses, model
selection on a validation measure, atomic checkpoints and resume.

:func:`train` (see :mod:`ndcglab.training.trainer` for every convention), :class:`TrainConfig`
(every option and its default), :class:`TrainResult`. Feature normalisation is
:class:`ndcglab.data.Normalizer` (also importable from here). Names load lazily: importing
:mod:`ndcglab.training.config` alone does not import torch.
"""

from __future__ import annotations

from .._compat import lazy_names

__all__ = [
    "DEFAULT_EPOCHS",
    "DEFAULT_LR",
    "NORMALIZATIONS",
    "Normalizer",
    "TrainConfig",
    "TrainResult",
    "TrainingDivergedError",
    "resolve_device",
    "train",
]

_WHERE = {
    "DEFAULT_EPOCHS": "ndcglab.training.config",
    "DEFAULT_LR": "ndcglab.training.config",
    "TrainConfig": "ndcglab.training.config",
    "TrainResult": "ndcglab.training.config",
    "TrainingDivergedError": "ndcglab.training.config",
    "resolve_device": "ndcglab.training.device",
    "train": "ndcglab.training.trainer",
    "NORMALIZATIONS": "ndcglab.data.normalize",
    "Normalizer": "ndcglab.data.normalize",
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE, __all__)
