"""``ndcglab trec_eval`` against trec_eval's own test suite and against the real binaries.

* trec_eval's ``make quicktest``: every command of its Makefile's ``quicktest`` target, run as
  ``ndcglab trec_eval ...`` on the files of trec_eval's ``test/`` folder, must print exactly
  that version's expected file (``diff`` empty). The folder is named by
  ``NDCGLAB_TREC_EVAL_TEST_DIR`` (trec_eval 9.0.8's) and ``NDCGLAB_TREC_EVAL10_TEST_DIR``
  (trec_eval 10.0's); a folder is recognised as 10.0's by its comment test files. Nothing of
  trec_eval is in this repository: the tests skip when the folders are not given.
* Generated qrels and runs (ties, negative and fractional labels, unjudged and unretrieved
  documents, topics missing on either side) under every option, diffed against the binary named
  by ``NDCGLAB_TREC_EVAL_BIN`` (9.0.8) / ``NDCGLAB_TREC_EVAL10_BIN`` (10.0) when given.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from ndcglab.treceval import run_trec_eval

#: trec_eval 9.0.8's quicktest: (arguments, expected output file)
QUICKTEST_9 = [
    ("test/qrels.test test/results.test", "out.test"),
    ("-m all_trec test/qrels.test test/results.test", "out.test.a"),
    ("-m all_trec -q test/qrels.test test/results.test", "out.test.aq"),
    ("-m all_trec -q -c test/qrels.test test/results.trunc", "out.test.aqc"),
    ("-m all_trec -q -c -M100 test/qrels.test test/results.trunc", "out.test.aqcM"),
    ("-m all_trec -mrelstring.20 -q -l2 test/qrels.rel_level test/results.test", "out.test.aql"),
    ("-m all_prefs -q -R prefs test/prefs.test test/prefs.results.test", "out.test.prefs"),
    ("-m all_prefs -q -R qrels_prefs test/qrels.test test/results.test", "out.test.qrels_prefs"),
    ("-m qrels_jg -q -R qrels_jg  test/qrels.123 test/results.test", "out.test.qrels_jg"),
    (
        "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 "
        "-m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
        "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 "
        "test/qrels.test test/results.test",
        "out.test.meas_params",
    ),
    ("-q -m all_trec -Z test/zscores_file test/qrels.test test/results.test", "out.test.aqZ"),
]
#: trec_eval 10.0's quicktest adds the files with comments
QUICKTEST_10 = [
    *QUICKTEST_9[:1],
    ("test/qrels.test.with-comments test/results.test", "out.test"),
    ("test/qrels.comment.test test/results.comment.test", "out.comment.test"),
    *QUICKTEST_9[1:7],
    ("-m all_prefs -q -R prefs test/prefs.comment.test test/prefs.results.test", "out.test.prefs"),
    *QUICKTEST_9[7:9],
    ("-m qrels_jg -q -R qrels_jg  test/qrels.comments.123 test/results.test", "out.test.qrels_jg"),
    *QUICKTEST_9[9:],
]


def _test_dirs() -> dict[int, Path]:
    """The trec_eval test folders given, by version (9 or 10)."""
    found: dict[int, Path] = {}
    for var in ("NDCGLAB_TREC_EVAL_TEST_DIR", "NDCGLAB_TREC_EVAL10_TEST_DIR"):
        value = os.environ.get(var)
        if not value:
            continue
        d = Path(value)
        if not (d / "qrels.test").is_file():
            continue
        found[10 if (d / "qrels.test.with-comments").exists() else 9] = d
    return found


def _cases() -> list[tuple[int, str, str]]:
    return [(9, a, e) for a, e in QUICKTEST_9] + [(10, a, e) for a, e in QUICKTEST_10]


def test_quicktest_has_the_makefiles_command_counts() -> None:
    assert len(QUICKTEST_9) == 11
    assert len(QUICKTEST_10) == 15


@pytest.fixture(params=["python", "fast"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which engine runs: the Python engine (small files' default) or the fast path (tried
    for files of any size)."""
    from ndcglab.treceval import _run

    monkeypatch.setattr(_run, "FAST_MIN_BYTES", 0 if request.param == "fast" else 2**62)
    return str(request.param)


