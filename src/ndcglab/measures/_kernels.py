"""Numba kernels: every query at once, from flat arrays and ``boundaries``.

Conventions shared by the kernels (:mod:`ndcglab.measures.compute` prepares the inputs):

* query ``q`` owns documents ``bnd[q]:bnd[q+1]``; only ``bnd[q]:rend[q]`` are *ranked* (the run);
  the rest are judged but not retrieved — they count in the ideal DCG and in the number of
  relevant documents, never in the ranking (``evaluate_trec``). Usually ``rend = bnd[1:]``.
* ranking order: score descending, then ``tkey`` ascending, then document index ascending — a
  strict total order, so the result never depends on the sorting algorithm. ``tkey`` encodes the
  tie rule (zeros: input order; −docid rank; gain; −gain; random numbers).
* ``average``: documents with equal scores form a group; each position of the group gets the
  group's mean gain (mean relevance), the expectation over all orders of the group.
* per-document gain (``gmode``): 0 ``garr[i]``; 1 ``2^y − 1`` (table ``gtab`` for whole labels in
  range); 2 ``y``; 3 table ``gtab`` for whole labels in range, else ``gdef``.
  Relevance (``rmode``): 0 ``rarr[i]``; 3 ``y >= thr``; 4 ``y in {1, 2}`` (LETOR).
* discount ``D(r)`` (``r`` 1-based, ``dmode``): 0 table ``darr[r-1]``; 1 ``N − r`` (linear, ``N`` =
  documents of the query); 2 per-document flat table ``darr[bnd[q] + r − 1]``.
* each kernel handles queries ``q0:q1`` and writes into the given output arrays; the caller runs
  disjoint query ranges on several threads (``nogil``). Scratch buffers are allocated once per call.

Compile time matters (a fresh process compiles on first use, target < 2 s per entry point):
the kernels are few, call only :func:`_msort`, and use no NumPy sorting routines.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "full_gain_kernel",
    "pairwise_kernel",
    "rank_rel_kernel",
    "rel_average_kernel",
    "tie_flags_kernel",
    "topk_gain_kernel",
]


@njit(cache=True, nogil=True)
def _msort(idx, n, s, t, tmp):  # pragma: no cover - compiled
    """Sort ``idx[:n]`` (indices into ``s``/``t``) by ``s`` descending, ``t`` ascending, index
    ascending: insertion-sorted runs of 16, then bottom-up merges through ``tmp``."""
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
def _fill_gains(labels, lo, nall, gmode, gtab, gdef, garr, gq):  # pragma: no cover - compiled
    """``gq[p]`` = the gain of document ``lo + p`` (p < nall). ``gmode``: 0 precomputed ``garr``;
    1 a table ``gtab`` for labels 0..len-1, else 2^y - 1; 2 linear (y); 3 the table, else
    ``gdef``."""
    ntab = gtab.shape[0]
    for p in range(nall):
        y = labels[lo + p]
        if gmode == 0:
            v = garr[lo + p]
        elif gmode == 2:
            v = y
        else:
            yi = int(y)
            if yi == y and yi >= 0 and yi < ntab:
                v = gtab[yi]
            elif gmode == 1:
                v = 2.0**y - 1.0
            else:
                v = gdef
        gq[p] = v


@njit(cache=True, nogil=True)
def topk_gain_kernel(
    labels, scores, tkey, bnd, rend, gmode, gtab, gdef, garr, darr, ks, q0, q1, dcg, idcg
):  # pragma: no cover - compiled
    """DCG@k and IDCG@k by top-k selection (no full sort), for fixed cut-offs ``ks`` ``(Q, C)``,
    a discount table ``darr`` and a tie rule other than ``average``.

    A document enters the sorted top-k buffer only when it ranks before the current k-th one;
    the ideal keeps the k largest gains of all the query's documents the same way.
    """
    nc = ks.shape[1]
    maxn = 1
    for q in range(q0, q1):
        maxn = max(maxn, bnd[q + 1] - bnd[q])
    buf = np.empty(maxn, np.int64)
    gq = np.empty(maxn)
    ig = np.empty(maxn)
    cum = np.empty(maxn + 1)
    icum = np.empty(maxn + 1)
    for q in range(q0, q1):
        lo = bnd[q]
        hi = bnd[q + 1]
        re = rend[q]
        n = re - lo
        nall = hi - lo
        _fill_gains(labels, lo, nall, gmode, gtab, gdef, garr, gq)
        kmax = 0
        for j in range(nc):
            kmax = max(kmax, min(ks[q, j], nall))
        kr = min(kmax, n)
        cnt = 0
        if kr > 0:
            for i in range(lo, re):
                si = scores[i]
                ti = tkey[i]
                if cnt < kr:
                    j = cnt
                    cnt += 1
                else:
                    b = buf[kr - 1]
                    sb = scores[b]
                    if si > sb or (si == sb and (ti < tkey[b] or (ti == tkey[b] and i < b))):
                        j = kr - 1
                    else:
                        continue
                while j > 0:
                    b = buf[j - 1]
                    sb = scores[b]
                    if si > sb or (si == sb and (ti < tkey[b] or (ti == tkey[b] and i < b))):
                        buf[j] = b
                        j -= 1
                    else:
                        break
                buf[j] = i
        cum[0] = 0.0
        for p in range(cnt):
            cum[p + 1] = cum[p] + gq[buf[p] - lo] * darr[p]
        ki = min(kmax, nall)
        icnt = 0
        if ki > 0:
            for p in range(nall):
                v = gq[p]
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
            icum[p + 1] = icum[p] + ig[p] * darr[p]
        for j in range(nc):
            k = ks[q, j]
            dcg[q, j] = cum[min(k, n)]
            idcg[q, j] = icum[min(k, nall)]


@njit(cache=True, nogil=True)
def full_gain_kernel(
    labels,
    scores,
    tkey,
    bnd,
    rend,
    gmode,
    gtab,
    gdef,
    garr,
    dmode,
    darr,
    ks,
    average,
    want_mean,
    q0,
    q1,
    dcg,
    idcg,
    mean,
):  # pragma: no cover - compiled
    """DCG@k and IDCG@k with a full sort, for any cut-offs ``ks`` ``(Q, C)`` (k at least the
    list's length = whole list), any discount mode, any tie rule (``average`` included); and the
    LETOR MeanNDCG ``(1/n) sum_{k=1..n} DCG@k / IDCG@k`` (0 where IDCG@k = 0) when ``want_mean``.
    DCG sums over ranked documents only; IDCG@k over the top k gains of all documents."""
    nc = ks.shape[1]
    maxn = 1
    for q in range(q0, q1):
        maxn = max(maxn, bnd[q + 1] - bnd[q])
    idx = np.empty(maxn, np.int64)
    tmp = np.empty(maxn, np.int64)
    gq = np.empty(maxn)
    g = np.empty(maxn)
    zk = np.zeros(maxn)
    cum = np.empty(maxn + 1)
    icum = np.empty(maxn + 1)
    for q in range(q0, q1):
        lo = bnd[q]
        hi = bnd[q + 1]
        re = rend[q]
        n = re - lo
        nall = hi - lo
        _fill_gains(labels, lo, nall, gmode, gtab, gdef, garr, gq)
        allzero = True
        for p in range(nall):
            if gq[p] != 0.0:
                allzero = False
                break
        if allzero:  # DCG = IDCG = 0 at every cut-off: nothing to sort
            for j in range(nc):
                dcg[q, j] = 0.0
                idcg[q, j] = 0.0
            mean[q] = 0.0
            continue
        # ranking
        for p in range(n):
            idx[p] = lo + p
        _msort(idx, n, scores, tkey, tmp)
        for p in range(n):
            g[p] = gq[idx[p] - lo]
        if average:
            p = 0
            while p < n:
                e = p + 1
                sp = scores[idx[p]]
                tot = g[p]
                while e < n and scores[idx[e]] == sp:
                    tot += g[e]
                    e += 1
                if e - p > 1:
                    for u in range(p, e):
                        g[u] = tot / (e - p)
                p = e
        cum[0] = 0.0
        for p in range(n):
            r = p + 1
            if dmode == 0:
                d = darr[p]
            elif dmode == 1:
                d = float(nall - r)
            else:
                d = darr[lo + p]
            cum[r] = cum[p] + g[p] * d
        # ideal: all gains, descending
        for p in range(nall):
            idx[p] = p
        _msort(idx, nall, gq, zk, tmp)
        icum[0] = 0.0
        for p in range(nall):
            r = p + 1
            if dmode == 0:
                d = darr[p]
            elif dmode == 1:
                d = float(nall - r)
            else:
                d = darr[lo + p]
            icum[r] = icum[p] + gq[idx[p]] * d
        if want_mean and n > 0:
            acc = 0.0
            for r in range(1, n + 1):
                if icum[r] != 0.0:
                    acc += cum[r] / icum[r]
            mean[q] = acc / n
        for j in range(nc):
            k = ks[q, j]
            dcg[q, j] = cum[min(k, n)]
            idcg[q, j] = icum[min(k, nall)]


@njit(cache=True, nogil=True)
def rank_rel_kernel(
    scores, tkey, bnd, rend, relv, gv, pk, ak, rk, q0, q1, hits, apsum, rr, nrel, topg, idealg
):  # pragma: no cover - compiled
    """Sort every query once and compute the binary-relevance statistics from that ranking
    (order-based tie rules; ``rel_average_kernel`` does ``average``), plus — when ``topg`` has
    ``kmax > 0`` columns — the gains ``gv`` of the top ``kmax`` ranked documents and the
    ``kmax`` largest gains of the query (the ideal), so NDCG@k for k <= kmax comes from the
    same sort (``compute._ndcg_from_top``).

    ``relv``: relevance (0/1) per document. A query with no relevant ranked document (and, with
    ``kmax > 0``, no ranked gain) is not sorted. For the ``(Q, C)`` cut-offs ``pk``, ``ak``,
    ``rk`` it writes ``hits`` (relevant docs in the top min(k, n)), ``apsum`` (sum of P@r over
    relevant positions r <= k), ``rr`` (1/position of the first relevant doc if <= k), and
    ``nrel`` (relevant documents of the query, ranked or not).
    """
    kmax = topg.shape[1]
    maxn = 1
    for q in range(q0, q1):
        maxn = max(maxn, bnd[q + 1] - bnd[q])
    idx = np.empty(maxn, np.int64)
    tmp = np.empty(maxn, np.int64)
    hc = np.zeros(maxn + 1)
    apc = np.zeros(maxn + 1)
    for q in range(q0, q1):
        lo = bnd[q]
        hi = bnd[q + 1]
        re = rend[q]
        n = re - lo
        tot = 0.0
        alive = False
        for i in range(lo, hi):
            tot += relv[i]
            if i < re and (relv[i] != 0.0 or (kmax > 0 and gv[i] != 0.0)):
                alive = True
        nrel[q] = tot
        first = 0
        if alive:
            for p in range(n):
                idx[p] = lo + p
            _msort(idx, n, scores, tkey, tmp)
            for p in range(n):
                x = relv[idx[p]]
                hc[p + 1] = hc[p] + x
                apc[p + 1] = apc[p] + x * hc[p + 1] / (p + 1)
                if first == 0 and x > 0.0:
                    first = p + 1
            for p in range(min(kmax, n)):
                topg[q, p] = gv[idx[p]]
        else:
            for p in range(n):
                hc[p + 1] = 0.0
                apc[p + 1] = 0.0
        if kmax > 0:  # the kmax largest gains of all the query's documents, descending
            cnt = 0
            kk = min(kmax, hi - lo)
            for i in range(lo, hi):
                v = gv[i]
                if cnt < kk:
                    j = cnt
                    cnt += 1
                elif v > idealg[q, kk - 1]:
                    j = kk - 1
                else:
                    continue
                while j > 0 and v > idealg[q, j - 1]:
                    idealg[q, j] = idealg[q, j - 1]
                    j -= 1
                idealg[q, j] = v
        for j in range(pk.shape[1]):
            hits[q, j] = hc[min(pk[q, j], n)]
        for j in range(ak.shape[1]):
            apsum[q, j] = apc[min(ak[q, j], n)]
        for j in range(rk.shape[1]):
            rr[q, j] = 1.0 / first if (first > 0 and first <= rk[q, j]) else 0.0


@njit(cache=True, nogil=True)
def rel_average_kernel(
    labels, scores, tkey, bnd, rend, rmode, rarr, thr, pk, ak, rk, q0, q1, hits, apsum, rr, nrel
):  # pragma: no cover - compiled
    """``rel_kernel`` for ``ties=average``: the expectation over every order of each group of
    tied scores. P@k: the group's mean relevance at each of its positions. AP: McSherry &
    Najork (2008): position j of a group of g documents with c relevant, R0 relevant before it,
    holds a relevant document with probability c/g and then has R0 + 1 + (u)(c − 1)/(g − 1)
    relevant documents in the top j (u = j's offset in the group), contributing that over j.
    RR: sum over offsets m of P(first relevant at offset m) / position, with
    P(m) = prod_{t<m-1} (g − c − t)/(g − t) · c/(g − m + 1)."""
    maxn = 1
    for q in range(q0, q1):
        maxn = max(maxn, bnd[q + 1] - bnd[q])
    idx = np.empty(maxn, np.int64)
    tmp = np.empty(maxn, np.int64)
    v = np.empty(maxn)
    hc = np.empty(maxn + 1)
    apc = np.empty(maxn + 1)
    rrpos = np.empty(maxn)
    rrp = np.empty(maxn)
    for q in range(q0, q1):
        lo = bnd[q]
        hi = bnd[q + 1]
        re = rend[q]
        n = re - lo
        tot = 0.0
        for i in range(lo, hi):
            y = labels[i]
            if rmode == 0:
                x = rarr[i]
            elif rmode == 3:
                x = 1.0 if y >= thr else 0.0
            else:
                x = 1.0 if (y == 1.0 or y == 2.0) else 0.0
            tot += x
        nrel[q] = tot
        for p in range(n):
            idx[p] = lo + p
        _msort(idx, n, scores, tkey, tmp)
        for p in range(n):
            i = idx[p]
            y = labels[i]
            if rmode == 0:
                x = rarr[i]
            elif rmode == 3:
                x = 1.0 if y >= thr else 0.0
            else:
                x = 1.0 if (y == 1.0 or y == 2.0) else 0.0
            v[p] = x
        hc[0] = 0.0
        apc[0] = 0.0
        found = False
        nfirst = 0
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
            if not found and crel > 0.0:
                found = True
                nfirst = int(gsz - crel + 1.0 + 0.5)
                none_before = 1.0
                for m in range(1, nfirst + 1):
                    rrpos[m - 1] = p + m
                    rrp[m - 1] = none_before * crel / (gsz - m + 1)
                    none_before *= (gsz - crel - (m - 1)) / (gsz - (m - 1))
            p = e
        for j in range(pk.shape[1]):
            hits[q, j] = hc[min(pk[q, j], n)]
        for j in range(ak.shape[1]):
            apsum[q, j] = apc[min(ak[q, j], n)]
        for j in range(rk.shape[1]):
            acc = 0.0
            for m in range(nfirst):
                if rrpos[m] <= rk[q, j]:
                    acc += rrp[m] / rrpos[m]
            rr[q, j] = acc


@njit(cache=True, nogil=True)
def pairwise_kernel(labels, scores, tkey, bnd, average, q0, q1, out):  # pragma: no cover - compiled
    """Jin & Geng's label-gap-weighted pairwise loss R(f) per query, O(n log n).

    ``R = sum over pairs with y_i > y_j where i ranks below j of (y_i − y_j)``. Documents are
    visited in ranking order; a Fenwick tree over the query's distinct label values holds the
    count and the label sum of the documents visited so far (ranked above). Under ``average`` a
    pair with equal scores counts half (the expectation over the orders of the tied group).
    """
    maxn = 1
    for q in range(q0, q1):
        maxn = max(maxn, bnd[q + 1] - bnd[q])
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
        _msort(lidx, n, labels, zk, tmp)  # descending labels
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
        _msort(idx, n, scores, tkey, tmp)
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
                _msort(lidx, gsz, labels, zk, tmp)  # descending
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
    of its query (only such documents need a tie-breaking key); ``zeros``: ``(N,)`` zeros."""
    maxn = 1
    for q in range(q0, q1):
        maxn = max(maxn, bnd[q + 1] - bnd[q])
    idx = np.empty(maxn, np.int64)
    tmp = np.empty(maxn, np.int64)
    for q in range(q0, q1):
        lo = bnd[q]
        n = rend[q] - lo
        for p in range(n):
            idx[p] = lo + p
        _msort(idx, n, scores, zeros, tmp)
        for p in range(1, n):
            if scores[idx[p]] == scores[idx[p - 1]]:
                out[idx[p]] = True
                out[idx[p - 1]] = True
