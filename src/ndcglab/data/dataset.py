"""The in-memory ranking dataset.

Documents of one query are contiguous. A dataset of ``Q`` queries and ``N`` documents holds:

* ``features``  float32 ``(N, F)``; ``NaN`` marks a missing value (e.g. OHSUMED's ``NULL``);
* ``labels``    float64 ``(N,)`` graded relevance (usually 0..L-1, floats allowed);
* ``boundaries`` int64 ``(Q + 1,)``: query ``q`` owns documents ``boundaries[q]:boundaries[q+1]``;
* ``query_ids`` ``(Q,)`` strings, one per query, in file order;
* ``doc_ids``   ``(N,)`` strings or ``None`` (from ``#docid = ...`` comments);
* ``extras``    named ``(N,)`` columns from the trailing comment (``inc``, ``prob`` ...).

Lists of different lengths travel as these flat arrays plus ``boundaries``; :meth:`padded`
gives a ``(Q, M)`` view with a boolean mask (``M`` = longest list), never a sentinel label.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._compat import FrozenFields
from ..errors import DataFormatError, SpecError
from .padding import pad_segments, segment_index

__all__ = [
    "QueryView",
    "RankingDataset",
    "boundaries_from_group",
    "boundaries_from_qids",
]


def boundaries_from_group(group: Sequence[int] | np.ndarray) -> np.ndarray:
    """Turn LightGBM-style group sizes ``[n_1, n_2, ...]`` into boundaries
    ``[0, n_1, n_1+n_2, ...]``."""
    g = np.asarray(group, dtype=np.int64)
    if g.ndim != 1 or (g < 0).any():
        raise DataFormatError(
            "group must be a 1-D sequence of non-negative list sizes",
            token=str(group)[:60],
            fix="pass one non-negative size per query, e.g. group=[3, 5, 2]",
        )
    out = np.zeros(len(g) + 1, dtype=np.int64)
    np.cumsum(g, out=out[1:])
    return out


def boundaries_from_qids(
    qids: Sequence[Any] | np.ndarray, *, contiguous: bool = True
) -> np.ndarray:
    """Turn a per-document query-id column into boundaries ``(Q + 1,)`` int64.

    A new query starts wherever the id differs from the previous document's id, so each query's
    documents must be contiguous. With ``contiguous=True`` (the default) an id that comes back in
    a second, separate block is a :class:`~ndcglab.errors.DataFormatError`; with
    ``contiguous=False`` each block counts as its own query. The query id of query ``q`` is
    ``qids[boundaries[q]]``. An empty column gives ``[0]``.
    """
    q = np.asarray(qids)
    if len(q) == 0:
        return np.zeros(1, dtype=np.int64)
    change = np.flatnonzero(q[1:] != q[:-1]) + 1
    b = np.concatenate([[0], change, [len(q)]]).astype(np.int64)
    if contiguous:
        firsts = q[b[:-1]].tolist()
        if len(set(firsts)) != len(firsts):
            seen: set = set()
            for i, qq in enumerate(firsts):
                if qq in seen:
                    raise DataFormatError(
                        f"query id {qq!r} appears in two separate blocks (document {b[i]})",
                        fix="sort the documents so that each query's documents are contiguous",
                    )
                seen.add(qq)
    return b


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class QueryView(FrozenFields):
    """One query: its id, and its documents' features, labels and ids (views, not copies)."""

    query_id: str
    features: np.ndarray
    labels: np.ndarray
    doc_ids: np.ndarray | None
    start: int

    def __init__(
        self,
        query_id: str,
        features: np.ndarray,
        labels: np.ndarray,
        doc_ids: np.ndarray | None,
        start: int,
    ) -> None:
        object.__setattr__(self, "query_id", query_id)
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "doc_ids", doc_ids)
        object.__setattr__(self, "start", start)

    def __len__(self) -> int:
        return len(self.labels)


