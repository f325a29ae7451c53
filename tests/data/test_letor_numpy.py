"""The NumPy reader (``ndcglab.data._letor_numpy``) against the Numba parser.

The NumPy reader takes well-formed files of ordinary size and must give the Numba parser's
dataset bit for bit; on anything else it must decline (never raise, never read differently), so
that the Numba parser applies and reports every rule. These tests read each file both ways:
once as :func:`read_letor` does by default, once with the NumPy reader switched off.
"""

from __future__ import annotations

import gzip
import itertools
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndcglab.data import _letor_numpy, letor, read_letor
from ndcglab.errors import DataFormatError

from .oracle_letor import random_letor
from .test_fuzz_readers import mutate, valid_letor


@pytest.fixture(autouse=True, params=["one pass", "in parts"])
def reading(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test twice: the NumPy reader reading each file in one pass, and cutting every file
    into up to four parts read by threads (as it does for large files on a machine with
    cores to spare), so the joined parts are held to the same oracle."""
    if request.param == "in parts":
        monkeypatch.setattr(_letor_numpy, "SPLIT_BYTES", 1)
        monkeypatch.setattr(_letor_numpy, "_cores", lambda: 4)
    return str(request.param)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def assert_same_dataset(a: Any, b: Any) -> None:
    """Equal to the last bit: features (dtype, shape, NaN payloads), labels, queries, doc ids
    and every extra column (its kind too: numbers or strings)."""
    assert a.features.dtype == b.features.dtype and a.features.shape == b.features.shape
    assert np.array_equal(_bits(a.features), _bits(b.features))
    assert a.labels.dtype == b.labels.dtype and np.array_equal(_bits(a.labels), _bits(b.labels))
    assert a.boundaries.tolist() == b.boundaries.tolist()
    assert a.query_ids.tolist() == b.query_ids.tolist()
    assert (a.doc_ids is None) == (b.doc_ids is None)
    if a.doc_ids is not None:
        assert a.doc_ids.tolist() == b.doc_ids.tolist()
    assert list(a.extras) == list(b.extras)
    for k in a.extras:
        x, y = a.extras[k], b.extras[k]
        assert x.dtype == y.dtype, k
        if x.dtype == object:
            assert x.tolist() == y.tolist(), k
        else:
            assert np.array_equal(_bits(x), _bits(y)), k


def read_both(path: Path, **kw: Any) -> tuple[bool, Any, Any]:
    """``(taken, default, numba)``: whether the NumPy reader takes the file, what
    :func:`read_letor` gives by default, and what it gives with the NumPy reader switched off
    (a dataset, or the :class:`DataFormatError` raised)."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    limit = kw.get("n_features") or kw.get("max_features") or 1_000_000
    taken = _letor_numpy.parse(raw, kw.get("n_features"), limit) is not None

    def read() -> Any:
        try:
            return read_letor(path, **kw)
        except DataFormatError as exc:
            return exc

    loaded = letor._numba_parser_loaded
    letor._numba_parser_loaded = lambda: False  # the NumPy reader first, as in a fresh process
    try:
        default = read()
    finally:
        letor._numba_parser_loaded = loaded
    keep = _letor_numpy.MAX_BYTES
    _letor_numpy.MAX_BYTES = -1
    try:
        numba = read()
    finally:
        _letor_numpy.MAX_BYTES = keep
    return taken, default, numba


def check(path: Path, **kw: Any) -> bool:
    """The default read equals the Numba read: the same dataset, or the same error (a file the
    NumPy reader takes can still be refused by the rules both share, such as ``split_queries``).
    Returns whether the NumPy reader took it."""
    taken, default, numba = read_both(path, **kw)
    if isinstance(numba, DataFormatError):
        assert isinstance(default, DataFormatError), f"read, but the Numba parser says: {numba}"
        assert str(default) == str(numba)
    else:
        assert not isinstance(default, DataFormatError), default
        assert_same_dataset(default, numba)
    return taken


# ----------------------------------------------------------------------- well-formed files
def _number(rng: random.Random) -> str:
    k = rng.randrange(10)
    if k == 0:
        return str(rng.randint(-50, 50))
    if k == 1:
        return f"{rng.uniform(-1000, 1000):.{rng.randint(1, 9)}f}"
    if k == 2:
        return rng.choice(["0", "-0", "-0.000", "0.0", "007", "-00.50"])
    if k == 3:
        return f"{rng.random():.15f}"[: rng.randint(3, 17)]  # up to 16 digits
    if k == 4:
        return f"{rng.uniform(0, 1e9):.6f}"[:16]
    if k == 5:
        return rng.choice(["NULL", "null", "Null"])
    if k == 6 and rng.random() < 0.1:
        return f"{rng.uniform(-1, 1) * 1e-5:.7e}"  # as ndcglab's writer spells small values
    return f"{rng.random():.6f}"


def well_formed(rng: random.Random) -> bytes:
    """A file in the shape the NumPy reader takes: LETOR 3.0/4.0 and MSLR-like lines, dense or
    sparse, with or without comments, LF or CRLF, odd blanks, blank and comment-only lines."""
    nl = rng.choice(["\n", "\r\n"])
    width = rng.randint(1, 12)
    dense = rng.random() < 0.5
    comment = rng.randrange(4)
    blanks = [" ", " ", "\t", "  ", " \x0b", "\x0c "]
    lines = ["# header"] if rng.random() < 0.2 else []
    qid = rng.randint(0, 20)
    for _ in range(rng.randint(1, 6)):
        qid += rng.choice([1, 1, 7, 100])
        qtext = rng.choice([str(qid), str(qid), f"0{qid}"])
        for i in range(rng.randint(1, 5)):
            label = rng.choice(["0", "1", "2", "4", "1.5", "-1", "2.0", "0.25", "1e0", "3E-1"])
            parts = [label, f"qid:{qtext}"]
            for j in range(1, width + 1):
                if dense or rng.random() < 0.6:
                    parts.append(f"{j}:{_number(rng)}")
            sep = rng.choice(blanks) if rng.random() < 0.3 else " "
            line = rng.choice(["", " ", "\t"]) if rng.random() < 0.1 else ""
            line += sep.join(parts)
            if comment == 1:
                line += f" #docid = GX{qid}-{i} inc = {rng.random()!r} prob = {rng.random():.6f}"
            elif comment == 2:
                line += f"#docid = {qid * 1000 + i}"
            elif comment == 3 and rng.random() < 0.7:
                line += f"\t# docid = d{i}é inc = {rng.choice(['1', '0.5', '1e-3', '-2'])}"
            lines.append(line + rng.choice(["", "", " ", "\t"]))
            if rng.random() < 0.05:
                lines.append(rng.choice(["", "   ", "# a comment line", "#"]))
    text = nl.join(lines) + (nl if rng.random() < 0.9 else "")
    return text.encode()


def test_well_formed_files_are_taken_and_read_as_the_numba_parser_reads_them(tmp_path):
    rng = random.Random(7)
    taken = 0
    for k in range(300):
        raw = well_formed(rng)
        p = tmp_path / f"w{k}.txt"
        p.write_bytes(raw)
        taken += check(p)
    # the shape above is the NumPy reader's: it must take nearly all of them
    assert taken >= 295, taken


@pytest.mark.parametrize("gz", [False, True])
def test_options_give_the_same_dataset_both_ways(tmp_path, gz):
    rng = random.Random(11)
    for k in range(40):
        raw = well_formed(rng)
        p = tmp_path / (f"o{k}.txt.gz" if gz else f"o{k}.txt")
        p.write_bytes(gzip.compress(raw) if gz else raw)
        kw = rng.choice(
            [
                {"missing": "zero"},
                {"missing": "min"},
                {"n_features": 12},
                {"n_features": 3},
                {"split_queries": "merge"},
                {"split_queries": "separate"},
                {"max_features": 5},
            ]
        )
        check(p, **kw)


def test_repeated_and_interleaved_qids_follow_split_queries(tmp_path):
    """The same queries, and with ``split_queries="error"`` the same message, whose line
    numbers count the comment and blank lines."""
    text = "# header\n1 qid:1 1:1\n\n0 qid:2 1:2\n# note\n2 qid:1 1:3\n0 qid:01 1:4\n"
    p = tmp_path / "r.txt"
    p.write_text(text)
    for mode in ("error", "merge", "separate"):
        assert check(p, split_queries=mode)
    with pytest.raises(DataFormatError, match=r"starts again on line 6 .* starts on line 2"):
        read_letor(p)


def test_labels_with_up_to_eighteen_digits(tmp_path):
    """Labels are float64: 16 to 18 digits whose integer exceeds 2^53 are rounded once, by
    ``float()``, as the Numba parser does; the NumPy reader must not round them twice."""
    rng = random.Random(5)
    labels = [f"{rng.random():.18f}"[: rng.randint(17, 20)] for _ in range(200)]
    labels += ["9007199254740993", "9007199254740992", "0.9999999999999999", "1.0000000000000002"]
    text = "".join(f"{v} qid:{i // 4} 1:0.5\n" for i, v in enumerate(labels))
    p = tmp_path / "l.txt"
    p.write_text(text)
    assert check(p)
    assert read_letor(p).labels.tolist() == [float(v) for v in labels]


def test_numbers_on_either_side_of_nine_digits(tmp_path):
    """Numbers of up to nine digits are accumulated in int32, longer ones in int64: values at
    that boundary (and at int32's) read exactly as ``float()`` reads them, as labels and as
    features, each length alone in a file (one group) and all mixed in one."""
    values = [
        "999999999", "-999999999", "9999999999", "2147483647", "2147483648", "4294967296",
        "99999.9999", "999999.9999", "0.999999999", "0.9999999999", "12345678.9", "123456789.0",
        "-0.123456789", "1234567890123", "99999999.99",
    ]  # fmt: skip
    for k, group in enumerate([[v] * 3 for v in values] + [values]):
        text = "".join(f"{v} qid:{i // 4} 1:{v} 2:0.5\n" for i, v in enumerate(group))
        p = tmp_path / f"n{k}.txt"
        p.write_text(text)
        assert check(p)
        ds = read_letor(p)
        assert ds.labels.tolist() == [float(v) for v in group]
        want = np.array([float(v) for v in group]).astype(np.float32)
        assert np.array_equal(_bits(ds.features[:, 0]), _bits(want))


# ----------------------------------------------------------------------- everything else
def test_other_and_damaged_files_are_declined_or_read_identically(tmp_path):
    """Random LETOR text in many spellings (exponents, long decimals, words, odd comments) and
    damaged copies (bytes flipped, inserted, deleted; line endings changed): whatever the NumPy
    reader takes must read as the Numba parser reads it; what the Numba parser refuses the
    NumPy reader must decline."""
    rng = random.Random(3)
    taken = refused = 0
    for k in range(600):
        base = rng.choice(
            [
                lambda: well_formed(rng),
                lambda: valid_letor(rng),
                lambda: random_letor(rng, n_queries=3, crlf=rng.random() < 0.5).encode(),
            ]
        )()
        raw = base
        for _ in range(rng.randint(0, 2)):
            raw = mutate(raw, rng)[1]
        p = tmp_path / f"m{k}.txt"
        p.write_bytes(raw)
        _, _, numba = read_both(p)
        refused += isinstance(numba, DataFormatError)
        taken += check(p)
    assert taken > 100 and refused > 100, (taken, refused)


@pytest.mark.parametrize(
    "line",
    [
        "1 qid:1 1:nan",  # words are the Numba parser's to read
        "1 qid:1 1:inf",
        "1 qid:1 1:-NULL",
        "1 qid:1 1:0.1234567890123456789",  # nineteen digits
        "1 qid:1 1:9999999999999999999",  # nineteen digits, beyond int64
        "1 qid:1 1:9007199254740993",  # 2^53 + 1: not exact in float64
        "1 qid:1 1:0.99999999999999999",
        "1 qid:1 1:1e23",  # 10^23: not exact
        "1 qid:1 1:1.5e-22",
        "1 qid:1 1:12345678901234567890e-10",
        "1 qid:1 1:1e123456",
        "1 qid:1 1:.",
        "1 qid:1 1:e5",
        "1 qid:1 2:1 1:2",  # indices out of order
        "1 qid:1 1:1 1:2",  # a repeated index
        "1 qid:1 0:1",
        "1 qid:1 1:1:2",
        "1 qid:a 1:1",
        "1 QID:1 1:1",
        "1 qid:1 1:1 # docid = a:b",
        "1 qid:1 1:1 # docid=x",
        "1 qid:1 1:1 # docid = x docid = y",
        "1 qid:1 1:1 # inc = NULL",
        "nan qid:1 1:1",
        "1e999 qid:1 1:1",
        "1 1:1",
        "1 qid:1 1:1!",
    ],
)
def test_lines_outside_the_shape_are_declined(tmp_path, line):
    p = tmp_path / "d.txt"
    p.write_text(f"0 qid:1 1:0.5\n{line}\n")
    assert _letor_numpy.parse(p.read_bytes(), None, 1000) is None
    check(p)


@pytest.mark.parametrize(
    ("comments", "taken"),
    [
        (["# docid = a inc = 1 prob = 0.5", "# docid = b inc = 0 prob = 1e-3", ""], True),
        (["#docid = a\tinc = 2", "\t#  docid =  é  inc = -1  ", "# docid = c inc = 3"], True),
        (["# docid = a # b", "# docid = b"], False),  # a second '#', a word of its own
        (["# docid = a#b inc = 1", "# docid = #c inc = 2"], True),  # '#' inside a word
        (["# docid = a inc = 1", "# docid = b"], False),  # another number of words
        (["# docid = a", "# docud = b"], False),  # another key, same length
        (["# docid = a", "# doc = b"], False),  # another key, another length
        (["# docid = a", "# docid == b"], False),  # another word where '=' is
        (["# a=b = 1", "# a=b = 2"], False),  # '=' inside a key
        (["# inc = 1", "# inc = abc"], False),  # a value that is not a number
        (["# docid = a docid = b", "# docid = c docid = d"], False),  # a key twice
        (["#", "# docid = b"], False),  # an empty comment on a data line
    ],
)
def test_comments_are_read_as_split_words_or_declined(tmp_path, comments, taken):
    """The comments of data lines, read for all lines at once: the same ``KEY = VALUE``
    columns as the Numba parser's (``docid`` as text, other keys as numbers, a line without a
    comment NaN / ""), or the file declined when the words are not in that shape."""
    lines = [f"{i % 3} qid:{i // 2 + 1} 1:0.{i}5 2:1 {c}" for i, c in enumerate(comments)]
    p = tmp_path / "c.txt"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert (_letor_numpy.parse(p.read_bytes(), None, 1000) is not None) == taken
    assert check(p) == taken


def test_an_index_of_ten_digits_is_refused_whatever_the_cap(tmp_path):
    p = tmp_path / "d.txt"
    p.write_text("0 qid:1000 1:0.5\n1 qid:1000 1234567890:1\n")
    assert _letor_numpy.parse(p.read_bytes(), None, 10**12) is None
    with pytest.raises(DataFormatError, match="more than 9 digits"):
        read_letor(p, max_features=10**12)


@pytest.mark.parametrize(
    "value",
    ["+0.5", "1e-3", ".5", "5.", "-4.4184903e-6", "1E+2", "0e99999", "-0e5", "-.0", "1e22",
     "9007199254740992e-22", "0.000000000000000001234", "1234567890123456e-5"],
)  # fmt: skip
def test_numbers_the_numba_parser_reads_exactly_are_taken_one_by_one(tmp_path, value):
    """A few tokens outside the plain-decimal shape (an exponent, a sign, a point at an end)
    are read one by one when the Numba parser reads them exactly, as ndcglab's own writer
    writes small values (``-4.4184903e-6``); the dataset must not change."""
    p = tmp_path / "d.txt"
    p.write_text(f"0 qid:1 1:0.5 2:{value}\n1 qid:1 1:0.25 2:1\n")
    assert check(p)
    assert read_letor(p).features[0, 1] == np.float32(float(value))


def test_many_numbers_outside_the_shape_go_to_the_numba_parser(tmp_path):
    p = tmp_path / "d.txt"
    p.write_text("".join(f"0 qid:1 1:{i}e-3 2:0.5\n" for i in range(3000)))
    assert _letor_numpy.parse(p.read_bytes(), None, 1000) is None
    assert not check(p)


def test_the_numpy_reader_is_tried_until_the_numba_parser_has_read_a_file(tmp_path):
    """In a fresh process the NumPy reader reads a well-formed file without loading Numba's
    kernels; once the Numba parser has read a file, it reads the next ones (it is faster then)."""
    import subprocess
    import sys

    p = tmp_path / "d.txt"
    p.write_text("0 qid:1 1:0.5 2:1\n1 qid:1 1:0.25 2:0\n")
    bad = tmp_path / "e.txt"
    bad.write_text("0 qid:1 1:0.5 2:1e-3\n1 qid:1 1:0.25 2:+inf0\n")
    code = (
        "import sys\n"
        "from ndcglab.data import letor, read_letor\n"
        "read_letor(sys.argv[1])\n"
        "print(letor._numba_parser_loaded())\n"
        "try:\n"
        "    read_letor(sys.argv[2])\n"
        "except Exception:\n"
        "    pass\n"
        "print(letor._numba_parser_loaded())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(p), str(bad)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True"]


def test_a_gzip_file_over_the_size_limit_is_not_decompressed_twice(tmp_path, monkeypatch):
    """Its trailer's size sends it straight to the Numba parser, which reads it in blocks: the
    NumPy reader's whole-file read (of the size limit plus one byte) never happens."""
    p = tmp_path / "d.txt.gz"
    text = "".join(f"{i % 3} qid:{i // 10} 1:0.5 2:0.25\n" for i in range(200))
    p.write_bytes(gzip.compress(text.encode()))
    monkeypatch.setattr(letor, "_numba_parser_loaded", lambda: False)
    reads: list[int] = []
    real = gzip.GzipFile.read

    def counting(self: Any, size: int = -1) -> Any:
        reads.append(size)
        return real(self, size)

    monkeypatch.setattr(gzip.GzipFile, "read", counting)
    ds = read_letor(p)
    assert reads == [_letor_numpy.MAX_BYTES + 1]  # the NumPy reader read it whole
    monkeypatch.setattr(_letor_numpy, "MAX_BYTES", len(text) - 1)
    reads.clear()
    assert_same_dataset(read_letor(p), ds)
    assert reads and len(text) not in reads  # blocks of the Numba parser only


def test_a_file_over_the_size_limit_goes_to_the_numba_parser(tmp_path, monkeypatch):
    p = tmp_path / "d.txt"
    p.write_text("0 qid:1 1:0.5 2:1\n1 qid:1 1:0.25 2:0\n")
    calls: list[int] = []
    parse = _letor_numpy.parse

    def counting(*args: Any) -> Any:
        calls.append(1)
        return parse(*args)

    monkeypatch.setattr(_letor_numpy, "parse", counting)
    monkeypatch.setattr(letor, "_numba_parser_loaded", lambda: False)
    read_letor(p)
    assert calls == [1]
    monkeypatch.setattr(_letor_numpy, "MAX_BYTES", p.stat().st_size - 1)
    read_letor(p)
    assert calls == [1]


# ----------------------------------------------------------------------- real data
@pytest.mark.parametrize(
    "parts",
    [
        ("MQ2008", "Fold1", "train.txt.gz"),
        ("MQ2008", "Fold1", "test.txt.gz"),
        ("OHSUMED", "QueryLevelNorm", "Fold1", "train.txt.gz"),
        ("OHSUMED", "Feature-null", "Fold1", "trainingset.txt.gz"),
    ],
)
def test_real_files_are_taken_and_read_identically(parts):
    from ..conftest import shared_path

    assert check(shared_path(*parts))


def test_parts_are_joined_as_one_pass_reads_the_file(tmp_path: Path, monkeypatch) -> None:
    """Files cut at every possible place into two and into several parts: a query across a cut,
    blank and comment-only lines at the cuts, comments on some lines only, a part without any
    comment, different largest indices per part, NULLs. Each gives the one-pass result (the
    Numba parser's dataset), or is declined as a whole."""
    lines = [
        b"2 qid:7 1:0.5 3:1.25 # docid = a1 x = 3",
        b"",
        b"0 qid:7 2:0.25",
        b"# a comment line",
        b"1 qid:8 1:NULL 2:0.5 9:4",
        b"1 qid:8 1:0.75",
        b"0 qid:07 4:1 # docid = b2 x = 0.5",
        b"3 qid:9 1:1 2:2 3:3",
    ]
    monkeypatch.setattr(_letor_numpy, "_cores", lambda: 4)
    data = b"\n".join(lines) + b"\n"
    whole = _letor_numpy.parse(data, None, 100)
    assert whole is not None
    monkeypatch.setattr(_letor_numpy, "SPLIT_BYTES", 1)
    for k in (2, 3, 4):
        monkeypatch.setattr(_letor_numpy, "MAX_PARTS", k)
        for cut in range(1, len(lines)):
            for rotated in (lines[cut:] + lines[:cut], lines[: cut + 1]):
                text = b"\n".join(rotated) + b"\n"
                p = tmp_path / f"r{k}_{cut}_{len(rotated)}.txt"
                p.write_bytes(text)
                taken, default, numba = read_both(p)
                assert taken == (_letor_numpy.parse(text, None, 100) is not None)
                if isinstance(numba, Exception):
                    assert isinstance(default, Exception) and str(default) == str(numba)
                else:
                    assert_same_dataset(default, numba)


def test_cuts_give_parts_that_end_at_line_ends() -> None:
    data = b"".join(b"1 qid:%d 1:0.%d\n" % (i, i) for i in range(50))
    for k in range(1, 9):
        cuts = _letor_numpy._cuts(data, k)
        parts = [data[a:b] for a, b in itertools.pairwise(cuts)]
        assert cuts[0] == 0 and cuts[-1] == len(data) and 1 <= len(parts) <= k
        assert all(part and part.endswith(b"\n") for part in parts)
    assert _letor_numpy._cuts(b"1 qid:1 1:0\n", 4) == [0, 12]


@pytest.mark.parametrize(
    ("lines", "shortcut", "taken"),
    [
        (["1 qid:1 1:0.5 2:0.25 # docid = a", "0 qid:1 1:1 2:2 # docid = b"], True, True),
        (["1 qid:1 " + " ".join(f"{k}:0.{k}" for k in range(1, 13))] * 3, True, True),  # k >= 10
        (["1 qid:1 01:0.5 2:0.25", "0 qid:1 1:1 2:2"], False, None),  # a leading zero
        (["1 qid:1 1:0.5 3:0.25", "0 qid:1 1:1 3:2"], False, None),  # a gap in the indices
        (["1 qid:1 1:0.5 2:0.25", "0 qid:1 1:1"], False, None),  # lines of different lengths
        # a ':' in a comment: the pairs are in the shape; the comment is declined by _comments
        (["1 qid:1 1:0.5 2:0.25 # url = http://x", "0 qid:1 1:1 2:2 # url = y"], True, False),
        (["1 qid:1 1:0.5 2:", "0 qid:1 1:1 2:2"], False, None),  # a pair without a value
        (["1 qid:1 1:0.5 2::2", "0 qid:1 1:1 2:2"], True, False),  # the value ':2' is refused
        (["1 qid:1 1:0.5 2;2", "0 qid:1 1:1 2:2"], False, None),  # no colon where it should be
        (["1 qid:1 1:0.5 12:2", "0 qid:1 1:1 2:2"], False, None),  # an index with a digit too many
    ],
)
def test_the_dense_shortcut_and_its_fallbacks_read_as_the_numba_parser(
    tmp_path, monkeypatch, reading, lines, shortcut, taken
):
    """Files of pairs ``1:V ... m:V`` are read without searching for colons; any line off that
    shape (checked byte by byte) sends the file to the general path or to the Numba parser, with
    the same dataset or the same error."""
    p = tmp_path / "d.txt"
    p.write_text("\n".join(lines) + "\n")
    real = _letor_numpy._dense_colons
    used: list[bool] = []

    def spy(*args: Any) -> Any:
        got = real(*args)
        used.append(got is not None)
        return got

    monkeypatch.setattr(_letor_numpy, "_dense_colons", spy)
    took = check(p)
    if reading == "one pass":  # (in parts, a part can be in the shape without the whole)
        assert any(used) == shortcut  # the shortcut takes its shape and nothing else
    if taken is not None:
        assert took == taken
