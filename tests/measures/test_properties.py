"""Property tests: every measure, tie rule, cut-off, discount and empty rule against the slow
reference loops of ``oracle_measures.py`` on random lists with many ties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndcglab.errors import EmptyQueryError
from ndcglab.measures import evaluate_arrays, get_gain, ndcg_per_query, parse_measure

from . import oracle_measures as ref

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

LABELS = st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.0, 0.5])  # 0.5: the non-integer path
SCORES = st.sampled_from([0.0, 0.5, 1.0, 1.0, 2.0, -1.0])


@st.composite
def batches(draw, max_n: int = 6, max_q: int = 4):
    nq = draw(st.integers(1, max_q))
    labels, scores, docids, bnd = [], [], [], [0]
    for q in range(nq):
        # queries may be empty, the whole batch not: data without a document are refused
        # (tests/data/test_validate_doors.py)
        n = draw(st.integers(0 if q else 1, max_n))
        ys = draw(st.lists(LABELS, min_size=n, max_size=n))
        ss = draw(st.lists(SCORES, min_size=n, max_size=n))
        ids = draw(st.permutations([f"d{i}" for i in range(n)])) if n else []
        labels += ys
        scores += ss
        docids += ids
        bnd.append(len(labels))
    return np.array(labels, float), np.array(scores, float), np.array(bnd), np.array(docids, object)


def _split(labels, scores, bnd, docids):
    for q in range(len(bnd) - 1):
        lo, hi = bnd[q], bnd[q + 1]
        yield list(labels[lo:hi]), list(scores[lo:hi]), list(docids[lo:hi])


def _close(a: float, b: float | None) -> bool:
    if b is None:
        return math.isnan(a)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


TIES = st.sampled_from(["input", "docid", "average", "pessimistic", "optimistic"])
DISCOUNTS = st.sampled_from(["log", "log:10", "zipf", "power:0.5", "exp:2", "linear", "letor"])
GAINS = st.sampled_from(["exp2", "linear", "letor"])
CUTS = st.sampled_from([None, 1, 2, 3, 5, 8, "0.5n", "0.2n", "1n"])
EMPTY = st.sampled_from(["zero", "one", "skip"])


def _cut_text(cut) -> str:
    return "" if cut is None else f"@{cut}"


def _k_for(cut, n: int, rounding: str = "ceil"):
    if cut is None:
        return None
    if isinstance(cut, str):
        return ref.fraction_k(float(cut[:-1]), n, rounding)
    return cut


@SETTINGS
@given(batches(), GAINS, DISCOUNTS, TIES, CUTS, EMPTY, st.sampled_from(["clip", "zero"]))
def test_ndcg_matches_reference(data, gain, disc, ties, cut, empty, short) -> None:
    labels, scores, bnd, docids = data
    opts = f"discount={disc},empty={empty},gain={gain},ties={ties}"
    if isinstance(cut, int):
        opts += f",short={short}"
    spec = f"ndcg({opts}){_cut_text(cut)}"
    res = evaluate_arrays(labels, scores, bnd, [spec], doc_ids=docids)
    got = res.per_query[str(parse_measure(spec))]
    n_empty = 0
    for q, (ys, ss, ids) in enumerate(_split(labels, scores, bnd, docids)):
        k = _k_for(cut, len(ys))
        want, is_empty = ref.ndcg(
            ys,
            ss,
            gain_name=gain,
            disc=disc,
            k=k,
            ties=ties,
            empty=empty,
            short=short if isinstance(cut, int) else "clip",
            docids=ids,
        )
        n_empty += is_empty
        assert _close(got[q], want), (spec, q, ys, ss, got[q], want)
    assert res.empty_queries == n_empty


@SETTINGS
@given(batches(), GAINS, DISCOUNTS, TIES, CUTS)
def test_dcg_and_idcg_match_reference(data, gain, disc, ties, cut) -> None:
    labels, scores, bnd, docids = data
    dspec = f"dcg(discount={disc},gain={gain},ties={ties}){_cut_text(cut)}"
    ispec = f"idcg(discount={disc},gain={gain}){_cut_text(cut)}"
    res = evaluate_arrays(labels, scores, bnd, [dspec, ispec], doc_ids=docids)
    for q, (ys, ss, ids) in enumerate(_split(labels, scores, bnd, docids)):
        k = _k_for(cut, len(ys))
        want = ref.dcg(ys, ss, gain_name=gain, disc=disc, k=k, ties=ties, docids=ids)
        assert _close(res.per_query[str(parse_measure(dspec))][q], want)
        assert _close(res.per_query[str(parse_measure(ispec))][q], ref.idcg_of(ys, gain, disc, k))


@SETTINGS
@given(
    batches(),
    TIES,
    CUTS,
    st.sampled_from(["1", "2", "letor"]),
    EMPTY,
    st.sampled_from(["pad", "clip", "zero"]),
    st.sampled_from(["all", "cut"]),
)
def test_rel_measures_match_reference(data, ties, cut, rel, empty, short, denom) -> None:
    labels, scores, bnd, docids = data
    c = _cut_text(cut)
    p_opts = f"rel={rel},ties={ties}" + (f",short={short}" if isinstance(cut, int) else "")
    map_opts = f"empty={empty},rel={rel},ties={ties}" + (
        f",denom={denom}" if cut is not None else ""
    )
    specs = [
        f"p({p_opts}){c}",
        f"map({map_opts}){c}",
        f"mrr(empty={empty},rel={rel},ties={ties}){c}",
    ]
    res = evaluate_arrays(labels, scores, bnd, specs, doc_ids=docids)
    p, ap, rr = (res.per_query[str(parse_measure(s))] for s in specs)
    for q, (ys, ss, ids) in enumerate(_split(labels, scores, bnd, docids)):
        k = _k_for(cut, len(ys))
        pshort = short if isinstance(cut, int) else "pad"
        assert _close(
            p[q], ref.precision(ys, ss, k=k, rel=rel, ties=ties, short=pshort, docids=ids)
        )
        want, _ = ref.average_precision(
            ys,
            ss,
            k=k,
            rel=rel,
            ties=ties,
            empty=empty,
            denom=denom if cut is not None else "all",
            docids=ids,
        )
        assert _close(ap[q], want), (ys, ss, ap[q], want)
        want, _ = ref.reciprocal_rank(ys, ss, k=k, rel=rel, ties=ties, empty=empty, docids=ids)
        assert _close(rr[q], want), (ys, ss, rr[q], want)


@SETTINGS
@given(batches(max_n=7), st.sampled_from(["input", "average", "pessimistic"]), EMPTY)
def test_meanndcg_matches_reference(data, ties, empty) -> None:
    labels, scores, bnd, docids = data
    spec = f"meanndcg(empty={empty},ties={ties})"
    res = evaluate_arrays(labels, scores, bnd, [spec], preset="letor4")
    for q, (ys, ss, _) in enumerate(_split(labels, scores, bnd, docids)):
        want, _ = (
            ref.mean_ndcg(ys, ss, ties=ties, empty=empty)
            if ys
            else ({"zero": 0.0, "one": 1.0, "skip": None}[empty], True)
        )
        assert _close(res.per_query[str(parse_measure(spec))][q], want)


@SETTINGS
@given(batches(max_n=30, max_q=5), st.sampled_from([1, 3, 5, 10, 20, 64, 65, 200]))
def test_topk_selection_equals_full_sort(data, k) -> None:
    """The top-k selection path (fixed small k) and the full-sort path agree exactly."""
    labels, scores, bnd, _ = data
    fast = ndcg_per_query(labels, scores, bnd, k)
    # a fraction cut-off always takes the full-sort path; compare through the reference instead
    for q, (ys, ss, _ids) in enumerate(_split(labels, scores, bnd, data[3])):
        want, _e = ref.ndcg(ys, ss, k=k)
        assert _close(fast[q], want)


@SETTINGS
@given(batches(max_n=6), st.integers(0, 10_000))
def test_random_ties_lie_between_pessimistic_and_optimistic(data, seed) -> None:
    labels, scores, bnd, _ = data
    specs = [f"ndcg(ties=random:{seed})@3", "ndcg(ties=pessimistic)@3", "ndcg(ties=optimistic)@3"]
    r = evaluate_arrays(labels, scores, bnd, specs)
    again = evaluate_arrays(labels, scores, bnd, specs[:1])
    rnd, lo, hi = (r.per_query[s] for s in specs)
    assert np.array_equal(rnd, again.per_query[specs[0]])  # seeded: reproducible
    assert (lo <= rnd + 1e-12).all() and (rnd <= hi + 1e-12).all()


def test_random_ties_average_to_the_average_rule() -> None:
    labels = np.array([0, 1, 2, 0, 3, 1, 0, 2.0])
    scores = np.array([1, 1, 1, 1, 0, 0, 0, 0.0])
    bnd = np.array([0, 8])
    vals = [
        evaluate_arrays(labels, scores, bnd, [f"ndcg(ties=random:{s})@3"]).mean[
            f"ndcg(ties=random:{s})@3"
        ]
        for s in range(400)
    ]
    avg = evaluate_arrays(labels, scores, bnd, ["ndcg(ties=average)@3"]).mean[
        "ndcg(ties=average)@3"
    ]
    assert abs(np.mean(vals) - avg) < 0.02


def test_empty_rule_error_names_the_query() -> None:
    with pytest.raises(EmptyQueryError, match="query b"):
        evaluate_arrays(
            [1, 0, 0, 0], [1, 2, 3, 4], [0, 2, 4], ["ndcg(empty=error)"], query_ids=["a", "b"]
        )
    with pytest.raises(EmptyQueryError, match="no relevant document"):
        evaluate_arrays([0, 0], [1, 2], [0, 2], ["map(empty=error)"])


def test_invariants_on_random_lists() -> None:
    """0 <= NDCG <= 1, the ideal ranking scores 1, order of documents does not matter (ties
    aside), and padding-free: empty lists are empty queries."""
    rng = np.random.default_rng(0)
    sizes = rng.integers(0, 40, size=300)
    bnd = np.concatenate([[0], np.cumsum(sizes)])
    y = rng.integers(0, 5, size=bnd[-1]).astype(float)
    s = rng.normal(size=bnd[-1])
    for spec in [
        "ndcg",
        "ndcg@10",
        "ndcg(discount=zipf)@0.3n",
        "ndcg_beta",
        "meanndcg",
        "ndcg(discount=letor,gain=letor)@5",
    ]:
        r = evaluate_arrays(y, s, bnd, [spec]).per_query[spec]
        assert ((r >= 0) & (r <= 1 + 1e-12)).all()
        g = get_gain(parse_measure(spec).resolve().get("gain"))(y)
        res = evaluate_arrays(y, g + 1e-9 * s, bnd, [spec])  # sorted by gain: the ideal order
        ideal = res.per_query[spec]
        empty = ideal == 0  # IDCG = 0 (e.g. a 1-document list under the linear discount n - r)
        assert empty.sum() == res.empty_queries
        assert np.allclose(ideal[~empty], 1.0)
    # permuting documents within each query leaves the values unchanged (distinct scores)
    perm = np.argsort(np.repeat(np.arange(300), sizes) + rng.random(bnd[-1]), kind="stable")
    for spec in ["ndcg@10", "map", "p@5", "mrr", "dcg@3"]:
        a = evaluate_arrays(y, s, bnd, [spec]).per_query[spec]
        b = evaluate_arrays(y[perm], s[perm], bnd, [spec]).per_query[spec]
        assert np.allclose(a, b, rtol=0, atol=1e-12)


@SETTINGS
@given(batches(max_n=12, max_q=6), TIES, st.sampled_from(["exp2", "linear", "letor"]))
def test_measures_computed_together_equal_computed_alone(data, ties, gain) -> None:
    """A set shares one ranking (NDCG@k taken from the ranking sorted for MAP); the values must
    not depend on what else was asked."""
    labels, scores, bnd, docids = data
    specs = [f"ndcg(gain={gain},ties={ties})@{k}" for k in (1, 3, 10)] + [
        f"map(ties={ties})",
        f"p(ties={ties})@3",
        f"mrr(ties={ties})@2",
        f"meanndcg(gain={gain},ties={ties})",
    ]
    both = evaluate_arrays(labels, scores, bnd, specs, doc_ids=docids)
    for spec in specs:
        alone = evaluate_arrays(labels, scores, bnd, [spec], doc_ids=docids)
        name = str(parse_measure(spec))
        assert np.allclose(
            both.per_query[name], alone.per_query[name], rtol=0, atol=1e-12, equal_nan=True
        )
