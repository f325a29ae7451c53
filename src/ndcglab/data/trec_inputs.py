"""Qrels and runs as the IR ecosystem holds them, read into pytrec_eval's shape
``{query_id: {doc_id: value}}``: :func:`as_trec_dict`.

One conversion for each form, none with a Python loop per document where the form allows it:

* a dict-of-dicts (pytrec_eval, BEIR, MTEB, ranx's ``to_dict()``): used as it is when its ids are
  strings (values are read as numbers by the evaluation), else ids become strings and values
  floats;
* a TREC file path: :func:`ndcglab.data.trec.read_qrels` / :func:`~ndcglab.data.trec.read_run`;
* a pandas DataFrame with the columns ``query_id, doc_id`` and ``score`` (run) or
  ``relevance`` (qrels; also ``rel`` or ``label``) — ir_measures' and ranx's names — or
  PyTerrier's ``qid, docno`` with ``score`` / ``label``: ids become text, values float, and
  each query's dict is built from its slice (query ids numbered by ``pandas.factorize``, rows
  grouped by a stable sort of those numbers, so a document keeps its row order; a (query,
  document) pair given twice keeps its last row, as a dict does);
* a ranx ``Qrels`` / ``Run`` (anything with ``to_dict()``);
* ir_measures' namedtuples (``Qrel``: ``query_id, doc_id, relevance``; ``ScoredDoc``:
  ``query_id, doc_id, score``) in any iterable, and any iterable of ``(query_id, doc_id,
  value)`` tuples: read column by column.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from operator import itemgetter
from typing import Any

import numpy as np

from ..errors import DataFormatError

__all__ = ["VALUE_COLUMNS", "as_trec_dict", "frame_to_trec_dict"]

#: accepted value columns, in order of preference, for qrels (``relevance``) and runs (``score``)
VALUE_COLUMNS: dict[str, tuple[str, ...]] = {
    "relevance": ("relevance", "rel", "label"),
    "score": ("score",),
}
#: accepted (query, document) column pairs: ir_measures/ranx/ndcglab, then PyTerrier
_ID_COLUMNS = (("query_id", "doc_id"), ("qid", "docno"))


def as_trec_dict(obj: Any, *, what: str, value: str) -> dict[str, dict[str, Any]]:
    """``{query_id: {doc_id: value}}`` from any form in the module docstring; ``value`` is
    ``"relevance"`` (qrels) or ``"score"`` (run), ``what`` names the input in errors."""
    if value not in VALUE_COLUMNS:  # pragma: no cover - internal use
        raise ValueError(f"value must be 'relevance' or 'score', not {value!r}")
    if isinstance(obj, str | os.PathLike):
        from .trec import read_qrels, read_run

        if value == "relevance":
            return read_qrels(obj)
        return read_run(obj, allow_empty=True)
    if hasattr(obj, "columns") and hasattr(obj, "itertuples"):  # a pandas DataFrame
        return frame_to_trec_dict(obj, what=what, value=value)
    if not isinstance(obj, Mapping) and hasattr(obj, "to_dict"):  # ranx Qrels / Run
        obj = obj.to_dict()
    if isinstance(obj, Mapping):
        return _from_mapping(obj, what, value)
    if isinstance(obj, Iterable) and not isinstance(obj, bytes | str):
        return _from_records(obj, what, value)
    raise DataFormatError(
        f"cannot read the {what} from a {type(obj).__name__}",
        fix=f"give a file path, a dict {{query_id: {{doc_id: {value}}}}}, a pandas DataFrame "
        f"(query_id, doc_id, {value}), a ranx object or ir_measures tuples",
    )


def _from_mapping(obj: Mapping[Any, Any], what: str, value: str) -> dict[str, dict[str, Any]]:
    res: dict[str, dict[str, Any]] = {}
    for qid, docs in obj.items():
        if not isinstance(docs, Mapping):
            raise DataFormatError(
                f"the {what}'s query {qid!r} maps to a {type(docs).__name__}, not to "
                f"{{doc_id: {value}}}",
                fix=f"give {{query_id: {{doc_id: {value}}}}} (pytrec_eval's shape)",
            )
        first = next(iter(docs), None)
        if isinstance(docs, dict) and (first is None or isinstance(first, str)):
            res[str(qid)] = docs  # as given: the evaluation reads the values as numbers
        else:
            res[str(qid)] = {str(k): float(x) for k, x in docs.items()}
    return res


def frame_to_trec_dict(frame: Any, *, what: str, value: str) -> dict[str, dict[str, float]]:
    """A DataFrame's rows as ``{query_id: {doc_id: value}}`` (module docstring): the columns
    are converted whole, rows grouped by a stable sort of the query ids, and each query's dict
    built from its slice in one ``dict(zip(...))``."""
    cols = [str(c) for c in frame.columns]
    ids = next(((q, d) for q, d in _ID_COLUMNS if q in cols and d in cols), None)
    vcol = next((c for c in VALUE_COLUMNS[value] if c in cols), None)
    if ids is None or vcol is None:
        raise DataFormatError(
            f"the {what} DataFrame has columns {cols}",
            fix=f"give columns query_id, doc_id, {value} (ir_measures, ranx) or qid, docno, "
            f"{'label' if value == 'relevance' else 'score'} (PyTerrier)",
        )
    import pandas as pd

    codes, uniq = pd.factorize(frame[ids[0]].astype(str), sort=False)  # hashed, not sorted
    d = frame[ids[1]].astype(str).to_numpy(dtype=object)
    try:
        v = frame[vcol].to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        raise DataFormatError(
            f"the {what} DataFrame's column {vcol!r} holds a value that is not a number",
            fix=f"give numeric {value}s",
        ) from None
    return _grouped(np.asarray(codes, dtype=np.int64), list(map(str, uniq)), d, v)


def _grouped(
    codes: np.ndarray, uniq: list[str], d: np.ndarray, v: np.ndarray
) -> dict[str, dict[str, float]]:
    """Rows (query code, doc, value) -> dict-of-dicts (query ``uniq[code]``), one
    ``dict(zip)`` per query, documents in row order."""
    if not len(codes):
        return {}
    order = np.argsort(codes, kind="stable")
    cuts = np.searchsorted(codes[order], np.arange(len(uniq) + 1))
    ds, vs = d[order].tolist(), v[order].tolist()
    out: dict[str, dict[str, float]] = {}
    for i, qid in enumerate(uniq):
        a, b = int(cuts[i]), int(cuts[i + 1])
        out[qid] = dict(zip(ds[a:b], vs[a:b]))
    return out


def _from_records(items: Iterable[Any], what: str, value: str) -> dict[str, dict[str, float]]:
    """ir_measures' namedtuples (or plain ``(query, doc, value)`` tuples), column by column."""
    rows = list(items)
    if not rows:
        return {}
    first = rows[0]
    fields = getattr(first, "_fields", None)
    if fields is not None and "query_id" in fields and "doc_id" in fields:
        vname = next((c for c in VALUE_COLUMNS[value] if c in fields), None)
        if vname is None:
            raise DataFormatError(
                f"the {what}'s tuples have the fields {list(fields)}",
                fix=f"give ir_measures' {'Qrel' if value == 'relevance' else 'ScoredDoc'} "
                f"tuples (query_id, doc_id, {value})",
            )
        get = [itemgetter(fields.index(n)) for n in ("query_id", "doc_id", vname)]
    elif isinstance(first, tuple | list) and len(first) >= 3:
        get = [itemgetter(0), itemgetter(1), itemgetter(2)]
    else:
        raise DataFormatError(
            f"cannot read the {what} from an iterable of {type(first).__name__}",
            fix=f"give (query_id, doc_id, {value}) tuples, e.g. ir_measures' namedtuples",
        )
    try:
        q = np.asarray(list(map(str, map(get[0], rows))), dtype=object)
        d = np.asarray(list(map(str, map(get[1], rows))), dtype=object)
        v = np.asarray(list(map(get[2], rows)), dtype=np.float64)
    except (TypeError, ValueError, IndexError):
        raise DataFormatError(
            f"the {what}'s tuples are not all (query_id, doc_id, number)",
            fix=f"give (query_id, doc_id, {value}) tuples with numeric {value}s",
        ) from None
    uniq, inv = np.unique(q.astype(str), return_inverse=True)
    return _grouped(inv.astype(np.int64), uniq.tolist(), d, v)
