"""How precisely a paired difference is known, and how many queries a test of it would need.

For per-query paired differences ``d_i = A_i − B_i`` (one value per test query):

* :func:`paired_power` gives the mean difference with its two-sided ``1 − α`` Student-t confidence
  interval (``mean ± t_{1−α/2, n−1}·sd/√n``, the interval of the paired t-test), and the number
  of queries a two-sided paired t-test at level ``α`` would need to detect a true mean difference
  ``δ`` with probability ``power``, assuming the per-query standard deviation ``sd`` seen here;
* :func:`queries_needed` is that number on its own. Two forms:

  - the **normal approximation** (``exact=False``):
    ``n = ⌈((z_{1−α/2} + z_{power}) · sd / δ)²⌉``;
  - the **exact** paired t-test (``exact=True``, the default of :func:`paired_power`): the
    smallest ``n ≥ 2`` with ``P(|T| > t_{1−α/2, n−1}) ≥ power`` where ``T`` follows the
    noncentral t distribution with ``n − 1`` degrees of freedom and noncentrality
    ``δ·√n / sd`` (:data:`scipy.stats.nct`). It is the normal value plus one or two queries
    for the usual α and power.

Conventions: NaN pairs are dropped; ``sd`` is the sample standard deviation (``ddof=1``);
``δ`` is taken in absolute value; ``δ = 0`` (or a non-finite ``δ``/``sd``) needs infinitely many
queries, reported as ``None``; ``sd = 0`` with ``δ ≠ 0`` needs 2 (the smallest paired t-test).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = ["PairedPower", "paired_power", "queries_needed"]

#: the search for the exact n stops here (and reports ``None``): more queries than any collection
_MAX_N = 10**9


@dataclass(frozen=True)
class PairedPower:
    """The result of :func:`paired_power` (see the module docstring for every formula)."""

    n: int  #: number of (non-NaN) paired differences
    mean: float  #: mean difference A − B
    sd: float  #: sample standard deviation of the differences (ddof = 1)
    ci_low: float  #: lower end of the two-sided ``level`` confidence interval
    ci_high: float  #: upper end
    level: float  #: confidence level of the interval (``1 − α``)
    delta: float  #: the difference to detect (absolute value)
    alpha: float  #: two-sided significance level of the planned test
    power: float  #: the probability of detecting ``delta``
    n_needed: int | None  #: queries needed (exact noncentral-t form; None: not detectable)
    n_needed_normal: int | None  #: queries needed (normal approximation)

    @property
    def detectable(self) -> bool:
        """True when this data has at least ``n_needed`` queries."""
        return self.n_needed is not None and self.n >= self.n_needed

    @property
    def min_detectable(self) -> float:
        """The smallest difference detectable with this ``n`` and ``sd`` (normal approximation:
        ``(z_{1−α/2} + z_{power})·sd/√n``; NaN when fewer than two pairs)."""
        if self.n < 2 or not math.isfinite(self.sd):
            return math.nan
        return _z_sum(self.alpha, self.power) * self.sd / math.sqrt(self.n)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["detectable"] = self.detectable
        out["min_detectable"] = self.min_detectable
        return out


def _z_sum(alpha: float, power: float) -> float:
    from scipy import stats

    return float(stats.norm.ppf(1.0 - alpha / 2.0) + stats.norm.ppf(power))


def _check(alpha: float, power: float) -> None:
    from ..errors import NdcglabError

    if not 0.0 < alpha < 1.0:
        raise NdcglabError(f"alpha must lie in (0, 1), got {alpha}; fix: e.g. alpha=0.05")
    if not 0.0 < power < 1.0:
        raise NdcglabError(f"power must lie in (0, 1), got {power}; fix: e.g. power=0.8")


def _t_power(n: int, effect: float, alpha: float) -> float:
    """Power of the two-sided one-sample (paired) t-test with ``n`` pairs at standardised effect
    ``effect = δ/sd``."""
    from scipy import stats

    df = n - 1
    crit = float(stats.t.ppf(1.0 - alpha / 2.0, df))
    nc = effect * math.sqrt(n)
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def queries_needed(
    sd: float, delta: float, *, alpha: float = 0.05, power: float = 0.8, exact: bool = True
) -> int | None:
    """Queries a two-sided paired t-test at level ``alpha`` needs to detect a mean difference
    ``delta`` with probability ``power`` when the per-query differences have standard deviation
    ``sd`` (the module docstring gives both forms). ``None``: not detectable (``delta`` 0 or not
    finite, ``sd`` not finite, or more than 10⁹ queries)."""
    _check(alpha, power)
    delta = abs(float(delta))
    sd = float(sd)
    if not (math.isfinite(delta) and math.isfinite(sd)) or delta == 0.0 or sd < 0.0:
        return None
    if sd == 0.0:
        return 2
    normal = math.ceil((_z_sum(alpha, power) * sd / delta) ** 2)
    if normal > _MAX_N:
        return None
    if not exact:
        return max(normal, 1)
    effect = delta / sd
    n = max(normal, 2)
    if _t_power(n, effect, alpha) >= power:
        while n > 2 and _t_power(n - 1, effect, alpha) >= power:
            n -= 1
        return n
    while _t_power(n, effect, alpha) < power:
        n += 1
        if n > _MAX_N:  # pragma: no cover - the normal value is within a few queries
            return None
    return n


def paired_power(
    diffs: Any,
    delta: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    level: float = 0.95,
) -> PairedPower:
    """The ``level`` confidence interval of the mean of the paired ``diffs`` and the queries a
    paired t-test (two-sided, ``alpha``) needs to detect ``delta`` with probability ``power`` at
    the standard deviation of ``diffs`` (module docstring). Fewer than two pairs give an infinite
    interval and ``None`` for the queries needed."""
    from scipy import stats

    _check(alpha, power)
    if not 0.0 < level < 1.0:
        from ..errors import NdcglabError

        raise NdcglabError(f"level must lie in (0, 1), got {level}; fix: e.g. level=0.95")
    d = np.asarray(diffs, dtype=np.float64).ravel()
    d = d[~np.isnan(d)]
    n = int(d.size)
    mean = float(d.mean()) if n else math.nan
    if n < 2:
        return PairedPower(
            n, mean, math.nan, -math.inf, math.inf, level, abs(float(delta)), alpha, power,
            None, None,
        )  # fmt: skip
    sd = float(d.std(ddof=1))
    half = float(stats.t.ppf(0.5 + level / 2.0, n - 1)) * sd / math.sqrt(n)
    return PairedPower(
        n=n,
        mean=mean,
        sd=sd,
        ci_low=mean - half,
        ci_high=mean + half,
        level=level,
        delta=abs(float(delta)),
        alpha=alpha,
        power=power,
        n_needed=queries_needed(sd, delta, alpha=alpha, power=power, exact=True),
        n_needed_normal=queries_needed(sd, delta, alpha=alpha, power=power, exact=False),
    )
