"""The ``letor3`` / ``letor4`` presets: every rule of the official LETOR scripts checked by hand,
against the independent transcription in ``oracle_letor_eval.py`` on real data, and — when
the environment variable ``NDCGLAB_LETOR_EVAL_DIR`` names a folder holding the official Perl
scripts ``Eval-Score-3.0.pl`` / ``Eval-Score-4.0.pl`` (from the LETOR 3.0 / 4.0 distributions) —
against the scripts themselves."""

from __future__ import annotations

import gzip
import math
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ndcglab.data import read_letor
from ndcglab.measures import evaluate, evaluate_arrays

from . import oracle_letor_eval as letor

#: the folder of the official LETOR Perl scripts (unset: the script comparisons skip)
LETOR_ENV = "NDCGLAB_LETOR_EVAL_DIR"
NDCG = [f"ndcg@{k}" for k in range(1, 11)]
P = [f"p@{k}" for k in range(1, 11)]


def _ev(labels, scores, specs, preset, doc_ids=None, bnd=None):
    b = [0, len(labels)] if bnd is None else bnd
    return evaluate_arrays(
        np.array(labels, float), np.array(scores, float), b, specs, preset=preset, doc_ids=doc_ids
    )


def _D(r: int) -> float:
    return 1.0 if r <= 2 else 1.0 / math.log2(r)


# ------------------------------------------------------------------------------ hand checks
def test_k_beyond_the_list_counts_zero() -> None:
    labels, scores = [2, 0, 1], [3, 2, 1]
    r = _ev(labels, scores, ["ndcg@3", "ndcg@5"], "letor4")
    want3 = (3 * _D(1) + 0 + 1 * _D(3)) / (3 * _D(1) + 1 * _D(2))
    assert r.mean["ndcg@3"] == pytest.approx(want3, abs=1e-15)
    assert r.mean["ndcg@5"] == 0.0  # k = 5 > n = 3: missing, counted as 0
    assert _ev(labels, scores, ["ndcg@5"], "letor3").mean["ndcg@5"] == 0.0
    # the standard convention clips instead: NDCG@5 = NDCG@3
    assert _ev(labels, scores, ["ndcg(gain=letor,discount=letor)@5"], "standard").mean[
        "ndcg(discount=letor,gain=letor)@5"
    ] == pytest.approx(want3, abs=1e-15)


def test_labels_above_two_gain_nothing_and_are_not_relevant() -> None:
    r = _ev([3, 1, 4, 0], [4, 3, 2, 1], ["ndcg@1", "ndcg@2", "p@1", "p@2", "map"], "letor4")
    assert r.mean["ndcg@1"] == 0.0  # label 3 first: gain 0; ideal puts label 1 first
    assert r.mean["ndcg@2"] == pytest.approx(1.0 / 1.0)  # DCG@2 = 0 + 1; IDCG@2 = 1 + 0
    assert r.mean["p@1"] == 0.0 and r.mean["p@2"] == 0.5
    assert r.mean["map"] == pytest.approx(0.5)  # one relevant doc, at position 2


def test_query_without_relevant_document_counts_zero() -> None:
    r = _ev(
        [0, 0, 1, 0], [1, 2, 2, 1], [*NDCG[:2], "map", "p@1", "meanndcg"], "letor4", bnd=[0, 2, 4]
    )
    assert r.empty_queries == 1
    assert r.per_query["ndcg@1"][0] == 0.0 and r.per_query["map"][0] == 0.0
    assert r.per_query["meanndcg"][0] == 0.0
    assert r.mean["map"] == pytest.approx((0 + 1) / 2)  # the average includes the empty query


def test_ties_keep_file_order() -> None:
    r = _ev([0, 2, 1], [5, 5, 5], ["ndcg@1", "ndcg@2", "p@1"], "letor4")
    assert r.mean["ndcg@1"] == 0.0 and r.mean["p@1"] == 0.0
    assert r.mean["ndcg@2"] == pytest.approx(3 / 4)


