"""Hand-computed values for two rules that otherwise rest on property tests: AP, P@k and RR under
``ties=average`` (the expectation over every order of the tied documents, docs/measures.md §3),
and the LETOR 3.0 rule for P@k beyond a short list (docs/measures.md, "letor3 / letor4"). Every
expected number is worked out in the comments from the definitions, by enumerating the orders."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.measures import evaluate_arrays


def one(labels, scores, spec, preset="standard"):
    res = evaluate_arrays(
        np.array(labels, float), np.array(scores, float), [0, len(labels)], [spec], preset=preset
    )
    return float(res.per_query[res.names[0]][0])


# ----------------------------------------------------------------------------- ties=average
def test_average_ties_ap_one_group_of_four():
    # 2 relevant among 4 tied documents: the relevant positions are one of the 6 pairs, equally
    # likely. AP = (1/2)(1/p1 + 2/p2):
    # (1,2): 1   (1,3): 5/6   (1,4): 3/4   (2,3): 7/12   (2,4): 1/2   (3,4): 5/12
    # mean = (12 + 10 + 9 + 7 + 6 + 5) / 12 / 6 = 49/72
    assert one([1, 0, 1, 0], [0.5] * 4, "map(ties=average)") == pytest.approx(49 / 72, abs=1e-15)
    # input order would give the pair (1, 3): 5/6
    assert one([1, 0, 1, 0], [0.5] * 4, "map") == pytest.approx(5 / 6, abs=1e-15)


def test_average_ties_ap_group_between_untied_documents():
    # scores 3 | 2 2 2 | 1, labels 0 | 1 0 1 | 1: R = 3. The group holds positions 2..4 with 2
    # relevant; the relevant pair is {2,3}, {2,4} or {3,4}:
    # {2,3}: 1/2 + 2/3 + 3/5 = 53/30;  {2,4}: 1/2 + 2/4 + 3/5 = 48/30;
    # {3,4}: 1/3 + 2/4 + 3/5 = 43/30
    # AP = mean / 3 = (144/30 / 3) / 3 = 8/15
    labels, scores = [0, 1, 0, 1, 1], [3, 2, 2, 2, 1]
    assert one(labels, scores, "map(ties=average)") == pytest.approx(8 / 15, abs=1e-15)
    # the same numbers with the tied group's documents given in another input order
    assert one([0, 0, 1, 1, 1], scores, "map(ties=average)") == pytest.approx(8 / 15, abs=1e-15)
    # pessimistic order (irrelevant first in the group): 1/3 + 2/4 + 3/5 = 43/30 -> 43/90
    assert one(labels, scores, "map(ties=pessimistic)") == pytest.approx(43 / 90, abs=1e-15)
    assert one(labels, scores, "map(ties=optimistic)") == pytest.approx(53 / 90, abs=1e-15)


def test_average_ties_ap_at_k_cutting_the_group():
    # scores 2 | 1 1 1, labels 1 | 1 0 1, AP@2 with D = R = 3: position 1 gives 1/1; position 2
    # is relevant in 4 of the 6 orders of the group, then 2 relevant in the top 2: 2/2.
    # AP@2 = (1 + 4/6) / 3 = 5/9
    labels, scores = [1, 1, 0, 1], [2, 1, 1, 1]
    assert one(labels, scores, "map(ties=average)@2") == pytest.approx(5 / 9, abs=1e-15)
    # the whole list: position 1: 1; group offsets u = 0, 1, 2 each relevant with p = 2/3 and then
    # holding 1 + 1 + u/2 relevant in the top 2 + u: (2/3)(2/2 + 2.5/3 + 3/4) = 31/18
    # AP = (1 + 31/18) / 3 = 49/54
    assert one(labels, scores, "map(ties=average)") == pytest.approx(49 / 54, abs=1e-15)


def test_average_ties_ap_with_two_groups_and_no_relevant_in_one():
    # scores 5 5 | 1 1, labels 0 0 | 1 1: the first group holds nothing relevant, so the second
    # always occupies positions 3, 4 with both relevant: AP = (1/3 + 2/4)/2 = 5/12
    assert one([0, 0, 1, 1], [5, 5, 1, 1], "map(ties=average)") == pytest.approx(5 / 12)
    # a query with nothing relevant is empty: 0 (empty=zero)
    assert one([0, 0, 0], [1, 1, 1], "map(ties=average)") == 0.0


def test_average_ties_rr_and_p_at_k():
    # one relevant among 3 tied: first relevant at 1, 2 or 3 equally: (1 + 1/2 + 1/3)/3 = 11/18
    assert one([0, 0, 1], [1, 1, 1], "mrr(ties=average)") == pytest.approx(11 / 18, abs=1e-15)
    # two relevant among 4 tied: P(first relevant at 1) = 1/2, at 2 = 1/3, at 3 = 1/6
    # RR = 1/2 + 1/3 * 1/2 + 1/6 * 1/3 = 13/18
    assert one([1, 0, 0, 1], [1] * 4, "mrr(ties=average)") == pytest.approx(13 / 18, abs=1e-15)
    # P@k: the group's mean relevance (1/2) at each of its positions
    assert one([1, 0, 0, 1], [1] * 4, "p(ties=average)@1") == pytest.approx(0.5, abs=1e-15)
    assert one([1, 0, 0, 1], [1] * 4, "p(ties=average)@3") == pytest.approx(0.5, abs=1e-15)
    # scores 2 | 1 1 1, labels 1 | 0 0 1: P@2 = (1 + 1/3)/2 = 2/3
    assert one([1, 0, 0, 1], [2, 1, 1, 1], "p(ties=average)@2") == pytest.approx(2 / 3)


# ----------------------------------------------------------------------------- LETOR 3.0 P@k
A = ([1, 0, 2], [3, 2, 1])  # n = 3, relevant (LETOR: labels 1 and 2) at positions 1 and 3
B = ([0, 1, 1, 0, 0], [5, 4, 3, 2, 1])  # n = 5, relevant at positions 2 and 3


def test_letor3_p_at_k_beyond_a_short_list_is_zero():
    # k <= n: ordinary P@k
    assert one(*A, "p@1", "letor3") == 1.0
    assert one(*A, "p@2", "letor3") == 0.5
    assert one(*A, "p@3", "letor3") == pytest.approx(2 / 3, abs=1e-15)  # k = n: still defined
    # k > n: missing, counted as 0 (LETOR 3.0)
    assert one(*A, "p@4", "letor3") == 0.0
    assert one(*A, "p@10", "letor3") == 0.0


def test_letor4_and_standard_divide_by_k_clip_divides_by_n():
    assert one(*A, "p@4", "letor4") == pytest.approx(2 / 4, abs=1e-15)
    assert one(*A, "p@10", "letor4") == pytest.approx(2 / 10, abs=1e-15)
    assert one(*A, "p@4", "standard") == pytest.approx(2 / 4, abs=1e-15)
    assert one(*A, "p(short=clip)@4") == pytest.approx(2 / 3, abs=1e-15)
    assert one(*A, "p(short=zero)@4") == 0.0
    assert one(*A, "p(short=zero)@3") == pytest.approx(2 / 3, abs=1e-15)


def test_letor3_mean_over_queries_counts_the_short_list_as_zero():
    labels = np.array(A[0] + B[0], float)
    scores = np.array(A[1] + B[1], float)
    b = [0, 3, 8]
    specs = ["p@3", "p@4", "p@5", "p@6"]
    r3 = evaluate_arrays(labels, scores, b, specs, preset="letor3")
    r4 = evaluate_arrays(labels, scores, b, specs, preset="letor4")
    # P@3: A 2/3, B 2/3.  P@4: A (3.0) 0 | (4.0) 2/4; B 2/4.  P@5: A 0 | 2/5; B 2/5.
    # P@6: both lists are shorter: 3.0 gives 0 for both; 4.0 gives 2/6 for both
    assert r3.per_query["p@4"].tolist() == pytest.approx([0.0, 0.5])
    assert r3.mean["p@3"] == pytest.approx(2 / 3)
    assert r3.mean["p@4"] == pytest.approx(0.25)
    assert r3.mean["p@5"] == pytest.approx(0.2)
    assert r3.mean["p@6"] == 0.0
    assert r4.mean["p@4"] == pytest.approx(0.5)
    assert r4.mean["p@5"] == pytest.approx(0.4)
    assert r4.mean["p@6"] == pytest.approx(2 / 6)


def test_letor3_short_list_rule_with_labels_above_two_and_empty_queries():
    # label 3 is not relevant for LETOR and gains nothing: relevant only at position 2
    assert one([3, 1], [2, 1], "p@2", "letor3") == 0.5
    assert one([3, 1], [2, 1], "p@3", "letor3") == 0.0
    assert one([3, 1], [2, 1], "p@3", "letor4") == pytest.approx(1 / 3)
    # a list with nothing relevant: 0 at every k, within or beyond the list
    assert one([0, 0], [2, 1], "p@1", "letor3") == 0.0
    assert one([0, 0], [2, 1], "p@5", "letor4") == 0.0


# ----------------------------------------------------------------------------- smaller rules
def test_empty_error_message_names_the_queries_exactly():
    from ndcglab.errors import EmptyQueryError

    with pytest.raises(EmptyQueryError) as e:
        evaluate_arrays(
            [0, 0, 1], [1, 2, 3], [0, 2, 3], ["ndcg(empty=error)"], query_ids=["a", "b"]
        )
    assert str(e.value) == (
        "ndcg(discount=log,empty=error,gain=exp2,ties=input): 1 query has no document with a "
        "positive gain (IDCG = 0): query a (empty=error). Fix: remove such queries or choose "
        "empty=zero, one or skip"
    )
    with pytest.raises(EmptyQueryError) as e:
        evaluate_arrays(
            np.zeros(7), np.arange(7.0), np.arange(8), ["map(empty=error)@3"], query_ids="abcdefg"
        )
    assert str(e.value).endswith(
        "@3: 7 queries have no relevant document: query a, b, c, d, e and 2 more (empty=error). "
        "Fix: remove such queries or choose empty=zero, one or skip"
    )


def test_callable_discount_receives_float_ranks_and_returns_floats():
    from ndcglab.measures import get_discount

    # r ** -2 on integer ranks would raise ("Integers to negative integer powers")
    power = get_discount(lambda r, n: r**-2)
    np.testing.assert_array_equal(power(np.array([1, 2, 4]), 4), [1.0, 0.25, 0.0625])
    top2 = get_discount(lambda r, n: (r <= 2) * 1)  # an integer-valued discount
    out = top2(np.array([1, 2, 3]), 3)
    assert out.dtype == np.float64 and out.tolist() == [1.0, 1.0, 0.0]


def test_optimistic_ties_order_by_gain_also_beside_a_relevance_measure():
    # labels 1 and 2 tie in score: optimistic puts the label-2 document first for NDCG (higher
    # gain), although for AP both are simply relevant. NDCG@1 = 1, alone or computed together
    # with map(ties=optimistic) (which may share a ranking).
    y, s = [1, 2, 0, 0], [1.0, 1.0, 0.5, 0.2]
    for specs in (["ndcg(ties=optimistic)@1"], ["ndcg(ties=optimistic)@1", "map(ties=optimistic)"]):
        res = evaluate_arrays(y, s, [0, 4], specs)
        assert res.per_query[res.names[0]][0] == 1.0
    assert one(y, s, "ndcg(ties=pessimistic)@1") == pytest.approx(1 / 3)  # (2^1 - 1)/(2^2 - 1)
    res = evaluate_arrays(y, s, [0, 4], ["ndcg(ties=pessimistic)@1", "map(ties=pessimistic)"])
    assert res.per_query[res.names[0]][0] == pytest.approx(1 / 3)


def test_gain_and_discount_spellings():
    from ndcglab.errors import ConventionError
    from ndcglab.measures import get_discount, get_gain

    table = get_gain({2: 3, 0: 0, 1: 1})  # a mapping label -> gain; other labels gain 0
    assert table.name == "table:0=0;1=1;2=3"
    np.testing.assert_array_equal(table(np.array([0.0, 1.0, 2.0, 5.0])), [0.0, 1.0, 3.0, 0.0])
    ranks = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(get_discount("exp")(ranks), [0.5, 0.25, 0.125])  # a = 2
    np.testing.assert_array_equal(get_discount("exponential:4")(ranks), [0.25, 1 / 16, 1 / 64])
    with pytest.raises(ConventionError, match="the linear discount n − r needs the list length n"):
        get_discount("linear")(ranks)


def test_docid_ties_without_ids_say_what_to_pass():
    from ndcglab.errors import ConventionError

    with pytest.raises(ConventionError) as e:
        evaluate_arrays([1, 0], [1.0, 1.0], [0, 2], ["ndcg(ties=docid)"])
    assert "needs document ids. Fix: pass doc_ids=" in str(e.value)


def test_gain_names_and_refusals():
    import functools

    from ndcglab.errors import ConventionError
    from ndcglab.measures import get_gain

    def cube(v):
        return np.asarray(v, float) ** 3

    assert get_gain(cube).name == "cube"
    nameless = functools.partial(np.power, 2.0)  # no __name__
    assert get_gain(nameless).name == "custom"
    with pytest.raises(ConventionError) as e:
        get_gain("table:0=0;1=x")
    assert str(e.value) == "cannot read gain table 'table:0=0;1=x'. Fix: write table:0=0;1=1;2=3"
    with pytest.raises(ConventionError) as e:
        get_gain("cubic")
    assert str(e.value) == (
        "unknown gain 'cubic'; known: exp2, linear, letor, table:<label>=<gain>;..., or a callable"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("log:1", "log base must exceed 1, got 1.0"),
        ("power:0", "power discount needs β > 0, got 0.0"),
        ("exp:1", "exponential discount a^−r needs a > 1, got 1.0"),
        ("power:x", "cannot read the number in discount 'power:x'"),
        (
            "zigzag",
            "unknown discount 'zigzag'; known: log, log:<base>, power:<beta>, zipf, exp:<a>, "
            "linear, letor, or a callable fn(ranks, n)",
        ),
    ],
)
def test_discount_refusals_at_the_boundaries(spec, message):
    from ndcglab.errors import ConventionError
    from ndcglab.measures import get_discount

    with pytest.raises(ConventionError) as e:
        get_discount(spec)
    assert str(e.value) == message


def test_discount_defaults_and_names():
    import functools

    from ndcglab.measures import get_discount

    assert get_discount("power")(np.array([4.0])).tolist() == [0.5]  # β = 1/2 by default
    assert get_discount("log:1.5")(np.array([1.0]))[0] == pytest.approx(1 / np.log(2) * np.log(1.5))
    assert get_discount(functools.partial(np.divide, 1.0)).name == "custom"


def test_non_finite_label_names_its_document():
    from ndcglab.errors import NdcglabError

    with pytest.raises(NdcglabError) as e:
        evaluate_arrays([1, np.nan, 0], [1, 2, 3], [0, 3], ["ndcg"])
    assert "label of document 2 is not a finite number" in str(e.value)
