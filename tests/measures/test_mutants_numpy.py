"""The gain objects of the measures on small label lists whose gains are worked out by hand (no
ndcglab code in the oracle): the rules that mutation testing found unpinned (see
CONTRIBUTING.md, "Mutation testing")."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.errors import ConventionError
from ndcglab.measures.gains import (
    CallableGain,
    Exp2Gain,
    LinearGain,
    TableGain,
    get_gain,
)


def test_exp2_and_linear_by_hand_on_arrays_and_scalars() -> None:
    y = np.array([0, 1, 2, 3], dtype=np.int64)
    got = Exp2Gain()(y)
    assert got.dtype == np.float64 and got.tolist() == [0.0, 1.0, 3.0, 7.0]
    assert Exp2Gain()(2) == 3.0 and Exp2Gain()(0.5) == pytest.approx(2**0.5 - 1, rel=1e-15)
    lin = LinearGain()(np.array([0, 2, 5], dtype=np.int32))
    assert lin.dtype == np.float64 and lin.tolist() == [0.0, 2.0, 5.0]
    assert LinearGain()(3) == 3.0 and float(LinearGain()(2.5)) == 2.5


def test_table_gain_by_hand_and_its_names() -> None:
    g = get_gain("table:0=0;1=2.5;3=10")
    assert isinstance(g, TableGain)
    assert g.name == "table:0=0;1=2.5;3=10"
    y = np.array([3, 1, 0, 2, 7])
    assert g(y).tolist() == [10.0, 2.5, 0.0, 0.0, 0.0]  # labels not in the table: 0
    assert g(1) == 2.5
    letor = get_gain("LETOR ")
    assert letor.name == "letor" and letor(np.array([0, 1, 2, 3])).tolist() == [0, 1, 3, 0]
    mapped = get_gain({2: 3, 0: 0, 1: 1.5})
    assert mapped.name == "table:0=0;1=1.5;2=3"
    assert TableGain(table=((1.0, 4.0),), default=-1.0)(np.array([1, 5])).tolist() == [4.0, -1.0]


def test_table_gain_matches_keys_at_the_labels_precision() -> None:
    # float32 0.1 is 0.100000001490116…, not the double 0.1: the key is rounded to the labels'
    # precision before comparing, so float32 labels read from "0.1" get the table's gain, in
    # NumPy as in torch; float64 and integer labels compare in float64
    g = get_gain("table:0.1=5;2=7")
    assert g(np.array([0.1, 0.2, 2.0], dtype=np.float32)).tolist() == [5.0, 0.0, 7.0]
    assert g(np.array([0.1, 0.2, 2.0], dtype=np.float64)).tolist() == [5.0, 0.0, 7.0]
    assert g(np.array([np.float32(0.1)], dtype=np.float64)).tolist() == [0.0]
    assert g(np.array([2, 3], dtype=np.int64)).tolist() == [7.0, 0.0]
    torch = pytest.importorskip("torch")
    t32 = g(torch.tensor([0.1, 0.2, 2.0], dtype=torch.float32))
    assert t32.tolist() == [5.0, 0.0, 7.0]


def test_gains_on_tensors_keep_the_label_dtype_rules() -> None:
    torch = pytest.importorskip("torch")
    yf = torch.tensor([0.0, 1.0, 2.0, 5.0], dtype=torch.float64)
    assert Exp2Gain()(yf).tolist() == [0.0, 1.0, 3.0, 31.0]
    assert LinearGain()(yf).tolist() == [0.0, 1.0, 2.0, 5.0]
    t = get_gain("table:0=0;1=2.5;2=4")(yf)
    assert t.dtype == torch.float64 and t.tolist() == [0.0, 2.5, 4.0, 0.0]
    yi = torch.tensor([2, 0, 1])
    ti = get_gain("letor")(yi)
    assert ti.tolist() == [3, 0, 1]
    d = TableGain(table=((1.0, 4.0),), default=-1.0)(torch.tensor([1.0, 3.0]))
    assert d.tolist() == [4.0, -1.0]


def test_callable_gain_names() -> None:
    def half(y: np.ndarray) -> np.ndarray:
        return np.asarray(y) / 2

    g = get_gain(half)
    assert isinstance(g, CallableGain) and g.name == "half"
    assert g(np.array([2.0, 4.0])).tolist() == [1.0, 2.0]
    assert get_gain(lambda y: y).name == "<lambda>"
    assert CallableGain().name == "custom" and CallableGain()(5) == 5
    same = Exp2Gain()
    assert get_gain(same) is same and str(same) == "exp2"


def test_gain_spec_errors_say_the_fix() -> None:
    with pytest.raises(ConventionError) as e:
        get_gain("table:0=0;1")
    assert str(e.value) == "cannot read gain table 'table:0=0;1'. Fix: write table:0=0;1=1;2=3"
    with pytest.raises(ConventionError) as e:
        get_gain("cubic")
    assert str(e.value) == (
        "unknown gain 'cubic'; known: exp2, linear, letor, table:<label>=<gain>;..., or a callable"
    )
    with pytest.raises(ConventionError):
        get_gain(3)  # type: ignore[arg-type]


def test_table_gain_with_an_integer_default_stays_float() -> None:
    # default=0 written as an int: the gains are still float64 (2.5 is not cut to 2)
    g = TableGain(table=((1.0, 2.5), (2.0, 0.75)), default=0)
    got = g(np.array([1, 3, 2]))
    assert got.dtype == np.float64 and got.tolist() == [2.5, 0.0, 0.75]


def test_exp2_computes_in_float64_for_float32_labels() -> None:
    y32 = np.array([0.3, 1.7], dtype=np.float32)
    got = Exp2Gain()(y32)
    assert got.dtype == np.float64
    assert got.tolist() == [2.0 ** float(v) - 1.0 for v in y32]


def test_table_gain_on_integer_tensors_keeps_fractional_gains() -> None:
    """A fractional gain of an integer label tensor is not truncated (it used to give 2 for 2.5);
    the result is floating, as the NumPy path's float64."""
    torch = pytest.importorskip("torch")
    g = get_gain("table:0=0;1=2.5")
    out = g(torch.tensor([1, 0]))
    assert out.is_floating_point() and out.tolist() == [2.5, 0.0]
    assert g(np.array([1, 0])).tolist() == [2.5, 0.0]


