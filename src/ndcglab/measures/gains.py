"""Gain functions G(y): how much a document of label y is worth.

Each gain is a small immutable object with a printed ``name`` (its part of a measure's spec) and a
``__call__`` that maps labels to gains elementwise. It accepts NumPy arrays and PyTorch tensors
alike (losses use the same objects as measures, never copies).

=============  =====================================  =========================================
name           G(y)                                   used by
=============  =====================================  =========================================
``exp2``       2^y − 1                                LETOR, Burges, LightGBM, Ravikumar et al.
``linear``     y                                      Järvelin & Kekäläinen, trec_eval, sklearn
``letor``      table {0: 0, 1: 1, 2: 3}, else 0       official LETOR Eval-Score-3.0/4.0 scripts
``table:...``  explicit table, e.g. ``table:0=0;1=1;2=3``, other labels 0
``signed:G``   G, negative labels too (G(-1) = -1)     TorchMetrics, allRank, rax, XGBoost
custom         any callable, via :class:`CallableGain`
=============  =====================================  =========================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._compat import FrozenFields
from .._spec import format_number
from ..errors import ConventionError

__all__ = [
    "CallableGain",
    "Exp2Gain",
    "Gain",
    "LinearGain",
    "SignedGain",
    "TableGain",
    "get_gain",
]


class Gain:
    """Base class: ``gain(labels) -> gains``, elementwise, for NumPy arrays or torch tensors.

    ``signed`` is False for every gain but :class:`SignedGain`: a negative label then has gain 0
    in the measures (trec_eval's rule), whatever the formula gives."""

    name: str = "gain"
    signed: bool = False

    def __call__(self, labels: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def __str__(self) -> str:
        return self.name


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class Exp2Gain(Gain, FrozenFields):
    """G(y) = 2^y − 1."""

    name: str = "exp2"

    def __init__(self, name: str = "exp2") -> None:
        object.__setattr__(self, "name", name)

    def __call__(self, labels: Any) -> Any:
        if isinstance(labels, np.ndarray | float | int):
            return np.exp2(np.asarray(labels, dtype=np.float64)) - 1.0
        return 2.0**labels - 1.0


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class LinearGain(Gain, FrozenFields):
    """G(y) = y."""

    name: str = "linear"

    def __init__(self, name: str = "linear") -> None:
        object.__setattr__(self, "name", name)

    def __call__(self, labels: Any) -> Any:
        if isinstance(labels, np.ndarray | float | int):
            return np.asarray(labels, dtype=np.float64)
        return labels * 1.0


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class TableGain(Gain, FrozenFields):
    """Gain from an explicit table ``{label: gain}``; labels not in the table get ``default``.

    A label matches a key when they are equal at the labels' own floating precision (the key
    rounded to it: float32 labels 0.1 match the key 0.1), for NumPy arrays and torch tensors
    alike; integer labels are compared as float64."""

    table: tuple[tuple[float, float], ...] = ((0.0, 0.0), (1.0, 1.0), (2.0, 3.0))
    default: float = 0.0
    label: str | None = None

    def __init__(
        self,
        table: tuple[tuple[float, float], ...] = ((0.0, 0.0), (1.0, 1.0), (2.0, 3.0)),
        default: float = 0.0,
        label: str | None = None,
    ) -> None:
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "label", label)

    @property
    def name(self) -> str:  # type: ignore[override]  # read-only over the base's class attribute
        if self.label:
            return self.label
        return "table:" + ";".join(f"{format_number(k)}={format_number(v)}" for k, v in self.table)

    def __call__(self, labels: Any) -> Any:
        if isinstance(labels, np.ndarray | float | int):
            y = np.asarray(labels)
            if y.dtype.kind != "f":
                y = y.astype(np.float64)
            out = np.full(y.shape, self.default, dtype=np.float64)
            for k, v in self.table:
                out[y == y.dtype.type(k)] = v
            return out
        # integer labels give floating gains (the default float dtype, as ``labels * 1.0``)
        dtype = labels.dtype if labels.is_floating_point() else (labels * 1.0).dtype
        out = labels.new_full(labels.shape, self.default, dtype=dtype)
        for k, v in self.table:
            out = out.masked_fill(labels == k, v)
        return out


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class CallableGain(Gain, FrozenFields):
    """A user's gain function; ``name`` is how it prints (it cannot be parsed back)."""

    fn: Callable[[Any], Any] = lambda y: y
    name: str = "custom"

    def __init__(self, fn: Callable[[Any], Any] = fn, name: str = "custom") -> None:
        object.__setattr__(self, "fn", fn)
        object.__setattr__(self, "name", name)

    def __call__(self, labels: Any) -> Any:
        return self.fn(labels)


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class SignedGain(Gain, FrozenFields):
    """``signed:<gain>``: the gain ``base`` applied to negative labels too, so a label below 0
    has the (negative) value of the formula, as the tools that read labels as plain numbers do
    (TorchMetrics, allRank, rax, XGBoost with a linear gain): 2^-1 - 1 = -0.5, linear -1."""

    base: Gain = Exp2Gain()  # noqa: RUF009  # immutable (FrozenFields), shared as before
    signed: bool = True

    def __init__(self, base: Gain = base, signed: bool = True) -> None:
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "signed", signed)

    @property
    def name(self) -> str:  # type: ignore[override]  # read-only over the base's class attribute
        return f"signed:{self.base.name}"

    def __call__(self, labels: Any) -> Any:
        return self.base(labels)


LETOR_GAIN = TableGain(table=((0.0, 0.0), (1.0, 1.0), (2.0, 3.0)), default=0.0, label="letor")

_NAMED: dict[str, Gain] = {"exp2": Exp2Gain(), "linear": LinearGain(), "letor": LETOR_GAIN}


def get_gain(spec: str | Gain | Mapping[float, float] | Callable[[Any], Any]) -> Gain:
    """Resolve a gain from a name (``exp2``, ``linear``, ``letor``, ``table:0=0;1=1;2=3``), a
    :class:`Gain`, a ``{label: gain}`` mapping or a callable."""
    if isinstance(spec, Gain):
        return spec
    if isinstance(spec, Mapping):
        return TableGain(table=tuple(sorted((float(k), float(v)) for k, v in spec.items())))
    if callable(spec):
        return CallableGain(fn=spec, name=getattr(spec, "__name__", "custom"))
    if isinstance(spec, str):
        s = spec.strip().lower()
        if s in _NAMED:
            return _NAMED[s]
        if s.startswith("signed:"):
            base = get_gain(s[len("signed:") :])
            return base if base.signed else SignedGain(base=base)
        if s.startswith("table:"):
            try:
                pairs = [p.split("=") for p in s[6:].split(";") if p]
                return TableGain(table=tuple(sorted((float(k), float(v)) for k, v in pairs)))
            except ValueError as exc:
                raise ConventionError(
                    f"cannot read gain table {spec!r}. Fix: write table:0=0;1=1;2=3"
                ) from exc
    raise ConventionError(
        f"unknown gain {spec!r}; known: exp2, linear, letor, table:<label>=<gain>;..., "
        "or a callable"
    )
