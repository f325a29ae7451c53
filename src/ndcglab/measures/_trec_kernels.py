# mypy: allow-untyped-defs
# (numba infers the kernels' types from their arguments; the docstrings state them)
"""Numba kernels of the rank family (recall, R-precision, success, bpref, infAP, gm_map,
interpolated precision, ERR, RBP, judged, num_*): one sort per query, then everything else is
vectorised NumPy over all queries in :mod:`._rank`.

Query ``q`` owns documents ``bnd[q]:bnd[q+1]``, of which ``bnd[q]:rend[q]`` are ranked (the
rest are judged but not retrieved, as in :func:`~ndcglab.measures.evaluate_trec`). The ranking
order is :func:`._kernels.msort`'s: score descending, ``tkey`` ascending, index ascending.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import longest, msort, ranked_order_kernel

__all__ = [
    "INFAP_STATES",
    "err_prefix_kernel",
    "infap_extreme_kernel",
    "iprec_kernel",
    "judged_sums_kernel",
    "ranked_order32_kernel",
    "ranked_order_kernel",
]


@njit(cache=True, nogil=True)
def ranked_order32_kernel(scores, tkey, bnd, rend, q0, q1, order):  # pragma: no cover - compiled
    """:func:`ranked_order_kernel` into an int32 ``order`` (half the memory of int64; for
    fewer than 2^31 documents): the same order, the same sort."""
    maxn = longest(bnd, q0, q1)
    tmp = np.empty(maxn, np.int32)
    for q in range(q0, q1):
        lo = bnd[q]
        for i in range(lo, bnd[q + 1]):
            order[i] = i
        msort(order[lo : rend[q]], rend[q] - lo, scores, tkey, tmp)


@njit(cache=True, nogil=True)
def err_prefix_kernel(stop, bnd, rend, q0, q1, out):  # pragma: no cover - compiled
    """Expected reciprocal rank of every leading part of every ranking: ``stop`` holds, in
    ranking order (the slots of :func:`ranked_order_kernel`), the probability that the user
    stops at each document; ``out[bnd[q] + r - 1]`` = ERR@r = sum_{i<=r} stop_i / i *
    prod_{j<i} (1 - stop_j)."""
    for q in range(q0, q1):
        lo = bnd[q]
        go_on = 1.0
        acc = 0.0
        for i in range(lo, rend[q]):
            acc += go_on * stop[i] / (i - lo + 1)
            go_on *= 1.0 - stop[i]
            out[i] = acc


@njit(cache=True, nogil=True)
def judged_sums_kernel(
    order, reld, judged, unjudged, bnd, rend, nrel, nnonrel, q0, q1, bpref, infap, apsum
):  # pragma: no cover - compiled
    """One pass over each ranking (``order`` from :func:`ranked_order_kernel`) summing, per
    query, trec_eval's bpref and infAP terms and AP's precisions (before the division by R).

    Per document: ``reld`` relevant (judged and passing the relevance rule), ``judged`` (a
    qrels relevance >= 0), ``unjudged`` (in the pool but unjudged: a negative qrels relevance);
    a document that is none of them (not in the qrels) only takes a position. ``nrel`` and
    ``nnonrel``: relevant and judged non-relevant documents of the query. bpref adds
    1 - min(n, R) / min(N, R) (1 when n = 0) at each relevant document with n judged
    non-relevant ones above it; infAP adds 1 at position 0, else 1/(j+1) + (j/(j+1)) *
    ((r-1+n+u)/j) * ((r-1+eps)/(r-1+n+2 eps)) at 0-based position j, eps = 1e-5."""
    eps = 0.00001
    for q in range(q0, q1):
        lo = bnd[q]
        r_all = nrel[q]
        den = min(nnonrel[q], r_all)
        rel_so_far = 0.0
        nonrel_so_far = 0.0
        unj_so_far = 0.0
        b_acc = 0.0
        i_acc = 0.0
        a_acc = 0.0
        for p in range(rend[q] - lo):
            d = order[lo + p]
            if unjudged[d]:
                unj_so_far += 1.0
                continue
            if not judged[d]:
                continue
            if not reld[d]:
                nonrel_so_far += 1.0
                continue
            rel_so_far += 1.0
            if nonrel_so_far > 0.0:
                b_acc += 1.0 - min(nonrel_so_far, r_all) / den
            else:
                b_acc += 1.0
            if p == 0:
                i_acc += 1.0
            else:
                fj = float(p)
                r1 = rel_so_far - 1.0
                i_acc += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                    (r1 + nonrel_so_far + unj_so_far) / fj
                ) * ((r1 + eps) / (r1 + nonrel_so_far + 2.0 * eps))
            a_acc += rel_so_far / (p + 1.0)
        bpref[q] = b_acc
        infap[q] = i_acc
        apsum[q] = a_acc


@njit(cache=True, nogil=True)
def iprec_kernel(rel, bnd, rend, nrel, levels, rounded, q0, q1, out):  # pragma: no cover
    """Interpolated precision at recall ``levels``: ``rel`` holds the relevance (0/1) in ranking
    order (the slots of :func:`ranked_order_kernel`); level x becomes a number of relevant
    documents c, ``rounded == 0``: c = floor(x · R + 0.9) (trec_eval 9, ``(long)(x R + 0.9)``),
    ``rounded == 1``: c = x · R rounded to the nearest integer, halves up (trec_eval 10's
    ``lround``; x · R >= 0). ``out[q, l]`` = the largest precision at or below the c-th relevant
    document (the first when c = 0), 0 when fewer than c relevant documents were ranked."""
    maxn = longest(bnd, q0, q1)
    best = np.empty(maxn)
    for q in range(q0, q1):
        lo = bnd[q]
        nret = 0
        for p in range(rend[q] - lo):
            if rel[lo + p] > 0.0:
                nret += 1
                best[nret - 1] = nret / (p + 1.0)
        for j in range(nret - 2, -1, -1):  # suffix maximum
            if best[j + 1] > best[j]:
                best[j] = best[j + 1]
        for li in range(levels.shape[0]):
            x = levels[li] * nrel[q]
            if rounded:  # lround; x - floor(x) is exact, floor(x + 0.5) is not
                r = np.floor(x)
                c = int(r) + 1 if x - r >= 0.5 else int(r)
            else:
                c = int(np.floor(x + 0.9))
            if nret == 0 or c > nret:
                out[q, li] = 0.0
            else:
                out[q, li] = best[max(c, 1) - 1]


#: the largest search :func:`infap_extreme_kernel` runs for one group of tied documents
#: ((a + 1)(b + 1)(c + 1) states for a relevant, b judged non-relevant and c pool-unjudged ones)
INFAP_STATES = 4_000_000


@njit(cache=True, nogil=True)
def infap_extreme_kernel(
    order, scores, reld, judged, unjudged, bnd, rend, best, q0, q1, out, ok
):  # pragma: no cover - compiled
    """infAP's sum (``judged_sums_kernel``'s ``infap``, before the division by R) under the
    order of the tied documents that makes it largest (``best``) or smallest, exact: no single
    order does it for every query, so each group of equal scores (contiguous in ``order``, the
    ranking by score) is searched. The counts entering a group (relevant, judged non-relevant
    and pool-unjudged documents above it, its first position) do not depend on the order inside
    earlier groups, so the extreme of the whole is the sum of each group's extreme. Within a
    group, a document absent from the qrels only pushes later ones down, and a relevant
    document's term, (1 + A B) / (p + 1), shrinks with its position p for the same counts: they
    go after every relevant document for the largest value and before for the smallest. The
    relevant, judged non-relevant and pool-unjudged ones are then placed by dynamic programming
    over how many of each are placed: (a + 1)(b + 1)(c + 1) states, each keeping the best
    running sum, added in ranking order exactly as ``judged_sums_kernel`` adds it (so the value
    is, to the last bit, that of an order reaching it). A group needing more than
    :data:`INFAP_STATES` states sets ``ok[q]`` False (``out[q]`` is then meaningless)."""
    eps = 0.00001
    dp = np.empty(0)
    for q in range(q0, q1):
        lo = bnd[q]
        n = rend[q] - lo
        ok[q] = True
        acc = 0.0
        r = 0.0
        nn = 0.0
        uu = 0.0
        p0 = 0
        g = 0
        while g < n:
            e = g + 1
            while e < n and scores[order[lo + e]] == scores[order[lo + g]]:
                e += 1
            a = 0
            b = 0
            c = 0
            for t in range(g, e):
                d = order[lo + t]
                if unjudged[d]:
                    c += 1
                elif judged[d] and reld[d]:
                    a += 1
                elif judged[d]:
                    b += 1
            other = (e - g) - a - b - c
            if a > 0:
                states = (a + 1) * (b + 1) * (c + 1)
                if states > INFAP_STATES:
                    ok[q] = False
                    break
                if dp.shape[0] < states:
                    dp = np.empty(states)
                start = p0 if best else p0 + other  # absent documents last / first
                for i in range(a + 1):
                    for j in range(b + 1):
                        for k in range(c + 1):
                            at = (i * (b + 1) + j) * (c + 1) + k
                            if i == 0 and j == 0 and k == 0:
                                dp[at] = acc
                                continue
                            have = False
                            v = 0.0
                            if i > 0:  # the last placed is relevant: its term, in order
                                pos = start + (i - 1) + j + k
                                prev = dp[((i - 1) * (b + 1) + j) * (c + 1) + k]
                                if pos == 0:
                                    v = prev + 1.0
                                else:
                                    fj = float(pos)
                                    r1 = r + (i - 1)
                                    nr = nn + j
                                    ur = uu + k
                                    v = prev + (
                                        1.0 / (fj + 1.0)
                                        + (fj / (fj + 1.0))
                                        * ((r1 + nr + ur) / fj)
                                        * ((r1 + eps) / (r1 + nr + 2.0 * eps))
                                    )
                                have = True
                            if j > 0:
                                w = dp[(i * (b + 1) + (j - 1)) * (c + 1) + k]
                                if not have or (w > v if best else w < v):
                                    v = w
                                have = True
                            if k > 0:
                                w = dp[(i * (b + 1) + j) * (c + 1) + (k - 1)]
                                if not have or (w > v if best else w < v):
                                    v = w
                            dp[at] = v
                acc = dp[states - 1]
            r += a
            nn += b
            uu += c
            p0 += e - g
            g = e
        out[q] = acc
