"""read_letor: formats, options, every error, block boundaries, the binary cache."""

from __future__ import annotations

import gzip
import os
import random

import numpy as np
import pytest

from ndcglab.data import letor, read_letor
from ndcglab.errors import DataFormatError

from .oracle_letor import fill_missing, parse_letor, random_letor

SIMPLE = (
    "2 qid:10 1:0.5 2:1.25 3:-3 #docid = A inc = 0.25 prob = 1e-3\n"
    "0 qid:10 1:0 2:NULL 3:4.5 #docid = B inc = 0.5 prob = 0.125\n"
    "1.5 qid:7 2:2 #docid = C inc = 1 prob = 2\n"
)


def write(tmp_path, text, name="d.txt", binary=False):
    p = tmp_path / name
    data = text if binary else text.encode()
    if name.endswith(".gz"):
        data = gzip.compress(data)
    p.write_bytes(data)
    return p


def same(a, b):
    assert np.array_equal(a.features, b.features, equal_nan=True)
    assert np.array_equal(a.labels, b.labels)
    assert np.array_equal(a.boundaries, b.boundaries)
    assert a.query_ids.tolist() == b.query_ids.tolist()
    if a.doc_ids is None:
        assert b.doc_ids is None
    else:
        assert a.doc_ids.tolist() == b.doc_ids.tolist()
    assert list(a.extras) == list(b.extras)
    for k in a.extras:
        if a.extras[k].dtype == object:
            assert a.extras[k].tolist() == b.extras[k].tolist()
        else:
            assert np.array_equal(a.extras[k], b.extras[k], equal_nan=True)


# ----------------------------------------------------------------------------- basics
def test_simple_file(tmp_path):
    ds = read_letor(write(tmp_path, SIMPLE))
    assert ds.features.dtype == np.float32 and ds.features.shape == (3, 3)
    np.testing.assert_array_equal(ds.labels, [2, 0, 1.5])
    np.testing.assert_array_equal(ds.boundaries, [0, 2, 3])
    assert ds.query_ids.tolist() == ["10", "7"]
    assert ds.doc_ids.tolist() == ["A", "B", "C"]
    np.testing.assert_array_equal(ds.extras["inc"], [0.25, 0.5, 1.0])
    np.testing.assert_array_equal(ds.extras["prob"], [1e-3, 0.125, 2.0])
    exp = np.array([[0.5, 1.25, -3], [0, np.nan, 4.5], [0, 2, 0]], dtype=np.float32)
    np.testing.assert_array_equal(ds.features, exp)
    assert ds.source == str(tmp_path / "d.txt")


def test_crlf_lf_gz_all_equal(tmp_path):
    a = read_letor(write(tmp_path, SIMPLE, "lf.txt"))
    b = read_letor(write(tmp_path, SIMPLE.replace("\n", "\r\n"), "crlf.txt"))
    c = read_letor(write(tmp_path, SIMPLE.replace("\n", "\r\n"), "crlf.txt.gz"))
    d = read_letor(write(tmp_path, SIMPLE, "no_suffix_but_gz.bin.gz"))
    for x in (b, c, d):
        same(a, x)


def test_gzip_detected_by_magic_bytes(tmp_path):
    p = tmp_path / "data.txt"
    p.write_bytes(gzip.compress(SIMPLE.encode()))
    same(read_letor(p), read_letor(write(tmp_path, SIMPLE, "plain.txt")))


def test_sparse_and_dense_agree(tmp_path):
    dense = "1 qid:1 1:0 2:3 3:0 4:0.5\n0 qid:1 1:1 2:0 3:0 4:0\n"
    sparse = "1 qid:1 2:3 4:0.5\n0 qid:1 1:1\n"
    a, b = read_letor(write(tmp_path, dense, "a")), read_letor(write(tmp_path, sparse, "b"))
    np.testing.assert_array_equal(a.features, b.features)
    # a sparse file whose largest index is absent from the first lines
    c = read_letor(write(tmp_path, "1 qid:1 1:1\n0 qid:1 9:2\n", "c"))
    assert c.features.shape == (2, 9) and c.features[1, 8] == 2 and c.features[0, 8] == 0


