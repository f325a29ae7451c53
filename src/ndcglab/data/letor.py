"""Reader for LETOR / SVMlight ranking files.

Format, one document per line::

    <label> qid:<id> <index>:<value> <index>:<value> ... #docid = <id> inc = <v> prob = <v>

* ``label`` is a number (graded relevance; floats allowed, must be finite).
* ``qid:<id>`` follows the label; ids are any non-blank token and are kept as strings. Files
  without ``qid:`` need a LightGBM-style *query file* (one list size per line, in document
  order): pass ``query_file=`` or put it beside the data as ``PATH.query`` (picked up
  automatically). When a file has ``qid:`` tokens *and* a query file, the ``qid:`` blocks
  define the queries and the query file is checked against them: a query file passed as
  ``query_file=`` that disagrees is an error (:class:`DataFormatError` naming it); one that was
  only found beside the data and disagrees is ignored with a ``UserWarning`` naming it (never
  silently).
* Features are ``index:value`` pairs, 1-based. The file may be dense (every index) or sparse
  (absent indices are 0). The matrix has as many columns as the largest index in the file, or
  ``n_features`` when given (an index beyond it is an error). Without ``n_features`` the largest
  index may be at most ``max_features`` (default :data:`MAX_FEATURES` = 100,000, or the
  environment variable ``NDCGLAB_MAX_FEATURES``): a larger one is refused naming its line,
  instead of allocating a matrix of that width.
* Feature values are stored as float32. A value that is infinite (``inf``) or beyond float32's
  range (``1e39``, ``1e999``) is refused with file, line and token: it is never stored as
  ``inf``.
* The literal ``NULL`` (in any letter case, unsigned) marks a missing value (OHSUMED
  "Feature-null"); it becomes NaN, and so does an explicit ``nan``. ``missing`` chooses what to do
  with NaN values:

  - ``"nan"``  (default) keep NaN;
  - ``"min"``  replace by the minimum of that feature over the *same query's* other documents, as
    LETOR's "Feature-min" files do; when a query has no value at all for the feature
    (all NaN), use 0;
  - ``"zero"`` replace by 0.

* Everything after ``#`` is a comment. ``key = value`` pairs in it (also ``key=value``) are kept:
  ``docid`` becomes :attr:`RankingDataset.doc_ids` (``""`` on lines without one), every other key
  an ``extras`` column - float64 (NaN where a line lacks the key) when every value is a number,
  else strings. Other comment words are ignored. Lines that are blank or start with ``#`` are
  skipped (they still count for line numbers).
* Line endings LF or CRLF. A carriage return not followed by a newline (old-Mac CR-only line
  endings, or a stray byte) is refused with its line: it would otherwise glue lines together.
  The file may be gzip-compressed (detected from its first bytes); a truncated or corrupt gzip
  stream is a :class:`DataFormatError`.

**Queries in separate blocks.** A query's lines are normally contiguous. When a ``qid`` comes back
after other queries, ``split_queries`` decides: ``"error"`` (default) raises a
:class:`DataFormatError` naming both lines; ``"merge"`` gathers all its blocks into one query,
placed where it first appeared, documents in file order; ``"separate"`` keeps each block as its
own query, the k-th block of ``Q`` getting the id ``Q#k`` (k ≥ 2).

**Speed and memory.** Parsing runs in a Numba tokenizer over 64 MiB blocks of bytes and fills
float32 arrays directly (no Python object per token; one string per document only for doc ids).
Peak memory is about twice the float32 feature matrix for multi-block files, less in resident
pages. Loading the tokenizer costs about a second in a fresh process (several seconds while
Numba's cache is cold), so until it has read a file in the process, a file of at most 32 MiB
(after decompression) in the common shape is first tried by a NumPy reader: one
``label qid:ID index:value ...`` line per document, decimal numbers, indices in increasing order,
the same ``key = value`` keys in every comment (:mod:`._letor_numpy` lists the rules). It gives
the same dataset bit for bit, reports no error itself, and sends the whole file to the tokenizer
at the first line outside that shape; the tokenizer applies and reports every rule above. Its
peak memory is about 14 times the file's size.

``cache=True`` keeps a binary copy (``.npz``, in :func:`default_cache_dir`, never beside the
data) that reloads in seconds; it is used only when the source file's size, modification time
and sha256 all match, and so do those of the query file it depends on (always hashed).
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from .._warn import warn_user
from ..errors import DataFormatError, SpecError
from . import _letor_numpy
from . import _parse_codes as C
from ._files import PathLike, open_binary, open_bytes, split_lines, split_strings
from ._letor_cache import default_cache_dir, read_cached
from .dataset import RankingDataset, boundaries_from_group

__all__ = [
    "MAX_FEATURES",
    "default_cache_dir",
    "max_features_limit",
    "read_letor",
    "read_letor_bytes",
    "read_query_file",
]

Missing = Literal["nan", "min", "zero"]
SplitQueries = Literal["error", "merge", "separate"]

_CHUNK = 64 << 20
_MISSING = ("nan", "min", "zero")
_SPLIT = ("error", "merge", "separate")

#: default cap on the largest feature index of a file read without ``n_features``
MAX_FEATURES = 100_000
_MAX_FEATURES_ENV = "NDCGLAB_MAX_FEATURES"


def max_features_limit(max_features: int | None = None) -> int:
    """The cap on the largest feature index: ``max_features`` when given, else the environment
    variable ``NDCGLAB_MAX_FEATURES``, else :data:`MAX_FEATURES`."""
    if max_features is not None:
        value: Any = max_features
        where = "max_features"
    else:
        value = os.environ.get(_MAX_FEATURES_ENV)
        where = _MAX_FEATURES_ENV
        if value is None or not str(value).strip():
            return MAX_FEATURES
    try:
        limit = int(str(value).strip())
    except ValueError:
        limit = 0
    if limit < 1:
        raise SpecError(
            f"{where}={value!r} is not a positive integer. Fix: give the largest feature index to "
            f"accept, e.g. {where}=200000"
        )
    return limit


# ============================================================================ public API
def read_letor(
    path: PathLike,
    *,
    missing: Missing = "nan",
    query_file: PathLike | None = None,
    n_features: int | None = None,
    split_queries: SplitQueries = "error",
    cache: bool | PathLike = False,
    cache_verify: bool = True,
    max_features: int | None = None,
) -> RankingDataset:
    """Read a LETOR/SVMlight file (plain or gzip) into a :class:`RankingDataset`.

    Parameters
    ----------
    path:
        The data file.
    missing:
        What NaN/``NULL`` values become: ``"nan"`` (kept), ``"min"`` (per-query minimum of the
        feature, 0 when the whole query lacks it) or ``"zero"``. See the module docstring.
    query_file:
        LightGBM-style group file (one list size per line) for files without ``qid:``.
        ``PATH.query`` (or ``PATH`` without ``.gz`` plus ``.query``) is used when present.
    n_features:
        Number of feature columns; default the largest index in the file.
    split_queries:
        ``"error"``, ``"merge"`` or ``"separate"``: how to treat a qid that reappears after
        other queries (see the module docstring).
    cache:
        ``False`` (default); ``True`` to keep a binary cache in :func:`default_cache_dir`; or a
        folder for the cache. Cache files are named after the source file plus a hash of its
        absolute path and the read options, written atomically, and used only when the
        source's size, modification time and sha256 match those recorded in them.
    cache_verify:
        With ``False``, a cache entry is trusted when the source's size and modification time
        match, without hashing the source again (faster for multi-GB files). The query file is
        hashed either way.
    max_features:
        The largest feature index accepted when ``n_features`` is not given (default
        ``$NDCGLAB_MAX_FEATURES`` or :data:`MAX_FEATURES`); a larger index is refused naming
        its line.

    Raises
    ------
    DataFormatError
        With file, line, the offending token and a fix, for any malformed input.
    """
    limit = _checked_options(missing, split_queries, n_features, max_features)
    p = Path(path)
    qfile = Path(query_file) if query_file is not None else None
    if qfile is not None and not qfile.exists():
        raise DataFormatError("query file not found", path=qfile, fix="check the path")
    auto_qfile = qfile is None
    if auto_qfile:
        qfile = _find_query_file(p)

    if cache is not False:
        options = {
            "missing": missing,
            "n_features": None if n_features is None else int(n_features),
            "split_queries": split_queries,
            "query_file": str(qfile.resolve()) if qfile is not None else None,
            "explicit_query_file": not auto_qfile,
            "max_features": limit,
        }
        return read_cached(
            p,
            options,
            cache,
            lambda: _read(p, missing, qfile, auto_qfile, n_features, split_queries, limit),
            verify=cache_verify,
            depends=[qfile] if qfile is not None else [],
        )
    return _read(p, missing, qfile, auto_qfile, n_features, split_queries, limit)


def read_letor_bytes(
    data: bytes,
    *,
    name: PathLike = "<bytes>",
    missing: Missing = "nan",
    query_file: PathLike | None = None,
    n_features: int | None = None,
    split_queries: SplitQueries = "error",
    max_features: int | None = None,
) -> RankingDataset:
    """:func:`read_letor` of a file's bytes already in memory (plain or gzip).

    The bytes go through the same parser as a file, so every format rule, every number and
    every error is that of :func:`read_letor` on a file holding ``data``. ``name`` is the file
    the bytes stand for: errors name it (with the line within ``data``) and it becomes the
    dataset's ``source``. No query file is looked for beside ``name``; pass ``query_file=`` for
    data without ``qid:``. The other options are those of :func:`read_letor` (no cache).
    """
    limit = _checked_options(missing, split_queries, n_features, max_features)
    qfile = Path(query_file) if query_file is not None else None
    if qfile is not None and not qfile.exists():
        raise DataFormatError("query file not found", path=qfile, fix="check the path")
    return _read(
        Path(name), missing, qfile, False, n_features, split_queries, limit, data=bytes(data)
    )


def _checked_options(
    missing: str, split_queries: str, n_features: int | None, max_features: int | None
) -> int:
    """Refuse unknown ``missing``/``split_queries`` values and a bad ``n_features``; return the
    cap on the largest feature index."""
    if missing not in _MISSING:
        raise SpecError(f"missing={missing!r}. Fix: choose one of {', '.join(_MISSING)}")
    if split_queries not in _SPLIT:
        raise SpecError(f"split_queries={split_queries!r}. Fix: choose one of {', '.join(_SPLIT)}")
    if n_features is not None and (int(n_features) != n_features or n_features < 1):
        raise SpecError(
            f"n_features must be a positive integer or None, got {n_features!r}. "
            "Fix: give the number of features, or leave it out to read it from the file"
        )
    return int(n_features) if n_features is not None else max_features_limit(max_features)


def read_query_file(path: PathLike) -> np.ndarray:
    """Read a LightGBM ``.query`` group file: one non-negative list size per line → int64 array."""
    p = Path(path)
    sizes: list[int] = []
    with open_binary(p, letor=True) as f:
        text = f.read().decode("utf-8", "replace")
    lines = split_lines(text)
    while lines and not lines[-1].strip():
        lines.pop()
    for k, raw in enumerate(lines, start=1):
        tok = raw.strip(" \t\v\f")
        try:
            v = int(tok) if tok.isascii() and tok.isdigit() else -1
        except ValueError:
            v = -1
        if v < 0:
            raise DataFormatError(
                "query file lines must each hold one list size (a non-negative integer)",
                path=p,
                line=k,
                token=tok,
                fix="write one integer per line: the number of documents of each query, in order",
            )
        sizes.append(v)
    return np.asarray(sizes, dtype=np.int64)


# ============================================================================ parsing
@dataclass
class _Chunk:
    X: np.ndarray
    labels: np.ndarray
    block_rows: np.ndarray
    block_qids: list[str]
    block_lines: np.ndarray
    extras: dict[str, Any] = field(default_factory=dict)
    first_line: int = 0


_FIXES = {
    "label": "each line starts with a finite numeric relevance label, e.g. '2 qid:10 1:0.5 ...'",
    "pair": (
        "write features as <index>:<value> with a positive integer index, e.g. '7:0.25'; "
        "a comment must start with '#'"
    ),
    "index": "number features from 1; if the file is 0-based, add 1 to every index",
    "dup": "keep one value per feature index on each line",
    "value": "write feature values as decimal numbers; use NULL for a missing value",
    "qid": "give every line a qid:<id> token right after the label",
}


class _Parser:
    """Stateful block parser: feeds 64 MiB blocks of whole lines to the Numba kernel."""

    loaded: ClassVar[bool] = False  # whether one has fed a block in this process

    def __init__(
        self, path: Path, n_features: int | None, query_file: Path | None, limit: int
    ) -> None:
        self.path = path
        self.fixed = n_features is not None
        self.width = int(n_features) if n_features is not None else 0
        self.limit = int(limit)
        self.query_file = query_file
        self.qid_mode = C.QID_UNKNOWN
        self.keys: list[str] = []
        self.key_blob = np.zeros(0, dtype=np.uint8)
        self.key_off = np.zeros(1, dtype=np.int64)
        self.chunks: list[_Chunk] = []
        self.line_offset = 0
        self.n_nan = 0
        self.first_data_line: int | None = None
        self.first_data_token = ""

    @property
    def K(self) -> Any:
        """The Numba kernels, loaded on first use (a file the NumPy reader takes never loads
        them)."""
        from . import _parse_kernels

        return _parse_kernels

    def take(self, got: _letor_numpy.Parsed) -> None:
        """Adopt what the NumPy reader read: the whole file as one block of rows."""
        self.width = got.width
        self.keys = got.keys
        self.qid_mode = C.QID_YES
        self.n_nan = got.n_nan
        self.chunks.append(
            _Chunk(
                X=got.X,
                labels=got.labels,
                block_rows=got.block_rows,
                block_qids=got.block_qids,
                block_lines=got.block_lines,
                extras=dict(got.extras),
                first_line=1,
            )
        )

    # ---------------------------------------------------------------- keys
    def _set_keys(self, keys: list[str]) -> None:
        self.keys = keys
        enc = [k.encode("utf-8", "surrogateescape") for k in keys]
        self.key_blob = np.frombuffer(b"".join(enc), dtype=np.uint8).copy()
        off = np.zeros(len(enc) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in enc], out=off[1:])
        self.key_off = off

    def _seed_keys(self, arr: np.ndarray) -> None:
        head = arr[: 1 << 20].tobytes().decode("utf-8", "surrogateescape")
        for line in head.split("\n"):  # the kernel's lines and blanks, not str.splitlines'
            s = line.strip(" \t\r\v\f")
            if not s or s.startswith("#"):
                continue
            if "#" in s:
                self._set_keys([k for k, _ in _comment_pairs(s.split("#", 1)[1])])
            return

    def _check_width(self, arr: np.ndarray) -> None:
        """Refuse a feature index beyond the cap, naming the first line that asks for one."""
        if self.width <= self.limit:
            return
        line, es, ee = (int(v) for v in self.K.first_index_above(arr, self.limit))
        token = arr[es:ee].tobytes().decode("utf-8", "replace") if line >= 0 else None
        raise DataFormatError(
            f"feature index {self.width} is larger than the cap of {self.limit} features",
            path=self.path,
            line=self.line_offset + line + 1 if line >= 0 else None,
            token=token,
            fix="check the line (a 0-based or mangled index?); if the file really has that many "
            "features, pass n_features= or max_features=, or set NDCGLAB_MAX_FEATURES",
        )

    # ---------------------------------------------------------------- one block
    def feed(self, arr: np.ndarray) -> None:
        K = self.K
        _Parser.loaded = True
        n_lines, bare_cr = (int(v) for v in K.scan_lines(arr))
        if bare_cr >= 0:
            line = self.line_offset + int(np.count_nonzero(arr[:bare_cr] == 10)) + 1
            start = max(int(arr[:bare_cr].tobytes().rfind(b"\n")) + 1, bare_cr - 40)
            raise DataFormatError(
                "carriage return (\\r) not followed by a newline: CR-only line endings are not "
                "read",
                path=self.path,
                line=line,
                token=arr[start : bare_cr + 1].tobytes().decode("utf-8", "replace"),
                fix="convert the file to LF line endings, e.g. tr '\\r' '\\n' < IN > OUT",
            )
        if not self.chunks and self.first_data_line is None:
            self._seed_keys(arr)
        if not self.fixed and self.width == 0:
            # a guess from the first lines; a wider index later triggers a full scan
            self.width = int(K.max_feature_index(arr[: 1 << 16]))
            self._check_width(arr)
        rows = max(n_lines, 1)
        while True:
            nk = len(self.keys)
            X = np.zeros((rows, self.width), dtype=np.float32)
            labels = np.empty(rows, dtype=np.float64)
            lab_s = np.empty(rows, dtype=np.int64)
            lab_e = np.empty(rows, dtype=np.int64)
            lab_slow = np.zeros(rows, dtype=np.bool_)
            qid_s = np.empty(rows, dtype=np.int64)
            qid_e = np.empty(rows, dtype=np.int64)
            line_no = np.empty(rows, dtype=np.int64)
            ext_s = np.empty((rows, nk), dtype=np.int64)
            ext_e = np.empty((rows, nk), dtype=np.int64)
            block_rows = np.empty(rows, dtype=np.int64)
            res = K.parse_block(
                arr, X, self.fixed, self.qid_mode, self.key_blob, self.key_off,
                labels, lab_s, lab_e, lab_slow, qid_s, qid_e, line_no, ext_s, ext_e, block_rows,
            )  # fmt: skip
            status, n, nb, n_nan, err_line, es, ee, qid_mode, n_slow = res
            if status == K.S_NEED_WIDER:
                self.width = max(self.width, int(K.max_feature_index(arr)))
                self._check_width(arr)
                continue
            if status == K.S_UNKNOWN_KEY:
                key = arr[es:ee].tobytes().decode("utf-8", "surrogateescape")
                self._set_keys([*self.keys, key])
                continue
            break
        if self.first_data_line is None and (n > 0 or qid_mode != K.QID_UNKNOWN):
            # row 0's label and line number are set once its qid: was looked for
            self.first_data_line = self.line_offset + int(line_no[0]) + 1
            self.first_data_token = _token_after_label(arr, int(lab_e[0]))
        self.qid_mode = qid_mode
        if qid_mode == K.QID_NO and self.query_file is None:
            raise DataFormatError(
                "no qid:<id> after the label, and no query file",
                path=self.path,
                line=self.first_data_line,
                token=self.first_data_token,
                fix=(
                    "add qid:<id> to every line, or pass query_file= (a LightGBM .query file "
                    "with one list size per line; PATH.query is picked up automatically)"
                ),
            ).naming("query_file")
        if status != K.S_OK:
            self._raise(status, arr, err_line, es, ee)
        labels = labels[:n]
        if n_slow:
            for r in np.flatnonzero(lab_slow[:n]):
                tok = arr[lab_s[r] : lab_e[r]].tobytes()
                v = float(tok)
                if not np.isfinite(v):
                    self._raise(K.S_BAD_LABEL, arr, int(line_no[r]), int(lab_s[r]), int(lab_e[r]))
                labels[r] = v
        X = X[:n]
        if n < 0.9 * rows:
            X = X.copy()
        self.n_nan += int(n_nan)
        brows = block_rows[:nb].copy()
        chunk = _Chunk(
            X=X,
            labels=labels.copy() if n < rows else labels,
            block_rows=brows,
            block_qids=split_strings(K.gather_tokens(arr, qid_s[brows], qid_e[brows]), nb),
            block_lines=line_no[brows] + self.line_offset + 1,
            first_line=self.line_offset + 1,
        )
        for k, key in enumerate(self.keys):
            starts = np.ascontiguousarray(ext_s[:n, k])
            ends = np.ascontiguousarray(ext_e[:n, k])
            if key == "docid":
                chunk.extras[key] = split_strings(K.gather_tokens(arr, starts, ends), n)
                continue
            vals, st = K.parse_float_tokens(arr, starts, ends)
            if (st == K.INVALID).any() or (st == K.NULL).any():
                chunk.extras[key] = split_strings(K.gather_tokens(arr, starts, ends), n)
                continue
            for r in np.flatnonzero(st == K.APPROX):
                vals[r] = float(arr[starts[r] : ends[r]].tobytes())
            chunk.extras[key] = vals
        self.chunks.append(chunk)
        self.line_offset += n_lines

    def _raise(self, status: int, arr: np.ndarray, err_line: int, es: int, ee: int) -> None:
        K = self.K
        line = self.line_offset + int(err_line) + 1
        token = arr[es:ee].tobytes().decode("utf-8", "replace")
        msg, fix = {
            K.S_BAD_LABEL: ("the label is not a finite number", _FIXES["label"]),
            K.S_MISSING_QID: ("expected qid:<id> after the label", _FIXES["qid"]),
            K.S_UNEXPECTED_QID: (
                f"qid: on a line although the first data line (line {self.first_data_line}) "
                "has none",
                "give every line a qid:<id>, or none of them and use a .query file",
            ),
            K.S_EMPTY_QID: ("empty query id", "write qid:<id> with a non-empty id"),
            K.S_BAD_PAIR: ("malformed feature pair, expected <index>:<value>", _FIXES["pair"]),
            K.S_BAD_INDEX: ("feature index must be a positive integer (1-based)", _FIXES["index"]),
            K.S_DUP_INDEX: ("feature index appears twice on this line", _FIXES["dup"]),
            K.S_BAD_VALUE: ("feature value is not a number", _FIXES["value"]),
            K.S_VALUE_RANGE: (
                "feature value is infinite or beyond the float32 range (about ±3.4e38)",
                "write finite values within ±3.4e38 (rescale the feature), or NULL for a "
                "missing value",
            ),
        }.get(status, (None, None))
        if status == K.S_INDEX_TOO_LARGE:
            if self.fixed and (ee - es) and _index_of(token) is not None:
                msg = f"feature index exceeds n_features={self.width}"
                fix = "pass a larger n_features, or n_features=None to use the file's largest index"
            else:
                msg = f"feature index is too large (more than 9 digits; the cap is {self.limit})"
                fix = _FIXES["index"]
        if msg is None:  # pragma: no cover - kernel statuses are all mapped above
            msg, fix = f"cannot parse this line (status {status})", "check the file's format"
        raise DataFormatError(msg, path=self.path, line=line, token=token, fix=fix)


def _index_of(token: str) -> int | None:
    head = token.split(":", 1)[0]
    return int(head) if head.isdigit() else None


def _token_after_label(arr: np.ndarray, label_end: int) -> str:
    tail = arr[label_end : label_end + 200].tobytes().decode("utf-8", "replace")
    parts = tail.split(None, 1)
    return parts[0] if parts else ""


def _comment_pairs(comment: str) -> list[tuple[str, str]]:
    """``key = value`` pairs of a comment, in order (the same grammar as the Numba kernel, whose
    blanks are space, tab, CR, VT and FF only)."""
    toks = [t for t in re.split(r"[ \t\r\v\f]+", comment) if t]
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if "=" in t:
            k, _, v = t.partition("=")
            if k and v:
                out.append((k, v))
            i += 1
        elif i + 2 < len(toks) and toks[i + 1] == "=":
            out.append((t, toks[i + 2]))
            i += 3
        else:
            i += 1
    seen: dict[str, str] = {}
    for k, v in out:
        seen.setdefault(k, v)
    return list(seen.items())


def _open(path: Path, data: bytes | None) -> Any:
    """The file at ``path``, or the bytes ``data`` standing for it, as a binary stream."""
    return open_binary(path, letor=True) if data is None else open_bytes(data, path)


def _feed_blocks(path: Path, feed: Any, data: bytes | None = None) -> None:
    """Call ``feed(arr)`` with each block of :func:`_byte_blocks` (``feed`` must not keep a
    reference to ``arr``)."""
    for arr in _byte_blocks(path, data):
        feed(arr)


def _byte_blocks(path: Path, data: bytes | None = None) -> Iterator[np.ndarray]:
    """uint8 arrays of whole lines (the last may lack its newline) of the file, or of ``data``
    (its bytes, already in memory) when given.

    One reusable buffer, filled with ``readinto``: it starts small (the file's size for small
    plain files) and doubles while it keeps filling up, to at most ``_CHUNK`` bytes (more only
    for a line longer than that). A block is overwritten once the next one is asked for: use
    it (or copy it) before. A larger buffer is a new one (never a resize of the buffer a block
    may still view).
    """
    with _open(path, data) as f:
        size = _CHUNK
        if not isinstance(f, gzip.GzipFile):
            n = len(data) if data is not None else os.fstat(f.fileno()).st_size
            size = min(_CHUNK, n + 1)
        else:
            size = min(_CHUNK, 1 << 20)
        buf = bytearray(max(size, 1))
        start = 0  # bytes of an unfinished line carried over at the front of buf
        eof = False
        while not eof:
            if start == len(buf):
                buf = _grown(buf, 2 * len(buf), start)
            end = start
            with memoryview(buf) as mv:
                while end < len(buf):
                    got = f.readinto(mv[end:])
                    if not got:
                        eof = True
                        break
                    end += got
            k = buf.rfind(b"\n", 0, end)
            if k < 0:
                start = end
                continue
            yield np.frombuffer(buf, dtype=np.uint8, count=k + 1)
            rest = end - (k + 1)
            buf[:rest] = buf[k + 1 : end]
            start = rest
            if not eof and len(buf) < _CHUNK:
                buf = _grown(buf, min(2 * len(buf), _CHUNK), start)
        if start:
            yield np.frombuffer(buf, dtype=np.uint8, count=start)


def _grown(buf: bytearray, size: int, keep: int) -> bytearray:
    """A new buffer of ``size`` bytes starting with the first ``keep`` bytes of ``buf``."""
    new = bytearray(size)
    new[:keep] = buf[:keep]
    return new


def _numba_parser_loaded() -> bool:
    """Whether the Numba parser has read a file in this process: its compiled kernels are then
    loaded, and they read faster than the NumPy reader."""
    return _Parser.loaded


def _read_with_numpy(
    path: Path, n_features: int | None, limit: int, data: bytes | None = None
) -> _letor_numpy.Parsed | None:
    """The NumPy reader's result for a file (or its bytes ``data``) that fits one block (at most
    :data:`._letor_numpy.MAX_BYTES` after decompression) and has the shape it takes, while the
    Numba parser is not loaded; ``None`` otherwise."""
    if _numba_parser_loaded():
        return None
    most = min(_letor_numpy.MAX_BYTES, _CHUNK)
    with _open(path, data) as f:
        if isinstance(f, gzip.GzipFile):
            if data is None and _gzip_size_hint(path) > most:
                return None
        elif (len(data) if data is not None else os.fstat(f.fileno()).st_size) > most:
            return None
        data = f.read(most + 1)
    if len(data) > most:
        return None
    try:
        return _letor_numpy.parse(data, n_features, limit)
    except Exception:  # pragma: no cover - a shortcut that fails leaves the file to the parser
        return None


def _gzip_size_hint(path: Path) -> int:
    """The uncompressed size a gzip file's trailer records (its last member's size modulo
    2^32: a hint, never trusted to read less; 0 when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            f.seek(-4, os.SEEK_END)
            return int.from_bytes(f.read(4), "little")
    except OSError:
        return 0


