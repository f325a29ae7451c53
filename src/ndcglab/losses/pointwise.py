"""Pointwise baselines: sigmoid cross entropy on binarised labels, ordinal cumulative-logit NLL.

The third pointwise baseline, squared error on the labels, is ``squared(gain=linear)``
(:class:`ndcglab.losses.listwise.Squared`): Σ_j (s_j − y_j)², rax's ``mean_squared_loss`` per
list. Each loss here is a sum over the list's real documents; a list has a loss when it has a
real document. None is analysed by Ravikumar et al. (AISTATS 2011).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from . import _ops
from ._ops import torch
from .base import Loss, int_param, number_param, register_loss

if TYPE_CHECKING:  # pragma: no cover
    from torch import Generator, Tensor

__all__ = ["OrdinalLogit", "SigmoidCrossEntropy"]


@register_loss
class SigmoidCrossEntropy(Loss):
    """Sigmoid (binary) cross entropy on binarised labels ::

        φ(s, y) = Σ_j [ −t_j log σ(s_j) − (1 − t_j) log(1 − σ(s_j)) ],   t_j = I[y_j ≥ threshold]

    computed as Σ_j softplus(s_j) − t_j s_j. Parameter ``threshold`` (default 1: a label ≥ 1 is
    relevant). As rax's ``sigmoid_cross_entropy_loss`` with labels binarised first (rax takes
    labels in [0, 1] as they are), summed over the list. Every non-empty list has a loss.
    """

    key = "sigmoid_ce"
    summary = "pointwise sigmoid cross entropy on labels binarised at a threshold"
    parameters = (number_param("threshold", "1", "a label ≥ threshold is relevant (t = 1)"),)

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        t = (y >= float(self.params["threshold"])).to(s.dtype)
        per_doc = torch.nn.functional.softplus(s) - t * s
        return torch.where(mask, per_doc, s.new_zeros(())).sum(dim=-1), _ops.lengths(mask) > 0


@register_loss
class OrdinalLogit(Loss):
    """Ordinal regression by the cumulative-logit (proportional odds) model, negative
    log-likelihood (McCullagh, "Regression Models for Ordinal Data", JRSS B 1980) ::

        P(y ≤ c | s) = σ(θ_c − s),   θ_c = c + ½,   c = 0, ..., L − 2
        φ(s, y) = −Σ_j log( σ(θ_{y_j} − s_j) − σ(θ_{y_j − 1} − s_j) )     (θ_{−1} = −∞, θ_{L−1} = ∞)

    with ``L = levels`` label levels 0..L−1 (default 5); a label is rounded down and clipped to
    [0, L − 1]. The cut-points are fixed (a loss has no trainable parameters): the score is the
    latent value and the model's scale absorbs the unit spacing. Computed stably as
    ``softplus(s − θ_y) + softplus(θ_{y−1} − s) − log(1 − e^{θ_{y−1} − θ_y})`` (the first term
    absent for the top level, the last two for level 0). Every non-empty list has a loss.
    """

    key = "ordinal"
    summary = "pointwise ordinal regression: cumulative-logit NLL, cut-points c + 1/2"
    parameters = (int_param("levels", "5", "number L of label levels 0..L−1", low=2),)

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        top = int(self.params["levels"]) - 1
        c = torch.clamp(torch.floor(y), 0, top)
        upper = c + 0.5  # θ_y (absent for the top level)
        lower = c - 0.5  # θ_{y−1} (absent for level 0)
        zero = s.new_zeros(())
        sp = torch.nn.functional.softplus
        term_up = torch.where(c < top, sp(s - upper), zero)
        term_lo = torch.where(c > 0, sp(lower - s), zero)
        both = (c > 0) & (c < top)
        const = torch.where(both, zero - math.log1p(-math.exp(-1.0)), zero)
        per_doc = term_up + term_lo + const
        return torch.where(mask, per_doc, zero).sum(dim=-1), _ops.lengths(mask) > 0
