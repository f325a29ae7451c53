"""The fast path of ``ndcglab trec_eval`` (compiled kernels) against the Python engine, the
reference: the same output bytes, or the same error, on generated qrels and runs under
trec_eval's options — and the fast path really taken where it is meant to be.

The inputs have what trec_eval's rules turn on: ties (scores of one decimal, and scores equal
only as C floats), document names that are prefixes of one another, negative, zero and graded
labels, unjudged and unretrieved documents, topics on one side only, topic ids whose byte order
is not their numeric order, a topic's lines split over the file, tabs, CR before LF, scores
written with exponents, a last line without its newline.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ndcglab.treceval import TrecEvalError, parse_command_line
from ndcglab.treceval._fast import evaluate_fast
from ndcglab.treceval._measure_kernels import CODES
from ndcglab.treceval._measures import NICKNAMES
from ndcglab.treceval._run import _mark, evaluate_files


def _write(tmp: Path, seed: int, complete: bool = False) -> tuple[str, str]:
    """Generated qrels and run; topic 12 is judged only (unless ``complete``), topic 13
    retrieved only."""
    rng = random.Random(seed)
    qrels: list[str] = []
    run: list[str] = []
    topics = [str(q) for q in range(1, 14)]
    for q in topics:
        docs = [f"d{k}" for k in range(rng.randint(1, 40))]
        if q != "13":  # topic 13 is in the run only
            for d in docs:
                if rng.random() < 0.8 or d == "d0":
                    label = rng.choice(["0", "0", "1", "2", "3", "4", "-1", "-2", "+1", "02"])
                    sep = rng.choice([" ", "\t", "  "])
                    qrels.append(f"{q}{sep}0 {d} {label}")
        if q == "12" and not complete:  # topic 12 is in the qrels only
            continue
        lines = []
        for d in docs + [f"x{k}" for k in range(rng.randint(0, 5))]:
            if rng.random() < 0.85:
                score = rng.choice(
                    [f"{rng.randint(0, 9) / 10}", f"{rng.random():.6f}", "0.5", "5e-1",
                     f"{rng.randint(-3, 3)}", "16777217", "16777216", f"{rng.random():.17f}"]
                )  # fmt: skip
                lines.append(f"{q} Q0 {d} 0 {score} tag{seed}")
        run.extend(lines)
    rng.shuffle(run)  # topics' lines split over the file
    q = tmp / f"qrels{seed}"
    r = tmp / f"run{seed}"
    q.write_text("\n".join(qrels) + "\n")
    r.write_text("\r\n".join(run))  # CR before LF (a blank), no final newline
    return str(q), str(r)


OPTIONS = [
    ["-m", "all_trec"],
    ["-q", "-m", "all_trec"],
    ["-q", "-c", "-m", "all_trec"],
    ["-n", "-q", "-m", "all_trec", "-m", "yaap"],
    ["-q", "-l", "2", "-m", "all_trec"],
    ["-q", "-l", "0", "-m", "all_trec"],
    ["-q", "-M", "3", "-m", "all_trec"],
    ["-q", "-M", "0", "-m", "all_trec"],
    ["-q", "-J", "-m", "all_trec"],
    ["-q", "-J", "-l", "3", "-c", "-M", "9", "-m", "all_trec"],
    ["-q", "-N", "100", "-m", "utility.2,-1,0.5,0.25", "-m", "set_F.0.5"],
    ["-q", "-m", "P.3,7,1", "-m", "ndcg_cut.2,4,100", "-m", "map_cut.1,5", "-m", "success.2"],
    ["-q", "-m", "iprec_at_recall.0.25,0.5", "-m", "11pt_avg.0.3,0.6", "-m", "relstring.5"],
    ["-q", "-m", "Rprec_mult.0.5,1.5", "-m", "relative_P.2,30", "-m", "recall.3"],
    ["-q", "-m", "ndcg.1=3,2=9,4=4.5", "-m", "G.1=-2,2=0.5", "-m", "Rndcg.1=0,2=3"],
    ["-q", "-c", "-m", "ndcg_rel.4=-1", "-m", "ndcg.-1=2,0=1,x=5", "-m", "G.3=1,3=2"],
    ["-m", "official"],
    [],
]
#: trec_eval 10's gain measures with parameters (p, and level=gain with negative levels)
OPTIONS_10 = [
    ["-q", "-c", "-m", "rbp.p=0.5,2=7", "-m", "rbp_resid.p=0.7", "-m", "dcg.1=2,-1=0.5"],
    ["-q", "-c", "-m", "ideal_dcg.3=1", "-m", "rbp.1=-3,p=0.95", "-m", "ndcg.2=0.5"],
]


def _both(version: int, args: list[str], q: str, r: str) -> tuple[str, str]:
    opts = parse_command_line(["--trec-eval-version", str(version), *args, q, r]).options
    out = []
    for fast in (True, False):
        try:
            out.append(evaluate_files(opts, q, r, fast=fast))
        except TrecEvalError as exc:
            out.append(f"error {exc.status}: {exc}")
        except (ZeroDivisionError, ValueError) as exc:  # the Python engine's own errors
            out.append(f"error {type(exc).__name__}: {exc}")
    return out[0], out[1]


def _taken(version: int, args: list[str], q: str, r: str) -> bool:
    opts = parse_command_line(["--trec-eval-version", str(version), *args, q, r]).options
    return evaluate_fast(opts, q, r, _mark(opts)) is not None


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("version", [9, 10])
def test_fast_path_prints_the_python_engines_bytes(seed: int, version: int, tmp_path: Path) -> None:
    # trec_eval 10 refuses a judged topic the run lacks (and -c gives it a stand-in ranking,
    # the Python engine's): its run here has every judged topic
    q, r = _write(tmp_path, seed, complete=version >= 10)
    extra = ["-m", "rbp", "-m", "rbp_resid", "-m", "unj.3,7", "-m", "dcg", "-m", "ideal_dcg"]
    for args in OPTIONS + (OPTIONS_10 if version >= 10 else []):
        if version >= 10:
            args = [*args, *extra] if args else extra
        fast, slow = _both(version, args, q, r)
        assert fast == slow, args
        assert not fast.startswith("error"), fast
        assert _taken(version, args, q, r), args


def test_trec_eval_10_stand_in_ranking_left_to_the_python_engine(tmp_path: Path) -> None:
    q, r = _write(tmp_path, 4)
    args = ["-q", "-c", "-m", "all_trec"]
    fast, slow = _both(10, args, q, r)
    assert fast == slow
    assert "\t12\t" in fast  # the judged topic the run lacks, under -c
    assert not _taken(10, args, q, r)


def test_fast_path_of_trec_eval_10_when_every_judged_topic_is_in_the_run(tmp_path: Path) -> None:
    q = tmp_path / "q"
    r = tmp_path / "r"
    q.write_text("2 0 a 1\n10 0 b 2\n10 0 a 0\n2 0 c -1\n")
    r.write_text("10 Q0 a 1 0.5 t\n2 Q0 a 1 1e0 t\n10 Q0 b 1 0.5 t\n2 Q0 c 2 1 t\n2 Q0 z 3 1 t\n")
    for args in OPTIONS[:10] + OPTIONS[14:16] + OPTIONS_10:
        args = [*args, "-m", "rbp", "-m", "rbp_resid", "-m", "unj"]
        fast, slow = _both(10, args, str(q), str(r))
        assert fast == slow, args
        assert _taken(10, args, str(q), str(r)), args


def test_ties_as_c_floats_and_docno_order(tmp_path: Path) -> None:
    """16777217 and 16777216 are one C float: trec_eval 9 ranks them by docno (descending:
    'd2' before 'd10'); trec_eval 10 reads doubles and ranks 16777217 first."""
    q = tmp_path / "q"
    r = tmp_path / "r"
    q.write_text("1 0 d10 1\n1 0 d2 0\n")
    r.write_text("1 Q0 d10 1 16777217 t\n1 Q0 d2 2 16777216 t\n")
    for version, first in ((9, "0"), (10, "1")):
        args = ["-q", "-c", "-m", "relstring.2"]
        fast, slow = _both(version, args, str(q), str(r))
        assert fast == slow
        assert _taken(version, args, str(q), str(r))
        assert f"relstring_2           \t1\t'{first}" in fast


@pytest.mark.parametrize(
    ("qrels", "run", "args"),
    [
        ("1 0 a 1\n1 0 a 0\n", "1 Q0 a 1 1 t\n", []),  # a document judged twice
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n1 Q0 a 2 0.5 t\n", []),  # retrieved twice
        ("1 0 a 1.5\n1 0 b 1\n", "1 Q0 a 1 1 t\n1 Q0 b 1 2 t\n", []),  # a fractional label
        ("1 0 a 1\n", "1 Q0 a 1 nan t\n1 Q0 b 1 2 t\n", []),  # a NaN score
        ("1 0 a 1\n\n", "1 Q0 a 1 1 t\n", []),  # a blank qrels line
        ("1 0 a 1\n", "1 Q0 a 1\n", []),  # a short run line
        ("1 0 a 1\n", "2 Q0 a 1 1 t\n", []),  # no topic in common
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-m", "ndcg.1=inf"]),  # a gain not finite
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-m", "utility.1,2"]),  # utility's 4 values
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-m", "nosuch"]),
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-m", "Rprec_mult.1e300"]),  # Python's int()
        ("1 0 a 1\n", "1 Q0 a 1 1 t\n", ["-m", "all_prefs", "-R", "qrels_prefs"]),
        # -l -1 counts unjudged documents as relevant while a topic judged only negative
        # has no relevant one: map divides by zero (the Python engine's ZeroDivisionError)
        ("1 0 a -1\n", "1 Q0 b 1 1 t\n", ["-l", "-1"]),
    ],
)
def test_what_the_fast_path_leaves_to_the_python_engine(
    qrels: str, run: str, args: list[str], tmp_path: Path
) -> None:
    q = tmp_path / "q"
    r = tmp_path / "r"
    q.write_text(qrels)
    r.write_text(run)
    fast, slow = _both(9, args, str(q), str(r))
    assert fast == slow
    try:
        taken = _taken(9, args, str(q), str(r))
    except TrecEvalError:
        taken = False
    assert not taken


def test_the_kernels_cover_all_trec() -> None:
    covered = set(CODES) | {"runid", "relstring"}
    assert set(NICKNAMES["all_trec"]) <= covered


@pytest.mark.slow
def test_command_line_takes_the_fast_path_from_4_mb(tmp_path: Path) -> None:
    """Through the command line, files above FAST_MIN_BYTES (long document names, topics
    split over the file): the Python engine's bytes on stdout."""
    import subprocess
    import sys

    from ndcglab.treceval._run import FAST_MIN_BYTES

    rng = random.Random(7)
    qrels: list[str] = []
    run: list[str] = []
    for q in range(520):
        for k in range(120):
            name = f"clueweb09-en{q:04d}-{k:02d}-{'z' * (k % 4)}"
            if rng.random() < 0.7:
                qrels.append(f"{q} 0 {name} {rng.choice([0, 0, 1, 2, 3, -1])}")
            run.append(f"{q} Q0 {name} {k} {rng.randint(0, 50) / 7:.4f} a-run-tag-{q % 3}")
    rng.shuffle(run)
    q = tmp_path / "qrels"
    r = tmp_path / "run"
    q.write_text("\n".join(qrels) + "\n")
    r.write_text("\n".join(run) + "\n")
    assert q.stat().st_size + r.stat().st_size >= FAST_MIN_BYTES
    args = ["-q", "-c", "-m", "all_trec", str(q), str(r)]
    assert _taken(9, args[:-2], str(q), str(r))
    out = subprocess.run(
        [sys.executable, "-m", "ndcglab", "trec_eval", *args], capture_output=True, check=True
    )
    want = evaluate_files(parse_command_line(args).options, str(q), str(r), fast=False)
    assert out.stdout == want.encode("latin-1")


def test_yaap_domain_error_left_to_the_python_engine(tmp_path: Path) -> None:
    """-l -1 counts unpooled documents as relevant: yaap's ratio can fall below 0, where
    C's log gives NaN (printed -nan) and Python's math.log raises (the fast path then leaves
    the topic to the Python engine, which prints what C prints). The ratio here:
    (1 + 9) / (1 + 1 - 9) < 0."""
    q = tmp_path / "q"
    r = tmp_path / "r"
    q.write_text("1 0 a 1\n")
    r.write_text("".join(f"1 Q0 d{k} {k} {100 - k} t\n" for k in range(8)) + "1 Q0 a 9 1 t\n")
    fast, slow = _both(9, ["-l", "-1", "-m", "yaap"], str(q), str(r))
    assert fast == slow == "yaap                  \tall\t  -nan\n"
    assert not _taken(9, ["-l", "-1", "-m", "yaap"], str(q), str(r))
