"""NumPy versions of the ranking kernels for small inputs (no Numba at all).

A command-line call on one TREC run (50 queries of 1,000 documents) spends far more time loading
compiled kernels than ranking; below :data:`SMALL_DOCS` documents (and :data:`SMALL_CELLS` cells
of the padded ``(Q, longest list)`` matrix) :mod:`ndcglab.measures.compute` uses these functions
instead. They give the same numbers as the kernels, bit for bit:

* the ranking is the kernels' strict total order (score descending, ``tkey`` ascending, index
  ascending), from one stable sort along the rows of a padded ``(Q, longest list)`` matrix;
* every sum is left to right from 0 per query (:func:`numpy.cumsum` along the rows of a padded
  matrix; DCG and ideal DCG by :func:`ndcglab.measures.conventions.dcg_at` over the gains in
  ranking order and :func:`~ndcglab.measures.conventions.ideal_gains`), with the same products
  and divisions as the kernels.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numpy as np

from . import conventions

__all__ = [
    "COLD_FACTOR",
    "NUMBA_LOAD_SECONDS",
    "SMALL_CELLS",
    "SMALL_DOCS",
    "cold_extension",
    "counts_cold_time",
    "fits",
    "gain_stats",
    "rank_matrix",
    "rel_stats",
    "tie_flags",
]

#: at most this many documents take the NumPy path
SMALL_DOCS = 200_000
#: ... and at most this many cells of the padded (queries, longest list) matrix
SMALL_CELLS = 2_000_000
#: while Numba is not loaded in the process, ten times as many documents (and twice as many
#: cells) take the NumPy path: loading it and the compiled kernels costs about 0.8 s, which
#: the kernels win back only past ~2.5 million documents (0.3 µs per document against the
#: NumPy path's 0.6 µs; a TREC run of 1,000 queries x 1,000 documents: 0.63 s against 1.15 s)
COLD_FACTOR = 10
#: what loading Numba and the kernels costs, in seconds (measured on 2 cores, warm cache)
NUMBA_LOAD_SECONDS = 0.8
#: seconds this process has spent on the NumPy path for inputs that it took only because
#: Numba was not loaded (:func:`cold_extension`); once they reach :data:`NUMBA_LOAD_SECONDS`,
#: loading the kernels is the cheaper way (a training run that validates every epoch loads
#: them after an epoch or two, a one-off command never does: at most twice the best cost)
cold_seconds = 0.0


def _sizes(bnd: np.ndarray) -> tuple[int, int, int]:
    nq = len(bnd) - 1
    longest = int(np.diff(bnd).max(initial=0)) if nq > 0 else 0
    return nq, int(bnd[-1]), nq * max(longest, 1)


def _numba_loaded() -> bool:
    return "numba" in sys.modules


def fits(bnd: np.ndarray) -> bool:
    """True when the queries ``bnd`` are small enough for the NumPy path: at most
    :data:`SMALL_DOCS` documents and :data:`SMALL_CELLS` cells, or more under
    :func:`cold_extension`."""
    nq, total, cells = _sizes(bnd)
    if nq < 1:
        return False
    return (total <= SMALL_DOCS and cells <= SMALL_CELLS) or cold_extension(bnd)


def cold_extension(bnd: np.ndarray) -> bool:
    """True when the queries ``bnd`` exceed the NumPy path's limits but it takes them anyway:
    Numba is not loaded, the input is within :data:`COLD_FACTOR` times the document limit and
    twice the cell limit, and :data:`cold_seconds` is below :data:`NUMBA_LOAD_SECONDS`."""
    nq, total, cells = _sizes(bnd)
    if nq < 1 or (total <= SMALL_DOCS and cells <= SMALL_CELLS):
        return False
    return (
        not _numba_loaded()
        and cold_seconds < NUMBA_LOAD_SECONDS
        and total <= SMALL_DOCS * COLD_FACTOR
        and cells <= SMALL_CELLS * 2
    )


F = TypeVar("F", bound=Callable[..., Any])


def counts_cold_time(fn: F) -> F:
    """Decorate ``fn(measures, labels, scores, boundaries, ...)`` so that its time counts
    towards :data:`cold_seconds` when :func:`cold_extension` holds for ``boundaries``."""

    @functools.wraps(fn)
    def timed(measures: Any, labels: Any, scores: Any, boundaries: Any, *a: Any, **kw: Any) -> Any:
        global cold_seconds
        cold = cold_extension(boundaries)
        t0 = time.perf_counter()
        try:
            return fn(measures, labels, scores, boundaries, *a, **kw)
        finally:
            if cold:
                cold_seconds += time.perf_counter() - t0

    return cast(F, timed)


def _query_of(bnd: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(len(bnd) - 1, dtype=np.int64), np.diff(bnd))


def _ranked_rows(
    values: np.ndarray, bnd: np.ndarray, rend: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """``(rows, n, width)``: the values of each query's ranked documents ``bnd[q]:rend[q]`` as
    the row ``rows[q, :n[q]]`` of a ``(Q, width)`` matrix in input order, ``+inf`` after (the
    values are finite: padding sorts last; :func:`_by_query`). Sorting the rows ranks every
    query at once without a query key, each sort as long as its list."""
    rows = _by_query(values, bnd, 1, ends=rend, fill=np.inf)
    return rows, rend - bnd[:-1], rows.shape[1]


def rank_matrix(
    scores: np.ndarray, tkey: np.ndarray, bnd: np.ndarray, rend: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(order, valid)``: ``order[q, p]`` the global index of the document at position p + 1
    of query q's ranking of its ranked documents ``bnd[q]:rend[q]`` (score descending, ``tkey``
    ascending, index ascending), ``valid[q, p]`` False past the end (``order`` is 0 there).

    One stable sort of each query's row (:func:`_ranked_rows`): by ``-score``, then ``tkey``
    where any is non-zero; a stable sort keeps input order among full ties."""
    neg, n, width = _ranked_rows(-scores, bnd, rend)
    if tkey.any():
        keys, _, _ = _ranked_rows(tkey, bnd, rend)  # (padding: +inf, after every key)
        perm = np.lexsort((keys, neg), axis=-1)
    else:
        perm = np.argsort(neg, axis=-1, kind="stable")
    valid = np.arange(width)[None, :] < n[:, None]
    order = np.where(valid, perm + bnd[:-1, None], 0)
    return order, valid


