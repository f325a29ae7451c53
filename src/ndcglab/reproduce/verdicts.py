"""How a reproduced claim gets its verdict: "agrees", "disagrees" or "inconclusive".

Every finding of a report is decided by one of the rules below, and the rule's text, with its
thresholds, is printed beside the verdict on the page (and stored in results.json). The rules are
also written in ``docs/reproduce.md`` (section "How verdicts are decided").

* **comparable** (:func:`comparable`) — an equivalence rule (two one-sided tests, TOST): the
  claim "A and B are comparable" *agrees* when the ``1 − 2α`` (90 %) confidence interval of the
  mean paired difference lies inside ``[−margin, +margin]`` (TOST at level α); it *disagrees*
  when that interval lies entirely outside the margin; otherwise it is *inconclusive*. A large
  p-value alone never makes two systems comparable.
* **better** (:func:`better`) — significance and direction: "A is better than B" *agrees* when
  the (adjusted) p-value is below α and the difference favours A; *disagrees* when it is below α
  and favours B; otherwise *inconclusive*.
* **better or comparable** (:func:`better_or_comparable`): *agrees* when A is significantly better
  or equivalent within the margin; *disagrees* when A is significantly worse; otherwise
  *inconclusive*.
* **within tolerance** (:func:`within`) — a value with a standard error against a target: *agrees*
  when ``|value − target| + z·se ≤ tol`` (the interval lies inside the tolerance); *disagrees*
  when ``|value − target| − z·se > tol``; otherwise *inconclusive*.
* **threshold** (:func:`threshold`) — a deterministic quantity against stated thresholds (an exact
  identity, a share of repetitions): the caller states both the "agrees" and the "disagrees"
  condition; anything between is *inconclusive*.

The default thresholds are :data:`ALPHA` (0.05) and :data:`MARGIN` (0.02 in NDCG/MAP units).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "AGREES",
    "ALPHA",
    "DISAGREES",
    "INCONCLUSIVE",
    "MARGIN",
    "ROBUST_RULE",
    "VERDICTS",
    "Finding",
    "Verdict",
    "all_of",
    "better",
    "better_or_comparable",
    "combine_protocols",
    "comparable",
    "equivalence_ci",
    "threshold",
    "within",
]

AGREES = "agrees"
DISAGREES = "disagrees"
INCONCLUSIVE = "inconclusive"
#: the three verdicts, in the order the pages count them
VERDICTS = (AGREES, DISAGREES, INCONCLUSIVE)

#: significance level of every test behind a verdict (two-sided; TOST uses α on each side)
ALPHA = 0.05
#: equivalence margin for "comparable" claims, in units of the measure (NDCG, MAP)
MARGIN = 0.02


@dataclass(frozen=True)
class Verdict:
    """A verdict with the rule that produced it and the numbers the rule looked at."""

    verdict: str
    rule: str
    detail: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}; known: {', '.join(VERDICTS)}")

    @property
    def agrees(self) -> bool | None:
        """``True`` / ``False`` / ``None`` for agrees / disagrees / inconclusive."""
        return {AGREES: True, DISAGREES: False, INCONCLUSIVE: None}[self.verdict]


def equivalence_ci(diffs: Any, alpha: float = ALPHA) -> tuple[float, float, float]:
    """``(mean, low, high)``: the mean of the paired differences and its ``1 − 2α`` Student-t
    confidence interval (NaN pairs dropped; fewer than two pairs give an infinite interval).

    The interval lies inside ``[−δ, δ]`` exactly when both one-sided t-tests of TOST reject at
    level α.
    """
    from scipy import stats

    d = np.asarray(diffs, dtype=np.float64).ravel()
    d = d[~np.isnan(d)]
    if d.size < 2:
        mean = float(d.mean()) if d.size else math.nan
        return mean, -math.inf, math.inf
    mean = float(d.mean())
    se = float(d.std(ddof=1) / math.sqrt(d.size))
    half = float(stats.t.ppf(1.0 - alpha, d.size - 1)) * se
    return mean, mean - half, mean + half


def comparable(
    diffs: Any, *, margin: float = MARGIN, alpha: float = ALPHA, what: str = "A − B"
) -> Verdict:
    """The equivalence rule (TOST) for "A and B are comparable", from per-query ``diffs`` (A − B).

    agrees: the ``1 − 2α`` CI of the mean difference lies inside ``[−margin, margin]``;
    disagrees: it lies entirely outside (``low > margin`` or ``high < −margin``);
    inconclusive otherwise (e.g. a wide interval: too few queries to tell).
    """
    mean, lo, hi = equivalence_ci(diffs, alpha)
    level = 1.0 - 2.0 * alpha
    rule = (
        f"comparable (equivalence, TOST at α = {alpha:g}): agrees if the {level:.0%} CI of the "
        f"mean difference lies inside ±{margin:g}; disagrees if it lies entirely outside "
        f"±{margin:g}; otherwise inconclusive"
    )
    detail = f"{what} = {mean:+.4f}, {level:.0%} CI [{lo:+.4f}, {hi:+.4f}]"
    if lo >= -margin and hi <= margin:
        v = AGREES
    elif lo > margin or hi < -margin:
        v = DISAGREES
    else:
        v = INCONCLUSIVE
    return Verdict(v, rule, detail)


def better(diff: float, p: float, *, alpha: float = ALPHA, what: str = "A − B") -> Verdict:
    """Significance and direction for "A is better than B" (``diff`` = A − B, ``p`` its
    two-sided, possibly adjusted, p-value)."""
    rule = (
        f"better (significance and direction, α = {alpha:g}): agrees if p < {alpha:g} and the "
        f"difference favours the claim; disagrees if p < {alpha:g} against it; otherwise "
        "inconclusive"
    )
    detail = f"{what} = {diff:+.4f}, p = {p:.3g}"
    if math.isfinite(p) and p < alpha and math.isfinite(diff) and diff != 0:
        return Verdict(AGREES if diff > 0 else DISAGREES, rule, detail)
    return Verdict(INCONCLUSIVE, rule, detail)


def better_or_comparable(
    diffs: Any,
    p: float,
    *,
    margin: float = MARGIN,
    alpha: float = ALPHA,
    what: str = "A − B",
) -> Verdict:
    """ "A is better than or comparable to B": agrees when A is significantly better (``p`` < α,
    mean of ``diffs`` > 0) or equivalent within ``margin`` (TOST, as :func:`comparable`);
    disagrees when A is significantly worse; inconclusive otherwise."""
    eq = comparable(diffs, margin=margin, alpha=alpha, what=what)
    mean = float(np.nanmean(np.asarray(diffs, dtype=np.float64))) if np.size(diffs) else math.nan
    bt = better(mean, p, alpha=alpha, what=what)
    rule = (
        f"better or comparable: agrees if significantly better (p < {alpha:g}) or equivalent "
        f"(TOST at α = {alpha:g}: the {1 - 2 * alpha:.0%} CI of the mean difference inside "
        f"±{margin:g}); disagrees if significantly worse (p < {alpha:g}); otherwise inconclusive"
    )
    detail = f"{eq.detail}, p = {p:.3g}"
    if bt.verdict == AGREES or eq.verdict == AGREES:
        return Verdict(AGREES, rule, detail)
    if bt.verdict == DISAGREES:
        return Verdict(DISAGREES, rule, detail)
    return Verdict(INCONCLUSIVE, rule, detail)


def within(
    value: float,
    target: float,
    tol: float,
    *,
    se: float = 0.0,
    z: float = 1.96,
    what: str = "value",
) -> Verdict:
    """``value`` (with standard error ``se``) against ``target``: agrees when the interval
    ``value ± z·se`` lies inside ``target ± tol``; disagrees when it lies entirely outside;
    inconclusive otherwise."""
    gap = value - target
    half = z * se if se and math.isfinite(se) else 0.0
    rule = (
        f"within tolerance: agrees if |{what} − target| + {z:g}·s.e. ≤ {tol:g}; disagrees if "
        f"|{what} − target| − {z:g}·s.e. > {tol:g}; otherwise inconclusive"
    )
    detail = f"{what} {value:.4f} vs target {target:.4f} (gap {gap:+.4f}, s.e. {se:.4f})"
    if not (math.isfinite(value) and math.isfinite(target)):
        return Verdict(INCONCLUSIVE, rule, detail)
    if abs(gap) + half <= tol:
        return Verdict(AGREES, rule, detail)
    if abs(gap) - half > tol:
        return Verdict(DISAGREES, rule, detail)
    return Verdict(INCONCLUSIVE, rule, detail)


def threshold(agree: bool | None, disagree: bool | None, rule: str, detail: str = "") -> Verdict:
    """A verdict from two stated conditions: ``agree`` true gives agrees, else ``disagree``
    true gives disagrees, else inconclusive (``None`` counts as not met). ``rule`` states both
    conditions with their thresholds."""
    if agree:
        return Verdict(AGREES, rule, detail)
    if disagree:
        return Verdict(DISAGREES, rule, detail)
    return Verdict(INCONCLUSIVE, rule, detail)


def all_of(verdicts: Sequence[Verdict], rule: str = "") -> Verdict:
    """A claim made of several parts: agrees when every part agrees, disagrees when any part
    disagrees, inconclusive otherwise. The rule is the parts' common rule (or ``rule``)."""
    if not verdicts:
        return Verdict(INCONCLUSIVE, rule or "no part could be tested")
    rules = list(dict.fromkeys(v.rule for v in verdicts))
    text = rule or (rules[0] if len(rules) == 1 else " / ".join(rules))
    text += "; a claim about several pairs agrees only if every pair agrees and disagrees if any "
    text += "pair disagrees"
    detail = "; ".join(v.detail for v in verdicts if v.detail)
    kinds = [v.verdict for v in verdicts]
    if DISAGREES in kinds:
        return Verdict(DISAGREES, text, detail)
    if all(k == AGREES for k in kinds):
        return Verdict(AGREES, text, detail)
    return Verdict(INCONCLUSIVE, text, detail)


