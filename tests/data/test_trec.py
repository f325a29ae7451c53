"""TREC qrels/run readers and writers, checked against pytrec_eval where it helps."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ndcglab.data import (
    RankingDataset,
    dataset_to_qrels,
    document_names,
    make_synthetic,
    read_qrels,
    read_run,
    write_run,
)
from ndcglab.data.trec import read_trec
from ndcglab.errors import DataFormatError


def test_read_qrels_and_run(tmp_path):
    q = tmp_path / "qrels"
    q.write_text("101 0 d1 2\n101 0 d2 0\n\n102 0 d9 1\n")
    assert read_qrels(q) == {"101": {"d1": 2.0, "d2": 0.0}, "102": {"d9": 1.0}}
    assert read_qrels(q, integer=True)["101"]["d1"] == 2
    assert isinstance(read_qrels(q, integer=True)["101"]["d1"], int)
    r = tmp_path / "run"
    r.write_text("101 Q0 d2 1 3.5 x\n101 Q0 d1 2 -1e3 x\r\n102 Q0 d9 1 0 x\n")
    assert read_run(r) == {"101": {"d2": 3.5, "d1": -1000.0}, "102": {"d9": 0.0}}


@pytest.mark.parametrize(
    ("reader", "text", "line", "words"),
    [
        (read_qrels, "1 0 d1 1\n1 0 d2\n", 2, "expected 4"),
        (read_qrels, "1 0 d1 high\n", 1, "relevance is not"),
        (read_qrels, "1 0 d1 1\n1 0 d1 2\n", 2, "judged twice"),
        (read_run, "1 Q0 d1 1 0.5 t\n1 Q0 d2 2 0.4\n", 2, "expected 6"),
        (read_run, "1 Q0 d1 1 abc t\n", 1, "score is not"),
        (read_run, "1 Q0 d1 1 nan t\n", 1, "score is not"),
        (read_run, "1 Q0 d1 one 0.5 t\n", 1, "rank is not"),
        (read_run, "1 Q0 d1 1 0.5 t\n1 Q0 d1 2 0.4 t\n", 2, "twice"),
    ],
)
def test_trec_errors_name_file_and_line(tmp_path, reader, text, line, words):
    p = tmp_path / "f"
    p.write_text(text)
    with pytest.raises(DataFormatError) as e:
        reader(p)
    msg = str(e.value)
    assert e.value.line == line and f"{p}:{line}:" in msg and words in msg and "Fix:" in msg


def test_integer_qrels_reject_fractions(tmp_path):
    p = tmp_path / "q"
    p.write_text("1 0 d 1.5\n")
    with pytest.raises(DataFormatError, match="integer"):
        read_qrels(p, integer=True)


def test_write_run_round_trip_and_order(tmp_path):
    ds = RankingDataset.from_arrays(
        np.zeros((5, 1)), [1, 0, 2, 0, 1], qid=["a", "a", "a", "b", "b"],
        doc_ids=["x", "y", "z", "x", ""],
    )  # fmt: skip
    scores = [0.5, 0.5, 2.0, 0.1, 0.30000000000000004]
    p = tmp_path / "run.txt"
    write_run(p, ds, scores, tag="t1")
    lines = p.read_text().splitlines()
    assert lines[:3] == ["a Q0 z 1 2.0 t1", "a Q0 x 2 0.5 t1", "a Q0 y 3 0.5 t1"]
    assert lines[3] == "b Q0 b-1 1 0.30000000000000004 t1"  # missing doc id -> qid-position
    run = read_run(p)
    assert run == {"a": {"x": 0.5, "y": 0.5, "z": 2.0}, "b": {"x": 0.1, "b-1": 0.30000000000000004}}
    with pytest.raises(ValueError, match="tag"):
        write_run(p, ds, scores, tag="has space")
    with pytest.raises(DataFormatError):
        write_run(p, ds, scores[:4])


def test_document_names_are_unique_per_query():
    ds = RankingDataset.from_arrays(np.zeros((4, 1)), [0, 1, 0, 1], qid=[1, 1, 1, 2],
                                    doc_ids=["d", "d", "d", "d"])  # fmt: skip
    assert document_names(ds).tolist() == ["d", "d#2", "d#3", "d"]
    no_ids = RankingDataset.from_arrays(np.zeros((2, 1)), [0, 1], group=[2])
    assert document_names(no_ids).tolist() == ["0-0", "0-1"]


def test_qrels_and_run_agree_with_pytrec_eval(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    ds = make_synthetic("small", seed=2)
    scores = np.random.default_rng(0).standard_normal(ds.n_docs)
    qrels = dataset_to_qrels(ds, integer=True)
    assert dataset_to_qrels(ds)[ds.query_ids[0]] == {
        k: float(v) for k, v in qrels[ds.query_ids[0]].items()
    }
    write_run(tmp_path / "run", ds, scores)
    run = read_run(tmp_path / "run")
    got = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg"}).evaluate(run)
    # reference: NDCG (linear gain, log2 discount, as trec_eval) by a loop over each query
    for q in ds:
        s = scores[q.start : q.start + len(q)]
        g = q.labels[np.argsort(-s, kind="stable")]
        disc = 1 / np.log2(np.arange(2, len(g) + 2))
        ideal = np.sort(q.labels)[::-1]
        exp = (g * disc).sum() / (ideal * disc).sum() if ideal.sum() else 0.0
        assert got[q.query_id]["ndcg"] == pytest.approx(exp, abs=1e-12)


# ------------------------------------------------------------------ what trec_eval 10 reads
QRELS_WITH_COMMENTS = """# qrels of two topics
101 0 d1 2
101 0 d2 0
   # an indented comment