def _find_query_file(path: Path) -> Path | None:
    cands = [Path(str(path) + ".query")]
    if path.name.endswith(".gz"):
        cands.append(path.with_name(path.name[:-3] + ".query"))
    for c in cands:
        if c.is_file():
            return c
    return None


def _read(
    path: Path,
    missing: str,
    query_file: Path | None,
    auto_query_file: bool,
    n_features: int | None,
    split_queries: str,
    limit: int = MAX_FEATURES,
    *,
    data: bytes | None = None,
) -> RankingDataset:
    """The dataset of the file at ``path``, or of ``data`` (its bytes) when given."""
    parser = _Parser(path, n_features, query_file, limit)
    got = _read_with_numpy(path, n_features, limit, data)
    if got is not None:
        parser.take(got)
    else:
        _feed_blocks(path, parser.feed, data)
    if missing == "zero" and parser.n_nan:
        for c in parser.chunks:
            np.putmask(c.X, np.isnan(c.X), np.float32(0))
    chunks = parser.chunks
    n_docs = sum(len(c.labels) for c in chunks)
    if n_docs == 0:
        raise DataFormatError(
            "no data lines (the file is empty or holds only comments)",
            path=path,
            fix="check the path; a LETOR file has one document per line: "
            "'<label> qid:<id> <index>:<value> ...'",
        )
    width = parser.width
    # ---- labels, features
    labels = np.concatenate([c.labels for c in chunks]) if len(chunks) > 1 else chunks[0].labels
    if len(chunks) == 1 and chunks[0].X.shape[1] == width:
        X = chunks[0].X
        chunks[0].X = None  # type: ignore[assignment]  # frees the block; chunk not used again
    else:
        X = np.zeros((n_docs, width), dtype=np.float32)
        r = 0
        for c in chunks:
            m, w = c.X.shape
            X[r : r + m, :w] = c.X
            c.X = None  # type: ignore[assignment]  # frees the block; chunk not used again
            r += m
    # ---- doc ids and extras
    extras = _assemble_extras(parser.keys, chunks, n_docs)
    doc_ids = extras.pop("docid", None)
    # ---- queries
    offsets = np.cumsum([0] + [len(c.labels) for c in chunks])
    if parser.qid_mode == C.QID_YES:
        starts: list[int] = []
        qids: list[str] = []
        lines: list[int] = []
        for c, off in zip(chunks, offsets):
            for r, q, ln in zip(c.block_rows.tolist(), c.block_qids, c.block_lines.tolist()):
                if starts and r == 0 and qids[-1] == q:
                    continue  # a query running across two blocks of bytes
                starts.append(int(off) + r)
                qids.append(q)
                lines.append(ln)
        boundaries = np.asarray([*starts, n_docs], dtype=np.int64)
        if query_file is not None:
            _check_query_file_agrees(query_file, auto_query_file, boundaries, n_docs, path)
        perm, boundaries, query_ids = _split_queries(qids, boundaries, lines, split_queries, path)
        if perm is not None:
            X = X[perm]
            labels = labels[perm]
            if doc_ids is not None:
                doc_ids = doc_ids[perm]
            extras = {k: v[perm] for k, v in extras.items()}
    else:
        if query_file is None:  # pragma: no cover - the parser raises this after block one
            raise DataFormatError("no qid:<id> and no query file", path=path, fix=_FIXES["qid"])
        sizes = read_query_file(query_file)
        _check_sizes(sizes, n_docs, query_file, path)
        boundaries = boundaries_from_group(sizes)
        query_ids = np.array([str(i) for i in range(len(sizes))], dtype=object)
    if missing == "min" and parser.n_nan:
        parser.K.fill_query_min(X, boundaries)
    return RankingDataset(
        features=X,
        labels=labels,
        boundaries=boundaries,
        query_ids=query_ids,
        doc_ids=doc_ids,
        extras=extras,
        source=str(path),
    )