def _by_query(
    values: np.ndarray,
    bnd: np.ndarray,
    width: int,
    *,
    ends: np.ndarray | None = None,
    fill: float = 0.0,
) -> np.ndarray:
    """``values`` of each query's documents ``bnd[q]:ends[q]`` (default: all of them) as the
    rows of a ``(Q, max(width, longest, 1))`` matrix in input order, ``fill`` after."""
    nq = len(bnd) - 1
    n = np.diff(bnd) if ends is None else ends - bnd[:-1]
    out = np.full((nq, max(width, int(n.max(initial=0)), 1)), fill)
    qid = _query_of(bnd)
    col = np.arange(len(values), dtype=np.int64) - bnd[qid]
    if ends is None:
        out[qid, col] = values
    else:
        keep = col < n[qid]
        out[qid[keep], col[keep]] = values[keep]
    return out


def _top_values(values: np.ndarray, bnd: np.ndarray, width: int) -> np.ndarray:
    """Each query's values sorted in descending order, ``(Q, >= width)``, zeros after its end."""
    n = np.diff(bnd)
    mat = _by_query(values, bnd, width)
    cols = np.arange(mat.shape[1])
    pad = cols[None, :] >= n[:, None]
    mat[pad] = -np.inf
    mat = conventions.ideal_gains(mat)
    mat[np.isneginf(mat)] = 0.0
    return mat


