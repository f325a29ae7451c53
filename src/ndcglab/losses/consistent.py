"""NDCG-consistent surrogates of Ravikumar, Tewari and Yang, "On NDCG Consistency of Listwise
Ranking Methods" (AISTATS 2011).

All of them compare the scores s with the **normalised gains** ::

    u(y) = G(y) / ‖G(y)‖_D            ‖G(y)‖_D = Z(y) = IDCG(y), the DCG norm

(Lemma 4: the Bayes-optimal ranking for NDCG sorts documents by E[u(y) | x], not E[G(y) | x]).
The paper's experiments also use truncated norms Z_k(y) = IDCG@k(y) (``norm=z1``, ``z10``,
any ``zK``); NDCG-consistency is proven for the full norm (``norm=z``, the default).

Common parameters: ``gain`` (default ``exp2``, G = 2^y − 1), ``discount`` (default ``log``,
D(r) = 1/log2(1 + r)), both resolved with :mod:`ndcglab.measures` (``get_gain``,
``get_discount``), and ``norm``. Lists whose norm is 0 (no relevant document, or empty) have no
loss: u is undefined there, the value is 0 and the gradient 0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import SpecError
from . import _ops
from ._ops import torch
from .base import (
    DEFAULT_DISCOUNT,
    DEFAULT_GAIN,
    Loss,
    Param,
    choice_param,
    discount_param,
    gain_param,
    number_param,
    register_loss,
)
from .closed_form import ClosedForm, ExpForm, QuadraticForm

if TYPE_CHECKING:  # pragma: no cover
    from torch import Generator, Tensor

    from ..measures.discounts import Discount
    from ..measures.gains import Gain

__all__ = [
    "Bregman",
    "ConsistentCosine",
    "ConsistentListNet",
    "ConsistentSquared",
    "Potential",
    "QNorm",
    "bregman_divergence",
    "get_potential",
    "normalised_gains",
]

_NORM = re.compile(r"z([0-9]*)\Z")


def _convert_norm(v: Any) -> int | None:
    t = str(v).strip().lower()
    m = _NORM.match(t)
    if not m:
        raise ValueError("write z (full DCG norm) or zK with K a positive whole number, e.g. z10")
    if not m.group(1):
        return None
    digits = m.group(1).lstrip("0")
    if not digits:
        raise ValueError("the K of zK must be at least 1")
    if len(digits) > 9:  # IDCG@K beyond any list is the full norm: a billion is plenty
        raise ValueError("the K of zK must be at most 999999999 (write z for the full norm)")
    return int(digits)


def _show_norm(k: int | None) -> str:
    return "z" if k is None else f"z{k}"


NORM_PARAM = Param(
    "norm",
    "z",
    _convert_norm,
    _show_norm,
    "z (full DCG norm ‖G(y)‖_D) or zK (IDCG@K, e.g. z1, z10)",
    "DCG norm dividing the gains: z = ‖G(y)‖_D, zK = IDCG@K",
)


def normalised_gains(
    labels: Tensor,
    mask: Tensor,
    *,
    gain: Gain | str = DEFAULT_GAIN,
    discount: Discount | str = DEFAULT_DISCOUNT,
    norm: int | str | None = None,
) -> tuple[Tensor, Tensor]:
    """``(u, ok)``: u = G(y)/Z_k(y) on real documents (0 on padding and where ok is False),
    ``ok = Z_k(y) > 0`` per list. ``norm``: None or ``"z"`` for the full norm, an int K or
    ``"zK"`` for IDCG@K. Labels must be a floating tensor (use ``labels.double()``). Each row of
    the last axis is one list: ``(M,)`` is one list (``ok`` is then 0-d), ``(..., B, M)`` a batch
    of any leading shape."""
    from ..measures.discounts import get_discount
    from ..measures.gains import get_gain

    if labels.dim() != 2:
        if labels.dim() == 0 or mask.shape != labels.shape:
            from .base import LossInputError

            raise LossInputError(
                f"normalised_gains needs labels of shape (..., M) and a mask of the same shape, "
                f"got {tuple(labels.shape)} and {tuple(mask.shape)}. Fix: pass one list as (M,) "
                "or a batch as (B, M), with a bool mask of the labels' shape"
            )
        flat_u, flat_ok = normalised_gains(
            labels.reshape(-1, labels.shape[-1]),
            mask.reshape(-1, labels.shape[-1]),
            gain=gain,
            discount=discount,
            norm=norm,
        )
        return flat_u.reshape(labels.shape), flat_ok.reshape(labels.shape[:-1])
    k = _convert_norm(norm) if isinstance(norm, str) else norm
    y = torch.where(mask, labels, labels.new_zeros(()))
    g = _ops.masked_gains(get_gain(gain), y, mask)
    z = _ops.ideal_dcg(g, mask, get_discount(discount), k)
    ok = z > 0
    u = _ops.safe_divide(g, z.unsqueeze(-1), ok.unsqueeze(-1))
    return u, ok


class _ConsistentBase(Loss):
    parameters: ClassVar[tuple[Param, ...]] = (gain_param(), discount_param(), NORM_PARAM)
    ndcg_consistent = True

    def _u(self, y: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        return normalised_gains(
            y,
            mask,
            gain=self.params["gain"],
            discount=self.params["discount"],
            norm=self.params["norm"],
        )

    def _live_u(self, y: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """``(u, live)``: u as :meth:`_u` gives it, and ``live`` the 0/1 indicator (labels'
        dtype) of the real documents of lists with a loss — what the closed forms are built
        from."""
        u, ok = self._u(y, mask)
        return u, (mask & ok.unsqueeze(-1)).to(y.dtype)


@register_loss
class ConsistentSquared(_ConsistentBase):
    """NDCG-consistent squared loss (Ravikumar et al. §3.3): ``φ̃_sq(s, y) = ‖s − u(y)‖₂²``,
    u = G(y)/‖G(y)‖_D. The expected minimiser is s* = E[u(y)] (Bregman family with
    ψ = ‖·‖², Thm 8–9). Parameters ``gain``, ``discount``, ``norm`` (module docstring); lists with
    norm 0 have no loss; a one-document list with G(y) > 0 has u = 1/D(1) (= 1 for the log
    discount), so its loss is (s − 1/D(1))².
    """

    key = "consistent_squared"
    summary = "NDCG-consistent squared loss ‖s − G/‖G‖_D‖² (Ravikumar et al.)"
    closed_form_type = QuadraticForm

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        u, ok = self._u(y, mask)
        d = torch.where(mask, s - u, s.new_zeros(()))
        return (d * d).sum(dim=-1), ok

    def _closed_form(self, y: Tensor, mask: Tensor) -> ClosedForm:
        """Quadratic: ``g = 2(s − u)``, ``h = 2`` on the real documents of lists with a loss."""
        u, live = self._live_u(y, mask)
        return QuadraticForm(scale=2.0 * live, target=2.0 * u * live, mask=mask)


@register_loss
class ConsistentCosine(_ConsistentBase):
    """NDCG-consistent cosine loss (Ravikumar et al. §3.3): ``φ̃_cos(s, y) = 1 − ⟨s/‖s‖₂, u(y)⟩``.

    u = G(y)/‖G(y)‖_D is *not* of unit ℓ2 norm, so values are not confined to [0, 2]. Consistent
    but neither convex nor with a unique minimiser (any positive multiple of E[u] minimises the
    expected loss). Where s = 0 exactly, ‖s‖₂ is taken as 1 (value 1, gradient −u). Lists with norm
    0 have no loss.
    """

    key = "consistent_cosine"
    summary = "NDCG-consistent cosine 1 − ⟨s/‖s‖₂, G/‖G‖_D⟩ (Ravikumar et al.)"

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        u, ok = self._u(y, mask)
        sn, _ = _ops.norm2(s)
        return 1.0 - (s * u).sum(dim=-1) / sn, ok


@register_loss
class ConsistentListNet(_ConsistentBase):
    """NDCG-consistent ListNet (Ravikumar et al. §3.3): the generalised KL divergence ::

        φ̃_list(s, y) = KL̃(u ‖ exp(s)) = Σ_j [ u_j log(u_j / e^{s_j}) − u_j + e^{s_j} ]
                     = Σ_j [ u_j log u_j − u_j s_j − u_j + e^{s_j} ]

    with 0·log 0 = 0, over the real documents. The expected minimiser is exp(s*) = E[u], i.e.
    s* = log E[u] (Bregman family with h = exp, see ``bregman``). Lists with norm 0 have no loss.
    """

    key = "consistent_listnet"
    summary = "NDCG-consistent ListNet KL̃(G/‖G‖_D ‖ exp(s)) (Ravikumar et al.)"
    closed_form_type = ExpForm

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        u, ok = self._u(y, mask)
        t = torch.xlogy(u, u) - u * s - u + torch.exp(s)
        return torch.where(mask, t, s.new_zeros(())).sum(dim=-1), ok

    def _closed_form(self, y: Tensor, mask: Tensor) -> ClosedForm:
        """Exp: ``g = e^s − u``, ``h = e^s`` on the real documents of lists with a loss."""
        u, live = self._live_u(y, mask)
        return ExpForm(scale=live, target=u * live, mask=mask)


# --------------------------------------------------------------------------- Bregman family
@dataclass(frozen=True)
class Potential:
    """A convex pair (ψ, ψ*) for the Bregman loss, named by the score-side generator
    ``ψ*(s) = ψ_out(Σ_j h(s_j))``.

    Each member supplies, in closed form:
    ``conj(s)`` = ψ*(s); ``b(s)`` = ∇ψ*(s) = (∇ψ)^{-1}(s) (so that ∇ψ(b(s)) = s);
    ``psi_b(s)`` = ψ(b(s)); ``psi(u)`` = ψ(u), the Fenchel conjugate of ψ* at u (a constant of the
    labels; numeric for ``outer=exp``). All act on the last axis over the real documents
    (``mask``); ``b`` is 0 on padding.
    """

    h: str
    outer: str

    @property
    def name(self) -> str:
        return f"h={self.h},outer={self.outer}"

    def conj(self, s: Tensor, mask: Tensor) -> Tensor:
        if self.h == "exp":
            return _msum(torch.exp(s), mask)
        sq = _msum(s * s, mask)
        if self.outer == "identity":
            return sq
        if self.outer == "square":
            return sq * sq
        return torch.exp(sq)

    def b(self, s: Tensor, mask: Tensor) -> Tensor:
        if self.h == "exp":
            out = torch.exp(s)
        else:
            sq = _msum(s * s, mask).unsqueeze(-1)
            if self.outer == "identity":
                out = 2.0 * s
            elif self.outer == "square":
                out = 4.0 * sq * s
            else:
                out = 2.0 * torch.exp(sq) * s
        return torch.where(mask, out, s.new_zeros(()))

    def psi_b(self, s: Tensor, mask: Tensor) -> Tensor:
        if self.h == "exp":  # ψ(v) = Σ v log v − v at v = e^s
            return _msum((s - 1.0) * torch.exp(s), mask)
        sq = _msum(s * s, mask)
        if self.outer == "identity":  # ψ(v) = ‖v‖²/4 at v = 2s
            return sq
        if self.outer == "square":  # ψ(v) = ¾·4^{-1/3}‖v‖^{4/3} at ‖v‖ = 4‖s‖³
            return 3.0 * sq * sq
        return (2.0 * sq - 1.0) * torch.exp(sq)  # ⟨s, b⟩ − ψ*(s)

    def psi(self, u: Tensor, mask: Tensor) -> Tensor:
        if self.h == "exp":
            return _msum(torch.xlogy(u, u) - u, mask)
        sq = _msum(u * u, mask)
        if self.outer == "identity":
            return sq / 4.0
        norm = torch.sqrt(sq)
        if self.outer == "square":
            return 0.75 * 4.0 ** (-1.0 / 3.0) * norm ** (4.0 / 3.0)
        # ψ(u) = sup_λ λ‖u‖ − e^{λ²}: λ ≥ 0 solves 2λ e^{λ²} = ‖u‖ (bisection, float64)
        with torch.no_grad():
            x = norm.to(torch.float64)
            lo = torch.zeros_like(x)
            hi = 1.0 + torch.sqrt(torch.log1p(x))
            for _ in range(80):
                mid = 0.5 * (lo + hi)
                big = 2.0 * mid * torch.exp(mid * mid) > x
                hi = torch.where(big, mid, hi)
                lo = torch.where(big, lo, mid)
            lam = (0.5 * (lo + hi)).to(u.dtype)
        return lam * norm - torch.exp(lam * lam)


def _msum(x: Tensor, mask: Tensor) -> Tensor:
    """Σ over the real documents of each list (last axis)."""
    return torch.where(mask, x, x.new_zeros(())).sum(dim=-1)


_POTENTIALS = {("square", "identity"), ("exp", "identity"), ("square", "square"), ("square", "exp")}


def get_potential(h: str, outer: str) -> Potential:
    """The supported (h, ψ_out) pairs: (square, identity), (exp, identity), (square, square),
    (square, exp)."""
    if (h, outer) not in _POTENTIALS:
        known = ", ".join(f"h={a},outer={b}" for a, b in sorted(_POTENTIALS))
        raise SpecError(f"unsupported Bregman potential h={h},outer={outer}; supported: {known}")
    return Potential(h, outer)


def bregman_divergence(
    psi_a: Tensor, psi_b: Tensor, grad_psi_b: Tensor, a: Tensor, b: Tensor
) -> Tensor:
    """The definition ``D_ψ(a, b) = ψ(a) − ψ(b) − ⟨∇ψ(b), a − b⟩`` over the last axis (given
    ψ(a), ψ(b), ∇ψ(b))."""
    return psi_a - psi_b - (grad_psi_b * (a - b)).sum(dim=-1)


@register_loss
class Bregman(_ConsistentBase):
    """The strongly NDCG-consistent Bregman family (Ravikumar et al., Thm 8–9)::

        φ(s, y) = D_ψ(u, (∇ψ)^{-1}(s)),   D_ψ(a, b) = ψ(a) − ψ(b) − ⟨∇ψ(b), a − b⟩,   u = G/‖G‖_D

    computed from that definition with b = (∇ψ)^{-1}(s) = ∇ψ*(s) in closed form and ∇ψ(b) = s.

    **Which function is ψ_out(Σ h).** Ravikumar et al. name members by ψ_out and h and says that
    h(x) = x² gives the consistent squared loss and h = exp the consistent ListNet. Both
    statements hold when ψ_out(Σ_j h(s_j)) is the potential on the *score* side, ψ* (the Fenchel
    conjugate of ψ) — the form of the paper's own proof of Thm 9, φ = D_{ψ*}(s, ∇ψ(u)). (Taken
    as ψ itself, h = exp would need s > 0 and would not give ListNet.) So here
    ψ*(s) = ψ_out(Σ_j h(s_j)), ψ = (ψ*)*, and:

    ================  ==========================  =================================================
    h, outer          ψ*(s)                       φ(s, y)
    ================  ==========================  =================================================
    exp, identity     Σ e^{s_j}                   KL̃(u ‖ e^s) = consistent_listnet exactly
    square, identity  ‖s‖²                        ‖s − u/2‖² = ¼·consistent_squared(2s)
    square, square    ‖s‖⁴                        ψ(u) + ‖s‖⁴ − ⟨s, u⟩, ψ(u) = ¾·4^{-1/3}‖u‖^{4/3}
    square, exp       exp(‖s‖²)                   ψ(u) + e^{‖s‖²} − ⟨s, u⟩, ψ(u) numeric
    ================  ==========================  =================================================

    Every member is convex in s, ≥ 0, and 0 exactly at s with ∇ψ*(s) = u; the expected minimiser
    is (∇ψ*)^{-1}(E[u]), an order-preserving map of E[u]. ``outer=exp`` overflows for large ‖s‖
    (e^{‖s‖²}); keep scores small with it. Parameters: ``h`` (``square`` default, ``exp``),
    ``outer`` (``identity`` default, ``square``, ``exp``; only with h = square), ``gain``,
    ``discount``, ``norm``. Lists with norm 0 have no loss. h = exp needs non-negative gains.
    """

    key = "bregman"
    summary = "Bregman family D_ψ(u, (∇ψ)^{-1}(s)), ψ* = ψ_out(Σ h(s)) (Ravikumar et al. Thm 8–9)"
    parameters = (
        choice_param("h", "square", ("square", "exp"), "h in ψ*(s) = ψ_out(Σ h(s_j))"),
        choice_param(
            "outer", "identity", ("identity", "square", "exp"), "ψ_out in ψ*(s) = ψ_out(Σ h(s_j))"
        ),
        *_ConsistentBase.parameters,
    )

    def _check(self) -> None:
        self.potential = get_potential(self.params["h"], self.params["outer"])

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        u, ok = self._u(y, mask)
        pot = self.potential
        b = pot.b(s, mask)  # (∇ψ)^{-1}(s), so that ∇ψ(b) = s
        return bregman_divergence(pot.psi(u, mask), pot.psi_b(s, mask), s, u, b), ok


# --------------------------------------------------------------------------- q-norm family
@register_loss
class QNorm(_ConsistentBase):
    """The q-norm family of Ravikumar et al. §4 (ψ = ‖·‖_p², q = p/(p − 1) its dual exponent)::

        form=penalised:   φ(s, y) = ‖s‖_q² − 2⟨s, u⟩
        form=normalised:  φ(s, y) = −⟨s/‖s‖_q, u⟩          (the default; eq. 4)

    u = G(y)/‖G(y)‖_D. ``q=auto`` (default) is q = ln(m) + 2 with m the list's number of real
    documents (per list, from the mask), the choice of the paper's experiments (p close to 1);
    otherwise a number q > 1 (the paper uses q ≥ 2, i.e. p ∈ (1, 2]). q = 2 gives
    consistent_squared − ‖u‖² (penalised) and consistent_cosine − 1 (normalised). ‖s‖_q is computed
    as c·(Σ(|s_j|/c)^q)^{1/q} with c = max|s| (no overflow for large q); where s = 0 exactly,
    ‖s‖_q is taken as 1 (normalised form: value 0, gradient −u). Lists with norm 0 have no loss.
    """

    key = "qnorm"
    summary = "q-norm family ‖s‖_q² − 2⟨s,u⟩ or −⟨s/‖s‖_q, u⟩, q = ln m + 2 (Ravikumar et al. §4)"
    parameters = (
        number_param(
            "q", "auto", "dual exponent q; auto = ln(m) + 2 per list", low=1.0, allow=("auto",)
        ),
        choice_param(
            "form",
            "normalised",
            ("normalised", "penalised"),
            "normalised −⟨s/‖s‖_q, u⟩ or penalised ‖s‖_q² − 2⟨s, u⟩",
        ),
        *_ConsistentBase.parameters,
    )

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        u, ok = self._u(y, mask)
        q = self.params["q"]
        if q == "auto":
            m = _ops.lengths(mask).clamp_min(1).to(s.dtype)
            qt = (torch.log(m) + 2.0).unsqueeze(-1)
        else:
            qt = s.new_full((s.shape[0], 1), float(q))
        nq, _ = _ops.norm_q(s, qt)
        dot = (s * u).sum(dim=-1)
        if self.params["form"] == "penalised":
            return nq * nq - 2.0 * dot, ok
        return -dot / nq, ok
