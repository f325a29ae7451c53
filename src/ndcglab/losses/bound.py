"""A loss with its labels fixed (:meth:`ndcglab.losses.Loss.bind`).

Training visits the same batches epoch after epoch: only the scores change. A bound loss does
the label-only work of a loss — its checks, the cleaning or casting of the labels, and whatever
the loss prepares from the labels alone (ListMLE's label order, ListNet's target distribution)
— once, at the first call, and every call after that takes only the scores::

    bound = loss.bind(labels, mask)
    values = bound(scores, generator=g)      # == loss(scores, labels, mask, generator=g)

A call gives exactly what ``loss(scores, labels, mask, generator=generator)`` gives, values and
gradients, and draws the same randomness from ``generator``. The prepared work is redone when
the scores' shape, dtype or device change, or when the labels or the mask are modified in place
(torch counts those modifications; the bound loss reads the count at every call).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._ops import torch
from .base import LossValues, check_inputs, check_reduction, reduce

if TYPE_CHECKING:  # pragma: no cover
    from torch import Generator, Tensor

    from .base import Loss

__all__ = ["BoundLoss"]


def _version(t: Any) -> int | None:
    return t._version if isinstance(t, torch.Tensor) else None


class BoundLoss:
    """``loss`` with ``labels`` ``(B, M)`` and ``mask`` ``(B, M)`` (None: every entry real)
    fixed; see the module docstring. Calls take the scores ``(B, M)`` and the keyword arguments
    of :meth:`Loss.__call__`."""

    def __init__(self, loss: Loss, labels: Any, mask: Any = None) -> None:
        self.loss = loss
        self.labels = labels
        self.mask = mask
        self._key: tuple[Any, ...] | None = None
        self._y: Any = None
        self._m: Any = None
        self._prepared: Any = None

    def _current(self, scores: Any) -> tuple[Any, ...] | None:
        if not isinstance(scores, torch.Tensor):
            return None
        return (
            scores.shape,
            scores.dtype,
            scores.device,
            _version(self.labels),
            _version(self.mask),
        )

    def per_list(self, scores: Tensor, *, generator: Generator | None = None) -> LossValues:
        """Per-list values and the ``has_loss`` flags (as :meth:`Loss.per_list`)."""
        loss = self.loss
        key = self._current(scores)
        if key is None or key != self._key:
            scores, labels, mask = check_inputs(scores, self.labels, self.mask, loss.key)
            self._y = loss._labels_for(labels, scores.dtype, mask)
            self._m = mask
            self._prepared = loss._prepare(self._y, mask)
            self._key = self._current(scores)
        s = loss._scores_for(scores, self._m)
        values, has = loss._compute_prepared(s, self._y, self._m, self._prepared, generator)
        return LossValues(torch.where(has, values, 0.0), has)

    def __call__(
        self, scores: Tensor, *, generator: Generator | None = None, reduction: str = "none"
    ) -> Tensor:
        """The loss of each list ``(B,)``, or their mean or sum (as :meth:`Loss.__call__`)."""
        check_reduction(reduction)
        values, has = self.per_list(scores, generator=generator)
        return reduce(values, has, reduction)

    def __repr__(self) -> str:
        return f"{self.loss!r}.bind(...)"
