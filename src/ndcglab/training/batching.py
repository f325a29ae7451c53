"""Batches of queries for training: padded *scores*, never padded feature tensors.

Every model scores documents one by one, so a batch needs only the flat ``(n, F)`` feature rows of
its queries (a contiguous slice when the data are stored in batch order) plus a ``(B, M)`` index
that scatters the ``n`` flat scores into a padded ``(B, M)`` matrix, a ``(B, M)`` mask and the
padded labels. Padded positions read score 0 (masked) and receive no gradient.

Two layouts:

* ``"bucket"`` (default): queries are sorted once by length (ties in a seeded random order) and cut
  into batches of ``batch_size`` queries, each also capped at ``max_padded`` padded cells; the
  documents are stored in that order, so a batch's features are a view. Each epoch visits the
  batches in a new seeded random order. Padding is minimal.
* ``"random"``: each epoch a seeded random permutation of queries is cut into batches (classic
  minibatch SGD; features are gathered per batch).

Full-batch gradient descent uses the bucket layout without shuffling (``shuffle=False``): every
query is visited each epoch, in length buckets of ``batch_size`` queries (``None``: as many as fit)
and at most ``max_padded`` cells, whose gradients are accumulated before the one step. Buckets of
similar lengths keep the padding — and the O(M²) work of pairwise losses — small.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._compat import torch as _torch
from ..data.dataset import boundaries_from_group
from ..data.padding import length_buckets, pad_layout, segment_index
from ..errors import SpecError

torch = _torch()

__all__ = ["Batch", "BatchPlan"]

_ARRANGE_BLOCK = 1 << 16  # documents per block when arranging (and normalising) the features


@dataclass
class Batch:
    """One batch: rows ``lo:hi`` (or ``doc_index``); ``pad_index``, ``mask``, ``labels`` (B, M)."""

    pad_index: Any
    mask: Any
    labels: Any
    lo: int = 0
    hi: int = 0
    doc_index: Any = None
    #: the training loss bound to this batch's labels (:meth:`ndcglab.losses.Loss.bind`), kept
    #: by the training loop across epochs
    bound: Any = field(default=None, repr=False, compare=False)

    @property
    def n_queries(self) -> int:
        return int(self.mask.shape[0])

    def features(self, x: Any) -> Any:
        return x[self.lo : self.hi] if self.doc_index is None else x[self.doc_index]

    def pad(self, flat_scores: Any, *, zero: bool = True) -> Any:
        """Scatter flat scores ``(n,)`` into ``(B, M)``; padded cells are 0, with no gradient.
        ``zero=False`` leaves the padded cells holding some real document's score (one
        operation less, for a loss that masks padding itself: ``Loss.masks_padding``)."""
        padded = flat_scores[self.pad_index]
        return torch.where(self.mask, padded, 0.0) if zero else padded


class BatchPlan:
    """Training data on the device, arranged for batching (see the module docstring).

    ``features`` may hold more rows than the queries use: ``rows[i]`` is then the feature row of
    the i-th document described by ``labels``/``boundaries`` (gathered once, no extra copy).
    """

    def __init__(
        self,
        features: np.ndarray,
        labels: np.ndarray,
        boundaries: np.ndarray,
        *,
        batch_size: int | None,
        batching: str = "bucket",
        max_padded: int = 4_000_000,
        seed: int = 0,
        shuffle: bool = True,
        device: Any = "cpu",
        dtype: Any = None,
        rows: np.ndarray | None = None,
        transform: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
    ) -> None:
        if batching not in ("bucket", "random"):
            raise SpecError(f"unknown batching {batching!r}; known: bucket, random")
        if batch_size is not None and int(batch_size) < 1:
            raise SpecError(f"batch_size must be a positive number of queries, got {batch_size}")
        self.batching = batching if batch_size is not None else "bucket"
        self.batch_size = None if batch_size is None else int(batch_size)
        self.max_padded = int(max_padded)
        self.seed = int(seed)
        self.shuffle = bool(shuffle)
        self.device = device
        dtype = dtype or torch.float32
        b = np.asarray(boundaries, dtype=np.int64)
        lengths = np.diff(b)
        self.n_queries = len(lengths)
        if self.batching == "bucket":
            tie = np.random.default_rng([self.seed, 7919]).permutation(self.n_queries)
            order = np.lexsort((tie, lengths))
        else:
            order = np.arange(self.n_queries)
        self.order = order
        doc_index = segment_index(b[:-1][order], lengths[order])
        self.lengths = lengths[order]
        self.boundaries = boundaries_from_group(self.lengths)
        src_rows = doc_index if rows is None else np.asarray(rows, dtype=np.int64)[doc_index]
        self.x = torch.as_tensor(
            self._arrange(features, src_rows, transform), dtype=dtype, device=device
        )
        self.y = torch.as_tensor(
            np.asarray(labels, dtype=np.float64)[doc_index], dtype=dtype, device=device
        )
        self._fixed: list[Batch] | None = None
        if self.batching == "bucket":
            self._fixed = self._bucket_batches()

    def _arrange(
        self,
        features: np.ndarray,
        src_rows: np.ndarray,
        transform: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None,
    ) -> np.ndarray:
        """The feature rows in plan order; ``transform(block, block_boundaries, out)`` (e.g. the
        normalisation) is applied to blocks of whole queries as they are gathered, writing into
        the result, so the only full-size array made is the result (no normalised copy in the
        original order). The blocks are gathered into one reused buffer."""
        if transform is None:
            return np.ascontiguousarray(features[src_rows])
        n_rows = len(features)
        if len(src_rows) and (int(src_rows.min()) < 0 or int(src_rows.max()) >= n_rows):
            raise IndexError(f"feature row index out of range 0..{n_rows - 1}")
        out = np.empty((len(src_rows), features.shape[1]), dtype=np.float32)
        buf = np.empty((0, features.shape[1]), dtype=features.dtype)
        b = self.boundaries
        q0 = 0
        while q0 < self.n_queries:
            q1 = int(np.searchsorted(b, b[q0] + _ARRANGE_BLOCK, side="right")) - 1
            q1 = min(max(q1, q0 + 1), self.n_queries)
            lo, hi = int(b[q0]), int(b[q1])
            if len(buf) < hi - lo:
                buf = np.empty((hi - lo, features.shape[1]), dtype=features.dtype)
            block = buf[: hi - lo]
            # mode="clip" takes without an internal copy; the indices were checked above
            np.take(features, src_rows[lo:hi], axis=0, out=block, mode="clip")
            transform(block, b[q0 : q1 + 1] - lo, out[lo:hi])
            q0 = q1
        return out

    # ------------------------------------------------------------------ layouts
    def _make(self, qidx: np.ndarray, contiguous: bool) -> Batch:
        lengths = self.lengths[qidx]
        # the batch's documents are the concatenation of its lists (a slice, or gathered)
        pad_index, mask = pad_layout(boundaries_from_group(lengths)[:-1], lengths)
        dev = self.device
        if contiguous:
            lo, hi = int(self.boundaries[qidx[0]]), int(self.boundaries[qidx[-1] + 1])
            doc_index = None
        else:
            lo = hi = 0
            doc_index = torch.as_tensor(
                segment_index(self.boundaries[:-1][qidx], lengths), device=dev
            )
        pi = torch.as_tensor(pad_index, device=dev)
        mk = torch.as_tensor(mask, device=dev)
        flat_y = self.y[lo:hi] if contiguous else self.y[doc_index]
        labels = torch.where(mk, flat_y[pi], torch.zeros((), dtype=self.y.dtype, device=dev))
        return Batch(pad_index=pi, mask=mk, labels=labels, lo=lo, hi=hi, doc_index=doc_index)

    def _chunks(self, qorder: np.ndarray) -> list[np.ndarray]:
        """Cut ``qorder`` into batches of ``batch_size`` queries, at most ``max_padded`` cells."""
        cuts = length_buckets(
            self.lengths[qorder], max_cells=self.max_padded, max_lists=self.batch_size
        )
        return [qorder[start:stop] for start, stop in cuts]

    def _bucket_batches(self) -> list[Batch]:
        q = np.arange(self.n_queries)
        return [self._make(c, contiguous=True) for c in self._chunks(q)]

    def epoch_batches(self, epoch: int) -> list[Batch]:
        """The batches of ``epoch`` in visiting order (seeded by ``(seed, epoch)``)."""
        rng = np.random.default_rng([self.seed, int(epoch)])
        if self._fixed is not None:
            if not self.shuffle or len(self._fixed) == 1:
                return self._fixed
            return [self._fixed[i] for i in rng.permutation(len(self._fixed))]
        perm = rng.permutation(self.n_queries)
        return [self._make(c, contiguous=False) for c in self._chunks(perm)]
