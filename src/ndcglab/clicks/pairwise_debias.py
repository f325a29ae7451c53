"""Pairwise debiasing (Hu, Wang, Peng and Li, "Unbiased LambdaMART: An Unbiased Pairwise
Learning-to-Rank Algorithm", WWW 2019): position biases for clicks and non-clicks estimated
jointly with a pairwise ranker.

Conventions (formulas in docs/clicks.md, "Pairwise debiasing"):

* A **pair** is a clicked document ``d`` at position ``i`` and an unclicked document ``d'`` at
  position ``j`` of the same session (any ``i``, ``j`` <= k). :func:`click_pairs` counts them per
  ``(d, d', i, j)``: the sufficient statistics of the method.
* The ranker minimises ``Σ_pairs c · L(s_d − s_d') / (t⁺_i · t⁻_j)`` with the logistic loss
  ``L(x) = log(1 + e^{−x})`` (``c``: how often the pair was logged).
* Given the ranker, the biases are the paper's closed-form minimisers of the same objective
  with an ``L_p`` regularisation of the biases (``p`` >= 0; 0: none), relative to position 1:
  ``t⁺_i = (Σ_{pairs at (i, ·)} c·L/t⁻_j ÷ Σ_{pairs at (1, ·)} c·L/t⁻_j)^{1/(p+1)}``
  and ``t⁻_j = (Σ_{pairs at (·, j)} c·L/t⁺_i ÷ Σ_{pairs at (·, 1)} c·L/t⁺_i)^{1/(p+1)}``, both
  from the previous round's biases.
* :func:`fit_pairwise` alternates the two steps from ``t⁺ = t⁻ = 1`` with a linear ranker
  ``s = X·w`` (L-BFGS, L2 penalty ``l2·|w|²``). ``t⁺_i`` estimates the click bias of position
  ``i`` relative to position 1 — under the position-based model, ``θ_i / θ_1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DataFormatError, SpecError
from .logs import ClickLog, aligned_to, validate_log

__all__ = [
    "ClickPairs",
    "PairwiseFit",
    "bias_step",
    "click_pairs",
    "fit_pairwise",
    "pair_losses",
    "update_position_biases",
]


@dataclass(frozen=True)
class ClickPairs:
    """Clicked/unclicked pairs of a log, counted per ``(hi, lo, pos_hi, pos_lo)``: ``hi`` the
    clicked document's row, ``lo`` the unclicked one's, positions 1-based, ``count`` how many
    sessions showed the pair so; ``k`` the positions of the log."""

    hi: np.ndarray
    lo: np.ndarray
    pos_hi: np.ndarray
    pos_lo: np.ndarray
    count: np.ndarray
    k: int

    def __len__(self) -> int:
        return len(self.hi)


def click_pairs(log: ClickLog) -> ClickPairs:
    """Every (clicked, unclicked) pair of documents shown in the same session of ``log``,
    counted over sessions (see the module docstring)."""
    k = int(log.k)
    starts = log.session_starts()
    his: list[np.ndarray] = []
    los: list[np.ndarray] = []
    # pairs by the offset between the two rows within a session (sessions are contiguous)
    sess = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
    n = len(log)
    click = np.asarray(log.click, dtype=bool)
    for off in range(1, k):
        a = np.arange(n - off)
        b = a + off
        same = sess[a] == sess[b]
        a, b = a[same], b[same]
        down = click[a] & ~click[b]  # clicked above, unclicked below
        up = ~click[a] & click[b]  # clicked below, unclicked above
        his += [a[down], b[up]]
        los += [b[down], a[up]]
    hi = np.concatenate(his) if his else np.zeros(0, np.int64)
    lo = np.concatenate(los) if los else np.zeros(0, np.int64)
    doc = np.asarray(log.doc, dtype=np.int64)
    pos = np.asarray(log.position, dtype=np.int64)
    key = np.stack([doc[hi], doc[lo], pos[hi], pos[lo]], axis=1)
    if len(key) == 0:
        empty = np.zeros(0, np.int64)
        return ClickPairs(empty, empty, empty, empty, np.zeros(0), k)
    uniq, count = np.unique(key, axis=0, return_counts=True)
    return ClickPairs(uniq[:, 0], uniq[:, 1], uniq[:, 2], uniq[:, 3], count.astype(np.float64), k)


def pair_losses(pairs: ClickPairs, scores: np.ndarray) -> np.ndarray:
    """The logistic loss ``log(1 + exp(−(s_hi − s_lo)))`` of each pair (not weighted)."""
    s = np.asarray(scores, dtype=np.float64)
    return np.asarray(np.logaddexp(0.0, -(s[pairs.hi] - s[pairs.lo])), dtype=np.float64)


def update_position_biases(
    pairs: ClickPairs,
    losses: np.ndarray,
    t_plus: np.ndarray,
    t_minus: np.ndarray,
    *,
    p: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """One bias step: the new ``(t⁺, t⁻)`` (length ``k``, position 1 = 1) from the pairs'
    ``losses`` under the ranker and the previous ``t_plus``, ``t_minus`` (module docstring). A
    position without pairs keeps its previous value."""
    w = pairs.count * np.asarray(losses, dtype=np.float64)
    return bias_step(pairs.pos_hi, pairs.pos_lo, w, t_plus, t_minus, p=p)


def bias_step(
    pos_hi: np.ndarray,
    pos_lo: np.ndarray,
    weighted_losses: np.ndarray,
    t_plus: np.ndarray,
    t_minus: np.ndarray,
    *,
    p: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The closed-form bias step of pairs given by the 1-based positions of their clicked
    (``pos_hi``) and unclicked (``pos_lo``) documents and their losses times how often they
    were logged (``weighted_losses``): ``t⁺_i ∝ (Σ_{pairs at (i, ·)} loss / t⁻_j)^{1/(p+1)}``,
    ``t⁻_j ∝ (Σ_{pairs at (·, j)} loss / t⁺_i)^{1/(p+1)}`` with the previous ``t_plus`` /
    ``t_minus`` (length ``k``), scaled so that position 1 is 1. A position without pairs keeps
    its previous value."""
    if not float(p) >= 0:
        raise SpecError(f"the regularisation p must be >= 0, got {p}").naming("p")
    t_plus = np.asarray(t_plus, dtype=np.float64)
    t_minus = np.asarray(t_minus, dtype=np.float64)
    k = len(t_plus)
    w = np.asarray(weighted_losses, dtype=np.float64)
    ph = np.asarray(pos_hi, dtype=np.int64) - 1
    pl = np.asarray(pos_lo, dtype=np.int64) - 1
    num_plus = np.bincount(ph, weights=w / t_minus[pl], minlength=k)[:k]
    num_minus = np.bincount(pl, weights=w / t_plus[ph], minlength=k)[:k]
    if num_plus[0] <= 0 or num_minus[0] <= 0:
        raise DataFormatError(
            "pairwise debiasing needs clicked and unclicked documents at position 1",
            fix="give a log with clicks at several positions (more sessions)",
        )
    new_plus = t_plus.copy()
    new_minus = t_minus.copy()
    e = 1.0 / (float(p) + 1.0)
    okp, okm = num_plus > 0, num_minus > 0
    new_plus[okp] = (num_plus[okp] / num_plus[0]) ** e
    new_minus[okm] = (num_minus[okm] / num_minus[0]) ** e
    return new_plus, new_minus


