"""Length buckets: the padding index of a dataset, computed once and reused every boosting round.

A boosting objective is called once per round with a flat score vector ``preds`` (``(N,)``, one
score per document, queries contiguous as described by ``boundaries``). Our losses work on padded
``(B, M)`` tensors with a boolean mask. Padding every query to the longest list wastes work when
lengths vary a lot (MSLR: 1 to 1,251 documents), so queries are sorted by length and cut into
*buckets* whose lists differ in length by at most a factor ``growth``; each bucket is padded only to
its own longest list. A bucket is also split when it would hold more than ``max_elements`` padded
cells (``B·M``, or ``B·M²`` for losses that build all pairs), which bounds peak memory.

The padding index and the cut into buckets come from :mod:`ndcglab.data.padding` (the one
implementation, shared with the torch training batches). Everything here is NumPy; the index arrays
are built once per dataset (:class:`BucketIndex`) and each round only does a gather
(``values[index]``) and a scatter (``out[flat] = padded[mask]``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..data.padding import length_buckets, pad_layout
from ..errors import SpecError

__all__ = ["Bucket", "BucketIndex"]


@dataclass(frozen=True)
class Bucket:
    """One bucket of ``B`` queries padded to length ``M``.

    ``index`` ``(B, M)`` int64: position of each cell's document in the flat arrays; padding cells
    point at ``n_docs`` (one slot past the end, filled by :meth:`BucketIndex.gather`).
    ``mask`` ``(B, M)`` bool: True for real documents. ``flat`` ``(n,)``: ``index[mask]``, the
    documents of the bucket in row-major cell order (what a scatter writes). ``queries`` ``(B,)``:
    the 0-based indices of the bucket's queries in the dataset.
    """

    index: np.ndarray
    mask: np.ndarray
    flat: np.ndarray
    queries: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return self.index.shape


class BucketIndex:
    """The padding index of one dataset (see the module docstring).

    Parameters
    ----------
    boundaries:
        ``(Q + 1,)`` document offsets of the queries (``RankingDataset.boundaries``).
    growth:
        Lists in one bucket differ in length by at most this factor (> 1), so at most a fraction
        ``1 − 1/growth`` of a bucket's cells is padding.
    max_elements:
        Upper bound on the cost of one bucket: ``B·M`` cells, or ``B·M²`` when ``quadratic``.
        A single list longer than the bound still gets its own bucket.
    quadratic:
        Count a bucket's cost as ``B·M²`` (losses that materialise all pairs of a list).
    """

    def __init__(
        self,
        boundaries: Sequence[int] | np.ndarray,
        *,
        growth: float = 1.5,
        max_elements: int = 1 << 21,
        quadratic: bool = False,
    ) -> None:
        if growth <= 1.0:
            raise SpecError(
                f"bucket growth must exceed 1, got {growth}. Fix: pass a length ratio above 1, "
                "such as the default 1.5"
            )
        b = np.asarray(boundaries, dtype=np.int64)
        self.boundaries = b
        self.n_docs = int(b[-1])
        lengths = np.diff(b)
        order = np.argsort(lengths, kind="stable")
        order = order[lengths[order] > 0]
        cuts = length_buckets(
            lengths[order], max_cells=max_elements, growth=growth, quadratic=quadratic
        )
        self.buckets: tuple[Bucket, ...] = tuple(
            self._make_bucket(b, lengths, order[start:stop]) for start, stop in cuts
        )

    @staticmethod
    def _make_bucket(b: np.ndarray, lengths: np.ndarray, queries: np.ndarray) -> Bucket:
        index, mask = pad_layout(b[queries], lengths[queries], pad_to=int(b[-1]))
        return Bucket(index=index, mask=mask, flat=index[mask], queries=np.asarray(queries))

    def __len__(self) -> int:
        return len(self.buckets)

    def __iter__(self) -> Iterator[Bucket]:
        return iter(self.buckets)

    @property
    def padded_cells(self) -> int:
        """Total number of cells (real + padding) over all buckets."""
        return int(sum(bk.mask.size for bk in self.buckets))

    def gather(self, values: np.ndarray, fill: float = 0.0) -> list[np.ndarray]:
        """``values`` ``(N,)`` (or ``(N, ...)``) scattered into each bucket's ``(B, M, ...)``
        layout; padding cells hold ``fill``."""
        v = np.asarray(values)
        ext = np.empty((self.n_docs + 1, *v.shape[1:]), dtype=v.dtype)
        ext[: self.n_docs] = v
        ext[self.n_docs] = fill
        return [ext[bk.index] for bk in self.buckets]

    def scatter(self, padded: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
        """Inverse of :meth:`gather` for the real cells: write each bucket's values back into a flat
        ``(N,)`` array (documents of empty queries, if any, are left at 0)."""
        if out is None:
            out = np.zeros(self.n_docs, dtype=np.float64)
        for bk, p in zip(self.buckets, padded, strict=True):
            out[bk.flat] = np.asarray(p)[bk.mask]
        return out
