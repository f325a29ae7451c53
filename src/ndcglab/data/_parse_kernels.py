"""Numba kernels behind the LETOR/SVMlight reader: tokenising, number parsing, missing values.

These work on raw bytes (``uint8`` arrays) and fill preallocated NumPy arrays, so no Python
object is made per token. They are private: the public entry point is
:func:`ndcglab.data.letor.read_letor`.

Number parsing (:func:`parse_number`) follows Clinger's fast path: a decimal with at most 18
significant digits whose value is ``m · 10^e`` with ``m ≤ 2^53`` and ``|e| ≤ 22`` is converted
with one correctly rounded multiplication or division, so the float64 result is exactly what
``float()`` / ``strtod`` give. Other tokens get an approximate value and the status ``APPROX``:
float32 destinations (features) keep it (the error is far below float32 resolution), float64
destinations (labels, comment values) re-parse such tokens with Python's ``float``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._parse_codes import (
    APPROX,
    EXACT,
    INVALID,
    NULL,
    QID_NO,
    QID_UNKNOWN,
    QID_YES,
    S_BAD_INDEX,
    S_BAD_LABEL,
    S_BAD_PAIR,
    S_BAD_VALUE,
    S_DUP_INDEX,
    S_EMPTY_QID,
    S_INDEX_TOO_LARGE,
    S_MISSING_QID,
    S_NEED_WIDER,
    S_OK,
    S_UNEXPECTED_QID,
    S_UNKNOWN_KEY,
    S_VALUE_RANGE,
)

# exact powers of ten 10^0..10^22 and 2^53: the limits of the exact (Clinger) fast path; the
# writer (_format_kernels) uses the same ones to check that a decimal reads back
POW10 = np.array([10.0**i for i in range(23)], dtype=np.float64)
TWO53 = 9007199254740992


@njit(cache=True, nogil=True)
def _is_ws(c: int) -> bool:
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True, nogil=True)
def _lower(c: int) -> int:
    if 65 <= c <= 90:
        return c + 32
    return c


@njit(cache=True, nogil=True)
def _word_is(buf, s, e, word) -> bool:
    """Case-insensitive comparison of ``buf[s:e]`` with the lower-case ASCII ``word`` (uint8)."""
    if e - s != len(word):
        return False
    for k in range(e - s):
        if _lower(buf[s + k]) != word[k]:
            return False
    return True


@njit(cache=True, nogil=True, inline="always")
def _line_end(buf, pos, n):
    """Index of the newline that ends the line starting at ``pos`` (``n`` for a last line
    without one)."""
    while pos < n and buf[pos] != 10:
        pos += 1
    return pos


@njit(cache=True, nogil=True)
def _skip_ws(buf, i, eol):
    """The first index from ``i`` on that is not a blank (``eol`` if none)."""
    while i < eol and _is_ws(buf[i]):
        i += 1
    return i


@njit(cache=True, nogil=True, inline="always")
def _token_end(buf, i, eol):
    """The end of the token starting at ``i``: the next blank, ``#`` (a comment) or ``eol``."""
    while i < eol and not _is_ws(buf[i]) and buf[i] != 35:
        i += 1
    return i


@njit(cache=True, nogil=True, inline="always")
def _pair_end(buf, i, eol):
    """``(end, colon)`` of the ``index:value`` token starting at ``i``: its end as
    :func:`_token_end` finds it, and the position of its first ``:`` (-1 when it has none)."""
    colon = -1
    while i < eol and not _is_ws(buf[i]) and buf[i] != 35:
        if buf[i] == 58 and colon < 0:
            colon = i
        i += 1
    return i, colon


_W_NAN = np.frombuffer(b"nan", dtype=np.uint8).copy()
_W_INF = np.frombuffer(b"inf", dtype=np.uint8).copy()
_W_INFINITY = np.frombuffer(b"infinity", dtype=np.uint8).copy()
_W_NULL = np.frombuffer(b"null", dtype=np.uint8).copy()


@njit(cache=True, nogil=True)
def scale_pow10(v: float, exp10: int) -> float:
    """``v · 10^exp10`` by repeated exact powers (approximate when more than one step)."""
    while exp10 > 22:
        v *= 1e22
        exp10 -= 22
        if v == np.inf:
            return v
    while exp10 < -22:
        v /= 1e22
        exp10 += 22
        if v == 0.0:
            return v
    if exp10 >= 0:
        return v * POW10[exp10]
    return v / POW10[-exp10]


