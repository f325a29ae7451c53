"""The LETOR reader on small generated files, against a slow reference (``oracle_letor.py``):
query ids that are prefixes of one another (``qid:1`` then ``qid:10``), qids that come back,
one-document queries, feature indices and doc ids that share digits, tokens cut by block
boundaries. None of these needs the real LETOR data."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ndcglab.data import letor, read_letor
from ndcglab.errors import DataFormatError

from .oracle_letor import parse_letor

BLOCKS = (None, 5, 9, 23, 64)  # None: the reader's own block size


def _write(tmp_path, text: str, name: str = "d.txt"):
    p = tmp_path / name
    p.write_bytes(text.encode())
    return p


def _read_each_block_size(path, monkeypatch, **kw):
    """The file read with every block size of BLOCKS; all must agree (returns the first)."""
    out = []
    default = letor._CHUNK
    for size in BLOCKS:
        monkeypatch.setattr(letor, "_CHUNK", default if size is None else size)
        out.append(read_letor(path, **kw))
    monkeypatch.setattr(letor, "_CHUNK", default)
    first = out[0]
    for other in out[1:]:
        np.testing.assert_array_equal(other.boundaries, first.boundaries)
        assert other.query_ids.tolist() == first.query_ids.tolist()
        np.testing.assert_array_equal(other.labels, first.labels)
        np.testing.assert_array_equal(other.features, first.features)
    return first


def _check_against_reference(ds, text: str) -> None:
    ref = parse_letor(text)
    np.testing.assert_array_equal(ds.boundaries, ref["boundaries"])
    assert ds.query_ids.tolist() == ref["qids"]
    np.testing.assert_array_equal(ds.labels, ref["labels"])
    np.testing.assert_array_equal(ds.features, ref["X"])


def _slow_split(qids: list[str], mode: str) -> tuple[list[str], list[int]]:
    """Reference for ``split_queries``: (query ids, document order) of ``merge``/``separate``."""
    blocks: list[tuple[str, list[int]]] = []
    for i, q in enumerate(qids):
        if blocks and blocks[-1][0] == q:
            blocks[-1][1].append(i)
        else:
            blocks.append((q, [i]))
    if mode == "separate":
        seen: dict[str, int] = {}
        ids = []
        for q, _ in blocks:
            seen[q] = seen.get(q, 0) + 1
            ids.append(q if seen[q] == 1 else f"{q}#{seen[q]}")
        return ids, [i for _, docs in blocks for i in docs]
    merged: dict[str, list[int]] = {}
    for q, docs in blocks:
        merged.setdefault(q, []).extend(docs)
    return list(merged), [i for docs in merged.values() for i in docs]


# ----------------------------------------------------------------------------- prefixes
@pytest.mark.parametrize(
    "qids",
    [
        ["1", "10"],
        ["10", "1"],
        ["1", "10", "100", "1000", "2", "20", "200"],
        ["1000", "100", "10", "1"],
        ["1", "01", "001", "1.0"],
        ["a", "ab", "abc", "b"],
    ],
)
def test_qids_that_are_prefixes_are_separate_queries(tmp_path, monkeypatch, qids):
    lines = []
    for j, q in enumerate(qids):
        for d in range(1 + j % 3):
            lines.append(f"{(j + d) % 3} qid:{q} 1:{j}.{d} 2:{d}")
    text = "\n".join(lines) + "\n"
    ds = _read_each_block_size(_write(tmp_path, text), monkeypatch)
    assert ds.query_ids.tolist() == qids
    assert ds.query_lengths.tolist() == [1 + j % 3 for j in range(len(qids))]
    _check_against_reference(ds, text)


def test_qid_1_then_10_then_1_comes_back(tmp_path):
    text = "1 qid:1 1:1\n0 qid:10 1:2\n2 qid:10 1:3\n0 qid:1 1:4\n"
    p = _write(tmp_path, text)
    with pytest.raises(DataFormatError) as e:
        read_letor(p)
    assert e.value.line == 4 and e.value.token == "qid:1"
    m = read_letor(p, split_queries="merge")
    assert m.query_ids.tolist() == ["1", "10"]
    np.testing.assert_array_equal(m.boundaries, [0, 2, 4])
    np.testing.assert_array_equal(m.features[:, 0], [1, 4, 2, 3])
    s = read_letor(p, split_queries="separate")
    assert s.query_ids.tolist() == ["1", "10", "1#2"]
    np.testing.assert_array_equal(s.boundaries, [0, 1, 3, 4])


def test_random_prefix_qids_match_the_slow_reference(tmp_path, monkeypatch):
    rng = random.Random(11)
    pool = ["1", "10", "11", "100", "101", "110", "2", "21", "210", "q", "q1", "q10"]
    for trial in range(6):
        order = rng.sample(pool, len(pool))
        lines = []
        for q in order:
            for _ in range(rng.randint(1, 4)):
                feats = " ".join(
                    f"{j}:{rng.randint(-9, 9)}" for j in (1, 2, 10, 11, 100) if rng.random() < 0.7
                )
                lines.append(f"{rng.randint(0, 4)} qid:{q} {feats}".rstrip())
                if rng.random() < 0.15:
                    lines.append(rng.choice(["", "# a comment line"]))
        text = "\n".join(lines) + ("\n" if trial % 2 else "")
        ds = _read_each_block_size(_write(tmp_path, text, f"r{trial}.txt"), monkeypatch)
        assert ds.query_ids.tolist() == order
        _check_against_reference(ds, text)


@pytest.mark.parametrize("mode", ["merge", "separate"])
def test_split_queries_with_prefix_qids_match_the_slow_reference(tmp_path, monkeypatch, mode):
    rng = random.Random(5 if mode == "merge" else 6)
    pool = ["1", "10", "100", "2", "20"]
    qids = []
    prev = None
    for _ in range(40):
        q = rng.choice([c for c in pool if c != prev] if rng.random() < 0.6 else pool)
        qids.append(q)
        prev = q
    text = "".join(f"{i % 3} qid:{q} 1:{i}\n" for i, q in enumerate(qids))
    ds = _read_each_block_size(_write(tmp_path, text), monkeypatch, split_queries=mode)
    want_ids, want_order = _slow_split(qids, mode)
    assert ds.query_ids.tolist() == want_ids
    np.testing.assert_array_equal(ds.features[:, 0], np.array(want_order, dtype=np.float32))
    np.testing.assert_array_equal(ds.labels, [i % 3 for i in want_order])


# ----------------------------------------------------------------------------- other cases
def test_one_document_queries_alternating(tmp_path, monkeypatch):
    qids = ["7", "70", "7a", "700", "07", "8"]
    text = "".join(f"{i} qid:{q} 3:{i}\n" for i, q in enumerate(qids))
    ds = _read_each_block_size(_write(tmp_path, text), monkeypatch)
    assert ds.query_ids.tolist() == qids
    np.testing.assert_array_equal(ds.boundaries, np.arange(len(qids) + 1))
    _check_against_reference(ds, text)


def test_feature_indices_sharing_digits_land_in_their_columns(tmp_path, monkeypatch):
    text = "1 qid:1 1:1 10:10 100:100\n0 qid:1 10:-10 1:-1\n2 qid:10 100:5 11:11 101:6\n"
    ds = _read_each_block_size(_write(tmp_path, text), monkeypatch)
    assert ds.features.shape == (3, 101)
    want = np.zeros((3, 101), dtype=np.float32)
    want[0, [0, 9, 99]] = [1, 10, 100]
    want[1, [9, 0]] = [-10, -1]
    want[2, [99, 10, 100]] = [5, 11, 6]
    np.testing.assert_array_equal(ds.features, want)
    _check_against_reference(ds, text)


def test_doc_ids_sharing_a_prefix_are_kept_apart(tmp_path):
    text = (
        "1 qid:1 1:1 #docid = 1\n0 qid:1 1:2 #docid = 10\n"
        "2 qid:10 1:3 #docid = 1\n0 qid:10 1:4 #docid=100 inc = 1\n"
    )
    ds = read_letor(_write(tmp_path, text))
    assert ds.doc_ids.tolist() == ["1", "10", "1", "100"]
    assert ds.query_ids.tolist() == ["1", "10"]
    np.testing.assert_array_equal(ds.boundaries, [0, 2, 4])


def test_last_line_without_newline_is_its_own_query(tmp_path, monkeypatch):
    text = "1 qid:1 1:1\n0 qid:1 1:2\n2 qid:10 1:3"
    ds = _read_each_block_size(_write(tmp_path, text), monkeypatch)
    assert ds.query_ids.tolist() == ["1", "10"]
    np.testing.assert_array_equal(ds.boundaries, [0, 2, 3])
    np.testing.assert_array_equal(ds.labels, [1, 0, 2])


def test_blank_and_comment_lines_do_not_split_a_query(tmp_path, monkeypatch):
    text = "1 qid:1 1:1\n\n# qid:10 in a comment line\n0 qid:1 1:2\n   \n2 qid:10 1:3\n"
    ds = _read_each_block_size(_write(tmp_path, text), monkeypatch)
    assert ds.query_ids.tolist() == ["1", "10"]
    np.testing.assert_array_equal(ds.boundaries, [0, 2, 3])


def test_query_file_sizes_and_qids_with_prefixes(tmp_path):
    text = "1 qid:1 1:1\n0 qid:10 1:2\n2 qid:10 1:3\n"
    p = _write(tmp_path, text)
    (tmp_path / "sizes.query").write_text("1\n2\n")
    ds = read_letor(p, query_file=tmp_path / "sizes.query")
    np.testing.assert_array_equal(ds.boundaries, [0, 1, 3])
    (tmp_path / "bad.query").write_text("3\n")  # would merge qid 1 and qid 10
    with pytest.raises(DataFormatError):
        read_letor(p, query_file=tmp_path / "bad.query")


# ----------------------------------------------------------------------------- query files
def test_read_query_file_sizes_zero_and_bad_lines(tmp_path):
    from ndcglab.data.letor import read_query_file

    p = tmp_path / "a.query"
    p.write_text("2\n0\n 1 \n\n\n")  # a 0-document query is allowed; trailing blank lines dropped
    sizes = read_query_file(p)
    assert sizes.dtype == np.int64 and sizes.tolist() == [2, 0, 1]
    for text, line, token in (("2\n-1\n", 2, "-1"), ("1\nx\n", 2, "x"), ("1\n\n3\n", 2, "")):
        p.write_text(text)
        with pytest.raises(DataFormatError) as e:
            read_query_file(p)
        assert (e.value.line, e.value.token) == (line, token)
        assert "one list size (a non-negative integer)" in str(e.value)
        assert "write one integer per line" in str(e.value) and str(p) in str(e.value)
    p.write_bytes(b"1\n\xff\n")  # not UTF-8: still a DataFormatError naming the line
    with pytest.raises(DataFormatError) as e:
        read_query_file(p)
    assert e.value.line == 2


def test_index_beyond_n_features_message_names_the_token(tmp_path):
    for token in ("5:0.5", "5:7", "1234567890:0.5"):
        p = _write(tmp_path, f"1 qid:1 1:1 {token}\n")
        with pytest.raises(DataFormatError) as e:
            read_letor(p, n_features=3)
        assert (e.value.line, e.value.token) == (1, token)
        assert "feature index exceeds n_features=3" in str(e.value)
        assert "pass a larger n_features" in str(e.value)
