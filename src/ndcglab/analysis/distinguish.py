"""Distinguishability of rankers as lists grow (Wang et al. 2013, §4 and Definition 3).

For each ranker (a score per document) and each measure, :func:`distinguishability` computes the
mean over queries of ``M(f, S_n)`` where ``S_n`` is the first ``n`` documents of every list —
in file order (the paper's "generation order"), or after shuffling each list with a seed,
repeated ``R`` times to get error bands — for every ``n`` on a grid (log or linear). Lists shorter
than ``n`` are used whole, as :meth:`RankingDataset.truncate` does.

Consistent distinguishability (Definition 3) asks that the order of two rankers be the same for
*every* n ≥ N. Its empirical handle here: for each pair of rankers and each repetition, the order
is **stable from n** when the sign of the difference of their mean values is the same (and not 0)
at n and at every larger n of the grid. :meth:`DistinguishResult.pair_stability` is the fraction
of repetitions stable from n (a curve over n); :meth:`DistinguishResult.stable_from` the smallest
grid n from which that fraction reaches a level. :meth:`DistinguishResult.ranking_stability` does
the same for the full ordering of all rankers. The horizon is finite (the grid's end), so these
are estimates: the last grid point is stable by construction.

Computation: measures of the NDCG family (``ndcg``, ``dcg``, ``idcg``, ``ndcg_beta``; every tie
rule except ``random``) go through a numba kernel that sorts each list once per ranker and
repetition and obtains every prefix's ranking by a scan (no re-sorting); other measures (``map``,
``p``, ``mrr``, ``meanndcg``, random tie-breaking) are evaluated prefix by prefix with
:func:`ndcglab.measures.evaluate_arrays`. ``engine="evaluate"`` forces the latter for everything
(slow; it is the reference the fast path is tested against). Documents that share a doc id
within a list are all kept (the LETOR presets' ``duplicates=last`` rule is not applied to
prefixes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from os import PathLike
from typing import Any

import numpy as np

from ..data.dataset import RankingDataset
from ..errors import ConventionError, DataFormatError, EmptyQueryError

__all__ = ["DistinguishResult", "distinguishability", "make_grid"]

_FAST_NAMES = ("ndcg", "dcg", "idcg", "ndcg_beta")


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


# ----------------------------------------------------------------------------- result
@dataclass(eq=False)
class DistinguishResult:
    """Curves of mean measure values against list size, and their stability.

    Attributes
    ----------
    rankers, measures:
        Names, in order; ``measures`` are the printed specs as given (keys of every dict).
    conventions:
        ``{measure: fully resolved spec}`` (every option stated; used as axis labels).
    grid:
        ``(G,)`` list sizes n.
    order:
        ``"file"`` (S_n = first n documents in file order) or ``"shuffled"``.
    seeds:
        Seeds of the repetitions (``dataset.permute_within_queries(seed)``), or None for file order.
    per_query:
        ``(R, K, M, G, Q)`` values (NaN where a query is skipped), R repetitions, K rankers,
        M measures, G sizes, Q queries; None when computed with ``keep_per_query=False``.
    query_ids, preset, engines (``{measure: "fast" | "evaluate"}``).
    means:
        ``(R, K, M, G)`` means over queries (NaN-skipping); computed from ``per_query`` when None.
    """

    rankers: tuple[str, ...]
    measures: tuple[str, ...]
    conventions: dict[str, str]
    grid: np.ndarray
    order: str
    seeds: list[int] | None
    per_query: np.ndarray | None
    query_ids: np.ndarray
    preset: str | None = None
    engines: dict[str, str] = field(default_factory=dict)
    means: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.means is None:
            if self.per_query is None:
                raise ConventionError("a DistinguishResult needs per_query or means")
            self.means = _mean_over_queries(self.per_query)

    # ------------------------------------------------------------------ values
    @property
    def n_repeats(self) -> int:
        return int(self.values.shape[0])

    @property
    def values(self) -> np.ndarray:
        """``(R, K, M, G)`` mean over queries (NaN-skipping) for every repetition."""
        assert self.means is not None  # set in __post_init__
        return self.means

    def _m(self, measure: str | None) -> int:
        if measure is None:
            if len(self.measures) == 1:
                return 0
            raise ConventionError(
                f"several measures ({', '.join(self.measures)}); pass measure= to choose one"
            )
        key = str(measure)
        if key in self.measures:
            return self.measures.index(key)
        try:
            from ..measures.registry import parse_measure

            key = str(parse_measure(key))
        except Exception:  # the error below names the known measures
            pass
        if key in self.measures:
            return self.measures.index(key)
        raise ConventionError(
            f"unknown measure {measure!r}; this result has {', '.join(self.measures)}"
        )

    def _k(self, ranker: str) -> int:
        if ranker not in self.rankers:
            raise ConventionError(f"unknown ranker {ranker!r}; rankers: {', '.join(self.rankers)}")
        return self.rankers.index(ranker)

    def mean(self, measure: str | None = None) -> np.ndarray:
        """``(K, G)``: the mean over queries, averaged over repetitions."""
        return np.nanmean(self.values[:, :, self._m(measure), :], axis=0)

    def std(self, measure: str | None = None) -> np.ndarray:
        """``(K, G)``: standard deviation over repetitions (ddof = 1; NaN with one repetition)."""
        v = self.values[:, :, self._m(measure), :]
        if v.shape[0] < 2:
            return np.full(v.shape[1:], np.nan)
        return np.nanstd(v, axis=0, ddof=1)

    def curve(self, ranker: str, measure: str | None = None) -> np.ndarray:
        """``(G,)`` mean curve of one ranker."""
        return self.mean(measure)[self._k(ranker)]

    # ------------------------------------------------------------------ stability
    def _stable(self, a: int, b: int, m: int) -> np.ndarray:
        """``(R, G)`` bool: the order of rankers a, b is the same (non-zero) from n onward."""
        d = self.values[:, a, m, :] - self.values[:, b, m, :]
        sign = np.sign(np.nan_to_num(d, nan=0.0))
        same_next = np.ones(sign.shape, dtype=bool)
        same_next[:, :-1] = sign[:, :-1] == sign[:, 1:]
        # stable at i: sign[i] != 0 and sign[j] == sign[j + 1] for every j >= i
        tail = np.logical_and.accumulate(same_next[:, ::-1], axis=1)[:, ::-1]
        return tail & (sign != 0)

    def pair_stability(self, measure: str | None = None) -> dict[tuple[str, str], np.ndarray]:
        """For each pair (a, b) of rankers, the ``(G,)`` fraction of repetitions in which the
        order of a and b at n is the same (and strict) at every larger n of the grid."""
        m = self._m(measure)
        return {
            (self.rankers[a], self.rankers[b]): self._stable(a, b, m).mean(axis=0)
            for a, b in combinations(range(len(self.rankers)), 2)
        }

    def ranking_stability(self, measure: str | None = None) -> np.ndarray:
        """``(G,)`` fraction of repetitions in which the full ordering of the rankers at n stays
        the same at every larger n (all pairs stable)."""
        m = self._m(measure)
        k = len(self.rankers)
        ok = np.ones((self.n_repeats, len(self.grid)), dtype=bool)
        for a, b in combinations(range(k), 2):
            ok &= self._stable(a, b, m)
        return ok.mean(axis=0)

    def stable_from(
        self, a: str, b: str, measure: str | None = None, *, level: float = 1.0
    ) -> int | None:
        """The smallest grid n from which the pair's stability fraction stays ≥ ``level``
        (None if never). With ``level=1.0``: every repetition orders a and b the same from N on."""
        frac = self._stable(self._k(a), self._k(b), self._m(measure)).mean(axis=0)
        return _first_from(self.grid, frac, level)

    def ranking_stable_from(self, measure: str | None = None, *, level: float = 1.0) -> int | None:
        """The smallest grid n from which :meth:`ranking_stability` stays ≥ ``level``."""
        return _first_from(self.grid, self.ranking_stability(measure), level)

    def winner(self, a: str, b: str, measure: str | None = None) -> float:
        """Fraction of repetitions in which ``a`` has the larger mean at the largest n."""
        m = self._m(measure)
        v = self.values[:, :, m, -1]
        return float(np.mean(v[:, self._k(a)] > v[:, self._k(b)]))

    # ------------------------------------------------------------------ export
    def to_dict(self) -> dict[str, Any]:
        """JSON shape: ``grid``, ``rankers``, ``measures``, ``convention``, ``order``, ``seeds``,
        ``mean`` ({ranker: {measure: mean at the largest n}}), ``curves`` ({measure: {ranker:
        {"mean": [...], "std": [...]}}}) and ``stability`` ({measure: {"pairs": {"A vs B":
        {"fraction": [...], "stable_from": N}}, "ranking": [...], "ranking_stable_from": N}})."""
        curves: dict[str, Any] = {}
        stab: dict[str, Any] = {}
        final: dict[str, dict[str, float]] = {r: {} for r in self.rankers}
        for key in self.measures:
            mu, sd = self.mean(key), self.std(key)
            curves[key] = {
                r: {"mean": mu[i].tolist(), "std": sd[i].tolist()}
                for i, r in enumerate(self.rankers)
            }
            for i, r in enumerate(self.rankers):
                final[r][key] = float(mu[i, -1])
            stab[key] = {
                "pairs": {
                    f"{a} vs {b}": {
                        "fraction": f.tolist(),
                        "stable_from": _first_from(self.grid, f, 1.0),
                    }
                    for (a, b), f in self.pair_stability(key).items()
                },
                "ranking": self.ranking_stability(key).tolist(),
                "ranking_stable_from": self.ranking_stable_from(key),
            }
        return {
            "grid": self.grid.tolist(),
            "rankers": list(self.rankers),
            "measures": list(self.measures),
            "convention": dict(self.conventions),
            "preset": self.preset,
            "order": self.order,
            "repeats": self.n_repeats,
            "seeds": self.seeds,
            "n_queries": len(self.query_ids),
            "engines": dict(self.engines),
            "mean": final,
            "curves": curves,
            "stability": stab,
        }

    # ------------------------------------------------------------------ plots
    def _axes(self, ax: Any, measure: str | None) -> tuple[Any, list[int], Any]:
        from .._compat import pyplot

        plt = pyplot()
        idx = [self._m(measure)] if measure is not None else list(range(len(self.measures)))
        if ax is None:
            fig, axes = plt.subplots(1, len(idx), figsize=(5.5 * len(idx), 4.2), squeeze=False)
            return fig, idx, list(axes[0])
        axes = list(np.ravel(ax)) if isinstance(ax, Sequence | np.ndarray) else [ax]
        if len(axes) != len(idx):
            raise ConventionError(
                f"{len(axes)} axes for {len(idx)} measures. Fix: pass measure= or one axis per "
                "measure"
            )
        return axes[0].figure, idx, axes

    def _xlabel(self) -> str:
        if self.order == "file":
            return "n (first n documents of each list, file order)"
        return f"n (first n documents of each list, shuffled; {self.n_repeats} repetitions)"

    def plot(self, ax: Any = None, *, measure: str | None = None, band: str = "std") -> Any:
        """Mean value against n for every ranker, one panel per measure (or only ``measure``).

        ``band``: ``"std"`` (± 1 standard deviation over repetitions), ``"range"`` (min–max over
        repetitions) or ``"none"``; bands appear only with several repetitions. The y axis names
        the measure's full convention. Returns the axes (one, or a list); never shows the figure.
        """
        if band not in ("std", "range", "none"):
            raise ConventionError(f"unknown band {band!r}; known: std, range, none")
        _, idx, axes = self._axes(ax, measure)
        for a, m in zip(axes, idx):
            key = self.measures[m]
            vals = self.values[:, :, m, :]
            mu = np.nanmean(vals, axis=0)
            for k, name in enumerate(self.rankers):
                (line,) = a.plot(self.grid, mu[k], label=name, lw=1.5)
                if self.n_repeats > 1 and band != "none":
                    if band == "std":
                        sd = np.nanstd(vals[:, k], axis=0, ddof=1)
                        lo, hi = mu[k] - sd, mu[k] + sd
                    else:
                        lo, hi = np.nanmin(vals[:, k], axis=0), np.nanmax(vals[:, k], axis=0)
                    a.fill_between(self.grid, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
            if self.grid[-1] / max(self.grid[0], 1) > 20:
                a.set_xscale("log")
            a.set_xlabel(self._xlabel(), fontsize="small")
            a.set_ylabel(f"mean {self.conventions.get(key, key)}", fontsize="small")
            a.set_title(key)
            a.legend(fontsize="small")
        return axes[0] if len(axes) == 1 else axes

    def plot_stability(self, ax: Any = None, *, measure: str | None = None) -> Any:
        """For every pair of rankers, the fraction of repetitions whose order is stable from n on
        (the empirical Definition 3), plus the full ranking's; one panel per measure."""
        _, idx, axes = self._axes(ax, measure)
        for a, m in zip(axes, idx):
            key = self.measures[m]
            for (x, y), frac in self.pair_stability(key).items():
                a.step(self.grid, frac, where="post", label=f"{x} vs {y}")
            if len(self.rankers) > 2:
                a.step(
                    self.grid,
                    self.ranking_stability(key),
                    where="post",
                    color="k",
                    ls="--",
                    label="full ranking",
                )
            if self.grid[-1] / max(self.grid[0], 1) > 20:
                a.set_xscale("log")
            a.set_ylim(-0.02, 1.02)
            a.set_xlabel(self._xlabel(), fontsize="small")
            a.set_ylabel(
                "share of repetitions with the same order for all larger n", fontsize="small"
            )
            a.set_title(f"{key}: {self.conventions.get(key, key)}", fontsize="small")
            a.legend(fontsize="small")
        return axes[0] if len(axes) == 1 else axes

    def save_plot(self, path: str | PathLike[str], *, kind: str = "curves", dpi: int = 120) -> None:
        """Draw :meth:`plot` (``kind="curves"``) or :meth:`plot_stability` (``"stability"``) for
        every measure and save the figure to ``path`` (PNG, PDF or SVG by suffix)."""
        from .._compat import pyplot

        plt = pyplot()
        if kind == "curves":
            axes = self.plot()
        elif kind == "stability":
            axes = self.plot_stability()
        else:
            raise ConventionError(f"unknown plot kind {kind!r}; known: curves, stability")
        fig = (axes[0] if isinstance(axes, list) else axes).figure
        fig.tight_layout()
        fig.savefig(path, dpi=dpi)
        plt.close(fig)


