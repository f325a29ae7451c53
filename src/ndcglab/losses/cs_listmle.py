"""Cost-sensitive ListMLE, CS-ListMLE@k: Lu, Xie, Wang, Liu, Huang, "Cost-Sensitive Listwise
Ranking Approach" (PAKDD 2010), as ``docs/losses.md`` ("cs_listmle@k") states it.

For one list with labels y (n real documents) and truncation level k::

    a(i)    = G(y_i) = 2^{y_i} − 1
    ĝ(i)    = 1 + #{t : y_t > y_i}                       approximate ideal position (ties share it)
    b(j)    = 1/log2(1 + j) for j ≤ k,   1/log2(1 + k) for j > k
    |b'(j)| = ln 2 / ((1 + j) · ln(1 + j)²) for j ≤ k,   0 for j > k
    c(i)    = a(i) · |b'(ĝ(i))|
    DCG_ĝ@k = Σ_i a(i) · I[ĝ(i) ≤ k] / log2(1 + ĝ(i))
    w_jt    = c(j) + c(t)                     for every pair with y_j > y_t
    β_j     = Σ_{t: y_t < y_j} w_jt,    α_jt = w_jt / β_j

    L_CS(s, y) = (1 / DCG_ĝ@k) · Σ_j β_j · log2( 1 + Σ_{t: y_t < y_j} α_jt · exp(s_t − s_j) )

Computed in log space (stable for any score range), without pair matrices (see below).
The cut-off is ``@k`` (fixed), ``@cn`` (a fraction of each list, k = ceil(c·n)) or absent (k = n,
the whole list). ``gain`` may replace 2^y − 1 (default ``exp2``; the bound needs G ≥ 0).

**Bound (Lemma 1 + Thm 1 of Lu et al.).** For every score vector s (any tie-breaking),
``1 − NDCG@k(s, y) ≤ L_CS(s, y) + C(y)`` where NDCG@k uses the gain G and D(r) = 1/log2(1 + r),
and :func:`cs_listmle_constant` gives ::

    C(y) = (1 / DCG_ĝ@k) · [ Σ_i a(i) / log2(1 + k)  +  Σ_i c(i) · (#{t : y_t = y_i} − 1) ]

Derivation (the paper's, written out): (i) DCG@k ≤ DCG_ĝ@k because ĝ(i) ≤ g(i), so
1 − NDCG@k ≤ (DCG_ĝ@k − DCG_π@k)/DCG_ĝ@k. (ii) With b as above, Σ a(i)b(ĝ(i)) ≥ DCG_ĝ@k and
DCG_π@k ≥ Σ a(i)b(π(i)) − Σ a(i)/log2(1 + k): the first term of C. (iii) b is convex and
non-increasing on [1, ∞) (the max of 1/log2(1 + x) and its value at k), and −|b'(j)| is a
subgradient at j, so a(i)(b(ĝ(i)) − b(π(i))) ≤ c(i)(π(i) − ĝ(i)). (iv) π(i) − ĝ(i) =
Σ_{t≠i} (I[t before i] − I[y_t > y_i]), and each term is ≤ I[{i, t} mis-ordered] + I[y_t = y_i]
(the paper's I[x > 0] − I[y > 0] ≤ I[xy < 0] + I[y = 0]; mis-ordered: different labels and the
lower-labelled document ranked first). Summed with the weights c(i), a mis-ordered pair with
y_j > y_t is counted from both ends, c(j) + c(t) = w_jt, and the equal-label terms give the second
term of C (the paper's C2 − C1, read as a sum over unordered pairs {i, t} of distinct documents
with y_i = y_t of c(i) + c(t)). (v) I[t before j] ≤ I[s_t ≥ s_j] ≤ log2(1 + exp(s_t − s_j)) and the
concavity of log2, Σ_t w_jt log2(z_t) ≤ β_j log2(Σ_t α_jt z_t), give L_CS.
The bound is loose: DCG_ĝ@k ≤ Σ_i a(i), so C ≥ 1/log2(1 + k) (≥ 1 at k = 1, where it is vacuous).

Conventions: a list with no pair across label levels, or with DCG_ĝ@k = 0 (no gain), has no loss
(value 0, zero gradient). The loss is convex in s (a positive combination of log-sum-exps of
affine functions). Because w_jt = c(j) + c(t), the loss needs no pair matrix: it is computed in
O(M log M) time and O(M) memory per list from prefix log-sum-exps over the documents sorted by
label (see :func:`_cs_values`); :func:`cs_listmle_weights` builds the (B, M, M) weights for
inspection.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._spec import Cutoff
from ..measures.discounts import LogDiscount
from . import _ops
from ._ops import torch
from .base import DEFAULT_GAIN, Loss, gain_param, register_loss
from .closed_form import ClosedForm

if TYPE_CHECKING:  # pragma: no cover
    from torch import Generator, Tensor

    from ..measures.gains import Gain

__all__ = ["CSForm", "CSListMLE", "cs_listmle_constant", "cs_listmle_weights"]

_LN2 = math.log(2.0)
#: b(j) = 1/log2(1 + j), the discount of the bound (fixed by the paper, whatever the default)
_LOG = LogDiscount(base=2.0)


def _parts(y: Tensor, mask: Tensor, k: Tensor, gain: Gain) -> dict[str, Tensor]:
    """Per-document a, ĝ, c = a·|b'(ĝ)|, #equal labels, and DCG_ĝ@k per list (no gradient)."""
    with torch.no_grad():
        zero = y.new_zeros(())
        a = _ops.masked_gains(gain, y, mask)
        inf = y.new_full((), math.inf)
        asc = torch.sort(torch.where(mask, y, -inf), dim=-1).values.contiguous()
        yy = y.contiguous()
        m = y.shape[-1]
        right = torch.searchsorted(asc, yy, right=True)
        left = torch.searchsorted(asc, yy, right=False)
        ghat = (m - right + 1).to(y.dtype)  # 1 + #{t: y_t > y_i}
        equal = (right - left).to(y.dtype)  # #{t: y_t = y_i}, i included
        kk = k.to(y.dtype).unsqueeze(-1)
        top = mask & (ghat <= kk)
        l1 = torch.log1p(ghat)
        bprime = torch.where(top, _LN2 / ((1.0 + ghat) * l1 * l1), zero)
        c = torch.where(mask, a * bprime, zero)
        # DCG_ĝ@k: the DCG of the gains at the approximate ideal positions ĝ, with the paper's
        # b(j) = 1/log2(1 + j) for j ≤ k (the measures' ``log`` discount)
        dcg = (a * _ops.cut_discounts(_LOG, ghat, mask, k, y)).sum(dim=-1)
        return {
            "a": a,
            "ghat": torch.where(mask, ghat, zero),
            "c": c,
            "dcg": dcg,
            "equal": torch.where(mask, equal, zero),
            "k": kk.squeeze(-1),
        }


