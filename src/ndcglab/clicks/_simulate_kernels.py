"""Numba kernels of the click simulator (:mod:`ndcglab.clicks.simulate`).

Random numbers come from a counter-based generator: every session draws from its own
SplitMix64 stream, started from a hash of (seed, session id), so a log is the same whatever the
number of threads and a session's clicks do not depend on the other sessions.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53

# click model codes
PBM, CASCADE, DCM, DBN, UBM, TRUST = 0, 1, 2, 3, 4, 5
# policy codes
DETERMINISTIC, PLACKETT_LUCE, RANDTOP, SWAP = 0, 1, 2, 3


@njit(cache=True, inline="always")
def _mix(z: np.uint64) -> np.uint64:
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def _start(seed: np.uint64, session: np.uint64, stream: np.uint64) -> np.uint64:
    return _mix(_mix(seed * _GOLDEN + stream) ^ (session * _M2 + _GOLDEN))


@njit(cache=True, inline="always")
def _uniform(state: np.uint64) -> tuple[np.uint64, float]:
    state = state + _GOLDEN
    return state, float(_mix(state) >> np.uint64(11)) * _TO_UNIT


@njit(cache=True, parallel=True)
def choose_queries(
    seed: int, first: int, n: int, eligible: np.ndarray, bounds: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """The query of each session (uniform over ``eligible``) and the number shown, min(k, n_q)."""
    queries = np.empty(n, dtype=np.int64)
    shown = np.empty(n, dtype=np.int64)
    ne = len(eligible)
    sd = np.uint64(seed)
    for i in prange(n):
        st = _start(sd, np.uint64(first + i), np.uint64(1))
        st, u = _uniform(st)
        j = min(int(u * ne), ne - 1)
        q = eligible[j]
        queries[i] = q
        shown[i] = min(k, bounds[q + 1] - bounds[q])
    return queries, shown


@njit(cache=True, parallel=True)
def simulate_sessions(
    seed: int,
    first: int,
    queries: np.ndarray,
    offsets: np.ndarray,
    bounds: np.ndarray,
    base: np.ndarray,
    logw: np.ndarray,
    policy: int,
    policy_n: int,
    model: int,
    theta: np.ndarray,
    lam: np.ndarray,
    gamma: float,
    ubm: np.ndarray,
    eps_pos: np.ndarray,
    eps_neg: np.ndarray,
    attract: np.ndarray,
    satisfy: np.ndarray,
    pl_prop: np.ndarray,
    out_doc: np.ndarray,
    out_pos: np.ndarray,
    out_click: np.ndarray,
    out_prop: np.ndarray,
) -> None:
    """Fill the rows ``offsets[i]:offsets[i+1]`` of session ``first + i`` (see the module doc)."""
    n = len(queries)
    sd = np.uint64(seed)
    for i in prange(n):
        q = queries[i]
        lo = bounds[q]
        nq = bounds[q + 1] - lo
        r0 = offsets[i]
        m = offsets[i + 1] - r0
        st = _start(sd, np.uint64(first + i), np.uint64(2))
        # ---- the ranking shown
        if policy == PLACKETT_LUCE:
            keys = np.empty(nq)
            for j in range(nq):
                st, u = _uniform(st)
                keys[j] = logw[lo + j] - np.log(-np.log(u + 1e-300) + 1e-300)
            order = np.argsort(-keys)
            for p in range(m):
                d = lo + order[p]
                out_doc[r0 + p] = d
                out_prop[r0 + p] = pl_prop[d, p]
        else:
            for p in range(m):
                out_doc[r0 + p] = base[lo + p]
                out_prop[r0 + p] = 1.0
            if policy == RANDTOP:
                nn = min(policy_n, m)
                for p in range(nn - 1, 0, -1):  # Fisher-Yates on the top nn
                    st, u = _uniform(st)
                    j = min(int(u * (p + 1)), p)
                    tmp = out_doc[r0 + p]
                    out_doc[r0 + p] = out_doc[r0 + j]
                    out_doc[r0 + j] = tmp
                for p in range(nn):
                    out_prop[r0 + p] = 1.0 / nn
            elif policy == SWAP and m > 1:
                st, u = _uniform(st)
                j = min(int(u * m), m - 1)  # position j+1 swapped with the top (j = 0: none)
                tmp = out_doc[r0]
                out_doc[r0] = out_doc[r0 + j]
                out_doc[r0 + j] = tmp
                out_prop[r0] = 1.0 / m
                for p in range(1, m):
                    out_prop[r0 + p] = 1.0 / m if p == j else (m - 1.0) / m
        # ---- the clicks
        last = 0
        going = True
        for p in range(m):
            r = r0 + p
            out_pos[r] = p + 1
            if not going:
                out_click[r] = 0
                continue
            a = attract[out_doc[r]]
            st, u = _uniform(st)
            if model == PBM:
                c = u < theta[p] * a
            elif model == TRUST:
                c = u < theta[p] * (eps_pos[p] * a + eps_neg[p] * (1.0 - a))
            elif model == UBM:
                c = u < ubm[p, last] * a
                if c:
                    last = p + 1
            else:  # cascade family
                c = u < a
                if model == CASCADE:
                    if c:
                        going = False
                elif model == DCM:
                    if c:
                        st, u = _uniform(st)
                        going = u < lam[p]
                else:  # DBN
                    if c:
                        st, u = _uniform(st)
                        if u < satisfy[out_doc[r]]:
                            going = False
                    if going:
                        st, u = _uniform(st)
                        going = u < gamma
            out_click[r] = 1 if c else 0


@njit(cache=True, parallel=True)
def pl_marginals(logw: np.ndarray, bounds: np.ndarray, k: int, step: float) -> np.ndarray:
    """P(document at position p) under Plackett-Luce with weights exp(logw), p = 1..k.

    Exponential race: item i arrives at T_i ~ Exp(w_i) and the ranking is the arrival order, so
    P(d at p) = integral of w_d exp(-w_d t) P(exactly p-1 others before t) dt; the count of the
    others is Poisson-binomial (a dynamic programme), and the integral is a trapezoid rule in
    x = log t, around t = 1/w_d (the rule converges geometrically for this smooth integrand).
    """
    n_docs = len(logw)
    out = np.zeros((n_docs, k))
    nq = len(bounds) - 1
    for q in prange(nq):
        lo = bounds[q]
        hi = bounds[q + 1]
        n = hi - lo
        if n == 0:
            continue
        top = logw[lo]
        for j in range(lo, hi):
            top = max(top, logw[j])
        w = np.empty(n)
        for j in range(n):
            w[j] = np.exp(max(logw[lo + j] - top, -700.0))
        kk = min(k, n)
        coef = np.empty(kk)
        for di in range(n):
            centre = -np.log(w[di])
            x = centre - 30.0
            while x <= centre + 4.0:
                t = np.exp(x)
                coef[:] = 0.0
                coef[0] = 1.0
                for j in range(n):
                    if j == di:
                        continue
                    before = -np.expm1(-w[j] * t)
                    for c in range(kk - 1, 0, -1):
                        coef[c] = coef[c] * (1.0 - before) + coef[c - 1] * before
                    coef[0] *= 1.0 - before
                dens = w[di] * t * np.exp(-w[di] * t) * step
                for p in range(kk):
                    out[lo + di, p] += dens * coef[p]
                x += step
    return out
