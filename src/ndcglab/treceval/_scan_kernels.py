# mypy: allow-untyped-defs
# (numba infers the kernels' types from their arguments; the docstrings state them)
"""Numba kernels of the fast path: qrels and run files read as byte offsets, each topic's
ranking formed and joined with its judgements (docs/trec_eval_cli.md, "Speed").

They read the file's bytes (``uint8``) as :mod:`._readers` reads them: lines end at ``\\n``,
fields are separated by C's ``isspace`` bytes (space, ``\\t`` ``\\n`` ``\\v`` ``\\f`` ``\\r``),
names are compared byte by byte (unsigned, a prefix first: Python's ``bytes`` order, C's
``strcmp`` order for names without a NUL byte). Whatever they do not take exactly as the
Python readers would (a malformed line, a label that is not a plain integer, a document named
twice) they report by a non-zero status, and the caller then runs the Python engine, which
applies every rule and names the error.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["mark_runs", "rank_join", "scan_qrels", "scan_run"]

#: a retrieved document absent from the qrels / judged with a negative relevance
NONPOOL = -1
UNJUDGED = -2
#: exact powers of ten (10**k is a double exactly for k <= 22)
_POW10 = np.array([10.0**k for k in range(23)])
#: the largest label the fast path takes (a topic's level counts are an array that long)
MAX_LABEL = 1000


@njit(cache=True, nogil=True, inline="always")
def _space(c):  # pragma: no cover - compiled
    return c == 32 or (c >= 9 and c <= 13)


@njit(cache=True, nogil=True)
def _fields(buf, pos, n, fs, fe):  # pragma: no cover - compiled
    """The fields of the line starting at ``pos``: their count (the first ``len(fs)`` kept in
    ``fs``/``fe``) and where the next line starts."""
    eol = pos
    while eol < n and buf[eol] != 10:
        eol += 1
    nf = 0
    i = pos
    while i < eol:
        if _space(buf[i]):
            i += 1
            continue
        j = i
        while j < eol and not _space(buf[j]):
            j += 1
        if nf < fs.shape[0]:
            fs[nf] = i
            fe[nf] = j
        nf += 1
        i = j
    return nf, eol + 1


@njit(cache=True, nogil=True)
def scan_qrels(buf, n_lines):  # pragma: no cover - compiled
    """A qrels file's lines (``qid iter docno rel``): ``(status, qs, qe, ds, de, rel)``, the
    offsets of each line's topic id and document name and its label. Status 1: a line without
    exactly four fields, or a label that is not ``[+-]digits`` (at most 18 digits) within
    ``±MAX_LABEL``."""
    qs = np.empty(n_lines, np.int64)
    qe = np.empty(n_lines, np.int64)
    ds = np.empty(n_lines, np.int64)
    de = np.empty(n_lines, np.int64)
    rel = np.empty(n_lines, np.int64)
    fs = np.empty(5, np.int64)
    fe = np.empty(5, np.int64)
    n = buf.shape[0]
    pos = 0
    k = 0
    while pos < n:
        nf, nxt = _fields(buf, pos, n, fs, fe)
        if nf != 4:
            return 1, qs[:0], qe[:0], ds[:0], de[:0], rel[:0]
        i = fs[3]
        e = fe[3]
        neg = False
        if buf[i] == 43 or buf[i] == 45:
            neg = buf[i] == 45
            i += 1
        if i == e or e - i > 18:
            return 1, qs[:0], qe[:0], ds[:0], de[:0], rel[:0]
        v = 0
        while i < e:
            c = buf[i]
            if c < 48 or c > 57:
                return 1, qs[:0], qe[:0], ds[:0], de[:0], rel[:0]
            v = v * 10 + (c - 48)
            i += 1
        if v > MAX_LABEL:
            return 1, qs[:0], qe[:0], ds[:0], de[:0], rel[:0]
        qs[k] = fs[0]
        qe[k] = fe[0]
        ds[k] = fs[2]
        de[k] = fe[2]
        rel[k] = -v if neg else v
        k += 1
        pos = nxt
    return 0, qs[:k], qe[:k], ds[:k], de[:k], rel[:k]


@njit(cache=True, nogil=True)
def _decimal(buf, s, e):  # pragma: no cover - compiled
    """``[+-]digits[.digits]`` with at most 15 digits, read exactly as ``float()`` reads it
    (an integer below 2**53 divided by an exact power of ten: one correctly rounded
    division); ``(False, 0.0)`` for any other text."""
    i = s
    neg = False
    if i < e and (buf[i] == 43 or buf[i] == 45):
        neg = buf[i] == 45
        i += 1
    m = 0
    digits = 0
    frac = 0
    dot = False
    while i < e:
        c = buf[i]
        if c >= 48 and c <= 57:
            m = m * 10 + (c - 48)
            digits += 1
            if dot:
                frac += 1
        elif c == 46 and not dot:
            dot = True
        else:
            return False, 0.0
        i += 1
    if digits == 0 or digits > 15:
        return False, 0.0
    v = m / _POW10[frac]
    return True, -v if neg else v


@njit(cache=True, nogil=True)
def scan_run(buf, n_lines, comments, single):  # pragma: no cover - compiled
    """A run's lines (``qid Q0 docno rank sim run_id``; blank lines skipped, and under
    ``comments`` a line whose first field starts with ``#``): ``(status, qs, qe, ds, de, sim,
    plain, sim_s, sim_e, id_s, id_e)``; ``plain[k]``: whether ``sim[k]`` was read here (else
    the caller reads the text ``sim_s:sim_e`` with ``atof``); ``single``: rounded to a C
    ``float``; ``id_s:id_e``: the last line's run id. Status 1: a line with fewer than six
    fields."""
    qs = np.empty(n_lines, np.int64)
    qe = np.empty(n_lines, np.int64)
    ds = np.empty(n_lines, np.int64)
    de = np.empty(n_lines, np.int64)
    ss = np.empty(n_lines, np.int64)
    se = np.empty(n_lines, np.int64)
    sim = np.empty(n_lines, np.float64)
    plain = np.empty(n_lines, np.bool_)
    fs = np.empty(6, np.int64)
    fe = np.empty(6, np.int64)
    n = buf.shape[0]
    pos = 0
    k = 0
    id_s = 0
    id_e = 0
    while pos < n:
        nf, nxt = _fields(buf, pos, n, fs, fe)
        pos = nxt
        if nf == 0:
            continue
        if comments and buf[fs[0]] == 35:
            continue
        if nf < 6:
            return 1, qs[:0], qe[:0], ds[:0], de[:0], sim[:0], plain[:0], ss[:0], se[:0], 0, 0
        qs[k] = fs[0]
        qe[k] = fe[0]
        ds[k] = fs[2]
        de[k] = fe[2]
        ss[k] = fs[4]
        se[k] = fe[4]
        ok, v = _decimal(buf, fs[4], fe[4])
        if ok and single:
            v = np.float64(np.float32(v))
        sim[k] = v
        plain[k] = ok
        id_s = fs[5]
        id_e = fe[5]
        k += 1
    return (0, qs[:k], qe[:k], ds[:k], de[:k], sim[:k], plain[:k], ss[:k], se[:k], id_s, id_e)


@njit(cache=True, nogil=True)
def mark_runs(buf, qs, qe):  # pragma: no cover - compiled
    """The lines where the topic id differs from the line before (the first line included)."""
    n = qs.shape[0]
    out = np.zeros(n, np.bool_)
    for k in range(n):
        if k == 0 or _cmp(buf, qs[k], qe[k], buf, qs[k - 1], qe[k - 1]) != 0:
            out[k] = True
    return out


@njit(cache=True, nogil=True, inline="always")
def _cmp(b1, s1, e1, b2, s2, e2):  # pragma: no cover - compiled
    l1 = e1 - s1
    l2 = e2 - s2
    m = l1 if l1 < l2 else l2
    for i in range(m):
        c1 = b1[s1 + i]
        c2 = b2[s2 + i]
        if c1 != c2:
            return -1 if c1 < c2 else 1
    if l1 == l2:
        return 0
    return -1 if l1 < l2 else 1


@njit(cache=True, nogil=True, inline="always")
def _first(mode, x, y, buf, ds, de, sim):  # pragma: no cover - compiled
    """Whether ``x`` goes before ``y``: mode 0, trec_eval's ranking (score descending, name
    descending); mode 1, name ascending."""
    if mode == 0:
        if sim[x] != sim[y]:
            return sim[x] > sim[y]
        return _cmp(buf, ds[x], de[x], buf, ds[y], de[y]) > 0
    return _cmp(buf, ds[x], de[x], buf, ds[y], de[y]) < 0


@njit(cache=True, nogil=True)
def _sort(a, tmp, n, mode, buf, ds, de, sim):  # pragma: no cover - compiled
    """``a[:n]`` (line indices) sorted in place (see :func:`_first`): insertion sort of runs
    of 16, then bottom-up merges."""
    w = 16
    for lo in range(0, n, w):
        hi = min(lo + w, n)
        for i in range(lo + 1, hi):
            x = a[i]
            j = i - 1
            while j >= lo and _first(mode, x, a[j], buf, ds, de, sim):
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = x
    src = a
    dst = tmp
    swapped = False
    width = w
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                if _first(mode, src[j], src[i], buf, ds, de, sim):
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
        src, dst = dst, src
        swapped = not swapped
        width *= 2
    if swapped:
        for i in range(n):
            a[i] = src[i]


@njit(cache=True, nogil=True)
def rank_join(
    rbuf, rds, rde, sim, roff, qbuf, qds, qde, qrel, qoff, pr, pq, max_docs, judged_only, lvl
):  # pragma: no cover - compiled
    """Each evaluated topic's ranking joined with its judgements, as
    :func:`._ranking.form_res_rels` forms it. Topic ``t`` is run topic ``pr[t]`` (its lines
    ``roff[pr[t]]:roff[pr[t]+1]`` of ``rds``/``rde``/``sim``) with qrels topic ``pq[t]``.

    Returns ``(status, rl, offs, num_ret, num_rel, num_rel_ret, nonpool, unjudged, levels,
    loffs, nlev)``: topic ``t``'s ranked relevance values ``rl[offs[t]:offs[t+1]]`` (-1 not in
    the pool, -2 judged negative), its counts, and its judged documents per level
    ``levels[loffs[t]:loffs[t+1]]``. Status 2: a document named twice in a topic of the run
    (within the first ``max_docs``) or of the qrels."""
    T = pr.shape[0]
    total = 0
    ltotal = 0
    widest = 1
    for t in range(T):
        n = roff[pr[t] + 1] - roff[pr[t]]
        total += min(n, max_docs)
        widest = max(widest, n, qoff[pq[t] + 1] - qoff[pq[t]])
        mx = -1
        for k in range(qoff[pq[t]], qoff[pq[t] + 1]):
            mx = max(mx, qrel[k])
        ltotal += mx + 1 if mx >= 0 else 0
    rl = np.empty(total, np.int64)
    offs = np.zeros(T + 1, np.int64)
    num_ret = np.empty(T, np.int64)
    num_rel = np.empty(T, np.int64)
    num_rel_ret = np.empty(T, np.int64)
    nonpool = np.empty(T, np.int64)
    unjudged = np.empty(T, np.int64)
    nlev = np.empty(T, np.int64)
    levels = np.zeros(ltotal, np.int64)
    loffs = np.zeros(T + 1, np.int64)
    a = np.empty(widest, np.int64)
    byname = np.empty(widest, np.int64)
    qa = np.empty(widest, np.int64)
    tmp = np.empty(widest, np.int64)
    val = np.empty(widest, np.int64)
    dummy = np.empty(0, np.float64)
    at = 0
    for t in range(T):
        r0 = roff[pr[t]]
        n = roff[pr[t] + 1] - r0
        for i in range(n):
            a[i] = r0 + i
        _sort(a, tmp, n, 0, rbuf, rds, rde, sim)
        m = min(n, max_docs)
        for i in range(m):
            byname[i] = a[i]
        _sort(byname, tmp, m, 1, rbuf, rds, rde, dummy)
        for i in range(1, m):
            x = byname[i]
            y = byname[i - 1]
            if _cmp(rbuf, rds[x], rde[x], rbuf, rds[y], rde[y]) == 0:
                return (
                    2,
                    rl,
                    offs,
                    num_ret,
                    num_rel,
                    num_rel_ret,
                    nonpool,
                    unjudged,
                    levels,
                    loffs,
                    nlev,
                )
        q0 = qoff[pq[t]]
        nq = qoff[pq[t] + 1] - q0
        for i in range(nq):
            qa[i] = q0 + i
        _sort(qa, tmp, nq, 1, qbuf, qds, qde, dummy)
        for i in range(1, nq):
            x = qa[i]
            y = qa[i - 1]
            if _cmp(qbuf, qds[x], qde[x], qbuf, qds[y], qde[y]) == 0:
                return (
                    2,
                    rl,
                    offs,
                    num_ret,
                    num_rel,
                    num_rel_ret,
                    nonpool,
                    unjudged,
                    levels,
                    loffs,
                    nlev,
                )
        # merge the name-sorted ranking with the name-sorted judgements
        j = 0
        for i in range(m):
            x = byname[i]
            v = NONPOOL
            while j < nq:
                y = qa[j]
                c = _cmp(rbuf, rds[x], rde[x], qbuf, qds[y], qde[y])
                if c < 0:
                    break
                if c == 0:
                    v = qrel[y] if qrel[y] >= 0 else UNJUDGED
                    break
                j += 1
            val[x - r0] = v
        npool = 0
        nunj = 0
        k = at
        for i in range(m):
            v = val[a[i] - r0]
            if v == NONPOOL:
                npool += 1
            elif v == UNJUDGED:
                nunj += 1
            if judged_only and v < 0:
                continue
            rl[k] = v
            k += 1
        got = k - at
        if judged_only:
            npool = 0
            nunj = 0
        if lvl > 0:
            rr = 0
            for i in range(at, k):
                if rl[i] >= lvl:
                    rr += 1
        elif not judged_only:
            rr = got - npool - nunj
        else:
            rr = got
        at = k
        offs[t + 1] = at
        num_ret[t] = got
        num_rel_ret[t] = rr
        nonpool[t] = npool
        unjudged[t] = nunj
        # the judged documents per level
        mx = -1
        for i in range(nq):
            mx = max(mx, qrel[q0 + i])
        l0 = loffs[t]
        width = mx + 1 if mx >= 0 else 0
        loffs[t + 1] = l0 + width
        for i in range(nq):
            r = qrel[q0 + i]
            if r >= 0:
                levels[l0 + r] += 1
        nl = 0
        nr = 0
        for i in range(width):
            c = levels[l0 + i]
            if c:
                nl = i + 1
                if i >= lvl:
                    nr += c
        nlev[t] = nl
        num_rel[t] = nr
    return 0, rl[:at], offs, num_ret, num_rel, num_rel_ret, nonpool, unjudged, levels, loffs, nlev
