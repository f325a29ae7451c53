"""``ndcglab explain`` (and ``ndcglab evaluate`` on TREC files) as a user runs them: in a
subprocess, on files written to a temporary folder."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from ndcglab.analysis.explain import explain
from ndcglab.data import RankingDataset, load_dataset, read_scores, write_scores, write_svmlight


def _cli(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("explain")
    rng = np.random.default_rng(5)
    qid, labels, docs = [], [], []
    for q in range(30):
        n = int(rng.integers(4, 20))
        y = rng.choice(3, size=n, p=[0.6, 0.3, 0.1]).astype(float)
        if q % 6 == 0:
            y[:] = 0.0  # 5 queries without a relevant document
        elif y.max() == 0:
            y[0] = 1.0
        qid += [str(q + 1)] * n
        labels += y.tolist()
        docs += [f"d{q}-{i}" for i in range(n)]
    ds = RankingDataset.from_arrays(rng.normal(size=(len(labels), 3)), labels, qid=qid,
                                    doc_ids=docs)  # fmt: skip
    data = folder / "data.txt"
    write_svmlight(data, ds)
    scores = folder / "scores.txt"
    write_scores(scores, np.round(np.asarray(labels) * 0.4 + rng.normal(0, 0.5, len(labels)), 1))
    return folder, str(data), str(scores)


def test_text_report(files):
    _, data, scores = files
    r = _cli("explain", data, "--scores", scores, "--from", "lightgbm", "--to", "trec_eval")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.startswith("ndcg@10: lightgbm ")
    assert "5 queries have no relevant document: lightgbm scores them 1, trec_eval 0" in out
    assert "Shapley split over the" in out and "queries that move the most" in out


def test_json_adds_up_and_matches_the_library(files):
    _, data, scores = files
    r = _cli("explain", data, "--scores", scores, "-a", "sklearn", "-b", "lightgbm",
             "--measure", "ndcg@5", "--format", "json", "--top", "3")  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert abs(sum(got["contributions"].values()) - got["total"]) <= 1e-12
    assert got["measure"] == "ndcg@5" and len(got["queries"]) == 3
    ref = explain(load_dataset(data), read_scores(scores), "sklearn", "lightgbm", measure="ndcg@5")
    assert got["total"] == ref.total
    assert got["contributions"] == pytest.approx(ref.contributions, abs=0)


def test_plot_is_written(files):
    pytest.importorskip("matplotlib")
    folder, data, scores = files
    png = folder / "wf.png"
    r = _cli("explain", data, "--scores", scores, "--from", "trec_eval", "--to",
             "ndcg(gain=exp2,ties=input)@10", "--plot", str(png))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"written: {png}" in r.stdout


def test_trec_files_with_comments_and_extra_fields(files):
    folder, _, _ = files
    q = folder / "qrels"
    q.write_text("# judgements\n1 0 a 1\n1 0 b 0\n2 0 x 1\n# end\n")
    run = folder / "run"
    run.write_text(
        "# run\n1 Q0 a 1 1.000000001 t note\n1 Q0 b 2 1.0 t note\n2 Q0 x 1 0.5 t 1 2 3\n"
        "2 Q0 y 2 0.5 t\n"
    )
    r = _cli("explain", "--qrels", str(q), "--run", str(run), "--from", "trec_eval", "--to",
             "trec_eval10", "--measure", "mrr", "--format", "json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert list(got["contributions"]) == ["score_precision"]
    r = _cli("evaluate", "--qrels", str(q), "--run", str(run), "--measure", "mrr",
             "--format", "json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["queries"] == 2


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("preset", "no preset or measure has this name"),
        ("measures", "one measure under two conventions"),
        ("empty run", "no ranked document"),
        ("no common query", "no query of the run is in the qrels"),
        ("top", "--top"),
    ],
)
def test_bad_input_is_one_error_line(files, kind, words):
    folder, data, scores = files
    q = folder / "q2"
    q.write_text("7 0 a 1\n")
    run = folder / "r2"
    run.write_text("8 Q0 a 1 1.0 t\n")
    empty = folder / "empty_run"
    empty.write_text("# nothing\n")
    args = {
        "preset": [data, "--scores", scores, "--from", "lightgbn", "--to", "trec_eval"],
        "measures": [data, "--scores", scores, "--from", "ndcg@10", "--to", "map@10"],
        "empty run": ["--qrels", str(q), "--run", str(empty), "--from", "trec_eval", "--to",
                      "trec_eval10"],
        "no common query": ["--qrels", str(q), "--run", str(run), "--from", "trec_eval", "--to",
                            "trec_eval10"],
        "top": [data, "--scores", scores, "--from", "lightgbm", "--to", "trec_eval", "--top",
                "-1"],
    }[kind]  # fmt: skip
    r = _cli("explain", *args)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ndcglab: error: ") and words in lines[0]
    assert "Traceback" not in r.stderr
    if kind in ("empty run", "no common query"):
        assert str(empty if kind == "empty run" else run) in lines[0]
