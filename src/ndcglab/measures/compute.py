"""Per-query values of resolved measures, all queries at once (the layer over the numba kernels).

:func:`compute_per_query` takes flat ``labels``/``scores``, ``boundaries`` and a list of
*resolved* measures (every option set, :meth:`Measure.resolve`) and returns, per measure, the
``(Q,)`` values and the mask of *empty* queries (IDCG = 0 for the ndcg family, no relevant
document for map/mrr). Measures that share a ranking (same gain, discount and tie rule; or same
relevance rule and tie rule) are computed in one pass of one kernel, with all their cut-offs.

:func:`ndcg_per_query` is the lean entry point for training loops.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._spec import Cutoff
from ..errors import ConventionError, DataFormatError, EmptyQueryError
from . import _kernels as K
from .discounts import Discount, LinearDiscount, get_discount
from .gains import Exp2Gain, Gain, LinearGain, TableGain, get_gain
from .registry import Measure

__all__ = ["PerQuery", "check_inputs", "compute_per_query", "cutoff_k", "ndcg_per_query"]

_EMPTY_F = np.zeros(0, dtype=np.float64)
#: a fixed cut-off at most this large uses top-k selection instead of a full sort
SELECT_LIMIT = 64


@dataclass(frozen=True)
class PerQuery:
    """One measure's ``values`` ``(Q,)`` (NaN where skipped) and ``empty`` ``(Q,)`` bool mask."""

    values: np.ndarray
    empty: np.ndarray


