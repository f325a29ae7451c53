"""Ranking models (torch): :class:`LinearModel`, :class:`MLPModel`, :class:`AdaRank`.

Every model is a :class:`RankModel` — a ``torch.nn.Module`` scoring a ``(..., F)`` feature tensor
into ``(...)`` scores — with ``config()`` (rebuilds the architecture) and ``predict(features)``
(NumPy in, float64 out). :func:`save_model` / :func:`load_model` write and read one self-describing
file (weights, normalisation, loss, training options, versions); see :mod:`ndcglab.models.io` and,
for the container every model family shares, :mod:`ndcglab.models.file_format`.

Names load lazily: the models themselves import torch, :mod:`ndcglab.models.file_format` does not
(boosted trees use it without torch).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "MODEL_KINDS",
    "AdaRank",
    "LinearModel",
    "MLPModel",
    "RankModel",
    "TrainedModel",
    "build_model",
    "load_model",
    "make_model",
    "read_metadata",
    "register_model_loader",
    "save_model",
]

_WHERE = {
    "AdaRank": "adarank",
    "MODEL_KINDS": "base",
    "LinearModel": "base",
    "MLPModel": "base",
    "RankModel": "base",
    "build_model": "base",
    "make_model": "base",
    "TrainedModel": "io",
    "load_model": "io",
    "read_metadata": "io",
    "save_model": "io",
    "register_model_loader": "file_format",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
