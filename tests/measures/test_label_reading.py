"""Labels read as each tool reads them (``conventions.read_labels``): the refusals match the
libraries' own (run live where installed), and a reading that changes a label warns."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.errors import ConventionError
from ndcglab.measures import evaluate_arrays

S = np.array([0.4, 0.3, 0.2, 0.1])
B = np.array([0, 4])


@pytest.mark.parametrize("labels", [[0, 1.5, 2, 0], [0, 31, 2, 0]])
def test_lightgbm_refuses_what_lightgbm_refuses(labels) -> None:
    y = np.asarray(labels, dtype=float)
    with pytest.raises(ConventionError, match="LightGBM"):
        evaluate_arrays(y, S, B, ["ndcg@2"], preset="lightgbm")
    lgb = pytest.importorskip("lightgbm")
    d = lgb.Dataset(np.zeros((4, 1)), label=y, group=[4], init_score=S)
    with pytest.raises(lgb.basic.LightGBMError):
        lgb.train(
            {"objective": "regression", "metric": "ndcg", "eval_at": [2], "verbose": -1},
            d,
            num_boost_round=1,
            valid_sets=[d],
        )


def test_lightgbm_takes_label_30() -> None:
    y = np.array([0.0, 30.0, 2.0, 0.0])
    assert evaluate_arrays(y, S, B, ["ndcg@2"], preset="lightgbm")["ndcg@2"] > 0.0


def test_single_precision_reading_warns_with_the_label() -> None:
    y = np.array([0.1, 1.0, 0.0, 0.0])
    with pytest.warns(UserWarning, match=r"single precision.*0\.1"):
        evaluate_arrays(y, S, B, ["ndcg@2"], preset="rax")


def test_ignore_index_drops_and_warns() -> None:
    y = np.array([-1.0, 1.0, 0.0, 2.0])
    with pytest.warns(UserWarning, match="1 document"):
        got = evaluate_arrays(y, S, B, ["ndcg"], preset="torchmetrics(ignore_index=-1)")["ndcg"]
    want = evaluate_arrays(y[1:], S[1:], [0, 3], ["ndcg"], preset="torchmetrics")["ndcg"]
    assert got == want


def test_ranx_truncates_fractional_labels_with_a_warning() -> None:
    y = np.array([1.5, 0.0, 2.0, 0.0])
    with pytest.warns(UserWarning, match="whole numbers"):
        got = evaluate_arrays(y, S, B, ["ndcg@2"], preset="ranx")["ndcg@2"]
    assert got == evaluate_arrays(np.trunc(y), S, B, ["ndcg@2"], preset="ranx")["ndcg@2"]


def test_cli_refusal_is_one_line(tmp_path) -> None:
    import subprocess
    import sys

    f = tmp_path / "d.txt"
    f.write_text("1.5 qid:1 1:0.5\n0 qid:1 1:0.2\n")
    r = subprocess.run(
        [sys.executable, "-m", "ndcglab", "evaluate", str(f), "--feature", "1",
         "--preset", "xgboost", "--measure", "ndcg@2"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ndcglab: error:") and "Fix" in lines[0]