@pytest.mark.parametrize(("version", "args", "expected"), _cases())
def test_quicktest(
    version: int, args: str, expected: str, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = _test_dirs().get(version)
    if d is None:
        pytest.skip(f"trec_eval {version}'s test folder not given (NDCGLAB_TREC_EVAL*_TEST_DIR)")
    monkeypatch.chdir(d.parent)
    argv = ["--trec-eval-version", str(version), *args.split()]
    got = run_trec_eval(argv)
    assert got.encode("latin-1") == (d / expected).read_bytes()


def test_quicktest_through_the_command_line() -> None:
    """One quicktest command as a subprocess: the CLI writes the same bytes to stdout."""
    d = _test_dirs().get(9) or _test_dirs().get(10)
    if d is None:
        pytest.skip("no trec_eval test folder given (NDCGLAB_TREC_EVAL_TEST_DIR)")
    version = 10 if (d / "qrels.test.with-comments").exists() else 9
    out = subprocess.run(
        [sys.executable, "-m", "ndcglab", "trec_eval", "--trec-eval-version", str(version),
         "-m", "all_trec", "-q", "test/qrels.test", "test/results.test"],
        cwd=d.parent, capture_output=True, check=True,
    )  # fmt: skip
    assert out.stdout == (d / "out.test.aq").read_bytes()


# ----------------------------------------------------------------- generated inputs vs binary


def generated_files(tmp: Path, seed: int) -> tuple[Path, Path]:
    """A qrels and a run with what trips evaluators: tied scores, negative, zero, graded and
    fractional labels, judged documents not retrieved, retrieved ones not judged, topics on one
    side only, blank lines and odd spacing."""
    rng = random.Random(seed)
    qrels, run = [], []
    topics = [str(100 + t) for t in range(6)]
    for t in topics:
        docs = [f"D{rng.randrange(60):03d}" for _ in range(40)]
        docs = sorted(set(docs))
        if t != topics[0]:  # topic 100: in the run only
            for d in docs[: rng.randrange(5, len(docs))]:
                label = rng.choice(["0", "1", "2", "3", "-1", "1.5", "0.5", "4", "0", "1"])
                qrels.append(f"{t} 0 {d} {label}")
        if t != topics[-1]:  # the last topic: in the qrels only
            n = rng.randrange(1, len(docs) + 1)
            for i, d in enumerate(rng.sample(docs, n)):
                score = rng.choice([1.0, 2.0, 0.5, round(rng.random(), 3), -1.0])
                run.append(f"{t}\tQ0  {d} {i + 1} {score} run{seed}")
    rng.shuffle(qrels)
    rng.shuffle(run)
    qp = tmp / f"qrels{seed}"
    rp = tmp / f"run{seed}"
    qp.write_text("\n".join(qrels) + "\n")
    rp.write_text("\n".join(run) + "\n\n")
    return qp, rp


#: option sets run on the generated files (the measures' parameters in trec_eval's syntax)
OPTION_SETS = [
    [],
    ["-m", "all_trec", "-q"],
    ["-m", "all_trec", "-q", "-c"],
    ["-m", "all_trec", "-q", "-c", "-M", "7"],
    ["-m", "all_trec", "-q", "-J"],
    ["-m", "all_trec", "-q", "-l", "2"],
    ["-m", "all_trec", "-q", "-l2", "-c", "-J", "-M5"],
    ["-m", "all_trec", "-n", "-q", "-l0"],
    ["-q", "-m", "ndcg.1=3,2=9,4=4.5", "-m", "ndcg_cut.10,20,3", "-m", "G.2=5", "-m",
     "Rndcg.0=1", "-m", "ndcg_rel.3=1", "-m", "ndcg_p.1=2", "-m", "utility.2,-1,0,0",
     "-N", "100", "-m", "set_F.0.5", "-m", "relstring.30", "-m", "yaap"],
    # every preference measure but prefs_avgjg_Rnonrel(_ret): on these labels its last class
    # (relevance -1) is shorter than R and trec_eval reads past it into memory it never wrote
    ["-q", "-m", "prefs", "-m", "prefs_simp_ret", "-m", "prefs_pair_ret", "-m",
     "prefs_avgjg_ret", "-m", "prefs_simp_imp", "-m", "prefs_pair_imp", "-m",
     "prefs_avgjg_imp", "-R", "qrels_prefs"],
    ["-q", "-m", "qrels_jg", "-R", "qrels_jg"],
    ["-m", "all_trec", "-q", "-l", "-1", "-M", "1"],
    ["-q", "-m", "set", "-N", "1000", "-D", "0.103"],
    ["-q", "-m", "G.1=-2,2=0.5", "-m", "Rndcg.1=0,2=3", "-m", "ndcg_rel.4=-1", "-m", "ndcg_p",
     "-m", "Rprec_mult.0.5,1.5,3", "-m", "iprec_at_recall.0.05,0.33", "-m", "11pt_avg.0.2,0.8",
     "-m", "relstring.3", "-m", "relative_P.1,2,3"],
]  # fmt: skip


def generated_prefs(tmp: Path, seed: int) -> Path:
    """A preferences file: per topic one group of one subgroup (equivalence classes) and one of
    two subgroups (a preference matrix closed under transitivity)."""
    rng = random.Random(seed)
    lines = []
    for t in ("101", "102", "103", "104"):
        docs = [f"D{i:03d}" for i in rng.sample(range(60), 12)]
        for jg, subgroups in (("A", ["0"]), ("B", ["s1", "s2"])):
            # one level per document and group: trec_eval refuses a document both relevant
            # and nonrelevant within a group
            level = {d: rng.choice([0, 0, 1, 2, 3]) for d in docs}
            for jsg in subgroups:
                for d in rng.sample(docs, 5):
                    lines.append(f"{t} {jg} {jsg} {d} {level[d]}")
    p = tmp / f"prefs{seed}"
    p.write_text("\n".join(lines) + "\n")
    return p


def _binaries() -> dict[int, str]:
    out = {}
    for version, var in ((9, "NDCGLAB_TREC_EVAL_BIN"), (10, "NDCGLAB_TREC_EVAL10_BIN")):
        value = os.environ.get(var)
        if value and Path(value).is_file():
            out[version] = value
    return out


@pytest.mark.parametrize("version", [9, 10])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_inputs_against_the_binary(
    version: int, seed: int, engine: str, tmp_path: Path
) -> None:
    binary = _binaries().get(version)
    if binary is None:
        pytest.skip(f"no trec_eval {version} binary given (NDCGLAB_TREC_EVAL*_BIN)")
    qrels, run = generated_files(tmp_path, seed)
    for opts in OPTION_SETS:
        if version >= 10 and "-c" not in opts and opts[:2] != ["-q", "-m"]:
            opts = [*opts, "-c"]  # trec_eval 10 refuses a judged topic missing from the run
        extra = ["-m", "rbp", "-m", "rbp_resid.p=0.5", "-m", "unj.3,7"] if version >= 10 else []
        args = [*opts, *extra, str(qrels), str(run)]
        want = subprocess.run([binary, *args], capture_output=True)
        try:
            got = run_trec_eval(["--trec-eval-version", str(version), *args]).encode("latin-1")
        except Exception as exc:  # the binary must have refused the input too
            assert want.returncode != 0, (args, exc)
            continue
        assert want.returncode == 0, (args, want.stderr)
        assert got == want.stdout, args


@pytest.mark.parametrize("version", [9, 10])
def test_generated_prefs_against_the_binary(version: int, tmp_path: Path) -> None:
    binary = _binaries().get(version)
    if binary is None:
        pytest.skip(f"no trec_eval {version} binary given (NDCGLAB_TREC_EVAL*_BIN)")
    for seed in (1, 2):
        _, run = generated_files(tmp_path, seed)
        args = ["-q", "-c", "-m", "all_prefs", "-R", "prefs", str(generated_prefs(tmp_path, seed)),
                str(run)]  # fmt: skip
        want = subprocess.run([binary, *args], capture_output=True, check=True)
        got = run_trec_eval(["--trec-eval-version", str(version), *args]).encode("latin-1")
        assert got == want.stdout, args
