"""A trained boosted-trees ranker: a LightGBM booster plus our metadata, in one file.

The file is the one model-file container of :mod:`ndcglab.models.file_format` (a stored zip
archive, written and read by its functions) with two members:

* ``metadata.json`` — ``format`` (``"ndcglab-model"``), ``format_version``, ``model``
  (``{"kind": "gbdt", "num_trees": ..., "best_iteration": ...}``), ``n_features``,
  ``feature_names``, ``loss``, ``objective`` (the Hessian used and its settings), ``params`` (every
  LightGBM parameter), ``training`` (rounds, early stopping, the validation measure and preset,
  its history), ``seed``, ``versions``, ``created``;
* ``lightgbm.txt`` — LightGBM's own model string (``Booster.model_to_string``), all trees.

:func:`load_gbdt` also reads a plain LightGBM model text file (no metadata then). Prediction uses
the best iteration found by early stopping unless told otherwise. Loading and predicting need
LightGBM but not torch. Importing this module registers :func:`load_gbdt` as the loader of
``gbdt`` files with :func:`ndcglab.models.load_model`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from .._compat import lightgbm as _lightgbm
from .._versions import package_versions
from ..errors import DataFormatError, ModelMismatchError
from ..models.file_format import (
    FORMAT,
    FORMAT_VERSION,
    file_header,
    model_kind,
    read_member,
    read_model_metadata,
    register_model_loader,
    write_model_file,
)

__all__ = ["FORMAT", "FORMAT_VERSION", "GBDTModel", "load_gbdt", "model_versions"]

_BOOSTER_MEMBER = "lightgbm.txt"
#: the packages whose versions a boosted-trees model file records (besides Python)
_PACKAGES = ("ndcglab", "lightgbm", "numpy")


def model_versions() -> dict[str, str | None]:
    """The versions a boosted-trees model file records: ``python``, ``ndcglab``, ``lightgbm``,
    ``numpy`` (from :func:`ndcglab._versions.package_versions`)."""
    return package_versions(_PACKAGES)


@dataclass
class GBDTModel:
    """A LightGBM booster trained by :func:`ndcglab.gbdt.train_gbdt`, with its metadata.

    :meth:`predict` takes a :class:`~ndcglab.data.RankingDataset` or an ``(N, F)`` feature matrix
    (NaN = missing) and returns ``(N,)`` float64 scores, using trees up to :attr:`best_iteration`.
    """

    #: the model kind written in the file (``model.kind``), read back by :func:`load_gbdt`
    kind: ClassVar[str] = "gbdt"

    booster: Any
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def n_features(self) -> int:
        return int(self.booster.num_feature())

    @property
    def feature_names(self) -> list[str] | None:
        names = self.metadata.get("feature_names")
        return None if names is None else list(names)

    @property
    def best_iteration(self) -> int:
        """Number of trees used by :meth:`predict` (all trees when no early stopping ran)."""
        best = int(self.metadata.get("model", {}).get("best_iteration") or 0)
        return best if best > 0 else int(self.booster.current_iteration())

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
                f"the boosted-trees model expects {self.n_features} features (trained on "
                f"{self.metadata.get('training_data', 'its training data')}) but {what} has "
                f"{x.shape[1]}. Fix: apply the model to data with the same features, or retrain"
            )
        return x

    def predict(self, data: Any, *, num_iteration: int | None = None) -> np.ndarray:
        """Scores ``(N,)`` float64 (higher = ranked higher) for every document of ``data``."""
        x = self._matrix(data)
        n_iter = self.best_iteration if num_iteration is None else int(num_iteration)
        return np.asarray(self.booster.predict(x, num_iteration=n_iter), dtype=np.float64)

    def model_string(self) -> str:
        """LightGBM's text form of every tree."""
        return str(self.booster.model_to_string(num_iteration=-1))

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the model (LightGBM model string + metadata JSON) to one file, atomically."""
        meta = {k: v for k, v in self.metadata.items() if k != "path"}
        model_meta = dict(meta.get("model") or {})
        model_meta.update(
            {
                "kind": self.kind,
                "num_trees": int(self.booster.num_trees()),
                "best_iteration": self.best_iteration,
            }
        )
        header = file_header(_PACKAGES)
        meta.update(
            {
                **header,
                "model": model_meta,
                "n_features": self.n_features,
                "versions": {**meta.get("versions", {}), **header["versions"]},
            }
        )
        meta.setdefault("feature_names", None)
        return write_model_file(path, meta, {_BOOSTER_MEMBER: self.model_string().encode("utf-8")})

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
        try:
            text = read_member(p, _BOOSTER_MEMBER).decode("utf-8")
        except UnicodeDecodeError:
            raise DataFormatError(
                f"{_BOOSTER_MEMBER} in the model file is not text (damaged file)",
                path=p,
                fix="give a file written by GBDTModel.save / `ndcglab train --model gbdt --out`",
            ) from None
        except KeyError:
            raise DataFormatError(
                f"the boosted-trees model file has no {_BOOSTER_MEMBER} member",
                path=p,
                fix="give a file written by GBDTModel.save / `ndcglab train --model gbdt --out`",
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
    lgb = _lightgbm()
    try:
        with _stderr_silenced():  # LightGBM prints "[LightGBM] [Fatal] ..." before raising
            booster = lgb.Booster(model_str=text)
    except Exception as exc:  # LightGBMError and friends: the model text does not parse
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataFormatError(
            f"LightGBM cannot read the model text ({first[:160]})",
            path=p,
            fix="give a file written by GBDTModel.save or lightgbm.Booster.save_model (copy it "
            "again if it was damaged)",
        ) from None
    n_meta = meta.get("n_features")
    if n_meta is not None and n_meta != booster.num_feature():
        raise DataFormatError(
            f"the metadata says {n_meta} features but the LightGBM model uses "
            f"{booster.num_feature()}",
            path=p,
            fix="re-save the model with GBDTModel.save (the file was edited or damaged)",
        )
    meta["path"] = str(p)
    return GBDTModel(booster=booster, metadata=meta)


register_model_loader(GBDTModel.kind, load_gbdt)