def test_duplicated_docid_keeps_the_later_line() -> None:
    labels = [1, 0, 2]
    scores = [0.9, 0.5, 0.1]
    ids = ["A", "B", "A"]  # A's later line (label 2, score 0.1) replaces the first
    r = _ev(labels, scores, ["ndcg@1", "ndcg@2", "p@1", "map"], "letor4", doc_ids=ids)
    assert r.convention["duplicates"] == "last" and r.convention["duplicates_dropped"] == 1
    assert r.mean["ndcg@1"] == 0.0 and r.mean["ndcg@2"] == 1.0
    assert r.mean["p@1"] == 0.0 and r.mean["map"] == 0.5
    # keep everything instead: A(1) ranks first
    k = evaluate_arrays(
        labels, scores, [0, 3], ["p@1"], preset="letor4", doc_ids=ids, duplicates="keep"
    )
    assert k.mean["p@1"] == 1.0
    # the reference transcription agrees
    lines = [f"{y} qid:1 1:0 #docid = {d} inc = 0 prob = 0" for y, d in zip(labels, ids)]
    ref = letor.evaluate_letor(lines, scores, "4.0")
    assert ref["NDCG"][:2] == [0.0, 1.0] and ref["MAP"] == 0.5


def test_precision_beyond_the_list_3_vs_4() -> None:
    labels, scores = [1, 0, 1], [3, 2, 1]
    assert _ev(labels, scores, ["p@3", "p@5"], "letor4").mean == {"p@3": 2 / 3, "p@5": 2 / 5}
    assert _ev(labels, scores, ["p@3", "p@5"], "letor3").mean == {"p@3": 2 / 3, "p@5": 0.0}


def test_mean_ndcg() -> None:
    labels, scores = [0, 2, 1], [3, 2, 1]
    dcg = np.cumsum([0 * _D(1), 3 * _D(2), 1 * _D(3)])
    ideal = np.cumsum([3 * _D(1), 1 * _D(2), 0 * _D(3)])
    want = float(np.mean(dcg / ideal))
    r = _ev(labels, scores, ["meanndcg"], "letor4")
    assert r.mean["meanndcg"] == pytest.approx(want, abs=1e-15)
    assert want == pytest.approx((0 + 0.75 + (3 + 1 / math.log2(3)) / 4) / 3)


def test_usual_sets() -> None:
    r4 = _ev([1, 0], [1, 0], None, "letor4")
    assert [str(m) for m in r4.measures] == [*P, "map", *NDCG, "meanndcg"]
    r3 = _ev([1, 0], [1, 0], None, "letor3")
    assert [str(m) for m in r3.measures] == [*P, "map", *NDCG]


# ------------------------------------------------------------------------------ real data
def _rankings(ds, lines):
    f1_text = letor.first_feature(lines, 1)
    rng = np.random.default_rng(7)
    rnd = rng.normal(size=ds.n_docs)
    tied = np.round(ds.features[:, 4].astype(np.float64), 1)
    return [
        (ds.features[:, 0], f1_text),  # ours from the parsed data, the oracle from the text
        (tied, list(tied)),
        (np.zeros(ds.n_docs), [0.0] * ds.n_docs),
        (rnd, list(rnd)),
    ]


@pytest.mark.parametrize(
    ("which", "part", "version"),
    [
        ("mq2008", "test", "4.0"),
        ("mq2008", "vali", "3.0"),
        ("ohsumed", "test", "3.0"),
        ("ohsumed", "vali", "4.0"),
    ],
)
def test_presets_match_the_reference_transcription(which, part, version, request) -> None:
    path = request.getfixturevalue(which) / "Fold1" / f"{part}.txt.gz"
    lines = letor.read_lines(path)
    if version == "4.0":  # the 4.0 line pattern needs "inc = ... prob = ..." (MQ2008 has them)
        lines = [ln if " inc = " in ln else ln + " inc = 0 prob = 0" for ln in lines]
    ds = read_letor(path)
    preset = "letor4" if version == "4.0" else "letor3"
    for ours, theirs in _rankings(ds, lines):
        ref = letor.evaluate_letor(lines, theirs, version)
        res = evaluate(ds, ours, preset=preset)
        assert np.allclose([res.mean[m] for m in NDCG], ref["NDCG"], rtol=0, atol=1e-12)
        assert np.allclose([res.mean[m] for m in P], ref["P"], rtol=0, atol=1e-12)
        assert abs(res.mean["map"] - ref["MAP"]) < 1e-12
        if version == "4.0":
            assert abs(res.mean["meanndcg"] - ref["MeanNDCG"]) < 1e-12
        for i, q in enumerate(ds.query_ids):
            pq = ref["queries"][str(q)]
            assert abs(res.per_query["map"][i] - pq["MAP"]) < 1e-12
            for k in range(10):
                want = pq["NDCG"][k] if k < len(pq["NDCG"]) else 0.0
                assert abs(res.per_query[NDCG[k]][i] - want) < 1e-12


