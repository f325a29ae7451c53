"""Saving and loading trained models: one self-describing file.

A model file is a zip archive (stored, not compressed) with two members:

* ``metadata.json`` — ``format`` (``"ndcglab-model"``), ``format_version``, ``model`` (the
  architecture, :meth:`RankModel.config`), ``n_features``, ``feature_names``, ``normalization``
  (method and fitted statistics), ``loss``, ``training`` (every training option),
  ``training_measure``,
  ``seed``, ``versions`` (ndcglab, torch, numpy, python) and ``created`` (UTC), plus anything the
  caller adds;
* ``weights.pt`` — the model's ``state_dict`` written by ``torch.save`` and read back with
  ``weights_only=True`` (no pickled code is ever executed on load).

Files are written atomically (a temporary file in the same folder, then ``os.replace``), so an
interrupted save never leaves a half-written model behind. :func:`load_model` returns a
:class:`TrainedModel` whose :meth:`~TrainedModel.predict` normalises features the way training did
and refuses data with another feature count (:class:`~ndcglab.errors.ModelMismatchError`).
"""

from __future__ import annotations

import datetime as _dt
import io
import json
import os
import platform
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from .._atomic import write_bytes_atomic
from ..data.dataset import RankingDataset
from ..errors import DataFormatError, ModelMismatchError
from ..training.normalize import Normalizer
from .base import RankModel, build_model, torch

__all__ = ["FORMAT", "FORMAT_VERSION", "TrainedModel", "load_model", "save_model", "versions"]

FORMAT = "ndcglab-model"
FORMAT_VERSION = 1


