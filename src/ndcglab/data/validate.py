"""The checks every door into a dataset passes through, with the file readers' messages.

The LETOR reader refuses a non-finite label, a feature value that is infinite or beyond
float32's range, and a file with no documents. Arrays given in Python
(:meth:`ndcglab.data.RankingDataset.from_arrays`, and through it
``NDCGRanker.fit(X, y, group=...)``; scores given to
:func:`ndcglab.measures.evaluate_arrays` and :meth:`RankingDataset.check_scores`) get the same
rules and the same words here, naming the document (1-based, in array order), the query and the
feature instead of the file's line:

* features: float32 ``(N, F)``; ``NaN`` is a missing value (as the reader's ``NULL``); ``±inf``,
  and a float64 value beyond ±3.4e38 (it would become ``inf`` in float32), are refused;
* labels: finite, one per document (a column vector ``(N, 1)`` is taken as ``(N,)``);
* scores: a 1-D vector (a 2-D array is refused, not flattened);
* ``feature_names``: one name per feature column;
* a dataset with no document is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import DataFormatError

__all__ = [
    "check_feature_names",
    "check_features",
    "check_labels",
    "check_not_empty",
    "check_score_vector",
]

#: the reader's words for a feature value float32 cannot hold, and their fix
FEATURE_RANGE = "is infinite or beyond the float32 range (about ±3.4e38)"
FEATURE_FIX = "give finite values within ±3.4e38 (rescale the feature), or NaN for a missing value"
LABEL_FIX = "give every document a finite numeric relevance label"


def _query_of(
    boundaries: np.ndarray | None, query_ids: Sequence[Any] | np.ndarray | None, doc: int
) -> str:
    if boundaries is None:
        return ""
    q = int(np.searchsorted(boundaries, doc, side="right")) - 1
    name = str(query_ids[q]) if query_ids is not None else str(q)
    return f" (query {name})"


def check_features(
    X: Any,
    *,
    boundaries: np.ndarray | None = None,
    query_ids: Sequence[Any] | np.ndarray | None = None,
) -> np.ndarray:
    """``X`` as float32 ``(N, F)`` (a 1-D ``X`` is one feature column), refusing values float32
    cannot hold (see the module docstring)."""
    try:
        x = np.asarray(X)
        if x.dtype.kind not in "fiub":
            x = x.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise DataFormatError(
            f"features are not numbers ({exc})", fix="give a numeric (documents, features) array"
        ) from None
    if x.ndim == 1:
        x = x.reshape(-1, 1)
    if x.ndim != 2:
        raise DataFormatError(
            f"features must be a 2-D (documents, features) array, got shape {x.shape}",
            fix="give one row of features per document",
        )
    with np.errstate(over="ignore", invalid="ignore"):
        f = x.astype(np.float32)
    bad = np.isinf(f)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise DataFormatError(
            f"feature {j + 1} of document {i + 1}{_query_of(boundaries, query_ids, i)} "
            + FEATURE_RANGE,
            token=repr(float(x[i, j])),
            fix=FEATURE_FIX,
        )
    return f


def check_labels(
    y: Any,
    *,
    boundaries: np.ndarray | None = None,
    query_ids: Sequence[Any] | np.ndarray | None = None,
    finite: bool = True,
) -> np.ndarray:
    """``y`` as float64 ``(N,)``, refusing NaN and infinite labels (unless ``finite=False``: the
    shape only) and a 2-D ``y`` other than a column vector."""
    try:
        a = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataFormatError(f"labels are not numbers ({exc})", fix=LABEL_FIX) from None
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        raise DataFormatError(
            f"labels must be a 1-D array (one per document), got shape {a.shape}", fix=LABEL_FIX
        )
    if finite and not np.isfinite(a).all():
        i = int(np.flatnonzero(~np.isfinite(a))[0])
        raise DataFormatError(
            f"label of document {i + 1}{_query_of(boundaries, query_ids, i)} is not a finite "
            "number",
            token=repr(float(a[i])),
            fix=LABEL_FIX,
        )
    return a


def check_score_vector(scores: Any, *, what: str = "scores") -> np.ndarray:
    """``scores`` as float64 ``(N,)``; a 2-D array is refused (flattening it would pair the
    wrong scores with the documents). Finiteness is checked by the caller, which can name the
    query."""
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataFormatError(
            f"{what} are not numbers ({exc})", fix="give one numeric score per document"
        ) from None
    if s.ndim != 1:
        raise DataFormatError(
            f"{what} must be a 1-D array (one score per document), got shape {s.shape}",
            fix="give one score per document, in the data's order (np.ravel() a column vector)",
        )
    return s


def check_feature_names(names: Sequence[str] | None, n_features: int) -> list[str] | None:
    """``names`` as a list of strings, one per feature column (``None`` stays ``None``)."""
    if names is None:
        return None
    if isinstance(names, str):
        raise DataFormatError(
            "feature_names is one string; it must be a list of names",
            fix=f"give a list of {n_features} names, one per feature column",
        )
    out = [str(n) for n in names]
    if len(out) != n_features:
        raise DataFormatError(
            f"{len(out)} feature names for {n_features} feature columns",
            fix=f"give one name per feature column ({n_features}), or none",
        )
    return out


def check_not_empty(n_docs: int, n_queries: int) -> None:
    """Refuse a dataset with no document (the reader's "no data lines")."""
    if n_docs == 0 or n_queries == 0:
        raise DataFormatError(
            "no documents (the dataset is empty)",
            fix="give at least one query with at least one document",
        )
