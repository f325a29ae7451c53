"""TREC qrels and run files, in pytrec_eval's shapes (``dict[qid, dict[docno, value]]``).

* qrels: ``QID ITER DOCNO REL`` per line (``ITER`` is ignored, usually ``0``);
* run:   ``QID Q0 DOCNO RANK SCORE TAG`` per line (``RANK`` is checked to be an integer and
  otherwise ignored, as trec_eval does: documents are ranked by score). Fields after ``TAG``
  are ignored, as trec_eval 10 ignores them (a seventh column of notes, a second score).

What trec_eval 10 reads, these readers read: blank lines are skipped, and so are comment lines,
whose first non-blank character is ``#`` (in qrels and runs). A qrels line still has exactly four
fields (trec_eval refuses more), a run line at least six. A (query, document) pair given twice is
an error (trec_eval rejects duplicate documents in a run; a repeated qrels judgement is
ambiguous). A file with no judgement / no ranked document is refused with an error naming it
(trec_eval's ``Cannot read``); :func:`read_trec` also refuses a run none of whose queries is in
the qrels, which is nearly always a mismatched pair of files.

Document names for a :class:`RankingDataset` (:func:`document_names`) are its ``doc_ids`` where
present and non-empty, else ``"{qid}-{i}"`` (``i`` = 0-based position in the list); a name
repeated within a query gets ``#2``, ``#3``... appended so every document stays distinct.

Speed: a well-formed ASCII file is read in one pass: the fields, their counts and the comment
lines are found with NumPy from byte positions, only the fields used become Python strings
(query and document names), and numbers are converted column by column (plain decimals in bulk,
correctly rounded as ``float`` rounds them; other spellings with ``float``/``int`` one by one).
Any file that pass cannot take as it is (non-ASCII or NUL bytes, a bad line, a repeated pair)
is read again line by line, which applies every rule above and names the line.

pytrec_eval insists on integer relevance: pass ``integer=True`` to :func:`read_qrels` /
:func:`dataset_to_qrels` to get ``int`` values (an error names any non-integral label).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataFormatError, SpecError
from ._files import PathLike, atomic_write, open_binary, open_bytes, split_lines
from .dataset import RankingDataset

__all__ = [
    "RunWriter",
    "dataset_to_qrels",
    "document_names",
    "read_qrels",
    "read_qrels_bytes",
    "read_run",
    "read_run_bytes",
    "read_trec",
    "write_run",
]


#: Fields are separated by ASCII blanks only (as trec_eval's scanf); other bytes belong to a field.
_FIELD_SEP = re.compile(r"[ \t\v\f]+")


def _content(p: Path, data: bytes | None) -> bytes:
    """The (decompressed) bytes of the file ``p``, or of ``data`` standing for it."""
    with open_binary(p) if data is None else open_bytes(data, p) as f:
        return f.read()


def _lines(p: Path, data: bytes | None = None) -> Iterator[tuple[int, str]]:
    text = _content(p, data).decode("utf-8", "replace")
    for k, line in enumerate(split_lines(text), start=1):
        stripped = line.strip(" \t\v\f")
        if stripped and not stripped.startswith("#"):
            yield k, line


#: Bytes that ``str.split()`` takes as blanks but the readers do not (they belong to a field).
_OTHER_BLANKS = (b"\x1c", b"\x1d", b"\x1e", b"\x1f")


_CHUNK_ROWS = 1 << 16  # tokens converted to text at a time (bounds the fixed-width buffers)
_MAX_WIDTH = 64  # longer tokens are cut out one by one rather than through a fixed-width buffer


class _Columns:
    """The fields of every data line of a well-formed TREC file, found in one pass with NumPy
    (see :func:`_fast_columns`); columns are converted on demand, as text or as numbers, without
    making a Python object of any field that is not asked for."""

    def __init__(self, data: bytes, starts: np.ndarray, ends: np.ndarray) -> None:
        self.data = data
        self.buf = np.frombuffer(data, dtype=np.uint8)
        self.starts = starts  # (lines, fields) byte offsets of each field
        self.ends = ends

    def _bytes(self, s: np.ndarray, e: np.ndarray, w: int) -> np.ndarray:
        """``(len(s), w)`` uint8: each token's bytes, NUL after its end."""
        from ._decimals import _rows

        last = len(self.buf) - w  # a token starting after this is read one by one below
        rows = _rows(self.buf, np.minimum(s, last), w)  # a new array (an indexed gather)
        rows[np.arange(w)[None, :] >= (e - s)[:, None]] = 0
        for r in np.flatnonzero(s > last).tolist():
            tok = self.data[int(s[r]) : int(e[r])]
            rows[r] = 0
            rows[r, : len(tok)] = np.frombuffer(tok, dtype=np.uint8)
        return rows

    def text(self, j: int) -> list[str]:
        """Field ``j`` of every line, as ``str`` (the file is ASCII without NUL bytes)."""
        s, e = self.starts[:, j], self.ends[:, j]
        if len(s) == 0:
            return []
        w = int((e - s).max())
        if w > _MAX_WIDTH:
            d = self.data
            return [d[a:b].decode("ascii") for a, b in zip(s.tolist(), e.tolist())]
        out: list[str] = []
        for lo in range(0, len(s), _CHUNK_ROWS):
            hi = lo + _CHUNK_ROWS
            rows = self._bytes(s[lo:hi], e[lo:hi], w)
            out += rows.view(f"S{w}").ravel().astype(f"U{w}").tolist()
        return out

    def runs(self, j: int) -> tuple[list[int], list[str]]:
        """The runs of consecutive lines with the same field ``j`` (a TREC file lists each
        query's lines together): ``(first line of each run, then the number of lines; the
        field's text of each run)``. Only one ``str`` is made per run, not one per line."""
        s, e = self.starts[:, j], self.ends[:, j]
        n = len(s)
        if n == 0:
            return [0], []
        w = int((e - s).max())
        if w > _MAX_WIDTH:
            names = self.text(j)
            heads = [0] + [i for i in range(1, n) if names[i] != names[i - 1]]
            return [*heads, n], [names[i] for i in heads]
        new = np.ones(n, dtype=np.bool_)
        for lo in range(0, n, _CHUNK_ROWS):  # each chunk's rows, and the row before them
            at = max(lo - 1, 0)
            rows = self._bytes(s[at : lo + _CHUNK_ROWS], e[at : lo + _CHUNK_ROWS], w)
            cells = rows.view(f"V{w}").ravel()  # (NUL after the end: equal text, equal cells)
            new[at + 1 : lo + _CHUNK_ROWS] = cells[1:] != cells[:-1]
        first = np.flatnonzero(new)
        d = self.data
        names = [d[a:b].decode("ascii") for a, b in zip(s[first].tolist(), e[first].tolist())]
        return [*first.tolist(), n], names

    def numbers(self, j: int) -> np.ndarray | None:
        """Field ``j`` as float64, ``float()`` of each token, or ``None`` when a token is not a
        finite number without ``_`` (the line-by-line reader then names it). Plain decimals are
        read in bulk (correctly rounded, as ``float``); other spellings one by one."""
        from ._decimals import _decimals

        s, e = self.starts[:, j], self.ends[:, j]
        values, failed = _decimals(self.buf, s, e)
        d = self.data
        for r in failed.tolist():
            v = _finite_float(d[int(s[r]) : int(e[r])].decode("ascii"))
            if v is None:
                return None
            values[r] = v
        return values

    def integers_ok(self, j: int) -> bool:
        """Whether ``int()`` takes field ``j`` of every line (all digits, checked in bulk; any
        other token is tried with ``int``)."""
        s, e = self.starts[:, j], self.ends[:, j]
        if len(s) == 0:
            return True
        w = int((e - s).max())
        if w <= _MAX_WIDTH:
            rows = self._bytes(s, e, w)
            digit = ((rows >= 48) & (rows <= 57)) | (rows == 0)
            odd = np.flatnonzero(~digit.all(axis=1))
        else:
            odd = np.arange(len(s))
        d = self.data
        for r in odd.tolist():
            try:
                int(d[int(s[r]) : int(e[r])].decode("ascii"))
            except ValueError:
                return False
        return True


