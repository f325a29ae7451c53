"""Writers (and the score-file reader): score files and LETOR/SVMlight text.

Every writer is atomic: it writes a temporary file in the target folder and renames it over the
target only when everything was written, so a failure never leaves a half-written file.

Score files hold one score per line, in the data file's document order, printed with Python's
``repr`` (the shortest text that reads back to the same float64, at most 17 significant digits),
so ``write_scores`` → ``read_scores`` is exact.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataFormatError
from ._files import PathLike, atomic_write, join_strings, open_binary, split_lines
from .dataset import RankingDataset

__all__ = ["read_scores", "write_scores", "write_svmlight"]

_BAD_TOKEN_BYTES = np.array([9, 10, 11, 12, 13, 32, 35], dtype=np.uint8)  # whitespace and '#'


def write_scores(path: PathLike, scores: Any) -> None:
    """Write one score per line (``repr`` precision: reads back exactly); atomic."""
    s = np.asarray(scores, dtype=np.float64).ravel()
    text = "\n".join(map(repr, s.tolist()))
    with atomic_write(path) as f:
        if len(s):
            f.write(text.encode("ascii"))
            f.write(b"\n")


def read_scores(path: PathLike, n_expected: int | None = None) -> np.ndarray:
    """Read a score file (one number per line; blank lines at the end are ignored) as float64.

    Raises :class:`DataFormatError` naming the file, line and token of a line that is not one
    number, and naming both counts when ``n_expected`` is given and differs.
    """
    p = Path(path)
    with open_binary(p) as f:
        text = f.read().decode("utf-8", "replace")
    lines = split_lines(text)
    while lines and not lines[-1].strip():
        lines.pop()
    try:
        values = np.fromiter(map(_strict_float, lines), dtype=np.float64, count=len(lines))
    except ValueError:
        for k, line in enumerate(lines, start=1):
            try:
                _strict_float(line)
            except ValueError:
                tok = line.strip()
                n_tok = len(tok.split())
                fix = (
                    "write exactly one number per line (if this is a RankLib score file "
                    "'qid index score', keep only the last column)"
                    if n_tok > 1
                    else "write one number per line, in the data file's document order; "
                    "no blank lines in between"
                )
                raise DataFormatError(
                    "not a number" if n_tok <= 1 else f"{n_tok} fields on a line, expected one",
                    path=p,
                    line=k,
                    token=tok,
                    fix=fix,
                ) from None
        raise  # pragma: no cover - the loop finds the line
    if n_expected is not None and len(values) != int(n_expected):
        raise DataFormatError(
            f"the score file has {len(values)} scores but {int(n_expected)} were expected "
            "(one per document of the data)",
            path=p,
            fix="give exactly one score per document, in the data file's order; check that the "
            "scores belong to this data file",
        )
    return values


def _strict_float(s: str) -> float:
    """One number: ASCII only, between blanks (space, tab, VT, FF); no ``_`` separators."""
    t = s.strip(" \t\v\f")
    if not t or "_" in t or not t.isascii() or any(c.isspace() for c in t):
        raise ValueError(s)
    return float(t)


# ============================================================================ LETOR writer
def _format_label(x: float) -> str:
    if not np.isfinite(x):
        raise DataFormatError(
            f"label {x!r} is not finite; LETOR labels must be finite numbers",
            fix="replace NaN/inf labels by finite grades before writing",
        )
    if float(x).is_integer() and abs(x) < 2**53:
        return str(int(x))
    return repr(float(x))


def _check_finite_features(X: np.ndarray, ds: RankingDataset) -> None:
    """Refuse infinite feature values (the reader refuses them too; NaN is written ``NULL``)."""
    step = max(1, (16 << 20) // max(4 * X.shape[1], 1))
    for lo in range(0, len(X), step):
        bad = np.isinf(X[lo : lo + step])
        if bad.any():
            r, c = (int(v) for v in np.argwhere(bad)[0])
            q = ds.query_ids[int(ds.doc_query_index[lo + r])]
            raise DataFormatError(
                f"feature {c + 1} of document {lo + r} (query {q}) is infinite (or beyond the "
                "float32 range); LETOR files hold finite values only",
                fix="replace it by a finite value, or by NaN (written NULL) for a missing value",
            )


def _blob_and_offsets(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings joined by newlines as uint8, plus start offsets (last = len + 1)."""
    blob = join_strings(strings)
    nl = np.flatnonzero(blob == 10)
    off = np.empty(len(strings) + 1, dtype=np.int64)
    off[0] = 0
    off[1 : len(strings)] = nl + 1
    off[len(strings)] = len(blob) + 1
    return blob, off


