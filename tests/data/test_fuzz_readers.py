"""Fuzzing the LETOR and TREC readers: mutated valid files are read correctly or refused clearly.

Valid files are mutated (truncated, bytes flipped, tokens inserted, ranges deleted, lines
duplicated, line endings changed, gzip streams damaged). Every outcome must be one of

* a correct read: the same dataset as a slow reference parser written here from the documented
  format (plain Python, no ndcglab code), or
* a clear :class:`~ndcglab.errors.NdcglabError`,

never another exception (a *crash*), never a dataset that differs from the reference or a read of
input the reference refuses (a *silent misread*). The suite runs a seeded, bounded sample;
``benchmarks/fuzz_readers.py`` runs the same engine longer.
"""

from __future__ import annotations

import functools
import gzip
import math
import operator
import random
import re
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

# ============================================================================ reference: LETOR
_BLANKS = rb"[ \t\r\x0b\x0c]+"  # the documented blanks of a LETOR line
_NUM = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_WORD = re.compile(rb"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
CAP = 100_000  # the default feature-index cap (ndcglab.data.letor.MAX_FEATURES)


class Refused(Exception):
    """The reference parser's verdict: this input must be refused."""


def _number(tok: bytes) -> float | None:
    if _NUM.fullmatch(tok) or _WORD.fullmatch(tok):
        return float(tok)
    return None


def _blank_split(b: bytes) -> list[bytes]:
    return [t for t in re.split(_BLANKS, b) if t]


def _pairs(comment: bytes) -> dict[bytes, bytes]:
    """``key=value`` and ``key = value`` pairs of a comment (the last value of a key wins)."""
    toks = _blank_split(comment)
    out: dict[bytes, bytes] = {}
    i = 0
    while i < len(toks):
        t = toks[i]
        eq = t.find(b"=")
        if eq >= 0:
            if 0 < eq < len(t) - 1:
                out[t[:eq]] = t[eq + 1 :]
            i += 1
        elif i + 2 < len(toks) and toks[i + 1] == b"=":
            out[t] = toks[i + 2]
            i += 3
        else:
            i += 1
    return out


def ref_letor(raw: bytes) -> dict[str, Any]:
    """Parse LETOR bytes (files with ``qid:`` on every line) as documented; raise
    :class:`Refused` for input the reader must refuse."""
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except Exception as exc:
            raise Refused("bad gzip") from exc
    if re.search(rb"\r(?!\n)", raw):
        raise Refused("bare carriage return")
    lines = raw.split(b"\n")
    labels: list[float] = []
    qids: list[str] = []
    rows: list[dict[int, float]] = []
    docids: list[str | None] = []
    for line in lines:
        body, _, comment = line.partition(b"#")
        toks = _blank_split(body)
        if not toks:
            continue  # blank line or comment line
        label = _number(toks[0])
        if label is None or not math.isfinite(label):
            raise Refused("label")
        if len(toks) < 2 or not toks[1].startswith(b"qid:") or len(toks[1]) == 4:
            raise Refused("qid")
        row: dict[int, float] = {}
        for tok in toks[2:]:
            idx_b, colon, val_b = tok.partition(b":")
            if not colon or not idx_b.isdigit() or len(idx_b) > 9:
                raise Refused("pair")
            idx = int(idx_b)
            if idx == 0 or idx > CAP or idx in row:
                raise Refused("index")
            if val_b.upper() == b"NULL":
                v = math.nan
            else:
                num = _number(val_b)
                if num is None:
                    raise Refused("value")
                with np.errstate(over="ignore"):
                    v32 = np.float32(num)
                if np.isinf(v32):
                    raise Refused("range")
                v = float(v32)
            row[idx] = v
        labels.append(label)
        qids.append(toks[1][4:].decode("utf-8", "surrogateescape"))
        rows.append(row)
        d = _pairs(comment).get(b"docid")
        docids.append(None if d is None else d.decode("utf-8", "surrogateescape"))
    if not rows:
        raise Refused("no data")
    starts = [i for i in range(len(qids)) if i == 0 or qids[i] != qids[i - 1]]
    ids = [qids[i] for i in starts]
    if len(set(ids)) != len(ids):
        raise Refused("a query in two blocks")
    width = max((max(r) for r in rows if r), default=0)
    X = np.zeros((len(rows), width), dtype=np.float32)
    for i, r in enumerate(rows):
        for j, v in r.items():
            X[i, j - 1] = v
    return {
        "labels": np.asarray(labels, dtype=np.float64),
        "features": X,
        "boundaries": [*starts, len(rows)],
        "query_ids": ids,
        "doc_ids": [d or "" for d in docids],
    }


def same_letor(ds: Any, ref: dict[str, Any]) -> bool:
    """The dataset read equals the reference: labels, features (NaN where NaN), boundaries,
    query ids and doc ids ("" where a line has none)."""
    docs = [""] * ds.n_docs if ds.doc_ids is None else [str(d) for d in ds.doc_ids.tolist()]
    return (
        ds.labels.dtype.kind == "f"
        and np.array_equal(ds.labels, ref["labels"])
        and ds.features.shape == ref["features"].shape
        and np.array_equal(ds.features, ref["features"], equal_nan=True)
        and ds.boundaries.tolist() == ref["boundaries"]
        and [str(q) for q in ds.query_ids.tolist()] == ref["query_ids"]
        and docs == ref["doc_ids"]
    )


# ============================================================================ reference: TREC
_TREC_LINES = re.compile(r"\r\n|\r|\n")
_TREC_BLANKS = r"[ \t\x0b\x0c]+"
_INT = re.compile(r"[+-]?\d+(?:_\d+)*", re.ASCII)


def _trec_rows(raw: bytes) -> list[list[str]]:
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except Exception as exc:
            raise Refused("bad gzip") from exc
    out = []
    for line in _TREC_LINES.split(raw.decode("utf-8", "replace")):
        f = [t for t in re.split(_TREC_BLANKS, line) if t]
        if f and not f[0].startswith("#"):
            out.append(f)
    return out


def _trec_number(tok: str) -> float:
    v = _number(tok.encode("utf-8", "surrogateescape"))
    if v is None or not math.isfinite(v):
        raise Refused("number")
    return v


def ref_qrels(raw: bytes) -> dict[str, dict[str, float]]:
    """``QID ITER DOCNO REL`` lines, four fields, one judgement per pair, at least one."""
    out: dict[str, dict[str, float]] = {}
    for f in _trec_rows(raw):
        if len(f) != 4 or f[2] in out.get(f[0], {}):
            raise Refused("qrels line")
        out.setdefault(f[0], {})[f[2]] = _trec_number(f[3])
    if not out:
        raise Refused("empty")
    return out


def ref_run(raw: bytes) -> dict[str, dict[str, float]]:
    """``QID Q0 DOCNO RANK SCORE TAG [...]`` lines, integer rank, each document once."""
    out: dict[str, dict[str, float]] = {}
    for f in _trec_rows(raw):
        if len(f) < 6 or not _INT.fullmatch(f[3]) or f[2] in out.get(f[0], {}):
            raise Refused("run line")
        out.setdefault(f[0], {})[f[2]] = _trec_number(f[4])
    if not out:
        raise Refused("empty")
    return out


# ============================================================================ valid inputs
def _value(rng: random.Random) -> str:
    k = rng.randrange(8)
    if k == 0:
        return "NULL"
    if k == 1:
        return "0"
    if k == 2:
        return f"{rng.uniform(-5, 5):.3e}"
    if k == 3:
        return str(rng.randint(-50, 50))
    return f"{rng.random():.6f}"


def valid_letor(rng: random.Random) -> bytes:
    nl = rng.choice(["\n", "\r\n"])
    lines = ["# a header comment"] if rng.random() < 0.3 else []
    width = rng.randint(1, 8)
    for q in range(rng.randint(1, 5)):
        for i in range(rng.randint(1, 4)):
            parts = [rng.choice(["0", "1", "2", "3", "0.5"]), f"qid:{q + 1}"]
            parts += [f"{j}:{_value(rng)}" for j in range(1, width + 1) if rng.random() < 0.7]
            line = rng.choice([" ", "\t"]).join(parts)
            c = rng.randrange(3)
            if c == 1:
                line += f" #docid = d{q}-{i} inc = {rng.random():.4f}"
            elif c == 2:
                line += f"#docid=x{q}_{i} free words"
            lines.append(line)
            if rng.random() < 0.1:
                lines.append(rng.choice(["", "  ", "# comment"]))
    return (nl.join(lines) + nl).encode()


def valid_qrels(rng: random.Random) -> bytes:
    lines = [
        f"q{q} 0 d{q}-{i} {rng.randint(0, 3)}"
        for q in range(rng.randint(1, 4))
        for i in range(rng.randint(1, 4))
    ]
    return ("\n".join(lines) + "\n").encode()


def valid_run(rng: random.Random) -> bytes:
    lines = [
        f"q{q} Q0 d{q}-{i} {i + 1} {rng.uniform(-3, 3):.4f} tag"
        for q in range(rng.randint(1, 4))
        for i in range(rng.randint(1, 4))
    ]
    return ("\n".join(lines) + "\n").encode()


# ============================================================================ mutations
_TOKENS = [b" 99:1", b" 0:1", b" qid:9", b"qid:", b"#", b"#docid=zz", b" = ", b"=", b":",
           b"\r", b"\n", b"\r\n", b" ", b"\t", b"\x0b", b"\x0c", b"\x00", b"\xff", b"\xc3\xa9",
           b"\x1c", b"\x1f", b"\xc2\x85", b"\xc2\xa0", b"e", b"e99", b"1e999", b"1e39",
           b"inf", b"nan", b"NULL", b"-", b"+", b".", b"9", b"0", b"_", b"999999999",
           b"123456:1", b" 3:4", b"Q0", b"x"]  # fmt: skip


def mutate(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One random mutation of ``raw``: ``(kind, mutated bytes)``."""
    b = bytearray(raw)
    n = len(b)
    kind = rng.choice(["truncate", "flip", "byte", "insert", "delete", "duplicate", "endings"])
    if kind == "truncate":
        b = b[: rng.randrange(n + 1)]
    elif kind == "flip" and n:
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(n)] ^= 1 << rng.randrange(8)
    elif kind == "byte" and n:
        b[rng.randrange(n)] = rng.randrange(256)
    elif kind == "insert":
        at = rng.randrange(n + 1)
        b[at:at] = rng.choice(_TOKENS)
    elif kind == "delete" and n:
        at = rng.randrange(n)
        del b[at : at + rng.randint(1, 8)]
    elif kind == "duplicate":
        lines = bytes(b).split(b"\n")
        k = rng.randrange(len(lines))
        lines.insert(k, lines[k])
        b = bytearray(b"\n".join(lines))
    else:
        kind = "endings"
        text = bytes(b).replace(b"\r\n", b"\n")
        b = bytearray(text.replace(b"\n", rng.choice([b"\r", b"\r\n", b"\n\r", b"\n\n"])))
    return kind, bytes(b)


def mutate_gzip(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    """Compress ``raw`` and damage the stream (truncate, flip bytes) or leave it intact."""
    z = bytearray(gzip.compress(raw, mtime=0))
    k = rng.randrange(3)
    if k == 0:
        return "gz-truncate", bytes(z[: rng.randrange(len(z))])
    if k == 1:
        for _ in range(rng.randint(1, 3)):
            z[rng.randrange(len(z))] ^= 1 << rng.randrange(8)
        return "gz-flip", bytes(z)
    return "gz-intact", bytes(z)


# ============================================================================ the engine
@dataclass
class FuzzReport:
    """Counts of outcomes: ``ok`` (a correct read), ``refused`` (a clear error), and the
    failures ``crashes`` (another exception) and ``misreads`` (a read that differs from the
    reference, or a read of input the reference refuses), each with examples."""

    cases: int = 0
    ok: int = 0
    refused: int = 0
    crashes: list[str] = field(default_factory=list)
    misreads: list[str] = field(default_factory=list)
    kinds: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        return (
            f"{self.cases} cases: {self.ok} read correctly, {self.refused} refused with a clear "
            f"error, {len(self.crashes)} crashes, {len(self.misreads)} silent misreads"
        )


def _check(report: FuzzReport, label: str, read: Any, ref: Any, same: Any) -> None:
    from ndcglab.errors import NdcglabError

    report.cases += 1
    try:
        expected = ref()
    except Refused:
        expected = Refused
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = read()
    except NdcglabError:
        report.refused += 1
        return
    except Exception as exc:  # a crash: any other exception
        report.crashes.append(f"{label}: {type(exc).__name__}: {exc}"[:600])
        return
    if expected is Refused:
        report.misreads.append(f"{label}: read, but the reference refuses it")
    elif not same(got, expected):
        report.misreads.append(f"{label}: read differently from the reference")
    else:
        report.ok += 1


def read_letor_fresh(path: Path) -> Any:
    """:func:`read_letor` as in a fresh process: the NumPy reader first, the Numba parser for
    what it declines (once the Numba parser has read a file, it reads every later one)."""
    from ndcglab.data import letor

    loaded = letor._numba_parser_loaded
    letor._numba_parser_loaded = lambda: False
    try:
        return letor.read_letor(path)
    finally:
        letor._numba_parser_loaded = loaded


def run_fuzz(
    seed: int,
    *,
    seconds: float,
    max_cases: int | None = None,
    formats: tuple[str, ...] = ("letor", "qrels", "run"),
) -> FuzzReport:
    """Mutate valid files of ``formats`` (LETOR three times as often as each TREC kind) for
    ``seconds`` (or ``max_cases``). Every other LETOR file is read as in a fresh process (the
    NumPy reader first), the others as :func:`read_letor` reads them here (by the Numba parser
    once it has read a file in the process)."""
    from ndcglab.data import read_letor
    from ndcglab.data.trec import read_qrels, read_run

    rng = random.Random(seed)
    report = FuzzReport()
    deadline = time.monotonic() + seconds
    with tempfile.TemporaryDirectory(prefix="ndcglab-fuzz-") as tmp:
        folder = Path(tmp)
        k = 0
        while time.monotonic() < deadline and (max_cases is None or k < max_cases):
            k += 1
            which = rng.choice([f for f in ("letor", "letor", "letor", "qrels", "run")
                                if f in formats])  # fmt: skip
            raw = {"letor": valid_letor, "qrels": valid_qrels, "run": valid_run}[which](rng)
            kind, data = mutate_gzip(raw, rng) if rng.random() < 0.1 else mutate(raw, rng)
            for _ in range(rng.randrange(2)):  # sometimes a second mutation on top
                if not kind.startswith("gz"):
                    kind, data = mutate(data, rng)
            report.kinds[kind] += 1
            path = folder / f"f{k}.txt"
            path.write_bytes(data)
            label = f"case {k} ({which}, {kind}, {data[:400]!r})"
            read, ref, same = {
                "letor": (read_letor if k % 2 else read_letor_fresh, ref_letor, same_letor),
                "qrels": (read_qrels, ref_qrels, operator.eq),
                "run": (read_run, ref_run, operator.eq),
            }[which]
            _check(report, label, functools.partial(read, path), functools.partial(ref, data), same)
            path.unlink()
    return report


# ============================================================================ tests
def test_the_reference_reads_the_valid_files():
    from ndcglab.data import read_letor

    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(20):
            raw = valid_letor(rng)
            p = Path(tmp) / f"v{k}.txt"
            p.write_bytes(raw)
            assert same_letor(read_letor(p), ref_letor(raw))


def _assert_clean(report: FuzzReport) -> None:
    assert report.cases >= 200, report.summary()
    assert not report.crashes, report.crashes[:5]
    assert not report.misreads, report.misreads[:5]
    assert report.ok > 0 and report.refused > 0, report.summary()


def test_fuzz_letor_reader_never_crashes_and_never_misreads():
    _assert_clean(run_fuzz(seed=12, seconds=3.0, max_cases=2000, formats=("letor",)))


def test_fuzz_trec_readers_never_crash_and_never_misread():
    _assert_clean(run_fuzz(seed=12, seconds=3.0, max_cases=2000, formats=("qrels", "run")))