def _fast_columns(
    p: Path, n_fields: int, exact: bool, data: bytes | None = None
) -> _Columns | None:
    """The first ``n_fields`` fields of every data line of ``p`` (or of ``data``, its bytes),
    found in one pass, or
    ``None`` when the file needs the line-by-line reader (non-ASCII or NUL bytes, separators
    other than ASCII blanks, a line with other than ``n_fields`` fields (``exact``) or fewer (not
    ``exact``), or no data line).

    Fields are the runs of bytes between blanks (space, tab, newline, VT, FF; a CR is read as a
    line end), found with NumPy from where fields start and end and where lines start, so
    comment lines (first field starting with ``#``) are dropped and the field counts checked
    without a Python loop. ``None`` means "fall back", never "bad file": the line-by-line reader
    then applies (and reports) every rule.
    """
    return _columns_of(_content(p, data), n_fields, exact)


def _columns_of(data: bytes, n_fields: int, exact: bool) -> _Columns | None:
    """:func:`_fast_columns` of bytes in memory (a whole file's, or a block of whole lines)."""
    if not data or not data.isascii() or b"\x00" in data or any(c in data for c in _OTHER_BLANKS):
        return None
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    from ._decimals import _words

    b = np.frombuffer(data, dtype=np.uint8)
    # the ASCII blanks of str.split() left after the checks above (no CR is left): the words
    starts, ends = _words(b)
    if not len(starts):
        return None
    line_begin = np.concatenate(([0], np.flatnonzero(b == np.uint8(10)) + 1))
    if line_begin[-1] == len(b):
        line_begin = line_begin[:-1]  # (after the last newline: no line)
    n_lines = len(line_begin)
    if (
        len(starts) == n_lines * n_fields
        and np.array_equal(starts[::n_fields], line_begin)
        and not (b[line_begin] == ord("#")).any()
    ):  # the common file: every line n_fields fields, the first at its start (no gather)
        return _Columns(data, starts.reshape(-1, n_fields), ends.reshape(-1, n_fields))
    starts = np.ascontiguousarray(starts)
    first = np.searchsorted(starts, line_begin)  # each line's first field (= next line's if none)
    count = np.diff(np.append(first, len(starts)))
    first, count = first[count > 0], count[count > 0]
    data_line = b[starts[first]] != ord("#")
    first, count = first[data_line], count[data_line]
    if (np.any(count != n_fields) if exact else np.any(count < n_fields)) or not len(first):
        return None
    at = first[:, None] + np.arange(n_fields)[None, :]
    return _Columns(data, starts[at], ends[at])


