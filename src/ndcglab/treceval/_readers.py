"""trec_eval's input files, read as trec_eval reads them (docs/trec_eval_cli.md, "Input files").

Everything is kept as bytes (names are compared as C's ``strcmp`` compares them: byte by byte) and
decoded as latin-1 only for printing, so any byte of a name comes back unchanged.

* Fields are separated by ASCII white space (C's ``isspace``: space, tab, CR, LF, VT, FF), which
  is what ``bytes.split()`` splits on.
* A qrels line has exactly four fields (``qid iter docno rel``); the relevance is read with
  ``atol``: the leading integer of the field (``1.5`` → 1, ``0.5`` → 0, ``x`` → 0).
* A run line has at least six fields (``qid Q0 docno rank sim run_id``; more are ignored); the
  score is read with ``atof`` (the longest number at the start of the field) and kept as a C
  ``float`` (single precision) by trec_eval 9, as a ``double`` by trec_eval 10. Blank lines are
  skipped. The run's id is the ``run_id`` field of its *last* line.
* trec_eval 10 skips comment lines: in a run, a line whose first non-blank character is ``#``;
  in qrels-like files, a line that starts with ``#`` in its first column (and then reads the
  line after it as data, whatever it holds, as trec_eval 10 does).
* Topics are sorted by id (byte order), the lines of a topic by document name.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = [
    "JudgedTopic",
    "PrefLine",
    "RunTopic",
    "TrecEvalError",
    "atof",
    "atol",
    "read_prefs",
    "read_qrels",
    "read_qrels_jg",
    "read_qrels_prefs",
    "read_run",
    "read_zscores",
]

from ..errors import NdcglabError

_ATOL = re.compile(rb"^[ \t\n\r\x0b\x0c]*([+-]?[0-9]+)")
_ATOF = re.compile(
    rb"^[ \t\n\r\x0b\x0c]*([+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    rb"|inf(?:inity)?|nan))",
    re.IGNORECASE,
)


_HEX = re.compile(
    rb"^[ \t\n\r\x0b\x0c]*([+-]?)(0[xX])([0-9a-fA-F]+\.?[0-9a-fA-F]*)([pP][+-]?[0-9]+)?"
)


class TrecEvalError(NdcglabError, ValueError):
    """An input trec_eval refuses; ``status`` is trec_eval's exit status for it; ``output``:
    what trec_eval has printed on standard output before it stops (the ``-q`` lines of the
    topics evaluated before the refused one), printed the same way."""

    def __init__(self, message: str, status: int = 2, output: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.output = output


def atol(tok: bytes) -> int:
    """C's ``atol``: the leading integer of ``tok`` (0 when there is none)."""
    if tok.isdigit():
        return int(tok)
    m = _ATOL.match(tok)
    return int(m.group(1)) if m else 0


def atof(tok: bytes) -> float:
    """C's ``atof``: the longest decimal number at the start of ``tok`` (0.0 when none)."""
    try:
        if b"_" not in tok:
            return float(tok)
    except ValueError:
        pass
    hexa = _HEX.match(tok)
    if hexa:  # strtod reads hexadecimal numbers too
        text = hexa.group(2) + (hexa.group(3) if b"." in hexa.group(3) else hexa.group(3) + b".")
        try:
            return (-1.0 if hexa.group(1) == b"-" else 1.0) * float.fromhex(
                (text + (hexa.group(4) or b"p0")).decode("ascii")
            )
        except ValueError:
            pass
    m = _ATOF.match(tok)
    if not m:
        return 0.0
    text = m.group(1)
    try:
        return float(text)
    except ValueError:  # pragma: no cover - the pattern only matches numbers
        return 0.0


def to_float32(x: float) -> float:
    """``x`` rounded to a C ``float`` (trec_eval 9 keeps run scores in single precision)."""
    try:
        return float(struct.unpack("f", struct.pack("f", x))[0])
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def _content(path: str, *, stdin: bool = False) -> bytes:
    """The bytes of ``path``; with ``stdin``, a name starting with ``-`` is the standard input
    (trec_eval 10 reads a run named so from it; qrels and trec_eval 9's runs are files)."""
    if stdin and path.startswith("-"):
        import sys

        return sys.stdin.buffer.read()
    return Path(path).read_bytes()