@njit(cache=True, nogil=True)
def parse_number(buf, s, e):
    """Parse ``buf[s:e]`` as a decimal number; return ``(value, status)``.

    Status: ``EXACT`` (correctly rounded float64), ``APPROX`` (close, not guaranteed correctly
    rounded), ``INVALID`` (not a number), ``NULL`` (the literal ``NULL``, value NaN).
    ``nan``/``inf``/``infinity`` (any case, optional sign) are accepted and EXACT.
    """
    if s >= e:
        return 0.0, INVALID
    i = s
    neg = False
    c = buf[i]
    if c == 45:
        neg = True
        i += 1
    elif c == 43:
        i += 1
    mant = 0
    ndig = 0
    exp10 = 0
    seen = 0
    dropped = False
    while i < e:
        c = buf[i]
        if c < 48 or c > 57:
            break
        seen += 1
        if ndig < 18:
            if mant != 0 or c != 48:
                mant = mant * 10 + (c - 48)
                ndig += 1
        else:
            exp10 += 1
            if c != 48:
                dropped = True
        i += 1
    if i < e and buf[i] == 46:
        i += 1
        while i < e:
            c = buf[i]
            if c < 48 or c > 57:
                break
            seen += 1
            if ndig < 18:
                if mant != 0 or c != 48:
                    mant = mant * 10 + (c - 48)
                    ndig += 1
                exp10 -= 1
            elif c != 48:
                dropped = True
            i += 1
    if seen == 0:
        # words: nan, inf, infinity (signed), NULL (unsigned)
        if _word_is(buf, i, e, _W_NAN):
            return np.nan, EXACT
        if _word_is(buf, i, e, _W_INF) or _word_is(buf, i, e, _W_INFINITY):
            return (-np.inf if neg else np.inf), EXACT
        if i == s and _word_is(buf, s, e, _W_NULL):
            return np.nan, NULL
        return 0.0, INVALID
    if i < e and (buf[i] == 101 or buf[i] == 69):
        i += 1
        eneg = False
        if i < e and (buf[i] == 45 or buf[i] == 43):
            eneg = buf[i] == 45
            i += 1
        ev = 0
        ed = 0
        while i < e:
            c = buf[i]
            if c < 48 or c > 57:
                break
            if ev < 100000:
                ev = ev * 10 + (c - 48)
            ed += 1
            i += 1
        if ed == 0:
            return 0.0, INVALID
        exp10 += -ev if eneg else ev
    if i != e:
        return 0.0, INVALID
    if mant == 0:
        return (-0.0 if neg else 0.0), EXACT
    if (not dropped) and mant <= TWO53 and -22 <= exp10 <= 22:
        v = float(mant)
        if exp10 >= 0:
            v = v * POW10[exp10]
        else:
            v = v / POW10[-exp10]
        return (-v if neg else v), EXACT
    v = scale_pow10(float(mant), exp10)
    return (-v if neg else v), APPROX


@njit(cache=True, nogil=True)
def _parse_uint(buf, s, e):
    """Digits only; returns -1 if not all digits/empty, -2 on overflow (> 9 digits)."""
    if s >= e:
        return -1
    if e - s > 9:
        for k in range(s, e):
            c = buf[k]
            if c < 48 or c > 57:
                return -1
        return -2
    v = 0
    for k in range(s, e):
        c = buf[k]
        if c < 48 or c > 57:
            return -1
        v = v * 10 + (c - 48)
    return v


@njit(cache=True, nogil=True)
def _same_bytes(buf, s1, e1, s2, e2) -> bool:
    if e1 - s1 != e2 - s2:
        return False
    for k in range(e1 - s1):
        if buf[s1 + k] != buf[s2 + k]:
            return False
    return True


@njit(cache=True, nogil=True)
def count_lines(buf):
    """Number of lines in ``buf`` (newlines, plus one for a last line without its newline)."""
    n = 0
    for k in range(len(buf)):
        if buf[k] == 10:
            n += 1
    if len(buf) and buf[len(buf) - 1] != 10:
        n += 1
    return n


@njit(cache=True, nogil=True)
def scan_lines(buf):
    """``(n_lines, bare_cr)``: :func:`count_lines`, and the offset of the first carriage return
    (``\\r``) that is not followed by a newline (``-1`` when there is none).

    A bare carriage return is an old-Mac line ending (or a stray byte); the reader refuses it
    rather than reading several lines as one."""
    n = 0
    bare = -1
    last = len(buf) - 1
    for k in range(len(buf)):
        c = buf[k]
        if c == 10:
            n += 1
        elif c == 13 and bare < 0 and (k == last or buf[k + 1] != 10):
            bare = k
    if len(buf) and buf[len(buf) - 1] != 10:
        n += 1
    return n, bare