def _group(cols: _Columns, docs: list[str], values: list[Any]) -> dict[str, dict[str, Any]] | None:
    """``{qid: {doc: value}}`` in line order (the query id is field 0 of ``cols``), or ``None``
    when a (qid, doc) pair repeats."""
    out: dict[str, dict[str, Any]] = {}
    bounds, qids = cols.runs(0)  # runs of consecutive lines of one query
    for lo, hi, qid in zip(bounds[:-1], bounds[1:], qids):
        d = out.setdefault(qid, {})
        before = len(d)
        d.update(zip(docs[lo:hi], values[lo:hi]))
        if len(d) != before + hi - lo:
            return None
    return out


def _refuse_empty(p: Path, what: str, fix: str) -> DataFormatError:
    return DataFormatError(f"no {what} in the file (empty, or only comments)", path=p, fix=fix)


def _finite_float(tok: str) -> float | None:
    """``float(tok)`` when ``tok`` is an ASCII finite number without ``_``; else ``None``."""
    try:
        v = float(tok) if tok.isascii() else float("nan")
    except ValueError:
        return None
    return v if math.isfinite(v) and "_" not in tok else None


def _number(tok: str, p: Path, k: int, what: str, fix: str) -> float:
    v = _finite_float(tok)
    if v is None:
        raise DataFormatError(f"{what} is not a finite number", path=p, line=k, token=tok, fix=fix)
    return v