def test_n_features_pads_and_limits(tmp_path):
    p = write(tmp_path, "1 qid:1 1:1 3:2\n")
    assert read_letor(p, n_features=5).features.shape == (1, 5)
    with pytest.raises(DataFormatError) as e:
        read_letor(p, n_features=2)
    msg = str(e.value)
    assert str(p) in msg and ":1:" in msg and "'3:2'" in msg and "n_features" in msg
    with pytest.raises(ValueError):
        read_letor(p, n_features=0)


def test_blank_and_comment_lines_count_for_line_numbers(tmp_path):
    text = "# header\n\n1 qid:1 1:1\n   \n# mid\n0 qid:1 1:oops\n"
    with pytest.raises(DataFormatError) as e:
        read_letor(write(tmp_path, text))
    assert e.value.line == 6 and e.value.token == "1:oops"


def test_float_labels_and_exact_long_numbers(tmp_path):
    # 17 significant digits need the exact (Python float) fallback for float64 columns
    lab = "0.30000000000000004"
    inc = "0.1234567890123456789"
    ds = read_letor(write(tmp_path, f"{lab} qid:1 1:1 #docid = x inc = {inc}\n-1e-320 qid:1 1:2\n"))
    assert ds.labels[0] == float(lab) and ds.labels[1] == float("-1e-320")
    assert ds.extras["inc"][0] == float(inc) and np.isnan(ds.extras["inc"][1])
    assert ds.doc_ids.tolist() == ["x", ""]


def test_special_values(tmp_path):
    # NaN and NULL are missing values; infinities and values beyond float32 are refused (one rule
    # for every reader: docs/errors.md)
    ds = read_letor(write(tmp_path, "1 qid:1 1:nan 2:NULL 4:+5 5:-0 6:1E2 7:.5 8:5.\n"))
    x = ds.features[0]
    assert np.isnan(x[0]) and np.isnan(x[1]) and x[2] == 0
    np.testing.assert_array_equal(x[3:], [5, 0, 100, 0.5, 5])
    for tok in ("2:-inf", "3:Infinity", "2:1e39", "2:1e999"):
        with pytest.raises(DataFormatError, match="infinite or beyond the float32 range"):
            read_letor(write(tmp_path, f"1 qid:1 {tok}\n"))


def test_comment_grammar(tmp_path):
    text = (
        "1 qid:1 1:1 #docid = A note = 3 words here inc=0.5\n"
        "1 qid:1 1:1 # free text without pairs\n"
        "1 qid:1 1:1 #docid=B tag = x-y\n"
    )
    ds = read_letor(write(tmp_path, text))
    assert ds.doc_ids.tolist() == ["A", "", "B"]
    np.testing.assert_array_equal(ds.extras["note"], [3, np.nan, np.nan])
    np.testing.assert_array_equal(ds.extras["inc"], [0.5, np.nan, np.nan])
    # a non-numeric value turns the column into strings
    assert ds.extras["tag"].tolist() == ["", "", "x-y"]


def test_matches_slow_reference_on_random_files(tmp_path):
    rng = random.Random(5)
    for k in range(12):
        text = random_letor(rng, n_queries=rng.randint(1, 9), width=rng.randint(1, 15),
                            crlf=k % 2 == 1, sparse=k % 3 != 0)  # fmt: skip
        ref = parse_letor(text)
        ds = read_letor(write(tmp_path, text, f"r{k}.txt"))
        np.testing.assert_array_equal(ds.labels, ref["labels"])
        assert ds.features.shape[1] == ref["X"].shape[1]
        np.testing.assert_array_equal(ds.features, ref["X"])
        np.testing.assert_array_equal(ds.boundaries, ref["boundaries"])
        assert ds.query_ids.tolist() == ref["qids"]
        docids = [c.get("docid", "") for c in ref["comments"]]
        if any(docids):
            assert ds.doc_ids.tolist() == docids
        for key in ("inc", "prob"):
            vals = [float(c[key]) if key in c else np.nan for c in ref["comments"]]
            if any(key in c for c in ref["comments"]):
                np.testing.assert_array_equal(ds.extras[key], vals)


