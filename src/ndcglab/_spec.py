"""The one string grammar shared by measures, losses and presets.

::

    spec    := name [ "(" param { "," param } ")" ] [ "@" cutoff ]
    param   := key "=" value          (value: any text without , ( ) @ ; e.g. power:0.5, z10, auto)
    cutoff  := INTEGER                (a fixed k, e.g. ndcg@10, cs_listmle@10)
             | NUMBER "n"             (a fraction of each list, e.g. ndcg@0.2n -> k = ceil(0.2 * n))

Names and keys are case-insensitive and printed in lower case; white space is ignored.
Numbers follow the file readers' rules (:func:`parse_int`, :func:`parse_real`): ASCII digits
only (no ``٣`` or ``３``, no ``1_000``), finite (no ``nan``, ``inf``), and within the range of
what they count; a fixed cut-off is a whole number from 1 to :data:`MAX_CUTOFF`.
Examples: ``ndcg@10``, ``ndcg(gain=linear,discount=power:0.5)@0.2n``, ``map``, ``p@5``,
``consistent_listnet(norm=z10)``, ``qnorm(q=auto)``.

:func:`parse_spec` turns a string into a :class:`ParsedSpec`; ``str(ParsedSpec)`` prints the
canonical form, which parses back to an equal value. Registries (measures, losses) resolve names
and validate keys; this module knows only the syntax.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import overload

import numpy as np

from ._compat import FrozenFields
from .errors import SpecError

__all__ = [
    "MAX_CUTOFF",
    "Cutoff",
    "ParsedSpec",
    "format_number",
    "parse_cutoff",
    "parse_int",
    "parse_real",
    "parse_spec",
]

#: the largest fixed cut-off k: a k beyond every list keeps the whole list (``short=clip``)
MAX_CUTOFF = 1_000_000_000
_INT_TEXT = re.compile(r"[+-]?[0-9]+\Z")
_REAL_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")


def _shown(text: str) -> str:
    """``text`` for a message, cut to 40 characters (a 5,000-digit number stays one line)."""
    return repr(text if len(text) <= 40 else text[:20] + "..." + text[-10:])


def _range_text(lo: float | None, hi: float | None, lo_open: bool, hi_open: bool) -> str:
    if lo is not None and hi is not None:
        a, b = ("(" if lo_open else "["), (")" if hi_open else "]")
        return f"in {a}{format_number(lo)}, {format_number(hi)}{b}"
    if lo is not None:
        return f"{'>' if lo_open else '>='} {format_number(lo)}"
    if hi is not None:
        return f"{'<' if hi_open else '<='} {format_number(hi)}"
    return "finite"


def parse_int(
    text: str,
    *,
    what: str,
    lo: int | None = None,
    hi: int | None = None,
    fix: str | None = None,
    error: type[Exception] = SpecError,
) -> int:
    """A whole number written in ASCII digits (optional sign) within ``[lo, hi]``; otherwise
    ``error`` naming ``what``, the value and the fix. Never an ``OverflowError`` or Python's
    4,300-digit limit: a number of more than 19 digits is out of range without being converted.
    """
    t = str(text).strip()
    want = "a whole number" + (
        "" if lo is None and hi is None else " " + _range_text(lo, hi, False, False)
    )
    tail = "" if fix == "" else f". Fix: {fix or f'give {what} as {want}, in ASCII digits'}"
    if not _INT_TEXT.match(t):
        raise error(f"{what} {_shown(str(text))} is not a whole number{tail}")
    if len(t.lstrip("+-").lstrip("0")) > 19:
        raise error(f"{what} {_shown(str(text))} is out of range (must be {want}){tail}")
    v = int(t)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise error(f"{what} {_shown(str(text))} is out of range (must be {want}){tail}")
    return v


def parse_real(
    text: str,
    *,
    what: str,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    hi_open: bool = False,
    fix: str | None = None,
    error: type[Exception] = SpecError,
) -> float:
    """A finite decimal number (``0.5``, ``-2``, ``1e-6``; ASCII, no ``nan``/``inf``/``_``)
    within the bounds (``lo_open``/``hi_open`` exclude an end); otherwise ``error`` naming
    ``what``, the value and the fix."""
    t = str(text).strip()
    span = _range_text(lo, hi, lo_open, hi_open)
    want = "a finite number" if span == "finite" else "a number " + span
    tail = "" if fix == "" else f". Fix: {fix or f'give {what} as {want}'}"
    if not _REAL_TEXT.match(t):
        raise error(f"{what} {_shown(str(text))} is not a finite decimal number{tail}")
    v = float(t)
    if v != v or v in (float("inf"), float("-inf")):
        raise error(f"{what} {_shown(str(text))} is out of range (must be {want}){tail}")
    if lo is not None and (v < lo or (lo_open and v == lo)):
        raise error(f"{what} {_shown(str(text))} is out of range (must be {want}){tail}")
    if hi is not None and (v > hi or (hi_open and v == hi)):
        raise error(f"{what} {_shown(str(text))} is out of range (must be {want}){tail}")
    return v


_NAME = re.compile(r"[a-z_][a-z0-9_\-]*\Z")
_KEY = re.compile(r"[a-z_][a-z0-9_]*\Z")


def format_number(x: float) -> str:
    """Print a number the shortest way that parses back exactly (``0.5``, ``10``, ``1e-06``)."""
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return str(int(x))
    return repr(float(x))


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class Cutoff(FrozenFields):
    """A cut-off: a fixed ``k`` or a ``fraction`` c of each list's length n.

    For a fraction, ``k(n) = ceil(c * n)`` by default (``rounding="ceil"``; ``"floor"`` and
    ``"round"`` — half up — are the alternatives), computed with a 1e-9 tolerance so that
    ``0.2 * 5`` gives 1, never 2; a non-empty list always keeps at least one position.
    """

    k: int | None = None
    fraction: float | None = None

    def __init__(self, k: int | None = None, fraction: float | None = None) -> None:
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "fraction", fraction)
        self.__post_init__()

    def __post_init__(self) -> None:
        if (self.k is None) == (self.fraction is None):
            raise SpecError("a cut-off is either a fixed k or a fraction of the list, not both")
        if self.k is not None and self.k < 1:
            raise SpecError(
                f"cut-off k must be a positive integer, got {self.k}. Fix: use @1 or more"
            )
        if self.fraction is not None and not (0.0 < self.fraction <= 1.0):
            raise SpecError(
                f"a fractional cut-off must lie in (0, 1], got {self.fraction}. Fix: e.g. @0.2n"
            )

    @overload
    def k_for(self, n: int, rounding: str = "ceil") -> int: ...

    @overload
    def k_for(self, n: np.ndarray, rounding: str = "ceil") -> np.ndarray: ...

    def k_for(self, n: int | np.ndarray, rounding: str = "ceil") -> int | np.ndarray:
        """The number of positions kept for a list of length ``n`` (may exceed n for fixed k).

        ``n`` is one length (returns an ``int``) or an array of lengths (returns int64 of the
        same shape, element by element the same arithmetic). This is the one place where a
        fraction of a list becomes whole positions.
        """
        if np.ndim(n) == 0:
            return int(self._k_of(np.asarray([n], dtype=np.int64), rounding)[0])
        return self._k_of(np.asarray(n, dtype=np.int64), rounding)

    def _k_of(self, n: np.ndarray, rounding: str) -> np.ndarray:
        if self.k is not None:
            return np.full(n.shape, self.k, dtype=np.int64)
        assert self.fraction is not None
        x = float(self.fraction) * n.astype(np.float64)
        if rounding == "ceil":
            k = np.ceil(x - 1e-9)
        elif rounding == "floor":
            k = np.floor(x + 1e-9)
        elif rounding == "round":
            k = np.floor(x + 0.5 + 1e-9)
        else:
            raise SpecError(f"unknown rounding {rounding!r}; known: ceil, floor, round")
        return np.where(n > 0, np.maximum(k.astype(np.int64), 1), 0).astype(np.int64)

    def __str__(self) -> str:
        if self.k is not None:
            return str(self.k)
        assert self.fraction is not None  # __post_init__: exactly one of k and fraction
        return format_number(self.fraction) + "n"


def parse_cutoff(text: str) -> Cutoff:
    """Parse ``"10"`` or ``"0.2n"`` into a :class:`Cutoff`."""
    t = text.strip().lower()
    if _INT_TEXT.match(t):
        return Cutoff(
            k=parse_int(
                t,
                what="cut-off",
                lo=1,
                hi=MAX_CUTOFF,
                fix="write a whole number from 1 (@10); a cut-off beyond every list keeps the "
                "whole list, as the measure without @k does",
            )
        )
    if t.endswith("n") and _REAL_TEXT.match(t[:-1]):
        return Cutoff(
            fraction=parse_real(
                t[:-1],
                what="fractional cut-off",
                lo=0.0,
                hi=1.0,
                lo_open=True,
                fix="write a fraction of the list in (0, 1] followed by n, e.g. @0.2n",
            )
        )
    raise SpecError(
        f"cannot read cut-off {text!r}. Fix: write a whole number (@10) or a fraction of the "
        "list followed by n (@0.2n)"
    )


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class ParsedSpec(FrozenFields):
    """A parsed specification: ``name``, ``params`` (sorted key, value text pairs), ``cutoff``."""

    name: str
    params: tuple[tuple[str, str], ...] = ()
    cutoff: Cutoff | None = None

    def __init__(
        self, name: str, params: tuple[tuple[str, str], ...] = (), cutoff: Cutoff | None = None
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "cutoff", cutoff)

    def param(self, key: str, default: str | None = None) -> str | None:
        """The text value of ``key``, or ``default``."""
        for k, v in self.params:
            if k == key:
                return v
        return default

    def __str__(self) -> str:
        out = self.name
        if self.params:
            out += "(" + ",".join(f"{k}={v}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            out += f"@{self.cutoff}"
        return out


def parse_spec(text: str, *, what: str = "specification") -> ParsedSpec:
    """Parse ``text`` by the grammar above; ``what`` ("measure", "loss") names it in errors."""
    if not isinstance(text, str):
        raise SpecError(f"a {what} must be given as a string, got {type(text).__name__}")
    s = "".join(text.split()).lower()
    if not s:
        raise SpecError(f"empty {what}. Fix: e.g. 'ndcg@10'")
    head, cutoff = s, None
    if "@" in s:
        head, _, tail = s.rpartition("@")
        if "(" in tail or ")" in tail or "@" in head:
            raise SpecError(f"cannot read {what} {text!r}: the '@cutoff' must come last, once")
        cutoff = parse_cutoff(tail)
    params: list[tuple[str, str]] = []
    name = head
    if "(" in head:
        if not head.endswith(")") or head.count("(") != 1 or head.count(")") != 1:
            raise SpecError(
                f"cannot read {what} {text!r}: parameters go in one pair of brackets, e.g. "
                "ndcg(gain=linear,discount=log)@10"
            )
        name, _, inner = head[:-1].partition("(")
        if inner:
            for item in inner.split(","):
                key, eq, value = item.partition("=")
                if not eq or not key or not value:
                    raise SpecError(
                        f"cannot read parameter {item!r} of {what} {text!r}. Fix: write key=value"
                    )
                if not _KEY.match(key):
                    raise SpecError(f"bad parameter name {key!r} in {what} {text!r}")
                if any(k == key for k, _ in params):
                    raise SpecError(f"parameter {key!r} given twice in {what} {text!r}")
                params.append((key, value))
    if not _NAME.match(name):
        raise SpecError(f"cannot read {what} name {name!r} in {text!r}")
    return ParsedSpec(name=name, params=tuple(sorted(params)), cutoff=cutoff)