def _as_int(v: float, p: Path | None, k: int | None, tok: str) -> int:
    if not float(v).is_integer():
        raise DataFormatError(
            "relevance is not an integer (integer=True)",
            path=p,
            line=k,
            token=tok,
            fix="use integer=False to keep float relevance, or round the labels",
        )
    return int(v)


def _first_time(
    first: dict[tuple[str, str], int],
    qid: str,
    doc: str,
    path: Path,
    k: int,
    line: str,
    what: str,
    fix: str,
) -> None:
    """Record that ``(qid, doc)`` stands on line ``k``; a second time is a
    :class:`DataFormatError` saying ``what`` (a template of ``doc`` and ``qid``) and where the
    first one stands."""
    if (qid, doc) in first:
        raise DataFormatError(
            f"{what.format(doc=doc, qid=qid)} (first on line {first[qid, doc]})",
            path=path,
            line=k,
            token=line.strip(),
            fix=fix,
        )
    first[qid, doc] = k


def read_qrels(
    path: PathLike, *, integer: bool = False, allow_empty: bool = False
) -> dict[str, dict[str, Any]]:
    """Read a TREC qrels file: ``QID ITER DOCNO REL`` → ``{qid: {docno: rel}}``.

    Relevance values are floats (``integer=True``: ints, as pytrec_eval requires). Blank lines and
    ``#`` comment lines are skipped. A file without any judgement raises
    :class:`~ndcglab.errors.DataFormatError` unless ``allow_empty=True`` (then ``{}``).
    """
    return _read_qrels(Path(path), None, integer, allow_empty)


def read_qrels_bytes(
    data: bytes, *, name: PathLike = "<bytes>", integer: bool = False, allow_empty: bool = False
) -> dict[str, dict[str, Any]]:
    """:func:`read_qrels` of a file's bytes already in memory (plain or gzip): the same rules,
    values and errors, which name ``name`` (the file the bytes stand for) and the line within
    ``data``."""
    return _read_qrels(Path(name), bytes(data), integer, allow_empty)


def _read_qrels(
    p: Path, data: bytes | None, integer: bool, allow_empty: bool
) -> dict[str, dict[str, Any]]:
    """:func:`read_qrels` of the file ``p``, or of ``data`` (its bytes) when given."""
    fast = _read_qrels_fast(p, integer, data)
    if fast is not None:
        return fast
    fix = "qrels lines are 'QID 0 DOCNO RELEVANCE' (four fields separated by blanks)"
    out: dict[str, dict[str, Any]] = {}
    first: dict[tuple[str, str], int] = {}
    for k, line in _lines(p, data):
        tok = [t for t in _FIELD_SEP.split(line) if t]
        if len(tok) != 4:
            raise DataFormatError(
                f"{len(tok)} fields, expected 4", path=p, line=k, token=line.strip(), fix=fix
            )
        qid, _, doc, rel = tok
        v: Any = _number(rel, p, k, "relevance", fix)
        if integer:
            v = _as_int(v, p, k, rel)
        _first_time(
            first, qid, doc, p, k, line, "document {doc!r} of query {qid!r} is judged twice",
            "keep one judgement per (query, document)",
        )  # fmt: skip
        out.setdefault(qid, {})[doc] = v
    if not out and not allow_empty:
        raise _refuse_empty(p, "judgement", "give the qrels file ('QID 0 DOCNO RELEVANCE' lines)")
    return out


def read_run(path: PathLike, *, allow_empty: bool = False) -> dict[str, dict[str, float]]:
    """Read a TREC run: ``QID Q0 DOCNO RANK SCORE TAG`` → ``{qid: {docno: score}}``.

    Fields after ``TAG`` are ignored (as trec_eval 10 does); blank lines and ``#`` comment lines
    are skipped. A file without any ranked document raises
    :class:`~ndcglab.errors.DataFormatError` unless ``allow_empty=True`` (then ``{}``).
    """
    return _read_run(Path(path), None, allow_empty)