@pytest.mark.parametrize("mode", ["nan", "min", "zero"])
def test_missing_options_match_reference_loop(tmp_path, mode):
    rng = random.Random(11)
    text = random_letor(rng, n_queries=10, width=8)
    # make one query lack feature 1 entirely: every value NULL
    text += "1 qid:allnull 1:NULL 2:3\n0 qid:allnull 1:NULL 2:-1 3:NULL\n"
    ref = parse_letor(text)
    assert np.isnan(ref["X"]).any()
    ds = read_letor(write(tmp_path, text), missing=mode)
    np.testing.assert_array_equal(ds.features, fill_missing(ref["X"], ref["boundaries"], mode))
    if mode == "min":
        assert ds.features[-1, 0] == 0 and ds.features[-1, 2] == -0.0  # all-NULL -> 0


def test_bad_options(tmp_path):
    p = write(tmp_path, SIMPLE)
    with pytest.raises(ValueError, match="missing"):
        read_letor(p, missing="mean")
    with pytest.raises(ValueError, match="split_queries"):
        read_letor(p, split_queries="drop")


# ----------------------------------------------------------------------------- errors
ERRORS = [
    # (text, line, token, words in the message)
    ("abc qid:1 1:1\n", 1, "abc", "label"),
    ("nan qid:1 1:1\n", 1, "nan", "label"),
    ("1 qid:1 1:1\n1 qid:1 1:0.5 oops\n", 2, "oops", "<index>:<value>"),
    ("1 qid:1 x:0.5\n", 1, "x:0.5", "<index>:<value>"),
    ("1 qid:1 :0.5\n", 1, ":0.5", "<index>:<value>"),
    ("1 qid:1 0:0.5\n", 1, "0:0.5", "1-based"),
    ("1 qid:1 -3:0.5\n", 1, "-3:0.5", "1-based"),
    ("1 qid:1 99999999999:1\n", 1, "99999999999:1", "too large"),
    ("1 qid:1 1:1 2:2 1:3\n", 1, "1:3", "twice"),
    ("1 qid:1 1:abc\n", 1, "1:abc", "not a number"),
    ("1 qid:1 1:\n", 1, "1:", "not a number"),
    ("1 qid:1 1:1.2.3\n", 1, "1:1.2.3", "not a number"),
    ("1 qid:1 1:1\n0 1:1\n", 2, "1:1", "qid"),
    ("1 1:1\n0 qid:3 1:1\n", 1, "1:1", "no qid"),
    ("1 qid: 1:1\n", 1, "qid:", "empty query id"),
]


@pytest.mark.parametrize(("text", "line", "token", "words"), ERRORS)
def test_bad_input_errors_name_file_line_token(tmp_path, text, line, token, words):
    p = write(tmp_path, text)
    with pytest.raises(DataFormatError) as e:
        read_letor(p)
    err = e.value
    msg = str(err)
    assert err.path == str(p) and err.line == line and err.token == token, msg
    assert f"{p}:{line}:" in msg and repr(token) in msg and "Fix:" in msg
    assert words in msg


def test_unexpected_qid_after_a_line_without(tmp_path):
    p = write(tmp_path, "1 1:1\n0 qid:3 1:1\n")
    q = write(tmp_path, "2\n", "d.txt.query")
    with pytest.raises(DataFormatError) as e:
        read_letor(p)
    assert e.value.line == 2 and e.value.token == "qid:3"
    assert q.exists()


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n  \n"])
def test_empty_file(tmp_path, text):
    p = write(tmp_path, text)
    with pytest.raises(DataFormatError, match="no data lines") as e:
        read_letor(p)
    assert str(p) in str(e.value) and "Fix:" in str(e.value)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(DataFormatError, match="not found"):
        read_letor(tmp_path / "nope.txt")
    with pytest.raises(DataFormatError, match="directory"):
        read_letor(tmp_path)