101 0 d3 1

102 0 d7 1
#102 0 d8 3   (a judgement commented out)
102 0 d9 0
"""

RUN_WITH_EXTRA_FIELDS = """# run with a notes column
101 Q0 d2 1 3.5 tag note-a
101 Q0 d1 2 3.5 tag note-b extra
101 Q0 d4 3 1.0 tag
# comment between lines
102 Q0 d9 1 0.25 tag 7 8 9
102 Q0 d7 2 0.25 tag
102 Q0 d8 3 0.0 tag x
103 Q0 d1 1 1.0 tag
"""


def _oracle_parse(text: str, fields: int) -> list[list[str]]:
    """The lines trec_eval 10 keeps: no blank or '#' lines, the first ``fields`` fields."""
    out = []
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#"):
            out.append(s.split()[:fields])
    return out


def test_comments_and_extra_run_fields_are_read(tmp_path):
    q = tmp_path / "qrels"
    q.write_text(QRELS_WITH_COMMENTS)
    r = tmp_path / "run"
    r.write_text(RUN_WITH_EXTRA_FIELDS)
    qrels = read_qrels(q)
    assert qrels == {"101": {"d1": 2.0, "d2": 0.0, "d3": 1.0}, "102": {"d7": 1.0, "d9": 0.0}}
    run = read_run(r)
    assert run == {
        "101": {"d2": 3.5, "d1": 3.5, "d4": 1.0},
        "102": {"d9": 0.25, "d7": 0.25, "d8": 0.0},
        "103": {"d1": 1.0},
    }
    # line numbers in errors still count the comment lines
    bad = tmp_path / "bad"
    bad.write_text("# header\n1 Q0 d1 1 0.5\n")
    with pytest.raises(DataFormatError) as e:
        read_run(bad)
    assert e.value.line == 2


def test_comments_and_extra_fields_agree_with_pytrec_eval(tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from ndcglab.measures import evaluate_trec

    rng = np.random.default_rng(3)
    qlines, rlines = ["# generated qrels"], ["# generated run, 8 fields per line"]
    for qi in range(12):
        docs = [f"D{qi}-{j}" for j in range(15)]
        for j, d in enumerate(docs[:10]):  # 5 unjudged documents per query
            qlines.append(f"q{qi} 0 {d} {int(rng.integers(0, 3))}")
            if j % 4 == 0:
                qlines.append(f"# comment after {d}")
        scores = rng.integers(0, 5, size=len(docs)) / 4  # many ties
        for rank, (d, s) in enumerate(zip(docs, scores), start=1):
            rlines.append(f"q{qi} Q0 {d} {rank} {float(s)!r} run extra-{rank} more")
    (tmp_path / "qrels").write_text("\n".join(qlines) + "\n")
    (tmp_path / "run").write_text("\n".join(rlines) + "\n")
    qrels = read_qrels(tmp_path / "qrels", integer=True)
    run = read_run(tmp_path / "run")
    oracle_q: dict = {}
    for qid, _, doc, rel in _oracle_parse("\n".join(qlines), 4):
        oracle_q.setdefault(qid, {})[doc] = int(rel)
    oracle_r: dict = {}
    for qid, _, doc, _, score, _ in _oracle_parse("\n".join(rlines), 6):
        oracle_r.setdefault(qid, {})[doc] = float(score)
    assert qrels == oracle_q and run == oracle_r
    names = {
        "ndcg": "ndcg",
        "ndcg_cut_5": "ndcg@5",
        "map": "map",
        "P_5": "p@5",
        "recip_rank": "mrr",
    }
    ref = pytrec_eval.RelevanceEvaluator(oracle_q, set(names)).evaluate(oracle_r)
    got = evaluate_trec(qrels, run, list(names.values()))
    for te, ours in names.items():
        for i, q in enumerate(got.query_ids):
            assert got.per_query[ours][i] == pytest.approx(ref[q][te], abs=1e-12), (te, q)


@pytest.mark.parametrize(
    ("reader", "text", "words"),
    [
        (read_qrels, "", "no judgement"),
        (read_qrels, "# only a comment\n\n", "no judgement"),
        (read_run, "", "no ranked document"),
        (read_run, "  \n# nothing here\n", "no ranked document"),
    ],
)
def test_empty_files_are_refused(tmp_path, reader, text, words):
    p = tmp_path / "empty"
    p.write_text(text)
    with pytest.raises(DataFormatError) as e:
        reader(p)
    assert str(p) in str(e.value) and words in str(e.value) and "Fix:" in str(e.value)
    assert reader(p, allow_empty=True) == {}


def test_read_trec_refuses_a_run_without_any_query_of_the_qrels(tmp_path):
    q = tmp_path / "qrels"
    q.write_text("101 0 d1 1\n")
    r = tmp_path / "run"
    r.write_text("201 Q0 d1 1 1.0 t\n")
    with pytest.raises(DataFormatError) as e:
        read_trec(q, r)
    msg = str(e.value)
    assert str(r) in msg and str(q) in msg and "'201'" in msg and "'101'" in msg
    r.write_text("201 Q0 d1 1 1.0 t\n101 Q0 d1 1 1.0 t\n")
    qrels, run = read_trec(q, r, integer=True)
    assert qrels == {"101": {"d1": 1}} and set(run) == {"101", "201"}


# ----------------------------------------------------------------------------- one-pass reader
def _well_formed(rng: np.random.Generator, kind: str) -> bytes:
    """A qrels or run file the one-pass reader must take: comment and blank lines, tabs and
    runs of blanks, CRLF or LF, extra run fields, queries in blocks (the first may come back
    after the others, with other documents; query ids that are prefixes of others, and one
    longer than the fixed-width buffers)."""
    names = ["7", "71", "710", "17", "q" + "7" * 70]
    lines = []
    nl = "\r\n" if rng.random() < 0.3 else "\n"
    queries = list(rng.permutation(5)[: rng.integers(1, 6)])
    if rng.random() < 0.5:
        queries.append(queries[0])
    for b, q in enumerate(queries):
        for d in rng.permutation(40)[: rng.integers(1, 12)] + 100 * b:
            sep = [" ", "\t", "  ", " \t "][int(rng.integers(4))]
            if kind == "qrels":
                fields = [names[q], "0", f"doc-{d}", str(int(rng.integers(-1, 4)))]
            else:
                fields = [names[q], "Q0", f"doc-{d}", str(int(rng.integers(1, 99))),
                          f"{rng.normal():.{int(rng.integers(1, 9))}g}", "tag"]  # fmt: skip
                fields += ["note"] * int(rng.integers(0, 2))
            lines.append(" " * int(rng.integers(0, 2)) + sep.join(fields))
        if rng.random() < 0.3:
            lines.append("# a comment line" if rng.random() < 0.5 else "   ")
    return (nl.join(lines) + (nl if rng.random() < 0.8 else "")).encode()


@pytest.mark.parametrize("chunk", [None, 3])
@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_the_one_pass_reader_equals_the_line_reader(tmp_path, monkeypatch, kind, chunk):
    """Every well-formed file is read in one pass, and to the same dict as line by line (also
    with columns converted 3 lines at a time, so query runs cross the chunks' edges)."""
    from ndcglab.data import trec

    if chunk is not None:
        monkeypatch.setattr(trec, "_CHUNK_ROWS", chunk)
    reader = {"qrels": read_qrels, "run": read_run}[kind]
    fast = {"qrels": lambda p: trec._read_qrels_fast(p, False), "run": trec._read_run_fast}[kind]
    rng = np.random.default_rng(11)
    path = tmp_path / f"{kind}.txt"
    for _ in range(150):
        path.write_bytes(_well_formed(rng, kind))
        one_pass = fast(path)
        assert one_pass is not None, path.read_bytes()[:300]
        with monkeypatch.context() as m:
            m.setattr(trec, f"_read_{kind}_fast", lambda *a: None)
            by_line = reader(path)
        assert list(one_pass) == list(by_line)
        for q in by_line:
            assert list(one_pass[q].items()) == list(by_line[q].items())
        # the runs of query ids: exact (no run cut in two, even at a chunk's edge)
        cols = trec._fast_columns(path, 4 if kind == "qrels" else 6, exact=kind == "qrels")
        assert cols is not None
        bounds, qids = cols.runs(0)
        every = [ln.split()[0] for ln in path.read_text().splitlines() if ln.split()]
        every = [q for q in every if not q.startswith("#")]
        assert [k for k, _ in itertools.groupby(every)] == qids
        assert [len(list(g)) for _, g in itertools.groupby(every)] == list(np.diff(bounds))


@pytest.mark.parametrize(
    "change",
    [
        None,  # every line six fields, the first at the line's start: the shortcut
        lambda ls: [*ls[:2], " " + ls[2], *ls[3:]],  # a leading blank
        lambda ls: [*ls[:2], ls[2] + " extra", *ls[3:]],  # a seventh field
        lambda ls: [*ls[:2], "# a comment of six words", *ls[2:]],  # six fields, a comment
        lambda ls: [*ls[:2], "#q9 Q0 d9 1 0.5 t", *ls[2:]],  # a run line commented out
        lambda ls: [*ls[:2], "", *ls[2:]],  # a blank line
        lambda ls: [*ls[:-1], ls[-1] + "\n"],  # a blank last line
        lambda ls: [*ls[:2], ls[2] + "\t", *ls[3:]],  # a trailing blank
    ],
)
@pytest.mark.parametrize("newline_at_end", [True, False])
def test_plain_run_files_and_near_misses_read_as_the_line_reader(
    tmp_path, monkeypatch, change, newline_at_end
):
    """The one-pass reader's shortcut (every line exactly the fields asked for, the first at
    the line's start, no comment line) and each way of leaving it give the line reader's
    dict."""
    from ndcglab.data import trec

    lines = [f"q{i // 4} Q0 d{i} {i % 4 + 1} {1 - i / 10:.2f} t" for i in range(12)]
    if change is not None:
        lines = change(lines)
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + ("\n" if newline_at_end else ""))
    one_pass = trec._read_run_fast(path)
    assert one_pass is not None
    with monkeypatch.context() as m:
        m.setattr(trec, "_read_run_fast", lambda *a: None)
        by_line = read_run(path)
    assert list(one_pass) == list(by_line)
    for q in by_line:
        assert list(one_pass[q].items()) == list(by_line[q].items())
    if change is None:  # the shortcut views the field table (no gather): it was taken
        cols = trec._fast_columns(path, 6, exact=False)
        assert cols is not None and cols.starts.base is not None


