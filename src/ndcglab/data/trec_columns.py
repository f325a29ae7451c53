"""TREC qrels and run files as columns: the memory of the data, not of Python objects.

:func:`ndcglab.data.read_qrels` / :func:`~ndcglab.data.read_run` return pytrec_eval's shapes,
``{qid: {docno: value}}``: a ``str``, a ``float`` and a dictionary entry per line, about 200
bytes a line. :func:`read_trec_columns` reads the same files into :class:`TrecColumns`, per line
the index of its query (int32), its docno as fixed-width bytes and its value (float64), about
20 bytes a line for docnos of 8 characters, and :func:`ndcglab.measures.evaluate_trec` evaluates
them without a Python object per line.

The file is read in blocks of :data:`BLOCK_BYTES` (whole lines; plain or gzip): each block's
fields are found with NumPy as the one-pass reader of :mod:`ndcglab.data.trec` finds them (the
same rules: blanks separate fields, ``#`` comment lines and blank lines are skipped, a qrels
line has four fields, a run line at least six with an integer rank), and only one ``str`` is
made per run of lines of one query. A file this cannot take as it is (non-ASCII or NUL bytes,
a bad line, a docno longer than 64 bytes, a (query, document) pair given twice, no data line)
gives ``None``: the caller reads it with the dictionary readers, which apply every rule and name
the line of any error.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._compat import kernel_threads
from ._files import PathLike, open_binary
from .trec import _MAX_WIDTH, _columns_of, _finite_float

__all__ = ["BLOCK_BYTES", "TrecColumns", "read_trec_columns"]

#: bytes read at a time (the block is cut after its last complete line)
BLOCK_BYTES = 1 << 20
#: files of at least this many lines (compressed: bytes) are read with the compiled kernels of
#: :mod:`._trec_scan`; shorter ones with NumPy, without loading Numba
COMPILED_MIN_LINES = 200_000
#: plain files of at least this many bytes are not counted: the arrays are sized from the file's
#: size (and such a file is read with the compiled kernels)
BOUND_MIN_BYTES = 32 << 20


@dataclass
class TrecColumns:
    """One TREC file as columns, one entry per data line.

    ``queries``: the distinct query ids, sorted; ``query``: int32 index into ``queries`` of each
    line; ``doc``: the docno, NumPy bytes ``S<w>`` (ASCII); ``value``: float64, the relevance
    (qrels) or the score (run). :func:`read_trec_columns` gives the lines of each query
    together, the queries in sorted order, each query's lines in file order."""

    path: Path
    queries: list[str]
    query: np.ndarray
    doc: np.ndarray
    value: np.ndarray
    #: ``True``: :func:`~ndcglab.measures.evaluate_trec` may :meth:`release` the arrays once it
    #: has read them (a caller that needs the columns no more, as the command line)
    disposable: bool = False

    def __len__(self) -> int:
        return len(self.query)

    def release(self) -> None:
        """Empty the three columns (their memory goes back once nothing else holds them)."""
        self.query = self.query[:0].copy()
        self.doc = self.doc[:0].copy()
        self.value = self.value[:0].copy()

    def has_repeats(self) -> bool:
        """Whether a (query, document) pair stands on two lines (the dictionary readers then
        name them): lines with equal :func:`pair_hashes` are compared in full."""
        h = pair_hashes(self.query, self.doc)
        h.sort()
        twice = h[1:][h[1:] == h[:-1]]
        if not len(twice):
            return False
        lines = np.flatnonzero(np.isin(pair_hashes(self.query, self.doc), twice))
        pairs = set()
        for q, d in zip(self.query[lines].tolist(), self.doc[lines].tolist(), strict=True):
            if (q, d) in pairs:
                return True
            pairs.add((q, d))
        return False

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{qid: {docno: value}}``, the dictionary readers' result for the same file."""
        out: dict[str, dict[str, float]] = {q: {} for q in self.queries}
        order = np.argsort(self.query, kind="stable")
        counts = np.bincount(self.query, minlength=len(self.queries))
        docs = self.doc[order].astype(str).tolist()
        values = self.value[order].tolist()
        lo = 0
        for q, n in zip(self.queries, counts.tolist(), strict=True):
            out[q].update(zip(docs[lo : lo + n], values[lo : lo + n], strict=True))
            lo += n
        return out


