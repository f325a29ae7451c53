"""The in-memory readers (``read_letor_bytes``, ``read_qrels_bytes``, ``read_run_bytes``) equal
the file readers bit for bit: the same arrays (compared as bytes), the same dicts, and for a
damaged file the same error, word for word (the bytes are given the file's name)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndcglab.data import letor as letor_module
from ndcglab.data import (
    read_letor,
    read_letor_bytes,
    read_qrels,
    read_qrels_bytes,
    read_run,
    read_run_bytes,
)
from ndcglab.errors import DataFormatError

LETOR = {
    "plain": b"2 qid:1 1:0.5 2:1 3:-2 #docid = a inc = 1 prob = 0.5\n"
    b"0 qid:1 1:0.25 2:0 3:1 #docid = b inc = 0 prob = 0.25\n"
    b"1 qid:2 1:1e-3 2:3 3:4 #docid = c inc = 1 prob = 1\n",
    # odd but valid: CRLF, comment and blank lines, sparse and unsorted pairs, NULL, no final
    # newline, comment keys that differ between lines
    "odd": b"# header\r\n\r\n1.5 qid:q7 3:NULL 1:2 #docid=x note = hi\r\n"
    b"0 qid:q7 2:7  #inc = 3\r\n   \r\n3 qid:q8 5:1e3 1:NaN",
    "split": b"1 qid:a 1:1\n0 qid:b 1:2\n2 qid:a 1:3\n",
    "gzip": gzip.compress(b"1 qid:1 1:1 2:2\n0 qid:1 1:3 2:4\n"),
    # damaged: each must raise the same error as the file
    "bad_label": b"1 qid:1 1:1\nx qid:1 1:2\n",
    "cr_only": b"1 qid:1 1:1\r0 qid:1 1:2\n",
    "bad_pair": b"1 qid:1 1:1\n0 qid:1 1:2 3\n",
    "too_wide": b"1 qid:1 1:1\n0 qid:1 200001:2\n",
    "empty": b"# nothing\n\n",
    "truncated_gzip": gzip.compress(b"1 qid:1 1:1\n" * 50)[:-12],
}

QRELS = {
    "plain": b"1 0 d1 2\n1 0 d2 0\n2 0 d3 1\n",
    "odd": b"# judged\n1\t0 d1 2.5\r\n\n2 0 d\xc3\xa9 1\n",
    "gzip": gzip.compress(b"1 0 d1 1\n"),
    "fields": b"1 0 d1 2\n1 0 d2\n",
    "twice": b"1 0 d1 2\n1 0 d1 1\n",
    "bad_rel": b"1 0 d1 two\n",
    "empty": b"# none\n",
}

RUN = {
    "plain": b"1 Q0 d1 1 2.5 sys\n1 Q0 d2 2 1.0 sys\n2 Q0 d3 1 -3 sys\n",
    "odd": b"# run\n1 Q0 d1 1 2.5 sys note\r\n\n2\tQ0 d\xc3\xa9 1 1e-3 sys\n",
    "fields": b"1 Q0 d1 1 2.5\n",
    "twice": b"1 Q0 d1 1 2.5 s\n1 Q0 d1 2 1 s\n",
    "bad_rank": b"1 Q0 d1 one 2.5 s\n",
    "bad_score": b"1 Q0 d1 1 inf s\n",
    "empty": b"\n",
}


def _outcome(read: Any) -> tuple[str, Any]:
    try:
        return "ok", read()
    except DataFormatError as exc:
        return "error", str(exc)


def _same_dataset(a: Any, b: Any) -> None:
    for name in ("features", "labels", "boundaries"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), name
    assert a.query_ids.tolist() == b.query_ids.tolist()
    assert (a.doc_ids is None) == (b.doc_ids is None)
    if a.doc_ids is not None:
        assert a.doc_ids.tolist() == b.doc_ids.tolist()
    assert a.extras.keys() == b.extras.keys()
    for k in a.extras:
        assert a.extras[k].dtype == b.extras[k].dtype
        assert [repr(v) for v in a.extras[k].tolist()] == [repr(v) for v in b.extras[k].tolist()]
    assert a.source == b.source


@pytest.mark.parametrize("numba_loaded", [False, True], ids=["numpy-first", "numba"])
@pytest.mark.parametrize("case", sorted(LETOR))
@pytest.mark.parametrize("split", ["error", "merge", "separate"])
def test_letor_bytes_equal_the_file(tmp_path: Path, monkeypatch, case, split, numba_loaded):
    monkeypatch.setattr(letor_module._Parser, "loaded", numba_loaded)
    p = tmp_path / f"{case}.txt"
    p.write_bytes(LETOR[case])
    from_file = _outcome(lambda: read_letor(p, split_queries=split, missing="min"))
    monkeypatch.setattr(letor_module._Parser, "loaded", numba_loaded)
    in_memory = _outcome(
        lambda: read_letor_bytes(LETOR[case], name=p, split_queries=split, missing="min")
    )
    assert from_file[0] == in_memory[0], (from_file, in_memory)
    if from_file[0] == "error":
        assert in_memory[1] == from_file[1]
        assert str(p) in in_memory[1]
    else:
        _same_dataset(from_file[1], in_memory[1])


def test_letor_bytes_with_a_query_file(tmp_path: Path) -> None:
    data = b"1 1:1\n0 1:2\n2 1:3\n"
    p = tmp_path / "noqid.txt"
    p.write_bytes(data)
    q = tmp_path / "sizes.query"
    q.write_text("2\n1\n")
    _same_dataset(read_letor(p, query_file=q), read_letor_bytes(data, name=p, query_file=q))
    # without it, the same refusal as a file without one beside it
    assert _outcome(lambda: read_letor(p)) == _outcome(lambda: read_letor_bytes(data, name=p))


@pytest.mark.parametrize(
    ("cases", "file_reader", "bytes_reader"),
    [(QRELS, read_qrels, read_qrels_bytes), (RUN, read_run, read_run_bytes)],
    ids=["qrels", "run"],
)
@pytest.mark.parametrize("allow_empty", [False, True])
def test_trec_bytes_equal_the_file(tmp_path: Path, cases, file_reader, bytes_reader, allow_empty):
    for case, data in cases.items():
        p = tmp_path / f"{case}.txt"
        p.write_bytes(data)
        from_file = _outcome(lambda p=p: file_reader(p, allow_empty=allow_empty))
        in_memory = _outcome(
            lambda p=p, data=data: bytes_reader(data, name=p, allow_empty=allow_empty)
        )
        assert from_file == in_memory, case
        if from_file[0] == "ok":  # the same values, bit for bit, in the same order
            assert [(q, list(d.items())) for q, d in from_file[1].items()] == [
                (q, list(d.items())) for q, d in in_memory[1].items()
            ]
            assert all(
                np.float64(a).tobytes() == np.float64(b).tobytes()
                for q in from_file[1]
                for a, b in zip(from_file[1][q].values(), in_memory[1][q].values())
            )


def test_integer_qrels_from_bytes(tmp_path: Path) -> None:
    for data in (b"1 0 d1 2\n", b"1 0 d1 2.5\n"):
        p = tmp_path / "q.txt"
        p.write_bytes(data)
        a = _outcome(lambda p=p: read_qrels(p, integer=True))
        b = _outcome(lambda p=p, data=data: read_qrels_bytes(data, name=p, integer=True))
        assert a == b
        if a[0] == "ok":
            assert type(a[1]["1"]["d1"]) is type(b[1]["1"]["d1"]) is int