def _label_parts(
    labels: Tensor, mask: Tensor | None, k: int | Cutoff | Tensor | None, gain: Gain | str
) -> tuple[Tensor, Tensor, dict[str, Tensor]]:
    """``(y, mask, parts)`` for the public helpers: labels with padding set to 0, the mask
    (``None``: every entry is real) and :func:`_parts` with ``k`` and ``gain`` resolved."""
    from ..measures.gains import get_gain

    if mask is None:
        mask = torch.ones(labels.shape, dtype=torch.bool, device=labels.device)
    y = torch.where(mask, labels, labels.new_zeros(()))
    k_per_list = _ops.cutoff_per_list(k, _ops.lengths(mask))
    return y, mask, _parts(y, mask, k_per_list, get_gain(gain))


def cs_listmle_weights(
    labels: Tensor,
    mask: Tensor | None = None,
    *,
    k: int | Cutoff | Tensor | None = None,
    gain: Gain | str = DEFAULT_GAIN,
) -> tuple[Tensor, Tensor, Tensor]:
    """``(w, beta, dcg)``: the pair weights ``w[b, j, t] = w_jt`` (0 unless y_j > y_t, both real),
    ``beta[b, j] = β_j`` and ``dcg[b] = DCG_ĝ@k``, for labels ``(B, M)`` (floating). ``k``: an int,
    a :class:`Cutoff`, a per-list tensor, or None (k = n)."""
    y, mask, p = _label_parts(labels, mask, k, gain)
    pairs = _ops.better_pairs(y, mask)
    c = p["c"]
    w = torch.where(pairs, c.unsqueeze(-1) + c.unsqueeze(-2), y.new_zeros(()))
    return w, w.sum(dim=-1), p["dcg"]


