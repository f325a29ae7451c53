"""The original listwise (and pointwise) losses: squared, RankCosine, ListNet, ListMLE.

Ravikumar, Tewari and Yang (AISTATS 2011, Prop. 7) show that squared, cosine and ListNet are
**not** NDCG-consistent; their consistent versions are in :mod:`ndcglab.losses.consistent`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from . import _ops
from ._ops import torch
from .base import Loss, Param, gain_param, register_loss
from .closed_form import ClosedForm, QuadraticForm, SoftmaxForm

if TYPE_CHECKING:  # pragma: no cover
    from torch import Generator, Tensor

__all__ = ["Cosine", "ListMLE", "ListMLEForm", "ListNet", "Squared", "listmle_order"]


class _GainLoss(Loss):
    """A loss comparing the scores with the gains G(y) of the ``gain`` parameter; Ravikumar et
    al. (Prop. 7) show that none of these is NDCG-consistent."""

    parameters: ClassVar[tuple[Param, ...]] = (gain_param(),)
    ndcg_consistent = False

    def _gains(self, y: Tensor, mask: Tensor) -> Tensor:
        """G(y) on the real documents, 0 on padding."""
        return _ops.masked_gains(self.params["gain"], y, mask)


@register_loss
class Squared(_GainLoss):
    """Squared (pointwise regression) loss ``φ(s, y) = ‖s − G(y)‖₂² = Σ_j (s_j − G(y_j))²``.

    Parameters: ``gain`` (default ``exp2``: G(y) = 2^y − 1). Sum over the list's real documents.
    Conventions: defined for every non-empty list (a one-document list gives (s − G)²); empty
    (fully padded) lists get 0. Not NDCG-consistent (Ravikumar et al., Prop. 7): its expected
    minimiser is E[G(y)], which can order documents wrongly (their §3.2.1 example); see
    ``consistent_squared``.
    """

    key = "squared"
    summary = "pointwise squared error ‖s − G(y)‖² (not NDCG-consistent)"
    closed_form_type = QuadraticForm

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        d = torch.where(mask, s - self._gains(y, mask), s.new_zeros(()))
        return (d * d).sum(dim=-1), _ops.lengths(mask) > 0

    def _closed_form(self, y: Tensor, mask: Tensor) -> ClosedForm:
        """Quadratic: ``g = 2(s − G(y))``, ``h = 2`` on real documents."""
        g = self._gains(y, mask)
        return QuadraticForm(scale=2.0 * mask.to(y.dtype), target=2.0 * g, mask=mask)


@register_loss
class Cosine(_GainLoss):
    """RankCosine (Qin et al.): ``φ(s, y) = 1 − ⟨s/‖s‖₂, G(y)/‖G(y)‖₂⟩``.

    Parameters: ``gain`` (default ``exp2``). Lu et al. (PAKDD 2010) write it with φ(y), φ(f) and a
    factor ½; here without the ½ (as Ravikumar et al. and ``docs/losses.md``). Conventions: lists
    with ‖G(y)‖₂ = 0 (no relevant document, or empty) have no loss (0, zero gradient); where
    s = 0 exactly, ‖s‖₂ is taken as 1 (value 1, gradient −G/‖G‖₂), so a zero-initialised model
    gets a finite first step.
    A one-document list gives 1 − sign(s). Not NDCG-consistent (Ravikumar et al., Prop. 7).
    """

    key = "cosine"
    summary = "RankCosine 1 − ⟨s/‖s‖₂, G/‖G‖₂⟩ (not NDCG-consistent)"

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        g = self._gains(y, mask)
        gn, has = _ops.norm2(g)
        sn, _ = _ops.norm2(s)
        return 1.0 - (s * g).sum(dim=-1) / (sn * gn), has


@register_loss
class ListNet(_GainLoss):
    """ListNet, top-one probability cross entropy (Cao et al.)::

        φ(s, y) = − Σ_j P_j log softmax(s)_j,     P = softmax(G(y))

    Parameters: ``gain`` — the target distribution is the softmax of G(y); default ``linear``
    (G(y) = y), i.e. the softmax of the labels, as in Cao et al. and Ravikumar et al., who write the
    loss as KL(P ‖ softmax(s)) = φ(s, y) − H(P); the entropy H(P) does not depend on s, so both have
    the same gradient and minimisers. Conventions: sums over real documents only; a one-document
    list has loss 0 (P = softmax(s) = 1); empty lists have no loss. Not NDCG-consistent
    (Ravikumar et al., Prop. 7): the expected minimiser orders by E[softmax(y)]; see
    ``consistent_listnet``.
    """

    key = "listnet"
    summary = "ListNet top-1 cross entropy −Σ softmax(G(y)) log softmax(s) (not NDCG-consistent)"
    parameters = (
        gain_param("linear", "G in the target softmax(G(y)); linear = softmax of labels"),
    )
    closed_form_type = SoftmaxForm
    masks_padding = True

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        """``−Σ_j P_j log softmax(s)_j`` over the real documents, on uncleaned inputs: padded
        slots enter both softmaxes as :func:`_ops.fill_value` (so ``P`` is exactly 0 there) and
        their log-probabilities are replaced by 0, so neither a value nor a gradient reaches
        them."""
        return self._compute_prepared(s, y, mask, self._prepare(y, mask), generator)

    def _prepare(self, y: Tensor, mask: Tensor) -> Any:
        """The target distribution ``P`` and which lists have a loss."""
        fill = _ops.fill_value(y.dtype)
        p = torch.softmax(torch.where(mask, _ops.gains(self.params["gain"], y), fill), dim=-1)
        return p, mask.any(dim=-1)

    def _compute_prepared(
        self, s: Tensor, y: Tensor, mask: Tensor, prepared: Any, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        p, has = prepared
        logq = torch.log_softmax(torch.where(mask, s, _ops.fill_value(s.dtype)), dim=-1)
        return -(p * torch.where(mask, logq, 0.0)).sum(dim=-1), has

    def _closed_form(self, y: Tensor, mask: Tensor) -> ClosedForm:
        """Softmax: ``g = σ − P``, ``h = σ(1 − σ)`` with σ = softmax(s), P = softmax(G(y)) (a
        one-document list: σ = P = 1, so both are 0)."""
        p = _ops.masked_softmax(self._gains(y, mask), mask)
        mass = (_ops.lengths(mask) > 0).to(y.dtype).unsqueeze(-1)
        return SoftmaxForm(mass=mass, target=p, mask=mask)


def listmle_order(y: Tensor, mask: Tensor, generator: Generator | None = None) -> Tensor:
    """The ListMLE order: indices ``(B, M)`` sorting each list by label, descending, real
    documents first, ties in labels broken at random.

    The randomness is a key κ_t per position: ``torch.rand(M, dtype=float64)`` drawn from
    ``generator`` (torch's global CPU generator when None; for a generator on another device, one
    seed is drawn from it and a CPU generator seeded with it draws the keys), and the t-th real
    document of every list (in input order) gets κ_t. torch draws CPU doubles one after another,
    so κ_t does not depend on M. So the order is deterministic given the generator's state, a
    fresh uniform random permutation of each group of tied documents at each call (e.g. each
    epoch), and it does not depend on padding or on the other lists of the batch. (Lists of one
    batch share the keys, so their tie orders are correlated; each list's own order is uniform.)
    """
    return _order_and_mask(y, mask, generator)[0]


def _tie_keys(m: int, generator: Generator | None) -> np.ndarray:
    """The tie-breaking keys κ_1..κ_m of one call (see :func:`listmle_order`), as NumPy."""
    if generator is not None and generator.device.type != "cpu":
        seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=generator.device))
        generator = torch.Generator().manual_seed(seed)
    return torch.rand(m, generator=generator, dtype=torch.float64).numpy()


_BUILD: Any = object()  # _order_and_mask's default: build the integer keys for this call


def _order_and_mask(
    y: Tensor, mask: Tensor, generator: Generator | None, fast: Any = _BUILD
) -> tuple[Tensor, Tensor]:
    """``(order, mask in that order)`` (see :func:`listmle_order`). The order puts every real
    document first, so when ``mask`` already does, the mask in that order is ``mask`` itself.
    ``fast``: the :class:`_IntegerKeys` of ``y``/``mask`` already built (``None``: they do not
    apply), for a caller that keeps them across calls; by default they are built here."""
    b, m = y.shape
    if m == 0:
        return torch.zeros((b, 0), dtype=torch.long, device=y.device), mask
    keys = _tie_keys(m, generator)
    if fast is _BUILD:
        fast = _IntegerKeys.build(y, mask)
    if fast is not None:
        return fast.order(keys), mask
    neg_inf = y.new_full((), -math.inf)
    pos = torch.arange(m, device=y.device)
    real_first = pos < mask.sum(dim=-1, keepdim=True)
    if bool(torch.equal(mask, real_first)):
        # Real documents first (the usual padding): the t-th real document is document t, so
        # one column permutation by κ, then one stable sort by label, gives the order; the
        # padding, last, is put back in position order.
        perm = torch.as_tensor(np.argsort(keys, kind="stable"), device=y.device)
        by_label = torch.argsort(
            torch.where(mask, y, neg_inf)[:, perm], dim=-1, descending=True, stable=True
        )
        return torch.where(real_first, perm[by_label], pos), mask
    rank_in_list = (torch.cumsum(mask.long(), dim=-1) - 1).clamp_min(0)
    keys_t = torch.as_tensor(keys, dtype=torch.float64, device=y.device)
    key = torch.where(mask, keys_t[rank_in_list], keys_t.new_full((), 2.0))
    by_key = torch.argsort(key, dim=-1, stable=True)
    y_by_key = torch.where(mask, y, neg_inf).gather(-1, by_key)
    by_label = torch.argsort(y_by_key, dim=-1, descending=True, stable=True)
    order = by_key.gather(-1, by_label)
    return order, mask.gather(-1, order)


@dataclass(frozen=True)
class _IntegerKeys:
    """The label part of :func:`listmle_order` for the usual batch, as NumPy integer keys:
    float32/float64 labels on the CPU, real documents first, labels whole numbers in
    ``[0, 2^31)``. With ``2^b >= M`` and the largest real label ``top``, ``base`` holds
    ``(top − label) · 2^2b + t`` for real document ``t`` and ``(top + 1 + t) · 2^2b + t`` for
    padded cell ``t``. A call adds the tie rank ``rank(κ_t) · 2^b`` to every cell, sorts each
    row once and reads the order from the low ``b`` bits: labels descending, ties by κ, the
    padding last in position order — the order of the general path, from one sort of distinct
    integers (no stable comparison sort of float labels). Built once per batch by a bound loss
    (:meth:`~ndcglab.losses.base.Loss.bind`), which leaves only :meth:`order` to each call."""

    base: np.ndarray
    bits: int

    @classmethod
    def build(cls, y: Tensor, mask: Tensor) -> _IntegerKeys | None:
        """The keys of ``y``/``mask``, or ``None`` where they do not apply (another device or
        dtype, padding before a real document, labels not whole numbers in ``[0, 2^31)``, or
        keys that would not fit in 62 bits): the general path then orders the batch."""
        if y.device.type != "cpu" or y.dtype not in (torch.float32, torch.float64):
            return None
        yn = y.detach().numpy()
        mn = mask.numpy()
        m = yn.shape[1]
        pos = np.arange(m)
        real_first = pos < mn.sum(axis=1, keepdims=True)
        if not np.array_equal(mn, real_first):
            return None
        real = yn[real_first]
        if real.size == 0:
            return None
        top = real.max()
        if not (real.min() >= 0 and top < 2**31 and np.array_equal(real, np.floor(real))):
            return None
        bits = max(1, (m - 1).bit_length())
        if int(top + m).bit_length() + 2 * bits > 62:
            return None  # keys would not fit in int64: the general path
        label_part = np.where(real_first, top - yn, top + 1 + pos).astype(np.int64)
        return cls(base=(label_part << (2 * bits)) | pos, bits=bits)

    def order(self, keys: np.ndarray) -> Tensor:
        """The order ``(B, M)`` int64 for the tie-breaking keys κ ``(M,)``."""
        m = self.base.shape[1]
        rank = np.empty(m, np.int64)
        rank[np.argsort(keys, kind="stable")] = np.arange(m)  # rank[t] = the rank of κ_t
        key = self.base | (rank << self.bits)
        key.sort(axis=1)
        key &= (1 << self.bits) - 1
        return torch.from_numpy(key)


def _nll_in_order(s: Tensor, order: Tensor, m_sorted: Tensor) -> Tensor:
    """ListMLE's per-list value of scores ``s`` taken in ``order`` (real documents
    ``m_sorted`` in that order)."""
    s_sorted = s.gather(-1, order)
    if s.device.type == "cpu":
        from ._plackett_luce import sorted_nll

        fused = sorted_nll(s_sorted, m_sorted)
        if fused is not None:
            return fused
    suffix = _ops.masked_suffix_logsumexp(s_sorted, m_sorted)
    return torch.where(m_sorted, suffix - s_sorted, 0.0).sum(dim=-1)


@dataclass
class ListMLEForm(ClosedForm):
    """ListMLE's closed form. With the documents in the loss's own order (labels descending,
    ties broken by :func:`listmle_order` with the same generator, so the draw is the loss's) and
    ``p_ik = exp(s_(k) − logsumexp_{j≥i} s_(j))``::

        g_(k) = Σ_{i≤k} p_ik − 1,        h_(k) = Σ_{i≤k} p_ik (1 − p_ik)

    computed with ``logcumsumexp`` (stable for any score range)."""

    labels: Any
    mask: Any
    #: the label keys of the order (:class:`_IntegerKeys`; None where they do not apply), built
    #: at the first call and kept for the next ones (a boosting objective calls the form once
    #: per round)
    _keys: Any = field(default=_BUILD, init=False, repr=False, compare=False)

    def grad_hess(
        self, scores: Tensor, generator: Generator | None = None
    ) -> tuple[Tensor, Tensor]:
        mask = self.mask
        if self._keys is _BUILD:
            self._keys = _IntegerKeys.build(self.labels, mask)
        order, m = _order_and_mask(self.labels, mask, generator, self._keys)
        ss = torch.where(m, scores.gather(-1, order), -math.inf)
        lse = torch.flip(torch.logcumsumexp(torch.flip(ss, [-1]), dim=-1), [-1])  # LSE_i
        neg = torch.where(m, -lse, -math.inf)
        log_c = torch.logcumsumexp(neg, dim=-1)  # log Σ_{i≤k} e^{−LSE_i}
        log_d = torch.logcumsumexp(2.0 * neg, dim=-1)  # log Σ_{i≤k} e^{−2 LSE_i}
        sz = torch.where(m, ss, 0.0)
        p1 = torch.where(m, torch.exp(sz + torch.where(m, log_c, 0.0)), 0.0)
        p2 = torch.where(m, torch.exp(2.0 * sz + torch.where(m, log_d, 0.0)), 0.0)
        g_sorted = torch.where(m, p1 - 1.0, 0.0)
        h_sorted = torch.where(m, p1 - p2, 0.0)
        g = torch.zeros_like(scores).scatter(-1, order, g_sorted)
        h = torch.zeros_like(scores).scatter(-1, order, h_sorted)
        return g * mask, h * mask


@register_loss
class ListMLE(Loss):
    """ListMLE (Xia et al.): the negative log-likelihood of the label order under the
    Plackett–Luce model of the scores::

        φ(s, y) = − Σ_{i=1..n} log( exp(s_(i)) / Σ_{j≥i} exp(s_(j)) )
                =   Σ_{i=1..n} ( logsumexp_{j≥i} s_(j) − s_(i) )

    where (i) is the i-th document when the list is sorted by label, descending. Ties in labels are
    broken at random with the ``generator`` passed to the call (see :func:`listmle_order`): random
    per call, deterministic given the generator. The suffix log-sum-exps are numerically stable for
    any score range (:func:`ndcglab.losses._ops.masked_suffix_logsumexp`); on the CPU the value
    and its gradient come from :mod:`ndcglab.losses._plackett_luce` (the same numbers as
    autograd of that form, in fewer operations). Conventions: a
    one-document list has loss 0; empty lists have no loss. Not analysed by Ravikumar et al.
    """

    key = "listmle"
    summary = "ListMLE Plackett–Luce likelihood of the label order (ties broken at random)"
    closed_form_type = ListMLEForm
    masks_padding = True

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        """On uncleaned inputs: the order reads labels through the mask, and padded scores
        are masked inside the suffix sums and in the terms."""
        order, m_sorted = _order_and_mask(y, mask, generator)
        return _nll_in_order(s, order, m_sorted), mask.any(dim=-1)

    def _prepare(self, y: Tensor, mask: Tensor) -> Any:
        """The label keys of the order (:class:`_IntegerKeys`; None where they do not apply) and
        which lists have a loss."""
        return _IntegerKeys.build(y, mask), mask.any(dim=-1)

    def _compute_prepared(
        self, s: Tensor, y: Tensor, mask: Tensor, prepared: Any, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        keys, has = prepared
        order, m_sorted = _order_and_mask(y, mask, generator, keys)
        return _nll_in_order(s, order, m_sorted), has

    def _closed_form(self, y: Tensor, mask: Tensor) -> ClosedForm:
        """See :class:`ListMLEForm`."""
        return ListMLEForm(labels=y, mask=mask)
