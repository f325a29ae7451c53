"""A warning when labels lie beyond the grades a table gain knows (the LETOR scripts' 0, 1, 2).

The LETOR evaluation scripts (LETOR 3.0's ``Eval-Score-3.0.pl``, LETOR 4.0's
``Eval-Score-4.0.pl``) know the grades 0, 1 and 2: their gain table is ``0 → 0, 1 → 1, 2 → 3``,
and a label they do not know gets gain 0 and is not relevant (``rel=letor``: labels 1 and 2).
The ``letor3`` and ``letor4`` presets do the same, which silently turns a graded collection's
best documents (label 3 or 4, e.g. MSLR-WEB) into irrelevant ones; :func:`warn_beyond_grades`
says so once per evaluation, with the count, an example and the fix. Any table gain
(``gain=table:...``) with labels above its largest key gets the same warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._spec import format_number
from .._warn import warn_user
from .gains import TableGain, get_gain

__all__ = ["warn_beyond_grades"]


def _known_grades(measure: Any) -> tuple[float, str] | None:
    """The largest label ``measure`` gives a gain or relevance to, and the rule's name; ``None``
    when every label counts (an exp2 or linear gain, a numeric ``rel``)."""
    gain = measure.get("gain")
    if isinstance(gain, str):
        gain = get_gain(gain)
    if isinstance(gain, TableGain) and gain.default == 0.0 and gain.table:
        return max(k for k, _ in gain.table), f"gain={gain.name}"
    if str(measure.get("rel", "")) == "letor":
        return 2.0, "rel=letor"
    return None


def warn_beyond_grades(
    preset_name: str,
    resolved: Sequence[Any],
    labels: np.ndarray,
    boundaries: np.ndarray,
    query_ids: Sequence[Any] | np.ndarray,
) -> None:
    """Warn (once) when some of ``labels`` exceed the grades a resolved measure's table gain or
    ``rel=letor`` rule knows: those documents get gain 0 and are not relevant."""
    rules = [g for g in (_known_grades(m) for m in resolved) if g is not None]
    if not rules or len(labels) == 0:
        return
    top = min(r[0] for r in rules)
    beyond = labels > top
    n = int(beyond.sum())
    if n == 0:
        return
    i = int(np.flatnonzero(beyond)[0])
    q = int(np.searchsorted(boundaries, i, side="right")) - 1
    names = ", ".join(sorted({r[1] for r in rules}))
    largest = format_number(float(labels.max()))
    warn_user(
        f"preset {preset_name} ({names}) knows the grades up to {format_number(top)}, as the "
        f"LETOR evaluation scripts do, but {n} document(s) have higher labels (up to {largest}; "
        f"first in query {query_ids[q]!s}): they get gain 0 and do not count as relevant. "
        "Fix: for labels beyond 2 use a graded preset (--preset standard or trec_eval), or "
        "map the labels to 0..2"
    )
