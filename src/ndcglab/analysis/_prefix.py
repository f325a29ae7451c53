"""Numba kernel: DCG of every prefix S_n of every list, without re-sorting each prefix.

The documents of a query are sorted once (ranking order of the whole list). The ranking of the
prefix ``S_n`` (documents at positions ``pos < n`` of the list) is that order restricted to those
documents, so a scan of the sorted list that counts only ``pos < n`` gives each document's rank
in ``S_n``. One scan per (query, n) serves every measure of a group; it stops as soon as the
largest cut-off is reached (when no measure averages ties).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["prefix_dcg"]


@njit(cache=True)
def _disc(dtab, dlin, m, r, nq):  # pragma: no cover - compiled
    if dlin[m]:
        return float(nq - r)
    return dtab[m, r - 1]


@njit(cache=True)
def _disc_sum(ctab, dlin, m, a, b, nq):  # pragma: no cover - compiled
    """Σ_{r=a}^{b} D(r) (0 when b < a)."""
    if b < a:
        return 0.0
    if dlin[m]:
        cnt = b - a + 1
        return float(cnt * nq) - (a + b) * cnt / 2.0
    return ctab[m, b] - ctab[m, a - 1]


@njit(cache=True)
def prefix_dcg(order, pos, scores, bnd, grid, gains, dtab, ctab, dlin, ks, avg):  # pragma: no cover
    """DCG@k of the prefixes.

    ``order`` (N,) document indices, each query's segment sorted in ranking order; ``pos`` (N,)
    position of each document in its list (S_n = pos < n); ``scores`` (N,) (for tied groups when
    ``avg``); ``bnd`` (Q+1,); ``grid`` (G,) sizes n; ``gains`` (M, N); ``dtab`` (M, L) D(1..L);
    ``ctab`` (M, L+1) cumulative sums of D with ``ctab[:, 0] = 0``; ``dlin`` (M,) True for the
    linear discount ``n_q − r``; ``ks`` (M, Q, G) cut-offs (already clipped to the prefix length);
    ``avg`` (M,) True where tied scores share their mean gain. Returns (M, Q, G).
    """
    nm = gains.shape[0]
    nqr = bnd.shape[0] - 1
    ng = grid.shape[0]
    out = np.zeros((nm, nqr, ng))
    gsum = np.zeros(nm)
    any_avg = False
    for m in range(nm):
        if avg[m]:
            any_avg = True
    for q in range(nqr):
        lo = bnd[q]
        hi = bnd[q + 1]
        length = hi - lo
        for gi in range(ng):
            n = grid[gi]
            nq = min(n, length)
            if nq <= 0:
                continue
            kmax = 0
            for m in range(nm):
                if ks[m, q, gi] > kmax:
                    kmax = ks[m, q, gi]
            stop = nq if any_avg else min(nq, kmax)
            if stop <= 0:
                continue
            rank = 0
            gstart = 1
            gcnt = 0
            prev = 0.0
            for m in range(nm):
                gsum[m] = 0.0
            for j in range(lo, hi):
                i = order[j]
                if pos[i] >= n:
                    continue
                if any_avg and gcnt > 0 and scores[i] != prev:
                    for m in range(nm):
                        if avg[m]:
                            b = min(rank, ks[m, q, gi])
                            w = _disc_sum(ctab, dlin, m, gstart, b, nq)
                            out[m, q, gi] += gsum[m] / gcnt * w
                            gsum[m] = 0.0
                    gstart = rank + 1
                    gcnt = 0
                rank += 1
                gcnt += 1
                prev = scores[i]
                for m in range(nm):
                    if avg[m]:
                        gsum[m] += gains[m, i]
                    elif rank <= ks[m, q, gi]:
                        out[m, q, gi] += gains[m, i] * _disc(dtab, dlin, m, rank, nq)
                if rank >= stop:
                    break
            if any_avg and gcnt > 0:
                for m in range(nm):
                    if avg[m]:
                        b = min(rank, ks[m, q, gi])
                        out[m, q, gi] += gsum[m] / gcnt * _disc_sum(ctab, dlin, m, gstart, b, nq)
    return out


@njit(cache=True)
def sort_segments(perm, bnd, primary, secondary):  # pragma: no cover - compiled
    """Within each query's segment of ``perm`` (documents in list order), sort the documents by
    ``primary`` ascending, then ``secondary`` ascending, then their order in ``perm`` (stable)."""
    out = np.empty_like(perm)
    for q in range(bnd.shape[0] - 1):
        lo = bnd[q]
        hi = bnd[q + 1]
        if hi == lo:
            continue
        seg = perm[lo:hi]
        k2 = np.empty(hi - lo)
        for j in range(hi - lo):
            k2[j] = secondary[seg[j]]
        o = np.argsort(k2, kind="mergesort")
        seg = seg[o]
        k1 = np.empty(hi - lo)
        for j in range(hi - lo):
            k1[j] = primary[seg[j]]
        o = np.argsort(k1, kind="mergesort")
        out[lo:hi] = seg[o]
    return out
