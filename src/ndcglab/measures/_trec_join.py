# mypy: allow-untyped-defs
# (numba infers the kernels' types from their arguments; the docstrings state them)
"""Numba kernels that join a run to its qrels for :func:`~ndcglab.measures.evaluate_trec` on
:class:`~ndcglab.data.trec_columns.TrecColumns`: per query, no array of one entry per line
beyond the outputs.

Both columns list each query's lines together; evaluated query ``e`` owns run lines
``rlo[e]:rhi[e]`` and qrels lines ``jlo[e]:jhi[e]``. Docnos are rows of bytes, NUL after the
end (the two files' widths may differ). :func:`match_kernel` counts, per query, the run lines
whose docno has a qrels line, found through a hash table of the query's qrels rows, and keeps
each run line's qrels line;
:func:`scores_kernel` and :func:`fill_kernel` then write the documents
:func:`~ndcglab.measures.evaluate_trec` evaluates, query by query: the ranked ones in run order
(label from the qrels, 0 when unjudged), then the judged ones the run did not retrieve (score
0), in qrels order — and the docno tie key of trec_eval's order.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .._byte_rows import row_cmp, row_less  # docno rows compared as bytes

__all__ = ["fill_kernel", "match_kernel", "scores_kernel"]


@njit(cache=True, nogil=True)
def byte_msort(idx, n, rows, tmp):  # pragma: no cover - compiled
    """Sort ``idx[:n]`` (row indices into ``rows``) by the rows' bytes ascending, then index:
    insertion-sorted runs of 16, then bottom-up merges through ``tmp``."""
    run = 16
    for lo in range(0, n, run):
        hi = min(lo + run, n)
        for i in range(lo + 1, hi):
            x = idx[i]
            j = i
            while j > lo and row_less(rows, x, idx[j - 1]):
                idx[j] = idx[j - 1]
                j -= 1
            idx[j] = x
    width = run
    in_idx = True
    while width < n:
        src = idx if in_idx else tmp
        dst = tmp if in_idx else idx
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if row_less(rows, src[j], src[i]):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        in_idx = not in_idx
        width *= 2
    if not in_idx:
        for i in range(n):
            idx[i] = tmp[i]


@njit(cache=True, nogil=True, inline="always")
def _hash(rows, a):  # pragma: no cover - compiled
    """FNV-1a of row ``a``'s bytes up to its first NUL (equal docnos of any width agree)."""
    h = np.uint64(0xCBF29CE484222325)
    for j in range(rows.shape[1]):
        c = rows[a, j]
        if c == 0:
            break
        h = (h ^ np.uint64(c)) * np.uint64(0x100000001B3)
    return h


@njit(cache=True, nogil=True)
def _table(jrows, j0, j1, slot, hashes):  # pragma: no cover - compiled
    """Put qrels rows ``j0:j1`` into the open-addressing table ``slot``/``hashes`` (a power of
    two at least twice as long); returns its mask."""
    mask = 1
    while mask < 2 * (j1 - j0):
        mask *= 2
    mask -= 1
    for i in range(mask + 1):
        slot[i] = -1
    for j in range(j0, j1):
        h = _hash(jrows, j)
        at = np.int64(h & np.uint64(mask))
        while slot[at] >= 0:
            at = (at + 1) & mask
        slot[at] = j
        hashes[at] = h
    return mask


@njit(cache=True, nogil=True, inline="always")
def _lookup(rrows, r, jrows, slot, hashes, mask):  # pragma: no cover - compiled
    """The qrels line of run row ``r``'s docno in the table, -1 when none."""
    h = _hash(rrows, r)
    at = np.int64(h & np.uint64(mask))
    while slot[at] >= 0:
        if hashes[at] == h and row_cmp(rrows, r, jrows, slot[at]) == 0:
            return slot[at]
        at = (at + 1) & mask
    return -1


@njit(cache=True, nogil=True)
def _tables(jlo, jhi, q0, q1):  # pragma: no cover - compiled
    maxn = 1
    for e in range(q0, q1):
        maxn = max(maxn, jhi[e] - jlo[e])
    size = 2
    while size < 2 * maxn:
        size *= 2
    return np.empty(size, np.int64), np.empty(size, np.uint64)


@njit(cache=True, nogil=True)
def match_kernel(rrows, jrows, rlo, rhi, jlo, jhi, q0, q1, found, hit):  # pragma: no cover
    """``found[e]`` = how many run lines of query ``e`` have a qrels line (queries ``q0:q1``);
    ``hit[r]`` = the qrels line of run line ``r`` (int32, one entry per run line), -1 when none,
    for :func:`fill_kernel`, which then looks up nothing again."""
    slot, hashes = _tables(jlo, jhi, q0, q1)
    for e in range(q0, q1):
        mask = _table(jrows, jlo[e], jhi[e], slot, hashes)
        n = 0
        for r in range(rlo[e], rhi[e]):
            j = _lookup(rrows, r, jrows, slot, hashes, mask)
            hit[r] = j
            if j >= 0:
                n += 1
        found[e] = n


