"""Numba kernels behind the LETOR/SVMlight writer: float32 and integer formatting, whole rows.

Private: the public entry point is :func:`ndcglab.data.writers.write_svmlight`.

Float32 formatting (:func:`write_f32`) prints the shortest decimal (1..9 significant digits)
that the reader's number parser (:func:`ndcglab.data._parse_kernels.parse_number`) reads back to
the same float32, so ``write_svmlight`` → ``read_letor`` is exact.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._parse_kernels import POW10, TWO53, scale_pow10


@njit(cache=True, nogil=True)
def _write_uint(out, p, v):
    """Write the decimal digits of the non-negative int ``v``; return the new position."""
    if v == 0:
        out[p] = 48
        return p + 1
    n = 0
    t = v
    while t > 0:
        t //= 10
        n += 1
    k = p + n - 1
    while v > 0:
        out[k] = 48 + v % 10
        v //= 10
        k -= 1
    return p + n


@njit(cache=True, nogil=True)
def _ndigits(v):
    n = 1
    while v >= 10:
        v //= 10
        n += 1
    return n


@njit(cache=True, nogil=True)
def _write_decimal(out, p, m, k):
    """Write ``m · 10^k`` (``m > 0`` integer) positionally, or in scientific form if far out."""
    while k < 0 and m % 10 == 0:
        m //= 10
        k += 1
    n = _ndigits(m)
    point = n + k  # digits before the decimal point
    if k >= 0 and point <= 16:
        p = _write_uint(out, p, m)
        for _ in range(k):
            out[p] = 48
            p += 1
        return p
    if k < 0 and point > 0:
        # digits[:point] . digits[point:]
        start = p
        p = _write_uint(out, p, m)
        # shift the fractional digits right by one to make room for '.'
        for t in range(p - 1, start + point - 1, -1):
            out[t + 1] = out[t]
        out[start + point] = 46
        return p + 1
    if k < 0 and point > -5:
        out[p] = 48
        out[p + 1] = 46
        p += 2
        for _ in range(-point):
            out[p] = 48
            p += 1
        return _write_uint(out, p, m)
    # scientific: d[.ddd]e±x
    start = p
    p = _write_uint(out, p, m)
    if n > 1:
        for t in range(p - 1, start, -1):
            out[t + 1] = out[t]
        out[start + 1] = 46
        p += 1
    out[p] = 101
    p += 1
    ex = point - 1
    if ex < 0:
        out[p] = 45
        p += 1
        ex = -ex
    return _write_uint(out, p, ex)


@njit(cache=True, nogil=True)
def _reads_back_f32(m, k, target):
    """Whether ``m · 10^k``, parsed as :func:`parse_number` does, rounds to float32 ``target``."""
    if m <= TWO53 and -22 <= k <= 22:
        v = float(m) * POW10[k] if k >= 0 else float(m) / POW10[-k]
    else:
        v = scale_pow10(float(m), k)
    return np.float32(v) == target


@njit(cache=True, nogil=True)
def write_f32(out, p, x):
    """Write float32 ``x`` as the shortest decimal that reads back to ``x``; NaN → ``NULL``."""
    if x != x:
        out[p] = 78
        out[p + 1] = 85
        out[p + 2] = 76
        out[p + 3] = 76
        return p + 4
    if x == 0:
        out[p] = 48
        return p + 1
    if x < 0:
        out[p] = 45
        p += 1
        x = -x
    if x == np.inf:
        out[p] = 105
        out[p + 1] = 110
        out[p + 2] = 102
        return p + 3
    a = np.float64(x)
    e = int(np.floor(np.log10(a)))
    if scale_pow10(1.0, e) > a:
        e -= 1
    elif scale_pow10(1.0, e + 1) <= a:
        e += 1
    target = np.float32(x)
    for d in range(1, 10):
        k = e - d + 1
        m = scale_pow10(a, -k)
        mi = int(np.floor(m + 0.5))
        if mi <= 0:
            mi = 1
        if _reads_back_f32(mi, k, target):
            return _write_decimal(out, p, mi, k)
        # the neighbours, in case rounding of the scaled value went the wrong way
        if d >= 8:
            if _reads_back_f32(mi + 1, k, target):
                return _write_decimal(out, p, mi + 1, k)
            if mi > 1 and _reads_back_f32(mi - 1, k, target):
                return _write_decimal(out, p, mi - 1, k)
    k = e - 9
    mi = int(np.floor(scale_pow10(a, -k) + 0.5))
    return _write_decimal(out, p, mi, k)


@njit(cache=True, nogil=True)
def format_rows(
    X,
    lo,
    hi,
    label_blob,
    label_off,
    label_idx,
    qid_blob,
    qid_off,
    row_query,
    comment_blob,
    comment_off,
    sparse,
    out,
):
    """Format rows ``lo:hi`` as LETOR lines into ``out``; return the number of bytes written.

    ``label_idx[r]`` indexes the pre-formatted label strings, ``row_query[r]`` the query id
    strings. ``comment_blob`` holds the rows' comments joined by newlines; ``comment_off`` their
    ``hi - lo + 1`` start offsets (the last = ``len(comment_blob) + 1``), or is empty for none.
    """
    p = 0
    f = X.shape[1]
    has_comment = len(comment_off) > 0
    for r in range(lo, hi):
        li = label_idx[r]
        for t in range(label_off[li], label_off[li + 1]):
            out[p] = label_blob[t]
            p += 1
        q = row_query[r]
        out[p] = 32
        out[p + 1] = 113
        out[p + 2] = 105
        out[p + 3] = 100
        out[p + 4] = 58
        p += 5
        for t in range(qid_off[q], qid_off[q + 1]):
            out[p] = qid_blob[t]
            p += 1
        for j in range(f):
            x = X[r, j]
            if sparse and x == 0:
                continue
            out[p] = 32
            p = _write_uint(out, p + 1, j + 1)
            out[p] = 58
            p = write_f32(out, p + 1, x)
        if has_comment:
            a = comment_off[r - lo]
            b = comment_off[r - lo + 1] - 1
            if b > a:
                out[p] = 32
                out[p + 1] = 35
                p += 2
                for t in range(a, b):
                    out[p] = comment_blob[t]
                    p += 1
        out[p] = 10
        p += 1
    return p
