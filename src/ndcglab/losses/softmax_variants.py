"""Softmax cross entropy with the target distributions libraries differ on.

``−Σ_j p_j log softmax(s)_j`` for a target distribution p over the list's documents:

* ``target=label``: p = y/Σy — rax's ``softmax_loss`` default (labels as weights);
* ``target=gain``: p = G(y)/ΣG(y) with the measures' ``gain`` (exp2: (2^y − 1)/Σ(2^y − 1));
* ``target=softmax``: p = softmax(G(y)) — ListNet (Cao et al.), allRank's ``listNet`` with
  ``gain=linear``; the same values as ``listnet(gain=...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _ops
from .base import Loss, choice_param, gain_param, register_loss
from .closed_form import ClosedForm, SoftmaxForm

if TYPE_CHECKING:  # pragma: no cover
    from torch import Generator, Tensor

__all__ = ["SoftmaxCrossEntropy"]


@register_loss
class SoftmaxCrossEntropy(Loss):
    """Softmax cross entropy ``φ(s, y) = −Σ_j p_j log softmax(s)_j`` with the target ``p`` named
    by ``target``: ``label`` (default; p = y/Σy, rax's ``softmax_loss``), ``gain``
    (p = G(y)/ΣG(y)) or ``softmax`` (p = softmax(G(y)), ListNet / allRank's ``listNet``; equal
    to ``listnet(gain=...)``). ``gain`` (default linear) is G in the ``gain`` and ``softmax``
    targets. Sums over real documents. Lists whose target sum Σy (``label``) or ΣG(y) (``gain``)
    is 0 — no relevant document, empty — have no loss (0, zero gradient); with ``softmax`` every
    non-empty list has one. Labels are taken as they are (negative labels make ``label`` targets
    meaningless: use ``gain``). Not analysed by Ravikumar et al. (their Prop. 7 covers ListNet's
    softmax target: not NDCG-consistent). Closed-form gradient and Hessian diagonal:
    :class:`~ndcglab.losses.closed_form.SoftmaxForm`.
    """

    key = "softmax_ce"
    summary = "softmax cross entropy with target y/Σy (label), G/ΣG (gain) or softmax(G) (ListNet)"
    parameters = (
        choice_param(
            "target",
            "label",
            ("label", "gain", "softmax"),
            "target p: y/Σy, G(y)/ΣG(y) or softmax(G(y))",
        ),
        gain_param("linear", "G in the gain and softmax targets"),
    )
    closed_form_type = SoftmaxForm

    def _target(self, y: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        target = self.params["target"]
        if target == "softmax":
            g = _ops.masked_gains(self.params["gain"], y, mask)
            return _ops.masked_softmax(g, mask), _ops.lengths(mask) > 0
        v = y if target == "label" else _ops.masked_gains(self.params["gain"], y, mask)
        v = v.masked_fill(~mask, 0.0)
        total = v.sum(dim=-1)
        ok = total > 0
        return _ops.safe_divide(v, total.unsqueeze(-1), ok.unsqueeze(-1)), ok

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        p, has = self._target(y, mask)
        logq = _ops.masked_log_softmax(s, mask)
        return -(p * logq).sum(dim=-1), has

    def _closed_form(self, y: Tensor, mask: Tensor) -> ClosedForm:
        """Softmax: ``g = c·σ − p``, ``h = c·σ(1 − σ)``, c = 1 where the list has a loss."""
        p, has = self._target(y, mask)
        return SoftmaxForm(mass=has.to(y.dtype).unsqueeze(-1), target=p, mask=mask)