# ----------------------------------------------------------------------------- queries
def test_query_file_explicit_and_auto(tmp_path):
    text = "1 1:1\n0 1:2\n2 1:3\n1 1:4\n"
    p = write(tmp_path, text)
    q = write(tmp_path, "3\n1\n", "groups.txt")
    ds = read_letor(p, query_file=q)
    np.testing.assert_array_equal(ds.boundaries, [0, 3, 4])
    assert ds.query_ids.tolist() == ["0", "1"]
    write(tmp_path, "1\n3\n", "d.txt.query")  # picked up automatically
    np.testing.assert_array_equal(read_letor(p).boundaries, [0, 1, 4])
    # for d.txt.gz, both d.txt.gz.query and d.txt.query are looked for
    g = write(tmp_path, text, "e.txt.gz")
    write(tmp_path, "2\n2\n", "e.txt.query")
    np.testing.assert_array_equal(read_letor(g).boundaries, [0, 2, 4])


def test_query_file_errors(tmp_path):
    p = write(tmp_path, "1 1:1\n0 1:2\n2 1:3\n")
    q = write(tmp_path, "2\n2\n", "g.query")
    with pytest.raises(DataFormatError) as e:
        read_letor(p, query_file=q)
    msg = str(e.value)
    assert str(q) in msg and "4 documents" in msg and "3 data lines" in msg and "Fix:" in msg
    bad = write(tmp_path, "2\nx\n", "bad.query")
    with pytest.raises(DataFormatError) as e:
        read_letor(p, query_file=bad)
    assert e.value.line == 2 and e.value.token == "x"
    with pytest.raises(DataFormatError, match="not found"):
        read_letor(p, query_file=tmp_path / "missing.query")


def test_query_file_with_qids_must_agree(tmp_path):
    p = write(tmp_path, "1 qid:1 1:1\n0 qid:1 1:2\n2 qid:2 1:3\n")
    ok = write(tmp_path, "2\n1\n", "ok.query")
    assert read_letor(p, query_file=ok).query_ids.tolist() == ["1", "2"]
    bad = write(tmp_path, "1\n2\n", "bad.query")
    with pytest.raises(DataFormatError, match="do not match"):
        read_letor(p, query_file=bad)
    # an automatically found .query file is ignored when the lines have qid:
    write(tmp_path, "1\n1\n1\n", "d.txt.query")
    with pytest.warns(UserWarning, match="ignoring the query file"):
        assert read_letor(p).n_queries == 2


SPLIT = "1 qid:a 1:1\n0 qid:b 1:2\n2 qid:a 1:3\n0 qid:c 1:4\n1 qid:b 1:5\n"


def test_split_queries_error_names_both_lines(tmp_path):
    p = write(tmp_path, SPLIT)
    with pytest.raises(DataFormatError) as e:
        read_letor(p)
    msg = str(e.value)
    assert e.value.line == 3 and e.value.token == "qid:a"
    assert "line 1" in msg and "line 3" in msg and "split_queries='merge'" in msg


def test_split_queries_merge_and_separate(tmp_path):
    p = write(tmp_path, SPLIT)
    m = read_letor(p, split_queries="merge")
    assert m.query_ids.tolist() == ["a", "b", "c"]
    np.testing.assert_array_equal(m.boundaries, [0, 2, 4, 5])
    np.testing.assert_array_equal(m.features[:, 0], [1, 3, 2, 5, 4])
    np.testing.assert_array_equal(m.labels, [1, 2, 0, 1, 0])
    s = read_letor(p, split_queries="separate")
    assert s.query_ids.tolist() == ["a", "b", "a#2", "c", "b#2"]
    np.testing.assert_array_equal(s.features[:, 0], [1, 2, 3, 4, 5])


