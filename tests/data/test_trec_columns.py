"""TREC files read as columns (:mod:`ndcglab.data.trec_columns`) against the dictionary readers:
the same pairs and values, and the same evaluation (:func:`ndcglab.measures.evaluate_trec`)
number for number; files the column reader cannot take fall back (``None``)."""

from __future__ import annotations

import gzip
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from ndcglab.data import read_qrels, read_run, read_trec
from ndcglab.data import trec_columns as tc
from ndcglab.data.trec_columns import TrecColumns, pair_hashes, read_trec_columns
from ndcglab.measures import evaluate_trec


def _files(tmp_path: Path, seed: int = 0, gz: bool = False) -> tuple[Path, Path]:
    """A qrels/run pair with what real files have: queries out of text order and split over the
    file, judged documents the run misses, run documents nobody judged, a query only in the
    run and one only in the qrels, negative and graded labels, tied scores, comments and blank
    lines, a seventh run field."""
    rng = np.random.default_rng(seed)
    qrels, run = ["# judgements\n"], []
    for q in (3, 10, 2, 1, 7):
        docs = [f"doc-{q}-{i:03d}" for i in range(int(rng.integers(5, 40)))]
        for d in docs:
            if rng.random() < 0.6:
                qrels.append(f"{q} 0 {d} {int(rng.integers(-1, 4))}\n")
        if q == 7:
            continue  # judged, never retrieved
        ranked = [d for d in docs if rng.random() < 0.8] + [f"new-{q}-{i}" for i in range(4)]
        scores = np.round(rng.random(len(ranked)), 1)  # ties
        half = len(ranked) // 2
        for part in (ranked[:half], ranked[half:]):
            run += [
                f"{q} Q0 {d} {r} {scores[ranked.index(d)]} tag note\n"
                for r, d in enumerate(part, 1)
            ]
            run.append("\n")
    run += ["99 Q0 lonely 1 1.5 tag\n", "# end\n"]
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    if gz:
        qp, rp = qp.with_suffix(".txt.gz"), rp.with_suffix(".txt.gz")
        qp.write_bytes(gzip.compress("".join(qrels).encode()))
        rp.write_bytes(gzip.compress("".join(run).encode()))
    else:
        qp.write_text("".join(qrels))
        rp.write_text("".join(run))
    return qp, rp


