"""``ndcglab evaluate``: text and JSON output, per-query CSV, TREC mode, clean errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from ndcglab.cli.main import main

from . import oracle_letor_eval as letor

# the official Eval-Score-4.0.pl output for MQ2008 Fold1 test ranked by feature 1 (4 decimals)
LETOR4_P = [0.2179, 0.2372, 0.2521, 0.2564, 0.2577, 0.2511, 0.2399, 0.2300, 0.2130, 0.2051]
LETOR4_MAP = 0.3355
LETOR4_NDCG = [0.1838, 0.2238, 0.2561, 0.2846, 0.3175, 0.3452, 0.3557, 0.3064, 0.1316, 0.1415]
LETOR4_MEAN = 0.3301


def _json(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def test_must_show_letor4_feature1(mq2008: Path, capsys) -> None:
    data = mq2008 / "Fold1" / "test.txt.gz"
    assert (
        main(["evaluate", str(data), "--feature", "1", "--preset", "letor4", "--format", "json"])
        == 0
    )
    out = _json(capsys)
    assert set(out) == {"mean", "queries", "empty_queries", "convention"}
    assert out["queries"] == 156 and out["empty_queries"] == 51
    assert np.allclose([out["mean"][f"ndcg@{k}"] for k in range(1, 11)], LETOR4_NDCG, atol=1e-4)
    assert np.allclose([out["mean"][f"p@{k}"] for k in range(1, 11)], LETOR4_P, atol=1e-4)
    assert abs(out["mean"]["map"] - LETOR4_MAP) < 1e-4
    assert abs(out["mean"]["meanndcg"] - LETOR4_MEAN) < 1e-4
    # and exactly the reference transcription of the script's rules
    lines = letor.read_lines(data)
    ref = letor.evaluate_letor(lines, letor.first_feature(lines, 1), "4.0")
    assert np.allclose([out["mean"][f"ndcg@{k}"] for k in range(1, 11)], ref["NDCG"], atol=1e-12)
    assert out["convention"]["preset"] == "letor4"
    assert out["convention"]["measures"]["ndcg@10"]["short"] == "zero"


def test_text_output_and_per_query(mq2008: Path, tmp_path: Path, capsys) -> None:
    data = mq2008 / "Fold1" / "test.txt.gz"
    scores = tmp_path / "s.txt"
    rng = np.random.default_rng(0)
    scores.write_text("\n".join(repr(float(x)) for x in rng.normal(size=2874)) + "\n")
    pq = tmp_path / "pq.csv"
    rc = main(
        [
            "evaluate",
            str(data),
            "--scores",
            str(scores),
            "--measure",
            "ndcg@10",
            "--measure",
            "map",
            "--per-query",
            str(pq),
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "ndcg@10" in text and "map" in text
    assert "preset standard" in text and "51 of 156 queries empty" in text
    rows = list(csv.reader(pq.open()))
    assert rows[0] == ["query_id", "ndcg@10", "map"] and len(rows) == 157


def test_synthetic_data_and_default_set(capsys) -> None:
    assert main(["evaluate", "synthetic:small", "--feature", "1", "--format", "json"]) == 0
    out = _json(capsys)
    assert list(out["mean"]) == ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ndcg", "map"]


def test_trec_mode(tmp_path: Path, capsys) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq1 0 z 1\nq2 0 x 0\n")
    run = tmp_path / "run"
    run.write_text(
        "q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0 t\nq1 Q0 c 3 1.0 t\nq1 Q0 d 4 0.5 t\nq2 Q0 x 1 1.0 t\n"
    )
    assert (
        main(
            [
                "evaluate",
                "--qrels",
                str(qrels),
                "--run",
                str(run),
                "--measure",
                "map",
                "--format",
                "json",
            ]
        )
        == 0
    )
    out = _json(capsys)
    assert out["queries"] == 2 and out["empty_queries"] == 1
    assert out["mean"]["map"] == pytest.approx(((1 + 2 / 3) / 3 + 0) / 2)
    assert out["convention"]["preset"] == "trec_eval"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--feature", "1", "--measure", "ndcg@x"], "cannot read cut-off"),
        (["--feature", "1", "--measure", "nope@3"], "unknown measure 'nope'; known:"),
        (["--feature", "1", "--measure", "ndcg(foo=1)"], "allowed: gain, discount"),
        (["--feature", "1", "--preset", "xyz"], "unknown preset"),
        (["--feature", "99"], "out of range"),
        ([], "--scores FILE"),
    ],
)
def test_errors_are_clean(mq2008: Path, argv, needle, capsys) -> None:
    data = mq2008 / "Fold1" / "test.txt.gz"
    assert main(["evaluate", str(data), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ndcglab: error:") and needle in err and "Traceback" not in err


def test_score_count_mismatch(mq2008: Path, tmp_path: Path, capsys) -> None:
    scores = tmp_path / "s.txt"
    scores.write_text("1\n2\n3\n")
    assert main(["evaluate", str(mq2008 / "Fold1" / "test.txt.gz"), "--scores", str(scores)]) == 2
    err = capsys.readouterr().err
    assert "3" in err and "2874" in err


def test_nothing_to_evaluate(capsys) -> None:
    assert main(["evaluate"]) == 2
    assert "nothing to evaluate" in capsys.readouterr().err
    assert main(["evaluate", "--qrels", "x"]) == 2
    assert "both --qrels FILE and --run FILE" in capsys.readouterr().err