# -------------------------------------------------------------------------- discounts
def test_discounts_on_integer_ranks_are_float64_by_hand() -> None:
    from ndcglab.measures.discounts import LinearDiscount, PowerDiscount

    r = np.array([1, 2, 4], dtype=np.int64)
    # an integer exponent on integer ranks must still give the fractions r^−β
    p = PowerDiscount(beta=2)(r)  # type: ignore[arg-type]
    assert p.dtype == np.float64 and p.tolist() == [1.0, 0.25, 0.0625]
    lin = LinearDiscount()(r, np.int64(5))
    assert lin.dtype == np.float64 and lin.tolist() == [4.0, 3.0, 1.0]


def test_linear_discount_without_n_names_what_it_needs() -> None:
    from ndcglab.measures.discounts import LinearDiscount

    msg = r"^the linear discount n − r needs the list length n$"
    with pytest.raises(ConventionError, match=msg):
        LinearDiscount()(np.array([1, 2]))


def _docid_keys_twice(ids: np.ndarray) -> tuple[list[float], list[float]]:
    """tie_key('docid') on one list where every score is tied, called twice with the same id
    array: the first call ranks the tied ids alone, the second the whole array once (kept)."""
    from ndcglab.measures.conventions import tie_key

    s = np.ones(len(ids))
    b = np.array([0, len(ids)])
    first = tie_key("docid", s, b, doc_ids=ids)[0]
    second = tie_key("docid", s, b, doc_ids=ids)[0]
    return (first - first.min()).tolist(), (second - second.min()).tolist()


def test_docid_ties_compare_integer_ids_as_text() -> None:
    # trec_eval compares docnos as text: "9" > "2" > "100" > "10" (numeric order would differ)
    ids = np.array([9, 10, 100, 2], dtype=object)
    for key in _docid_keys_twice(ids):
        assert key == [0.0, 3.0, 2.0, 1.0]  # ascending key = docno descending


def test_docid_ties_rank_non_ascii_ids_by_code_point() -> None:
    ids = np.array(["é", "e", "z"], dtype=object)  # "e" < "z" < "é" (U+00E9)
    for key in _docid_keys_twice(ids):
        assert key == [0.0, 2.0, 1.0]


def test_docid_ties_give_equal_ids_equal_keys() -> None:
    ids = np.array(["x", "x"], dtype=object)
    for key in _docid_keys_twice(ids):
        assert key == [0.0, 0.0]


