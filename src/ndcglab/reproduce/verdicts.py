"""How a reproduced claim gets its verdict: "agrees", "disagrees", "inconclusive" or "not testable".

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
  or equivalent within the margin; *disagrees* when A is significantly worse and not equivalent;
  otherwise *inconclusive*. Both "equivalent" and "significantly worse" hold when the difference
  is real but smaller than the margin: equivalence takes precedence (the claim is about
  comparability), the verdict is *agrees*, and its reason says that both hold.
* **within tolerance** (:func:`within`) — a value with a standard error against a target: *agrees*
  when ``|value − target| + z·se ≤ tol`` (the interval lies inside the tolerance); *disagrees*
  when ``|value − target| − z·se > tol``; otherwise *inconclusive*.
* **threshold** (:func:`threshold`) — a deterministic quantity against stated thresholds (an exact
  identity, a share of repetitions): the caller states both the "agrees" and the "disagrees"
  condition; anything between is *inconclusive*.

A claim that rests on a method that failed to train (:mod:`.soundness`) is **not testable**
(:func:`untestable`): it is neither agreement nor disagreement, and the page names the failed run.

The default thresholds are :data:`ALPHA` (0.05) and :data:`MARGIN` (0.02 in NDCG/MAP units).
This module is the one home of the verdict vocabulary (:data:`VERDICTS`), of the counts the pages
print (:func:`verdict_counts`, :func:`counts_text`) and of the rules' text.
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
    "NOT_TESTABLE",
    "ROBUST_RULE",
    "VERDICTS",
    "Finding",
    "Verdict",
    "all_of",
    "better",
    "better_or_comparable",
    "combine_protocols",
    "comparable",
    "counts_text",
    "equivalence_ci",
    "flips",
    "threshold",
    "untestable",
    "verdict_counts",
    "verdict_of",
    "within",
]

AGREES = "agrees"
DISAGREES = "disagrees"
INCONCLUSIVE = "inconclusive"
#: a claim resting on a method that failed to train (:mod:`.soundness`): not decided at all
NOT_TESTABLE = "not testable"
#: the verdicts, in the order the pages count them
VERDICTS = (AGREES, DISAGREES, INCONCLUSIVE, NOT_TESTABLE)

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
    #: one line saying why this verdict (the page's verdict table prints it)
    reason: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}; known: {', '.join(VERDICTS)}")

    @property
    def agrees(self) -> bool | None:
        """``True`` / ``False`` / ``None`` for agrees / disagrees / inconclusive or not testable."""
        return {AGREES: True, DISAGREES: False}.get(self.verdict)


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
        v, why = AGREES, f"equivalent: the {level:.0%} CI lies inside ±{margin:g}"
    elif lo > margin or hi < -margin:
        v, why = DISAGREES, f"not equivalent: the {level:.0%} CI lies outside ±{margin:g}"
    else:
        v, why = INCONCLUSIVE, f"the {level:.0%} CI reaches beyond ±{margin:g}"
    return Verdict(v, rule, detail, f"{why} ({detail})")


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
        if diff > 0:
            return Verdict(AGREES, rule, detail, f"significantly better ({detail})")
        return Verdict(DISAGREES, rule, detail, f"significantly worse ({detail})")
    return Verdict(INCONCLUSIVE, rule, detail, f"not significant at α = {alpha:g} ({detail})")


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
    disagrees when A is significantly worse and not equivalent; inconclusive otherwise.

    Precedence, part of the printed rule: when A is both equivalent within the margin and
    significantly worse (a real difference smaller than the margin), equivalence decides —
    *agrees* — and the verdict's reason and detail say that both hold."""
    eq = comparable(diffs, margin=margin, alpha=alpha, what=what)
    mean = float(np.nanmean(np.asarray(diffs, dtype=np.float64))) if np.size(diffs) else math.nan
    bt = better(mean, p, alpha=alpha, what=what)
    rule = (
        f"better or comparable: agrees if significantly better (p < {alpha:g}) or equivalent "
        f"(TOST at α = {alpha:g}: the {1 - 2 * alpha:.0%} CI of the mean difference inside "
        f"±{margin:g}); disagrees if significantly worse (p < {alpha:g}) and not equivalent; "
        "otherwise inconclusive. When both equivalence and a significant deficit hold (a real "
        "difference smaller than the margin), equivalence takes precedence: agrees, and the page "
        "says both hold"
    )
    detail = f"{eq.detail}, p = {p:.3g}"
    level = f"{1 - 2 * alpha:.0%}"
    if eq.verdict == AGREES and bt.verdict == DISAGREES:
        both = (
            f"both hold: equivalent (the {level} CI lies inside ±{margin:g}) and significantly "
            f"worse (p = {p:.3g} < {alpha:g}); equivalence takes precedence"
        )
        return Verdict(AGREES, rule, f"{detail}; {both}", f"{both} ({eq.detail})")
    if bt.verdict == AGREES:
        return Verdict(AGREES, rule, detail, f"significantly better ({detail})")
    if eq.verdict == AGREES:
        return Verdict(
            AGREES, rule, detail, f"equivalent: the {level} CI lies inside ±{margin:g} ({detail})"
        )
    if bt.verdict == DISAGREES:
        return Verdict(
            DISAGREES, rule, detail, f"significantly worse and not equivalent ({detail})"
        )
    return Verdict(
        INCONCLUSIVE,
        rule,
        detail,
        f"neither significant nor equivalent: the {level} CI reaches beyond ±{margin:g} ({detail})",
    )


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
        return Verdict(INCONCLUSIVE, rule, detail, f"no finite value ({detail})")
    if abs(gap) + half <= tol:
        return Verdict(AGREES, rule, detail, f"within ±{tol:g} of the target ({detail})")
    if abs(gap) - half > tol:
        return Verdict(DISAGREES, rule, detail, f"beyond ±{tol:g} of the target ({detail})")
    return Verdict(
        INCONCLUSIVE, rule, detail, f"the interval straddles ±{tol:g} of the target ({detail})"
    )


