"""``ndcglab trec_eval``: one test per rule of trec_eval's source (docs/trec_eval_cli.md).

No trec_eval binary is needed: each expected value is worked out by hand from the rule, which is
written next to it. (test_trec_eval_quicktest.py diffs against trec_eval's own test suite and
binaries when they are given.)
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from ndcglab.treceval import TrecEvalError, run_trec_eval


def _files(tmp: Path, qrels: str, run: str) -> tuple[str, str]:
    q = tmp / "qrels"
    r = tmp / "run"
    q.write_text(qrels)
    r.write_text(run)
    return str(q), str(r)


def _lines(text: str) -> list[tuple[str, str, str]]:
    return [tuple(line.split("\t")) for line in text.splitlines()]  # type: ignore[misc]


def _values(text: str, qid: str = "all") -> dict[str, str]:
    return {n.strip(): v for n, q, v in _lines(text) if q == qid}


# one topic, four retrieved documents; d1 and d3 relevant (1 and 2), d2 judged 0, d4 unjudged
QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n1 0 d5 1\n"
RUN = "1 Q0 d1 1 0.9 tagA\n1 Q0 d2 2 0.8 tagA\n1 Q0 d3 3 0.7 tagA\n1 Q0 d4 4 0.6 tagB\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    return _files(tmp_path, QRELS, RUN)


def test_line_layout_and_runid_from_the_last_run_line(files: tuple[str, str]) -> None:
    # "%-22s\t%s\t%6.4f": the name padded to 22, tab, topic, tab, 4 decimals; counts "%ld";
    # runid is the run-id field of the run's last line (tagB), not the file name
    out = run_trec_eval(["-m", "map", "-m", "num_ret", *files])
    assert out == ("num_ret               \tall\t4\nmap                   \tall\t0.5556\n")
    out = run_trec_eval(["-m", "runid", *files])
    assert out == "runid                 \tall\ttagB\n"


def test_map_by_hand(files: tuple[str, str]) -> None:
    # relevant at ranks 1 and 3 of R = 3 judged relevant (d5 never retrieved):
    # AP = (1/1 + 2/3) / 3 = 0.5556; here the ranking is d1 d2 d3 d4
    out = _values(run_trec_eval(["-m", "map", *files]))
    assert out["map"] == f"{(1 + 2 / 3) / 3:6.4f}"


def test_q_layout_order_and_no_per_topic_gm_map(tmp_path: Path) -> None:
    # -q prints each topic's lines (topics sorted as strings) in trec_eval's table order, then
    # the 'all' lines; gm_map and gm_bpref have no per-topic line; cut-offs print sorted
    q, r = _files(
        tmp_path,
        "2 0 a 1\n10 0 a 1\n",
        "2 Q0 a 1 1 t\n10 Q0 a 1 1 t\n",
    )
    out = run_trec_eval(["-q", "-m", "P.10,5", "-m", "gm_map", "-m", "map", q, r])
    rows = [(n.strip(), qid) for n, qid, _ in _lines(out)]
    assert rows == [
        ("map", "10"), ("P_5", "10"), ("P_10", "10"),
        ("map", "2"), ("P_5", "2"), ("P_10", "2"),
        ("map", "all"), ("gm_map", "all"), ("P_5", "all"), ("P_10", "all"),
    ]  # fmt: skip


def test_cutoffs_sorted_and_read_with_atol(files: tuple[str, str]) -> None:
    # -m ndcg_cut.10,20,23.4: atol("23.4") = 23; cut-offs sorted ascending
    out = _values(run_trec_eval(["-m", "ndcg_cut.20,23.4,10", *files]))
    assert list(out) == ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]


def test_recall_alone_is_recall_at_trec_evals_cutoffs(files: tuple[str, str]) -> None:
    # -m recall: the default cut-offs 5,10,15,20,30,100,200,500,1000; 2 of R=3 retrieved
    out = _values(run_trec_eval(["-m", "recall", *files]))
    assert list(out) == [f"recall_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    assert set(out.values()) == {f"{2 / 3:6.4f}"}


def test_parameter_syntax(files: tuple[str, str]) -> None:
    out = _values(
        run_trec_eval(
            [
                "-m", "11pt_avg..25,.5,.75",  # name + '_' + the text as typed
                "-m", "ndcg.1=3,2=9,4=4.5",  # level=gain pairs
                "-m", "Rprec_mult.5.0,0.2,0.35",  # sorted, '%3.2f'
                "-m", "utility.2,-1,0,0",
                "-m", "relstring.20",
                "-m", "success.2,5,20",
                "-m", "iprec_at_recall..10,.50",
                *files,
            ]
        )
    )  # fmt: skip
    assert list(out) == [
        "iprec_at_recall_0.10",
        "iprec_at_recall_0.50",
        "Rprec_mult_0.20",
        "Rprec_mult_0.35",
        "Rprec_mult_5.00",
        "utility_2,-1,0,0",
        "11pt_avg_.25,.5,.75",
        "ndcg_1=3,2=9,4=4.5",
        "success_2",
        "success_5",
        "success_20",
    ]  # fmt: skip  (relstring prints per topic only)
    # utility = 2 * rel_ret - 1 * nonrel_ret = 2*2 - 1*2 = 2
    assert out["utility_2,-1,0,0"] == "2.0000"
    # ndcg with gains {1: 3, 2: 9}: DCG = 3/log2(2) + 9/log2(4) = 7.5; ideal: 9, 3, 3 ->
    # 9/1 + 3/log2(3) + 3/2
    ideal = 9 + 3 / math.log2(3) + 3 / 2
    assert out["ndcg_1=3,2=9,4=4.5"] == f"{7.5 / ideal:6.4f}"
    # success_k: a relevant document within the first k
    assert out["success_2"] == "1.0000"


def test_rbp_trec_eval_10_default_p_and_parameter(files: tuple[str, str]) -> None:
    # trec_eval 10: p = 0.9 by default; levels 0..2 have a gain above 1, so gains are rescaled
    # to level / 2: RBP = (1 - p) * (0.5 * p^0 + 1.0 * p^2)
    v10 = ["--trec-eval-version", "10"]
    out = _values(run_trec_eval([*v10, "-m", "rbp", *files]))
    assert out["rbp"] == f"{0.1 * (0.5 + 0.81):6.4f}"
    out = _values(run_trec_eval([*v10, "-m", "rbp.p=0.5", *files]))
    assert out["rbp_p=0.5"] == f"{0.5 * (0.5 + 0.25):6.4f}"
    # rbp_resid: the weight of the unjudged document d4 at rank 4, plus what lies past the
    # ranking: p^4 + (1 - p) p^3
    out = _values(run_trec_eval([*v10, "-m", "rbp_resid", *files]))
    assert out["rbp_resid"] == f"{0.9**4 + 0.1 * 0.9**3:6.4f}"


def test_all_trec_names_trec_eval_10s_measures(files: tuple[str, str]) -> None:
    # trec_eval 10's all_trec adds unj (5, 10, 20), rbp and rbp_resid, in its table order
    names10 = list(_values(run_trec_eval(["--trec-eval-version", "10", "-m", "all_trec", *files])))
    names9 = list(_values(run_trec_eval(["-m", "all_trec", *files])))
    assert set(names10) - set(names9) == {"unj_5", "unj_10", "unj_20", "rbp", "rbp_resid"}
    assert names10.index("rbp") > names10.index("yaap" if "yaap" in names10 else "set_F")
    # unj_5: one of the first 5 (d4) is unjudged, the ranking is padded: 1/5
    out = _values(run_trec_eval(["--trec-eval-version", "10", "-m", "unj", *files]))
    assert out["unj_5"] == "0.2000"
    with pytest.raises(TrecEvalError, match="trec-eval-version 10"):
        run_trec_eval(["-m", "rbp", *files])


def test_num_rel_under_c_counts_every_positive_qrels_line(tmp_path: Path) -> None:
    # -c: the 'all' num_rel counts every qrels line with relevance > 0 in the file, whatever
    # -l and whatever topics are evaluated: here 1 + 2 (topic 2 is not in the run) = 3 lines
    # with relevance > 0, while -l 2 leaves topic 1 with one relevant document
    q, r = _files(tmp_path, "1 0 a 1\n1 0 b 2\n2 0 c 1\n2 0 d 3\n", "1 Q0 a 1 1 t\n")
    assert _values(run_trec_eval(["-c", "-l", "2", "-m", "num_rel", q, r])) == {"num_rel": "4"}
    assert _values(run_trec_eval(["-l", "2", "-m", "num_rel", q, r])) == {"num_rel": "1"}


def test_c_averages_over_every_judged_topic_9_and_10(tmp_path: Path) -> None:
    # topic 1: AP = 1; topic 2 missing from the run. trec_eval 9 -c: mean over 2 topics = 0.5,
    # no line for topic 2; trec_eval 10 -c: topic 2 is scored against one unjudged document
    # (AP 0) and printed, with num_ret reset to 0
    q, r = _files(tmp_path, "1 0 a 1\n2 0 c 1\n", "1 Q0 a 1 1 t\n")
    out9 = run_trec_eval(["-c", "-q", "-m", "map", "-m", "num_ret", q, r])
    assert _values(out9)["map"] == "0.5000"
    assert "\t2\t" not in out9
    out10 = run_trec_eval(["--trec-eval-version", "10", "-c", "-q", "-m", "map", "-m",
                           "num_ret", q, r])  # fmt: skip
    assert _values(out10, "2") == {"num_ret": "0", "map": "0.0000"}
    assert _values(out10)["map"] == "0.5000"
    # trec_eval 10 without -c refuses a judged topic missing from the run (exit status 4)
    with pytest.raises(TrecEvalError) as e:
        run_trec_eval(["--trec-eval-version", "10", "-m", "map", q, r])
    assert e.value.status == 4


def test_gm_map_floor_and_c(tmp_path: Path) -> None:
    # gm_map = exp(mean(log(max(AP, 1e-5)))); under -c a missing topic counts log(1e-5)
    q, r = _files(tmp_path, "1 0 a 1\n2 0 c 1\n", "1 Q0 a 1 1 t\n1 Q0 b 2 0.5 t\n")
    assert _values(run_trec_eval(["-m", "gm_map", q, r]))["gm_map"] == "1.0000"
    want = math.exp((math.log(1.0) + math.log(1e-5)) / 2)
    assert _values(run_trec_eval(["-c", "-m", "gm_map", q, r]))["gm_map"] == f"{want:6.4f}"


def test_fractional_labels_read_with_atol(tmp_path: Path) -> None:
    # trec_eval reads relevance with atol: 1.5 -> 1, 0.5 -> 0 (not relevant), 2.9 -> 2
    q, r = _files(
        tmp_path, "1 0 a 0.5\n1 0 b 1.5\n1 0 c 2.9\n", "1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 c 3 1 t\n"
    )
    out = _values(run_trec_eval(["-m", "num_rel", "-m", "map", "-m", "relstring", "-q", q, r],),
                  "1")  # fmt: skip
    assert out["num_rel"] == "2"
    assert out["relstring"] == "'012'"
    # -l 1.5 is atol("1.5") = -l 1
    assert run_trec_eval(["-l", "1.5", "-m", "map", q, r]) == run_trec_eval(
        ["-l", "1", "-m", "map", q, r]
    )


def test_fractional_labels_warn_on_the_command_line(tmp_path: Path) -> None:
    q, r = _files(tmp_path, "1 0 a 1.5\n", "1 Q0 a 1 3 t\n")
    out = subprocess.run(
        [sys.executable, "-m", "ndcglab", "trec_eval", "-m", "map", q, r],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout == "map                   \tall\t1.0000\n"
    assert "'1.5' read as 1" in out.stderr
    assert out.stderr.count("\n") == 1


def test_ties_docno_descending_and_score_precision(tmp_path: Path) -> None:
    # equal scores: document names descending (b before a); trec_eval 9 keeps scores as C float
    # (1 and 1 + 1e-9 tie), trec_eval 10 as double (they do not)
    q, r = _files(tmp_path, "1 0 a 1\n1 0 b 0\n", "1 Q0 a 1 1 t\n1 Q0 b 2 1 t\n")
    assert _values(run_trec_eval(["-m", "recip_rank", q, r]))["recip_rank"] == "0.5000"
    q, r = _files(tmp_path, "1 0 a 1\n1 0 b 0\n", "1 Q0 a 1 1.000000001 t\n1 Q0 b 2 1 t\n")
    assert _values(run_trec_eval(["-m", "recip_rank", q, r]))["recip_rank"] == "0.5000"
    out = run_trec_eval(["--trec-eval-version", "10", "-m", "recip_rank", q, r])
    assert _values(out)["recip_rank"] == "1.0000"


def test_max_docs_and_judged_only(files: tuple[str, str]) -> None:
    # -M 2: ranking d1 d2 -> P_5 = 1/5; -J drops the unjudged d4 (num_ret 3)
    assert _values(run_trec_eval(["-M", "2", "-m", "P.5", *files]))["P_5"] == "0.2000"
    assert _values(run_trec_eval(["-J", "-m", "num_ret", *files]))["num_ret"] == "3"


def test_bpref_and_infap_by_hand(files: tuple[str, str]) -> None:
    # bpref: R = 3, one judged nonrelevant (N = 1); d1 (no nonrel above) 1, d3 (1 nonrel
    # above): 1 - min(1, 3) / min(1, 3) = 0 -> (1 + 0) / 3
    out = _values(run_trec_eval(["-m", "bpref", "-m", "infAP", *files]))
    assert out["bpref"] == f"{1 / 3:6.4f}"
    # infAP: rank 1 relevant: 1; rank 3 (j = 2, one relevant and one nonrelevant above):
    # 1/3 + (2/3) * (2/2) * ((1 + 1e-5) / (1 + 1 + 2e-5)); divided by R = 3
    e = 0.00001
    inf_ap = (1 + 1 / 3 + (2 / 3) * (2 / 2) * ((1 + e) / (1 + 1 + 2 * e))) / 3
    assert out["infAP"] == f"{inf_ap:6.4f}"


def test_zscores(tmp_path: Path, files: tuple[str, str]) -> None:
    # -Z: value -> (value - mean) / sd from the file's (topic, measure) line; a measure or topic
    # missing from the file gives -1000000; names get a 'Z' in front, counts print "%6.4f"
    z = tmp_path / "z"
    z.write_text("1 map 0.5 0.25\n1 num_ret 2 0\n")
    out = run_trec_eval(["-q", "-Z", str(z), "-m", "map", "-m", "num_ret", "-m", "P.5", *files])
    got = {(n, qid): v for n, qid, v in _lines(out)}
    ap = (1 + 2 / 3) / 3
    assert got[(f"Z{'map':<22s}", "1")] == f"{(ap - 0.5) / 0.25:6.4f}"
    assert got[(f"Z{'num_ret':<22s}", "1")] == "-1000000.0000"  # sd 0, value off the mean
    assert got[(f"Z{'P_5':<22s}", "1")] == "-1000000.0000"


def test_relstring_characters(tmp_path: Path) -> None:
    # relstring: the level of each ranked document (0-9, '>' above 9), '-' not in the qrels,
    # '.' judged negative; 10 documents by default
    q, r = _files(tmp_path, "1 0 a 12\n1 0 b -1\n1 0 c 3\n", "".join(
        f"1 Q0 {d} {i} {10 - i} t\n" for i, d in enumerate("abcdxyzwvut")))  # fmt: skip
    out = run_trec_eval(["-q", "-m", "relstring", q, r])
    assert out == "relstring             \t1\t'>.3-------'\n"


def test_qrels_judgment_groups(tmp_path: Path) -> None:
    # -R qrels_jg: map_avgjg = mean over the groups of each group's AP; ranking a b
    # group g1: a relevant -> AP 1; group g2: b relevant -> AP 1/2
    q, r = _files(tmp_path, "1 g1 a 1\n1 g1 b 0\n1 g2 a 0\n1 g2 b 1\n",
                  "1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n")  # fmt: skip
    out = _values(run_trec_eval(["-R", "qrels_jg", "-m", "map_avgjg", q, r]))
    assert out["map_avgjg"] == "0.7500"


def test_preferences_equivalence_classes(tmp_path: Path) -> None:
    # -R qrels_prefs: one group; a (level 2) > b (level 1) > c (level 0): 3 preferences.
    # Ranking c a (b not retrieved): a>c fulfilled (both retrieved, a below c? no: c is first
    # -> not fulfilled), a>b fulfilled (a retrieved, b not: implied), b>c possible but not
    # fulfilled. prefs_simp = fulfilled / possible = 1 / 3
    q, r = _files(tmp_path, "1 0 a 2\n1 0 b 1\n1 0 c 0\n", "1 Q0 c 1 2 t\n1 Q0 a 2 1 t\n")
    out = _values(run_trec_eval(["-R", "qrels_prefs", "-m", "prefs_simp", "-m",
                                 "prefs_num_prefs_poss", q, r]))  # fmt: skip
    assert out == {"prefs_num_prefs_poss": "3", "prefs_simp": "0.3333"}


@pytest.mark.parametrize(
    ("argv", "status", "text"),
    [
        (["-m", "nosuch"], 1, "illegal measure 'nosuch'"),
        (["-m", "P."], 1, "nothing after the dot"),
        (["-m", "P.0,5"], 2, "cut-off"),
        (["-m", "ndcg.1=3,,2=4"], 2, "malformed pair parameters"),
        (["-R", "nosuch"], 2, "illegal rel_format"),
        (["-x"], 1, "unknown option '-x'"),
        (["-M", "-5"], 1, "negative number of documents"),  # trec_eval itself crashes
    ],
)
def test_errors_one_line_and_trec_evals_status(
    files: tuple[str, str], argv: list[str], status: int, text: str
) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ndcglab", "trec_eval", *argv, *files],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == status
    assert out.stdout == ""
    assert out.stderr.startswith("ndcglab: error: ") and text in out.stderr
    assert out.stderr.count("\n") == 1 and "Fix:" in out.stderr


def test_files_refused(tmp_path: Path) -> None:
    q, r = _files(tmp_path, "1 0 a 1\n", "1 Q0 a 1 1 t\n1 Q0 a 2 1 t\n")
    with pytest.raises(TrecEvalError, match="duplicate docs a") as e:
        run_trec_eval([q, r])
    assert e.value.status == 4
    q, r = _files(tmp_path, "1 0 a 1\n", "2 Q0 a 1 1 t\n")
    with pytest.raises(TrecEvalError, match="no topic") as e:
        run_trec_eval([q, r])
    assert e.value.status == 7
    q, r = _files(tmp_path, "1 0 a\n", "1 Q0 a 1 1 t\n")
    with pytest.raises(TrecEvalError, match=r"qrels:1"):
        run_trec_eval([q, r])
    q, r = _files(tmp_path, "1 0 a 1\n", "1 Q0 a 1 1 t\n")
    with pytest.raises(TrecEvalError, match="cannot read"):
        run_trec_eval([q, str(tmp_path / "missing")])


def test_preference_conflicts_refused(tmp_path: Path) -> None:
    # within one judgment group a document cannot be both relevant and nonrelevant (two
    # subgroups giving it 0 and 2), as trec_eval refuses it (exit status 4)
    q = tmp_path / "prefs"
    q.write_text("1 g s1 a 2\n1 g s1 b 0\n1 g s2 a 0\n1 g s2 b 1\n")
    r = tmp_path / "run"
    r.write_text("1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n")
    with pytest.raises(TrecEvalError, match="both relevant and nonrelevant") as e:
        run_trec_eval(["-R", "prefs", "-m", "prefs_simp", str(q), str(r)])
    assert e.value.status == 4


def test_run_from_stdin_under_trec_eval_10(files: tuple[str, str]) -> None:
    # trec_eval 10 reads a run named '-' from the standard input
    q, r = files
    out = subprocess.run(
        [sys.executable, "-m", "ndcglab", "trec_eval", "--trec-eval-version", "10", "-m",
         "map", q, "-"],
        input=Path(r).read_bytes(), capture_output=True, check=True,
    )  # fmt: skip
    assert out.stdout.decode() == run_trec_eval(["--trec-eval-version", "10", "-m", "map", q, r])


def test_getopt_forms(files: tuple[str, str]) -> None:
    # attached values, grouped flags, long options and their prefixes, options after files
    a = run_trec_eval(["-qc", "-mP.5", "-M100", *files])
    b = run_trec_eval([files[0], "--query_eval_wanted", "-c", "--meas=P.5", files[1],
                       "--Max_retrieved_per_topic", "100"])  # fmt: skip
    assert a == b
    assert "P_5" in a


def test_10_stops_at_a_judged_topic_the_run_lacks_after_printing_earlier_q_lines(
    tmp_path: Path,
) -> None:
    """trec_eval 10 without -c walks the qrels' topics; at one the run lacks it stops (exit
    status 4) — after printing the -q lines of the topics before it (C's exit flushes them)."""
    q, r = _files(tmp_path, "q1 0 d1 1\nq2 0 d1 1\nq3 0 d1 1\n", "q1 Q0 d1 1 1 t\nq3 Q0 d1 1 1 t\n")
    out = subprocess.run(
        [sys.executable, "-m", "ndcglab", "trec_eval", "--trec-eval-version", "10", "-q",
         "-m", "map", q, r],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 4
    assert out.stdout == "map                   \tq1\t1.0000\n"
    (line,) = out.stderr.splitlines()
    assert line.startswith("ndcglab: error: topic q2 ") and "Fix:" in line
    with pytest.raises(TrecEvalError) as err:  # the library says what was printed, too
        run_trec_eval(["--trec-eval-version", "10", "-m", "map", q, r])
    assert err.value.status == 4 and err.value.output == ""  # no -q: nothing printed
