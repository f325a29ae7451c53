# mypy: allow-untyped-defs
# (numba infers the kernels' types from their arguments; the docstrings state them)
"""Numba kernels of the relevance family: AP, P@k and RR of every query, all cut-offs at once.

Relevance is binary and given per document (``relv``, from
:func:`ndcglab.measures.conventions.relevance`); the ranking order is that of
:func:`._kernels.msort` (score descending, ``tkey`` ascending, index ascending). Query ``q`` owns
documents ``bnd[q]:bnd[q+1]`` of which ``bnd[q]:rend[q]`` are ranked; relevant documents that
were not ranked still count in the number of relevant documents ``nrel``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._gain_kernels import (
    _KEY_LEVELS,
    _all_equal,
    _all_zero,
    _cum_dcg,
    _fill_gains,
    _largest_cut,
    _ranked_dcg,
    _reverse_runs,
    _table_order,
    ideal_dcg,
    topk_dcg,
)
from ._kernels import count_budget, longest, msort, nonzero_of, positions

__all__ = [
    "full_bounds_gain_kernel",
    "rank_rel_bounds_kernel",
    "rank_rel_kernel",
    "rel_average_kernel",
]


@njit(cache=True, nogil=True)
def rank_rel_kernel(
    scores,
    tkey,
    bnd,
    rend,
    relv,
    labels,
    gtab,
    garr,
    pk,
    ak,
    rk,
    darr,
    ks,
    q0,
    q1,
    hits,
    apsum,
    rr,
    nrel,
    dcg,
    idcg,
    miss,
):  # pragma: no cover - compiled
    """Rank every query once and compute the binary-relevance statistics from that ranking
    (order-based tie rules; ``rel_average_kernel`` does ``average``), plus — when the gain
    cut-offs ``ks`` ``(Q, C)`` have columns — DCG@k and ideal DCG@k from the same sort, as
    :func:`._gain_kernels.topk_gain_kernel` computes them (a discount that ignores the list's
    length, ``D(r) = darr[r − 1]``; gains ``gtab[y]`` for a whole label ``y`` in the table, any
    other label sets ``miss[0]`` and the caller runs the kernel again with per-document gains
    ``garr`` and an empty ``gtab``).

    ``relv``: relevance (0/1) per document. Only the ranked documents that are relevant or have
    a non-zero gain need a position (the others add zeros): when there are few of them
    (:func:`._kernels.count_budget`) :func:`._kernels.positions` counts, for each, the
    documents ranked before it; otherwise :func:`._kernels.msort` sorts the list. A query with
    none is not ranked. For the ``(Q, C)`` cut-offs ``pk``, ``ak``,
    ``rk`` it writes ``hits`` (relevant docs in the top min(k, n)), ``apsum`` (sum of P@r over
    relevant positions r <= k), ``rr`` (1/position of the first relevant doc if <= k), and
    ``nrel`` (relevant documents of the query, ranked or not).
    """
    nc = ks.shape[1]
    maxn = longest(bnd, q0, q1)
    idx = np.empty(maxn, np.int64)
    tmp = np.empty(maxn, np.int64)
    which = np.empty(maxn, np.int64)
    pos = np.empty(maxn, np.int64)
    v = np.empty(maxn)
    hc = np.zeros(maxn + 1)
    apc = np.zeros(maxn + 1)
    gsize = maxn if nc > 0 else 0
    gq = np.empty(gsize)
    g = np.empty(gsize)
    ig = np.empty(gsize)
    cum = np.empty(gsize + 1)
    icum = np.empty(gsize + 1)
    for q in range(q0, q1):
        lo = bnd[q]
        hi = bnd[q + 1]
        re = rend[q]
        n = re - lo
        nall = hi - lo
        kq = _largest_cut(ks, q, nall)  # the largest cut-off of this query, within the list
        if nc > 0:
            _fill_gains(labels, lo, nall, gtab, garr, gq, miss)
        tot = 0.0
        for i in range(lo, hi):
            tot += relv[i]
        na = _to_place(relv, gq, lo, n, kq, which)
        nrel[q] = tot
        first = 0
        kr = min(kq, n)
        if na > 0:
            budget = count_budget(n)
            if na <= budget and positions(scores, tkey, lo, n, which, na, pos, budget):
                # placed only those documents; the rest add zeros
                for p in range(n):
                    v[p] = 0.0
                for p in range(kr):
                    g[p] = 0.0
                for a in range(na):
                    p = pos[a]
                    v[p] = relv[lo + which[a]]
                    if p < kr:
                        g[p] = gq[which[a]]
            else:
                for p in range(n):
                    idx[p] = lo + p
                msort(idx, n, scores, tkey, tmp)
                for p in range(n):
                    v[p] = relv[idx[p]]
                for p in range(kr):
                    g[p] = gq[idx[p] - lo]
            first = _rel_sums(v, n, hc, apc)
        else:
            for p in range(n):
                hc[p + 1] = 0.0
                apc[p + 1] = 0.0
            for p in range(kr):  # no ranked document has a gain
                g[p] = 0.0
        if nc > 0:
            topk_dcg(g, kr, gq, nall, min(kq, nall), ig, darr, cum, icum, ks, q, n, dcg, idcg)
        _rel_write(q, n, first, hc, apc, pk, ak, rk, hits, apsum, rr)


@njit(cache=True, nogil=True, inline="always")
def _to_place(relv, gq, lo, n, kq, which):  # pragma: no cover - compiled
    """``which[:na]`` = the ranked documents ``i < n`` that add something: relevant, or (when
    a gain cut-off ``kq`` is wanted) with a non-zero gain ``gq[i]``, in order, written without a
    branch (relevance is unpredictable); returns ``na``."""
    if kq == 0:
        return nonzero_of(relv, lo, n, which)
    na = 0
    for i in range(n):
        which[na] = i
        na += np.int64((relv[lo + i] != 0.0) | (gq[i] != 0.0))
    return na


@njit(cache=True, nogil=True, inline="always")
def _rel_sums(v, n, hc, apc):  # pragma: no cover - compiled
    """Prefix sums of the relevance ``v[:n]`` in ranking order: ``hc[r]`` relevant documents in
    the top r, ``apc[r]`` the sum of P@p over the relevant positions p <= r (``hc[0]`` and
    ``apc[0]`` are 0); returns the 1-based position of the first relevant document (0: none)."""
    first = 0
    for p in range(n):
        x = v[p]
        hc[p + 1] = hc[p] + x
        apc[p + 1] = apc[p] + x * hc[p + 1] / (p + 1)
        if first == 0 and x > 0.0:
            first = p + 1
    return first


@njit(cache=True, nogil=True, inline="always")
def _rel_write(q, n, first, hc, apc, pk, ak, rk, hits, apsum, rr):  # pragma: no cover
    """Query ``q``'s P@k hits, AP sums and RR at its cut-offs from :func:`_rel_sums`."""
    for j in range(pk.shape[1]):
        hits[q, j] = hc[min(pk[q, j], n)]
    for j in range(ak.shape[1]):
        apsum[q, j] = apc[min(ak[q, j], n)]
    for j in range(rk.shape[1]):
        rr[q, j] = 1.0 / first if (first > 0 and first <= rk[q, j]) else 0.0


