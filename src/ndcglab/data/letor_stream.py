"""The rows of a LETOR/SVMlight file in blocks of whole queries, as they are read:
:class:`LetorBlocks`, for scoring a file with peak memory of a block, not of the file
(:meth:`ndcglab.models.TrainedModel.predict` of a path, ``ndcglab predict``).

The bytes go through the parser of :func:`ndcglab.data.read_letor` (the same rules, the same
float32 values, the same errors naming file, line and token), 64 MiB at a time; each block's
rows are handed over as soon as the next block shows where their last query ends. What
:func:`~ndcglab.data.read_letor` does with the whole file is done block by block (``missing``
of whole queries) or at the end (an empty file, a query id that comes back after others under
``split_queries="error"``). :func:`streamable` says which files and read options this covers;
the others are read whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataFormatError
from . import _letor_numpy
from . import _parse_codes as C
from ._files import PathLike, is_gzip
from .letor import (
    _byte_blocks,
    _checked_options,
    _find_query_file,
    _Parser,
    _split_queries,
)

__all__ = ["STREAM_MIN_BYTES", "LetorBlocks", "streamable"]

#: a file at most this big on disk is read whole (the NumPy reader's limit: such a file is
#: read fastest at once, and its matrix is small)
STREAM_MIN_BYTES = _letor_numpy.MAX_BYTES
_OPTIONS = frozenset({"missing", "split_queries", "max_features"})


def streamable(path: PathLike, read_options: Mapping[str, Any]) -> bool:
    """Whether :class:`LetorBlocks` reads ``path`` with ``read_options``: a file (plain or gzip)
    over :data:`STREAM_MIN_BYTES` with no query file beside it, read with no other option than
    ``missing``, ``max_features`` and ``split_queries`` other than ``"merge"`` (which reorders
    the documents)."""
    if set(read_options) - _OPTIONS or read_options.get("split_queries") == "merge":
        return False
    p = Path(path)
    try:
        if not p.is_file() or _find_query_file(p) is not None:
            return False
        return p.stat().st_size > STREAM_MIN_BYTES or (
            is_gzip(p) and p.stat().st_size > STREAM_MIN_BYTES // 8
        )
    except OSError:
        return False


class LetorBlocks:
    """Iterate over ``(features, boundaries)`` of the file at ``path``: consecutive runs of
    whole queries, in file order; ``features`` float32 ``(n, F)`` with ``F`` at least ``width``
    (more when the file has a larger feature index: then the file's largest so far),
    ``boundaries`` the ``(q + 1,)`` query offsets within the run.

    After the iteration, :attr:`n_docs` and :attr:`n_queries` hold the file's counts (the
    queries as :func:`~ndcglab.data.read_letor` counts them). With ``ids=True``, while a
    run is handed over, :attr:`query_ids` holds its queries' ids (those of
    :func:`~ndcglab.data.read_letor`'s dataset, ``Q#2``... under ``split_queries="separate"``)
    and :attr:`doc_ids` its rows' ``#docid`` comments (``""`` where a line has none).
    """

    def __init__(
        self,
        path: PathLike,
        *,
        width: int = 0,
        missing: str = "nan",
        split_queries: str = "error",
        max_features: int | None = None,
        ids: bool = False,
    ) -> None:
        self.limit = _checked_options(missing, split_queries, None, max_features)
        self.path = Path(path)
        self.width = int(width)
        self.missing = missing
        self.split_queries = split_queries
        self.ids = bool(ids)
        self.n_docs = 0
        self.n_queries = 0
        self.query_ids: list[str] = []
        self.doc_ids: list[str] = []

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        parser = _Parser(self.path, None, None, self.limit)
        qids: list[str] = []
        lines: list[int] = []
        starts: list[int] = []
        held: list[np.ndarray] = []  # the rows of the last query read, maybe not complete yet
        held_docs: list[str] = []  # their #docid comments (with ids=True)
        names: list[str] = []  # the queries' ids as the dataset gives them (with ids=True)
        seen: dict[str, int] = {}
        for arr in _byte_blocks(self.path):
            parser.feed(arr)
            chunk = parser.chunks.pop()
            n = len(chunk.labels)
            if n == 0:
                continue
            rows = chunk.block_rows.tolist()
            ids = chunk.block_qids
            docs: list[str] = chunk.extras.get("docid") or [""] * n if self.ids else []
            if held and rows[0] == 0 and ids[0] == qids[-1]:
                rows, ids = rows[1:], ids[1:]  # the held query runs on into this block
                held.append(chunk.X[: rows[0] if rows else n])
                held_docs += docs[: rows[0] if rows else n]
            if not rows:
                continue
            # the held query is complete, and so are those starting before the last one here
            sizes = [sum(len(h) for h in held)] if held else []
            sizes += np.diff(rows).tolist()
            parts = [*held, chunk.X[rows[0] : rows[-1]]]
            if self.ids:
                for q in ids:
                    c = seen[q] = seen.get(q, 0) + 1
                    sep = self.split_queries == "separate" and c > 1
                    names.append(f"{q}#{c}" if sep else q)
                self.query_ids = names[len(names) - len(ids) - bool(held) : len(names) - 1]
                self.doc_ids = held_docs + docs[rows[0] : rows[-1]]
            if sizes:
                yield self._run(parts, sizes)
            for r, q, ln in zip(rows, ids, chunk.block_lines.tolist()[-len(rows) :]):
                starts.append(self.n_docs + r)
                qids.append(q)
                lines.append(ln)
            held = [chunk.X[rows[-1] :].copy()]
            held_docs = docs[rows[-1] :]
            self.n_docs += n
        if held:
            if self.ids:
                self.query_ids, self.doc_ids = names[-1:], held_docs
            yield self._run(held, [sum(len(h) for h in held)])
        if self.n_docs == 0:
            raise DataFormatError(
                "no data lines (the file is empty or holds only comments)",
                path=self.path,
                fix="check the path; a LETOR file has one document per line: "
                "'<label> qid:<id> <index>:<value> ...'",
            )
        if parser.qid_mode == C.QID_YES:
            bnd = np.asarray([*starts, self.n_docs], dtype=np.int64)
            _split_queries(qids, bnd, lines, self.split_queries, self.path)
        self.n_queries = len(qids)

    def _run(self, parts: list[np.ndarray], sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """One float32 matrix of the rows ``parts`` (widened to :attr:`width`), with the
        ``missing`` rule applied per query, and its query offsets."""
        width = max(self.width, *(p.shape[1] for p in parts))
        n = sum(len(p) for p in parts)
        if len(parts) == 1 and parts[0].shape[1] == width:
            x = np.ascontiguousarray(parts[0])
        else:
            x = np.zeros((n, width), dtype=np.float32)
            r = 0
            for p in parts:
                x[r : r + len(p), : p.shape[1]] = p
                r += len(p)
        bnd = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=bnd[1:])
        if self.missing != "nan" and np.isnan(x).any():  # rows read here: changed in place
            if self.missing == "zero":
                np.putmask(x, np.isnan(x), np.float32(0))
            else:
                from . import _parse_kernels

                _parse_kernels.fill_query_min(x, bnd)
        return x, bnd
