"""Padding and length buckets: the one place that turns lists of different lengths into
rectangular ``(B, M)`` blocks.

Lists travel as flat per-document arrays plus ``boundaries`` (query ``q`` owns documents
``boundaries[q]:boundaries[q+1]``). Anything that works on rectangles (the torch losses, the
per-query tables) pads them:

* :func:`segment_index` — the flat document positions of a set of lists, concatenated;
* :func:`pad_layout` — a ``(B, M)`` index into the flat arrays plus a boolean mask (``True`` for a
  real document); padding cells point at a caller-chosen position (``pad_to``) and are never read
  as data;
* :func:`pad_segments` — flat values scattered into ``(Q, M, ...)`` with a ``fill`` value, plus the
  mask;
* :func:`length_buckets` — cuts a sequence of lists into consecutive buckets, each padded only to
  its own longest list, bounded by a number of lists, a padded-cell budget (``B·M``, or ``B·M²``
  for losses that build all pairs of a list) and, optionally, a length ratio inside a bucket.

Conventions: the mask is the only marker of padding (never a sentinel label); ``M`` is the longest
list of the block; a block with no lists has ``M = 0``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["length_buckets", "pad_layout", "pad_mask", "pad_segments", "segment_index"]


def segment_index(
    starts: Sequence[int] | np.ndarray, lengths: Sequence[int] | np.ndarray
) -> np.ndarray:
    """Concatenate ``range(start, start + length)`` for each segment, vectorised → int64."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends_before = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    offsets = np.repeat(np.asarray(starts, dtype=np.int64) - ends_before, lengths)
    return np.arange(total, dtype=np.int64) + offsets


def pad_mask(lengths: Sequence[int] | np.ndarray, max_len: int | None = None) -> np.ndarray:
    """``(B, M)`` boolean mask, ``True`` for the first ``lengths[b]`` cells of row ``b``.

    ``M`` is ``max(lengths)`` (0 for no lists) unless ``max_len`` is given.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    m = int(lengths.max(initial=0)) if max_len is None else int(max_len)
    return np.arange(m)[None, :] < lengths[:, None]


def pad_layout(
    starts: Sequence[int] | np.ndarray, lengths: Sequence[int] | np.ndarray, *, pad_to: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """``(B, M)`` int64 index of the lists ``starts[b] : starts[b] + lengths[b]`` in the flat
    arrays, and the ``(B, M)`` mask. Padding cells hold ``pad_to`` (a valid dummy position, or one
    past the end for a gather from an array extended by a fill slot)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    mask = pad_mask(lengths)
    cols = np.arange(mask.shape[1], dtype=np.int64)
    index = np.where(mask, starts[:, None] + cols[None, :], pad_to)
    return index, mask


def pad_segments(
    values: np.ndarray, boundaries: np.ndarray, fill: float = 0.0, max_len: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Scatter flat per-document ``values`` (``(N, ...)``) into ``(Q, M, ...)`` plus a mask
    ``(Q, M)``; padding cells hold ``fill``. ``M`` is the longest list unless ``max_len``."""
    b = np.asarray(boundaries, dtype=np.int64)
    lengths = np.diff(b)
    mask = pad_mask(lengths, max_len)
    values = np.asarray(values)
    out = np.full((len(lengths), mask.shape[1], *values.shape[1:]), fill, dtype=values.dtype)
    out[mask] = values
    return out, mask


def length_buckets(
    lengths: Sequence[int] | np.ndarray,
    *,
    max_cells: int,
    max_lists: int | None = None,
    growth: float | None = None,
    quadratic: bool = False,
) -> list[tuple[int, int]]:
    """Cut lists, taken in the given order, into consecutive buckets ``(start, stop)``.

    A bucket grows one list at a time and stops before the list that would make it

    * hold more than ``max_lists`` lists (``None``: no limit);
    * cost more than ``max_cells``: ``B·M`` padded cells, or ``B·M²`` when ``quadratic`` (``M`` is
      the bucket's longest list so far);
    * hold a list longer than ``growth`` times the bucket's first list (``None``: no limit) — with
      lengths sorted ascending, at most a fraction ``1 − 1/growth`` of a bucket's cells is padding.

    A bucket always takes at least one list, so a single list over the budget gets its own bucket.
    Sorting the lists by length first (the caller's choice) keeps the padding small.
    """
    lens = np.asarray(lengths, dtype=np.int64).tolist()
    n = len(lens)
    cap = n if max_lists is None else int(max_lists)
    out: list[tuple[int, int]] = []
    start = 0
    while start < n:
        first = lens[start]
        longest = 0
        end = start
        while end < n and end - start < cap:
            longest2 = max(longest, lens[end])
            if end > start:
                if growth is not None and longest2 > first * growth:
                    break
                width = longest2 * longest2 if quadratic else longest2
                if (end - start + 1) * width > max_cells:
                    break
            longest = longest2
            end += 1
        out.append((start, end))
        start = end
    return out
