# mypy: allow-untyped-defs
# (numba infers the kernels' types from their arguments; the docstrings state them)
"""Compiled comparisons of byte strings stored as the NUL-padded rows of a uint8 matrix (one
row per document id): how the TREC readers (``ndcglab.data``) and the TREC join
(``ndcglab.measures``) compare document ids without a Python object per id.

Rows are compared as C's ``strcmp`` compares NUL-terminated strings: byte by byte, a narrower
matrix read as NUL beyond its width.
"""

from __future__ import annotations

from numba import njit

__all__ = ["row_cmp", "row_less"]


@njit(cache=True, nogil=True, inline="always")
def row_cmp(rows, a, other, b):  # pragma: no cover - compiled
    """-1, 0 or 1: row ``a`` of ``rows`` against row ``b`` of ``other`` (both NUL-padded; the
    narrower is read as NUL beyond its width)."""
    w1 = rows.shape[1]
    w2 = other.shape[1]
    for j in range(max(w1, w2)):
        x = rows[a, j] if j < w1 else 0
        y = other[b, j] if j < w2 else 0
        if x != y:
            return -1 if x < y else 1
    return 0


@njit(cache=True, nogil=True, inline="always")
def row_less(rows, a, b):  # pragma: no cover - compiled
    """Whether row ``a`` of ``rows`` (uint8 ``(N, w)``) is less than row ``b``, as bytes."""
    for j in range(rows.shape[1]):
        x = rows[a, j]
        y = rows[b, j]
        if x != y:
            return x < y
    return False