class Finding(NamedTuple):
    """One claim's outcome under one protocol: the claim, what was observed, the verdict."""

    claim: str
    observed: str
    verdict: Verdict


#: how the verdicts under several training protocols make one (printed with every such finding)
ROBUST_RULE = (
    "robust across training protocols: the claim agrees (robust) only if it agrees under every "
    "protocol, and disagrees only if it disagrees under every protocol; when the protocols give "
    "different verdicts the claim is inconclusive and the protocols that flip it are named"
)


def _names(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def combine_protocols(verdicts: Mapping[str, Verdict]) -> tuple[Verdict, bool]:
    """One verdict from a claim's verdicts under several protocols (``{protocol: verdict}``, in
    the order to print them) by :data:`ROBUST_RULE`; returns ``(verdict, robust)`` where
    ``robust`` is True when every protocol gave the same verdict.

    The verdict's rule is the protocols' common rule followed by :data:`ROBUST_RULE`; its detail
    names the verdict under each protocol, e.g. ``"agrees under tuned-gd and line-search;
    disagrees under fixed-gd"``.
    """
    if not verdicts:
        return Verdict(INCONCLUSIVE, ROBUST_RULE, "no protocol was run"), False
    rules = list(dict.fromkeys(v.rule for v in verdicts.values()))
    rule = (rules[0] if len(rules) == 1 else " / ".join(rules)) + "; " + ROBUST_RULE
    groups: dict[str, list[str]] = {}
    for name, v in verdicts.items():
        groups.setdefault(v.verdict, []).append(name)
    if len(groups) == 1:
        kind = next(iter(groups))
        every = "every protocol" if len(verdicts) > 1 else _names(list(verdicts))
        label = {AGREES: "agrees (robust)", DISAGREES: "disagrees (robust)"}.get(
            kind, "inconclusive"
        )
        return Verdict(
            kind, rule, f"{label}: {kind} under {every} ({_names(list(verdicts))})"
        ), True
    order = [k for k in (AGREES, DISAGREES, INCONCLUSIVE) if k in groups]
    text = "; ".join(f"{k} under {_names(groups[k])}" for k in order)
    return Verdict(INCONCLUSIVE, rule, "not robust: " + text), False


#: printed above the findings of every page (HTML)
SUMMARY_HTML = (
    "Every verdict follows from the rule printed under it, with its thresholds. In short: "
    f"tests are two-sided at α = {ALPHA:g}; <i>comparable</i> needs equivalence — the "
    f"{1 - 2 * ALPHA:.0%} confidence interval of the mean paired difference inside ±{MARGIN:g} "
    "(TOST) — so a large p-value alone gives <i>inconclusive</i>, not <i>agrees</i>; "
    f"<i>better</i> needs p &lt; {ALPHA:g} in the claimed direction (p &lt; {ALPHA:g} the other "
    "way: <i>disagrees</i>); values, limits and shares of repetitions are compared with the "
    "thresholds stated in each rule. The rules are described in docs/reproduce.md "
    "(“How verdicts are decided”)."
)
