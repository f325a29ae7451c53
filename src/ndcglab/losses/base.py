"""The loss registry: names, parameters, parsing, the :class:`Loss` call convention, reduction.

A loss is named by a spec string in the one grammar of :mod:`ndcglab._spec`
(``name(key=value,...)@cutoff``), e.g. ``listnet``, ``cs_listmle@10``,
``consistent_listnet(norm=z10)``, ``qnorm(form=penalised,q=3)``. :func:`get_loss` parses it,
checks the name, every parameter and the cut-off against the registry, and returns a
:class:`Loss`. ``loss.name`` is the canonical spec (parameters sorted, defaults left out), which
parses back to an equal loss; ``loss.convention`` lists every parameter, defaults included.

Call convention (every differentiable loss)::

    loss(scores, labels, mask=None, *, generator=None, reduction="none")

``scores`` (B, M) floating, ``labels`` (B, M) (any real dtype, cast to the scores' dtype),
``mask`` (B, M) bool, True for a real document (``None``: every entry is real). The result is
one value per list, ``(B,)``, on the scores' device and dtype. Padded entries (mask False) change
neither a value nor a gradient, whatever they hold. Lists on which a loss is undefined (empty,
no pair across label levels, DCG norm 0, ... — each loss's docstring says which) get the value 0
and a zero gradient; ``reduction="mean"`` averages over the lists that *have* a loss
(:meth:`Loss.per_list` tells which), ``"sum"`` adds every list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from .._spec import Cutoff, ParsedSpec, format_number, parse_real, parse_spec
from ..errors import ConventionError, NdcglabError, SpecError
from ._ops import torch, zero_padding
from .closed_form import ClosedForm, closed_inputs

if TYPE_CHECKING:  # pragma: no cover
    from torch import Generator, Tensor

    from .bound import BoundLoss

__all__ = [
    "Loss",
    "LossInputError",
    "LossValues",
    "NotDifferentiableError",
    "Param",
    "available_losses",
    "describe_losses",
    "get_loss",
    "register_loss",
]

REDUCTIONS = ("none", "mean", "sum")


class LossInputError(NdcglabError, ValueError):
    """Tensors given to a loss have the wrong shape, dtype or device."""


class NotDifferentiableError(NdcglabError, TypeError):
    """A loss of kind ``"boosting"`` (AdaRank) was called like a differentiable loss."""


class LossValues(NamedTuple):
    """Per-list loss values ``(B,)`` and whether each list has a loss at all ``(B,)`` bool."""

    values: Tensor
    has_loss: Tensor


@dataclass(frozen=True)
class Param:
    """One parameter of a loss.

    ``convert`` turns the text of a spec (or a Python value given to the constructor) into the
    value the loss uses, raising ``ValueError``/``ConventionError`` when it is invalid; ``show``
    prints a value canonically (so that it parses back); ``allowed`` says, in words, what is
    accepted (quoted in error messages); ``doc`` is one line for the documentation.
    """

    name: str
    default: str
    convert: Callable[[Any], Any]
    show: Callable[[Any], str]
    allowed: str
    doc: str


_REGISTRY: dict[str, type[Loss]] = {}


def register_loss(cls: type[Loss]) -> type[Loss]:
    """Class decorator: add a :class:`Loss` subclass to the registry under ``cls.key``."""
    key = cls.key
    if key in _REGISTRY and _REGISTRY[key] is not cls:
        raise SpecError(f"loss name {key!r} is registered twice")
    _REGISTRY[key] = cls
    return cls


def _load() -> None:
    """Import every module that defines losses: each registers its losses on import (the one
    list of them; kept light: no torch import). A new module of losses is added here."""
    from . import (  # noqa: F401
        approx,
        consistent,
        cs_listmle,
        lambdaloss,
        listwise,
        neural_sort,
        pairwise,
        pointwise,
        softmax_variants,
    )


def available_losses(kind: str | None = None) -> list[str]:
    """Registered loss names, sorted; ``kind="differentiable"`` or ``"boosting"`` filters."""
    _load()
    if kind is not None and kind not in ("differentiable", "boosting"):
        raise ConventionError(f"unknown loss kind {kind!r}; known: differentiable, boosting")
    return sorted(k for k, c in _REGISTRY.items() if kind is None or c.kind == kind)


def describe_losses() -> dict[str, str]:
    """``{name: one-line description}`` for every registered loss (for docs and the CLI)."""
    _load()
    return {k: _REGISTRY[k].summary for k in sorted(_REGISTRY)}


def loss_class(name: str) -> type[Loss]:
    """The registered class of loss ``name`` (raises :class:`SpecError` listing the known ones)."""
    _load()
    cls = _REGISTRY.get(name.strip().lower())
    if cls is None:
        import difflib

        near = difflib.get_close_matches(name.strip().lower(), sorted(_REGISTRY), n=3)
        closest = f"the closest {'losses are' if len(near) > 1 else 'loss is'} {', '.join(near)}; "
        raise SpecError(
            f"unknown loss {name!r}; known: {', '.join(sorted(_REGISTRY))}. "
            f"Fix: {closest if near else ''}pick one of these names (each with its parameters: "
            "ndcglab list losses, or ndcglab.losses.describe_losses())"
        )
    return cls


def get_loss(spec: str | Loss) -> Loss:
    """Resolve a loss from its spec string (or return a :class:`Loss` unchanged).

    Raises :class:`SpecError` for an unknown loss, an unknown or invalid parameter (the message
    lists the allowed ones) or a cut-off the loss does not take."""
    if isinstance(spec, Loss):
        return spec
    parsed = parse_spec(spec, what="loss")
    cls = loss_class(parsed.name)
    return cls(cutoff=parsed.cutoff, **dict(parsed.params))


class Loss:
    """Base class of the registered losses; see the module docstring for the call convention.

    Subclasses set ``key`` (the registered name), ``summary`` (one line), ``parameters``,
    ``cutoff_rule`` (``"none"``, ``"optional"``), ``kind`` and ``ndcg_consistent`` (per
    Ravikumar, Tewari and Yang, AISTATS 2011: True, False, or None when the paper does not
    analyse the loss) and implement :meth:`_compute` on cleaned inputs; a loss with an exact
    gradient and Hessian diagonal names its form in ``closed_form_type`` and builds it in
    :meth:`_closed_form` (see :meth:`closed_form`). A loss whose :meth:`_compute` keeps padded
    slots out of its values and gradients by itself (every use of a score or label goes through
    the mask) sets ``masks_padding`` and receives the scores and labels uncleaned, which saves
    the cleaning operations on every batch.
    """

    key: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    kind: ClassVar[str] = "differentiable"
    parameters: ClassVar[tuple[Param, ...]] = ()
    cutoff_rule: ClassVar[str] = "none"
    ndcg_consistent: ClassVar[bool | None] = None
    closed_form_type: ClassVar[type[ClosedForm] | None] = None
    masks_padding: ClassVar[bool] = False

    def __init__(self, *, cutoff: Cutoff | int | str | None = None, **params: Any) -> None:
        allowed = {p.name: p for p in self.parameters}
        for key in params:
            if key not in allowed:
                names = ", ".join(allowed) or "none"
                raise SpecError(
                    f"loss {self.key!r} has no parameter {key!r}; allowed: {names}. "
                    f"Fix: e.g. {self._example()}"
                )
        values: dict[str, Any] = {}
        for p in self.parameters:
            raw = params.get(p.name, p.default)
            try:
                values[p.name] = p.convert(raw)
            except (ValueError, TypeError, ConventionError) as exc:
                shown = raw if not isinstance(raw, str) or len(raw) <= 40 else raw[:37] + "..."
                raise SpecError(
                    f"invalid value {shown!r} for parameter {p.name!r} of loss {self.key!r}: "
                    f"{exc}. Allowed: {p.allowed}. Fix: e.g. {self.key}({p.name}={p.default})"
                ) from exc
        self._params = values
        if cutoff is not None and not isinstance(cutoff, Cutoff):
            cutoff = parse_spec(f"x@{cutoff}").cutoff
        if cutoff is not None and self.cutoff_rule == "none":
            raise SpecError(
                f"loss {self.key!r} takes no @cutoff (got @{cutoff}). Fix: write {self.key!r}"
                + (" and use norm=zK for a truncated DCG norm" if "norm" in allowed else "")
            )
        self._cutoff = cutoff
        self._check()

    # ----------------------------------------------------------------- identity
    def _check(self) -> None:
        """Hook for cross-parameter validation (raise :class:`SpecError`)."""

    def _example(self) -> str:
        if not self.parameters:
            return self.key
        p = self.parameters[0]
        return f"{self.key}({p.name}={p.default})"

    @property
    def cutoff(self) -> Cutoff | None:
        """The ``@k`` cut-off (None: the whole list)."""
        return self._cutoff

    @property
    def params(self) -> Mapping[str, Any]:
        """Every parameter's value (defaults included), read-only; the trainer reads e.g.
        ``params["l2"]`` of ``ranksvm``."""
        return MappingProxyType(self._params)

    @property
    def convention(self) -> dict[str, str]:
        """Every parameter printed (defaults included) plus the cut-off, for reports."""
        out = {p.name: p.show(self._params[p.name]) for p in self.parameters}
        if self.cutoff_rule != "none":
            out["cutoff"] = "none" if self._cutoff is None else str(self._cutoff)
        return out

    @property
    def name(self) -> str:
        """The canonical spec: parameters sorted, defaults omitted; parses back to this loss."""
        shown = []
        for p in self.parameters:
            text = p.show(self._params[p.name])
            if text != p.show(p.convert(p.default)):
                shown.append((p.name, text))
        return str(ParsedSpec(self.key, tuple(sorted(shown)), self._cutoff))

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"get_loss({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Loss) and type(other) is type(self) and other.name == self.name

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name))

    # ----------------------------------------------------------------- calling
    def per_list(
        self,
        scores: Tensor,
        labels: Tensor,
        mask: Tensor | None = None,
        *,
        generator: Generator | None = None,
    ) -> LossValues:
        """Per-list values and the ``has_loss`` flags (lists where the loss is defined)."""
        scores, labels, mask = check_inputs(scores, labels, mask, self.key)
        y = self._labels_for(labels, scores.dtype, mask)
        values, has = self._compute(self._scores_for(scores, mask), y, mask, generator)
        return LossValues(torch.where(has, values, 0.0), has)

    def bind(self, labels: Tensor, mask: Tensor | None = None) -> BoundLoss:
        """This loss with ``labels`` and ``mask`` fixed: a
        :class:`~ndcglab.losses.bound.BoundLoss`, called with the scores alone, which does the
        label-only work once (see :mod:`ndcglab.losses.bound`). ``loss.bind(y, m)(s, generator=g)``
        equals ``loss(s, y, m, generator=g)`` exactly."""
        from .bound import BoundLoss

        return BoundLoss(self, labels, mask)

    def _labels_for(self, labels: Tensor, dtype: Any, mask: Tensor) -> Tensor:
        """The labels as :meth:`_compute` receives them: in the scores' ``dtype``, and 0 on
        padding unless the loss ``masks_padding``."""
        y = labels.to(dtype=dtype)
        return y if self.masks_padding else zero_padding(y, mask)

    def _scores_for(self, scores: Tensor, mask: Tensor) -> Tensor:
        """The scores as :meth:`_compute` receives them: 0 on padding (so no value or gradient
        flows there) unless the loss ``masks_padding``."""
        return scores if self.masks_padding else zero_padding(scores, mask)

    def _prepare(self, y: Tensor, mask: Tensor) -> Any:
        """The label-only part of :meth:`_compute`, done once by a bound loss and passed to
        :meth:`_compute_prepared` (default: nothing)."""
        return None

    def _compute_prepared(
        self, s: Tensor, y: Tensor, mask: Tensor, prepared: Any, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:
        """:meth:`_compute` given what :meth:`_prepare` made of the same ``y`` and ``mask``;
        the same values and gradients (default: :meth:`_compute` itself)."""
        return self._compute(s, y, mask, generator)

    def __call__(
        self,
        scores: Tensor,
        labels: Tensor,
        mask: Tensor | None = None,
        *,
        generator: Generator | None = None,
        reduction: str = "none",
    ) -> Tensor:
        """The loss of each list ``(B,)`` (``reduction="none"``), or their mean over the lists
        that have a loss (``"mean"``; 0 if none has) or sum (``"sum"``)."""
        check_reduction(reduction)
        values, has = self.per_list(scores, labels, mask, generator=generator)
        return reduce(values, has, reduction)

    def _compute(
        self, s: Tensor, y: Tensor, mask: Tensor, generator: Generator | None
    ) -> tuple[Tensor, Tensor]:  # pragma: no cover - abstract
        raise NotImplementedError

    # ----------------------------------------------------------------- closed forms
    def closed_form(
        self,
        labels: Tensor,
        mask: Tensor | None = None,
        *,
        like: Callable[..., Tensor] | None = None,
    ) -> ClosedForm | None:
        """The loss's closed-form gradient and Hessian diagonal for fixed ``labels`` ``(B, M)``
        (a :class:`~ndcglab.losses.closed_form.ClosedForm`), or ``None`` when it has none (the
        default; callers then use autograd).

        ``like``: a callable claimed to compute this same loss (an independent implementation
        carrying this loss's name). Where the form is fixed up to label-only constants (softmax,
        exp, quadratic) those constants are read off ``like`` by autograd
        (``closed_form_type.read_off``), keeping its own conventions; other forms return
        ``None`` for it."""
        if self.closed_form_type is None:
            return None
        y, mask = closed_inputs(labels, mask)
        if like is not None:
            return self.closed_form_type.read_off(like, y, mask)
        return self._closed_form(y, mask)

    def _closed_form(self, y: Tensor, mask: Tensor) -> ClosedForm | None:
        """The loss's own ``closed_form_type`` for floating labels ``y`` ``(B, M)`` (0 on
        padding) and the bool ``mask``; ``None`` where a setting has no closed form."""
        raise NotImplementedError  # pragma: no cover - abstract

    def grad_hess(
        self,
        scores: Tensor,
        labels: Tensor,
        mask: Tensor | None = None,
        *,
        generator: Generator | None = None,
    ) -> tuple[Tensor, Tensor] | None:
        """``(grad, hess)`` ``(B, M)`` of ``Σ_b loss(scores, labels, mask)[b]`` in closed form:
        the exact gradient and Hessian diagonal, 0 on padding; ``None`` when the loss has no
        closed form (:meth:`closed_form`)."""
        scores, labels, mask = check_inputs(scores, labels, mask, self.key)
        form = self.closed_form(labels.to(scores.dtype), mask)
        return None if form is None else form.grad_hess(scores, generator)


def check_reduction(reduction: str) -> None:
    """Raise :class:`ConventionError` for a reduction other than ``none``, ``mean``, ``sum``."""
    if reduction not in REDUCTIONS:
        raise ConventionError(
            f"unknown reduction {reduction!r}; known: {', '.join(REDUCTIONS)}. Fix: "
            "reduction='none' (one value per list), 'mean' (over the lists that have a loss) or "
            "'sum'"
        )


def reduce(values: Tensor, has: Tensor, reduction: str) -> Tensor:
    """Apply ``reduction`` to per-list values (see :meth:`Loss.__call__`)."""
    if reduction == "none":
        return values
    if reduction == "sum":
        return values.sum()
    count = has.sum().clamp_min(1).to(values.dtype)
    return values.sum() / count


def check_inputs(scores: Any, labels: Any, mask: Any, who: str) -> tuple[Tensor, Tensor, Tensor]:
    """Validate the padded batch once, at the boundary; returns tensors on the scores' device."""
    if not isinstance(scores, torch.Tensor):
        raise LossInputError(
            f"loss {who!r}: scores must be a torch tensor, got {type(scores).__name__}. "
            "Fix: torch.as_tensor(scores, dtype=torch.float32)"
        )
    if not scores.is_floating_point():
        raise LossInputError(
            f"loss {who!r}: scores must be floating point, got {scores.dtype}. Fix: scores.float()"
        )
    if scores.dim() != 2:
        raise LossInputError(
            f"loss {who!r}: scores must be a padded (B, M) batch, got shape {tuple(scores.shape)}. "
            "Fix: for one list use scores[None], labels[None], mask[None]"
        )
    if not isinstance(labels, torch.Tensor):
        labels = torch.as_tensor(labels, device=scores.device)
    if labels.shape != scores.shape:
        raise LossInputError(
            f"loss {who!r}: labels shape {tuple(labels.shape)} differs from scores shape "
            f"{tuple(scores.shape)}"
        )
    if labels.device != scores.device:
        raise LossInputError(
            f"loss {who!r}: labels are on {labels.device} but scores on {scores.device}. "
            "Fix: labels.to(scores.device)"
        )
    if mask is None:
        mask = torch.ones(scores.shape, dtype=torch.bool, device=scores.device)
    elif not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise LossInputError(
            f"loss {who!r}: mask must be a bool tensor (True = real document). Fix: mask.bool()"
        )
    elif mask.shape != scores.shape or mask.device != scores.device:
        raise LossInputError(
            f"loss {who!r}: mask shape/device {tuple(mask.shape)}/{mask.device} differ from scores "
            f"{tuple(scores.shape)}/{scores.device}"
        )
    return scores, labels, mask


