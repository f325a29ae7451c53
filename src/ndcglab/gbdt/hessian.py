"""Derivatives of a loss by torch autograd: the gradient and the Hessian diagonal.

For losses without a closed form (:meth:`ndcglab.losses.Loss.closed_form`), boosted trees take
``g = ∂L/∂s`` by autograd and the diagonal of the Hessian one of three ways (see
``docs/gbdt.md``, "Gradients and Hessians"):

* **exact** — ``M`` batched Hessian-vector products with the unit vectors ``e_j`` (the j-th column
  of every list at once): cost ≈ ``M`` gradient evaluations;
* **hutchinson** — ``diag(H) ≈ (1/S) Σ_k v_k ⊙ H v_k`` with ``S`` Rademacher probes ``v_k``
  (independent per list); unbiased, and for document ``i`` its standard deviation is
  ``sqrt(Σ_{j≠i} H_ij² / S)``;
* **constant** — ``h = 1`` (first-order gradient boosting).

The objective's ``"abs"`` rule (:class:`ndcglab.gbdt.LossObjective`) takes the absolute value of
the exact or Hutchinson diagonal computed here, for non-convex losses.
"""

from __future__ import annotations

import inspect
from typing import Any

from .._compat import torch as _torch
from ..errors import SpecError

__all__ = ["accepts_generator", "hessian_diagonal"]


def accepts_generator(fn: Any) -> bool:
    """Whether ``fn`` takes a ``generator=`` keyword (losses that draw random numbers do)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return False
    return "generator" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _rademacher(torch: Any, shape: tuple[int, ...], gen: Any, dtype: Any) -> Any:
    bits = torch.randint(0, 2, shape, generator=gen, dtype=torch.int8)
    return bits.to(dtype) * 2.0 - 1.0


def hessian_diagonal(
    loss: Any,
    scores: Any,
    labels: Any,
    mask: Any,
    *,
    mode: str = "exact",
    samples: int = 16,
    generator: Any = None,
    loss_generator: Any = None,
) -> tuple[Any, Any]:
    """Gradient and Hessian diagonal of ``Σ_b loss(scores, labels, mask)[b]`` by torch autograd.

    ``scores``, ``labels`` ``(B, M)`` float tensors, ``mask`` ``(B, M)`` bool. ``mode`` is
    ``"exact"`` (``M`` Hessian-vector products with the unit vectors ``e_j``, batched over the
    ``B`` independent lists), ``"hutchinson"`` (``samples`` Rademacher probes) or ``"constant"``
    (no second derivative; the Hessian returned is all ones). Padded cells get 0 in both.
    ``loss_generator`` is handed to losses that draw random numbers (ListMLE's tie breaking), so
    the gradient and the Hessian come from the same draw. Returns ``(grad, hess)`` ``(B, M)``.
    """
    torch = _torch()
    s = scores.detach().clone().requires_grad_(True)
    kwargs = {"generator": loss_generator} if loss_generator is not None else {}
    with torch.enable_grad():
        value = loss(s, labels, mask, **kwargs).sum()
        if mode == "constant":
            (g,) = torch.autograd.grad(value, s, allow_unused=True)
            g = torch.zeros_like(s) if g is None else g
            h = mask.to(s.dtype)
            return g.detach() * mask, h
        (g,) = torch.autograd.grad(value, s, create_graph=True, allow_unused=True)
        if g is None:
            z = torch.zeros_like(s).detach()
            return z, z
        h = torch.zeros_like(s).detach()
        if g.grad_fn is None:  # the loss is linear in s: zero curvature
            return g.detach() * mask, h
        m = s.shape[1]
        if mode == "exact":
            for j in range(m):
                (col,) = torch.autograd.grad(
                    g[:, j].sum(), s, retain_graph=j < m - 1, allow_unused=True
                )
                if col is not None:
                    h[:, j] = col[:, j].detach()
        elif mode == "hutchinson":
            if samples < 1:
                raise SpecError(f"hutchinson_samples must be at least 1, got {samples}")
            for k in range(samples):
                v = _rademacher(torch, tuple(s.shape), generator, s.dtype) * mask
                (hv,) = torch.autograd.grad(
                    g, s, grad_outputs=v, retain_graph=k < samples - 1, allow_unused=True
                )
                if hv is not None:
                    h += v * hv.detach()
            h /= samples
        else:
            raise SpecError(f"unknown Hessian mode {mode!r}; known: exact, hutchinson, constant")
    return g.detach() * mask, h * mask
