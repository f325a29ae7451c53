"""``ndcglab.analysis.explain``: the Shapley split of the difference between two conventions.

Checked: the parts add up to the total difference; one differing option gets all of it; the
``empty`` rule's part is (number of empty queries x difference of the rules) / Q, alone and
together with other options; the split equals a brute-force average over every order of the
options, computed here from measure strings written by hand and ``evaluate_arrays``.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from ndcglab.analysis.explain import explain, parse_convention
from ndcglab.data import RankingDataset
from ndcglab.errors import ConventionError, SpecError
from ndcglab.measures import evaluate, evaluate_arrays, evaluate_trec


def _data(
    n_queries: int = 40, n_empty: int = 7, seed: int = 0
) -> tuple[RankingDataset, np.ndarray]:
    """Graded labels 0..3, ``n_empty`` queries without a relevant document, lists of 3..25
    documents (some shorter than 10), scores with one decimal (many ties)."""
    rng = np.random.default_rng(seed)
    qid, labels, docs = [], [], []
    for q in range(n_queries):
        n = int(rng.integers(3, 26))
        y = rng.choice(4, size=n, p=[0.55, 0.25, 0.15, 0.05]).astype(float)
        if q < n_empty:
            y[:] = 0.0
        elif y.max() == 0:
            y[0] = 1.0
        qid += [f"q{q:02d}"] * n
        labels += y.tolist()
        docs += [f"D{q}-{rng.integers(0, 10**6)}-{i}" for i in range(n)]
    ds = RankingDataset.from_arrays(np.zeros((len(labels), 1)), labels, qid=qid, doc_ids=docs)
    scores = np.round(np.asarray(labels) * 0.3 + rng.normal(0, 0.6, len(labels)), 1)
    return ds, scores


@pytest.fixture(scope="module")
def data():
    return _data()


PAIRS = [
    ("lightgbm", "trec_eval", None),
    ("sklearn", "letor4", "ndcg"),
    ("standard", "trec_eval10", "ndcg@5"),
    ("lightgbm", "letor4", "map@10"),
    ("ndcg(gain=linear,ties=average)@10", "ndcg(empty=one,discount=power:0.5)@5", None),
    ("trec_eval:p@10", "letor3:p@10", None),
    ("standard:ndcg@0.3n", "ndcg(rounding=floor,ties=optimistic)@0.3n", None),
]


@pytest.mark.parametrize(("a", "b", "measure"), PAIRS)
def test_parts_add_up_to_the_total(data, a, b, measure):
    ds, scores = data
    e = explain(ds, scores, a, b, measure=measure)
    assert e.residual == 0.0
    assert math.fsum(e.contributions.values()) == pytest.approx(e.total, abs=1e-12)
    assert abs(math.fsum(e.contributions.values()) - e.total) <= 1e-12
    # the means are the library's own numbers under each side's convention
    ra = evaluate(ds, scores, [e.a.measure], preset=e.a.preset)
    rb = evaluate(ds, scores, [e.b.measure], preset=e.b.preset)
    assert e.mean_a == ra.mean[str(e.a.measure)] and e.mean_b == rb.mean[str(e.b.measure)]
    assert e.n_evaluations == 2 ** len(e.options)
    json.dumps(e.to_dict())  # JSON-serialisable as it is


def test_a_single_differing_option_gets_all_of_it(data):
    ds, scores = data
    e = explain(ds, scores, "ndcg(gain=linear)@10", "ndcg(gain=exp2)@10")
    assert [o.key for o in e.options] == ["gain"]
    (part,) = e.options
    assert part.contribution == e.total and part.alone == e.total and e.total != 0.0
    assert (part.a_value, part.b_value) == ("linear", "exp2")
    # a preset against the same preset with one measure option changed
    e2 = explain(ds, scores, "trec_eval", "ndcg(ties=input)@10")
    assert list(e2.contributions) == ["ties"] and e2.contributions["ties"] == e2.total
    # only the cut-off
    e3 = explain(ds, scores, "trec_eval:ndcg@5", "trec_eval:ndcg@10")
    assert list(e3.contributions) == ["cutoff"] and e3.contributions["cutoff"] == e3.total


def _n_empty(ds: RankingDataset) -> int:
    return sum(int(q.labels.max() <= 0) for q in ds)


def test_empty_rule_part_is_count_times_rule_difference_over_q(data):
    ds, scores = data
    n_e, q = _n_empty(ds), ds.n_queries
    assert n_e == 7
    e = explain(ds, scores, "ndcg(empty=one)@10", "ndcg(empty=zero)@10")
    assert list(e.contributions) == ["empty"]
    assert e.contributions["empty"] == pytest.approx(n_e * (0 - 1) / q, abs=1e-12)
    assert e.total == pytest.approx(-n_e / q, abs=1e-12)
    assert e.options[0].queries == n_e
    (reason,) = e.reasons
    assert reason.startswith(
        f"{n_e} queries have no relevant document: ndcg(empty=one)@10 scores them 1, "
        f"ndcg(empty=zero)@10 0 ({-n_e / q:+.4f}; e.g. queries "
    )
    empty_ids = {qv.query_id for qv in ds if qv.labels.max() <= 0}
    assert set(e.options[0].examples) <= empty_ids and len(e.options[0].examples) == 3


def test_empty_rule_part_with_ties_and_other_options(data):
    ds, scores = data
    n_e, q = _n_empty(ds), ds.n_queries
    e = explain(ds, scores, "ndcg(empty=zero,ties=input)@5", "ndcg(empty=one,ties=pessimistic)@5")
    assert set(e.contributions) == {"empty", "ties"}
    assert e.contributions["empty"] == pytest.approx(n_e * (1 - 0) / q, abs=1e-12)
    assert e.contributions["ties"] == pytest.approx(e.total - n_e / q, abs=1e-12)
    assert e.contributions["ties"] < 0  # pessimistic ties can only lower NDCG
    # the example: LightGBM scores an empty query 1, trec_eval 0
    e2 = explain(ds, scores, "lightgbm", "trec_eval")
    assert {"empty", "gain", "ties", "score_precision"} <= set(e2.contributions)
    assert e2.contributions["empty"] == pytest.approx(-n_e / q, abs=1e-12)
    assert (
        f"{n_e} queries have no relevant document: lightgbm scores them 1, trec_eval 0"
        in "\n".join(e2.reasons)
    )
    empty_ids = {qv.query_id for qv in ds if qv.labels.max() <= 0}
    for mv in e2.queries:
        if mv.query_id in empty_ids:
            assert mv.change == -1.0 and mv.reason.startswith("no relevant document")


def _brute_force(ds, scores, base: dict[str, str], other: dict[str, str], cutoff: str):
    """Shapley values by averaging the marginal change over every order of the options, each
    convention written as a measure string and evaluated by evaluate_arrays (standard preset)."""
    keys = sorted(k for k in base if base[k] != other[k])

    def value(take: set[str]) -> float:
        opts = {k: (other[k] if k in take else base[k]) for k in base}
        spec = "ndcg(" + ",".join(f"{k}={v}" for k, v in sorted(opts.items())) + f")@{cutoff}"
        res = evaluate_arrays(
            ds.labels, scores, ds.boundaries, [spec], doc_ids=ds.doc_ids, query_ids=ds.query_ids
        )
        return res.mean[spec]

    cache: dict[frozenset[str], float] = {}
    phi = dict.fromkeys(keys, 0.0)
    orders = list(itertools.permutations(keys))
    for order in orders:
        taken: set[str] = set()
        for k in order:
            before = cache.setdefault(frozenset(taken), value(taken))
            taken.add(k)
            after = cache.setdefault(frozenset(taken), value(taken))
            phi[k] += (after - before) / len(orders)
    return phi


def test_split_equals_a_brute_force_average_over_orders(data):
    ds, scores = data
    a = {"gain": "exp2", "ties": "input", "empty": "one", "discount": "log", "short": "clip"}
    b = {"gain": "linear", "ties": "optimistic", "empty": "zero", "discount": "zipf",
         "short": "zero"}  # fmt: skip
    spec = lambda o: "ndcg(" + ",".join(f"{k}={v}" for k, v in sorted(o.items())) + ")@10"  # noqa: E731
    e = explain(ds, scores, spec(a), spec(b))
    ref = _brute_force(ds, scores, a, b, "10")
    assert set(e.contributions) == set(ref)
    for k, v in ref.items():
        assert e.contributions[k] == pytest.approx(v, abs=1e-12), k
    assert all(o.queries > 0 for o in e.options)


def test_queries_that_move_most_come_first(data):
    ds, scores = data
    e = explain(ds, scores, "sklearn", "lightgbm", top=5)
    assert len(e.queries) == 5
    changes = [abs(m.change) for m in e.queries]
    assert changes == sorted(changes, reverse=True)
    for m in e.queries:
        assert m.change == pytest.approx(m.b_value - m.a_value, abs=0)
        assert math.fsum(m.parts.values()) == pytest.approx(m.change, abs=1e-12)
    assert explain(ds, scores, "sklearn", "lightgbm", top=0).queries == ()


def test_trec_runs_score_precision_alone():
    # scores 1 and 1 + 1e-9 tie as C float (trec_eval 9, pytrec_eval) and not as double
    qrels = {"q1": {"a": 0, "b": 1}, "q2": {"x": 1, "y": 0}, "q3": {"v": 1}}
    run = {
        "q1": {"a": 1.0 + 1e-9, "b": 1.0},
        "q2": {"x": 2.0, "y": 1.0},
        "q3": {"u": 0.5 + 1e-9, "v": 0.5},
    }
    e = explain(qrels, run, "trec_eval", "trec_eval10", measure="mrr")
    assert list(e.contributions) == ["score_precision"]
    ref9 = evaluate_trec(qrels, run, ["mrr"], preset="trec_eval").mean["mrr"]
    ref10 = evaluate_trec(qrels, run, ["mrr"], preset="trec_eval10").mean["mrr"]
    assert (e.mean_a, e.mean_b) == (ref9, ref10) and e.total == ref10 - ref9 != 0.0
    assert e.contributions["score_precision"] == e.total
    assert e.options[0].queries == 2
    # two measure strings on TREC input take trec_eval's other options
    e2 = explain(qrels, run, "ndcg", "ndcg(gain=exp2)")
    assert e2.a.preset.name == "trec_eval" and list(e2.contributions) == ["gain"]


def test_trec_run_options_add_up():
    rng = np.random.default_rng(4)
    qrels, run = {}, {}
    for q in range(15):
        docs = [f"d{q}-{j}" for j in range(30)]
        qrels[str(q)] = {d: int(rng.choice(3, p=[0.6, 0.3, 0.1])) for d in docs[:18]}
        run[str(q)] = {d: float(np.round(rng.normal(), 1)) for d in rng.permutation(docs)[:25]}
    a, b = "trec_eval", "trec_eval10(judged_only=yes,depth=10)"
    for m in ("map", "ndcg@10", "p@5"):
        e = explain(qrels, run, a, b, measure=m)
        assert {"judged_only", "depth", "score_precision"} == set(e.contributions)
        assert abs(math.fsum(e.contributions.values()) - e.total) <= 1e-12
        assert e.mean_a == evaluate_trec(qrels, run, [m], preset=a).mean[m]
        assert e.mean_b == evaluate_trec(qrels, run, [m], preset=b).mean[m]


def test_conventions_are_read_like_presets_and_measures():
    c = parse_convention("trec_eval(depth=5):ndcg(ties=random:3)@10")
    assert c.preset.name.startswith("trec_eval") and c.options["ties"] == "random:3"
    assert parse_convention("lightgbm").measure.cutoff.k == 10  # ndcg@10 by default
    assert parse_convention("ndcg(gain=linear)", preset="sklearn").options["ties"] == "average"


def test_nothing_to_explain(data):
    ds, scores = data
    e = explain(ds, scores, "trec_eval", "trec_eval:ndcg@10")
    assert e.options == () and e.total == 0.0 and e.queries == ()
    assert "agree on every option" in e.text()


def test_errors(data):
    ds, scores = data
    with pytest.raises(SpecError, match="no preset or measure has this name"):
        explain(ds, scores, "lightgbn", "trec_eval")
    with pytest.raises(ConventionError, match="one measure under two conventions"):
        explain(ds, scores, "ndcg@10", "map@10")
    with pytest.raises(ConventionError, match="max_options"):
        explain(ds, scores, "lightgbm", "letor4", max_options=2)
    with pytest.raises(SpecError, match="run"):
        explain({"q": {"a": 1}}, np.zeros(1), "trec_eval", "trec_eval10")


def test_text_and_plot(data, tmp_path):
    pytest.importorskip("matplotlib")
    ds, scores = data
    e = explain(ds, scores, "lightgbm", "trec_eval")
    text = e.text()
    assert text.startswith("ndcg@10: lightgbm ") and "why:" in text and "total" in text
    out = tmp_path / "wf.png"
    e.plot(out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