def test_docid_ranks_are_kept_per_array_and_forgotten_with_it() -> None:
    import gc

    from ndcglab.measures import conventions as C

    def text_ranks(ids: np.ndarray) -> list[float]:  # dense rank in text order, by hand
        order = sorted(set(map(str, ids)))
        return [float(order.index(str(i))) for i in ids]

    a = np.array(["b", "a", "c", "a"], dtype=object)
    b = np.array(["z", "y"], dtype=object)
    assert C._docid_ranks(["b", "a"]) is None  # not an array: never kept
    assert C._docid_ranks(a) is None  # first sight: the caller ranks the tied ids only
    assert C._docid_ranks(b) is None
    ra = C._docid_ranks(a)  # second sight of a, after b: a's own ranks
    assert ra is not None and ra.tolist() == text_ranks(a)
    assert C._docid_ranks(a) is ra  # computed once, then kept
    rb = C._docid_ranks(b)
    assert rb is not None and rb.tolist() == text_ranks(b)
    assert C._docid_ranks(a) is ra and C._docid_ranks(b) is rb
    key = id(a)
    assert key in C._DOCID_RANKS
    del a, ra
    gc.collect()
    assert key not in C._DOCID_RANKS  # no entry outlives its array


@pytest.mark.parametrize(("n_empty", "tail"), [(5, ""), (6, " and 1 more")])
def test_empty_error_names_five_queries_then_counts_the_rest(n_empty: int, tail: str) -> None:
    from ndcglab.errors import EmptyQueryError
    from ndcglab.measures import evaluate_arrays

    n = n_empty + 1  # one query with a relevant document, then the empty ones
    labels = np.array([1.0] + [0.0] * n_empty)
    bounds = np.arange(n + 1)
    qids = [f"q{i}" for i in range(n)]
    with pytest.raises(EmptyQueryError) as e:
        evaluate_arrays(labels, np.zeros(n), bounds, "ndcg(empty=error)", query_ids=qids)
    names = ", ".join(qids[1:6])
    assert f"query {names}{tail} (empty=error)" in str(e.value)
    assert f"{n_empty} queries have no document with a positive gain" in str(e.value)


def test_docid_ties_without_ids_name_both_fixes() -> None:
    from ndcglab.measures.conventions import tie_key

    with pytest.raises(ConventionError) as e:
        tie_key("docid", np.ones(2), np.array([0, 2]))
    assert str(e.value) == (
        "ties=docid (trec_eval: docno descending) needs document ids. Fix: pass doc_ids= "
        "(read_letor keeps '#docid = ...'), or use ties=input"
    )


def test_discounts_of_unsigned_ranks_by_hand() -> None:
    # unsigned ranks must not be negated as unsigned integers (2^-r, not 2^(2^32 - r))
    from ndcglab.measures.discounts import get_discount

    r = np.array([1, 2, 3], dtype=np.uint32)
    assert get_discount("exp:2")(r).tolist() == [0.5, 0.25, 0.125]
    assert get_discount("linear")(r, n=np.uint32(2)).tolist() == [1.0, 0.0, -1.0]


@pytest.mark.parametrize("numpy_path", [True, False])
def test_docid_tie_keys_by_hand_on_both_paths(numpy_path: bool, monkeypatch) -> None:
    # the tied documents' ids ranked among themselves (a fresh id array: the first-call path);
    # an untied document keeps key 0. Both the NumPy path and the compiled kernels.
    from ndcglab.measures import _small
    from ndcglab.measures.conventions import tie_key

    if not numpy_path:
        monkeypatch.setattr(_small, "SMALL_DOCS", 0)
    s = np.array([1.0, 1.0, 0.5, 0.5, 0.2, 3.0, 3.0, 3.0])
    b = np.array([0, 5, 8])
    ids = np.array(["d3", "d1", "d9", "d2", "d5", "a", "c", "b"], dtype=object)
    key, average = tie_key("docid", s, b, doc_ids=ids)
    # tied ids in text order: a b c d1 d2 d3 d9 -> 0..6; key = -rank (docno descending)
    assert not average and key.tolist() == [-5.0, -3.0, -6.0, -4.0, 0.0, 0.0, -2.0, -1.0]


