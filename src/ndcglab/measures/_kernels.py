# mypy: allow-untyped-defs
# (numba infers the kernels' types from their arguments; the docstrings state them)
"""Numba kernels shared by every measure: the ranking sort, tie detection, the pairwise loss.

The kernels of :mod:`ndcglab.measures` work on every query at once, from flat arrays and
``boundaries`` (query ``q`` owns documents ``bnd[q]:bnd[q+1]``; only ``bnd[q]:rend[q]`` are
*ranked* — the rest are judged but not retrieved, as in :func:`~ndcglab.measures.evaluate_trec`).
The gain family (DCG, NDCG, MeanNDCG) lives in :mod:`._gain_kernels`, the relevance family (AP,
P@k, RR) in :mod:`._rel_kernels`; :mod:`ndcglab.measures.compute` prepares their inputs from the
:class:`~ndcglab.measures.Gain` and :class:`~ndcglab.measures.Discount` objects and the tie key
of :func:`ndcglab.measures.conventions.tie_key`.

* Ranking order (:func:`msort`): score descending, then ``tkey`` ascending, then document index
  ascending — a strict total order, so a result never depends on the sorting algorithm. ``tkey``
  encodes the order-based tie rule (zeros: input order; −docid rank; gain; −gain; random).
* Each kernel handles queries ``q0:q1`` and writes into the given output arrays; the caller runs
  disjoint query ranges on several threads (``nogil``, :func:`._parallel.run_kernel`). Scratch
  buffers are allocated once per call.

Compile time matters (a fresh process with an empty cache compiles on first use: NDCG@1..10 +
MAP takes about 3 s, 0.7 s of it for the vectorised counting of :func:`positions`; inputs under
200,000 documents — 2 million while Numba is not loaded, for a while (:func:`._small.fits`) —
never compile: they take the NumPy path of :mod:`._small`): the kernels are few, call only small
helpers, and use no NumPy sorting routines.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "count_budget",
    "label_span",
    "msort",
    "nonzero_of",
    "pairwise_kernel",
    "positions",
    "rank_order_kernel",
    "ranked_order_kernel",
    "tie_flags_kernel",
    "tied_query_kernel",
]


@njit(cache=True, nogil=True, inline="always")
def longest(bnd, q0, q1):  # pragma: no cover - compiled
    """The length of the longest of the lists ``q0:q1`` (``bnd``: query boundaries), at least 1:
    the size of a kernel's scratch arrays."""
    maxn = 1
    for q in range(q0, q1):
        maxn = max(maxn, bnd[q + 1] - bnd[q])
    return maxn


@njit(cache=True, nogil=True, inline="always")
def in_order(idx, n, s, t):  # pragma: no cover - compiled
    """Whether ``idx[:n]`` already stands in :func:`msort`'s order: each index strictly before
    the next by ``s`` descending, ``t`` ascending, index ascending (a NaN compares as neither,
    so a list holding one is never in order). ``t`` is read where ``s`` ties only, as the sort
    reads it. One pass, which stops at the first pair out of order: a run listed by score (as
    TREC runs are written) is ranked as it stands, a shuffled list costs a comparison or two."""
    for p in range(n - 1):
        a = idx[p]
        b = idx[p + 1]
        if not (s[a] > s[b] or (s[a] == s[b] and (t[a] < t[b] or (t[a] == t[b] and a < b)))):
            return False
    return True


@njit(cache=True, nogil=True)
def msort(idx, n, s, t, tmp):  # pragma: no cover - compiled
    """Sort ``idx[:n]`` (indices into ``s``/``t``) by ``s`` descending, ``t`` ascending, index
    ascending: insertion-sorted runs of 16, then bottom-up merges through ``tmp`` (nothing to
    do when :func:`in_order`: a stable sort of an ordered list leaves it as it is)."""
    if in_order(idx, n, s, t):
        return
    run = 16
    for lo in range(0, n, run):
        hi = min(lo + run, n)
        for i in range(lo + 1, hi):
            x = idx[i]
            sx = s[x]
            tx = t[x]
            j = i
            while j > lo:
                b = idx[j - 1]
                sb = s[b]
                if sx > sb or (sx == sb and (tx < t[b] or (tx == t[b] and x < b))):
                    idx[j] = b
                    j -= 1
                else:
                    break
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
                a = src[i]
                b = src[j]
                sa = s[a]
                sb = s[b]
                if sb > sa or (sb == sa and (t[b] < t[a] or (t[b] == t[a] and b < a))):
                    dst[k] = b
                    j += 1
                else:
                    dst[k] = a
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


@njit(cache=True, nogil=True)
def count_budget(n):  # pragma: no cover - compiled
    """How many passes over an ``n``-document list :func:`positions` may make before a sort
    (:func:`msort`) would have been cheaper: ``32 * ceil(log2 n)``. A pass is one vectorised
    scan of the list; the sort costs ~n * log2(n) unpredictable branches, measured at about
    ``40 * log2(n)`` passes (AVX-512, the lists of ``benchmarks/bench_measures.py``). Either
    way the ranking is the same; only the time differs. A list of 2^31 documents or more gets
    -1 (always sorted: the counts are 32-bit)."""
    if n >= 1 << 31:
        return -1
    lg = 1
    while (1 << lg) < n:
        lg += 1
    return 32 * lg