def cs_listmle_constant(
    labels: Tensor,
    mask: Tensor | None = None,
    *,
    k: int | Cutoff | Tensor | None = None,
    gain: Gain | str = DEFAULT_GAIN,
) -> Tensor:
    """The constant C(y) of the bound 1 − NDCG@k ≤ L_CS + C (module docstring), ``(B,)``; 0 for
    lists with DCG_ĝ@k = 0."""
    _, _, p = _label_parts(labels, mask, k, gain)
    c1 = p["a"].sum(dim=-1) * _LN2 / torch.log1p(p["k"])
    c2 = (p["c"] * (p["equal"] - 1.0).clamp_min(0.0)).sum(dim=-1)
    ok = p["dcg"] > 0
    return _ops.safe_divide(c1 + c2, p["dcg"], ok)


def _cs_values(s: Tensor, y: Tensor, mask: Tensor, c: Tensor, dcg: Tensor) -> Tensor:
    """L_CS per list in O(M log M) time and O(M) memory, without pair matrices.

    Because w_jt = c(j) + c(t), the inner sums factorise over the documents below j::

        β_j = c(j)·N_j + C_j,        Σ_t α_jt e^{s_t − s_j} = (c(j)·A_j + B_j) · e^{−s_j} / β_j

    with N_j = #{t: y_t < y_j}, C_j = Σ c(t), A_j = Σ e^{s_t}, B_j = Σ c(t) e^{s_t} over
    {t: y_t < y_j}: prefix sums over the documents sorted by label (ascending), taken in log
    space (``logcumsumexp``). Each term is β_j · softplus(log(c(j)A_j + B_j) − s_j − log β_j)/ln 2.
    """
    zero = s.new_zeros(())
    fill = s.new_full((), _ops.fill_value(s.dtype))
    inf = y.new_full((), math.inf)
    with torch.no_grad():
        order = torch.argsort(torch.where(mask, y, inf), dim=-1, stable=True)
        y_asc = torch.where(mask, y, inf).gather(-1, order).contiguous()
        below = torch.searchsorted(y_asc, y.contiguous(), right=False)  # N_j
        last = (below - 1).clamp_min(0)  # prefix position holding the docs below j
        has_below = mask & (below > 0)
        c_asc = c.gather(-1, order)
        c_prefix = torch.cumsum(c_asc, dim=-1).gather(-1, last)
        beta = torch.where(has_below, c * below.to(s.dtype) + c_prefix, zero)
        use = has_below & (beta > 0)
        positive = c > 0
        log_c = torch.log(torch.where(positive, c, s.new_ones(())))
        log_beta = torch.log(torch.where(use, beta, s.new_ones(())))
    m_asc = mask.gather(-1, order)
    s_asc = torch.where(m_asc, s.gather(-1, order), fill)
    la = torch.logcumsumexp(s_asc, dim=-1).gather(-1, last)  # log A_j
    cs_asc = torch.where(m_asc & positive.gather(-1, order), log_c.gather(-1, order) + s_asc, fill)
    lb = torch.logcumsumexp(cs_asc, dim=-1).gather(-1, last)  # log B_j
    first = torch.where(positive & has_below, log_c + la, fill)
    second = torch.where(has_below, lb, fill)
    z = torch.logaddexp(first, second) - s - log_beta
    terms = torch.where(use, beta * torch.nn.functional.softplus(torch.where(use, z, zero)), zero)
    total = terms.sum(dim=-1) / _LN2
    return _ops.safe_divide(total, dcg, dcg > 0)


