"""Per-query values of resolved measures, all queries at once (the layer over the numba kernels).

:func:`compute_per_query` takes flat ``labels``/``scores``, ``boundaries`` and a list of
*resolved* measures (every option set, :meth:`Measure.resolve`) and returns, per measure, the
``(Q,)`` values and the mask of *empty* queries (IDCG = 0 for the ndcg family, no relevant
document for map/mrr). Measures that share a ranking (same gain, discount and tie rule; or same
relevance rule and tie rule) are computed in one pass of one kernel, with all their cut-offs.
Every convention comes from one place: the :class:`Gain`/:class:`Discount` objects (as kernel
tables, :mod:`._inputs`), and :mod:`ndcglab.measures.conventions` for cut-offs, ties,
relevance, ``short`` and ``empty``; the kernels (:mod:`._gain_kernels`, :mod:`._rel_kernels`)
do the sorting and the sums.

:func:`ndcg_per_query` is the lean entry point for training loops.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from .._compat import FrozenFields
from ..data.validate import check_score_vector
from ..errors import ConventionError, DataFormatError
from . import _small
from ._inputs import EMPTY_F, discount_inputs, document_gains, gain_inputs
from ._parallel import n_threads, run_kernel
from .conventions import (
    apply_empty,
    apply_short,
    cutoff_k,
    dcg_at,
    normalise,
    precision_divisor,
    relevance,
    tie_key,
)
from .discounts import Discount, get_discount
from .gains import Gain, get_gain
from .presets import get_preset
from .registry import Measure

__all__ = ["PerQuery", "check_inputs", "compute_per_query", "n_threads", "ndcg_per_query"]

#: a fixed cut-off at most this large uses top-k selection instead of a full sort
SELECT_LIMIT = 64
#: the grouping key of idcg, which ranks no document and has no tie rule
NO_TIE_RULE = "input"


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class PerQuery(FrozenFields):
    """One measure's ``values`` ``(Q,)`` (NaN where skipped) and ``empty`` ``(Q,)`` bool mask."""

    values: np.ndarray
    empty: np.ndarray

    def __init__(self, values: np.ndarray, empty: np.ndarray) -> None:
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "empty", empty)


