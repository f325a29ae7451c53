"""Tensor helpers shared by the losses: masking, gains, discounts, DCG norms, safe norms, pairs.

Conventions used everywhere in :mod:`ndcglab.losses`:

* a batch is padded: ``scores``, ``labels`` and the bool ``mask`` (True = a real document) are
  ``(B, M)`` tensors; every helper here first replaces padded entries by constants with
  :func:`torch.where`, so that junk (even NaN) in padded slots changes neither a value nor a
  gradient;
* every tensor is created on the scores' device with the scores' floating dtype;
* torch is imported lazily (through :mod:`ndcglab._compat`), so that ``import ndcglab.losses``,
  :func:`~ndcglab.losses.available_losses` and :func:`~ndcglab.losses.describe_losses` work
  without it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _compat
from .._spec import Cutoff

if TYPE_CHECKING:  # pragma: no cover
    from torch import Tensor

    from ..measures.discounts import Discount
    from ..measures.gains import Gain


class _LazyTorch:
    """``torch``, imported on first attribute access through :func:`ndcglab._compat.torch`."""

    _module: ModuleType | None = None

    def __getattr__(self, name: str) -> Any:
        mod = _LazyTorch._module
        if mod is None:
            mod = _LazyTorch._module = _compat.torch()
        value = getattr(mod, name)
        # keep it on the instance: later look-ups of the name skip this method (per-batch cost)
        self.__dict__[name] = value
        return value


torch: Any = _LazyTorch()

#: Largest number of pair-matrix entries (rows × M × M) processed at once by pairwise losses;
#: bigger batches are split into chunks that are recomputed in the backward pass.
PAIR_BUDGET = 1 << 22


def zero_padding(x: Tensor, mask: Tensor) -> Tensor:
    """``x`` with padded entries replaced by 0 (no value or gradient flows there)."""
    return torch.where(mask, x, x.new_zeros(()))


def clean(scores: Tensor, labels: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    """Scores and labels (cast to the scores' dtype) with padded entries replaced by 0."""
    return zero_padding(scores, mask), zero_padding(labels.to(dtype=scores.dtype), mask)


def lengths(mask: Tensor) -> Tensor:
    """Number of real documents per list, ``(B,)`` int64."""
    return mask.sum(dim=-1)


def gains(gain: Gain, y: Tensor) -> Tensor:
    """``G(y)`` of every entry, padding included (a :mod:`ndcglab.measures.gains` object), in
    ``y``'s dtype and on its device; for a caller that masks the padding itself."""
    g = gain(y)
    if not isinstance(g, torch.Tensor):
        g = torch.as_tensor(np.asarray(g), device=y.device)
    return g.to(dtype=y.dtype, device=y.device)


def masked_gains(gain: Gain, y: Tensor, mask: Tensor) -> Tensor:
    """``G(y)`` on real documents, 0 on padding (a :mod:`ndcglab.measures.gains` object)."""
    return torch.where(mask, gains(gain, y), y.new_zeros(()))


def discount_rows(discount: Discount, m: int, n: Tensor, like: Tensor) -> Tensor:
    """``D(r)`` for positions r = 1..m as a ``(1, m)`` tensor, or ``(B, m)`` when the discount
    depends on the list length n (``linear``: n − r). Built from the measures' discount object."""
    if getattr(discount, "depends_on_length", False):
        ranks = np.arange(1, m + 1, dtype=np.float64)[None, :]
        ns = n.detach().to("cpu").numpy().astype(np.float64)[:, None]
        table = np.asarray(discount(ranks, ns), dtype=np.float64)
        table = np.broadcast_to(table, (ns.shape[0], m))
    else:
        table = np.asarray(discount.table(m), dtype=np.float64)[None, :]
    return torch.as_tensor(np.array(table, dtype=np.float64), dtype=like.dtype, device=like.device)


def cutoff_per_list(cutoff: Cutoff | int | Tensor | None, n: Tensor) -> Tensor:
    """The cut-off k of each list as an int64 ``(B,)`` tensor: the list length when there is no
    cut-off, the fixed k (a :class:`~ndcglab._spec.Cutoff` or an int), ``Cutoff.k_for(n)`` (ceil
    rounding) for a fraction of the list, or a per-list tensor of k's as given."""
    if isinstance(cutoff, int):
        cutoff = Cutoff(k=cutoff)
    if cutoff is None:
        return n.clone()
    if not isinstance(cutoff, Cutoff):  # a per-list tensor
        return cutoff.to(device=n.device, dtype=n.dtype)
    if cutoff.k is not None:
        return torch.full_like(n, cutoff.k)
    cache: dict[int, int] = {}
    ks = [cache.setdefault(v, cutoff.k_for(v)) for v in n.tolist()]
    return torch.as_tensor(ks, dtype=n.dtype, device=n.device)


def positions(like: Tensor) -> Tensor:
    """1-based positions ``(1, M)`` as int64 on ``like``'s device."""
    return torch.arange(1, like.shape[-1] + 1, device=like.device).unsqueeze(0)


def ranking(scores: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
    """The ranking by ``scores``: ``(order, rank)``, both ``(B, M)`` int64, no gradient.

    Scores descending, **ties in input order** (a stable sort: the measures' ``ties=input``
    rule), padded slots after every real document. ``order[b, r]`` is the document at 0-based
    position r; ``rank[b, i]`` the 0-based position of document i (so ``order`` and ``rank`` are
    inverse permutations)."""
    with torch.no_grad():
        m = scores.shape[-1]
        key = torch.where(mask, scores.detach(), scores.new_full((), -math.inf))
        order = torch.argsort(key, dim=-1, descending=True, stable=True)
        rank = torch.empty_like(order)
        idx = torch.arange(m, device=scores.device).expand_as(order).contiguous()
        rank.scatter_(-1, order, idx)
        return order, rank


def cut_discounts(
    discount: Discount, pos: Tensor, mask: Tensor, k: Tensor | int | None, like: Tensor
) -> Tensor:
    """``D̃(pos) = D(pos) · I[pos ≤ k]`` for 1-based integer positions ``pos`` ``(B, M)`` (0 on
    padding): the discount a document gets at that position of a ranking cut at ``k`` (an int, a
    per-list ``(B,)`` tensor, or None for the whole list). ``D`` is a
    :mod:`ndcglab.measures.discounts` object, tabulated by :func:`discount_rows` for the list
    lengths of ``mask``. No gradient."""
    with torch.no_grad():
        n = lengths(mask)
        m = pos.shape[-1]
        d = discount_rows(discount, m, n, like).expand(pos.shape[0], m)
        p = pos.long()
        keep = mask & (p >= 1) & (p <= m)
        if k is not None:
            keep = keep & (p <= (k.unsqueeze(-1) if isinstance(k, torch.Tensor) else k))
        got = d.gather(-1, (p - 1).clamp(0, max(m - 1, 0)))
        return torch.where(keep, got, like.new_zeros(()))


def ideal_dcg(g: Tensor, mask: Tensor, discount: Discount, k: Tensor | int | None = None) -> Tensor:
    """The DCG norm ``Z_k = IDCG@k = Σ_{r≤k} G(y)_(r) D(r)`` (gains sorted descending), ``(B,)``.

    ``k=None`` is the full norm ‖G(y)‖_D. Constant in the scores (computed without gradient).
    The one torch function for the ideal DCG; ``g`` are gains from :func:`masked_gains`."""
    with torch.no_grad():
        n = lengths(mask)
        m = g.shape[-1]
        if m == 0:
            return g.new_zeros(g.shape[:-1])
        ranked = torch.sort(
            torch.where(mask, g, g.new_full((), -math.inf)), dim=-1, descending=True
        ).values
        real = positions(g) <= n.unsqueeze(-1)  # the sorted real gains come first
        pos = positions(g).expand(g.shape[0], m)
        d = cut_discounts(discount, pos, real, k, g)
        return torch.where(real, ranked * d, g.new_zeros(())).sum(dim=-1)


def safe_divide(num: Tensor, den: Tensor, ok: Tensor) -> Tensor:
    """``num / den`` where ``ok``, 0 elsewhere, with no NaN in values or gradients."""
    one = den.new_ones(())
    return torch.where(ok, num / torch.where(ok, den, one), num.new_zeros(()))


def norm2(s: Tensor) -> tuple[Tensor, Tensor]:
    """``(‖s‖₂, ‖s‖₂ > 0)`` over the last axis; the norm is 1 where s = 0, so that the normalised
    losses stay finite and their gradient at s = 0 is the one of the numerator."""
    sq = (s * s).sum(dim=-1)
    pos = sq > 0
    return torch.sqrt(torch.where(pos, sq, sq.new_ones(()))), pos


def norm_q(s: Tensor, q: Tensor) -> tuple[Tensor, Tensor]:
    """``(‖s‖_q, ‖s‖_q > 0)`` over the last axis for ``q ≥ 1`` given per list ``(B, 1)``.

    Computed as ``c · (Σ (|s|/c)^q)^{1/q}`` with the constant c = max|s| (detached), which is
    exact and avoids overflow for large q; the norm is 1 where s = 0 (see :func:`norm2`)."""
    if s.shape[-1] == 0:
        return s.new_ones(s.shape[:-1]), torch.zeros(
            s.shape[:-1], dtype=torch.bool, device=s.device
        )
    a = s.abs()
    c = a.detach().amax(dim=-1, keepdim=True).clamp_min(torch.finfo(s.dtype).tiny)
    t = ((a / c) ** q).sum(dim=-1)
    pos = t > 0
    root = torch.where(pos, t, t.new_ones(())) ** (1.0 / q.squeeze(-1))
    return torch.where(pos, c.squeeze(-1) * root, s.new_ones(())), pos


def fill_value(dtype: Any) -> float:
    """A very negative finite number for padded logits (exp of it is exactly 0)."""
    return float(torch.finfo(dtype).min)


def masked_log_softmax(x: Tensor, mask: Tensor) -> Tensor:
    """``log softmax`` over the real documents of each list (0 on padding)."""
    z = torch.where(mask, x, x.new_full((), fill_value(x.dtype)))
    out = torch.log_softmax(z, dim=-1)
    return torch.where(mask, out, x.new_zeros(()))


def masked_softmax(x: Tensor, mask: Tensor) -> Tensor:
    """``softmax`` over the real documents of each list (0 on padding; 0 for empty lists)."""
    z = torch.where(mask, x, x.new_full((), fill_value(x.dtype)))
    out = torch.softmax(z, dim=-1)
    return torch.where(mask, out, x.new_zeros(()))


def masked_logcumsumexp(x: Tensor, mask: Tensor, *, reverse: bool = False) -> Tensor:
    """``log Σ exp(x_j)`` over the real entries ``j ≤ i`` of each row (``j ≥ i`` with
    ``reverse``), for every position ``i`` of the last axis; :func:`fill_value` where that set is
    empty. Values and gradients equal ``torch.logcumsumexp`` of ``x`` with padding at
    :func:`fill_value` (to rounding).

    Computed as ``log cumsum exp(x − c) + c`` with ``c`` the row's largest real entry, whose
    backward is several times cheaper than ``logcumsumexp``'s. That is exact to rounding as long
    as every real position's sum stays above ``tiny / eps`` of the dtype (scores within about 700
    of the row's maximum in float64, 70 in float32); when any does not, or a value is not finite,
    the batch is computed with ``torch.logcumsumexp`` instead, so a wide score range never loses
    precision.
    """
    fill = x.new_full((), fill_value(x.dtype))
    if x.numel() == 0:
        return torch.where(mask, x, fill)
    shift = torch.where(mask, x, x.new_full((), -math.inf)).amax(dim=-1, keepdim=True)
    shift = torch.where(torch.isfinite(shift), shift, x.new_zeros(())).detach()
    e = torch.where(mask, torch.exp(torch.where(mask, x - shift, x.new_zeros(()))), 0.0)
    if reverse:
        c = e.flip(-1).cumsum(dim=-1).flip(-1)
        nonempty = mask.flip(-1).cummax(dim=-1).values.flip(-1)
    else:
        c = e.cumsum(dim=-1)
        nonempty = mask.cummax(dim=-1).values
    finfo = torch.finfo(x.dtype)
    if not bool(torch.where(nonempty, c >= finfo.tiny / finfo.eps, True).all()):
        z = torch.where(mask, x, fill)
        if reverse:
            return torch.logcumsumexp(z.flip(-1), dim=-1).flip(-1)
        return torch.logcumsumexp(z, dim=-1)
    return torch.where(nonempty, torch.log(torch.where(nonempty, c, 1.0)) + shift, fill)


def masked_suffix_logsumexp(x: Tensor, mask: Tensor) -> Tensor:
    """``log Σ exp(x_j)`` over the real entries ``j ≥ i`` of each row, for every position ``i``
    (about :func:`fill_value` where that set is empty): :func:`masked_logcumsumexp` on the CPU,
    where its cumulative-sum form is the faster one, and ``torch.logcumsumexp`` of the padded
    row on other devices, where that form's extra kernels and its check read back to the host
    cost more than they save (on a GPU, about 0.7 ms against 0.4 ms forward and backward for
    64 lists of 60 to 300 documents)."""
    if x.device.type == "cpu":
        return masked_logcumsumexp(x, mask, reverse=True)
    return padded_suffix_logsumexp(x, mask)


def padded_suffix_logsumexp(x: Tensor, mask: Tensor) -> Tensor:
    """:func:`masked_suffix_logsumexp` as ``torch.logcumsumexp`` of the row with its padding set
    to :func:`fill_value` (the form used off the CPU; equal to the masked form, to rounding,
    wherever a suffix holds a real document)."""
    z = torch.where(mask, x, fill_value(x.dtype))
    return torch.logcumsumexp(z.flip(-1), dim=-1).flip(-1)


def has_two_levels(y: Tensor, mask: Tensor) -> Tensor:
    """True for lists with at least one pair of real documents with different labels."""
    big = y.new_full((), math.inf)
    lo = torch.where(mask, y, big).amin(dim=-1) if y.shape[-1] else y.new_zeros(y.shape[:-1])
    hi = torch.where(mask, y, -big).amax(dim=-1) if y.shape[-1] else y.new_zeros(y.shape[:-1])
    return (hi > lo) & (mask.sum(dim=-1) >= 2)


def better_pairs(y: Tensor, mask: Tensor, lo: int = 0, hi: int | None = None) -> Tensor:
    """``P[b, i, j] = (y_i > y_j)`` for real documents i, j: the ordered pairs that count; with
    ``lo``/``hi``, only the rows ``i`` in ``[lo, hi)`` (``(B, hi − lo, M)``)."""
    valid = mask[:, lo:hi].unsqueeze(-1) & mask.unsqueeze(-2)
    return (y[:, lo:hi].unsqueeze(-1) > y.unsqueeze(-2)) & valid


def chunked_rows(
    fn: Callable[..., Tensor],
    *tensors: Tensor,
    per_row: int | None = None,
    budget: int | None = None,
) -> Tensor:
    """``fn(*tensors)`` (→ ``(B,)``) evaluated in chunks of lists when the pair matrices
    (``per_row`` entries per list, M² by default) would exceed ``budget`` entries (default
    :data:`PAIR_BUDGET`); with gradients on, each chunk is checkpointed (recomputed in the
    backward pass) so memory stays bounded by one chunk."""
    b, m = tensors[0].shape[0], tensors[0].shape[-1]
    cap = PAIR_BUDGET if budget is None else budget
    cost = m * m if per_row is None else per_row
    rows = max(1, cap // max(cost, 1))
    if rows >= b:
        return fn(*tensors)
    from torch.utils.checkpoint import checkpoint

    outs = []
    grad = torch.is_grad_enabled() and any(t.requires_grad for t in tensors)
    # a list whose pairs alone exceed the budget goes alone and un-checkpointed here: ``fn``
    # splits its pairs into checkpointed blocks itself (:func:`pair_blocks`)
    wrap = grad and cost <= cap
    for start in range(0, b, rows):
        part = [t[start : start + rows] for t in tensors]
        outs.append(checkpoint(fn, *part, use_reentrant=False) if wrap else fn(*part))
    return torch.cat(outs)


def pair_blocks(
    fn: Callable[..., Tensor],
    width: int,
    *tensors: Tensor,
    cols: int,
    budget: int | None = None,
) -> Tensor:
    """``Σ_blocks fn(lo, hi, *tensors)`` (→ ``(B,)``) over blocks ``[lo, hi)`` of the first pair
    axis ``0..width``, each block holding at most ``budget`` pair entries (``B × (hi − lo) ×
    cols``; default :data:`PAIR_BUDGET`); with gradients on, each block is checkpointed, so the
    memory of one long list is bounded by one block, not M². One block (``fn(0, width, …)``, the
    same operations as unblocked) when everything fits."""
    b = tensors[0].shape[0]
    cap = PAIR_BUDGET if budget is None else budget
    step = max(1, cap // max(b * cols, 1))
    if step >= width:
        return fn(0, width, *tensors)
    from torch.utils.checkpoint import checkpoint

    grad = torch.is_grad_enabled() and any(t.requires_grad for t in tensors)
    total: Tensor | None = None
    for lo in range(0, width, step):
        hi = min(width, lo + step)
        part = (
            checkpoint(fn, lo, hi, *tensors, use_reentrant=False) if grad else fn(lo, hi, *tensors)
        )
        total = part if total is None else total + part
    assert total is not None
    return total


def pairs_below(y: Tensor, mask: Tensor) -> Tensor:
    """``Σ_i #{j: y_j < y_i}`` over the real documents of each list, ``(B,)`` int64: the number
    of ordered pairs of :func:`better_pairs`, in O(M log M) without a pair matrix."""
    with torch.no_grad():
        key = torch.where(mask, y, y.new_full((), math.inf))
        asc = torch.sort(key, dim=-1).values.contiguous()
        below = torch.searchsorted(asc, key.contiguous(), right=False)
        return torch.where(mask, below, torch.zeros_like(below)).sum(dim=-1)