# ------------------------------------------------------------------------------ validation
def check_inputs(
    labels: Any, scores: Any, boundaries: Any, ranked_end: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validate and convert: float64 labels and scores (same length, finite), int64 boundaries
    (start at 0, never decrease, end at N) and ``ranked_end`` (default ``boundaries[1:]``)."""
    y = np.ascontiguousarray(labels, dtype=np.float64).ravel()
    s = np.ascontiguousarray(scores, dtype=np.float64).ravel()
    b = np.ascontiguousarray(boundaries, dtype=np.int64).ravel()
    if len(s) != len(y):
        raise DataFormatError(
            f"{len(s)} scores for {len(y)} documents",
            fix="give exactly one score per document, in the data's document order",
        )
    if len(b) < 1 or b[0] != 0 or b[-1] != len(y) or (np.diff(b) < 0).any():
        raise ConventionError(
            f"boundaries must start at 0, never decrease and end at the number of documents "
            f"({len(y)}); got {b[:4].tolist()}...{b[-2:].tolist()}"
        )
    if not np.isfinite(s).all():
        bad = int(np.flatnonzero(~np.isfinite(s))[0])
        raise DataFormatError(
            f"score of document {bad + 1} is not a finite number",
            token=str(s[bad]),
            fix="replace NaN/inf scores by finite numbers",
        )
    if not np.isfinite(y).all():
        bad = int(np.flatnonzero(~np.isfinite(y))[0])
        raise DataFormatError(
            f"label of document {bad + 1} is not a finite number",
            token=str(y[bad]),
            fix="give every document a finite relevance label",
        )
    if ranked_end is None:
        re = np.ascontiguousarray(b[1:])
    else:
        re = np.ascontiguousarray(ranked_end, dtype=np.int64).ravel()
        if len(re) != len(b) - 1 or (re < b[:-1]).any() or (re > b[1:]).any():
            raise ConventionError("ranked_end must lie within each query's boundaries")
    return y, s, b, re


def n_threads() -> int:
    """Threads used by the kernels: ``NDCGLAB_NUM_THREADS`` or the CPUs this process may use."""
    env = os.environ.get("NDCGLAB_NUM_THREADS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()
#: below this many documents the kernels run on the calling thread only
PARALLEL_MIN_DOCS = 50_000


def _run(kernel: Callable[..., None], bnd: np.ndarray, *args: Any) -> None:
    """Call ``kernel(*args, q0, q1, *outputs)`` over disjoint query ranges on several threads.

    ``args`` ends with the output arrays, preceded by the inputs; the ranges hold about the same
    number of documents each. The kernels release the GIL (``nogil``)."""
    *inputs, outputs = args
    nq = len(bnd) - 1
    total = int(bnd[-1])
    t = n_threads()
    if t == 1 or total < PARALLEL_MIN_DOCS or nq < 2 * t:
        kernel(*inputs, 0, nq, *outputs)
        return
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL._max_workers < t:  # type: ignore[attr-defined]
            _POOL = ThreadPoolExecutor(max_workers=t, thread_name_prefix="ndcglab")
        pool = _POOL
    cuts = np.searchsorted(bnd, np.linspace(0, total, 4 * t + 1)[1:-1]).tolist()
    edges = sorted({0, nq, *[min(max(c, 0), nq) for c in cuts]})
    futures = [
        pool.submit(kernel, *inputs, q0, q1, *outputs)
        for q0, q1 in itertools.pairwise(edges)
        if q1 > q0
    ]
    for f in futures:
        f.result()


# ------------------------------------------------------------------------------ cut-offs
def cutoff_k(
    cutoff: Cutoff | None, rounding: str, n_ranked: np.ndarray, n_all: np.ndarray
) -> np.ndarray:
    """Per-query k (int64): the whole list (``n_all``) without a cut-off, ``k`` for a fixed one,
    and :meth:`Cutoff.k_for` of the ranked length for a fraction (same arithmetic, vectorised)."""
    if cutoff is None:
        return n_all.astype(np.int64)
    if cutoff.k is not None:
        return np.full(len(n_all), cutoff.k, dtype=np.int64)
    x = float(cutoff.fraction) * n_ranked.astype(np.float64)  # type: ignore[arg-type]
    if rounding == "ceil":
        k = np.ceil(x - 1e-9)
    elif rounding == "floor":
        k = np.floor(x + 1e-9)
    elif rounding == "round":
        k = np.floor(x + 0.5 + 1e-9)
    else:
        raise ConventionError(f"unknown rounding {rounding!r}; known: ceil, floor, round")
    k = k.astype(np.int64)
    return np.where(n_ranked > 0, np.maximum(k, 1), 0).astype(np.int64)


# ------------------------------------------------------------------------------ sources
def _gain_source(gain: Gain, labels: np.ndarray) -> tuple[int, np.ndarray, float, np.ndarray]:
    """(mode, table, default, per-doc array) for the kernels' ``gmode`` (see ``_kernels``)."""
    if isinstance(gain, LinearGain):
        return 2, _EMPTY_F, 0.0, _EMPTY_F
    if isinstance(gain, Exp2Gain):
        return 1, np.exp2(np.arange(64, dtype=np.float64)) - 1.0, 0.0, _EMPTY_F
    if isinstance(gain, TableGain):
        keys = np.array([k for k, _ in gain.table], dtype=np.float64)
        if len(keys) and (keys >= 0).all() and (keys == np.floor(keys)).all() and keys.max() < 4096:
            tab = np.full(int(keys.max()) + 1, float(gain.default))
            for k, v in gain.table:
                tab[int(k)] = float(v)
            if np.isfinite(tab).all() and np.isfinite(gain.default):
                return 3, tab, float(gain.default), _EMPTY_F
    arr = np.ascontiguousarray(gain(labels), dtype=np.float64)
    if arr.shape != labels.shape or not np.isfinite(arr).all():
        raise ConventionError(
            f"gain {gain} must map each label to one finite number (got shape {arr.shape})"
        )
    return 0, _EMPTY_F, 0.0, arr


def _gain_values(gain: Gain, labels: np.ndarray) -> np.ndarray:
    """Per-document gains (for the pessimistic/optimistic tie keys)."""
    return np.asarray(gain(labels), dtype=np.float64)


def _rel_source(rel: str) -> tuple[int, float]:
    """(rmode, threshold) for the kernels: 4 = LETOR (labels 1 and 2), 3 = label >= threshold."""
    if rel == "letor":
        return 4, 0.0
    return 3, float(rel)


def _rel_values(rel: str, labels: np.ndarray) -> np.ndarray:
    if rel == "letor":
        return ((labels == 1.0) | (labels == 2.0)).astype(np.float64)
    return (labels >= float(rel)).astype(np.float64)


def _discount_source(disc: Discount, bnd: np.ndarray) -> tuple[int, np.ndarray]:
    lengths = np.diff(bnd)
    if isinstance(disc, LinearDiscount):
        return 1, _EMPTY_F
    if disc.depends_on_length:
        flat = np.empty(int(bnd[-1]), dtype=np.float64)
        cache: dict[int, np.ndarray] = {}
        for q, n in enumerate(lengths.tolist()):
            if n not in cache:
                cache[n] = _checked_table(disc, n)
            flat[bnd[q] : bnd[q + 1]] = cache[n]
        return 2, flat
    m = int(lengths.max(initial=0))
    return 0, _checked_table(disc, max(m, 1))


def _checked_table(disc: Discount, m: int) -> np.ndarray:
    tab = np.ascontiguousarray(disc.table(m), dtype=np.float64)
    if tab.shape != (m,) or not np.isfinite(tab).all():
        raise ConventionError(f"discount {disc} must give one finite number per position 1..{m}")
    return tab


def _tie_key(
    ties: str,
    n_docs: int,
    doc_ids: np.ndarray | None,
    values: np.ndarray | None,
    scores: np.ndarray | None = None,
    bnd: np.ndarray | None = None,
    rend: np.ndarray | None = None,
) -> tuple[np.ndarray, bool]:
    """(secondary sort key ascending, average?) for a tie rule; ``values`` are the per-document
    gains (ndcg family) or relevance (map, p, mrr) used by pessimistic/optimistic.

    ``docid`` (docno descending, as trec_eval) ranks the ids of the documents whose score is tied
    within their query only (found by :func:`_kernels.tie_flags_kernel`): ranking millions of
    strings would cost seconds, and untied documents never reach the tie-breaker."""
    if ties in ("input", "average"):
        return np.zeros(n_docs), ties == "average"
    if ties == "docid":
        if doc_ids is None:
            raise ConventionError(
                "ties=docid (trec_eval: docno descending) needs document ids. Fix: pass doc_ids= "
                "(read_letor keeps '#docid = ...'), or use ties=input"
            )
        key = np.zeros(n_docs)
        if scores is None or bnd is None or rend is None:  # pragma: no cover - internal use
            tied = np.ones(n_docs, dtype=bool)
        else:
            tied = np.zeros(n_docs, dtype=bool)
            _run(K.tie_flags_kernel, bnd, scores, key, bnd, rend, (tied,))
        if tied.any():
            sel = np.flatnonzero(tied)
            _, inv = np.unique(np.asarray(doc_ids)[sel].astype(str), return_inverse=True)
            key[sel] = -inv.astype(np.float64)
        return key, False
    if ties in ("pessimistic", "optimistic"):
        assert values is not None
        return (values if ties == "pessimistic" else -values).astype(np.float64), False
    if ties.startswith("random:"):
        seed = int(ties.split(":", 1)[1])
        return np.random.default_rng(seed).random(n_docs), False
    raise ConventionError(f"unknown tie rule {ties!r}")  # pragma: no cover - validated earlier


# ------------------------------------------------------------------------------ main
def compute_per_query(
    measures: Sequence[Measure],
    labels: np.ndarray,
    scores: np.ndarray,
    boundaries: np.ndarray,
    *,
    ranked_end: np.ndarray | None = None,
    doc_ids: np.ndarray | None = None,
    query_ids: Sequence[str] | None = None,
) -> dict[Measure, PerQuery]:
    """Values of *resolved* measures for every query (see the module docstring).

    Inputs must already be validated (:func:`check_inputs`). Empty queries get the measure's
    ``empty`` rule (``error`` raises :class:`EmptyQueryError` naming the first query ids).

    Plan: the relevance family (map, p, mrr) is grouped by (rel, ties); each group sorts every
    query once (``rank_rel_kernel``; ``ties=average``: ``rel_average_kernel``). The gain family
    is grouped by (gain, discount, ties): a group of fixed cut-offs <= ``SELECT_LIMIT`` with an
    order-based tie rule and a table discount takes its top-k gains from the sort of a relevance
    group with the same tie rule when there is one (NDCG@1..10 + MAP sort once, compile one
    kernel), else uses top-k selection (``topk_gain_kernel``); everything else (no cut-off,
    fractions, ``average``, MeanNDCG, the linear discount) goes to ``full_gain_kernel``.
    """
    y, s, b = labels, scores, boundaries
    re = np.ascontiguousarray(b[1:]) if ranked_end is None else ranked_end
    nq = len(b) - 1
    n_all = np.diff(b)
    n_ranked = re - b[:-1]
    out: dict[Measure, PerQuery] = {}

    gain_groups: dict[tuple, list[Measure]] = {}
    rel_groups: dict[tuple, list[Measure]] = {}
    for m in measures:
        if not m.is_resolved:
            raise ConventionError(f"measure {m} is not resolved; call Measure.resolve(preset)")
        if m.info.family == "gain":
            key = (m.get("gain"), m.get("discount"), m.get("ties", "input"))
            gain_groups.setdefault(key, []).append(m)
        else:
            rel_groups.setdefault((m.get("rel"), m.get("ties")), []).append(m)

    tkeys: dict[str, tuple[np.ndarray, bool]] = {}

    def tie_key(ties: str, values: Callable[[], np.ndarray]) -> tuple[np.ndarray, bool]:
        if ties in ("pessimistic", "optimistic"):  # depends on the family's values
            return _tie_key(ties, len(y), doc_ids, values(), s, b, re)
        if ties not in tkeys:
            tkeys[ties] = _tie_key(ties, len(y), doc_ids, None, s, b, re)
        return tkeys[ties]

    # gain groups that can take their top k from a relevance group's full ranking
    piggyback: dict[str, list[tuple]] = {}
    for gkey, group in gain_groups.items():
        gspec, dspec, ties = gkey
        if (
            ties not in ("average", "pessimistic", "optimistic")
            and any(rk[1] == ties for rk in rel_groups)
            and _fixed_small(group)
            and not isinstance(get_discount(dspec), LinearDiscount)
            and not get_discount(dspec).depends_on_length
        ):
            piggyback.setdefault(ties, []).append(gkey)

    gain_stages = {k: _gain_stage(g, n_ranked, n_all, nq) for k, g in gain_groups.items()}
    done_by: dict[str, tuple] = {}  # tie rule -> the gain group computed with a relevance sort
    for (rel, ties), group in rel_groups.items():
        relv = _rel_values(rel, y)
        tkey, average = tie_key(ties, lambda relv=relv: relv)
        stage = _rel_stage(group, n_ranked, n_all, nq)
        if average:
            rmode, thr = _rel_source(rel)
            _run(
                K.rel_average_kernel,
                b,
                y,
                s,
                tkey,
                b,
                re,
                rmode,
                _EMPTY_F,
                thr,
                stage["pk"],
                stage["ak"],
                stage["rk"],
                (stage["hits"], stage["apsum"], stage["rr"], stage["nrel"]),
            )
        else:
            mine = piggyback.get(ties, [None])[0] if ties not in done_by else None
            gv = _gain_values(get_gain(mine[0]), y) if mine is not None else _EMPTY_F
            kmax = int(max(int(gain_stages[mine]["ks"].max(initial=1)), 1)) if mine else 0
            kmax = min(kmax, max(int(n_all.max(initial=1)), 1))
            topg, idealg = np.zeros((nq, kmax)), np.zeros((nq, kmax))
            _run(
                K.rank_rel_kernel,
                b,
                s,
                tkey,
                b,
                re,
                relv,
                gv,
                stage["pk"],
                stage["ak"],
                stage["rk"],
                (stage["hits"], stage["apsum"], stage["rr"], stage["nrel"], topg, idealg),
            )
            if mine is not None:
                done_by[ties] = mine
                _ndcg_from_top(
                    topg, idealg, get_discount(mine[1]), n_ranked, n_all, gain_stages[mine]
                )
        out.update(_rel_results(group, stage, n_ranked, query_ids))

    for gkey, group in gain_groups.items():
        gspec, dspec, ties = gkey
        gain, disc = get_gain(gspec), get_discount(dspec)
        stage = gain_stages[gkey]
        if done_by.get(ties) != gkey:
            gmode, gtab, gdef, garr = _gain_source(gain, y)
            dmode, darr = _discount_source(disc, b)
            tkey, average = tie_key(ties, lambda gain=gain: _gain_values(gain, y))
            if _fixed_small(group) and not average and dmode == 0:
                _run(
                    K.topk_gain_kernel,
                    b,
                    y,
                    s,
                    tkey,
                    b,
                    re,
                    gmode,
                    gtab,
                    gdef,
                    garr,
                    darr,
                    stage["ks"],
                    (stage["dcg"], stage["idcg"]),
                )
            else:
                _run(
                    K.full_gain_kernel,
                    b,
                    y,
                    s,
                    tkey,
                    b,
                    re,
                    gmode,
                    gtab,
                    gdef,
                    garr,
                    dmode,
                    darr,
                    stage["ks"],
                    average,
                    stage["want_mean"],
                    (stage["dcg"], stage["idcg"], stage["mean"]),
                )
        out.update(_gain_results(group, stage, n_ranked, query_ids))
    return out


def _fixed_small(group: list[Measure]) -> bool:
    """Every measure has a fixed cut-off <= SELECT_LIMIT (and none is MeanNDCG)."""
    return all(
        m.cutoff is not None and m.cutoff.k is not None and m.cutoff.k <= SELECT_LIMIT
        for m in group
    )


def _gain_stage(
    group: list[Measure], n_ranked: np.ndarray, n_all: np.ndarray, nq: int
) -> dict[str, Any]:
    """Cut-off matrix and output buffers of one gain group."""
    cols: dict[tuple, int] = {}
    kcols: list[np.ndarray] = []
    where: dict[Measure, int] = {}
    for m in group:
        cut, rounding = m.cutoff, m.get("rounding", "ceil")
        key = (str(cut), rounding if cut is not None and cut.fraction is not None else "")
        if key not in cols:
            cols[key] = len(kcols)
            kcols.append(cutoff_k(cut, rounding, n_ranked, n_all))
        where[m] = cols[key]
    ks = np.ascontiguousarray(np.stack(kcols, axis=1))
    return {
        "ks": ks,
        "where": where,
        "want_mean": any(m.name == "meanndcg" for m in group),
        "dcg": np.zeros(ks.shape),
        "idcg": np.zeros(ks.shape),
        "mean": np.zeros(nq),
    }


def _rel_stage(
    group: list[Measure], n_ranked: np.ndarray, n_all: np.ndarray, nq: int
) -> dict[str, Any]:
    """Cut-off matrices (P, AP, RR) and output buffers of one relevance group."""
    lists: dict[str, list[np.ndarray]] = {"p": [], "map": [], "mrr": []}
    where: dict[Measure, int] = {}
    for m in group:
        lists[m.name].append(cutoff_k(m.cutoff, m.get("rounding", "ceil"), n_ranked, n_all))
        where[m] = len(lists[m.name]) - 1

    def mat(name: str) -> np.ndarray:
        if not lists[name]:
            return np.zeros((nq, 0), np.int64)
        return np.ascontiguousarray(np.stack(lists[name], axis=1))

    pk, ak, rk = mat("p"), mat("map"), mat("mrr")
    return {
        "pk": pk,
        "ak": ak,
        "rk": rk,
        "where": where,
        "hits": np.zeros(pk.shape),
        "apsum": np.zeros(ak.shape),
        "rr": np.zeros(rk.shape),
        "nrel": np.zeros(nq),
    }


def _ndcg_from_top(
    topg: np.ndarray,
    idealg: np.ndarray,
    disc: Discount,
    n_ranked: np.ndarray,
    n_all: np.ndarray,
    st: dict[str, Any],
) -> None:
    """DCG@k and IDCG@k for small fixed cut-offs from the top ``kmax`` ranked gains and the
    ``kmax`` largest gains of each query (``rank_rel_kernel``): ``(Q, kmax)`` cumulative sums."""
    nq, kmax = topg.shape
    dtab = np.asarray(disc.table(max(kmax, 1)), dtype=np.float64)[:kmax]
    cum = np.concatenate([np.zeros((nq, 1)), np.cumsum(topg * dtab, axis=1)], axis=1)
    icum = np.concatenate([np.zeros((nq, 1)), np.cumsum(idealg * dtab, axis=1)], axis=1)
    rows = np.arange(nq)
    ks = st["ks"]
    for j in range(ks.shape[1]):
        k = ks[:, j]
        st["dcg"][:, j] = cum[rows, np.minimum(np.minimum(k, n_ranked), kmax)]
        st["idcg"][:, j] = icum[rows, np.minimum(np.minimum(k, n_all), kmax)]


def _gain_results(
    group: list[Measure], st: dict[str, Any], n_ranked: np.ndarray, query_ids: Sequence[str] | None
) -> dict[Measure, PerQuery]:
    out: dict[Measure, PerQuery] = {}
    nq = len(n_ranked)
    for m in group:
        j = st["where"][m]
        d, z = st["dcg"][:, j], st["idcg"][:, j]
        if m.name == "dcg":
            out[m] = PerQuery(_short(m, d.copy(), n_ranked), np.zeros(nq, bool))
            continue
        if m.name == "idcg":
            out[m] = PerQuery(z.copy(), np.zeros(nq, bool))
            continue
        empty = z == 0.0
        if m.name == "meanndcg":
            v = st["mean"].copy()
        else:
            v = _short(m, d / np.where(empty, 1.0, z), n_ranked)
        out[m] = PerQuery(_apply_empty(m, v, empty, query_ids), empty)
    return out


def _rel_results(
    group: list[Measure], st: dict[str, Any], n_ranked: np.ndarray, query_ids: Sequence[str] | None
) -> dict[Measure, PerQuery]:
    out: dict[Measure, PerQuery] = {}
    nq = len(n_ranked)
    nrel = st["nrel"]
    empty = nrel == 0.0
    for m in group:
        j = st["where"][m]
        if m.name == "p":
            k = st["pk"][:, j]
            short = m.get("short", "pad")
            if m.cutoff is None or m.cutoff.k is None or short == "clip":
                div = np.minimum(k, n_ranked)  # whole list or a fraction: k <= n
            else:
                div = k
            v = np.where(div > 0, st["hits"][:, j] / np.maximum(div, 1), 0.0)
            if m.cutoff is not None and m.cutoff.k is not None and short == "zero":
                v = np.where(k > n_ranked, 0.0, v)
            out[m] = PerQuery(v, np.zeros(nq, bool))
        elif m.name == "map":
            if m.cutoff is not None and m.get("denom", "all") == "cut":
                den = np.minimum(nrel, np.minimum(st["ak"][:, j], n_ranked))
            else:
                den = nrel
            v = np.where(den > 0, st["apsum"][:, j] / np.where(den > 0, den, 1.0), 0.0)
            out[m] = PerQuery(_apply_empty(m, v, empty, query_ids), empty)
        else:  # mrr
            out[m] = PerQuery(_apply_empty(m, st["rr"][:, j].copy(), empty, query_ids), empty)
    return out


def _short(m: Measure, v: np.ndarray, n_ranked: np.ndarray) -> np.ndarray:
    if m.cutoff is not None and m.cutoff.k is not None and m.get("short") == "zero":
        v = np.where(m.cutoff.k > n_ranked, 0.0, v)
    return v


def _apply_empty(
    m: Measure, v: np.ndarray, empty: np.ndarray, query_ids: Sequence[str] | None
) -> np.ndarray:
    rule = m.get("empty", "zero")
    if not empty.any():
        return v
    if rule == "zero":
        v[empty] = 0.0
    elif rule == "one":
        v[empty] = 1.0
    elif rule == "skip":
        v[empty] = np.nan
    else:
        idx = np.flatnonzero(empty)
        names = [str(query_ids[i]) if query_ids is not None else f"#{i}" for i in idx[:5]]
        more = f" and {len(idx) - 5} more" if len(idx) > 5 else ""
        what = (
            "no document with a positive gain (IDCG = 0)"
            if m.info.family == "gain"
            else ("no relevant document")
        )
        raise EmptyQueryError(
            f"{m}: {len(idx)} quer{'y has' if len(idx) == 1 else 'ies have'} {what}: query "
            f"{', '.join(names)}{more} (empty=error). Fix: remove such queries or choose "
            "empty=zero, one or skip"
        )
    return v


# ------------------------------------------------------------------------------ fast path
def ndcg_per_query(
    labels: Any,
    scores: Any,
    boundaries: Any,
    k: int | None = None,
    *,
    gain: str | Gain = "exp2",
    discount: str | Discount = "log",
    ties: str = "input",
    empty: str = "zero",
) -> np.ndarray:
    """NDCG (``@k`` when ``k`` is given) of every query, ``(Q,)`` float64 — the lean function for
    training loops (numba, all queries at once, top-k selection for a fixed k).

    Conventions: gain ``exp2`` (2^y − 1), discount ``log`` (1/log2(1+r)), ties in input order,
    k beyond the list = NDCG of the whole list, a query with IDCG = 0 scores 0 (``empty``:
    ``zero``, ``one``, ``skip`` → NaN, ``error``).
    """
    opts: dict[str, Any] = {"gain": gain, "discount": discount, "ties": ties, "empty": empty}
    if k is not None:
        opts["short"] = "clip"
    m = Measure.create("ndcg", k, **opts)
    y, s, b, _ = check_inputs(labels, scores, boundaries)
    return compute_per_query([m], y, s, b)[m].values
