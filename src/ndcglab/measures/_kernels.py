"""Numba kernels: every query at once, from flat arrays and ``boundaries``.

Conventions shared by the kernels (the Python layer in :mod:`ndcglab.measures.compute` prepares
the inputs):

* query ``q`` owns documents ``bnd[q]:bnd[q+1]``; only ``bnd[q]:rend[q]`` are *ranked* (the run);
  the rest (``rend[q]:bnd[q+1]``) are judged but not retrieved — they count in the ideal DCG and
  in the number of relevant documents, never in the ranking (``evaluate_trec``). Usually
  ``rend = bnd[1:]``.
* ranking order: score descending, then ``tkey`` ascending, then document index ascending — a
  strict total order, so the result never depends on the sorting algorithm. ``tkey`` encodes the
  tie rule (zeros: input order; −docid rank; label; −label; random numbers).
* ``average``: documents with equal scores form a group; each position of the group gets the
  group's mean gain (mean relevance), which is the expectation over all orders of the group.
* per-document values (gain, relevance) come from ``_val``: mode 0 an array per document, 1 a
  table indexed by the integer label, 2 the label itself, 3 the indicator ``label >= thr``.
* discount ``D(r)`` (``r`` 1-based) from ``_disc``: mode 0 a table ``darr[r-1]``, 1 ``N - r``
  (linear, ``N`` = documents of the query), 2 a per-document flat table ``darr[bnd[q] + r - 1]``.
* work is split into ``nchunks`` contiguous chunks of queries run in parallel (``prange``); each
  chunk allocates its scratch buffers once.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["gain_kernel", "integer_label_max", "pairwise_kernel", "rel_kernel"]


@njit(cache=True)
def _before(s, t, a, b):  # pragma: no cover - compiled
    """True when document ``a`` ranks before document ``b``."""
    sa = s[a]
    sb = s[b]
    if sa > sb:
        return True
    if sa < sb:
        return False
    ta = t[a]
    tb = t[b]
    if ta < tb:
        return True
    if ta > tb:
        return False
    return a < b


@njit(cache=True)
def _val(mode, tab, arr, thr, labels, i):  # pragma: no cover - compiled
    if mode == 1:
        return tab[int(labels[i])]
    if mode == 2:
        return labels[i]
    if mode == 3:
        return 1.0 if labels[i] >= thr else 0.0
    return arr[i]


@njit(cache=True)
def _disc(dmode, darr, r, nall, lo):  # pragma: no cover - compiled
    if dmode == 0:
        return darr[r - 1]
    if dmode == 1:
        return float(nall - r)
    return darr[lo + r - 1]


@njit(cache=True)
def _sort_range(idx, n, s, t, tmp):  # pragma: no cover - compiled
    """Sort ``idx[:n]`` (document indices) into ranking order: insertion-sorted runs of 16,
    then bottom-up merges."""
    run = 16
    for lo in range(0, n, run):
        hi = min(lo + run, n)
        for i in range(lo + 1, hi):
            x = idx[i]
            j = i
            while j > lo and _before(s, t, x, idx[j - 1]):
                idx[j] = idx[j - 1]
                j -= 1
            idx[j] = x
    width = run
    in_idx = True
    while width < n:
        if in_idx:
            src = idx
            dst = tmp
        else:
            src = tmp
            dst = idx
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if _before(s, t, src[j], src[i]):
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


@njit(cache=True)
def _topk(lo, hi, k, s, t, buf):  # pragma: no cover - compiled
    """The first ``k`` documents of ``lo:hi`` in ranking order, into ``buf``; returns the count."""
    cnt = 0
    for i in range(lo, hi):
        if cnt < k:
            j = cnt
            cnt += 1
        elif _before(s, t, i, buf[k - 1]):
            j = k - 1
        else:
            continue
        while j > 0 and _before(s, t, i, buf[j - 1]):
            buf[j] = buf[j - 1]
            j -= 1
        buf[j] = i
    return cnt


@njit(cache=True)
def _average_groups(idx, n, s, g):  # pragma: no cover - compiled
    """Replace ``g[:n]`` (values in ranking order ``idx``) by their tied group's mean."""
    p = 0
    while p < n:
        e = p + 1
        sp = s[idx[p]]
        tot = g[p]
        while e < n and s[idx[e]] == sp:
            tot += g[e]
            e += 1
        if e - p > 1:
            m = tot / (e - p)
            for u in range(p, e):
                g[u] = m
        p = e


