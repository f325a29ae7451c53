"""The LETOR reader on small files whose dataset or error is written out by hand in the test.

Every error of the reader says what, where and the fix (``docs/data.md``); the tests here pin
those texts word for word, and the rules of the query files (``.query``) that the older tests
left open (found by mutation testing, see CONTRIBUTING.md).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndcglab.data import read_letor
from ndcglab.data.letor import read_query_file
from ndcglab.errors import DataFormatError


def _write(tmp_path: Path, text: str, name: str = "d.txt") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8"))
    return p


def _ids(ds: Any) -> list[str]:
    assert ds.doc_ids is not None
    return list(ds.doc_ids.tolist())


# ----------------------------------------------------------------------------- .query files
QUERY_REASON = "query file lines must each hold one list size (a non-negative integer)"
QUERY_FIX = "write one integer per line: the number of documents of each query, in order"


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("2\n+3\n", "+3"),  # a sign is not a list size
        ("2\n3_0\n", "3_0"),  # nor Python's digit separator
        ("2\n\u0663\n", "\u0663"),  # nor a non-ASCII digit
        ("2\n3X\n", "3X"),
        ("2\nX3\n", "X3"),
        ("2\n3\u00a0\n", "3\u00a0"),  # only space, tab, VT and FF are stripped
        ("2\n\u20033\n", "\u20033"),
    ],
)
def test_query_file_refuses_non_decimal_sizes(tmp_path: Path, text: str, token: str) -> None:
    p = _write(tmp_path, text, "a.query")
    with pytest.raises(DataFormatError) as e:
        read_query_file(p)
    assert (e.value.reason, e.value.fix) == (QUERY_REASON, QUERY_FIX)
    assert (e.value.path, e.value.line, e.value.token) == (str(p), 2, token)


def test_query_file_strips_blanks_and_empty_file_is_int64(tmp_path: Path) -> None:
    p = _write(tmp_path, "\t2 \v\n\f1\n", "a.query")
    got = read_query_file(p)
    assert got.dtype == np.int64 and got.tolist() == [2, 1]
    empty = read_query_file(_write(tmp_path, "", "e.query"))
    assert empty.dtype == np.int64 and empty.tolist() == []


def test_query_file_sizes_must_add_up(tmp_path: Path) -> None:
    p = _write(tmp_path, "1 1:1\n0 1:2\n2 1:3\n")
    q = _write(tmp_path, "2\n2\n", "g.query")
    with pytest.raises(DataFormatError) as e:
        read_letor(p, query_file=q)
    assert e.value.reason == (
        f"the query file's 2 list sizes add up to 4 documents but {p} has 3 data lines"
    )
    assert e.value.fix == (
        "the query file must hold one line per query with its number of documents, in the data "
        "file's order, adding up to the number of data lines"
    )
    assert e.value.path == str(q)


QIDS = "1 qid:1 1:1\n0 qid:1 1:2\n2 qid:2 1:3\n"


def test_explicit_query_file_that_disagrees_with_the_qids(tmp_path: Path) -> None:
    p = _write(tmp_path, QIDS)
    q = _write(tmp_path, "1\n1\n1\n", "bad.query")
    with pytest.raises(DataFormatError) as e:
        read_letor(p, query_file=q)
    assert e.value.reason == (
        "the query file's 3 list sizes adding up to 3 documents, which do not match the 2 qid: "
        f"blocks (3 documents) of {p}"
    )
    assert e.value.fix == (
        "drop the query file (the qid: tokens already define the queries), or make its sizes "
        "equal the lengths of the qid: blocks"
    )
    assert e.value.path == str(q) and e.value.line is None


def test_found_query_file_that_disagrees_is_ignored_with_a_warning(tmp_path: Path) -> None:
    p = _write(tmp_path, QIDS)
    q = _write(tmp_path, "1\n2\n", "d.txt.query")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = read_letor(p)
    assert ds.boundaries.tolist() == [0, 2, 3]
    [w] = [w for w in caught if issubclass(w.category, UserWarning)]
    assert str(w.message) == (
        f"ignoring the query file {q}, found beside the data: it has 2 list sizes adding up to "
        f"3 documents, which do not match the 2 qid: blocks (3 documents) of {p}; the qid: tokens "
        "define the queries. Fix: delete or rename it, or make its sizes equal the lengths of the "
        "qid: blocks"
    )


def test_found_query_file_that_cannot_be_read_is_ignored_with_a_warning(tmp_path: Path) -> None:
    p = _write(tmp_path, QIDS)
    q = _write(tmp_path, "2\nx\n", "d.txt.query")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = read_letor(p)
    assert ds.query_ids.tolist() == ["1", "2"]
    [w] = [w for w in caught if issubclass(w.category, UserWarning)]
    assert str(w.message) == (
        f"ignoring {q}, found beside {p}: {QUERY_REASON} (line 2); the qid: tokens define the "
        "queries. Fix: delete or rename it"
    )


# ----------------------------------------------------------------------------- line errors
def _error(tmp_path: Path, text: str, **kw: Any) -> DataFormatError:
    p = _write(tmp_path, text)
    with pytest.raises(DataFormatError) as e:
        read_letor(p, **kw)
    assert e.value.path == str(p)
    return e.value


def test_label_error_text(tmp_path: Path) -> None:
    e = _error(tmp_path, "1 qid:1 1:1\nnan qid:1 1:2\n")
    assert (e.reason, e.line, e.token) == ("the label is not a finite number", 2, "nan")
    assert e.fix == (
        "each line starts with a finite numeric relevance label, e.g. '2 qid:10 1:0.5 ...'"
    )


def test_missing_qid_error_text(tmp_path: Path) -> None:
    e = _error(tmp_path, "1 qid:1 1:1\n0 1:2\n")
    assert (e.reason, e.line, e.token) == ("expected qid:<id> after the label", 2, "1:2")
    assert e.fix == "give every line a qid:<id> token right after the label"


def test_unexpected_qid_error_text(tmp_path: Path) -> None:
    p = _write(tmp_path, "1 1:1\n0 qid:1 1:2\n")
    _write(tmp_path, "2\n", "d.txt.query")
    with pytest.raises(DataFormatError) as info:
        read_letor(p)
    e = info.value
    assert e.reason == "qid: on a line although the first data line (line 1) has none"
    assert (e.line, e.token) == (2, "qid:1")
    assert e.fix == "give every line a qid:<id>, or none of them and use a .query file"


def test_index_too_large_texts(tmp_path: Path) -> None:
    # with n_features: the index before the first colon is compared, whatever follows
    e = _error(tmp_path, "1 qid:1 1:1 5:1:2\n", n_features=3)
    assert (e.reason, e.line, e.token) == ("feature index exceeds n_features=3", 1, "5:1:2")
    assert e.fix == "pass a larger n_features, or n_features=None to use the file's largest index"
    # without: more than 9 digits
    e = _error(tmp_path, "1 qid:1 1:1 1234567890:1\n")
    assert e.reason == "feature index is too large (more than 9 digits; the cap is 100000)"
    assert (e.line, e.token) == (1, "1234567890:1")
    assert e.fix == "number features from 1; if the file is 0-based, add 1 to every index"


@pytest.mark.parametrize(
    ("line", "reason", "token", "fix"),
    [
        (
            "1 qid: 1:1",
            "empty query id",
            "qid:",
            "write qid:<id> with a non-empty id",
        ),
        (
            "1 qid:1 1:1 7",
            "malformed feature pair, expected <index>:<value>",
            "7",
            "write features as <index>:<value> with a positive integer index, e.g. '7:0.25'; "
            "a comment must start with '#'",
        ),
        (
            "1 qid:1 0:1",
            "feature index must be a positive integer (1-based)",
            "0:1",
            "number features from 1; if the file is 0-based, add 1 to every index",
        ),
        (
            "1 qid:1 1:1 1:2",
            "feature index appears twice on this line",
            "1:2",
            "keep one value per feature index on each line",
        ),
        (
            "1 qid:1 1:abc",
            "feature value is not a number",
            "1:abc",
            "write feature values as decimal numbers; use NULL for a missing value",
        ),
        (
            "1 qid:1 1:1e39",
            "feature value is infinite or beyond the float32 range (about ±3.4e38)",
            "1:1e39",
            "write finite values within ±3.4e38 (rescale the feature), or NULL for a missing value",
        ),
    ],
)
def test_line_error_texts(tmp_path: Path, line: str, reason: str, token: str, fix: str) -> None:
    e = _error(tmp_path, "2 qid:1 1:0.5\n" + line + "\n")
    assert (e.reason, e.line, e.token, e.fix) == (reason, 2, token, fix)


def test_split_query_error_text(tmp_path: Path) -> None:
    e = _error(tmp_path, "1 qid:a 1:1\n0 qid:b 1:2\n2 qid:a 1:3\n")
    assert e.reason == "query id 'a' starts again on line 3 after other queries; its first block "\
        "starts on line 1"  # fmt: skip
    assert (e.line, e.token) == (3, "qid:a")
    assert e.fix == (
        "sort the file by qid so each query's lines are contiguous, or pass "
        "split_queries='merge' (gather the blocks into one query) or 'separate' "
        "(keep them as distinct queries Q, Q#2, ...)"
    )


# ----------------------------------------------------------------------------- comments
@pytest.mark.parametrize(
    ("first", "keys"),
    [
        # spaced and compact pairs, in the order of the first data line
        ("#a = 1 b = 2 c=3", ["a", "b", "c"]),
        ("#a=1 b = 2", ["a", "b"]),
        ("#b = 2 a=1", ["b", "a"]),
        ("#a=1 b=2 c=3", ["a", "b", "c"]),
        ("#note a=1 b=2", ["a", "b"]),
        ("#a = 1 b=2 c=3", ["a", "b", "c"]),
        ("#a = 1 b = 2", ["a", "b"]),
        # a key is the text before the first '=', a pair needs both sides, a dangling '=' is
        # ignored
        ("#u=v=w b=2", ["u", "b"]),
        ("#=5 b=2 k= =", ["b"]),
        ("#b=2 note =", ["b"]),
        ("#b=2 x = ", ["b"]),
        ("#x=1 = y b=2", ["x", "b"]),
    ],
)
def test_comment_keys_and_their_order(tmp_path: Path, first: str, keys: list[str]) -> None:
    # the second line names the keys in another order, and one that the first line lacks
    text = f"1 qid:1 1:1 {first}\n0 qid:1 1:2 #z=9 c=3 b=2 a=1 u=v\n"
    ds = read_letor(_write(tmp_path, text))
    assert list(ds.extras) == keys + [k for k in ("z", "c", "b", "a", "u") if k not in keys]
    if "b" in ds.extras:
        assert ds.extras["b"].tolist() == [2.0, 2.0]


def test_three_comment_keys_of_different_lengths(tmp_path: Path) -> None:
    text = (
        "1 qid:1 1:1 #docid = GX01 longer_key = 0.25 k = x\n"
        "0 qid:1 1:2 #k = y docid = GX02 longer_key = 0.5\n"
        "0 qid:2 1:3 #longer_key=1 docid=GX03\n"
    )
    ds = read_letor(_write(tmp_path, text))
    assert _ids(ds) == ["GX01", "GX02", "GX03"]
    assert list(ds.extras) == ["longer_key", "k"]
    assert ds.extras["longer_key"].tolist() == [0.25, 0.5, 1.0]
    assert ds.extras["k"].tolist() == ["x", "y", ""]


def test_leading_comment_lines_do_not_name_keys(tmp_path: Path) -> None:
    text = "# header x=1 note = 2\n\n1 qid:1 1:1 #a=1 b = 2\n0 qid:1 1:2 #b=3 a=4\n"
    ds = read_letor(_write(tmp_path, text))
    assert list(ds.extras) == ["a", "b"]
    assert ds.extras["a"].tolist() == [1.0, 4.0] and ds.extras["b"].tolist() == [2.0, 3.0]


def test_a_second_hash_is_part_of_the_comment(tmp_path: Path) -> None:
    # everything after the first '#' is the comment, so "#b" is a key like any other word
    text = "1 qid:1 1:1 #a=1 #b=2\n0 qid:1 1:2 #a=3\n"
    ds = read_letor(_write(tmp_path, text))
    assert list(ds.extras) == ["a", "#b"]
    assert ds.extras["#b"].tolist()[0] == 2.0 and np.isnan(ds.extras["#b"][1])


def test_string_extras_across_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ndcglab.data import letor

    # 'k' is a number in the first block, missing on a line, text in a later block: the column
    # is text, numbers written back as repr(float), missing values as ""; 's' first appears in
    # a later block
    lines = ["1 qid:1 1:1 #k=0.5", "0 qid:1 1:2 #j=1", "1 qid:2 1:3 #k=abc s=t"]
    monkeypatch.setattr(letor, "_CHUNK", 24)
    ds = read_letor(_write(tmp_path, "\n".join(lines) + "\n"))
    assert ds.extras["k"].tolist() == ["0.5", "", "abc"]
    assert ds.extras["s"].tolist() == ["", "", "t"]
    assert ds.extras["j"].tolist()[1] == 1.0


# ----------------------------------------------------------------------------- the feature cap
def test_max_features_limit_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    from ndcglab.data.letor import MAX_FEATURES, max_features_limit
    from ndcglab.errors import SpecError

    monkeypatch.delenv("NDCGLAB_MAX_FEATURES", raising=False)
    assert max_features_limit() == MAX_FEATURES == 100_000
    assert max_features_limit(5) == 5 and max_features_limit(1) == 1
    monkeypatch.setenv("NDCGLAB_MAX_FEATURES", " \t")
    assert max_features_limit() == 100_000
    monkeypatch.setenv("NDCGLAB_MAX_FEATURES", " 12 ")
    assert max_features_limit() == 12 and max_features_limit(7) == 7
    monkeypatch.setenv("NDCGLAB_MAX_FEATURES", "1")
    assert max_features_limit() == 1
    for bad in ("abc", "0", "-3", "2.5"):
        monkeypatch.setenv("NDCGLAB_MAX_FEATURES", bad)
        with pytest.raises(SpecError) as e:
            max_features_limit()
        assert str(e.value) == (
            f"NDCGLAB_MAX_FEATURES={bad!r} is not a positive integer. Fix: give the largest "
            "feature index to accept, e.g. NDCGLAB_MAX_FEATURES=200000"
        )
    with pytest.raises(SpecError) as e:
        max_features_limit(0)
    assert str(e.value) == (
        "max_features=0 is not a positive integer. Fix: give the largest feature index to accept, "
        "e.g. max_features=200000"
    )


CAP_FIX = (
    "check the line (a 0-based or mangled index?); if the file really has that many features, "
    "pass n_features= or max_features=, or set NDCGLAB_MAX_FEATURES"
)


@pytest.mark.parametrize("where", [1, 3])
def test_index_beyond_the_cap_names_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: int
) -> None:
    monkeypatch.delenv("NDCGLAB_MAX_FEATURES", raising=False)
    lines = ["1 qid:1 1:1 2:2", "0 qid:1 1:3", "2 qid:2 3:1"]
    lines[where - 1] = "1 qid:1 1:1 8:0.5"
    p = _write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(DataFormatError) as info:
        read_letor(p, max_features=5)
    e = info.value
    assert e.reason == "feature index 8 is larger than the cap of 5 features"
    assert (e.path, e.line, e.token, e.fix) == (str(p), where, "8:0.5", CAP_FIX)
    assert read_letor(p, max_features=8).features.shape == (3, 8)


def test_cap_error_token_with_bad_bytes(tmp_path: Path) -> None:
    p = tmp_path / "d.txt"
    p.write_bytes(b"1 qid:1 1:1 9:\xff\n")
    with pytest.raises(DataFormatError) as info:
        read_letor(p, max_features=5)
    assert (info.value.line, info.value.token) == (1, "9:\ufffd")


def test_no_qid_error_names_the_first_token(tmp_path: Path) -> None:
    e = _error(tmp_path, "1\n")
    assert (e.reason, e.line, e.token) == ("no qid:<id> after the label, and no query file", 1, "")
    long = "1:" + "5" * 248
    e = _error(tmp_path, f"1 {long}\n")
    assert e.token == long[:199]  # the 200 characters after the label, blank included


# ----------------------------------------------------------------------------- more texts
CR_REASON = "carriage return (\\r) not followed by a newline: CR-only line endings are not read"
CR_FIX = "convert the file to LF line endings, e.g. tr '\\r' '\\n' < IN > OUT"


def test_bare_carriage_return_names_line_and_the_text_before_it(tmp_path: Path) -> None:
    e = _error(tmp_path, "1 qid:1 1:1\n0 qid:1 1:2\rX 1:3\n")
    assert (e.reason, e.line, e.token, e.fix) == (CR_REASON, 2, "0 qid:1 1:2\r", CR_FIX)
    # a long line: the token is the 40 characters before the CR, and the CR
    long = "0 qid:1 " + " ".join(f"{j}:{j}" for j in range(2, 20))
    e = _error(tmp_path, f"1 qid:1 1:1\n1 qid:1 1:1\n{long}\rX 1:3\n")
    assert (e.line, e.token) == (3, long[-40:] + "\r")
    # the CR as the very first byte
    e = _error(tmp_path, "\r1 qid:1 1:1\n")
    assert (e.line, e.token) == (1, "\r")


def test_empty_file_text(tmp_path: Path) -> None:
    e = _error(tmp_path, "# only a comment\n\n")
    assert e.reason == "no data lines (the file is empty or holds only comments)"
    assert e.line is None and e.fix == (
        "check the path; a LETOR file has one document per line: "
        "'<label> qid:<id> <index>:<value> ...'"
    )


def test_label_that_overflows_is_refused(tmp_path: Path) -> None:
    e = _error(tmp_path, "1 qid:1 1:1\n0 qid:1 1:2\n1e999 qid:1 1:2\n")
    assert (e.reason, e.line, e.token) == ("the label is not a finite number", 3, "1e999")
    ds = read_letor(_write(tmp_path, "1 qid:1 1:1\n0.12345678901234567890123 qid:1 1:2\n"))
    assert ds.labels.tolist() == [1.0, 0.12345678901234567890123]


def test_no_qid_error_text(tmp_path: Path) -> None:
    e = _error(tmp_path, "# c\n1 1:1\n0 1:2\n")
    assert (e.reason, e.line, e.token) == (
        "no qid:<id> after the label, and no query file", 2, "1:1"
    )  # fmt: skip
    assert e.fix == (
        "add qid:<id> to every line, or pass query_file= (a LightGBM .query file with one list "
        "size per line; PATH.query is picked up automatically)"
    )


def test_argument_errors_text(tmp_path: Path) -> None:
    from ndcglab.errors import SpecError

    p = _write(tmp_path, "1 qid:1 1:1\n")
    with pytest.raises(SpecError) as e:
        read_letor(p, missing="bogus")  # type: ignore[arg-type]
    assert str(e.value) == "missing='bogus'. Fix: choose one of nan, min, zero"
    with pytest.raises(SpecError) as e:
        read_letor(p, split_queries="bogus")  # type: ignore[arg-type]
    assert str(e.value) == "split_queries='bogus'. Fix: choose one of error, merge, separate"
    for bad in (0, 1.5, -2):
        with pytest.raises(SpecError) as e:
            read_letor(p, n_features=bad)  # type: ignore[arg-type]
        assert str(e.value) == (
            f"n_features must be a positive integer or None, got {bad!r}. Fix: give the number "
            "of features, or leave it out to read it from the file"
        )
    assert read_letor(p, n_features=1).features.shape == (1, 1)
    assert read_letor(p, n_features=2.0).features.shape == (1, 2)  # type: ignore[arg-type]
    q = tmp_path / "nope.query"
    with pytest.raises(DataFormatError) as missing:
        read_letor(p, query_file=q)
    got = (missing.value.reason, missing.value.path, missing.value.fix)
    assert got == ("query file not found", str(q), "check the path")


def test_errors_across_blocks_name_the_right_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ndcglab.data import letor

    lines = [f"{i % 3} qid:{i // 4} 1:{i}" for i in range(30)]
    lines.append("1 qid:2 1:99")  # qid 2 (lines 9-12) again on line 31
    monkeypatch.setattr(letor, "_CHUNK", 40)
    p = _write(tmp_path, "\n".join(lines) + "\n")
    e = _error(tmp_path, "\n".join(lines) + "\n")
    assert e.reason == "query id '2' starts again on line 31 after other queries; its first "\
        "block starts on line 9"  # fmt: skip
    assert (e.line, e.token) == (31, "qid:2")
    m = read_letor(p, split_queries="merge")
    assert m.query_ids.tolist() == [str(q) for q in range(8)]
    assert m.features[:, 0].tolist()[8:13] == [8.0, 9.0, 10.0, 11.0, 99.0]
    # a bare CR in a later block
    lines[20] = "0 qid:5 1:20\rX"
    e = _error(tmp_path, "\n".join(lines) + "\n")
    assert (e.reason, e.line) == (CR_REASON, 21)


def test_query_file_read_beside_and_explicit_with_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ndcglab.data import letor

    p = _write(tmp_path, "".join(f"{i % 2} 1:{i}\n" for i in range(9)))
    q = _write(tmp_path, "4\n5\n", "sizes.query")
    monkeypatch.setattr(letor, "_CHUNK", 16)
    ds = read_letor(p, query_file=q)
    assert ds.boundaries.tolist() == [0, 4, 9] and ds.query_ids.tolist() == ["0", "1"]
    assert ds.features[:, 0].tolist() == [float(i) for i in range(9)]
    bad = _write(tmp_path, "4\n4\n", "bad.query")
    with pytest.raises(DataFormatError) as e:
        read_letor(p, query_file=bad)
    assert e.value.reason == (
        f"the query file's 2 list sizes add up to 8 documents but {p} has 9 data lines"
    )


# ----------------------------------------------------------------------------- the cache
def test_cache_keys_every_option(tmp_path: Path) -> None:
    text = "1 qid:1 1:1 2:NULL\n0 qid:1 1:2 2:3\n2 qid:2 1:3 2:NULL\n0 qid:1 1:4 2:5\n"
    p = _write(tmp_path, text)
    cache = tmp_path / "cache"
    cache.mkdir()

    def both(**kw: Any) -> Any:
        plain = read_letor(p, **kw)
        for _ in range(2):  # written, then read back
            got = read_letor(p, cache=cache, **kw)
            assert np.array_equal(got.features, plain.features, equal_nan=True)
            assert got.boundaries.tolist() == plain.boundaries.tolist()
            assert got.query_ids.tolist() == plain.query_ids.tolist()
        return plain

    nan = both(split_queries="merge")
    assert np.isnan(nan.features[0, 1])
    assert both(split_queries="merge", missing="zero").features[:, 1].tolist() == [0, 3, 5, 0]
    assert both(split_queries="merge", missing="min").features[:, 1].tolist() == [3, 3, 5, 0]
    assert both(split_queries="separate").query_ids.tolist() == ["1", "2", "1#2"]
    assert both(split_queries="merge", n_features=3).features.shape == (4, 3)
    # n_features fixes the width and max_features only caps it: the same number, another dataset
    assert both(split_queries="merge", max_features=5).features.shape == (4, 2)
    assert both(split_queries="merge", n_features=5).features.shape == (4, 5)
    with pytest.raises(DataFormatError):
        read_letor(p, cache=cache, split_queries="merge", max_features=1)
    # files without qid: the query file is part of the key
    p2 = _write(tmp_path, "1 1:1\n0 1:2\n2 1:3\n", "noqid.txt")
    q1 = _write(tmp_path, "1\n2\n", "a.query")
    q2 = _write(tmp_path, "2\n1\n", "b.query")
    assert read_letor(p2, cache=cache, query_file=q1).boundaries.tolist() == [0, 1, 3]
    assert read_letor(p2, cache=cache, query_file=q2).boundaries.tolist() == [0, 2, 3]
    assert read_letor(p2, cache=cache, query_file=q1).boundaries.tolist() == [0, 1, 3]


def test_no_cache_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where = tmp_path / "cache_dir"
    monkeypatch.setenv("NDCGLAB_CACHE_DIR", str(where))
    p = _write(tmp_path, "1 qid:1 1:1\n")
    read_letor(p)
    assert not where.exists() or not any(where.iterdir())
    read_letor(p, cache=True)
    assert any(where.iterdir())


def test_cap_does_not_apply_with_n_features(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # n_features fixes the width: max_features and NDCGLAB_MAX_FEATURES are not read
    monkeypatch.setenv("NDCGLAB_MAX_FEATURES", "zero")
    p = _write(tmp_path, "1 qid:1 1:1 7:2\n")
    assert read_letor(p, n_features=8).features.shape == (1, 8)
    assert read_letor(p, n_features=8, max_features=0).features.shape == (1, 8)


def test_bare_cr_token_starts_at_its_own_line(tmp_path: Path) -> None:
    e = _error(tmp_path, "1 qid:1 1:1\n1 qid:1 1:2\n0 qid:1 1:3\rX\n")
    assert (e.line, e.token) == (3, "0 qid:1 1:3\r")
    p = tmp_path / "bad.txt"
    p.write_bytes(b"1 qid:1 1:1\n0 qid:1 1:\xff\rX\n")
    with pytest.raises(DataFormatError) as info:
        read_letor(p)
    assert (info.value.line, info.value.token) == (2, "0 qid:1 1:\ufffd\r")


def test_cache_follows_the_query_file_content(tmp_path: Path) -> None:
    import os

    cache = tmp_path / "cache"
    cache.mkdir()
    p = _write(tmp_path, "1 1:1\n0 1:2\n2 1:3\n")
    q = _write(tmp_path, "1\n2\n", "g.query")
    assert read_letor(p, query_file=q, cache=cache).boundaries.tolist() == [0, 1, 3]
    q.write_text("2\n1\n")
    st = q.stat()
    os.utime(q, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert read_letor(p, query_file=q, cache=cache).boundaries.tolist() == [0, 2, 3]


def test_cached_read_warns_about_a_found_query_file(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    p = _write(tmp_path, QIDS)
    _write(tmp_path, "1\n2\n", "d.txt.query")
    with pytest.warns(UserWarning, match="ignoring the query file"):
        ds = read_letor(p, cache=cache)
    assert ds.boundaries.tolist() == [0, 2, 3]


def test_empty_key_on_a_later_line(tmp_path: Path) -> None:
    ds = read_letor(_write(tmp_path, "1 qid:1 1:1\n0 qid:1 1:2 #=5 a=1\n"))
    assert list(ds.extras) == ["a"]
    assert np.isnan(ds.extras["a"][0]) and ds.extras["a"][1] == 1.0


def test_wide_index_after_the_first_64_kib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NDCGLAB_MAX_FEATURES", raising=False)
    lines = [f"{i % 3} qid:{i // 10} 1:{i} 2:0.5" for i in range(4000)]  # about 90 KiB
    lines.append("1 qid:x 1:1 9:2")
    p = _write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(DataFormatError) as e:
        read_letor(p, max_features=5)
    assert e.value.reason == "feature index 9 is larger than the cap of 5 features"
    assert (e.value.line, e.value.token) == (4001, "9:2")
    assert read_letor(p).features.shape == (4001, 9)


def test_first_data_line_is_found_across_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ndcglab.data import letor

    monkeypatch.setattr(letor, "_CHUNK", 32)
    # blocks of comments only, then lines without qid: and no query file
    text = "# a comment line of some length\n# another comment line\n1 1:1\n0 1:2\n"
    e = _error(tmp_path, text)
    assert (e.reason, e.line, e.token) == (
        "no qid:<id> after the label, and no query file", 3, "1:1"
    )  # fmt: skip
    # a qid: in a later block of a file whose first data line has none
    lines = ["1 1:1", "0 1:2", "2 1:3", "1 1:4", "0 1:5", "1 qid:1 1:6"]
    p = _write(tmp_path, "\n".join(lines) + "\n")
    _write(tmp_path, "6\n", "d.txt.query")
    with pytest.raises(DataFormatError) as info:
        read_letor(p)
    assert info.value.reason == "qid: on a line although the first data line (line 1) has none"
    assert info.value.line == 6


def test_blocks_keep_float32_features_and_doc_ids_follow_a_merge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ndcglab.data import letor

    monkeypatch.setattr(letor, "_CHUNK", 40)
    text = (
        "1 qid:a 1:1 2:0.5 #docid = d1\n0 qid:b 1:2 #docid = d2\n"
        "2 qid:a 1:3 3:7 #docid = d3\n0 qid:c 1:4 #docid = d4\n"
    )
    ds = read_letor(_write(tmp_path, text), split_queries="merge")
    assert ds.features.dtype == np.float32 and ds.features.shape == (4, 3)
    assert ds.features.tolist() == [[1, 0.5, 0], [3, 0, 7], [2, 0, 0], [4, 0, 0]]
    assert _ids(ds) == ["d1", "d3", "d2", "d4"]
    assert ds.labels.tolist() == [1.0, 2.0, 0.0, 0.0]


def test_extras_of_earlier_larger_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ndcglab.data import letor

    # a first block of three lines without the keys, then blocks that bring them: 's' text,
    # 'k' a number first and text later, with a line that lacks it
    lines = ["1 qid:1 1:1", "0 qid:1 1:2", "1 qid:1 1:3", "0 qid:2 1:4 #s=t k=0.25", "1 qid:2 1:5",
             "0 qid:2 1:6 #k=x"]  # fmt: skip
    monkeypatch.setattr(letor, "_CHUNK", 40)
    ds = read_letor(_write(tmp_path, "\n".join(lines) + "\n"))
    assert ds.extras["s"].tolist() == ["", "", "", "t", "", ""]
    assert ds.extras["k"].tolist() == ["", "", "", "0.25", "", "x"]
    # the first block holds more lines than all later ones
    ds = read_letor(_write(tmp_path, "\n".join([*lines[:3], "0 qid:2 1:4 #s=t"]) + "\n"))
    assert ds.extras["s"].tolist() == ["", "", "", "t"]


def test_large_gzip_file_and_comment_only_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gzip

    from ndcglab.data import letor

    # more than 1 MiB of text in a gzip stream: the read buffer grows while reading
    lines = [f"{i % 3} qid:{i // 20} 1:{i} 2:0.25 #docid = D{i}" for i in range(40_000)]
    text = "\n".join(lines) + "\n"
    assert len(text) > 1.2 * (1 << 20)
    g = tmp_path / "big.txt.gz"
    g.write_bytes(gzip.compress(text.encode()))
    ds = read_letor(g)
    assert ds.features.shape == (40_000, 2) and ds.n_queries == 2000
    assert ds.features[39_999, 0] == 39_999 and _ids(ds)[-1] == "D39999"
    # a block that holds only comment lines, after the keys are known
    monkeypatch.setattr(letor, "_CHUNK", 40)
    small = ["1 qid:1 1:1 #docid=a k=1", "# comment comment comment 1", "# comment comment 2",
             "0 qid:1 1:2 #docid=b k=z"]  # fmt: skip
    ds = read_letor(_write(tmp_path, "\n".join(small) + "\n"))
    assert _ids(ds) == ["a", "b"] and ds.extras["k"].tolist() == ["1.0", "z"]


# ----------------------------------------------------------------- warnings name the caller
# mutmut wraps every function of the mutated copy in a function of its own package, so the first
# frame outside ndcglab is then mutmut's: the attribution is checked in the normal suite only
_under_mutmut = pytest.mark.skipif(
    "MUTANT_UNDER_TEST" in os.environ, reason="call sites are mutmut's wrappers under mutmut"
)


@_under_mutmut
@pytest.mark.parametrize("cached", [False, True])
@pytest.mark.parametrize("query_text", ["1\n2\n", "2\nx\n"])
def test_query_file_warnings_point_at_the_callers_line(
    tmp_path: Path, cached: bool, query_text: str
) -> None:
    # A warning is attributed (file and line) to the code that called read_letor, so that a
    # user's "-W error" or warnings filter by module sees their own call, not ndcglab's insides.
    p = _write(tmp_path, QIDS)
    _write(tmp_path, query_text, "d.txt.query")
    kw: dict[str, Any] = {"cache": tmp_path / "cache"} if cached else {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_letor(p, **kw)
    [w] = [w for w in caught if issubclass(w.category, UserWarning)]
    assert w.filename == __file__, w.filename


def test_query_file_size_too_long_for_int_is_refused_with_its_line(tmp_path: Path) -> None:
    # Python refuses to convert a decimal string of more than 4,300 digits (ValueError): the
    # reader must still give its one-line error naming the line, not a traceback or a size
    q = _write(tmp_path, "3\n" + "9" * 5000 + "\n", "d.query")
    with pytest.raises(DataFormatError) as e:
        read_query_file(q)
    assert e.value.reason == QUERY_REASON
    assert e.value.line == 2
    assert e.value.path == str(q)


@_under_mutmut
def test_query_file_warning_points_at_the_caller_of_load_dataset(tmp_path: Path) -> None:
    from ndcglab.data import load_dataset

    p = _write(tmp_path, QIDS)
    _write(tmp_path, "1\n2\n", "d.txt.query")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_dataset(str(p))
    [w] = [w for w in caught if issubclass(w.category, UserWarning)]
    assert w.filename == __file__, w.filename


@pytest.mark.parametrize(
    ("head", "first", "keys", "k_values"),
    [
        # the last pair spaced, at the comment's end
        ("", "#docid = GX01 longer_key = 0.25 k = x", ["longer_key", "k"], ["x", "y"]),
        ("", "#docid=GX01 longer_key=0.25 k=x", ["longer_key", "k"], ["x", "y"]),
        ("", "#docid = GX01 longer_key=0.25 k = x", ["longer_key", "k"], ["x", "y"]),
        # comment and empty lines before the first data line, blanks before its label
        (
            "# header a=1 b = 2\n\n \t\n",
            "#docid=GX01 longer_key=0.25 k=x",
            ["longer_key", "k"],
            ["x", "y"],
        ),
        (" \t", "#docid=GX01 longer_key=0.25 k=x", ["longer_key", "k"], ["x", "y"]),
        # a second '#' belongs to the comment; a value made of the letter X
        ("", "#docid=GX01 longer_key=0.25 k=x #h=1", ["longer_key", "k", "#h"], ["x", "y"]),
        ("", "#docid = GX01 longer_key = 0.25 k = X", ["longer_key", "k"], ["X", "y"]),
    ],
)
def test_keys_of_the_first_line_need_one_pass(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    head: str,
    first: str,
    keys: list[str],
    k_values: list[str],
) -> None:
    """The keys named on the first data line are known before the block is parsed, so a file
    whose later lines name no other key is parsed in one pass (an unknown key costs a re-parse:
    the kernel stops, the key is added, the block is parsed again)."""
    from ndcglab.data import _parse_kernels

    calls: list[int] = []
    parse = _parse_kernels.parse_block

    def counting(*args: Any) -> Any:
        calls.append(1)
        return parse(*args)

    monkeypatch.setattr(_parse_kernels, "parse_block", counting)
    text = f"{head}1 qid:1 1:1 {first}\n0 qid:1 1:2 #k = y docid = GX02 longer_key = 0.5\n"
    ds = read_letor(_write(tmp_path, text))
    assert _ids(ds) == ["GX01", "GX02"]
    assert list(ds.extras) == keys
    assert ds.extras["longer_key"].tolist() == [0.25, 0.5]
    assert ds.extras["k"].tolist() == k_values
    assert len(calls) == 1
    # a key first named on a later line: one more pass, the same dataset otherwise
    calls.clear()
    ds2 = read_letor(_write(tmp_path, text.replace("#k = y", "#k = y new = 3"), "e.txt"))
    assert list(ds2.extras) == [*keys, "new"] and len(calls) == 2
