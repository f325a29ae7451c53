"""evaluate / evaluate_arrays / EvaluationResult / ndcg_per_query, and the normalisation
u = G(y)/||G(y)||_D of Ravikumar, Tewari, Yang (AISTATS 2011)."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from ndcglab.data import RankingDataset
from ndcglab.errors import DataFormatError, NdcglabError
from ndcglab.measures import (
    Measure,
    evaluate,
    evaluate_arrays,
    get_discount,
    get_gain,
    ndcg_per_query,
)

from . import oracle_measures as ref


def _small():
    y = np.array([2, 0, 1, 0, 0, 1, 3, 0.0])
    s = np.array([0.1, 0.4, 0.3, 0.9, 0.2, 0.2, 0.5, 0.7])
    b = np.array([0, 3, 5, 8])
    return y, s, b


def test_normalisation_u_of_ravikumar_tewari_yang() -> None:
    """u = G(y)/||G(y)||_D: labels (5,4) w.p. 0.3 and (1,3) w.p. 0.7: E[u] = (0.3216, 0.7533)."""
    y = np.array([5, 4, 1, 3.0])
    b = np.array([0, 2, 4])
    z = evaluate_arrays(y, np.zeros(4), b, ["idcg"]).per_query["idcg"]  # standard: exp2, log2
    g = np.exp2(y) - 1
    u = g / np.repeat(z, 2)
    eu = 0.3 * u[:2] + 0.7 * u[2:]
    assert np.allclose(eu, [0.3216, 0.7533], atol=5e-5)
    assert 0.3 * g[:2] @ [1, 0] + 0.7 * g[2:] @ [1, 0] == pytest.approx(10.0)  # E[G] = (10, 9.4)
    assert eu[1] > eu[0]  # E[u] ranks document 2 first, E[G] document 1


def test_result_shape_and_json() -> None:
    y, s, b = _small()
    r = evaluate_arrays(y, s, b, ["ndcg@2", "map", "ndcg(empty=skip)"], query_ids=["a", "b", "c"])
    assert r.n_queries == 3 and list(r.query_ids) == ["a", "b", "c"]
    assert r.names == ["ndcg@2", "map", "ndcg(empty=skip)"]
    assert r.empty_queries == 1 and r.empty_by_measure["map"] == 1
    assert math.isnan(r.per_query["ndcg(empty=skip)"][1])
    assert r.mean["ndcg(empty=skip)"] == pytest.approx(
        np.mean(r.per_query["ndcg(empty=skip)"][[0, 2]])
    )
    d = json.loads(json.dumps(r.to_dict()))
    assert set(d) == {"mean", "queries", "empty_queries", "convention"}
    assert d["queries"] == 3 and d["empty_queries"] == 1
    assert d["convention"]["preset"] == "standard"
    assert d["convention"]["measures"]["ndcg@2"]["gain"] == "exp2"
    assert d["convention"]["measures"]["ndcg@2"]["short"] == "clip"
    full = r.to_dict(per_query=True)
    assert full["per_query"]["ndcg(empty=skip)"][1] is None
    assert r["map"] == r.mean["map"]
    text = r.table()
    assert "ndcg@2" in text and "1 of 3 queries empty" in text and "preset standard" in text


def test_to_csv(tmp_path) -> None:
    y, s, b = _small()
    r = evaluate_arrays(y, s, b, ["ndcg@2", "ndcg(empty=skip)"], query_ids=["a", "b", "c"])
    out = r.to_csv(tmp_path / "sub" / "pq.csv")
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["query_id", "ndcg@2", "ndcg(empty=skip)"]
    assert [row[0] for row in rows[1:]] == ["a", "b", "c"]
    assert rows[2][2] == ""  # skipped
    assert float(rows[1][1]) == r.per_query["ndcg@2"][0]
    assert [p.name for p in out.parent.iterdir()] == ["pq.csv"]  # no temporary file left


def test_evaluate_dataset_and_errors() -> None:
    y, s, b = _small()
    ds = RankingDataset.from_arrays(np.zeros((8, 2)), y, group=np.diff(b))
    r = evaluate(ds, s, "ndcg@3")
    assert np.array_equal(
        r.per_query["ndcg@3"], evaluate_arrays(y, s, b, "ndcg@3").per_query["ndcg@3"]
    )
    with pytest.raises(DataFormatError, match="7 scores for 8 documents"):
        evaluate(ds, s[:7], "ndcg")
    with pytest.raises(DataFormatError, match="not a finite number"):
        evaluate_arrays(y, np.where(s > 0.8, np.nan, s), b, "ndcg")
    with pytest.raises(NdcglabError, match="boundaries"):
        evaluate_arrays(y, s, [0, 3, 9], "ndcg")
    with pytest.raises(NdcglabError, match="ties=docid"):
        evaluate_arrays(y, s, b, "ndcg(ties=docid)")


def test_default_measures_come_from_the_preset() -> None:
    y, s, b = _small()
    assert evaluate_arrays(y, s, b).names == [
        "ndcg@1",
        "ndcg@3",
        "ndcg@5",
        "ndcg@10",
        "ndcg",
        "map",
    ]
    assert evaluate_arrays(
        y, s, b, preset="trec_eval", doc_ids=[str(i) for i in range(8)]
    ).names == ["map", "p@5", "p@10", "ndcg", "ndcg@10"]
    assert evaluate_arrays(y, s, b, preset="lightgbm").names == [f"ndcg@{k}" for k in range(1, 6)]


def test_empty_rules_one_and_lightgbm() -> None:
    y, s, b = _small()
    r = evaluate_arrays(y, s, b, ["ndcg", "ndcg(empty=one)"], preset="lightgbm")
    assert r.per_query["ndcg"][1] == 1.0 and r.per_query["ndcg(empty=one)"][1] == 1.0
    assert evaluate_arrays(y, s, b, ["ndcg"]).per_query["ndcg"][1] == 0.0


def test_ndcg_per_query_fast_path() -> None:
    rng = np.random.default_rng(5)
    sizes = rng.integers(0, 50, 200)
    b = np.concatenate([[0], np.cumsum(sizes)])
    y = rng.integers(0, 4, b[-1]).astype(float)
    s = rng.integers(0, 10, b[-1]).astype(float)
    for k in (None, 1, 5, 10, 100):
        fast = ndcg_per_query(y, s, b, k)
        spec = "ndcg" if k is None else f"ndcg@{k}"
        assert np.array_equal(fast, evaluate_arrays(y, s, b, [spec]).per_query[spec])
        for q in range(0, 200, 37):
            want, _ = ref.ndcg(list(y[b[q] : b[q + 1]]), list(s[b[q] : b[q + 1]]), k=k)
            assert fast[q] == pytest.approx(want, abs=1e-12)
    lin = ndcg_per_query(y, s, b, 5, gain="linear", discount="zipf", ties="average", empty="skip")
    assert np.isnan(lin[sizes == 0]).all()


def test_custom_gain_and_discount_objects() -> None:
    y, s, b = _small()

    def cube(v):
        return np.asarray(v, float) ** 3

    def steep(r, n):
        return 1.0 / np.asarray(r, float) ** 2

    m = Measure.create("ndcg", 2, gain=cube, discount=steep)
    r = evaluate_arrays(y, s, b, [m])
    assert r.names == ["ndcg(discount=steep,gain=cube)@2"]
    # cube gains with 1/r^2: ranking labels [0, 1, 2] -> DCG@2 = 1/4; ideal [8, 1] -> 8 + 1/4;
    # query 2 holds no relevant document (0 by the default empty rule); query 3 ranks labels
    # [0, 3, 1] -> DCG@2 = 27/4, ideal [27, 1] -> 27 + 1/4
    assert r.per_query[r.names[0]].tolist() == pytest.approx([0.25 / 8.25, 0.0, 6.75 / 27.25])
    assert get_gain(cube).name == "cube" and get_discount(steep).name == "steep"

    # callables equal to the named linear gain and Zipf discount agree with the slow oracle
    def ident(v):
        return np.asarray(v, float)

    def harmonic(r, n):
        return 1.0 / np.asarray(r, float)

    m2 = Measure.create("ndcg", 2, gain=ident, discount=harmonic)
    got = evaluate_arrays(y, s, b, [m2]).per_query[str(m2)]
    for q in range(3):
        lo, hi = b[q], b[q + 1]
        want, _ = ref.ndcg(list(y[lo:hi]), list(s[lo:hi]), gain_name="linear", disc="zipf", k=2)
        assert got[q] == pytest.approx(want, abs=1e-12)
    want0, _ = ref.ndcg([2, 0, 1], [0.1, 0.4, 0.3], gain_name="linear", disc="zipf", k=2)
    assert want0 == pytest.approx((0 + 1 / 2) / (2 + 1 / 2))  # labels [0, 1] vs ideal [2, 1]


def test_length_dependent_custom_discount() -> None:
    y, s, b = _small()

    def lin(r, n):
        return np.asarray(n, float) - np.asarray(r, float)

    from ndcglab.measures.discounts import CallableDiscount

    d = CallableDiscount(fn=lin, name="mylinear", depends_on_length=True)
    a = evaluate_arrays(y, s, b, [Measure.create("ndcg", gain="linear", discount=d)])
    c = evaluate_arrays(y, s, b, ["ndcg_beta"])
    assert np.allclose(a.per_query[a.names[0]], c.per_query["ndcg_beta"])
