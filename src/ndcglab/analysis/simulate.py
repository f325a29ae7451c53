"""Simulating the i.i.d. model of Wang et al. (2013) to watch NDCG(f, S_n) as n grows.

One draw of a list of size ``n``: scores ``s_1..s_n ~ U[0, 1]`` (the canonical ranker f̃ — any
ranker is equivalent to its canonical version for NDCG), labels ``Y_i | s_i ~ Bernoulli(ybar(s_i))``
(binary) or the categorical of a :class:`~ndcglab.analysis.limits.GradedModel`. The list is ranked
by ``s`` (no ties almost surely) and NDCG is computed with the measure library's conventions: the
gain and discount objects (:mod:`ndcglab.measures.gains`, :mod:`ndcglab.measures.discounts`), and
the cut-off (``cutoff_k``), DCG and ideal DCG (``dcg_at``), ``short`` and ``empty`` rules of
:mod:`ndcglab.measures.conventions`. Options the measure leaves unset come
from the ``standard`` preset (gain exp2, discount log).

* Independent draws (``nested=False``, the default): for each size n a fresh list is drawn, with the
  scores generated already sorted as uniform order statistics, ``U_(i) = Γ_i / Γ_{n+1}`` with
  ``Γ_i`` the partial sums of i.i.d. Exp(1) — O(n), no sort. Use it for limits and variances.
* Nested draws (``nested=True``): one i.i.d. sequence of length ``max(sizes)`` per draw and
  ``S_n`` = its first n pairs, as in Definition 3 of the paper (each prefix is sorted, O(n log n)).

The ideal order is built from the label counts (O(n), no sort). A list with no relevant document
(IDCG = 0) scores by the measure's ``empty`` rule (0 by default). Everything is seeded by
``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ConventionError
from ..measures.conventions import apply_empty, apply_short, cutoff_k, dcg_at, normalise
from ..measures.discounts import Discount, get_discount
from ..measures.gains import Gain, get_gain
from ..measures.registry import Measure, resolve_discount, resolve_gain
from .limits import GradedModel, Limit, YBar, ndcg_measure, theoretical_limit

__all__ = [
    "SimulationResult",
    "convergence_table",
    "simulate_ndcg",
    "uniform_order_statistics",
]


def uniform_order_statistics(
    n: int, rng: np.random.Generator, *, descending: bool = True
) -> np.ndarray:
    """``n`` i.i.d. U[0, 1] values already sorted (descending by default), in O(n):
    ``U_(i) = Γ_i / Γ_{n+1}``, ``Γ_i = E_1 + … + E_i``, ``E_j ~ Exp(1)``."""
    e = rng.standard_exponential(n + 1)
    c = np.cumsum(e)
    u = c[:n] / c[n]
    return u[::-1].copy() if descending else u


def _sample_labels(
    model: YBar | GradedModel, s: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Labels for scores ``s``: returns (label index per document, label values)."""
    u = np.asarray(rng.random(s.shape[0]))
    if isinstance(model, GradedModel):
        cum = np.cumsum(model.probs(s), axis=1)
        idx = (u[:, None] >= cum[:, :-1]).sum(axis=1)
        return idx, np.asarray(model.labels)
    return (u < _ybar_values(model, s)).astype(np.int64), np.array([0.0, 1.0])


def _ybar_values(ybar: YBar, s: np.ndarray) -> np.ndarray:
    """``ybar`` at every score: called once on the array, element by element if it is not
    vectorised (a function written with ``math`` rather than NumPy)."""
    try:
        q = np.asarray(ybar(s), dtype=np.float64)
        if q.shape not in (s.shape, ()):
            raise ValueError
    except (TypeError, ValueError):
        q = np.fromiter((float(ybar(float(x))) for x in s), dtype=np.float64, count=s.shape[0])
    q = np.broadcast_to(q, s.shape)
    if not np.all((q >= 0.0) & (q <= 1.0)):
        raise ConventionError("ybar(s) = P[Y = 1 | s] must lie in [0, 1] for every s in [0, 1]")
    return q


@dataclass(frozen=True)
class _MeasureSetup:
    name: str
    measure: Measure  # resolved by the standard preset
    gain: Gain
    discount: Discount
    k_of: Callable[[int], int]


