# mypy: allow-untyped-defs
# (numba infers the kernels' types from their arguments; the docstrings state them)
"""Numba kernels of the compat layer's fast path (:mod:`._trec_fast`): the positions of the
judged documents in each ranking, then trec_eval's measures from those positions alone.

Query ``q`` owns the run's scores ``sc[dbnd[q]:dbnd[q+1]]`` (single precision, as trec_eval 9
compares them) and its judged documents ``jbnd[q]:jbnd[q+1]``, with their scores in the run
``js`` (``jret`` False: not retrieved) and labels ``lab``. A measure of trec_eval's set depends on
the ranking only through the positions of the judged documents (an unjudged document is
neither relevant nor judged non-relevant, and has gain 0), so nothing else is ranked.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["judged_positions_kernel", "trec_measures_kernel"]

#: measure codes of :func:`trec_measures_kernel` (the columns' ``kinds``)
MAP, NDCG, NDCG_CUT, P, RECALL, RECIP_RANK, BPREF, RPREC = 0, 1, 2, 3, 4, 5, 6, 7
NUM_RET, NUM_REL, NUM_REL_RET, MAP_CUT, SUCCESS = 8, 9, 10, 11, 12


@njit(cache=True, nogil=True)
def judged_positions_kernel(sc, dbnd, js, jret, jbnd, q0, q1, above, tied):  # pragma: no cover
    """``above[j]`` = the number of documents of the query whose score is strictly larger than
    judged document j's (retrieved ones only), ``tied[q]`` = True when a retrieved judged
    document shares its score with another document (the caller then breaks those ties by
    document id). One pass over the query's scores per judged document, counted in 32-bit
    integers so that the compiler vectorises it (a few dozen judged documents against a
    thousand scores: cheaper than sorting them)."""
    for q in range(q0, q1):
        lo, hi = dbnd[q], dbnd[q + 1]
        s = sc[lo:hi]
        n = hi - lo
        for j in range(jbnd[q], jbnd[q + 1]):
            if not jret[j]:
                continue
            v = js[j]
            gt = np.int32(0)
            eq = np.int32(0)
            for d in range(n):
                gt += np.int32(s[d] > v)
                eq += np.int32(s[d] == v)
            above[j] = gt
            if eq > 1:
                tied[q] = True


@njit(cache=True, nogil=True)
def trec_measures_kernel(
    pos, jret, lab, jbnd, nret, level, darr, kinds, ks, q0, q1, out
):  # pragma: no cover - compiled
    """``out[q, c]`` = measure ``kinds[c]`` (cut-off ``ks[c]``) of query q, from the 0-based
    positions ``pos`` of its retrieved judged documents, their labels ``lab`` (>= 0), the
    number of documents the run ranks ``nret[q]`` and the smallest relevant label ``level``.
    The sums run down the ranking as the general kernels' do: AP adds (relevant so far) / (p+1)
    at each relevant position p, then divides by R (all relevant judged documents); DCG adds
    gain x ``darr[p]`` (``darr[p]`` = 1 / log2(p + 2)), the ideal DCG the same over all judged
    labels sorted descending; bpref adds 1 - min(n, R) / min(N, R) (1 when n = 0) at each
    relevant document with n judged non-relevant documents above it (N of them judged in all),
    then divides by R. A query with R = 0 scores 0 in the recall family, and an ideal DCG of 0
    gives NDCG 0."""
    nc = len(kinds)
    for q in range(q0, q1):
        a, b = jbnd[q], jbnd[q + 1]
        nj = b - a
        nrel = 0.0
        nnon = 0.0
        m = 0
        for j in range(a, b):
            if lab[j] >= level:
                nrel += 1.0
            else:
                nnon += 1.0
            if jret[j]:
                m += 1
        pj = np.empty(m, np.int64)
        idx = np.empty(m, np.int64)
        c = 0
        for j in range(a, b):
            if jret[j]:
                pj[c] = pos[j]
                idx[c] = j
                c += 1
        o = np.argsort(pj)
        ideal = -np.sort(-lab[a:b])
        rpos = np.empty(m, np.int64)
        rels = np.empty(m, np.bool_)
        gains = np.empty(m, np.float64)
        for c in range(m):
            j = idx[o[c]]
            rpos[c] = pj[o[c]]
            rels[c] = lab[j] >= level
            gains[c] = lab[j]
        nrr = 0.0
        for c in range(m):
            if rels[c]:
                nrr += 1.0
        for col in range(nc):
            kind = kinds[col]
            k = ks[col]
            v = 0.0
            if kind == MAP or kind == MAP_CUT:
                acc = 0.0
                seen = 0.0
                for c in range(m):
                    if kind == MAP_CUT and rpos[c] >= k:
                        break
                    if rels[c]:
                        seen += 1.0
                        acc += seen / (rpos[c] + 1.0)
                v = acc / nrel if nrel > 0.0 else 0.0
            elif kind == NDCG or kind == NDCG_CUT:
                lim = nret[q] if kind == NDCG else min(k, nret[q])
                dcg = 0.0
                for c in range(m):
                    if rpos[c] >= lim:
                        break
                    if gains[c] > 0.0:
                        dcg += gains[c] * darr[rpos[c]]
                ilim = nj if kind == NDCG else min(k, nj)
                idcg = 0.0
                for i in range(ilim):
                    if ideal[i] > 0.0:
                        idcg += ideal[i] * darr[i]
                v = dcg / idcg if idcg > 0.0 else 0.0
            elif kind == P or kind == RECALL or kind == SUCCESS or kind == RPREC:
                lim = k if kind != RPREC else int(nrel)
                hits = 0.0
                for c in range(m):
                    if rpos[c] >= lim:
                        break
                    if rels[c]:
                        hits += 1.0
                if kind == P:
                    v = hits / k
                elif kind == SUCCESS:
                    v = 1.0 if hits > 0.0 else 0.0
                else:
                    v = hits / nrel if nrel > 0.0 else 0.0
            elif kind == RECIP_RANK:
                for c in range(m):
                    if rels[c]:
                        v = 1.0 / (rpos[c] + 1.0)
                        break
            elif kind == BPREF:
                den = min(nnon, nrel)
                acc = 0.0
                non = 0.0
                for c in range(m):
                    if not rels[c]:
                        non += 1.0
                    elif non > 0.0:
                        acc += 1.0 - min(non, nrel) / den
                    else:
                        acc += 1.0
                v = acc / nrel if nrel > 0.0 else 0.0
            elif kind == NUM_RET:
                v = float(nret[q])
            elif kind == NUM_REL:
                v = nrel
            elif kind == NUM_REL_RET:
                v = nrr
            out[q, col] = v