def threshold(agree: bool | None, disagree: bool | None, rule: str, detail: str = "") -> Verdict:
    """A verdict from two stated conditions: ``agree`` true gives agrees, else ``disagree``
    true gives disagrees, else inconclusive (``None`` counts as not met). ``rule`` states both
    conditions with their thresholds."""
    tail = f" ({detail})" if detail else ""
    if agree:
        return Verdict(AGREES, rule, detail, "the agreement condition holds" + tail)
    if disagree:
        return Verdict(DISAGREES, rule, detail, "the disagreement condition holds" + tail)
    return Verdict(INCONCLUSIVE, rule, detail, "neither condition holds" + tail)


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
    n = len(kinds)
    if DISAGREES in kinds:
        why = f"{kinds.count(DISAGREES)} of {n} pairs disagree"
        return Verdict(DISAGREES, text, detail, why + _first_reason(verdicts, DISAGREES))
    if all(k == AGREES for k in kinds):
        both = sum("both hold" in v.reason for v in verdicts)
        why = f"all {n} pairs agree" + (
            f" ({both} of them both equivalent and significantly worse)" if both else ""
        )
        return Verdict(AGREES, text, detail, why)
    why = f"{kinds.count(AGREES)} of {n} pairs agree, none disagrees"
    return Verdict(INCONCLUSIVE, text, detail, why + _first_reason(verdicts, INCONCLUSIVE))


def _first_reason(verdicts: Sequence[Verdict], kind: str) -> str:
    """``"; e.g. <reason>"`` of the first part with verdict ``kind`` (``""`` when none has one)."""
    for v in verdicts:
        if v.verdict == kind and v.reason:
            return f"; e.g. {v.reason}"
    return ""


class Finding(NamedTuple):
    """One claim's outcome under one protocol: the claim, what was observed, the verdict, and
    the methods the claim rests on (``rests_on``: a claim about a method that failed to train is
    not testable, :func:`untestable`)."""

    claim: str
    observed: str
    verdict: Verdict
    rests_on: tuple[str, ...] = ()


def untestable(findings: Sequence[Finding], failed: Mapping[str, str]) -> list[Finding]:
    """``findings`` with every claim that rests on a method of ``failed`` (method -> why it
    failed, :func:`.soundness.failed_methods`) made *not testable*; the others unchanged.

    The untestable verdict keeps the rule :data:`.soundness.SOUND_RULE`, its detail the test that
    would have decided it (for the record), its reason the failed method and why.
    """
    from .soundness import SOUND_RULE

    out = []
    for f in findings:
        bad = [m for m in f.rests_on if m in failed]
        if not bad:
            out.append(f)
            continue
        why = "; ".join(f"{m} failed to train ({failed[m]})" for m in bad)
        detail = "not decided" + (
            f"; the test would have said: {f.verdict.detail}" if f.verdict.detail else ""
        )
        out.append(f._replace(verdict=Verdict(NOT_TESTABLE, SOUND_RULE, detail, why)))
    return out


def verdict_of(finding: Mapping[str, Any]) -> str:
    """The verdict of a stored finding (its ``verdict``, else read from ``agrees``)."""
    v = finding.get("verdict")
    if v in VERDICTS:
        return str(v)
    flag = finding.get("agrees")
    return AGREES if flag is True else DISAGREES if flag is False else INCONCLUSIVE


