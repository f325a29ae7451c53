"""Any registered differentiable listwise loss as an XGBoost custom objective.

XGBoost, like LightGBM, grows each tree from per-document first and second derivatives of the
training objective, ``g_i = ∂L/∂s_i`` and ``h_i ≈ ∂²L/∂s_i²`` at the current scores, with the
Newton step ``−Σg / (Σh + λ)`` per leaf. The derivatives here are **the same numbers** the
LightGBM objective computes: :class:`XGBoostObjective` holds a
:class:`~ndcglab.gbdt.objective.LossObjective` (the loss's closed form where it has one, else
autograd with the exact, Hutchinson or ``abs`` Hessian; the same ``hess_floor``, the same
``constant_lists`` rule, the same seeded random streams) and only reads XGBoost's inputs:

* the query groups come from the ``DMatrix``'s ``group_ptr`` (set by ``group=`` or ``qid=``),
  which are the query boundaries: documents ``group_ptr[q]:group_ptr[q+1]`` form query ``q``;
* XGBoost's ranking weights are **per query** (``DMatrix.set_weight`` with one weight per
  group); each document's gradient and Hessian are multiplied by its query's weight, as the
  LightGBM objective multiplies by per-document weights. Per-document weights (as many as
  rows) are applied as given.

XGBoost starts boosting from ``base_score``; :mod:`ndcglab.gbdt.xgboost_train` sets it to 0, as
LightGBM starts a custom objective from 0, so losses that are not shift-invariant (consistent
ListNet's ``exp(s)``) see the same initial scores under both engines.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import SpecError
from .objective import LossObjective

__all__ = ["XGBoostObjective", "group_boundaries"]


def group_boundaries(dmatrix: Any) -> np.ndarray:
    """The query boundaries ``(Q + 1,)`` int64 of an XGBoost ``DMatrix`` (its ``group_ptr``);
    raises :class:`SpecError` when it has no query groups."""
    ptr = np.asarray(dmatrix.get_uint_info("group_ptr"), dtype=np.int64)
    if len(ptr) < 2:
        raise SpecError(
            "a listwise objective needs query groups. Fix: build the xgboost.DMatrix with "
            "group= (list sizes) or qid= (sorted query ids), e.g. via "
            "ndcglab.gbdt.xgboost_train.to_dmatrix"
        )
    return ptr


class XGBoostObjective:
    """A registered loss as an XGBoost custom objective: ``obj(predt, dtrain) -> (grad, hess)``.

    Pass it as ``obj=`` to :func:`xgboost.train` (and :func:`xgboost.dask.train`). The keyword
    arguments are those of :class:`~ndcglab.gbdt.objective.LossObjective` (``hessian``,
    ``hess_floor``, ``hutchinson_samples``, ``exact_max_len``, ``constant_lists``, ``seed``,
    ``verify``, ``num_threads``), or pass a ready ``objective=``. The bound state (padding
    index, label-only constants) is built once per dataset and reused every round.
    """

    def __init__(
        self, loss: Any = "listnet", *, objective: LossObjective | None = None, **options: Any
    ) -> None:
        self.objective = objective if objective is not None else LossObjective(loss, **options)

    @property
    def name(self) -> str:
        return self.objective.name

    def describe(self) -> dict[str, Any]:
        """The objective's settings and the Hessian used (stored in model metadata)."""
        return self.objective.describe()

    def grad_hess(
        self, preds: Any, labels: Any, boundaries: Any, weight: Any = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(grad, hess)`` float64 ``(N,)`` at scores ``preds`` for documents with ``labels``
        in queries ``boundaries``; ``weight`` per query (``Q`` values) or per document."""
        b = np.asarray(boundaries, dtype=np.int64)
        g, h = self.objective._bound_for(np.asarray(labels), np.diff(b)).grad_hess(
            np.asarray(preds, dtype=np.float64).ravel()
        )
        if weight is not None and len(weight):
            w = np.asarray(weight, dtype=np.float64).ravel()
            if len(w) == len(b) - 1 and len(w) != len(g):
                w = np.repeat(w, np.diff(b))
            elif len(w) != len(g):
                raise SpecError(
                    f"{len(w)} weights for {len(b) - 1} queries and {len(g)} documents. Fix: give "
                    "one weight per query (XGBoost's ranking weights) or one per document"
                )
            g, h = g * w, h * w
        return g, h

    def __call__(self, predt: np.ndarray, dtrain: Any) -> tuple[np.ndarray, np.ndarray]:
        """XGBoost's custom-objective call: derivatives at ``predt`` for ``dtrain``'s rows."""
        g, h = self.grad_hess(
            predt, dtrain.get_label(), group_boundaries(dtrain), dtrain.get_weight()
        )
        shape = np.shape(predt)
        return g.reshape(shape), h.reshape(shape)

    def __repr__(self) -> str:
        return f"ndcglab_xgboost_objective({self.name})"
