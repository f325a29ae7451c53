"""Numerical NDCG-consistency audit of any registered loss.

Ravikumar, Tewari and Yang, "On NDCG Consistency of Listwise Ranking Methods" (AISTATS 2011):
a surrogate L is NDCG-consistent iff, for every distribution p over label vectors y of a list,
every minimiser s* of the expected loss ``Σ_y p(y) L(s, y)`` is *order preserving* for the
expected normalised gains ``η = E[G(y) / Z(y)]`` (Z(y) the DCG norm, IDCG): η_i > η_j implies
s*_i > s*_j. For NDCG@k the norm is Z_k(y) = IDCG@k(y) and only the top k matter: a document j
that s* places in its top k must not sit above (or tie with) a document i with η_i > η_j.

The audit checks this condition numerically:

* :func:`draw_distributions` draws small label distributions — lists of 3–5 documents, graded
  labels 0..2 or 0..3, 2–4 label vectors with Dirichlet probabilities. Half of them are
  *adversarial*: drawn until the order of η strictly differs from the order of a rival target that
  an inconsistent surrogate might follow instead (E[G], E[y], E[G/‖G‖₂], E[softmax(G)],
  E[softmax(y)]).
* :func:`minimise_expected_loss` minimises the expected loss over s in float64 with torch's
  L-BFGS (strong Wolfe line search, gradient tolerance 1e-10), from s = 0 and from ``restarts −
  1`` random starts, keeping the lowest value (exact for convex losses, a local search for the
  others). Losses that draw random numbers (ListMLE's tie breaking, Gumbel-ApproxNDCG's noise)
  are averaged over 64 draws made by separate calls of the loss (64 calls; a loss that averages
  ``samples`` draws itself, Gumbel-ApproxNDCG, ⌈64 / samples⌉ calls: 8 with its default 8), each
  call with its own draw from one generator reseeded at every evaluation (common random
  numbers), so the objective is a fixed function of s: a sample average of the expected loss
  over the randomness. Separate calls, because the registry's randomness rule gives every list
  of one call the same draws. A distribution that
  fails is minimised again from 4 starts with other seeds, and counts as a counter-example only
  if that minimiser fails too (so a start that stopped early cannot make a loss "not consistent").
  Before that, s* rearranged into η's order (its largest value to the largest η, …) is used as
  one more start of the *same* objective: if it reaches a strictly lower expected loss, s* was
  not the minimiser and the new point is checked instead (a non-convex loss whose sigmoids
  saturate, such as Gumbel-ApproxNDCG, can stop L-BFGS at a wrongly ordered point with a
  vanishing gradient).
* :func:`check_distribution` compares s* with η. Only strict differences count: a pair (i, j)
  violates the condition when ``η_i − η_j > margin · max_l |η_l|`` (``margin`` 1e-3 by default)
  while ``s*_i − s*_j ≤ 1e-6 · spread(s*)`` (spread = max − min; a tie counts as a violation, as
  a tie may be broken the wrong way) and j is within the top k of s*.
* :func:`audit_loss` gives the verdict: ``"not consistent"`` with the counter-example (the
  distribution whose violated η gap is largest), or ``"consistent"`` meaning *no counter-example
  among the distributions tried* (numerical evidence, not a proof). Losses of kind ``boosting``
  (AdaRank) are ``"skipped"``: they have no differentiable value to minimise.
* :func:`audit_all` runs every loss in the registry at call time.

Conventions: the measure is an ``ndcg`` spec (default: the ``standard`` preset, exp2 gain, log
discount, whole list); its gain and discount define η. A loss is used as named, with its own
defaults (``listnet``'s gain is linear, the ``consistent_*`` losses' gain and discount are the
standard preset's), so a loss whose own gain differs from the measure's is audited for the
measure asked. The ideal DCG, the cut-off, the ``short`` rule and which label vectors are empty
(IDCG = 0; they contribute 0 to η) are the measure's conventions
(:func:`expected_normalised_gains`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _compat
from ..errors import ConventionError, NdcglabError

__all__ = [
    "AuditResult",
    "DistributionCheck",
    "LabelDistribution",
    "audit_all",
    "audit_loss",
    "check_distribution",
    "draw_distributions",
    "eta_ordered",
    "expected_normalised_gains",
    "minimise_expected_loss",
    "random_calls",
    "table_markdown",
]

#: relative margin on η below which two documents count as tied
DEFAULT_MARGIN = 1e-3
#: relative tolerance on scores: s_i − s_j ≤ SCORE_TOL · spread(s) counts as "not above"
SCORE_TOL = 1e-6
#: draws averaged for a loss that uses random numbers
RANDOM_DRAWS = 64
#: starts of the minimiser when a counter-example is confirmed
CONFIRM_RESTARTS = 4

VERDICTS = ("consistent", "not consistent", "skipped", "undetermined")


# --------------------------------------------------------------------------- measure
@dataclass(frozen=True)
class _Ndcg:
    """The audited NDCG: its printed spec, the measure with every option set (by the ``standard``
    preset where the spec leaves one unset), and its gain and discount objects."""

    spec: str
    measure: Any  # Measure, resolved
    gain: Any
    discount: Any

    @property
    def cutoff(self) -> Any:  # Cutoff | None
        return self.measure.cutoff

    def k(self, m: int) -> int:
        """The cut-off of a list of ``m`` documents (the whole list without one), by the
        measure's rounding rule (:func:`~ndcglab.measures.conventions.cutoff_k`); it may exceed
        ``m`` (a fixed k), and the sums stop at the list's end."""
        from ..measures.conventions import cutoff_k

        rounding = self.measure.get("rounding")
        return int(cutoff_k(self.cutoff, rounding, np.array([m]), np.array([m]))[0])


