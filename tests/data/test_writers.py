"""write_svmlight / write_scores / read_scores: exact round trips, errors, atomic writes."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from ndcglab.data import (
    RankingDataset,
    make_synthetic,
    read_letor,
    read_scores,
    write_scores,
    write_svmlight,
)
from ndcglab.errors import DataFormatError

from .test_letor import same


def awkward_floats(rng, n):
    """float32 values over the whole range, plus hard cases."""
    a = rng.standard_normal(n) * 10.0 ** rng.integers(-44, 38, n)
    a = a.astype(np.float32)
    hard = np.array(
        [1e-45, -1e-45, 3.4028235e38, 1.1754944e-38, 0.1, 1 / 3, 16777217, 0.052893,
         9.999999e-5, 1e7, 123456789, 2.5e-7, np.finfo(np.float32).eps],
        dtype=np.float32,
    )  # fmt: skip
    return np.concatenate([a, hard, -hard])


def test_svmlight_round_trip_is_exact(tmp_path):
    rng = np.random.default_rng(0)
    x = awkward_floats(rng, 3000)
    n_docs, f = 200, 16
    x = np.resize(x, n_docs * f).reshape(n_docs, f)
    x[rng.random(x.shape) < 0.1] = 0
    x[rng.random(x.shape) < 0.05] = np.nan
    group = [50, 1, 149]
    labels = rng.integers(0, 5, n_docs).astype(float)
    labels[:3] = [0.30000000000000004, 2.5, 1e-300]
    ds = RankingDataset.from_arrays(x, labels, group=group, doc_ids=[f"d{i}" for i in range(200)])
    ds.extras = {"inc": rng.random(n_docs), "tag": np.array([f"t{i % 3}" for i in range(200)],
                                                            dtype=object)}  # fmt: skip
    ds.extras["inc"][5] = np.nan
    for name, kw in [("a.txt", {}), ("b.txt.gz", {}), ("c.txt", {"sparse": True})]:
        p = tmp_path / name
        write_svmlight(p, ds, **kw)
        back = read_letor(p)
        same(ds, back)
    assert (tmp_path / "b.txt.gz").read_bytes()[:2] == b"\x1f\x8b"  # really compressed
    no_comment = tmp_path / "d.txt"
    write_svmlight(no_comment, ds, comment=False)
    back = read_letor(no_comment)
    assert back.doc_ids is None and back.extras == {}
    np.testing.assert_array_equal(back.features, ds.features)


def test_svmlight_text_layout(tmp_path):
    ds = RankingDataset.from_arrays(
        np.array([[0.5, 0, np.nan], [1, 2, 3]], dtype=np.float32), [2, 0], qid=[7, 7],
        doc_ids=["a", "b"],
    )  # fmt: skip
    p = tmp_path / "x.txt"
    write_svmlight(p, ds)
    assert p.read_text() == "2 qid:7 1:0.5 2:0 3:NULL #docid = a\n0 qid:7 1:1 2:2 3:3 #docid = b\n"
    write_svmlight(p, ds, sparse=True)
    assert p.read_text().splitlines()[0] == "2 qid:7 1:0.5 3:NULL #docid = a"


def test_synthetic_round_trip(tmp_path):
    ds = make_synthetic("small", seed=4)
    p = tmp_path / "s.txt.gz"
    write_svmlight(p, ds)
    same(ds, read_letor(p))


def test_svmlight_rejects_unwritable_ids(tmp_path):
    ds = RankingDataset.from_arrays(np.ones((2, 1)), [0, 1], qid=["a b", "a b"])
    with pytest.raises(ValueError, match="whitespace"):
        write_svmlight(tmp_path / "x.txt", ds)
    ds = RankingDataset.from_arrays(np.ones((2, 1)), [0, 1], qid=[1, 1], doc_ids=["x#1", "y"])
    with pytest.raises(ValueError, match="doc id"):
        write_svmlight(tmp_path / "x.txt", ds)
    assert not list(tmp_path.iterdir())


def test_writes_are_atomic(tmp_path):
    p = tmp_path / "out.txt"
    p.write_text("old content\n")
    ds = make_synthetic("small")

    def boom(n):
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_svmlight(p, ds, progress=boom)
    assert p.read_text() == "old content\n"
    assert [x.name for x in tmp_path.iterdir()] == ["out.txt"]  # no temporary left behind

    class Bad:
        def __array__(self, dtype=None, copy=None):
            raise RuntimeError("no scores")

    with pytest.raises(RuntimeError):
        write_scores(p, Bad())
    assert p.read_text() == "old content\n"


def test_scores_round_trip_exactly(tmp_path):
    rng = np.random.default_rng(1)
    s = np.concatenate([
        rng.standard_normal(500) * 10.0 ** rng.integers(-300, 300, 500),
        [0.1, 1 / 3, 2**-1074, -0.0, 1.7976931348623157e308, 123456789012345678, np.nan, np.inf],
    ])  # fmt: skip
    p = tmp_path / "s.txt"
    write_scores(p, s)
    back = read_scores(p, n_expected=len(s))
    assert back.dtype == np.float64
    np.testing.assert_array_equal(back, s)
    assert np.signbit(back[503])
    assert all(len(t) <= 24 for t in p.read_text().split())
    write_scores(tmp_path / "e.txt", [])
    assert len(read_scores(tmp_path / "e.txt")) == 0


def test_scores_crlf_gz_and_trailing_blank_lines(tmp_path):
    p = tmp_path / "s.txt"
    p.write_bytes(b"1.5\r\n-2\r\n\r\n\n")
    np.testing.assert_array_equal(read_scores(p), [1.5, -2])
    g = tmp_path / "s.gz"
    g.write_bytes(gzip.compress(b"3\n4\n"))
    np.testing.assert_array_equal(read_scores(g), [3, 4])


@pytest.mark.parametrize(
    ("text", "line", "token", "words"),
    [
        ("1\n2\nabc\n", 3, "abc", "not a number"),
        ("1\n\n2\n", 2, "", "no blank lines"),
        ("1\n3 7 0.5\n", 2, "3 7 0.5", "RankLib"),
        ("1_000\n", 1, "1_000", "not a number"),
    ],
)
def test_read_scores_errors(tmp_path, text, line, token, words):
    p = tmp_path / "s.txt"
    p.write_text(text)
    with pytest.raises(DataFormatError) as e:
        read_scores(p)
    msg = str(e.value)
    assert e.value.line == line and e.value.token == token and f"{p}:{line}:" in msg
    assert words in msg and "Fix:" in msg


def test_read_scores_count_mismatch(tmp_path):
    p = tmp_path / "s.txt"
    write_scores(p, [1, 2, 3])
    with pytest.raises(DataFormatError) as e:
        read_scores(p, n_expected=4)
    msg = str(e.value)
    assert "3 scores" in msg and "4 were expected" in msg and str(p) in msg and "Fix:" in msg
