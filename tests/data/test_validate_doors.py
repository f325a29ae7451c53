"""One validation for every door: arrays given in Python are refused where the file readers
refuse the same values, with the same words; the count of empty queries does not depend on
which measures are asked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ndcglab.data import RankingDataset, read_letor
from ndcglab.errors import DataFormatError, NdcglabError
from ndcglab.measures import evaluate, evaluate_arrays

X = np.array(
    [[0.9, 0.1], [0.1, 0.3], [0.5, 0.2], [0.7, 0.6], [0.2, 0.9], [0.3, 0.5]], dtype=np.float64
)
Y = [2, 0, 1, 0, 0, 0]
GROUP = [3, 3]


def _reader_message(tmp_path: Path, line: str) -> str:
    p = tmp_path / "bad.txt"
    p.write_text("1 qid:1 1:0.5 2:0.5\n" + line + "\n")
    with pytest.raises(DataFormatError) as info:
        read_letor(p)
    return str(info.value)


@pytest.mark.parametrize("value", [np.inf, -np.inf, 1e39, -3.5e38])
def test_features_float32_cannot_hold_are_refused_as_the_reader_does(tmp_path, value):
    file_msg = _reader_message(tmp_path, f"0 qid:1 1:{value!r} 2:0.5".replace("inf", "Infinity"))
    x = X.copy()
    x[4, 1] = value
    with pytest.raises(DataFormatError) as info:
        RankingDataset.from_arrays(x, Y, group=GROUP)
    msg = str(info.value)
    phrase = "infinite or beyond the float32 range (about ±3.4e38)"
    assert phrase in file_msg and phrase in msg
    assert "feature 2 of document 5 (query 1)" in msg and repr(float(value)) in msg
    assert "Fix:" in msg


def test_nan_features_are_missing_values_as_the_readers_null(tmp_path):
    p = tmp_path / "null.txt"
    p.write_text("1 qid:1 1:NULL 2:0.5\n0 qid:1 1:0.1 2:0.2\n")
    from_file = read_letor(p)
    from_arrays = RankingDataset.from_arrays([[np.nan, 0.5], [0.1, 0.2]], [1, 0], qid=["1", "1"])
    np.testing.assert_array_equal(from_file.features, from_arrays.features)
    assert from_arrays.features.dtype == np.float32


def test_float32_max_is_kept(tmp_path):
    big = float(np.finfo(np.float32).max)
    ds = RankingDataset.from_arrays([[big], [-big]], [1, 0], group=[2])
    assert ds.features[0, 0] == np.float32(big)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_labels_are_refused_naming_the_query(tmp_path, bad):
    file_msg = _reader_message(tmp_path, f"{'nan' if np.isnan(bad) else 'inf'} qid:1 1:0.5")
    y = np.array(Y, dtype=float)
    y[3] = bad
    with pytest.raises(DataFormatError) as info:
        RankingDataset.from_arrays(X, y, group=GROUP)
    msg = str(info.value)
    assert "not a finite number" in file_msg and "not a finite number" in msg
    assert "label of document 4 (query 1)" in msg and "Fix:" in msg
    with pytest.raises(DataFormatError, match="not a finite number"):
        evaluate_arrays(y, np.arange(6.0), [0, 3, 6])


def test_feature_names_must_match_the_columns():
    with pytest.raises(DataFormatError, match="3 feature names for 2 feature columns"):
        RankingDataset.from_arrays(X, Y, group=GROUP, feature_names=["a", "b", "c"])
    with pytest.raises(DataFormatError, match="one string"):
        RankingDataset.from_arrays(X, Y, group=GROUP, feature_names="ab")  # type: ignore[arg-type]
    ds = RankingDataset.from_arrays(X, Y, group=GROUP, feature_names=["a", "b"])
    assert ds.feature_names == ["a", "b"]


def test_two_dimensional_scores_are_refused_not_flattened():
    ds = RankingDataset.from_arrays(X, Y, group=GROUP)
    for scores in (np.ones((6, 1)), np.ones((2, 3)), np.ones((3, 2))):
        with pytest.raises(DataFormatError, match="1-D"):
            evaluate_arrays(Y, scores, [0, 3, 6])
        with pytest.raises(DataFormatError, match="1-D"):
            evaluate(ds, scores)
    # the 1-D vector is accepted and equals a hand computation: query 1 ranks 2,1,0 perfectly
    res = evaluate_arrays(Y, X[:, 0], [0, 3, 6], "ndcg@3")
    assert res.per_query["ndcg@3"][0] == pytest.approx(1.0)


def test_an_empty_dataset_is_refused():
    with pytest.raises(DataFormatError, match="no documents"):
        RankingDataset.from_arrays(np.zeros((0, 2)), [], group=[])
    with pytest.raises(DataFormatError, match="no documents"):
        evaluate_arrays([], [], [0])


def test_the_estimator_door_gives_the_same_refusal():
    pytest.importorskip("torch")
    from ndcglab.estimator import NDCGRanker

    x = X.copy()
    x[0, 0] = 1e39  # float64 that float32 cannot hold: not silently turned into inf
    for bad_x, bad_y, words in (
        (x, Y, "infinite or beyond the float32 range"),
        (X, [0, 1, np.nan, 0, 0, 0], "not a finite number"),
    ):
        with pytest.raises(NdcglabError, match=words):
            NDCGRanker(epochs=1).fit(bad_x, bad_y, group=GROUP)


# ---------------------------------------------------------------- the count of empty queries
DATA3 = "2 qid:1 1:0.9\n0 qid:1 1:0.1\n1 qid:2 1:0.5\n0 qid:2 1:0.4\n0 qid:3 1:0.4\n0 qid:3 1:0.2\n"


@pytest.mark.parametrize(
    "measures", [["P.5"], ["map"], ["dcg@3"], ["err"], ["P@2", "num_ret"], ["recall@5"]]
)
def test_empty_queries_are_counted_for_every_measure(tmp_path, measures):
    """Query 3 has no relevant document: 1 of 3 empty, whichever measures are asked (the
    oracle: queries whose labels are all below rel=1, counted here from the file's labels)."""
    (tmp_path / "d.txt").write_text(DATA3)
    (tmp_path / "s.txt").write_text("".join(f"{v}\n" for v in range(6)))
    labels = [int(ln.split()[0]) for ln in DATA3.splitlines()]
    expected = sum(max(labels[i : i + 2]) < 1 for i in range(0, 6, 2))
    argv = [sys.executable, "-m", "ndcglab", "evaluate", "d.txt", "--scores", "s.txt"]
    for m in measures:
        argv += ["--measure", m]
    res = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"{expected} of 3 queries empty" in res.stdout
