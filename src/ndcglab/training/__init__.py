"""Training: full-batch gradient descent, minibatch Adam and full-batch L-BFGS over registered
losses, model selection on a validation measure, hyper-parameter tuning, atomic checkpoints and
resume.

:func:`train` (see :mod:`ndcglab.training.trainer` for every convention), :class:`TrainConfig`
(every option and its default), :class:`TrainResult`; :func:`tune` (choosing options on a
validation set, :mod:`ndcglab.training.tuning`). Feature normalisation is
:class:`ndcglab.data.Normalizer` (also importable from here). Names load lazily: importing
:mod:`ndcglab.training.config` alone does not import torch.
"""

from __future__ import annotations

from .._compat import lazy_names

__all__ = [
    "DEFAULT_EPOCHS",
    "DEFAULT_GRIDS",
    "DEFAULT_LR",
    "NORMALIZATIONS",
    "Normalizer",
    "TrainConfig",
    "TrainResult",
    "TrainingDivergedError",
    "TuneResult",
    "resolve_device",
    "target_measure",
    "train",
    "tune",
]

_WHERE = {
    "DEFAULT_EPOCHS": "ndcglab.training.config",
    "DEFAULT_LR": "ndcglab.training.config",
    "TrainConfig": "ndcglab.training.config",
    "TrainResult": "ndcglab.training.config",
    "TrainingDivergedError": "ndcglab.training.config",
    "resolve_device": "ndcglab.training.device",
    "train": "ndcglab.training.trainer",
    "tune": "ndcglab.training.tuning",
    "TuneResult": "ndcglab.training.tuning",
    "DEFAULT_GRIDS": "ndcglab.training.tuning",
    "target_measure": "ndcglab.training.tuning",
    "NORMALIZATIONS": "ndcglab.data.normalize",
    "Normalizer": "ndcglab.data.normalize",
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE, __all__)