_FNV_PRIME = np.uint64(0x100000001B3)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)


def pair_hashes(query: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """One uint64 per line for its (query, docno) pair: the query index in the high 32 bits, a
    32-bit hash of the docno (FNV-1a over its bytes, folded) in the low 32. Equal pairs (docnos
    of one width ``S<w>``, NUL-padded) have equal values; unequal pairs of one query rarely
    (callers compare the pairs of equal values in full). Lines grouped by query give values
    grouped the same way, so a sorted search among them stays within one query's part."""
    w = doc.dtype.itemsize
    cells = doc.view(np.uint8).reshape(-1, w)
    h = np.full(len(query), _FNV_OFFSET, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(w):
            h ^= cells[:, j]
            h *= _FNV_PRIME
    h ^= h >> np.uint64(32)
    h &= np.uint64(0xFFFFFFFF)
    h |= np.asarray(query, dtype=np.uint64) << np.uint64(32)
    return h


def pair_keys(query: np.ndarray, doc: np.ndarray) -> np.ndarray:
    """One ``S`` key per line that sorts as (query index, docno): the index in 4 big-endian
    bytes, then the docno's bytes (so equal keys are equal pairs)."""
    w = doc.dtype.itemsize
    key = np.zeros((len(query), 4 + w), dtype=np.uint8)
    key[:, :4] = np.asarray(query, dtype=">u4").view(np.uint8).reshape(-1, 4)
    key[:, 4:] = doc.view(np.uint8).reshape(-1, w)
    return key.view(f"S{4 + w}").ravel()


class _Blocks:
    """Collects the columns of the blocks of one file into arrays made once for ``capacity``
    lines (grown by doubling beyond it; the docno width grows with the widest block)."""

    def __init__(self, path: Path, n_fields: int, exact: bool, capacity: int) -> None:
        self.path = path
        self.n_fields = n_fields
        self.exact = exact
        self.index: dict[str, int] = {}
        self.n = 0
        self.query = np.empty(capacity, dtype=np.int32)
        self.doc = np.empty(capacity, dtype="S1")
        self.value = np.empty(capacity, dtype=np.float64)
        self.scratch: list[tuple[np.ndarray, ...]] = []  # scan_compiled's arrays, per slot

    def _room(self, k: int, w: int) -> None:
        need = self.n + k
        if need > len(self.query):
            size = max(need, 2 * len(self.query))
            self.query = np.resize(self.query, size)
            self.value = np.resize(self.value, size)
            self.doc = np.resize(self.doc, size)
        if w > self.doc.dtype.itemsize:  # (only the lines so far are copied)
            wider = np.empty(len(self.doc), dtype=f"S{w}")
            wider[: self.n] = self.doc[: self.n]
            self.doc = wider

    def add(self, block: bytes) -> bool:
        """Take one block of whole lines; ``False`` when it needs the dictionary readers."""
        if not block.strip():
            return True
        cols = _columns_of(block, self.n_fields, self.exact)
        if cols is None:
            return False
        if self.n_fields == 6:  # a run: the rank is an integer, the score a number
            if not cols.integers_ok(3):
                return False
            values = cols.numbers(4)
        else:
            values = cols.numbers(3)
        if values is None:
            return False
        s, e = cols.starts[:, 2], cols.ends[:, 2]
        w = int((e - s).max())
        if w > _MAX_WIDTH:
            return False
        k = len(values)
        self._room(k, w)
        at = slice(self.n, self.n + k)
        bounds, names = cols.runs(0)
        ids = np.array([self.index.setdefault(n, len(self.index)) for n in names], np.int32)
        self.query[at] = np.repeat(ids, np.diff(bounds))
        self.doc[at] = cols._bytes(s, e, w).view(f"S{w}").ravel()
        self.value[at] = values
        self.n += k
        return True

    def add_compiled(self, block: bytearray, size: int) -> bool:
        """:meth:`add` of ``block[:size]`` through the kernels of :mod:`._trec_scan` (the same
        rules and values, no NumPy temporary per field): for large files, where loading Numba
        pays off. :meth:`scan_compiled` then :meth:`take_compiled`."""
        return self.take_compiled(block, size, 0, self.scan_compiled(block, size, 0))

    def scan_compiled(self, block: bytearray, size: int, slot: int) -> int:
        """The first half of :meth:`add_compiled`: the lines of ``block[:size]`` found by
        :func:`._trec_scan.scan_block` into the scratch arrays ``slot`` (made once per slot and
        reused: blocks in different slots may be scanned on different threads at once, since
        the kernel releases the GIL); returns the kernel's line count."""
        from ._decimals import _POW10
        from ._trec_scan import scan_block

        buf = np.frombuffer(block, dtype=np.uint8, count=size)
        # a data line takes at least 2 * n_fields bytes (fields, blanks, its end): the scratch
        # arrays of one block, made once and reused
        cap = size // (2 * self.n_fields - 1) + 1
        while len(self.scratch) <= slot:
            self.scratch.append(())
        if not self.scratch[slot] or len(self.scratch[slot][0]) < cap:
            kinds = (np.int64,) * 6 + (np.float64, np.bool_, np.bool_)
            self.scratch[slot] = tuple(np.empty(cap, dtype=k) for k in kinds)
        run = self.n_fields == 6
        return int(
            scan_block(
                buf, self.n_fields, self.exact, 3 if run else -1, 4 if run else 3, _POW10,
                *self.scratch[slot],
            )
        )  # fmt: skip

    def take_compiled(self, block: bytearray, size: int, slot: int, k: int) -> bool:
        """The second half of :meth:`add_compiled`: the ``k`` lines :meth:`scan_compiled` found
        in ``block[:size]`` (scratch ``slot``) appended to the columns (blocks are taken in file
        order); ``False`` when the file needs the dictionary readers."""
        from ._trec_scan import copy_tokens

        if k <= 0:
            return k == 0
        qs, qe, ds, de, _, _, value, ok, new = self.scratch[slot]
        run = self.n_fields == 6
        for r in np.flatnonzero(~ok[:k]).tolist():  # a rank or a value Python must read
            end = min((i for i in (block.find(b"\n", qs[r], size), block.find(b"\r", qs[r], size))
                       if i >= 0), default=size)  # fmt: skip
            fields = block[qs[r] : end].split()
            if run:
                try:
                    int(fields[3].decode("ascii"))
                except ValueError:
                    return False
            v = _finite_float(fields[4 if run else 3].decode("ascii"))
            if v is None:
                return False
            value[r] = v
        w = int((de[:k] - ds[:k]).max())
        if w > _MAX_WIDTH:
            return False
        self._room(k, w)
        at = slice(self.n, self.n + k)
        heads = np.flatnonzero(new[:k])
        names = [block[a:b].decode("ascii") for a, b in zip(qs[heads].tolist(), qe[heads].tolist())]
        ids = np.array([self.index.setdefault(q, len(self.index)) for q in names], np.int32)
        self.query[at] = np.repeat(ids, np.diff(np.append(heads, k)))
        rows = self.doc[at].view(np.uint8).reshape(k, self.doc.dtype.itemsize)
        buf = np.frombuffer(block, dtype=np.uint8, count=size)
        copy_tokens(buf, ds[:k], de[:k], rows)
        self.value[at] = value[:k]
        self.n += k
        return True

    def columns(self) -> TrecColumns | None:
        """The lines of every query together, the queries in sorted order (file order within
        a query): the order :func:`~ndcglab.measures.evaluate_trec` evaluates them in, so it
        need not copy the columns to reorder them. The lines move by runs of one query (a file
        lists each query's lines together: a few thousand runs), one column at a time."""
        if not self.n:
            return None
        n = self.n
        names = sorted(self.index)
        rank = np.empty(len(names), dtype=np.int32)
        rank[[self.index[q] for q in names]] = np.arange(len(names), dtype=np.int32)
        query = rank[self.query[:n]]
        self.query = self.query[:0]
        doc, value = self.doc[:n], self.value[:n]
        if n > 1 and (query[1:] < query[:-1]).any():
            starts = np.flatnonzero(query[1:] != query[:-1]) + 1
            starts = np.concatenate(([0], starts))
            lengths = np.diff(np.append(starts, n))
            order = np.lexsort((starts, query[starts]))  # by query, then file order
            counts = np.bincount(query, minlength=len(names))  # moved, the column is sorted:
            query = np.repeat(np.arange(len(names), dtype=np.int32), counts)  # made at once
            doc = _moved(doc, starts, lengths, order)
            self.doc = doc
            value = _moved(value, starts, lengths, order)
            self.value = value
        return TrecColumns(self.path, names, query, doc, value)


def _moved(
    col: np.ndarray, starts: np.ndarray, lengths: np.ndarray, order: np.ndarray
) -> np.ndarray:
    """A new column: the runs ``col[starts[r] : starts[r] + lengths[r]]`` in the order ``order``
    (compiled for long columns, one slice copy per run otherwise)."""
    out = np.empty_like(col)
    if len(col) >= COMPILED_MIN_LINES:
        from ._trec_scan import gather_runs

        if col.dtype.kind == "S":  # the runs as runs of bytes: one flat copy each
            w = col.dtype.itemsize
            gather_runs(col.view(np.uint8), starts * w, lengths * w, order, out.view(np.uint8))
        else:
            gather_runs(col, starts, lengths, order, out)
        return out
    at = 0
    for r in order.tolist():
        s, k = int(starts[r]), int(lengths[r])
        out[at : at + k] = col[s : s + k]
        at += k
    return out


def _has_repeats(cols: TrecColumns) -> bool:
    """:meth:`TrecColumns.has_repeats`, compiled for long columns (the rows of each query sorted
    by their bytes, no per-line hash array)."""
    if len(cols) < COMPILED_MIN_LINES:
        return cols.has_repeats()
    from ._trec_scan import has_repeats_kernel

    bnd = np.zeros(len(cols.queries) + 1, dtype=np.int64)
    np.cumsum(np.bincount(cols.query, minlength=len(cols.queries)), out=bnd[1:])
    rows = cols.doc.view(np.uint8).reshape(len(cols), cols.doc.dtype.itemsize)
    return bool(has_repeats_kernel(rows, bnd))


def _line_count(p: Path, n_fields: int) -> int:
    """Lines of a plain file (an upper bound of its data lines); 0 for a compressed one. A file
    of :data:`BOUND_MIN_BYTES` or more is not counted (a pass over all its bytes): its bound is
    the most data lines its size can hold, ``n_fields`` fields of one byte and their blanks. The
    columns made for that many lines are larger than the data, but the pages of their unused
    tail are never written, so they take no memory."""
    with open(p, "rb") as f:
        if f.read(2) == b"\x1f\x8b":
            return 0
        size = os.fstat(f.fileno()).st_size
        if size >= BOUND_MIN_BYTES:
            return size // (2 * n_fields - 1) + 1
        f.seek(0)
        n = 0
        while chunk := f.read(BLOCK_BYTES):
            n += chunk.count(b"\n")
        return n + 1


def _compiled(p: Path, lines: int) -> bool:
    """Whether to read ``p`` with the compiled kernels: a long file, or Numba already loaded
    (a short file read with NumPy does not wait for Numba to load)."""
    import sys

    if lines >= COMPILED_MIN_LINES or "numba" in sys.modules:
        return True
    return lines == 0 and p.stat().st_size >= COMPILED_MIN_LINES  # compressed: its size


def _feed(f: io.BufferedIOBase, add: Callable[[bytearray, int], bool]) -> bool:
    """Call ``add(buffer, n)`` with the whole lines of ``f``, :data:`BLOCK_BYTES` or so at a
    time, read into one reused buffer (no ``bytes`` object per block; the part line at a
    block's end moves to the buffer's start); ``False`` as soon as ``add`` gives it."""
    data = bytearray(2 * BLOCK_BYTES)
    rest = 0
    while True:
        if rest == len(data):  # a line longer than the buffer: a larger one
            data = data + bytearray(len(data))
        with memoryview(data) as view:
            got = f.readinto(view[rest:])
        if not got:
            break
        end = rest + got
        cut = data.rfind(b"\n", 0, end) + 1
        if cut and not add(data, cut):
            return False
        data[: end - cut] = data[cut:end]
        rest = end - cut
    return not rest or add(data, rest)


#: blocks scanned at once (one on the calling thread, the others on as many more), when the
#: process may use that many cores: the scan is about two thirds of reading a large run; each
#: block more holds another buffer and its scratch arrays (about 13 MiB) while the file is read
SCAN_THREADS = 2


def _feed_scanned(f: io.BufferedIOBase, blocks: _Blocks, threads: int) -> bool:
    """:func:`_feed` with :meth:`_Blocks.add_compiled` for ``threads`` blocks at a time: each
    read into a buffer of its own (whole lines; the part line at a buffer's end starts the
    next), scanned at once (the first on this thread), then taken in file order, so the
    columns are those of :func:`_feed`; ``False`` as soon as a block needs the dictionary
    readers."""
    from concurrent.futures import ThreadPoolExecutor

    bufs = [bytearray(2 * BLOCK_BYTES) for _ in range(threads)]
    rest = b""
    with ThreadPoolExecutor(max_workers=threads - 1, thread_name_prefix="ndcglab-scan") as pool:
        at_end = False
        while not at_end:
            filled: list[tuple[bytearray, int]] = []
            while len(filled) < threads:
                data = bufs[len(filled)]
                if len(rest) == len(data):  # a line longer than the buffer: a larger one
                    data = bufs[len(filled)] = bytearray(2 * len(data))
                data[: len(rest)] = rest
                with memoryview(data) as view:
                    got = f.readinto(view[len(rest) :])
                end = len(rest) + got
                if not got:
                    at_end = True
                    if end:
                        filled.append((data, end))
                    rest = b""
                    break
                cut = data.rfind(b"\n", 0, end) + 1
                rest = bytes(data[cut:end])
                if cut:
                    filled.append((data, cut))
            later = [
                pool.submit(blocks.scan_compiled, data, size, slot)
                for slot, (data, size) in enumerate(filled[1:], start=1)
            ]
            found = [blocks.scan_compiled(*filled[0], 0)] if filled else []
            found += [fut.result() for fut in later]
            for slot, ((data, size), k) in enumerate(zip(filled, found, strict=True)):
                if not blocks.take_compiled(data, size, slot, k):
                    return False
    return True


def _read(path: PathLike, n_fields: int, exact: bool) -> TrecColumns | None:
    p = Path(path)
    rest = b""
    with open_binary(p) as f:  # (a missing file: open_binary's error, which names the fix)
        lines = _line_count(p, n_fields)
        blocks = _Blocks(p, n_fields, exact, lines or 1 << 16)
        if _compiled(p, lines):
            threads = min(SCAN_THREADS, kernel_threads())
            if threads > 1 and (lines == 0 or lines >= COMPILED_MIN_LINES):
                if not _feed_scanned(f, blocks, threads):
                    return None
            elif not _feed(f, blocks.add_compiled):
                return None
            cols = blocks.columns()
            return None if cols is None or _has_repeats(cols) else cols
        add = blocks.add
        while True:
            chunk = f.read(BLOCK_BYTES)
            if not chunk:
                break
            buf = rest + chunk if rest else chunk
            cut = buf.rfind(b"\n") + 1
            block, rest = buf[:cut], buf[cut:]
            if cut and not add(block):
                return None
    if rest and not add(rest):
        return None
    cols = blocks.columns()
    return None if cols is None or _has_repeats(cols) else cols


def read_trec_columns(
    qrels_path: PathLike, run_path: PathLike, *, disposable: bool = False
) -> tuple[TrecColumns, TrecColumns] | None:
    """A qrels file and a run file as :class:`TrecColumns`, or ``None`` when either needs the
    dictionary readers (see the module docstring; :func:`ndcglab.data.read_trec` then reads
    them and reports any error). A run none of whose queries is in the qrels is refused as
    :func:`~ndcglab.data.read_trec` refuses it. ``disposable``: the columns'
    :attr:`TrecColumns.disposable` (evaluating them may empty them)."""
    qrels = _read(qrels_path, 4, True)
    if qrels is None:
        return None
    run = _read(run_path, 6, False)
    if run is None:
        return None
    known = set(qrels.queries)
    if not any(q in known for q in run.queries):
        return None  # read_trec names both files and a query id of each
    qrels.disposable = run.disposable = disposable
    return qrels, run
