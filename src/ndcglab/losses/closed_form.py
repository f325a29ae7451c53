"""Closed-form gradients and Hessian diagonals: what a loss may offer besides its value.

A :class:`~ndcglab.losses.Loss` may return a :class:`ClosedForm` from
:meth:`~ndcglab.losses.Loss.closed_form` (``None`` by default): for fixed labels it gives, at any
scores, the exact gradient ``g_i = ∂φ/∂s_i`` and the exact Hessian diagonal ``h_i = ∂²φ/∂s_i²``
of every list, with the same conventions as the loss's value (padding, lists without a loss,
label-only constants). Boosted trees (:mod:`ndcglab.gbdt`) use them instead of autograd; the
contract tests check every one against torch autograd (first and second order).

The forms shared by several losses live here; the pairwise, cost-sensitive and ListMLE forms
are written next to their losses.

=============  =========================================  ========================================
form           loss ``φ`` (real documents only)           ``g``, ``h``
=============  =========================================  ========================================
softmax        ``−Σ p log softmax(s)``, ``c = Σ p``       ``c·σ − p``, ``c·σ(1 − σ)`` (σ = softmax)
exp            ``Σ a·e^s − t·s`` (+ const.)               ``a·e^s − t``, ``a·e^s``
quadratic      ``Σ ½a·s² − t·s`` (+ const.)               ``a·s − t``, ``a``
=============  =========================================  ========================================

Each form also has :meth:`~SoftmaxForm.read_off`: for a callable that claims to be a loss of that
form (an independent implementation carrying a registered loss's name), the label-only
constants are solved from its autograd gradient at two fixed score vectors (``s = 0`` and ``s =
1``; softmax: ``s = e_1``, a one at each list's first document), so the callable's own
conventions are kept. A wrong claim is caught by comparing with autograd at random scores
(:class:`ndcglab.gbdt.LossObjective` does, once per dataset).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from . import _ops
from ._ops import torch

if TYPE_CHECKING:  # pragma: no cover
    from torch import Generator, Tensor

__all__ = [
    "ClosedForm",
    "ExpForm",
    "PairMatrixForm",
    "QuadraticForm",
    "SeparableForm",
    "SoftmaxForm",
    "autograd_gradient",
    "closed_inputs",
]


class ClosedForm:
    """Closed-form derivatives of one loss for fixed labels ``(B, M)`` and mask.

    ``pairs`` says whether the cost per list grows as ``M²`` (pair matrices are built), which is
    how batches are sized. Subclasses are dataclasses of per-list tensors (and, for some, the
    loss); they implement :meth:`grad_hess`, and :meth:`read_off` when the form is fixed up to
    label-only constants.
    """

    pairs: bool = False

    def grad_hess(
        self, scores: Tensor, generator: Generator | None = None
    ) -> tuple[Tensor, Tensor]:
        """``(grad, hess)`` ``(B, M)`` at ``scores``, in the scores' dtype (a form built once
        from float64 labels answers float32 scores in float32), 0 on padding and on lists
        without a loss.

        ``generator`` is the loss's own random draw (ListMLE's tie order), so that the
        derivatives are those of ``loss(scores, labels, mask, generator=...)``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def subset(self, b: int) -> ClosedForm:
        """The same form restricted to the first ``b`` lists: every tensor field (one row per
        list) is cut to its first ``b`` rows, other fields (the loss) are kept. Subclasses are
        dataclasses."""
        form: Any = self
        values = {f.name: getattr(form, f.name) for f in fields(form)}
        rows = {k: v[:b] for k, v in values.items() if isinstance(v, torch.Tensor)}
        return replace(form, **rows)

    @classmethod
    def read_off(cls, fn: Callable[..., Tensor], labels: Tensor, mask: Tensor) -> ClosedForm | None:
        """The form of a callable ``fn`` claimed to be a loss of this form, its label-only
        constants read off its autograd gradient; ``None`` for the forms that are not fixed up
        to such constants (the default)."""
        return None


def closed_inputs(labels: Any, mask: Tensor | None) -> tuple[Tensor, Tensor]:
    """Labels as a floating ``(B, M)`` tensor with padded entries set to 0, and the bool mask
    (``None``: every entry is real) — what the forms are built from."""
    y = labels if isinstance(labels, torch.Tensor) else torch.as_tensor(labels)
    if not y.is_floating_point():
        y = y.to(torch.float64)
    if mask is None:
        mask = torch.ones(y.shape, dtype=torch.bool, device=y.device)
    return torch.where(mask, y, y.new_zeros(())), mask


def autograd_gradient(
    fn: Callable[..., Tensor], scores: Tensor, labels: Tensor, mask: Tensor
) -> Tensor:
    """``∂/∂s Σ_b fn(s, labels, mask)[b]`` by torch autograd, 0 on padding (and where ``fn`` does
    not depend on ``s``)."""
    x = scores.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        value = fn(x, labels, mask).sum()
        (g,) = torch.autograd.grad(value, x, allow_unused=True)
    if g is None:
        return torch.zeros_like(x).detach()
    return g.detach() * mask


