"""Training: the one front door for every model kind, cross-validation, full-batch gradient
descent, minibatch Adam and full-batch L-BFGS over registered losses, model selection on a
validation measure, hyper-parameter tuning, atomic checkpoints and resume.

:func:`fit` trains any model kind (linear, MLP, AdaRank, boosted trees, on one machine or a Dask
client) by the table :data:`KINDS` (:mod:`ndcglab.training.kinds`); :func:`cross_validate` runs
folds → fit → evaluate (:mod:`ndcglab.training.crossval`); :func:`load_trained` reads any model
file. :func:`train` is the gradient loop and AdaRank (see :mod:`ndcglab.training.trainer` for
every convention), :class:`TrainConfig` (every option and its default; :class:`TreeOptions` for
the trees'), :class:`TrainResult`; :func:`tune` (choosing options on a validation set,
:mod:`ndcglab.training.tuning`). Feature normalisation is
:class:`ndcglab.data.Normalizer` (also importable from here). Names load lazily: importing
:mod:`ndcglab.training.config` alone does not import torch.
"""

from __future__ import annotations

from .._compat import lazy_names

__all__ = [
    "DEFAULT_EPOCHS",
    "DEFAULT_GRIDS",
    "DEFAULT_LR",
    "KINDS",
    "MODEL_KINDS",
    "NORMALIZATIONS",
    "TREE_DEFAULTS",
    "CVResult",
    "FoldResult",
    "ModelKind",
    "Normalizer",
    "TrainConfig",
    "TrainResult",
    "TrainingDivergedError",
    "TreeOptions",
    "TuneResult",
    "config_from_options",
    "cross_validate",
    "fit",
    "load_trained",
    "resolve_device",
    "target_measure",
    "train",
    "tune",
]

_WHERE = {
    "KINDS": "ndcglab.training.kinds",
    "MODEL_KINDS": "ndcglab.training.kinds",
    "ModelKind": "ndcglab.training.kinds",
    "TREE_DEFAULTS": "ndcglab.training.config",
    "TreeOptions": "ndcglab.training.config",
    "config_from_options": "ndcglab.training.config",
    "fit": "ndcglab.training.fitting",
    "load_trained": "ndcglab.training.fitting",
    "cross_validate": "ndcglab.training.crossval",
    "CVResult": "ndcglab.training.crossval",
    "FoldResult": "ndcglab.training.crossval",
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