def _mean_over_queries(per_query: np.ndarray) -> np.ndarray:
    """Mean over the last axis, skipping NaN (NaN when every value is NaN)."""
    with np.errstate(invalid="ignore"):
        cnt = np.sum(~np.isnan(per_query), axis=-1)
        tot = np.nansum(per_query, axis=-1)
        return np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)


def _first_from(grid: np.ndarray, frac: np.ndarray, level: float) -> int | None:
    ok = frac >= level - 1e-12
    if not ok[-1]:
        return None
    bad = np.flatnonzero(~ok)
    first = 0 if bad.size == 0 else int(bad[-1]) + 1
    return int(grid[first])


# ----------------------------------------------------------------------------- computation
@dataclass(frozen=True)
class _Meas:
    key: str
    resolved: Any  # Measure
    fast: bool


def _prepare_measures(measures: Any, preset: Any, engine: str) -> list[_Meas]:
    from ..measures.discounts import LinearDiscount
    from ..measures.registry import parse_measures, resolve_discount

    ms = parse_measures(measures)
    if not ms:
        raise ConventionError("no measure given. Fix: e.g. measures=['ndcg', 'ndcg@0.2n']")
    out = []
    for m in ms:
        r = m.resolve(preset)
        fast = engine != "evaluate" and r.name in _FAST_NAMES
        if fast:
            ties = str(r.get("ties", "input"))
            d = resolve_discount(r)
            odd_length = d.depends_on_length and not isinstance(d, LinearDiscount)
            if ties.startswith("random") or odd_length:
                fast = False
        out.append(_Meas(str(m), r, fast))
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
    pos: np.ndarray,
) -> np.ndarray:
    """(K, M, G, Q) values of the fast measures for one repetition."""
    from ..measures.compute import cutoff_k
    from ..measures.discounts import LinearDiscount
    from ..measures.registry import resolve_discount, resolve_gain
    from ._prefix import prefix_dcg, sort_segments

    bnd = ds.boundaries
    y = ds.labels
    lengths = np.diff(bnd)
    q_count = len(lengths)
    lmax = int(lengths.max(initial=1))
    n_pref = np.minimum(grid[None, :], lengths[:, None])  # (Q, G) prefix lengths

    gains = np.stack([np.asarray(resolve_gain(m.resolved)(y), dtype=np.float64) for m in meas])
    if gains.shape != (len(meas), len(y)) or not np.isfinite(gains).all():
        raise ConventionError("every gain must map each label to one finite number")
    dtab = np.zeros((len(meas), max(lmax, 1)))
    dlin = np.zeros(len(meas), dtype=np.bool_)
    for i, m in enumerate(meas):
        d = resolve_discount(m.resolved)
        if isinstance(d, LinearDiscount):
            dlin[i] = True
        else:
            dtab[i] = np.asarray(d.table(max(lmax, 1)), dtype=np.float64)
    if not np.isfinite(dtab).all():
        raise ConventionError("every discount must give a finite number at every position")
    ctab = np.zeros((len(meas), dtab.shape[1] + 1))
    np.cumsum(dtab, axis=1, out=ctab[:, 1:])

    ks = np.zeros((len(meas), q_count, len(grid)), dtype=np.int64)
    for i, m in enumerate(meas):
        rounding = str(m.resolved.get("rounding", "ceil"))
        for gi in range(len(grid)):
            npq = n_pref[:, gi]
            ks[i, :, gi] = np.minimum(cutoff_k(m.resolved.cutoff, rounding, npq, npq), npq)
    avg = np.array(
        [str(m.resolved.get("ties", "input")) == "average" for m in meas], dtype=np.bool_
    )

    # ideal DCG: one order per distinct gain column (ties among equal gains do not matter)
    idcg = np.zeros((len(meas), q_count, len(grid)))
    zero = np.zeros(len(y))
    done: dict[bytes, np.ndarray] = {}
    for i in range(len(meas)):
        key = gains[i].tobytes()
        if key not in done:
            done[key] = sort_segments(perm, bnd, -gains[i], zero)
        sel = np.array([i])
        idcg[i] = prefix_dcg(
            done[key],
            pos,
            y,
            bnd,
            grid,
            gains[sel],
            dtab[sel],
            ctab[sel],
            dlin[sel],
            ks[sel],
            np.zeros(1, dtype=np.bool_),
        )[0]

    # groups of measures that share a ranking order: same tie rule (and gains for pess./opt.)
    groups: dict[tuple, list[int]] = {}
    for i, m in enumerate(meas):
        ties = str(m.resolved.get("ties", "input"))
        key: tuple = (ties, gains[i].tobytes() if ties in ("pessimistic", "optimistic") else b"")
        groups.setdefault(key, []).append(i)

    out = np.zeros((len(scores), len(meas), q_count, len(grid)))
    for (ties, _), members in groups.items():
        sel = np.array(members)
        if ties in ("input", "average"):
            tkey = np.zeros(len(y))
        elif ties == "docid":
            if ds.doc_ids is None:
                raise ConventionError(
                    "ties=docid (trec_eval: docno descending) needs document ids. Fix: read the "
                    "data with its '#docid = ...' comments, or use ties=input"
                )
            _, inv = np.unique(np.asarray(ds.doc_ids).astype(str), return_inverse=True)
            tkey = -inv.astype(np.float64)
        elif ties == "pessimistic":
            tkey = gains[members[0]]
        else:  # optimistic
            tkey = -gains[members[0]]
        for k, s in enumerate(scores):
            order = sort_segments(perm, bnd, -s, tkey)
            dcg = prefix_dcg(
                order,
                pos,
                s,
                bnd,
                grid,
                gains[sel],
                dtab[sel],
                ctab[sel],
                dlin[sel],
                ks[sel],
                avg[sel],
            )
            for j, i in enumerate(members):
                out[k, i] = _finish(meas[i], dcg[j], idcg[i], n_pref, ds.query_ids)
    return np.transpose(out, (0, 1, 3, 2))


