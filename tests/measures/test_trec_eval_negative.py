"""``ndcglab trec_eval`` on topics whose qrels labels are all negative, and under ``-l`` 0 or
less (docs/trec_eval_cli.md, "Topics with only negative labels").

The rules, from trec_eval's ``form_res_rels.c`` and ``utility_pool.c``: per topic the buffer of
level counts is sized ``max_rel + 1`` (``max_rel``: the topic's largest label) by
``te_chk_and_malloc``, which hands back the pointer it holds when the size asked is not above
the size it has — NULL before any allocation. So the first topic formed with ``max_rel`` < 0
cannot be evaluated ("Can't calculate measure", the first measure that forms the ranking, exit
status 4); a later one with ``max_rel`` = -1 keeps the previous topic's counts (a memset of 0
bytes, and nothing counted); a later one with ``max_rel`` <= -2 runs memset with a negative
size (trec_eval crashes). Under ``-l`` 0 or less the measures count unpooled (-1) and, under
``-l -2``, unjudged (-2) documents as relevant while ``num_rel`` counts judged ones only, and C
divides by 0 to inf and takes the log of a negative number to NaN (glibc prints ``-nan``).

Each expected value is worked out by hand from those rules; the last tests diff the same cases
against trec_eval's binaries when ``NDCGLAB_TREC_EVAL_BIN`` / ``NDCGLAB_TREC_EVAL10_BIN`` name
them (and skip otherwise).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ndcglab.treceval import TrecEvalError, evaluate_files, parse_command_line, run_trec_eval
from ndcglab.treceval._fast import evaluate_fast
from ndcglab.treceval._ranking import NONPOOL, UNJUDGED, LevelsMemory, form_res_rels
from ndcglab.treceval._readers import JudgedTopic, RunTopic
from ndcglab.treceval._run import _mark

RUN = "".join(f"{q} Q0 d{i} {i} {4 - i} r\n" for q in ("q1", "q2") for i in (1, 2, 3))
# the run ranks d1 d2 d3 in both topics (scores 3, 2, 1)

CASES = {
    "first_-2": "q1 0 d1 -2\nq2 0 d1 1\nq2 0 d2 0\n",
    "first_-1": "q1 0 d1 -1\nq2 0 d1 1\nq2 0 d2 0\n",
    "later_-1": "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 -1\n",
    "later_-2": "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 -2\nq2 0 d2 -3\n",
}


def _files(tmp: Path, qrels: str, run: str = RUN) -> tuple[str, str]:
    q = tmp / "qrels"
    r = tmp / "run"
    q.write_text(qrels)
    r.write_text(run)
    return str(q), str(r)


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab", "trec_eval", *args], capture_output=True, timeout=120
    )


def _values(text: str, qid: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        name, q, value = line.split("\t")
        if q == qid:
            out[name.strip()] = value
    return out


VERSIONS = [[], ["--trec-eval-version", "10"]]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", ["first_-2", "first_-1"])
@pytest.mark.parametrize(
    ("measures", "named"),
    [
        ([], "num_ret"),  # the default set: runid and num_q form no ranking, num_ret does
        (["-q", "-m", "num_q", "-m", "map"], "map"),
        (["-c", "-m", "P.5"], "P"),  # the measure's name, not its printed name P_5
        (["-l", "-1", "-m", "yaap"], "yaap"),
    ],
)
def test_first_topic_all_negative_is_refused_naming_the_measure(
    tmp_path: Path, version: list[str], case: str, measures: list[str], named: str
) -> None:
    q, r = _files(tmp_path, CASES[case])
    p = _cli(*version, *measures, q, r)
    assert p.returncode == 4
    assert p.stdout == b""  # nothing printed before the first topic
    err = p.stderr.decode().splitlines()
    assert len(err) == 1 and err[0].startswith("ndcglab: error: ")
    assert f"'{named}'" in err[0] and "topic q1" in err[0] and q in err[0]
    assert "Fix:" in err[0] and "Traceback" not in p.stderr.decode()


def test_no_measure_forming_the_ranking_no_refusal(tmp_path: Path) -> None:
    # num_q never forms the ranking: both topics counted, nothing refused
    q, r = _files(tmp_path, CASES["first_-2"])
    assert run_trec_eval(["-m", "num_q", q, r]) == "num_q                 \tall\t2\n"


def test_all_negative_topic_never_evaluated_is_no_refusal(tmp_path: Path) -> None:
    # trec_eval 9 evaluates the run's topics only: q1 (all negative) absent from the run is
    # never formed, q2 is the first topic (AP 1: d1 relevant at rank 1, R = 1)
    run = "".join(f"q2 Q0 d{i} {i} {4 - i} r\n" for i in (1, 2, 3))
    q, r = _files(tmp_path, CASES["first_-2"], run)
    assert run_trec_eval(["-m", "map", q, r]) == "map                   \tall\t1.0000\n"


@pytest.mark.parametrize("version", VERSIONS)
def test_later_topic_with_max_label_minus_2_refused_as_the_binary_crashes(
    tmp_path: Path, version: list[str]
) -> None:
    q, r = _files(tmp_path, CASES["later_-2"])
    p = _cli(*version, "-q", q, r)
    assert p.returncode == 1
    assert p.stdout == b""
    err = p.stderr.decode().splitlines()
    assert len(err) == 1 and err[0].startswith("ndcglab: error: ")
    assert "topic q2" in err[0] and "crashes" in err[0] and q in err[0] and "Fix:" in err[0]


@pytest.mark.parametrize("version", VERSIONS)
def test_later_topic_with_max_label_minus_1_is_evaluated(
    tmp_path: Path, version: list[str]
) -> None:
    # q2: d1 in the pool but unjudged, d2 d3 not in the pool; no judged document, num_rel 0:
    # every measure 0 but the counts of what was retrieved
    q, r = _files(tmp_path, CASES["later_-1"])
    out = _values(run_trec_eval([*version, "-q", "-m", "all_trec", q, r]), "q2")
    assert out["num_ret"] == "3" and out["num_rel"] == "0" and out["num_rel_ret"] == "0"
    assert out["map"] == out["ndcg"] == out["bpref"] == out["P_5"] == "0.0000"
    # relstring's letters: '.' in the pool but unjudged (d1), '-' not in the pool (d2, d3)
    assert out["relstring"] == "'.--'"


def test_minus_1_topic_keeps_the_previous_topics_level_counts() -> None:
    # the buffer as the previous topic left it: levels [1, 1] (one 0, one 1), two levels
    memory = LevelsMemory()
    run = RunTopic(b"q", [b"d1", b"d2", b"d3"], [3.0, 2.0, 1.0])
    kw = {"relevance_level": 1, "max_docs": 1000, "judged_only": False, "memory": memory}
    first = form_res_rels(JudgedTopic(b"q1", [b"d1", b"d2"], [1, 0]), run, **kw)  # type: ignore[arg-type]
    assert first.rel_levels == [1, 1] and first.num_rel_levels == 2 and first.num_rel == 1
    later = form_res_rels(JudgedTopic(b"q2", [b"d1"], [-1]), run, **kw)  # type: ignore[arg-type]
    assert later.rel_levels == [1, 1] and later.num_rel_levels == 2
    assert later.num_rel == 0 and later.rl == [UNJUDGED, NONPOOL, NONPOOL]
    # without the memory (the library's per-topic API) the levels are empty
    alone = form_res_rels(
        JudgedTopic(b"q2", [b"d1"], [-1]), run, relevance_level=1, max_docs=1000,
        judged_only=False,
    )  # fmt: skip
    assert alone.rel_levels == [] and alone.num_rel_levels == 0


@pytest.mark.parametrize("version", VERSIONS)
def test_negative_l_divides_and_logs_as_c_does(tmp_path: Path, version: list[str]) -> None:
    # -l -1 on later_-1: q2 ranks d1 (unjudged, -2), d2 and d3 (unpooled, -1). Unpooled count
    # as relevant (-1 >= -1): relevant at ranks 2 and 3, AP's sum s = 1/2 + 2/3 = 7/6 over
    # num_rel = 0 -> inf; yaap = log((1 + s) / (1 + 0 - s)) = log(negative) -> -nan;
    # binG = (1/log2(3 + 1 - 1) + 1/log2(3 + 2 - 2)) / 0 -> inf; P_5 = 2/5; recip_rank 1/2
    q, r = _files(tmp_path, CASES["later_-1"])
    args = [*version, "-q", "-l", "-1", "-m", "map", "-m", "yaap", "-m", "binG"]
    out = run_trec_eval([*args, "-m", "P.5", "-m", "recip_rank", q, r])
    v = _values(out, "q2")
    assert v == {
        "map": "   inf", "yaap": "  -nan", "binG": "   inf", "P_5": "0.4000",
        "recip_rank": "0.5000",
    }  # fmt: skip
    # the mean over topics of an infinite value is infinite; of a NaN, NaN
    assert _values(out, "all")["map"] == "   inf"
    assert _values(out, "all")["yaap"] in ("  -nan", "   nan")
    # -l -2: d1 (unjudged) counts too: s = 1 + 1 + 1 = 3; yaap = log(4 / (1 - 3)) -> -nan
    v = _values(run_trec_eval([*version, "-q", "-l", "-2", "-m", "map", "-m", "yaap", q, r]), "q2")
    assert v == {"map": "   inf", "yaap": "  -nan"}


@pytest.mark.parametrize("fast", [True, False])
def test_both_engines_refuse_alike(tmp_path: Path, fast: bool) -> None:
    for case, status in (("first_-2", 4), ("later_-2", 1)):
        q, r = _files(tmp_path, CASES[case])
        opts = parse_command_line(["-m", "map", q, r]).options
        with pytest.raises(TrecEvalError) as info:
            evaluate_files(opts, q, r, fast=fast)
        assert info.value.status == status
    q, r = _files(tmp_path, CASES["later_-1"])
    opts = parse_command_line(["-l", "-1", "-q", "-m", "all_trec", q, r]).options
    assert evaluate_files(opts, q, r, fast=fast) == evaluate_files(opts, q, r, fast=not fast)
    # the fast path hands a topic with only negative labels to the Python engine
    opts = parse_command_line(["-m", "map", q, r]).options
    assert evaluate_fast(opts, q, r, _mark(opts)) is None


# ------------------------------------------------------------------ against the binaries


def _binaries() -> list[tuple[list[str], str]]:
    out = []
    ten = ["--trec-eval-version", "10"]
    for flag, var in (([], "NDCGLAB_TREC_EVAL_BIN"), (ten, "NDCGLAB_TREC_EVAL10_BIN")):
        value = os.environ.get(var)
        if value and Path(value).is_file():
            out.append((flag, value))
    return out


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize(
    "opts",
    [
        [], ["-q"], ["-c", "-q", "-m", "all_trec"], ["-l", "0", "-q", "-m", "all_trec"],
        ["-l", "-1", "-q", "-m", "all_trec"], ["-l", "-2", "-q", "-m", "all_trec"],
        ["-J", "-q", "-m", "ndcg", "-m", "bpref", "-m", "infAP"], ["-m", "num_q", "-m", "P.5"],
    ],
)  # fmt: skip
def test_against_the_binaries(tmp_path: Path, case: str, opts: list[str]) -> None:
    found = _binaries()
    if not found:
        pytest.skip("no trec_eval binary given (NDCGLAB_TREC_EVAL_BIN, NDCGLAB_TREC_EVAL10_BIN)")
    q, r = _files(tmp_path, CASES[case])
    for flag, binary in found:
        want = subprocess.run([binary, *opts, q, r], capture_output=True, timeout=60)
        got = _cli(*flag, *opts, q, r)
        if want.returncode < 0:  # the binary crashed: refused with one line
            assert got.returncode != 0 and b"crashes" in got.stderr
            continue
        assert got.stdout == want.stdout
        assert got.returncode == want.returncode
        if want.returncode:
            name = want.stderr.decode().split("'")[1]  # Can't calculate measure 'NAME'
            assert f"'{name}'".encode() in got.stderr
