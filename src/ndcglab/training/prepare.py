"""The training data as training uses it: the queries kept, their labels and the normalisation.

With ``skip_uninformative=True`` (the default of :class:`~ndcglab.training.TrainConfig`), training
queries whose documents all share one label are left out of training — they carry no ranking
information (e.g. MQ2008's queries without any relevant document) — never out of validation or
evaluation. Torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.dataset import RankingDataset, boundaries_from_group
from ..data.normalize import Normalizer
from ..data.padding import segment_index
from ..errors import NdcglabError

__all__ = ["PreparedData", "informative_queries", "prepare_data"]


def informative_queries(labels: np.ndarray, boundaries: np.ndarray) -> np.ndarray:
    """Indices of the queries with at least two distinct labels."""
    b = np.asarray(boundaries, dtype=np.int64)
    lengths = np.diff(b)
    out = np.zeros(len(lengths), dtype=bool)
    nz = lengths > 0
    if nz.any():
        lo = np.minimum.reduceat(labels, b[:-1][nz])
        hi = np.maximum.reduceat(labels, b[:-1][nz])
        out[nz] = hi > lo
    return np.flatnonzero(out)


@dataclass
class PreparedData:
    """The training data as training uses it.

    ``raw`` are the un-normalised features of *all* training documents and ``normalizer`` the
    fitted normalisation, applied block by block where the features are arranged for training
    (so no full normalised copy exists beside the arranged one); ``rows`` (or None = all) are the
    documents of the queries used; ``labels``/``boundaries`` describe those queries only;
    ``x_val`` the normalised validation features (or None).
    """

    raw: Any
    normalizer: Normalizer
    rows: Any
    labels: np.ndarray
    boundaries: np.ndarray
    x_val: Any

    @property
    def n_queries(self) -> int:
        return len(self.boundaries) - 1

    @property
    def n_features(self) -> int:
        return int(self.raw.shape[1])

    def features(self) -> np.ndarray:
        """The normalised features of the documents used (one new float32 array)."""
        x = self.raw if self.rows is None else self.raw[self.rows]
        return self.normalizer.transform(x, self.boundaries)


def prepare_data(
    train_data: RankingDataset,
    normalizer: Normalizer,
    validation: RankingDataset | None,
    *,
    skip_uninformative: bool,
) -> PreparedData:
    """The :class:`PreparedData` of a run (see the module docstring for the queries kept)."""
    keep = np.arange(train_data.n_queries)
    if skip_uninformative:
        keep = informative_queries(train_data.labels, train_data.boundaries)
        if len(keep) == 0:
            raise NdcglabError(
                "no training query has two different labels, so there is nothing to learn. "
                "Fix: check the labels, or pass skip_uninformative=False"
            )
    rows = None
    labels, boundaries = train_data.labels, train_data.boundaries
    if len(keep) != train_data.n_queries:
        rows = segment_index(train_data.boundaries[:-1][keep], train_data.query_lengths[keep])
        labels = train_data.labels[rows]
        boundaries = boundaries_from_group(train_data.query_lengths[keep])
    x_val = None
    if validation is not None:
        x_val = normalizer.transform(validation.features, validation.boundaries)
    return PreparedData(
        raw=train_data.features,
        normalizer=normalizer,
        rows=rows,
        labels=labels,
        boundaries=boundaries,
        x_val=x_val,
    )
