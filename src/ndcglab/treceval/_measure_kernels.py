# mypy: allow-untyped-defs
# (numba infers the kernels' types from their arguments; the docstrings state them)
"""Numba transcriptions of :mod:`._measures` for every topic at once (the fast path).

Each measure below is the Python function of :mod:`._measures` of the same name, line for line:
the same operations on the same operands in the same order (integers as integers, true
division where Python divides, sums added rank by rank), so that each value is the same double
as the Python engine's. Logarithms of ranks come from a table the caller fills with Python's
``math.log2``. A division by zero raises ``ZeroDivisionError`` and a logarithm of a number
<= 0 ``ValueError`` where Python's do (the caller then runs the Python engine); C's divisions
(an infinity or a NaN) are spelled out with ``_c_div``, as in the Python functions.

Gain measures (``ndcg``, ``ndcg_rel``, ``Rndcg``, ``G``, ``dcg``, ``ideal_dcg``, ``rbp``) read
gain tables the caller forms with the Python engine's ``_gain_table`` (one per measure and
number of relevance levels).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["CODES", "topic_measures"]

#: the measures the kernel computes, by name (its code is the index)
CODES: tuple[str, ...] = (
    "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult",
    "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg",
    "ndcg_cut", "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall",
    "set_map", "set_F", "num_nonrel_judged_ret", "yaap", "rbp", "rbp_resid", "unj",
)  # fmt: skip

_MIN_GEO_MEAN = 0.00001
_INFAP_EPSILON = 0.00001
#: what 0.0 / 0.0 gives in C on x86: the NaN with its sign bit set (printed ``-nan``); an
#: array, so that its bits reach the kernels as they are
_C_NAN = np.array([-math.nan])


@njit(cache=True, nogil=True)
def _c_div(a, b):  # pragma: no cover - compiled
    if b == 0:
        if math.isnan(a):
            return a
        if a == 0:
            return _C_NAN[0]
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


@njit(cache=True, nogil=True)
def _bpref(r, n, nrel, levels, lvl):  # pragma: no cover - compiled
    num_nonrel = 0
    for j in range(min(lvl, levels.shape[0])):
        if j >= 0:
            num_nonrel += levels[j]
    nonrel = 0
    b = 0.0
    for i in range(n):
        v = r[i]
        if v == -1 or v == -2:
            continue
        if 0 <= v < lvl:
            nonrel += 1
        elif nonrel > 0:
            b += 1.0 - min(nonrel, nrel) / min(num_nonrel, nrel)
        else:
            b += 1.0
    if nrel:
        b /= nrel
    return b


@njit(cache=True, nogil=True)
def _interpolated(r, n, nrel, nrr, fracs, lround, lvl, vals):  # pragma: no cover - compiled
    nf = fracs.shape[0]
    cuts = np.empty(nf, np.int64)
    for k in range(nf):
        x = fracs[k] * nrel
        if lround:
            cuts[k] = math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)
        else:
            cuts[k] = int(x + 0.9)
    for k in range(nf):
        vals[k] = 0.0
    cur = nf - 1
    while cur >= 0 and cuts[cur] > nrr:
        cur -= 1
    precis = nrr / n if n else _C_NAN[0]
    int_precis = precis
    so_far = nrr
    i = n
    total = 0.0
    while i > 0 and so_far > 0:
        precis = so_far / i
        if int_precis < precis:
            int_precis = precis
        if r[i - 1] >= lvl:
            while cur >= 0 and so_far == cuts[cur]:
                vals[cur] = int_precis
                total += int_precis
                cur -= 1
            so_far -= 1
        i -= 1
    while cur >= 0:
        vals[cur] = int_precis
        total += int_precis
        cur -= 1
    return total


@njit(cache=True, nogil=True)
def _rprec_mult(r, n, nrel, nrr, fracs, lvl, vals):  # pragma: no cover - compiled
    nf = fracs.shape[0]
    cuts = np.empty(nf, np.int64)
    for k in range(nf):
        cuts[k] = int(fracs[k] * nrel + 0.9)
        vals[k] = 0.0
    cur = nf - 1
    while cur >= 0 and cuts[cur] > n:
        vals[cur] = nrr / cuts[cur]
        cur -= 1
    so_far = nrr
    i = n
    while i > 0 and so_far > 0:
        precis = so_far / i
        while cur >= 0 and i == cuts[cur]:
            vals[cur] = precis
            cur -= 1
        if r[i - 1] >= lvl:
            so_far -= 1
        i -= 1


@njit(cache=True, nogil=True)
def _infap(r, n, nrel, lvl):  # pragma: no cover - compiled
    nonrel = 0
    rel = 0
    unj = 0
    s = 0.0
    for j in range(n):
        v = r[j]
        if v == -1:
            continue
        if v == -2:
            unj += 1
            continue
        if 0 <= v < lvl:
            nonrel += 1
            continue
        rel += 1
        if j == 0:
            s += 1.0
        else:
            fj = float(j)
            s += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel - 1 + nonrel + unj) / fj) * (
                (rel - 1 + _INFAP_EPSILON) / (rel - 1 + nonrel + 2 * _INFAP_EPSILON)
            )
    if nrel:
        s /= nrel
    return s


@njit(cache=True, nogil=True)
def _ndcg_cut(r, n, levels, nlev, cuts, log2, out):  # pragma: no cover - compiled
    n_cuts = cuts.shape[0]
    for k in range(n_cuts):
        out[k] = 0.0
    s = 0.0
    ci = 0
    done = False
    for i in range(n):
        v = r[i]
        if i == cuts[ci]:
            out[ci] = s
            ci += 1
            if ci == n_cuts:
                done = True
                break
        if v > 0:
            s += v / log2[i]
    if not done:
        while ci < n_cuts:
            out[ci] = s
            ci += 1
    ci = 0
    lv = nlev - 1
    count = 0
    ideal = 0.0
    i = 0
    while True:
        count += 1
        while lv > 0 and count > levels[lv]:
            lv -= 1
            count = 1
        if lv <= 0:
            break
        if i == cuts[ci]:
            if ideal > 0.0:
                out[ci] /= ideal
            ci += 1
            if ci == n_cuts:
                break
        ideal += lv / log2[i]
        i += 1
    while ci < n_cuts:
        if ideal > 0.0:
            out[ci] /= ideal
        ci += 1


@njit(cache=True, nogil=True)
def _gain_walk(r, n, lev, e0, m, glev, ggain, gsrc, rescale, gl, seq):  # pragma: no cover
    """From a gain table (see :func:`topic_measures`): ``gl[i]``, the gain of the i-th ranked
    document (the first entry of its level; 0 for a level the table lacks), and the ideal
    ranking's gains ``seq`` (the entries from the last, each as often as its count of judged
    documents). Returns (length of ``seq``, the table's last gain — 0 for an empty table).
    ``rescale`` (rbp): gains mapped onto [0, 1] by (g - lo) / (hi - lo) when lo = min(0, gains)
    < 0 or hi = max(0, gains) > 1."""
    lo = 0.0
    hi = 0.0
    if rescale:
        for e in range(e0, e0 + m):
            lo = min(lo, ggain[e])
            hi = max(hi, ggain[e])
    scale = rescale and (lo < 0 or hi > 1)
    for i in range(n):
        v = r[i]
        g = 0.0
        for e in range(e0, e0 + m):
            if glev[e] == v:
                g = ggain[e]
                if scale:
                    g = (g - lo) / (hi - lo)
                break
        gl[i] = g
    nseq = 0
    for e in range(e0 + m - 1, e0 - 1, -1):
        cnt = lev[gsrc[e]] if gsrc[e] >= 0 else 0
        for _ in range(cnt):
            seq[nseq] = ggain[e]
            nseq += 1
    return nseq, ggain[e0 + m - 1] if m > 0 else 0.0


@njit(cache=True, nogil=True)
def _dcg_parts(gl, n, seq, nseq, cur, log2):  # pragma: no cover - compiled
    dcg = 0.0
    ideal_dcg = 0.0
    i = 0
    while i < n and cur > 0.0:
        g = gl[i]
        if g != 0:
            dcg += g / log2[i]
        cur = seq[i] if i < nseq else 0.0
        if cur > 0.0:
            ideal_dcg += cur / log2[i]
        i += 1
    while i < n:
        g = gl[i]
        if g != 0:
            dcg += g / log2[i]
        i += 1
    while cur > 0.0:
        cur = seq[i] if i < nseq else 0.0
        if cur > 0.0:
            ideal_dcg += cur / log2[i]
        i += 1
    return dcg, ideal_dcg


@njit(cache=True, nogil=True)
def _ndcg_rel(gl, n, seq, nseq, cur, log2):  # pragma: no cover - compiled
    dcg = 0.0
    ideal_dcg = 0.0
    s = 0.0
    n_rel_ret = 0
    n_rel = 0
    i = 0
    while i < n and cur > 0.0:
        g = gl[i]
        if g != 0:
            dcg += g / log2[i]
        cur = seq[i] if i < nseq else 0.0
        if cur > 0.0:
            n_rel += 1
            ideal_dcg += cur / log2[i]
        if g > 0:
            s += _c_div(dcg, ideal_dcg)
            n_rel_ret += 1
        i += 1
    while i < n:
        g = gl[i]
        if g != 0:
            dcg += g / log2[i]
        if g > 0:
            s += _c_div(dcg, ideal_dcg)
            n_rel_ret += 1
        i += 1
    while cur > 0.0:
        cur = seq[i] if i < nseq else 0.0
        if cur > 0.0:
            n_rel += 1
            ideal_dcg += cur / log2[i]
        i += 1
    s += (n_rel - n_rel_ret) * _c_div(dcg, ideal_dcg)
    return s / n_rel if s > 0.0 else 0.0


@njit(cache=True, nogil=True)
def _rndcg(gl, n, nrel, seq, nseq, cur, log2):  # pragma: no cover - compiled
    if nrel == 0:
        return 0.0
    dcg = 0.0
    ideal_dcg = 0.0
    s = 0.0
    old = cur
    changes = 0
    i = 0
    while i < n and cur > 0.0:
        g = gl[i]
        cur = seq[i] if i < nseq else 0.0
        if old != cur:
            if ideal_dcg > 0.0:
                s += dcg / ideal_dcg
                changes += 1
            old = cur
        if g != 0:
            dcg += g / log2[i]
        if cur > 0.0:
            ideal_dcg += cur / log2[i]
        i += 1
    if i < n:
        while i < n:
            g = gl[i]
            if g != 0:
                dcg += g / log2[i]
            i += 1
        if ideal_dcg > 0.0:
            s += dcg / ideal_dcg
            changes += 1
    while cur > 0.0:
        cur = seq[i] if i < nseq else 0.0
        if old != cur:
            if ideal_dcg > 0.0:
                s += dcg / ideal_dcg
                changes += 1
            old = cur
        if cur > 0.0:
            ideal_dcg += cur / log2[i]
        i += 1
    if changes == 0:
        return _c_div(s, 0.0)
    return s / changes


@njit(cache=True, nogil=True)
def _log2(x):  # pragma: no cover - compiled
    """``math.log2`` with Python's domain error (numba's gives a NaN or -inf)."""
    if x <= 0.0:
        raise ValueError("math domain error")
    return math.log2(x)


@njit(cache=True, nogil=True)
def _g(gl, n, seq, nseq, cur):  # pragma: no cover - compiled
    res_g = 0.0
    sum_res = 0.0
    sum_ideal = 0.0
    sum_cost = 0.0
    min_cost = 1.0
    i = 0
    while i < n and cur > 0.0:
        g = gl[i]
        sum_res += g
        cur = seq[i] if i < nseq else 0.0
        if cur > 0.0:
            sum_ideal += cur
        sum_cost += cur if cur >= min_cost else min_cost
        if g != 0:
            res_g += g / _log2(2 + sum_cost - sum_res)
        i += 1
    while i < n:
        g = gl[i]
        sum_res += g
        sum_cost += min_cost
        if g != 0:
            res_g += g / _log2(2 + sum_cost - sum_res)
        i += 1
    while cur > 0.0:
        cur = seq[i] if i < nseq else 0.0
        if cur > 0.0:
            sum_ideal += cur
        i += 1
    return res_g / sum_ideal if sum_ideal > 0.0 else 0.0


@njit(cache=True, nogil=True)
def topic_measures(
    rl, offs, num_ret, num_rel, num_rel_ret, nonpool, unjudged, levels, loffs, nlev,
    codes, cols, pstart, pend, params, lvl, n_coll, lround, log2,
    gstart, glen, glev, ggain, gsrc, out,
):  # fmt: skip  # pragma: no cover - compiled
    """``out[t, cols[k]:…]``: the values of measure ``codes[k]`` (an index of :data:`CODES`;
    parameters ``params[pstart[k]:pend[k]]``: cut-offs, fractions or coefficients) for topic
    ``t`` (the arrays of :func:`._scan_kernels.rank_join`). ``lround``: trec_eval 10's
    rounding of recall fractions; ``log2[i]`` = log2(i + 2). The gain measures read slot
    ``k``'s gain table for a topic with ``nl`` relevance levels: entries ``gstart[k, nl]``
    onwards, ``glen[k, nl]`` of them, in the table's sorted order, each a level ``glev``, a
    gain ``ggain`` and the level whose count of judged documents it takes ``gsrc`` (-1:
    none); rbp's and rbp_resid's p is their first parameter."""
    T = offs.shape[0] - 1
    widest = 1
    deepest = 1
    for t in range(T):
        widest = max(widest, offs[t + 1] - offs[t])
        deepest = max(deepest, loffs[t + 1] - loffs[t])
    relc = np.empty(widest + 1, np.int64)
    unjc = np.empty(widest + 1, np.int64)
    apc = np.empty(widest + 1, np.float64)
    gl = np.empty(widest, np.float64)
    seq_len = 0
    for t in range(T):
        judged = 0
        for i in range(loffs[t], loffs[t + 1]):
            judged += levels[i]
        seq_len = max(seq_len, judged)
    seq = np.empty(seq_len + 1, np.float64)
    vals = np.empty(params.shape[0] + 1, np.float64)
    for t in range(T):
        a = offs[t]
        n = offs[t + 1] - a
        r = rl[a : a + n]
        lev = levels[loffs[t] : loffs[t + 1]]
        nl = nlev[t]
        nrel = num_rel[t]
        nrr = num_rel_ret[t]
        relc[0] = 0
        unjc[0] = 0
        apc[0] = 0.0
        for i in range(n):
            v = r[i]
            if v >= lvl:
                relc[i + 1] = relc[i] + 1
                apc[i + 1] = apc[i] + relc[i + 1] / (i + 1)
            else:
                relc[i + 1] = relc[i]
                apc[i + 1] = apc[i] + 0.0
            unjc[i + 1] = unjc[i] + (1 if v == -1 or v == -2 else 0)
        table = -1  # the gain table gl/seq were formed from (its first entry, rescaled)
        nseq = 0
        cur0 = 0.0
        row = out[t]
        for k in range(codes.shape[0]):
            c = codes[k]
            col = cols[k]
            p = params[pstart[k] : pend[k]]
            if (c >= 18 and c <= 23) or c == 35:
                e0 = gstart[k, nl]
                key = 2 * e0 + (1 if c == 35 else 0)
                if key != table:
                    nseq, cur0 = _gain_walk(
                        r, n, lev, e0, glen[k, nl], glev, ggain, gsrc, c == 35, gl, seq
                    )
                    table = key
            if c == 0:  # num_q
                row[col] = 1.0
            elif c == 1:
                row[col] = float(n)
            elif c == 2:
                row[col] = float(nrel)
            elif c == 3:
                row[col] = float(nrr)
            elif c == 4:  # map
                row[col] = apc[n] / nrel if relc[n] else 0.0
            elif c == 5:  # gm_map
                s = apc[n]
                if relc[n]:
                    s = s / nrel
                row[col] = math.log(max(s, _MIN_GEO_MEAN))
            elif c == 6:  # Rprec
                m = min(n, nrel)
                row[col] = 0.0 if m == 0 else relc[m] / nrel
            elif c == 7:  # bpref
                row[col] = _bpref(r, n, nrel, lev, lvl)
            elif c == 8:  # recip_rank
                x = 0.0
                for i in range(n):
                    if r[i] >= lvl:
                        x = 1.0 / (i + 1)
                        break
                row[col] = x
            elif c == 9:  # iprec_at_recall
                _interpolated(r, n, nrel, nrr, p, lround, lvl, vals)
                for j in range(p.shape[0]):
                    row[col + j] = vals[j]
            elif c == 10:  # P
                for j in range(p.shape[0]):
                    kk = int(p[j])
                    row[col + j] = relc[min(kk, n)] / kk
            elif c == 11:  # recall
                for j in range(p.shape[0]):
                    kk = int(p[j])
                    row[col + j] = 0.0 if nrel == 0 else relc[min(kk, n)] / nrel
            elif c == 12:
                row[col] = _infap(r, n, nrel, lvl)
            elif c == 13:  # gm_bpref
                row[col] = math.log(max(_bpref(r, n, nrel, lev, lvl), _MIN_GEO_MEAN))
            elif c == 14:
                _rprec_mult(r, n, nrel, nrr, p, lvl, vals)
                for j in range(p.shape[0]):
                    row[col + j] = vals[j]
            elif c == 15:  # utility
                row[col] = (
                    p[0] * nrr + p[1] * (n - nrr) + p[2] * (nrel - nrr)
                    + p[3] * (n_coll + nrr - n - nrel)
                )  # fmt: skip
            elif c == 16:  # 11pt_avg
                total = _interpolated(r, n, nrel, nrr, p, lround, lvl, vals)
                row[col] = total / p.shape[0]
            elif c == 17:  # binG
                kk = 0
                s = 0.0
                for i in range(n):
                    if r[i] >= lvl:
                        kk += 1
                        s += 1.0 / log2[1 + i - kk]
                row[col] = s / nrel if kk else 0.0
            elif c == 18:
                row[col] = _g(gl, n, seq, nseq, cur0)
            elif c == 19 or c == 20 or c == 21:  # dcg, ideal_dcg, ndcg
                dcg, ideal = _dcg_parts(gl, n, seq, nseq, cur0, log2)
                if c == 19:
                    row[col] = dcg
                elif c == 20:
                    row[col] = ideal
                else:
                    row[col] = dcg / ideal if ideal > 0.0 else 0.0
            elif c == 22:
                row[col] = _ndcg_rel(gl, n, seq, nseq, cur0, log2)
            elif c == 23:
                row[col] = _rndcg(gl, n, nrel, seq, nseq, cur0, log2)
            elif c == 24:  # ndcg_cut
                cuts = np.empty(p.shape[0], np.int64)
                for j in range(p.shape[0]):
                    cuts[j] = int(p[j])
                _ndcg_cut(r, n, lev, nl, cuts, log2, vals)
                for j in range(p.shape[0]):
                    row[col + j] = vals[j]
            elif c == 25:  # map_cut
                for j in range(p.shape[0]):
                    kk = int(p[j])
                    row[col + j] = 0.0 if nrel == 0 else apc[min(kk, n)] / nrel
            elif c == 26:  # relative_P
                for j in range(p.shape[0]):
                    kk = int(p[j])
                    if nrel == 0:
                        row[col + j] = 0.0
                    else:
                        row[col + j] = relc[min(kk, n)] / (nrel if kk > nrel else kk)
            elif c == 27:  # success
                for j in range(p.shape[0]):
                    kk = int(p[j])
                    row[col + j] = 1.0 if relc[min(kk, n)] else 0.0
            elif c == 28:  # set_P
                row[col] = nrr / n if n else 0.0
            elif c == 29:  # set_relative_P
                row[col] = nrr / min(n, nrel) if n and nrel else 0.0
            elif c == 30:  # set_recall
                row[col] = nrr / nrel if nrel else 0.0
            elif c == 31:  # set_map
                row[col] = (nrr * nrr) / (n * nrel) if n and nrel else 0.0
            elif c == 32:  # set_F
                if not nrr:
                    row[col] = 0.0
                else:
                    pp = nrr / n
                    rec = nrr / nrel
                    x = p[0]
                    row[col] = (x + 1.0) * pp * rec / (x * pp + rec)
            elif c == 33:
                row[col] = float(n - nonpool[t] - unjudged[t] - nrr)
            elif c == 34:  # yaap
                s = apc[n]
                x = (1.0 + s) / (1.0 + nrel - s)
                if x <= 0.0:
                    raise ValueError("math domain error")  # Python's math.log
                row[col] = math.log(x)
            elif c == 35:  # rbp
                pr = p[0]
                s = 0.0
                cur = 1.0
                for i in range(n):
                    g = gl[i]
                    if g != 0:
                        s += g * cur
                    cur *= pr
                row[col] = (1.0 - pr) * s
            elif c == 36:  # rbp_resid
                pr = p[0]
                unj = 0
                s = 0.0
                cur = 1.0
                for i in range(n):
                    if r[i] < 0:
                        unj += 1
                        s += cur
                    cur *= pr
                row[col] = cur + (1 - pr) * s if unj else 0.0
            elif c == 37:  # unj
                for j in range(p.shape[0]):
                    kk = int(p[j])
                    row[col + j] = unjc[min(kk, n)] / kk


@njit(cache=True, nogil=True)
def column_sums(values):  # pragma: no cover - compiled
    """Each column's sum, added row by row from 0.0 (the Python engine's order)."""
    out = np.zeros(values.shape[1], np.float64)
    for t in range(values.shape[0]):
        for j in range(values.shape[1]):
            out[j] += values[t, j]
    return out
