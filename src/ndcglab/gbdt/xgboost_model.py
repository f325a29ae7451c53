"""A trained XGBoost ranker: an XGBoost booster plus our metadata, in ndcglab's one model file.

The file is the container of :mod:`ndcglab.models.file_format` (kind ``gbdt``, like LightGBM
models) with two members:

* ``metadata.json`` — as for LightGBM models (``loss``, ``objective``, ``params``,
  ``training``, ``seed`` …), with ``model = {"kind": "gbdt", "engine": "xgboost",
  "num_trees": ..., "best_iteration": ...}`` and the XGBoost version in ``versions``;
* ``xgboost.json`` — XGBoost's own JSON model (``Booster.save_raw("json")``), all trees.

:func:`ndcglab.gbdt.load_gbdt` (and so :func:`ndcglab.models.load_model`,
``ndcglab predict``) hands files whose ``model.engine`` is ``xgboost`` to :func:`load_xgboost`.
Prediction uses the trees up to the best iteration found on the validation set (all trees
without one) and returns XGBoost's raw margin, the sum of the trees (``base_score`` is 0).
Loading and predicting need XGBoost but not torch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._compat import require
from .._versions import package_versions
from ..errors import DataFormatError, ModelMismatchError
from ..models.file_format import (
    file_header,
    model_kind,
    read_member,
    read_model_metadata,
    write_model_file,
)

__all__ = ["ENGINE", "XGBOOST_MEMBER", "XGBoostModel", "load_xgboost", "xgboost_versions"]

#: ``model.engine`` of an XGBoost model file
ENGINE = "xgboost"
#: the member holding XGBoost's JSON model
XGBOOST_MEMBER = "xgboost.json"
_PACKAGES = ("ndcglab", "xgboost", "numpy")
_FIX = "give a file written by XGBoostModel.save / `ndcglab train --model gbdt --engine xgboost`"


def xgboost_versions() -> dict[str, str | None]:
    """The versions an XGBoost model file records: ``python``, ``ndcglab``, ``xgboost``,
    ``numpy``."""
    versions = package_versions(_PACKAGES)
    if versions.get("xgboost") is None:  # installed as the xgboost-cpu distribution
        versions["xgboost"] = package_versions(("xgboost-cpu",)).get("xgboost-cpu")
    return versions


@dataclass
class XGBoostModel:
    """An XGBoost booster trained by :func:`ndcglab.gbdt.xgboost_train.train_xgboost`, with its
    metadata; the counterpart of :class:`~ndcglab.gbdt.GBDTModel` (``predict``, ``save``,
    ``n_features``, ``best_iteration``, ``metadata``).

    :meth:`predict` takes a :class:`~ndcglab.data.RankingDataset` or an ``(N, F)`` feature matrix
    (NaN = missing) and returns ``(N,)`` float64 scores from the trees up to
    :attr:`best_iteration`.
    """

    booster: Any
    metadata: dict[str, Any] = field(default_factory=dict)
    #: the boosting library whose trees this model holds
    engine: str = ENGINE

    @property
    def n_features(self) -> int:
        return int(self.booster.num_features())

    @property
    def feature_names(self) -> list[str] | None:
        names = self.metadata.get("feature_names")
        return None if names is None else list(names)

    @property
    def best_iteration(self) -> int:
        """Number of trees used by :meth:`predict` (all trees when no round was chosen)."""
        best = int(self.metadata.get("model", {}).get("best_iteration") or 0)
        return best if best > 0 else int(self.booster.num_boosted_rounds())

    @property
    def loss(self) -> str | None:
        return self.metadata.get("loss")

    def _matrix(self, data: Any) -> np.ndarray:
        from ..data.dataset import RankingDataset

        if isinstance(data, RankingDataset):
            x, what = data.features, f"dataset {data.source or ''}".strip()
        else:
            x, what = np.asarray(data, dtype=np.float32), "the data"
        if x.ndim != 2:
            raise ModelMismatchError(
                f"expected a 2-D (documents, features) matrix, got shape {x.shape}"
            )
        if x.shape[1] != self.n_features:
            raise ModelMismatchError(
                f"the XGBoost model expects {self.n_features} features (trained on "
                f"{self.metadata.get('training_data', 'its training data')}) but {what} has "
                f"{x.shape[1]}. Fix: apply the model to data with the same features, or retrain"
            )
        return x

    def predict(self, data: Any, *, num_iteration: int | None = None) -> np.ndarray:
        """Scores ``(N,)`` float64 (higher = ranked higher) for every document of ``data``."""
        x = self._matrix(data)
        n_iter = self.best_iteration if num_iteration is None else int(num_iteration)
        out = self.booster.inplace_predict(
            x, iteration_range=(0, n_iter), predict_type="margin", validate_features=False
        )
        return np.asarray(out, dtype=np.float64).ravel()

    def model_bytes(self) -> bytes:
        """XGBoost's JSON model of every tree."""
        return bytes(self.booster.save_raw(raw_format="json"))

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the model (XGBoost JSON + metadata) to one file, atomically."""
        meta = {k: v for k, v in self.metadata.items() if k != "path"}
        model_meta = dict(meta.get("model") or {})
        model_meta.update(
            {
                "kind": "gbdt",
                "engine": ENGINE,
                "num_trees": int(self.booster.num_boosted_rounds()),
                "best_iteration": self.best_iteration,
            }
        )
        header = file_header(())
        meta.update(
            {
                **header,
                "model": model_meta,
                "n_features": self.n_features,
                "versions": {**meta.get("versions", {}), **xgboost_versions()},
            }
        )
        meta.setdefault("feature_names", None)
        return write_model_file(path, meta, {XGBOOST_MEMBER: self.model_bytes()})

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> XGBoostModel:
        """Read a file written by :meth:`save`."""
        return load_xgboost(path)


def load_xgboost(path: str | os.PathLike[str]) -> XGBoostModel:
    """Load an XGBoost model file written by :meth:`XGBoostModel.save`."""
    xgb = require("xgboost")
    p = Path(path)
    meta = read_model_metadata(p)  # checks the format, its version and the shared keys
    model = meta.get("model") or {}
    if model_kind(meta) != "gbdt" or model.get("engine") != ENGINE:
        raise DataFormatError(
            f"not an XGBoost model (kind {model_kind(meta)!r}, engine {model.get('engine')!r})",
            path=p,
            fix="load other models with ndcglab.estimator.load_trained",
        )
    try:
        raw = read_member(p, XGBOOST_MEMBER)
    except KeyError:
        raise DataFormatError(
            f"the XGBoost model file has no {XGBOOST_MEMBER} member", path=p, fix=_FIX
        ) from None
    booster = xgb.Booster()
    try:
        booster.load_model(bytearray(raw))
    except Exception as exc:  # XGBoostError: the JSON does not parse as a model
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataFormatError(
            f"XGBoost cannot read the model ({first[:160]})", path=p, fix=_FIX
        ) from None
    n_meta = meta.get("n_features")
    if n_meta is not None and n_meta != booster.num_features():
        raise DataFormatError(
            f"the metadata says {n_meta} features but the XGBoost model uses "
            f"{booster.num_features()}",
            path=p,
            fix=_FIX + " (the file was edited or damaged)",
        )
    meta["path"] = str(p)
    return XGBoostModel(booster=booster, metadata=meta)