def test_fields_moved_between_lines_are_not_taken_for_plain_lines(tmp_path):
    """As many fields as plain lines would have, but one line with seven and one with five:
    the one-pass reader declines, and the line reader names the short line."""
    from ndcglab.data import trec

    lines = [f"q1 Q0 d{i} {i + 1} 0.5 t" for i in range(4)]
    lines[1] += " extra"
    lines[2] = lines[2].rsplit(" ", 1)[0]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    assert trec._read_run_fast(path) is None
    with pytest.raises(DataFormatError, match="5 fields, expected 6"):
        read_run(path)


@pytest.mark.parametrize("newline_at_end", [True, False])
def test_the_one_pass_reader_takes_odd_spellings_as_the_line_reader(
    tmp_path, monkeypatch, newline_at_end
):
    """Numbers in every spelling ``float``/``int`` take (exponents, signs, points at an end,
    underscores in ranks, 19+ digits), document names longer than the fixed-width buffers and a
    short name on the last line (bytes near the end of the file): the one-pass reader gives
    the line reader's dict, value types included."""
    from ndcglab.data import trec

    long = "clueweb09-en0000-00-" + "x" * 70
    run = (
        f"q1 Q0 d1 1 1e-3 t\nq1 Q0 {long} +3 +0.5 t\nq1 Q0 doc-22 007 .5 t x\n"
        "q1 Q0 d4 1_0 5. t\nq2 Q0 d5 -1 -0 t\nq2 Q0 d6 2 1E5 t\n"
        "q2 Q0 d7 3 0.1234567890123456789 t\nq2 Q0 d8 4 -12345678901234567890 t\n"
        "q3 Q0 z 9 2 t"
    )
    mid = "clueweb09-en0000-00-00001"  # fixed-width buffers; "z" ends within its width
    qrels = f"q1 0 {mid} 1\nq1 0 d1 2.0\nq2 0 d5 -1\nq2 0 {mid[:-1]} 3e0\nq3 0 z 1"
    for kind, text in (("run", run), ("qrels", qrels)):
        path = tmp_path / f"{kind}.txt"
        path.write_text(text + ("\n" if newline_at_end else ""))
        reader = {"qrels": read_qrels, "run": read_run}[kind]
        fast = {"qrels": lambda p: trec._read_qrels_fast(p, True), "run": trec._read_run_fast}
        one_pass = fast[kind](path)
        assert one_pass is not None
        with monkeypatch.context() as m:
            m.setattr(trec, f"_read_{kind}_fast", lambda *a: None)
            by_line = reader(path, integer=True) if kind == "qrels" else reader(path)
        assert list(one_pass) == list(by_line)
        for q in by_line:
            assert list(one_pass[q].items()) == list(by_line[q].items())
            for v, w in zip(one_pass[q].values(), by_line[q].values(), strict=True):
                assert type(v) is type(w) and repr(v) == repr(w)
    assert by_line["q1"][mid] == 1
