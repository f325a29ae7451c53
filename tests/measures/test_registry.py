"""Measures as values: parsing, printing, the registry, presets and resolution."""

from __future__ import annotations

import pytest

from ndcglab.errors import ConventionError, SpecError
from ndcglab.measures import (
    PRESETS,
    REGISTRY,
    Measure,
    available_measures,
    get_preset,
    parse_measure,
)

ROUND_TRIP = [
    "ndcg@10",
    "ndcg(gain=linear,discount=power:0.5)@0.2n",
    "map",
    "p@5",
    "mrr",
    "ndcg(ties=average)@5",
    "ndcg(ties=random:7)@3",
    "ndcg(discount=log:10,gain=table:0=0;1=2;2=5)",
    "ndcg(discount=exp:2)@10",
    "dcg(discount=zipf)@3",
    "idcg@10",
    "ndcg_beta",
    "meanndcg",
    "map(rel=2)@10",
    "map(denom=cut)@5",
    "p(short=zero)@10",
    "mrr(rel=letor,empty=skip)",
    "ndcg(rounding=floor)@0.25n",
    "ndcg(empty=one,short=zero)@10",
]


@pytest.mark.parametrize("spec", ROUND_TRIP)
def test_round_trip(spec: str) -> None:
    m = parse_measure(spec)
    assert parse_measure(str(m)) == m
    assert hash(parse_measure(str(m))) == hash(m)
    assert str(parse_measure(str(m))) == str(m)


def test_canonical_printing() -> None:
    m = parse_measure(" NDCG( gain = linear , discount = power:0.5 ) @ 0.2n ")
    assert str(m) == "ndcg(discount=power:0.5,gain=linear)@0.2n"
    assert str(parse_measure("ap@3")) == "map@3"
    assert str(parse_measure("z@10")) == "idcg@10"
    assert str(parse_measure("rr")) == "mrr"
    assert str(parse_measure("precision@5")) == "p@5"
    # equal conventions print the same
    assert parse_measure("ndcg(discount=log:2)@3") == parse_measure("ndcg(discount=log)@3")
    assert parse_measure("ndcg(discount=power:1)") == parse_measure("ndcg(discount=zipf)")
    assert parse_measure("ndcg(ties=random:007)") == parse_measure("ndcg(ties=random:7)")


def test_measures_are_frozen_and_hashable() -> None:
    m = parse_measure("ndcg@10")
    with pytest.raises(AttributeError):
        m.name = "map"  # type: ignore[misc]
    assert len({m, parse_measure("ndcg@10"), parse_measure("ndcg@5")}) == 2


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("foo@3", "unknown measure 'foo'; known: ndcg"),
        ("ndcg(foo=1)", "allowed: gain, discount, ties, empty, short, rounding"),
        ("map(gain=exp2)", "unknown parameter 'gain' for measure map"),
        ("meanndcg@3", "takes no cut-off"),
        ("ndcg_beta(gain=exp2)", "fixes gain=linear"),
        ("ndcg(short=zero)", "fixed cut-off"),
        ("ndcg(rounding=ceil)@10", "fractional cut-off"),
        ("ndcg@0", "cut-off"),
        ("ndcg@1.5n", "cut-off"),
        ("ndcg@ten", "cannot read cut-off"),
        ("ndcg(gain)", "key=value"),
    ],
)
def test_spec_errors(spec: str, needle: str) -> None:
    with pytest.raises(SpecError) as e:
        parse_measure(spec)
    assert needle in str(e.value)


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("ndcg(ties=first)", "known: input, docid, average"),
        ("ndcg(empty=nan)", "known: zero, one, skip, error"),
        ("ndcg(gain=cubic)", "unknown gain"),
        ("ndcg(discount=log:1)", "log base must exceed 1"),
        ("p(short=clamp)@5", "known: pad, clip, zero"),
        ("ndcg(short=pad)@5", "known: clip, zero"),
        ("map(rel=high)", "rel=letor"),
        ("ndcg(ties=random:x)", "integer seed"),
    ],
)
def test_convention_errors(spec: str, needle: str) -> None:
    with pytest.raises(ConventionError) as e:
        parse_measure(spec)
    assert needle in str(e.value)