@njit(cache=True)
def integer_label_max(labels):  # pragma: no cover - compiled
    """The largest label when every label is a whole number in [0, 4096), else -1."""
    mx = 0.0
    for i in range(labels.shape[0]):
        y = labels[i]
        if not (y >= 0.0 and y < 4096.0) or y != np.floor(y):
            return -1
        if y > mx:
            mx = y
    return int(mx)


@njit(cache=True, nogil=True)
def gain_kernel(labels, scores, tkey, bnd, rend, gmode, gtab, garr, dmode, darr, ks, average,
                want_mean, nchunks, sel_limit):  # pragma: no cover - compiled
    """DCG@k and IDCG@k for every query and every column of ``ks`` (``(Q, C)`` int64; a k at
    least the list's length means the whole list), and the LETOR MeanNDCG when ``want_mean``.

    Returns ``dcg (Q, C)``, ``idcg (Q, C)``, ``mean (Q,)``. DCG sums over the ranked documents
    (positions beyond the list hold nothing); IDCG@k over the top k of all documents of the query.
    A fixed k at most ``sel_limit`` and below half the list uses top-k selection instead of a
    full sort (same order, fewer comparisons).
    """
    nq = bnd.shape[0] - 1
    nc = ks.shape[1]
    dcg = np.zeros((nq, nc))
    idcg = np.zeros((nq, nc))
    mean = np.zeros(nq)
    for c in range(nchunks):
        q0 = c * nq // nchunks
        q1 = (c + 1) * nq // nchunks
        maxn = 1
        for q in range(q0, q1):
            maxn = max(maxn, bnd[q + 1] - bnd[q])
        idx = np.empty(maxn, np.int64)
        tmp = np.empty(maxn, np.int64)
        g = np.empty(maxn)
        ig = np.empty(maxn)
        iidx = np.empty(maxn, np.int64)
        zk = np.zeros(maxn)
        cum = np.empty(maxn + 1)
        icum = np.empty(maxn + 1)
        for q in range(q0, q1):
            lo = bnd[q]
            hi = bnd[q + 1]
            re = rend[q]
            n = re - lo
            nall = hi - lo
            kmax = 0
            for j in range(nc):
                kmax = max(kmax, min(ks[q, j], nall))
            kr = min(kmax, n)
            if (not want_mean) and kmax <= sel_limit and 2 * kr < n:
                # ---- top-k selection of the ranking
                cnt = _topk(lo, re, kr, scores, tkey, idx)
                for p in range(cnt):
                    g[p] = _val(gmode, gtab, garr, 0.0, labels, idx[p])
                if average and cnt > 0:
                    t = scores[idx[cnt - 1]]
                    above = 0
                    m = 0
                    gt = 0.0
                    for i in range(lo, re):
                        if scores[i] > t:
                            above += 1
                        elif scores[i] == t:
                            m += 1
                            gt += _val(gmode, gtab, garr, 0.0, labels, i)
                    _average_groups(idx, above, scores, g)
                    for p in range(above, cnt):
                        g[p] = gt / m
                cum[0] = 0.0
                for p in range(cnt):
                    cum[p + 1] = cum[p] + g[p] * _disc(dmode, darr, p + 1, nall, lo)
                # ---- ideal: top-k gains of all documents
                ki = min(kmax, nall)
                icnt = 0
                for i in range(lo, hi):
                    v = _val(gmode, gtab, garr, 0.0, labels, i)
                    if icnt < ki:
                        j = icnt
                        icnt += 1
                    elif v > ig[ki - 1]:
                        j = ki - 1
                    else:
                        continue
                    while j > 0 and v > ig[j - 1]:
                        ig[j] = ig[j - 1]
                        j -= 1
                    ig[j] = v
                icum[0] = 0.0
                for p in range(icnt):
                    icum[p + 1] = icum[p] + ig[p] * _disc(dmode, darr, p + 1, nall, lo)
            else:
                # ---- full sort
                for p in range(n):
                    idx[p] = lo + p
                _sort_range(idx, n, scores, tkey, tmp)
                for p in range(n):
                    g[p] = _val(gmode, gtab, garr, 0.0, labels, idx[p])
                if average:
                    _average_groups(idx, n, scores, g)
                cum[0] = 0.0
                for p in range(n):
                    cum[p + 1] = cum[p] + g[p] * _disc(dmode, darr, p + 1, nall, lo)
                for p in range(nall):
                    ig[p] = _val(gmode, gtab, garr, 0.0, labels, lo + p)
                    iidx[p] = p
                _sort_range(iidx, nall, ig, zk, tmp)
                icum[0] = 0.0
                for p in range(nall):
                    icum[p + 1] = icum[p] + ig[iidx[p]] * _disc(dmode, darr, p + 1, nall, lo)
                if want_mean and n > 0:
                    acc = 0.0
                    for p in range(1, n + 1):
                        if icum[p] != 0.0:
                            acc += cum[p] / icum[p]
                    mean[q] = acc / n
            for j in range(nc):
                k = ks[q, j]
                dcg[q, j] = cum[min(k, n)]  # min(k, n) <= kr on the selection path
                idcg[q, j] = icum[min(k, nall)]
    return dcg, idcg, mean


