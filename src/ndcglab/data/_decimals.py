"""Plain decimals and words of a byte buffer, read in bulk with NumPy.

What both text readers need: the TREC readers (:mod:`~ndcglab.data.trec`) take their fields
with these, and the LETOR reader (:mod:`~ndcglab.data._letor_numpy`) its labels and features.
A module of its own so that reading TREC files does not load the LETOR reader.
"""

from __future__ import annotations

import numpy as np

_MAX_DIGITS = 18
_TWO53 = 1 << 53
_POW10 = np.array([10.0**i for i in range(_MAX_DIGITS + 1)])


def _words(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` of the words of ``buf``: the runs of bytes between ASCII whitespace
    (space, \\t, \\n, \\v, \\f, \\r), as ``bytes.split()`` finds them. Blank and non-blank
    bytes alternate in edges from a blank before ``buf`` to one after it: a word starts at
    every other edge and ends at the next."""
    blank = np.empty(len(buf) + 2, dtype=np.bool_)
    blank[0] = blank[-1] = True
    np.less_equal(buf - np.uint8(9), np.uint8(4), out=blank[1:-1])
    blank[1:-1] |= buf == np.uint8(32)
    edges = np.flatnonzero(blank[1:] != blank[:-1])
    return edges[0::2], edges[1::2]


def _rows(buf: np.ndarray, s: np.ndarray, width: int) -> np.ndarray:
    """The bytes ``buf[s[i] : s[i] + width]`` as the rows of a ``(len(s), width)`` uint8 array."""
    view = np.ndarray(shape=(len(buf) - width + 1,), dtype=f"S{width}", buffer=buf, strides=(1,))
    return view[s].view(np.uint8).reshape(len(s), width)


def _by_length(lens: np.ndarray) -> list[tuple[int, np.ndarray | None]]:
    """``(value, rows)`` for each value in the small non-negative integer array ``lens`` (token
    lengths, point positions); ``rows`` is ``None`` when all share it, none for an empty one."""
    counts = np.bincount(lens)
    present = np.flatnonzero(counts)
    if len(present) == 1:
        return [(int(present[0]), None)]
    return [(int(L), np.flatnonzero(lens == L)) for L in present]


def _decimals(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values of the plain decimals ``buf[s:e]`` (``-?D+(.D+)?``, at most 18 digits that read
    as an integer ``m <= 2^53``), as float64 equal to ``float()`` of each, and the indices of
    the tokens that are not such decimals (their values are NaN or meaningless: the caller
    replaces them or declines the file)."""
    if len(s) == 0:
        return np.full(0, np.nan), np.zeros(0, dtype=np.int64)
    out: np.ndarray | None = None  # NaN-filled when first needed (one group of one length: none)
    neg = buf[s] == 45
    if neg.any():
        s = s + neg
    lens = e - s
    failed: list[np.ndarray] = []
    for L, rows in _by_length(lens):
        idx = rows  # the group's tokens; None: all of them (no index array made for that)
        if L < 1 or L > _MAX_DIGITS + 1:
            failed.append(np.arange(len(s)) if idx is None else idx)
            continue
        D = _rows(buf, s if rows is None else s[idx], L)
        D -= 48  # digits 0..9; '.' is 254 ('.' - '0' in uint8)
        q0 = int(np.argmax(D[0] == 254)) if (D[0] == 254).any() else -1
        if 0 < q0 < L - 1 and bool((D[:, q0] == 254).all()) and np.count_nonzero(D >= 10) == len(D):
            groups: list[tuple[int, np.ndarray | None]] = [(q0, None)]  # one point, one place
        else:
            bad = D >= 10
            dot = D == 254
            where = np.full(len(D), L)
            rowbad: np.ndarray = np.asarray(bad.any(axis=1))
            if L > 2:
                inner = dot[:, 1:-1]
                ndot = np.count_nonzero(inner, axis=1)
                # one point, inside, and no other byte that is not a digit
                one = (ndot == 1) & (np.count_nonzero(bad, axis=1) == 1)
                where[one] = np.argmax(inner[one], axis=1) + 1
                rowbad &= ~one
            if rowbad.any():
                failed.append(np.flatnonzero(rowbad) if idx is None else idx[rowbad])
            good = np.flatnonzero(~rowbad)
            groups = [(q, good if sub is None else good[sub]) for q, sub in _by_length(where[good])]
        for q, sub in groups:
            Dq = D if sub is None else D[sub]
            at = sub if idx is None else (idx if sub is None else idx[sub])  # None: all
            if q == L > _MAX_DIGITS:
                failed.append(np.arange(len(s)) if at is None else at)  # nineteen digits
                continue
            # (nine digits or fewer fit int32: half the memory to go through)
            mant = Dq[:, 0].astype(np.int32 if L - (q < L) <= 9 else np.int64)
            for k in range(1, L):
                if k != q:
                    mant *= 10
                    mant += Dq[:, k]
            if L > 15:
                big = mant > _TWO53  # not exact in float64: the Numba parser's approximate path
                if big.any():
                    failed.append(np.flatnonzero(big) if at is None else at[big])
            m = mant.astype(np.float64)
            if q < L - 1:
                m /= _POW10[L - 1 - q]
            if rows is None and sub is None:
                out = m
            else:
                if out is None:
                    out = np.full(len(s), np.nan)
                out[at] = m
    if out is None:
        out = np.full(len(s), np.nan)
    np.negative(out, out=out, where=neg)
    bad_rows = np.concatenate(failed) if failed else np.zeros(0, dtype=np.int64)
    return out, np.sort(bad_rows)