def _measure(spec: str) -> _Ndcg:
    from ..measures import parse_measure
    from ..measures.registry import resolve_discount, resolve_gain

    m = parse_measure(spec)
    if m.name != "ndcg":
        raise ConventionError(
            f"the consistency audit needs an ndcg measure, got {spec!r} — the measure argument — "
            "Fix: e.g. measure='ndcg' or measure='ndcg(gain=linear)@3'"
        ).naming("measure")
    return _Ndcg(str(m), m.resolve(), resolve_gain(m), resolve_discount(m))


# --------------------------------------------------------------------------- distributions
@dataclass(frozen=True)
class LabelDistribution:
    """A distribution over the label vectors of one list: ``labels`` (V, M) integers, ``probs``
    (V,) summing to 1, and how it was drawn (``kind``: ``random`` or ``adversarial vs <rival>``)."""

    labels: np.ndarray
    probs: np.ndarray
    kind: str = "random"

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": self.labels.astype(int).tolist(),
            "probs": [float(p) for p in self.probs],
            "kind": self.kind,
        }

    def text(self) -> str:
        parts = [
            f"y = ({', '.join(str(int(v)) for v in row)}) with p = {p:.4f}"
            for row, p in zip(self.labels, self.probs)
        ]
        return "; ".join(parts)


def _gains(measure: _Ndcg, labels: np.ndarray) -> np.ndarray:
    return np.asarray(measure.gain(labels.astype(np.float64)), dtype=np.float64)


def expected_normalised_gains(dist: LabelDistribution, measure: str | _Ndcg = "ndcg") -> np.ndarray:
    """η = E_p[G(y) / Z_k(y)] per document (M,), Z_k(y) = IDCG@k(y), by the measure's
    conventions (:mod:`ndcglab.measures.conventions`): the ideal DCG of :func:`dcg_at` over
    :func:`ideal_gains`, the cut-off of :func:`cutoff_k`, the ``short`` rule of
    :func:`apply_short`, and :func:`normalise` for the empty label vectors (IDCG = 0), which
    contribute 0 whatever the ``empty`` rule: their NDCG is the same for every ranking (or left
    out of the mean, a common factor of the others), so it cannot change which order is best."""
    from ..measures.conventions import apply_short, dcg_at, ideal_gains, normalise

    meas = _measure(measure) if isinstance(measure, str) else measure
    g = _gains(meas, dist.labels)
    m = g.shape[1]
    z = dcg_at(ideal_gains(g), meas.discount.table(m), meas.k(m), m)
    u, empty = normalise(g, z[:, None])
    u = apply_short(meas.measure, np.where(empty, 0.0, u), m)
    return np.asarray(dist.probs @ u, dtype=np.float64)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def _rivals(meas: _Ndcg) -> list[tuple[str, Callable[[LabelDistribution], np.ndarray]]]:
    def expect(f: Callable[[np.ndarray], np.ndarray]) -> Callable[[LabelDistribution], np.ndarray]:
        return lambda dist: np.asarray(dist.probs @ f(dist.labels.astype(np.float64)))

    def g(y: np.ndarray) -> np.ndarray:
        return _gains(meas, y)

    def g_l2(y: np.ndarray) -> np.ndarray:
        gy = g(y)
        n = np.linalg.norm(gy, axis=1, keepdims=True)
        return np.asarray(np.where(n > 0, gy / np.where(n > 0, n, 1.0), 0.0))

    return [
        ("E[G]", expect(g)),
        ("E[G/|G|_2]", expect(g_l2)),
        ("E[softmax(y)]", expect(_softmax)),
        ("E[softmax(G)]", expect(lambda y: _softmax(g(y)))),
        ("E[y]", expect(lambda y: y)),
    ]