@njit(cache=True, nogil=True, inline="always")
def nonzero_of(x, off, n, which):  # pragma: no cover - compiled
    """``which[:na]`` = the ``i < n`` with ``x[off + i] != 0`` in order, written without a branch
    (which of them are non-zero is unpredictable); returns ``na``."""
    na = 0
    for i in range(n):
        which[na] = i
        na += np.int64(x[off + i] != 0.0)
    return na


@njit(cache=True, nogil=True)
def positions(scores, tkey, lo, n, which, na, pos, budget):  # pragma: no cover - compiled
    """``pos[a]`` = 0-based position of document ``lo + which[a]`` (a < ``na``) in the ranking
    of documents ``lo : lo + n`` by :func:`msort`'s order (score descending, ``tkey``
    ascending, index ascending): the number of documents ranked before it, counted with
    branch-free comparisons that the compiler vectorises — one pass over the list per document,
    two more when its score is tied. Returns False, its work unfinished, as soon as it would
    exceed ``budget`` passes (many tied scores) or meets a NaN key: the caller then sorts the
    list. A list already in that order (:func:`in_order`; a run listed by score) takes one pass:
    each position is the document's index."""
    s = scores[lo : lo + n]
    in_place = True  # the list already in the order (see :func:`in_order`): positions = indices
    for j in range(n - 1):
        if not (s[j] > s[j + 1] or (s[j] == s[j + 1] and tkey[lo + j] <= tkey[lo + j + 1])):
            in_place = False
            break
    if in_place:
        for a in range(na):
            pos[a] = which[a]
        return True
    used = 0
    for a in range(na):
        i = which[a]
        si = s[i]
        c = np.int32(0)
        e = np.int32(0)
        for j in range(n):
            c += np.int32(s[j] > si)
            e += np.int32(s[j] == si)
        used += 1
        if e == 0:  # a NaN key ranks nowhere: let the sort decide, as it always has
            return False
        if e > 1:
            t = tkey[lo : lo + n]
            ti = t[i]
            for j in range(n):
                c += np.int32((s[j] == si) & (t[j] < ti))
            for j in range(i):
                c += np.int32((s[j] == si) & (t[j] == ti))
            used += 2
        pos[a] = c
        if a < na - 1 and used + (na - a - 1) > budget:
            return False
    return True


@njit(cache=True, nogil=True)
def pairwise_kernel(labels, scores, tkey, bnd, average, q0, q1, out):  # pragma: no cover - compiled
    """Jin & Geng's label-gap-weighted pairwise loss R(f) per query, O(n log n).

    ``R = sum over pairs with y_i > y_j where i ranks below j of (y_i − y_j)``. Documents are
    visited in ranking order; a Fenwick tree over the query's distinct label values holds the
    count and the label sum of the documents visited so far (ranked above). Under ``average`` a
    pair with equal scores counts half (the expectation over the orders of the tied group).
    """
    maxn = longest(bnd, q0, q1)
    idx = np.empty(maxn, np.int64)
    tmp = np.empty(maxn, np.int64)
    lidx = np.empty(maxn, np.int64)
    zk = np.zeros(maxn)
    uniq = np.empty(maxn)
    rank = np.empty(maxn, np.int64)
    fc = np.zeros(maxn + 1)
    fs = np.zeros(maxn + 1)
    for q in range(q0, q1):
        lo = bnd[q]
        n = bnd[q + 1] - lo
        out[q] = 0.0
        if n < 2:
            continue
        # distinct labels, ascending; rank[p] = 1-based rank of document lo + p's label
        for p in range(n):
            lidx[p] = lo + p
        msort(lidx, n, labels, zk, tmp)  # descending labels
        m = 0
        for p in range(n - 1, -1, -1):
            y = labels[lidx[p]]
            if m == 0 or uniq[m - 1] != y:
                uniq[m] = y
                m += 1
            rank[lidx[p] - lo] = m
        for i in range(m + 1):
            fc[i] = 0.0
            fs[i] = 0.0
        for p in range(n):
            idx[p] = lo + p
        msort(idx, n, scores, tkey, tmp)
        total = 0.0
        p = 0
        while p < n:
            e = p + 1
            if average:
                while e < n and scores[idx[e]] == scores[idx[p]]:
                    e += 1
            for u in range(p, e):
                y = labels[idx[u]]
                cnt = 0.0
                sm = 0.0
                i = rank[idx[u] - lo] - 1  # ranks strictly below y
                while i > 0:
                    cnt += fc[i]
                    sm += fs[i]
                    i -= i & (-i)
                total += cnt * y - sm
            if e - p > 1:
                # pairs inside the tied group: half of sum |y_a - y_b|
                gsz = e - p
                for u in range(gsz):
                    lidx[u] = idx[p + u]
                msort(lidx, gsz, labels, zk, tmp)  # descending
                acc = 0.0
                for u in range(gsz):
                    acc += labels[lidx[u]] * (gsz - 1.0 - 2.0 * u)
                total += 0.5 * acc
            for u in range(p, e):
                y = labels[idx[u]]
                i = rank[idx[u] - lo]
                while i <= m:
                    fc[i] += 1.0
                    fs[i] += y
                    i += i & (-i)
            p = e
        out[q] = total