@dataclass
class CSForm(ClosedForm):
    """CS-ListMLE's closed form, factorised like the loss (O(M log M) time, O(M) memory per
    list, no pair matrix). ``L = Σ_j β_j ln(1 + X_j) / (ln2·DCG_ĝ@k)`` with ``X_j = Σ_t w_jt
    e^{s_t−s_j} / β_j``; with ``q_jt = w_jt e^{s_t−s_j} / (β_j (1 + X_j))`` and
    ``Q_j = X_j / (1 + X_j)``::

        g_i = (Σ_j β_j q_ji − β_i Q_i) / (ln2·DCG_ĝ@k)
        h_i = (Σ_j β_j q_ji (1 − q_ji) + β_i Q_i (1 − Q_i)) / (ln2·DCG_ĝ@k)

    (sums over the documents j labelled above i). Because ``w_ji = c(j) + c(i)`` and
    ``β_j q_ji = (c(j) + c(i)) e^{s_i} v_j`` with ``v_j = e^{−s_j} / (1 + X_j)``::

        Σ_j β_j q_ji   = e^{s_i} (P1_i + c(i) P0_i)
        Σ_j β_j q_ji²  = e^{2 s_i} (R2_i + 2 c(i) R1_i + c(i)² R0_i)

    where ``P_r = Σ_j c(j)^r v_j`` and ``R_r = Σ_j c(j)^r v_j² / β_j`` over {j: y_j > y_i}:
    suffix sums over the documents sorted by label, in log space. ``X_j`` comes from the prefix
    sums of :func:`_cs_values`. Everything that depends only on the labels (the label order,
    c, β, DCG_ĝ@k, the prefix/suffix positions) is built once, in :meth:`build`."""

    mask: Any
    order: Any  # (B, M) documents sorted by label, ascending (padding last)
    last: Any  # (B, M) sorted position of the last document labelled below j
    above: Any  # (B, M) sorted position of the first document labelled above i (M: none)
    has_below: Any  # (B, M) real documents with a document labelled below
    use: Any  # (B, M) has_below and β_j > 0
    has_above: Any  # (B, M) real documents with a document labelled above
    positive: Any  # (B, M) c(j) > 0
    c: Any
    log_c: Any  # log c (0 where c = 0)
    beta: Any
    log_beta: Any  # log β (0 where β = 0)
    m_asc: Any  # mask in label order
    pos_asc: Any  # positive in label order
    log_c_asc: Any
    scale: Any  # (B, 1) 1 / (ln2·DCG_ĝ@k), 0 where DCG_ĝ@k = 0

    @classmethod
    def build(cls, loss: CSListMLE, y: Tensor, mask: Tensor) -> CSForm:
        """The label-only parts for floating labels ``y`` (0 on padding) and ``mask``."""
        with torch.no_grad():
            n = _ops.lengths(mask)
            p = _parts(y, mask, _ops.cutoff_per_list(loss.cutoff, n), loss.params["gain"])
            c, dcg = p["c"], p["dcg"]
            inf = y.new_full((), math.inf)
            yi = torch.where(mask, y, inf)
            order = torch.argsort(yi, dim=-1, stable=True)
            y_asc = yi.gather(-1, order).contiguous()
            yc = yi.contiguous()
            below = torch.searchsorted(y_asc, yc, right=False)
            above = torch.searchsorted(y_asc, yc, right=True)
            last = (below - 1).clamp_min(0)
            has_below = mask & (below > 0)
            c_prefix = torch.cumsum(c.gather(-1, order), dim=-1).gather(-1, last)
            zero = y.new_zeros(())
            beta = torch.where(has_below, c * below.to(y.dtype) + c_prefix, zero)
            use = has_below & (beta > 0)
            positive = c > 0
            log_c = torch.log(torch.where(positive, c, y.new_ones(())))
            log_beta = torch.log(torch.where(use, beta, y.new_ones(())))
            ok = dcg > 0
            scale = torch.where(ok, 1.0 / (_LN2 * torch.where(ok, dcg, y.new_ones(()))), zero)
            return cls(
                mask=mask,
                order=order,
                last=last,
                above=above,
                has_below=has_below,
                use=use,
                has_above=mask & (above < n.unsqueeze(-1)),
                positive=positive,
                c=c,
                log_c=log_c,
                beta=beta,
                log_beta=log_beta,
                m_asc=mask.gather(-1, order),
                pos_asc=positive.gather(-1, order),
                log_c_asc=log_c.gather(-1, order),
                scale=scale.unsqueeze(-1),
            )

    def grad_hess(
        self, scores: Tensor, generator: Generator | None = None
    ) -> tuple[Tensor, Tensor]:
        dt = scores.dtype
        mask, order = self.mask, self.order
        log_c = self.log_c.to(dt)
        beta, log_beta = self.beta.to(dt), self.log_beta.to(dt)
        log_c_asc = self.log_c_asc.to(dt)
        zero = scores.new_zeros(())
        fill = scores.new_full((), _ops.fill_value(dt))
        s = torch.where(mask, scores, zero).detach()
        # X_j from prefix log-sum-exps (as the loss value): log(c(j) A_j + B_j) − s_j − log β_j
        s_asc = torch.where(self.m_asc, s.gather(-1, order), fill)
        la = torch.logcumsumexp(s_asc, dim=-1).gather(-1, self.last)
        cs_asc = torch.where(self.m_asc & self.pos_asc, log_c_asc + s_asc, fill)
        lb = torch.logcumsumexp(cs_asc, dim=-1).gather(-1, self.last)
        first = torch.where(self.positive & self.has_below, log_c + la, fill)
        second = torch.where(self.has_below, lb, fill)
        use = self.use
        z = torch.where(use, torch.logaddexp(first, second) - s - log_beta, zero)
        big_q = torch.where(use, torch.sigmoid(z), zero)
        g_self = -beta * big_q
        h_self = beta * big_q * torch.where(use, torch.sigmoid(-z), zero)
        # suffix sums over the documents labelled above i, in log space
        lv = -s - torch.nn.functional.softplus(z)  # log v_j
        lv2 = 2.0 * lv - log_beta  # log(v_j² / β_j)
        cpos = use & self.positive
        terms = torch.stack(
            [
                torch.where(use, lv, fill),
                torch.where(cpos, lv + log_c, fill),
                torch.where(use, lv2, fill),
                torch.where(cpos, lv2 + log_c, fill),
                torch.where(cpos, lv2 + 2.0 * log_c, fill),
            ]
        )
        terms = terms.gather(-1, order.unsqueeze(0).expand_as(terms))
        suffix = torch.logcumsumexp(terms.flip(-1), dim=-1).flip(-1)
        suffix = torch.cat([suffix, fill.expand(*suffix.shape[:-1], 1)], dim=-1)
        lp0, lp1, lr0, lr1, lr2 = suffix.gather(-1, self.above.unsqueeze(0).expand_as(terms))
        neg = scores.new_full((), -math.inf)
        lci = torch.where(self.positive, log_c, neg)
        lg = torch.logaddexp(lp1, lci + lp0)
        lh = torch.logsumexp(torch.stack([lr2, math.log(2.0) + lci + lr1, 2.0 * lci + lr0]), dim=0)
        ha = self.has_above
        cross_g = torch.where(ha, torch.exp(torch.where(ha, lg + s, neg)), zero)
        cross_h = torch.where(ha, torch.exp(torch.where(ha, lh + 2.0 * s, neg)), zero)
        scale = self.scale.to(dt)
        g = torch.where(mask, (cross_g + g_self) * scale, zero)
        h = torch.where(mask, (cross_g - cross_h + h_self) * scale, zero)
        return g, h