def _gather(values: np.ndarray, order: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """``values[order]`` where ``valid``, 0 elsewhere."""
    if len(values) == 0:
        return np.zeros(order.shape)
    return np.where(valid, values[order], 0.0)


def _cum(prod: np.ndarray) -> np.ndarray:
    """Prefix sums with a leading 0 column. A sum that overflows becomes inf silently: the
    caller's check reports it (which query, and the fix), as the compiled kernels do."""
    out = np.empty((prod.shape[0], prod.shape[1] + 1))
    out[:, 0] = 0.0
    with np.errstate(over="ignore"):
        np.cumsum(prod, axis=1, out=out[:, 1:])
    return out


def rel_stats(
    ranked: tuple[np.ndarray, np.ndarray],
    bnd: np.ndarray,
    rend: np.ndarray,
    relv: np.ndarray,
    gv: np.ndarray,
    pk: np.ndarray,
    ak: np.ndarray,
    rk: np.ndarray,
    hits: np.ndarray,
    apsum: np.ndarray,
    rr: np.ndarray,
    nrel: np.ndarray,
    topg: np.ndarray,
    idealg: np.ndarray,
) -> None:
    """:func:`._rel_kernels.rank_rel_kernel` over all queries, from their ranking ``ranked``
    (:func:`rank_matrix`), with per-document gains ``gv`` (empty when no gain group shares the
    sort). For the gain group it writes the gains of the top ``kmax`` ranked documents
    (``topg``) and the ``kmax`` largest gains (``idealg``), from which
    :func:`ndcglab.measures.compute._ndcg_from_top` sums DCG@k and IDCG@k."""
    nq = len(bnd) - 1
    n = rend - bnd[:-1]
    order, valid = ranked
    x = _gather(relv, order, valid)
    hc = _cum(x)
    pos = np.arange(1, x.shape[1] + 1, dtype=np.int64)
    apc = _cum(x * hc[:, 1:] / pos)
    nrel[:] = np.bincount(_query_of(bnd), weights=relv, minlength=nq)[:nq]
    rows = np.arange(nq)
    for j in range(pk.shape[1]):
        hits[:, j] = hc[rows, np.minimum(pk[:, j], n)]
    for j in range(ak.shape[1]):
        apsum[:, j] = apc[rows, np.minimum(ak[:, j], n)]
    if rk.shape[1]:
        hit = x > 0.0
        first = np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, 0)
        for j in range(rk.shape[1]):
            ok = (first > 0) & (first <= rk[:, j])
            rr[:, j] = np.where(ok, 1.0 / np.maximum(first, 1), 0.0)
    kmax = topg.shape[1]
    if kmax > 0:
        w = min(kmax, order.shape[1])
        topg[:, :w] = _gather(gv, order[:, :w], valid[:, :w])
        ideal = _top_values(gv, bnd, kmax)
        w = min(kmax, ideal.shape[1])
        idealg[:, :w] = ideal[:, :w]


def gain_stats(
    ranked: tuple[np.ndarray, np.ndarray],
    bnd: np.ndarray,
    rend: np.ndarray,
    gains: np.ndarray,
    darr: np.ndarray,
    doff: np.ndarray,
    ks: np.ndarray,
    dcg: np.ndarray,
    idcg: np.ndarray,
) -> None:
    """DCG@k and IDCG@k as :func:`._gain_kernels.full_gain_kernel` (and ``topk_gain_kernel``)
    computes them for an order-based tie rule without MeanNDCG, from the ranking ``ranked``
    (:func:`rank_matrix`): ``gains`` per document, ``D(r) = darr[doff[q] + r - 1]``."""
    nq = len(bnd) - 1
    n = rend - bnd[:-1]
    nall = np.diff(bnd)
    order, valid = ranked
    ideal = _top_values(gains, bnd, order.shape[1])
    width = ideal.shape[1]
    cols = np.arange(width, dtype=np.int64)
    at = np.minimum(doff[:, None] + cols[None, :], len(darr) - 1)
    dmat = darr[at]
    g = np.zeros((nq, width))
    g[:, : order.shape[1]] = _gather(gains, order, valid)
    dcg[:] = conventions.dcg_at(g, dmat, ks, n)
    idcg[:] = conventions.dcg_at(ideal, dmat, ks, nall)


def tie_flags(scores: np.ndarray, bnd: np.ndarray, rend: np.ndarray, out: np.ndarray) -> None:
    """:func:`._kernels.tie_flags_kernel`: ``out[i] = True`` when ranked document ``i`` shares
    its score with another ranked document of its query (each query's row sorted at once,
    :func:`_ranked_rows`)."""
    rows, n, width = _ranked_rows(scores, bnd, rend)
    perm = np.argsort(rows, axis=-1)
    srt = np.take_along_axis(rows, perm, axis=-1)
    same = srt[:, 1:] == srt[:, :-1]
    same &= np.arange(1, width)[None, :] < n[:, None]  # both real documents (not padding)
    q, p = np.nonzero(same)
    out[bnd[q] + perm[q, p]] = True
    out[bnd[q] + perm[q, p + 1]] = True