@pytest.fixture(autouse=True, params=["numpy", "compiled"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test with both readers and both joins of the run to the qrels: NumPy (short files)
    and the compiled kernels of :mod:`ndcglab.data._trec_scan` and
    :mod:`ndcglab.measures._trec_join` (long files; here every file)."""
    evaluate_module = sys.modules["ndcglab.measures.evaluate"]
    if request.param == "compiled":
        monkeypatch.setattr(tc, "COMPILED_MIN_LINES", 0)
        monkeypatch.setattr(evaluate_module, "_COMPILED_JOIN", 0)
    else:
        monkeypatch.setattr(evaluate_module, "_COMPILED_JOIN", 10**12)
        monkeypatch.setattr(evaluate_module, "_numba_loaded", lambda: False)
    return str(request.param)


@pytest.fixture(params=[False, True], ids=["plain", "gzip"])
def pair(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, Path]:
    return _files(tmp_path, gz=request.param)


def test_columns_hold_what_the_dictionary_readers_read(
    pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tc, "BLOCK_BYTES", 100)  # many blocks, lines cut at block ends
    got = read_trec_columns(*pair)
    assert got is not None
    qrels, run = got
    assert qrels.to_dict() == read_qrels(pair[0])
    assert run.to_dict() == read_run(pair[1])
    assert qrels.queries == sorted(qrels.queries)
    assert (np.diff(run.query) >= 0).all()  # each query's lines together, in sorted order


def test_large_files_are_sized_from_their_bytes_not_counted(
    pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = read_trec_columns(*pair)
    monkeypatch.setattr(tc, "BOUND_MIN_BYTES", 0)  # every plain file: arrays from its size
    bounded = read_trec_columns(*pair)
    assert counted is not None and bounded is not None
    for a, b in zip(counted, bounded, strict=True):
        assert a.queries == b.queries
        for col in ("query", "doc", "value"):
            assert np.array_equal(getattr(a, col), getattr(b, col)), col
    # the bound holds every data line a file of that size can have: fields of one byte
    tight = pair[0].with_name("tight.txt")
    tight.write_bytes(b"a b c 1\n" * 9 + b"a b d 2")
    assert tc._line_count(tight, 4) >= 10
    tight.write_bytes(b"1 Q0 d 1 2 t\n" * 9 + b"1 Q0 e 2 1 t")
    assert tc._line_count(tight, 6) >= 10


@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize(
    "measures", [None, ["all_trec"], ["ndcg_cut.10"], ["ndcg@5", "map", "bpref", "infap"]]
)
def test_evaluation_equals_the_dictionary_path(
    pair: tuple[Path, Path], measures: list[str] | None, complete: bool
) -> None:
    cols = read_trec_columns(*pair)
    assert cols is not None
    dicts = read_trec(*pair)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # all_trec names the measures it leaves out
        got = evaluate_trec(*cols, measures, complete=complete)
        want = evaluate_trec(*dicts, measures, complete=complete)
    assert list(got.query_ids) == list(want.query_ids)
    assert got.per_query.keys() == want.per_query.keys()
    for name, values in want.per_query.items():
        assert np.array_equal(got.per_query[name], values, equal_nan=True), name
    assert got.mean == want.mean
    assert got.convention == want.convention


@pytest.mark.parametrize(
    "options",
    [{"judged_only": True}, {"depth": 7}, {"preset": "trec_eval10", "complete": True}],
)
def test_cuts_and_stand_ins_take_the_dictionary_path(
    pair: tuple[Path, Path], options: dict[str, object]
) -> None:
    cols = read_trec_columns(*pair)
    assert cols is not None
    got = evaluate_trec(*cols, ["map", "ndcg@10"], **options)  # type: ignore[arg-type]
    want = evaluate_trec(*read_trec(*pair), ["map", "ndcg@10"], **options)  # type: ignore[arg-type]
    for name, values in want.per_query.items():
        assert np.array_equal(got.per_query[name], values), name


def test_files_the_column_reader_cannot_take_fall_back(tmp_path: Path) -> None:
    qp, rp = _files(tmp_path)
    run = rp.read_text()
    cases = {
        "repeat": run + "1 Q0 doc-1-000 9 0.5 tag\n" + run.splitlines(keepends=True)[0],
        "non-ascii": run + "1 Q0 d\u00e9j\u00e0 9 0.5 tag\n",
        "rank": run + "1 Q0 extra 1.5 0.5 tag\n",
        "score": run + "1 Q0 extra 9 nan tag\n",
        "short": run + "1 Q0 extra 9\n",
        "long": run + f"1 Q0 {'x' * 80} 9 0.5 tag\n",
        "empty": "# nothing\n",
    }
    for name, text in cases.items():
        bad = tmp_path / f"{name}.txt"
        bad.write_text(text)
        assert read_trec_columns(qp, bad) is None, name
    other = tmp_path / "other.txt"
    other.write_text("500 Q0 a 1 1.0 t\n")
    assert read_trec_columns(qp, other) is None  # no query in common: read_trec names it


def test_a_repeated_pair_is_found_among_equal_hashes(tmp_path: Path) -> None:
    """Two lines of one pair far apart in the file, and pairs that differ in the query only."""
    lines = [f"{q} Q0 d{i} {i} {i / 10} t\n" for q in (1, 2) for i in range(50)]
    p = tmp_path / "run.txt"
    p.write_text("".join(lines))
    assert tc._read(p, 6, False) is not None
    p.write_text("".join([*lines, "1 Q0 d7 99 0.3 t\n"]))
    assert tc._read(p, 6, False) is None


def test_pair_hashes_are_equal_for_equal_pairs_and_spread_otherwise() -> None:
    """(20,000 docnos in one query: 32-bit hashes collide with probability about 5%; this seed's
    do not.)"""
    doc = np.array([b"a", b"b", b"a", b"ab", b"ba"], dtype="S2")
    query = np.array([0, 0, 1, 0, 0], dtype=np.int32)
    h = pair_hashes(query, doc)
    assert len(set(h.tolist())) == 5
    assert (h >> np.uint64(32)).tolist() == query.tolist()  # the query in the high bits
    assert pair_hashes(query[2:3], doc[2:3].copy())[0] == h[2]  # equal pairs, equal hashes
    rng = np.random.default_rng(0)
    many = rng.integers(0, 2**31, 20_000).astype("S12")
    assert len(np.unique(pair_hashes(np.zeros(len(many), np.int32), many))) == len(np.unique(many))


def test_one_kind_of_input_at_a_time(pair: tuple[Path, Path]) -> None:
    from ndcglab.errors import ConventionError

    cols = read_trec_columns(*pair)
    assert cols is not None and isinstance(cols[0], TrecColumns)
    with pytest.raises(ConventionError, match="both dictionaries or both"):
        evaluate_trec(cols[0], read_run(pair[1]), ["map"])


def test_the_command_line_gives_the_dictionary_path_numbers(
    pair: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from ndcglab.cli.main import main

    assert main(["evaluate", "--qrels", str(pair[0]), "--run", str(pair[1]), "-m", "all_trec",
                 "--format", "json"]) == 0  # fmt: skip
    got = json.loads(capsys.readouterr().out)["mean"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = evaluate_trec(*read_trec(*pair), ["all_trec"]).mean
    assert got.keys() == want.keys()
    for name, value in want.items():
        assert got[name] == pytest.approx(value, rel=0, abs=0) or (
            got[name] is None and np.isnan(value)
        ), name


def test_colliding_hashes_fall_back_to_the_pairs_bytes(
    pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every docno of a query hashed alike: the duplicate check and the qrels lookup still
    compare whole pairs and give the dictionary path's numbers."""
    monkeypatch.setattr(tc, "pair_hashes", lambda q, d: np.asarray(q, dtype=np.uint64) << 32)
    cols = read_trec_columns(*pair)
    assert cols is not None
    got = evaluate_trec(*cols, ["map", "ndcg@10", "bpref"])
    want = evaluate_trec(*read_trec(*pair), ["map", "ndcg@10", "bpref"])
    for name, values in want.per_query.items():
        assert np.array_equal(got.per_query[name], values), name


def test_spellings_read_as_the_dictionary_readers_read_them(tmp_path: Path) -> None:
    """Numbers and layouts the bulk readers take apart: signs, exponents, points at either end,
    leading zeros, 18 and 19 digits, mantissas beyond 2^53, CR and CRLF line ends, tabs, VT/FF,
    indented comments, a rank with a sign or leading zeros."""
    scores = ["1.5", "-0", "-0.0", "+2.25", "1e-3", "7E2", ".5", "5.", "0012.50", "-3",
              "123456789012345678", "1234567890123456789", "9007199254740993", "0.1",
              "99999999999999999.9", "4.000000000000000001", "-12.75", "1_0"]  # fmt: skip
    ranks = ["1", "+2", "003", "4"]
    run, qrels = [], []
    for i, sc in enumerate(scores):
        if sc == "1_0":
            continue  # float() takes it, trec_eval does not: checked below
        sep = ["\t", " \v", "\f ", "  "][i % 4]
        end = ["\n", "\r\n", "\r", "\n"][i % 4]
        run.append(f"{i % 3}{sep}Q0 d{i} {ranks[i % 4]} {sc} tag{end}")
        qrels.append(f"{i % 3} 0 d{i} {scores[(i + 1) % 9]}{end}")
        if i % 5 == 0:
            run.append("   # indented comment\n\n")
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_bytes("".join(qrels).encode())
    rp.write_bytes("".join(run).encode())
    got = read_trec_columns(qp, rp)
    assert got is not None
    want_q, want_r = read_qrels(qp), read_run(rp)
    for cols, want in ((got[0], want_q), (got[1], want_r)):
        have = cols.to_dict()
        assert have == want
        for q, docs in want.items():  # bit for bit (-0.0 and 0.0 are == but differ)
            for d, v in docs.items():
                assert np.float64(have[q][d]).tobytes() == np.float64(v).tobytes(), (q, d)


def _tied_files(tmp_path: Path, seed: int, order: str = "file") -> tuple[Path, Path]:
    """Many ties (scores on a coarse grid, some beyond float32's precision only), unjudged
    documents, judged documents never retrieved, labels -1..4 and fractional ones, queries on
    one side only, docnos of other widths in the two files. ``order``: each query's run lines
    in no order (``file``), by score descending (``down``, as trec_eval writes runs) or
    ascending (``up``)."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in rng.permutation(12).tolist():
        docs = [f"D{q}x{'y' * int(rng.integers(0, 6))}{i}" for i in range(int(rng.integers(3, 60)))]
        if q != 11:  # query 11: in the run only
            for d in docs:
                if rng.random() < 0.5:
                    label = int(rng.integers(-1, 5))
                    qrels.append(f"{q} 0 {d} {label + 0.5 if rng.random() < 0.05 else label}\n")
        if q == 10:
            continue  # in the qrels only
        ranked = [
            (d, int(rng.integers(0, 6)) / 4 + (1e-9 if rng.random() < 0.1 else 0.0))
            for d in docs
            if rng.random() < 0.8
        ]
        if order != "file":  # (a stable sort: tied documents keep their file order)
            ranked.sort(key=lambda t: -t[1] if order == "down" else t[1])
        for r, (d, score) in enumerate(ranked):
            run.append(f"{q} Q0 {d} {r + 1} {score!r} t\n")
    qp, rp = tmp_path / f"q{seed}.txt", tmp_path / f"r{seed}.txt"
    qp.write_text("".join(qrels))
    rp.write_text("".join(run))
    return qp, rp


@pytest.mark.parametrize("order", ["file", "down", "up"])
@pytest.mark.parametrize("preset", ["trec_eval", "trec_eval10"])
@pytest.mark.parametrize("seed", [1, 2])
def test_tied_graded_files_give_the_dictionary_path_numbers(
    tmp_path: Path, seed: int, preset: str, order: str
) -> None:
    """Also with runs listed by score (the compiled join then finds the tied documents next to
    each other instead of sorting them)."""
    qp, rp = _tied_files(tmp_path, seed, order)
    cols = read_trec_columns(qp, rp)
    assert cols is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = evaluate_trec(*cols, ["all_trec"], preset=preset)
        want = evaluate_trec(*read_trec(qp, rp), ["all_trec"], preset=preset)
    assert list(got.query_ids) == list(want.query_ids)
    for name, values in want.per_query.items():
        assert np.array_equal(got.per_query[name], values, equal_nan=True), name


def test_a_score_beyond_single_precision_is_named_as_by_the_dictionary_path(
    pair: tuple[Path, Path],
) -> None:
    from ndcglab.errors import DataFormatError

    rp = pair[1].with_name("big-score.txt")
    rp.write_text("1 Q0 doc-1-000 1 1e39 t\n1 Q0 doc-1-001 2 0.5 t\n")
    cols = read_trec_columns(pair[0], rp)
    assert cols is not None
    with pytest.raises(DataFormatError) as got:
        evaluate_trec(*cols, ["map"])
    with pytest.raises(DataFormatError) as want:
        evaluate_trec(*read_trec(pair[0], rp), ["map"])
    assert str(got.value) == str(want.value)


def test_lines_longer_than_the_block_are_read_whole(
    pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, reader: str
) -> None:
    """The compiled reader's buffer grows for a line longer than it. (The NumPy reader declines
    a block of comment lines only: the dictionary readers then read the file.)"""
    if reader == "numpy":
        pytest.skip("the NumPy reader declines a block without a data line")
    monkeypatch.setattr(tc, "BLOCK_BYTES", 8)  # every line longer than the buffer of 16 bytes
    got = read_trec_columns(*pair)
    assert got is not None
    assert got[0].to_dict() == read_qrels(pair[0])
    assert got[1].to_dict() == read_run(pair[1])


@pytest.mark.parametrize("block", [8, 100, 1 << 20])
def test_blocks_scanned_on_several_threads_give_the_same_columns(
    pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, reader: str, block: int
) -> None:
    """Two or three blocks at a time (one per thread) against one: the same columns, with lines
    cut at block ends, lines longer than the buffer (``block`` 8), a last line without its end,
    and a file that needs the dictionary readers found as such."""
    if reader == "numpy":
        pytest.skip("the compiled reader only")
    raw = pair[1].read_bytes()
    raw = gzip.decompress(raw) if pair[1].suffix == ".gz" else raw
    last = pair[1].with_name("no-end.txt")
    last.write_bytes(raw.rstrip(b"\n").rsplit(b"\n", 1)[0])  # (the comment line: dropped)
    monkeypatch.setattr(tc, "BLOCK_BYTES", block)
    monkeypatch.setattr(tc, "kernel_threads", lambda: 3)
    for path in (pair[1], last):
        got = {}
        for threads in (1, 2, 3):
            monkeypatch.setattr(tc, "SCAN_THREADS", threads)
            got[threads] = read_trec_columns(pair[0], path)
        assert got[1] is not None
        for threads in (2, 3):
            have = got[threads]
            assert have is not None
            for a, b in zip(got[1], have, strict=True):
                assert a.queries == b.queries
                for col in ("query", "doc", "value"):
                    assert np.array_equal(getattr(a, col), getattr(b, col)), (threads, col)
    bad = pair[1].with_name("bad.txt")
    bad.write_bytes(raw + b"1 Q0 x one 0.5 t\n")  # a rank that is no integer
    monkeypatch.setattr(tc, "SCAN_THREADS", 2)
    assert read_trec_columns(pair[0], bad) is None
