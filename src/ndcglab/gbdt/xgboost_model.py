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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .._compat import require
from .._versions import package_versions
from ..errors import DataFormatError
from ..models.file_format import model_kind, read_model_metadata
from ._boosted import BoostedTreesModel, check_feature_count, exception_line, read_engine_member
from .model_text import check_checksum, check_xgboost_json

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
class XGBoostModel(BoostedTreesModel):
    """An XGBoost booster trained by :func:`ndcglab.gbdt.xgboost_train.train_xgboost`, with its
    metadata; the counterpart of :class:`~ndcglab.gbdt.GBDTModel`, sharing its base
    :class:`~ndcglab.gbdt._boosted.BoostedTreesModel` (``predict``, ``save``, ``n_features``,
    ``best_iteration``, ``metadata``).

    :meth:`predict` takes a :class:`~ndcglab.data.RankingDataset` or an ``(N, F)`` feature matrix
    (NaN = missing) and returns ``(N,)`` float64 scores from the trees up to
    :attr:`best_iteration`.
    """

    described: ClassVar[str] = "XGBoost"

    #: the boosting library whose trees this model holds
    engine: str = ENGINE

    def _booster_features(self) -> int:
        return int(self.booster.num_features())

    def _booster_rounds(self) -> int:
        return int(self.booster.num_boosted_rounds())

    def _booster_trees(self) -> int:
        return int(self.booster.num_boosted_rounds())

    def _raw_predict(self, x: np.ndarray, n_iter: int) -> np.ndarray:
        out = self.booster.inplace_predict(
            x, iteration_range=(0, n_iter), predict_type="margin", validate_features=False
        )
        return np.asarray(out, dtype=np.float64).ravel()

    def _members(self) -> dict[str, bytes]:
        return {XGBOOST_MEMBER: self.model_bytes()}

    def _model_keys(self) -> dict[str, Any]:
        return {"kind": self.kind, "engine": ENGINE}

    def _file_versions(self, header: dict[str, Any]) -> dict[str, Any]:
        return xgboost_versions()

    def model_bytes(self) -> bytes:
        """XGBoost's JSON model of every tree."""
        return bytes(self.booster.save_raw(raw_format="json"))

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
    raw = read_engine_member(p, XGBOOST_MEMBER, XGBoostModel.described, _FIX)
    damaged_fix = "copy the model file again from where it was saved, or retrain it"
    check_checksum(meta, XGBOOST_MEMBER, raw, p, damaged_fix)
    check_xgboost_json(raw, p, member=XGBOOST_MEMBER, fix=damaged_fix)
    booster = xgb.Booster()
    try:
        booster.load_model(bytearray(raw))
    except Exception as exc:  # XGBoostError: the JSON does not parse as a model
        raise DataFormatError(
            f"XGBoost cannot read the model ({exception_line(exc)})", path=p, fix=_FIX
        ) from None
    check_feature_count(
        meta, booster.num_features(), p, "XGBoost", _FIX + " (the file was edited or damaged)"
    )
    meta["path"] = str(p)
    return XGBoostModel(booster=booster, metadata=meta)
