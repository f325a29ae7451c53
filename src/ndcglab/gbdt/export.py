"""Boosted-trees models as the boosting library's own model files, readable without ndcglab.

A tree ensemble trained with one of our objectives is an ordinary ensemble: the objective only
chose the gradients the trees were fitted to. Its trees score documents on their own, so the
model is written in the engine's own format, which the engine loads and predicts with, without
ndcglab or torch installed:

* **LightGBM** (:func:`export_lightgbm`): LightGBM's model text
  (``Booster.model_to_string``) holding the trees up to the model's best iteration (the trees
  ``ndcglab predict`` uses), so ``lightgbm.Booster(model_file=PATH).predict(X)`` gives the
  scores of ``ndcglab predict``. A booster trained with a custom objective has no
  ``objective=`` line and no initial score (LightGBM starts a custom objective from 0), so
  plain LightGBM returns the raw sum of the trees, which is the score; LightGBM's built-in
  ``lambdarank`` / ``rank_xendcg`` keep their line and also predict raw scores.
* **XGBoost** (:func:`export_xgboost`): XGBoost's JSON model (``Booster.save_raw("json")``) of
  the trees up to the best iteration, for ``xgboost.Booster(model_file=PATH)``; ndcglab trains
  XGBoost with ``base_score = 0``, which the file records, so ``predict(..., output_margin=True)``
  (or plain ``predict``: the objective's transform is the identity) gives the scores.

Both files are written atomically. :func:`export_boosted` picks the writer by the model's engine.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .._atomic import write_bytes_atomic
from ..errors import SpecError

__all__ = [
    "BOOSTED_EXPORT_FORMATS",
    "export_boosted",
    "export_lightgbm",
    "export_xgboost",
    "model_engine",
]

#: the formats :func:`export_boosted` writes
BOOSTED_EXPORT_FORMATS = ("lightgbm", "xgboost")


def _load(model: Any) -> Any:
    if isinstance(model, str | os.PathLike):
        from .model import load_gbdt

        return load_gbdt(model)
    return model


def model_engine(model: Any) -> str:
    """``"lightgbm"`` or ``"xgboost"``: the library whose trees ``model`` holds."""
    return str(getattr(model, "engine", "lightgbm"))


def _refuse(engine: str, wanted: str) -> SpecError:
    return SpecError(
        f"the model's trees were grown by {engine}, so they export as {engine}'s own model, "
        f"not {wanted}. Fix: use --format {engine}"
    )


def export_lightgbm(model: Any, out: str | os.PathLike[str]) -> Path:
    """Write a LightGBM-engine model (a :class:`~ndcglab.gbdt.GBDTModel` or its file) as
    LightGBM's own model text at ``out``, with the trees up to its best iteration; returns the
    path written (see the module docstring)."""
    m = _load(model)
    if model_engine(m) != "lightgbm":
        raise _refuse(model_engine(m), "lightgbm")
    text = str(m.booster.model_to_string(num_iteration=int(m.best_iteration)))
    return write_bytes_atomic(out, text.encode("utf-8"))


def export_xgboost(model: Any, out: str | os.PathLike[str]) -> Path:
    """Write an XGBoost-engine model (:class:`~ndcglab.gbdt.xgboost_model.XGBoostModel` or its
    file) as XGBoost's JSON model at ``out``, the trees up to its best iteration."""
    m = _load(model)
    if model_engine(m) != "xgboost":
        raise _refuse(model_engine(m), "xgboost")
    booster = m.booster[: int(m.best_iteration)]
    return write_bytes_atomic(out, bytes(booster.save_raw(raw_format="json")))


def export_boosted(model: Any, out: str | os.PathLike[str], format: str | None = None) -> Path:
    """Write a boosted-trees model in its engine's own format (``format``: ``"lightgbm"`` or
    ``"xgboost"``; ``None``: the model's engine). Returns the path written."""
    m = _load(model)
    fmt = model_engine(m) if format is None else str(format).lower()
    if fmt == "lightgbm":
        return export_lightgbm(m, out)
    if fmt == "xgboost":
        return export_xgboost(m, out)
    raise SpecError(
        f"a boosted-trees model exports as {model_engine(m)} model text, not {format!r}. Fix: "
        f"use --format {model_engine(m)} (onnx and torchscript are for linear and mlp models)"
    )