def read_run_bytes(
    data: bytes, *, name: PathLike = "<bytes>", allow_empty: bool = False
) -> dict[str, dict[str, float]]:
    """:func:`read_run` of a file's bytes already in memory (plain or gzip): the same rules,
    values and errors, which name ``name`` (the file the bytes stand for) and the line within
    ``data``."""
    return _read_run(Path(name), bytes(data), allow_empty)


def _read_run(p: Path, data: bytes | None, allow_empty: bool) -> dict[str, dict[str, float]]:
    """:func:`read_run` of the file ``p``, or of ``data`` (its bytes) when given."""
    fast = _read_run_fast(p, data)
    if fast is not None:
        return fast
    fix = (
        "run lines are 'QID Q0 DOCNO RANK SCORE TAG' (six fields separated by blanks; more are "
        "ignored)"
    )
    out: dict[str, dict[str, float]] = {}
    first: dict[tuple[str, str], int] = {}
    for k, line in _lines(p, data):
        tok = [t for t in _FIELD_SEP.split(line) if t]
        if len(tok) < 6:
            raise DataFormatError(
                f"{len(tok)} fields, expected 6", path=p, line=k, token=line.strip(), fix=fix
            )
        qid, _, doc, rank, score = tok[:5]
        try:
            int(rank if rank.isascii() else "x")
        except ValueError:
            raise DataFormatError(
                "rank is not an integer", path=p, line=k, token=rank, fix=fix
            ) from None
        v = _number(score, p, k, "score", fix)
        _first_time(
            first, qid, doc, p, k, line,
            "document {doc!r} appears twice in the ranking of query {qid!r}",
            "list each document once per query",
        )  # fmt: skip
        out.setdefault(qid, {})[doc] = v
    if not out and not allow_empty:
        raise _refuse_empty(
            p, "ranked document", "give the run file ('QID Q0 DOCNO RANK SCORE TAG' lines)"
        )
    return out


def _read_qrels_fast(
    p: Path, integer: bool, data: bytes | None = None
) -> dict[str, dict[str, Any]] | None:
    """:func:`read_qrels` of a well-formed file in one pass (``None``: use the line reader)."""
    cols = _fast_columns(p, 4, exact=True, data=data)
    if cols is None:
        return None
    rel = cols.numbers(3)
    if rel is None:
        return None
    values: list[Any] = rel.tolist()
    if integer:
        if not all(v.is_integer() for v in values):
            return None
        values = [int(v) for v in values]
    return _group(cols, cols.text(2), values)


def _read_run_fast(p: Path, data: bytes | None = None) -> dict[str, dict[str, float]] | None:
    """:func:`read_run` of a well-formed file in one pass (``None``: use the line reader)."""
    cols = _fast_columns(p, 6, exact=False, data=data)
    if cols is None or not cols.integers_ok(3):
        return None
    scores = cols.numbers(4)
    if scores is None:
        return None
    return _group(cols, cols.text(2), scores.tolist())


def read_trec(
    qrels_path: PathLike, run_path: PathLike, *, integer: bool = False
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, float]]]:
    """Read a qrels file and a run file as a pair: ``(qrels, run)``.

    Besides the checks of :func:`read_qrels` and :func:`read_run` (each file non-empty), the run
    must rank at least one query of the qrels; otherwise nothing could be evaluated and the
    :class:`~ndcglab.errors.DataFormatError` names both files and a query id of each.
    """
    qrels = read_qrels(qrels_path, integer=integer)
    run = read_run(run_path)
    if not any(q in qrels for q in run):
        rq = sorted(run)[:3]
        qq = sorted(qrels)[:3]
        raise DataFormatError(
            f"no query of the run is in the qrels {Path(qrels_path)} (run queries "
            f"{', '.join(map(repr, rq))}{', ...' if len(run) > 3 else ''}; qrels queries "
            f"{', '.join(map(repr, qq))}{', ...' if len(qrels) > 3 else ''})",
            path=run_path,
            fix="check that the run and the qrels belong to the same topics (same query ids)",
        )
    return qrels, run


