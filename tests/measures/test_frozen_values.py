"""The gains, discounts and specs behave as frozen dataclasses, whatever builds their methods.

The classes on the command line's start-up path are declared
``@dataclass(init=False, repr=False, eq=False)`` with :class:`ndcglab._compat.FrozenFields`
and an explicit ``__init__`` (no source compiled at import). The oracle is the standard
library: for each object a reference class is made with ``dataclasses.make_dataclass(...,
frozen=True)`` from the same fields, and ``repr``, ``==``, ``hash``, the errors of assignment
and deletion, ``replace``, ``asdict``, ``pickle``/``deepcopy`` and the constructor's signature
must agree with it.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndcglab._atomic import OutputTarget
from ndcglab._spec import Cutoff, ParsedSpec
from ndcglab._tables import TextTable
from ndcglab.measures.compute import PerQuery
from ndcglab.measures.discounts import (
    CallableDiscount,
    ExponentialDiscount,
    LetorDiscount,
    LinearDiscount,
    LogDiscount,
    PowerDiscount,
)
from ndcglab.measures.gains import CallableGain, Exp2Gain, LinearGain, SignedGain, TableGain
from ndcglab.measures.registry import Measure, OptionInfo, parse_measure


def _half(y: Any) -> Any:
    return y * 0.5


def _zipf(r: Any, n: Any) -> Any:
    return 1.0 / r


OBJECTS = [
    Exp2Gain(),
    LinearGain(),
    TableGain(),
    TableGain(table=((0.0, 0.0), (1.0, 2.0)), default=1.0, label="mine"),
    CallableGain(fn=_half, name="half"),
    SignedGain(),
    SignedGain(base=LinearGain()),
    LogDiscount(),
    LogDiscount(base=10.0),
    PowerDiscount(beta=1.0),
    ExponentialDiscount(a=3.0),
    LinearDiscount(),
    LetorDiscount(),
    CallableDiscount(fn=_zipf, name="zipf1"),
    Cutoff(k=10),
    Cutoff(fraction=0.5),
    ParsedSpec(name="ndcg", params=(("gain", "linear"),), cutoff=Cutoff(k=5)),
    parse_measure("ndcg(gain=linear,ties=average)@10"),
    Measure.create("dcg", 5, gain=_half),
    Measure("p"),
    OptionInfo("gain", "exp2, linear", "the gain"),
    TextTable(header=("a", "b"), rows=(("1", "2"), ("3", "4")), align="lr"),
    OutputTarget("file", Path("out.txt")),
    OutputTarget("fd", Path("-"), 1),
]


def _reference(obj: Any) -> Any:
    """The same fields and values in a class made by ``make_dataclass(frozen=True)``."""
    fields = dataclasses.fields(obj)
    ref_cls = dataclasses.make_dataclass(
        type(obj).__name__,
        [(f.name, f.type, dataclasses.field(default=f.default)) for f in fields],
        frozen=True,
    )
    return ref_cls(**{f.name: getattr(obj, f.name) for f in fields})


@pytest.mark.parametrize("obj", OBJECTS, ids=lambda o: type(o).__name__)
def test_repr_eq_hash_as_a_frozen_dataclass(obj: Any) -> None:
    ref = _reference(obj)
    if not isinstance(obj, Measure):  # its own repr: the spec it parses from
        assert repr(obj) == repr(ref)
    assert hash(obj) == hash(ref)
    twin = type(obj)(**{f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
    assert twin == obj and hash(twin) == hash(obj) and twin is not obj
    assert obj != ref  # another class with the same fields is not equal
    assert obj.__eq__(ref) is NotImplemented
    assert dataclasses.is_dataclass(obj)


@pytest.mark.parametrize("obj", OBJECTS, ids=lambda o: type(o).__name__)
def test_frozen_as_a_frozen_dataclass(obj: Any) -> None:
    ref = _reference(obj)
    for name in (dataclasses.fields(obj)[0].name, "something_else"):
        with pytest.raises(dataclasses.FrozenInstanceError) as ours:
            setattr(obj, name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError) as theirs:
            setattr(ref, name, 1)
        assert str(ours.value) == str(theirs.value)
        with pytest.raises(dataclasses.FrozenInstanceError) as ours:
            delattr(obj, name)
        with pytest.raises(dataclasses.FrozenInstanceError) as theirs:
            delattr(ref, name)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("obj", OBJECTS, ids=lambda o: type(o).__name__)
def test_replace_asdict_copy_pickle_signature(obj: Any) -> None:
    ref = _reference(obj)
    assert dataclasses.asdict(obj) == dataclasses.asdict(ref)
    assert dataclasses.astuple(obj) == dataclasses.astuple(ref)
    first = dataclasses.fields(obj)[0].name
    changed = dataclasses.replace(obj, **{first: getattr(obj, first)})
    assert type(changed) is type(obj) and changed == obj
    assert copy.deepcopy(obj) == obj and copy.copy(obj) == obj
    assert pickle.loads(pickle.dumps(obj)) == obj
    ours = inspect.signature(type(obj)).parameters
    theirs = inspect.signature(type(ref)).parameters
    assert [(p.name, p.default, p.kind) for p in ours.values()] == [
        (p.name, p.default, p.kind) for p in theirs.values()
    ]
    assert type(obj).__match_args__ == type(ref).__match_args__


def test_per_query_arrays_as_a_frozen_dataclass() -> None:
    """Fields that are arrays: the same repr, and no hash (arrays have none) on both sides."""
    obj = PerQuery(values=np.array([0.5, 1.0]), empty=np.array([False, True]))
    ref = _reference(obj)
    assert repr(obj) == repr(ref)
    with pytest.raises(TypeError):
        hash(obj)
    with pytest.raises(TypeError):
        hash(ref)
    with pytest.raises(dataclasses.FrozenInstanceError):
        obj.values = np.zeros(2)  # type: ignore[misc]


def test_a_plain_subclass_freezes_the_fields_only() -> None:
    """As with a frozen dataclass: a subclass that is not a dataclass may set new attributes."""

    class Mine(LogDiscount):
        pass

    d = Mine(base=3.0)
    d.note = "ok"  # type: ignore[attr-defined]
    assert d.note == "ok"  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'base'"):
        d.base = 2.0  # type: ignore[misc]
    assert d == Mine(base=3.0) and d != LogDiscount(base=3.0)


def test_the_values_still_compute() -> None:
    ranks = np.arange(1.0, 6.0)
    assert np.array_equal(LogDiscount()(ranks), 1.0 / np.log2(1.0 + ranks))
    assert np.array_equal(PowerDiscount(beta=1.0)(ranks), 1.0 / ranks)
    labels = np.array([0.0, 1.0, 2.0, 3.0])
    assert np.array_equal(Exp2Gain()(labels), [0.0, 1.0, 3.0, 7.0])
    assert np.array_equal(TableGain()(labels), [0.0, 1.0, 3.0, 0.0])
    assert np.array_equal(SignedGain(base=LinearGain())(-labels), -labels)
