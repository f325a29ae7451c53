"""Ranking models (torch): :class:`LinearModel`, :class:`MLPModel`, :class:`AdaRank`,
:class:`AttentionModel` (self-attention over a query's documents; :func:`read_allrank` reads
allRank's models into it) and :class:`SeedEnsemble` (the mean of models of several seeds).

Every model is a :class:`RankModel` — a ``torch.nn.Module`` scoring a ``(..., F)`` feature tensor
into ``(...)`` scores — with ``config()`` (rebuilds the architecture) and ``predict(features)``
(NumPy in, float64 out). :func:`save_model` / :func:`load_model` write and read one self-describing
file (weights, normalisation, loss, training options, versions); see :mod:`ndcglab.models.io` and,
for the container every model family shares, :mod:`ndcglab.models.file_format`.
:func:`export_model` writes a linear or MLP ranker as ONNX or TorchScript that takes raw features
(:mod:`ndcglab.models.export`).

Names load lazily: the models themselves import torch, :mod:`ndcglab.models.file_format` does not
(boosted trees use it without torch).
"""

from __future__ import annotations

from .._compat import lazy_names

__all__ = [
    "MODEL_KINDS",
    "AdaRank",
    "AttentionModel",
    "LinearModel",
    "MLPModel",
    "RankModel",
    "SeedEnsemble",
    "TrainedModel",
    "build_model",
    "export_model",
    "load_model",
    "make_model",
    "read_allrank",
    "read_metadata",
    "register_model_loader",
    "save_model",
]

_WHERE = {
    "AdaRank": "ndcglab.models.adarank",
    "AttentionModel": "ndcglab.models.attention",
    "SeedEnsemble": "ndcglab.models.ensemble",
    "read_allrank": "ndcglab.models.allrank",
    "MODEL_KINDS": "ndcglab.models.io",
    "LinearModel": "ndcglab.models.base",
    "MLPModel": "ndcglab.models.base",
    "RankModel": "ndcglab.models.base",
    "build_model": "ndcglab.models.base",
    "make_model": "ndcglab.models.base",
    "export_model": "ndcglab.models.export",
    "TrainedModel": "ndcglab.models.io",
    "load_model": "ndcglab.models.io",
    "read_metadata": "ndcglab.models.io",
    "save_model": "ndcglab.models.io",
    "register_model_loader": "ndcglab.models.file_format",
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE, __all__)