def _lines(data: bytes) -> list[bytes]:
    if not data.endswith(b"\n"):
        data += b"\n"
    return data.split(b"\n")[:-1]


def _record_lines(data: bytes, comments: bool) -> Iterator[tuple[int, list[bytes]]]:
    """The data lines of a qrels-like file (1-based line number, fields), comment lines of
    trec_eval 10 left out as it leaves them out (see the module docstring)."""
    lines = _lines(data)
    if not comments or not (data.startswith(b"#") or b"\n#" in data):
        for i, line in enumerate(lines, 1):
            yield i, line.split()
        return
    i = 0
    while i < len(lines):
        if lines[i].startswith(b"#"):
            i += 1
            if i >= len(lines):
                break
        yield i + 1, lines[i].split()
        i += 1


def _unreadable(what: str, path: str) -> TrecEvalError:
    return TrecEvalError(
        f"cannot read {what} file '{path}' (missing or empty) — {path}. Fix: give an existing, "
        "non-empty file",
        2,
    )


def _malformed(what: str, path: str, line: int, need: str) -> TrecEvalError:
    return TrecEvalError(
        f"malformed {what} line — {path}:{line} — a {what} line has {need}. Fix: correct "
        "that line (trec_eval refuses the file too)",
        2,
    )


@dataclass
class JudgedTopic:
    """One topic of a qrels file: its (docno, relevance) pairs sorted by docno."""

    qid: bytes
    docs: list[bytes] = field(default_factory=list)
    rels: list[int] = field(default_factory=list)
    #: the relevance as written, for the fractional-label warning
    raw: list[bytes] = field(default_factory=list)


def read_qrels(path: str, *, comments: bool) -> list[JudgedTopic]:
    """A qrels file (``qid iter docno rel``), topics sorted by id, lines in file order."""
    try:
        data = _content(path)
    except OSError:
        raise _unreadable("qrels", path) from None
    if not data:
        raise _unreadable("qrels", path)
    grouped: dict[bytes, JudgedTopic] = {}
    levels: dict[bytes, int] = {}  # atol of each distinct label text, read once
    for no, f in _record_lines(data, comments):
        if len(f) != 4:
            raise _malformed("qrels", path, no, "4 fields: topic, iteration, docno, relevance")
        topic = grouped.get(f[0])
        if topic is None:
            topic = grouped[f[0]] = JudgedTopic(f[0])
        rel = levels.get(f[3])
        if rel is None:
            rel = levels[f[3]] = atol(f[3])
        topic.docs.append(f[2])
        topic.rels.append(rel)
        topic.raw.append(f[3])
    topics = [grouped[qid] for qid in sorted(grouped)]
    return topics


@dataclass
class RunTopic:
    """One topic of a run: its documents and scores (file order after sorting by docno)."""

    qid: bytes
    docs: list[bytes] = field(default_factory=list)
    sims: list[float] = field(default_factory=list)


def read_run(path: str, *, version: int) -> tuple[list[RunTopic], bytes]:
    """A run file (``qid Q0 docno rank sim run_id``): its topics sorted by id, and its run id
    (the last line's)."""
    try:
        data = _content(path, stdin=version >= 10)
    except OSError:
        raise _unreadable("results", path) from None
    if not data:
        raise _unreadable("results", path)
    grouped: dict[bytes, tuple[list[bytes], list[bytes]]] = {}
    run_id = b""
    comments = version >= 10
    for no, line in enumerate(_lines(data), 1):
        f = line.split()
        if not f:
            continue
        if comments and f[0].startswith(b"#"):
            continue
        if len(f) < 6:
            raise _malformed("results", path, no, "6 fields: topic, Q0, docno, rank, score, run id")
        entry = grouped.get(f[0])
        if entry is None:
            entry = grouped[f[0]] = ([], [])
        entry[0].append(f[2])
        entry[1].append(f[4])
        run_id = f[5]
    topics: list[RunTopic] = []
    for qid in sorted(grouped):
        docs, texts = grouped[qid]
        sims = _scores(texts, single=version < 10)
        topics.append(RunTopic(qid, docs, sims))
    return topics, run_id