def _setup(
    measure: str | Measure,
    gain: str | Gain | None,
    discount: str | Discount | None,
    cutoff: Callable[[int], int] | None,
) -> _MeasureSetup:
    m = ndcg_measure(measure, what="the simulator computes NDCG, it is not")
    r = m.resolve()
    g = get_gain(gain) if gain is not None else resolve_gain(r)
    d = get_discount(discount) if discount is not None else resolve_discount(r)
    if cutoff is not None and m.cutoff is not None:
        raise ConventionError("give either an @cut-off in the measure or cutoff=, not both")
    if cutoff is not None:
        k_of = lambda n: max(1, int(cutoff(n)))  # noqa: E731
        name = f"{m}@k(n)"
    else:
        rounding = r.get("rounding")
        k_of = lambda n: int(  # noqa: E731
            cutoff_k(m.cutoff, rounding, np.array([n]), np.array([n]))[0]
        )
        name = str(m)
    return _MeasureSetup(name=name, measure=r, gain=g, discount=d, k_of=k_of)


def _dcg_and_ideal(
    idx: np.ndarray, label_gain: np.ndarray, disc: np.ndarray, k: int
) -> tuple[float, float]:
    """DCG@k and ideal DCG@k (:func:`~ndcglab.measures.conventions.dcg_at`) of a list in ranked
    order, given its label indices and the gain of each label. The ideal's gains are
    :func:`~ndcglab.measures.conventions.ideal_gains` of the list, built from the label counts
    (the same values in O(n), no sort of the n gains); only the first min(k, n) are summed."""
    n = idx.shape[0]
    top = min(k, n)
    dcg = dcg_at(label_gain[idx[:top]], disc[:top], k, n)
    counts = np.bincount(idx, minlength=label_gain.shape[0])
    order = np.argsort(-label_gain, kind="stable")
    taken = np.diff(np.minimum(np.cumsum(counts[order]), top), prepend=0)
    idcg = dcg_at(np.repeat(label_gain[order], taken), disc[:top], k, n)
    return float(dcg), float(idcg)


@dataclass(eq=False)
class SimulationResult:
    """NDCG of the canonical ranker on simulated lists.

    ``sizes`` (G,) list sizes; ``values`` (draws, G) NDCG of each draw; ``measure`` the measure's
    printed spec; ``nested``; ``seed``; ``limit`` the :class:`Limit` from the theorems (or None).
    """

    sizes: np.ndarray
    values: np.ndarray
    measure: str
    nested: bool
    seed: int | None
    limit: Limit | None = None
    model: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def mean(self) -> np.ndarray:
        """Mean over draws, (G,)."""
        return self.values.mean(axis=0)

    @property
    def std(self) -> np.ndarray:
        """Standard deviation over draws (ddof = 1; NaN with one draw), (G,)."""
        if self.values.shape[0] < 2:
            return np.full(self.values.shape[1], np.nan)
        return self.values.std(axis=0, ddof=1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "measure": self.measure,
            "model": self.model,
            "sizes": self.sizes.tolist(),
            "mean": self.mean.tolist(),
            "std": self.std.tolist(),
            "values": self.values.tolist(),
            "nested": self.nested,
            "seed": self.seed,
            "limit": None
            if self.limit is None
            else {
                "value": self.limit.value,
                "theorem": self.limit.theorem,
                "converges": self.limit.converges,
                "statement": self.limit.statement,
            },
        }

    def plot(self, ax: Any = None, *, label: str | None = None) -> Any:
        """Mean NDCG against n (log x axis), a ±1 sd band over draws, and the theorem's limit as a
        dashed line. Returns the axes (never shows the figure)."""
        from .._compat import pyplot

        plt = pyplot()
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        m = self.mean
        (line,) = ax.plot(self.sizes, m, marker="o", ms=3, label=label or self.measure)
        sd = self.std
        if np.isfinite(sd).any():
            ax.fill_between(self.sizes, m - sd, m + sd, color=line.get_color(), alpha=0.2)
        if self.limit is not None and self.limit.converges:
            ax.axhline(
                self.limit.value,
                color=line.get_color(),
                ls="--",
                lw=1,
                label=f"limit (Thm {self.limit.theorem}) = {self.limit.value:.4f}",
            )
        ax.set_xscale("log")
        ax.set_xlabel("list size n")
        ax.set_ylabel(f"{self.measure} (canonical ranker)")
        ax.legend(fontsize="small")
        return ax