def _order_differs(eta: np.ndarray, other: np.ndarray, margin: float) -> bool:
    """Some pair is strictly ordered one way by ``eta`` and strictly the other way by ``other``."""
    te = margin * max(float(np.abs(eta).max()), 1e-300)
    to = margin * max(float(np.abs(other).max()), 1e-300)
    de = eta[:, None] - eta[None, :]
    do = other[:, None] - other[None, :]
    return bool(np.any((de > te) & (do < -to)))


def _random_distribution(rng: np.random.Generator) -> LabelDistribution:
    m = int(rng.integers(3, 6))
    top = int(rng.choice([2, 3]))
    v = int(rng.integers(2, 5))
    labels = rng.integers(0, top + 1, size=(v, m))
    # make the vectors differ in how many relevant documents they hold (sparse vs dense lists
    # are what separate E[G] from E[G/Z])
    if rng.random() < 0.5:
        labels[0] = 0
        labels[0, rng.integers(m)] = rng.integers(1, top + 1)
    probs = rng.dirichlet(np.ones(v))
    return LabelDistribution(labels.astype(np.int64), probs)


def draw_distributions(
    count: int,
    *,
    seed: int = 0,
    measure: str = "ndcg",
    adversarial: float = 0.5,
    margin: float = DEFAULT_MARGIN,
) -> list[LabelDistribution]:
    """``count`` label distributions, seeded. A share ``adversarial`` of them (cycling over the
    rival targets, first) are drawn until η's order strictly differs (by 10 × ``margin``) from the
    rival's; the rest are plain random draws (see the module docstring)."""
    if count < 1:
        raise ConventionError(
            f"count must be >= 1, got {count} — draw_distributions — Fix: e.g. count=60"
        )
    meas = _measure(measure)
    rng = np.random.default_rng(seed)
    rivals = _rivals(meas)
    n_adv = round(count * adversarial)
    out: list[LabelDistribution] = []
    for i in range(n_adv):
        name, target = rivals[i % len(rivals)]
        for _ in range(5000):
            d = _random_distribution(rng)
            eta = expected_normalised_gains(d, meas)
            if _order_differs(eta, target(d), 10 * margin):
                out.append(LabelDistribution(d.labels, d.probs, f"adversarial vs {name}"))
                break
    while len(out) < count:
        out.append(_random_distribution(rng))
    return out


# --------------------------------------------------------------------------- minimisation
def _is_random(loss: Any, labels: Any, torch: Any) -> bool:
    s = torch.linspace(-1.0, 1.0, labels.shape[1], dtype=torch.float64).expand_as(labels)
    a = loss(s, labels, generator=torch.Generator().manual_seed(1))
    b = loss(s, labels, generator=torch.Generator().manual_seed(2))
    return not bool(torch.equal(a, b))