def _finish(
    m: _Meas, dcg: np.ndarray, idcg: np.ndarray, n_pref: np.ndarray, query_ids: np.ndarray
) -> np.ndarray:
    """Turn (Q, G) DCG and IDCG into the measure's values (short and empty rules)."""
    r = m.resolved
    cut = r.cutoff
    short_zero = cut is not None and cut.k is not None and r.get("short") == "zero"
    too_short = (cut.k > n_pref) if short_zero else np.zeros(n_pref.shape, dtype=bool)
    if r.name == "idcg":
        return idcg.copy()
    if r.name == "dcg":
        return np.where(too_short, 0.0, dcg)
    empty = idcg == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(empty, 0.0, dcg / np.where(empty, 1.0, idcg))
    v = np.where(too_short, 0.0, v)
    rule = str(r.get("empty", "zero"))
    if empty.any():
        if rule == "one":
            v[empty] = 1.0
        elif rule == "skip":
            v[empty] = np.nan
        elif rule == "error":
            q, g = np.argwhere(empty)[0]
            raise EmptyQueryError(
                f"{m.key}: query {query_ids[q]} has no document with a positive gain among its "
                f"first {int(n_pref[q, g])} documents (empty=error). Fix: choose empty=zero, one "
                "or skip for curves over growing prefixes"
            )
    return v


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
            rep[:, fi] = _fast_values(dataset, sc, fast, g, perm, pos)
        if slow:
            rep[:, si] = _evaluate_values(dataset, sc, slow, g, pos, preset)
        means[r] = _mean_over_queries(rep)
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
