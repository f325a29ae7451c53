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

__all__ = ["rank_join", "scan_qrels", "scan_run"]

#: a retrieved document absent from the qrels / judged with a negative relevance
NONPOOL = -1
UNJUDGED = -2
#: exact powers of ten (10**k is a double exactly for k <= 22)
_POW10 = np.array([10.0**k for k in range(23)])
#: the largest label the fast path takes (a topic's level counts are an array that long)
MAX_LABEL = 1000


@njit(cache=True, nogil=True)
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
def _grow(a):  # pragma: no cover - compiled
    b = np.empty(max(64, 2 * a.shape[0]), a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def _topic_start(buf, k, qs, qe, ts, te, tl, nt):  # pragma: no cover - compiled
    """Record line ``k`` (topic id ``buf[qs:qe]``) as the start of a run of lines of one topic
    when its id differs from the line before's (``ts``/``te``/``tl``: the runs' id offsets and
    first lines, ``nt`` of them so far). Returns the arrays (grown when full) and the count."""
    if nt > 0 and _cmp(buf, qs, qe, buf, ts[nt - 1], te[nt - 1]) == 0:
        return ts, te, tl, nt
    if nt == ts.shape[0]:
        ts = _grow(ts)
        te = _grow(te)
        tl = _grow(tl)
    ts[nt] = qs
    te[nt] = qe
    tl[nt] = k
    return ts, te, tl, nt + 1


@njit(cache=True, nogil=True)
def scan_qrels(buf, n_lines, proto):  # pragma: no cover - compiled
    """A qrels file's lines (``qid iter docno rel``): ``(status, ds, de, rel, ts, te, tl)``:
    each line's document name offsets and label (arrays of ``proto``'s type), and the runs of
    lines of one topic (their id's offsets, their first line). Status 1: a line without
    exactly four fields, or a label that is not ``[+-]digits`` (at most 18 digits) within
    ``±MAX_LABEL``."""
    ds = np.empty(n_lines, proto.dtype)
    de = np.empty(n_lines, proto.dtype)
    rel = np.empty(n_lines, proto.dtype)
    ts = np.empty(64, np.int64)
    te = np.empty(64, np.int64)
    tl = np.empty(64, np.int64)
    nt = 0
    fs = np.empty(5, np.int64)
    fe = np.empty(5, np.int64)
    n = buf.shape[0]
    pos = 0
    k = 0
    while pos < n:
        nf, nxt = _fields(buf, pos, n, fs, fe)
        if nf != 4:
            return 1, ds[:0], de[:0], rel[:0], ts[:0], te[:0], tl[:0]
        i = fs[3]
        e = fe[3]
        neg = False
        if buf[i] == 43 or buf[i] == 45:
            neg = buf[i] == 45
            i += 1
        if i == e or e - i > 18:
            return 1, ds[:0], de[:0], rel[:0], ts[:0], te[:0], tl[:0]
        v = 0
        while i < e:
            c = buf[i]
            if c < 48 or c > 57:
                return 1, ds[:0], de[:0], rel[:0], ts[:0], te[:0], tl[:0]
            v = v * 10 + (c - 48)
            i += 1
        if v > MAX_LABEL:
            return 1, ds[:0], de[:0], rel[:0], ts[:0], te[:0], tl[:0]
        ts, te, tl, nt = _topic_start(buf, k, fs[0], fe[0], ts, te, tl, nt)
        ds[k] = fs[2]
        de[k] = fe[2]
        rel[k] = -v if neg else v
        k += 1
        pos = nxt
    return 0, ds[:k], de[:k], rel[:k], ts[:nt], te[:nt], tl[:nt]


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
def scan_run(buf, n_lines, comments, single, proto):  # pragma: no cover - compiled
    """A run's lines (``qid Q0 docno rank sim run_id``; blank lines skipped, and under
    ``comments`` a line whose first field starts with ``#``): ``(status, ds, de, sim, ts, te,
    tl, xl, xs, xe, id_s, id_e)``: each line's document name offsets (``proto``'s type) and
    score (``single``: rounded to a C ``float``), the runs of lines of one topic (as
    :func:`scan_qrels`), the lines ``xl`` whose score this kernel does not read (the caller
    reads the text ``xs:xe`` with ``atof``), and the last line's run id ``id_s:id_e``.
    Status 1: a line with fewer than six fields."""
    ds = np.empty(n_lines, proto.dtype)
    de = np.empty(n_lines, proto.dtype)
    sim = np.empty(n_lines, np.float64)
    ts = np.empty(64, np.int64)
    te = np.empty(64, np.int64)
    tl = np.empty(64, np.int64)
    nt = 0
    xl = np.empty(64, np.int64)
    xs = np.empty(64, np.int64)
    xe = np.empty(64, np.int64)
    nx = 0
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
            return (1, ds[:0], de[:0], sim[:0], ts[:0], te[:0], tl[:0], xl[:0], xs[:0],
                    xe[:0], 0, 0)  # fmt: skip
        ts, te, tl, nt = _topic_start(buf, k, fs[0], fe[0], ts, te, tl, nt)
        ds[k] = fs[2]
        de[k] = fe[2]
        ok, v = _decimal(buf, fs[4], fe[4])
        if ok:
            if single:
                v = np.float64(np.float32(v))
        else:
            if nx == xl.shape[0]:
                xl = _grow(xl)
                xs = _grow(xs)
                xe = _grow(xe)
            xl[nx] = k
            xs[nx] = fs[4]
            xe[nx] = fe[4]
            nx += 1
        sim[k] = v
        id_s = fs[5]
        id_e = fe[5]
        k += 1
    return (0, ds[:k], de[:k], sim[:k], ts[:nt], te[:nt], tl[:nt], xl[:nx], xs[:nx], xe[:nx],
            id_s, id_e)  # fmt: skip


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _repeats(order, n, buf, ds, de):  # pragma: no cover - compiled
    """Whether two neighbours of the name-sorted ``order[:n]`` have the same name (a document
    twice in one topic)."""
    for i in range(1, n):
        x = order[i]
        y = order[i - 1]
        if _cmp(buf, ds[x], de[x], buf, ds[y], de[y]) == 0:
            return True
    return False


@njit(cache=True, nogil=True)
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
    rbuf,
    rds,
    rde,
    sim,
    rstart,
    rcount,
    qbuf,
    qds,
    qde,
    qrel,
    qstart,
    qcount,
    pr,
    pq,
    max_docs,
    judged_only,
    lvl,
):  # pragma: no cover - compiled
    """Each evaluated topic's ranking joined with its judgements, as
    :func:`._ranking.form_res_rels` forms it. Topic ``t`` is run topic ``pr[t]`` (its
    ``rcount[pr[t]]`` lines from ``rstart[pr[t]]`` of ``rds``/``rde``/``sim``) with qrels topic
    ``pq[t]`` (likewise ``qstart``/``qcount``).

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
        n = rcount[pr[t]]
        total += min(n, max_docs)
        widest = max(widest, n, qcount[pq[t]])
        mx = -1
        for k in range(qstart[pq[t]], qstart[pq[t]] + qcount[pq[t]]):
            mx = max(mx, qrel[k])
        ltotal += mx + 1 if mx >= 0 else 0
    rl = np.empty(total, np.int16)  # labels are within ±MAX_LABEL
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
        r0 = rstart[pr[t]]
        n = rcount[pr[t]]
        for i in range(n):
            a[i] = r0 + i
        _sort(a, tmp, n, 0, rbuf, rds, rde, sim)
        m = min(n, max_docs)
        for i in range(m):
            byname[i] = a[i]
        _sort(byname, tmp, m, 1, rbuf, rds, rde, dummy)
        if _repeats(byname, m, rbuf, rds, rde):
            return (2, rl, offs, num_ret, num_rel, num_rel_ret, nonpool, unjudged, levels,
                    loffs, nlev)  # fmt: skip
        q0 = qstart[pq[t]]
        nq = qcount[pq[t]]
        for i in range(nq):
            qa[i] = q0 + i
        _sort(qa, tmp, nq, 1, qbuf, qds, qde, dummy)
        if _repeats(qa, nq, qbuf, qds, qde):
            return (2, rl, offs, num_ret, num_rel, num_rel_ret, nonpool, unjudged, levels,
                    loffs, nlev)  # fmt: skip
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
