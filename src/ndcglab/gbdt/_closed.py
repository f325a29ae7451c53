"""Closed-form gradients and exact Hessian diagonals for the losses that have them.

Per list (real documents only; σ = softmax(s)):

* **softmax** — ``listnet`` (any gain): ``φ = −Σ p log σ``;
  ``g = c·σ − p``, ``h = c·σ(1 − σ)`` with target ``p`` and its mass ``c = Σp``.
* **exp** — ``consistent_listnet`` (any norm): ``φ = KL̃(u ‖ e^s) = Σ u log(u/e^s) − Σu + Σe^s``;
  ``g = a·e^s − u``, ``h = a·e^s`` (``a = 1`` for the registered loss).
* **identity** — ``squared``, ``consistent_squared``: ``φ = ‖s − t‖²``; ``g = a·s − t'``, ``h = a``
  (``a = 2``, ``t' = 2t``; ``t = G(y)`` or ``u``).
* **pairwise** — ``ranknet``, ``lambdarank@k``:
  ``φ = Σ_{y_i>y_j} W_ij log(1 + e^{−σ'(s_i − s_j)})``, ``ρ_ij = 1/(1 + e^{σ'(s_i − s_j)})``;
  ``g_i = σ' Σ_j (W_ji ρ_ji − W_ij ρ_ij)``,
  ``h_i = σ'² Σ_j (W_ij ρ_ij (1 − ρ_ij) + W_ji ρ_ji (1 − ρ_ji))``. RankNet: ``W`` from its
  ``weight`` option divided by the number of pairs; LambdaRank: ``W = |ΔNDCG@k|`` at the current
  ranking, from :func:`ndcglab.losses.lambdarank_delta`, held constant (as the loss does, so this
  is the Hessian autograd gives).
* **cs** — ``cs_listmle@k`` (SPEC §3): ``L = Σ_j β_j ln(1 + A_j) / (ln2·DCG)``,
  ``A_j = Σ_t w_jt e^{s_t−s_j} / β_j``. With
  ``q_jt = w_jt e^{s_t−s_j} / (β_j + Σ_t w_jt e^{s_t−s_j})`` and ``Q_j = Σ_t q_jt``:
  ``g_i = (Σ_j β_j q_ji − β_i Q_i) / (ln2·DCG)`` and
  ``h_i = (Σ_j β_j q_ji (1 − q_ji) + β_i Q_i (1 − Q_i)) / (ln2·DCG)``; ``w``, ``β`` and DCG_ĝ@k
  come from :func:`ndcglab.losses.cs_listmle_weights` (the loss's own).
* **listmle** — documents in the loss's own order (labels descending, ties broken by
  :func:`ndcglab.losses.listmle_order` with the same generator, so the draw is the loss's);
  ``p_ik = exp(s_(k) − logsumexp_{j≥i} s_(j))``; ``g_(k) = Σ_{i≤k} p_ik − 1``,
  ``h_(k) = Σ_{i≤k} p_ik (1 − p_ik)``.

For softmax, exp and identity the constants (``p``, ``c``, ``u``, ``t``, ``a``) are **read off the
registered loss itself**: its autograd gradient is evaluated at two fixed score vectors, once per
dataset — ``s = 0`` and ``s = 1`` (softmax: ``s = e_1``, a one at each list's first document) — and
the affine form is solved for them. So the gain, the normaliser (``z``, ``z10``, ``z1``), the
treatment of lists without relevant documents and any scale factor are exactly the loss's own;
none of its conventions is copied here. For the other families the label-only constants come
from the losses package's public helpers named above. In every case
:meth:`~ndcglab.gbdt.LossObjective.bind` checks the closed-form gradient once against autograd of
the loss at random scores and falls back to autograd (with a warning) if they differ.
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
    "ranknet": "pairwise",
    "lambdarank": "pairwise",
    "cs_listmle": "cs",
    "listmle": "listmle",
}


def _family_of(loss: Any) -> str | None:
    name = getattr(loss, "name", None)
    if name is None:
        return None
    try:
        spec = parse_spec(str(name), what="loss")
    except Exception:
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

    def grad_hess(self, s: Any, generator: Any = None) -> tuple[Any, Any]:
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

    def grad_hess(self, s: Any, generator: Any = None) -> tuple[Any, Any]:
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

    def grad_hess(self, s: Any, generator: Any = None) -> tuple[Any, Any]:
        g = (self.scale * s - self.target) * self.mask
        return g, self.scale * self.mask

    def subset(self, b: int) -> _IdentityState:
        return _IdentityState(self.scale[:b], self.target[:b], self.mask[:b])


@dataclass
class _PairwiseState:
    loss: Any
    labels: Any
    mask: Any

    def _weights(self, s: Any) -> Any:
        """``W`` ``(B, M, M)``: the weight of each ordered pair (i better than j), 0 elsewhere."""
        torch = _torch()
        y, mask, loss = self.labels, self.mask, self.loss
        valid = mask.unsqueeze(-1) & mask.unsqueeze(-2)
        pairs = (y.unsqueeze(-1) > y.unsqueeze(-2)) & valid
        key = getattr(loss, "key", "")
        p = loss.params
        if key == "ranknet":
            weight = p["weight"]
            if weight == "none":
                w = pairs.to(s.dtype)
            else:
                v = y if weight == "label" else torch.where(mask, p["gain"](y).to(s.dtype), 0.0)
                w = (v.unsqueeze(-1) - v.unsqueeze(-2)) * pairs
            count = pairs.sum(dim=(-2, -1), keepdim=True).to(s.dtype)
            return torch.where(count > 0, w / count.clamp_min(1.0), 0.0)
        from ..losses.pairwise import lambdarank_delta

        k = None if loss.cutoff is None else loss.cutoff.k
        delta = lambdarank_delta(s, y, mask, k=k, gain=p["gain"], discount=p["discount"])
        return torch.where(pairs, delta.to(s.dtype), 0.0)

    def grad_hess(self, s: Any, generator: Any = None) -> tuple[Any, Any]:
        torch = _torch()
        sigma = float(self.loss.params["sigma"])
        s = s.masked_fill(~self.mask, 0.0)
        w = self._weights(s)
        rho = torch.sigmoid(-sigma * (s.unsqueeze(-1) - s.unsqueeze(-2)))  # ρ_ij
        wr = w * rho
        g = sigma * (wr.sum(dim=-2) - wr.sum(dim=-1))
        c = w * rho * (1.0 - rho)
        h = sigma * sigma * (c.sum(dim=-1) + c.sum(dim=-2))
        return g * self.mask, h * self.mask

    def subset(self, b: int) -> _PairwiseState:
        return _PairwiseState(self.loss, self.labels[:b], self.mask[:b])


@dataclass
class _CSState:
    loss: Any
    labels: Any
    mask: Any

    def grad_hess(self, s: Any, generator: Any = None) -> tuple[Any, Any]:
        torch = _torch()
        from ..losses import cs_listmle_weights

        mask = self.mask
        p = self.loss.params
        w, beta, dcg = cs_listmle_weights(self.labels, mask, k=self.loss.cutoff, gain=p["gain"])
        w, beta, dcg = w.to(s.dtype), beta.to(s.dtype), dcg.to(s.dtype)
        s = s.masked_fill(~mask, 0.0)
        pos = w > 0
        z = torch.where(
            pos, torch.log(torch.where(pos, w, 1.0)) + s.unsqueeze(-2) - s.unsqueeze(-1), -math.inf
        )
        has = beta > 0
        lb = torch.where(has, torch.log(torch.where(has, beta, 1.0)), -math.inf).unsqueeze(-1)
        lse = torch.logsumexp(torch.cat([lb, z], dim=-1), dim=-1, keepdim=True)
        lse = torch.where(has.unsqueeze(-1), lse, 0.0)
        q = torch.where(pos, torch.exp(z - lse), 0.0)  # q[b, j, t]
        big_q = q.sum(dim=-1)
        scale = torch.where(dcg > 0, 1.0 / (math.log(2.0) * dcg.clamp_min(1e-300)), 0.0).unsqueeze(
            -1
        )
        bq = beta.unsqueeze(-1) * q
        g = (bq.sum(dim=-2) - beta * big_q) * scale
        h = ((bq * (1.0 - q)).sum(dim=-2) + beta * big_q * (1.0 - big_q)) * scale
        return g * mask, h * mask

    def subset(self, b: int) -> _CSState:
        return _CSState(self.loss, self.labels[:b], self.mask[:b])


@dataclass
class _ListMLEState:
    labels: Any
    mask: Any

    def grad_hess(self, s: Any, generator: Any = None) -> tuple[Any, Any]:
        torch = _torch()
        from ..losses import listmle_order

        mask = self.mask
        order = listmle_order(self.labels, mask, generator)
        m = mask.gather(-1, order)
        ss = torch.where(m, s.gather(-1, order), -math.inf)
        lse = torch.flip(torch.logcumsumexp(torch.flip(ss, [-1]), dim=-1), [-1])  # LSE_i
        neg = torch.where(m, -lse, -math.inf)
        log_c = torch.logcumsumexp(neg, dim=-1)  # log Σ_{i≤k} e^{−LSE_i}
        log_d = torch.logcumsumexp(2.0 * neg, dim=-1)  # log Σ_{i≤k} e^{−2 LSE_i}
        sz = torch.where(m, ss, 0.0)
        p1 = torch.where(m, torch.exp(sz + torch.where(m, log_c, 0.0)), 0.0)
        p2 = torch.where(m, torch.exp(2.0 * sz + torch.where(m, log_d, 0.0)), 0.0)
        g_sorted = torch.where(m, p1 - 1.0, 0.0)
        h_sorted = torch.where(m, p1 - p2, 0.0)
        g = torch.zeros_like(s).scatter(-1, order, g_sorted)
        h = torch.zeros_like(s).scatter(-1, order, h_sorted)
        return g * mask, h * mask

    def subset(self, b: int) -> _ListMLEState:
        return _ListMLEState(self.labels[:b], self.mask[:b])


class _Family:
    def __init__(self, kind: str) -> None:
        self.kind = kind

    @property
    def quadratic(self) -> bool:
        """Whether a bucket's cost grows as ``B·M²`` (all pairs of a list)."""
        return self.kind in ("pairwise", "cs")

    def prepare(self, loss: Any, y: Any, mask: Any) -> Any:
        """Read the family's constants off ``loss`` on padded labels ``y`` ``(B, M)``."""
        torch = _torch()
        dtype = torch.float64
        y = y.to(dtype)
        if self.kind == "pairwise":
            return _PairwiseState(loss=loss, labels=y, mask=mask)
        if self.kind == "cs":
            return _CSState(loss=loss, labels=y, mask=mask)
        if self.kind == "listmle":
            return _ListMLEState(labels=y, mask=mask)
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
    if kind in ("pairwise", "cs", "listmle") and not hasattr(loss, "params"):
        return None  # a foreign loss with a registered name: autograd instead
    if kind == "pairwise":
        cutoff = getattr(loss, "cutoff", None)
        if not hasattr(loss, "params") or (cutoff is not None and cutoff.k is None):
            return None  # a fractional cut-off (@0.5n) or a foreign loss: autograd instead
    return None if kind is None else _Family(kind)
