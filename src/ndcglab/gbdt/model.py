"""A trained boosted-trees ranker: a LightGBM booster plus our metadata, in one file.

The file is the same container as :mod:`ndcglab.models.io` (a stored zip archive) with two members:

* ``metadata.json`` — ``format`` (``"ndcglab-model"``), ``format_version``, ``model``
  (``{"kind": "gbdt", "num_trees": ..., "best_iteration": ...}``), ``n_features``,
  ``feature_names``, ``loss``, ``objective`` (the Hessian used and its settings), ``params`` (every
  LightGBM parameter), ``training`` (rounds, early stopping, the validation measure and preset,
  its history), ``seed``, ``versions``, ``created``;
* ``lightgbm.txt`` — LightGBM's own model string (``Booster.model_to_string``), all trees.

:func:`load_gbdt` also reads a plain LightGBM model text file (no metadata then). Prediction uses
the best iteration found by early stopping unless told otherwise. Loading and predicting need
LightGBM but not torch.
"""

from __future__ import annotations

import datetime as _dt
import io
import json
import os
import platform
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from .._atomic import write_bytes_atomic
from .._compat import lightgbm as _lightgbm
from ..errors import DataFormatError, ModelMismatchError

__all__ = ["FORMAT", "FORMAT_VERSION", "GBDTModel", "load_gbdt"]

FORMAT = "ndcglab-model"
FORMAT_VERSION = 1
_BOOSTER_MEMBER = "lightgbm.txt"


def _versions() -> dict[str, str]:
    lgb = _lightgbm()
    return {
        "ndcglab": __version__,
        "lightgbm": lgb.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


def _json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, tuple | set):
        return list(x)
    return str(x)


@dataclass
class GBDTModel:
    """A LightGBM booster trained by :func:`ndcglab.gbdt.train_gbdt`, with its metadata.

    :meth:`predict` takes a :class:`~ndcglab.data.RankingDataset` or an ``(N, F)`` feature matrix
    (NaN = missing) and returns ``(N,)`` float64 scores, using trees up to :attr:`best_iteration`.
    """

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
                "kind": "gbdt",
                "num_trees": int(self.booster.num_trees()),
                "best_iteration": self.best_iteration,
            }
        )
        meta.update(
            {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "model": model_meta,
                "n_features": self.n_features,
                "versions": {**meta.get("versions", {}), **_versions()},
                "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            }
        )
        meta.setdefault("feature_names", None)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
            zf.writestr("metadata.json", json.dumps(meta, indent=2, default=_json_default))
            zf.writestr(_BOOSTER_MEMBER, self.model_string())
        return write_bytes_atomic(path, buf.getvalue())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> GBDTModel:
        """Read a file written by :meth:`save` (or a plain LightGBM model text file)."""
        return load_gbdt(path)


def load_gbdt(path: str | os.PathLike[str]) -> GBDTModel:
    """Load a boosted-trees model file (see the module docstring)."""
    lgb = _lightgbm()
    p = Path(path)
    if not p.exists():
        raise DataFormatError("model file not found", path=p, fix="check the path")
    if zipfile.is_zipfile(p):
        try:
            with zipfile.ZipFile(p) as zf:
                meta = json.loads(zf.read("metadata.json"))
                text = zf.read(_BOOSTER_MEMBER).decode("utf-8")
        except (KeyError, json.JSONDecodeError, zipfile.BadZipFile) as exc:
            raise DataFormatError(
                f"not an ndcglab boosted-trees model file ({exc})",
                path=p,
                fix="give a file written by GBDTModel.save / `ndcglab train --model gbdt --out`",
            ) from None
        if meta.get("format") != FORMAT or (meta.get("model") or {}).get("kind") != "gbdt":
            raise DataFormatError(
                f"not a boosted-trees model (format {meta.get('format')!r}, kind "
                f"{(meta.get('model') or {}).get('kind')!r})",
                path=p,
                fix="load neural/linear models with ndcglab.models.load_model",
            )
        if int(meta.get("format_version", 0)) > FORMAT_VERSION:
            raise DataFormatError(
                f"model file format version {meta['format_version']} is newer than this ndcglab "
                f"understands ({FORMAT_VERSION})",
                path=p,
                fix="upgrade ndcglab",
            )
    else:
        text = p.read_text(encoding="utf-8", errors="replace")
        if not text.startswith("tree"):
            raise DataFormatError(
                "neither an ndcglab model file nor a LightGBM model text file",
                path=p,
                fix="give a file written by GBDTModel.save or lightgbm.Booster.save_model",
            )
        meta = {"model": {"kind": "gbdt"}}
    booster = lgb.Booster(model_str=text)
    meta["path"] = str(p)
    return GBDTModel(booster=booster, metadata=meta)
