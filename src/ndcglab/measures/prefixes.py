"""Measures of the ndcg family on every prefix ``S_n`` of every list, all sizes ``n`` at once.

``S_n`` is the first ``n`` documents of each list in the order of the arrays (a list shorter than
``n`` is used whole), as :meth:`RankingDataset.truncate <ndcglab.data.RankingDataset.truncate>`
keeps them. :func:`prefix_values` gives exactly what :func:`~ndcglab.measures.evaluate_arrays`
gives on each truncated copy — the same gain and discount tables, tie keys, cut-off rounding,
``short`` and ``empty`` rules (:mod:`ndcglab.measures.conventions`), and the same sums in the same
order — but sorts each list once per ranker: the ranking of ``S_n`` is the list's ranking
restricted to its first ``n`` documents (:func:`._gain_kernels.prefix_gain_kernel`).

Measures covered (:func:`supports_prefixes`): ``ndcg``, ``dcg``, ``idcg`` and ``ndcg_beta`` with
any gain, discount, cut-off and tie rule except ``random`` (whose random numbers would differ
from a truncated copy's). Duplicated document ids are all kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ConventionError
from . import _gain_kernels as GK
from . import _kernels as K
from ._inputs import discount_inputs, document_gains
from ._parallel import run_kernel
from .compute import NO_TIE_RULE, check_inputs
from .conventions import apply_empty, apply_short, cutoff_k, normalise, tie_key
from .discounts import get_discount
from .gains import get_gain
from .registry import Measure

__all__ = ["PREFIX_MEASURES", "prefix_values", "supports_prefixes"]

#: the measures :func:`prefix_values` computes (with a tie rule other than ``random``)
PREFIX_MEASURES = ("ndcg", "dcg", "idcg", "ndcg_beta")


def supports_prefixes(m: Measure) -> bool:
    """True when :func:`prefix_values` computes the resolved measure ``m``."""
    return m.name in PREFIX_MEASURES and not str(m.get("ties", "")).startswith("random")


def prefix_values(
    measures: Sequence[Measure],
    labels: Any,
    scores: Sequence[Any],
    boundaries: Any,
    sizes: Any,
    *,
    doc_ids: Any = None,
    query_ids: Sequence[str] | np.ndarray | None = None,
) -> dict[Measure, np.ndarray]:
    """Values of *resolved* measures on the prefixes ``S_n`` (``n`` in ``sizes``) of every list,
    for several rankers: ``{measure: (K, Q, G)}`` for ``K`` score arrays, ``Q`` queries and
    ``G`` sizes (NaN where ``empty=skip`` skips a prefix).

    ``labels`` and each of ``scores`` are flat, in list order (prefixes are taken in this order;
    the order also breaks the last ties, as in a truncated copy); ``doc_ids`` are needed for
    ``ties=docid``. ``empty=error`` raises :class:`~ndcglab.errors.EmptyQueryError` naming the
    queries and the prefix size.
    """
    y, _, b, _ = check_inputs(labels, np.zeros(len(np.ravel(labels))), boundaries)
    score_sets = [check_inputs(y, s, b)[1] for s in scores]
    grid = np.ascontiguousarray(np.asarray(sizes, dtype=np.int64).ravel())
    if grid.size == 0 or (grid < 1).any():
        raise ConventionError("prefix sizes must be positive, e.g. sizes=[1, 10, 100]")
    ids = None if doc_ids is None else np.asarray(doc_ids, dtype=object)
    lengths = np.diff(b)
    n_pref = np.minimum(grid[None, :], lengths[:, None])  # (Q, G) prefix lengths

    groups: dict[tuple, list[Measure]] = {}
    for m in measures:
        if not m.is_resolved or not supports_prefixes(m):
            raise ConventionError(
                f"prefix_values computes resolved {', '.join(PREFIX_MEASURES)} with a tie rule "
                f"other than random; got {m}"
            )
        key = (m.get("gain"), m.get("discount"), m.get("ties", NO_TIE_RULE))
        groups.setdefault(key, []).append(m)
    stages = [_Stage.build(key, group, y, n_pref) for key, group in groups.items()]

    zeros = np.zeros(len(y))
    orders: dict[tuple, np.ndarray] = {}

    def order_of(scores: np.ndarray, tkey: np.ndarray, key: tuple) -> np.ndarray:
        """Each list in ranking order, sorted once per distinct (scores, tie key)."""
        if key not in orders:
            orders[key] = np.empty(len(y), dtype=np.int64)
            run_kernel(K.rank_order_kernel, b, scores, tkey, b, (orders[key],))
        return orders[key]

    stacked: dict[tuple[int, ...], tuple[np.ndarray, ...]] = {}

    def run(part: list[_Stage], order: np.ndarray, scores: np.ndarray, average: bool) -> list:
        """One scan of every prefix for several stages ranked by ``order``: their (Q, G, C)."""
        key = tuple(id(st) for st in part)
        if key not in stacked:
            stacked[key] = _stack(part, n_pref.shape)
        gains, darr, doff, ks = stacked[key]
        out = np.zeros(ks.shape)
        kernel = GK.prefix_gain_kernel
        run_kernel(kernel, b, gains, order, scores, b, grid, darr, doff, ks, average, (out,))
        return [out[i, :, :, : len(st.cols)] for i, st in enumerate(part)]

    # ideal DCG: ranked by gain, descending, once per gain
    idcg: dict[int, np.ndarray] = {}
    for gspec in {st.key[0] for st in stages}:
        part = [st for st in stages if st.key[0] == gspec]
        gains = part[0].gains
        ideal = order_of(gains, zeros, ("ideal", gspec))
        for st, v in zip(part, run(part, ideal, gains, False)):
            idcg[id(st)] = v
    # DCG: per ranker, once per ranking (tie rule; gains for pessimistic / optimistic)
    dcgs: dict[int, list[np.ndarray]] = {id(st): [] for st in stages}
    for r, s in enumerate(score_sets):
        runs: dict[tuple, list[_Stage]] = {}
        for st in stages:
            ties = st.key[2]
            by = st.key[0] if ties in ("pessimistic", "optimistic") else ""
            runs.setdefault((ties, by), []).append(st)
        for (ties, _), part in runs.items():
            values = part[0].gains if ties in ("pessimistic", "optimistic") else None
            tkey, average = tie_key(ties, s, b, doc_ids=ids, values=values)
            by = part[0].key[0] if values is not None else ""
            ranking = order_of(s, tkey, (r, "input" if average else ties, by))
            for st, v in zip(part, run(part, ranking, s, average)):
                dcgs[id(st)].append(v)

    out: dict[Measure, np.ndarray] = {}
    for st in stages:
        z = idcg[id(st)]
        for m in st.group:
            j = st.cols[_col_key(m)]
            out[m] = np.stack(
                [_finish(m, d[:, :, j], z[:, :, j], n_pref, grid, query_ids) for d in dcgs[id(st)]]
            )
    return out


class _Stage:
    """One (gain, discount, tie rule) group: per-document gains, discount tables and offsets of
    every prefix length, and the cut-off columns ``(Q, G, C)``."""

    def __init__(
        self,
        key: tuple,
        group: list[Measure],
        gains: np.ndarray,
        darr: np.ndarray,
        doff: np.ndarray,
        cols: dict[tuple, int],
        ks: np.ndarray,
    ) -> None:
        self.key, self.group, self.gains = key, group, gains
        self.darr, self.doff, self.cols, self.ks = darr, doff, cols, ks

    @classmethod
    def build(cls, key: tuple, group: list[Measure], y: np.ndarray, n_pref: np.ndarray) -> _Stage:
        gspec, dspec, _ = key
        gains = document_gains(get_gain(gspec), y)
        darr, doff = discount_inputs(get_discount(dspec), n_pref)
        flat = n_pref.ravel()
        cols: dict[tuple, int] = {}
        kcols: list[np.ndarray] = []
        for m in group:
            ck = _col_key(m)
            if ck not in cols:
                cols[ck] = len(kcols)
                kcols.append(
                    cutoff_k(m.cutoff, m.get("rounding"), flat, flat).reshape(n_pref.shape)
                )
        return cls(key, group, gains, darr, doff, cols, np.stack(kcols, axis=-1))


def _stack(
    part: list[_Stage], shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Kernel inputs of several stages: gains ``(M, N)``, one discount table ``darr`` with
    offsets ``(M, Q, G)``, and cut-offs ``(M, Q, G, C)`` padded with 0 (unused columns)."""
    gains = np.stack([st.gains for st in part])
    starts = np.cumsum([0] + [len(st.darr) for st in part[:-1]])
    darr = np.ascontiguousarray(np.concatenate([st.darr for st in part]))
    doff = np.stack([st.doff + s0 for st, s0 in zip(part, starts.tolist())])
    nc = max(st.ks.shape[-1] for st in part)
    ks = np.zeros((len(part), *shape, nc), dtype=np.int64)
    for i, st in enumerate(part):
        ks[i, :, :, : st.ks.shape[-1]] = st.ks
    return gains, darr, doff, ks


def _col_key(m: Measure) -> tuple:
    """Measures of a group with the same cut-off (and rounding of a fraction) share a column."""
    cut, rounding = m.cutoff, m.get("rounding")
    return (str(cut), rounding if cut is not None and cut.fraction is not None else "")


def _finish(
    m: Measure,
    dcg: np.ndarray,
    idcg: np.ndarray,
    n_pref: np.ndarray,
    grid: np.ndarray,
    query_ids: Sequence[str] | np.ndarray | None,
) -> np.ndarray:
    """``(Q, G)`` values of one measure from its DCG and ideal DCG (short and empty rules)."""
    if m.name == "idcg":
        return idcg.copy()
    if m.name == "dcg":
        return apply_short(m, dcg.copy(), n_pref)
    v, empty = normalise(dcg, idcg)
    v = np.array(apply_short(m, v, n_pref))
    for gi, n in enumerate(grid.tolist()):  # v[:, gi] is a view: set in place
        apply_empty(m, v[:, gi], empty[:, gi], query_ids, where=f" among its first {n} documents")
    return v
