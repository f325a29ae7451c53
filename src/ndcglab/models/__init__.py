"""Ranking models (torch): :class:`LinearModel`, :class:`MLPModel`, :class:`AdaRank`; one file.

Every model is a :class:`RankModel` — a ``torch.nn.Module`` scoring a ``(..., F)`` feature tensor
into ``(...)`` scores — with ``config()`` (rebuilds the architecture) and ``predict(features)``
(NumPy in, float64 out). :func:`save_model` / :func:`load_model` write and read one self-describing
file (weights, normalisation, loss, training options, versions); see :mod:`ndcglab.models.io`.
Importing this package imports torch.
"""

from .adarank import AdaRank
from .base import MODEL_KINDS, LinearModel, MLPModel, RankModel, build_model, make_model
from .io import TrainedModel, load_model, read_metadata, save_model

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
    "save_model",
]