@register_loss
class CSListMLE(Loss):
    """Cost-sensitive ListMLE@k (Lu et al., PAKDD 2010; ``docs/losses.md``)::

        L_CS(s, y) = (1 / DCG_ĝ@k) · Σ_j β_j · log2( 1 + Σ_{t: y_t < y_j} α_jt · exp(s_t − s_j) )

    with a(i) = G(y_i) (default 2^y − 1), ĝ(i) = 1 + #{t: y_t > y_i}, w_jt = a(j)|b'(ĝ(j))| +
    a(t)|b'(ĝ(t))|, β_j = Σ_t w_jt, α_jt = w_jt/β_j, |b'(j)| = ln 2/((1 + j) ln(1 + j)²) for j ≤ k
    and 0 beyond, DCG_ĝ@k = Σ_i a(i) I[ĝ(i) ≤ k]/log2(1 + ĝ(i)) (full definitions, the bound
    1 − NDCG@k ≤ L_CS + C and its constant C in :mod:`ndcglab.losses.cs_listmle`).

    ``@k`` fixed, ``@cn`` a fraction of each list (ceil), none = the whole list. Convex in s.
    A list with no pair across label levels, or with DCG_ĝ@k = 0, has no loss (0, zero
    gradient). Not analysed by Ravikumar et al.
    """

    key = "cs_listmle"
    summary = "cost-sensitive ListMLE@k, NDCG@k-weighted pairs, bounds 1 − NDCG@k (Lu et al.)"
    parameters = (gain_param(doc="gain a(i) = G(y_i) (2^y − 1 in Lu et al.)"),)
    cutoff_rule = "optional"
    closed_form_type = CSForm

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        n = _ops.lengths(mask)
        p = _parts(y, mask, _ops.cutoff_per_list(self.cutoff, n), self.params["gain"])
        values = _cs_values(s, y, mask, p["c"], p["dcg"])
        return values, _ops.has_two_levels(y, mask) & (p["dcg"] > 0)

    def _closed_form(self, y: Tensor, mask: Tensor) -> ClosedForm:
        """See :class:`CSForm` (label-only parts built here, once)."""
        return CSForm.build(self, y, mask)