def verdict_counts(findings: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """``{verdict: count}`` over stored ``findings``, every verdict of :data:`VERDICTS`."""
    counts = dict.fromkeys(VERDICTS, 0)
    for f in findings:
        counts[verdict_of(f)] += 1
    return counts


def counts_text(counts: Mapping[str, int]) -> str:
    """``"2 agree, 1 disagree, 3 inconclusive"`` (zeros included), then ``", 1 not testable"``
    when any claim is not testable."""
    text = (
        f"{counts.get(AGREES, 0)} agree, {counts.get(DISAGREES, 0)} disagree, "
        f"{counts.get(INCONCLUSIVE, 0)} inconclusive"
    )
    if counts.get(NOT_TESTABLE, 0):
        text += f", {counts[NOT_TESTABLE]} not testable"
    return text


#: how the verdicts under several training protocols make one (printed with every such finding)
ROBUST_RULE = (
    "robust across training protocols: the claim agrees (robust) only if it agrees under every "
    "protocol that could test it, at least two, and disagrees (robust) only if it disagrees "
    "under every such protocol; "
    "when they give different verdicts the claim is inconclusive and the protocols that flip it "
    "are named; a protocol under which the claim is not testable (a method it rests on failed "
    "to train) is named and left out, and a claim no protocol could test is not testable"
)


def _names(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def combine_protocols(verdicts: Mapping[str, Verdict]) -> tuple[Verdict, bool]:
    """One verdict from a claim's verdicts under several protocols (``{protocol: verdict}``, in
    the order to print them, the primary first) by :data:`ROBUST_RULE`; returns
    ``(verdict, robust)`` where ``robust`` is True when at least two protocols could test the
    claim and all gave the same verdict (or when only one protocol was run).

    The verdict's rule is the protocols' common rule followed by :data:`ROBUST_RULE`; its detail
    names the verdict under each protocol, e.g. ``"agrees under tuned-gd and line-search;
    disagrees under fixed-gd"``; its reason is one line: the primary protocol's reason when the
    protocols agree, else the protocols that flip it. Protocols under which the claim is not
    testable are left out (and named); when none could test it, the claim is not testable.
    """
    if not verdicts:
        return Verdict(
            INCONCLUSIVE, ROBUST_RULE, "no protocol was run", "no protocol was run"
        ), False
    rules = list(dict.fromkeys(v.rule for v in verdicts.values() if v.verdict != NOT_TESTABLE))
    rules = rules or list(dict.fromkeys(v.rule for v in verdicts.values()))
    rule = (rules[0] if len(rules) == 1 else " / ".join(rules)) + "; " + ROBUST_RULE
    untested = [n for n, v in verdicts.items() if v.verdict == NOT_TESTABLE]
    tested = {n: v for n, v in verdicts.items() if v.verdict != NOT_TESTABLE}
    left_out = f"; not testable under {_names(untested)}" if untested else ""
    if not tested:
        first = next(iter(verdicts.values()))
        every = "every protocol" if len(verdicts) > 1 else _names(list(verdicts))
        return Verdict(NOT_TESTABLE, rule, f"not testable under {every}", first.reason), True
    groups: dict[str, list[str]] = {}
    for name, v in tested.items():
        groups.setdefault(v.verdict, []).append(name)
    if len(groups) == 1:
        kind = next(iter(groups))
        every = "every protocol" if len(verdicts) > 1 and not untested else _names(list(tested))
        label = (
            {AGREES: "agrees (robust)", DISAGREES: "disagrees (robust)"}.get(kind, "inconclusive")
            if len(tested) > 1
            else kind
        )
        first_name, first = next(iter(tested.items()))
        reason = first.reason
        if len(verdicts) > 1:
            reason = f"under {first_name}: {reason}" if reason else f"{kind} under {first_name}"
        return Verdict(
            kind,
            rule,
            f"{label}: {kind} under {every} ({_names(list(tested))}){left_out}",
            reason,
        ), len(tested) > 1 or len(verdicts) == 1
    order = [k for k in (AGREES, DISAGREES, INCONCLUSIVE) if k in groups]
    text = "; ".join(f"{k} under {_names(groups[k])}" for k in order) + left_out
    return Verdict(INCONCLUSIVE, rule, "not robust: " + text, "the protocols disagree"), False


def flips(protocols: Mapping[str, Mapping[str, Any]]) -> str:
    """The protocols that flip a claim, from a stored finding's ``protocols`` entry: ``""`` when
    every protocol tested it and gave one verdict, else ``"agrees under a; inconclusive under
    b"``; protocols where the claim was not testable are named last."""
    groups: dict[str, list[str]] = {}
    for name, p in protocols.items():
        groups.setdefault(str(p.get("verdict", INCONCLUSIVE)), []).append(name)
    tested = [k for k in groups if k != NOT_TESTABLE]
    if len(tested) <= 1 and NOT_TESTABLE not in groups:
        return ""
    return "; ".join(f"{k} under {_names(groups[k])}" for k in VERDICTS if k in groups)


#: printed with the rules of every page (HTML)
SUMMARY_HTML = (
    "Every verdict follows from one of the rules listed here, with its thresholds. In short: "
    f"tests are two-sided at α = {ALPHA:g}; <i>comparable</i> needs equivalence — the "
    f"{1 - 2 * ALPHA:.0%} confidence interval of the mean paired difference inside ±{MARGIN:g} "
    "(TOST) — so a large p-value alone gives <i>inconclusive</i>, not <i>agrees</i>; "
    f"<i>better</i> needs p &lt; {ALPHA:g} in the claimed direction (p &lt; {ALPHA:g} the other "
    "way: <i>disagrees</i>); where a claim is both equivalent and significantly worse, "
    "equivalence takes precedence and the reason says both hold; values, limits and shares of "
    "repetitions are compared with the thresholds stated in each rule; a claim resting on a "
    "method that failed to train is <i>not testable</i>. The rules are described in "
    "docs/reproduce.md (“How verdicts are decided”)."
)
