"""The Plackett–Luce negative log-likelihood of lists already in order, with its gradient in
closed form (the core of ListMLE).

For a row ``s`` whose real documents (``m``) are in the order to be scored::

    φ(s) = Σ_{i real} ( LSE_i − s_i ),        LSE_i = log Σ_{j ≥ i, j real} exp(s_j)

and its gradient, with ``e_k = exp(s_k − c)`` for the row's largest real score ``c`` and the
suffix sums ``C_i = Σ_{j ≥ i, j real} e_j`` (so ``LSE_i = log C_i + c``)::

    ∂φ/∂s_k = e_k · Σ_{i ≤ k, i real} 1 / C_i  −  1        (0 on padding)

which is ``Σ_{i ≤ k} p_ik − 1`` with ``p_ik = exp(s_k − LSE_i)``, the probability that document
k is drawn at step i. The forward pass computes ``log C_i + c − s_i`` exactly as autograd of
the shifted suffix sums would, and the backward pass is the expression above: the same
operations autograd would perform on that graph, in one step instead of a dozen. Where a second
derivative is asked for (``create_graph=True``: a Hessian–vector product), the backward pass is
built from differentiable operations on the saved scores, so it can be differentiated again.

The shifted form is exact to rounding as long as every real position's suffix sum stays above
``tiny / eps`` of the dtype (scores within about 700 of the row's maximum in float64, 70 in
float32). :func:`sorted_nll` returns ``None`` when any does not (or is NaN), and the caller then
uses ``torch.logcumsumexp``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .._compat import torch as _torch

if TYPE_CHECKING:  # pragma: no cover
    from torch import Tensor

torch = _torch()
_Function: Any = torch.autograd.Function  # a variable, so type checkers accept it as a base

__all__ = ["sorted_nll"]


def _parts(s: Tensor, m: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``(e, C, c)``: shifted exponentials (0 on padding), their suffix sums, the row shift
    (``dtype`` min for a row without a real document, so its ``e`` is 0 too)."""
    x = torch.where(m, s, s.new_full((), -math.inf))
    shift = x.amax(dim=-1, keepdim=True).clamp_min(torch.finfo(s.dtype).min).detach()
    e = (x - shift).exp()
    c = e.flip(-1).cumsum(dim=-1).flip(-1)
    return e, c, shift


def _grad(e: Tensor, c: Tensor, m: Tensor) -> Tensor:
    """``∂φ/∂s`` of every row (see the module docstring). ``C`` is 0 only after a row's last
    real document; the ``1/0`` there is masked, and (in a second derivative) anything from it
    flows only to later, padded positions, which ``torch.where`` drops."""
    inv = torch.where(m, c.reciprocal(), 0.0)
    return e * inv.cumsum(dim=-1) - m.to(e.dtype)


class _SortedNLL(_Function):
    """φ of every row; backward: :func:`_grad` (see the module docstring)."""

    @staticmethod
    def forward(ctx: Any, s: Tensor, m: Tensor, e: Tensor, c: Tensor, shift: Tensor) -> Tensor:
        ctx.save_for_backward(s, m, e, c)
        return torch.where(m, c.log() + shift - s, 0.0).sum(dim=-1)

    @staticmethod
    def backward(ctx: Any, gout: Tensor) -> tuple[Tensor | None, ...]:
        s, m, e, c = ctx.saved_tensors
        if torch.is_grad_enabled():  # create_graph: rebuild e and C from s, differentiably
            e, c, _ = _parts(s, m)
        return _grad(e, c, m) * gout.unsqueeze(-1), None, None, None, None


def sorted_nll(s: Tensor, m: Tensor) -> Tensor | None:
    """φ ``(B,)`` of rows ``s`` ``(B, M)`` already in order (real documents ``m``), with the
    closed-form gradient; ``None`` where the shifted form would lose precision (see the module
    docstring), and the caller computes the suffix sums with ``torch.logcumsumexp`` instead."""
    if s.numel() == 0:
        return None
    with torch.no_grad():
        e, c, shift = _parts(s.detach(), m)
        # C with 1 on padding: the test below and the logarithm of the forward pass read only the
        # real positions, and the logarithm of the 0s there would take the slow path of log
        c = torch.where(m, c, 1.0)
        finfo = torch.finfo(s.dtype)
        if not bool(c.amin() >= finfo.tiny / finfo.eps):
            return None  # a NaN fails this test too
    out: Tensor = _SortedNLL.apply(s, m, e, c, shift)
    return out