@njit(cache=True, nogil=True)
def scores_kernel(rval, rlo, rhi, bnd, narrow, q0, q1, scores):  # pragma: no cover - compiled
    """Query ``e``'s scores at ``bnd[e]:bnd[e+1]``: its run lines' (``narrow``: rounded to
    float32 as trec_eval 9 compares them, except a score too large for it, left for the caller
    to report), then 0 for its judged documents the run did not retrieve."""
    big = np.float64(np.finfo(np.float32).max)
    for e in range(q0, q1):
        o = bnd[e]
        for r in range(rlo[e], rhi[e]):
            s = rval[r]
            if narrow and abs(s) <= big:
                s = np.float64(np.float32(s))
            scores[o] = s
            o += 1
        for i in range(o, bnd[e + 1]):
            scores[i] = 0.0


@njit(cache=True, nogil=True)
def fill_kernel(
    rrows, jrows, jval, hit, rlo, rhi, jlo, jhi, bnd, scores, q0, q1, labels, known, docs, key
):  # pragma: no cover - compiled
    """Query ``e``'s documents at ``bnd[e]:bnd[e+1]`` (see the module docstring): ``labels``,
    ``known`` (has a qrels line), ``docs`` (rows, as wide as the wider file's) and ``key``, the
    tie key of ``ties=docid``: among the ranked documents of one score (``scores``, from
    :func:`scores_kernel`), minus the docno's position in byte order (docno descending first,
    as trec_eval), 0 for a document no other shares its score with (``key`` comes zeroed)."""
    maxn = 1
    maxj = 1
    for e in range(q0, q1):
        maxn = max(maxn, rhi[e] - rlo[e])
        maxj = max(maxj, jhi[e] - jlo[e])
    used = np.zeros(maxj, np.bool_)
    vals = np.empty(maxn)
    idx = np.empty(maxn, np.int64)
    tmp = np.empty(maxn, np.int64)
    w = docs.shape[1]
    wr = rrows.shape[1]
    wj = jrows.shape[1]
    for e in range(q0, q1):
        out = bnd[e]
        j0 = jlo[e]
        for i in range(jhi[e] - j0):
            used[i] = False
        n = rhi[e] - rlo[e]
        for p in range(n):
            r = rlo[e] + p
            o = out + p
            vals[p] = scores[o]
            j = hit[r]
            if j >= 0:
                labels[o] = jval[j]
                known[o] = True
                used[j - j0] = True
            else:
                labels[o] = 0.0
                known[o] = False
            for c in range(wr):
                docs[o, c] = rrows[r, c]
            for c in range(wr, w):
                docs[o, c] = 0
        o = out + n
        for j in range(j0, jhi[e]):
            if used[j - j0]:
                continue
            labels[o] = jval[j]
            known[o] = True
            for c in range(wj):
                docs[o, c] = jrows[j, c]
            for c in range(wj, w):
                docs[o, c] = 0
            o += 1
        # the docno tie key, for the ranked documents that share a score only; a run lists a
        # query's documents by score (trec_eval's output, most runs): then the documents of
        # one score stand together, in index order, as the stable sort below would group them
        down = True
        up = True
        for p in range(1, n):
            if not scores[out + p] <= scores[out + p - 1]:  # (a NaN: neither, the sort)
                down = False
            if not scores[out + p] >= scores[out + p - 1]:
                up = False
            if not (down or up):
                break
        if down or up:
            p = 0
            while p < n:
                g = p + 1
                while g < n and scores[out + g] == scores[out + p]:
                    g += 1
                if g - p > 1:
                    for t in range(g - p):
                        idx[t] = out + p + t
                    byte_msort(idx, g - p, docs, tmp)
                    for t in range(g - p):
                        key[idx[t]] = -float(t)
                p = g
            continue
        v = vals[:n]
        v.sort()
        tied = False
        for p in range(1, n):
            if v[p] == v[p - 1]:
                tied = True
                break
        if not tied:
            continue
        order = np.argsort(scores[out : out + n], kind="mergesort")
        p = 0
        while p < n:
            g = p + 1
            while g < n and scores[out + order[g]] == scores[out + order[p]]:
                g += 1
            if g - p > 1:
                for t in range(g - p):
                    idx[t] = out + order[p + t]
                byte_msort(idx, g - p, docs, tmp)
                for t in range(g - p):
                    key[idx[t]] = -float(t)
            p = g
