"""NeuralNDCG: NDCG of a NeuralSort-relaxed, Sinkhorn-scaled permutation matrix.

Pobrotyn & Białobrzeski, "NeuralNDCG: Direct Optimisation of a Ranking Metric via
Differentiable Relaxation of Sorting" (2021) replace the permutation matrix that sorts the
scores by the NeuralSort relaxation of Grover, Wang, Zweig, Ermon ("Stochastic Optimization of
Sorting Networks via Continuous Relaxations", ICLR 2019)::

    P̂[r, i] = softmax_i( ((n + 1 − 2r) s_i − Σ_j |s_i − s_j|) / τ ),   r = 1..n

(row r: a distribution over the documents at position r), made (nearly) doubly stochastic by
Sinkhorn scaling (alternately dividing by column and row sums). Cross-check: allRank's
``neuralNDCG`` / ``neuralNDCG_transposed`` (``allrank/models/losses/neuralNDCG.py``: the same
NeuralSort matrix, Sinkhorn with columns then rows per iteration, exp2 gain, log2 discount).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _ops
from ._ops import torch
from .base import (
    Loss,
    choice_param,
    discount_param,
    gain_param,
    int_param,
    number_param,
    register_loss,
)

if TYPE_CHECKING:  # pragma: no cover
    from torch import Generator, Tensor

__all__ = ["NeuralNDCG", "neural_sort", "sinkhorn"]


def neural_sort(s: Tensor, mask: Tensor, tau: float) -> Tensor:
    """The NeuralSort matrix ``P̂`` ``(B, M, M)``: ``P̂[b, r, i]`` for 0-based position r < n and
    real document i, each such row a softmax over the real documents; 0 elsewhere."""
    n = _ops.lengths(mask).to(s.dtype)
    m = s.shape[-1]
    pair = mask.unsqueeze(-1) & mask.unsqueeze(-2)
    absdiff = torch.where(pair, (s.unsqueeze(-1) - s.unsqueeze(-2)).abs(), s.new_zeros(()))
    a = absdiff.sum(dim=-1)  # Σ_j |s_i − s_j| over real j, (B, M)
    r = torch.arange(1, m + 1, device=s.device, dtype=s.dtype)  # 1-based positions
    scale = n.view(-1, 1) + 1.0 - 2.0 * r.view(1, -1)  # (B, M): n + 1 − 2r
    logits = (scale.unsqueeze(-1) * s.unsqueeze(-2) - a.unsqueeze(-2)) / tau
    valid = (r.view(1, -1) <= n.view(-1, 1)).unsqueeze(-1) & mask.unsqueeze(-2)
    z = torch.where(valid, logits, logits.new_full((), _ops.fill_value(s.dtype)))
    p = torch.softmax(z, dim=-1)
    return torch.where(valid, p, s.new_zeros(()))


def sinkhorn(p: Tensor, valid: Tensor, iterations: int, *, last: str = "rows") -> Tensor:
    """``iterations`` rounds of Sinkhorn scaling of ``p`` ``(B, M, M)`` on its ``valid`` block
    (real positions × real documents): each round divides by the column sums, then by the row
    sums (``last="rows"``, allRank's order), or by the row sums, then by the column sums
    (``last="columns"``). Zero sums are left alone (empty lists)."""
    one = p.new_ones(())

    def rows(x: Tensor) -> Tensor:
        t = x.sum(dim=-1, keepdim=True)
        return x / torch.where(t > 0, t, one)

    def cols(x: Tensor) -> Tensor:
        t = x.sum(dim=-2, keepdim=True)
        return x / torch.where(t > 0, t, one)

    for _ in range(iterations):
        p = rows(cols(p)) if last == "rows" else cols(rows(p))
    return torch.where(valid, p, p.new_zeros(()))


@register_loss
class NeuralNDCG(Loss):
    """NeuralNDCG@k (Pobrotyn & Białobrzeski, 2021) ::

        form=standard:    φ = 1 − (1/IDCG@k) Σ_{r ≤ k} D(r) Σ_i P̂[r, i] G(y_i)
        form=transposed:  φ = 1 − (1/IDCG@k) Σ_i G(y_i) Σ_{r ≤ k} P̂ᵀ[i, r] D(r)

    with ``P̂`` the NeuralSort matrix of temperature τ (:func:`neural_sort`) after ``sinkhorn``
    rounds of Sinkhorn scaling (:func:`sinkhorn`). ``standard`` ends each round with the rows
    (each position a distribution over documents: the relaxed sorted gains P̂G); ``transposed``
    ends with the columns (each document a distribution over positions: its expected discount
    P̂ᵀD). With an exactly doubly-stochastic P̂ the two coincide; with finitely many rounds they
    differ slightly. Parameters: ``tau`` τ > 0 (default 1), ``sinkhorn`` rounds (default 50, a
    fixed number: allRank stops earlier once both marginals are within 1e-6; ``0`` keeps the raw
    row-stochastic NeuralSort matrix), ``form``, ``gain`` (exp2), ``discount`` (log, tabulated at
    the integer positions). ``@k``: positions beyond k get discount 0 and IDCG@k is the norm;
    none = the whole list. Lists with IDCG@k = 0 have no loss. allRank returns −NeuralNDCG (same
    gradient). Not analysed by Ravikumar et al. (AISTATS 2011).
    """

    key = "neural_ndcg"
    summary = "NeuralNDCG@k: 1 − NDCG of a NeuralSort + Sinkhorn relaxed sort (τ, rounds)"
    parameters = (
        number_param("tau", "1", "NeuralSort temperature τ", low=0.0),
        int_param("sinkhorn", "50", "Sinkhorn scaling rounds (0: none)", low=0),
        choice_param(
            "form",
            "standard",
            ("standard", "transposed"),
            "standard: P̂G (rows last); transposed: P̂ᵀD (columns last)",
        ),
        gain_param(),
        discount_param(),
    )
    cutoff_rule = "optional"

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        tau = float(self.params["tau"])
        rounds = int(self.params["sinkhorn"])
        last = "rows" if self.params["form"] == "standard" else "columns"
        n = _ops.lengths(mask)
        k = torch.minimum(_ops.cutoff_per_list(self.cutoff, n), n)
        g = _ops.masked_gains(self.params["gain"], y, mask)
        idcg = _ops.ideal_dcg(g, mask, self.params["discount"], k)
        pos = _ops.positions(s).expand(s.shape[0], s.shape[-1])
        real_pos = pos <= n.unsqueeze(-1)
        d = _ops.cut_discounts(self.params["discount"], pos, real_pos, k, s)  # (B, M) by position

        def rows(s: Tensor, g: Tensor, mask: Tensor, d: Tensor, idcg: Tensor) -> Tensor:
            p = neural_sort(s, mask, tau)
            nn = _ops.lengths(mask)
            r = _ops.positions(s)
            valid = (r <= nn.unsqueeze(-1)).unsqueeze(-1) & mask.unsqueeze(-2)
            p = sinkhorn(p, valid, rounds, last=last)
            if last == "rows":
                dcg = (d * (p @ g.unsqueeze(-1)).squeeze(-1)).sum(dim=-1)
            else:
                dcg = (g * (p.transpose(-2, -1) @ d.unsqueeze(-1)).squeeze(-1)).sum(dim=-1)
            return 1.0 - _ops.safe_divide(dcg, idcg, idcg > 0)

        values = _ops.chunked_rows(rows, s, g, mask, d, idcg)
        return values, idcg > 0