def versions() -> dict[str, str]:
    """Versions recorded in model files and reports."""
    return {
        "ndcglab": __version__,
        "torch": torch.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


@dataclass
class TrainedModel:
    """A scoring model together with its feature normalisation and metadata.

    :meth:`predict` takes a :class:`~ndcglab.data.RankingDataset`, or a feature matrix (with
    ``group=``/``qid=`` when the normalisation is per query), and returns ``(N,)`` float64 scores.
    """

    model: RankModel
    normalizer: Normalizer = field(default_factory=Normalizer)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def n_features(self) -> int:
        return self.model.n_features

    @property
    def feature_names(self) -> list[str] | None:
        names = self.metadata.get("feature_names")
        return None if names is None else list(names)

    def check(
        self, n_features: int, feature_names: list[str] | None = None, *, what: str = "the data"
    ) -> None:
        """Raise :class:`ModelMismatchError` when the data's features do not match the model's."""
        if int(n_features) != self.n_features:
            source = self.metadata.get("path")
            model_txt = f"model {source}" if source else "the model"
            raise ModelMismatchError(
                f"{model_txt} expects {self.n_features} features (trained on "
                f"{self.metadata.get('training_data', 'its training data')}) but {what} has "
                f"{n_features}. Fix: apply the model to data with the same {self.n_features} "
                "features (same collection and LETOR version), or train a new model on this data"
            )
        mine = self.feature_names
        if mine is not None and feature_names is not None and list(feature_names) != mine:
            diff = next(i for i, (a, b) in enumerate(zip(mine, feature_names)) if a != b)
            raise ModelMismatchError(
                f"feature {diff + 1} is {feature_names[diff]!r} in {what} but {mine[diff]!r} in "
                "the model. Fix: reorder the data's columns to the model's feature_names"
            )

    def transform(self, data: Any, *, group: Any = None, qid: Any = None) -> np.ndarray:
        """The normalised float32 feature matrix the model scores."""
        if isinstance(data, RankingDataset):
            self.check(
                data.n_features, data.feature_names, what=f"dataset {data.source or ''}".strip()
            )
            return self.normalizer.transform(data.features, data.boundaries)
        x = np.asarray(data, dtype=np.float32)
        if x.ndim != 2:
            raise ModelMismatchError(
                f"expected a 2-D (documents, features) matrix, got shape {x.shape}"
            )
        self.check(x.shape[1])
        boundaries = None
        if group is not None or qid is not None:
            ds = RankingDataset.from_arrays(x, np.zeros(len(x)), group=group, qid=qid)
            boundaries = ds.boundaries
        return self.normalizer.transform(x, boundaries)

    def predict(self, data: Any, *, group: Any = None, qid: Any = None) -> np.ndarray:
        """Scores ``(N,)`` float64 for every document of ``data`` (dataset or feature matrix)."""
        return self.model.predict(self.transform(data, group=group, qid=qid))

    def save(self, path: str | os.PathLike[str], **extra: Any) -> Path:
        """Write this model to ``path`` (see :func:`save_model`)."""
        return save_model(path, self.model, {**self.metadata, **extra}, normalizer=self.normalizer)


def save_model(
    path: str | os.PathLike[str],
    model: RankModel | TrainedModel,
    metadata: Mapping[str, Any] | None = None,
    *,
    normalizer: Normalizer | None = None,
) -> Path:
    """Write ``model`` (with ``normalizer`` and ``metadata``) to one file at ``path``, atomically.

    ``metadata`` is merged into the file's JSON; the keys ``format``, ``format_version``,
    ``model``, ``n_features``, ``normalization``, ``versions`` and ``created`` are filled here.
    Returns the path written.
    """
    if isinstance(model, TrainedModel):
        metadata = {**model.metadata, **(metadata or {})}
        normalizer = normalizer or model.normalizer
        model = model.model
    norm = normalizer or Normalizer(n_features=model.n_features)
    meta: dict[str, Any] = {k: v for k, v in (metadata or {}).items() if k != "path"}
    meta.update(
        {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "model": model.config(),
            "n_features": model.n_features,
            "normalization": norm.to_dict(),
            "versions": versions(),
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
    )
    meta.setdefault("feature_names", None)
    weights = io.BytesIO()
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    torch.save(state, weights)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("metadata.json", json.dumps(meta, indent=2, default=_json_default))
        zf.writestr("weights.pt", weights.getvalue())
    return write_bytes_atomic(path, buf.getvalue())


def _json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, tuple | set):
        return list(x)
    return str(x)


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON metadata of a model file, without loading the weights."""
    try:
        with zipfile.ZipFile(path) as zf:
            meta = json.loads(zf.read("metadata.json"))
    except FileNotFoundError:
        raise DataFormatError("model file not found", path=path, fix="check the path") from None
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError) as exc:
        raise DataFormatError(
            f"not an ndcglab model file ({exc})",
            path=path,
            fix="give a file written by `ndcglab train --out` or ndcglab.models.save_model",
        ) from None
    if meta.get("format") != FORMAT:
        raise DataFormatError(
            f"not an ndcglab model file (format {meta.get('format')!r})",
            path=path,
            fix="give a file written by `ndcglab train --out` or ndcglab.models.save_model",
        )
    if int(meta.get("format_version", 0)) > FORMAT_VERSION:
        raise DataFormatError(
            f"model file format version {meta['format_version']} is newer than this ndcglab "
            f"understands ({FORMAT_VERSION})",
            path=path,
            fix="upgrade ndcglab",
        )
    return meta


def load_model(
    path: str | os.PathLike[str], *, map_location: str = "cpu", n_features: int | None = None
) -> TrainedModel:
    """Read a model file written by :func:`save_model`.

    Boosted-trees files (same container, model kind ``gbdt``) are handed to
    :func:`ndcglab.gbdt.load_gbdt`; that object also has ``predict(data)``, ``n_features`` and
    ``metadata``.

    With ``n_features`` given, refuse at once (:class:`ModelMismatchError`) when it differs from
    the model's feature count; :meth:`TrainedModel.predict` checks it on every call anyway.
    """
    meta = read_metadata(path)
    if (meta.get("model") or {}).get("kind") == "gbdt":
        from ..gbdt import load_gbdt

        gbdt_model = load_gbdt(path)
        if n_features is not None and int(n_features) != gbdt_model.n_features:
            raise ModelMismatchError(
                f"{path} expects {gbdt_model.n_features} features but the data has {n_features}. "
                "Fix: apply the model to data with the same features, or retrain"
            )
        return gbdt_model  # type: ignore[return-value]
    with zipfile.ZipFile(path) as zf:
        raw = zf.read("weights.pt")
    state = torch.load(io.BytesIO(raw), map_location=map_location, weights_only=True)
    model = build_model(meta["model"])
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        raise ModelMismatchError(
            f"{path}: the weights do not fit the stored architecture ({exc}). "
            "Fix: re-save the model"
        ) from None
    model.eval()
    meta["path"] = str(path)
    trained = TrainedModel(
        model=model,
        normalizer=Normalizer.from_dict(meta.get("normalization") or {}),
        metadata=meta,
    )
    if n_features is not None:
        trained.check(n_features)
    return trained
