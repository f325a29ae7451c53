"""Training: full-batch gradient descent and minibatch Adam over registered losses, model
selection on a validation measure, feature normalisation, atomic checkpoints and resume.

:func:`train` (see :mod:`ndcglab.training.trainer` for every convention), :class:`TrainConfig`,
:class:`TrainResult`, :class:`Normalizer` (:mod:`ndcglab.training.normalize`). Names load lazily:
importing :mod:`ndcglab.training.normalize` alone does not import torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "DEFAULT_LR",
    "NORMALIZATIONS",
    "Normalizer",
    "TrainConfig",
    "TrainResult",
    "resolve_device",
    "train",
]

_WHERE = {
    "DEFAULT_LR": "trainer",
    "TrainConfig": "trainer",
    "TrainResult": "trainer",
    "resolve_device": "trainer",
    "train": "trainer",
    "NORMALIZATIONS": "normalize",
    "Normalizer": "normalize",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        mod = importlib.import_module(f"{__name__}.{_WHERE[name]}")
        return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