def _check_query_file_agrees(
    qfile: Path, found: bool, boundaries: np.ndarray, n_docs: int, path: Path
) -> None:
    """A query file beside a file with ``qid:`` tokens must agree with its blocks: an error
    when it was given, a warning (and ignored) when it was only found beside the data."""
    if found:
        try:
            sizes = read_query_file(qfile)
        except DataFormatError as exc:
            warn_user(
                f"ignoring {qfile}, found beside {path}: {exc.reason} (line {exc.line}); the "
                "qid: tokens define the queries. Fix: delete or rename it"
            )
            return
    else:
        sizes = read_query_file(qfile)
    gb = np.unique(boundaries_from_group(sizes))
    n_blocks = len(boundaries) - 1
    if int(sizes.sum()) == n_docs and np.array_equal(gb, boundaries):
        return
    what = (
        f"{len(sizes)} list sizes adding up to {int(sizes.sum())} documents, which do not match "
        f"the {n_blocks} qid: blocks ({n_docs} documents) of {path}"
    )
    if found:
        warn_user(
            f"ignoring the query file {qfile}, found beside the data: it has {what}; the qid: "
            "tokens define the queries. Fix: delete or rename it, or make its sizes equal the "
            "lengths of the qid: blocks"
        )
        return
    raise DataFormatError(
        f"the query file's {what}",
        path=qfile,
        fix="drop the query file (the qid: tokens already define the queries), or make its "
        "sizes equal the lengths of the qid: blocks",
    )