def test_registry_is_complete() -> None:
    assert set(available_measures()) == {
        "ndcg",
        "dcg",
        "idcg",
        "ndcg_beta",
        "meanndcg",
        "map",
        "p",
        "mrr",
        # the rank family (trec_eval's and ir_measures' measures)
        "recall",
        "rprec",
        "success",
        "bpref",
        "infap",
        "gm_map",
        "iprec",
        "iprec_11pt",
        "err",
        "rbp",
        "rbp_residual",
        "judged",
        "num_rel",
        "num_ret",
        "num_rel_ret",
    }
    for info in REGISTRY.values():
        assert info.doc and info.formula


def test_resolve_fills_every_option() -> None:
    m = parse_measure("ndcg@10")
    assert not m.is_resolved
    r = m.resolve("letor4")
    assert r.is_resolved
    assert str(r) == "ndcg(discount=letor,empty=zero,gain=letor,short=zero,ties=input)@10"
    assert parse_measure(str(r)) == r
    # explicit options win over the preset
    r2 = parse_measure("ndcg(gain=exp2)@10").resolve("letor4")
    assert r2.get("gain") == "exp2" and r2.get("discount") == "letor"
    # options that do not apply are not added
    assert "short" not in parse_measure("ndcg").resolve().options
    assert "rounding" in parse_measure("ndcg@0.5n").resolve().options
    assert parse_measure("p@12").resolve("letor3").get("short") == "zero"
    assert parse_measure("p@12").resolve("letor4").get("short") == "pad"
    assert parse_measure("ndcg@12").resolve("letor3").get("short") == "zero"
    assert parse_measure("map@5").resolve("lightgbm").get("denom") == "cut"


def test_convention_states_every_option() -> None:
    c = parse_measure("ndcg@10").convention("trec_eval")
    assert c == {
        "cutoff": "10",
        "discount": "log",
        "empty": "zero",
        "gain": "linear",
        "short": "clip",
        "ties": "docid",
    }
    c = parse_measure("ndcg_beta").convention()
    assert c["gain"] == "linear" and c["discount"] == "linear"


@pytest.mark.parametrize(
    ("preset", "gain", "ties", "empty"),
    [
        ("standard", "exp2", "input", "zero"),
        ("letor3", "letor", "input", "zero"),
        ("letor4", "letor", "input", "zero"),
        ("trec_eval", "linear", "docid", "zero"),
        ("sklearn", "linear", "average", "zero"),
        ("lightgbm", "exp2", "input", "one"),
    ],
)
def test_presets(preset: str, gain: str, ties: str, empty: str) -> None:
    p = get_preset(preset)
    r = parse_measure("ndcg@5").resolve(p)
    assert (r.get("gain"), r.get("ties"), r.get("empty")) == (gain, ties, empty)
    for spec in p.measures:
        parse_measure(spec)


def test_preset_sets_and_errors() -> None:
    assert get_preset(None).name == "standard"
    assert get_preset("LETOR").name == "letor4"
    assert "meanndcg" in PRESETS["letor4"].measures
    assert "meanndcg" not in PRESETS["letor3"].measures
    assert PRESETS["letor4"].duplicates == "last"
    with pytest.raises(SpecError, match="unknown preset 'nope'; known: standard"):
        get_preset("nope")


def test_create_and_custom_objects() -> None:
    m = Measure.create("ndcg", 10, gain="linear")
    assert str(m) == "ndcg(gain=linear)@10"
    assert str(Measure.create("ndcg", "0.2n")) == "ndcg@0.2n"

    def half(y):
        return y / 2

    c = Measure.create("ndcg", 5, gain=half)
    assert str(c) == "ndcg(gain=half)@5"
    assert c == Measure.create("ndcg", 5, gain=half)
    assert c.with_options(ties="average").get("ties") == "average"
