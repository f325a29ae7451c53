"""Is a baseline sound enough to test against? Runs that failed to train, named and set aside.

A claim such as "every method is significantly better than ListMLE" says nothing when ListMLE
itself did not learn. Before any claim is decided, each method trained under a protocol is checked
against two stated conditions (:data:`SOUND_RULE`); a method that meets either *failed to train*
under that protocol:

* **below a trivial ranker** — its mean test value of the headline measure (NDCG@10) over all
  test queries is below that of constant scores: every document tied, so the ranking is the
  preset's tie rule (file order under ``letor3``/``letor4``), evaluated on the same test queries
  under the same preset (:func:`trivial_values`);
* **far from converged** — at least one of its folds stopped at the epoch (iteration) limit, or
  stalled, with the max-norm of the training objective's gradient at the returned weights at least
  :data:`FAR_GRAD` (the training result records both: ``stop_reason`` and ``grad_norm``; Adam and
  AdaRank record no gradient, so only the first condition applies to them).

A failed method is named on the page with its reason, carries no significance mark (nothing is
marked against it), and every claim resting on it is *not testable* under that protocol
(:func:`ndcglab.reproduce.verdicts.untestable`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "FAR_GRAD",
    "SOUND_RULE",
    "TRIVIAL",
    "failed_methods",
    "failed_note",
    "far_from_converged",
    "trivial_values",
    "unmark_details",
]

#: the name of the trivial ranker on the pages
TRIVIAL = "constant scores"

#: a run that stopped at its epoch limit (or stalled) with a gradient max-norm at least this large
#: is far from converged (the line search asks for 1e-6; runs that met a stopping rule on the
#: experiments' data end below 1, while a failed ListMLE on OHSUMED ends at 86–431)
FAR_GRAD = 50.0

#: the headline measure of the below-trivial test
HEADLINE = "ndcg@10"

#: the rule, printed once on every page that has a failed run
SOUND_RULE = (
    "sound baselines: a method failed to train under a protocol when its mean test NDCG@10 over "
    "all test queries is below that of constant scores (every document tied, ranked by the "
    "preset's tie rule, on the same test queries under the same preset), or when a fold of it "
    "stopped at the epoch limit (or stalled) with the max-norm of the objective's gradient "
    f"≥ {FAR_GRAD:g}; a failed method is named, no significance mark is set for or against it, "
    "and every claim resting on it is not testable under that protocol"
)


def trivial_values(
    tests: Sequence[Any], measures: Sequence[str], preset: str | None
) -> dict[str, np.ndarray]:
    """Per-query values of constant scores on the test sets ``tests`` (in fold order), for every
    measure: ``{measure: values of every test query}`` (the folds concatenated, as the experiments'
    per-query stores are)."""
    from ..measures import evaluate

    parts: dict[str, list[np.ndarray]] = {m: [] for m in measures}
    for ds in tests:
        res = evaluate(ds, np.zeros(ds.n_docs), list(measures), preset=preset)
        for m, printed in zip(measures, [str(x) for x in res.measures]):
            parts[m].append(np.asarray(res.per_query[printed], dtype=np.float64))
    return {m: np.concatenate(v) if v else np.zeros(0) for m, v in parts.items()}


def far_from_converged(fit: Any) -> bool:
    """Whether one training run stopped at its limit (or stalled) with a gradient max-norm of at
    least :data:`FAR_GRAD` (False when the run records no gradient: Adam, AdaRank)."""
    g = getattr(fit, "grad_norm", None)
    if g is None or not math.isfinite(float(g)):
        return False
    return str(getattr(fit, "stop_reason", "")) in ("max_epochs", "stalled") and g >= FAR_GRAD


def failed_methods(
    means: Mapping[str, float],
    fits: Sequence[tuple[str, str, Any]],
    trivial: Mapping[str, np.ndarray],
    *,
    measure: str = HEADLINE,
    label: str = "NDCG@10",
) -> dict[str, str]:
    """The methods of one protocol that failed to train, ``{method: one-line reason}``.

    ``means`` maps each method to its mean test value of ``measure`` over all test queries;
    ``fits`` are the protocol's training runs ``(fold, method, Fitted)``; ``trivial`` the
    per-query values of constant scores (:func:`trivial_values`).
    """
    base = float(np.nanmean(trivial[measure])) if trivial[measure].size else math.nan
    out: dict[str, str] = {}
    for name, mean in means.items():
        reasons = []
        if math.isfinite(base) and math.isfinite(mean) and mean < base:
            reasons.append(f"test {label} {mean:.3f} below constant scores {base:.3f}")
        runs = [fit for _, n, fit in fits if n == name]
        far = [f for f in runs if far_from_converged(f)]
        if far:
            g = [float(f.grad_norm) for f in far]
            span = f"{min(g):.3g}" if len(g) == 1 else f"{min(g):.3g}–{max(g):.3g}"
            reasons.append(
                f"{len(far)} of {len(runs)} folds at the epoch limit with |∇|∞ {span} "
                f"(≥ {FAR_GRAD:g})"
            )
        if reasons:
            out[name] = "; ".join(reasons)
    return out


def unmark_details(
    header: Sequence[str], rows: Sequence[Sequence[Any]], failed: Mapping[str, str]
) -> list[list[Any]]:
    """The rows of a significance details table (``ComparisonResult.details``) with the
    ``mark`` of every test whose system or baseline failed to train replaced by ``"— (failed
    run)"``; other rows unchanged."""
    cols = list(header)
    if "mark" not in cols or not failed:
        return [list(r) for r in rows]
    j, si, bi = cols.index("mark"), cols.index("system"), cols.index("baseline")
    out = []
    for r in rows:
        r = list(r)
        if r[si] in failed or r[bi] in failed:
            r[j] = "— (failed run)"
        out.append(r)
    return out


def failed_note(failed: Mapping[str, str], protocol: str) -> str:
    """The sentence under a table with marks: which methods carry none, and why (``""`` when
    none failed)."""
    if not failed:
        return ""
    names = ", ".join(failed)
    return (
        f"no marks for or against {names}: failed to train under {protocol} "
        "(see “Failed to train” at the top)"
    )