def test_random_ties_pick_one_order_never_the_average() -> None:
    # two tied documents, one relevant: NDCG@1 is 1 or 0 under a random order (0.5 would be the
    # expectation of ties=average)
    from ndcglab.measures import evaluate_arrays

    seen = set()
    for seed in range(12):
        res = evaluate_arrays([1, 0], [0.5, 0.5], [0, 2], f"ndcg(ties=random:{seed})@1")
        seen.add(next(iter(res.mean.values())))
    assert seen == {0.0, 1.0}


# ------------------------------------------------ compute_per_query: rules found by mutmut
def _two_queries() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = np.array([2.0, 0, 1, 0, 0, 1])
    s = np.array([0.3, 0.1, 0.2, 0.5, 0.4, 0.4])
    return y, s, np.array([0, 3, 6])


def test_unresolved_measure_is_refused_in_full() -> None:
    from ndcglab.measures import parse_measure
    from ndcglab.measures.compute import compute_per_query

    y, s, b = _two_queries()
    with pytest.raises(ConventionError) as info:
        compute_per_query([parse_measure("ndcg@3")], y, s, b)
    assert str(info.value) == "measure ndcg@3 is not resolved; call Measure.resolve(preset)"


def test_average_ties_on_the_rank_family_is_refused_in_full() -> None:
    from ndcglab.measures import evaluate_arrays

    y, s, b = _two_queries()
    with pytest.raises(ConventionError) as info:
        evaluate_arrays(y, s, b, ["rbp(ties=average)"])
    assert str(info.value) == (
        "rbp(p=0.8,rel=1,ties=average): ties=average (expectation over tied orders) is defined "
        "for the ndcg family, map, p and mrr only. Fix: ties=input, docid, pessimistic, "
        "optimistic or random:<seed> for this measure"
    )


@pytest.mark.parametrize("kernels", [False, True])
@pytest.mark.parametrize(("ids", "name"), [(["qa", "qb"], "qb"), (None, "#1")])
def test_dcg_that_overflows_names_its_query(ids, name, kernels, monkeypatch) -> None:
    """Each gain 2^1023 − 1 is finite, their discounted sum over three documents is not (on the
    NumPy path for small inputs and in the compiled kernels)."""
    from ndcglab.measures import _small, parse_measure
    from ndcglab.measures.compute import compute_per_query

    if kernels:
        monkeypatch.setattr(_small, "SMALL_DOCS", 0)

    y = np.array([1.0, 0, 1023, 1023, 1023])
    s = np.array([0.5, 0.1, 0.3, 0.2, 0.1])
    m = parse_measure("ndcg").resolve()
    with (
        pytest.raises(ConventionError) as info,
        np.errstate(over="ignore"),
    ):
        compute_per_query([m], y, s, np.array([0, 2, 5]), query_ids=ids)
    assert str(info.value) == (
        f"{m}: the DCG of query {name} overflows double precision (its gains are too large to "
        "add up). Fix: gain=linear, or labels in a smaller range"
    )
    # the ideal DCG alone overflows (the ranking puts the three large gains at ranks 5 to 7,
    # where their DCG stays finite): refused too
    y2 = np.array([1.0, 0, 0, 0, 0, 0, 1023, 1023, 1023])
    s2 = np.array([0.5, 0.1, 7, 6, 5, 4, 3, 2, 1])
    with (
        pytest.raises(ConventionError) as info,
        np.errstate(over="ignore"),
    ):
        compute_per_query([m], y2, s2, np.array([0, 2, 9]), query_ids=ids)
    assert f"the DCG of query {name} overflows" in str(info.value)


def test_idcg_and_dcg_before_ndcg_in_one_call() -> None:
    """The raw DCG and IDCG measures do not end the group: NDCG after them is computed too."""
    from ndcglab.measures import evaluate_arrays

    y, s, b = _two_queries()
    res = evaluate_arrays(y, s, b, ["idcg@2", "dcg@2", "ndcg@2", "ndcg"])
    # query 1 by score: 0.3 (y=2), 0.2 (y=1), 0.1 (y=0)
    assert res.per_query["dcg@2"].tolist() == [3.0 + 1.0 / np.log2(3), 0.0]
    assert res.per_query["idcg@2"].tolist() == [3.0 + 1.0 / np.log2(3), 1.0]
    assert res.per_query["ndcg@2"].tolist() == [1.0, 0.0]
    # query 2 by score: 0.5 (y=0), then 0.4 (y=0) and 0.4 (y=1) in input order: rank 3
    assert res.per_query["ndcg"].tolist() == [1.0, 0.5]


