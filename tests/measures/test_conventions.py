"""Each convention has one implementation (ndcglab.measures.conventions, the Gain/Discount/Cutoff
objects), and every path through the library gives the same numbers with it: the kernels' gain
tables against per-document gains, discount tables per list length, the vectorised cut-off
rounding against the scalar one, and the prefix computation against truncated copies."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from ndcglab._spec import Cutoff
from ndcglab.errors import ConventionError, EmptyQueryError, SpecError
from ndcglab.measures import Measure, evaluate_arrays, get_preset, ndcg_per_query, parse_measure
from ndcglab.measures.conventions import (
    apply_empty,
    apply_short,
    cumulative_dcg,
    cutoff_k,
    normalise,
    precision_divisor,
    relevance,
    tie_key,
)
from ndcglab.measures.discounts import CallableDiscount
from ndcglab.measures.gains import CallableGain
from ndcglab.measures.prefixes import prefix_values, supports_prefixes


def _lists(seed: int = 0, labels: np.ndarray | None = None):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 40, 60)
    lengths[:3] = [1, 2, 3]
    n = int(lengths.sum())
    b = np.concatenate([[0], np.cumsum(lengths)])
    y = rng.integers(0, 5, n).astype(float) if labels is None else labels(rng, n)
    s = np.round(rng.normal(size=n) * 2) / 2
    docs = np.array([f"d{rng.integers(0, 30)}" for _ in range(n)], dtype=object)
    return y, s, b, docs


# ------------------------------------------------------------------------------ cut-offs
@pytest.mark.parametrize("rounding", ["ceil", "floor", "round"])
@pytest.mark.parametrize("fraction", [0.1, 0.2, 0.25, 1 / 3, 0.5, 0.7, 1.0])
def test_vectorised_cutoff_is_the_scalar_one(fraction: float, rounding: str) -> None:
    cut = Cutoff(fraction=fraction)
    n = np.arange(0, 500)
    many = cut.k_for(n, rounding)
    assert many.dtype == np.int64 and many.shape == n.shape
    assert many.tolist() == [cut.k_for(int(x), rounding) for x in n]
    assert isinstance(cut.k_for(7, rounding), int)
    assert cutoff_k(cut, rounding, n, n + 3).tolist() == many.tolist()


def test_cutoff_k_fixed_and_whole_list() -> None:
    n = np.array([0, 1, 5, 40])
    assert cutoff_k(Cutoff(k=10), None, n, n).tolist() == [10, 10, 10, 10]
    assert cutoff_k(None, None, n, n + 1).tolist() == [1, 2, 6, 41]
    assert Cutoff(k=3).k_for(np.array([1, 9])).tolist() == [3, 3]
    assert Cutoff(fraction=0.2).k_for(5) == 1  # 0.2 * 5 is 1, never 2
    with pytest.raises(SpecError, match="unknown rounding"):
        Cutoff(fraction=0.5).k_for(4, "up")
    with pytest.raises(ConventionError, match="rounding"):
        cutoff_k(Cutoff(fraction=0.5), None, n, n)


# ------------------------------------------------------------------------------ gains
@pytest.mark.parametrize(
    ("gain", "twin"),
    [
        ("exp2", lambda y: np.exp2(np.asarray(y, dtype=np.float64)) - 1.0),
        ("letor", lambda y: np.select([y == 1, y == 2], [1.0, 3.0], 0.0)),
        ("table:0=0;1=2;3=7", lambda y: np.select([y == 1, y == 3], [2.0, 7.0], 0.0)),
    ],
)
@pytest.mark.parametrize("kind", ["whole", "large", "fractional", "negative"])
def test_gain_tables_equal_per_document_gains(gain: str, twin, kind: str) -> None:
    """The kernels read named gains from a table of the Gain object at whole labels; labels
    outside it (beyond the table, fractional, negative) fall back to the object on each label.
    A callable twin (always per-document gains) gives the very same numbers."""

    def labels(rng: np.random.Generator, n: int) -> np.ndarray:
        y = rng.integers(0, 4, n).astype(float)
        if kind == "large":
            y[::7] = 70.0
        elif kind == "fractional":
            y[::5] += 0.5
        elif kind == "negative":
            y[::6] = -1.0
        return y

    y, s, b, _ = _lists(3, labels)
    specs = ["ndcg@3", "ndcg@0.5n", "ndcg(ties=average)", "meanndcg", "dcg@5"]
    for spec in specs:
        named = parse_measure(spec).with_options(gain=gain)
        callable_ = parse_measure(spec).with_options(gain=CallableGain(fn=twin, name="twin"))
        res = evaluate_arrays(y, s, b, [named, callable_, "map"])
        np.testing.assert_array_equal(
            res.per_query[str(named)], res.per_query[str(callable_)], err_msg=spec
        )


# ------------------------------------------------------------------------------ discounts
def test_length_dependent_discounts_use_one_table_per_length() -> None:
    """The linear discount n − r (NDCG^β) and any discount of the list's length come from
    Discount.table(n) of each length, whatever the kernel."""
    y, s, b, _ = _lists(4)
    twin = CallableDiscount(fn=lambda r, n: n - r, name="twin", depends_on_length=True)
    for cut in [None, 3, "0.5n"]:
        beta = Measure.create("ndcg_beta", cut)
        other = Measure.create("ndcg", cut, gain="linear", discount=twin)
        res = evaluate_arrays(y, s, b, [beta, other, "map"])
        np.testing.assert_array_equal(res.per_query[str(beta)], res.per_query[str(other)])


def test_cumulative_dcg_sums_left_to_right() -> None:
    g = np.array([[3.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    d = np.array([1.0, 0.5, 0.25])
    out = cumulative_dcg(g, d)
    assert out.shape == (2, 4)
    np.testing.assert_array_equal(out[0], [0.0, 3.0, 3.5, 3.5])
    np.testing.assert_array_equal(out[1], [0.0, 1.0, 1.5, 1.75])
    assert cumulative_dcg(np.array([2.0]), np.array([1.0])).tolist() == [0.0, 2.0]


# ------------------------------------------------------------------------------ ties, empty, short
def test_tie_key_rules() -> None:
    s = np.array([1.0, 1.0, 0.5, 1.0])
    b = np.array([0, 4])
    key, avg = tie_key("average", s, b)
    assert avg and not key.any()
    with pytest.raises(ConventionError, match="ties=docid"):
        tie_key("docid", s, b)
    key, avg = tie_key("docid", s, b, doc_ids=np.array(["a", "c", "z", "b"], dtype=object))
    assert not avg and key[2] == 0.0 and key[1] < key[3] < key[0]  # docno descending
    gains = np.array([0.0, 3.0, 1.0, 1.0])
    assert tie_key("pessimistic", s, b, values=gains)[0].tolist() == gains.tolist()
    assert tie_key("optimistic", s, b, values=gains)[0].tolist() == (-gains).tolist()
    a, _ = tie_key("random:5", s, b)
    np.testing.assert_array_equal(a, tie_key("random:5", s, b)[0])


def test_relevance_short_and_empty_rules() -> None:
    y = np.array([0.0, 1.0, 2.0, 3.0])
    assert relevance("letor", y).tolist() == [0.0, 1.0, 1.0, 0.0]
    assert relevance("2", y).tolist() == [0.0, 0.0, 1.0, 1.0]
    n = np.array([3, 10])
    m = parse_measure("ndcg(short=zero)@5")
    assert apply_short(m, np.array([0.5, 0.5]), n).tolist() == [0.0, 0.5]
    assert apply_short(parse_measure("ndcg(short=clip)@5"), np.ones(2), n).tolist() == [1, 1]
    k = np.array([5, 5])
    assert precision_divisor(parse_measure("p(short=pad)@5"), k, n).tolist() == [5, 5]
    assert precision_divisor(parse_measure("p(short=clip)@5"), k, n).tolist() == [3, 5]
    v, empty = normalise(np.array([1.0, 0.0]), np.array([2.0, 0.0]))
    assert v.tolist() == [0.5, 0.0] and empty.tolist() == [False, True]
    for rule, want in [("zero", 0.0), ("one", 1.0)]:
        out = apply_empty(parse_measure(f"ndcg(empty={rule})"), v.copy(), empty, ["a", "b"])
        assert out.tolist() == [0.5, want]
    assert np.isnan(apply_empty(parse_measure("ndcg(empty=skip)"), v.copy(), empty, None)[1])
    with pytest.raises(EmptyQueryError, match=r"query b .*empty=zero, one or skip"):
        apply_empty(parse_measure("ndcg(empty=error)"), v.copy(), empty, ["a", "b"])


def test_ndcg_per_query_defaults_are_the_standard_preset() -> None:
    std = get_preset("standard")
    params = inspect.signature(ndcg_per_query).parameters
    for key in ("gain", "discount", "ties", "empty"):
        assert params[key].default == std.default("ndcg", key)
    y, s, b, _ = _lists(5)
    for k in (None, 3, 100):
        spec = "ndcg" if k is None else f"ndcg@{k}"
        want = evaluate_arrays(y, s, b, [spec], preset="standard").per_query[spec]
        np.testing.assert_array_equal(ndcg_per_query(y, s, b, k), want)


# ------------------------------------------------------------------------------ prefixes
PREFIX_SPECS = [
    "ndcg",
    "ndcg@1",
    "ndcg@5",
    "ndcg(short=zero)@5",
    "ndcg@0.3n",
    "ndcg(rounding=floor)@0.3n",
    "ndcg(discount=power:0.5,ties=average)@0.5n",
    "ndcg(ties=average)",
    "ndcg(ties=pessimistic)@4",
    "ndcg(ties=optimistic,gain=linear)",
    "ndcg(ties=docid)@3",
    "ndcg(empty=skip,discount=zipf)",
    "ndcg(empty=one,gain=letor,discount=letor)@0.5n",
    "ndcg_beta",
    "ndcg_beta@0.5n",
    "dcg(short=zero)@4",
    "idcg@0.5n",
]


@pytest.mark.parametrize("preset", [None, "letor4", "sklearn"])
def test_prefix_values_equal_evaluate_on_truncated_lists(preset) -> None:
    """Bit for bit: the prefix computation uses the same tables, tie keys, sums and rules as
    evaluate_arrays on each truncated copy."""
    y, s, b, docs = _lists(6)
    sizes = np.array([1, 2, 3, 7, 15, 40])
    ms = [parse_measure(x).resolve(preset) for x in PREFIX_SPECS]
    assert all(supports_prefixes(m) for m in ms)
    rankers = [s, np.round(s)]
    got = prefix_values(ms, y, rankers, b, sizes, doc_ids=docs)
    lengths = np.diff(b)
    for gi, n in enumerate(sizes.tolist()):
        keep = np.concatenate([np.arange(lo, lo + min(n, ln)) for lo, ln in zip(b[:-1], lengths)])
        bt = np.concatenate([[0], np.cumsum(np.minimum(lengths, n))])
        for k, sc in enumerate(rankers):
            res = evaluate_arrays(
                y[keep], sc[keep], bt, ms, preset=preset, doc_ids=docs[keep], duplicates="keep"
            )
            for m in ms:
                np.testing.assert_array_equal(
                    got[m][k, :, gi], res.per_query[str(m)], err_msg=f"{m} n={n}"
                )


def test_prefix_values_refuses_what_it_does_not_compute() -> None:
    y, s, b, _ = _lists(7)
    assert not supports_prefixes(parse_measure("ndcg(ties=random:1)").resolve())
    assert not supports_prefixes(parse_measure("map").resolve())
    with pytest.raises(ConventionError, match="prefix_values"):
        prefix_values([parse_measure("map").resolve()], y, [s], b, [3])
    with pytest.raises(ConventionError, match="prefix_values"):
        prefix_values([parse_measure("ndcg")], y, [s], b, [3])  # not resolved
    with pytest.raises(EmptyQueryError, match="among its first 2 documents"):
        yy = y.copy()
        yy[b[0] : b[0] + 2] = 0.0
        prefix_values([parse_measure("ndcg(empty=error)").resolve()], yy, [s], b, [2])