@njit(cache=True, nogil=True)
def rel_kernel(labels, scores, tkey, bnd, rend, rmode, rtab, rarr, thr, pk, ak, rk, average,
               nchunks):  # pragma: no cover - compiled
    """Binary-relevance statistics for every query (full sort of the ranked documents).

    ``pk``, ``ak``, ``rk`` are ``(Q, C)`` cut-offs for P, AP and RR. Returns ``hits (Q, Cp)``
    (relevant docs in the top min(k, n); expected count under ``average``), ``apsum (Q, Ca)``
    (sum of P@r over relevant positions r <= k; tie-aware expectation under ``average``,
    McSherry & Najork 2008), ``rr (Q, Cr)`` (1/position of the first relevant doc if within k,
    expectation under ``average``) and ``nrel (Q,)`` (relevant docs among all of the query's
    documents, ranked or not).
    """
    nq = bnd.shape[0] - 1
    hits = np.zeros((nq, pk.shape[1]))
    apsum = np.zeros((nq, ak.shape[1]))
    rr = np.zeros((nq, rk.shape[1]))
    nrel = np.zeros(nq)
    for c in range(nchunks):
        q0 = c * nq // nchunks
        q1 = (c + 1) * nq // nchunks
        maxn = 1
        for q in range(q0, q1):
            maxn = max(maxn, bnd[q + 1] - bnd[q])
        idx = np.empty(maxn, np.int64)
        tmp = np.empty(maxn, np.int64)
        v = np.empty(maxn)
        hc = np.empty(maxn + 1)
        apc = np.empty(maxn + 1)
        for q in range(q0, q1):
            lo = bnd[q]
            hi = bnd[q + 1]
            re = rend[q]
            n = re - lo
            tot = 0.0
            for i in range(lo, hi):
                tot += _val(rmode, rtab, rarr, thr, labels, i)
            nrel[q] = tot
            for p in range(n):
                idx[p] = lo + p
            _sort_range(idx, n, scores, tkey, tmp)
            for p in range(n):
                v[p] = _val(rmode, rtab, rarr, thr, labels, idx[p])
            hc[0] = 0.0
            apc[0] = 0.0
            first = -1.0
            rrpos = np.zeros(0)
            rrp = np.zeros(0)
            if not average:
                for p in range(n):
                    hc[p + 1] = hc[p] + v[p]
                    apc[p + 1] = apc[p] + v[p] * hc[p + 1] / (p + 1)
                    if first < 0.0 and v[p] > 0.0:
                        first = p + 1.0
            else:
                p = 0
                while p < n:
                    e = p + 1
                    sp = scores[idx[p]]
                    crel = v[p]
                    while e < n and scores[idx[e]] == sp:
                        crel += v[e]
                        e += 1
                    gsz = e - p
                    r0 = hc[p]
                    for u in range(gsz):
                        pos = p + u + 1
                        hc[pos] = hc[pos - 1] + crel / gsz
                        if gsz == 1:
                            contrib = crel * (r0 + 1.0) / pos
                        else:
                            contrib = (crel / gsz) * (r0 + 1.0 + u * (crel - 1.0) / (gsz - 1.0)) / pos
                        apc[pos] = apc[pos - 1] + contrib
                    if first < 0.0 and crel > 0.0:
                        # expected reciprocal rank: P(first relevant at offset m) for m = 1..
                        first = 0.0
                        m_max = int(gsz - crel + 1)
                        rrpos = np.empty(m_max)
                        rrp = np.empty(m_max)
                        none_before = 1.0
                        for m in range(1, m_max + 1):
                            rrpos[m - 1] = p + m
                            rrp[m - 1] = none_before * crel / (gsz - m + 1)
                            none_before *= (gsz - crel - (m - 1)) / (gsz - (m - 1))
                    p = e
            for j in range(pk.shape[1]):
                hits[q, j] = hc[min(pk[q, j], n)]
            for j in range(ak.shape[1]):
                apsum[q, j] = apc[min(ak[q, j], n)]
            for j in range(rk.shape[1]):
                k = rk[q, j]
                if not average:
                    if first > 0.0 and first <= k:
                        rr[q, j] = 1.0 / first
                else:
                    acc = 0.0
                    for m in range(rrpos.shape[0]):
                        if rrpos[m] <= k:
                            acc += rrp[m] / rrpos[m]
                    rr[q, j] = acc
    return hits, apsum, rr, nrel


