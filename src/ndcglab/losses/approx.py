"""ApproxNDCG: NDCG with sigmoid-smoothed positions (Qin, Liu & Li, Information Retrieval 2010).

Qin, Liu, Li, "A general approximation framework for direct optimization of information
retrieval measures" (Information Retrieval 13(4), 2010) write the position of document i in the
ranking by scores as ``π(i) = 1 + Σ_{j≠i} I[s_j > s_i]`` and replace the indicator by a
logistic function of temperature α::

    π̂(i) = 1 + Σ_{j≠i} σ(α (s_j − s_i)),      σ(x) = 1 / (1 + e^{−x})

The smoothed NDCG is then ``Σ_i G(y_i) D(π̂(i)) / IDCG``, with the discount evaluated at the
real-valued position π̂(i). Cross-checks: allRank's ``approxNDCGLoss`` (exp2 gain, log2
discount, ``alpha``; it clamps each sigmoid below at 1e-10 and returns ``−ApproxNDCG``) and the
smoothed ranks of rax's ``rax.utils.approx_ranks`` / TF-Ranking's ``approx_ranks`` (scores
divided by a temperature 1/α) are the same positions; here the loss is ``1 − ApproxNDCG`` (the
same gradient as −ApproxNDCG, non-negative values).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from . import _ops
from ._ops import torch
from .base import Loss, Param, discount_param, gain_param, int_param, number_param, register_loss

if TYPE_CHECKING:  # pragma: no cover
    from torch import Generator, Tensor

__all__ = ["ApproxNDCG", "GumbelApproxNDCG", "gumbel_noise", "smooth_positions"]


def smooth_positions(s: Tensor, mask: Tensor, alpha: float) -> Tensor:
    """``π̂(i) = 1 + Σ_{j≠i, real} σ(α (s_j − s_i))`` ``(B, M)`` (1 on padding)."""
    diff = alpha * (s.unsqueeze(-2) - s.unsqueeze(-1))  # [b, i, j] = α (s_j − s_i)
    pair = mask.unsqueeze(-1) & mask.unsqueeze(-2)
    eye = torch.eye(s.shape[-1], dtype=torch.bool, device=s.device)
    sig = torch.where(pair & ~eye, torch.sigmoid(diff), s.new_zeros(()))
    return 1.0 + sig.sum(dim=-1)


@register_loss
class ApproxNDCG(Loss):
    """ApproxNDCG (Qin, Liu & Li, Information Retrieval 13(4), 2010) ::

        φ(s, y) = 1 − (1/IDCG) Σ_i G(y_i) · D(π̂(i)),   π̂(i) = 1 + Σ_{j≠i} σ(α (s_j − s_i))

    over the real documents. Parameters: ``alpha`` α > 0 (default 1, allRank's default; larger α
    follows the true positions more closely and gives steeper gradients), ``gain`` (default
    exp2) and ``discount`` (default log; the measures' discount object evaluated on the tensor of
    real-valued positions π̂: every named discount, not a user's NumPy callable). IDCG is the
    full-list ideal DCG of the measures' gain and discount. Cross-checked against allRank's
    ``approxNDCGLoss`` (which returns −ApproxNDCG: the same gradient). Lists with IDCG = 0 (no
    relevant document, empty) have no loss; a one-document list with a relevant label has value
    0 and gradient 0. No cut-off. Not analysed by Ravikumar et al. (AISTATS 2011).
    """

    key = "approx_ndcg"
    summary = "ApproxNDCG: 1 − NDCG at sigmoid-smoothed positions (temperature α)"
    #: how boosted trees treat the Hessian diagonal under ``hessian="auto"``
    #: (:class:`ndcglab.gbdt.LossObjective`): ``"abs"``, its absolute value. At tied scores (where
    #: boosting starts) every diagonal entry is ≤ 0 for a convex discount (log, power, zipf,
    #: exp) — with u_i = −G(y_i) D'(π̂_i)/IDCG ≥ 0, ∂φ/∂s_i = −α Σ_k σ'_ik (u_i − u_k), and
    #: σ'' = 0 at ties while D'' ≥ 0 gives
    #: ∂²φ/∂s_i² = −α² G(y_i) D''(π̂_i)/IDCG (Σ_k σ'_ik)² − α² Σ_k σ'_ik² G(y_k) D''(π̂_k)/IDCG ≤ 0
    #: — so a floored diagonal would make Newton steps of size |Σg| / (n · floor).
    hessian_rule: ClassVar[str] = "abs"
    parameters: ClassVar[tuple[Param, ...]] = (
        number_param("alpha", "1", "temperature α of the position sigmoid", low=0.0),
        gain_param(),
        discount_param(),
    )

    def _check(self) -> None:
        from ..errors import SpecError

        discount = self.params["discount"]
        if not discount.smooth:
            raise SpecError(
                f"loss {self.key!r}: the discount {discount.name!r} has no smooth form at "
                "real-valued positions. Fix: use log, log:<b>, power:<beta>, zipf, exp:<a>, "
                "letor or linear"
            )

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        alpha = float(self.params["alpha"])
        g = _ops.masked_gains(self.params["gain"], y, mask)
        idcg = _ops.ideal_dcg(g, mask, self.params["discount"])
        has = idcg > 0

        def rows(s: Tensor, g: Tensor, mask: Tensor, idcg: Tensor) -> Tensor:
            pos = smooth_positions(s, mask, alpha)
            d = self.params["discount"](pos, _ops.lengths(mask).unsqueeze(-1))
            dcg = torch.where(mask, g * d, s.new_zeros(())).sum(dim=-1)
            return 1.0 - _ops.safe_divide(dcg, idcg, idcg > 0)

        return _ops.chunked_rows(rows, s, g, mask, idcg), has


def gumbel_noise(mask: Tensor, samples: int, generator: Generator | None, like: Tensor) -> Tensor:
    """Standard Gumbel noise ``(samples, B, M)`` (0 on padding) under the registry's randomness
    rule: one seed is drawn from ``generator`` (torch's global generator when None); from it
    NumPy draws ``u`` of shape ``(M, samples)`` (row c: the draws of column c, so that the first
    columns do not depend on M), ``g[t, c] = −log(−log u[c, t])``, and the c-th real document of
    every list (in input order) gets column c. So the noise is reproducible given the
    generator's state, fresh at each call, and does not depend on padding or on the other lists
    of the batch (lists of one batch share the draws, as
    :func:`~ndcglab.losses.listwise.listmle_order` does)."""
    import numpy as np

    b, m = mask.shape
    gdev = generator.device if generator is not None else "cpu"
    seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=gdev).item())
    u = np.random.default_rng(seed).random((max(m, 1), samples)).T  # prefix-stable in m
    u = np.clip(u, np.finfo(np.float64).tiny, 1.0)
    table = torch.as_tensor(-np.log(-np.log(u)), dtype=like.dtype, device=like.device)
    col = (torch.cumsum(mask.long(), dim=-1) - 1).clamp_min(0)  # (B, M): c of each document
    noise = (
        table[:, :m]
        .unsqueeze(1)
        .expand(samples, b, m)
        .gather(-1, col.unsqueeze(0).expand(samples, b, m))
    )
    return torch.where(mask.unsqueeze(0), noise, like.new_zeros(()))


@register_loss
class GumbelApproxNDCG(ApproxNDCG):
    """Gumbel-ApproxNDCG (Bruch, Han, Bendersky, Najork, "A Stochastic Treatment of Learning to
    Rank Scoring Functions", WSDM 2020): ApproxNDCG (:class:`ApproxNDCG`) of Gumbel-perturbed
    scores, averaged over ``samples`` draws ::

        φ(s, y) = (1/S) Σ_{t=1..S} approx_ndcg(s + β g_t, y),   g_t ~ Gumbel(0, 1) i.i.d.

    Parameters: ``samples`` S (default 8), ``beta`` β > 0 (default 1), and ApproxNDCG's
    ``alpha``, ``gain``, ``discount``. As rax's ``gumbel_t12n(approx ndcg loss, samples, beta)``
    without its optional ``log(softmax(·) + smoothing)`` step. Stochastic: the noise follows the
    registry's randomness rule (``generator=``; see :func:`gumbel_noise`), so a call with a
    generator in a given state is reproducible, and successive calls (epochs) draw fresh noise.
    Lists with IDCG = 0 have no loss.
    """

    key = "gumbel_approx_ndcg"
    summary = "Gumbel-ApproxNDCG: ApproxNDCG of Gumbel-perturbed scores, mean over samples"
    parameters = (
        *ApproxNDCG.parameters,
        int_param("samples", "8", "number S of Gumbel samples"),
        number_param("beta", "1", "scale β of the Gumbel noise", low=0.0),
    )

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        samples = int(self.params["samples"])
        beta = float(self.params["beta"])
        noise = gumbel_noise(mask, samples, generator, s)
        total = s.new_zeros(s.shape[0])
        has = None
        for t in range(samples):
            v, has = super()._compute(s + beta * noise[t], y, mask, generator)
            total = total + v
        assert has is not None
        return total / samples, has
