"""``ndcglab evaluate`` under the presets trec_eval / trec_eval10: trec_eval's rules (labels read
with atol, rbp's p = 0.9 in 10, ``-m recall``, ``-l 1.5``, num_rel under ``-c``) and
``--format trec_eval``, which prints what ``ndcglab trec_eval`` prints. Expected values are worked
out by hand from trec_eval's rules (docs/trec_eval_cli.md)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from ndcglab.measures import evaluate_trec
from ndcglab.treceval import run_trec_eval

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 a 2\n2 0 d 1\n3 0 x 1\n"
RUN = "1 Q0 a 1 3 r1\n1 Q0 b 2 2 r1\n1 Q0 c 3 1 r1\n2 Q0 d 1 5 r1\n2 Q0 a 2 4 r1\n"


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab", *argv], capture_output=True, text=True, check=False
    )


def _main(capsys: pytest.CaptureFixture[bytes], *argv: str) -> str:
    """``ndcglab ARGV`` in this process: its stdout (exit status 0 checked)."""
    from ndcglab.cli.main import main

    assert main(list(argv)) == 0
    return capsys.readouterr().out.decode("latin-1")


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    q = tmp_path / "qrels"
    r = tmp_path / "run"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r)


@pytest.mark.parametrize(("preset", "version"), [("trec_eval", 9), ("trec_eval10", 10)])
def test_format_trec_eval_is_ndcglab_trec_eval(
    files: tuple[str, str], preset: str, version: int, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    q, r = files
    out = _main(capsysbinary, "evaluate", "--qrels", q, "--run", r, "--preset", preset,
                "--format", "trec_eval", "-q", "-c", "-m", "all_trec", "-m",
                "ndcg_cut.20,5")  # fmt: skip
    want = run_trec_eval(["--trec-eval-version", str(version), "-q", "-c", "-m", "all_trec",
                          "-m", "ndcg_cut.20,5", q, r])  # fmt: skip
    assert out == want
    # runid from the run's tag; ndcg_cut sorted; no per-topic gm_map
    assert "runid                 \tall\tr1\n" in out
    assert out.index("ndcg_cut_5 ") < out.index("ndcg_cut_20")
    assert "gm_map                \t1\t" not in out


def test_format_trec_eval_needs_a_trec_preset(files: tuple[str, str]) -> None:
    q, r = files
    out = _cli("evaluate", "--qrels", q, "--run", r, "--preset", "standard", "--format",
               "trec_eval")  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.startswith("ndcglab: error: --format trec_eval")


def test_trec_eval10_rbp_p_is_0_9() -> None:
    # relevant at ranks 1 and 3: RBP = (1 - p)(p^0 + p^2) = 0.1 * 1.81 under trec_eval 10's
    # default p = 0.9
    qrels = {"1": {"a": 1, "b": 0, "c": 1}}
    run = {"1": {"a": 3.0, "b": 2.0, "c": 1.0}}
    res = evaluate_trec(qrels, run, ["rbp"], preset="trec_eval10")
    assert res["rbp"] == pytest.approx(0.1 * 1.81, abs=1e-12)


def test_fractional_labels_atol_under_trec_presets_and_float_under_standard() -> None:
    # trec_eval reads 1.5 as 1 and 0.5 as 0 (atol); ndcg of ranking (1.5, 0.5) is then 1 / 1
    qrels = {"1": {"a": 1.5, "b": 0.5}}
    run = {"1": {"a": 2.0, "b": 1.0}}
    with pytest.warns(UserWarning, match="whole numbers"):
        res = evaluate_trec(qrels, run, ["ndcg", "num_rel"], preset="trec_eval")
    assert res["num_rel"] == 1.0  # 0.5 -> 0: not relevant
    assert res["ndcg"] == 1.0
    # the standard preset keeps the gains 1.5 and 0.5 (gain exp2: 2^1.5 - 1, 2^0.5 - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        std = evaluate_trec(qrels, run, ["num_rel"], preset="standard")
    assert std["num_rel"] == 1.0  # 1.5 >= 1 relevant, 0.5 not


def test_rel_level_read_as_atol(
    files: tuple[str, str], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    q, r = files
    with pytest.warns(UserWarning, match="-l 1.5 is read as -l 1"):
        a = _main(capsysbinary, "evaluate", "--qrels", q, "--run", r, "-m", "map", "-l", "1.5",
                  "--format", "json")  # fmt: skip
    b = _main(capsysbinary, "evaluate", "--qrels", q, "--run", r, "-m", "map", "-l", "1",
              "--format", "json")  # fmt: skip
    assert a == b


def test_recall_alone_under_trec_presets(
    files: tuple[str, str], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    q, r = files
    out = _main(capsysbinary, "evaluate", "--qrels", q, "--run", r, "-m", "recall", "-q")
    names = {line.split("\t")[0].strip() for line in out.splitlines()}
    assert names == {f"recall_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)}


def test_num_rel_all_line_under_c(
    files: tuple[str, str], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    # -c: trec_eval's 'all' num_rel counts every qrels line with relevance > 0: a, c (topic 1),
    # a, d (topic 2), x (topic 3, not in the run) = 5
    q, r = files
    out = _main(capsysbinary, "evaluate", "--qrels", q, "--run", r, "-m", "num_rel", "-q", "-c")
    assert out.splitlines()[-1] == "num_rel               \tall\t5"


def test_all_trec_warning_names_trec_eval_10s_measures(
    files: tuple[str, str], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    q, r = files
    with pytest.warns(UserWarning, match="rbp, rbp_resid, unj_5/10/20"):
        _main(capsysbinary, "evaluate", "--qrels", q, "--run", r, "-m", "all_trec", "--preset",
              "trec_eval10")  # fmt: skip
