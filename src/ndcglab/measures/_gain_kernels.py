# mypy: allow-untyped-defs
# (numba infers the kernels' types from their arguments; the docstrings state them)
"""Numba kernels of the gain family: DCG@k and ideal DCG@k of every query (and MeanNDCG).

Inputs (prepared by :func:`._inputs.gain_inputs` and :func:`._inputs.discount_inputs` from the
:class:`~ndcglab.measures.Gain` and :class:`~ndcglab.measures.Discount` objects — the kernels
know no gain or discount formula):

* gains: ``gtab`` non-empty — the gain of a whole label ``y`` with ``0 <= y < len(gtab)`` is
  ``gtab[y]``; any other label sets ``miss[0]`` (the caller then passes per-document gains);
  ``gtab`` empty — ``garr[i]`` is the gain of document ``i`` (``prefix_gain_kernel`` takes
  per-document gains only).
* discount: ``D(r)`` of 1-based position ``r`` is ``darr[off + r − 1]``, with ``off`` the
  query's (or prefix's) offset ``doff`` into the table — 0 for a discount that ignores the list's
  length, the start of that length's table otherwise (``topk_gain_kernel``: offset 0).
* ranking: :func:`._kernels.msort` (score descending, ``tkey`` ascending, index ascending);
  when few documents have a gain, :func:`._kernels.positions` places only those (same order).
  ``average``: documents with equal scores form a group; each position of the group gets the
  group's mean gain, the expectation over all orders of the group (:func:`_ranked_dcg`).
* DCG@k sums over the ranked documents, ``cum[min(k, n)]``; ideal DCG@k over the top ``k`` gains
  of all the query's documents (a cut-off beyond the list is the whole list). Every sum is
  :func:`_cum_dcg` (left to right, as :func:`ndcglab.measures.conventions.cumulative_dcg`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import count_budget, longest, msort, nonzero_of, positions

__all__ = ["full_gain_kernel", "prefix_gain_kernel", "topk_dcg", "topk_gain_kernel"]


@njit(cache=True, nogil=True)
def _fill_gains(labels, lo, nall, gtab, garr, gq, miss):  # pragma: no cover - compiled
    """``gq[p]`` = the gain of document ``lo + p`` (p < nall): ``gtab`` of a whole label in range
    (other labels set ``miss[0]`` and gain 0), or ``garr`` when ``gtab`` is empty."""
    ntab = gtab.shape[0]
    if ntab == 0:
        for p in range(nall):
            gq[p] = garr[lo + p]
        return
    for p in range(nall):
        y = labels[lo + p]
        yi = int(y)
        if yi == y and yi >= 0 and yi < ntab:
            gq[p] = gtab[yi]
        else:
            gq[p] = 0.0
            miss[0] = True


@njit(cache=True, nogil=True, inline="always")
def _cum_dcg(g, n, darr, off, cum):  # pragma: no cover - compiled
    """``cum[r]`` = DCG of the first r positions, r = 0..n: ``g[p]`` the gain at position p + 1,
    ``D(r) = darr[off + r − 1]``, summed left to right."""
    cum[0] = 0.0
    for p in range(n):
        cum[p + 1] = cum[p] + g[p] * darr[off + p]


@njit(cache=True, nogil=True)
def _placed(s, t, lo, n, gq, which, pos, g):  # pragma: no cover - compiled
    """``g[:n]`` = the gains ``gq[:n]`` of documents ``lo : lo + n`` in the order of ``s``
    descending, ``t`` ascending, index ascending, placing only the documents with a non-zero
    gain (:func:`._kernels.positions`; the others are zeros wherever they land). False, ``g``
    unfinished, when counting would cost more than a sort (the caller sorts)."""
    na = nonzero_of(gq, 0, n, which)
    budget = count_budget(n)
    if na > budget or not positions(s, t, lo, n, which, na, pos, budget):
        return False
    for p in range(n):
        g[p] = 0.0
    for a in range(na):
        g[pos[a]] = gq[which[a]]
    return True


@njit(cache=True, nogil=True)
def _ideal_by_label(labels, lo, nall, gtab, tab_order, hist, g):  # pragma: no cover - compiled
    """``g[:nall]`` = the gains of documents ``lo : lo + nall`` in descending order, from the
    counts of their labels (each a whole number indexing ``gtab``; ``tab_order`` lists the
    table's entries by gain, descending): a counting sort, the same values in the same order as
    sorting the gains. False, ``g`` unfinished, when a label is not in the table."""
    ntab = gtab.shape[0]
    for j in range(ntab):
        hist[j] = 0
    for p in range(nall):
        y = labels[lo + p]
        yi = int(y)
        if yi != y or yi < 0 or yi >= ntab:
            return False
        hist[yi] += 1
    k = 0
    for r in range(ntab):
        j = tab_order[r]
        v = gtab[j]
        for _ in range(hist[j]):
            g[k] = v
            k += 1
    return True


@njit(cache=True, nogil=True)
def _ranked_dcg(g, idx, n, scores, average, darr, off, cum):  # pragma: no cover - compiled
    """:func:`_cum_dcg` of a ranking (``g[p]`` the gain of ranked document ``idx[p]``); with
    ``average`` each group of equal ``scores`` first gets its mean gain at every one of its
    positions (the expectation over the orders of the group)."""
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
    _cum_dcg(g, n, darr, off, cum)


@njit(cache=True, nogil=True)
def _table_order(gtab):  # pragma: no cover - compiled
    """The gain table's entries by gain, descending (for :func:`_ideal_by_label`), and whether
    the table can order the ideal at all (False when empty or when a gain is NaN: then the
    ideal is left to the sort, as always)."""
    ntab = gtab.shape[0]
    tab_order = np.arange(ntab)
    msort(tab_order, ntab, gtab, np.zeros(ntab), np.empty(ntab, np.int64))
    tab_ok = ntab > 0
    for j in range(ntab):
        if gtab[j] != gtab[j]:
            tab_ok = False
    return tab_order, tab_ok


@njit(cache=True, nogil=True, inline="always")
def _all_zero(gq, nall):  # pragma: no cover - compiled
    """Whether every gain ``gq[:nall]`` is 0 (DCG = IDCG = 0 at every cut-off)."""
    for p in range(nall):
        if gq[p] != 0.0:
            return False
    return True


@njit(cache=True, nogil=True)
def ideal_dcg(
    labels, lo, nall, gtab, tab_order, tab_ok, hist, gq, zk, idx, tmp, which, pos, g, darr, off,
    icum,
):  # pragma: no cover - compiled  # fmt: skip
    """``icum`` = the DCG of the ideal ranking of documents ``lo : lo + nall`` (all their gains
    ``gq[:nall]``, descending) at every depth: ordered by the counts of their labels when the
    gains come from the table (:func:`_ideal_by_label`, ``tab_order`` from
    :func:`_table_order`), else by sorting the non-zero gains (:func:`_gains_descending`; with
    a NaN gain the whole list is sorted, ``zk`` all zeros). ``hist``, ``g``, ``idx``, ``tmp``,
    ``which``, ``pos`` are scratch."""
    if not (tab_ok and _ideal_by_label(labels, lo, nall, gtab, tab_order, hist, g)) and not (
        _gains_descending(gq, nall, which, g)
    ):
        for p in range(nall):
            idx[p] = p
        msort(idx, nall, gq, zk, tmp)
        for p in range(nall):
            g[p] = gq[idx[p]]
    _ranked_dcg(g, idx, nall, gq, False, darr, off, icum)


@njit(cache=True, nogil=True)
def _gains_descending(gq, nall, which, g):  # pragma: no cover - compiled
    """``g[:nall]`` = the gains ``gq[:nall]`` in descending order, the values the ideal ranking
    holds (which document holds which does not matter): the non-zero gains sorted, the
    positive ones first, then the zeros, then the negative ones. The same values in the same
    places as sorting all of them (a zero's sign aside, which adds nothing to a DCG that starts
    at +0). False, ``g`` unfinished, for a NaN gain (the caller sorts, as it always has)."""
    na = nonzero_of(gq, 0, nall, which)
    npos = 0
    for a in range(na):
        v = gq[which[a]]
        if v != v:
            return False
        g[a] = v
        if v > 0.0:
            npos += 1
    g[:na].sort()  # negative ones ascending, then positive ones ascending
    for a in range(na // 2):  # reversed: positive ones descending, then negative ones
        v = g[a]
        g[a] = g[na - 1 - a]
        g[na - 1 - a] = v
    nneg = na - npos
    for a in range(nneg - 1, -1, -1):  # the negative ones to the end (backwards: no overlap)
        g[nall - nneg + a] = g[npos + a]
    for p in range(npos, nall - nneg):
        g[p] = 0.0
    return True


@njit(cache=True, nogil=True, inline="always")
def topk_dcg(g, cnt, gq, nall, ki, ig, darr, cum, icum, ks, q, n, dcg, idcg):  # pragma: no cover
    """DCG@k and IDCG@k of query ``q`` for its cut-offs ``ks[q]``: ``g[:cnt]`` are the gains of
    its top ``cnt`` ranked documents (of ``n`` ranked), ``gq[:nall]`` the gains of all its
    documents, of which the ``ki`` largest (kept sorted in ``ig`` by insertion) are the ideal."""
    _cum_dcg(g, cnt, darr, 0, cum)
    icnt = _largest(gq, 0, nall, ki, ig)
    _cum_dcg(ig, icnt, darr, 0, icum)
    for j in range(ks.shape[1]):
        k = ks[q, j]
        dcg[q, j] = cum[min(k, n)]
        idcg[q, j] = icum[min(k, nall)]


@njit(cache=True, nogil=True, inline="always")
def _largest(x, lo, hi, k, buf):  # pragma: no cover - compiled
    """``buf[:c]`` = the ``c = min(k, hi - lo)`` largest values of ``x[lo:hi]``, descending, kept
    sorted by insertion (a value enters only when larger than the current k-th); returns c."""
    c = 0
    for i in range(lo, hi if k > 0 else lo):
        v = x[i]
        if c < k:
            j = c
            c += 1
        elif v > buf[k - 1]:
            j = k - 1
        else:
            continue
        while j > 0 and v > buf[j - 1]:
            buf[j] = buf[j - 1]
            j -= 1
        buf[j] = v
    return c


@njit(cache=True, nogil=True, inline="always")
def _largest_cut(ks, q, nall):  # pragma: no cover - compiled
    """The largest of query ``q``'s cut-offs ``ks[q]``, each clipped to its ``nall`` documents."""
    kmax = 0
    for j in range(ks.shape[1]):
        kmax = max(kmax, min(ks[q, j], nall))
    return kmax


@njit(cache=True, nogil=True)
def topk_gain_kernel(
    labels, scores, tkey, bnd, rend, gtab, garr, darr, ks, q0, q1, dcg, idcg, miss
):  # pragma: no cover - compiled
    """DCG@k and IDCG@k by top-k selection (no full sort), for fixed cut-offs ``ks`` ``(Q, C)``,
    a discount that ignores the list's length and a tie rule other than ``average``.

    A document enters the sorted top-k buffer only when it ranks before the current k-th one;
    the ideal keeps the k largest gains of all the query's documents the same way.
    """
    maxn = longest(bnd, q0, q1)
    buf = np.empty(maxn, np.int64)
    gq = np.empty(maxn)
    g = np.empty(maxn)
    ig = np.empty(maxn)
    cum = np.empty(maxn + 1)
    icum = np.empty(maxn + 1)
    for q in range(q0, q1):
        lo = bnd[q]
        hi = bnd[q + 1]
        re = rend[q]
        n = re - lo
        nall = hi - lo
        _fill_gains(labels, lo, nall, gtab, garr, gq, miss)
        kmax = _largest_cut(ks, q, nall)
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
        for p in range(cnt):
            g[p] = gq[buf[p] - lo]
        topk_dcg(g, cnt, gq, nall, min(kmax, nall), ig, darr, cum, icum, ks, q, n, dcg, idcg)


@njit(cache=True, nogil=True)
def full_gain_kernel(
    labels,
    scores,
    tkey,
    bnd,
    rend,
    gtab,
    garr,
    darr,
    doff,
    ks,
    average,
    want_mean,
    q0,
    q1,
    dcg,
    idcg,
    mean,
    miss,
):  # pragma: no cover - compiled
    """DCG@k and IDCG@k with a full sort, for any cut-offs ``ks`` ``(Q, C)`` (k at least the
    list's length = whole list), any discount (``doff`` ``(Q,)``), any tie rule (``average``
    included); and the LETOR MeanNDCG ``(1/n) sum_{k=1..n} DCG@k / IDCG@k`` (0 where
    IDCG@k = 0) when ``want_mean``. DCG sums over ranked documents only; IDCG@k over the top k
    gains of all documents: counted from the labels when the gains come from ``gtab``
    (:func:`_ideal_by_label`), else placed like the ranking."""
    nc = ks.shape[1]
    maxn = longest(bnd, q0, q1)
    idx = np.empty(maxn, np.int64)
    tmp = np.empty(maxn, np.int64)
    which = np.empty(maxn, np.int64)
    pos = np.empty(maxn, np.int64)
    gq = np.empty(maxn)
    g = np.empty(maxn)
    zk = np.zeros(maxn)
    cum = np.empty(maxn + 1)
    icum = np.empty(maxn + 1)
    tab_order, tab_ok = _table_order(gtab)
    hist = np.zeros(gtab.shape[0], np.int64)
    for q in range(q0, q1):
        lo = bnd[q]
        hi = bnd[q + 1]
        re = rend[q]
        n = re - lo
        nall = hi - lo
        _fill_gains(labels, lo, nall, gtab, garr, gq, miss)
        if _all_zero(gq, nall):  # DCG = IDCG = 0 at every cut-off: nothing to sort
            for j in range(nc):
                dcg[q, j] = 0.0
                idcg[q, j] = 0.0
            mean[q] = 0.0
            continue
        # ranking: only the documents with a gain need a position (``average`` needs the groups)
        if average or not _placed(scores, tkey, lo, n, gq, which, pos, g):
            for p in range(n):
                idx[p] = lo + p
            msort(idx, n, scores, tkey, tmp)
            for p in range(n):
                g[p] = gq[idx[p] - lo]
        _ranked_dcg(g, idx, n, scores, average, darr, doff[q], cum)
        ideal_dcg(labels, lo, nall, gtab, tab_order, tab_ok, hist, gq, zk, idx, tmp, which, pos,
                  g, darr, doff[q], icum)  # fmt: skip
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
def prefix_gain_kernel(
    gains, order, scores, bnd, sizes, darr, doff, ks, average, q0, q1, dcg
):  # pragma: no cover - compiled
    """DCG@k of every prefix ``S_n`` (the first ``n`` documents of each list, ``n`` in ``sizes``
    ``(G,)``; a list shorter than ``n`` is used whole) for ``M`` gain/discount pairs ranked the
    same way: per-document ``gains`` ``(M, N)``, discount offsets ``doff`` ``(M, Q, G)`` (the
    table of the prefix's length), cut-offs ``ks`` ``(M, Q, G, C)`` (0 = unused column), output
    ``dcg`` ``(M, Q, G, C)``.

    ``order`` holds each list in ranking order (:func:`._kernels.rank_order_kernel`, whose last
    tie-breaker is the index, i.e. the position in the list); the ranking of ``S_n`` is that
    order restricted to the documents at positions ``< n``, collected by one scan that stops once
    the largest cut-off is reached (without ``average``; ``scores`` find the tied groups). The
    ideal DCG of the prefixes is this kernel on the order by gain, descending."""
    nm = gains.shape[0]
    ng = sizes.shape[0]
    nc = ks.shape[3]
    maxn = longest(bnd, q0, q1)
    pidx = np.empty(maxn, np.int64)
    g = np.empty(maxn)
    cum = np.empty(maxn + 1)
    for q in range(q0, q1):
        lo = bnd[q]
        nall = bnd[q + 1] - lo
        for gi in range(ng):
            nq = min(sizes[gi], nall)
            stop = 0
            for m in range(nm):
                for c in range(nc):
                    stop = max(stop, min(ks[m, q, gi, c], nq))
            if average:
                stop = nq
            cnt = 0
            if stop > 0:
                for p in range(nall):
                    i = order[lo + p]
                    if i - lo < nq:
                        pidx[cnt] = i
                        cnt += 1
                        if cnt >= stop:
                            break
            for m in range(nm):
                kmax = 0
                for c in range(nc):
                    kmax = max(kmax, min(ks[m, q, gi, c], nq))
                n = nq if average else kmax
                for p in range(n):
                    g[p] = gains[m, pidx[p]]
                _ranked_dcg(g, pidx, n, scores, average, darr, doff[m, q, gi], cum)
                for c in range(nc):
                    dcg[m, q, gi, c] = cum[min(ks[m, q, gi, c], nq)]


#: the tie range's kernels (:func:`topk_bounds_gain_kernel`, ``_rel_kernels._positions_all_tied``)
#: count the keys of a list of equal scores when they are whole numbers in ``[0, _KEY_LEVELS)``
_KEY_LEVELS = 64


@njit(cache=True, nogil=True)
def topk_bounds_gain_kernel(
    labels,
    scores,
    tkey,
    pkey,
    bnd,
    rend,
    gtab,
    garr,
    darr,
    ks,
    plain,
    q0,
    q1,
    dcg,
    idcg,
    dcg_hi,
    idcg_hi,
    dcg_p,
    idcg_p,
    miss,
):  # pragma: no cover - compiled
    """:func:`topk_gain_kernel` under the tie range's two orders at once
    (:mod:`ndcglab.measures.tie_range`): ``dcg``/``idcg`` by score descending, ``tkey`` (the
    labels) ascending — the worst order — and ``dcg_hi``/``idcg_hi`` with ``tkey`` descending,
    the best; with ``plain`` True also ``dcg_p``/``idcg_p`` by ``pkey`` (the result's own tie
    rule), equal bit for bit to what :func:`topk_gain_kernel` computes with ``pkey``.

    Only the documents whose score is at least the k-th largest (k the largest cut-off within
    the list) can reach a top k under any tie rule: one selection finds that score, and those
    documents alone are sorted (:func:`._kernels.msort`; the best order is the worst with every
    group of equal scores reversed — documents with equal labels have equal gains). A list of
    equal scores with whole labels in ``[0, _KEY_LEVELS)`` fills its top k from the count of
    each label instead (O(n)). The ideal DCG is computed once."""
    nc = ks.shape[1]
    maxn = longest(bnd, q0, q1)
    sbuf = np.empty(maxn)
    cand = np.empty(maxn, np.int64)
    tmp = np.empty(maxn, np.int64)
    gq = np.empty(maxn)
    g = np.empty(maxn)
    ig = np.empty(maxn)
    cum = np.empty(maxn + 1)
    icum = np.empty(maxn + 1)
    count = np.empty(_KEY_LEVELS, np.int64)
    level_gain = np.empty(_KEY_LEVELS)
    for q in range(q0, q1):
        lo = bnd[q]
        hi = bnd[q + 1]
        re = rend[q]
        n = re - lo
        nall = hi - lo
        _fill_gains(labels, lo, nall, gtab, garr, gq, miss)
        kmax = _largest_cut(ks, q, nall)
        kr = min(kmax, n)
        m = 0
        if kr > 0:  # the kr-th largest score, then every document scoring at least that
            _largest(scores, lo, re, kr, sbuf)
            t = sbuf[kr - 1]
            for i in range(lo, re):
                cand[m] = i
                m += np.int64(scores[i] >= t)
        counted = kr > 0 and m == n and sbuf[0] == sbuf[kr - 1]  # all scores equal
        if counted:
            for k in range(_KEY_LEVELS):
                count[k] = 0
            for i in range(lo, re):
                x = tkey[i]
                if not (x >= 0.0 and x < _KEY_LEVELS and x == np.floor(x)):
                    counted = False
                    break
                count[np.int64(x)] += 1
                level_gain[np.int64(x)] = gq[i - lo]
        for side in range(3 if plain else 2):
            if counted and side < 2:  # lowest (side 0) or highest labels first
                p = 0
                for step in range(_KEY_LEVELS):
                    k = step if side == 0 else _KEY_LEVELS - 1 - step
                    for _ in range(count[k]):
                        if p == kr:
                            break
                        g[p] = level_gain[k]
                        p += 1
                    if p == kr:
                        break
            elif counted and _all_equal(pkey, lo, n):  # plain: input order
                for p in range(kr):
                    g[p] = gq[p]
            else:
                if side == 0 or side == 2:
                    msort(cand, m, scores, tkey if side == 0 else pkey, tmp)
                else:
                    _reverse_runs(cand, m, scores)
                for p in range(kr):
                    g[p] = gq[cand[p] - lo]
            if side == 0:
                topk_dcg(g, kr, gq, nall, min(kmax, nall), ig, darr, cum, icum, ks, q, n, dcg, idcg)
            else:
                _cum_dcg(g, kr, darr, 0, cum)
                for j in range(nc):
                    if side == 1:
                        dcg_hi[q, j] = cum[min(ks[q, j], n)]
                        idcg_hi[q, j] = idcg[q, j]
                    else:
                        dcg_p[q, j] = cum[min(ks[q, j], n)]
                        idcg_p[q, j] = idcg[q, j]


@njit(cache=True, nogil=True, inline="always")
def _all_equal(x, lo, n):  # pragma: no cover - compiled
    """Whether ``x[lo : lo + n]`` holds one value."""
    for i in range(lo + 1, lo + n):
        if x[i] != x[lo]:
            return False
    return True


@njit(cache=True, nogil=True)
def _reverse_runs(idx, n, scores):  # pragma: no cover - compiled
    """Reverse, in place, every run of equal ``scores[idx[p]]`` in ``idx[:n]``."""
    p = 0
    while p < n:
        e = p + 1
        while e < n and scores[idx[e]] == scores[idx[p]]:
            e += 1
        a = p
        b = e - 1
        while a < b:
            x = idx[a]
            idx[a] = idx[b]
            idx[b] = x
            a += 1
            b -= 1
        p = e