def simulate_ndcg(
    model: YBar | GradedModel,
    sizes: Sequence[int] | np.ndarray,
    measure: str | Measure = "ndcg",
    *,
    draws: int = 1,
    seed: int | None = 0,
    nested: bool = False,
    cutoff: Callable[[int], int] | None = None,
    gain: str | Gain | None = None,
    discount: str | Discount | None = None,
    with_limit: bool = True,
) -> SimulationResult:
    """NDCG(f̃, S_n) of the canonical ranker on simulated lists of each size in ``sizes``.

    ``model``: ``ybar(s)`` (vectorised callable on [0, 1], binary labels) or a
    :class:`GradedModel`. ``measure``: an ``ndcg`` spec (``ndcg``, ``ndcg(discount=power:0.5)``,
    ``ndcg(discount=exp:2)``, ``ndcg@0.2n``, ``ndcg(gain=linear)`` …, read by
    :func:`~ndcglab.measures.parse_measure`; unset options from the ``standard`` preset: gain
    exp2, discount log). ``cutoff``: a function ``k(n)`` for growing cut-offs such as ``k = √n``
    (Theorems 7/11). ``gain`` / ``discount`` override the spec's. ``draws`` independent repetitions;
    ``nested`` see the module docstring. ``with_limit`` attaches the theorem's limit.
    """
    setup = _setup(measure, gain, discount, cutoff)
    n_arr = np.asarray(sizes, dtype=np.int64).ravel()
    if n_arr.size == 0 or (n_arr < 1).any():
        raise ConventionError("sizes must be positive list sizes, e.g. [10**4, 10**5, 10**6]")
    if draws < 1:
        raise ConventionError(f"draws must be at least 1, got {draws}")
    rng = np.random.default_rng(seed)
    labels = np.asarray(model.labels) if isinstance(model, GradedModel) else np.array([0.0, 1.0])
    label_gain = np.asarray(setup.gain(labels), dtype=np.float64)
    n_max = int(n_arr.max())
    disc_cache: dict[int, np.ndarray] = {}

    def disc_for(n: int) -> np.ndarray:
        if setup.discount.depends_on_length:
            if n not in disc_cache:
                disc_cache[n] = setup.discount.table(n)
            return disc_cache[n]
        if -1 not in disc_cache:
            disc_cache[-1] = setup.discount.table(n_max)
        return disc_cache[-1][:n]

    dcg = np.empty((draws, n_arr.size), dtype=np.float64)
    idcg = np.empty((draws, n_arr.size), dtype=np.float64)
    for d in range(draws):
        if nested:
            s_all = rng.random(n_max)
            idx_all, _ = _sample_labels(model, s_all, rng)
            for j, n in enumerate(n_arr.tolist()):
                order = np.argsort(-s_all[:n], kind="stable")
                dcg[d, j], idcg[d, j] = _dcg_and_ideal(
                    idx_all[order], label_gain, disc_for(n), setup.k_of(n)
                )
        else:
            for j, n in enumerate(n_arr.tolist()):
                s = uniform_order_statistics(n, rng)
                idx, _ = _sample_labels(model, s, rng)
                dcg[d, j], idcg[d, j] = _dcg_and_ideal(idx, label_gain, disc_for(n), setup.k_of(n))
    values, empty = normalise(dcg, idcg)
    values = np.array(apply_short(setup.measure, values, n_arr[None, :]))
    apply_empty(setup.measure, values, empty, None, where=" (a simulated list)")
    lim = None
    if with_limit:
        try:
            lim = theoretical_limit(
                measure,
                model,
                cutoff="sublinear" if cutoff is not None else None,
            )
        except ConventionError:
            lim = None
    return SimulationResult(
        sizes=n_arr,
        values=values,
        measure=setup.name,
        nested=nested,
        seed=seed,
        limit=lim,
        model=getattr(model, "__name__", type(model).__name__),
    )


def convergence_table(
    model: YBar | GradedModel,
    measures: Sequence[str],
    sizes: Sequence[int] = (10**4, 10**5, 10**6),
    *,
    draws: int = 3,
    seed: int | None = 0,
) -> list[dict[str, Any]]:
    """For each measure: the theorem, its limit, and the simulated mean ± sd at each size.

    Returns one dict per measure: ``measure``, ``theorem``, ``limit`` (NaN if none), ``sizes``,
    ``mean``, ``std``, ``gap`` (mean − limit at each size). A convenience for reports.
    """
    rows = []
    for i, m in enumerate(measures):
        res = simulate_ndcg(model, sizes, m, draws=draws, seed=None if seed is None else seed + i)
        lim = res.limit
        value = lim.value if lim is not None else math.nan
        rows.append(
            {
                "measure": res.measure,
                "theorem": None if lim is None else lim.theorem,
                "limit": value,
                "sizes": res.sizes.tolist(),
                "mean": res.mean.tolist(),
                "std": res.std.tolist(),
                "gap": (res.mean - value).tolist(),
            }
        )
    return rows