@dataclass
class RankingDataset:
    """A set of queries with their documents; see the module docstring for the layout."""

    features: np.ndarray
    labels: np.ndarray
    boundaries: np.ndarray
    query_ids: np.ndarray
    doc_ids: np.ndarray | None = None
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    feature_names: list[str] | None = None
    source: str | None = None

    def __post_init__(self) -> None:
        self.features = np.asarray(self.features, dtype=np.float32)
        if self.features.ndim == 1:
            self.features = self.features.reshape(-1, 1)
        self.labels = np.asarray(self.labels, dtype=np.float64)
        self.boundaries = np.asarray(self.boundaries, dtype=np.int64)
        self.query_ids = np.asarray(
            [str(q) for q in np.asarray(self.query_ids).tolist()], dtype=object
        )
        n = len(self.labels)
        if self.features.shape[0] != n:
            raise DataFormatError(
                f"features have {self.features.shape[0]} rows but there are {n} labels",
                fix="give one feature row per label, in the same document order",
            )
        b = self.boundaries
        if b.ndim != 1 or len(b) < 1 or b[0] != 0 or b[-1] != n or (np.diff(b) < 0).any():
            raise DataFormatError(
                "boundaries must start at 0, never decrease and end at the number of documents "
                f"({n}); got {b[:5].tolist()}...{b[-3:].tolist()}",
                fix="build them with boundaries_from_group(sizes) or boundaries_from_qids(qids)",
            )
        if len(self.query_ids) != len(b) - 1:
            raise DataFormatError(
                f"{len(self.query_ids)} query ids for {len(b) - 1} queries (boundaries)",
                fix="give one query id per query, in boundaries order",
            )
        if self.doc_ids is not None:
            self.doc_ids = np.asarray(self.doc_ids, dtype=object)
            if len(self.doc_ids) != n:
                raise DataFormatError(
                    f"{len(self.doc_ids)} doc ids for {n} documents",
                    fix="give one doc id per document, or none",
                )
        if self.feature_names is not None:
            from .validate import check_feature_names

            self.feature_names = check_feature_names(self.feature_names, self.features.shape[1])
        for key, col in self.extras.items():
            if len(col) != n:
                raise DataFormatError(
                    f"extra column {key!r} has {len(col)} values for {n} documents",
                    fix="give every extra column one value per document",
                )

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_arrays(
        cls,
        X: Any,
        y: Any,
        *,
        group: Sequence[int] | np.ndarray | None = None,
        qid: Sequence[Any] | np.ndarray | None = None,
        doc_ids: Sequence[str] | None = None,
        feature_names: list[str] | None = None,
    ) -> RankingDataset:
        """Build a dataset from a feature matrix and labels, with ``group`` sizes or ``qid``s.

        Exactly one of ``group`` (LightGBM style) or ``qid`` (one id per document, each query's
        documents contiguous) must be given. The values are checked as the file readers check
        theirs (:mod:`ndcglab.data.validate`): finite labels, features that float32 holds
        (``NaN`` = missing), one feature name per column, at least one document.
        """
        if (group is None) == (qid is None):
            raise SpecError(
                "give exactly one of group= (list sizes) or qid= (a query id per document)"
            )
        from .validate import check_features, check_labels, check_not_empty

        y_arr = check_labels(y, finite=False)  # the values below, naming the query
        if group is not None:
            b = boundaries_from_group(group)
            if b[-1] != len(y_arr):
                raise DataFormatError(
                    f"group sizes add up to {b[-1]} but there are {len(y_arr)} labels",
                    fix="pass one size per query, in document order",
                )
            qids = np.array([str(i) for i in range(len(b) - 1)], dtype=object)
        else:
            qid_arr = np.asarray(qid)
            b = boundaries_from_qids(qid_arr)
            qids = np.array([str(q) for q in qid_arr[b[:-1]].tolist()], dtype=object)
        check_labels(y_arr, boundaries=b, query_ids=qids)  # names the query of a bad label
        features = check_features(X, boundaries=b, query_ids=qids)
        check_not_empty(len(y_arr), len(b) - 1)
        return cls(
            features=features,
            labels=y_arr,
            boundaries=b,
            query_ids=qids,
            doc_ids=None if doc_ids is None else np.asarray(doc_ids, dtype=object),
            feature_names=feature_names,
        )

    # ------------------------------------------------------------------ sizes
    @property
    def n_queries(self) -> int:
        return len(self.boundaries) - 1

    @property
    def n_docs(self) -> int:
        return len(self.labels)

    @property
    def n_features(self) -> int:
        return self.features.shape[1]

    @property
    def query_lengths(self) -> np.ndarray:
        """Number of documents of each query, ``(Q,)`` int64."""
        return np.diff(self.boundaries)

    @property
    def group(self) -> np.ndarray:
        """LightGBM-style group sizes (same as :attr:`query_lengths`)."""
        return self.query_lengths

    @property
    def doc_query_index(self) -> np.ndarray:
        """For each document, the index (0..Q-1) of its query, ``(N,)`` int64."""
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), self.query_lengths)

    def __len__(self) -> int:
        return self.n_queries

    def __repr__(self) -> str:
        src = f", source={self.source!r}" if self.source else ""
        return (
            f"RankingDataset(queries={self.n_queries}, docs={self.n_docs}, "
            f"features={self.n_features}{src})"
        )

    # ------------------------------------------------------------------ views
    def query(self, i: int) -> QueryView:
        """The ``i``-th query (0-based, file order) as a :class:`QueryView`."""
        lo, hi = int(self.boundaries[i]), int(self.boundaries[i + 1])
        return QueryView(
            query_id=str(self.query_ids[i]),
            features=self.features[lo:hi],
            labels=self.labels[lo:hi],
            doc_ids=None if self.doc_ids is None else self.doc_ids[lo:hi],
            start=lo,
        )

    def __iter__(self) -> Iterator[QueryView]:
        for i in range(self.n_queries):
            yield self.query(i)

    def padded(
        self, values: np.ndarray | None = None, fill: float = 0.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(Q, M)`` padded labels (or any per-document ``values``) and a boolean mask."""
        return pad_segments(self.labels if values is None else values, self.boundaries, fill)

    def padded_features(self, fill: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """``(Q, M, F)`` padded features and a ``(Q, M)`` boolean mask."""
        return pad_segments(self.features, self.boundaries, fill)

    # ------------------------------------------------------------------ derived datasets
    def subset(self, query_indices: Sequence[int] | np.ndarray) -> RankingDataset:
        """A new dataset with the given queries (by 0-based index), in the given order."""
        idx = np.asarray(query_indices, dtype=np.int64)
        lengths = self.query_lengths[idx]
        starts = self.boundaries[idx]
        doc_index = segment_index(starts, lengths)
        return self._take(doc_index, boundaries_from_group(lengths), self.query_ids[idx])

    @classmethod
    def concat(cls, parts: Sequence[RankingDataset]) -> RankingDataset:
        """One dataset of the queries of ``parts``, in order (one part is returned as is).

        Every part must have the same feature count (else a
        :class:`~ndcglab.errors.DataFormatError` naming the counts); document ids are kept when
        every part has them; the feature names are the first part's; ``source`` joins the
        parts' sources with ``+``.
        """
        if not parts:
            raise DataFormatError("no dataset to concatenate. Fix: give at least one data file")
        if len(parts) == 1:
            return parts[0]
        counts = {p.n_features for p in parts}
        if len(counts) != 1:
            raise DataFormatError(
                f"the data files have different feature counts {sorted(counts)}. "
                "Fix: give files of one collection"
            )
        doc_ids = None
        if all(p.doc_ids is not None for p in parts):
            doc_ids = np.concatenate([p.doc_ids for p in parts])
        return cls(
            features=np.concatenate([p.features for p in parts]),
            labels=np.concatenate([p.labels for p in parts]),
            boundaries=boundaries_from_group(np.concatenate([p.query_lengths for p in parts])),
            query_ids=np.concatenate([p.query_ids for p in parts]),
            doc_ids=doc_ids,
            feature_names=parts[0].feature_names,
            source="+".join(str(p.source) for p in parts),
        )

    def truncate(self, n: int) -> RankingDataset:
        """Keep the first ``n`` documents of every list; shorter lists stay whole.

        This is ``S_n`` of Wang, Wang, Li, He, Chen, Liu, "A Theoretical Analysis of NDCG Type
        Ranking Measures" (COLT 2013): the lists cut to their first ``n`` documents."""
        lengths = np.minimum(self.query_lengths, n)
        doc_index = segment_index(self.boundaries[:-1], lengths)
        return self._take(doc_index, boundaries_from_group(lengths), self.query_ids)

    def with_n_features(self, n_features: int) -> RankingDataset:
        """The same dataset with zero-valued feature columns appended up to ``n_features``.

        In a LETOR/SVMlight file a feature index absent from a line is 0, so a sparse file
        whose highest index is below ``n_features`` reads as exactly this (as
        ``read_letor(path, n_features=n_features)`` would). Returns ``self`` when it is already
        that wide; a dataset with more columns is a :class:`DataFormatError`."""
        f = self.n_features
        if n_features == f:
            return self
        if n_features < f:
            raise DataFormatError(
                f"the dataset has {f} features, more than {n_features}",
                fix="use data with at most as many features as the model or training set",
            )
        wide = np.zeros((self.n_docs, n_features), dtype=np.float32)
        wide[:, :f] = self.features
        names = self.feature_names
        return RankingDataset(
            features=wide,
            labels=self.labels,
            boundaries=self.boundaries,
            query_ids=self.query_ids,
            doc_ids=self.doc_ids,
            extras=dict(self.extras),
            feature_names=None
            if names is None
            else [*names, *map(str, range(f + 1, n_features + 1))],
            source=self.source,
        )

    def permute_within_queries(self, seed: int) -> RankingDataset:
        """The same queries with each list's documents shuffled (seeded)."""
        rng = np.random.default_rng(seed)
        key = rng.random(self.n_docs) + self.doc_query_index
        return self._take(np.argsort(key, kind="stable"), self.boundaries, self.query_ids)

    def _take(
        self, doc_index: np.ndarray, boundaries: np.ndarray, query_ids: np.ndarray
    ) -> RankingDataset:
        return RankingDataset(
            features=self.features[doc_index],
            labels=self.labels[doc_index],
            boundaries=boundaries,
            query_ids=query_ids,
            doc_ids=None if self.doc_ids is None else self.doc_ids[doc_index],
            extras={k: v[doc_index] for k, v in self.extras.items()},
            feature_names=self.feature_names,
            source=self.source,
        )

    def label_counts(self) -> Mapping[float, int]:
        """How many documents carry each label value."""
        values, counts = np.unique(self.labels, return_counts=True)
        return {float(v): int(c) for v, c in zip(values, counts)}

    def check_scores(self, scores: Any, *, source: str | None = None) -> np.ndarray:
        """Validate a per-document score vector against this dataset; return it as float64."""
        from .validate import check_score_vector

        s = check_score_vector(scores)
        if len(s) != self.n_docs:
            raise DataFormatError(
                f"{len(s)} scores for {self.n_docs} documents",
                path=source,
                fix="give exactly one score per document, in the data file's order",
            )
        if not np.isfinite(s).all():
            bad = int(np.flatnonzero(~np.isfinite(s))[0])
            raise DataFormatError(
                f"score of document {bad + 1} is not a finite number",
                path=source,
                line=bad + 1 if source else None,
                token=str(s[bad]),
                fix="replace NaN/inf scores by finite numbers",
            )
        return s