def test_merge_then_min_fill_uses_the_merged_query(tmp_path):
    text = "1 qid:a 1:5\n0 qid:b 1:1\n2 qid:a 1:NULL\n"
    m = read_letor(write(tmp_path, text), split_queries="merge", missing="min")
    np.testing.assert_array_equal(m.features[:, 0], [5, 5, 1])


# ----------------------------------------------------------------------------- blocks
def test_tiny_blocks_give_the_same_result(tmp_path, monkeypatch):
    rng = random.Random(3)
    text = random_letor(rng, n_queries=12, width=10)
    text += "1 qid:late 1:1 25:7 #docid = Z newkey = 4\n"  # wider, new key, in a later block
    p = write(tmp_path, text)
    whole = read_letor(p)
    ref_min = fill_missing(whole.features, whole.boundaries, "min")
    for size in (7, 64, 300):
        monkeypatch.setattr(letor, "_CHUNK", size)
        same(whole, read_letor(p))
        np.testing.assert_array_equal(read_letor(p, missing="min").features, ref_min)
    assert whole.features.shape[1] == 25 and whole.extras["newkey"][-1] == 4


def test_error_line_numbers_across_blocks(tmp_path, monkeypatch):
    lines = [f"{i % 3} qid:{i // 4} 1:{i} 2:0.5" for i in range(50)]
    lines[37] = "1 qid:9 1:1 2:bad"
    p = write(tmp_path, "\n".join(lines) + "\n")
    monkeypatch.setattr(letor, "_CHUNK", 50)
    with pytest.raises(DataFormatError) as e:
        read_letor(p)
    assert e.value.line == 38 and e.value.token == "2:bad"


def test_no_trailing_newline_and_long_line(tmp_path, monkeypatch):
    long = "1 qid:1 " + " ".join(f"{j}:{j}" for j in range(1, 200))
    p = write(tmp_path, "0 qid:1 1:1\n" + long)
    monkeypatch.setattr(letor, "_CHUNK", 16)
    ds = read_letor(p)
    assert ds.n_docs == 2 and ds.features[1, 198] == 199


# ----------------------------------------------------------------------------- cache
def test_binary_cache_reuses_and_invalidates(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    p = write(tmp_path, SIMPLE)
    a = read_letor(p, cache=cache)
    files = list(cache.iterdir())
    assert len(files) == 1 and files[0].name.endswith(".npz")
    calls = []
    real = letor._read
    monkeypatch.setattr(letor, "_read", lambda *a, **k: calls.append(1) or real(*a, **k))
    b = read_letor(p, cache=cache)
    assert calls == []  # served from the cache
    same(a, b)
    # other options: another cache entry
    read_letor(p, cache=cache, missing="zero")
    assert calls == [1] and len(list(cache.iterdir())) == 2
    # changing the file (content and mtime) invalidates
    p.write_text(SIMPLE.replace("2 qid:10", "1 qid:10"))
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    c = read_letor(p, cache=cache)
    assert calls == [1, 1] and c.labels[0] == 1
    assert not [f for f in cache.iterdir() if f.name.endswith(".tmp")]
    # same size and mtime, other content: caught by the sha256 unless cache_verify=False
    st = p.stat()
    p.write_text(SIMPLE.replace("2 qid:10", "0 qid:10"))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert read_letor(p, cache=cache, cache_verify=False).labels[0] == 1  # stale, trusted
    assert calls == [1, 1]
    assert read_letor(p, cache=cache).labels[0] == 0
    assert calls == [1, 1, 1]


def test_cache_true_uses_the_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("NDCGLAB_CACHE_DIR", str(tmp_path / "c"))
    p = write(tmp_path, SIMPLE)
    read_letor(p, cache=True)
    assert len(list((tmp_path / "c").iterdir())) == 1
    assert sorted(x.name for x in tmp_path.iterdir()) == ["c", "d.txt"]
