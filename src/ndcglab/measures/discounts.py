"""Discount functions D(r) of a 1-based position r in a list of length n.

=====================  ===============================  ============================================
name                   D(r)                             note
=====================  ===============================  ============================================
``log`` / ``log:b``    1 / log_b(1 + r)  (b = 2)        "standard"; b cancels in NDCG, not in DCG
``power:β``            r^−β                             feasible for 0 < β < 1 (Wang et al. Thm 3)
``zipf``               1 / r                            the critical point (Thm 5)
``exp:a``              a^−r                             summable: too fast (Thm 6)
``linear``             n − r                            NDCG^β of Jin & Geng (ECML/PKDD 2010)
``letor``              1 for r ≤ 2, 1 / log2(r) else    the official LETOR scripts
custom                 any callable ``(r, n) -> D``     via :class:`CallableDiscount`
=====================  ===============================  ============================================

``discount(ranks, n)`` evaluates elementwise (``ranks`` 1-based, ``n`` the list length, a scalar or
an array broadcastable to ``ranks``). ``discount.table(m)`` gives D(1..m) for a list of length m.
Only ``linear`` depends on n (``depends_on_length``).

The same objects serve NumPy and PyTorch, as the gains do: ranks given as a NumPy array (or a
number, or a list) give a float64 array; ranks given as a torch tensor give a tensor of its dtype
and device, differentiable in the ranks, which need not be whole numbers (ApproxNDCG evaluates
the discount at smoothed, real-valued positions ``r ≥ 1``). Each formula is written once per
array library, with the same operations where both have them: ``exp:a`` is ``a ** -r`` on NumPy
and ``exp(−ln(a) · r)`` on tensors, which differ in the last bit. A user's
:class:`CallableDiscount` takes NumPy arrays only (``smooth`` is False): the losses that evaluate
the discount between positions refuse it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._compat import FrozenFields
from .._spec import format_number
from ..errors import ConventionError

__all__ = [
    "CallableDiscount",
    "Discount",
    "ExponentialDiscount",
    "LetorDiscount",
    "LinearDiscount",
    "LogDiscount",
    "PowerDiscount",
    "get_discount",
]


def _is_tensor(x: Any) -> bool:
    """True for a torch tensor (without importing torch: a tensor exists only once it is)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _tensor_length(n: Any, like: Any) -> Any:
    """The list length ``n`` (a number, an array or a tensor) as a tensor of ``like``'s dtype."""
    if _is_tensor(n):
        return n.to(like.dtype)
    return like.new_tensor(np.asarray(n, dtype=np.float64))