# ------------------------------------------------------------------------------ validation
def check_inputs(
    labels: Any, scores: Any, boundaries: Any, ranked_end: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validate and convert: float64 labels and scores (same length, finite), int64 boundaries
    (start at 0, never decrease, end at N) and ``ranked_end`` (default ``boundaries[1:]``)."""
    y = np.ascontiguousarray(labels, dtype=np.float64).ravel()
    s = np.ascontiguousarray(check_score_vector(scores))
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


def run_gain_kernel(
    kernel: Callable[..., None],
    gain: Gain | None,
    labels: np.ndarray,
    bnd: np.ndarray,
    head: Sequence[Any],
    tail: Sequence[Any],
    outputs: tuple[np.ndarray, ...],
) -> None:
    """Run a gain-family kernel as ``kernel(*head, gtab, garr, *tail, q0, q1, *outputs, miss)``
    over all queries, the gains from :func:`._inputs.gain_inputs`; when the kernel met a label
    outside the gain table (``miss``), run it again with per-document gains. ``gain=None``: the
    kernel reads no gain (empty ``gtab`` and ``garr``)."""
    if gain is None:
        run_kernel(kernel, bnd, *head, EMPTY_F, EMPTY_F, *tail, (*outputs, np.zeros(1, np.bool_)))
        return
    gtab, garr = gain_inputs(gain, labels)
    miss = np.zeros(1, dtype=np.bool_)
    run_kernel(kernel, bnd, *head, gtab, garr, *tail, (*outputs, miss))
    if miss[0]:
        miss[0] = False
        garr = document_gains(gain, labels)
        run_kernel(kernel, bnd, *head, EMPTY_F, garr, *tail, (*outputs, miss))


# ------------------------------------------------------------------------------ main
@_small.counts_cold_time
def compute_per_query(
    measures: Sequence[Measure],
    labels: np.ndarray,
    scores: np.ndarray,
    boundaries: np.ndarray,
    *,
    ranked_end: np.ndarray | None = None,
    doc_ids: np.ndarray | None = None,
    query_ids: Sequence[str] | np.ndarray | None = None,
    in_qrels: np.ndarray | None = None,
) -> dict[Measure, PerQuery]:
    """Values of *resolved* measures for every query (see the module docstring).

    ``in_qrels`` (bool per document, default all True) marks the documents that have a qrels
    line; the rank family (bpref, infAP, judged, RBP's residual) tells judged documents from
    unjudged ones by it (a judged document has a qrels line with a relevance >= 0).

    Inputs must already be validated (:func:`check_inputs`). Empty queries get the measure's
    ``empty`` rule (``error`` raises :class:`EmptyQueryError` naming the first query ids).

    Plan: the relevance family (map, p, mrr) is grouped by (rel, ties); each group sorts every
    query once (``rank_rel_kernel``; ``ties=average``: ``rel_average_kernel``). The gain family
    is grouped by (gain, discount, ties): a group of fixed cut-offs <= ``SELECT_LIMIT`` with an
    order-based tie rule and a table discount takes its top-k gains from the sort of a relevance
    group with the same tie rule when there is one (NDCG@1..10 + MAP sort once, compile one
    kernel), else uses top-k selection (``topk_gain_kernel``); everything else (no cut-off,
    fractions, ``average``, MeanNDCG, discounts of the list's length such as the linear one)
    goes to ``full_gain_kernel``. A relevance group under ``label_asc`` and the same group under
    ``label_desc`` (the tie range's two bounds, :mod:`.tie_range`) share one pass of
    ``rank_rel_bounds_kernel``, with their gain groups. Small inputs (:func:`._small.fits`: a
    few TREC runs) take the NumPy versions in :mod:`._small` instead (same numbers, bit for bit,
    and no compiled code to load, which is what a one-file command-line call would mostly wait
    for); ``ties=average`` and MeanNDCG always use the kernels. The time the NumPy path spends
    on inputs it takes only because Numba is not loaded (:func:`._small.cold_extension`) counts
    towards loading the kernels.
    """
    y, s, b = labels, scores, boundaries
    re = np.ascontiguousarray(b[1:]) if ranked_end is None else ranked_end
    nq = len(b) - 1
    n_all = np.diff(b)
    n_ranked = re - b[:-1]
    out: dict[Measure, PerQuery] = {}

    gain_groups: dict[tuple, list[Measure]] = {}
    rel_groups: dict[tuple, list[Measure]] = {}
    rank_groups: dict[tuple[str | None, str | None], list[Measure]] = {}
    for m in measures:
        if not m.is_resolved:
            raise ConventionError(f"measure {m} is not resolved; call Measure.resolve(preset)")
        if m.info.family == "rank":
            ties = m.get("ties")  # None: num_rel, num_ret, num_rel_ret ignore the order
            if ties == "average":
                raise ConventionError(
                    f"{m}: ties=average (expectation over tied orders) is defined for the ndcg "
                    "family, map, p and mrr only. Fix: ties=input, docid, pessimistic, "
                    "optimistic or random:<seed> for this measure"
                )
            basis = m.get("rel")  # the values pessimistic/optimistic order by: relevance,
            if ties in ("pessimistic", "optimistic") and m.name in _JUDGED_FIRST:
                basis = f"{m.name}{_BY_JUDGED}"  # or, for these, whether judged
            rank_groups.setdefault((ties, basis), []).append(m)
        elif m.info.family == "gain":
            key = (m.get("gain"), m.get("discount"), m.get("ties", NO_TIE_RULE))
            gain_groups.setdefault(key, []).append(m)
        else:
            rel_groups.setdefault((m.get("rel"), m.get("ties")), []).append(m)

    tkeys: dict[str, tuple[np.ndarray, bool]] = {}
    small = _small.fits(b)  # NumPy instead of the Numba kernels (no compiled code to load)
    rankings: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # NumPy path: one sort per tie rule

    def ranking_of(ties: str, tkey: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if tkeys.get(ties, (None,))[0] is not tkey:  # a key of one family's values: not shared
            return _small.rank_matrix(s, tkey, b, re)
        if ties not in rankings:
            rankings[ties] = _small.rank_matrix(s, tkey, b, re)
        return rankings[ties]

    def key_of(ties: str, values: Callable[[], np.ndarray]) -> tuple[np.ndarray, bool]:
        if ties in ("pessimistic", "optimistic"):  # depends on the family's values
            return tie_key(ties, s, b, ranked_end=re, doc_ids=doc_ids, values=values())
        if ties not in tkeys:
            tkeys[ties] = tie_key(ties, s, b, ranked_end=re, doc_ids=doc_ids, values=y)
        return tkeys[ties]

    # gain groups that can take their top k from a relevance group's full ranking
    piggyback: dict[str, list[tuple]] = {}
    for gkey, group in gain_groups.items():
        gspec, dspec, ties = gkey
        if (
            ties not in ("average", "pessimistic", "optimistic")
            and any(rk[1] == ties for rk in rel_groups)
            and _fixed_small(group)
            and not get_discount(dspec).depends_on_length
        ):
            piggyback.setdefault(ties, []).append(gkey)

    gain_stages = {k: _gain_stage(g, n_ranked, n_all, nq) for k, g in gain_groups.items()}
    done_by: dict[str, tuple] = {}  # tie rule -> the gain group computed with a relevance sort
    paired: set[tuple] = set()  # label_desc groups computed with their label_asc group
    seen: set[tuple] = set()  # relevance groups computed so far
    for (rel, ties), group in rel_groups.items():
        if (rel, ties) in paired:
            continue
        seen.add((rel, ties))
        relv = relevance(rel, y) if rel is not None else np.zeros(len(y))
        tkey, average = key_of(ties, partial(np.asarray, relv))
        stage = _rel_stage(group, n_ranked, n_all, nq)
        if average:
            from . import _rel_kernels as RK

            run_kernel(
                RK.rel_average_kernel,
                b,
                relv,
                s,
                tkey,
                b,
                re,
                stage["pk"],
                stage["ak"],
                stage["rk"],
                (stage["hits"], stage["apsum"], stage["rr"], stage["nrel"]),
            )
        else:
            mine = piggyback.get(ties, [None])[0] if ties not in done_by else None
            cuts = (stage["pk"], stage["ak"], stage["rk"])
            rel_out = (stage["hits"], stage["apsum"], stage["rr"], stage["nrel"])
            if small:
                kmax = int(max(int(gain_stages[mine]["ks"].max(initial=1)), 1)) if mine else 0
                kmax = min(kmax, max(int(n_all.max(initial=1)), 1))
                topg, idealg = np.zeros((nq, kmax)), np.zeros((nq, kmax))
                gv = document_gains(get_gain(mine[0]), y) if mine is not None else EMPTY_F
                ranked = ranking_of(ties, tkey)
                _small.rel_stats(ranked, b, re, relv, gv, *cuts, *rel_out, topg, idealg)
                if mine is not None:
                    _ndcg_from_top(
                        topg, idealg, get_discount(mine[1]), n_ranked, n_all, gain_stages[mine]
                    )
            elif bounds := _bound_partners(
                rel,
                ties,
                stage,
                mine,
                rel_groups,
                piggyback,
                done_by,
                gain_stages,
                n_ranked,
                n_all,
                nq,
                seen,
            ):
                from . import _rel_kernels as RK

                # (lo side, hi side[, plain side]): each (group, stage, gain group or None)
                sides = list(bounds)
                plain = len(sides) == 2
                if plain:  # this group is the plain side; the bounds are label_asc/desc
                    sides.append(([], stage, mine))
                    bkey, _ = key_of("label_asc", partial(np.asarray, relv))
                    pkey = tkey
                else:  # this group is label_asc: the lo side
                    sides.insert(0, ([], stage, mine))
                    bkey, pkey = tkey, EMPTY_F
                side_gains = [sd[2] for sd in sides]
                outs: list[np.ndarray] = []
                darr: np.ndarray = EMPTY_F
                gks = np.zeros((nq, 0), np.int64)
                if side_gains[0] is not None:  # (all or none)
                    darr, _ = discount_inputs(get_discount(side_gains[0][1]), n_all)
                    gks = gain_stages[side_gains[0]]["ks"]
                for _, st, gk in sides:
                    outs += [st["hits"], st["apsum"], st["rr"], st["nrel"]]
                    if gk is not None:
                        outs += [gain_stages[gk]["dcg"], gain_stages[gk]["idcg"]]
                    else:
                        outs += [np.zeros((nq, 0)), np.zeros((nq, 0))]
                    if gk is not None and gk[2] != ties:
                        done_by[gk[2]] = gk
                if not plain:
                    outs += [np.zeros((nq, 0))] * 3 + [np.zeros(0)] + [np.zeros((nq, 0))] * 2
                run_gain_kernel(
                    RK.rank_rel_bounds_kernel,
                    get_gain(side_gains[0][0]) if side_gains[0] is not None else None,
                    y,
                    b,
                    (s, bkey, pkey, b, re, relv, y),
                    (*cuts, darr, gks, plain),
                    tuple(outs),
                )
                for rule in ("label_asc", "label_desc") if plain else ("label_desc",):
                    paired.add((rel, rule))
                for grp, st, _ in sides:
                    out.update(_rel_results(grp, st, n_ranked, query_ids))
            else:
                from . import _rel_kernels as RK

                if mine is not None:
                    gstage = gain_stages[mine]
                    darr, _ = discount_inputs(get_discount(mine[1]), n_all)
                    gcuts, gout = (darr, gstage["ks"]), (gstage["dcg"], gstage["idcg"])
                else:
                    none = np.zeros((nq, 0))
                    gcuts, gout = (EMPTY_F, none.astype(np.int64)), (none, none)
                run_gain_kernel(
                    RK.rank_rel_kernel,
                    get_gain(mine[0]) if mine is not None else None,
                    y,
                    b,
                    (s, tkey, b, re, relv, y),
                    (*cuts, *gcuts),
                    (*rel_out, *gout),
                )
            if mine is not None:
                done_by[ties] = mine
        out.update(_rel_results(group, stage, n_ranked, query_ids))

    relv = EMPTY_F  # (free the last group's relevance before the groups below)
    if not small:  # the tie range's bounds of NDCG@k (with its plain values): one selection
        for kind, keys in _gain_bound_sets(gain_groups, done_by, gain_stages):
            from . import _gain_kernels as GK
            from . import _rel_kernels as RK

            lo_key = keys[0]
            plain = len(keys) == 3
            gain, disc = get_gain(lo_key[0]), get_discount(lo_key[1])
            darr, doff = discount_inputs(disc, n_all)
            bkey, _ = key_of("label_asc", partial(document_gains, gain, y))
            pkey = key_of(keys[2][2], partial(document_gains, gain, y))[0] if plain else EMPTY_F
            sts = [gain_stages[k] for k in keys]
            none = np.zeros((nq, 0))
            topk = kind == "topk"
            run_gain_kernel(
                GK.topk_bounds_gain_kernel if topk else RK.full_bounds_gain_kernel,
                gain,
                y,
                b,
                (y, s, bkey, pkey, b, re),
                (darr, sts[0]["ks"], plain) if topk else (darr, doff, sts[0]["ks"], plain),
                (
                    sts[0]["dcg"],
                    sts[0]["idcg"],
                    sts[1]["dcg"],
                    sts[1]["idcg"],
                    sts[2]["dcg"] if plain else none,
                    sts[2]["idcg"] if plain else none,
                ),
            )
            for k in keys:
                done_by[k[2]] = k

    for gkey, group in gain_groups.items():
        gspec, dspec, ties = gkey
        gain, disc = get_gain(gspec), get_discount(dspec)
        stage = gain_stages[gkey]
        if done_by.get(ties) != gkey:
            tkey, average = key_of(ties, partial(document_gains, gain, y))
            darr, doff = discount_inputs(disc, n_all)
            if small and not average and not stage["want_mean"]:
                gains = document_gains(gain, y)
                ranked = ranking_of(ties, tkey)
                _small.gain_stats(
                    ranked, b, re, gains, darr, doff, stage["ks"], stage["dcg"], stage["idcg"]
                )
                out.update(_gain_results(group, stage, n_ranked, query_ids))
                continue
            from . import _gain_kernels as GK

            head = (y, s, tkey, b, re)
            kernel: Callable[..., None]
            tail: tuple[Any, ...]
            outputs: tuple[np.ndarray, ...]
            if _fixed_small(group) and not average and not disc.depends_on_length:
                kernel, tail = GK.topk_gain_kernel, (darr, stage["ks"])
                outputs = (stage["dcg"], stage["idcg"])
            else:
                kernel = GK.full_gain_kernel
                tail = (darr, doff, stage["ks"], average, stage["want_mean"])
                outputs = (stage["dcg"], stage["idcg"], stage["mean"])
            run_gain_kernel(kernel, gain, y, b, head, tail, outputs)
        out.update(_gain_results(group, stage, n_ranked, query_ids))

    if rank_groups:
        # a measure without a relevance rule (err, judged, rbp_residual, num_ret) or without a
        # tie rule (num_*) shares the sort of a group that agrees on the rules it does have
        # (not under pessimistic/optimistic, whose order follows each measure's own values)
        for rkey in list(rank_groups):
            ties, rel = rkey
            if (rel is not None and ties is not None) or ties in ("pessimistic", "optimistic"):
                continue
            host = next(
                (
                    k
                    for k in rank_groups
                    if k != rkey
                    and k[0] is not None
                    and (ties is None or k[0] == ties)
                    and (rel is None or k[1] == rel)
                ),
                None,
            )
            if host is not None:
                rank_groups[host].extend(rank_groups.pop(rkey))
        from ._rank import rank_per_query, rank_tie_values

        qrels_mask = (
            np.ones(len(y), dtype=bool) if in_qrels is None else np.asarray(in_qrels, dtype=bool)
        )
        judged_doc = qrels_mask & (y >= 0.0)
        for (ties, rel), group in rank_groups.items():
            if rel is not None and rel.endswith(_BY_JUDGED):  # judged (1) or not (0), lower
                first = _JUDGED_FIRST[rel[: -len(_BY_JUDGED)]]  # values first
                tkey, _ = key_of(
                    str(ties), partial(np.asarray, (judged_doc != first).astype(float))
                )
                rel = None
            else:
                tkey, _ = key_of(ties or NO_TIE_RULE, rank_tie_values(rel, y))
            extreme = {"pessimistic": False, "optimistic": True}.get(str(ties))
            res = rank_per_query(
                group, y, s, b, re, qrels_mask, rel, tkey, query_ids, extreme=extreme
            )
            for m, (v, e) in res.items():
                out[m] = PerQuery(v, e)
    return out


#: rank-family measures whose ``pessimistic`` order (their lowest value) puts the judged tied
#: documents first (True: RBP's residual, the weight of unjudged documents) or the unjudged
#: ones first (False: judged@k, the share of judged documents)
_JUDGED_FIRST = {"rbp_residual": True, "judged": False}
#: the suffix of such a measure's group basis (``judged:judged``) in ``compute_per_query``
_BY_JUDGED = ":judged"


def _gain_bound_sets(
    gain_groups: dict[tuple, list[Measure]],
    done_by: dict[str, tuple],
    gain_stages: dict[tuple, dict[str, Any]],
) -> list[tuple[str, tuple[tuple, ...]]]:
    """The gain groups computed in one pass — the tie range's two bounds (:mod:`.tie_range`):
    ``(kind, (label_asc group, label_desc group[, plain group]))`` with the same gain, discount
    and cut-offs, none computed yet; the plain group is the first other order-based tie rule
    among them (the result's own). ``kind`` ``topk`` (fixed cut-offs up to ``SELECT_LIMIT``, a
    discount that ignores the list's length: ``topk_bounds_gain_kernel``) or ``full`` (any
    cut-offs and discount, no MeanNDCG: ``full_bounds_gain_kernel``)."""

    def fits(members: list[Measure], kind: str) -> bool:
        if kind == "topk":
            return _fixed_small(members)
        return not any(m.name == "meanndcg" for m in members)

    out: list[tuple[str, tuple[tuple, ...]]] = []
    for key, group in gain_groups.items():
        gspec, dspec, ties = key
        hi = (gspec, dspec, "label_desc")
        if ties != "label_asc" or hi not in gain_groups or done_by.get("label_asc") == key:
            continue
        if done_by.get("label_desc") == hi:
            continue
        short = not get_discount(dspec).depends_on_length
        kind = "topk" if short and _fixed_small(group) and _fixed_small(gain_groups[hi]) else "full"
        ks = gain_stages[key]["ks"]
        if not (fits(group, kind) and fits(gain_groups[hi], kind)):
            continue
        if not np.array_equal(ks, gain_stages[hi]["ks"]):
            continue
        keys: tuple[tuple, ...] = (key, hi)
        for other, members in gain_groups.items():
            rule = other[2]
            if (
                other[:2] == key[:2]
                and rule not in ("average", "pessimistic", "optimistic", "label_asc", "label_desc")
                and done_by.get(rule) != other
                and fits(members, kind)
                and np.array_equal(gain_stages[other]["ks"], ks)
            ):
                keys = (key, hi, other)
                break
        out.append((kind, keys))
    return out


def _bound_partners(
    rel: str,
    ties: str,
    stage: dict[str, Any],
    mine: tuple | None,
    rel_groups: dict[tuple, list[Measure]],
    piggyback: dict[str, list[tuple]],
    done_by: dict[str, tuple],
    gain_stages: dict[tuple, dict[str, Any]],
    n_ranked: np.ndarray,
    n_all: np.ndarray,
    nq: int,
    seen: set[tuple],
) -> list[tuple[list[Measure], dict[str, Any], tuple | None]] | None:
    """The relevance groups ``rank_rel_bounds_kernel`` computes in the same pass as the group
    ``(rel, ties)`` — the tie range's two bounds (:mod:`.tie_range`): for ``ties=label_asc``,
    the group ``(rel, label_desc)``; for an order-based tie rule (``input``, ``docid``, ...),
    the groups ``(rel, label_asc)`` and ``(rel, label_desc)`` (the kernel then also computes
    this group's own ranking, from the same counting pass). Each partner must have the same
    cut-offs and, with the gain group sharing its sort, the same gain, discount and cut-offs as
    ``mine``. ``[(group, stage, gain group), ...]``, or None."""
    if ties == "label_asc":
        wanted: tuple[str, ...] = ("label_desc",)
    elif ties in ("average", "label_desc"):
        return None
    else:
        wanted = ("label_asc", "label_desc")
    found = []
    for w in wanted:
        group = rel_groups.get((rel, w))
        if group is None or (rel, w) in seen:  # absent, or already computed
            return None
        other = _rel_stage(group, n_ranked, n_all, nq)
        if not all(np.array_equal(stage[k], other[k]) for k in ("pk", "ak", "rk")):
            return None
        gkey = piggyback.get(w, [None])[0] if w not in done_by else None
        if (mine is None) != (gkey is None):
            return None
        if (
            mine is not None
            and gkey is not None
            and (
                mine[:2] != gkey[:2]
                or not np.array_equal(gain_stages[mine]["ks"], gain_stages[gkey]["ks"])
            )
        ):
            return None
        found.append((group, other, gkey))
    return found


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
        cut, rounding = m.cutoff, m.get("rounding")
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
        lists[m.name].append(cutoff_k(m.cutoff, m.get("rounding"), n_ranked, n_all))
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
    ``kmax`` largest gains of each query (the NumPy path, :func:`._small.rel_stats`; the kernel
    ``rank_rel_kernel`` sums them itself), by :func:`.conventions.dcg_at`."""
    kmax = topg.shape[1]
    dtab = np.asarray(disc.table(max(kmax, 1)), dtype=np.float64)[:kmax]
    st["dcg"][:] = dcg_at(topg, dtab, st["ks"], np.minimum(n_ranked, kmax))
    st["idcg"][:] = dcg_at(idealg, dtab, st["ks"], np.minimum(n_all, kmax))


def _gain_results(
    group: list[Measure],
    st: dict[str, Any],
    n_ranked: np.ndarray,
    query_ids: Sequence[str] | np.ndarray | None,
) -> dict[Measure, PerQuery]:
    out: dict[Measure, PerQuery] = {}
    nq = len(n_ranked)
    for m in group:
        j = st["where"][m]
        d, z = st["dcg"][:, j], st["idcg"][:, j]
        if not (np.isfinite(z).all() and np.isfinite(d).all()):
            q = int(np.flatnonzero(~(np.isfinite(z) & np.isfinite(d)))[0])
            name = query_ids[q] if query_ids is not None else f"#{q}"
            raise ConventionError(
                f"{m}: the DCG of query {name} overflows double precision (its gains are too "
                "large to add up). Fix: gain=linear, or labels in a smaller range"
            )
        if m.name == "dcg":
            out[m] = PerQuery(apply_short(m, d.copy(), n_ranked), np.zeros(nq, bool))
            continue
        if m.name == "idcg":
            out[m] = PerQuery(z.copy(), np.zeros(nq, bool))
            continue
        v, empty = normalise(d, z)
        if m.name == "meanndcg":
            v = st["mean"].copy()
        else:
            v = apply_short(m, v, n_ranked)
        out[m] = PerQuery(apply_empty(m, v, empty, query_ids), empty)
    return out


def _rel_results(
    group: list[Measure],
    st: dict[str, Any],
    n_ranked: np.ndarray,
    query_ids: Sequence[str] | np.ndarray | None,
) -> dict[Measure, PerQuery]:
    out: dict[Measure, PerQuery] = {}
    nq = len(n_ranked)
    nrel = st["nrel"]
    empty = nrel == 0.0
    for m in group:
        j = st["where"][m]
        if m.name == "p":
            div = precision_divisor(m, st["pk"][:, j], n_ranked)
            v = np.where(div > 0, st["hits"][:, j] / np.maximum(div, 1), 0.0)
            out[m] = PerQuery(apply_short(m, v, n_ranked), np.zeros(nq, bool))
        elif m.name == "map":
            if m.cutoff is not None and m.get("denom") == "cut":
                den = np.minimum(nrel, np.minimum(st["ak"][:, j], n_ranked))
            else:
                den = nrel
            v = np.where(den > 0, st["apsum"][:, j] / np.where(den > 0, den, 1.0), 0.0)
            out[m] = PerQuery(apply_empty(m, v, empty, query_ids), empty)
        else:  # mrr
            out[m] = PerQuery(apply_empty(m, st["rr"][:, j].copy(), empty, query_ids), empty)
    return out


# ------------------------------------------------------------------------------ fast path
_STANDARD = get_preset()
_GAIN = _STANDARD.default("ndcg", "gain")
_DISCOUNT = _STANDARD.default("ndcg", "discount")
_TIES = _STANDARD.default("ndcg", "ties")
_EMPTY = _STANDARD.default("ndcg", "empty")


def ndcg_per_query(
    labels: Any,
    scores: Any,
    boundaries: Any,
    k: int | None = None,
    *,
    gain: str | Gain = _GAIN,
    discount: str | Discount = _DISCOUNT,
    ties: str = _TIES,
    empty: str = _EMPTY,
) -> np.ndarray:
    """NDCG (``@k`` when ``k`` is given) of every query, ``(Q,)`` float64 — the lean function for
    training loops (numba, all queries at once, top-k selection for a fixed k).

    Conventions: the ``standard`` preset's — gain ``exp2`` (2^y − 1), discount ``log``
    (1/log2(1+r)), ties in input order, k beyond the list = NDCG of the whole list
    (``short=clip``), a query with IDCG = 0 scores 0 (``empty``: ``zero``, ``one``, ``skip`` →
    NaN, ``error``).
    """
    m = Measure.create("ndcg", k, gain=gain, discount=discount, ties=ties, empty=empty).resolve()
    y, s, b, _ = check_inputs(labels, scores, boundaries)
    return compute_per_query([m], y, s, b)[m].values
