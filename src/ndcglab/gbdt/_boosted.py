"""What the two tree engines' models share: :class:`BoostedTreesModel`, the base of
:class:`~ndcglab.gbdt.GBDTModel` (LightGBM) and :class:`~ndcglab.gbdt.XGBoostModel` (XGBoost).

The base holds the booster and the metadata, checks the feature matrix, predicts with the trees
up to :attr:`~BoostedTreesModel.best_iteration` and writes the one model file
(:mod:`ndcglab.models.file_format`); each engine's subclass says how its booster counts
features and rounds, predicts raw scores and serialises itself. :func:`check_feature_count`
is the loaders' shared check of the metadata against the booster read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..errors import DataFormatError, ModelMismatchError
from ..models.file_format import file_header, read_member, write_model_file
from .model_text import CHECKSUM_KEY, member_checksums

__all__ = ["BoostedTreesModel", "check_feature_count", "exception_line", "read_engine_member"]


@dataclass
class BoostedTreesModel:
    """A booster of one tree engine plus its metadata (see the module docstring).

    :meth:`predict` takes a :class:`~ndcglab.data.RankingDataset` or an ``(N, F)`` feature matrix
    (NaN = missing) and returns ``(N,)`` float64 scores, using trees up to :attr:`best_iteration`.
    Subclasses set :attr:`described` and implement the ``_booster_*`` methods, ``_raw_predict``,
    ``_members`` and ``_file_versions``.
    """

    #: the model kind written in the file (``model.kind``), read back by the loaders
    kind: ClassVar[str] = "gbdt"
    #: how messages name the model ("the <described> model expects ...")
    described: ClassVar[str] = "boosted-trees"
    #: the packages whose versions :func:`~ndcglab.models.file_format.file_header` records
    header_packages: ClassVar[tuple[str, ...]] = ()

    booster: Any
    metadata: dict[str, Any] = field(default_factory=dict)

    # -- what each engine says about its booster
    def _booster_features(self) -> int:
        raise NotImplementedError

    def _booster_rounds(self) -> int:
        """Rounds boosted (all trees, whatever the best iteration)."""
        raise NotImplementedError

    def _booster_trees(self) -> int:
        """``model.num_trees`` written in the file."""
        raise NotImplementedError

    def _raw_predict(self, x: np.ndarray, n_iter: int) -> np.ndarray:
        """Float64 scores of the trees of rounds ``1..n_iter``."""
        raise NotImplementedError

    def _members(self) -> dict[str, bytes]:
        """The file's members besides ``metadata.json`` (the engine's own model)."""
        raise NotImplementedError

    def _model_keys(self) -> dict[str, Any]:
        """Keys of the file's ``model`` object besides the tree counts."""
        return {"kind": self.kind}

    def _file_versions(self, header: dict[str, Any]) -> dict[str, Any]:
        """The versions the file records (over those of the training metadata)."""
        return dict(header["versions"])

    # -- shared
    @property
    def n_features(self) -> int:
        return self._booster_features()

    @property
    def feature_names(self) -> list[str] | None:
        names = self.metadata.get("feature_names")
        return None if names is None else list(names)

    @property
    def best_iteration(self) -> int:
        """Number of trees used by :meth:`predict` (all trees when no round was chosen)."""
        best = int(self.metadata.get("model", {}).get("best_iteration") or 0)
        return best if best > 0 else self._booster_rounds()

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
                f"the {self.described} model expects {self.n_features} features (trained on "
                f"{self.metadata.get('training_data', 'its training data')}) but {what} has "
                f"{x.shape[1]}. Fix: apply the model to data with the same features, or retrain"
            )
        return x

    def predict(self, data: Any, *, num_iteration: int | None = None) -> np.ndarray:
        """Scores ``(N,)`` float64 (higher = ranked higher) for every document of ``data``."""
        x = self._matrix(data)
        n_iter = self.best_iteration if num_iteration is None else int(num_iteration)
        return self._raw_predict(x, n_iter)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the model (the engine's own model + metadata JSON) to one file, atomically."""
        meta = {k: v for k, v in self.metadata.items() if k != "path"}
        model_meta = dict(meta.get("model") or {})
        model_meta.update(
            {
                **self._model_keys(),
                "num_trees": self._booster_trees(),
                "best_iteration": self.best_iteration,
            }
        )
        header = file_header(self.header_packages)
        meta.update(
            {
                **header,
                "model": model_meta,
                "n_features": self.n_features,
                "versions": {**meta.get("versions", {}), **self._file_versions(header)},
            }
        )
        meta.setdefault("feature_names", None)
        members = self._members()
        model_meta[CHECKSUM_KEY] = member_checksums(members)  # checked by the loaders
        return write_model_file(path, meta, members)


def check_feature_count(
    meta: dict[str, Any], n_booster: int, path: Path, engine: str, fix: str
) -> None:
    """Raise :class:`~ndcglab.errors.DataFormatError` if the metadata's ``n_features`` (when
    recorded) differs from the ``n_booster`` features of the booster read from ``path``."""
    n_meta = meta.get("n_features")
    if n_meta is not None and n_meta != n_booster:
        raise DataFormatError(
            f"the metadata says {n_meta} features but the {engine} model uses {n_booster}",
            path=path,
            fix=fix,
        )


def read_engine_member(path: Path, member: str, described: str, fix: str) -> bytes:
    """The bytes of the engine's ``member`` of the model file at ``path``; a file without it is
    a :class:`~ndcglab.errors.DataFormatError` naming the ``described`` model and ``fix``."""
    try:
        return read_member(path, member)
    except KeyError:
        raise DataFormatError(
            f"the {described} model file has no {member} member", path=path, fix=fix
        ) from None


def exception_line(exc: BaseException) -> str:
    """The first line of an engine's exception message (its type name when empty), cut at 160
    characters: what a loader quotes when the engine cannot read the model."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return first[:160]
