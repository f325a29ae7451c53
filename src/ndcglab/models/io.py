"""Saving and loading trained models: one self-describing file.

The file is the container of :mod:`ndcglab.models.file_format` (a stored zip archive; the
``format``, ``format_version``, ``versions`` and ``created`` keys are written there) with:

* ``metadata.json`` — also ``model`` (the architecture, :meth:`RankModel.config`), ``n_features``,
  ``feature_names``, ``normalization`` (method and fitted statistics), ``loss``, ``training`` (every
  training option), ``training_measure``, ``seed``, plus anything the caller adds; ``versions``
  records Python, ndcglab, torch and numpy;
* ``weights.pt`` — the model's ``state_dict`` written by ``torch.save`` and read back with
  ``weights_only=True`` (no pickled code is ever executed on load).

:func:`load_model` returns a :class:`TrainedModel` whose :meth:`~TrainedModel.predict` normalises
features the way training did and refuses data with another feature count
(:class:`~ndcglab.errors.ModelMismatchError`). Files of other model families (boosted trees, kind
``gbdt``) are read by the loader their package registers with :func:`register_model_loader`;
:func:`ndcglab.estimator.load_trained` reads every kind.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._versions import package_versions
from ..data.dataset import RankingDataset
from ..data.normalize import Normalizer
from ..errors import DataFormatError, ModelMismatchError
from .base import MODEL_KINDS, RankModel, build_model, torch
from .file_format import (
    FORMAT,
    FORMAT_VERSION,
    file_header,
    model_kind,
    read_member,
    read_model_metadata,
    register_model_loader,
    registered_loader,
    write_model_file,
)

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "TrainedModel",
    "load_model",
    "read_metadata",
    "register_model_loader",
    "save_model",
    "versions",
]

#: the packages whose versions a torch model file records (besides Python)
RECORDED_PACKAGES = ("ndcglab", "torch", "numpy")
_WEIGHTS_MEMBER = "weights.pt"


def versions() -> dict[str, str | None]:
    """Versions recorded in torch model files: Python, ndcglab, torch, numpy."""
    return package_versions(RECORDED_PACKAGES)


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
    header = file_header(RECORDED_PACKAGES)
    meta.update(
        {
            "format": header["format"],
            "format_version": header["format_version"],
            "model": model.config(),
            "n_features": model.n_features,
            "normalization": norm.to_dict(),
            "versions": header["versions"],
            "created": header["created"],
        }
    )
    meta.setdefault("feature_names", None)
    weights = io.BytesIO()
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    torch.save(state, weights)
    return write_model_file(path, meta, {_WEIGHTS_MEMBER: weights.getvalue()})


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON metadata of a model file (any kind), without loading the weights."""
    return read_model_metadata(path)


def load_model(
    path: str | os.PathLike[str], *, map_location: str = "cpu", n_features: int | None = None
) -> TrainedModel:
    """Read a model file written by :func:`save_model`.

    Files of a kind registered with :func:`register_model_loader` (boosted trees, once
    :mod:`ndcglab.gbdt` is imported) are handed to its loader; that object also has
    ``predict(data)``, ``n_features`` and ``metadata``.

    With ``n_features`` given, refuse at once (:class:`ModelMismatchError`) when it differs from
    the model's feature count; :meth:`TrainedModel.predict` checks it on every call anyway.
    """
    meta = read_metadata(path)
    kind = model_kind(meta)
    loader = registered_loader(kind)
    if loader is not None:
        other = loader(path)
        if n_features is not None and int(n_features) != other.n_features:
            raise ModelMismatchError(
                f"{path} expects {other.n_features} features but the data has {n_features}. "
                "Fix: apply the model to data with the same features, or retrain"
            )
        return other  # type: ignore[no-any-return]
    if kind is not None and kind not in MODEL_KINDS:
        raise DataFormatError(
            f"the file holds a model of kind {kind!r}, which ndcglab.models reads only once its "
            f"package has registered a loader (it reads {', '.join(MODEL_KINDS)} itself)",
            path=path,
            fix="load any model file with ndcglab.estimator.load_trained(path) (boosted trees: "
            "also ndcglab.gbdt.load_gbdt(path))",
        )
    raw = read_member(path, _WEIGHTS_MEMBER)
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
