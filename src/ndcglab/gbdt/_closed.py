"""Closed-form gradients and exact Hessian diagonals for the losses that have them.

Three families cover the registered losses with a closed form. In each, the gradient of one list's
loss is an affine function of an elementwise (or softmax) transform ``φ`` of the scores:

==========================  =====================  ===========================  ====================
family (registered names)   gradient               Hessian diagonal (exact)     constants
==========================  =====================  ===========================  ====================
softmax: ``listnet``        ``c·softmax(s) − p``   ``c·σ(1 − σ)``, σ=softmax(s)  target ``p``, mass
                                                                                 ``c = Σp`` per list
exp: ``consistent_listnet``  ``a ⊙ exp(s) − u``    ``a ⊙ exp(s)``                ``u = G(y)/‖G(y)‖``
identity: ``squared``,      ``a ⊙ s − t``          ``a``                         ``t`` (G(y) or u)
``consistent_squared``
==========================  =====================  ===========================  ====================

(ListNet: ``−Σ p log softmax(s)`` → ``∂/∂s_i = c σ_i − p_i`` and ``∂²/∂s_i² = c σ_i(1 − σ_i)``;
consistent ListNet ``KL̃(u ‖ exp s) = Σ u log(u/e^s) − Σu + Σe^s`` → ``e^s − u`` and ``e^s``;
squared ``‖s − t‖²`` → ``2(s − t)`` and ``2``.)

The constants (``p``, ``c``, ``u``, ``t``, ``a``) are **read off the registered loss itself** by
evaluating its autograd gradient at two fixed score vectors, once per dataset — ``s = 0`` and
``s = 1`` (for ``softmax``: ``s = e_1``, a one at each list's first document) — and solving the
affine form for them. So the gain, the normaliser (``z``, ``z10``, ``z1``), the treatment of lists
without relevant documents and any scale factor are exactly the loss's own; nothing about its
conventions is copied here. :meth:`LossObjective.bind` then checks the closed-form gradient once
against autograd at random scores and falls back to autograd if the loss is not of the stated form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .._compat import torch as _torch
from .._spec import parse_spec

__all__ = ["CLOSED_FORM_FAMILIES", "closed_form_for"]

#: registered loss name -> family of its closed form
CLOSED_FORM_FAMILIES: dict[str, str] = {
    "listnet": "softmax",
    "consistent_listnet": "exp",
    "squared": "identity",
    "consistent_squared": "identity",
}


def _family_of(loss: Any) -> str | None:
    name = getattr(loss, "name", None)
    if name is None:
        return None
    try:
        spec = parse_spec(str(name), what="loss")
    except Exception:  # noqa: BLE001 - a custom loss with a free-form name has no closed form
        return None
    return CLOSED_FORM_FAMILIES.get(spec.name)


def _grad(loss: Any, s: Any, y: Any, mask: Any) -> Any:
    torch = _torch()
    x = s.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        value = loss(x, y, mask).sum()
        (g,) = torch.autograd.grad(value, x, allow_unused=True)
    if g is None:
        return torch.zeros_like(x).detach()
    return g.detach() * mask


def _masked_softmax(torch: Any, s: Any, mask: Any) -> Any:
    z = s.masked_fill(~mask, -math.inf)
    zmax = z.max(dim=1, keepdim=True).values.clamp_min(-1e300)
    e = torch.exp(z - zmax) * mask
    tot = e.sum(dim=1, keepdim=True)
    return e / torch.where(tot > 0, tot, torch.ones_like(tot))


@dataclass
class _SoftmaxState:
    mass: Any  # (B, 1) c
    target: Any  # (B, M) p
    mask: Any

    def grad_hess(self, s: Any) -> tuple[Any, Any]:
        torch = _torch()
        sig = _masked_softmax(torch, s, self.mask)
        g = (self.mass * sig - self.target) * self.mask
        h = self.mass * sig * (1.0 - sig) * self.mask
        return g, h

    def subset(self, b: int) -> _SoftmaxState:
        return _SoftmaxState(self.mass[:b], self.target[:b], self.mask[:b])


@dataclass
class _ExpState:
    scale: Any  # (B, M) a
    target: Any  # (B, M) u
    mask: Any

    def grad_hess(self, s: Any) -> tuple[Any, Any]:
        torch = _torch()
        e = torch.exp(s.masked_fill(~self.mask, 0.0)) * self.scale * self.mask
        return (e - self.target) * self.mask, e

    def subset(self, b: int) -> _ExpState:
        return _ExpState(self.scale[:b], self.target[:b], self.mask[:b])


@dataclass
class _IdentityState:
    scale: Any  # (B, M) a
    target: Any  # (B, M) t (the gradient is a ⊙ s − t)
    mask: Any

    def grad_hess(self, s: Any) -> tuple[Any, Any]:
        g = (self.scale * s - self.target) * self.mask
        return g, self.scale * self.mask

    def subset(self, b: int) -> _IdentityState:
        return _IdentityState(self.scale[:b], self.target[:b], self.mask[:b])


class _Family:
    def __init__(self, kind: str) -> None:
        self.kind = kind

    def prepare(self, loss: Any, y: Any, mask: Any) -> Any:
        """Read the family's constants off ``loss`` on padded labels ``y`` ``(B, M)``."""
        torch = _torch()
        dtype = torch.float64
        y = y.to(dtype)
        m = mask.to(dtype)
        zero = torch.zeros_like(y)
        g0 = _grad(loss, zero, y, mask)
        if self.kind == "identity":
            g1 = _grad(loss, m, y, mask)
            scale = (g1 - g0) * m
            return _IdentityState(scale=scale, target=-g0, mask=mask)
        if self.kind == "exp":
            g1 = _grad(loss, m, y, mask)
            scale = (g1 - g0) / (math.e - 1.0) * m
            return _ExpState(scale=scale, target=(scale - g0) * m, mask=mask)
        # softmax: g = c σ(s) − p. At s = 0, σ = 1/n; at s = e_1, σ_1 = e / (e + n − 1).
        n = m.sum(dim=1, keepdim=True)
        e1 = torch.zeros_like(y)
        e1[:, 0] = 1.0
        g1 = _grad(loss, e1 * m, y, mask)
        nn = torch.clamp(n, min=1.0)
        sig1 = math.e / (math.e + nn - 1.0)
        denom = sig1 - 1.0 / nn
        safe = torch.where(denom.abs() > 0, denom, torch.ones_like(denom))
        mass = torch.where(n > 1, (g1[:, :1] - g0[:, :1]) / safe, torch.zeros_like(n))
        target = (mass / nn - g0) * m
        # a single-document list: the gradient is the constant g0 (softmax is 1 whatever s is)
        single = (n == 1).expand_as(target)
        target = torch.where(single, -g0, target)
        return _SoftmaxState(mass=mass, target=target, mask=mask)


def closed_form_for(loss: Any) -> _Family | None:
    """The closed-form family of ``loss`` (by its registered name), or ``None``."""
    kind = _family_of(loss)
    return None if kind is None else _Family(kind)
