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
from dataclasses import MISSING
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndcglab._atomic import OutputTarget
from ndcglab._spec import Cutoff, ParsedSpec
from ndcglab._tables import TextTable
from ndcglab.data import RankingDataset
from ndcglab.measures import evaluate_arrays, get_preset
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
from ndcglab.measures.registry import (
    Measure,
    MeasureInfo,
    OptionInfo,
    get_measure_info,
    parse_measure,
)


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
    get_preset("trec_eval"),
    get_preset("letor4"),
    get_measure_info("ndcg"),
    evaluate_arrays(
        np.array([2.0, 0.0, 1.0, 1.0, 0.0]),
        np.array([0.3, 0.2, 0.1, 0.5, 0.4]),
        np.array([0, 3, 5]),
        ["ndcg@2", "map"],
    ),
    RankingDataset(
        features=np.zeros((3, 2)),
        labels=np.array([1.0, 0.0, 2.0]),
        boundaries=np.array([0, 3]),
        query_ids=np.array(["q"]),
    ).query(0),
]


def _reference(obj: Any) -> Any:
    """The same fields and values in a class made by ``make_dataclass(frozen=True)``."""
    fields = dataclasses.fields(obj)
    ref_cls = dataclasses.make_dataclass(
        type(obj).__name__,
        [
            (
                f.name,
                f.type,
                dataclasses.field(default=f.default)
                if f.default_factory is dataclasses.MISSING
                else dataclasses.field(default_factory=f.default_factory),
            )
            for f in fields
        ],
        frozen=True,
    )
    return ref_cls(**{f.name: getattr(obj, f.name) for f in fields})


def _outcome(fn: Any) -> Any:
    """``("value", fn())``, or ``("raises", the exception's type)``."""
    try:
        return ("value", fn())
    except Exception as exc:
        return ("raises", type(exc))


def _twin(obj: Any) -> Any:
    return type(obj)(**{f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})


@pytest.mark.parametrize("obj", OBJECTS, ids=lambda o: type(o).__name__)
def test_repr_eq_hash_as_a_frozen_dataclass(obj: Any) -> None:
    ref = _reference(obj)
    if not isinstance(obj, Measure):  # its own repr: the spec it parses from
        assert repr(obj) == repr(ref)
    assert _outcome(lambda: hash(obj)) == _outcome(lambda: hash(ref))
    twin, ref_twin = _twin(obj), _twin(ref)
    assert twin is not obj
    assert _outcome(lambda: twin == obj) == _outcome(lambda: ref_twin == ref)
    assert _outcome(lambda: hash(twin) == hash(obj)) == _outcome(
        lambda: hash(ref_twin) == hash(ref)
    )
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
    assert repr(dataclasses.asdict(obj)) == repr(dataclasses.asdict(ref))
    assert repr(dataclasses.astuple(obj)) == repr(dataclasses.astuple(ref))
    first = dataclasses.fields(obj)[0].name
    changed = dataclasses.replace(obj, **{first: getattr(obj, first)})
    assert type(changed) is type(obj) and repr(changed) == repr(obj)
    for other in (copy.deepcopy(obj), copy.copy(obj), pickle.loads(pickle.dumps(obj))):
        assert type(other) is type(obj) and repr(other) == repr(obj)
    ours = inspect.signature(type(obj)).parameters
    theirs = inspect.signature(type(ref)).parameters
    factories = {f.name for f in dataclasses.fields(obj) if f.default_factory is not MISSING}
    assert [(p.name, p.kind) for p in ours.values()] == [(p.name, p.kind) for p in theirs.values()]
    for name, p in ours.items():  # a field with a factory: None stands for "a new one"
        assert p.default == (None if name in factories else theirs[name].default)
    assert type(obj).__match_args__ == type(ref).__match_args__


def test_fields_with_a_factory_get_a_new_value_each() -> None:
    """As ``field(default_factory=...)``: a new, empty value per object (None stands for it)."""
    a = MeasureInfo("m", "gain", (), "doc", "formula")
    b = MeasureInfo("m", "gain", (), "doc", "formula")
    assert a.fixed == {} and a.fixed is not b.fixed
    assert [f.default_factory for f in dataclasses.fields(MeasureInfo) if f.name == "fixed"] == [
        dict
    ]


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