def test_empty_error_names_the_query_for_mrr_and_map() -> None:
    from ndcglab.errors import EmptyQueryError
    from ndcglab.measures import evaluate_arrays

    y = np.array([0.0, 0, 0, 1])
    s = np.arange(4.0)
    for spec in ("mrr(empty=error)", "map(empty=error)"):
        with pytest.raises(EmptyQueryError, match=r"query qa \(empty=error\)"):
            evaluate_arrays(y, s, np.array([0, 2, 4]), [spec], query_ids=["qa", "qb"])


def test_ndcg_per_query_passes_every_convention_on() -> None:
    """Each keyword of ndcg_per_query changes the number as the measure option of that name."""
    from ndcglab.measures import evaluate_arrays, ndcg_per_query

    y = np.array([3.0, 0, 1, 2, 0, 2, 1])
    s = np.array([0.2, 0.9, 0.2, 0.5, 0.4, 0.4, 0.1])  # ties: the order rule matters
    b = np.array([0, 4, 7])
    cases = [
        (dict(gain="linear"), "ndcg(gain=linear)@3"),
        (dict(discount="zipf"), "ndcg(discount=zipf)@3"),
        (dict(ties="pessimistic"), "ndcg(ties=pessimistic)@3"),
    ]
    plain = ndcg_per_query(y, s, b, 3)
    for kw, spec in cases:
        got = ndcg_per_query(y, s, b, 3, **kw)
        want = evaluate_arrays(y, s, b, [spec]).per_query[spec]
        assert got.tolist() == want.tolist(), kw
        assert got.tolist() != plain.tolist(), kw  # the option changes the number here


@pytest.mark.parametrize("ties", ["pessimistic", "optimistic"])
def test_value_dependent_ties_of_ndcg_are_not_taken_from_map_sort(ties: str) -> None:
    """NDCG@k with ties=pessimistic/optimistic orders tied documents by gain, MAP by binary
    relevance: asked together, NDCG@k is not read off MAP's ranking (labels 2 and 1 are both
    relevant to MAP but differ in gain). Worked by hand for ``pessimistic``: the tied list
    [2, 1, 0, 1] is ranked 0, 1, 1, 2 by gain, so DCG@3 = 0 + 1/log2(3) + 1/2 against
    IDCG@3 = 3 + 1/log2(3) + 1/2."""
    from ndcglab.measures import evaluate_arrays

    y = np.array([2.0, 1, 0, 1, 1, 0, 2])
    s = np.array([0.5, 0.5, 0.5, 0.5, 0.9, 0.2, 0.2])
    b = np.array([0, 4, 7])
    ndcg, ap = f"ndcg(ties={ties})@3", f"map(ties={ties})"
    both = evaluate_arrays(y, s, b, [ap, ndcg]).per_query[ndcg]
    alone = evaluate_arrays(y, s, b, [ndcg]).per_query[ndcg]
    assert both.tolist() == alone.tolist()
    if ties == "pessimistic":
        d = 1 / np.log2(3) + 0.5
        assert both[0] == pytest.approx(d / (3 + d), rel=1e-15)


# ------------------------------------------- the rank family's groups in compute_per_query
def _rank_case() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(8)
    lens = np.array([9, 6, 12, 1])
    b = np.concatenate([[0], np.cumsum(lens)])
    n = int(b[-1])
    y = rng.integers(0, 4, n).astype(float)
    s = np.round(rng.random(n) * 3)  # scores 0..3: many ties
    ids = np.array([f"d{i:03d}" for i in rng.permutation(n)], dtype=object)
    return y, s, b, ids


def _rank_values(specs: list[str], in_qrels: np.ndarray | None = None) -> dict[str, np.ndarray]:
    from ndcglab.measures import get_preset, parse_measures
    from ndcglab.measures.compute import compute_per_query

    y, s, b, ids = _rank_case()
    ms = [m.resolve(get_preset("trec_eval")) for m in parse_measures(specs)]
    out = compute_per_query(ms, y, s, b, doc_ids=ids, in_qrels=in_qrels)
    return {spec: out[m].values for spec, m in zip(specs, ms, strict=True)}


_RANK_SETS = [
    ["err(ties=input)@5", "bpref(ties=optimistic)"],
    ["err(ties=optimistic)@5", "bpref(ties=input)", "judged(ties=pessimistic)@5"],
    ["num_rel_ret(rel=1)", "bpref(rel=2)"],
    ["num_rel_ret(rel=2)", "bpref(rel=1,ties=input)", "num_ret", "rbp(ties=input)"],
    ["judged(ties=input)@5", "rbp(ties=random:1)", "rbp_residual(ties=input)"],
]