@njit(cache=True, nogil=True)
def rank_rel_bounds_kernel(
    scores,
    tkey,
    pkey,
    bnd,
    rend,
    relv,
    labels,
    gtab,
    garr,
    pk,
    ak,
    rk,
    darr,
    ks,
    plain,
    q0,
    q1,
    hits,
    apsum,
    rr,
    nrel,
    dcg,
    idcg,
    hits_hi,
    apsum_hi,
    rr_hi,
    nrel_hi,
    dcg_hi,
    idcg_hi,
    hits_p,
    apsum_p,
    rr_p,
    nrel_p,
    dcg_p,
    idcg_p,
    miss,
):  # pragma: no cover - compiled
    """:func:`rank_rel_kernel` under the two tie rules of the tie range at once
    (:mod:`ndcglab.measures.tie_range`): ``tkey`` orders the documents of a tied score (the
    labels: the rule ``label_asc``, the worst order) and the outputs are that ranking's; the
    ``*_hi`` outputs are those of ``-tkey`` (``label_desc``, the best order). With ``plain``
    True, the ``*_p`` outputs are those of the ranking by ``pkey`` (the result's own tie rule,
    e.g. ``input``), from the same pass: exactly what :func:`rank_rel_kernel` computes with
    ``pkey`` (the same positions, hence the same sums, bit for bit). The documents that add
    something are placed in every ranking by one counting pass each
    (:func:`_positions_both`; a list with too many of them is sorted once per key, and the
    ``-tkey`` ranking is the ``tkey`` sort with every group of tied scores reversed: the same
    relevance and gain at every position, since documents with equal keys have equal labels).
    The ideal DCG does not depend on the order: it is computed once."""
    nc = ks.shape[1]
    want_rel = pk.shape[1] + ak.shape[1] + rk.shape[1] > 0  # else only the gains are read
    maxn = longest(bnd, q0, q1)
    idx = np.empty(maxn, np.int64)
    tmp = np.empty(maxn, np.int64)
    which = np.empty(maxn, np.int64)
    pos = np.empty(maxn, np.int64)
    pos_hi = np.empty(maxn, np.int64)
    pos_p = np.empty(maxn if plain else 0, np.int64)
    hist = np.empty(3 * _KEY_LEVELS, np.int64)
    v = np.empty(maxn)
    hc = np.zeros(maxn + 1)
    apc = np.zeros(maxn + 1)
    gsize = maxn if nc > 0 else 0
    gq = np.empty(gsize)
    g = np.empty(gsize)
    ig = np.empty(gsize)
    cum = np.empty(gsize + 1)
    icum = np.empty(gsize + 1)
    for q in range(q0, q1):
        lo = bnd[q]
        hi = bnd[q + 1]
        n = rend[q] - lo
        nall = hi - lo
        kq = _largest_cut(ks, q, nall)
        if nc > 0:
            _fill_gains(labels, lo, nall, gtab, garr, gq, miss)
        tot = 0.0
        for i in range(lo, hi):
            tot += relv[i]
        nrel[q] = tot
        nrel_hi[q] = tot
        if plain:
            nrel_p[q] = tot
        kr = min(kq, n)
        na = _to_place(relv, gq, lo, n, kq, which)
        # a list of equal scores is placed by counting its keys, in O(n); others by one pass
        # per document when there are few to place, else sorted
        placed = _positions_all_tied(
            scores, tkey, pkey, plain, lo, n, which, na, pos, pos_hi, pos_p, hist
        )
        if not placed and na <= count_budget(n):
            _positions_both(scores, tkey, pkey, plain, lo, n, which, na, pos, pos_hi, pos_p)
            placed = True
        for side in range(3 if plain else 2):
            if placed:  # the others add zeros
                at = pos if side == 0 else (pos_hi if side == 1 else pos_p)
                for p in range(n if want_rel else 0):
                    v[p] = 0.0
                for p in range(kr):
                    g[p] = 0.0
                for a in range(na):
                    p = at[a]
                    v[p] = relv[lo + which[a]]
                    if p < kr:
                        g[p] = gq[which[a]]
            else:
                if side != 1:
                    for p in range(n):
                        idx[p] = lo + p
                    msort(idx, n, scores, tkey if side == 0 else pkey, tmp)
                else:
                    _reverse_runs(idx, n, scores)
                for p in range(n if want_rel else 0):
                    v[p] = relv[idx[p]]
                for p in range(kr):
                    g[p] = gq[idx[p] - lo]
            first = _rel_sums(v, n, hc, apc) if want_rel else 0
            if side == 0:
                if nc > 0:
                    topk_dcg(
                        g, kr, gq, nall, min(kq, nall), ig, darr, cum, icum, ks, q, n, dcg, idcg
                    )
                _rel_write(q, n, first, hc, apc, pk, ak, rk, hits, apsum, rr)
            elif side == 1:
                if nc > 0:  # the same ideal DCG
                    _cum_dcg(g, kr, darr, 0, cum)
                    for j in range(nc):
                        dcg_hi[q, j] = cum[min(ks[q, j], n)]
                        idcg_hi[q, j] = idcg[q, j]
                _rel_write(q, n, first, hc, apc, pk, ak, rk, hits_hi, apsum_hi, rr_hi)
            else:
                if nc > 0:
                    _cum_dcg(g, kr, darr, 0, cum)
                    for j in range(nc):
                        dcg_p[q, j] = cum[min(ks[q, j], n)]
                        idcg_p[q, j] = idcg[q, j]
                _rel_write(q, n, first, hc, apc, pk, ak, rk, hits_p, apsum_p, rr_p)


