# mypy: allow-untyped-defs
# (numba infers the kernels' types from their arguments; the docstrings state them)
"""Numba kernels behind :func:`ndcglab.data.trec_columns.read_trec_columns` for large files.

They read the bytes of a block of whole lines (``uint8``) into preallocated arrays, one pass,
no Python object per line, under the rules of the NumPy pass of :mod:`ndcglab.data.trec`:

* a line ends at ``\\n`` or ``\\r``; fields are separated by space, tab, VT and FF;
* a blank line, and a line whose first field starts with ``#`` (a comment), is skipped;
* a data line has exactly ``n_fields`` fields (qrels) or at least that many (runs);
* a NUL byte, a byte >= 128 or one of the separators 0x1c..0x1f anywhere (comment lines too)
  sends the file to the line-by-line reader (the kernel returns -1).

Numbers: a plain decimal ``-?D+(.D+)?`` of at most 18 digits whose digits read as an integer
``m <= 2^53`` is ``m / 10^f`` (``f`` digits after the point): both are exact in float64, so the
one division is correctly rounded, the value ``float()`` gives. Any other token is flagged and
converted by the caller with Python's ``float`` (or checked with ``int`` for the rank field).

Docnos are fixed-width rows of bytes, NUL after the end; two lines of one query with the same
docno are found through a hash table of the query's rows (:func:`has_repeats_kernel`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._byte_rows import row_cmp  # docno rows compared as bytes

__all__ = [
    "copy_tokens",
    "gather_runs",
    "has_repeats_kernel",
    "row_hash",
    "rows_equal",
    "scan_block",
]

_TWO53 = 1 << 53


def _byte_classes() -> np.ndarray:
    """The class of each byte for :func:`scan_block`: 0 a byte of a field, 1 a field separator
    (space, tab, VT, FF), 2 a line end (LF, CR), 3 a byte that sends the file to the
    line-by-line reader (NUL, 0x1c..0x1f, 128 and above). One table look-up per byte instead of
    a chain of comparisons."""
    cls = np.zeros(256, dtype=np.uint8)
    cls[[32, 9, 11, 12]] = 1
    cls[[10, 13]] = 2
    cls[[0, 28, 29, 30, 31]] = 3
    cls[128:] = 3
    return cls


#: a constant of the compiled code (:func:`_byte_classes`)
_BYTE_CLASS = _byte_classes()


@njit(cache=True, nogil=True)
def _decimal(buf, s, e, pow10):  # pragma: no cover - compiled
    """``(value, ok)`` of the token ``buf[s:e]`` as described in the module docstring."""
    neg = buf[s] == 45
    i = s + 1 if neg else s
    m = 0
    digits = 0
    frac = -1  # digits after the point; -1: no point
    while i < e:
        c = buf[i]
        if c >= 48 and c <= 57:
            digits += 1
            if digits > 18:
                return 0.0, False
            m = m * 10 + (c - 48)
            if frac >= 0:
                frac += 1
        elif c == 46 and frac < 0 and digits > 0:
            frac = 0
        else:
            return 0.0, False
        i += 1
    if digits == 0 or frac == 0 or m > _TWO53:
        return 0.0, False
    v = float(m)
    if frac > 0:
        v = v / pow10[frac]
    return (-v if neg else v), True


@njit(cache=True, nogil=True)
def scan_block(
    buf, n_fields, exact, rank_field, value_field, pow10, qs, qe, ds, de, vs, ve, value, ok, new
):  # pragma: no cover - compiled
    """Find the data lines of ``buf``; returns their number ``n`` (-1: the file needs the
    line-by-line reader). For data line ``k``: ``qs[k]:qe[k]`` its query id (field 0),
    ``ds[k]:de[k]`` its docno (field 2), ``vs[k]:ve[k]`` field ``value_field``, read into
    ``value[k]``; ``ok[k]`` False when that value, or the field ``rank_field`` (``>= 0``: the
    run's rank, all digits), needs Python; ``new[k]`` True when its query id differs from the
    previous data line's (always for the first). The arrays hold at least one entry per line."""
    n = len(buf)
    i = 0
    k = 0
    pq_s = -1
    pq_e = -1
    while i < n:
        nf = 0
        comment = False
        good = True
        while i < n:
            t = _BYTE_CLASS[buf[i]]
            if t == 2:  # the line's end
                break
            if t == 1:  # between fields
                i += 1
                continue
            s = i
            while i < n:
                t = _BYTE_CLASS[buf[i]]
                if t != 0:
                    if t == 3:
                        return -1
                    break
                i += 1
            if nf == 0 and buf[s] == 35:
                comment = True
            if not comment:
                if nf == 0:
                    qs[k] = s
                    qe[k] = i
                elif nf == 2:
                    ds[k] = s
                    de[k] = i
                elif nf == rank_field:
                    for j in range(s, i):
                        if buf[j] < 48 or buf[j] > 57:
                            good = False
                elif nf == value_field:
                    vs[k] = s
                    ve[k] = i
                    v, fine = _decimal(buf, s, i, pow10)
                    value[k] = v
                    good = good and fine
            nf += 1
        i += 1  # past the line end
        if nf == 0 or comment:
            continue
        if nf < n_fields or (exact and nf != n_fields):
            return -1
        ok[k] = good
        same = pq_e - pq_s == qe[k] - qs[k]
        if same:
            for j in range(qe[k] - qs[k]):
                if buf[qs[k] + j] != buf[pq_s + j]:
                    same = False
                    break
        new[k] = not same
        pq_s = qs[k]
        pq_e = qe[k]
        k += 1
    return k


@njit(cache=True, nogil=True)
def copy_tokens(buf, s, e, out):  # pragma: no cover - compiled
    """``out[k, :]`` = the bytes ``buf[s[k]:e[k]]``, NUL after them (``out``: ``(n, w)``
    uint8, ``w >= e - s``)."""
    w = out.shape[1]
    for k in range(len(s)):
        L = e[k] - s[k]
        for j in range(L):
            out[k, j] = buf[s[k] + j]
        for j in range(L, w):
            out[k, j] = 0


@njit(cache=True, nogil=True, inline="always")
def row_hash(rows, a):  # pragma: no cover - compiled
    """A 64-bit hash of row ``a`` of ``rows`` (FNV-1a over its bytes)."""
    h = np.uint64(0xCBF29CE484222325)
    for j in range(rows.shape[1]):
        h = (h ^ np.uint64(rows[a, j])) * np.uint64(0x100000001B3)
    return h


@njit(cache=True, nogil=True, inline="always")
def rows_equal(rows, a, other, b):  # pragma: no cover - compiled
    """Whether row ``a`` of ``rows`` equals row ``b`` of ``other`` (NUL-padded widths)."""
    return row_cmp(rows, a, other, b) == 0


@njit(cache=True, nogil=True)
def has_repeats_kernel(rows, bnd):  # pragma: no cover - compiled
    """Whether two lines of one query (``bnd``: the query boundaries) have the same row: each
    query's rows go into an open-addressing table of their hashes (equal hashes compared in
    full)."""
    maxn = 1
    for q in range(len(bnd) - 1):
        maxn = max(maxn, bnd[q + 1] - bnd[q])
    size = 1
    while size < 2 * maxn:
        size *= 2
    slot = np.full(size, -1, np.int64)
    hashes = np.empty(size, np.uint64)
    for q in range(len(bnd) - 1):
        lo = bnd[q]
        hi = bnd[q + 1]
        mask = 1
        while mask < 2 * (hi - lo):
            mask *= 2
        mask -= 1
        for i in range(mask + 1):
            slot[i] = -1
        for i in range(lo, hi):
            h = row_hash(rows, i)
            at = np.int64(h & np.uint64(mask))
            while slot[at] >= 0:
                if hashes[at] == h and rows_equal(rows, i, rows, slot[at]):
                    return True
                at = (at + 1) & mask
            slot[at] = i
            hashes[at] = h
    return False


@njit(cache=True, nogil=True)
def gather_runs(src, starts, lengths, order, dst):  # pragma: no cover - compiled
    """``dst`` = the runs ``src[starts[r] : starts[r] + lengths[r]]`` for ``r`` in ``order``,
    one after another (``src``/``dst``: 1-D, or 2-D by rows)."""
    at = 0
    for r in order:
        s = starts[r]
        for i in range(lengths[r]):
            dst[at + i] = src[s + i]
        at += lengths[r]