def _gradients_at_0_and_1(
    fn: Callable[..., Tensor], labels: Tensor, mask: Tensor
) -> tuple[Tensor, Tensor, Tensor]:
    """``(m, g0, g1)``: the mask as float64 0/1 and ``fn``'s autograd gradients at ``s = 0`` and
    at ``s = 1`` on the real documents — the two probes of the exp and quadratic forms."""
    y = labels.to(torch.float64)
    m = mask.to(y.dtype)
    g0 = autograd_gradient(fn, torch.zeros_like(y), y, mask)
    g1 = autograd_gradient(fn, m, y, mask)
    return m, g0, g1


@dataclass
class SoftmaxForm(ClosedForm):
    """``φ = −Σ p log softmax(s)``: ``g = c·σ − p``, ``h = c·σ(1 − σ)``; ``mass`` ``(B, 1)`` is
    ``c = Σ p``, ``target`` ``(B, M)`` is ``p``."""

    mass: Any
    target: Any
    mask: Any

    def grad_hess(
        self, scores: Tensor, generator: Generator | None = None
    ) -> tuple[Tensor, Tensor]:
        sig = _ops.masked_softmax(scores, self.mask)
        mass, target = self.mass.to(sig.dtype), self.target.to(sig.dtype)
        g = (mass * sig - target) * self.mask
        h = mass * sig * (1.0 - sig) * self.mask
        return g, h

    @classmethod
    def read_off(cls, fn: Callable[..., Tensor], labels: Tensor, mask: Tensor) -> SoftmaxForm:
        """Solve ``c`` and ``p`` from ``fn``'s gradient at ``s = 0`` (σ = 1/n) and ``s = e_1``
        (σ_1 = e/(e + n − 1)); a one-document list keeps its constant gradient."""
        y = labels.to(torch.float64)
        m = mask.to(y.dtype)
        n = m.sum(dim=1, keepdim=True)
        g0 = autograd_gradient(fn, torch.zeros_like(y), y, mask)
        e1 = torch.zeros_like(y)
        if y.shape[1]:
            e1[:, 0] = 1.0
        g1 = autograd_gradient(fn, e1 * m, y, mask)
        nn = torch.clamp(n, min=1.0)
        sig1 = math.e / (math.e + nn - 1.0)
        denom = sig1 - 1.0 / nn
        safe = torch.where(denom.abs() > 0, denom, torch.ones_like(denom))
        mass = torch.where(n > 1, (g1[:, :1] - g0[:, :1]) / safe, torch.zeros_like(n))
        target = (mass / nn - g0) * m
        single = (n == 1).expand_as(target)
        target = torch.where(single, -g0, target)
        return cls(mass=mass, target=target, mask=mask)


@dataclass
class SeparableForm(ClosedForm):
    """``φ = Σ a·f(s) − t·s`` (+ a constant of the labels) for a fixed convex ``f``, with
    ``scale`` ``a`` and ``target`` ``t`` ``(B, M)`` per document: ``g = a·f'(s) − t``,
    ``h = a·f''(s)``. Subclasses fix ``f`` (:class:`ExpForm`, :class:`QuadraticForm`) and read
    ``a`` and ``t`` off a callable from its gradient at ``s = 0`` and ``s = 1``."""

    scale: Any
    target: Any
    mask: Any


class ExpForm(SeparableForm):
    """``φ = Σ a·e^s − t·s`` (+ a constant of the labels): ``g = a·e^s − t``, ``h = a·e^s``."""

    def grad_hess(
        self, scores: Tensor, generator: Generator | None = None
    ) -> tuple[Tensor, Tensor]:
        dt = scores.dtype
        e = torch.exp(scores.masked_fill(~self.mask, 0.0)) * self.scale.to(dt) * self.mask
        return (e - self.target.to(dt)) * self.mask, e

    @classmethod
    def read_off(cls, fn: Callable[..., Tensor], labels: Tensor, mask: Tensor) -> ExpForm:
        """Solve ``a`` and ``t`` from ``fn``'s gradient at ``s = 0`` and ``s = 1``."""
        m, g0, g1 = _gradients_at_0_and_1(fn, labels, mask)
        scale = (g1 - g0) / (math.e - 1.0) * m
        return cls(scale=scale, target=(scale - g0) * m, mask=mask)


class QuadraticForm(SeparableForm):
    """``φ = Σ ½a·s² − t·s`` (+ a constant of the labels): ``g = a·s − t``, ``h = a``."""

    def grad_hess(
        self, scores: Tensor, generator: Generator | None = None
    ) -> tuple[Tensor, Tensor]:
        s = scores.masked_fill(~self.mask, 0.0)
        scale, target = self.scale.to(s.dtype), self.target.to(s.dtype)
        return (scale * s - target) * self.mask, scale * self.mask

    @classmethod
    def read_off(cls, fn: Callable[..., Tensor], labels: Tensor, mask: Tensor) -> QuadraticForm:
        """Solve ``a`` and ``t`` from ``fn``'s gradient at ``s = 0`` and ``s = 1``."""
        m, g0, g1 = _gradients_at_0_and_1(fn, labels, mask)
        return cls(scale=(g1 - g0) * m, target=-g0, mask=mask)


@dataclass
class PairMatrixForm(ClosedForm):
    """A form recomputed at each call from the ``loss`` itself (its pair weights, cut-off and
    gain) and the ``labels``; it builds ``(B, M, M)`` pair matrices (:class:`PairForm
    <ndcglab.losses.pairwise.PairForm>`, :class:`CSForm <ndcglab.losses.cs_listmle.CSForm>`)."""

    loss: Any
    labels: Any
    mask: Any
    pairs = True
