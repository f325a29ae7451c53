"""ndcglab trec_eval's readers against a slow reference loop written here (generated files:
topics out of order, mixed separators, blank run lines, fractional and negative labels), and
the malformed lines they name."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from ndcglab.treceval import TrecEvalError
from ndcglab.treceval._readers import read_qrels, read_run


def _c_float(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])


def _reference_run(
    text: bytes, single: bool
) -> tuple[dict[bytes, list[tuple[bytes, float]]], bytes]:
    out: dict[bytes, list[tuple[bytes, float]]] = {}
    run_id = b""
    for line in text.split(b"\n"):
        f = line.split()
        if not f:
            continue
        s = float(f[4])
        out.setdefault(f[0], []).append((f[2], _c_float(s) if single else s))
        run_id = f[5]
    return out, run_id


def _generated(rng: random.Random) -> tuple[bytes, bytes]:
    qids = [str(rng.randrange(1, 40)).encode() for _ in range(400)]
    run = []
    qrels = []
    for i, q in enumerate(qids):
        sep = rng.choice([b" ", b"\t", b"  \t"])
        run.append(
            sep.join(
                [
                    q,
                    b"Q0",
                    b"d%d" % i,
                    b"%d" % i,
                    repr(rng.gauss(0, 3)).encode(),
                    b"tag%d" % (i % 3),
                ]
            )
        )
        if rng.random() < 0.1:
            run.append(rng.choice([b"", b"   ", b"\t"]))
        qrels.append(
            b" ".join([q, b"0", b"d%d" % i, rng.choice([b"0", b"1", b"2", b"1.5", b"-1"])])
        )
    return b"\n".join(run) + rng.choice([b"", b"\n"]), b"\n".join(qrels) + b"\n"


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("version", [9, 10])
def test_read_equals_reference(tmp_path: Path, seed: int, version: int) -> None:
    run_text, qrels_text = _generated(random.Random(seed))
    (tmp_path / "run").write_bytes(run_text)
    (tmp_path / "qrels").write_bytes(qrels_text)
    topics, run_id = read_run(str(tmp_path / "run"), version=version)
    expected, expected_id = _reference_run(run_text, single=version < 10)
    assert run_id == expected_id
    assert [t.qid for t in topics] == sorted(expected)  # topics in byte order: "10" < "2"
    for t in topics:
        assert list(zip(t.docs, t.sims, strict=True)) == expected[t.qid]
    judged = read_qrels(str(tmp_path / "qrels"), comments=version >= 10)
    ref: dict[bytes, list[tuple[bytes, int, bytes]]] = {}
    for line in qrels_text.split(b"\n")[:-1]:
        q, _, d, r = line.split()
        ref.setdefault(q, []).append((d, int(float(r)), r))
    assert [t.qid for t in judged] == sorted(ref)
    for j in judged:
        assert list(zip(j.docs, j.rels, j.raw, strict=True)) == ref[j.qid]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (b"1 Q0 a 1 1.0 t\n1 Q0 b 2 0.5\n", 2),  # five fields
        (b"1 Q0 a 1 1.0 t\n\n2 Q0 b 2\n", 3),
    ],
)
def test_malformed_run_line_named(tmp_path: Path, text: bytes, line: int) -> None:
    (tmp_path / "run").write_bytes(text)
    with pytest.raises(TrecEvalError, match=f":{line} "):
        read_run(str(tmp_path / "run"), version=9)


def test_run_line_with_extra_fields(tmp_path: Path) -> None:
    # a 7-field line next to a 5-field one has as many fields as two good lines: still refused
    (tmp_path / "run").write_bytes(b"1 Q0 a 1 1.0 t x\n1 Q0 b 2 0.5\n")
    with pytest.raises(TrecEvalError, match=":2 "):
        read_run(str(tmp_path / "run"), version=9)
    (tmp_path / "run").write_bytes(b"1 Q0 a 1 1.0 t extra\n1 Q0 b 2 0.5 u\n")
    topics, run_id = read_run(str(tmp_path / "run"), version=9)
    assert run_id == b"u" and topics[0].docs == [b"a", b"b"] and topics[0].sims == [1.0, 0.5]


def test_qrels_blank_line_refused(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_bytes(b"1 0 a 1\n\n1 0 b 0\n")
    with pytest.raises(TrecEvalError, match=":2 "):
        read_qrels(str(tmp_path / "qrels"), comments=False)