@dataclass(frozen=True)
class PairwiseFit:
    """What :func:`fit_pairwise` returns: the linear ranker's ``weights`` (``s = X·w``), the
    click and non-click biases ``t_plus``, ``t_minus`` (position 1 = 1) and their values per
    round (``history``: one ``(t_plus, t_minus)`` per round)."""

    weights: np.ndarray
    t_plus: np.ndarray
    t_minus: np.ndarray
    history: list[tuple[np.ndarray, np.ndarray]]

    def predict(self, features: np.ndarray) -> np.ndarray:
        return np.asarray(np.asarray(features, dtype=np.float64) @ self.weights)


def _ranker_step(
    x: np.ndarray, pairs: ClickPairs, weight: np.ndarray, w0: np.ndarray, l2: float, iters: int
) -> np.ndarray:
    """Minimise ``Σ weight·L(s_hi − s_lo) / Σ weight + l2·|w|²`` over linear ``s = X·w``."""
    from scipy.optimize import minimize

    total = float(weight.sum()) or 1.0
    n = x.shape[0]

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        s = x @ w
        d = s[pairs.hi] - s[pairs.lo]
        loss = float(np.dot(weight, np.logaddexp(0.0, -d))) / total + l2 * float(w @ w)
        g_pair = -weight / (1.0 + np.exp(np.clip(d, -700, 700))) / total  # dL/dd
        g_s = np.bincount(pairs.hi, weights=g_pair, minlength=n) - np.bincount(
            pairs.lo, weights=g_pair, minlength=n
        )
        return loss, np.asarray(x.T @ g_s + 2.0 * l2 * w, dtype=np.float64)

    res = minimize(objective, w0, jac=True, method="L-BFGS-B", options={"maxiter": iters})
    return np.asarray(res.x, dtype=np.float64)


def fit_pairwise(
    dataset: Any,
    log: ClickLog,
    *,
    rounds: int = 5,
    p: float = 0.0,
    l2: float = 1e-3,
    iterations: int = 100,
) -> PairwiseFit:
    """Pairwise debiasing on ``log`` (rows of ``dataset``, a
    :class:`~ndcglab.data.RankingDataset`): ``rounds`` rounds of the ranker step and the bias
    step (:func:`update_position_biases`) from ``t⁺ = t⁻ = 1``; see the module docstring. The
    log is validated against ``dataset`` and aligned to its query order first."""
    if int(rounds) < 1:
        raise SpecError(f"rounds must be at least 1, got {rounds}").naming("rounds")
    validate_log(log, dataset=dataset)
    pairs = click_pairs(aligned_to(log, dataset))
    if len(pairs) == 0:
        raise DataFormatError(
            "the log has no session with both a click and a shown document without one",
            fix="give a log with more sessions",
        )
    x = np.asarray(dataset.features, dtype=np.float64)
    k = pairs.k
    t_plus, t_minus = np.ones(k), np.ones(k)
    w = np.zeros(x.shape[1])
    history: list[tuple[np.ndarray, np.ndarray]] = []
    for _ in range(int(rounds)):
        weight = pairs.count / (t_plus[pairs.pos_hi - 1] * t_minus[pairs.pos_lo - 1])
        w = _ranker_step(x, pairs, weight, w, float(l2), int(iterations))
        losses = pair_losses(pairs, x @ w)
        t_plus, t_minus = update_position_biases(pairs, losses, t_plus, t_minus, p=p)
        history.append((t_plus.copy(), t_minus.copy()))
    return PairwiseFit(w, t_plus, t_minus, history)