# --------------------------------------------------------------------------- parameter kinds
def _to_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def number_param(
    name: str,
    default: str,
    doc: str,
    *,
    low: float | None = None,
    low_open: bool = True,
    allow: tuple[str, ...] = (),
) -> Param:
    """A float parameter (optionally also accepting the words in ``allow``, e.g. ``auto``)."""

    def convert(v: Any) -> Any:
        if isinstance(v, str) and v.strip().lower() in allow:
            return v.strip().lower()
        x = parse_real(v, what="the value", fix="") if isinstance(v, str) else float(v)
        if x != x or x in (float("inf"), float("-inf")):
            raise ValueError("must be finite")
        if low is not None and (x <= low if low_open else x < low):
            raise ValueError(f"must be {'>' if low_open else '≥'} {format_number(low)}")
        return x

    def show(v: Any) -> str:
        return v if isinstance(v, str) else format_number(v)

    bound = "" if low is None else f" {'>' if low_open else '≥'} {format_number(low)}"
    words = " or ".join(allow)
    allowed = (words + " or " if words else "") + f"a number{bound}"
    return Param(name, default, convert, show, allowed, doc)


def int_param(name: str, default: str, doc: str, *, low: int = 1, high: int = 1_000_000) -> Param:
    """An integer parameter in ``[low, high]`` (written in ASCII digits; ``high`` keeps a count
    such as Sinkhorn rounds or samples from running for ever)."""

    def convert(v: Any) -> int:
        x = parse_real(v, what="the value", fix="") if isinstance(v, str) else float(v)
        if not x.is_integer() or not low <= x <= high:
            raise ValueError(f"must be a whole number from {low} to {high}")
        return int(x)

    return Param(name, default, convert, str, f"a whole number from {low} to {high}", doc)