# ------------------------------------------------------------------------------ the scripts
def _script(name: str) -> Path:
    folder = os.environ.get(LETOR_ENV)
    if not folder:
        pytest.skip(
            f"to compare with the official LETOR script, set {LETOR_ENV} to a folder holding "
            f"{name} (from the LETOR distribution, Qin et al. 2010) and run pytest again"
        )
    p = Path(folder) / name
    if not p.exists():
        pytest.skip(
            f"{p} not found: put {name} (from the LETOR distribution) in {LETOR_ENV}={folder}"
        )
    if shutil.which("perl") is None:
        pytest.skip(f"perl is not installed; {name} needs it (e.g. apt-get install perl)")
    return p


def _run_perl(script: Path, data: Path, scores, tmp_path: Path, flag: str = "0") -> list[str]:
    feat = tmp_path / "feature.txt"
    with gzip.open(data, "rb") as src:
        feat.write_bytes(src.read().replace(b"\r\n", b"\n"))  # the script wants LF endings
    pred = tmp_path / "pred.txt"
    pred.write_text("".join(f"{float(s)!r}\n" for s in scores))
    out = tmp_path / "out.txt"
    subprocess.run(
        ["perl", str(script), str(feat), str(pred), str(out), flag],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out.read_text().splitlines()


def test_letor4_matches_the_perl_script(mq2008: Path, tmp_path: Path) -> None:
    script = _script("Eval-Score-4.0.pl")
    data = mq2008 / "Fold1" / "test.txt.gz"
    ds = read_letor(data)
    scores = ds.features[:, 0].astype(np.float64)
    lines = _run_perl(script, data, scores, tmp_path, flag="1")
    blocks: list[dict[str, list[float]]] = []
    for ln in lines:
        parts = [x for x in ln.split("\t") if x.strip()]
        if not parts:
            continue
        if parts[0] == "qid":
            blocks.append({})
        else:
            blocks[-1][parts[0]] = [float(x) for x in parts[1:]]
    prec, ndcg = blocks
    res = evaluate(ds, scores, preset="letor4")
    assert np.allclose([res.mean[m] for m in P], prec["Average"][:10], rtol=0, atol=1e-4)
    assert abs(res.mean["map"] - prec["Average"][10]) < 1e-4
    assert np.allclose([res.mean[m] for m in NDCG], ndcg["Average"][:10], rtol=0, atol=1e-4)
    assert abs(res.mean["meanndcg"] - ndcg["Average"][10]) < 1e-4
    for i, q in enumerate(ds.query_ids):  # per query too (printed with 4 decimals)
        assert np.allclose([res.per_query[m][i] for m in [*P, "map"]], prec[str(q)], atol=1e-4)
        assert np.allclose(
            [res.per_query[m][i] for m in [*NDCG, "meanndcg"]], ndcg[str(q)], atol=1e-4
        )


def test_letor3_matches_the_perl_script(ohsumed: Path, tmp_path: Path) -> None:
    script = _script("Eval-Score-3.0.pl")
    data = ohsumed / "Fold1" / "test.txt.gz"
    ds = read_letor(data)
    scores = ds.features[:, 0].astype(np.float64)
    lines = _run_perl(script, data, scores, tmp_path)
    vals = {
        ln.split(":")[0]: [float(x) for x in ln.split("\t")[1:] if x.strip()]
        for ln in lines
        if ln.split(":")[0] in ("precision", "MAP", "NDCG")
    }
    res = evaluate(ds, scores, preset="letor3")
    assert np.allclose([res.mean[m] for m in P], vals["precision"][:10], rtol=0, atol=1e-4)
    assert abs(res.mean["map"] - vals["MAP"][0]) < 1e-4
    assert np.allclose([res.mean[m] for m in NDCG], vals["NDCG"][:10], rtol=0, atol=1e-4)
