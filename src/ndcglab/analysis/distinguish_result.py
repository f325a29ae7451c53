"""The result of :func:`~ndcglab.analysis.distinguishability`: curves of mean measure values
against list size n, their stability as n grows, and their plots.

Consistent distinguishability (Wang, Wang, Li, He, Chen, Liu, "A Theoretical Analysis of NDCG
Type Ranking Measures", COLT 2013, Definition 3) asks that the order of two rankers be the same
for *every* n ≥ N. Its empirical handle here: for each pair of rankers and each repetition, the
order is **stable from n** when the sign of the difference of their mean values is the same (and
not 0) at n and at every larger n of the grid. The horizon is finite (the grid's end), so these
are estimates: the last grid point is stable by construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from os import PathLike
from typing import Any

import numpy as np

from ..errors import ConventionError

__all__ = ["DistinguishResult", "first_stable_n", "mean_over_queries"]


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
            self.means = mean_over_queries(self.per_query)

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
        return first_stable_n(self.grid, frac, level)

    def ranking_stable_from(self, measure: str | None = None, *, level: float = 1.0) -> int | None:
        """The smallest grid n from which :meth:`ranking_stability` stays ≥ ``level``."""
        return first_stable_n(self.grid, self.ranking_stability(measure), level)

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
                        "stable_from": first_stable_n(self.grid, f, 1.0),
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
        repetitions) or ``"none"``; bands appear only with several repetitions. Each panel's title
        names the measure as given and, wrapped below it, its full convention. Returns the axes
        (one, or a list); never shows the figure.
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
            a.set_ylabel("mean over queries", fontsize="small")
            a.set_title(self._title(key), fontsize="small")
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
                "share of repetitions whose order\nholds at every larger n", fontsize="small"
            )
            a.set_title(self._title(key), fontsize="small")
            a.legend(fontsize="small")
        return axes[0] if len(axes) == 1 else axes

    def _title(self, key: str) -> str:
        """A panel title: the measure as given, then its full convention, broken after commas into
        lines of at most 60 characters (joining the lines gives the convention back)."""
        conv = self.conventions.get(key, key)
        if conv == key:
            return key
        lines = [""]
        for piece in conv.split(","):
            piece = piece if lines == [""] else "," + piece
            if lines[-1] and len(lines[-1]) + len(piece) > 60:
                lines.append(piece)
            else:
                lines[-1] += piece
        return key + "\n" + "\n".join(lines)

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
        from .._atomic import save_figure

        save_figure(fig, path, dpi=dpi)
        plt.close(fig)


def mean_over_queries(per_query: np.ndarray) -> np.ndarray:
    """Mean over the last axis, skipping NaN (NaN when every value is NaN)."""
    with np.errstate(invalid="ignore"):
        cnt = np.sum(~np.isnan(per_query), axis=-1)
        tot = np.nansum(per_query, axis=-1)
        return np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)


def first_stable_n(grid: np.ndarray, frac: np.ndarray, level: float) -> int | None:
    """The smallest grid size n from which the fraction ``frac`` (one value per grid size, e.g.
    a stability fraction) stays ≥ ``level`` (up to 1e-12) at every larger n; None when it is
    below ``level`` at the largest n."""
    ok = frac >= level - 1e-12
    if not ok[-1]:
        return None
    bad = np.flatnonzero(~ok)
    first = 0 if bad.size == 0 else int(bad[-1]) + 1
    return int(grid[first])