def choice_param(name: str, default: str, choices: tuple[str, ...], doc: str) -> Param:
    """A parameter taking one of ``choices``."""

    def convert(v: Any) -> str:
        t = _to_text(v).strip().lower()
        if t not in choices:
            raise ValueError(f"unknown value {t!r}")
        return t

    return Param(name, default, convert, str, ", ".join(choices), doc)


def _standard(option: str) -> str:
    """The ``standard`` measure preset's value of ``option`` (``gain``, ``discount``): the one
    place the library's default gain and discount are written (:mod:`ndcglab.measures.presets`)."""
    from ..measures.presets import get_preset

    return get_preset("standard").defaults[option]


#: the default gain and discount of the losses: the ``standard`` preset's (exp2 and log)
DEFAULT_GAIN: str = _standard("gain")
DEFAULT_DISCOUNT: str = _standard("discount")


def gain_param(
    default: str = DEFAULT_GAIN, doc: str = "gain G(y) (ndcglab.measures.gains)"
) -> Param:
    """A gain, resolved with :func:`ndcglab.measures.gains.get_gain` (a name or a Gain object);
    the default is the ``standard`` preset's gain unless a loss names its own."""
    from ..measures.gains import get_gain

    return Param(
        "gain",
        default,
        get_gain,
        lambda g: g.name,
        "exp2, linear, letor, table:<label>=<gain>;... (ndcglab.measures.gains)",
        doc,
    )


def discount_param(
    default: str = DEFAULT_DISCOUNT, doc: str = "discount D(r) (ndcglab.measures.discounts)"
) -> Param:
    """A discount, resolved with :func:`ndcglab.measures.discounts.get_discount`; the default is
    the ``standard`` preset's discount."""
    from ..measures.discounts import get_discount

    return Param(
        "discount",
        default,
        get_discount,
        lambda d: d.name,
        "log, log:<base>, power:<beta>, zipf, exp:<a>, linear, letor (ndcglab.measures.discounts)",
        doc,
    )
