"""Distinguishability of rankers as lists grow (Wang, Wang, Li, He, Chen, Liu, "A Theoretical
Analysis of NDCG Type Ranking Measures", COLT 2013, Section 4 and Definition 3).

For each ranker (a score per document) and each measure, :func:`distinguishability` computes the
mean over queries of ``M(f, S_n)`` where ``S_n`` is the first ``n`` documents of every list —
in file order (the paper's "generation order"), or after shuffling each list with a seed,
repeated ``R`` times to get error bands — for every ``n`` on a grid (log or linear). Lists shorter
than ``n`` are used whole, as :meth:`RankingDataset.truncate` does.

How stable the rankers' order is as n grows (the empirical handle on the paper's consistent
distinguishability, Definition 3) is computed by :class:`DistinguishResult`
(:mod:`ndcglab.analysis.distinguish_result`): :meth:`~DistinguishResult.pair_stability`,
:meth:`~DistinguishResult.stable_from`, :meth:`~DistinguishResult.ranking_stability`.

Computation: measures of the NDCG family (``ndcg``, ``dcg``, ``idcg``, ``ndcg_beta``; every tie
rule except ``random``) go through :func:`ndcglab.measures.prefixes.prefix_values`, which sorts
each list once per ranker and repetition and obtains every prefix's ranking by a scan (no
re-sorting), with the conventions of the measure library; other measures (``map``,
``p``, ``mrr``, ``meanndcg``, random tie-breaking) are evaluated prefix by prefix with
:func:`ndcglab.measures.evaluate_arrays`. ``engine="evaluate"`` forces the latter for everything
(slow; it is the reference the fast path is tested against). Documents that share a doc id
within a list are all kept (the LETOR presets' ``duplicates=last`` rule is not applied to
prefixes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data.dataset import RankingDataset
from ..errors import ConventionError, DataFormatError
from .distinguish_result import DistinguishResult, mean_over_queries

__all__ = ["DistinguishResult", "distinguishability", "make_grid"]


def make_grid(n_max: int, kind: str = "log", points: int = 60, n_min: int = 1) -> np.ndarray:
    """Sizes ``n`` from ``n_min`` to ``n_max``: ``points`` values spaced evenly on a log scale
    (``kind="log"``, rounded, duplicates dropped) or linearly (``"linear"``); always ends at
    ``n_max``."""
    if n_max < 1 or n_min < 1 or n_min > n_max:
        raise ConventionError(f"need 1 ≤ n_min ≤ n_max, got n_min={n_min}, n_max={n_max}")
    if points < 1:
        raise ConventionError(f"points must be at least 1, got {points}")
    if kind == "log":
        g = np.geomspace(n_min, n_max, points)
    elif kind == "linear":
        g = np.linspace(n_min, n_max, points)
    else:
        raise ConventionError(f"unknown grid {kind!r}; known: log, linear")
    g = np.unique(np.round(g).astype(np.int64))
    if g[-1] != n_max:
        g = np.append(g, n_max)
    return g


# ----------------------------------------------------------------------------- computation
@dataclass(frozen=True)
class _Meas:
    key: str
    resolved: Any  # Measure
    fast: bool


def _prepare_measures(measures: Any, preset: Any, engine: str) -> list[_Meas]:
    from ..measures.prefixes import supports_prefixes
    from ..measures.registry import parse_measures

    ms = parse_measures(measures)
    if not ms:
        raise ConventionError("no measure given. Fix: e.g. measures=['ndcg', 'ndcg@0.2n']")
    out = []
    for m in ms:
        r = m.resolve(preset)
        out.append(_Meas(str(m), r, engine != "evaluate" and supports_prefixes(r)))
    return out


def _permutation(ds: RankingDataset, seed: int | None) -> np.ndarray:
    """The document order of ``ds.permute_within_queries(seed)`` (identity for None)."""
    n = ds.n_docs
    if seed is None:
        return np.arange(n, dtype=np.int64)
    light = RankingDataset(
        features=np.zeros((n, 1), dtype=np.float32),
        labels=ds.labels,
        boundaries=ds.boundaries,
        query_ids=ds.query_ids,
        extras={"_index": np.arange(n, dtype=np.float64)},
    )
    return light.permute_within_queries(int(seed)).extras["_index"].astype(np.int64)


def _positions(perm: np.ndarray, bnd: np.ndarray) -> np.ndarray:
    """pos[i] = position of document i in its (permuted) list."""
    n = perm.shape[0]
    starts = np.repeat(bnd[:-1], np.diff(bnd))
    pos = np.empty(n, dtype=np.int64)
    pos[perm] = np.arange(n, dtype=np.int64) - starts
    return pos


def _fast_values(
    ds: RankingDataset,
    scores: list[np.ndarray],
    meas: list[_Meas],
    grid: np.ndarray,
    perm: np.ndarray,
) -> np.ndarray:
    """(K, M, G, Q) values of the fast measures for one repetition: the lists in the order
    ``perm`` through :func:`ndcglab.measures.prefixes.prefix_values`."""
    from ..measures.prefixes import prefix_values

    vals = prefix_values(
        [m.resolved for m in meas],
        ds.labels[perm],
        [s[perm] for s in scores],
        ds.boundaries,
        grid,
        doc_ids=None if ds.doc_ids is None else ds.doc_ids[perm],
        query_ids=ds.query_ids,
    )
    out = np.stack([vals[m.resolved] for m in meas], axis=1)  # (K, M, Q, G)
    return np.transpose(out, (0, 1, 3, 2))


def _evaluate_values(
    ds: RankingDataset,
    scores: list[np.ndarray],
    meas: list[_Meas],
    grid: np.ndarray,
    pos: np.ndarray,
    preset: Any,
) -> np.ndarray:
    """(K, M, G, Q) values, every prefix through :func:`ndcglab.measures.evaluate_arrays`."""
    from ..data.dataset import boundaries_from_group
    from ..measures import evaluate_arrays

    bnd = ds.boundaries
    lengths = np.diff(bnd)
    qidx = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    base = np.lexsort((pos, qidx))  # documents in (query, position) order
    out = np.zeros((len(scores), len(meas), len(grid), len(lengths)))
    specs = list({str(m.resolved): m.resolved for m in meas}.values())
    for gi, n in enumerate(grid.tolist()):
        idx = base[pos[base] < n]
        b = boundaries_from_group(np.minimum(lengths, n))
        for k, s in enumerate(scores):
            # duplicates="keep": a doc id repeated within a list stays, as in the fast path
            res = evaluate_arrays(
                ds.labels[idx],
                s[idx],
                b,
                specs,
                preset=preset,
                doc_ids=None if ds.doc_ids is None else ds.doc_ids[idx],
                query_ids=ds.query_ids,
                duplicates="keep",
            )
            for i, m in enumerate(meas):
                out[k, i, gi] = res.per_query[str(m.resolved)]
    return out


def distinguishability(
    dataset: RankingDataset,
    scores: Mapping[str, Any] | Sequence[Any],
    measures: Any = "ndcg",
    *,
    preset: Any = None,
    grid: str | Sequence[int] | np.ndarray = "log",
    points: int = 60,
    n_min: int = 1,
    n_max: int | None = None,
    repeats: int = 0,
    seed: int = 0,
    engine: str = "auto",
    keep_per_query: bool = True,
) -> DistinguishResult:
    """Mean measure values of several rankers on the prefixes ``S_n`` of every list.

    ``scores``: ``{name: (N,) scores}`` (or a sequence, named ``ranker 1``, ``ranker 2`` …), one
    score per document of ``dataset`` in its order. ``measures``: one spec or several
    (``"ndcg"``, ``"ndcg(discount=power:0.5)"``, ``"ndcg(discount=exp:2)"``, ``"ndcg@0.2n"``, …);
    unset options come from ``preset`` (default ``standard``). ``grid``: ``"log"`` or
    ``"linear"`` with ``points`` sizes between ``n_min`` and ``n_max`` (default: the longest
    list), or explicit sizes. ``repeats=0``: S_n in file order; ``repeats=R ≥ 1``: R repetitions,
    repetition r using ``dataset.permute_within_queries(seeds[r])`` with
    ``seeds = SeedSequence(seed).generate_state(R)``. ``engine``: ``"auto"`` (fast kernel where
    possible) or ``"evaluate"`` (every prefix through ``evaluate_arrays``).
    ``keep_per_query=False`` keeps only the means over queries (for very many queries).
    """
    if engine not in ("auto", "evaluate"):
        raise ConventionError(f"unknown engine {engine!r}; known: auto, evaluate")
    if repeats < 0:
        raise ConventionError(f"repeats must be 0 (file order) or a positive count, got {repeats}")
    if isinstance(scores, Mapping):
        names = [str(k) for k in scores]
        raw = list(scores.values())
    else:
        raw = list(scores)
        names = [f"ranker {i + 1}" for i in range(len(raw))]
    if not raw:
        raise DataFormatError("no ranker given", fix="pass {'name': scores, ...}")
    if len(set(names)) != len(names):
        raise ConventionError(f"ranker names must differ, got {names}")
    sc = [dataset.check_scores(s, source=n) for n, s in zip(names, raw)]
    longest = int(dataset.query_lengths.max(initial=0))
    if longest == 0:
        raise DataFormatError("the dataset has no documents", fix="pass a non-empty dataset")
    if isinstance(grid, str):
        g = make_grid(longest if n_max is None else int(n_max), grid, points, n_min)
    else:
        g = np.unique(np.asarray(grid, dtype=np.int64).ravel())
        if g.size == 0 or g[0] < 1:
            raise ConventionError("an explicit grid must hold positive sizes n")
    meas = _prepare_measures(measures, preset, engine)
    fast = [m for m in meas if m.fast]
    slow = [m for m in meas if not m.fast]
    if repeats == 0:
        seeds: list[int] | None = None
        rep_seeds: list[int | None] = [None]
    else:
        seeds = [int(x) for x in np.random.SeedSequence(seed).generate_state(repeats)]
        rep_seeds = list(seeds)
    shape = (len(sc), len(meas), len(g), dataset.n_queries)
    per_query = np.zeros((len(rep_seeds), *shape)) if keep_per_query else None
    means = np.zeros((len(rep_seeds), *shape[:-1]))
    fi = [meas.index(m) for m in fast]
    si = [meas.index(m) for m in slow]
    for r, sd in enumerate(rep_seeds):
        perm = _permutation(dataset, sd)
        pos = _positions(perm, dataset.boundaries)
        rep = np.zeros(shape)
        if fast:
            rep[:, fi] = _fast_values(dataset, sc, fast, g, perm)
        if slow:
            rep[:, si] = _evaluate_values(dataset, sc, slow, g, pos, preset)
        means[r] = mean_over_queries(rep)
        if per_query is not None:
            per_query[r] = rep
    pname = None
    if preset is not None:
        pname = getattr(preset, "name", str(preset))
    return DistinguishResult(
        rankers=tuple(names),
        measures=tuple(m.key for m in meas),
        conventions={m.key: str(m.resolved) for m in meas},
        grid=g,
        order="file" if repeats == 0 else "shuffled",
        seeds=seeds,
        per_query=per_query,
        query_ids=dataset.query_ids,
        preset=pname,
        engines={m.key: "fast" if m.fast else "evaluate" for m in meas},
        means=means,
    )
