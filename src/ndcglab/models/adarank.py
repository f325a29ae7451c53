"""AdaRank (Xu & Li, SIGIR 2007): boosting over single-feature weak rankers for an IR measure.

Weak rankers are the features themselves, ``h_k(x) = x_k`` (normalise features first so that their
scales are comparable; training uses the ``normalize`` option). With ``E(π, y) ∈ [0, 1]`` the
per-query value of the chosen measure (NDCG@k or MAP under a preset, computed by
:mod:`ndcglab.measures`) and ``Q`` training queries:

1. ``P_1(q) = 1/Q``.
2. Round t: pick ``k_t = argmax_k Σ_q P_t(q) E(h_k, q)`` over every feature except the one picked
   in round t−1 (re-picking it cannot change the ranking; RankLib's rule);
   ``α_t = ½ ln( Σ_q P_t(q)(1 + E(h_{k_t}, q)) / Σ_q P_t(q)(1 − E(h_{k_t}, q)) )``.
3. ``f_t = Σ_{s ≤ t} α_s h_{k_s}`` (a linear model); ``P_{t+1}(q) ∝ exp(−E(f_t, q))``.
4. Stop after ``rounds`` rounds, or when the selection score — on the validation set if one is
   given (with the training's validation measure), else the boosted measure on the training set —
   has not improved by more than ``tol`` for ``patience`` rounds; the best-scoring ``f_t`` is kept.

The fitted model is linear: :meth:`AdaRank.forward` is ``<w, x>`` with ``w_k = Σ_{t: k_t = k} α_t``,
so it scores, saves and loads like any :class:`~ndcglab.models.RankModel`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import SpecError
from .base import RankModel, torch

__all__ = ["DEFAULT_PATIENCE", "AdaRank"]

#: rounds without improvement of the selection score before AdaRank stops
DEFAULT_PATIENCE = 20


class AdaRank(RankModel):
    """A boosted linear combination of single features; see the module docstring.

    Parameters: ``measure`` (inside the boosting and for selection, default ``ndcg@10``),
    ``preset`` (its conventions, default ``letor4``), ``rounds`` T (default 500), ``patience``
    (rounds without improvement before stopping, default 20) and ``tol`` (default 1e-6).
    """

    kind = "adarank"
    #: the float64 weight vector ``(F,)``, a registered buffer (saved in the state dict)
    weight: torch.Tensor

    def __init__(
        self,
        n_features: int,
        *,
        measure: str = "ndcg@10",
        preset: str | None = "letor4",
        rounds: int = 500,
        patience: int = DEFAULT_PATIENCE,
        tol: float = 1e-6,
    ) -> None:
        super().__init__(n_features)
        if int(rounds) < 1:
            raise SpecError(f"AdaRank needs at least one round, got rounds={rounds}")
        self.measure = str(measure)
        self.preset = preset
        self.rounds = int(rounds)
        self.patience = int(patience)
        self.tol = float(tol)
        self.register_buffer("weight", torch.zeros(self.n_features, dtype=torch.float64))
        #: per round: feature index, alpha, training and selection score (after :meth:`fit`)
        self.history_: list[dict[str, Any]] = []
        self.best_round_: int = 0

    def forward(self, x: Any) -> Any:
        return torch.matmul(x.to(self.weight.dtype), self.weight)

    def linear_form(self) -> tuple[np.ndarray, float]:
        return self.weight.detach().cpu().double().numpy().copy(), 0.0

    def config(self) -> dict[str, Any]:
        return {
            **super().config(),
            "measure": self.measure,
            "preset": self.preset,
            "rounds": self.rounds,
            "patience": self.patience,
            "tol": self.tol,
        }

    def fit(
        self,
        features: np.ndarray,
        labels: np.ndarray,
        boundaries: np.ndarray,
        *,
        validation: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        selection: Any = None,
        callback: Any = None,
    ) -> AdaRank:
        """Run AdaRank on (already normalised, NaN-free) training data.

        ``validation`` is an optional ``(features, labels, boundaries)`` triple used to select the
        round, scored by ``selection`` (a :class:`~ndcglab.measures.MeasureScorer`;
        default: AdaRank's own measure); ``callback(info)`` is called after every round with a
        dict (round, feature, alpha, train, score).
        """
        from ..measures.scorer import MeasureScorer

        x = np.asarray(features, dtype=np.float64)
        y = np.asarray(labels, dtype=np.float64)
        b = np.asarray(boundaries, dtype=np.int64)
        self.check_features(x.shape[1], what="the training data")
        scorer = MeasureScorer(self.measure, self.preset)
        selector = selection or scorer
        n_q = len(b) - 1
        if n_q < 1:
            raise SpecError("AdaRank needs at least one training query")
        # E(h_k, q) for every weak ranker: fixed over the rounds, computed once
        e_feat = np.stack([scorer.per_query(y, x[:, k], b) for k in range(x.shape[1])], axis=1)
        p = np.full(n_q, 1.0 / n_q)
        w = np.zeros(x.shape[1])
        best_w, best_score, best_round = w.copy(), -math.inf, 0
        last_k = -1
        bad = 0
        self.history_ = []
        for t in range(1, self.rounds + 1):
            perf = p @ e_feat
            if last_k >= 0 and x.shape[1] > 1:
                perf[last_k] = -math.inf
            k = int(np.argmax(perf))
            num = float(p @ (1.0 + e_feat[:, k]))
            den = float(p @ (1.0 - e_feat[:, k]))
            alpha = 0.5 * math.log(num / den) if den > 1e-12 else 0.5 * math.log(num / 1e-12)
            if not math.isfinite(alpha) or alpha <= 0:
                break
            w[k] += alpha
            last_k = k
            e_train = scorer.per_query(y, x @ w, b)
            z = np.exp(-e_train)
            p = z / z.sum()
            train_score = float(scorer.mean(y, x @ w, b))
            if validation is not None:
                vx, vy, vb = validation
                score = selector.mean(vy, np.asarray(vx, dtype=np.float64) @ w, vb)
            else:
                score = train_score
            info = {"round": t, "feature": k, "alpha": alpha, "train": train_score, "score": score}
            self.history_.append(info)
            if callback is not None:
                callback(info)
            if score > best_score + self.tol:
                best_w, best_score, best_round, bad = w.copy(), score, t, 0
            else:
                bad += 1
                if bad >= self.patience:
                    break
        self.best_round_ = best_round
        with torch.no_grad():
            self.weight.copy_(torch.as_tensor(best_w, dtype=torch.float64))
        return self
