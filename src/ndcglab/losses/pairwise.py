"""Pairwise baselines: RankNet, RankSVM, LambdaRank@k, and the AdaRank registry entry.

Pairs are the ordered pairs (i, j) of real documents with y_i > y_j; equal labels make no pair.
A list without such a pair (one document, all labels equal, empty) has no loss (0, zero
gradient). Pair matrices are (B, M, M); long lists are processed in checkpointed chunks of lists,
and a list whose pairs alone exceed :data:`ndcglab.losses._ops.PAIR_BUDGET` in checkpointed
blocks of pair rows (:func:`ndcglab.losses._ops.pair_blocks`), so memory stays bounded by one
block whatever the list length. None of these is analysed by Ravikumar et al.
(AISTATS 2011). RankNet and LambdaRank@k have a closed-form gradient and Hessian diagonal
(:class:`PairForm`).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._spec import Cutoff
from . import _ops
from ._ops import torch
from .base import (
    DEFAULT_DISCOUNT,
    DEFAULT_GAIN,
    Loss,
    NotDifferentiableError,
    choice_param,
    discount_param,
    gain_param,
    int_param,
    number_param,
    register_loss,
)
from .closed_form import ClosedForm, PairMatrixForm

if TYPE_CHECKING:  # pragma: no cover
    from torch import Generator, Tensor

    from ..measures.discounts import Discount
    from ..measures.gains import Gain

__all__ = [
    "KEEP_BYTES",
    "AdaRank",
    "LambdaRank",
    "PairForm",
    "RankNet",
    "RankSVM",
    "lambdarank_delta",
]


def _mean_over_pairs(
    pair_loss: Callable[[Tensor], Tensor],
    s: Tensor,
    y: Tensor,
    mask: Tensor,
    v: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """``(1/|P|) Σ_{(i,j) ∈ P} w_ij · pair_loss(s_i − s_j)`` per list, P = {(i, j): y_i > y_j},
    with ``w_ij = v_i − v_j`` (1 when ``v`` is None); 0 for lists without a pair. Returns the
    values and the lists that have a pair; long lists go in checkpointed chunks
    (:func:`~ndcglab.losses._ops.chunked_rows`)."""

    def block(lo: int, hi: int, s: Tensor, y: Tensor, mask: Tensor, *v: Tensor) -> Tensor:
        # the pairs (i, j) with i in [lo, hi): rows of the pair matrix
        pairs = _ops.better_pairs(y, mask, lo, hi)
        loss = pair_loss(s[:, lo:hi].unsqueeze(-1) - s.unsqueeze(-2))
        if v:
            loss = (v[0][:, lo:hi].unsqueeze(-1) - v[0].unsqueeze(-2)) * loss
        return torch.where(pairs, loss, s.new_zeros(())).sum(dim=(-2, -1))

    def rows(s: Tensor, y: Tensor, mask: Tensor, *v: Tensor) -> Tensor:
        m = s.shape[-1]
        total = _ops.pair_blocks(block, m, s, y, mask, *v, cols=m)
        count = _ops.pairs_below(y, mask).to(s.dtype)
        return _ops.safe_divide(total, count, count > 0)

    weights = () if v is None else (v,)
    return _ops.chunked_rows(rows, s, y, mask, *weights), _ops.has_two_levels(y, mask)


class PairForm(PairMatrixForm):
    """The closed form of a weighted pairwise logistic loss (RankNet, LambdaRank)::

        φ = Σ_{y_i>y_j} W_ij log(1 + e^{−σ(s_i − s_j)}),     ρ_ij = 1/(1 + e^{σ(s_i − s_j)})
        g_i = σ Σ_j (W_ji ρ_ji − W_ij ρ_ij)
        h_i = σ² Σ_j (W_ij ρ_ij (1 − ρ_ij) + W_ji ρ_ji (1 − ρ_ji))

    with ``W`` from the loss's ``pair_weights`` at the current scores, held constant (as the loss
    does, so this is also the Hessian autograd gives). Builds ``(B, M, M)`` pair matrices.

    The label-only part of ``W`` is built once per scores' dtype and device, at the first call
    (the loss's ``bind_pair_weights``: all of RankNet's ``W``; LambdaRank's ``|G(y_i) − G(y_j)|``
    on its pairs and ``IDCG@k``), so that each later call (a boosting round) computes only what
    depends on the scores; the values are those of ``pair_weights``, bit for bit."""

    def grad_hess(
        self, scores: Tensor, generator: Generator | None = None
    ) -> tuple[Tensor, Tensor]:
        """The derivatives over blocks of pair rows ``[lo, hi)``: one block (the whole ``W``,
        :meth:`_weights`) when the batch's pair matrices fit in
        :data:`~ndcglab.losses._ops.PAIR_BUDGET` entries, else blocks of ``B × (hi − lo) × M``
        at most that many (the loss's ``pair_weight_rows``: a long list), so memory is bounded
        by a few blocks whatever M. Blocked, the column sums are added block by block and may
        differ from the one-block ones in the last bits."""
        sigma = float(self.loss.params["sigma"])
        s = scores.masked_fill(~self.mask, 0.0)
        b, m = s.shape
        rows = getattr(self.loss, "pair_weight_rows", None)
        if rows is not None and b * m * m > _ops.PAIR_BUDGET and m > 1:
            step, weight_rows = max(1, _ops.PAIR_BUDGET // (b * m)), rows(s, self.labels, self.mask)
        else:
            step, weight_rows = m, lambda lo, hi: self._weights(s)
        g = torch.zeros_like(s)
        h = torch.zeros_like(s)
        for lo in range(0, m, step):
            hi = min(m, lo + step)
            wr = weight_rows(lo, hi)  # W[:, lo:hi, :]
            rho = torch.sub(s[:, lo:hi].unsqueeze(-1), s.unsqueeze(-2)).mul_(-sigma).sigmoid_()
            wr = wr * rho  # W ρ
            g += wr.sum(dim=-2)
            g[:, lo:hi] -= wr.sum(dim=-1)
            c = rho.neg_().add_(1.0).mul_(wr)  # W ρ (1 − ρ), in ρ's memory
            h[:, lo:hi] += c.sum(dim=-1)
            h += c.sum(dim=-2)
        return sigma * g * self.mask, sigma * sigma * h * self.mask

    def _weights(self, s: Tensor) -> Tensor:
        """``W`` at the (masked) scores ``s``: from the loss's bound weights when it has them
        (built at the first call for ``s``'s dtype and device) and they fit in what pair forms
        may keep (:data:`KEEP_BYTES`), else from ``pair_weights`` (the same values)."""
        bind = getattr(self.loss, "bind_pair_weights", None)
        if bind is None:
            return self.loss.pair_weights(s, self.labels, self.mask)
        key = (s.dtype, s.device)
        bound = self.__dict__.get("_bound")
        if bound is None or bound[0] != key:
            if bound is not None:
                bound[2]()  # give back what the weights for the other dtype/device held
                self.__dict__["_bound"] = None
            nbytes = s.shape[0] * s.shape[-1] * s.shape[-1] * s.element_size()
            if not _keep(nbytes):
                return self.loss.pair_weights(s, self.labels, self.mask)
            bound = (key, bind(self.labels, self.mask, s), weakref.finalize(self, _keep, -nbytes))
            self.__dict__["_bound"] = bound
        return bound[1](s)

    def __getstate__(self) -> dict[str, Any]:
        """Copies and pickles leave the bound weights behind (a copy binds its own)."""
        state = dict(self.__dict__)
        state.pop("_bound", None)
        return state


KEEP_BYTES = 256 << 20
"""Pair forms keep the label-only part of their pair weights (one ``(B, M, M)`` matrix per form)
between calls while all of them together hold at most this many bytes; beyond it, a form
computes its weights at every call (the same values, more time)."""

_kept = [0]
_kept_lock = threading.Lock()


def _keep(nbytes: int) -> bool:
    """Reserve ``nbytes`` of :data:`KEEP_BYTES` (a negative number gives them back); whether
    the reservation fits."""
    with _kept_lock:
        if nbytes > 0 and _kept[0] + nbytes > KEEP_BYTES:
            return False
        _kept[0] += nbytes
        return True


@register_loss
class RankNet(Loss):
    """RankNet (Burges et al.): pairwise logistic loss, mean over the list's pairs ::

        φ(s, y) = (1/|P|) Σ_{(i,j) ∈ P} w_ij · log(1 + exp(−σ (s_i − s_j)))
        P = {(i, j): y_i > y_j}

    Parameters: ``sigma`` (σ > 0, default 1); ``weight``: ``none`` (w = 1, default), ``label``
    (w = y_i − y_j) or ``gain`` (w = G(y_i) − G(y_j) with ``gain``, default exp2). The mean over
    pairs makes every list weigh the same whatever its size. Lists without a pair have no loss.
    """

    key = "ranknet"
    summary = "RankNet pairwise logistic loss, mean over pairs with y_i > y_j"
    parameters = (
        number_param("sigma", "1", "slope σ of the logistic", low=0.0),
        choice_param(
            "weight",
            "none",
            ("none", "label", "gain"),
            "pair weight: 1, y_i − y_j, or G(y_i) − G(y_j)",
        ),
        gain_param(doc="gain G for weight=gain"),
    )
    closed_form_type = PairForm

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        weight = self.params["weight"]
        sigma = float(self.params["sigma"])
        v = None
        if weight != "none":
            v = _ops.masked_gains(self.params["gain"], y, mask) if weight == "gain" else y
        return _mean_over_pairs(lambda d: torch.nn.functional.softplus(-sigma * d), s, y, mask, v)

    def _closed_form(self, y: Tensor, mask: Tensor) -> ClosedForm:
        """See :class:`PairForm`; ``W_ij = w_ij / |P|``."""
        return PairForm(loss=self, labels=y, mask=mask)

    def pair_weights(self, scores: Tensor, labels: Tensor, mask: Tensor) -> Tensor:
        """``W`` ``(B, M, M)``: the weight ``w_ij / |P|`` of each pair with ``y_i > y_j``, 0
        elsewhere (constant in the scores)."""
        return self.pair_weight_rows(scores, labels, mask)(0, scores.shape[-1])

    def bind_pair_weights(
        self, labels: Tensor, mask: Tensor, like: Tensor
    ) -> Callable[[Tensor], Tensor]:
        """:meth:`pair_weights` for fixed ``labels``/``mask`` as a function of the scores (in
        ``like``'s dtype and device): ``W`` does not depend on them, so it is built once."""
        w = self.pair_weights(like, labels, mask)
        return lambda scores: w

    def pair_weight_rows(
        self, scores: Tensor, labels: Tensor, mask: Tensor
    ) -> Callable[[int, int], Tensor]:
        """The rows ``W[:, lo:hi, :]`` of :meth:`pair_weights`, one block at a time (the pair
        count per list is taken without a pair matrix)."""
        y = labels.to(scores.dtype)
        weight = self.params["weight"]
        v = None
        if weight != "none":
            v = y if weight == "label" else _ops.masked_gains(self.params["gain"], y, mask)
        count = _ops.pairs_below(y, mask).to(scores.dtype).view(-1, 1, 1)

        def rows(lo: int, hi: int) -> Tensor:
            pairs = _ops.better_pairs(y, mask, lo, hi)
            if v is None:
                w = pairs.to(scores.dtype)
            else:
                w = (v[:, lo:hi].unsqueeze(-1) - v.unsqueeze(-2)) * pairs
            return torch.where(count > 0, w / count.clamp_min(1.0), 0.0)

        return rows


@register_loss
class RankSVM(Loss):
    """Ranking SVM (Joachims / Herbrich et al.): pairwise hinge loss, mean over the list's pairs ::

        φ(s, y) = (1/|P|) Σ_{(i,j) ∈ P} max(0, margin − (s_i − s_j)),   P = {(i, j): y_i > y_j}

    Parameters: ``margin`` (default 1); ``l2`` (default 0.001) is **not** used by the loss: it is
    the weight of the L2 penalty l2·‖w‖² that the trainer adds for the linear model
    (``loss.params["l2"]``). Minimising mean-over-lists(φ) + l2·‖w‖² over Q lists is the SVM
    ½‖w‖² + C Σ_q φ_q with C = 1/(2·l2·Q). Lists without a pair have no loss.
    """

    key = "ranksvm"
    summary = "Ranking SVM pairwise hinge, mean over pairs (L2 weight l2 read by the trainer)"
    parameters = (
        number_param("margin", "1", "hinge margin", low=0.0),
        number_param(
            "l2",
            "0.001",
            "L2 penalty l2·‖w‖² added by the trainer (not by the loss)",
            low=0.0,
            low_open=False,
        ),
    )

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        margin = float(self.params["margin"])
        return _mean_over_pairs(lambda d: torch.relu(margin - d), s, y, mask)


def _lambda_parts(
    s: Tensor, y: Tensor, mask: Tensor, k: Tensor, gain: Gain, discount: Discount
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Per document G(y) and D̃(π(i)) = D(π(i))·I[π(i) ≤ k] at the current positions π (scores
    sorted descending, ties in input order: :func:`~ndcglab.losses._ops.ranking`), IDCG@k per
    list, the order and the 0-based ranks. No gradient."""
    with torch.no_grad():
        g = _ops.masked_gains(gain, y, mask)
        order, rank = _ops.ranking(s, mask)
        dd = _ops.cut_discounts(discount, rank + 1, mask, k, s)
        idcg = _ops.ideal_dcg(g, mask, discount, k)
        return g, dd, idcg, order, rank


def lambdarank_delta(
    scores: Tensor,
    labels: Tensor,
    mask: Tensor | None = None,
    *,
    k: int | Cutoff | Tensor | None = None,
    gain: Gain | str = DEFAULT_GAIN,
    discount: Discount | str = DEFAULT_DISCOUNT,
) -> Tensor:
    """``|ΔNDCG@k|`` of swapping documents i and j in the ranking by ``scores`` (descending, ties
    in input order), ``(B, M, M)``: |G(y_i) − G(y_j)| · |D̃(π(i)) − D̃(π(j))| / IDCG@k with
    D̃(r) = D(r) for r ≤ k and 0 beyond; 0 where IDCG@k = 0 and on padding. ``k``: an int, a
    :class:`~ndcglab._spec.Cutoff` (e.g. ``loss.cutoff``, fractions included), a per-list
    tensor, or None (the whole list)."""
    from ..measures.discounts import get_discount
    from ..measures.gains import get_gain

    if mask is None:
        mask = torch.ones(scores.shape, dtype=torch.bool, device=scores.device)
    s, y = _ops.clean(scores, labels, mask)
    kk = _ops.cutoff_per_list(k, _ops.lengths(mask))
    g, dd, idcg, _, _ = _lambda_parts(s, y, mask, kk, get_gain(gain), get_discount(discount))
    return _delta(g, dd, idcg, mask)


def _delta(
    g: Tensor, dd: Tensor, idcg: Tensor, mask: Tensor, lo: int = 0, hi: int | None = None
) -> Tensor:
    """``|ΔNDCG@k_ij|`` from :func:`_lambda_parts`' gains, cut discounts and IDCG@k, for the
    rows ``i`` in ``[lo, hi)`` (all by default); 0 on padding and where IDCG@k = 0."""
    valid = mask[:, lo:hi].unsqueeze(-1) & mask.unsqueeze(-2)
    raw = (g[:, lo:hi].unsqueeze(-1) - g.unsqueeze(-2)).abs() * (
        dd[:, lo:hi].unsqueeze(-1) - dd.unsqueeze(-2)
    ).abs()
    ok = (idcg > 0).view(-1, 1, 1) & valid
    return _ops.safe_divide(raw, idcg.view(-1, 1, 1), ok)


@register_loss
class LambdaRank(Loss):
    """LambdaRank@k (Burges et al.; LightGBM's ``lambdarank`` objective): the pairwise logistic
    loss weighted by the NDCG@k change of swapping the pair ::

        φ(s, y) = Σ_{(i,j): y_i > y_j} |ΔNDCG@k_ij| · log(1 + exp(−σ (s_i − s_j)))

    |ΔNDCG@k_ij| = |G(y_i) − G(y_j)| · |D̃(π(i)) − D̃(π(j))| / IDCG@k (see
    :func:`lambdarank_delta`), computed at the current ranking π (scores descending, ties in input
    order) with the measures' ``gain`` (default exp2) and ``discount`` (default log) objects and
    treated as constants (no gradient flows through them). Sum over pairs (as LambdaMART, no
    further normalisation). Only pairs with a document in the current top k have ΔNDCG@k ≠ 0,
    so the cost is O(k·M) per list, not O(M²). ``@k`` fixed, ``@cn`` a fraction of each list
    (ceil), none = the whole list; ``sigma`` σ > 0 (default 1). Lists without a pair or with
    IDCG@k = 0 have no loss.
    """

    key = "lambdarank"
    summary = "LambdaRank@k: |ΔNDCG@k|-weighted pairwise logistic loss"
    parameters = (
        number_param("sigma", "1", "slope σ of the logistic", low=0.0),
        gain_param(),
        discount_param(),
    )
    cutoff_rule = "optional"
    closed_form_type = PairForm

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        sigma = float(self.params["sigma"])
        n = _ops.lengths(mask)
        kk = torch.minimum(_ops.cutoff_per_list(self.cutoff, n), n)
        parts = _lambda_parts(s, y, mask, kk, self.params["gain"], self.params["discount"])
        g, dd, idcg, order, rank = parts
        # only pairs with a document in the current top k have ΔNDCG@k ≠ 0: pair each of the
        # top-k slots with every document, counting a pair of two top-k documents once
        width = max(1, min(int(kk.max()) if kk.numel() else 1, s.shape[-1]))
        top = order[:, :width]
        with torch.no_grad():
            slot = torch.arange(width, device=s.device).unsqueeze(0)
            top_ok = slot < kk.unsqueeze(-1)

        def block(
            lo: int,
            hi: int,
            s: Tensor,
            y: Tensor,
            mask: Tensor,
            g: Tensor,
            dd: Tensor,
            idcg: Tensor,
            top: Tensor,
            top_ok: Tensor,
            rank: Tensor,
            kk: Tensor,
        ) -> Tensor:
            # the top-k slots [lo, hi), each paired with every document
            top, top_ok = top[:, lo:hi], top_ok[:, lo:hi]
            s_a, y_a = s.gather(-1, top).unsqueeze(-1), y.gather(-1, top).unsqueeze(-1)
            with torch.no_grad():
                g_a, d_a = g.gather(-1, top).unsqueeze(-1), dd.gather(-1, top).unsqueeze(-1)
                r_a = torch.arange(lo, hi, device=s.device).view(1, -1, 1)
                b_in_top = (rank < kk.unsqueeze(-1)).unsqueeze(-2)
                once = ~b_in_top | (rank.unsqueeze(-2) > r_a)
                use = (
                    top_ok.unsqueeze(-1)
                    & mask.unsqueeze(-2)
                    & once
                    & (y_a != y.unsqueeze(-2))
                    & (idcg > 0).view(-1, 1, 1)
                )
                raw = (g_a - g.unsqueeze(-2)).abs() * (d_a - dd.unsqueeze(-2)).abs()
                delta = _ops.safe_divide(raw, idcg.view(-1, 1, 1), use)
                sign = torch.where(y_a > y.unsqueeze(-2), 1.0, -1.0).to(s.dtype)
            loss = torch.nn.functional.softplus(-sigma * sign * (s_a - s.unsqueeze(-2)))
            return torch.where(use, delta * loss, s.new_zeros(())).sum(dim=(-2, -1))

        def rows(*tensors: Tensor) -> Tensor:
            return _ops.pair_blocks(block, tensors[7].shape[-1], *tensors, cols=s.shape[-1])

        values = _ops.chunked_rows(
            rows, s, y, mask, g, dd, idcg, top, top_ok, rank, kk, per_row=width * s.shape[-1]
        )
        return values, _ops.has_two_levels(y, mask) & (idcg > 0)

    def _closed_form(self, y: Tensor, mask: Tensor) -> ClosedForm | None:
        """See :class:`PairForm`; ``W_ij = |ΔNDCG@k_ij|`` at the current ranking. ``None`` for a
        fractional cut-off (``@cn``)."""
        if self.cutoff is not None and self.cutoff.k is None:
            return None
        return PairForm(loss=self, labels=y, mask=mask)

    def pair_weights(self, scores: Tensor, labels: Tensor, mask: Tensor) -> Tensor:
        """``W`` ``(B, M, M)``: ``|ΔNDCG@k_ij|`` (:func:`lambdarank_delta`) at the ranking by
        ``scores`` for each pair with ``y_i > y_j``, 0 elsewhere (held constant in the scores)."""
        return self.pair_weight_rows(scores, labels, mask)(0, scores.shape[-1])

    def bind_pair_weights(
        self, labels: Tensor, mask: Tensor, like: Tensor
    ) -> Callable[[Tensor], Tensor]:
        """:meth:`pair_weights` for fixed ``labels``/``mask`` as a function of the scores (in
        ``like``'s dtype and device). Built once: the gains' differences ``|G(y_i) − G(y_j)|``
        on the pairs with ``y_i > y_j`` of lists with ``IDCG@k > 0`` (0 elsewhere), and
        ``IDCG@k`` (1 where it is 0). Each call ranks the scores and gives
        ``(|ΔG| · |D̃(π(i)) − D̃(π(j))|) / IDCG@k``: the same operations, in the same order, as
        :func:`lambdarank_delta` on those pairs, and an exact 0 elsewhere."""
        from ..measures.discounts import get_discount
        from ..measures.gains import get_gain

        p = self.params
        discount = get_discount(p["discount"])
        y = _ops.zero_padding(labels.to(like.dtype), mask)
        kk = _ops.cutoff_per_list(
            None if self.cutoff is None else self.cutoff.k, _ops.lengths(mask)
        )
        with torch.no_grad():
            g = _ops.masked_gains(get_gain(p["gain"]), y, mask)
            idcg = _ops.ideal_dcg(g, mask, discount, kk)
            use = _ops.better_pairs(y, mask) & (idcg > 0).view(-1, 1, 1)
            dg = torch.where(use, (g.unsqueeze(-1) - g.unsqueeze(-2)).abs(), 0.0)
            norm = torch.where(idcg > 0, idcg, 1.0).view(-1, 1, 1)

        def weights(scores: Tensor) -> Tensor:
            with torch.no_grad():
                _, rank = _ops.ranking(scores, mask)
                dd = _ops.cut_discounts(discount, rank + 1, mask, kk, scores)
                return (dg * (dd.unsqueeze(-1) - dd.unsqueeze(-2)).abs()).div_(norm)

        return weights

    def pair_weight_rows(
        self, scores: Tensor, labels: Tensor, mask: Tensor
    ) -> Callable[[int, int], Tensor]:
        """The rows ``W[:, lo:hi, :]`` of :meth:`pair_weights` at ``scores``, one block at a
        time: the ranking, the discounts and IDCG@k once, then :func:`_delta` of those rows."""
        from ..measures.discounts import get_discount
        from ..measures.gains import get_gain

        p = self.params
        s, y = _ops.clean(scores, labels, mask)
        kk = _ops.cutoff_per_list(
            None if self.cutoff is None else self.cutoff.k, _ops.lengths(mask)
        )
        g, dd, idcg, _, _ = _lambda_parts(
            s, y, mask, kk, get_gain(p["gain"]), get_discount(p["discount"])
        )

        def rows(lo: int, hi: int) -> Tensor:
            with torch.no_grad():
                delta = _delta(g, dd, idcg, mask, lo, hi)
                return torch.where(_ops.better_pairs(y, mask, lo, hi), delta, 0.0)

        return rows


@register_loss
class AdaRank(Loss):
    """AdaRank (Xu & Li, SIGIR 2007) — registered for its name and parameters only.

    AdaRank is trained by boosting (weak rankers re-weighted by their per-query measure), not by
    gradient descent on a loss: its algorithm lives in :mod:`ndcglab.models.adarank`, which reads
    ``measure`` (``ndcg`` default, or ``map``), the cut-off ``@k`` of NDCG@k (none = full list)
    and ``rounds`` (boosting rounds, default 100) from this entry. Calling it raises
    :class:`NotDifferentiableError`. Not analysed by Ravikumar et al.
    """

    key = "adarank"
    kind = "boosting"
    summary = "AdaRank (boosting; trained by ndcglab.models.adarank, not by gradient)"
    parameters = (
        choice_param("measure", "ndcg", ("ndcg", "map"), "per-query measure AdaRank boosts"),
        int_param("rounds", "100", "number of boosting rounds T"),
    )
    cutoff_rule = "optional"

    def per_list(self, *args: Any, **kwargs: Any) -> Any:
        raise NotDifferentiableError(
            f"{self.name!r} is trained by boosting, not by gradient: it has no per-list loss to "
            "evaluate or differentiate. Fix: train it with ndcglab.models.adarank (e.g. "
            f"NDCGRanker(loss={self.name!r})), or pick a differentiable loss "
            "(ndcglab.losses.available_losses(kind='differentiable'))"
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.per_list(*args, **kwargs)

    def bind(self, *args: Any, **kwargs: Any) -> Any:
        return self.per_list(*args, **kwargs)