@pytest.mark.parametrize("specs", _RANK_SETS)
def test_rank_measures_asked_together_equal_each_alone(specs: list[str]) -> None:
    """Measures of the rank family share a sort only with a group that has their tie rule and
    relevance rule: asked together, each gives what it gives alone (many tied scores here, so a
    wrong tie rule or relevance level would change the numbers)."""
    together = _rank_values(specs)
    for spec in specs:
        alone = _rank_values([spec])[spec]
        assert together[spec].tobytes() == alone.tobytes(), spec
    # the sets would tell a wrong rule apart: the rules named differ in value here
    assert not np.array_equal(
        _rank_values(["err(ties=input)@5"])["err(ties=input)@5"],
        _rank_values(["err(ties=optimistic)@5"])["err(ties=optimistic)@5"],
    )


def test_rank_measures_read_the_judged_flags() -> None:
    """``in_qrels``: documents without a qrels line are unjudged. judged@5 is the fraction of the
    top 5 that is judged (worked out here from the ranking by score, ties by docid descending as
    trec_eval), and bpref ignores unjudged documents."""
    y, s, b, ids = _rank_case()
    judged = np.ones(len(y), dtype=bool)
    judged[::3] = False
    got = _rank_values(["judged(ties=docid)@5", "bpref(ties=docid)"], in_qrels=judged)
    want = []
    for q in range(len(b) - 1):
        lo, hi = b[q], b[q + 1]
        order = sorted(range(lo, hi), key=lambda i: (-s[i], [-ord(c) for c in ids[i]]))
        want.append(sum(judged[i] for i in order[:5]) / 5)
    assert got["judged(ties=docid)@5"].tolist() == pytest.approx(want, rel=1e-15)
    every = _rank_values(["judged(ties=docid)@5", "bpref(ties=docid)"])
    assert every["judged(ties=docid)@5"].tolist() == [1.0, 1.0, 1.0, 0.2]
    assert not np.array_equal(got["bpref(ties=docid)"], every["bpref(ties=docid)"])


def test_value_dependent_ties_read_the_gains_that_count() -> None:
    """ties=pessimistic/optimistic order tied documents by the gains NDCG adds up, where a
    negative label is worth 0 whatever the gain table says (trec_eval's rule). By hand, table
    gains -1→5, 1→1, 2→3: query 1 (labels -1, 1, 0, all tied) pessimistic puts the two
    zero-gain documents first (NDCG@2 = 0), optimistic the label 1 (NDCG@2 = 1); query 2 (label
    2 first, then -1 and 1 tied) gives DCG@2 = 3 (pessimistic) or 3 + 1/log2(3) (optimistic)
    against IDCG@2 = 3 + 1/log2(3)."""
    from ndcglab.measures import evaluate_arrays

    y = np.array([-1.0, 1, 0, 2, -1, 1])
    s = np.array([0.5, 0.5, 0.5, 0.9, 0.3, 0.3])
    g = "table:-1=5;1=1;2=3"
    pes, opt = f"ndcg(gain={g},ties=pessimistic)@2", f"ndcg(gain={g},ties=optimistic)@2"
    res = evaluate_arrays(y, s, np.array([0, 3, 6]), [pes, opt]).per_query
    ideal = 3 + 1 / np.log2(3)
    assert res[pes].tolist() == pytest.approx([0.0, 3 / ideal], rel=1e-15)
    assert res[opt].tolist() == [1.0, 1.0]


def test_check_inputs_refuses_a_score_count_in_full() -> None:
    from ndcglab.errors import DataFormatError
    from ndcglab.measures import evaluate_arrays

    with pytest.raises(DataFormatError) as info:
        evaluate_arrays(np.zeros(3), np.zeros(2), np.array([0, 3]), ["ndcg"])
    assert str(info.value) == (
        "2 scores for 3 documents. Fix: give exactly one score per document, in the data's "
        "document order"
    )


