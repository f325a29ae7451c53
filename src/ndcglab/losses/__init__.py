"""Ranking losses (PyTorch): one registry, one call convention, padded batches with a mask.

>>> from ndcglab.losses import get_loss
>>> loss = get_loss("consistent_listnet(norm=z10)")
>>> per_list = loss(scores, labels, mask)            # (B,) one value per list
>>> total = loss(scores, labels, mask, reduction="mean")
>>> bound = loss.bind(labels, mask)                  # label-only work done once
>>> same = bound(scores, reduction="mean")           # == loss(scores, labels, mask, ...)

Names and their one-line descriptions: :func:`available_losses`, :func:`describe_losses`; the
formulas, parameters and conventions are in each loss's docstring and in ``docs/losses.md``.
Losses with a closed-form gradient and Hessian diagonal return it from
:meth:`Loss.closed_form` / :meth:`Loss.grad_hess` (:mod:`ndcglab.losses.closed_form`).
Importing this package does not import torch (computing a loss does).
"""

from __future__ import annotations

from .base import (
    Loss,
    LossInputError,
    LossValues,
    NotDifferentiableError,
    Param,
    available_losses,
    describe_losses,
    get_loss,
    loss_class,
    register_loss,
)
from .bound import BoundLoss
from .closed_form import ClosedForm
from .consistent import bregman_divergence, get_potential, normalised_gains
from .cs_listmle import cs_listmle_constant, cs_listmle_weights
from .listwise import listmle_order
from .pairwise import lambdarank_delta

__all__ = [
    "BoundLoss",
    "ClosedForm",
    "Loss",
    "LossInputError",
    "LossValues",
    "NotDifferentiableError",
    "Param",
    "available_losses",
    "bregman_divergence",
    "cs_listmle_constant",
    "cs_listmle_weights",
    "describe_losses",
    "get_loss",
    "get_potential",
    "lambdarank_delta",
    "listmle_order",
    "loss_class",
    "normalised_gains",
    "register_loss",
]