@njit(cache=True, nogil=True)
def pairwise_kernel(labels, scores, tkey, bnd, average, nchunks):  # pragma: no cover - compiled
    """Jin & Geng's label-gap-weighted pairwise loss R(f) per query in O(n log n).

    ``R = sum over pairs with y_i > y_j ranked i below j of (y_i - y_j)``: documents are visited
    in ranking order and a Fenwick tree over the query's label values holds the count and label
    sum of the documents already visited (ranked above). Under ``average`` a pair with equal
    scores counts half (the expectation over the orders of the tied group).
    """
    nq = bnd.shape[0] - 1
    out = np.zeros(nq)
    for c in range(nchunks):
        q0 = c * nq // nchunks
        q1 = (c + 1) * nq // nchunks
        maxn = 1
        for q in range(q0, q1):
            maxn = max(maxn, bnd[q + 1] - bnd[q])
        idx = np.empty(maxn, np.int64)
        tmp = np.empty(maxn, np.int64)
        fc = np.zeros(maxn + 1)
        fs = np.zeros(maxn + 1)
        grp = np.empty(maxn)
        for q in range(q0, q1):
            lo = bnd[q]
            n = bnd[q + 1] - lo
            if n < 2:
                continue
            uniq = np.unique(labels[lo:lo + n])
            m = uniq.shape[0]
            for i in range(m + 1):
                fc[i] = 0.0
                fs[i] = 0.0
            for p in range(n):
                idx[p] = lo + p
            _sort_range(idx, n, scores, tkey, tmp)
            total = 0.0
            p = 0
            while p < n:
                e = p + 1
                if average:
                    while e < n and scores[idx[e]] == scores[idx[p]]:
                        e += 1
                for u in range(p, e):
                    y = labels[idx[u]]
                    r = np.searchsorted(uniq, y)  # labels strictly below y: ranks 0..r-1
                    cnt = 0.0
                    sm = 0.0
                    i = r
                    while i > 0:
                        cnt += fc[i]
                        sm += fs[i]
                        i -= i & (-i)
                    total += cnt * y - sm
                if e - p > 1:
                    gsz = e - p
                    for u in range(gsz):
                        grp[u] = labels[idx[p + u]]
                    srt = np.sort(grp[:gsz])
                    acc = 0.0
                    for u in range(gsz):
                        acc += srt[u] * (2.0 * u - gsz + 1.0)
                    total += 0.5 * acc
                for u in range(p, e):
                    y = labels[idx[u]]
                    i = np.searchsorted(uniq, y) + 1
                    while i <= m:
                        fc[i] += 1.0
                        fs[i] += y
                        i += i & (-i)
                p = e
            out[q] = total
    return out