def _concat(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings concatenated as UTF-8 bytes, plus ``n + 1`` offsets (token i = blob[o[i]:o[i+1]])."""
    enc = [x.encode("utf-8", "surrogateescape") for x in strings]
    blob = np.frombuffer(b"".join(enc), dtype=np.uint8).copy()
    off = np.zeros(len(enc) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in enc], out=off[1:])
    return blob, off


def _check_tokens(strings: list[str], what: str) -> None:
    if not strings:
        return
    blob = join_strings(strings)
    bad = np.isin(blob, _BAD_TOKEN_BYTES[[0, 2, 3, 4, 5, 6]])
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        i = int(np.count_nonzero(blob[:pos] == 10))
        raise DataFormatError(
            f"{what} {strings[i]!r} contains whitespace or '#', which a LETOR line cannot hold",
            fix="replace those characters (e.g. by '_') before writing",
        )


def _comments(ds: RankingDataset, lo: int, hi: int) -> list[str]:
    cols: list[tuple[str, list[Any], bool]] = []
    if ds.doc_ids is not None:
        cols.append(("docid", ds.doc_ids[lo:hi].tolist(), False))
    for k, v in ds.extras.items():
        cols.append((k, v[lo:hi].tolist(), v.dtype != object))
    if not cols:
        return []
    out = []
    for row in zip(*(c[1] for c in cols)):
        items = []
        for (k, _, numeric), val in zip(cols, row):
            if numeric:
                if val != val:
                    continue
                items.append(f"{k} = {float(val)!r}")
            elif val is not None and val != "":
                items.append(f"{k} = {val}")
        out.append(" ".join(items))
    return out


def write_svmlight(
    path: PathLike,
    dataset: RankingDataset,
    *,
    comment: bool = True,
    sparse: bool = False,
    compresslevel: int = 6,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Write ``dataset`` as LETOR text: ``<label> qid:<id> 1:<v> ... #docid = <id> key = <v>``.

    * gzip-compressed when ``path`` ends in ``.gz`` (``compresslevel`` 1..9);
    * labels: integers without a decimal point, other values with ``repr``;
    * features: the shortest decimal that reads back to the same float32 (so
      ``read_letor(write_svmlight(ds))`` gives identical arrays); NaN is written ``NULL``;
      ``sparse=True`` leaves out zeros (absent features read back as 0);
    * ``comment=True`` appends ``docid`` and every ``extras`` column (float64 with ``repr``,
      NaN and empty strings left out of that line);
    * ``progress(n_rows)`` is called after each block of rows (for progress bars).

    Atomic: a temporary file renamed over ``path`` at the end.
    """
    from . import _format_kernels as K

    ds = dataset
    X = np.ascontiguousarray(ds.features, dtype=np.float32)
    n, f = X.shape
    _check_finite_features(X, ds)
    if ds.extras:
        _check_tokens(list(ds.extras), "extras key")
        for k in ds.extras:
            if "=" in k:
                raise DataFormatError(
                    f"extras key {k!r} contains '=', which a LETOR comment cannot hold",
                    fix="rename the column",
                )
    qids = [str(q) for q in ds.query_ids.tolist()]
    if any(q == "" for q in qids):
        raise DataFormatError("an empty query id cannot be written", fix="give every query an id")
    _check_tokens(qids, "query id")
    if comment and ds.doc_ids is not None:
        _check_tokens([str(d) for d in ds.doc_ids.tolist()], "doc id")
    if comment:
        for k, v in ds.extras.items():
            if v.dtype == object:
                _check_tokens([str(x) for x in v.tolist()], f"extras[{k!r}] value")
    uniq, label_idx = np.unique(ds.labels, return_inverse=True)
    label_blob, label_off = _concat([_format_label(x) for x in uniq.tolist()])
    qid_blob, qid_off = _concat(qids)
    row_query = ds.doc_query_index
    label_idx = label_idx.astype(np.int64).ravel()
    with_comment = comment and (ds.doc_ids is not None or bool(ds.extras))
    label_w = int(np.diff(label_off).max(initial=0))
    qid_w = int(np.diff(qid_off).max(initial=0))
    per_row = label_w + 6 + qid_w + f * (3 + len(str(f)) + 17) + 2
    block = max(1, min(n, (32 << 20) // max(per_row, 1)))
    empty_blob = np.zeros(0, dtype=np.uint8)
    empty_off = np.zeros(0, dtype=np.int64)
    with atomic_write(path, compresslevel=compresslevel) as out_f:
        for lo in range(0, n, block):
            hi = min(n, lo + block)
            if with_comment:
                cblob, coff = _blob_and_offsets(_comments(ds, lo, hi))
                cmax = int(np.diff(coff).max(initial=0))
            else:
                cblob, coff, cmax = empty_blob, empty_off, 0
            buf = np.empty((hi - lo) * (per_row + cmax + 2), dtype=np.uint8)
            used = K.format_rows(
                X, lo, hi, label_blob, label_off, label_idx, qid_blob, qid_off, row_query,
                cblob, coff, sparse, buf,
            )  # fmt: skip
            out_f.write(buf[:used].data)  # the ndarray's buffer as a memoryview, no copy
            if progress is not None:
                progress(hi - lo)