def test_float32_labels_are_read_as_float64() -> None:
    """Labels are converted to float64 before any gain: float32 labels give the numbers of the
    same values in float64 (2^y − 1 of a float32 y computed in float32 would differ)."""
    from ndcglab.measures import evaluate_arrays

    y32 = np.array([0.1, 0.7, 1.3, 0.0, 2.9, 0.4], dtype=np.float32)
    s = np.array([0.3, 0.1, 0.2, 0.5, 0.4, 0.45])
    b = np.array([0, 3, 6])
    specs = ["ndcg", "ndcg@2", "dcg@3"]
    got = evaluate_arrays(y32, s, b, specs).per_query
    want = evaluate_arrays(y32.astype(np.float64), s, b, specs).per_query
    for m in specs:
        assert got[m].tobytes() == want[m].tobytes(), m


def test_rank_family_empty_error_names_the_query() -> None:
    from ndcglab.errors import EmptyQueryError
    from ndcglab.measures import evaluate_arrays

    with pytest.raises(EmptyQueryError) as info:
        evaluate_arrays(
            np.array([0, 0, 1.0, 0]),
            np.arange(4.0),
            np.array([0, 2, 4]),
            ["bpref(empty=error)"],
            query_ids=["qa", "qb"],
        )
    assert str(info.value) == (
        "bpref(empty=error,rel=1,ties=input): 1 query has no relevant document: query qa "
        "(empty=error). Fix: remove such queries or choose empty=zero, one or skip"
    )


def test_judged_flags_given_as_numbers_are_read_as_bools() -> None:
    y = _rank_case()[0]
    flags = np.ones(len(y), dtype=bool)
    flags[1::4] = False
    specs = ["judged(ties=docid)@5", "bpref(ties=docid)", "infap(ties=docid)"]
    as_bool = _rank_values(specs, in_qrels=flags)
    as_int = _rank_values(specs, in_qrels=flags.astype(np.int64).tolist())
    for m in specs:
        assert as_bool[m].tobytes() == as_int[m].tobytes(), m


def test_check_inputs_boundaries_and_scores_in_full() -> None:
    from ndcglab.errors import DataFormatError
    from ndcglab.measures.compute import check_inputs

    # no queries at all is a valid (empty) input; no boundaries at all is not
    y, s, b, re = check_inputs([], [], [0])
    assert (len(y), len(s), b.tolist(), re.tolist()) == (0, 0, [0], [])
    with pytest.raises(ConventionError) as info:
        check_inputs([], [], [])
    assert str(info.value) == (
        "boundaries must start at 0, never decrease and end at the number of documents (0); "
        "got []...[]"
    )
    with pytest.raises(ConventionError) as info:
        check_inputs(np.zeros(9), np.zeros(9), [0, 2, 3, 5, 4, 7, 9])
    assert str(info.value) == (
        "boundaries must start at 0, never decrease and end at the number of documents (9); "
        "got [0, 2, 3, 5]...[7, 9]"
    )
    with pytest.raises(DataFormatError) as info:
        check_inputs(np.zeros(4), [0.5, 0.2, np.nan, np.inf], [0, 4])
    assert str(info.value) == (
        "score of document 3 is not a finite number (token 'nan'). Fix: replace NaN/inf scores "
        "by finite numbers"
    )


def test_check_inputs_labels_and_ranked_part_in_full() -> None:
    from ndcglab.errors import DataFormatError
    from ndcglab.measures.compute import check_inputs

    with pytest.raises(DataFormatError) as info:
        check_inputs([0.0, 1.0, -np.inf, np.nan], np.zeros(4), [0, 4])
    assert str(info.value) == (
        "label of document 3 is not a finite number (token '-inf'). Fix: give every document a "
        "finite relevance label"
    )
    re = check_inputs(np.zeros(5), np.zeros(5), [0, 2, 5], ranked_end=[1, 5])[3]
    assert re.tolist() == [1, 5] and re.dtype == np.int64
    re = check_inputs(np.zeros(5), np.zeros(5), [0, 2, 5], ranked_end=np.array([1.0, 5.0]))[3]
    assert re.tolist() == [1, 5] and re.dtype == np.int64
    for bad in ([1], [1, 6], [3, 5], [0, 1]):
        with pytest.raises(ConventionError) as info:
            check_inputs(np.zeros(5), np.zeros(5), [0, 2, 5], ranked_end=bad)
        assert str(info.value) == "ranked_end must lie within each query's boundaries", bad
    assert check_inputs(np.zeros(5), np.zeros(5), [0, 2, 5], ranked_end=[0, 2])[3].tolist() == [
        0,
        2,
    ]
