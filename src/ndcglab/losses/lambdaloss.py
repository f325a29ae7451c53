"""The LambdaLoss framework's NDCG losses (Wang, Li, Golbandi, Bendersky, Najork, CIKM 2018).

Wang et al., "The LambdaLoss Framework for Ranking Metric Optimization" (CIKM 2018) bound
(1 − NDCG) by weighted pairwise logistic losses whose weights depend on the current ranking π
(scores descending, ties in input order, held constant: no gradient flows through them). With
``Ḡ_i = G(y_i)/IDCG@k`` and the discount ``D(r)`` of the measures (``1/log2(1 + r)`` by default;
the paper writes ``1/D_i`` for it), ``ℓ(x) = −log2 σ(σ x) = log2(1 + e^{−σ x})``:

* ``scheme=ndcg1`` (NDCG-Loss1): ``Σ_i Σ_{j≠i} Ḡ_i D(π_i) · ℓ(s_i − s_j)`` over every ordered pair
  of real documents (equal labels included, as in the paper's product over j);
* ``scheme=ndcg2`` (NDCG-Loss2): ``Σ_{y_i>y_j} δ_ij |Ḡ_i − Ḡ_j| · ℓ(s_i − s_j)`` with
  ``δ_ij = |D(|π_i − π_j|) − D(|π_i − π_j| + 1)|``;
* ``scheme=ndcg2pp`` (NDCG-Loss2++): ``Σ_{y_i>y_j} (μ δ_ij + ρ_ij) |Ḡ_i − Ḡ_j| · ℓ(s_i − s_j)``
  with ``ρ_ij = |D(π_i) − D(π_j)|`` (LambdaRank's weight).

**Top-k pairing rule** (``@k``): the norm is IDCG@k and a pair counts only when
``pairs=either`` (default): at least one of its two documents is in the current top k
(min(π_i, π_j) ≤ k; the pairs whose swap can change NDCG@k, the pairs that rax's
``dcg_lambdaweight(topn=k)`` keeps through its truncated discount), or ``pairs=both``: both are
(max(π_i, π_j) ≤ k; allRank's ``lambdaLoss`` with ``k``). The weights use the untruncated
discount in both rules (as allRank). rax's ``dcg2_lambdaweight(topn=k)`` follows a third rule
(Jagerman et al., "On Optimizing Top-K Metrics for Neural Ranking Models", SIGIR 2022: every pair
kept, δ_ij of a pair with max(π_i, π_j) > k divided by 1 − D(max(π_i, π_j))), not offered here.
Cross-check: allRank's ``lambdaLoss`` (``weighing_scheme=ndcgLoss1_scheme|ndcgLoss2_scheme|
ndcgLoss2PP_scheme``, ``reduction="sum"``, ``reduction_log="binary"``), which for NDCG-Loss1
also counts the pairs (i, i): each adds Ḡ_i D(π_i), so allRank's NDCG-Loss1 equals
``lambdaloss(pairs=both,scheme=ndcg1)@k`` plus NDCG@k of the current ranking (no gradient).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import _ops
from ._ops import torch
from .base import (
    Loss,
    choice_param,
    discount_param,
    gain_param,
    number_param,
    register_loss,
)
from .closed_form import ClosedForm, PairMatrixForm
from .pairwise import PairForm

if TYPE_CHECKING:  # pragma: no cover
    from torch import Generator, Tensor

__all__ = ["LambdaLoss", "TopPairForm"]


@register_loss
class LambdaLoss(Loss):
    """LambdaLoss NDCG-Loss1 / NDCG-Loss2 / NDCG-Loss2++ (Wang et al., CIKM 2018), sum over
    pairs, base-2 logarithm ::

        φ(s, y) = Σ_{(i,j) counted} w_ij(π) · log2(1 + exp(−σ (s_i − s_j)))

    ``scheme``: ``ndcg1`` (w_ij = Ḡ_i D(π_i), every ordered pair i ≠ j), ``ndcg2`` (default;
    w_ij = δ_ij |Ḡ_i − Ḡ_j|, pairs y_i > y_j) or ``ndcg2pp`` (w_ij = (μ δ_ij + ρ_ij)|Ḡ_i − Ḡ_j|);
    Ḡ = G(y)/IDCG@k, δ_ij = |D(|π_i − π_j|) − D(|π_i − π_j| + 1)|, ρ_ij = |D(π_i) − D(π_j)| at
    the current ranking π (scores descending, ties in input order; constants). Parameters:
    ``sigma`` σ > 0 (1), ``mu`` μ ≥ 0 (10, allRank's default; ndcg2pp only), ``pairs``
    (``either`` | ``both``, the top-k pairing rule, see the module docstring; only with ``@k``),
    ``gain`` (exp2), ``discount`` (log). ``@k`` fixed, ``@cn`` a fraction of the list, none =
    the whole list. Lists without a pair across label levels or with IDCG@k = 0 have no loss.
    Not analysed by Ravikumar et al. (AISTATS 2011).
    """

    key = "lambdaloss"
    summary = "LambdaLoss NDCG-Loss1/2/2++ weighted pairwise logistic loss (top-k pair rule)"
    parameters = (
        choice_param(
            "scheme", "ndcg2", ("ndcg1", "ndcg2", "ndcg2pp"), "NDCG-Loss1, -Loss2 or -Loss2++"
        ),
        number_param("sigma", "1", "slope σ of the logistic", low=0.0),
        number_param("mu", "10", "weight μ of δ_ij in NDCG-Loss2++", low=0.0, low_open=False),
        choice_param(
            "pairs", "either", ("either", "both"), "@k: pairs with one (either) or both in top k"
        ),
        gain_param(),
        discount_param(),
    )
    cutoff_rule = "optional"
    closed_form_type = PairForm

    def _label_terms(
        self, y: Tensor, mask: Tensor, like: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """What the weights need from the labels alone, no gradient: ``k`` per list, ``Ḡ``,
        ``IDCG@k`` and the discount table ``D(1..M+1)`` per list (``like``'s dtype, device)."""
        p = self.params
        n = _ops.lengths(mask)
        m = y.shape[-1]
        with torch.no_grad():
            k = torch.minimum(_ops.cutoff_per_list(self.cutoff, n), n)
            g = _ops.masked_gains(p["gain"], y, mask)
            idcg = _ops.ideal_dcg(g, mask, p["discount"], k)
            gbar = _ops.safe_divide(g, idcg.unsqueeze(-1), (idcg > 0).unsqueeze(-1))
            table = _ops.discount_rows(p["discount"], m + 1, n, like).expand(y.shape[0], m + 1)
        return k, gbar, idcg, table

    def _ranking_terms(
        self, s: Tensor, y: Tensor, mask: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
        """:meth:`_label_terms` and the current 1-based positions ``π`` (no gradient)."""
        k, gbar, idcg, table = self._label_terms(y, mask, s)
        with torch.no_grad():
            _, rank = _ops.ranking(s, mask)
        return k, gbar, idcg, rank + 1, table

    def _weight_block(
        self,
        s: Tensor,
        y: Tensor,
        mask: Tensor,
        gbar: Tensor,
        pos: Tensor,
        table: Tensor,
        k: Tensor,
        pairs: Tensor | None = None,
        dg: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        """``(use, w)`` for a block of lists: which ordered pairs count and their weights
        ``w_ij`` (module docstring), held constant (no gradient). ``pairs`` and ``dg``: the
        label-only parts (the scheme's pairs before the top-k rule, ``|Ḡ_i − Ḡ_j|``) when they
        were built once (:meth:`bind_pair_weights`)."""
        p = self.params
        scheme, mu = p["scheme"], float(p["mu"])
        both = p["pairs"] == "both"
        with torch.no_grad():
            pi, pj = pos.unsqueeze(-1), pos.unsqueeze(-2)
            valid = mask.unsqueeze(-1) & mask.unsqueeze(-2)
            eye = torch.eye(s.shape[-1], dtype=torch.bool, device=s.device)
            kk = k.view(-1, 1, 1)
            top = torch.maximum(pi, pj) <= kk if both else torch.minimum(pi, pj) <= kk
            disc = table.gather(-1, (pos - 1).clamp_min(0))  # D(π_i), (B, M)
            if scheme == "ndcg1":
                use = (valid & ~eye if pairs is None else pairs) & top
                w = (gbar * disc).unsqueeze(-1).expand_as(use)
            else:
                use = (_ops.better_pairs(y, mask) if pairs is None else pairs) & top
                # δ(r) = |D(r) − D(r + 1)| for the gaps r = 1..M, looked up once per pair (a gap
                # of 0 — a document with itself, or padding — is never a counted pair)
                steps = (table[:, :-1] - table[:, 1:]).abs()
                gap = (pi - pj).abs()
                idx = (gap - 1).clamp(0, steps.shape[-1] - 1)
                delta = steps.unsqueeze(-2).expand(-1, s.shape[-1], -1).gather(-1, idx)
                if dg is None:
                    dg = (gbar.unsqueeze(-1) - gbar.unsqueeze(-2)).abs()
                w = delta * dg
                if scheme == "ndcg2pp":
                    rho = (disc.unsqueeze(-1) - disc.unsqueeze(-2)).abs()
                    w = (mu * delta + rho) * dg
        return use, w

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        sigma = float(self.params["sigma"])
        k, gbar, idcg, pos, table = self._ranking_terms(s, y, mask)

        def rows(s: Tensor, *terms: Tensor) -> Tensor:
            # ``terms``: one chunk of ``y, mask, gbar, pos, table, k`` (:meth:`_weight_block`)
            use, w = self._weight_block(s, *terms)
            pair = torch.nn.functional.softplus(-sigma * (s.unsqueeze(-1) - s.unsqueeze(-2)))
            total = torch.where(use, w * pair, s.new_zeros(())).sum(dim=(-2, -1))
            return total / math.log(2.0)

        values = _ops.chunked_rows(rows, s, y, mask, gbar, pos, table, k)
        return values, _ops.has_two_levels(y, mask) & (idcg > 0)

    def _closed_form(self, y: Tensor, mask: Tensor) -> ClosedForm:
        """With a cut-off and the NDCG-Loss2 / 2++ schemes, :class:`TopPairForm` (only the
        pairs with a document in the current top k are built); otherwise
        :class:`~ndcglab.losses.pairwise.PairForm`: ``φ = Σ W_ij log(1 + e^{−σ(s_i − s_j)})``
        with ``W_ij = w_ij / ln 2`` on the counted pairs (:meth:`pair_weights`)."""
        if self.cutoff is not None and self.params["scheme"] != "ndcg1":
            return TopPairForm(loss=self, labels=y, mask=mask)
        return PairForm(loss=self, labels=y, mask=mask)

    def pair_weights(self, scores: Tensor, labels: Tensor, mask: Tensor) -> Tensor:
        """``W`` ``(B, M, M)``: ``w_ij / ln 2`` at the ranking by ``scores`` on the ordered pairs
        the scheme counts, 0 elsewhere and on lists without a loss (held constant)."""
        return self.bind_pair_weights(labels, mask, scores)(scores)

    def bind_pair_weights(
        self, labels: Tensor, mask: Tensor, like: Tensor
    ) -> Callable[[Tensor], Tensor]:
        """:meth:`pair_weights` for fixed ``labels``/``mask`` as a function of the scores (in
        ``like``'s dtype and device): the label-only parts (:meth:`_label_terms`, the counted
        pairs of lists that have a loss, ``|Ḡ_i − Ḡ_j|``) built once; each call ranks the scores
        and computes the rest."""
        y = _ops.zero_padding(labels.to(like.dtype), mask)
        k, gbar, idcg, table = self._label_terms(y, mask, like)
        with torch.no_grad():
            has = (_ops.has_two_levels(y, mask) & (idcg > 0)).view(-1, 1, 1)
            if self.params["scheme"] == "ndcg1":
                eye = torch.eye(y.shape[-1], dtype=torch.bool, device=y.device)
                pairs = mask.unsqueeze(-1) & mask.unsqueeze(-2) & ~eye & has
                dg = None
            else:
                pairs = _ops.better_pairs(y, mask) & has
                dg = (gbar.unsqueeze(-1) - gbar.unsqueeze(-2)).abs()
        scale = 1.0 / math.log(2.0)

        def weights(scores: Tensor) -> Tensor:
            with torch.no_grad():
                s = _ops.zero_padding(scores, mask)
                _, rank = _ops.ranking(s, mask)
                use, w = self._weight_block(s, y, mask, gbar, rank + 1, table, k, pairs, dg)
                return torch.where(use, w, s.new_zeros(())).mul_(scale)

        return weights


@dataclass
class TopPairForm(PairMatrixForm):
    """LambdaLoss@k's closed form (NDCG-Loss2 and 2++), built from the pairs that count only.

    With a cut-off, a pair counts only when a document of it is in the current top k
    (``pairs=either``; both, ``pairs=both``), so the weights ``W`` of
    :class:`~ndcglab.losses.pairwise.PairForm` vanish outside the rows and columns of the top-k
    documents. Here each counted unordered pair is visited once, from its better-placed document
    ``t`` (one of the first ``k`` positions) to a document ``j`` placed below it: ``(B, k, M)``
    tensors instead of ``(B, M, M)``. The weight ``w_tj`` is symmetric (``δ``, ``|Ḡ_t − Ḡ_j|``,
    ``ρ``), the pair's term is ``w/ln 2 · log(1 + e^{−σ d})`` with ``d = ±(s_t − s_j)`` oriented
    from the higher label to the lower, and ::

        ∂/∂s_t = −σ a ε,  ∂/∂s_j = +σ a ε,  ∂²/∂s_t² = ∂²/∂s_j² = σ² W ρ (1 − ρ)

    with ``ρ = 1/(1 + e^{σ d})``, ``a = W ρ`` and ``ε = sign(y_t − y_j)``: the derivatives of
    the loss, which holds ``W`` constant, as autograd gives them."""

    def grad_hess(
        self, scores: Tensor, generator: Generator | None = None
    ) -> tuple[Tensor, Tensor]:
        loss = self.loss
        p = loss.params
        sigma, mu = float(p["sigma"]), float(p["mu"])
        mask = self.mask
        s = _ops.zero_padding(scores, mask)
        b, m = s.shape
        g = torch.zeros_like(s)
        h = torch.zeros_like(s)
        y, k, gbar, steps, table, has = self._label_state(s)
        kmax = min(int(k.max()), m) if b and m else 0
        if kmax == 0:
            return g, h
        with torch.no_grad():
            order, rank = _ops.ranking(s, mask)
            pos = rank + 1
            top = order[:, :kmax]  # (B, K): the documents at positions 1..K
            tpos = torch.arange(1, kmax + 1, device=s.device).expand(b, kmax)
            row_ok = (tpos <= k.view(-1, 1)) & mask.gather(1, top) & has.view(-1, 1)
            pj = pos.unsqueeze(1)  # (B, 1, M)
            pt = tpos.unsqueeze(-1)  # (B, K, 1)
            use = (pj > pt) & mask.unsqueeze(1) & row_ok.unsqueeze(-1)
            if p["pairs"] == "both":
                use &= pj <= k.view(-1, 1, 1)
            eps = torch.sign(y.gather(1, top).unsqueeze(-1) - y.unsqueeze(1))
            use &= eps != 0
            idx = (pj - pt - 1).clamp(0, m - 1)
            delta = steps.unsqueeze(1).expand(-1, kmax, -1).gather(-1, idx)
            dg = (gbar.gather(1, top).unsqueeze(-1) - gbar.unsqueeze(1)).abs()
            w = delta * dg
            if p["scheme"] == "ndcg2pp":
                disc = table.gather(-1, (pos - 1).clamp_min(0))  # D(π) per document
                rho = (disc.gather(1, top).unsqueeze(-1) - disc.unsqueeze(1)).abs()
                w = (mu * delta + rho) * dg
            weight = torch.where(use, w, s.new_zeros(())) / math.log(2.0)
        diff = eps * (s.gather(1, top).unsqueeze(-1) - s.unsqueeze(1))
        prob = torch.sigmoid(-sigma * diff)
        a = weight * prob * eps
        g += sigma * a.sum(dim=1)
        g.scatter_add_(1, top, -sigma * a.sum(dim=2))
        c = weight * prob * (1.0 - prob) * (sigma * sigma)
        h += c.sum(dim=1)
        h.scatter_add_(1, top, c.sum(dim=2))
        return g * mask, h * mask

    def _label_state(self, like: Tensor) -> tuple[Tensor, ...]:
        """The label-only terms in ``like``'s dtype and device, built once per dtype/device:
        labels, ``k`` per list, ``Ḡ``, the steps ``δ(r) = |D(r) − D(r + 1)|``, the discount table
        and whether each list has a loss."""
        key = (like.dtype, like.device)
        cached = self.__dict__.get("_state")
        if cached is not None and cached[0] == key:
            return cached[1]
        y = _ops.zero_padding(self.labels.to(like.dtype), self.mask)
        k, gbar, idcg, table = self.loss._label_terms(y, self.mask, like)
        with torch.no_grad():
            steps = (table[:, :-1] - table[:, 1:]).abs()
            has = _ops.has_two_levels(y, self.mask) & (idcg > 0)
        state = (y, k, gbar, steps, table, has)
        self.__dict__["_state"] = (key, state)
        return state

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_state", None)
        return state
