"""Limits of NDCG(f, S_n) as lists grow, computed numerically: the theorems of Wang, Wang, Li,
He, Chen, Liu, "A Theoretical Analysis of NDCG Type Ranking Measures" (COLT 2013).

The model: documents ``(x_i, y_i)`` are i.i.d.; ``s = f̃(x) = P[f(X) ≤ f(x)]`` is the canonical
version of the ranker's score, uniform on [0, 1]. A model is described by

* **binary labels**: ``ybar(s) = P[Y = 1 | f̃(X) = s]``, a callable on [0, 1]; ``p = P[Y = 1] =
  ∫₀¹ ybar(s) ds``;
* **graded labels**: a :class:`GradedModel` — label values and their conditional probabilities
  ``P[Y = y_j | f̃(X) = s]``. As in the paper, the theorems are stated on **gains**: the values
  ``𝔶_1 > 𝔶_2 > …`` below are the distinct gains ``G(y)`` (by default the ``standard`` preset's
  gain, ``exp2``: 2^y − 1),
  ``E[G(Y) | s]`` the expected gain at ``s`` and ``R_j = P[G(Y) ≥ 𝔶_j]`` (``R_0 = 0``).

Theorems (discount; cut-off → limit, in probability; Theorem 1 almost surely):

* 1 — 1/log(1+r) → 1, for every ranker;
* 3 — r^−β, 0 < β < 1 → (1−β) ∫₀¹ ybar(s)(1−s)^−β ds / p^(1−β);
* 5 — 1/r → ybar(1);
* 6 — Σ_r D(r) < ∞ (e.g. 2^−r, or any fixed cut-off k) → does not converge;
* 7 — Σ D = ∞, cut at k = o(n), k → ∞ → ybar(1);
* 8 — 1/log(1+r), k = c·n → c / min(c, p) · P[Y = 1 | s ≥ 1 − c];
* 9 — r^−β, k = c·n → (1−β) / min(c, p)^(1−β) · ∫_{1−c}^1 ybar(s)(1−s)^−β ds;
* 10 (graded) — r^−β → (1−β) ∫₀¹ E[G|s](1−s)^−β ds / Σ_j 𝔶_j (R_j^(1−β) − R_{j−1}^(1−β));
* 11 (graded) — Σ D = ∞, k = o(n) → E[G | s = 1] / 𝔶_1;
* 12 (graded) — 1/log(1+r), k = c·n →
  ∫_{1−c}^1 E[G|s] ds / (Σ_{j≤t} 𝔶_j (R_j − R_{j−1}) + 𝔶_{t+1}(c − R_t));
* 13 (graded) — r^−β, k = c·n → (1−β) ∫_{1−c}^1 E[G|s](1−s)^−β ds /
  (Σ_{j≤t} 𝔶_j (R_j^(1−β) − R_{j−1}^(1−β)) + 𝔶_{t+1}(c^(1−β) − R_t^(1−β))).

In 12 and 13, ``t`` is the index with ``R_t < c ≤ R_{t+1}``; ``c · E[G | s ≥ 1−c]`` of the paper
is written ``∫_{1−c}^1 E[G|s] ds``. The integrals with ``(1−s)^−β`` have an integrable
singularity at ``s = 1``; they are computed by ``scipy.integrate.quad`` with the algebraic weight
``(1−s)^−β`` (QUADPACK's QAWS), which handles it exactly.

:func:`theoretical_limit` dispatches on a measure string (``ndcg(discount=power:0.5)``,
``ndcg@0.2n``, …; read by :func:`ndcglab.measures.parse_measure`, so a misspelt option is an
error) and returns a :class:`Limit` saying which theorem applies.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

import numpy as np

from .._spec import ParsedSpec
from ..errors import ConventionError
from ..measures.discounts import (
    Discount,
    ExponentialDiscount,
    LogDiscount,
    PowerDiscount,
)
from ..measures.gains import Gain, get_gain
from ..measures.presets import get_preset
from ..measures.registry import Measure, parse_measure, resolve_discount, resolve_gain

__all__ = [
    "GradedModel",
    "Limit",
    "limit_graded_log_cutoff",
    "limit_graded_power",
    "limit_graded_power_cutoff",
    "limit_graded_sublinear_cutoff",
    "limit_log",
    "limit_log_cutoff",
    "limit_power",
    "limit_power_cutoff",
    "limit_sublinear_cutoff",
    "limit_zipf",
    "ndcg_measure",
    "positive_rate",
    "theoretical_limit",
]

YBar = Callable[[Any], Any]

#: the gain of the graded theorems unless one is given: the ``standard`` preset's
DEFAULT_GAIN: str = get_preset().default("ndcg", "gain")


# ----------------------------------------------------------------------------- integration
def _scalar(fn: Callable[[Any], Any]) -> Callable[[float], float]:
    return lambda s: float(np.asarray(fn(float(s)), dtype=np.float64))


def _integrate(fn: Callable[[Any], Any], a: float, b: float, beta: float = 0.0) -> float:
    """``∫_a^b fn(s) (1 − s)^−β ds`` for 0 ≤ a < b ≤ 1 and β in [0, 1).

    A piece that ends at 1 with β > 0 uses QUADPACK's algebraic weight ``(1 − s)^−β`` (QAWS), so
    the integrable singularity is handled exactly; other pieces are plain ``quad``. If QUADPACK
    warns (e.g. a discontinuous ybar), the interval is split into 64 pieces.
    """
    from scipy.integrate import IntegrationWarning, quad

    if b <= a:
        return 0.0
    f = _scalar(fn)

    def piece(lo: float, hi: float) -> float:
        if beta == 0.0:
            return float(quad(f, lo, hi, limit=200)[0])
        if hi >= 1.0:
            # ∫ f(s) (s − lo)^0 (1 − s)^−β ds
            return float(quad(f, lo, 1.0, weight="alg", wvar=(0.0, -beta), limit=200)[0])
        return float(quad(lambda s: f(s) * (1.0 - s) ** (-beta), lo, hi, limit=200)[0])

    with warnings.catch_warnings():
        warnings.simplefilter("error", IntegrationWarning)
        try:
            return piece(a, b)
        except IntegrationWarning:
            pass
    edges = np.linspace(a, b, 65)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IntegrationWarning)
        return float(sum(piece(lo, hi) for lo, hi in itertools.pairwise(edges)))


def positive_rate(ybar: YBar) -> float:
    """``p = P[Y = 1] = ∫₀¹ ybar(s) ds`` (s is uniform)."""
    return _integrate(ybar, 0.0, 1.0)


def _p(ybar: YBar, p: float | None) -> float:
    q = positive_rate(ybar)
    if p is not None and abs(p - q) > 1e-6 * max(1.0, abs(q)):
        raise ConventionError(
            f"p = {p} does not match ∫₀¹ ybar(s) ds = {q:.6g}; under the model p = P[Y=1] is "
            "fixed by ybar. Fix: leave p out, or pass the ybar that has this positive rate"
        )
    if q <= 0.0:
        raise ConventionError("the theorems need p = P[Y = 1] > 0; ybar is zero almost everywhere")
    return q


def _check_beta(beta: float) -> float:
    if not 0.0 < beta < 1.0:
        raise ConventionError(f"Theorems 3, 9, 10, 13 need 0 < β < 1, got β = {beta}")
    return float(beta)


def _check_c(c: float) -> float:
    if not 0.0 < c <= 1.0:
        raise ConventionError(f"the cut-off fraction c must lie in (0, 1], got {c}")
    return float(c)


# ----------------------------------------------------------------------------- binary labels
def limit_log(ybar: YBar | None = None) -> float:
    """Theorem 1: with D(r) = 1/log(1+r) (any base), NDCG(f, S_n) → 1 for every ranker."""
    return 1.0


def limit_power(ybar: YBar, beta: float, *, p: float | None = None) -> float:
    """Theorem 3: D(r) = r^−β, 0 < β < 1: ``(1−β) ∫₀¹ ybar(s)(1−s)^−β ds / p^(1−β)``."""
    beta = _check_beta(beta)
    pp = _p(ybar, p)
    return (1.0 - beta) * _integrate(ybar, 0.0, 1.0, beta) / pp ** (1.0 - beta)


def limit_zipf(ybar: YBar) -> float:
    """Theorem 5: D(r) = 1/r: ``ybar(1) = P[Y = 1 | f̃(X) = 1]`` (ybar continuous at 1)."""
    return float(np.asarray(ybar(1.0), dtype=np.float64))


def limit_sublinear_cutoff(ybar: YBar) -> float:
    """Theorem 7: any D with Σ D(r) = ∞ cut at k = o(n), k → ∞: ``ybar(1)``."""
    return limit_zipf(ybar)


def limit_log_cutoff(ybar: YBar, c: float, *, p: float | None = None) -> float:
    """Theorem 8: D(r) = 1/log(1+r) cut at k = c·n: ``c/min(c, p) · P[Y=1 | s ≥ 1−c]``
    with ``P[Y=1 | s ≥ 1−c] = ∫_{1−c}^1 ybar(s) ds / c``."""
    c = _check_c(c)
    pp = _p(ybar, p)
    return _integrate(ybar, 1.0 - c, 1.0) / min(c, pp)


def limit_power_cutoff(ybar: YBar, beta: float, c: float, *, p: float | None = None) -> float:
    """Theorem 9: D(r) = r^−β cut at k = c·n:
    ``(1−β)/min(c, p)^(1−β) · ∫_{1−c}^1 ybar(s)(1−s)^−β ds``."""
    beta = _check_beta(beta)
    c = _check_c(c)
    pp = _p(ybar, p)
    return (1.0 - beta) / min(c, pp) ** (1.0 - beta) * _integrate(ybar, 1.0 - c, 1.0, beta)


# ----------------------------------------------------------------------------- graded labels
@dataclass(frozen=True)
class GradedModel:
    """Graded labels under the i.i.d. model: ``labels`` (values y_1..y_L, any order) and
    ``probabilities``: either one callable ``probs(s) -> (len(s), L)`` array of
    ``P[Y = labels[j] | f̃(X) = s]`` or a sequence of L callables ``p_j(s)``. Rows must sum to 1.

    ``GradedModel.binary(ybar)`` is the binary model (labels 0, 1).
    """

    labels: tuple[float, ...]
    probabilities: Callable[[np.ndarray], np.ndarray] | Sequence[Callable[[Any], Any]]

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", tuple(float(v) for v in self.labels))
        if len(self.labels) < 2 or len(set(self.labels)) != len(self.labels):
            raise ConventionError(
                f"a graded model needs at least two distinct labels, got {self.labels}"
            )
        if not callable(self.probabilities) and len(self.probabilities) != len(self.labels):
            raise ConventionError(
                f"{len(self.probabilities)} probability functions for {len(self.labels)} labels"
            )
        grid = np.linspace(0.0, 1.0, 101)
        pr = self.probs(grid)
        if (pr < -1e-12).any() or not np.allclose(pr.sum(axis=1), 1.0, atol=1e-9):
            raise ConventionError(
                "the conditional label probabilities must be ≥ 0 and sum to 1 at every s "
                "(checked on a grid of [0, 1])"
            )

    @classmethod
    def binary(cls, ybar: YBar) -> GradedModel:
        """Labels {0, 1} with ``P[Y = 1 | s] = ybar(s)``."""

        def probs(s: np.ndarray) -> np.ndarray:
            q = np.broadcast_to(np.asarray(ybar(s), dtype=np.float64), np.shape(s))
            return np.stack([1.0 - q, q], axis=-1)

        return cls(labels=(0.0, 1.0), probabilities=probs)

    def probs(self, s: Any) -> np.ndarray:
        """``(len(s), L)`` conditional probabilities of the labels at scores ``s``."""
        s_arr = np.atleast_1d(np.asarray(s, dtype=np.float64))
        if callable(self.probabilities):
            out = np.asarray(self.probabilities(s_arr), dtype=np.float64)
        else:
            cols = [
                np.broadcast_to(np.asarray(f(s_arr), dtype=np.float64), s_arr.shape)
                for f in self.probabilities
            ]
            out = np.stack(cols, axis=-1)
        if out.shape != (*s_arr.shape, len(self.labels)):
            raise ConventionError(
                f"probabilities(s) returned shape {out.shape}; expected "
                f"{(*s_arr.shape, len(self.labels))}"
            )
        return out

    def marginal(self) -> np.ndarray:
        """``P[Y = labels[j]] = ∫₀¹ P[Y = labels[j] | s] ds``, one per label."""
        return np.array(
            [_integrate(partial(self._prob_of, j), 0.0, 1.0) for j in range(len(self.labels))]
        )

    def _prob_of(self, j: int, s: Any) -> Any:
        """``P[Y = labels[j] | f̃(X) = s]`` at one score ``s``."""
        return self.probs(s)[0, j]

    def expected_gain(self, gain: str | Gain = DEFAULT_GAIN) -> Callable[[Any], Any]:
        """``s -> E[G(Y) | f̃(X) = s]`` (vectorised)."""
        g = np.asarray(get_gain(gain)(np.asarray(self.labels)), dtype=np.float64)

        def eg(s: Any) -> Any:
            out = self.probs(s) @ g
            return out if np.ndim(s) else float(out[0])

        return eg

    def gain_levels(self, gain: str | Gain = DEFAULT_GAIN) -> tuple[np.ndarray, np.ndarray]:
        """The distinct gains ``𝔶_1 > 𝔶_2 > …`` and ``R_j = P[G(Y) ≥ 𝔶_j]`` (``R_0 = 0`` not
        included)."""
        g = np.asarray(get_gain(gain)(np.asarray(self.labels)), dtype=np.float64)
        marg = self.marginal()
        levels = np.unique(g)[::-1]
        mass = np.array([marg[g == v].sum() for v in levels])
        return levels, np.minimum(np.cumsum(mass), 1.0)


def _ideal_denominator(levels: np.ndarray, R: np.ndarray, c: float, power: float) -> float:
    """``Σ_{j≤t} 𝔶_j (R_j^a − R_{j−1}^a) + 𝔶_{t+1} (c^a − R_t^a)`` with ``a = power`` and
    ``R_t < c ≤ R_{t+1}`` (for c = 1 this is the full sum Σ_j 𝔶_j (R_j^a − R_{j−1}^a))."""
    R0 = np.concatenate([[0.0], R])
    total = 0.0
    for j in range(len(levels)):
        lo, hi = R0[j], R0[j + 1]
        if c <= lo:
            break
        top = min(hi, c)
        total += levels[j] * (top**power - lo**power)
    return float(total)


def limit_graded_power(
    model: GradedModel, beta: float, *, gain: str | Gain = DEFAULT_GAIN
) -> float:
    """Theorem 10: D(r) = r^−β:
    ``(1−β) ∫₀¹ E[G|s](1−s)^−β ds / Σ_j 𝔶_j (R_j^(1−β) − R_{j−1}^(1−β))``."""
    beta = _check_beta(beta)
    levels, R = model.gain_levels(gain)
    den = _ideal_denominator(levels, R, 1.0, 1.0 - beta)
    return (1.0 - beta) * _integrate(model.expected_gain(gain), 0.0, 1.0, beta) / den


def limit_graded_sublinear_cutoff(model: GradedModel, *, gain: str | Gain = DEFAULT_GAIN) -> float:
    """Theorem 11: Σ D = ∞ cut at k = o(n), k → ∞: ``E[G(Y) | s = 1] / 𝔶_1``."""
    levels, _ = model.gain_levels(gain)
    return float(model.expected_gain(gain)(1.0)) / float(levels[0])


def limit_graded_log_cutoff(
    model: GradedModel, c: float, *, gain: str | Gain = DEFAULT_GAIN
) -> float:
    """Theorem 12: D(r) = 1/log(1+r) cut at k = c·n:
    ``c·E[G | s ≥ 1−c] / (Σ_{j≤t} 𝔶_j (R_j − R_{j−1}) + 𝔶_{t+1}(c − R_t))``."""
    c = _check_c(c)
    levels, R = model.gain_levels(gain)
    den = _ideal_denominator(levels, R, c, 1.0)
    return _integrate(model.expected_gain(gain), 1.0 - c, 1.0) / den


def limit_graded_power_cutoff(
    model: GradedModel, beta: float, c: float, *, gain: str | Gain = DEFAULT_GAIN
) -> float:
    """Theorem 13: D(r) = r^−β cut at k = c·n:
    ``(1−β) ∫_{1−c}^1 E[G|s](1−s)^−β ds /
    (Σ_{j≤t} 𝔶_j (R_j^(1−β) − R_{j−1}^(1−β)) + 𝔶_{t+1}(c^(1−β) − R_t^(1−β)))``."""
    beta = _check_beta(beta)
    c = _check_c(c)
    levels, R = model.gain_levels(gain)
    den = _ideal_denominator(levels, R, c, 1.0 - beta)
    return (1.0 - beta) * _integrate(model.expected_gain(gain), 1.0 - c, 1.0, beta) / den


# ----------------------------------------------------------------------------- dispatcher
#: the limit each theorem gives (the ``statement`` of a converging :class:`Limit`)
_STATEMENTS = {
    "1": "1 for every ranker (almost surely)",
    "3": "(1−β) ∫₀¹ ybar(s)(1−s)^−β ds / p^(1−β)",
    "5": "ybar(1)",
    "7": "ybar(1)",
    "8": "c / min(c, p) · P[Y = 1 | s ≥ 1 − c]",
    "9": "(1−β) / min(c, p)^(1−β) · ∫_{1−c}^1 ybar(s)(1−s)^−β ds",
    "10": "(1−β) ∫₀¹ E[G|s](1−s)^−β ds / Σ_j 𝔶_j (R_j^(1−β) − R_{j−1}^(1−β))",
    "11": "E[G(Y) | s = 1] / 𝔶_1",
    "12": "c·E[G | s ≥ 1−c] / (Σ_{j≤t} 𝔶_j (R_j − R_{j−1}) + 𝔶_{t+1}(c − R_t))",
    "13": "(1−β) ∫_{1−c}^1 E[G|s](1−s)^−β ds / (Σ_{j≤t} 𝔶_j (R_j^(1−β) − R_{j−1}^(1−β))"
    " + 𝔶_{t+1}(c^(1−β) − R_t^(1−β)))",
}


@dataclass(frozen=True)
class Limit:
    """The limit of NDCG(f, S_n) for one measure and model.

    ``value`` is NaN when the measure does not converge (``converges=False``, Theorem 6).
    ``theorem`` names the result used (e.g. ``"3"``, ``"12"``); ``statement`` the formula.
    """

    measure: str
    value: float
    theorem: str
    converges: bool
    statement: str


def ndcg_measure(measure: str | Measure | ParsedSpec, *, what: str) -> Measure:
    """``measure`` read by :func:`~ndcglab.measures.parse_measure` (unknown names, misspelt
    options and bad values are errors), which must be ``ndcg``; ``what`` names the caller in the
    error."""
    m = parse_measure(str(measure) if isinstance(measure, ParsedSpec) else measure)
    if m.name != "ndcg":
        raise ConventionError(
            f"{what} about NDCG; got {m.name!r}. Fix: use an ndcg measure, e.g. "
            "ndcg(discount=power:0.5)"
        )
    return m


def _measure_parts(measure: str | Measure | ParsedSpec) -> tuple[Measure, Discount, Gain]:
    m = ndcg_measure(measure, what="the limit theorems are")
    return m, resolve_discount(m), resolve_gain(m)


def theoretical_limit(
    measure: str | Measure | ParsedSpec,
    model: YBar | GradedModel,
    *,
    cutoff: str | None = None,
) -> Limit:
    """The limit of ``measure`` (an ``ndcg`` spec string or :class:`~ndcglab.measures.Measure`)
    as n → ∞ under ``model``.

    ``model`` is ``ybar`` (binary labels) or a :class:`GradedModel` (the gain is the measure's
    ``gain=``, default the ``standard`` preset's, exp2). A fraction cut-off ``@c n`` uses
    Theorems 8/9 (12/13); a fixed ``@k`` keeps Σ D finite, so Theorem 6 applies (no limit).
    ``cutoff="sublinear"`` means the measure is cut at some k = o(n) with k → ∞ (Theorems 7/11;
    not expressible as ``@…``). Combinations the paper does not cover raise
    :class:`ConventionError`; a string that is not a valid measure raises
    :class:`~ndcglab.errors.SpecError` (unknown name or option) or :class:`ConventionError` (bad
    option value), as :func:`~ndcglab.measures.parse_measure` does.
    """
    m, D, gain = _measure_parts(measure)
    gm = model if isinstance(model, GradedModel) else None
    ybar: YBar = cast(YBar, model)  # used only for binary labels (gm is None)
    name = str(m)
    beta: float | None = None
    if isinstance(D, PowerDiscount):
        beta = D.beta
    is_log = isinstance(D, LogDiscount)

    def found(theorem: str, value: float) -> Limit:
        """The converging limit ``value`` that ``theorem`` gives."""
        return Limit(name, value, theorem, True, _STATEMENTS[theorem])

    def no_limit(why: str) -> Limit:
        """Theorem 6: NDCG does not converge."""
        return Limit(name, math.nan, "6", False, why)

    if cutoff is not None and cutoff != "sublinear":
        raise ConventionError(f"cutoff must be None or 'sublinear', got {cutoff!r}")
    if cutoff == "sublinear":
        if m.cutoff is not None:
            raise ConventionError("give either cutoff='sublinear' or an @cut-off, not both")
        if (beta is not None and beta > 1.0) or not (is_log or beta is not None):
            raise ConventionError(
                f"Theorems 7/11 need a discount with Σ D(r) = ∞ (log or power:β, β ≤ 1); got {D}"
            )
        if gm is not None:
            return found("11", limit_graded_sublinear_cutoff(gm, gain=gain))
        return found("7", limit_sublinear_cutoff(ybar))

    if m.cutoff is not None and m.cutoff.k is not None:
        return no_limit(
            "a fixed cut-off k leaves Σ_r D(r) finite: NDCG does not converge and no pair of "
            "rankers is consistently distinguishable"
        )
    c = None if m.cutoff is None else m.cutoff.fraction
    if isinstance(D, ExponentialDiscount) or (beta is not None and beta > 1):
        return no_limit(
            "Σ_r D(r) < ∞: NDCG does not converge and no pair of rankers is consistently "
            "distinguishable"
        )
    if c is None or c >= 1.0:
        if is_log:
            return found("1", 1.0)
        if beta is not None and beta < 1.0:
            if gm is not None:
                return found("10", limit_graded_power(gm, beta, gain=gain))
            return found("3", limit_power(ybar, beta))
        if beta == 1.0:
            if gm is not None:
                raise ConventionError(
                    "Wang et al. state the 1/r (Zipf) limit for binary labels only (Theorem 5). "
                    "Fix: pass ybar for binary labels"
                )
            return found("5", limit_zipf(ybar))
    else:
        if is_log:
            if gm is not None:
                return found("12", limit_graded_log_cutoff(gm, c, gain=gain))
            return found("8", limit_log_cutoff(ybar, c))
        if beta is not None and beta < 1.0:
            if gm is not None:
                return found("13", limit_graded_power_cutoff(gm, beta, c, gain=gain))
            return found("9", limit_power_cutoff(ybar, beta, c))
    raise ConventionError(
        f"no theorem of Wang et al. (2013) gives the limit of {name}. Covered: discount log, "
        "power:β (0<β<1), zipf, exp:a; cut-offs none, @c n (log and power only), @k (no limit)"
    )
