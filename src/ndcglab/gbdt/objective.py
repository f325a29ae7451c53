"""Any registered differentiable listwise loss as a LightGBM custom objective.

LightGBM grows each tree from per-document first and second derivatives of the training
objective, ``g_i = ∂L/∂s_i`` and ``h_i ≈ ∂²L/∂s_i²`` at the current scores ``s`` (a diagonal
Newton step per leaf: ``−Σg / (Σh + λ)``). Here ``L = Σ_q loss(s_q, y_q)``: the registered loss
(:func:`ndcglab.losses.get_loss`) summed over the training queries, unreduced.

How each derivative is computed (``hessian=`` option; see ``docs/gbdt.md``):

* **closed form** (``"auto"`` picks it when the loss has one, ``"closed"`` requires it): the
  loss's own exact gradient and Hessian diagonal (:meth:`ndcglab.losses.Loss.closed_form`), e.g.
  ListNet ``g = c·softmax(s) − p``, ``h = c·softmax(s)(1 − softmax(s))``; consistent ListNet
  ``g = exp(s) − u``, ``h = exp(s)``; squared losses ``g = 2(s − t)``, ``h = 2``; ListMLE,
  CS-ListMLE, RankNet, LambdaRank@k.
* **exact** (``"exact"``, and ``"auto"`` for lists of at most ``exact_max_len`` documents when no
  closed form exists), **hutchinson** (``"hutchinson"``, and ``"auto"`` for longer lists without
  a closed form) and **constant** (``h = 1``): by torch autograd, see
  :mod:`ndcglab.gbdt.hessian`. The Hutchinson estimate's standard deviation for document ``i`` is
  ``sqrt(Σ_{j≠i} H_ij² / S)`` — the stated bound the tests check (5 standard deviations).
* **abs** (``"abs"``, and ``"auto"`` for a loss whose ``hessian_rule`` is ``"abs"``: ApproxNDCG,
  Gumbel-ApproxNDCG): the absolute value ``|∂²L/∂s_i²|`` of the autograd diagonal (exact for
  short lists, Hutchinson beyond), the diagonal form of the saddle-free Newton step (Dauphin,
  Pascanu, Gulcehre, Cho, Ganguli, Bengio, "Identifying and attacking the saddle point problem
  in high-dimensional non-convex optimization", NIPS 2014). For a non-convex loss whose diagonal
  is negative where boosting starts, a floored diagonal gives Newton steps of size
  ``|Σg| / (n · hess_floor)``: ApproxNDCG's diagonal is ≤ 0 for every document at tied scores,
  so its first trees cannot split at all on small data (no leaf reaches LightGBM's
  ``min_sum_hessian_in_leaf``) or jump to scores of hundreds, where the sigmoids saturate and
  the gradient vanishes (``docs/gbdt.md``, "Non-convex losses").

Every Hessian value is finally clamped to at least ``hess_floor`` (default ``1e-6``) so that the
Newton step is defined; the clamp (and the ``abs`` rule) are the only places an estimate is
changed.

Gradients of all queries are computed at once on padded tensors, one bucket of similar lengths
at a time (:class:`~ndcglab.gbdt._buckets.BucketIndex`); the padding index, the padded labels and
the closed form's label-only constants are computed **once per dataset**
(:meth:`LossObjective.bind`), not per round. Padded cells never receive a gradient.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._compat import torch as _torch
from .._compat import torch_threads
from .._warn import warn_user
from ..data import boundaries_from_group
from ..errors import NdcglabError, SpecError
from ..training.config import TrainConfig
from ._buckets import BucketIndex
from .hessian import accepts_generator, hessian_diagonal

#: the loss of ``LossObjective()`` (``TrainConfig``'s default)
_DEFAULT_LOSS = TrainConfig().loss

__all__ = [
    "HESSIAN_MODES",
    "BoundObjective",
    "LossObjective",
    "closed_form_of",
    "hessian_diagonal",
    "resolve_loss",
]

#: the values of the ``hessian=`` option
HESSIAN_MODES = ("auto", "closed", "exact", "hutchinson", "constant", "abs")


def resolve_loss(loss: Any) -> Any:
    """A loss object from a spec string (through :func:`ndcglab.losses.get_loss`) or a loss object.

    A loss object is any callable ``loss(scores, labels, mask) -> Tensor[B]`` over padded ``(B, M)``
    torch tensors; a ``name`` attribute, if present, is how it is reported.
    """
    if isinstance(loss, str):
        from ..losses import get_loss  # the losses registry (torch)

        obj = get_loss(loss)
        kind = getattr(obj, "kind", "differentiable")
        if kind != "differentiable":
            raise SpecError(
                f"--loss {loss} is trained by its own algorithm (kind={kind!r}), not by "
                "gradients, so it cannot be the objective of --model gbdt (LightGBM or XGBoost "
                "trees). Fix: use --model adarank for it, or a differentiable loss with --model "
                "gbdt, e.g. listnet, consistent_listnet(norm=z10), listmle, cs_listmle@10"
            )
        return obj
    if not callable(loss):
        raise SpecError(f"a loss must be a spec string or a callable, got {type(loss).__name__}")
    return loss


def loss_name(loss: Any) -> str:
    """The printed name of a loss object (its ``name``, else its class name)."""
    name = getattr(loss, "name", None)
    return str(name) if name is not None else type(loss).__name__


def closed_form_of(loss: Any, labels: Any, mask: Any) -> Any:
    """The closed form (:class:`~ndcglab.losses.closed_form.ClosedForm`) of ``loss`` for padded
    ``labels``/``mask`` ``(B, M)``, or ``None``.

    A registered :class:`~ndcglab.losses.Loss` gives its own
    (:meth:`~ndcglab.losses.Loss.closed_form`). Any other callable whose ``name`` is a registered
    loss's spec is taken to be that loss: the registered loss's form is used with its label-only
    constants read off the callable (``like=``), and :meth:`LossObjective.bind` checks the claim
    against autograd."""
    from ..losses import Loss, get_loss

    if isinstance(loss, Loss):
        return loss.closed_form(labels, mask)
    name = getattr(loss, "name", None)
    if name is None:
        return None
    try:
        registered = get_loss(str(name))
    except (NdcglabError, ValueError):
        return None
    if registered.kind != "differentiable":
        return None
    return registered.closed_form(labels, mask, like=loss)


def _probe_closed_form(loss: Any) -> Any:
    """The closed form of ``loss`` on a one-document list (``None``: it has none) — what tells,
    before any data, whether a closed form exists and whether it builds pair matrices."""
    torch = _torch()
    y = torch.zeros((1, 1), dtype=torch.float64)
    return closed_form_of(loss, y, torch.ones((1, 1), dtype=torch.bool))


@dataclass
class _BucketState:
    """What a bucket needs every round, built once: padded labels, mask, closed-form targets."""

    labels: Any
    mask: Any
    active: Any  # (B,) bool: lists that contribute (see ``constant_lists``)
    closed: Any = None  # closed-form state (targets ...) or None
    mode: str = "exact"
    absolute: bool = False  # use |diagonal| (the "abs" rule)
    keep: np.ndarray | None = None  # (B, M) bool: real documents of active lists
    index: np.ndarray | None = None  # their positions in the flat arrays


@dataclass
class BoundObjective:
    """A :class:`LossObjective` bound to one dataset (its labels and query boundaries).

    Holds the bucket index and the per-bucket padded labels/targets; :meth:`grad_hess` is the
    per-round work. Built by :meth:`LossObjective.bind`.
    """

    objective: LossObjective
    buckets: BucketIndex
    states: list[_BucketState]
    n_docs: int
    modes: dict[str, int] = field(default_factory=dict)
    round: int = 0
    #: Hessian entries that came out NaN/inf (replaced by the floor), over all rounds
    nonfinite_hessians: int = 0

    def grad_hess(self, preds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(grad, hess)`` float64 ``(N,)`` at scores ``preds`` (``(N,)``, dataset order)."""
        with torch_threads(self.objective.num_threads):
            return self._grad_hess(preds)

    def _grad_hess(self, preds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        torch = _torch()
        obj = self.objective
        preds = np.asarray(preds, dtype=np.float64).ravel()
        if len(preds) != self.n_docs:
            raise SpecError(
                f"{len(preds)} scores for an objective bound to {self.n_docs} documents. Fix: "
                "bind the objective to the dataset being trained"
            )
        grad = np.zeros(self.n_docs, dtype=np.float64)
        hess = np.full(self.n_docs, obj.hess_floor, dtype=np.float64)
        padded = self.buckets.gather(preds)
        gen = torch.Generator().manual_seed(int(obj.seed) * 1_000_003 + self.round)
        loss_gen = torch.Generator().manual_seed(int(obj.seed) * 7_919 + self.round)
        self.round += 1
        dtype = torch.float64
        takes_gen = obj._loss_takes_generator
        for bk, st, sp in zip(self.buckets, self.states, padded, strict=True):
            if st.keep is None:
                st.keep = (st.mask & st.active[:, None]).numpy()
                st.index = bk.index[st.keep]
            if not st.keep.any():
                continue
            s = torch.from_numpy(sp).to(dtype)
            if st.mode == "closed":
                g, h = st.closed.grad_hess(s, loss_gen if takes_gen else None)
            else:
                g, h = hessian_diagonal(
                    obj.loss,
                    s,
                    st.labels,
                    st.mask,
                    mode=st.mode,
                    samples=obj.hutchinson_samples,
                    generator=gen,
                    loss_generator=loss_gen if takes_gen else None,
                )
                if st.absolute:
                    h = h.abs()
            keep = st.keep
            gn = g.detach().numpy()
            hn = h.detach().numpy()
            if not np.isfinite(gn[keep]).all():
                raise FloatingPointError(
                    f"the gradient of loss {obj.name!r} is not finite at round {self.round}. Fix: "
                    "lower learning_rate, or raise hess_floor"
                )
            bad = ~np.isfinite(hn)
            if bad[keep].any():  # e.g. a loss whose double backward is NaN: floor, and say so
                self.nonfinite_hessians += int(bad[keep].sum())
                hn = np.where(bad, obj.hess_floor, hn)
            idx = st.index
            grad[idx] = gn[keep]
            hess[idx] = np.maximum(hn[keep], obj.hess_floor)
        return grad, hess


class LossObjective:
    """A registered loss as a LightGBM objective: ``grad, hess`` per document, all queries at once.

    Use :meth:`__call__` as ``params["objective"]`` of :func:`lightgbm.train` (signature
    ``(preds, train_data) -> (grad, hess)``), and :meth:`sklearn_objective` for LightGBM's
    scikit-learn and Dask estimators (``(y_true, y_pred, weight, group) -> (grad, hess)``).
    The bound state is cached per dataset and dropped when pickled.

    Parameters
    ----------
    loss:
        A loss spec (``"listnet"``, ``"consistent_listnet(norm=z10)"``, ``"cs_listmle@10"`` …,
        resolved by :func:`ndcglab.losses.get_loss`) or a loss object.
    hessian:
        ``"auto"`` (closed form if the loss has one; otherwise exact for lists of at most
        ``exact_max_len`` documents and Hutchinson beyond), ``"closed"`` (require a closed form),
        ``"exact"``, ``"hutchinson"``, ``"constant"`` or ``"abs"`` (``|diagonal|``; what
        ``"auto"`` uses, without a closed form, for a loss whose ``hessian_rule`` is ``"abs"``)
        — see the module docstring.
    hess_floor:
        Every Hessian value is clamped to at least this (> 0).
    hutchinson_samples:
        Rademacher probes per round for the Hutchinson estimate.
    exact_max_len:
        Under ``"auto"`` without a closed form: buckets whose lists have at most this many
        documents use the exact diagonal, longer ones Hutchinson.
    constant_lists:
        ``"keep"`` (default): every list contributes its loss as registered. ``"skip"``: lists whose
        labels are all equal (e.g. no relevant document) get zero gradient — their NDCG does not
        depend on the ranking, as in LightGBM's ``lambdarank``.
    seed:
        Seeds the Hutchinson probes and the loss's own random draws, one stream per round.
    verify:
        Check a closed form once per dataset against torch autograd of the loss at random scores
        (cheap: one gradient evaluation); on a mismatch, warn and fall back to autograd.
    num_threads:
        torch intra-op threads while gradients are computed (restored afterwards); default 1,
        because the per-bucket tensor operations are memory-bound and extra torch threads fight
        LightGBM's spinning OpenMP threads (measured 6× slower with 2 threads on 2 busy cores).
        ``0`` leaves torch's setting alone.

    """

    def __init__(
        self,
        loss: Any = _DEFAULT_LOSS,
        *,
        hessian: str = "auto",
        hess_floor: float = 1e-6,
        hutchinson_samples: int = 16,
        exact_max_len: int = 64,
        constant_lists: str = "keep",
        seed: int = 0,
        verify: bool = True,
        num_threads: int = 1,
    ) -> None:
        if hessian not in HESSIAN_MODES:
            raise SpecError(f"unknown hessian {hessian!r}; known: {', '.join(HESSIAN_MODES)}")
        if not hess_floor > 0:
            raise SpecError(f"hess_floor must be positive, got {hess_floor}")
        if constant_lists not in ("keep", "skip"):
            raise SpecError(f"constant_lists must be 'keep' or 'skip', got {constant_lists!r}")
        self.loss_spec = loss if isinstance(loss, str) else None
        self._loss = None if isinstance(loss, str) else resolve_loss(loss)
        self.hessian = hessian
        self.hess_floor = float(hess_floor)
        self.hutchinson_samples = int(hutchinson_samples)
        self.exact_max_len = int(exact_max_len)
        self.constant_lists = constant_lists
        self.seed = int(seed)
        self.verify = bool(verify)
        self.num_threads = int(num_threads)
        self._bound: BoundObjective | None = None
        self._bound_key: tuple | None = None
        if self.loss_spec is not None:
            _ = self.loss  # resolve now (get_loss): unknown names fail here, not in round 1
        if hessian == "closed":
            if _probe_closed_form(self.loss) is None:
                raise SpecError(
                    f"loss {self.name!r} has no closed-form Hessian. Fix: use hessian='auto', "
                    "'exact' or 'hutchinson'"
                )

    # ------------------------------------------------------------------ properties
    @property
    def loss(self) -> Any:
        if self._loss is None:
            self._loss = resolve_loss(self.loss_spec)
        return self._loss

    @property
    def name(self) -> str:
        return self.loss_spec if self.loss_spec is not None else loss_name(self.loss)

    @property
    def _abs_rule(self) -> bool:
        """Whether the loss asks for ``|diagonal|`` under ``hessian="auto"`` (its
        ``hessian_rule``)."""
        return getattr(self.loss, "hessian_rule", None) == "abs"

    @property
    def _loss_takes_generator(self) -> bool:
        if getattr(self, "_takes_gen", None) is None:
            self._takes_gen = accepts_generator(self.loss)
        return bool(self._takes_gen)

    def describe(self) -> dict[str, Any]:
        """The objective's settings (stored in model metadata)."""
        out = {
            "loss": loss_name(self.loss),
            "hessian": self.hessian,
            "hess_floor": self.hess_floor,
            "hutchinson_samples": self.hutchinson_samples,
            "exact_max_len": self.exact_max_len,
            "constant_lists": self.constant_lists,
            "seed": self.seed,
        }
        if self._bound is not None:
            out["hessian_used"] = dict(self._bound.modes)
            out["nonfinite_hessians_floored"] = self._bound.nonfinite_hessians
        return out

    # ------------------------------------------------------------------ binding
    def bind(
        self,
        labels: np.ndarray,
        boundaries: Sequence[int] | np.ndarray,
    ) -> BoundObjective:
        """Precompute everything that does not change between rounds for one dataset."""
        torch = _torch()
        labels = np.asarray(labels, dtype=np.float64).ravel()
        b = np.asarray(boundaries, dtype=np.int64)
        if b[-1] != len(labels):
            raise SpecError(
                f"query boundaries cover {b[-1]} documents but there are {len(labels)} labels"
            )
        probe = _probe_closed_form(self.loss) if self.hessian in ("auto", "closed") else None
        # pair-building losses (and any loss without a closed form, to be safe) cost B·M² a bucket
        quadratic = probe.pairs if probe is not None else True
        buckets = BucketIndex(
            b, quadratic=quadratic, max_elements=(1 << 22) if quadratic else (1 << 21)
        )
        states: list[_BucketState] = []
        modes: dict[str, int] = {}
        for bk, yp in zip(buckets, buckets.gather(labels), strict=True):
            y = torch.from_numpy(yp)
            mask = torch.from_numpy(bk.mask)
            if self.constant_lists == "skip":
                ymax = np.where(bk.mask, yp, -np.inf).max(axis=1)
                ymin = np.where(bk.mask, yp, np.inf).min(axis=1)
                active = torch.from_numpy(ymax > ymin)
            else:
                active = torch.ones(bk.shape[0], dtype=torch.bool)
            cstate = closed_form_of(self.loss, y, mask) if probe is not None else None
            absolute = False
            if cstate is not None:
                mode = "closed"
            elif self.hessian == "abs" or (self.hessian == "auto" and self._abs_rule):
                absolute = True
                mode = "exact" if bk.shape[1] <= self.exact_max_len else "hutchinson"
            else:
                if self.hessian == "closed":
                    raise SpecError(
                        f"loss {self.name!r} has no closed-form Hessian for these lists. Fix: "
                        "use hessian='auto', 'exact' or 'hutchinson'"
                    )
                if self.hessian == "auto":
                    mode = "exact" if bk.shape[1] <= self.exact_max_len else "hutchinson"
                else:
                    mode = self.hessian
            label = f"abs-{mode}" if absolute else mode
            modes[label] = modes.get(label, 0) + int(bk.mask.sum())
            states.append(
                _BucketState(
                    labels=y, mask=mask, active=active, closed=cstate, mode=mode, absolute=absolute
                )
            )
        bound = BoundObjective(
            objective=self, buckets=buckets, states=states, n_docs=len(labels), modes=modes
        )
        if "closed" in modes and self.verify:
            self._verify_closed(bound)
        return bound

    def _verify_closed(self, bound: BoundObjective) -> None:
        """Compare the closed-form gradient with autograd of the loss at random scores, once."""
        torch = _torch()
        rng = np.random.default_rng(12345)
        n_checked = 0
        for st in bound.states:
            if n_checked >= 4096:
                break
            if st.closed is None:
                continue
            b = min(st.labels.shape[0], max(1, 4096 // max(1, st.labels.shape[1])))
            y, mask = st.labels[:b], st.mask[:b]
            s = torch.from_numpy(rng.normal(0.0, 1.0, size=tuple(y.shape))) * mask
            sub = st.closed.subset(b)
            gen = self._loss_takes_generator
            g_cf, _ = sub.grad_hess(s, torch.Generator().manual_seed(5) if gen else None)
            g_ad, _ = hessian_diagonal(
                self.loss,
                s,
                y,
                mask,
                mode="constant",
                loss_generator=torch.Generator().manual_seed(5) if gen else None,
            )
            err = float((g_cf - g_ad).abs().max()) if g_cf.numel() else 0.0
            scale = 1.0 + float(g_ad.abs().max()) if g_ad.numel() else 1.0
            if not err <= 1e-6 * scale:
                msg = (
                    f"the closed-form gradient of {self.name!r} differs from autograd of the "
                    f"registered loss (max error {err:.3g})"
                )
                if self.hessian == "closed":
                    raise SpecError(msg + ". Fix: use hessian='auto' (autograd fallback)")
                warn_user(
                    msg + "; falling back to autograd (exact/Hutchinson Hessian)", RuntimeWarning
                )
                bound.modes = {}
                for state in bound.states:
                    state.closed = None
                    state.mode = (
                        "exact" if state.labels.shape[1] <= self.exact_max_len else "hutchinson"
                    )
                    n = int(state.mask.sum())
                    bound.modes[state.mode] = bound.modes.get(state.mode, 0) + n
                return
            n_checked += int(mask.sum())

    def _bound_for(self, labels: np.ndarray, group: np.ndarray) -> BoundObjective:
        group = np.asarray(group, dtype=np.int64).ravel()
        key = (
            len(labels),
            len(group),
            hash(group.tobytes()),
            hash(np.asarray(labels, dtype=np.float64).tobytes()),
        )
        if self._bound is None or self._bound_key != key:
            self._bound = self.bind(labels, boundaries_from_group(group))
            self._bound_key = key
        return self._bound

    # ------------------------------------------------------------------ LightGBM entry points
    def __call__(self, preds: np.ndarray, train_data: Any) -> tuple[np.ndarray, np.ndarray]:
        """``lightgbm.train`` custom objective: ``(preds, Dataset) -> (grad, hess)``."""
        group = train_data.get_group()
        labels = train_data.get_label()
        if group is None:
            raise SpecError(
                "a listwise objective needs query groups. Fix: build the lightgbm.Dataset with "
                "group= (list sizes), e.g. via ndcglab.gbdt.to_lgb_dataset"
            )
        weight = train_data.get_weight()
        g, h = self._bound_for(labels, group).grad_hess(preds)
        if weight is not None:
            w = np.asarray(weight, dtype=np.float64)
            g, h = g * w, h * w
        return g, h

    def sklearn_objective(self) -> _SklearnObjective:
        """The same objective for ``lightgbm.LGBMRanker`` / ``DaskLGBMRanker``."""
        return _SklearnObjective(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> LossObjective:
        # lightgbm.train deep-copies its params; share this object (its only state is the
        # per-dataset cache) so the bound padding index is built once and reported afterwards
        return self

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_bound"] = None
        state["_bound_key"] = None
        if self.loss_spec is not None:
            state["_loss"] = None  # re-resolved from the spec where it is unpickled
        return state


class _SklearnObjective:
    """``(y_true, y_pred, weight, group) -> (grad, hess)``, LightGBM's scikit-learn signature."""

    def __init__(self, objective: LossObjective) -> None:
        self.objective = objective

    def __call__(
        self, y_true: np.ndarray, y_pred: np.ndarray, weight: np.ndarray | None, group: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        if group is None:
            raise SpecError("a listwise objective needs query groups (group=) in fit()")
        g, h = self.objective._bound_for(y_true, group).grad_hess(y_pred)
        if weight is not None:
            w = np.asarray(weight, dtype=np.float64)
            g, h = g * w, h * w
        return g, h

    def __repr__(self) -> str:
        return f"ndcglab_objective({self.objective.name})"