@njit(cache=True, nogil=True)
def _scan_indices(buf, limit):
    """One pass over the ``index:value`` tokens of a block of lines: ``(largest, line, start,
    end)``, the largest index, and where the first token whose index exceeds ``limit`` (or has
    more than 9 digits) stands, ``line`` 0-based within ``buf``; ``line`` is ``-1`` when there
    is none. ``limit < 0``: no token stops the pass. Other errors are left for
    :func:`parse_block`."""
    n = len(buf)
    pos = 0
    line = 0
    best = 0
    while pos < n:
        eol = _line_end(buf, pos, n)
        i = _skip_ws(buf, pos, eol)
        if i < eol and buf[i] != 35:
            i = _token_end(buf, i, eol)  # skip the label
            while True:
                i = _skip_ws(buf, i, eol)
                if i >= eol or buf[i] == 35:
                    break
                s = i
                i, colon = _pair_end(buf, s, eol)
                if colon > s:
                    v = _parse_uint(buf, s, colon)
                    if limit >= 0 and (v == -2 or v > limit):
                        return best, line, s, i
                    if v > best:
                        best = v
        pos = eol + 1
        line += 1
    return best, -1, 0, 0


@njit(cache=True, nogil=True)
def first_index_above(buf, limit):
    """``(line, start, end)`` of the first feature token whose index exceeds ``limit`` (or has
    more than 9 digits); ``line`` is 0-based within ``buf``, ``-1`` when there is none."""
    _, line, s, e = _scan_indices(buf, limit)
    return line, s, e


@njit(cache=True, nogil=True)
def max_feature_index(buf):
    """Largest feature index in a block of lines (errors are left for :func:`parse_block`)."""
    return _scan_indices(buf, -1)[0]


@njit(cache=True, nogil=True)
def parse_block(
    buf,
    X,
    fixed_width,
    qid_mode,
    keys,
    key_off,
    labels,
    lab_s,
    lab_e,
    lab_slow,
    qid_s,
    qid_e,
    line_no,
    ext_s,
    ext_e,
    block_rows,
):
    """Parse whole lines in ``buf`` into the preallocated arrays.

    ``X`` must be zero-filled ``(rows_max, width)`` float32. Returns
    ``(status, n_rows, n_blocks, n_nan, err_line, err_s, err_e, qid_mode, n_label_slow)``;
    ``err_line`` is the 0-based line within ``buf``; ``err_s:err_e`` the offending token.
    """
    n = len(buf)
    width = X.shape[1]
    n_keys = len(key_off) - 1
    stamp = np.full(width + 1, -1, dtype=np.int64)
    pos = 0
    line = 0
    row = 0
    n_blocks = 0
    n_nan = 0
    n_slow = 0
    while pos < n:
        eol = _line_end(buf, pos, n)
        i = _skip_ws(buf, pos, eol)
        if i >= eol or buf[i] == 35:
            pos = eol + 1
            line += 1
            continue
        # ---- label
        s = i
        i = _token_end(buf, s, eol)
        v, st = parse_number(buf, s, i)
        if st == INVALID or st == NULL or (st == EXACT and not np.isfinite(v)):
            return S_BAD_LABEL, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
        labels[row] = v
        lab_s[row] = s
        lab_e[row] = i
        if st == APPROX:
            lab_slow[row] = True
            n_slow += 1
        else:
            lab_slow[row] = False
        line_no[row] = line
        # ---- qid
        i = _skip_ws(buf, i, eol)
        has_qid = (
            i + 4 <= eol
            and buf[i] == 113
            and buf[i + 1] == 105
            and buf[i + 2] == 100
            and buf[i + 3] == 58
        )
        if qid_mode == QID_UNKNOWN:
            qid_mode = QID_YES if has_qid else QID_NO
        if has_qid:
            if qid_mode == QID_NO:
                s = i
                i = _token_end(buf, s, eol)
                return S_UNEXPECTED_QID, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
            i += 4
            s = i
            i = _token_end(buf, s, eol)
            if i == s:
                return S_EMPTY_QID, row, n_blocks, n_nan, line, s - 4, i, qid_mode, n_slow
            qid_s[row] = s
            qid_e[row] = i
            if row == 0 or not _same_bytes(buf, s, i, qid_s[row - 1], qid_e[row - 1]):
                block_rows[n_blocks] = row
                n_blocks += 1
        elif qid_mode == QID_YES:
            s = i
            i = _token_end(buf, s, eol)
            return S_MISSING_QID, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
        else:
            qid_s[row] = -1
            qid_e[row] = -1
        # ---- features
        while True:
            i = _skip_ws(buf, i, eol)
            if i >= eol or buf[i] == 35:
                break
            s = i
            i, colon = _pair_end(buf, s, eol)
            if colon < 0:
                return S_BAD_PAIR, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
            idx = _parse_uint(buf, s, colon)
            if idx == -1:
                if buf[s] == 45 and _parse_uint(buf, s + 1, colon) >= 0:
                    return S_BAD_INDEX, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
                return S_BAD_PAIR, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
            if idx == -2:
                return S_INDEX_TOO_LARGE, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
            if idx == 0:
                return S_BAD_INDEX, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
            if idx > width:
                if fixed_width:
                    return S_INDEX_TOO_LARGE, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
                return S_NEED_WIDER, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
            if stamp[idx] == row:
                return S_DUP_INDEX, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
            stamp[idx] = row
            fv, fst = parse_number(buf, colon + 1, i)
            if fst == INVALID:
                return S_BAD_VALUE, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
            if fv != fv:
                n_nan += 1
            X[row, idx - 1] = fv
            if fv == fv and (X[row, idx - 1] == np.inf or X[row, idx - 1] == -np.inf):
                # inf, or a finite value beyond float32's range: refused, never stored as inf
                return S_VALUE_RANGE, row, n_blocks, n_nan, line, s, i, qid_mode, n_slow
        # ---- comment: key = value pairs
        for k in range(n_keys):
            ext_s[row, k] = -1
            ext_e[row, k] = -1
        if i < eol and buf[i] == 35:
            j = i + 1
            while True:
                j = _skip_ws(buf, j, eol)
                if j >= eol:
                    break
                ks = j
                while j < eol and not _is_ws(buf[j]):
                    j += 1
                ke = j
                # `key=value` in one token
                eq = -1
                for t in range(ks, ke):
                    if buf[t] == 61:
                        eq = t
                        break
                vs = -1
                ve = -1
                if eq > ks and eq < ke - 1:
                    vs = eq + 1
                    ve = ke
                    ke = eq
                elif eq < 0:
                    save = j
                    j = _skip_ws(buf, j, eol)
                    if j < eol and buf[j] == 61 and (j + 1 == eol or _is_ws(buf[j + 1])):
                        j = _skip_ws(buf, j + 1, eol)
                        if j < eol:
                            vs = j
                            while j < eol and not _is_ws(buf[j]):
                                j += 1
                            ve = j
                    else:
                        j = save
                if vs < 0:
                    continue
                found = -1
                for k in range(n_keys):
                    a = key_off[k]
                    b = key_off[k + 1]
                    if b - a == ke - ks:
                        same = True
                        for t in range(b - a):
                            if keys[a + t] != buf[ks + t]:
                                same = False
                                break
                        if same:
                            found = k
                            break
                if found < 0:
                    return S_UNKNOWN_KEY, row, n_blocks, n_nan, line, ks, ke, qid_mode, n_slow
                ext_s[row, found] = vs
                ext_e[row, found] = ve
        row += 1
        pos = eol + 1
        line += 1
    return S_OK, row, n_blocks, n_nan, 0, 0, 0, qid_mode, n_slow


