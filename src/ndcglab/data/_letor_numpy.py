"""A NumPy reader for well-formed LETOR files of ordinary size, tried before the Numba parser.

The Numba parser (:mod:`._parse_kernels`) reads every LETOR/SVMlight file and reports every
malformed line, but a fresh process first pays about a second to load Numba and its cached
kernels (several seconds when the cache is cold). For a file of ordinary size in the most common
shape, this module gives the same arrays, bit for bit, with NumPy alone; the reader uses it
until the Numba parser has read a file in the process (then the compiled kernels are faster). It
never reports an error: whenever a file leaves that shape, :func:`parse` returns ``None`` and
the caller reads the file with the Numba parser, which applies and reports every rule.

The shape taken here (anything else is declined):

* the whole file fits in memory at once (at most :data:`MAX_BYTES`, after decompression);
* lines end with ``\\n`` or ``\\r\\n`` (a last line may lack its newline); no control
  character other than those and the blanks below, and no ``!`` or ``"``, anywhere (comments
  included);
* every line that is not blank or a comment is ``LABEL qid:QID INDEX:VALUE ... [# COMMENT]``,
  fields separated by the Numba parser's blanks (space, tab, CR, VT, FF); ``QID`` is 1 to 18
  digits;
* ``LABEL`` and every ``VALUE`` are decimal numbers. Plain decimals, ``-?D+(.D+)?`` with at
  most 18 digits whose integer ``m`` is at most ``2^53``, are read in bulk: ``m / 10^f`` with
  ``f <= 17`` is one correctly rounded division, exactly what ``float()`` gives and what the
  Numba parser's exact path gives. Other spellings (an exponent, a ``+``, a point at an end) are
  read one by one with ``float()``: any finite one for a ``LABEL`` (the Numba parser reads labels
  it cannot round exactly with ``float()`` too), for a ``VALUE`` only one the Numba parser reads
  exactly (at most 18 significant digits, ``m <= 2^53``, a power of ten within ``10^±22``), and
  at most one ``VALUE`` in twenty so spelled. Features are then rounded to float32, as there. A
  ``VALUE`` may also be ``NULL`` (any case, no sign), a missing value (NaN);
* every ``INDEX`` is 1 to 9 digits, at least 1, and the indices of a line strictly increase (so
  none repeats); without ``n_features`` the width is the largest index, which must not exceed
  the cap; with ``n_features`` no index may exceed it;
* a comment, if any, is ``KEY = VALUE`` pairs whose keys are the same, in the same order, on
  every line that has a comment, with no ``=`` inside a key and no ``:`` anywhere in the
  comment (a file whose lines are not all ``1:V ... m:V`` is read by counting colons, so there
  a ``:`` on a comment-only line is declined too); ``docid`` values are kept as strings, every
  other key's values must be decimal numbers (read with ``float()``, as the Numba parser reads
  them).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from .._compat import available_cores as _cores  # the cores this process may run on
from ._decimals import _TWO53, _decimals, _rows, _words

MAX_BYTES = 32 << 20
"""Files (after decompression) larger than this go to the Numba parser: past this size its
start-up cost is small next to the reading time, and it reads in blocks of bounded memory."""

SPLIT_BYTES = 4 << 20
"""Files of at least this size (times the number of parts) are read in parts by threads."""

MAX_PARTS = 4
"""At most this many parts (threads)."""

_SEP = np.zeros(256, dtype=np.bool_)
_SEP[[9, 10, 11, 12, 13, 32, 35]] = True  # blanks (as the Numba parser's), newline and '#'

#: a decimal number, and its parts (compiled on first use, not at import)
_NUMBER = rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,5})?"
_PARTS = rb"[+-]?([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]{1,5}))?"


@functools.cache
def _pattern(text: bytes) -> re.Pattern[bytes]:
    return re.compile(text)


_NULL = np.frombuffer(b"null", dtype=np.uint8)


@dataclass
class Parsed:
    """What :func:`parse` read: one block of rows, as :class:`._Parser` would have made it."""

    X: np.ndarray  # (n, width) float32
    labels: np.ndarray  # (n,) float64
    block_rows: np.ndarray  # first row of each run of equal qids
    block_qids: list[str]
    block_lines: np.ndarray  # the 1-based line of each of those rows
    keys: list[str]
    extras: dict[str, np.ndarray | list[str]]
    width: int
    n_nan: int  # NULL feature values (NaN in X)
    n_lines: int  # lines read, blank and comment lines included


def parse(data: bytes, n_features: int | None, limit: int) -> Parsed | None:
    """Read ``data`` (a whole LETOR file) or return ``None`` if it is not in the shape above.

    ``n_features`` fixes the width (``None``: the largest index, at most ``limit``). A file of
    at least :data:`SPLIT_BYTES` is cut at line ends into one part per available core (at most
    :data:`MAX_PARTS`), the parts are read by as many threads (NumPy releases the GIL in its
    array loops) and joined (:func:`_join`): the same result as one pass, and if any part is
    declined the whole file is.
    """
    if not data:
        return None
    if not data.endswith(b"\n"):
        if data.endswith(b"\r"):
            return None
        data += b"\n"
    cuts = _cuts(data, min(_cores(), MAX_PARTS, len(data) // SPLIT_BYTES))
    if len(cuts) == 2:
        return _parse_part(data, n_features, limit, 1)
    import threading

    k = len(cuts) - 1
    got: list[Parsed | None] = [None] * k

    def read(i: int) -> None:
        try:  # each thread copies out its own part
            got[i] = _parse_part(data[cuts[i] : cuts[i + 1]], n_features, limit, k)
        except Exception:  # pragma: no cover - declined, as a failure of one pass would be
            got[i] = None

    threads = [threading.Thread(target=read, args=(i,)) for i in range(1, k)]
    for th in threads:
        th.start()
    read(0)  # the calling thread reads the first part
    for th in threads:
        th.join()
    out = got[0]
    for nxt in got[1:]:
        if out is None or nxt is None:
            return None
        out = _join(out, nxt)
    return out


def _cuts(data: bytes, k: int) -> list[int]:
    """Where to cut ``data`` (ending with a newline) into at most ``k`` parts: the offsets
    ``0 = c_0 < c_1 < ... = len(data)``, each part ending at a line end and none empty."""
    cuts = [0]
    for j in range(1, max(k, 1)):
        at = data.find(b"\n", max(cuts[-1], len(data) * j // k)) + 1
        if at <= cuts[-1] or at >= len(data):
            break
        cuts.append(at)
    cuts.append(len(data))
    return cuts


def _join(p: Parsed, q: Parsed) -> Parsed | None:
    """The :class:`Parsed` of two consecutive parts of a file, as one pass over both reads it
    (``None`` where the parts' comments disagree: the file is then declined as a whole)."""
    if p.keys and q.keys and p.keys != q.keys:
        return None
    keys = p.keys or q.keys
    n_p, n_q = len(p.labels), len(q.labels)
    extras: dict[str, np.ndarray | list[str]] = {}
    for key in keys:  # lines without a comment: NaN, or "" for docid (as in _comments)
        a = p.extras.get(key, [""] * n_p if key == "docid" else np.full(n_p, np.nan))
        b = q.extras.get(key, [""] * n_q if key == "docid" else np.full(n_q, np.nan))
        if isinstance(a, list):
            extras[key] = a + list(b)
        else:
            extras[key] = np.concatenate([a, np.asarray(b)])
    width = max(p.width, q.width)
    if p.width == q.width:
        X = np.concatenate([p.X, q.X])
    else:  # the narrower part's missing columns are 0, as in one pass
        X = np.zeros((n_p + n_q, width), dtype=np.float32)
        X[:n_p, : p.width] = p.X
        X[n_p:, : q.width] = q.X
    same = p.block_qids[-1] == q.block_qids[0]  # one query across the cut: one block
    skip = 1 if same else 0
    return Parsed(
        X=X,
        labels=np.concatenate([p.labels, q.labels]),
        block_rows=np.concatenate([p.block_rows, q.block_rows[skip:] + n_p]),
        block_qids=p.block_qids + q.block_qids[skip:],
        block_lines=np.concatenate([p.block_lines, q.block_lines[skip:] + p.n_lines]),
        keys=keys,
        extras=extras,
        width=width,
        n_nan=p.n_nan + q.n_nan,
        n_lines=p.n_lines + q.n_lines,
    )


def _parse_part(data: bytes, n_features: int | None, limit: int, parts: int) -> Parsed | None:
    """:func:`parse` of ``data`` (ending with a newline) in one pass; ``data`` is one of
    ``parts`` parts of the file (for :func:`_values`' allowance of slow tokens)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    # ---- every byte <= '#': blanks, newlines and comment marks; any other such byte (a
    # control character, '!' or '"') is declined, as the Numba parser reads it as part of a token
    pos = np.flatnonzero(buf <= 35)
    kind = buf[pos]
    if not _SEP[kind].all():
        return None
    cr = pos[kind == 13]
    if len(cr) and not (buf[cr + 1] == 10).all():
        return None  # a bare carriage return: the Numba parser refuses it with its line
    nl = pos[kind == 10]
    n = n_lines = len(nl)
    line_start = np.empty(n, dtype=np.int64)
    line_start[0] = 0
    line_start[1:] = nl[:-1] + 1
    # ---- comments: from the first '#' of a line to its end
    hashes = pos[kind == 35]
    cstart = nl.copy()
    if len(hashes):
        hl = np.searchsorted(nl, hashes)
        first = np.ones(len(hashes), dtype=np.bool_)
        first[1:] = hl[1:] != hl[:-1]
        cstart[hl[first]] = hashes[first]
    # ---- tokens: the runs of bytes between two of those
    # (a token ends at pos[i] when bytes lie between pos[i - 1] and pos[i]; before pos[0], when
    # it is not the first byte; arrays are reused in place: a fresh process pays for new pages)
    ends_tok = np.empty(len(pos), dtype=np.bool_)
    ends_tok[0] = pos[0] > 0
    np.greater(np.subtract(pos[1:], pos[:-1]), 1, out=ends_tok[1:])
    ends = pos[ends_tok]
    lead = int(ends_tok[0])  # a token at byte 0 starts after a separator at -1
    starts = np.empty(len(ends), dtype=np.int64)
    starts[:lead] = -1
    starts[lead:] = pos[:-1][ends_tok[1:]]  # the separator before each token
    starts += 1
    del pos, ends_tok
    a = np.searchsorted(starts, line_start)
    if len(hashes):
        c = np.searchsorted(starts, cstart)
    else:
        c = np.empty_like(a)
        c[:-1] = a[1:]
        c[-1] = len(starts)
    counts = c - a
    line_no = None  # the 0-based line of each data line, when some lines are not data lines
    if not counts.all():  # blank and comment-only lines
        line_no = np.flatnonzero(counts)
        a, c, counts = a[line_no], c[line_no], counts[line_no]
        cstart, nl = cstart[line_no], nl[line_no]
        n = len(line_no)
    if n == 0 or counts.min() < 2:
        return None  # no data line, or one without qid
    if len(hashes):
        keep = np.zeros(len(starts) + 1, dtype=np.int8)
        np.add.at(keep, a, 1)
        np.add.at(keep, c, -1)
        data_tok = np.cumsum(keep[:-1]).astype(np.bool_)
        ds, de = starts[data_tok], ends[data_tok]
    else:
        ds, de = starts, ends
    del starts, ends
    first_tok = np.zeros(n, dtype=np.int64)
    np.cumsum(counts[:-1], out=first_tok[1:])
    # ---- labels
    labels = _numbers(data, buf, ds[first_tok], de[first_tok])
    if labels is None or not np.isfinite(labels).all():
        return None
    # ---- qids: 'qid:' and 1 to 18 digits
    qs, qe = ds[first_tok + 1], de[first_tok + 1]
    if not (
        (qe - qs > 4).all()
        and (buf[qs] == 113).all()
        and (buf[qs + 1] == 105).all()
        and (buf[qs + 2] == 100).all()
        and (buf[qs + 3] == 58).all()
    ):
        return None
    qv = _integers(buf, qs + 4, qe)
    if qv is None:
        return None
    qlen = qe - qs
    new_block = np.ones(n, dtype=np.bool_)
    new_block[1:] = (qv[1:] != qv[:-1]) | (qlen[1:] != qlen[:-1])
    block_rows = np.flatnonzero(new_block)
    block_qids = [data[s + 4 : e].decode("ascii") for s, e in zip(qs[block_rows], qe[block_rows])]
    # ---- index:value pairs: every other data token holds exactly one ':'
    is_pair = np.ones(len(ds), dtype=np.bool_)
    is_pair[first_tok] = False
    is_pair[first_tok + 1] = False
    ps, pe = ds[is_pair], de[is_pair]
    del ds, de, is_pair
    per_line = counts - 2
    pc = _dense_colons(buf, ps, pe, per_line)
    dense = pc is not None
    idx = None
    if pc is None:
        colons = np.flatnonzero(buf == 58)
        pc = np.delete(colons, np.searchsorted(colons, qs + 3))
        if len(pc) != len(ps) or not ((pc > ps) & (pc < pe - 1)).all():
            return None  # a ':' in a comment, or a pair with none or several
        if (pc - ps > 9).any():
            return None  # an index of ten digits or more: refused, whatever the cap
        idx = _integers(buf, ps, pc)
        if idx is None or (len(idx) and idx.min() < 1):
            return None
        dense = _dense(idx, per_line)
    del ps
    pc += 1  # where each value starts
    got = _values(buf, pc, pe, parts)
    del pc, pe
    if got is None:
        return None
    values, n_nan = got
    if dense:
        top = int(per_line[0])
    else:
        assert idx is not None  # the dense shortcut sets dense
        row_of = np.repeat(np.arange(n), per_line)
        if len(idx) > 1:
            step = idx[1:] - idx[:-1]
            if ((step <= 0) & (row_of[1:] == row_of[:-1])).any():
                return None  # indices out of order or repeated: the Numba parser decides
        top = int(idx.max()) if len(idx) else 0
    if n_features is not None:
        if top > n_features:
            return None
        width = int(n_features)
    else:
        if top > limit:
            return None
        width = top
    # ---- comments: the same KEY = VALUE pairs on every line that has one
    keys: list[str] = []
    extras: dict[str, np.ndarray | list[str]] = {}
    if len(hashes):
        pairs = _comments(buf, cstart, nl)
        if pairs is None:
            return None
        keys, extras = pairs
    if dense and width == top:
        X = values.astype(np.float32).reshape(n, width)
    else:
        X = np.zeros((n, width), dtype=np.float32)
        if dense:
            X[:, :top] = values.reshape(n, top)
        else:
            assert idx is not None
            X[row_of, idx - 1] = values
    block_lines = (block_rows if line_no is None else line_no[block_rows]) + 1
    return Parsed(
        X, labels, block_rows, block_qids, block_lines, keys, extras, width, n_nan, n_lines
    )


def _comments(
    buf: np.ndarray, cstart: np.ndarray, nl: np.ndarray
) -> tuple[list[str], dict[str, np.ndarray | list[str]]] | None:
    """The ``KEY = VALUE`` columns of the data lines' comments (``cstart``: each line's ``#``,
    or its newline ``nl`` when it has none), or ``None`` when they are not in the shape of the
    module docstring. As ``text.split()`` of each comment would read them, found for all lines
    at once: the comments' bytes are gathered into one buffer (each followed by its newline),
    split at ASCII whitespace (as ``bytes.split()``: a ``#`` inside a comment is part of a
    word), and the words checked column by column."""
    has = np.flatnonzero(cstart < nl)
    if len(has) == 0:
        return [], {}  # comments on comment-only lines only
    k = len(has)
    lo = cstart[has] + 1  # each comment's text, and the newline after it
    lens = nl[has] - lo + 1
    at = np.zeros(k, dtype=np.int64)
    np.cumsum(lens[:-1], out=at[1:])
    pos = np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(lo - at, lens)
    text = buf[pos]  # every comment's bytes, each followed by its newline
    del pos
    if (text == 58).any():
        return None  # a ':' in a comment: declined (the rule of the module docstring)
    starts, ends = _words(text)
    first = np.searchsorted(starts, at)  # each comment's first word
    count = np.diff(np.append(first, len(starts)))
    m = int(count[0])
    if m == 0 or m % 3 or (count != m).any():
        return None
    s, e = starts.reshape(k, m), ends.reshape(k, m)
    raw = text.tobytes()
    names = [raw[s[0, j] : e[0, j]] for j in range(0, m, 3)]
    if len(set(names)) != len(names) or any(b"=" in key for key in names):
        return None
    for j in range(m):
        if j % 3 == 2:
            continue
        width = int(e[0, j] - s[0, j])
        if ((e[:, j] - s[:, j]) != width).any():
            return None  # another key, or another word where '=' should be
        if not (_rows(text, s[:, j], width) == text[s[0, j] : e[0, j]]).all():
            return None
        if j % 3 == 1 and raw[s[0, j] : e[0, j]] != b"=":
            return None
    n = len(nl)
    keys = [key.decode("utf-8", "surrogateescape") for key in names]
    extras: dict[str, np.ndarray | list[str]] = {}
    for j, key in enumerate(keys):
        vs, ve = s[:, 3 * j + 2], e[:, 3 * j + 2]
        if key == "docid":
            words = _joined(text, vs, ve).decode("utf-8", "surrogateescape").split("\n")
            if k == n:
                extras[key] = words
            else:
                col = [""] * n
                for r, v in zip(has.tolist(), words):
                    col[r] = v
                extras[key] = col
            continue
        parsed = _numbers(raw, text, vs, ve)
        if parsed is None:
            return None
        full = np.full(n, np.nan)
        full[has] = parsed
        extras[key] = full
    return keys, extras


def _joined(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> bytes:
    """``b"\\n".join(bytes(buf[a:b]) for a, b in zip(s, e))``, gathered at once."""
    lens = e - s
    total = int(lens.sum())
    before = np.cumsum(lens) - lens  # bytes of the words before each word
    out = np.full(total + len(s) - 1, 10, dtype=np.uint8)  # newlines between the words
    offset = np.arange(total, dtype=np.int64) - np.repeat(before, lens)  # within its word
    out[offset + np.repeat(before + np.arange(len(s)), lens)] = buf[offset + np.repeat(s, lens)]
    return out.tobytes()


def _numbers(data: bytes, buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray | None:
    """Labels and comment values: ``float()`` of each token ``data[s:e]`` if every one is a
    decimal number; ``None`` otherwise.

    For such tokens the Numba parser gives exactly this: its exact path is correctly rounded,
    and the values it cannot round exactly it reads again with ``float()`` (labels and comment
    values; not features). Plain decimals are read by :func:`_decimals`, the rest one by one."""
    out, failed = _decimals(buf, s, e)
    for r in failed.tolist():
        tok = data[s[r] : e[r]]
        if not _pattern(_NUMBER).fullmatch(tok):
            return None
        out[r] = float(tok)
    return out


def _dense_colons(
    buf: np.ndarray, ps: np.ndarray, pe: np.ndarray, per_line: np.ndarray
) -> np.ndarray | None:
    """The common shape read without searching the file for ``:``: every line holds the pairs
    ``1:V 2:V ... m:V`` (the same m). Then pair ``k`` of a line starts with the digits of ``k``
    and its ``:`` lies right after them; checking those bytes (and that a value follows) is all
    the general path's colon search and index parsing would find (a ``:`` in a comment is left
    to :func:`_comments`). Returns the colons' positions, or ``None`` when the file is not in
    that shape (the general path then decides)."""
    m = int(per_line[0]) if len(per_line) else 0
    if m == 0 or m > 999 or (per_line != m).any():
        return None
    # each pair's first bytes, read as one little-endian word: 'k' and ':' for k = 1..m
    heads = [str(k).encode() + b":" for k in range(1, m + 1)]
    want = np.array([int.from_bytes(h, "little") for h in heads], dtype=np.uint32)
    keep = np.array([(1 << (8 * len(h))) - 1 for h in heads], dtype=np.uint32)
    if len(ps) == 0 or int(ps.max()) > len(buf) - 4:
        return None
    words = np.ndarray(shape=(len(buf) - 3,), dtype="<u4", buffer=buf, strides=(1,))
    starts = ps.reshape(-1, m)
    got = words[starts]
    got &= keep
    if not (got == want).all():
        return None
    del got
    pc = starts + np.array([len(h) - 1 for h in heads], dtype=np.int64)
    if not (pc < pe.reshape(-1, m) - 1).all():
        return None  # a pair without a value
    return pc.ravel()


def _dense(idx: np.ndarray, per_line: np.ndarray) -> bool:
    """Whether every line holds the indices 1, 2, ..., m in order (the same m on every line)."""
    m = int(per_line[0])
    if m == 0 or (per_line != m).any():
        return False
    return bool((idx.reshape(-1, m) == np.arange(1, m + 1)).all())


def _integers(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> np.ndarray | None:
    """Values of the digit strings ``buf[s:e]`` (1 to 18 digits each) as int64, or ``None``.

    The bytes are read right-aligned, ``width`` of them ending at each ``e`` (those before
    ``s`` are masked), so tokens of different lengths need no grouping."""
    out = np.zeros(len(s), dtype=np.int64)
    if len(s) == 0:
        return out
    lens = e - s
    width = int(lens.max())
    if lens.min() < 1 or width > 18 or int(e.min()) < width:
        return None
    D = _rows(buf, e - width, width) - 48
    for k in range(width):
        col = D[:, k]
        if k < width - 1:
            inside = lens >= width - k
            if not inside.all():
                col = np.where(inside, col, 0)
        if (col >= 10).any():
            return None
        out *= 10
        out += col
    return out


def _values(
    buf: np.ndarray, s: np.ndarray, e: np.ndarray, parts: int = 1
) -> tuple[np.ndarray, int] | None:
    """Feature values and the number of NULLs (any case, no sign: NaN), or ``None``.

    Plain decimals are read by :func:`_decimals`; the few other tokens (an exponent, a sign
    ``+``, a point at an end) one by one by :func:`_exact_float`, which takes only those the
    Numba parser reads exactly. A file with many such tokens (more than one in twenty, and
    more than 1000) is left to the Numba parser; a part of a file read in ``parts`` parts is
    allowed its share of the 1000."""
    out, failed = _decimals(buf, s, e)
    n_null = 0
    four = failed[e[failed] - s[failed] == 4]
    if len(four):
        null = four[((_rows(buf, s[four], 4) | 0x20) == _NULL).all(axis=1)]
        if len(null):
            n_null = len(null)  # NaN in ``out`` already
            failed = np.setdiff1d(failed, null, assume_unique=True)
    if len(failed) > max(1000 // parts, len(s) // 20):
        return None
    for r in failed.tolist():
        v = _exact_float(bytes(buf[s[r] : e[r]]))
        if v is None:
            return None
        out[r] = v
    return out, n_null


def _exact_float(tok: bytes) -> float | None:
    """``float(tok)`` when the Numba parser reads ``tok`` on its exact path (at most 18
    significant digits ``m``, ``m <= 2^53`` and ``m · 10^x`` with ``|x| <= 22``, or ``m = 0``),
    so both give the correctly rounded value; ``None`` for any other token."""
    got = _pattern(_PARTS).fullmatch(tok)
    if got is None:
        return None
    whole, frac, exp = got.group(1), got.group(2) or b"", got.group(3)
    if not whole and not frac:
        return None
    digits = (whole + frac).lstrip(b"0")  # more than 18 of them exceed 2^53
    x = (int(exp) if exp else 0) - len(frac)
    if digits and (int(digits) > _TWO53 or not -22 <= x <= 22):
        return None
    return float(tok)