def _query_names(qid: str, doc_ids: Any, n: int) -> list[str]:
    """The names of one query's ``n`` documents (``doc_ids``: theirs, or ``None``)."""
    seen: dict[str, int] = {}
    out: list[str] = []
    for i in range(n):
        d = None if doc_ids is None else doc_ids[i]
        name = str(d) if d is not None and str(d) != "" else f"{qid}-{i}"
        c = seen.get(name, 0) + 1
        seen[name] = c
        out.append(name if c == 1 else f"{name}#{c}")
    return out


def document_names(dataset: RankingDataset) -> np.ndarray:
    """One distinct name per document within each query (see the module docstring)."""
    ds = dataset
    names = np.empty(ds.n_docs, dtype=object)
    for qi in range(ds.n_queries):
        lo, hi = int(ds.boundaries[qi]), int(ds.boundaries[qi + 1])
        ids = None if ds.doc_ids is None else ds.doc_ids[lo:hi]
        names[lo:hi] = _query_names(str(ds.query_ids[qi]), ids, hi - lo)
    return names


def dataset_to_qrels(
    dataset: RankingDataset, *, integer: bool = False
) -> dict[str, dict[str, Any]]:
    """The dataset's labels as qrels ``{qid: {docno: label}}`` (names: :func:`document_names`)."""
    names = document_names(dataset)
    out: dict[str, dict[str, Any]] = {}
    labels = dataset.labels.tolist()
    for qi in range(dataset.n_queries):
        lo, hi = int(dataset.boundaries[qi]), int(dataset.boundaries[qi + 1])
        d: dict[str, float]  # int labels with integer=True
        if integer:
            d = {names[i]: _as_int(labels[i], None, None, repr(labels[i])) for i in range(lo, hi)}
        else:
            d = {names[i]: float(labels[i]) for i in range(lo, hi)}
        out[str(dataset.query_ids[qi])] = d
    return out


class RunWriter:
    """The lines of a TREC run, query by query, as :func:`write_run` writes them: each query's
    documents listed by score, descending, equal scores in input order; ranks from 1; scores
    printed with ``repr`` (exact); document names as :func:`document_names` gives them.

    :meth:`lines` returns one query's lines; :meth:`write` writes them to the binary file
    handle given (for a run written as its scores come, e.g. block by block)."""

    def __init__(self, tag: str = "ndcglab") -> None:
        if not tag or any(c.isspace() for c in tag):
            raise SpecError(
                f"run tag {tag!r} must be non-empty without blanks. Fix: give one word, e.g. mine"
            )
        self.tag = tag

    def lines(self, qid: str, doc_ids: Any, scores: np.ndarray) -> str:
        """The run lines of the query ``qid`` whose documents (in data order) have the ids
        ``doc_ids`` (``None``, or ``""`` for one without: named ``"{qid}-{i}"``) and the
        float64 ``scores``."""
        names = _query_names(qid, doc_ids, len(scores))
        order = np.argsort(-scores, kind="stable")
        tag = self.tag
        return "".join(
            f"{qid} Q0 {names[j]} {r} {float(scores[j])!r} {tag}\n"
            for r, j in enumerate(order.tolist(), start=1)
        )

    def write(self, f: Any, qid: str, doc_ids: Any, scores: np.ndarray) -> None:
        """Write :meth:`lines` to the binary file handle ``f`` (UTF-8, names' undecodable
        bytes as they were read)."""
        f.write(self.lines(qid, doc_ids, scores).encode("utf-8", "surrogateescape"))


def write_run(
    path: PathLike, dataset: RankingDataset, scores: Any, *, tag: str = "ndcglab"
) -> None:
    """Write ``scores`` (one per document, data order) as a TREC run; atomic. The lines are
    :class:`RunWriter`'s."""
    writer = RunWriter(tag)
    s = dataset.check_scores(scores)
    out: list[str] = []
    for qi in range(dataset.n_queries):
        lo, hi = int(dataset.boundaries[qi]), int(dataset.boundaries[qi + 1])
        ids = None if dataset.doc_ids is None else dataset.doc_ids[lo:hi]
        out.append(writer.lines(str(dataset.query_ids[qi]), ids, s[lo:hi]))
    with atomic_write(path) as f:
        f.write("".join(out).encode("utf-8", "surrogateescape"))