@njit(cache=True, nogil=True)
def full_bounds_gain_kernel(
    labels,
    scores,
    tkey,
    pkey,
    bnd,
    rend,
    gtab,
    garr,
    darr,
    doff,
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
    """:func:`._gain_kernels.full_gain_kernel` (any cut-offs, any discount; not ``average``, not
    MeanNDCG) under the tie range's two orders at once (:mod:`ndcglab.measures.tie_range`):
    ``dcg``/``idcg`` by score descending, ``tkey`` (the labels) ascending — the worst order —
    ``dcg_hi``/``idcg_hi`` with ``tkey`` descending, and with ``plain`` True ``dcg_p``/``idcg_p``
    by ``pkey`` (the result's own tie rule), equal bit for bit to ``full_gain_kernel``'s. The
    documents with a gain are placed in the three rankings by one counting pass
    (:func:`_positions_both`; a list of equal scores by counting its labels,
    :func:`_positions_all_tied`), else the list is sorted (the best order is the worst with
    every group of equal scores reversed); the ideal DCG is computed once."""
    nc = ks.shape[1]
    maxn = longest(bnd, q0, q1)
    idx = np.empty(maxn, np.int64)
    tmp = np.empty(maxn, np.int64)
    which = np.empty(maxn, np.int64)
    pos = np.empty(maxn, np.int64)
    pos_hi = np.empty(maxn, np.int64)
    pos_p = np.empty(maxn if plain else 0, np.int64)
    hist = np.empty(3 * _KEY_LEVELS, np.int64)
    gq = np.empty(maxn)
    g = np.empty(maxn)
    zk = np.zeros(maxn)
    cum = np.empty(maxn + 1)
    icum = np.empty(maxn + 1)
    tab_order, tab_ok = _table_order(gtab)
    thist = np.zeros(gtab.shape[0], np.int64)
    for q in range(q0, q1):
        lo = bnd[q]
        hi = bnd[q + 1]
        n = rend[q] - lo
        nall = hi - lo
        _fill_gains(labels, lo, nall, gtab, garr, gq, miss)
        if _all_zero(gq, nall):
            for j in range(nc):
                dcg[q, j] = 0.0
                idcg[q, j] = 0.0
                dcg_hi[q, j] = 0.0
                idcg_hi[q, j] = 0.0
                if plain:
                    dcg_p[q, j] = 0.0
                    idcg_p[q, j] = 0.0
            continue
        ideal_dcg(labels, lo, nall, gtab, tab_order, tab_ok, thist, gq, zk, idx, tmp, which, pos,
                  g, darr, doff[q], icum)  # fmt: skip
        na = nonzero_of(gq, 0, n, which)
        placed = _positions_all_tied(
            scores, tkey, pkey, plain, lo, n, which, na, pos, pos_hi, pos_p, hist
        )
        if not placed and na <= count_budget(n):
            _positions_both(scores, tkey, pkey, plain, lo, n, which, na, pos, pos_hi, pos_p)
            placed = True
        for side in range(3 if plain else 2):
            if placed:
                at = pos if side == 0 else (pos_hi if side == 1 else pos_p)
                for p in range(n):
                    g[p] = 0.0
                for a in range(na):
                    g[at[a]] = gq[which[a]]
            else:
                if side != 1:
                    for p in range(n):
                        idx[p] = lo + p
                    msort(idx, n, scores, tkey if side == 0 else pkey, tmp)
                else:
                    _reverse_runs(idx, n, scores)
                for p in range(n):
                    g[p] = gq[idx[p] - lo]
            _ranked_dcg(g, idx, n, scores, False, darr, doff[q], cum)
            for j in range(nc):
                k = ks[q, j]
                if side == 0:
                    dcg[q, j] = cum[min(k, n)]
                    idcg[q, j] = icum[min(k, nall)]
                elif side == 1:
                    dcg_hi[q, j] = cum[min(k, n)]
                    idcg_hi[q, j] = icum[min(k, nall)]
                else:
                    dcg_p[q, j] = cum[min(k, n)]
                    idcg_p[q, j] = icum[min(k, nall)]


@njit(cache=True, nogil=True)
def _positions_all_tied(
    scores, tkey, pkey, plain, lo, n, which, na, pos, pos_hi, pos_p, hist
):  # pragma: no cover - compiled
    """:func:`_positions_both` for a list whose scores are all equal and whose ``tkey`` values
    are whole numbers in ``[0, _KEY_LEVELS)`` (labels): the positions follow from counting the
    keys, in O(n) instead of one pass per document — under ``tkey`` ascending a document comes
    after every lower key and after the equal keys earlier in the input, under ``tkey``
    descending after every higher key and the same equal ones; under ``pkey`` (``plain``), in
    input order when every ``pkey`` is equal, else by one pass per document. Returns False,
    having written nothing, when the list is not of that kind (or is empty)."""
    if n == 0:
        return False
    s0 = scores[lo]
    for j in range(n):
        x = tkey[lo + j]
        if scores[lo + j] != s0 or not (x >= 0.0 and x < _KEY_LEVELS and x == np.floor(x)):
            return False
    cnt = hist[:_KEY_LEVELS]
    below = hist[_KEY_LEVELS : 2 * _KEY_LEVELS]
    seen = hist[2 * _KEY_LEVELS :]
    for k in range(_KEY_LEVELS):
        cnt[k] = 0
        seen[k] = 0
    for j in range(n):
        cnt[np.int64(tkey[lo + j])] += 1
    acc = 0
    for k in range(_KEY_LEVELS):
        below[k] = acc
        acc += cnt[k]
    p_equal = plain and _all_equal(pkey, lo, n)
    a = 0
    for j in range(n):
        k = np.int64(tkey[lo + j])
        if a < na and which[a] == j:
            pos[a] = below[k] + seen[k]
            pos_hi[a] = (n - below[k] - cnt[k]) + seen[k]
            if plain:
                if p_equal:
                    pos_p[a] = j
                else:
                    uj = pkey[lo + j]
                    c = np.int32(0)
                    for i in range(n):
                        u = pkey[lo + i]
                        c += np.int32((u < uj) | ((u == uj) & (i < j)))
                    pos_p[a] = c
            a += 1
        seen[k] += 1
    return True


@njit(cache=True, nogil=True)
def _positions_both(
    scores, tkey, pkey, plain, lo, n, which, na, pos, pos_hi, pos_p
):  # pragma: no cover - compiled
    """:func:`._kernels.positions` in two (``plain``: three) rankings at once: ``pos[a]`` the
    0-based position of document ``lo + which[a]`` by score descending, ``tkey`` ascending,
    index ascending; ``pos_hi[a]`` by score descending, ``tkey`` descending, index ascending;
    ``pos_p[a]`` by score descending, ``pkey`` ascending, index ascending — one branch-free
    pass over the list per document (scores and keys are finite)."""
    s = scores[lo : lo + n]
    t = tkey[lo : lo + n]
    u = pkey[lo : lo + n]
    for a in range(na):
        i = which[a]
        si = s[i]
        ti = t[i]
        c = np.int32(0)
        lt = np.int32(0)
        gt = np.int32(0)
        same = np.int32(0)  # equal score and key, earlier in the input
        if plain:
            ui = u[i]
            before = np.int32(0)  # ranked before it at its score under pkey
            for j in range(n):
                eq = s[j] == si
                c += np.int32(s[j] > si)
                lt += np.int32(eq & (t[j] < ti))
                gt += np.int32(eq & (t[j] > ti))
                same += np.int32(eq & (t[j] == ti) & (j < i))
                before += np.int32(eq & ((u[j] < ui) | ((u[j] == ui) & (j < i))))
            pos_p[a] = c + before
        else:
            for j in range(n):
                eq = s[j] == si
                c += np.int32(s[j] > si)
                lt += np.int32(eq & (t[j] < ti))
                gt += np.int32(eq & (t[j] > ti))
                same += np.int32(eq & (t[j] == ti) & (j < i))
        pos[a] = c + lt + same
        pos_hi[a] = c + gt + same


@njit(cache=True, nogil=True)
def rel_average_kernel(
    relv, scores, tkey, bnd, rend, pk, ak, rk, q0, q1, hits, apsum, rr, nrel
):  # pragma: no cover - compiled
    """``rank_rel_kernel`` for ``ties=average`` (``relv``: relevance 0/1 per document): the
    expectation over every order of each group of tied scores. P@k: the group's mean relevance
    at each of its positions. AP: McSherry & Najork (2008): position j of a group of g
    documents with c relevant, R0 relevant before it, holds a relevant document with
    probability c/g and then has R0 + 1 + (u)(c − 1)/(g − 1) relevant documents in the top j
    (u = j's offset in the group), contributing that over j. RR: sum over offsets m of
    P(first relevant at offset m) / position, with
    P(m) = prod_{t<m-1} (g − c − t)/(g − t) · c/(g − m + 1)."""
    maxn = longest(bnd, q0, q1)
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
            tot += relv[i]
        nrel[q] = tot
        for p in range(n):
            idx[p] = lo + p
        msort(idx, n, scores, tkey, tmp)
        for p in range(n):
            v[p] = relv[idx[p]]
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