@njit(cache=True, nogil=True)
def tie_flags_kernel(scores, zeros, bnd, rend, q0, q1, out):  # pragma: no cover - compiled
    """``out[i] = True`` when ranked document ``i`` shares its score with another ranked document
    of its query (only such documents need a tie-breaking key); ``zeros``: ``(N,)`` zeros. The
    score values are sorted first (a direct sort); only a query with a repeated value is sorted
    by index to find its tied documents."""
    maxn = longest(bnd, q0, q1)
    idx = np.empty(maxn, np.int64)
    tmp = np.empty(maxn, np.int64)
    vals = np.empty(maxn)
    for q in range(q0, q1):
        lo = bnd[q]
        n = rend[q] - lo
        v = vals[:n]
        for p in range(n):
            v[p] = scores[lo + p]
        v.sort()  # the score values alone first: most queries have no tie at all
        tied = False
        for p in range(1, n):
            if v[p] == v[p - 1]:
                tied = True
                break
        if not tied:
            continue
        for p in range(n):
            idx[p] = lo + p
        msort(idx, n, scores, zeros, tmp)
        for p in range(1, n):
            if scores[idx[p]] == scores[idx[p - 1]]:
                out[idx[p]] = True
                out[idx[p - 1]] = True


@njit(cache=True, nogil=True)
def label_span(labels):  # pragma: no cover - compiled
    """``(lowest, highest, every label a whole number)`` of a non-empty float array, in one
    pass (NaN-free input)."""
    lo = labels[0]
    hi = labels[0]
    whole = True
    for x in labels:
        lo = min(lo, x)
        hi = max(hi, x)
        whole &= x == np.floor(x)
    return lo, hi, whole


@njit(cache=True, nogil=True)
def tied_query_kernel(bits, bnd, rend, q0, q1, out):  # pragma: no cover - compiled
    """``out[q] = True`` when two ranked documents of query ``q`` have equal scores. ``bits``:
    the scores' IEEE-754 bit patterns (``uint64``, −0.0 already made +0.0, no NaN), so that two
    scores are equal exactly when their bits are. No sort: each score goes into an open-addressing
    hash table of at least twice the list's length (Fibonacci hashing, linear probing), and the
    first score met twice ends the query — linear time, and a tied query stops early."""
    maxn = 1
    for q in range(q0, q1):
        maxn = max(maxn, rend[q] - bnd[q])
    size = 2
    while size < 2 * maxn:
        size *= 2
    table = np.empty(size, np.uint64)
    stamp = np.zeros(size, np.int64)  # stamp[slot] == q + 1: slot holds a score of query q
    mult = np.uint64(0x9E3779B97F4A7C15)
    for q in range(q0, q1):
        lo = bnd[q]
        n = rend[q] - lo
        if n < 2:
            continue
        log = 1
        while (1 << log) < 2 * n:
            log += 1
        shift = np.uint64(64 - log)
        mask = (1 << log) - 1
        mark = q + 1
        for i in range(lo, lo + n):
            x = bits[i]
            slot = np.int64((x * mult) >> shift)
            while stamp[slot] == mark and table[slot] != x:
                slot = (slot + 1) & mask
            if stamp[slot] == mark:
                out[q] = True
                break
            stamp[slot] = mark
            table[slot] = x


@njit(cache=True, nogil=True)
def ranked_order_kernel(scores, tkey, bnd, rend, q0, q1, order):  # pragma: no cover - compiled
    """``order[bnd[q] : rend[q]]`` = the ranked documents of query ``q`` (global indices) in
    ranking order (:func:`msort`: score descending, ``tkey`` ascending, index ascending);
    ``order[rend[q] : bnd[q+1]]`` = its unranked documents in input order."""
    maxn = longest(bnd, q0, q1)
    tmp = np.empty(maxn, np.int64)
    for q in range(q0, q1):
        lo = bnd[q]
        hi = bnd[q + 1]
        for i in range(lo, hi):
            order[i] = i
        msort(order[lo : rend[q]], rend[q] - lo, scores, tkey, tmp)


@njit(cache=True, nogil=True)
def rank_order_kernel(scores, tkey, bnd, q0, q1, order):  # pragma: no cover - compiled
    """``order[bnd[q]:bnd[q+1]]`` = the documents of query ``q`` (global indices) in ranking
    order: :func:`ranked_order_kernel` with every document ranked."""
    ranked_order_kernel(scores, tkey, bnd, bnd[1:], q0, q1, order)