@njit(cache=True, nogil=True)
def parse_float_tokens(buf, starts, ends):
    """Parse tokens ``buf[starts[i]:ends[i]]`` (``starts[i] < 0``: absent → NaN).

    Returns ``(values, status)`` with the :func:`parse_number` status per token
    (absent tokens get ``EXACT``).
    """
    n = len(starts)
    out = np.empty(n, dtype=np.float64)
    status = np.zeros(n, dtype=np.int8)
    for r in range(n):
        if starts[r] < 0:
            out[r] = np.nan
            continue
        v, st = parse_number(buf, starts[r], ends[r])
        out[r] = v
        status[r] = st
    return out, status


@njit(cache=True, nogil=True)
def gather_tokens(buf, starts, ends):
    """Concatenate the tokens ``buf[starts[i]:ends[i]]`` separated by ``\\n`` (absent → empty)."""
    n = len(starts)
    total = 0
    for r in range(n):
        if starts[r] >= 0:
            total += ends[r] - starts[r]
    out = np.empty(total + max(n - 1, 0), dtype=np.uint8)
    p = 0
    for r in range(n):
        if r > 0:
            out[p] = 10
            p += 1
        if starts[r] >= 0:
            for k in range(starts[r], ends[r]):
                out[p] = buf[k]
                p += 1
    return out


@njit(cache=True, nogil=True)
def fill_query_min(X, boundaries):
    """Replace NaN by the per-query minimum of the column's other values (0 if all NaN)."""
    n_q = len(boundaries) - 1
    f = X.shape[1]
    for q in range(n_q):
        lo = boundaries[q]
        hi = boundaries[q + 1]
        if hi <= lo:
            continue
        for j in range(f):
            has_nan = False
            m = np.inf
            for r in range(lo, hi):
                v = X[r, j]
                if v != v:
                    has_nan = True
                elif v < m:
                    m = v
            if has_nan:
                if m == np.inf:
                    # all NaN; or the smallest value is +inf: keep it as the minimum then
                    all_nan = True
                    for r in range(lo, hi):
                        if X[r, j] == X[r, j]:
                            all_nan = False
                            break
                    if all_nan:
                        m = 0.0
                for r in range(lo, hi):
                    if X[r, j] != X[r, j]:
                        X[r, j] = m