class Discount:
    """Base class of discounts; see the module docstring. ``__call__`` takes NumPy arrays (the
    result is float64) or torch tensors (the result is a tensor of their dtype and device)."""

    name: str = "discount"
    depends_on_length: bool = False
    #: defined at real-valued positions and on torch tensors (differentiable in the ranks)
    smooth: ClassVar[bool] = True

    def __call__(self, ranks: Any, n: Any = None) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def table(self, m: int) -> np.ndarray:
        """D(1), ..., D(m) for a list of length ``m`` (float64)."""
        return np.asarray(self(np.arange(1, m + 1, dtype=np.float64), m), dtype=np.float64)

    def __str__(self) -> str:
        return self.name


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class LogDiscount(Discount, FrozenFields):
    """D(r) = 1 / log_base(1 + r), computed as ``log2(base) / log2(1 + r)``: for base 2 that is
    ``1 / log2(1 + r)`` exactly, the expression of scikit-learn, LightGBM and trec_eval (so their
    values agree to the last bit wherever NumPy's log2 is the C library's)."""

    base: float = 2.0

    def __init__(self, base: float = 2.0) -> None:
        object.__setattr__(self, "base", base)

    @property
    def name(self) -> str:  # type: ignore[override]  # read-only over the base's class attribute
        return "log" if self.base == 2.0 else f"log:{format_number(self.base)}"

    def __call__(self, ranks: Any, n: Any = None) -> Any:
        if _is_tensor(ranks):
            return math.log2(self.base) / (1.0 + ranks).log2()
        r = np.asarray(ranks, dtype=np.float64)
        return math.log2(self.base) / np.log2(1.0 + r)


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class PowerDiscount(Discount, FrozenFields):
    """D(r) = r^−β (β = 1 is Zipf's 1/r)."""

    beta: float = 0.5

    def __init__(self, beta: float = 0.5) -> None:
        object.__setattr__(self, "beta", beta)

    @property
    def name(self) -> str:  # type: ignore[override]  # read-only over the base's class attribute
        return "zipf" if self.beta == 1.0 else f"power:{format_number(self.beta)}"

    def __call__(self, ranks: Any, n: Any = None) -> Any:
        r = ranks if _is_tensor(ranks) else np.asarray(ranks, dtype=np.float64)
        return r ** (-self.beta)


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class ExponentialDiscount(Discount, FrozenFields):
    """D(r) = a^−r, a > 1: ``a ** −r`` on NumPy arrays, ``exp(−ln(a) · r)`` on tensors."""

    a: float = 2.0

    def __init__(self, a: float = 2.0) -> None:
        object.__setattr__(self, "a", a)

    @property
    def name(self) -> str:  # type: ignore[override]  # read-only over the base's class attribute
        return f"exp:{format_number(self.a)}"

    def __call__(self, ranks: Any, n: Any = None) -> Any:
        if _is_tensor(ranks):
            return (-math.log(self.a) * ranks).exp()
        return float(self.a) ** (-np.asarray(ranks, dtype=np.float64))


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class LinearDiscount(Discount, FrozenFields):
    """D(r) = n − r, the linear discount of NDCG^β (needs the list length n)."""

    name: str = "linear"
    depends_on_length: bool = True

    def __init__(self, name: str = "linear", depends_on_length: bool = True) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "depends_on_length", depends_on_length)

    def __call__(self, ranks: Any, n: Any = None) -> Any:
        if n is None:
            raise ConventionError("the linear discount n − r needs the list length n")
        if _is_tensor(ranks):
            return _tensor_length(n, ranks) - ranks
        return np.asarray(n, dtype=np.float64) - np.asarray(ranks, dtype=np.float64)


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class LetorDiscount(Discount, FrozenFields):
    """D(r) = 1 / max(1, log2 r): positions 1 and 2 undiscounted (official LETOR scripts)."""

    name: str = "letor"

    def __init__(self, name: str = "letor") -> None:
        object.__setattr__(self, "name", name)

    def __call__(self, ranks: Any, n: Any = None) -> Any:
        if _is_tensor(ranks):
            return 1.0 / ranks.clamp(min=1.0).log2().clamp(min=1.0)
        r = np.asarray(ranks, dtype=np.float64)
        return 1.0 / np.maximum(1.0, np.log2(np.maximum(r, 1.0)))


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class CallableDiscount(Discount, FrozenFields):
    """A user's discount ``fn(ranks, n)`` of NumPy arrays; prints as ``name`` (cannot be parsed
    back). It has no form on torch tensors (``smooth`` is False)."""

    fn: Callable[[np.ndarray, Any], Any] = lambda r, n: 1.0 / np.log2(1.0 + r)
    name: str = "custom"
    depends_on_length: bool = False
    smooth: ClassVar[bool] = False

    def __init__(
        self,
        fn: Callable[[np.ndarray, Any], Any] = fn,
        name: str = "custom",
        depends_on_length: bool = False,
    ) -> None:
        object.__setattr__(self, "fn", fn)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "depends_on_length", depends_on_length)

    def __call__(self, ranks: Any, n: Any = None) -> np.ndarray:
        if _is_tensor(ranks):
            raise ConventionError(
                f"the discount {self.name!r} is a function of NumPy arrays and has no form on "
                "torch tensors (real-valued positions). Fix: use log, log:<b>, power:<beta>, "
                "zipf, exp:<a>, letor or linear"
            )
        return np.asarray(self.fn(np.asarray(ranks, dtype=np.float64), n), dtype=np.float64)


def get_discount(spec: str | Discount | Callable[..., Any]) -> Discount:
    """Resolve a discount from a name (see module docstring), a :class:`Discount` or a callable
    ``fn(ranks, n)``."""
    if isinstance(spec, Discount):
        return spec
    if callable(spec):
        return CallableDiscount(fn=spec, name=getattr(spec, "__name__", "custom"))
    if isinstance(spec, str):
        s = spec.strip().lower()
        head, _, arg = s.partition(":")
        try:
            if head == "log":
                base = float(arg) if arg else 2.0
                if base <= 1.0:
                    raise ConventionError(f"log base must exceed 1, got {base}")
                return LogDiscount(base=base)
            if head == "power":
                beta = float(arg) if arg else 0.5
                if beta <= 0:
                    raise ConventionError(f"power discount needs β > 0, got {beta}")
                return PowerDiscount(beta=beta)
            if head == "zipf" and not arg:
                return PowerDiscount(beta=1.0)
            if head in ("exp", "exponential"):
                a = float(arg) if arg else 2.0
                if a <= 1.0:
                    raise ConventionError(f"exponential discount a^−r needs a > 1, got {a}")
                return ExponentialDiscount(a=a)
            if head == "linear" and not arg:
                return LinearDiscount()
            if head == "letor" and not arg:
                return LetorDiscount()
        except ValueError as exc:
            if isinstance(exc, ConventionError):
                raise
            raise ConventionError(f"cannot read the number in discount {spec!r}") from exc
    raise ConventionError(
        f"unknown discount {spec!r}; known: log, log:<base>, power:<beta>, zipf, exp:<a>, "
        "linear, letor, or a callable fn(ranks, n)"
    )