def _scores(texts: list[bytes], *, single: bool) -> list[float]:
    """The score fields read with ``atof``; rounded to C ``float`` for trec_eval 9."""
    try:
        if any(b"_" in t for t in texts):
            raise ValueError
        values = np.array(texts, dtype=np.float64) if texts else np.zeros(0)
    except ValueError:
        values = np.array([atof(t) for t in texts], dtype=np.float64)
    if single:
        with np.errstate(over="ignore"):
            values = values.astype(np.float32).astype(np.float64)
    out: list[float] = values.tolist()
    return out


@dataclass
class PrefLine:
    """One preference judgement: judgment group, subgroup, docno, relevance level."""

    jg: bytes
    jsg: bytes
    docno: bytes
    rel: float


def _grouped_prefs(rows: list[tuple[bytes, PrefLine]]) -> list[tuple[bytes, list[PrefLine]]]:
    rows.sort(key=lambda r: (r[0], r[1].docno))
    out: list[tuple[bytes, list[PrefLine]]] = []
    for qid, p in rows:
        if not out or out[-1][0] != qid:
            out.append((qid, []))
        out[-1][1].append(p)
    return out


def read_prefs(path: str, *, comments: bool) -> list[tuple[bytes, list[PrefLine]]]:
    """A preferences file (``qid jg jsg docno rel``), per topic, sorted by topic then docno."""
    try:
        data = _content(path)
    except OSError:
        raise _unreadable("prefs", path) from None
    if not data:
        raise _unreadable("prefs", path)
    rows = []
    for no, f in _record_lines(data, comments):
        if len(f) != 5:
            raise _malformed("prefs", path, no, "5 fields: topic, jg, jsg, docno, relevance")
        rows.append((f[0], PrefLine(f[1], f[2], f[3], atof(f[4]))))
    return _grouped_prefs(rows)


def read_qrels_prefs(path: str, *, comments: bool) -> list[tuple[bytes, list[PrefLine]]]:
    """A qrels file read as preferences (``-R qrels_prefs``): the second field is the judgment
    group, every line is in subgroup ``0``, the relevance is read with ``atof``."""
    try:
        data = _content(path)
    except OSError:
        raise _unreadable("qrels_prefs", path) from None
    if not data:
        raise _unreadable("qrels_prefs", path)
    rows = []
    for no, f in _record_lines(data, comments):
        if len(f) != 4:
            raise _malformed("qrels", path, no, "4 fields: topic, jg, docno, relevance")
        rows.append((f[0], PrefLine(f[1], b"0", f[2], atof(f[3]))))
    return _grouped_prefs(rows)


def read_qrels_jg(path: str, *, comments: bool) -> list[tuple[bytes, list[JudgedTopic]]]:
    """A qrels file with judgment groups (``-R qrels_jg``; ``qid jg docno rel``): per topic,
    one :class:`JudgedTopic` per judgment group (groups sorted by name)."""
    try:
        data = _content(path)
    except OSError:
        raise _unreadable("qrels_jg", path) from None
    if not data:
        raise _unreadable("qrels_jg", path)
    rows = []
    for no, f in _record_lines(data, comments):
        if len(f) != 4:
            raise _malformed("qrels_jg", path, no, "4 fields: topic, jg, docno, relevance")
        rows.append((f[0], f[1], f[2], f[3]))
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    out: list[tuple[bytes, list[JudgedTopic]]] = []
    for qid, jg, doc, rel in rows:
        if not out or out[-1][0] != qid:
            out.append((qid, []))
        groups = out[-1][1]
        if not groups or groups[-1].qid != jg:
            groups.append(JudgedTopic(jg))
        groups[-1].docs.append(doc)
        groups[-1].rels.append(atol(rel))
        groups[-1].raw.append(rel)
    return out


def read_zscores(path: str) -> dict[bytes, dict[bytes, tuple[float, float]]]:
    """A z-score file (``qid measure mean stddev``): {qid: {measure: (mean, stddev)}}."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        raise _unreadable("zscores", path) from None
    if not data:
        raise _unreadable("zscores", path)
    out: dict[bytes, dict[bytes, tuple[float, float]]] = {}
    for no, line in enumerate(_lines(data), 1):
        f = line.split()
        if len(f) != 4:
            raise _malformed("zscores", path, no, "4 fields: topic, measure, mean, stddev")
        out.setdefault(f[0], {})[f[1]] = (atof(f[2]), atof(f[3]))
    return out
