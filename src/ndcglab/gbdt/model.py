"""A trained boosted-trees ranker: a LightGBM booster plus our metadata, in one file.

The file is the one model-file container of :mod:`ndcglab.models.file_format` (a stored zip
archive, written and read by its functions) with two members:

* ``metadata.json`` — ``format`` (``"ndcglab-model"``), ``format_version``, ``model``
  (``{"kind": "gbdt", "num_trees": ..., "best_iteration": ..., "sha256": {member: digest}}``:
  the digest is checked on loading, :mod:`ndcglab.gbdt.model_text`), ``n_features``,
  ``feature_names``, ``loss``, ``objective`` (the Hessian used and its settings), ``params`` (every
  LightGBM parameter), ``training`` (rounds, early stopping, the validation measure and preset,
  its history), ``seed``, ``versions``, ``created``;
* ``lightgbm.txt`` — LightGBM's own model string (``Booster.model_to_string``), all trees.

:func:`load_gbdt` also reads a plain LightGBM model text file (no metadata then). Prediction uses
the best iteration found by early stopping unless told otherwise. Loading and predicting need
LightGBM but not torch. The model text is checked before LightGBM reads it
(:mod:`ndcglab.gbdt.model_text`: checksum, structure, tree count, end marker).
Importing this module registers :func:`load_gbdt` as the loader of
``gbdt`` files with :func:`ndcglab.models.load_model`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from .._compat import lightgbm as _lightgbm
from .._versions import package_versions
from ..errors import DataFormatError
from ..models.file_format import (
    FORMAT,
    FORMAT_VERSION,
    model_kind,
    read_model_metadata,
    register_model_loader,
)
from ._boosted import BoostedTreesModel, check_feature_count, exception_line, read_engine_member
from .model_text import check_checksum, check_lightgbm_text

__all__ = ["FORMAT", "FORMAT_VERSION", "GBDTModel", "load_gbdt", "model_versions"]

_BOOSTER_MEMBER = "lightgbm.txt"
#: the packages whose versions a boosted-trees model file records (besides Python)
_PACKAGES = ("ndcglab", "lightgbm", "numpy")
_FIX = "give a file written by GBDTModel.save / `ndcglab train --model gbdt --out`"
_DAMAGED_FIX = "copy the model file again from where it was saved, or retrain it"


def model_versions() -> dict[str, str | None]:
    """The versions a boosted-trees model file records: ``python``, ``ndcglab``, ``lightgbm``,
    ``numpy`` (from :func:`ndcglab._versions.package_versions`)."""
    return package_versions(_PACKAGES)


@dataclass
class GBDTModel(BoostedTreesModel):
    """A LightGBM booster trained by :func:`ndcglab.gbdt.train_gbdt`, with its metadata.

    :meth:`predict` takes a :class:`~ndcglab.data.RankingDataset` or an ``(N, F)`` feature matrix
    (NaN = missing) and returns ``(N,)`` float64 scores, using trees up to :attr:`best_iteration`
    (the shared behaviour of :class:`~ndcglab.gbdt._boosted.BoostedTreesModel`).
    """

    header_packages: ClassVar[tuple[str, ...]] = _PACKAGES

    def _booster_features(self) -> int:
        return int(self.booster.num_feature())

    def _booster_rounds(self) -> int:
        return int(self.booster.current_iteration())

    def _booster_trees(self) -> int:
        return int(self.booster.num_trees())

    def _raw_predict(self, x: np.ndarray, n_iter: int) -> np.ndarray:
        return np.asarray(self.booster.predict(x, num_iteration=n_iter), dtype=np.float64)

    def _members(self) -> dict[str, bytes]:
        return {_BOOSTER_MEMBER: self.model_string().encode("utf-8")}

    def model_string(self) -> str:
        """LightGBM's text form of every tree."""
        return str(self.booster.model_to_string(num_iteration=-1))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> GBDTModel:
        """Read a file written by :meth:`save` (or a plain LightGBM model text file)."""
        return load_gbdt(path)


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    """Send file descriptor 2 to ``os.devnull`` for the duration (LightGBM's C++ log lines);
    the error is reported by the exception LightGBM raises."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def load_gbdt(path: str | os.PathLike[str]) -> GBDTModel:
    """Load a boosted-trees model file (see the module docstring); a file of trees grown by
    XGBoost (``model.engine == "xgboost"``) is read by
    :func:`ndcglab.gbdt.xgboost_model.load_xgboost`."""
    p = Path(path)
    if not p.exists():
        raise DataFormatError("model file not found", path=p, fix="check the path")
    if zipfile.is_zipfile(p):
        meta = read_model_metadata(p)  # checks the format and its version
        if (meta.get("model") or {}).get("engine") == "xgboost":  # trees grown by XGBoost
            from .xgboost_model import load_xgboost

            return load_xgboost(p)  # type: ignore[return-value]
        if model_kind(meta) != GBDTModel.kind:
            raise DataFormatError(
                f"not a boosted-trees model (kind {model_kind(meta)!r})",
                path=p,
                fix="load neural/linear models with ndcglab.models.load_model",
            )
        raw = read_engine_member(p, _BOOSTER_MEMBER, GBDTModel.described, _FIX)
        check_checksum(meta, _BOOSTER_MEMBER, raw, p, _DAMAGED_FIX)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise DataFormatError(
                f"{_BOOSTER_MEMBER} in the model file is not text (damaged file)", path=p, fix=_FIX
            ) from None
    else:
        text = p.read_text(encoding="utf-8", errors="replace")
        if not text.startswith("tree"):
            raise DataFormatError(
                "neither an ndcglab model file nor a LightGBM model text file",
                path=p,
                fix="give a file written by GBDTModel.save or lightgbm.Booster.save_model",
            )
        meta = {"model": {"kind": GBDTModel.kind}}
    num_trees = (meta.get("model") or {}).get("num_trees")
    check_lightgbm_text(  # LightGBM aborts or crashes on damaged text: check it first
        text, p, member=_BOOSTER_MEMBER, fix=_DAMAGED_FIX, num_trees=num_trees
    )
    lgb = _lightgbm()
    try:
        with _stderr_silenced():  # LightGBM prints "[LightGBM] [Fatal] ..." before raising
            booster = lgb.Booster(model_str=text)
    except Exception as exc:  # LightGBMError and friends: the model text does not parse
        raise DataFormatError(
            f"LightGBM cannot read the model text ({exception_line(exc)})",
            path=p,
            fix="give a file written by GBDTModel.save or lightgbm.Booster.save_model (copy it "
            "again if it was damaged)",
        ) from None
    check_feature_count(
        meta,
        booster.num_feature(),
        p,
        "LightGBM",
        "re-save the model with GBDTModel.save (the file was edited or damaged)",
    )
    meta["path"] = str(p)
    return GBDTModel(booster=booster, metadata=meta)


register_model_loader(GBDTModel.kind, load_gbdt)
