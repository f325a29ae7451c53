"""Issue 44, items 8, 9 and 14 (measures): ``evaluate`` as a subprocess.

* ``-c --tie-range``: the warning and the table average over the same query set (the closed
  form: one tied query of three, NDCG 1/log2(3) in the worst order and 1 in the best);
* preset ``rax`` with a label >= 128: rax itself (installed) returns NaN, and the command says
  so in a warning naming the label;
* an unparseable measure name names the closest measures; ``--scores`` given without DATA
  names the command-line flags, never a Python keyword.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest


def _cli(*argv: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab", "evaluate", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _warnings(err: str) -> list[str]:
    assert "Traceback" not in err
    return [x for x in err.splitlines() if x.startswith("ndcglab: warning: ")]


def test_tie_warning_and_table_average_over_the_same_queries_with_c(tmp_path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq2 0 d4 0\nq3 0 d5 1\n")
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 1.0 r\n")  # q2, q3 missing: 0 under -c
    out = _cli("--qrels", qrels, "--run", run, "-c", "--tie-range", "--preset", "trec_eval",
               "-m", "ndcg", "--format", "json")  # fmt: skip
    assert out.returncode == 0, out.stderr
    # ties=docid puts d2 (not relevant) first: 1/log2(3); the best order gives 1; over 3 queries
    worst, best = 1 / math.log2(3) / 3, 1 / 3
    d = json.loads(out.stdout)
    assert d["mean"]["ndcg"] == pytest.approx(worst, abs=1e-12)
    tr = d["tie_range"]["ndcg"]
    assert (tr["low"], tr["high"]) == (pytest.approx(worst), pytest.approx(best))
    (w,) = _warnings(out.stderr)
    assert f"of the mean {worst:.4f}" in w and f"gives {worst:.4f} to {best:.4f}" in w, w
    assert "(1 query has tied scores)" in w, w


def test_rax_labels_beyond_float32_are_stated_with_rax_s_nan(tmp_path) -> None:
    jnp = pytest.importorskip("jax.numpy")
    rax = pytest.importorskip("rax")
    data = tmp_path / "big.txt"
    data.write_text("2 qid:1 1:1\n130 qid:1 1:2\n0 qid:1 1:3\n1 qid:2 1:1\n0 qid:2 1:2\n")
    scores = tmp_path / "s"
    scores.write_text("3\n2\n1\n1\n2\n")
    # rax's own answer on these two lists (padded, where= marks the real documents)
    y = np.array([[2.0, 130.0, 0.0], [1.0, 0.0, 0.0]])
    s = np.array([[3.0, 2.0, 1.0], [1.0, 2.0, 0.0]])
    where = np.array([[True, True, True], [True, True, False]])
    v = np.asarray(
        rax.ndcg_metric(jnp.asarray(s), jnp.asarray(y), where=jnp.asarray(where), reduce_fn=None)
    )
    assert np.isnan(v[0]) and np.isfinite(v[1])
    out = _cli(data, "--scores", scores, "--preset", "rax", "-m", "ndcg@3")
    assert out.returncode == 0, out.stderr
    (w,) = _warnings(out.stderr)
    assert "label 130.0 (query 1, document 2)" in w and "returns NaN" in w, w
    assert "on 1 of 2 queries" in w and "NaN mean" in w, w
    # labels below 128 whose ideal DCG still overflows float32: rax gives NaN there too
    data.write_text("127 qid:1 1:1\n127 qid:1 1:2\n127 qid:1 1:3\n1 qid:2 1:1\n0 qid:2 1:2\n")
    y[0] = [127.0, 127.0, 127.0]
    v = np.asarray(
        rax.ndcg_metric(jnp.asarray(s), jnp.asarray(y), where=jnp.asarray(where), reduce_fn=None)
    )
    assert np.isnan(v[0])
    out = _cli(data, "--scores", scores, "--preset", "rax", "-m", "ndcg")
    (w,) = _warnings(out.stderr)
    assert "ideal DCG of 1 of 2 queries (first query 1)" in w and "NaN" in w, w
    # the standard preset computes in double precision: nothing to say
    assert _warnings(_cli(data, "--scores", scores, "-m", "ndcg").stderr) == []


def _error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr
    (line,) = [x for x in out.stderr.splitlines() if x.strip()]
    assert line.startswith("ndcglab: error: ")
    return line


@pytest.mark.parametrize(
    ("spec", "closest"),
    [("ndgc@10", "ndcg"), ("mapp", "map"), ("ndcg@@10", "ndcg"), ("ndcg(gain=exp2", "ndcg")],
)
def test_an_unreadable_measure_names_the_closest_measures(tmp_path, spec, closest) -> None:
    data = tmp_path / "d.txt"
    data.write_text("1 qid:1 1:1\n0 qid:1 1:2\n")
    line = _error(_cli(data, "--feature", "1", "-m", spec))
    fix = line.split("Fix: ", 1)[1]
    assert "the closest measure" in fix and closest in fix.split("(e.g.")[0], line
    assert "check the value this message names" not in line  # not the generic fix


def test_data_without_qid_gives_the_command_line_fix_not_a_python_keyword(tmp_path) -> None:
    data = tmp_path / "noqid.txt"
    data.write_text("1 1:0.5\n0 1:0.2\n")
    scores = tmp_path / "x"
    scores.write_text("1\n2\n")
    line = _error(_cli(data, "--scores", scores))
    assert "query_file=" not in line and "DATA.query" in line, line
    # a command with the option names it
    out = subprocess.run([sys.executable, "-m", "ndcglab", "describe", str(data)],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    line = _error(out)
    assert "query_file=" not in line and "--query-file FILE" in line, line