def _check_sizes(sizes: np.ndarray, n_docs: int, qfile: Path, path: Path) -> None:
    total = int(sizes.sum())
    if total != n_docs:
        raise DataFormatError(
            f"the query file's {len(sizes)} list sizes add up to {total} documents but "
            f"{path} has {n_docs} data lines",
            path=qfile,
            fix="the query file must hold one line per query with its number of documents, "
            "in the data file's order, adding up to the number of data lines",
        )


def _assemble_extras(keys: list[str], chunks: list[_Chunk], n_docs: int) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for key in keys:
        parts = [c.extras.get(key) for c in chunks]
        is_str = key == "docid" or any(isinstance(p, list) for p in parts)
        if is_str:
            col = np.empty(n_docs, dtype=object)
            r = 0
            for c, p in zip(chunks, parts):
                m = len(c.labels)
                if p is None:
                    col[r : r + m] = ""
                elif isinstance(p, list):
                    col[r : r + m] = p
                else:
                    col[r : r + m] = ["" if np.isnan(v) else repr(v) for v in p.tolist()]
                r += m
        else:
            col = np.concatenate(
                [np.full(len(c.labels), np.nan) if p is None else p for c, p in zip(chunks, parts)]
            )
        out[key] = col
    return out


def _split_queries(
    qids: list[str], boundaries: np.ndarray, lines: list[int], mode: str, path: Path
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Apply the ``split_queries`` rule; return (document permutation or None, boundaries, ids)."""
    first: dict[str, int] = {}
    repeated = False
    for b, q in enumerate(qids):
        if q in first:
            if mode == "error":
                raise DataFormatError(
                    f"query id {q!r} starts again on line {lines[b]} after other queries; "
                    f"its first block starts on line {lines[first[q]]}",
                    path=path,
                    line=lines[b],
                    token=f"qid:{q}",
                    fix="sort the file by qid so each query's lines are contiguous, or pass "
                    "split_queries='merge' (gather the blocks into one query) or 'separate' "
                    "(keep them as distinct queries Q, Q#2, ...)",
                )
            repeated = True
        else:
            first[q] = b
    if not repeated:
        return None, boundaries, np.asarray(qids, dtype=object)
    if mode == "separate":
        count: dict[str, int] = {}
        ids = []
        for q in qids:
            count[q] = count.get(q, 0) + 1
            ids.append(q if count[q] == 1 else f"{q}#{count[q]}")
        return None, boundaries, np.asarray(ids, dtype=object)
    # merge: order queries by first appearance, blocks in file order within a query
    lengths = np.diff(boundaries)
    group = np.asarray([first[q] for q in qids], dtype=np.int64)
    doc_group = np.repeat(group, lengths)
    perm = np.argsort(doc_group, kind="stable")
    order = sorted(first.values())
    sizes = np.bincount(group, weights=lengths, minlength=len(qids)).astype(np.int64)[order]
    new_b = boundaries_from_group(sizes)
    return perm, new_b, np.asarray([qids[b] for b in order], dtype=object)