def random_calls(loss: Any) -> int:
    """Calls of a random loss averaged by the audit: ``RANDOM_DRAWS`` draws in all, a loss that
    averages ``samples`` draws itself (Gumbel-ApproxNDCG) being called ``⌈RANDOM_DRAWS /
    samples⌉`` times."""
    params = getattr(loss, "params", None)
    per_call = params.get("samples", 1) if isinstance(params, Mapping) else 1
    try:
        per_call = max(1, int(per_call))
    except (TypeError, ValueError):
        per_call = 1
    return max(1, -(-RANDOM_DRAWS // per_call))


def eta_ordered(scores: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """``scores``' values rearranged into the order of ``eta``: the largest score goes to the
    document of largest η, and so on (ties of η in document order)."""
    s = np.asarray(scores, dtype=np.float64)
    out = np.empty_like(s)
    out[np.argsort(-np.asarray(eta, dtype=np.float64), kind="stable")] = np.sort(s)[::-1]
    return out


def minimise_expected_loss(
    loss: Any,
    dist: LabelDistribution,
    *,
    restarts: int = 2,
    seed: int = 0,
    max_iter: int = 500,
    starts: Sequence[np.ndarray] = (),
) -> tuple[np.ndarray, float]:
    """``(s*, value)``: the lowest expected loss found and its scores (M,), float64.

    Restart 0 starts from s = 0, the others from N(0, 1) draws (seeded), then each of the
    explicit ``starts`` (``restarts=0`` with ``starts``: only those); each runs torch's L-BFGS
    (strong Wolfe, gradient tolerance 1e-10). A random loss's objective depends on ``seed`` only
    (its draws), so two calls with the same ``seed`` minimise the same function. Raises
    :class:`NdcglabError` when the loss is not finite at every start."""
    torch = _compat.torch()
    from ..losses import get_loss

    fn = get_loss(loss)
    y = torch.as_tensor(dist.labels, dtype=torch.float64)
    p = torch.as_tensor(dist.probs, dtype=torch.float64)
    # a random loss: RANDOM_DRAWS separate calls from one generator seeded afresh at every
    # evaluation (common random numbers). Separate calls, not one call on repeated rows: the
    # registry's randomness rule gives every list of one call the same draws (ListMLE's tie
    # order, the Gumbel noise table), so repeated rows would all see a single draw.
    draw_seed: int | None = seed + 12345 if _is_random(fn, y, torch) else None
    draws = random_calls(fn) if draw_seed is not None else 1
    v, m = y.shape
    rng = np.random.default_rng(seed)
    best: tuple[np.ndarray, float] | None = None
    seeded = max(1, restarts) if (restarts > 0 or not starts) else 0
    points = [np.zeros(m) if r == 0 else rng.standard_normal(m) for r in range(seeded)]
    for start in [*points, *(np.asarray(x, dtype=np.float64) for x in starts)]:
        s = torch.tensor(start, dtype=torch.float64, requires_grad=True)

        def objective(s: Any = s) -> Any:
            gen = None if draw_seed is None else torch.Generator().manual_seed(draw_seed)
            sv = s.unsqueeze(0).expand(v, m)
            total = (p * fn(sv, y, generator=gen)).sum()
            for _ in range(draws - 1):  # gen advances: each call draws its own seed
                total = total + (p * fn(sv, y, generator=gen)).sum()
            return total / draws

        opt = torch.optim.LBFGS(
            [s],
            lr=1.0,
            max_iter=max_iter,
            tolerance_grad=1e-10,
            tolerance_change=1e-14,
            history_size=20,
            line_search_fn="strong_wolfe",
        )

        def closure(opt: Any = opt, objective: Any = objective, s: Any = s) -> Any:
            opt.zero_grad()
            val = objective()
            if val.requires_grad:
                val.backward()
            return val

        try:
            opt.step(closure)
        except RuntimeError:  # pragma: no cover - a loss that breaks on some scores
            continue
        with torch.no_grad():
            val = float(objective())
        sv = s.detach().numpy().copy()
        if not (math.isfinite(val) and np.all(np.isfinite(sv))):
            continue
        if best is None or val < best[1]:
            best = (sv, val)
    if best is None:
        raise NdcglabError(
            f"loss {fn.name!r}: the expected loss is not finite at any start — "
            f"distribution {dist.text()} — Fix: check the loss on these labels"
        )
    return best


# --------------------------------------------------------------------------- checking
@dataclass(frozen=True)
class DistributionCheck:
    """One distribution checked: η, the minimiser s*, and the violating pairs ``(i, j)`` (0-based:
    η_i > η_j strictly, yet j is not below i in s* and j is in s*'s top k)."""

    dist: LabelDistribution
    eta: np.ndarray
    scores: np.ndarray
    violations: tuple[tuple[int, int], ...]
    gap: float  # the largest η_i − η_j over the violating pairs (0 if none)

    @property
    def ok(self) -> bool:
        return not self.violations

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.dist.to_dict(),
            "eta": [float(x) for x in self.eta],
            "scores": [float(x) for x in self.scores],
            "violations": [list(v) for v in self.violations],
            "gap": self.gap,
        }

    def text(self) -> str:
        def vec(x: np.ndarray) -> str:
            return "(" + ", ".join(f"{v:.4g}" for v in x) + ")"

        pairs = ", ".join(f"doc {i + 1} vs doc {j + 1}" for i, j in self.violations)
        return (
            f"{self.dist.text()}\n"
            f"    E[G/Z] = {vec(self.eta)}\n"
            f"    s*     = {vec(self.scores)}\n"
            f"    wrong order: {pairs} (largest E[G/Z] gap {self.gap:.4g})"
        )


def check_distribution(
    eta: np.ndarray, scores: np.ndarray, k: int, margin: float = DEFAULT_MARGIN
) -> tuple[tuple[tuple[int, int], ...], float]:
    """The violating pairs of ``scores`` against ``eta`` for NDCG@k (module docstring) and the
    largest η gap among them."""
    eta = np.asarray(eta, dtype=np.float64)
    s = np.asarray(scores, dtype=np.float64)
    te = margin * max(float(np.abs(eta).max()), 1e-300)
    ts = SCORE_TOL * float(s.max() - s.min())
    m = len(s)
    # documents strictly above j (by more than the tolerance): j is in the top k when < k
    above = np.array([int(np.sum(s > s[j] + ts)) for j in range(m)])
    bad: list[tuple[int, int]] = []
    gap = 0.0
    for i in range(m):
        for j in range(m):
            if eta[i] - eta[j] > te and s[i] - s[j] <= ts and above[j] < k:
                bad.append((i, j))
                gap = max(gap, float(eta[i] - eta[j]))
    return tuple(bad), gap


# --------------------------------------------------------------------------- audit
@dataclass
class AuditResult:
    """The verdict for one loss and one measure (see the module docstring)."""

    loss: str
    measure: str
    verdict: str
    distributions: int = 0
    failures: int = 0
    counter_example: DistributionCheck | None = None
    reason: str = ""
    seconds: float = 0.0
    restarts: int = 0
    margin: float = DEFAULT_MARGIN
    declared: bool | None = None
    kinds: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "loss": self.loss,
            "measure": self.measure,
            "verdict": self.verdict,
            "distributions": self.distributions,
            "failures": self.failures,
            "counter_example": None
            if self.counter_example is None
            else self.counter_example.to_dict(),
            "reason": self.reason,
            "seconds": round(self.seconds, 3),
            "restarts": self.restarts,
            "margin": self.margin,
            "declared_consistent": self.declared,
        }

    def text(self) -> str:
        head = f"{self.loss} for {self.measure}: {self.verdict.upper()}"
        if self.verdict == "skipped":
            return f"{head} ({self.reason})"
        lines = [
            head,
            f"  {self.distributions} label distributions, {self.failures} with a wrong order; "
            f"minimiser: L-BFGS (float64), {self.restarts} start(s); ties: E[G/Z] gaps below "
            f"{self.margin:g} x max E[G/Z] ignored ({self.seconds:.1f} s)",
        ]
        if self.reason:
            lines.append(f"  {self.reason}")
        if self.counter_example is not None:
            lines.append("  counter-example: " + self.counter_example.text())
        elif self.verdict == "consistent":
            lines.append("  no counter-example found (numerical evidence, not a proof)")
        return "\n".join(lines)


def audit_loss(
    loss: str,
    measure: str = "ndcg",
    *,
    distributions: Sequence[LabelDistribution] | None = None,
    count: int = 60,
    seed: int = 0,
    restarts: int = 2,
    margin: float = DEFAULT_MARGIN,
    stop_at_first: bool = False,
) -> AuditResult:
    """Audit one loss (a spec string) for an ndcg ``measure`` on ``distributions`` (default:
    :func:`draw_distributions` with ``count`` and ``seed``). ``stop_at_first``: stop at the first
    counter-example (faster; the counter-example is then that one)."""
    from ..losses import get_loss

    fn = get_loss(loss)
    meas = _measure(measure)
    declared = getattr(type(fn), "ndcg_consistent", None)
    if fn.kind != "differentiable":
        return AuditResult(
            fn.name,
            meas.spec,
            "skipped",
            reason=f"kind {fn.kind!r}: no differentiable loss value to minimise (it is trained "
            "by boosting, not by a surrogate)",
            declared=declared,
        )
    dists = (
        list(distributions)
        if distributions is not None
        else draw_distributions(count, seed=seed, measure=measure, margin=margin)
    )
    t0 = time.perf_counter()
    worst: DistributionCheck | None = None
    failures = 0
    done = 0
    errors = 0
    unconfirmed = 0
    for n, d in enumerate(dists):
        try:
            s, value = minimise_expected_loss(fn, d, restarts=restarts, seed=seed + n)
        except NdcglabError:
            errors += 1
            continue
        done += 1
        eta = expected_normalised_gains(d, meas)
        bad, gap = check_distribution(eta, s, meas.k(len(s)), margin)
        if bad:  # s* rearranged into η's order: the same objective, a lower value refutes s*
            s_eta, v_eta = minimise_expected_loss(
                fn, d, restarts=0, seed=seed + n, starts=[eta_ordered(s, eta)]
            )
            if v_eta < value - 1e-9 * max(1.0, abs(value)):
                s = s_eta
                bad, gap = check_distribution(eta, s, meas.k(len(s)), margin)
                unconfirmed += not bad
        if bad:  # confirm from more starts before counting it
            try:
                s, _ = minimise_expected_loss(
                    fn, d, restarts=max(restarts, CONFIRM_RESTARTS), seed=seed + n + 7919
                )
            except NdcglabError:  # pragma: no cover - finite once, so finite again
                pass
            bad, gap = check_distribution(eta, s, meas.k(len(s)), margin)
            unconfirmed += not bad
        if bad:
            failures += 1
            if worst is None or gap > worst.gap:
                worst = DistributionCheck(d, eta, s, bad, gap)
            if stop_at_first:
                break
    if worst is not None:
        verdict = "not consistent"
    elif done == 0:
        verdict = "undetermined"
    else:
        verdict = "consistent"
    notes = []
    if errors:
        notes.append(f"{errors} distribution(s) without a finite minimum skipped")
    if unconfirmed:
        notes.append(f"{unconfirmed} wrong order(s) not confirmed from more starts (not counted)")
    reason = "; ".join(notes)
    return AuditResult(
        fn.name,
        meas.spec,
        verdict,
        distributions=done,
        failures=failures,
        counter_example=worst,
        reason=reason,
        seconds=time.perf_counter() - t0,
        restarts=restarts,
        margin=margin,
        declared=declared,
    )


def audit_all(
    measure: str = "ndcg",
    *,
    count: int = 60,
    seed: int = 0,
    restarts: int = 2,
    margin: float = DEFAULT_MARGIN,
    losses: Sequence[str] | None = None,
) -> list[AuditResult]:
    """:func:`audit_loss` on every loss registered now (or on ``losses``), on one shared set of
    distributions; boosting losses are skipped with their reason."""
    from ..losses import available_losses

    names = list(losses) if losses is not None else available_losses()
    dists = draw_distributions(count, seed=seed, measure=measure, margin=margin)
    out = []
    for n in names:
        try:
            r = audit_loss(
                n, measure, distributions=dists, seed=seed, restarts=restarts, margin=margin
            )
        except NdcglabError as exc:  # one loss that cannot be audited does not stop the others
            r = AuditResult(n, _measure(measure).spec, "undetermined", reason=str(exc))
        out.append(r)
    return out


def table_markdown(results: Sequence[AuditResult]) -> str:
    """The results as a Markdown table (one row per loss)."""
    rows = [
        "| loss | verdict | distributions with a wrong order | declared (Ravikumar et al.) |",
        "|---|---|---|---|",
    ]
    for r in results:
        declared = {True: "consistent", False: "not consistent", None: "—"}[r.declared]
        if r.verdict == "skipped":
            rows.append(f"| `{r.loss}` | skipped ({r.reason}) | — | {declared} |")
        else:
            rows.append(
                f"| `{r.loss}` | **{r.verdict}** | {r.failures} / {r.distributions} | {declared} |"
            )
    return "\n".join(rows)
